"""DWARF CFI tables in the same numeric rule form as SFrame's rows.

`ehframe.py` reads `.eh_frame` and `.debug_frame` (after pyelftools' reading
of them, which a differential test keeps it to) into per-FDE tables whose
rules are `sfview.sframe.model.rules.Rule`, so that the comparison and the
exporters compute with one vocabulary:

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
(and of the FDE's CIE); a row does not name the instruction that started it.

No dataclasses here (named tuples, and plain classes with slots for the rows
and functions): `sfview unwind` walks libc with DWARF CFI, and importing
`dataclasses` (with `inspect`) and building its classes cost about 10 ms of
that command's 44 ms start (issue 16).
"""

from __future__ import annotations

import array
import bisect
import heapq
import itertools
import operator
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from elftools.common.exceptions import ELFError

from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.inputs.boundary import reading
from sfview.sframe.model.rules import Rule

if TYPE_CHECKING:
    from elftools.dwarf.callframe import FDE

    from sfview.dwarf.ehframe import FdeHeaders
    from sfview.inputs.elfimage import ElfImage

ADDRESS_MASK = (1 << 64) - 1


class Unexpressible(NamedTuple):
    """A DWARF rule that is an expression: nothing numeric can stand for it."""

    what: str
    """`CFA expression`, `expression` (saved at the address it computes) or `val_expression`."""
    expr: bytes = b""

    @property
    def kind(self) -> str:
        return "expression"


CfiRule = Rule | Unexpressible


class Abi(NamedTuple):
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


def abi_for(elf: ElfImage) -> Abi:
    """The ABI of an ELF file sfview unwinds (x86-64, AArch64 or s390x)."""
    machine = elf.machine
    if machine not in ABIS:
        raise InputError(f"machine {machine} is not one sfview reads CFI for (x86-64, AArch64, s390x)")
    return ABIS[machine]


class CfiRow:
    """One line of an FDE's table: the rules from `address` to the next row. Equal to a row of the same
    rules (the differential tests compare tables)."""

    address: int
    cfa: CfiRule
    ra: CfiRule
    fp: CfiRule
    others: dict[int, CfiRule]
    """Rules for the other registers (callee-saved ones SFrame does not track)."""
    ra_signed: bool
    """AArch64: the saved RA is signed here (`DW_CFA_AARCH64_negate_ra_state` toggled it), as
    SFrame's mangled-RA bit says."""

    __slots__ = ("address", "cfa", "fp", "others", "ra", "ra_signed")
    __hash__ = None  # equal by value, and changeable: as a dataclass's

    def __init__(
        self,
        address: int,
        cfa: CfiRule,
        ra: CfiRule,
        fp: CfiRule,
        others: dict[int, CfiRule] | None = None,
        ra_signed: bool = False,
    ) -> None:
        self.address = address
        self.cfa = cfa
        self.ra = ra
        self.fp = fp
        self.others = {} if others is None else others
        self.ra_signed = ra_signed

    def _values(self) -> tuple:
        return self.address, self.cfa, self.ra, self.fp, self.others, self.ra_signed

    def __eq__(self, other: object) -> bool:
        return self._values() == other._values() if isinstance(other, CfiRow) else NotImplemented

    def __repr__(self) -> str:
        return f"CfiRow{self._values()!r}"


class CfiFunction:
    """One FDE: its address range, its rows, and where its bytes are. Equal to a function of the same
    values (the differential tests compare tables)."""

    start_address: int
    size: int
    rows: list[CfiRow]
    section: str
    """`.eh_frame` or `.debug_frame`."""
    fde_offset: int
    """Offset of the FDE in its section."""
    cie_offset: int
    entry_source: Callable[[], FDE | None] | None
    """Gives pyelftools' object for the FDE, which describes its instructions (None for a table read
    from elsewhere, such as a Breakpad file)."""
    fde_size: int
    """Bytes the FDE takes in its section (its length field included)."""
    location_offset: int
    """Offset in its section of the FDE's `initial_location` field: in an object file, the relocation
    there says where the function will be."""

    __slots__ = (
        "cie_offset",
        "entry_source",
        "fde_offset",
        "fde_size",
        "location_offset",
        "rows",
        "section",
        "size",
        "start_address",
    )
    __hash__ = None  # equal by value, and changeable: as a dataclass's

    def __init__(
        self,
        start_address: int,
        size: int,
        rows: list[CfiRow],
        section: str,
        fde_offset: int,
        cie_offset: int,
        entry_source: Callable[[], FDE | None] | None = None,
        fde_size: int = 0,
        location_offset: int = 0,
    ) -> None:
        self.start_address = start_address
        self.size = size
        self.rows = rows
        self.section = section
        self.fde_offset = fde_offset
        self.cie_offset = cie_offset
        self.entry_source = entry_source
        self.fde_size = fde_size
        self.location_offset = location_offset

    def _values(self) -> tuple:
        return (self.start_address, self.size, self.rows, self.section, self.fde_offset, self.cie_offset,
                self.entry_source, self.fde_size, self.location_offset)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return self._values() == other._values() if isinstance(other, CfiFunction) else NotImplemented

    def __repr__(self) -> str:
        return f"CfiFunction{self._values()!r}"

    @property
    def end_address(self) -> int:
        return self.start_address + self.size

    def row_for(self, pc: int) -> CfiRow | None:
        """The row in force at `pc`, or None outside the function (or before its first row)."""
        if not self.start_address <= pc < self.end_address:
            return None
        i = bisect.bisect_right(self.rows, pc, key=_address) - 1
        return self.rows[i] if i >= 0 else None

    @property
    def entry(self) -> FDE | None:
        """pyelftools' FDE, read when asked for (reading every FDE so took longer than comparing them)."""
        return self.entry_source() if self.entry_source is not None else None

    @property
    def instructions(self) -> str:
        """The FDE's CFA instructions as readelf writes them (`DW_CFA_def_cfa_offset: 16`), from pyelftools."""
        from elftools.dwarf.descriptions import describe_CFI_instructions  # only the views show them

        entry = self.entry
        return describe_CFI_instructions(entry) if entry is not None else ""

    @property
    def cie_instructions(self) -> str:
        from elftools.dwarf.descriptions import describe_CFI_instructions

        entry = self.entry
        return describe_CFI_instructions(entry.cie) if entry is not None and entry.cie is not None else ""

    @property
    def expressions(self) -> list[str]:
        """What in this FDE is a DWARF expression (none: every rule is numeric)."""
        found = []
        for row in self.rows:
            for value in (row.cfa, row.ra, row.fp, *row.others.values()):
                if isinstance(value, Unexpressible) and value.what not in found:
                    found.append(value.what)
        return found


def _address(row: CfiRow) -> int:
    return row.address


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

    @property
    def sections(self) -> list[str]:
        """The sections its FDEs come from, by name."""
        return sorted({f.section for f in self.functions})


class CfiOutline:
    """Every FDE of a file by its header, in `CfiTable`'s order (by address, `.eh_frame` first): what
    `compare` pairs SFrame's functions with, each FDE's rows worked out only when asked for (`function`),
    its shape saying when another's hold for it (`shapes`). Arrays, not an object per FDE.
    """

    def __init__(self, abi: Abi, parts: list[tuple[FdeHeaders, Sequence[int]]]) -> None:
        """`parts`: each section's headers, and which of its FDEs are in (in section order).

        What it takes from the headers is copied (each FDE's section, and its offset there where the
        headers kept its index), so that they can go once it is made: at 40,000 FDEs they are a megabyte.
        """
        self.abi = abi
        self._frames = [headers.frames for headers, _ in parts]
        self.sections = sorted({headers.frames.name for headers, kept in parts if kept})
        self.starts = array.array("Q")
        self.sizes: array.array[int] | list[int] = array.array("q")
        self._part = array.array("B")
        self._offset = array.array("Q")
        self.shapes = array.array("q")
        """Each FDE's shape, a number for its section and its shape there; -1 when it has none."""
        for number, (headers, kept) in enumerate(parts):
            whole = isinstance(kept, range) and kept == range(len(headers))
            self.starts.extend(headers.starts if whole else (headers.starts[i] for i in kept))
            sizes = headers.sizes if whole else [headers.sizes[i] for i in kept]
            try:
                self.sizes.extend(array.array("q", sizes))
            except OverflowError:  # a damaged `address_range` past 2^63 (a list holds them)
                self.sizes = [*self.sizes, *sizes]
            self._part.extend(bytes([number]) * len(kept))
            self._offset.extend(headers.offsets if whole else (headers.offsets[i] for i in kept))
            shapes = headers.shapes
            self.shapes.extend(shapes[i] * len(parts) + number if shapes[i] >= 0 else -1 for i in kept)
        if any(map(operator.gt, self.starts, itertools.islice(self.starts, 1, None))):
            order = array.array("Q", self._order())
            self.starts = array.array("Q", (self.starts[k] for k in order))
            try:
                self.sizes = array.array("q", (self.sizes[k] for k in order))
            except OverflowError:  # a damaged `address_range` past 2^63
                self.sizes = [self.sizes[k] for k in order]
            self._part = array.array("B", (self._part[k] for k in order))
            self._offset = array.array("Q", (self._offset[k] for k in order))
            self.shapes = array.array("q", (self.shapes[k] for k in order))

    def _order(self) -> Iterator[int]:
        """The entries in `CfiTable`'s order: by address, `.eh_frame` first at one, else as they came. Nearly
        in order already (crt's `_start` comes first): those in order are kept, the others sorted and merged
        in, so that 40,000 FDEs need no object each."""
        starts, part = self.starts, self._part
        debug = [frames.name != ".eh_frame" for frames in self._frames]

        def key(k: int) -> tuple[int, bool, int]:
            return starts[k], debug[part[k]], k

        kept, misplaced = array.array("Q"), []
        last = (-1, False, -1)
        for k in range(len(starts)):
            if key(k) >= last:
                kept.append(k)
                last = key(k)
            else:
                misplaced.append(k)
        return heapq.merge(kept, sorted(misplaced, key=key), key=key)

    def __len__(self) -> int:
        return len(self.starts)

    def overlapping(self, start: int, end: int) -> list[int]:
        """The FDEs (by number) whose ranges meet `[start, end)`, found as `CfiTable.overlapping` finds them."""
        out = []
        starts, sizes = self.starts, self.sizes
        for i in range(max(bisect.bisect_right(starts, start) - 1, 0), len(starts)):
            if starts[i] >= end:
                break
            if starts[i] + sizes[i] > start and sizes[i]:
                out.append(i)
        return out

    def function(self, i: int) -> CfiFunction:
        """FDE number `i` with its rows."""
        from sfview.dwarf.ehframe import fde_function  # ehframe builds this module's types

        return fde_function(self._frames[self._part[i]], self._offset[i], self.abi)


DECODE_ERRORS = (ELFError, ValueError, KeyError, AssertionError, EOFError, OverflowError, IndexError, struct.error)
"""What pyelftools raises on damaged CFI is not one exception type: these are the ones damaged
`.eh_frame` bytes were seen to raise (OverflowError for a huge length)."""


class EhFrameIndex:
    """A file's `.eh_frame` FDEs found one at a time, by address.

    What an unwinder crossing a library needs is the FDE of two or three PCs:
    the address is looked up in `.eh_frame_hdr`'s sorted table (`PT_GNU_EH_FRAME`,
    written by the linker for exactly this), and only the FDE it points at is
    read. A static program has no `.eh_frame_hdr` (gcc does not ask ld for one):
    the same table is built once from the FDEs' headers, without working out
    any FDE's rows. `usable` is False when neither can be had.
    """

    def __init__(self, elf: ElfImage) -> None:
        from sfview.dwarf.ehframe import frame_section, hdr_table  # ehframe builds this module's types

        self.abi = abi_for(elf)
        self.usable = False
        eh_frame = frame_section(elf, ".eh_frame")
        if eh_frame is None:
            return
        table = hdr_table(elf, eh_frame)
        if table is None:
            try:
                places = sorted((start & ADDRESS_MASK, offset) for start, offset in eh_frame.fde_places())
            except InputError:
                return
            table = [start for start, _ in places], [offset for _, offset in places]
        self._starts, self._offsets = table
        self._eh_frame = eh_frame
        self.usable = True

    def find(self, pc: int) -> CfiFunction | None:
        """The FDE covering `pc`, or None."""
        i = bisect.bisect_right(self._starts, pc) - 1
        if i < 0:
            return None
        try:
            fde = self._eh_frame.fde_at(self._offsets[i])
            if fde is None or not (fde.start & ADDRESS_MASK) <= pc < (fde.start & ADDRESS_MASK) + fde.size:
                return None  # a PC past the nearest FDE's end: its rows are not worked out
            return self._eh_frame.function(fde, self.abi)
        except InputError:
            return None


def read_cfi_outline(elf: ElfImage) -> CfiOutline:
    """What `read_cfi` reads, by the FDEs' headers (rows worked out for those asked for); raises as it does."""
    from sfview.dwarf.ehframe import frame_section  # ehframe builds this module's types

    abi = abi_for(elf)
    with reading("DWARF CFI cannot be decoded"):  # whatever the reader did not foresee, located
        eh_frame, debug_frame = frame_section(elf, ".eh_frame"), frame_section(elf, ".debug_frame")
        if eh_frame is None and debug_frame is None:
            raise InputError("no DWARF CFI (neither .eh_frame nor .debug_frame)")
        parts = []
        if eh_frame is not None:
            headers = eh_frame.headers(abi)
            parts.append((headers, range(len(headers))))
        if debug_frame is not None:
            # An FDE in both sections (`.cfi_sections .eh_frame, .debug_frame`) counts once, as the unwinder's.
            eh, headers = CfiOutline(abi, parts), debug_frame.headers(abi)
            sizes = enumerate(zip(headers.starts, headers.sizes, strict=True))
            parts.append((headers, [i for i, (start, size) in sizes if not eh.overlapping(start, start + size)]))
    return CfiOutline(abi, parts)


def read_cfi(elf: ElfImage) -> CfiTable:
    """The CFI of `.eh_frame` and `.debug_frame`, as numeric rules.

    Raises `InputError` when the file has neither, or when they cannot be decoded.
    """
    from sfview.dwarf.ehframe import frame_section  # ehframe builds this module's types

    abi = abi_for(elf)
    with reading("DWARF CFI cannot be decoded"):  # whatever the reader did not foresee, located
        eh_frame, debug_frame = frame_section(elf, ".eh_frame"), frame_section(elf, ".debug_frame")
        if eh_frame is None and debug_frame is None:
            raise InputError("no DWARF CFI (neither .eh_frame nor .debug_frame)")
        functions = eh_frame.functions(abi) if eh_frame is not None else []
        if debug_frame is not None:
            # An FDE in both sections (`.cfi_sections .eh_frame, .debug_frame`) counts once, as the unwinder's.
            eh = CfiTable(abi, list(functions))
            functions += [f for f in debug_frame.functions(abi) if not eh.overlapping(f.start_address, f.end_address)]
    return CfiTable(abi, functions)
