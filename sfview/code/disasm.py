"""A function's instructions, each on the SFrame row that holds it, through Capstone.

This answers "which instruction made this row?": an SFrame row starts at the
first instruction its rules hold for, right after the instruction that
changed the frame (a `push %rbp` ends row 0, and row 1, CFA `sp+16`, starts
at the next instruction). Each instruction is listed with the row an
unwinder would use at its address (`Function.row_for`, PCMASK included); the
first instruction of a row carries what the row changed (`CFA sp+8 →
sp+16`), and a row that starts inside an instruction (which no compiler
emits) says so on the instruction it starts in.

Only one function is disassembled at a time, when it is shown: Capstone
decodes a few hundred thousand instructions a second, so a function is a
millisecond or two, and the binary as a whole is never decoded. x86-64 is
printed in AT&T syntax, as `objdump -d` prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import capstone

from sfview.document import Document
from sfview.generated.sframe import Sframe
from sfview.inputs.code import loaded_code, section_code
from sfview.sframe import describe
from sfview.sframe.section import Function

__all__ = ["Instruction", "Listing", "disassemble", "instruction_at", "listing"]

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


@dataclass(frozen=True)
class Listing:
    """A function's instructions, or why there are none (`missing`)."""

    instructions: list[Instruction]
    missing: str = ""

    def line_of(self, address: int) -> int | None:
        """The index of the instruction that holds `address`."""
        for i, ins in enumerate(self.instructions):
            if ins.address <= address < ins.address + max(len(ins.code), 1):
                return i
        return None

    def first_of_row(self, row: int) -> int | None:
        """The index of the first instruction row `row` holds."""
        return next((i for i, ins in enumerate(self.instructions) if ins.row == row), None)


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
    place = doc.source.relocated_places.get(func.span.start)
    if place is not None:  # an object file: the function's section and offset, from the relocation
        code = section_code(elf, place.section, place.offset, size)
    else:
        code = loaded_code(elf, func.start_address, size)
    return code if code is not None else f"no code: nothing in the file is loaded at {func.start_address:#x}"


def listing(doc: Document, func: Function) -> Listing:
    """`func`'s instructions, each with its row, the first of each row with what the row changed."""
    if func.section.abi not in MACHINES:
        return Listing([], f"no code: sfview cannot disassemble ABI {describe.abi_name(func.section.abi)}")
    code = code_bytes(doc, func)
    if isinstance(code, str):
        return Listing([], code)
    return Listing(list(_on_rows(func, disassemble(func.section.abi, code, func.start_address))))


def _on_rows(func: Function, decoded: list[tuple[int, bytes, str]]) -> Iterator[Instruction]:
    """Each instruction with its row; the first of a row with the change, and rows starting inside one noted."""
    section, rows = func.section, func.rows
    starts = {} if func.pcmask else {row.address: row for row in rows}
    previous = None
    for address, code, text in decoded:
        row = func.row_for(address)
        notes = []
        if row is not None and (previous is None or row.index != previous.index):
            before = rows[row.index - 1] if row.index > 0 else None
            notes.append(f"▶ {row.index}: {describe.rule_delta(section, before, row)}")
        for inside in range(address + 1, address + len(code)):
            if inside in starts:
                notes.append(f"row {starts[inside].index} starts inside this instruction, at {inside:#x}")
        yield Instruction(address, code, text, row.index if row is not None else None, "; ".join(notes))
        previous = row
