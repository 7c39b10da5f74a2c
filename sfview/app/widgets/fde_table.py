"""`FdeTable`: one row per function (FDE), sorted and filtered as asked.

The rows are a view of the section's functions: `order` holds the FDE index
each row shows. Sorting, filtering and sizing the columns work on the
section's `Overview` (a few facts of every function, from one pass of the
bulk reader) and on the list of names, never on a `Function` per FDE. A row's
cells are made only when it is drawn; only a function that cannot be decoded
is asked for its `Function`, to show its error.

A key must answer within `bench/bench_app.py`'s goal on a million functions,
where one Python statement per function already takes longer: each column's
order is made once (`SortOrders`, in the worker after the overview:
`prepare_orders`), and a filter word is tested by C loops (`map`, `compress`)
over a byte per function, a part of a name by one search through every name
joined (`names_holding`); a longer filter narrows the rows already kept rather
than starting again.

On a big section the table is on the screen before the overview is whole:
its rows are then in FDE order, each function read alone as it is drawn, the
columns as wide as the functions read so far make them; a sort or a filter
asked for meanwhile is kept (`waiting`) and done when the overview is ready
(`overview_ready`), which also makes the columns exact.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, contains
from typing import NamedTuple

from sfview import ADDRESS_MASK
from sfview.app.widgets.fde_orders import INDEX, PIECE, Pace, SortOrders
from sfview.app.widgets.row_table import Column, Cut, RowTable, cells
from sfview.check.catalogue import Severity
from sfview.sframe.bulk.overview import Facts, Overview
from sfview.sframe.model import terms
from sfview.sframe.model.section import Section

__all__ = ["COLUMNS", "FILTER_WORDS", "FdeTable", "names_holding"]

SYMBOL_AT_LEAST = 8
"""The symbol column gives up width down to this many cells, when the table is narrow."""

FILTER_WORDS: dict[str, Callable[[Facts], bool]] = {
    "pcmask": lambda f: f.pcmask,
    "flex": lambda f: f.flexible,
    "signal": lambda f: f.signal,
    "key:a": lambda f: not f.key_b,
    "key:b": lambda f: f.key_b,
}
"""Filter words that keep functions by attribute; `problems` is the other one, any other word is part of a name."""
PROBLEMS = "problems"
FAILS = "fails:"
"""A filter word's start: `fails:kernel` keeps the functions where consumer `kernel`'s lookups fail."""
FEW_ROWS = 10
"""A name word is tested on the rows kept so far when they are fewer than one function in this many; else on
every name in FDE order (names read in memory order cost far less than names read in a sorted order)."""
SEPARATOR = "\0"
"""Between two names in the names joined (`names_holding`): no name holds it (a C string ends at it)."""
FEW_HOLDERS = 100
"""`names_holding` finds the names that hold a word in the names joined while they are at most one in this many;
past that, testing each name costs less than finding each one (`map` over the names)."""
FEW_TO_SORT = 100
"""While a sort waits for its column's order, the rows a filter keeps are sorted alone when they are fewer than one
function in this many (then quick enough for a key)."""
ORDERS_AT_ONCE = 100_000
"""Up to this many functions a column's order the worker has not made yet is made when a sort asks for it; past
it, the sort waits for the worker (`expect_orders`): on a million functions making one in the key would take far
too long, and its temporary lists would raise the peak memory."""
VARIABLE = "var"
"""The frame column of a function whose CFA some row computes from FP: no fixed size."""


class Sort(NamedTuple):
    """How the rows are sorted: by which column (its index in `COLUMNS`), and whether largest first."""

    column: int
    reverse: bool = False


class Spec(NamedTuple):
    """A column of the table; every one sorts."""

    title: str
    right: bool = False
    """Right-aligned (numbers)."""
    field: str = ""
    """The `Facts` field it shows and sorts by, when it is one as it is."""


COLUMNS = (
    Spec("#", right=True),
    Spec("start", field="start"),
    Spec("end"),
    Spec("size", right=True, field="size"),
    Spec("symbol"),
    Spec("FREs", right=True, field="num_fres"),
    Spec("frame", right=True),
    Spec("FRE type", field="fre_type"),
    Spec("PC type", field="pc_type"),
    Spec("key", field="pauth_key"),
    Spec("notes"),
)
SYMBOL = [spec.title for spec in COLUMNS].index("symbol")
NOTES = [spec.title for spec in COLUMNS].index("notes")


def _fre_type_text(fre_type: int) -> str:
    """`ADDR2`, or a value no version defines named as such (`7 undefined`)."""
    return terms.FRE_TYPE_NAMES.get(fre_type, f"{fre_type} undefined")


def note(facts: Facts, problem: Severity | None) -> str:
    """What the notes column says of a function: the rarest of its attributes that matters most."""
    if facts.broken or problem is Severity.ERROR:
        return "error"
    if problem is Severity.WARNING:
        return "warning"
    return "signal" if facts.signal else "flexible" if facts.flexible else ""


class FdeTable(RowTable):
    """The section's FDEs: address range, size, name, FRE count, frame size and encoding of each."""

    def __init__(
        self,
        section: Section,
        overview: Overview,
        names: list[str],
        *,
        widest: int | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.section = section
        self.overview = overview
        self.names = names
        """Each function's name, by FDE index ("" until the names are read)."""
        self._names_width: int | None = widest
        """The longest name's length, if known (as before the names are read: 0), else worked out (`_measure`);
        given by `names_changed`."""
        self.problems: dict[int, Severity] = {}
        self.failing: dict[str, set[int] | None] = {}
        """By consumer judged: the functions where its lookups fail (None: every one), for `fails:NAME`."""
        """FDEs a check of the section found problems in (their worst severity): flagged in the notes
        column, and kept by the `problems` filter word besides those that cannot be decoded."""
        self.sort = Sort(0)
        self.query = ""
        self.order: Sequence[int] = range(len(overview))
        """The FDE index each row shows."""
        self._sorted: Sequence[int] = self.order
        """Every FDE in the order of the sort `_sorted_for`: `sort`, or the one before while its order is made."""
        self._sorted_for: Sort | None = self.sort
        self._rows: array[int] | None = None
        """Each FDE's row (-1: hidden), once asked for and while the order is not FDE order."""
        self.waiting = False
        """A sort or a filter was asked for before the overview was ready, or a sort before the worker had made
        its column's order: done when it is (`overview_ready`, `order_made`)."""
        self._orders_coming = False
        """A worker makes the columns' orders (`expect_orders`): a sort waits for its order rather than make it."""
        self.orders = SortOrders()
        self._applied: list[str] = []
        """The filter's words that made `order` (of `_sorted`)."""
        self._lowered: list[str] | None = None
        """The names in lower case (what a filter word is looked for in, and the symbol column sorts by)."""
        self._joined: tuple[list[str], str | None] | None = None
        """The lowered names joined into one text (`names_holding`; None if a name holds `SEPARATOR`), with the
        list they were joined from (made in the worker, from names that may have changed since)."""
        self._passes: dict[str, bytes | bytearray] = {}
        """The bytes `_passing` made for each word of the filter: a sort with the filter kept tests no function
        again (a million names or shapes tested at each `S` otherwise)."""
        self._overview_widths: list[int] | None = None
        """The widths of the columns the overview alone decides, once it is ready (`measure_overview`)."""
        self._value_widths = self._measure()
        self.columns = self._make_columns()

    # ------------------------------------------------------------------ rows

    @property
    def row_count(self) -> int:
        return len(self.order)

    def fde_at(self, row: int) -> int:
        """The FDE index row `row` shows."""
        return self.order[row]

    def row_of(self, index: int) -> int | None:
        """The row that shows FDE `index`, None when the filter hides it."""
        order = self.order
        if isinstance(order, range):  # FDE order, every function
            return index if 0 <= index < len(order) else None
        if self._rows is None:
            rows = self._rows = array("q", [-1]) * len(self.overview)
            for row, fde in enumerate(order):
                rows[fde] = row
        row = self._rows[index] if 0 <= index < len(self._rows) else -1
        return row if row >= 0 else None

    def row_cells(self, row: int) -> tuple[str, ...]:
        index = self.order[row]
        facts = self.overview.facts(index)
        return (
            str(index),
            f"{facts.start:#x}",
            f"{(facts.start + facts.size) & ADDRESS_MASK:#x}",
            str(facts.size),
            self.names[index],  # a damaged FDE's too: its error is the status line's and the Problems tab's
            str(facts.num_fres),
            _frame_text(facts.frame),
            _fre_type_text(facts.fre_type),
            terms.PC_TYPE_NAMES.get(facts.pc_type, str(facts.pc_type)),
            terms.PAUTH_KEY_NAMES.get(facts.pauth_key, "?"),
            note(facts, self.problems.get(index)),
        )

    def row_is_error(self, row: int) -> bool:
        index = self.order[row]
        return self.overview.facts(index).broken or self.problems.get(index) is Severity.ERROR

    def names_changed(self, names: list[str], widest: int | None = None) -> None:
        """The names have arrived: the symbol column as wide as the widest (its length `widest`, if the worker
        that listed them worked it out, sparing the keys' thread a pass over every name), and sorted or
        filtered by them."""
        self.names = names
        self._lowered = None
        self._joined = None
        self._passes.clear()
        self.orders.forget(SYMBOL)
        self._names_width = widest if widest is not None else max(map(cells, names), default=0)
        self._value_widths[SYMBOL] = self._names_width
        self._reorder(sort=self.sort.column == SYMBOL)

    # ------------------------------------------------------------------ sorting and filtering

    def sort_by(self, column: int, reverse: bool = False) -> bool:
        """Rows in the order of `column`'s values (FDE order among equals), or the reverse.

        Returns False when that waits for the overview (it is done when the overview is ready)."""
        self.sort = Sort(column, reverse)
        return self._reorder(sort=True)

    def filter(self, query: str) -> bool:
        """Only the functions every word of `query` keeps: a `FILTER_WORDS` attribute, `problems`,
        `fails:NAME` (none until consumer NAME is judged: `set_failing`), or a part of the name (any case).

        Returns False when that waits for the overview (it is done when the overview is ready)."""
        self.query = query
        return self._reorder(sort=False, narrowing=True)

    @property
    def orders_coming(self) -> bool:
        """Whether the worker is still to make the columns' orders: its last delivery after the first screen."""
        return self._orders_coming

    def expect_orders(self, coming: bool) -> None:
        """Whether a worker is to make the columns' orders (`prepare_orders`): on a big section, a sort asked for
        meanwhile then waits for its column's order (`order_made`) rather than make it in the key. When the
        worker is done, a sort still waiting is done at once."""
        self._orders_coming = coming
        if not coming and self._sorted_for != self.sort and self.overview.ready:
            self._reorder(sort=True)

    def prepare_orders(self, pace: Pace, made: Callable[[], None] = lambda: None) -> None:
        """Each column's order not made yet (in a worker thread, after the overview, the names, the checks, at
        its `pace`: see `SortOrders`), the one a sort waits for first, `made` told after each: a sort key then
        only swaps the order the table shows."""
        if self.overview.ready:
            while (column := self._next_order()) is not None:
                pace()
                self.orders.make(column, self._sort_keys(column, pace=pace), pace)
                made()
            self._names_joined(pace)

    def _next_order(self) -> int | None:
        """The column whose order to make next: the one a sort waits for, else the first not made."""
        if self._sorted_for != self.sort and self.sort.column not in self.orders:
            return self.sort.column
        return next((column for column in range(len(COLUMNS)) if column not in self.orders), None)

    def order_made(self) -> bool:
        """The worker made an order (`prepare_orders`): a sort that waited for it done. Whether one was."""
        if self._sorted_for != self.sort and self.overview.ready and self.sort.column in self.orders:
            return self._reorder(sort=True)
        return False

    @property
    def orders_made(self) -> bool:
        """Every column's order is made (`prepare_orders`): no sort key has to wait for one."""
        return all(column in self.orders for column in range(len(COLUMNS)))

    def overview_ready(self) -> None:
        """Every function has been gone through: the columns exact, and what was asked for meanwhile done."""
        self._value_widths = self._measure()
        self.columns = self._make_columns()
        waiting, self.waiting = self.waiting, False
        if waiting:
            self._reorder(sort=True)
        else:
            self.rows_changed()

    def set_failing(self, consumer: str, failing: set[int] | None) -> None:
        """The functions where `consumer`'s lookups fail (None: every one, the section refused): kept by the
        filter word `fails:CONSUMER`, filtered again if the filter has it."""
        self.failing[consumer] = failing
        word = FAILS + consumer
        self._passes.pop(word, None)
        if word in self._applied:
            self._reorder(sort=False)

    def set_problems(self, problems: dict[int, Severity]) -> None:
        """The functions a check of the section found problems in: flagged, and kept by the `problems` word."""
        self.problems = problems
        self._passes.clear()
        self.orders.forget(NOTES)
        self._value_widths = self._measure()
        self.columns = self._make_columns()
        self._reorder(sort=self.sort.column == NOTES)

    @property
    def filtered(self) -> bool:
        return bool(self.query.strip())

    def counts(self) -> tuple[str, str]:
        """`9 FDEs · 1 PCMASK · 0 flexible` (or `3 of 9 FDEs shown`), and as short as it gets
        (`9 FDEs (1 PCMASK)`: no kind there are none of)."""
        total = len(self.overview)
        if not self.overview.ready:
            working = f"{total} FDEs · working… {self.overview.done * 100 // max(total, 1)}%"
            return working, working
        sorting = f" · sorting by {COLUMNS[self.sort.column].title}…" if self.waiting else ""  # `_reorder`
        if self.filtered:
            shown = f"{len(self.order)} of {total} FDEs shown{sorting}"
            return shown, shown
        pcmask, flexible = self.overview.pcmask_count, self.overview.flexible_count
        kinds = [f"{n} {kind}" for n, kind in ((pcmask, "PCMASK"), (flexible, "flexible")) if n]
        short = f"{total} FDEs" + (f" ({', '.join(kinds)})" if kinds else "") + sorting
        return f"{total} FDEs · {pcmask} PCMASK · {flexible} flexible{sorting}", short

    def _reorder(self, *, sort: bool, narrowing: bool = False) -> bool:
        """Rows again after a new sort, filter or names; the columns too, as the titles show the sort.

        A new filter (`narrowing`) that narrows the last one looks only at the rows that one kept. The
        cursor stays on its function; if the filter hides it, it goes to the first row, which becomes the
        selection. Before the overview is ready, only what needs no sort and no filter is done (new names);
        the rest waits (returns False).
        """
        if not self.overview.ready and (self.sort != Sort(0) or self.filtered):
            self.waiting = True
            self.columns = self._make_columns()
            return False
        if sort or self._sorted_for != self.sort:
            made = self._sorted_by(self.sort)
            self._sorted_for = None if made is None else self.sort
            self._sorted = self._sorted if made is None else made
        current = self.order[self.cursor] if self.order else None
        words = self.query.lower().split()
        few = self._few_sorted(words) if self._sorted_for != self.sort and words else None
        if few is not None:
            self.order = few
        elif narrowing and not sort and _narrows(self._applied, words):
            self.order = self._kept(self.order, [w for w in words if w not in self._applied])
        else:
            self.order = self._kept(self._sorted, words)
        self.waiting = self._sorted_for != self.sort and few is None
        self._applied = words
        self._passes = {word: kept for word, kept in self._passes.items() if word in words}
        self._rows = None
        self.columns = self._make_columns()
        self.rows_changed()
        row = _row_in(self.order, current) if current is not None else None
        if row is not None:
            self.move_cursor(row, notify=False)
        elif self.order:
            self.row_highlighted.publish(0)
        return not self.waiting

    def _few_sorted(self, words: list[str]) -> Sequence[int] | None:
        """The rows `words` keep sorted alone, when they are fewer than one function in `FEW_TO_SORT`: no
        column's whole order is needed for them (on a million functions, making it in a key is far too slow)."""
        n = len(self.overview)
        kept = self.order if words == self._applied else self._kept(range(n), words)  # the same rows, any order
        if len(kept) * FEW_TO_SORT >= n:
            return None  # counted before the rows are put in FDE order: sorting a million of them is slow
        kept = array(INDEX, sorted(kept))
        keys = self._sort_keys(self.sort.column, kept)
        return array(
            INDEX, map(kept.__getitem__, sorted(range(len(kept)), key=keys.__getitem__, reverse=self.sort.reverse))
        )

    def _sorted_by(self, sort: Sort) -> Sequence[int] | None:
        """Every FDE index in the order `sort` asks for: made beforehand (`prepare_orders`), else now, or None
        when the worker is to make it (a big section: `ORDERS_AT_ONCE`)."""
        order = self.orders.get(sort.column, sort.reverse)
        if order is None and self._orders_coming and len(self.overview) > ORDERS_AT_ONCE:
            return None
        if order is None:
            self.orders.make(sort.column, self._sort_keys(sort.column))
            order = self.orders.get(sort.column, sort.reverse)
            assert order is not None, "made just now, from the values as they are"
        return order

    def _kept(self, order: Sequence[int], words: list[str]) -> Sequence[int]:
        """The rows of `order` that every word of `words` keeps."""
        for word in words:
            if not order:
                break
            if _is_name(word) and len(order) * FEW_ROWS < len(self.overview):
                names = self._lowered_names()  # few rows: their names looked at one by one
                order = array(INDEX, compress(order, map(contains, map(names.__getitem__, order), repeat(word))))
                continue
            kept = self._passing(word)
            count = kept.count(1)
            if count == len(kept):
                continue
            if not count:
                order = array(INDEX)
            elif order == range(len(kept)):  # every function, in FDE order: as the bytes are
                order = array(INDEX, compress(order, kept))
            else:  # `filter` calls the byte's item directly: quicker than `compress` of a `map`
                order = array(INDEX, filter(kept.__getitem__, order))
        return order

    def _passing(self, word: str) -> bytes | bytearray:
        """A byte per function, by FDE index: 1 if filter word `word` keeps it (made once per word, `_passes`)."""
        kept = self._passes.get(word)
        if kept is None:
            kept = self._passes[word] = self._tested(word)
        return kept

    def _tested(self, word: str) -> bytes | bytearray:
        """`_passing`'s bytes, made: each function's shape, problems or name tested."""
        test = FILTER_WORDS.get(word)
        if test is not None:
            return self.overview.passing(test)
        if word.startswith(FAILS):
            failing = self.failing.get(word.removeprefix(FAILS), set())
            if failing is None:  # refused: no lookup is answered
                return bytes([1]) * len(self.overview)
            kept = bytearray(len(self.overview))
            for index in failing:
                if 0 <= index < len(kept):
                    kept[index] = 1
            return kept
        if word == PROBLEMS:
            kept = bytearray(self.overview.passing(lambda shape: shape.broken))
            for index in self.problems:
                if 0 <= index < len(kept):
                    kept[index] = 1
            return kept
        joined = self._names_joined()
        kept = names_holding(joined, word, len(self.names)) if joined is not None else None
        return kept if kept is not None else bytearray(map(contains, self._lowered_names(), repeat(word)))

    def _lowered_names(self) -> list[str]:
        lowered = self._lowered
        if lowered is None:
            lowered = self._lowered = [name.lower() for name in self.names]
        return lowered

    def _names_joined(self, pace: Pace | None = None) -> str | None:
        """The lowered names joined, `SEPARATOR` between them, for `names_holding`; None if a name holds the
        separator. Made in the worker with the orders (`prepare_orders`), at its `pace`, a piece at a time: one
        `join` of a million names would hold the interpreter, and a key would wait as long."""
        lowered = self._lowered_names()
        joined = self._joined
        if joined is None or joined[0] is not lowered:
            pieces = []
            for start in range(0, len(lowered), PIECE):
                if pace is not None:
                    pace()
                pieces.append(SEPARATOR.join(lowered[start : start + PIECE]))
            text = SEPARATOR.join(pieces)
            joined = self._joined = (lowered, text if text.count(SEPARATOR) == max(len(lowered) - 1, 0) else None)
        return joined[1]

    def _sort_keys(self, column: int, rows: Sequence[int] | None = None, pace: Pace | None = None) -> Sequence[object]:
        """Column `column`'s value for each FDE, as it sorts (FDE `i`'s at `i`); or for `rows` alone, each at
        its place in `rows` (`_few_sorted`: a few rows sorted without the column's whole order). In the worker,
        at its `pace` (see `SortOrders`)."""
        o = self.overview
        spec = COLUMNS[column]
        every = rows is None
        if rows is None:
            rows, shape_of = range(len(o)), o.shape
        else:
            shape_of = array("L", map(o.shape.__getitem__, rows))
        if spec.field:
            keys = o.column(spec.field) if every else [getattr(o.facts(i), spec.field) for i in rows]
        elif spec.title == "#":
            keys = rows
        elif spec.title == "end":  # C loops, a piece at a time: a generator would hold the interpreter, unpaced
            starts, sizes = (
                (o.start, o.size)
                if every
                else (array("Q", map(o.start.__getitem__, rows)), array("Q", map(o.size.__getitem__, rows)))
            )
            keys = array("Q")
            for first in range(0, len(starts), PIECE):
                if pace is not None:
                    pace()
                ends = map(add, starts[first : first + PIECE], sizes[first : first + PIECE])
                keys.extend(map(ADDRESS_MASK.__and__, ends))
        elif spec.title == "symbol":
            lowered = self._lowered_names()
            keys = lowered if every else [lowered[i] for i in rows]
        elif spec.title == "frame":  # a function without a CFA before every other
            frames = [-math.inf if shape.frame is None else shape.frame for shape in o.shapes]
            keys = [frames[k] for k in shape_of]
        else:
            notes = [note(shape, None) for shape in o.shapes]
            keys = [notes[k] for k in shape_of]
            place = range(len(o)) if every else {index: at for at, index in enumerate(rows)}
            for index, problem in self.problems.items():
                at = place[index] if every else place.get(index)
                if at is not None:
                    keys[at] = note(o.facts(index), problem)
        return keys

    # ------------------------------------------------------------------ columns

    def header_clicked(self, column: int) -> None:
        """A click on a title sorts by that column; on the sorted one, reverses."""
        self.sort_by(column, not self.sort.reverse if column == self.sort.column else False)

    def measure_overview(self) -> None:
        """In the worker, once the overview is ready: the widest value of every column the overview alone
        decides, kept for `_measure`. Going through a million functions' starts, ends, sizes and counts is too
        long for the keys' thread, which would do it twice (the overview ready, then the checks done), a key
        pressed meanwhile waiting for it."""
        self._overview_widths = self._widths_of_overview()

    def _measure(self) -> list[int]:
        """The widest value of each column, from the overview (the symbol column's, when the names come);
        before it is ready, from the functions read so far."""
        o = self.overview
        if not len(o):
            return [0] * len(COLUMNS)
        kept = self._overview_widths if o.ready else None
        widths = list(kept) if kept is not None else self._widths_of_overview()
        shapes = o.shapes if o.ready else [o.facts(i) for i in o.sampled]
        notes = [note(shape, None) for shape in shapes] + [note(o.facts(i), p) for i, p in self.problems.items()]
        if self._names_width is None:
            self._names_width = max(map(len, self.names), default=0)
        widths[SYMBOL] = self._names_width
        widths[NOTES] = max(map(len, notes))
        return widths

    def _widths_of_overview(self) -> list[int]:
        """`_measure`'s widths of the columns the overview alone decides (the symbol's and the notes' left 0)."""
        o = self.overview
        if o.ready:
            starts, sizes, counts, shapes = o.start, o.size, o.num_fres, o.shapes
            ends = max(map(add, starts, sizes))  # C loops: masked one by one only where an end wraps
            if ends > ADDRESS_MASK:
                ends = max(end & ADDRESS_MASK for end in map(add, starts, sizes))
        else:
            read = [o.facts(i) for i in o.sampled]
            starts, sizes, counts, shapes = (
                [f.start for f in read],
                [f.size for f in read],
                [f.num_fres for f in read],
                read,
            )
            ends = max((f.start + f.size) & ADDRESS_MASK for f in read)
        frames = [shape.frame for shape in shapes if shape.frame is not None]
        return [
            len(str(len(o) - 1)),
            len(f"{max(starts):#x}"),
            len(f"{ends:#x}"),
            len(str(max(sizes))),
            0,
            len(str(max(counts))),
            max((len(str(min(frames))), len(str(max(frames))))) if frames else 0,
            max(len(_fre_type_text(s.fre_type)) for s in shapes),
            max(len(terms.PC_TYPE_NAMES.get(s.pc_type, str(s.pc_type))) for s in shapes),
            max(len(terms.PAUTH_KEY_NAMES.get(s.pauth_key, "?")) for s in shapes),
            0,
        ]

    def _make_columns(self) -> list[Column]:
        """Each column as wide as its title and its widest value; the title of the column the rows
        are sorted by, unless they are in FDE order, has an arrow."""
        arrow = "" if self.sort == Sort(0) else "▼" if self.sort.reverse else "▲"
        columns = []
        for i, (spec, width) in enumerate(zip(COLUMNS, self._value_widths, strict=True)):
            title = spec.title + (arrow if i == self.sort.column else "")
            yields_to = SYMBOL_AT_LEAST if i == SYMBOL else 0
            how = Cut.NAME if i == SYMBOL else Cut.MIDDLE  # only the symbol yields: the rest are never cut
            columns.append(Column(title, max(cells(title), width), spec.right, yields_to, cut=how))
        return columns


def names_holding(joined: str, word: str, count: int) -> bytearray | None:
    """A byte per name, 1 for each that holds `word`, from the `count` names `joined` (`SEPARATOR` between them);
    None when more than one name in `FEW_HOLDERS` holds it (testing each name then costs less).

    Why: a word tested name by name costs a million Python comparisons on a million functions (most of the
    filter's first letter), even when no name holds it, as in a program without symbols (every name empty).
    One search through the text of every name costs a fraction of that: none found, none kept; else each
    occurrence found (`re`, up to the limit) is a name, its index the separators before it (`str.count`).
    """
    kept = bytearray(count)
    found = joined.find(word) if SEPARATOR not in word else -1  # no name holds the separator
    if found < 0:
        return kept
    limit = count // FEW_HOLDERS
    starts = list(islice(map(re.Match.start, re.compile(re.escape(word)).finditer(joined, found)), limit + 1))
    if len(starts) > limit:
        return None
    for index in accumulate(map(joined.count, repeat(SEPARATOR), chain((0,), starts), starts)):
        kept[index] = 1
    return kept


def _narrows(old: list[str], new: list[str]) -> bool:
    """Whether filter `new` keeps only functions filter `old` keeps: each old word is a new one, or a part of
    a name that a new word (a part of a name too) holds. Then `new` need only look at what `old` kept."""
    names = [word for word in new if _is_name(word)]
    return all(word in new or (_is_name(word) and any(word in name for name in names)) for word in old)


def _is_name(word: str) -> bool:
    """Whether filter word `word` is a part of a name (not an attribute, `problems` or `fails:NAME`)."""
    return word not in FILTER_WORDS and word != PROBLEMS and not word.startswith(FAILS)


def _row_in(order: Sequence[int], index: int) -> int | None:
    """The row of `order` that shows FDE `index`, None if none does (a C loop: `index`)."""
    if isinstance(order, range):
        return order.index(index) if index in order else None
    try:
        return order.index(index)
    except ValueError:
        return None


def _frame_text(frame: int | None) -> str:
    """`48`; `var` for a frame whose CFA comes from FP (alloca, VLAs): its size is not in the rules."""
    if frame is None:
        return ""
    return VARIABLE if getattr(frame, "variable", False) else str(frame)
