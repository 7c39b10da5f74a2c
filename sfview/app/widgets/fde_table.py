"""`FdeTable`: one row per function (FDE), sorted and filtered as asked.

The rows are a view of the section's functions: `order` holds the FDE index
each row shows. Sorting, filtering and sizing the columns work on the
section's `Overview` (a few facts of every function, from one pass of the
bulk reader) and on the list of names, never on a `Function` per FDE, so that
40,000 functions sort in a few tens of milliseconds. A row's cells are made
only when it is drawn; only a function that cannot be decoded is asked for
its `Function`, to show its error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from sfview.app.widgets.row_table import Column, RowTable
from sfview.check.catalogue import Severity
from sfview.sframe import describe
from sfview.sframe.overview import Facts, Overview
from sfview.sframe.section import ADDRESS_MASK, Section

__all__ = ["COLUMNS", "FILTER_WORDS", "FdeTable"]

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


def note(facts: Facts, problem: Severity | None) -> str:
    """What the notes column says of a function: the rarest of its attributes that matters most."""
    if facts.broken or problem is Severity.ERROR:
        return "error"
    if problem is Severity.WARNING:
        return "warning"
    return "signal" if facts.signal else "flexible" if facts.flexible else ""


class FdeTable(RowTable):
    """The section's FDEs: address range, size, name, FRE count, frame size and encoding of each."""

    def __init__(self, section: Section, overview: Overview, names: list[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.section = section
        self.overview = overview
        self.names = names
        """Each function's name, by FDE index ("" until the names are read)."""
        self.problems: dict[int, Severity] = {}
        """FDEs a check of the section found problems in (their worst severity): flagged in the notes
        column, and kept by the `problems` filter word besides those that cannot be decoded."""
        self.sort = Sort(0)
        self.query = ""
        self.order: list[int] = list(range(len(overview)))
        """The FDE index each row shows."""
        self._sorted: list[int] = self.order
        self._rows: dict[int, int] | None = None
        self._keys: dict[int, Sequence[object]] = {}
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
        if self._rows is None:
            self._rows = {fde: row for row, fde in enumerate(self.order)}
        return self._rows.get(index)

    def row_cells(self, row: int) -> tuple[str, ...]:
        index = self.order[row]
        facts = self.overview.functions[index]
        name = self.names[index]
        if facts.broken:
            error = self.section.function(index).error
            name = str(error) if error is not None else name
        return (
            str(index),
            f"{facts.start:#x}",
            f"{(facts.start + facts.size) & ADDRESS_MASK:#x}",
            str(facts.size),
            name,
            str(facts.num_fres),
            _frame_text(facts.frame),
            describe.FRE_TYPE_NAMES.get(facts.fre_type, str(facts.fre_type)),
            describe.PC_TYPE_NAMES.get(facts.pc_type, str(facts.pc_type)),
            describe.PAUTH_KEY_NAMES.get(facts.pauth_key, "?"),
            note(facts, self.problems.get(index)),
        )

    def row_is_error(self, row: int) -> bool:
        index = self.order[row]
        return self.overview.functions[index].broken or self.problems.get(index) is Severity.ERROR

    def names_changed(self, names: list[str]) -> None:
        """The names have arrived: the symbol column as wide as the widest, and sorted or filtered by them."""
        self.names = names
        self._keys.pop(SYMBOL, None)
        self._value_widths[SYMBOL] = max(map(len, names), default=0)
        self._reorder(sort=self.sort.column == SYMBOL)

    # ------------------------------------------------------------------ sorting and filtering

    def sort_by(self, column: int, reverse: bool = False) -> None:
        """Rows in the order of `column`'s values (FDE order among equals), or the reverse."""
        self.sort = Sort(column, reverse)
        self._reorder(sort=True)

    def filter(self, query: str) -> None:
        """Only the functions every word of `query` keeps: a `FILTER_WORDS` attribute, `problems`,
        or a part of the name (any case)."""
        self.query = query
        self._reorder(sort=False)

    def set_problems(self, problems: dict[int, Severity]) -> None:
        """The functions a check of the section found problems in: flagged, and kept by the `problems` word."""
        self.problems = problems
        self._keys.pop(NOTES, None)
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
        if self.filtered:
            shown = f"{len(self.order)} of {total} FDEs shown"
            return shown, shown
        pcmask, flexible = self.overview.pcmask_count, self.overview.flexible_count
        kinds = [f"{n} {kind}" for n, kind in ((pcmask, "PCMASK"), (flexible, "flexible")) if n]
        short = f"{total} FDEs" + (f" ({', '.join(kinds)})" if kinds else "")
        return f"{total} FDEs · {pcmask} PCMASK · {flexible} flexible", short

    def _reorder(self, *, sort: bool) -> None:
        """Rows again after a new sort, filter or names; the columns too, as the titles show the sort.

        The cursor stays on its function; if the filter hides it, it goes to the first row, which
        becomes the selection.
        """
        current = self.order[self.cursor] if self.order else None
        if sort:
            keys = self._sort_keys(self.sort.column)
            self._sorted = sorted(range(len(self.overview)), key=keys.__getitem__, reverse=self.sort.reverse)
        self.order = self._kept(self._sorted)
        self._rows = None
        self.columns = self._make_columns()
        self.rows_changed()
        row = self.row_of(current) if current is not None else None
        if row is not None:
            self.move_cursor(row, notify=False)
        elif self.order:
            self.row_highlighted.publish(0)

    def _kept(self, order: list[int]) -> list[int]:
        """The rows of `order` the filter keeps."""
        words = self.query.lower().split()
        if not words:
            return order
        functions, names = self.overview.functions, self._lowered_names()
        for word in words:
            test = FILTER_WORDS.get(word)
            if test is not None:
                order = [i for i in order if test(functions[i])]
            elif word == PROBLEMS:
                order = [i for i in order if functions[i].broken or i in self.problems]
            else:
                order = [i for i in order if word in names[i]]
        return order

    def _lowered_names(self) -> Sequence[str]:
        lowered = self._keys.get(SYMBOL)
        if lowered is None:
            lowered = self._keys[SYMBOL] = [name.lower() for name in self.names]
        return lowered  # type: ignore[return-value]

    def _sort_keys(self, column: int) -> Sequence[object]:
        """Column `column`'s value for each FDE, as it sorts (made once a column)."""
        keys = self._keys.get(column)
        if keys is not None:
            return keys
        o = self.overview
        spec = COLUMNS[column]
        if spec.field:
            keys = o.column(spec.field)
        elif spec.title == "#":
            keys = range(len(o))
        elif spec.title == "end":
            keys = [(f.start + f.size) & ADDRESS_MASK for f in o.functions]
        elif spec.title == "symbol":
            keys = self._lowered_names()
        elif spec.title == "frame":  # a function without a CFA before every other
            keys = [-math.inf if frame is None else frame for frame in o.column("frame")]
        else:
            keys = [note(f, self.problems.get(i)) for i, f in enumerate(o.functions)]
        self._keys[column] = keys
        return keys

    # ------------------------------------------------------------------ columns

    def header_clicked(self, column: int) -> None:
        """A click on a title sorts by that column; on the sorted one, reverses."""
        self.sort_by(column, not self.sort.reverse if column == self.sort.column else False)

    def _measure(self) -> list[int]:
        """The widest value of each column, from the overview (the symbol column's, when the names come)."""
        o = self.overview
        functions = o.functions
        if not functions:
            return [0] * len(COLUMNS)
        starts, sizes = o.column("start"), o.column("size")
        ends = ((start + size) & ADDRESS_MASK for start, size in zip(starts, sizes, strict=True))
        frames = [f for f in o.column("frame") if f is not None]
        return [
            len(str(len(o) - 1)),
            len(f"{max(starts):#x}"),
            len(f"{max(ends):#x}"),
            len(str(max(sizes))),
            max(map(len, self.names)),
            len(str(max(o.column("num_fres")))),
            max((len(str(min(frames))), len(str(max(frames))))) if frames else 0,
            max(len(describe.FRE_TYPE_NAMES.get(t, str(t))) for t in set(o.column("fre_type"))),
            max(len(describe.PC_TYPE_NAMES.get(t, str(t))) for t in set(o.column("pc_type"))),
            max(len(describe.PAUTH_KEY_NAMES.get(k, "?")) for k in set(o.column("pauth_key"))),
            max(len(note(f, self.problems.get(i))) for i, f in enumerate(functions)),
        ]

    def _make_columns(self) -> list[Column]:
        """Each column as wide as its title and its widest value; the title of the column the rows
        are sorted by, unless they are in FDE order, has an arrow."""
        arrow = "" if self.sort == Sort(0) else "▼" if self.sort.reverse else "▲"
        columns = []
        for i, (spec, width) in enumerate(zip(COLUMNS, self._value_widths, strict=True)):
            title = spec.title + (arrow if i == self.sort.column else "")
            yields_to = SYMBOL_AT_LEAST if i == SYMBOL else 0
            columns.append(Column(title, max(len(title), width), spec.right, yields_to))
        return columns


def _frame_text(frame: int | None) -> str:
    """`48`; `var` for a frame whose CFA comes from FP (alloca, VLAs): its size is not in the rules."""
    if frame is None:
        return ""
    return VARIABLE if getattr(frame, "variable", False) else str(frame)
