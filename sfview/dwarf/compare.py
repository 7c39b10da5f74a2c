"""SFrame against DWARF CFI: the same binary's two sets of unwind rules, address by address.

For every function both sources describe, the address range they share is
cut at every row boundary of either side; on each piece the CFA, RA and FP
rules are compared. A piece where they differ is a `Difference`, explained
(`reason`) when the difference is one the formats force:

- a DWARF expression SFrame cannot hold (the PLT's CFA expression, written in
  SFrame as a PCMASK FDE; any other `DW_CFA_*expression`);
- an RA DWARF marks undefined (the outermost frame, `_start`), which SFrame
  versions 1 and 2 cannot say.

A rule is equal when it computes the same value: the RA SFrame's header fixes
(`cfa_fixed_ra_offset`) equals DWARF's CIE rule `c-8`; SFrame's RA padding
word ("not saved") equals DWARF's silence about the RA (still in the link
register). Registers only DWARF tracks (callee-saved ones) are counted, never
compared: SFrame holds the CFA, FP and RA alone.

Functions only one side describes are listed, with the reason when one is
known (a linker stub section, an expression, an outermost frame); without
one, the likely cause is code assembled without `--gsframe` (crt files).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sfview.dwarf.cfi import CfiFunction, CfiRow, CfiRule, CfiTable, Unexpressible
from sfview.sframe.bulk import functions_with_rows
from sfview.sframe.rules import CFA, Kind, Rule

if TYPE_CHECKING:
    from sfview.sframe.bulk import RowsFunction
    from sfview.sframe.section import Function, Row, Section

COLUMNS = ("cfa", "ra", "fp")
RA_SIGNING = "ra signing"
"""The column of a difference in whether the saved RA is signed (SFrame's mangled-RA bit,
DWARF's `DW_CFA_AARCH64_negate_ra_state`); its rules are the two RA rules."""
V1_PCMASK_BLOCK = 16
"""Version 1 FDEs have no `func_rep_size`; its one PCMASK user, the x86-64 PLT, repeats every 16 bytes."""


def block_size(func: Function) -> int:
    """How often a PCMASK function's rows repeat."""
    return func.rep_size or V1_PCMASK_BLOCK


def sframe_row(func: Function, pc: int, rows: Sequence[Row] | None = None) -> Row | None:
    """The row in force at `pc`; for PCMASK, at `pc` modulo the block size
    (`Function.row_for` does not know version 1's implicit 16-byte block).

    `rows`: the function's rows, when the caller has decoded them already.
    """
    if not func.start_address <= pc < func.start_address + func.size:
        return None
    offset = pc - func.start_address
    if func.pcmask:
        offset %= block_size(func)
    rows = func.rows if rows is None else rows
    i = bisect.bisect_right(rows, offset, key=lambda row: row.start_offset) - 1
    return rows[i] if i >= 0 else None


@dataclass(slots=True)
class Difference:
    """A range of addresses where one rule differs between the two sources."""

    start: int
    end: int
    column: str
    """`cfa`, `ra` or `fp`."""
    sframe: Rule
    dwarf: CfiRule
    sframe_row: Row
    dwarf_row: CfiRow
    reason: str | None
    """Why the formats force this difference; None for a real disagreement."""


@dataclass(slots=True)
class Pair:
    """One SFrame function and the DWARF FDE that describes the same code."""

    sframe: Function
    dwarf: CfiFunction
    name: str
    compared: int = 0
    """Code bytes both describe."""
    agreeing: int = 0
    """Of those, bytes where CFA, RA and FP agree."""
    explained: int = 0
    """Bytes where they differ, each difference for a known reason."""
    disagreeing: int = 0
    """Bytes with at least one unexplained difference."""
    differences: list[Difference] = field(default_factory=list)
    untracked: set[int] = field(default_factory=set)
    """Registers DWARF has rules for that SFrame does not track."""


@dataclass(slots=True)
class OneSided:
    """A function only one source describes."""

    side: str
    """`sframe` or `dwarf`."""
    start: int
    size: int
    offset: int
    """The FDE's offset in its section."""
    section: str
    name: str
    reason: str | None


@dataclass(slots=True)
class Comparison:
    pairs: list[Pair]
    only: list[OneSided]

    @property
    def compared(self) -> int:
        return sum(p.compared for p in self.pairs)

    @property
    def agreeing(self) -> int:
        return sum(p.agreeing for p in self.pairs)

    def differences(self, explained: bool) -> list[tuple[Pair, Difference]]:
        return [(p, d) for p in self.pairs for d in p.differences if (d.reason is not None) == explained]

    @property
    def explained(self) -> int:
        return sum(p.explained for p in self.pairs)

    @property
    def disagreeing(self) -> int:
        return sum(p.disagreeing for p in self.pairs)

    @property
    def agrees(self) -> bool:
        """No unexplained difference where both describe the code.

        A function only one side describes is a gap in coverage, not a
        disagreement: code from objects assembled without `--gsframe` (crt
        files, hand-written assembly) has DWARF CFI alone.
        """
        return not self.differences(explained=False)


@dataclass(frozen=True, slots=True)
class Placement:
    """In an object file, where each function will be once linked (the relocation on its start
    field: `.text+0x40`), from either side: the functions of the two sides that will be at the same
    place are the same function. Their unrelocated addresses say nothing."""

    sframe: Callable[[Function], Hashable | None]
    dwarf: Callable[[CfiFunction], Hashable | None]


def compare(
    section: Section,
    table: CfiTable,
    name_of: Callable[[Function], str],
    name_at: Callable[[int], str],
    placement: Placement | None = None,
    functions: Sequence[Function | RowsFunction] | None = None,
) -> Comparison:
    """Compare every function of `section` with `table`.

    `name_of` names an SFrame function, `name_at` an address (`main`,
    `.plt.got`), as `Document` does.

    `placement`: the input is an object file whose function addresses are
    unrelocated; functions are paired by where their relocations put them
    and compared by offset into the function. (Pairing them in order fails
    as soon as one function has DWARF CFI alone: every later pair is wrong.)

    `functions`: the section's functions with their rows, when the caller has them already
    (`bulk.functions_with_rows`, which reads them without a Kaitai object each).
    """
    if functions is None:
        functions = functions_with_rows(section)
    sframe_funcs = [f for f in functions if f.error is None]
    pairs: list[Pair] = []
    paired_dwarf: set[int] = set()
    paired_sframe: set[int] = set()
    if placement is not None:
        dwarf_at = {place: cfi for cfi in table.functions if (place := placement.dwarf(cfi)) is not None}
        for func in sframe_funcs:
            cfi = dwarf_at.get(placement.sframe(func))
            if cfi is not None:
                pairs.append(_compare_pair(func, cfi, name_of(func), cfi.start_address - func.start_address))
                paired_dwarf.add(id(cfi))
                paired_sframe.add(id(func))
    else:
        for func in sframe_funcs:
            end = func.start_address + max(func.size, 1)
            for cfi in table.overlapping(func.start_address, end):
                pairs.append(_compare_pair(func, cfi, name_of(func), 0))
                paired_dwarf.add(id(cfi))
                paired_sframe.add(id(func))
    only = [
        OneSided("sframe", f.start_address, f.size, f.span.start, ".sframe", name_of(f), None)
        for f in sframe_funcs
        if id(f) not in paired_sframe
    ]
    only += [
        OneSided("dwarf", c.start_address, c.size, c.fde_offset, c.section, name, _why_dwarf_only(c, table, name))
        for c in table.functions
        if id(c) not in paired_dwarf
        for name in [name_at(c.start_address)]
    ]
    return Comparison(pairs, only)


def _compare_pair(func: Function, cfi: CfiFunction, name: str, delta: int) -> Pair:
    """Compare on the shared range; `delta` maps an SFrame address to the DWARF one."""
    pair = Pair(func, cfi, name)
    start = max(func.start_address, cfi.start_address - delta)
    end = min(func.start_address + func.size, cfi.end_address - delta)
    if end <= start:
        return pair
    rows = list(func.rows)  # each row decoded once
    cuts = {start, end}
    cuts.update(r.address - delta for r in cfi.rows if start < r.address - delta < end)
    if func.pcmask:
        for block in range(func.start_address, end, block_size(func)):
            cuts.update(block + r.start_offset for r in rows if start < block + r.start_offset < end)
    else:
        cuts.update(r.address for r in rows if start < r.address < end)
    bounds = sorted(cuts)
    for lo, hi in itertools.pairwise(bounds):
        srow = sframe_row(func, lo, rows)
        drow = cfi.row_for(lo + delta)
        if srow is None or drow is None:
            continue
        pair.compared += hi - lo
        pair.untracked.update(reg for reg, value in drow.others.items() if value.kind is not Kind.SAME)
        reasons = []
        for column in COLUMNS:
            srule, drule = getattr(srow, column), getattr(drow, column)
            if equal(srule, drule):
                continue
            reason = _why(column, srule, drule, func)
            reasons.append(reason)
            _add(pair.differences, Difference(lo, hi, column, srule, drule, srow, drow, reason))
        if srow.mangled_ra != drow.ra_signed:
            reasons.append(None)
            _add(pair.differences, Difference(lo, hi, RA_SIGNING, srow.ra, drow.ra, srow, drow, None))
        if not reasons:
            pair.agreeing += hi - lo
        elif None in reasons:
            pair.disagreeing += hi - lo
        else:
            pair.explained += hi - lo
    return pair


def _add(differences: list[Difference], diff: Difference) -> None:
    """Append, merging with the previous difference when it continues it."""
    for prev in reversed(differences[-3:]):
        if (
            prev.end == diff.start
            and prev.column == diff.column
            and prev.sframe == diff.sframe
            and prev.dwarf == diff.dwarf
            and prev.reason == diff.reason
        ):
            prev.end = diff.end
            return
    differences.append(diff)


def equal(sframe: Rule, dwarf: CfiRule) -> bool:
    """The two rules recover the same value (the header-fixed flag is where SFrame keeps it, not what it is)."""
    if isinstance(dwarf, Unexpressible):
        return False
    if sframe.kind is Kind.PADDING:
        return dwarf.kind is Kind.SAME
    if sframe.kind is not dwarf.kind:
        return False
    if sframe.kind is not Kind.VALUE:
        return True
    return (sframe.base, sframe.offset, sframe.deref) == (dwarf.base, dwarf.offset, dwarf.deref)


def _why(column: str, sframe: Rule, dwarf: CfiRule, func: Function) -> str | None:
    if isinstance(dwarf, Unexpressible):
        if func.pcmask:
            return "PLT stub: SFrame writes it as a PCMASK FDE, DWARF as a CFA expression"
        return f"DWARF {dwarf.what}: SFrame cannot hold expressions"
    if column == "ra" and dwarf.kind is Kind.UNDEFINED and func.section.version < 3:
        return "outermost frame: DWARF marks the RA undefined, SFrame before version 3 cannot"
    return None


def _why_dwarf_only(cfi: CfiFunction, table: CfiTable, name: str) -> str | None:
    """Why an FDE has no SFrame counterpart, when its rules (or its section) show it."""
    if name.startswith(".plt") or "@plt" in name:  # `.plt+0x10`, or an entry objdump names `printf@plt`
        return f"linker stub ({name.split('+')[0]}): ld writes no SFrame FDE for it"
    if cfi.expressions:
        return f"DWARF {' and '.join(cfi.expressions)}: SFrame cannot hold expressions"
    abi = table.abi
    for row in cfi.rows:
        if row.ra.kind is Kind.UNDEFINED:
            return "outermost frame: DWARF marks the RA undefined"
        if isinstance(row.cfa, Rule) and row.cfa.kind is Kind.VALUE and row.cfa.base not in (abi.sp, abi.fp):
            return f"the CFA is based on register {row.cfa.base}: SFrame bases it on SP or FP only"
        for column in ("ra", "fp"):
            value = getattr(row, column)
            if isinstance(value, Rule) and value.kind is Kind.VALUE and not (value.base == CFA and value.deref):
                return f"the {column.upper()} is kept in a register or as a value: SFrame only saves on the stack"
    return None


@dataclass(frozen=True, slots=True)
class TableDifference:
    """Two tables in the same rule form (DWARF, a Breakpad export) disagree on `[start, end)`."""

    start: int
    end: int
    column: str
    left: CfiRule
    right: CfiRule
    right_function: CfiFunction


def same_rule(left: CfiRule, right: CfiRule) -> bool:
    """Equal rules, expressions included (equal when the same expression)."""
    if isinstance(left, Unexpressible) or isinstance(right, Unexpressible):
        return left == right
    return equal(left, right)


def table_differences(left: CfiTable, right: CfiTable) -> list[TableDifference]:
    """Every address range both tables describe where their CFA, RA or FP rules differ."""
    out: list[TableDifference] = []
    for lfunc in left.functions:
        for rfunc in right.overlapping(lfunc.start_address, lfunc.end_address):
            start = max(lfunc.start_address, rfunc.start_address)
            end = min(lfunc.end_address, rfunc.end_address)
            cuts = {start, end} | {r.address for f in (lfunc, rfunc) for r in f.rows if start < r.address < end}
            for lo, hi in itertools.pairwise(sorted(cuts)):
                lrow, rrow = lfunc.row_for(lo), rfunc.row_for(lo)
                if lrow is None or rrow is None:
                    continue
                for column in COLUMNS:
                    a, b = getattr(lrow, column), getattr(rrow, column)
                    if not same_rule(a, b):
                        out.append(TableDifference(lo, hi, column, a, b, rfunc))
    return out
