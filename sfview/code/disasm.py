"""A function's instructions, each on the SFrame row that holds it, through Capstone.

This answers "which instruction made this row?": an SFrame row starts at the
first instruction its rules hold for, right after the instruction that
changed the frame (a `push %rbp` ends row 0, and row 1, CFA `sp+16`, starts
at the next instruction). Each instruction is listed with the row an
unwinder would use at its address (`Function.row_for`, PCMASK included); the
first instruction of a row carries what the row changed (`CFA sp+8 →
sp+16`), and a row that starts inside an instruction (which no compiler
emits) says so on the instruction it starts in.

Only one function is disassembled at a time, when it is shown, and the
binary as a whole is never decoded. Capstone cuts the whole function at once,
which is quick even for a function of thousands of instructions; each line
is made an `Instruction`, its row looked up and its change worded, only when
it is asked for (`Instructions`), as making them all costs several times the
cutting and a screen shows thirty. x86-64 is printed in AT&T syntax, as
`objdump -d` prints it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from operator import itemgetter

import capstone

from sfview import ADDRESS_MASK, rule_notation
from sfview.document import Document
from sfview.generated.sframe import Sframe
from sfview.inputs.code import loaded_code, section_code
from sfview.sframe.model import terms
from sfview.sframe.model.lazy import Lazy
from sfview.sframe.model.section import Function

__all__ = ["Instruction", "Instructions", "Listing", "disassemble", "instruction_at", "listing"]

ABI = Sframe.AbiArch
MACHINES = {
    ABI.amd64_endian_little: (capstone.CS_ARCH_X86, capstone.CS_MODE_64),
    ABI.aarch64_endian_little: (capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM | capstone.CS_MODE_LITTLE_ENDIAN),
    ABI.aarch64_endian_big: (capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM | capstone.CS_MODE_BIG_ENDIAN),
    ABI.s390x_endian_big: (capstone.CS_ARCH_SYSZ, capstone.CS_MODE_BIG_ENDIAN),
}
"""Capstone's architecture and mode for each SFrame ABI (s390x is big-endian, as its ABI says)."""

MAX_CODE = 1 << 20
"""Bytes of one function disassembled at most: a size field gone wrong must not decode megabytes."""


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction, and the SFrame row an unwinder uses at its address."""

    address: int
    code: bytes
    text: str
    """`push %rbp`, `stp x29, x30, [sp, #-0x10]!`; `.byte 0x..` for bytes that decode to nothing."""
    row: int | None
    """The FRE index that holds this address; None where no row does."""
    change: str = ""
    """On the first instruction of a row: what the row changed (`CFA sp+8 → sp+16`); else ""."""


Decoded = tuple[int, int, str, str]
"""What Capstone's `disasm_lite` gives for an instruction: its address, size, mnemonic and operands."""


class Instructions(Lazy[Instruction]):
    """A function's instructions as Capstone cut them, each made an `Instruction` when first asked for.

    An instruction is on the row `Function.row_for` gives at its address; it
    is a row's first (and carries what the row changed) when the instruction
    before it is on another row or on none; a row that starts inside an
    instruction is noted on that instruction.
    """

    def __init__(
        self, func: Function, code: bytes, decoded: list[Decoded], name_at: Callable[[int], str] | None = None
    ) -> None:
        super().__init__()
        self.func = func
        self.code = code
        self.decoded = decoded
        self.name_at = name_at
        """What names a branch's target (`very_long_function`, `_init+0x20`), as objdump writes it after
        the address; None where addresses are not the code's (an object file before linking)."""
        self.addresses = [d[0] for d in decoded]
        rows = func.rows
        starts = {} if func.pcmask else {(func.start_address + s) & ADDRESS_MASK: i for i, s in enumerate(rows.starts)}
        self._starts = sorted(starts.items())
        """Where each row starts (the last row of those starting at one address), by address."""

    def __len__(self) -> int:
        return len(self.decoded)

    def _row_index(self, line: int) -> int | None:
        row = self.func.row_for(self.addresses[line])
        return row.index if row is not None else None

    def _make(self, line: int) -> Instruction:
        address, size, mnemonic, operands = self.decoded[line]
        offset = (address - self.func.start_address) & ADDRESS_MASK
        code = self.code[offset : offset + size]
        row = self._row_index(line)
        notes = []
        if row is not None and (line == 0 or self._row_index(line - 1) != row):
            rows = self.func.rows
            delta = rule_notation.rule_delta(self.func.section, rows[row - 1] if row > 0 else None, rows[row])
            notes.append(f"▶ {row}: {delta}")
        starts = self._starts
        for i in range(bisect_right(starts, address, key=itemgetter(0)), len(starts)):
            inside, index = starts[i]
            if inside >= address + size:
                break
            notes.append(f"row {index} starts inside this instruction, at {inside:#x}")
        text = f"{mnemonic} {operands}".strip()
        target = branch_target(self.func.section.abi, mnemonic, operands) if self.name_at is not None else None
        name = self.name_at(target) if target is not None and self.name_at is not None else ""
        if name:
            text += f" <{name}>"  # as objdump -d: `call 2370 <very_long_function>`
        return Instruction(address, code, text, row, "; ".join(notes))

    def _may_change(self) -> Iterable[int]:
        """The lines that can be a row's first or hold a row's start: the first line, and where each row
        starts and the line before (which a row may start inside); every line when the row does not grow
        with the address (PCMASK's repeating blocks, or rows out of order)."""
        if self.func.pcmask or not self.func.rows.increasing:
            return range(len(self))
        lines = {0}
        for address, _ in self._starts:
            line = bisect_left(self.addresses, address)
            lines.update((line - 1, line))
        return sorted(line for line in lines if 0 <= line < len(self))

    def changes(self) -> list[Instruction]:
        """The instructions that carry a note: each row's first, those a row starts inside."""
        return [ins for line in self._may_change() if (ins := self[line]).change]

    def line_of(self, address: int) -> int | None:
        """The index of the instruction that holds `address`."""
        line = bisect_right(self.addresses, address) - 1
        if line >= 0 and address < self.addresses[line] + max(self.decoded[line][1], 1):
            return line
        return None

    def first_of_row(self, row: int) -> int | None:
        """The index of the first instruction row `row` holds."""
        return next((line for line in self._may_change() if self[line].row == row), None)


_TARGET = re.compile(r"#?(0x[0-9a-f]+)$")
"""A direct branch's last operand, its target address: `0x2370` (x86-64, s390x), `#0x4005d0` (AArch64)."""


def branch_target(abi: int, mnemonic: str, operands: str) -> int | None:
    """The address a direct call or jump goes to (the operand objdump names with a symbol), else None."""
    last = operands.rsplit(", ", 1)[-1].strip()
    match = _TARGET.fullmatch(last)
    if match is None:
        return None
    if abi == ABI.amd64_endian_little:
        branch = mnemonic.startswith(("j", "call", "loop")) and last == operands.strip()
    elif abi == ABI.s390x_endian_big:
        branch = mnemonic.startswith(("br", "j", "cr", "cgr", "cij", "cgij", "clij", "clgij"))
    else:
        branch = mnemonic in ("b", "bl", "cbz", "cbnz", "tbz", "tbnz") or mnemonic.startswith("b.")
    return int(match.group(1), 16) if branch else None


@dataclass(frozen=True)
class Listing:
    """A function's instructions, or why there are none (`missing`)."""

    instructions: Instructions
    missing: str = ""

    @classmethod
    def none(cls, func: Function, why: str) -> Listing:
        """No instructions, and `why` (a raw section, no code loaded there, an ABI Capstone lacks)."""
        return cls(Instructions(func, b"", []), why)

    def line_of(self, address: int) -> int | None:
        """The index of the instruction that holds `address`."""
        return self.instructions.line_of(address)

    def first_of_row(self, row: int) -> int | None:
        """The index of the first instruction row `row` holds."""
        return self.instructions.first_of_row(row)


@cache
def _disassembler(abi: int) -> capstone.Cs:
    arch, mode = MACHINES[ABI(abi)]
    cs = capstone.Cs(arch, mode)
    if arch == capstone.CS_ARCH_X86:
        cs.syntax = capstone.CS_OPT_SYNTAX_ATT  # as objdump -d prints it
    cs.skipdata = True  # bytes that decode to nothing become `.byte`, and decoding goes on after them
    return cs


def disassemble(abi: int, code: bytes, address: int) -> list[tuple[int, bytes, str]]:
    """Each instruction of `code` (loaded at `address`): its address, its bytes, its text."""
    found = []
    for at, size, mnemonic, operands in _disassembler(abi).disasm_lite(code, address):
        offset = at - address
        found.append((at, code[offset : offset + size], f"{mnemonic} {operands}".strip()))
    return found


def instruction_at(abi: int, read: Callable[[int, int], bytes | None], pc: int) -> str | None:
    """The instruction at `pc` (`callq 0x1160`), from the bytes `read(address, size)` gives; None when
    there are none (fewer are tried near the end of what is readable)."""
    if abi not in MACHINES:
        return None
    for size in (16, 8, 4, 2):
        code = read(pc, size)
        found = disassemble(abi, code, pc) if code else []
        if found:
            return found[0][2]
    return None


def code_bytes(doc: Document, func: Function) -> bytes | str:
    """The function's code from the ELF file, or why there is none."""
    elf = doc.elf
    if elf is None:
        return "no code: a raw SFrame section has no instructions with it (open the ELF file it came from)"
    if func.error is not None:
        return "no code: this FDE could not be decoded"
    size = min(func.size, MAX_CODE)
    if not size:
        return "no code: the function's size is 0"
    place = doc.relocated_places.get(func.span.start)
    if place is not None:  # an object file: the function's section and offset, from the relocation
        code = section_code(elf, place.section, place.offset, size)
    else:
        code = loaded_code(elf, func.start_address, size)
    return code if code is not None else f"no code: nothing in the file is loaded at {func.start_address:#x}"


def listing(doc: Document, func: Function) -> Listing:
    """`func`'s instructions, each with its row, the first of each row with what the row changed."""
    if func.section.abi not in MACHINES:
        return Listing.none(func, f"no code: sfview cannot disassemble ABI {terms.abi_name(func.section.abi)}")
    code = code_bytes(doc, func)
    if isinstance(code, str):
        return Listing.none(func, code)
    decoded = list(_disassembler(func.section.abi).disasm_lite(code, func.start_address))
    name_at = None if doc.relocatable or doc.elf is None else doc.symbols.name_at
    return Listing(Instructions(func, code, decoded, name_at))
