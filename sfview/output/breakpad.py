"""A Breakpad symbol file from SFrame alone: `MODULE`, `PUBLIC` and `STACK CFI` records.

What Breakpad's `dump_syms` writes from DWARF CFI, written here from the
`.sframe` section: one `STACK CFI INIT` per FDE (one per block for a PCMASK
FDE, expanded into ordinary records) and one `STACK CFI` per later row with
the rules that changed. Addresses are relative to the module's load address.

`read_stack_cfi` reads `STACK CFI` records back into `dwarf.cfi` tables, so
that an export (ours or another converter's) can be compared with the
binary's own DWARF rules.
"""

from __future__ import annotations

import array
import io
import itertools
import operator
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from sfview import ADDRESS_MASK, quantity
from sfview.dwarf.cfi import ABIS, Abi, CfiFunction, CfiRow, abi_for
from sfview.dwarf.tables import CfiTable
from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.inputs.elf.pyelftools_view import load_address, section_bytes, section_named
from sfview.output.safe_text import printable
from sfview.sframe.bulk.shapes import Shaped, Shapes
from sfview.sframe.model.rules import CFA, SAME, UNDEFINED, Kind, Rule, rule

if TYPE_CHECKING:
    from elftools.elf.elffile import ELFFile

    from sfview.document import Document
    from sfview.sframe.model.section import Function

CHUNK = 512
"""Lines written at once: few enough to cost no memory, enough that each write is worth its call."""
PCMASK_RECORDS = 1 << 16
"""Records PCMASK functions may always take, beside 4 per section byte: a PLT of 30,000 entries (two rows
each) fits; a forged `func_size` does not make the export grow without bound."""

REGISTER_NAMES = {
    "x86_64": {int(reg): f"${reg.name}" for reg in Sframe.Amd64Reg},
    "arm64": {int(reg): reg.name for reg in Sframe.Aarch64Reg},
    "s390x": {int(reg): reg.name for reg in Sframe.S390xReg},
}
"""DWARF register number → the name Breakpad's stack walker gives it, per architecture (s390x, which
Breakpad has no walker for: the names gdb and the ABI use, `r15`, `f0`)."""
UNKNOWN_TO_BREAKPAD = {
    "s390x": "Breakpad knows no s390x: dump_syms converts no s390x CFI and its processor has no s390x stack "
    "walker; the STACK CFI records name registers as the s390x ABI does (r0-r15, f0-f15), and give the "
    "caller's SP, which is not the CFA there, as `r15: .cfa -160 +`"
}
"""Architectures whose records sfview writes although no Breakpad tool reads them, and what to know."""


def text_hash(elf: ELFFile) -> bytes:
    """dump_syms' identifier without a build-id: the first page of `.text` XORed in 16-byte blocks."""
    text = section_named(elf, ".text")
    data = section_bytes(text, 4096) if text is not None else b""
    out = bytearray(16)
    for i, byte in enumerate(data):
        out[i % 16] ^= byte
    return bytes(out)


def module_id(doc: Document) -> bytes:
    """The module's identifier: its build-id, else the hash of its code; a damaged note or `.text` costs
    the identifier (zeros, said as a loss), not the export."""
    elf, image = doc.elf, doc.image
    assert elf is not None and image is not None
    try:
        return image.build_id() or text_hash(elf)
    except InputError as exc:
        doc.note_loss(InputError(f"MODULE id left as zeros: {exc.message}"))
        return bytes(16)


def debug_identifier(identifier: bytes) -> str:
    """Breakpad's module id: the first 16 bytes read as a GUID (its first three fields
    byte-swapped from little-endian), in upper-case hex, then the age 0."""
    guid = (identifier + bytes(16))[:16]
    swapped = guid[3::-1] + guid[5:3:-1] + guid[7:5:-1] + guid[8:]
    return swapped.hex().upper() + "0"


def symbol_file(doc: Document) -> tuple[str, list[str]]:
    """The Breakpad symbol file for `doc`, and the rules it had to leave out (one message each)."""
    out = io.StringIO()
    problems, _ = write_symbol_file(doc, out.write)
    return out.getvalue(), problems


def write_symbol_file(doc: Document, write: Callable[[str], object]) -> tuple[list[str], list[InputError]]:
    """Write the Breakpad symbol file for `doc` as it is made; the rules it had to leave out (one message
    each), and why functions cannot be decoded or their rows stop short (what it left out).

    Written as it goes, a few hundred lines at a time: the whole file as one string (and its lines as a
    list) would cost many times the section's size in memory.
    """
    elf, image = doc.elf, doc.image
    assert elf is not None and image is not None
    try:
        abi = abi_for(image)
    except InputError as exc:  # a machine it has no CFI registers for: the file is refused, by name
        raise exc.located(doc.path) from None
    section = doc.require_section()
    try:
        base = load_address(elf)
    except InputError as exc:
        doc.note_loss(InputError(f"addresses written from 0: {exc.message}"))
        base = 0
    ident = module_id(doc)
    # Names are the rest of their line: one with a newline would forge a record (escaped, as in all text output)
    module = f"MODULE Linux {abi.name} {debug_identifier(ident)} {printable(os.path.basename(doc.path))}"
    _write_lines(itertools.chain([[module]], _public_records(doc, base)), write)
    shapes = Shapes(section)
    records, problems = section_stack_cfi(shapes, abi, base, PCMASK_RECORDS + 4 * len(section.data))
    _write_lines(records, write)
    if abi.name in UNKNOWN_TO_BREAKPAD:
        problems.insert(0, UNKNOWN_TO_BREAKPAD[abi.name])
    if doc.relocatable:
        problems.insert(0, "a relocatable object: STACK CFI addresses are unrelocated (as the object holds them)")
    return problems, shapes.errors()


def _public_records(doc: Document, base: int) -> Iterator[list[str]]:
    """`PUBLIC` records from the symbol table, `CHUNK` at a time.

    The symbols come by address and only those of one address are sorted, by name: no sort key is made for
    every symbol of the program.
    """
    lines: list[str] = []
    for address, group in itertools.groupby(doc.symbols.by_address(), key=operator.attrgetter("address")):
        if address >= base:
            first, *others = group
            if others:
                first, *others = sorted([first, *others], key=operator.attrgetter("name"))
            # `m`: more symbols name this code (identical code folded, aliases); one name is written
            marker = "m " if any(other.name != first.name for other in others) else ""
            lines.append(f"PUBLIC {marker}{address - base:x} 0 {printable(first.name)}")
            if len(lines) == CHUNK:
                yield lines
                lines = []
    yield lines


def _write_lines(groups: Iterable[list[str]], write: Callable[[str], object]) -> None:
    """Each line of each group and a newline, about `CHUNK` lines to a write."""
    chunk: list[str] = []
    for group in groups:
        chunk += group
        if len(chunk) >= CHUNK:
            write("\n".join(chunk) + "\n")
            chunk = []
    if chunk:
        write("\n".join(chunk) + "\n")


def stack_cfi(
    functions: Iterable[Function | Shaped], abi: Abi, base: int, budget: int | None = None
) -> tuple[list[str], list[str]]:
    """`STACK CFI` records for SFrame functions (by address), and what they had to leave out.

    `budget`: the most records PCMASK functions may be expanded into (all, when None).
    """
    problems: list[str] = []
    writer = _CfiWriter(abi, base, problems, budget)
    for func in functions:
        writer.function(func)
    writer.summarise()
    return list(itertools.chain.from_iterable(writer.records())), problems


def section_stack_cfi(
    shapes: Shapes, abi: Abi, base: int, budget: int | None = None
) -> tuple[Iterator[list[str]], list[str]]:
    """`stack_cfi` for every function of a section, each shape's rows worked out once: the records, each
    function's made as they are taken, and what they had to leave out (all said once this returns)."""
    problems: list[str] = []
    writer = _CfiWriter(abi, base, problems, budget)
    writer.add_shapes(shapes)
    writer.summarise()
    return writer.records(), problems


RowRecord = tuple[int, str, str | None, bool, tuple[tuple[str, str], ...]]
"""What one row writes, wherever its function is: its start offset; its rules as a `STACK CFI INIT`
record's body; what changed from the row before as a `STACK CFI` record's body (None: nothing did);
whether its saved RA is signed; and the rules Breakpad cannot hold, (column, why) each."""


class _CfiWriter:
    """STACK CFI records for SFrame functions, in Breakpad's register names.

    A function's rows are worked out once per shape into `RowRecord`s (what each row writes, relative to the
    function's start): the functions of a program share a few hundred. What is kept until every function
    is read (the records go out in address order) is, per function, its start, size and steps' number:
    the records themselves are written as they go out.
    """

    def __init__(self, abi: Abi, base: int, problems: list[str], budget: int | None) -> None:
        self.budget = budget
        """Records left for PCMASK expansion (None: no limit)."""
        self.abi = abi
        self.names = REGISTER_NAMES[abi.name]
        self.fp_name = self.names[abi.fp]
        self.base = base
        self.problems = problems
        self.signed: set[int] = set()
        """Functions whose saved RA is signed somewhere (pac-ret)."""
        self._steps: list[tuple[RowRecord, ...]] = []
        self._said: list[bool] = []
        """Per steps: whether writing them says something (a signed RA, a rule left out)."""
        self._by_shape: dict[tuple[int, bytes], int] = {}
        self._by_steps: dict[tuple[RowRecord, ...], int] = {}
        """The model's functions' steps, each distinct one kept once (the functions whose rows the bulk reader
        could not read whole, damaged ones alike, share theirs as much as the others)."""
        self._starts = array.array("Q")
        self._sizes = array.array("Q")
        self._indexes = array.array("Q")
        self._which = array.array("q")
        """Per function written, in FDE order: the number of its steps, or -1: its records are in `_records`."""
        self._records: dict[int, list[str]] = {}

    def add_shapes(self, shapes: Shapes) -> None:
        """Every function of a section, each shape's steps worked out once."""
        bulk = shapes.bulk
        for item in shapes:
            if not isinstance(item, Shaped) or item.pcmask:  # a PLT's blocks: the model knows them
                self.function(item if not isinstance(item, Shaped) else shapes.section.function(item.index))
                continue
            if not item.bulk_rows or not item.size:
                continue
            which = self._by_shape.get(item.shape)
            if which is None:
                patterns = ((offset, bulk.pattern(key)) for offset, key in item.bulk_rows)
                steps = self._make_steps((offset, p.cfa, p.ra, p.fp, p.mangled_ra) for offset, p in patterns)
                which = self._by_shape[item.shape] = self._keep(steps)
            self._add(item.index, item.start_address, item.size, which)

    def function(self, func: Function | Shaped) -> None:
        """One function, from its model rows."""
        if func.error is not None:
            self.problems.append(f"fdes[{func.index}] left out: its FDE cannot be decoded")
            return
        if not func.rows or not func.size:
            return
        steps = self._make_steps((r.start_offset, r.cfa, r.ra, r.fp, r.mangled_ra) for r in func.rows)
        if not func.pcmask:
            which = self._by_steps.get(steps)
            if which is None:
                which = self._by_steps[steps] = self._keep(steps)
            self._add(func.index, func.start_address, func.size, which)
            return
        out: list[str] = []
        end, step = func.start_address + func.size, func.block_size or func.size
        if self._affordable(func, step):
            for block in range(func.start_address, end, step):
                out += self._format(steps, block, min(step, end - block), func.index, pcmask=True, say=True)
        self._records[len(self._which)] = out
        self._add(func.index, func.start_address, func.size, -1)

    def _keep(self, steps: tuple[RowRecord, ...]) -> int:
        self._steps.append(steps)
        self._said.append(any(signed or left_out for _, _, _, signed, left_out in steps))
        return len(self._steps) - 1

    def _add(self, index: int, start: int, size: int, which: int) -> None:
        if which >= 0 and self._said[which]:  # said now, in FDE order, as the function is read
            self._format(self._steps[which], start, size, index, pcmask=False, say=True)
        self._starts.append(start)
        self._sizes.append(size)
        self._indexes.append(index)
        self._which.append(which)

    def summarise(self) -> None:
        """What is to be said once every function is read."""
        if self.signed:
            # Where a signed RA is saved is an exact rule, and what DWARF-based dump_syms writes too;
            # the stack walker strips the authentication code from the value it loads.
            save = "saves" if len(self.signed) == 1 else "save"
            self.problems.append(
                f"{quantity(len(self.signed), 'function')} {save} a signed RA (pointer authentication): `.ra` says"
                " where it is saved; a stack walker must strip the authentication code from the value it loads"
            )

    def records(self) -> Iterator[list[str]]:
        """Every function's records, in address order (FDE order among functions at one address)."""
        starts = self._starts
        order: Iterable[int] = range(len(starts))
        if any(map(operator.gt, starts, itertools.islice(starts, 1, None))):
            order = sorted(order, key=starts.__getitem__)  # stable: FDE order kept at each address
        for i in order:
            which = self._which[i]
            if which < 0:
                yield self._records[i]
            else:
                yield self._format(self._steps[which], starts[i], self._sizes[i], self._indexes[i])

    def _affordable(self, func: Function | Shaped, step: int) -> bool:
        """Whether a PCMASK function's blocks, each written out (Breakpad cannot say a block repeats), fit
        the budget: a `func_size` of 4 GB over 16-byte blocks would be 268 million of them."""
        blocks = -(-func.size // step)
        cost = blocks * len(func.rows)
        if self.budget is not None and cost > self.budget:
            self.problems.append(
                f"fdes[{func.index}] left out: a PCMASK function of {blocks} blocks of {step} bytes would take"
                f" {cost} STACK CFI records (Breakpad cannot say that a block repeats; {self.budget} are left)"
            )
            return False
        if self.budget is not None:
            self.budget -= cost
        return True

    def _format(
        self, steps: tuple[RowRecord, ...], start: int, size: int, index: int, pcmask: bool = False, say: bool = False
    ) -> list[str]:
        """The records of a function (or a PCMASK block) at `start` of `size` bytes; `say`: also say what
        its rows leave out, and note a signed RA."""
        out: list[str] = []
        base, end = self.base, start + size
        for offset, init, changed, signed, left_out in steps:
            address = start + offset if pcmask else (start + offset) & ADDRESS_MASK
            if address >= end:
                break
            if say:
                if signed:
                    self.signed.add(index)
                for column, why in left_out:
                    self.problems.append(f"{address:#x}: {column} left out: {why}")
            if not out:
                out.append(f"STACK CFI INIT {address - base:x} {size - (address - start):x} {init}")
            elif changed is not None:
                out.append(f"STACK CFI {address - base:x} {changed}")
        return out

    def _make_steps(self, rows: Iterable[tuple[int, Rule, Rule, Rule, bool]]) -> tuple[RowRecord, ...]:
        """What each row writes: (start offset, CFA, RA, FP, signed RA) each."""
        steps: list[RowRecord] = []
        previous: dict[str, str] = {}
        fp = self.fp_name
        for offset, cfa, ra, fp_rule, signed in rows:
            rules, left_out = self._rules(cfa, ra, fp_rule)
            changed = {name: expr for name, expr in rules.items() if previous.get(name) != expr}
            if fp in previous and fp not in rules:
                changed[fp] = fp  # the FP is no longer saved: it holds the caller's value again
            steps.append(
                (
                    offset,
                    " ".join(f"{name}: {expr}" for name, expr in rules.items()),
                    " ".join(f"{name}: {expr}" for name, expr in changed.items()) if changed else None,
                    signed,
                    left_out,
                )
            )
            previous = rules
        return tuple(steps)

    def _rules(self, cfa: Rule, ra: Rule, fp: Rule) -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
        """`.cfa`, `.ra` and the FP's rule for one row, as Breakpad postfix expressions; and the rules
        Breakpad cannot hold, (column, why) each."""
        rules: dict[str, str] = {}
        left_out = []
        for column, value in ((".cfa", cfa), (".ra", ra), (self.fp_name, fp)):
            if column == self.fp_name and value.kind is Kind.SAME:
                continue
            expr = self._expression(column, value)
            if expr is None:
                left_out.append((column, f"no Breakpad rule for {value.kind.value}"))
                continue
            rules[column] = expr
        if self.abi.sp_val_offset and cfa.kind is Kind.VALUE:
            # The caller's SP is not the CFA (s390x: CFA - 160), which Breakpad's walkers assume it is.
            rules[self.names[self.abi.sp]] = f".cfa {self.abi.sp_val_offset} +"
        return rules, tuple(left_out)

    def _expression(self, column: str, value: Rule) -> str | None:
        if value.kind is Kind.UNDEFINED and column != ".cfa":
            return ".undef"  # the outermost frame: nothing to recover
        if value.kind is Kind.SAME:
            if column == ".ra" and self.abi.ra in self.names:
                return self.names[self.abi.ra]  # the RA is still in the link register
            return None
        if value.kind is not Kind.VALUE:
            return None
        base = ".cfa" if value.base == CFA else self.names.get(value.base)
        if base is None:
            return None
        return f"{base} {value.offset} +" + (" ^" if value.deref else "")


# Reading STACK CFI back ---------------------------------------------------------


def read_stack_cfi(text: str, arch: str, base: int = 0) -> CfiTable:
    """The `STACK CFI` records of a Breakpad symbol file, as a `CfiTable` at the addresses the
    module has when loaded at `base` (its own load address, to compare with its DWARF CFI).

    Understands the expressions a CFI converter writes: `REG`, `REG N +`,
    `REG N + ^` (also `-` for a negative offset), and `.undef`; anything else
    raises `ValueError`.
    """
    abi = next(a for a in ABIS.values() if a.name == arch)
    numbers = {name: num for num, name in REGISTER_NAMES[arch].items()}
    functions: list[CfiFunction] = []
    current: dict[object, Rule] = {}
    for line in text.splitlines():
        words = line.split()
        if words[:2] != ["STACK", "CFI"]:
            continue
        if words[2] == "INIT":
            start, size, rest = base + int(words[3], 16), int(words[4], 16), words[5:]
            functions.append(CfiFunction(start, size, [], "breakpad", len(functions), 0))
            current = {}
        else:
            start, rest = base + int(words[2], 16), words[3:]
        current = {**current, **_parse_rules(rest, numbers)}
        ra = current.get(".ra", UNDEFINED)
        if ra.kind is Kind.VALUE and ra.base == abi.ra and not ra.deref and ra.offset == 0:
            ra = SAME  # `.ra: x30`: still in the link register
        fp = current.get(abi.fp, SAME)
        if fp.kind is Kind.VALUE and fp.base == abi.fp and not fp.deref and fp.offset == 0:
            fp = SAME  # `$rbp: $rbp`
        others = {k: v for k, v in current.items() if isinstance(k, int) and k != abi.fp}
        functions[-1].rows.append(CfiRow(start, current.get(".cfa", UNDEFINED), ra, fp, others))
    return CfiTable.of(abi, functions)


def _parse_rules(words: list[str], numbers: dict[str, int]) -> dict[object, Rule]:
    rules: dict[object, Rule] = {}
    name: object = None
    expr: list[str] = []
    for word in words:
        if word.endswith(":"):
            if name is not None:
                rules[name] = _parse_expression(expr, numbers)
            label = word[:-1]
            name = label if label.startswith(".") else numbers[label]
            expr = []
        else:
            expr.append(word)
    if name is not None:
        rules[name] = _parse_expression(expr, numbers)
    return rules


def _parse_expression(expr: list[str], numbers: dict[str, int]) -> Rule:
    if expr == [".undef"]:
        return UNDEFINED
    base = CFA if expr[0] == ".cfa" else numbers[expr[0]]
    offset, deref = 0, False
    rest = expr[1:]
    if rest[-1:] == ["^"]:
        deref, rest = True, rest[:-1]
    if rest:
        if len(rest) != 2 or rest[1] not in "+-":
            raise ValueError(f"unexpected STACK CFI expression: {' '.join(expr)}")
        offset = int(rest[0]) * (1 if rest[1] == "+" else -1)
    return rule(Kind.VALUE, base, offset, deref)
