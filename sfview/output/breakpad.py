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

import itertools
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sfview.dwarf.cfi import ABIS, Abi, CfiFunction, CfiRow, CfiTable, abi_for
from sfview.dwarf.compare import block_size
from sfview.generated.sframe import Sframe
from sfview.sframe.bulk import functions_with_rows
from sfview.sframe.rules import CFA, SAME, UNDEFINED, Kind, Rule, rule

if TYPE_CHECKING:
    from elftools.elf.elffile import ELFFile

    from sfview.document import Document
    from sfview.sframe.bulk import RowsFunction
    from sfview.sframe.section import Function, Row

REGISTER_NAMES = {
    "x86_64": {int(reg): f"${reg.name}" for reg in Sframe.Amd64Reg},
    "arm64": {int(reg): reg.name for reg in Sframe.Aarch64Reg},
}
"""DWARF register number → the name Breakpad's stack walker gives it, per architecture."""


def build_id(elf: ELFFile) -> bytes | None:
    """The GNU build-id note's bytes, if the file has one."""
    for section in elf.iter_sections():
        if section["sh_type"] == "SHT_NOTE":
            for note in section.iter_notes():
                if note["n_type"] == "NT_GNU_BUILD_ID":
                    return bytes.fromhex(note["n_desc"])
    return None


def text_hash(elf: ELFFile) -> bytes:
    """dump_syms' identifier without a build-id: the first page of `.text` XORed in 16-byte blocks."""
    text = elf.get_section_by_name(".text")
    data = text.data()[:4096] if text is not None else b""
    out = bytearray(16)
    for i, byte in enumerate(data):
        out[i % 16] ^= byte
    return bytes(out)


def debug_identifier(identifier: bytes) -> str:
    """Breakpad's module id: the first 16 bytes read as a GUID (its first three fields
    byte-swapped from little-endian), in upper-case hex, then the age 0."""
    guid = (identifier + bytes(16))[:16]
    swapped = guid[3::-1] + guid[5:3:-1] + guid[7:5:-1] + guid[8:]
    return swapped.hex().upper() + "0"


def load_address(elf: ELFFile) -> int:
    """Where the module's addresses count from: the first loadable segment's address (0 for PIE)."""
    loads = [seg for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
    return min((seg["p_vaddr"] - seg["p_offset"] for seg in loads), default=0) if loads else 0


def symbol_file(doc: Document, functions: Sequence[Function | RowsFunction] | None = None) -> tuple[str, list[str]]:
    """The Breakpad symbol file for `doc`, and the rules it had to leave out (one message each).

    `functions`: the section's functions with their rows, when the caller has them already.
    """
    elf = doc.elf
    assert elf is not None
    abi = abi_for(elf)
    section = doc.require_section()
    base = load_address(elf)
    ident = build_id(elf) or text_hash(elf)
    lines = [f"MODULE Linux {abi.name} {debug_identifier(ident)} {os.path.basename(doc.path)}"]
    for address, group in itertools.groupby(
        sorted(doc.symbols.symbols, key=lambda s: (s.address, s.name)), key=lambda s: s.address
    ):
        if address >= base:
            first, *others = group
            # `m`: more symbols name this code (identical code folded, aliases); one name is written
            marker = "m " if any(other.name != first.name for other in others) else ""
            lines.append(f"PUBLIC {marker}{address - base:x} 0 {first.name}")
    records, problems = stack_cfi(functions if functions is not None else functions_with_rows(section), abi, base)
    if elf["e_type"] == "ET_REL":
        problems.insert(0, "a relocatable object: STACK CFI addresses are unrelocated (as the object holds them)")
    return "\n".join(lines + records) + "\n", problems


def stack_cfi(functions: Iterable[Function], abi: Abi, base: int) -> tuple[list[str], list[str]]:
    """`STACK CFI` records for SFrame functions (by address), and what they had to leave out."""
    problems: list[str] = []
    writer = _CfiWriter(abi, base, problems)
    lines: list[str] = []
    for func in sorted(functions, key=lambda f: f.start_address):
        if func.error is None:
            lines += writer.function(func)
        else:
            problems.append(f"fdes[{func.index}] left out: its FDE cannot be decoded")
    if writer.signed:
        # Where a signed RA is saved is an exact rule, and what DWARF-based dump_syms writes too;
        # the stack walker strips the authentication code from the value it loads.
        problems.append(
            f"{len(writer.signed)} functions save a signed RA (pointer authentication): `.ra` says where it is"
            " saved; a stack walker must strip the authentication code from the value it loads"
        )
    return lines, problems


class _CfiWriter:
    """STACK CFI records for SFrame functions, in Breakpad's register names."""

    def __init__(self, abi: Abi, base: int, problems: list[str]) -> None:
        self.abi = abi
        self.names = REGISTER_NAMES[abi.name]
        self.base = base
        self.problems = problems
        self.signed: set[int] = set()
        """Functions whose saved RA is signed somewhere (pac-ret)."""

    def function(self, func: Function) -> list[str]:
        if not func.rows or not func.size:
            return []
        if func.pcmask:
            out = []
            end, step = func.start_address + func.size, block_size(func)
            for block in range(func.start_address, end, step):
                out += self._records(func, block, min(step, end - block))
            return out
        return self._records(func, func.start_address, func.size)

    def _records(self, func: Function, start: int, size: int) -> list[str]:
        out: list[str] = []
        previous: dict[str, str] = {}
        for row in func.rows:
            address = start + row.start_offset if func.pcmask else row.address
            if address >= start + size:
                break
            rules = self._rules(func, row, address)
            if not out:
                body = " ".join(f"{name}: {expr}" for name, expr in rules.items())
                out.append(f"STACK CFI INIT {address - self.base:x} {size - (address - start):x} {body}")
            else:
                changed = {name: expr for name, expr in rules.items() if previous.get(name) != expr}
                fp = self.names[self.abi.fp]
                if fp in previous and fp not in rules:
                    changed[fp] = fp  # the FP is no longer saved: it holds the caller's value again
                if changed:
                    body = " ".join(f"{name}: {expr}" for name, expr in changed.items())
                    out.append(f"STACK CFI {address - self.base:x} {body}")
            previous = rules
        return out

    def _rules(self, func: Function, row: Row, address: int) -> dict[str, str]:
        """`.cfa`, `.ra` and the FP's rule for one row, as Breakpad postfix expressions."""
        rules: dict[str, str] = {}
        for column, value in ((".cfa", row.cfa), (".ra", row.ra), (self.names[self.abi.fp], row.fp)):
            if column == self.names[self.abi.fp] and value.kind is Kind.SAME:
                continue
            if column == ".ra" and row.mangled_ra:
                self.signed.add(func.index)
            expr = self._expression(column, value)
            if expr is None:
                self._problem(address, column, f"no Breakpad rule for {value.kind.value}")
                continue
            rules[column] = expr
        return rules

    def _expression(self, column: str, value: Rule) -> str | None:
        if value.kind is Kind.UNDEFINED and column != ".cfa":
            return ".undef"  # the outermost frame: nothing to recover
        if value.kind in (Kind.SAME, Kind.PADDING):
            if column == ".ra" and self.abi.ra in self.names:
                return self.names[self.abi.ra]  # the RA is still in the link register
            return None
        if value.kind is not Kind.VALUE:
            return None
        base = ".cfa" if value.base == CFA else self.names.get(value.base)
        if base is None:
            return None
        return f"{base} {value.offset} +" + (" ^" if value.deref else "")

    def _problem(self, address: int, column: str, why: str) -> None:
        self.problems.append(f"{address:#x}: {column} left out: {why}")


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
    return CfiTable(abi, functions)


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
