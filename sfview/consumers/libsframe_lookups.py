"""What `sframe_find_fre` answers at every PC of a span: runs of PCs with one answer each, in time linear in the rows.

A lookup's answer is a row, a miss or a crash, and it changes only where the
library's comparisons change their result. The search over the FDEs compares
the PC with FDE starts and ends (`_breaks`); within one FDE, `sframe_find_fre`
walks the rows in order and stops at the first that matches, misses or
crashes. Each row's test is an interval of a key derived from the PC (the PC
as an int32, its offset into the function, that offset modulo `rep_size`, or
the PC `& 0xff`, by release and PC type): `_conditions` walks the rows once,
in the library's order, and turns each test into such an interval, and
`_paint` gives every key the first interval that holds it. The answers are
those of the code in `libsframe.py`'s terms, read from the releases' own
`sframe_find_fre`; tests/oracles/test_libsframe.py holds them to each release's
library at every PC of real and mutated sections.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, NamedTuple, TypeVar

from sfview.consumers.libsframe import (
    FDE_ATTR,
    U32,
    Crash,
    Decoder,
    Fre,
    Miss,
    _int32,
    decode_fre,
    packed,
    sane,
)
from sfview.consumers.libsframe import row_bound as row_bound
from sfview.consumers.libsframe_releases import SORTED
from sfview.generated import sframe_layout as layout

KEPT = 256
"""How many functions' conditions (and PCMASK paintings) `Lookups` keeps at once."""
KEPT_CONDITIONS = 1 << 15
"""How many conditions the kept walks hold in all before the oldest are let go: walks of functions thousands
of rows long, 256 of them, would hold memory by what the functions claim, not by the bytes."""
REPLAYED = 1 << 13
"""The most runs of answers `Replays` keeps, in all, to give again when the same spans are asked for again."""
PERIODIC_KEPT = 16
"""How many PCMASK functions' `Periodic`s a verdict keeps (functions alike come together)."""
PERIODIC_RUNS = 1 << 12
"""The most runs one `Periodic` keeps merged from offset 0, and in its cuts of one block."""
ALL = 1 << 80
"""Past every key: an interval (-ALL, ALL) holds every PC (a crash or a miss whatever the PC)."""
BELOW = -ALL
"""Below every key: one object, the low end of every condition open below (held by each condition kept)."""
WORD = 1 << 32
INT32_WRAP = 1 << 31

Outcome = Fre | Miss | Crash
K = TypeVar("K")
A = TypeVar("A")
Shape = int | tuple[int, ...]
"""What a function's walk depends on: its index, or (2.47) its rows' description (`Lookups._shape`)."""


class Budget(Exception):
    """More work than the bound set for one section: more runs of answers (a PCMASK pattern repeated over a
    huge function), or more rows walked (functions reading the same rows again); `pc` the first PC not
    judged, `reason` which bound, for people."""

    def __init__(self, pc: int, reason: str) -> None:
        super().__init__(pc, reason)
        self.pc = pc
        self.reason = reason


class Run(NamedTuple):
    """Section-relative PCs in [start, end) for which `sframe_find_fre` gives `outcome` (a tuple: a verdict
    makes one for every run of answers)."""

    start: int
    end: int
    outcome: Outcome


def _search(dec: Decoder, pc: int) -> int:
    """`sframe_get_funcdesc_with_addr(_internal)`: the binary search over the FDEs."""
    h = dec.header
    if h.num_fdes == 0:
        raise Miss("SFRAME_ERR_DCTX_INVAL", "sframe_get_funcdesc_with_addr: no FDE")
    if not h.flags & SORTED:
        raise Miss("SFRAME_ERR_FDE_NOTSORTED", "sframe_get_funcdesc_with_addr: SFRAME_F_FDE_SORTED is not set")
    if dec.ordered():
        index = dec.last_starting_by(pc)
        if index >= 0 and (not dec.rel.exact_search or (pc - dec.start(index)) & U32 < dec.fde(index).size):
            return index
    elif dec.rel.exact_search:
        low, high = 0, _int32(h.num_fdes - 1)
        while low <= high:
            mid = low + (high - low) // 2
            start = dec.start(mid)
            if start <= pc and (pc - start) & U32 < dec.fde(mid).size:
                return mid
            low, high = (mid + 1, high) if start < pc else (low, mid - 1)
    else:
        low = 0
        high = count = _int32(h.num_fdes)
        while low <= high:
            mid = low + (high - low) // 2
            start = dec.start(mid)
            if start == pc:
                return mid
            if start < pc:
                if mid == count - 1 or dec.start(mid + 1) > pc:
                    return mid
                low = mid + 1
            else:
                high = mid - 1
    raise Miss("SFRAME_ERR_FDE_NOTFOUND", "sframe_get_funcdesc_with_addr: no FDE for the PC")


def _distinct(values: Iterable[int]) -> Sequence[int]:
    """`values` sorted, each once, packed (values that come in order are not sorted again: a list of a
    million Python ints costs more than the section)."""
    values = packed(values)
    if any(a > b for a, b in itertools.pairwise(values)):
        values = sorted(values)
    return packed(value for value, _ in itertools.groupby(values))


def _c_mod(value: int, divisor: int) -> int:
    """C's `%` on ints (the sign of the dividend)."""
    result = abs(value) % divisor
    return -result if value < 0 else result


Condition = tuple[int, int, Outcome | int, bool]
"""[low, high) of the key, the answer there, and whether the interval is one PCMASK block's (moved by the
block's first offset; 2.47 tests the row's start on the whole offset and the range on the offset modulo
rep_size). A row found is given as its reference (an int, `row_ref`), decoded again when its answer is
asked for: a walk keeps numbers for its rows, not objects."""


def row_ref(at: int, fre_type: int) -> int:
    """The reference a walk gives for the row at FRE offset `at` read as `fre_type` (4 bits)."""
    return at << 4 | fre_type


def _found_row(dec: Decoder, ref: int) -> Fre:
    """The row a `row_ref` names, decoded (it was once already, by the walk: it decodes again)."""
    return decode_fre(dec, ref >> 4, ref & 0xF)[0]


def _everywhere(outcome: Outcome) -> Condition:
    return BELOW, ALL, outcome, False


def _walk(dec: Decoder, index: int) -> Iterator[Condition]:
    """`sframe_find_fre`'s walk over the rows of FDE `index`, as intervals of the key in the order the code
    tests them (a crash: an interval holding every key, and the walk ends)."""
    try:
        fde = dec.fde(index)
        at = fde.fre_off + (FDE_ATTR.size if dec.header.version >= 3 else 0)
        if dec.rel.lookup == "bitmask":
            yield from _bitmask(dec, fde.start, fde.num_fres, fde.fre_type, 0xFF if fde.pcmask else U32, fde.size, at)
        else:
            yield from _ranges(dec, index, at)
    except Crash as crash:
        yield _everywhere(dec.kept(crash))


AFTER = Miss("SFRAME_ERR_FRE_INVAL", "sframe_find_fre: a row starts after the PC")
FIRST_AFTER = Miss("SFRAME_ERR_FRE_INVAL", "sframe_find_fre: the first row starts after the PC")
REP_SIZE_0 = Crash("sframe_fre_check_range_p: the PC modulo func_rep_size 0 (SIGFPE)")
"""Answers every function may give: one object each, not one per row tested."""


def _bitmask(dec: Decoder, start: int, count: int, fre_type: int, mask: int, size: int, at: int) -> Iterator[Condition]:
    """2.40 (key: the PC & mask): a row matches when (start + row) & mask <= key < (start + next row) & mask;
    only the row after the match is sanity-checked."""
    after = AFTER
    for i in range(count):
        row, esz = decode_fre(dec, at, fre_type)
        ref = row_ref(at, fre_type)
        yield BELOW, (start + _int32(row.start)) & mask, after, False
        if i < count - 1:
            at += esz
            following, _ = decode_fre(dec, at, fre_type)
            if not sane(dec.rel, following.info):
                insane = "sframe_find_fre: the next row fails sframe_fre_sanity_check_p"
                yield _everywhere(Miss("SFRAME_ERR_FRE_INVAL", insane))
                return
            end = following.start
        else:
            end = size
        yield BELOW, (start + _int32(end)) & mask, ref, False


def _ranges(dec: Decoder, index: int, at: int) -> Iterator[Condition]:
    """2.44 (key: the PC as an int32, or for PCMASK its C remainder by rep_size) and 2.47 (key: the PC's
    offset into the function, 32 bits; for PCMASK the range is tested on it modulo rep_size)."""
    fde = dec.fde(index)
    start = dec.start(index)
    wide = dec.rel.lookup == "range64"
    count, fre_type, pcmask, rep_size = fde.num_fres, fde.fre_type, fde.pcmask, fde.rep_size
    read, char = dec.fres.read, layout.FRE_START_ADDR.get(fre_type, "")  # (unknown: decode_fre crashes first)
    for i in range(count):
        row, esz = decode_fre(dec, at, fre_type)
        ref = row_ref(at, fre_type)
        end = read(at + esz, char, "sframe_fre_get_end_ip_offset") - 1 if i < count - 1 else fde.size - 1
        if wide:
            yield BELOW, row.start, AFTER, False
            if pcmask and rep_size == 0:
                yield _everywhere(REP_SIZE_0)
                return
            yield row.start, (end & U32) + 1, ref, pcmask
        else:
            first, last = _int32(row.start), _int32(end)
            if pcmask:
                if rep_size == 0:
                    yield _everywhere(REP_SIZE_0)
                    return
                yield first, last + 1, ref, False
            else:
                low = _int32(first + start)
                if i == 0:
                    yield BELOW, low, FIRST_AFTER, False
                yield low, _int32(last + start) + 1, ref, False
        at += esz


NO_ROW = Miss("SFRAME_ERR_FDE_INVAL", "sframe_find_fre: no row of the function covers the PC")
"""The answer where no row's test holds."""


class Held:
    """Keys as disjoint intervals, up to `HELD_PIECES` of them (past it, none are said to be held)."""

    def __init__(self) -> None:
        self._lows: list[int] = []
        self._highs: list[int] = []

    def holds(self, low: int, high: int) -> bool:
        """Whether every key of [low, high) is held already (an empty interval: never); else add them."""
        if low >= high:
            return False
        lows, highs = self._lows, self._highs
        i = bisect.bisect_right(lows, low) - 1
        if i >= 0 and highs[i] >= high:
            return True
        if len(lows) >= HELD_PIECES:
            return False
        if i >= 0 and highs[i] >= low:  # joins the piece before
            low = lows[i]
        else:
            i += 1
        j = bisect.bisect_right(lows, high)  # the pieces from i up to j touch [low, high)
        high = max(high, highs[j - 1]) if j > i else high
        lows[i:j], highs[i:j] = [low], [high]
        return False


HELD_PIECES = 1 << 12
"""The most disjoint intervals `Held` keeps (rows tested in a descending order of starts make one each)."""


NARROW = -(1 << 31)
MARKS = {"i": (NARROW, -NARROW - 1), "q": (-(1 << 63), (1 << 63) - 1)}
"""What a column of `Conditions` holds for BELOW and ALL, by its type: a value between them is itself."""


def _put(column: array, value: int) -> array:
    """`column` with `value` appended (BELOW and ALL as its marks): 4 bytes a value, widened to 8 (a new
    array, the marks moved) when a value needs it."""
    below, above = MARKS[column.typecode]
    if value <= BELOW or value >= ALL:
        column.append(below if value <= BELOW else above)
        return column
    if not below < value < above:
        wide = MARKS["q"]
        column = array("q", (wide[0] if v == below else wide[1] if v == above else v for v in column))
        below, above = wide
    column.append(value)
    return column


def _got(column: array, index: int) -> int:
    """The value `_put` appended at `index`."""
    value = column[index]
    below, above = MARKS[column.typecode]
    return BELOW if value == below else ALL if value == above else value


class Conditions(Sequence[tuple[int, int, A, bool]]):
    """A walk's conditions kept, as columns of numbers (4 bytes a key, 8 where one needs it); a row's answer
    as its reference, decoded again by `row` when asked for (`row` keeps the rows it decoded lately: a row
    asked for again soon is one object), any other answer as its index among the few distinct ones."""

    def __init__(self, row: Callable[[int], A]) -> None:
        self._lows, self._highs, self._refs = array("i"), array("i"), array("i")
        """Each condition's interval, and its answer: a row's reference, or -1 - its index in `_answers`."""
        self._blocks = array("B")
        self._answers: list[A] = []
        self._index: dict[int, int] = {}
        """Each answer of `_answers` by its `id` (held there: the ids stay theirs)."""
        self._row = row

    def append(self, low: int, high: int, answer: A | int, block: bool) -> None:
        if not isinstance(answer, int):
            known = self._index.setdefault(id(answer), len(self._answers))
            if known == len(self._answers):
                self._answers.append(answer)
            answer = -1 - known
        lows, highs, refs = self._lows, self._highs, self._refs
        top = -NARROW - 1
        narrow = lows.typecode == highs.typecode == refs.typecode == "i"
        if narrow and NARROW < low < top and NARROW < high < top and NARROW < answer < top:  # no mark, no widening
            lows.append(low)
            highs.append(high)
            refs.append(answer)
            self._blocks.append(block)
            return
        self._lows = _put(lows, low)
        self._highs = _put(highs, high)
        self._refs = _put(refs, answer)
        self._blocks.append(block)

    def high(self, index: int) -> int:
        return _got(self._highs, index)

    def columns(self) -> tuple[array, array, int]:
        """The highs and the answers' numbers as held (a high of ALL as the third value, the column's mark;
        an answer's number never a mark), for a loop reading many."""
        return self._highs, self._refs, MARKS[self._highs.typecode][1]

    def ref(self, index: int) -> int:
        """Condition `index`'s answer as a number: a row's reference (0 or more), else below 0."""
        return _got(self._refs, index)

    def answer(self, ref: int) -> A:
        """The answer a `ref` stands for."""
        return self._answers[-1 - ref] if ref < 0 else self._row(ref)

    def __len__(self) -> int:
        return len(self._blocks)

    def __getitem__(self, index: int) -> tuple[int, int, A, bool]:  # type: ignore[override]
        if index < 0:
            index += len(self)
        low = _got(self._lows, index)
        return low, self.high(index), self.answer(self.ref(index)), bool(self._blocks[index])

    def __iter__(self) -> Iterator[tuple[int, int, A, bool]]:
        return map(self.__getitem__, range(len(self)))


class Walk(Generic[A]):
    """One FDE's conditions, walked only as far as the keys asked for need: the code stops at the first row
    that holds a key, so once the conditions walked hold every key below `reach`, later rows answer none of
    them (a function's rows are walked to the end of the PCs judged, not to the end of its count)."""

    def __init__(self, steps: Iterator[Condition], row: Callable[[int], A]) -> None:
        self.conds: Conditions[A] = Conditions(row)
        self._steps = steps
        self.done = False
        self.reach = -ALL
        """Every key below it is held by a condition walked (-ALL: none known)."""
        self._blocks = False
        """A PCMASK block's condition was seen: keys move with the block, so the walk goes to its end."""
        self._reaches = array("I")
        """While the conditions walked hold every key from -ALL on without a gap: the position in `conds` of
        each that moved `reach` (its high the new reach, its answer the first to hold the keys it added: what
        a key there gets; such a condition holds keys none before held, so it is kept)."""
        self._gapped = False
        self.walked = 0
        """The conditions walked (the answers it holds grow with them, not only with those kept)."""
        self._held = (Held(), Held())
        """The keys the conditions walked hold, of those open below and of a PCMASK block's (by `block`): a
        condition holding none but these is never the first to hold a key, and is not kept (a function
        repeating a few rows' tests 65,535 times keeps the few)."""

    def upto(self, high: int, allowance: int) -> int:
        """Walk until every key below `high` is held, the rows end, or `allowance` conditions were added;
        how many were."""
        added = 0
        while not self.done and (self._blocks or self.reach < high) and added < allowance:
            step = next(self._steps, None)
            if step is None:
                self.done = True
                break
            added += 1
            self.walked += 1
            low, top, _, block = step
            kept = not self._held[block].holds(low, top)
            if kept:
                self.conds.append(*step)
            if block:
                self._blocks = True
            elif low <= self.reach:
                if top > self.reach and not self._gapped and kept:
                    self._reaches.append(len(self.conds) - 1)
                self.reach = max(self.reach, top)
            else:  # an earlier condition than those that later fill the gap holds keys there first
                self._gapped = True
        return added

    @property
    def blocks(self) -> bool:
        """Whether a PCMASK block's condition was walked (its keys move with the block)."""
        return self._blocks

    def complete(self, high: int) -> bool:
        """Whether the conditions walked answer every key below `high`."""
        return self.done or (not self._blocks and self.reach >= high)

    def stepwise(self, high: int) -> bool:
        """Whether `paint` up to `high` reads the conditions that moved the reach (no PCMASK block, no gap
        below `high`): its cost is then the runs given, nothing is made for the rows before or after."""
        return not self._blocks and bool(self._reaches) and high <= self.conds.high(self._reaches[-1])

    def paint(self, none: A, low: int, high: int, rows_alike: bool = False) -> Iterator[tuple[int, int, A]]:
        """`_paint` over [low, high) with no PCMASK block's shift; `stepwise`, found by bisection and given
        one run at a time (with `rows_alike`, adjacent rows found are one run)."""
        if not self.stepwise(high):
            return iter(_paint(self.conds, none, low, high, 0))
        return self._steps_over(low, high, rows_alike)

    def _steps_over(self, low: int, high: int, rows_alike: bool) -> Iterator[tuple[int, int, A]]:
        if low >= high:
            return
        conds, reaches = self.conds, self._reaches
        highs, refs, top = conds.columns()
        i = bisect.bisect_right(reaches, low, key=conds.high)
        start, ref = low, refs[reaches[i]]
        while low < high:
            at = reaches[i]
            here = refs[at]
            if here != ref and not (rows_alike and here >= 0 and ref >= 0):
                yield start, low, conds.answer(ref)
                start, ref = low, here
            reach = highs[at]
            low, i = (high if reach == top else min(reach, high)), i + 1  # (`top`: ALL)
        if start < high:
            yield start, high, conds.answer(ref)


class Walks(Generic[K, A]):
    """The walks of the functions judged lately, by a key naming what a walk depends on, and the bound on
    the row tests all of them walk together; `row` decodes a row the walks give by its reference."""

    def __init__(self, rows: int, row: Callable[[int], A]) -> None:
        self.row = row
        self.rows = rows
        """The most row tests to walk (past it, `Budget`)."""
        self.walked = 0
        self._kept: dict[K, Walk[A]] = {}
        self._held = 0
        """The conditions the kept walks walked (what each holds grows with them)."""

    def walk(self, key: K, steps: Callable[[], Iterator[Condition]], high: int, pc: int) -> Walk[A]:
        """The walk named `key` (begun with `steps()` when not kept), far enough to answer every key below
        `high`; `Budget` (at `pc`, the PC being judged) past the bound."""
        walk = self._kept.get(key)
        if walk is None:
            kept = self._kept
            while kept and (len(kept) >= KEPT or self._held > KEPT_CONDITIONS):
                # functions come in address order: the oldest is done with
                self._held -= kept.pop(next(iter(kept))).walked
            walk = kept[key] = Walk(steps(), self.row)
        if not walk.complete(high):
            added = walk.upto(high, self.rows - self.walked)
            self.walked += added
            self._held += added
            if not walk.complete(high):
                raise Budget(pc, f"more than {self.rows} row tests walked (functions reading the same rows again)")
        return walk


def _paint(
    conds: Iterable[tuple[int, int, A, bool]], none: A, low: int, high: int, shift: int
) -> list[tuple[int, int, A]]:
    """Each key in [low, high) with the first condition that holds it (`none` where none does), as runs."""
    spans = []
    for c_low, c_high, outcome, block in conds:
        if block:
            c_low, c_high = c_low + shift, c_high + shift
        c_low, c_high = max(c_low, low), min(c_high, high)
        if c_low < c_high:
            spans.append((c_low, c_high, outcome))
            if (c_low, c_high) == (low, high):
                break
    points = sorted({low, high, *(p for s in spans for p in s[:2])})
    place = {p: i for i, p in enumerate(points)}
    owner: list[A | None] = [None] * (len(points) - 1)
    if len(spans) <= SMALL:  # a few rows: cell by cell costs less than the union-find's set-up
        for c_low, c_high, outcome in spans:
            for i in range(place[c_low], place[c_high]):
                if owner[i] is None:
                    owner[i] = outcome
    else:
        _fill(owner, [(place[a], place[b], o) for a, b, o in spans])
    runs: list[tuple[int, int, A]] = []
    for i, outcome in enumerate(owner):
        answer = none if outcome is None else outcome
        if runs and runs[-1][2] is answer:
            runs[-1] = (runs[-1][0], points[i + 1], answer)
        else:
            runs.append((points[i], points[i + 1], answer))
    return runs


SMALL = 16
"""Up to this many intervals, `_paint` fills cells directly (at most SMALL * 2 cells each)."""


def _fill(owner: list[A | None], spans: list[tuple[int, int, A]]) -> None:
    """Each cell the first span of `spans` (cell indexes) that covers it: each cell painted once, a union-find
    (with path halving) giving the first unpainted cell at or after any cell."""
    free = list(range(len(owner) + 1))

    def first_free(i: int) -> int:
        while free[i] != i:
            free[i] = free[free[i]]
            i = free[i]
        return i

    for start, stop, outcome in spans:
        i = first_free(start)
        while i < stop:
            owner[i] = outcome
            free[i] = i + 1
            i = first_free(i + 1)


class Periodic(Generic[A]):
    """A PCMASK function's walk as answers of the offset into the function (2.47, glibc), painted once.

    The walk tests each row's start on the whole offset (the conditions open below, `(-ALL, a)`: the offset
    below `a`) and its range on the offset modulo `rep` (a block's condition). So at offset k the first
    whole-offset test to hold is a step function of k (`_firsts`: the records of `a` along the walk), the
    first block test to hold a function of k modulo rep (`_period`, painted over one block), and the answer
    the earlier of the two: a block's runs are the period cut at the first whole-offset test (`cut`, kept
    per cut), and between two steps every block is that cut again. The cost is that of the runs given, not
    of the rows walked for each block. (Every test on the whole offset is one open below, `(-ALL, a)`: so are
    both walks'. With `blocks_only`, every test but those holding every key is a block's: 2.44 and 2.40 test
    a PCMASK function's rows on the key modulo the block alone.)"""

    def __init__(
        self,
        conds: Sequence[tuple[int, int, A, bool]],
        rep: int,
        none: A,
        same: Callable[[A, A], bool],
        blocks_only: bool = False,
    ) -> None:
        self.conds = conds
        self.rep = rep
        self.none = none
        self.same = same
        """Whether two adjacent runs' answers are one run."""
        self._line: list[tuple[int, int, A]] = []
        self._line_starts: list[int] = []
        self.steps = 0
        """The runs `runs` made so far, and the period's runs each cut read (the work, for the caller's
        bound: merged runs given cost less)."""
        self._rest: Iterator[tuple[int, int, A]] | None = None
        """The runs from offset 0 merged (`_line`, as far as asked for, at most `PERIODIC_RUNS`), and the
        runs after them still to merge."""
        self._tops: list[int] = []
        self._firsts: list[int] = []
        held = [block or (blocks_only and c_high < ALL) for _, c_high, _, block in conds]
        for pos, (_, c_high, _, _) in enumerate(conds):
            if not held[pos] and (not self._tops or c_high > self._tops[-1]):
                self._tops.append(c_high)
                self._firsts.append(pos)
        blocks = ((c_low, c_high, pos, False) for pos, (c_low, c_high, _, _) in enumerate(conds) if held[pos])
        self._period = _paint(blocks, -1, 0, rep, 0)  # the block tests not copied: a walk may be 65,535 rows
        self._period_starts = [m_low for m_low, _, _ in self._period]
        self._cuts: dict[int, list[tuple[int, int, A]]] = {}
        self._cut_runs = 0

    def cut(self, first: int) -> list[tuple[int, int, A]]:
        """One block's runs where the first whole-offset test to hold is the one at position `first` (-1:
        none), adjacent runs merged."""
        known = self._cuts.get(first)
        if known is None:
            self.steps += len(self._period)  # work as the runs painted are
            conds = self.conds
            fallback = conds[first][2] if first >= 0 else self.none
            known = []
            for m_low, m_high, pos in self._period:
                answer = conds[pos][2] if pos >= 0 and (first < 0 or pos < first) else fallback
                if known and self.same(known[-1][2], answer):
                    known[-1] = (known[-1][0], m_high, known[-1][2])
                else:
                    known.append((m_low, m_high, answer))
            while self._cuts and self._cut_runs + len(known) > PERIODIC_RUNS:
                self._cut_runs -= len(self._cuts.pop(next(iter(self._cuts))))
            self._cut_runs += len(known)
            self._cuts[first] = known
        return known

    def span(self, low: int, high: int) -> Iterator[tuple[int, int, A]]:
        """The answers at offsets [low, high), as runs: from the runs merged from offset 0 on where they
        reach (functions alike judging other spans of the same offsets take them again), else `runs`."""
        line, starts = self._line, self._line_starts
        if self._rest is None and not line:
            self._rest = self.runs(0, WORD)
        work = self.steps + PERIODIC_RUNS  # a span's merging goes no further: past it, `runs` (each run counted)
        while (
            self._rest is not None
            and (not line or line[-1][1] < high)
            and len(line) < PERIODIC_RUNS
            and self.steps < work
        ):
            step = next(self._rest, None)
            if step is None:
                self._rest = None
            elif line and line[-1][1] == step[0] and self.same(line[-1][2], step[2]):
                line[-1] = (line[-1][0], step[1], line[-1][2])
            else:
                line.append(step)
                starts.append(step[0])
        if not line or line[-1][1] < high:
            yield from self.runs(low, high)
            return
        i = bisect.bisect_right(starts, low) - 1
        while i < len(line) and line[i][0] < high:
            a, b, answer = line[i]
            yield max(a, low), min(b, high), answer
            i += 1

    def runs(self, low: int, high: int) -> Iterator[tuple[int, int, A]]:
        """The answers at offsets [low, high), as runs (a stretch whose blocks all give one answer is one run,
        however many blocks it spans; a stretch shorter than two blocks is read off the period directly)."""
        rep, tops = self.rep, self._tops
        while low < high:
            j = bisect.bisect_right(tops, low)
            first, stop = (self._firsts[j], min(tops[j], high)) if j < len(tops) else (-1, high)
            if stop - low < 2 * rep:
                yield from self._direct(first, low, stop)
                low = stop
                continue
            cut = self.cut(first)
            if len(cut) == 1:
                self.steps += 1
                yield low, stop, cut[0][2]
                low = stop
                continue
            while low < stop:
                shift = low - low % rep
                end = min(stop, shift + rep)
                for m_low, m_high, answer in cut:
                    a, b = max(m_low + shift, low), min(m_high + shift, end)
                    if a < b:
                        self.steps += 1
                        yield a, b, answer
                low = end

    def _direct(self, first: int, low: int, high: int) -> Iterator[tuple[int, int, A]]:
        """[low, high) where `first` is the first whole-offset test to hold, from the period's runs."""
        conds, period, rep = self.conds, self._period, self.rep
        fallback = conds[first][2] if first >= 0 else self.none
        while low < high:
            shift = low - low % rep
            end = min(high, shift + rep)
            i = bisect.bisect_right(self._period_starts, low - shift) - 1
            while i < len(period) and period[i][0] + shift < end:
                m_low, m_high, pos = period[i]
                answer = conds[pos][2] if pos >= 0 and (first < 0 or pos < first) else fallback
                self.steps += 1
                yield max(m_low + shift, low), min(m_high + shift, end), answer
                i += 1
            low = end


class Periodics(Generic[K, A]):
    """The `Periodic`s of the PCMASK functions judged lately, by what their walk is named: at most
    `PERIODIC_KEPT`, holding at most `KEPT_CONDITIONS` conditions in all (each holds its walk's, which
    `Walks` may have let go)."""

    def __init__(self) -> None:
        self._kept: dict[K, tuple[list, Periodic[A]]] = {}
        self._held = 0

    def get(self, key: K, conds: list, make: Callable[[], Periodic[A]]) -> Periodic[A]:
        """The `Periodic` of the walk `conds` named `key`, made by `make` when not kept."""
        known = self._kept.pop(key, None)
        if known is not None and known[0] is conds:
            self._kept[key] = known
            return known[1]
        if known is not None:
            self._held -= len(known[0])
        while self._kept and (len(self._kept) >= PERIODIC_KEPT or self._held + len(conds) > KEPT_CONDITIONS):
            self._held -= len(self._kept.pop(next(iter(self._kept)))[0])
        self._kept[key] = (conds, make())
        self._held += len(conds)
        return self._kept[key][1]


class Lookups:
    """`sframe_find_fre` over spans of section-relative PCs, for one decoded section."""

    def __init__(self, dec: Decoder, budget: int, rows: int, rows_alike: bool = False) -> None:
        self.dec = dec
        self.budget = budget
        """The most runs to give (past it, `Budget`)."""
        self.rows_alike = rows_alike
        """Whether every row found is one answer (the caller asks only where lookups fail): adjacent runs
        finding rows merge, the first's row standing for them."""
        self.count = 0
        self._walks: Walks[Shape, Outcome] = Walks(rows, functools.partial(_found_row, dec))
        self._painted: dict[tuple[Shape, int, int, bool], list[tuple[int, int, Outcome]]] = {}
        self._periodics: Periodics[tuple[Shape, bool], Outcome] = Periodics()
        self._exact, self._residues = self._breaks()
        self._replays: Replays[tuple[tuple[tuple[int, int], ...], bool], Run] = Replays()

    def _breaks(self) -> tuple[Sequence[int], Sequence[int]]:
        """Where the search's answer may change: PCs (exact) and PCs modulo 2^32 (residues). Each made apart
        and without a set, so that a million FDEs hold one list of their PCs at a time."""
        dec = self.dec
        whole = range(len(dec._table))
        if dec.rel.lookup == "range64":
            exact = _distinct(x for i in whole for x in (dec.start(i), dec.start(i) + 1))
            ends = (x % WORD for i in whole for x in (dec.start(i), dec.start(i) + dec.fde(i).size))
            return exact, _distinct(ends)
        wrapped = (x % WORD for i in whole for x in (dec.start(i), dec.start(i) + 1))
        return packed(()), _distinct(itertools.chain((INT32_WRAP,), wrapped))

    def _split(self, low: int, high: int) -> list[int]:
        """The breaks inside (low, high), in order."""
        exact, residues = self._exact, self._residues
        found = list(exact[bisect.bisect_right(exact, low) : bisect.bisect_left(exact, high)])
        base = low - low % WORD
        while base < high:
            first = bisect.bisect_right(residues, low - base) if base <= low else 0
            found += [base + r for r in residues[first : bisect.bisect_left(residues, high - base)]]
            base += WORD
        return sorted(set(found))

    def runs(self, spans: Iterable[tuple[int, int]], alike: bool = False) -> Iterator[Run]:
        """The answer at every PC of each span [low, high) (sorted, disjoint), as runs (adjacent runs with
        the same row, or the same error and rule, merged; with `alike`, or `rows_alike`, any rows found: the
        caller asks only where lookups fail); `Budget` past the bound. Spans asked for again are answered
        again from `Replays`."""
        alike = alike or self.rows_alike
        spans = tuple(spans)
        kept = self._replays.given((spans, alike), self.budget - self.count)
        if kept is not None:
            self.count += kept[1]
            yield from kept[0]
            return
        yield from self._replays.replay((spans, alike), self._search_runs(spans, alike), lambda: self.count)

    def _search_runs(self, spans: tuple[tuple[int, int], ...], alike: bool) -> Iterator[Run]:
        """`runs`, searched. Each run counts against the bound (with `alike`, each run painted, merged or
        not: the work is the runs painted)."""
        last: Run | None = None
        for low, high in spans:
            for a, b, index in self._segments(low, high):
                for run in self._segment(a, b, index, alike):
                    merged = last is not None and last.end == run.start and _same(last.outcome, run.outcome, alike)
                    if merged:
                        assert last is not None
                        last = Run(last.start, run.end, last.outcome)
                        if alike:
                            self._count(run)
                        continue
                    if last is not None:
                        yield last
                    self._count(run)
                    last = run
        if last is not None:
            yield last

    def _count(self, run: Run) -> None:
        """One more run against the bound; `Budget` past it."""
        self.count += 1
        if self.count > self.budget:
            raise Budget(run.start, f"more than {self.budget} runs of answers")

    def _segments(self, low: int, high: int) -> Iterator[tuple[int, int, int | Miss | Crash]]:
        """[low, high) cut where the search's answer changes: (first PC, end PC, FDE index or failure)."""
        wide = self.dec.rel.lookup == "range64"
        points = [low, *self._split(low, high), high]
        last: tuple[int, int, int | Miss | Crash] | None = None
        for a, b in itertools.pairwise(points):
            try:
                found: int | Miss | Crash = _search(self.dec, a if wide else _int32(a))
            except (Miss, Crash) as exc:
                found = self.dec.kept(exc)
            if last is not None and isinstance(found, int) and found == last[2]:
                last = (last[0], b, found)
                continue
            if last is not None:
                yield last
            last = (a, b, found)
        if last is not None:
            yield last

    def _segment(self, low: int, high: int, index: int | Miss | Crash, alike: bool) -> Iterator[Run]:
        """[low, high): PCs the search sends to FDE `index` (or that fail alike)."""
        dec = self.dec
        if not isinstance(index, int):
            yield Run(low, high, index)
            return
        whole = dec.fde(index).pcmask  # a PCMASK function's keys repeat: its rows are walked to the end
        shape = self._shape(index)
        walk = self._walks.walk(shape, lambda: _walk(dec, index), ALL if whole else -ALL + 1, low)
        conds = walk.conds
        if not conds or conds[0][:2] == (-ALL, ALL):  # one answer whatever the PC
            yield Run(low, high, conds[0][2] if conds else NO_ROW)
            return
        lookup = dec.rel.lookup
        rep = 0x100 if lookup == "bitmask" else dec.fde(index).rep_size  # 2.40: the PC & 0xff
        periodic = self._periodic(shape, walk, rep, alike) if whole and rep else None
        start = dec.start(index)
        pc = low
        while pc < high:
            if periodic is not None and lookup == "range64":  # the offset into the function
                key = (pc - start) & U32
                yield from self._periodic_runs(periodic, pc, key, min(WORD - key, high - pc), True)
                pc += min(WORD - key, high - pc)
                continue
            if periodic is not None and lookup == "bitmask":
                yield from self._periodic_runs(periodic, pc, pc, high - pc, False)
                break
            if periodic is not None and _int32(pc) >= 0:  # 2.44: the PC, modulo rep_size up to the int32 wrap
                key = _int32(pc)
                yield from self._periodic_runs(periodic, pc, key, min(INT32_WRAP - key, high - pc), False)
                pc += min(INT32_WRAP - key, high - pc)
                continue
            key, extent = self._key(index, pc)
            extent = min(extent, high - pc)
            walk = self._walks.walk(shape, lambda: _walk(dec, index), ALL if whole else key + extent, pc)
            for k_low, k_high, outcome in self._painted_runs(shape, whole, walk, NO_ROW, key, key + extent, alike):
                yield Run(pc + k_low - key, pc + k_high - key, outcome)
            pc += extent

    def _periodic(self, shape: Shape, walk: Walk[Outcome], rep: int, alike: bool) -> Periodic[Outcome]:
        """A PCMASK function's walk as a `Periodic` (kept per walk: functions alike share it). 2.47's walk is
        one already; 2.44 tests every row on the PC modulo rep_size alone, 2.40 on the PC & 0xff (their row
        tests become a block's)."""
        same = functools.partial(_same, rows_alike=alike)
        blocks_only = self.dec.rel.lookup != "range64"
        return self._periodics.get(
            (shape, alike), walk.conds, lambda: Periodic(walk.conds, rep, NO_ROW, same, blocks_only)
        )

    def _periodic_runs(self, periodic: Periodic[Outcome], pc: int, key: int, extent: int, line: bool) -> Iterator[Run]:
        """PCs [pc, pc + extent) whose keys run from `key` on, from `periodic` (`line`: through the runs merged
        from key 0, for keys that are offsets into functions alike); the runs painted to make each count
        against the bound with it."""
        steps = periodic.steps
        given = periodic.span(key, key + extent) if line else periodic.runs(key, key + extent)
        for k_low, k_high, outcome in given:
            self.count += max(periodic.steps - steps - 1, 0)  # merged into this run (itself counted by the caller)
            steps = periodic.steps
            if self.count > self.budget:
                raise Budget(pc + k_low - key, f"more than {self.budget} runs of answers")
            yield Run(pc + k_low - key, pc + k_high - key, outcome)

    def _shape(self, index: int) -> Shape:
        """What FDE `index`'s walk depends on: for 2.47, whose keys are offsets into the function, its rows'
        place, count, info bytes, size and rep_size (functions alike, reading one block, share a walk);
        else (keys are PCs) the index."""
        dec = self.dec
        if dec.rel.lookup != "range64" or index >= len(dec._table):
            return index
        f = dec.fde(index)
        return f.fre_off, f.num_fres, f.info, f.size, f.rep_size

    def _key(self, index: int, pc: int) -> tuple[int, int]:
        """The key the row tests take at `pc`, and how many PCs on it rises by one a PC (2.47's PCMASK
        functions: `_periodic`)."""
        dec = self.dec
        lookup = dec.rel.lookup
        f = dec.fde(index)
        if lookup == "bitmask":
            mask = 0xFF if f.pcmask else U32
            key = pc & mask
            return key, mask + 1 - key
        if lookup == "range32":
            p = _int32(pc)
            if not f.pcmask or f.rep_size == 0:
                return p, INT32_WRAP - p
            key = _c_mod(p, f.rep_size)
            if p >= 0:
                return key, min(f.rep_size - key, INT32_WRAP - p)
            return key, (1 if key == 0 else -key)
        offset = (pc - dec.start(index)) & U32
        return offset, WORD - offset

    def _painted_runs(
        self, shape: Shape, pcmask: bool, walk: Walk[Outcome], none: Outcome, low: int, high: int, alike: bool
    ) -> Iterable[tuple[int, int, Outcome]]:
        """`_paint`, kept per key range (painted again: a PCMASK function's blocks, functions alike), unless
        the walk paints `stepwise` (at the cost of the runs given: nothing to keep)."""
        if walk.stepwise(high):
            return walk.paint(none, low, high, alike)
        known = self._painted.get((shape, low, high, alike))
        if known is None:
            known = self._merged(list(walk.paint(none, low, high, alike)), alike)
            if pcmask or isinstance(shape, tuple):
                self._keep((shape, low, high, alike), known)
        return known

    @staticmethod
    def _merged(painted: list[tuple[int, int, Outcome]], alike: bool) -> list[tuple[int, int, Outcome]]:
        """`painted`, adjacent runs finding rows merged when `alike`."""
        if not alike:
            return painted
        runs: list[tuple[int, int, Outcome]] = []
        for low, high, outcome in painted:
            if runs and isinstance(outcome, Fre) and isinstance(runs[-1][2], Fre):
                runs[-1] = (runs[-1][0], high, runs[-1][2])
            else:
                runs.append((low, high, outcome))
        return runs

    def _keep(self, key: tuple[Shape, int, int, bool], painted: list[tuple[int, int, Outcome]]) -> None:
        if len(self._painted) >= KEPT:
            del self._painted[next(iter(self._painted))]
        self._painted[key] = painted


R = TypeVar("R")


class Replays(Generic[K, R]):
    """The runs of answers given for the spans asked for lately, and what they counted against the bound.

    The answers are the section's, not the caller's: PCs judged again (functions starting at one address
    all judge the same ones) get the runs given before, without a search, and count as much against the
    bound as searching again would, while the runs kept stay under `REPLAYED` in all. Where that count
    would pass the bound, the search runs again and stops where it always did."""

    def __init__(self) -> None:
        self._kept: dict[K, tuple[list[R], int]] = {}
        self._held = 0
        self._asked: dict[K, None] = {}
        """The last `KEPT` keys asked for: runs are kept only for a key asked for before (spans that never
        come again, the common case, cost nothing kept)."""

    def given(self, key: K, room: int) -> tuple[list[R], int] | None:
        """The runs kept for `key` and what they counted, when that fits in `room`."""
        kept = self._kept.get(key)
        return kept if kept is not None and kept[1] <= room else None

    def replay(self, key: K, search: Iterator[R], count: Callable[[], int]) -> Iterator[R]:
        """`search`'s runs, passed on, then kept for `key` with what they added to `count()` (unless too many)."""
        before = count()
        asked = key in self._asked
        if not asked:
            if len(self._asked) >= KEPT:
                del self._asked[next(iter(self._asked))]
            self._asked[key] = None
        runs: list[R] | None = [] if asked else None
        for run in search:
            if runs is not None and len(runs) < REPLAYED:
                runs.append(run)
            else:
                runs = None
            yield run
        if runs is None:
            return
        self._held += len(runs)
        while self._held > REPLAYED:
            self._held -= len(self._kept.pop(next(iter(self._kept)))[0])
        self._kept[key] = (runs, count() - before)


def _same(a: Outcome, b: Outcome, rows_alike: bool = False) -> bool:
    """Whether two answers are one: the same row (any row, when `rows_alike`), or the same failure."""
    if isinstance(a, Fre) or isinstance(b, Fre):
        return a is b or (rows_alike and isinstance(a, Fre) and isinstance(b, Fre))
    return type(a) is type(b) and a.rule == b.rule and getattr(a, "error", None) == getattr(b, "error", None)


def find_fre(dec: Decoder, pc: int) -> Fre:
    """`sframe_find_fre` for one section-relative `pc`; raises Miss or Crash. (Each call finds the search's
    breaks anew: for many PCs, `Lookups.runs`.)"""
    (run,) = Lookups(dec, 4, ALL).runs([(pc, pc + 1)])
    if isinstance(run.outcome, Fre):
        return run.outcome
    raise run.outcome
