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

import bisect
import struct
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple

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


class RuleSet(Mapping[int, CfiRule]):
    """Rules of registers by DWARF number, unchanging: `set` and `without` give a new set that shares
    the rest with this one.

    The rows of an FDE each hold the rules in force; a row after a change held a copy of them all, so
    that an FDE changing one of 128 registers at each of its rows held 128 rules a row. A set is
    either a table of blocks of `BLOCK` numbers (a checkpoint) or one change on top of another set;
    every `SPAN` changes the chain is folded into a new checkpoint, which shares the blocks no change
    touched. A change thus costs one small object and a share of a checkpoint, and a lookup walks at
    most `SPAN` changes.
    """

    BLOCK = 16
    SPAN = 32

    __slots__ = ("_blocks", "_count", "_depth", "_parent", "_reg", "_value")

    def __init__(self, blocks: tuple[tuple[CfiRule | None, ...] | None, ...] = (), count: int = 0) -> None:
        self._blocks: tuple[tuple[CfiRule | None, ...] | None, ...] | None = blocks
        self._count = count
        self._depth = 0
        self._parent: RuleSet | None = None
        self._reg = -1
        self._value: CfiRule | None = None

    def _rule(self, reg: int) -> CfiRule | None:
        node = self
        while node._blocks is None:
            if node._reg == reg:
                return node._value
            node = node._parent  # type: ignore[assignment]
        hi, lo = divmod(reg, self.BLOCK)
        block = node._blocks[hi] if 0 <= hi < len(node._blocks) else None
        return block[lo] if block is not None else None

    def _changes(self) -> tuple[RuleSet, dict[int, CfiRule | None]]:
        """The checkpoint under this set, and the changes on top of it (the last change of a register wins)."""
        chain = []
        node = self
        while node._blocks is None:
            chain.append(node)
            node = node._parent  # type: ignore[assignment]
        return node, {change._reg: change._value for change in reversed(chain)}

    def get(self, reg: int, default: object = None) -> CfiRule | None:  # type: ignore[override]
        value = self._rule(reg)
        return default if value is None else value  # type: ignore[return-value]

    def __getitem__(self, reg: int) -> CfiRule:
        value = self._rule(reg)
        if value is None:
            raise KeyError(reg)
        return value

    def __contains__(self, reg: object) -> bool:
        return isinstance(reg, int) and reg >= 0 and self._rule(reg) is not None

    def __iter__(self) -> Iterator[int]:
        return (reg for reg, _ in self.items())

    def __len__(self) -> int:
        return self._count

    def items(self) -> Iterator[tuple[int, CfiRule]]:  # type: ignore[override]
        """(register, rule) in register order, read from the blocks and the changes (not a lookup a key)."""
        base, changes = self._changes()
        blocks: list[tuple[CfiRule | None, ...] | list[CfiRule | None] | None] = list(base._blocks or ())
        for reg, value in changes.items():
            hi, lo = divmod(reg, self.BLOCK)
            if hi >= len(blocks):
                blocks += [None] * (hi + 1 - len(blocks))
            block = blocks[hi]
            if not isinstance(block, list):
                block = blocks[hi] = list(block or (None,) * self.BLOCK)
            block[lo] = value
        for hi, block in enumerate(blocks):
            if block is not None:
                yield from ((hi * self.BLOCK + lo, value) for lo, value in enumerate(block) if value is not None)

    def values(self) -> Iterator[CfiRule]:  # type: ignore[override]
        return (value for _, value in self.items())

    def __repr__(self) -> str:
        return f"RuleSet({dict(self.items())!r})"

    __hash__ = None  # type: ignore[assignment]  # equal by value to any mapping of the same rules

    def set(self, reg: int, value: CfiRule | None) -> RuleSet:
        """This set with `reg`'s rule `value` (None: no rule)."""
        old = self._rule(reg)
        if old == value:
            return self
        count = self._count + (old is None) - (value is None)
        if self._depth + 1 < self.SPAN:
            out = RuleSet(None, count)  # type: ignore[arg-type]
            out._depth, out._parent, out._reg, out._value = self._depth + 1, self, reg, value
            return out
        base, changes = self._changes()
        changes[reg] = value
        blocks = list(base._blocks or ())
        edited: dict[int, list[CfiRule | None]] = {}
        for changed, rule in changes.items():
            hi, lo = divmod(changed, self.BLOCK)
            if hi >= len(blocks):
                blocks += [None] * (hi + 1 - len(blocks))
            if hi not in edited:
                edited[hi] = list(blocks[hi] or (None,) * self.BLOCK)
            edited[hi][lo] = rule
        for hi, block in edited.items():
            blocks[hi] = tuple(block)
        return RuleSet(tuple(blocks), count)

    def without(self, *regs: int) -> RuleSet:
        """This set without the rules of `regs`."""
        out = self
        for reg in regs:
            out = out.set(reg, None)
        return out

    def stripped(self, regs: frozenset[int], done: dict[int, RuleSet]) -> RuleSet:
        """This set `without` the rules of `regs`, sharing as this set shares with the sets under it.

        `done` maps the identity of each set already stripped (the caller keeps those sets alive) to
        its stripped set: stripping the rows of one FDE in order costs a change per change, not a
        copy per row.
        """
        chain = []
        node = self
        while id(node) not in done and node._blocks is None:
            chain.append(node)
            node = node._parent  # type: ignore[assignment]
        out = done.get(id(node))
        if out is None:
            out = done[id(node)] = node.without(*regs)
        for change in reversed(chain):
            if change._reg not in regs:
                out = out.set(change._reg, change._value)
            done[id(change)] = out
        return out


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
    """Rules for the other registers (callee-saved ones SFrame does not track): a `RuleSet` as DWARF CFI
    is read, shared by rows that change none of them."""
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
        """pyelftools' FDE, read when asked for (reading every FDE so would take longer than comparing them)."""
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
        seen: set[int] = set()  # the `others` dicts already looked through (rows share them)
        for row in self.rows:
            others = () if id(row.others) in seen else row.others.values()
            seen.add(id(row.others))
            for value in (row.cfa, row.ra, row.fp, *others):
                if isinstance(value, Unexpressible) and value.what not in found:
                    found.append(value.what)
        return found


def _address(row: CfiRow) -> int:
    return row.address


DECODE_ERRORS = (ELFError, ValueError, KeyError, AssertionError, EOFError, OverflowError, IndexError, struct.error)
"""What pyelftools raises on damaged CFI is not one exception type: these are the ones damaged
`.eh_frame` bytes raise (OverflowError for a huge length)."""
