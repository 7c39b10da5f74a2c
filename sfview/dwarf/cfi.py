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

Named tuples and plain classes with slots, not dataclasses: `sfview unwind`
imports this module (see `sfview.unwind`).
"""

from __future__ import annotations

import abc
import bisect
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, overload

from elftools.common.exceptions import ELFError

from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.sframe.model.rules import Rule

if TYPE_CHECKING:
    from elftools.dwarf.callframe import FDE

    from sfview.inputs.elf.image import ElfImage


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
    registers: int
    """How many DWARF register numbers the psABI gives it (0 to this less one); any other is refused, so
    that an FDE's rules are bounded by the machine, not by the numbers it writes."""
    sp_val_offset: int = 0
    """The caller's SP is the CFA plus this (s390x: -160; elsewhere the CFA is the caller's SP)."""


# The register numbers are the DWARF ones `sframe.ksy` names for each ABI. How many there are is each
# psABI's DWARF register table: x86-64's ends with %bnd3 at 129, AArch64's with z31 at 127, s390x's
# with v31 at 83.
ABIS = {
    "EM_X86_64": Abi("x86_64", Sframe.Amd64Reg.rsp, Sframe.Amd64Reg.rbp, Sframe.Amd64Reg.rip, 130),
    "EM_AARCH64": Abi("arm64", Sframe.Aarch64Reg.sp, Sframe.Aarch64Reg.x29, Sframe.Aarch64Reg.x30, 128),
    "EM_S390": Abi(
        "s390x", Sframe.S390xReg.r15, Sframe.S390xReg.r11, Sframe.S390xReg.r14, 84, Sframe.S390xAbi.sp_val_offset
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
    others: Mapping[int, CfiRule]
    """Rules for the other registers (callee-saved ones SFrame does not track), by register number;
    rows of one FDE that change none of them may share one mapping."""
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
        others: Mapping[int, CfiRule] | None = None,
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


class RowSequence(Sequence[CfiRow]):
    """An FDE's rows made when asked for, from a table that keeps their changes, not a row each
    (`ehframe.FdeRows`); equal to any sequence of the same rows."""

    __slots__ = ()

    @property
    @abc.abstractmethod
    def addresses(self) -> Sequence[int]:
        """Each row's address, in order, without making the rows."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal by value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class CfiFunction:
    """One FDE: its address range, its rows, and where its bytes are. Equal to a function of the same
    values (the differential tests compare tables)."""

    start_address: int
    size: int
    rows: list[CfiRow] | RowSequence
    """A list where the rows are read from elsewhere (a Breakpad file), else made when asked for."""
    section: str
    """`.eh_frame` or `.debug_frame`."""
    fde_offset: int
    """Offset of the FDE in its section."""
    cie_offset: int
    entry_source: Callable[[int], FDE | None] | None
    """Gives pyelftools' object for the FDE at an offset (called with `fde_offset`), which describes its
    instructions (None for a table read from elsewhere, such as a Breakpad file)."""
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
        rows: list[CfiRow] | RowSequence,
        section: str,
        fde_offset: int,
        cie_offset: int,
        entry_source: Callable[[int], FDE | None] | None = None,
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

    @property
    def addresses(self) -> Sequence[int]:
        """Each row's address, in order (without making the rows)."""
        rows = self.rows
        return rows.addresses if isinstance(rows, RowSequence) else [row.address for row in rows]

    def row_for(self, pc: int) -> CfiRow | None:
        """The row in force at `pc`, or None outside the function (or before its first row)."""
        i = self.row_index(pc)
        return self.rows[i] if i is not None else None

    def row_index(self, pc: int) -> int | None:
        """Which row is in force at `pc` (`row_for`), or None."""
        if not self.start_address <= pc < self.end_address:
            return None
        i = bisect.bisect_right(self.addresses, pc) - 1
        return i if i >= 0 else None

    @property
    def entry(self) -> FDE | None:
        """pyelftools' FDE, read when asked for (reading every FDE so would take longer than comparing them)."""
        return self.entry_source(self.fde_offset) if self.entry_source is not None else None

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
        last: object = None  # the `others` looked through last (consecutive rows share them)
        for row in self.rows:
            others = () if row.others is last else row.others.values()
            last = row.others
            for value in (row.cfa, row.ra, row.fp, *others):
                if isinstance(value, Unexpressible) and value.what not in found:
                    found.append(value.what)
        return found


class MadeFunctions(Sequence[CfiFunction]):
    """A sequence of FDEs whose `CfiFunction`s are made when asked for (`function`): an index or a slice
    makes them, iterating makes each in turn; none is held."""

    @abc.abstractmethod
    def __len__(self) -> int: ...

    @abc.abstractmethod
    def function(self, i: int) -> CfiFunction:
        """FDE number `i` (from 0) with its rows."""

    @overload
    def __getitem__(self, i: int) -> CfiFunction: ...
    @overload
    def __getitem__(self, i: slice) -> list[CfiFunction]: ...
    def __getitem__(self, i: int | slice) -> CfiFunction | list[CfiFunction]:
        if isinstance(i, slice):
            return [self.function(j) for j in range(*i.indices(len(self)))]
        return self.function(range(len(self))[i])  # a negative index counted from the end, as a list's

    def __iter__(self) -> Iterator[CfiFunction]:
        return map(self.function, range(len(self)))


DECODE_ERRORS = (ELFError, ValueError, KeyError, AssertionError, EOFError, OverflowError, IndexError, struct.error)
"""What pyelftools raises on damaged CFI is not one exception type: these are the ones damaged
`.eh_frame` bytes raise (OverflowError for a huge length)."""
