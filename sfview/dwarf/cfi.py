"""DWARF CFI tables in the same numeric rule form as SFrame's rows.

pyelftools decodes `.eh_frame` and `.debug_frame` into per-FDE tables
(`get_decoded()`: lines of `CFARule` and `RegisterRule` by register number);
this module only maps those rules onto `sfview.sframe.rules.Rule`, so that
the comparison and the exporters compute with one vocabulary:

- CFA `reg + offset` → `Rule(VALUE, reg, offset)`;
- `OFFSET(n)` (saved at CFA+n) → `Rule(VALUE, CFA, n, deref=True)`;
- `VAL_OFFSET(n)` (the value is CFA+n) → `Rule(VALUE, CFA, n)`;
- `REGISTER(r)` (held in register r) → `Rule(VALUE, r, 0)`;
- `SAME_VALUE`, and a register no rule mentions → `SAME`;
- `UNDEFINED` → `UNDEFINED` (the outermost frame, for the RA).

DWARF expressions (`DW_CFA_def_cfa_expression`, `DW_CFA_expression`,
`DW_CFA_val_expression`) have no numeric form: they become `Unexpressible`,
which names what it stands for and keeps the expression's bytes. That type
lives here rather than in `rules.py` because SFrame itself never needs it.

Each row keeps where it came from: the section and the byte offset of its FDE
(and of the FDE's CIE). pyelftools does not record the offset of each CFI
instruction, so a row cannot name the instruction that started it.
"""

from __future__ import annotations

import bisect
import io
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elftools.common.exceptions import ELFError
from elftools.dwarf.callframe import FDE, CallFrameInfo, CFARule, RegisterRule
from elftools.dwarf.constants import DW_CFA
from elftools.dwarf.descriptions import describe_CFI_instructions

from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.inputs.elffile import reading, section_bytes, section_named, segment_bytes, segments
from sfview.sframe.rules import CFA, SAME, UNDEFINED, Kind, Rule, rule

if TYPE_CHECKING:
    from elftools.elf.elffile import ELFFile

ADDRESS_MASK = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class Unexpressible:
    """A DWARF rule that is an expression: nothing numeric can stand for it."""

    what: str
    """`CFA expression`, `expression` (saved at the address it computes) or `val_expression`."""
    expr: bytes = b""

    @property
    def kind(self) -> str:
        return "expression"


CfiRule = Rule | Unexpressible


@dataclass(frozen=True, slots=True)
class Abi:
    """The DWARF register numbers that matter for unwinding on one machine."""

    name: str
    sp: int
    fp: int
    ra: int
    sp_val_offset: int = 0
    """The caller's SP is the CFA plus this (s390x: -160; elsewhere the CFA is the caller's SP)."""


# The register numbers are the DWARF ones `sframe.ksy` names for each ABI.
ABIS = {
    "EM_X86_64": Abi("x86_64", Sframe.Amd64Reg.rsp, Sframe.Amd64Reg.rbp, Sframe.Amd64Reg.rip),
    "EM_AARCH64": Abi("arm64", Sframe.Aarch64Reg.sp, Sframe.Aarch64Reg.x29, Sframe.Aarch64Reg.x30),
    "EM_S390": Abi(
        "s390x", Sframe.S390xReg.r15, Sframe.S390xReg.r11, Sframe.S390xReg.r14, Sframe.S390xAbi.sp_val_offset
    ),
}


def abi_for(elf: ELFFile) -> Abi:
    """The ABI of an ELF file sfview unwinds (x86-64, AArch64 or s390x)."""
    machine = elf["e_machine"]
    if machine not in ABIS:
        raise InputError(f"machine {machine} is not one sfview reads CFI for (x86-64, AArch64, s390x)")
    return ABIS[machine]


@dataclass(slots=True)
class CfiRow:
    """One line of an FDE's table: the rules from `address` to the next row."""

    address: int
    cfa: CfiRule
    ra: CfiRule
    fp: CfiRule
    others: dict[int, CfiRule] = field(default_factory=dict)
    """Rules for the other registers (callee-saved ones SFrame does not track)."""
    ra_signed: bool = False
    """AArch64: the saved RA is signed here (`DW_CFA_AARCH64_negate_ra_state` toggled it), as
    SFrame's mangled-RA bit says."""


@dataclass(slots=True)
class CfiFunction:
    """One FDE: its address range, its rows, and where its bytes are."""

    start_address: int
    size: int
    rows: list[CfiRow]
    section: str
    """`.eh_frame` or `.debug_frame`."""
    fde_offset: int
    """Offset of the FDE in its section."""
    cie_offset: int
    entry: FDE | None = None
    """pyelftools' FDE (None for a table read from elsewhere, such as a Breakpad file)."""
    fde_size: int = 0
    """Bytes the FDE takes in its section (its length field included)."""
    location_offset: int = 0
    """Offset in its section of the FDE's `initial_location` field: in an object file, the relocation
    there says where the function will be."""

    @property
    def end_address(self) -> int:
        return self.start_address + self.size

    def row_for(self, pc: int) -> CfiRow | None:
        """The row in force at `pc`, or None outside the function (or before its first row)."""
        if not self.start_address <= pc < self.end_address:
            return None
        i = bisect.bisect_right([r.address for r in self.rows], pc) - 1
        return self.rows[i] if i >= 0 else None

    @property
    def instructions(self) -> str:
        """The FDE's CFA instructions as readelf writes them (`DW_CFA_def_cfa_offset: 16`), from pyelftools.

        Described when asked for: describing every FDE of a big file took longer than comparing them.
        """
        return describe_CFI_instructions(self.entry) if self.entry is not None else ""

    @property
    def cie_instructions(self) -> str:
        return describe_CFI_instructions(self.entry.cie) if self.entry is not None else ""

    @property
    def expressions(self) -> list[str]:
        """What in this FDE is a DWARF expression (none: every rule is numeric)."""
        found = []
        for row in self.rows:
            for value in (row.cfa, row.ra, row.fp, *row.others.values()):
                if isinstance(value, Unexpressible) and value.what not in found:
                    found.append(value.what)
        return found


class CfiTable:
    """Every FDE of a file, sorted by address, with the ABI's register numbers."""

    def __init__(self, abi: Abi, functions: list[CfiFunction]) -> None:
        self.abi = abi
        self.functions = sorted(functions, key=lambda f: (f.start_address, f.section != ".eh_frame"))
        self._starts = [f.start_address for f in self.functions]

    def overlapping(self, start: int, end: int) -> list[CfiFunction]:
        """The FDEs whose ranges meet `[start, end)`."""
        out = []
        functions = self.functions
        for i in range(max(bisect.bisect_right(self._starts, start) - 1, 0), len(functions)):
            func = functions[i]
            if func.start_address >= end:
                break
            if func.end_address > start and func.size:
                out.append(func)
        return out

    def find(self, pc: int) -> CfiFunction | None:
        """The FDE covering `pc` (`.eh_frame` before `.debug_frame`)."""
        return next(iter(self.overlapping(pc, pc + 1)), None)


DECODE_ERRORS = (ELFError, ValueError, KeyError, AssertionError, EOFError, OverflowError, IndexError, struct.error)
"""What pyelftools raises on damaged CFI is not one exception type: these are the ones damaged
`.eh_frame` bytes were seen to raise (OverflowError for a huge length)."""


class EhFrameIndex:
    """A file's `.eh_frame` FDEs found one at a time, through `.eh_frame_hdr`'s sorted table.

    What an unwinder crossing a library needs is the FDE of two or three
    PCs; pyelftools reads `.eh_frame` whole (0.29 s for libc.so.6's 3,717
    entries, and their tables another 0.3 s), so a backtrace through glibc
    took longer than gdb's. The header's table (`PT_GNU_EH_FRAME`, written by
    the linker for exactly this) is binary-searched here by hand, and only
    the FDE it points at is parsed, by pyelftools. Only the encodings every
    GNU linker writes are read (`eh_frame_ptr` pc-relative, the count
    `udata4`, the table `datarel|sdata4`); `usable` is False otherwise.
    """

    HEADER = struct.Struct("<BBBBiI")
    """version, eh_frame_ptr encoding, fde_count encoding, table encoding, eh_frame_ptr, fde_count."""
    ENCODINGS = (1, 0x1B, 0x03, 0x3B)
    """Version 1; DW_EH_PE_pcrel|sdata4; DW_EH_PE_udata4; DW_EH_PE_datarel|sdata4."""

    def __init__(self, elf: ELFFile) -> None:
        self.abi = abi_for(elf)
        self.usable = False
        with reading("the .eh_frame_hdr index"):
            self._index(elf)

    def _index(self, elf: ELFFile) -> None:
        header = next((seg for seg in segments(elf) if seg["p_type"] == "PT_GNU_EH_FRAME"), None)
        eh_frame = section_named(elf, ".eh_frame")
        if header is None or eh_frame is None or not elf.little_endian:
            return
        data = segment_bytes(elf, header)
        if len(data) < self.HEADER.size:
            return
        *encodings, _, count = self.HEADER.unpack_from(data)
        if tuple(encodings) != self.ENCODINGS or len(data) < self.HEADER.size + 8 * count:
            return
        self._hdr = header["p_vaddr"]
        table = struct.unpack_from(f"<{2 * count}i", data, self.HEADER.size)
        self._starts = [self._hdr + loc for loc in table[0::2]]
        self._fdes = [self._hdr + fde for fde in table[1::2]]
        self._eh_frame = eh_frame
        self._cfi = CallFrameInfo(
            stream=io.BytesIO(frames := section_bytes(eh_frame)),
            size=len(frames),
            address=eh_frame["sh_addr"],
            base_structs=elf.get_dwarf_info().structs,
            for_eh_frame=True,
        )
        self.usable = True

    def find(self, pc: int) -> CfiFunction | None:
        """The FDE covering `pc`, or None."""
        i = bisect.bisect_right(self._starts, pc) - 1
        if i < 0:
            return None
        offset = self._fdes[i] - self._eh_frame["sh_addr"]
        try:
            with reading(f"the FDE at .eh_frame+{offset:#x}"):  # a CIE pointer back to its FDE, DW_CFA_restore in a CIE
                # pyelftools' reader of one entry (its CIE read as it needs it), at an offset into the section
                entry = self._cfi._parse_entry_at(offset)
                functions = _functions([entry], ".eh_frame", self.abi)
        except InputError:
            return None
        if len(functions) != 1:  # the table pointed at a CIE
            return None
        (func,) = functions
        return func if func.start_address <= pc < func.end_address else None


def read_cfi(elf: ELFFile) -> CfiTable:
    """The CFI of `.eh_frame` and `.debug_frame`, as numeric rules.

    Raises `InputError` when the file has neither, or when pyelftools cannot
    decode them.
    """
    abi = abi_for(elf)
    if not (section_named(elf, ".eh_frame") or section_named(elf, ".debug_frame")):
        raise InputError("no DWARF CFI (neither .eh_frame nor .debug_frame)")
    with reading("DWARF CFI cannot be decoded"):  # zlib, RecursionError (a CIE pointer to itself), DWARFError...
        dwarf = elf.get_dwarf_info()
        functions = []
        if dwarf.has_EH_CFI():
            functions += _functions(dwarf.EH_CFI_entries(), ".eh_frame", abi)
        if dwarf.has_CFI():
            # An FDE in both sections (`.cfi_sections .eh_frame, .debug_frame`) counts once, as the unwinder's.
            eh = CfiTable(abi, list(functions))
            functions += [
                f
                for f in _functions(dwarf.CFI_entries(), ".debug_frame", abi)
                if not eh.overlapping(f.start_address, f.end_address)
            ]
    return CfiTable(abi, functions)


def _functions(entries: Iterable[Any], section: str, abi: Abi) -> list[CfiFunction]:
    out = []
    for entry in entries:
        if not isinstance(entry, FDE):
            continue
        start = entry["initial_location"] & ADDRESS_MASK
        signing = _ra_signing(entry, start)
        rows = [
            _row(line, entry.cie["return_address_register"], abi, _signed_at(signing, line["pc"] & ADDRESS_MASK))
            for line in _decoded(entry).table
        ]
        out.append(
            CfiFunction(
                start,
                entry["address_range"],
                rows,
                section,
                entry.offset,
                entry.cie.offset,
                entry,
                entry.header["length"] + entry.structs.initial_length_field_size(),
                # after the length and the CIE pointer (an offset: 4 or 8 bytes, as the length's format)
                entry.offset + entry.structs.initial_length_field_size() + entry.structs.dwarf_format // 8,
            )
        )
    return out


def _decoded(entry: FDE) -> Any:
    """pyelftools' table of the FDE's rows.

    pyelftools 0.33 refuses `DW_CFA_GNU_args_size` ("Unknown CFI opcode"),
    and one such FDE (glibc's libc.so.6 has one) made the whole file's CFI
    unreadable. The instruction only records the size of outgoing arguments
    (for exception handling), never a rule, so it is left out before decoding.
    """
    if any(instr.opcode == DW_CFA.GNU_args_size for instr in entry.instructions):
        entry.instructions = [instr for instr in entry.instructions if instr.opcode != DW_CFA.GNU_args_size]
    return entry.get_decoded()


def _ra_signing(entry: FDE, start: int) -> list[tuple[int, bool]]:
    """Where the RA's signing state changes: `(address, signed)`, in order.

    pyelftools' `get_decoded()` passes over `DW_CFA_AARCH64_negate_ra_state`
    (a no-op to it), so its state is replayed here from the instructions: a
    toggle at the current address, kept and restored with
    `DW_CFA_remember_state`/`DW_CFA_restore_state` as libgcc's unwinder does
    (the state is its pseudo-register 34).
    """
    changes: list[tuple[int, bool]] = []
    signed, stack, pc = False, [], start
    alignment = entry.cie["code_alignment_factor"]
    for instr in [*entry.cie.instructions, *entry.instructions]:
        match instr.opcode:
            case DW_CFA.set_loc:
                pc = instr.args[0] & ADDRESS_MASK
            case DW_CFA.advance_loc | DW_CFA.advance_loc1 | DW_CFA.advance_loc2 | DW_CFA.advance_loc4:
                pc += instr.args[0] * alignment
            case DW_CFA.remember_state:
                stack.append(signed)
            case DW_CFA.restore_state if stack:
                signed = stack.pop()
                changes.append((pc, signed))
            case DW_CFA.AARCH64_negate_ra_state:
                signed = not signed
                changes.append((pc, signed))
    return changes


def _signed_at(changes: list[tuple[int, bool]], pc: int) -> bool:
    """The signing state in force from `pc` (the last change at or before it)."""
    i = bisect.bisect_right(changes, pc, key=lambda change: change[0]) - 1
    return changes[i][1] if i >= 0 else False


def _row(line: dict[Any, Any], ra_reg: int, abi: Abi, ra_signed: bool) -> CfiRow:
    others = {
        reg: _register_rule(value)
        for reg, value in line.items()
        if isinstance(reg, int) and reg not in (ra_reg, abi.fp)
    }
    return CfiRow(
        address=line["pc"] & ADDRESS_MASK,
        cfa=cfa_rule(line["cfa"]),
        ra=_register_rule(line.get(ra_reg)),
        fp=_register_rule(line.get(abi.fp)),
        others=others,
        ra_signed=ra_signed,
    )


def cfa_rule(cfa: CFARule) -> CfiRule:
    """A CFA rule: `reg + offset`, or an expression."""
    if cfa.expr is not None or cfa.reg is None:
        return Unexpressible("CFA expression", bytes(cfa.expr or b""))
    return rule(Kind.VALUE, cfa.reg, cfa.offset)


def _register_rule(value: RegisterRule | None) -> CfiRule:
    """A register's rule; a register no rule mentions keeps its value (`SAME`)."""
    if value is None:
        return SAME
    match value.type:
        case RegisterRule.OFFSET:
            return rule(Kind.VALUE, CFA, value.arg, True)
        case RegisterRule.VAL_OFFSET:
            return rule(Kind.VALUE, CFA, value.arg, False)
        case RegisterRule.REGISTER:
            return rule(Kind.VALUE, value.arg, 0, False)
        case RegisterRule.SAME_VALUE:
            return SAME
        case RegisterRule.UNDEFINED:
            return UNDEFINED
        case RegisterRule.EXPRESSION | RegisterRule.VAL_EXPRESSION:
            return Unexpressible(value.type.lower(), bytes(value.arg))
    return Unexpressible(str(value.type).lower())
