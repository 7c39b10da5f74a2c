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
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sfview.dwarf.cfi import CfiFunction, CfiRow, CfiRule, Unexpressible
from sfview.dwarf.tables import CfiTable
from sfview.sframe.bulk.shapes import Shaped, functions_with_rows
from sfview.sframe.model.rules import CFA, Kind, Rule

if TYPE_CHECKING:
    from sfview.dwarf.cfi import Abi
    from sfview.sframe.bulk.shapes import Shapes
    from sfview.sframe.model.section import Function, Row, Section

COLUMNS = ("cfa", "ra", "fp")
RA_SIGNING = "ra signing"
"""The column of a difference in whether the saved RA is signed (SFrame's mangled-RA bit,
DWARF's `DW_CFA_AARCH64_negate_ra_state`); its rules are the two RA rules."""


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
    repeats: int = 1
    """A PCMASK function's difference recurs at the same place of this many blocks in a row, the
    first at `start` (every `Function.block_size` bytes): said once, however many blocks a size claims."""
    name: str = ""
    """In a PCMASK function (a PLT), the entry it is in (`memset@plt`), as objdump names it; else ""."""


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
class Agreed:
    """Pairs that agree at every byte, counted rather than kept (`compare_outline`)."""

    functions: int = 0
    compared: int = 0
    """Code bytes both describe, all agreeing."""
    untracked: set[int] = field(default_factory=set)
    with_untracked: int = 0
    """Of the functions, how many have registers DWARF tracks and SFrame does not."""

    def add(self, compared: int, untracked: frozenset[int]) -> None:
        self.functions += 1
        self.compared += compared
        if untracked:
            self.untracked |= untracked
            self.with_untracked += 1


@dataclass(slots=True)
class Comparison:
    """What `compare` found: the pairs it compared, the functions one side alone describes, the pairs that agreed."""

    pairs: list[Pair]
    only: list[OneSided]
    agreed: Agreed = field(default_factory=Agreed)
    """Pairs without a difference that are not in `pairs`."""

    @property
    def functions_compared(self) -> int:
        return len(self.pairs) + self.agreed.functions

    @property
    def compared(self) -> int:
        return sum(p.compared for p in self.pairs) + self.agreed.compared

    @property
    def agreeing(self) -> int:
        return sum(p.agreeing for p in self.pairs) + self.agreed.compared

    @property
    def untracked(self) -> set[int]:
        """Registers DWARF has rules for that SFrame does not track, in any function compared."""
        return {reg for pair in self.pairs for reg in pair.untracked} | self.agreed.untracked

    @property
    def functions_untracked(self) -> int:
        """How many functions compared have such registers."""
        return sum(1 for pair in self.pairs if pair.untracked) + self.agreed.with_untracked

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
    functions: Sequence[Function | Shaped] | None = None,
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
    paired_dwarf = bytearray(len(table))  # by the FDE's number: its function is made anew each time asked for
    paired_sframe: set[int] = set()
    if placement is not None:
        dwarf_at = {place: i for i, cfi in enumerate(table) if (place := placement.dwarf(cfi)) is not None}
        for func in sframe_funcs:
            i = dwarf_at.get(placement.sframe(func))
            if i is not None:
                cfi = table.function(i)
                pairs.append(_compare_pair(func, cfi, name_of(func), cfi.start_address - func.start_address))
                paired_dwarf[i] = 1
                paired_sframe.add(id(func))
    else:
        for func in sframe_funcs:
            end = func.start_address + max(func.size, 1)
            for i in table.overlapping(func.start_address, end):
                pairs.append(_compare_pair(func, table.function(i), name_of(func), 0, name_at))
                paired_dwarf[i] = 1
                paired_sframe.add(id(func))
    only = [_sframe_only(f, name_of(f)) for f in sframe_funcs if id(f) not in paired_sframe]
    only += [_dwarf_only(table.function(i), table.abi, name_at) for i in range(len(table)) if not paired_dwarf[i]]
    return Comparison(pairs, only)


def _sframe_only(func: Function | Shaped, name: str) -> OneSided:
    return OneSided("sframe", func.start_address, func.size, func.span.start, ".sframe", name, None)


def _dwarf_only(cfi: CfiFunction, abi: Abi, name_at: Callable[[int], str]) -> OneSided:
    name = name_at(cfi.start_address)
    return OneSided(
        "dwarf", cfi.start_address, cfi.size, cfi.fde_offset, cfi.section, name, _why_dwarf_only(cfi, abi, name)
    )


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What comparing two functions of given shapes at one address and of one size gave, when it holds
    for every such pair whose rows all start inside: every byte from `skip` on agrees."""

    skip: int
    """Bytes from the start before both sides have a row (not compared)."""
    last: int
    """The last row's offset, on either side: the outcome holds for a size past it."""
    untracked: frozenset[int]

    @classmethod
    def of(cls, pair: Pair, rows: Sequence[Row], cfi: CfiFunction) -> _Outcome | None:
        """From a pair compared at one start and size; None when it had a difference, or rows out of order
        or past its end (then each such pair is compared on its own)."""
        ours = [row.start_offset for row in rows]
        theirs = [address - cfi.start_address for address in cfi.addresses]
        if pair.differences or not ours or not theirs or ours != sorted(ours) or theirs != sorted(theirs):
            return None
        skip, last, size = max(ours[0], theirs[0]), max(ours[-1], theirs[-1]), cfi.size
        if not (skip >= 0 and last < size and pair.compared == pair.agreeing == size - skip):
            return None
        return cls(skip, last, frozenset(pair.untracked))


def compare_outline(
    shapes: Shapes,
    table: CfiTable,
    name_of: Callable[[Function], str],
    name_at: Callable[[int], str],
) -> Comparison:
    """`compare` for a linked file, by shapes: what `compare` gives, made as the functions are read.

    A function and an FDE at the same address and of the same size, each of a shape (their rows are the
    same bytes, relative to their start) seen together before, agree or not as those did: the first such
    pair is compared, the others counted from it (`_Outcome`). Pairs that agree everywhere are counted
    (`Comparison.agreed`), not kept; neither side's rows are made for them.
    """
    pairs: list[Pair] = []
    agreed = Agreed()
    only: list[OneSided] = []
    paired = bytearray(len(table))
    outcomes: dict[tuple[tuple[int, bytes], int], _Outcome | None] = {}
    starts, sizes, shapes_of, count = table.starts, table.sizes, table.shapes, len(table)
    for item in shapes:
        func: Function | Shaped | None = None
        shaped = item if isinstance(item, Shaped) and not item.pcmask else None
        if shaped is not None:
            start, size = shaped.start_address, shaped.size
            # The common case first, as the loop below would find it: one FDE, at the same address and of the
            # same size, and an outcome for the two shapes.
            i = bisect.bisect_right(starts, start) - 1
            if i >= 0 and starts[i] == start and sizes[i] == size > 0 and start + size <= 1 << 64:
                outcome = outcomes.get((shaped.shape, shapes_of[i]))
                if outcome is not None and outcome.last < size and (i + 1 == count or starts[i + 1] >= start + size):
                    paired[i] = 1
                    agreed.add(size - outcome.skip, outcome.untracked)
                    continue
        else:
            func = shapes.model_function(item) if isinstance(item, Shaped) else item
            if func.error is not None:
                continue
            start, size = func.start_address, func.size
        found = table.overlapping(start, start + max(size, 1))
        for i in found:
            paired[i] = 1
            shape = shapes_of[i] if shaped is not None else -1
            key = None
            if shape >= 0 and starts[i] == start and sizes[i] == size and start + size <= 1 << 64:
                key = shaped.shape, shape
                outcome = outcomes.get(key)
                if outcome is not None and outcome.last < size:
                    agreed.add(size - outcome.skip, outcome.untracked)
                    continue
            if func is None:
                func = shapes.model_function(shaped)
            cfi = table.function(i)
            pair = _compare_pair(func, cfi, name_of(func), 0, name_at)
            if key is not None and key not in outcomes:
                outcomes[key] = _Outcome.of(pair, func.rows, cfi)
            if pair.differences:
                pairs.append(pair)
            else:
                agreed.add(pair.compared, frozenset(pair.untracked))
        if not found:
            func = func or shapes.model_function(shaped)
            only.append(
                OneSided("sframe", func.start_address, func.size, func.span.start, ".sframe", name_of(func), None)
            )
    for i in range(len(table)):
        if not paired[i]:
            only.append(_dwarf_only(table.function(i), table.abi, name_at))
    return Comparison(pairs, only, agreed)


def _compare_pair(
    func: Function, cfi: CfiFunction, name: str, delta: int, name_at: Callable[[int], str] | None = None
) -> Pair:
    """Compare on the shared range; `delta` maps an SFrame address to the DWARF one. In a PCMASK
    function (one FDE for every PLT entry), each difference is named by `name_at` after its entry."""
    pair = Pair(func, cfi, name)
    start = max(func.start_address, cfi.start_address - delta)
    end = min(func.start_address + func.size, cfi.end_address - delta)
    if end <= start:
        return pair
    rows = list(func.rows)  # each row decoded once
    dwarf_cuts = {start, end} | {a - delta for a in cfi.addresses if start < a - delta < end}
    counted: object = None  # the `others` counted last: rows that change none of them share one
    for lo, hi, repeats in _pieces(func, rows, sorted(dwarf_cuts)):
        srow = func.row_for(lo, rows)
        drow = cfi.row_for(lo + delta)
        entry = name_at(lo).split("+")[0] if func.pcmask and name_at is not None else ""
        if srow is None or drow is None:
            continue
        weight = (hi - lo) * repeats
        pair.compared += weight
        if drow.others is not counted:
            counted = drow.others
            pair.untracked.update(reg for reg, value in drow.others.items() if value.kind is not Kind.SAME)
        reasons = []
        for column in COLUMNS:
            srule, drule = getattr(srow, column), getattr(drow, column)
            if equal(srule, drule):
                continue
            reason = _why(column, srule, drule, func)
            reasons.append(reason)
            _add(pair.differences, Difference(lo, hi, column, srule, drule, srow, drow, reason, repeats, entry))
        if srow.mangled_ra != drow.ra_signed:
            reasons.append(None)
            _add(pair.differences, Difference(lo, hi, RA_SIGNING, srow.ra, drow.ra, srow, drow, None, repeats, entry))
        if not reasons:
            pair.agreeing += weight
        elif None in reasons:
            pair.disagreeing += weight
        else:
            pair.explained += weight
    return pair


def _pieces(func: Function, rows: list[Row], dwarf_cuts: list[int]) -> Iterator[tuple[int, int, int]]:
    """(lo, hi, repeats): the ranges between `dwarf_cuts` over which the SFrame row is one too.

    A PCMASK function's rows repeat every block: between two DWARF rows, the
    blocks wholly inside are alike, so one of them stands for all (`repeats`).
    The work is bounded by the rows, not by the size a function claims (a
    `func_size` of 2 GB over a 16-byte block would be 134 million blocks).
    """
    if not func.pcmask:
        lo, hi = dwarf_cuts[0], dwarf_cuts[-1]
        yield from ((a, b, 1) for a, b in _cut(lo, hi, itertools.chain(dwarf_cuts, (r.address for r in rows))))
        return
    step, origin = func.block_size or func.size or 1, func.start_address
    offsets = sorted({0} | {r.start_offset for r in rows if 0 < r.start_offset < step})
    for lo, hi in itertools.pairwise(dwarf_cuts):
        first = origin + (lo - origin) // step * step
        last = origin + (hi - 1 - origin) // step * step
        inside = (last - first) // step - 1  # whole blocks strictly between the first and the last
        spans = [(lo, first + step, 1), (first + step, first + 2 * step, inside), (last, hi, 1)] if inside >= 1 else [
            (lo, hi, 1)]  # fmt: skip
        for a, b, repeats in spans:
            yield from ((x, y, repeats) for x, y in _cut(a, b, _block_starts(a, b, origin, step, offsets)))


def _block_starts(lo: int, hi: int, origin: int, step: int, offsets: list[int]) -> Iterator[int]:
    """Where a row starts in [lo, hi), in blocks of `step` bytes from `origin` (at most two blocks here)."""
    for block in range(origin + (lo - origin) // step * step, hi, step):
        i = bisect.bisect_left(offsets, lo - block)
        j = bisect.bisect_left(offsets, hi - block)
        yield from (block + offset for offset in offsets[i:j])


def _cut(lo: int, hi: int, starts: Iterable[int]) -> Iterator[tuple[int, int]]:
    """[lo, hi) cut at each of `starts` inside it."""
    return itertools.pairwise(sorted({lo, hi} | {s for s in starts if lo < s < hi}))


def _add(differences: list[Difference], diff: Difference) -> None:
    """Append, merging with the previous difference when it continues it."""
    for prev in reversed(differences[-3:]):
        if (
            prev.end == diff.start
            and prev.column == diff.column
            and prev.sframe == diff.sframe
            and prev.dwarf == diff.dwarf
            and prev.reason == diff.reason
            and prev.repeats == diff.repeats == 1
            and prev.name == diff.name
        ):
            prev.end = diff.end
            return
    differences.append(diff)


def equal(sframe: Rule, dwarf: CfiRule) -> bool:
    """The two rules recover the same value (the header-fixed flag is where SFrame keeps it, not what it is)."""
    if isinstance(dwarf, Unexpressible):
        return False
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
    if sframe.kind is Kind.UNDEFINED:
        return "outermost frame: SFrame's row without offsets gives no rule at all, DWARF keeps the others"
    return None


def _why_dwarf_only(cfi: CfiFunction, abi: Abi, name: str) -> str | None:
    """Why an FDE has no SFrame counterpart, when its rules (or its section) show it."""
    if name.startswith(".plt") or "@plt" in name:  # `.plt+0x10`, or an entry objdump names `printf@plt`
        return f"linker stub ({name.split('+')[0]}): ld writes no SFrame FDE for it"
    if cfi.expressions:
        return f"DWARF {' and '.join(cfi.expressions)}: SFrame cannot hold expressions"
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
    for lfunc in left:
        for rfunc in map(right.function, right.overlapping(lfunc.start_address, lfunc.end_address)):
            start = max(lfunc.start_address, rfunc.start_address)
            end = min(lfunc.end_address, rfunc.end_address)
            cuts = {start, end} | {a for f in (lfunc, rfunc) for a in f.addresses if start < a < end}
            for lo, hi in itertools.pairwise(sorted(cuts)):
                lrow, rrow = lfunc.row_for(lo), rfunc.row_for(lo)
                if lrow is None or rrow is None:
                    continue
                for column in COLUMNS:
                    a, b = getattr(lrow, column), getattr(rrow, column)
                    if not same_rule(a, b):
                        out.append(TableDifference(lo, hi, column, a, b, rfunc))
    return out
