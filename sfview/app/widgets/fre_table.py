"""`FreTable`: the frame row entries (FREs) of the selected function.

Its rows change with every function chosen; a `RowTable` takes new rows
without measuring them, and without a new layout: its height is its share of
the stack, which follows the section's biggest function, not this one. Its
columns are as wide as the widest value in the whole section (every distinct
rule of its rows, from the `Overview`), so that they stay put from one
function to the next; the bytes, which the hex pane highlights anyway, are
left out when the table is too narrow for them.
"""

from __future__ import annotations

from collections.abc import Callable

from sfview import rule_notation
from sfview.app.consumer_marks import CELLS, ConsumerMarks, column_title
from sfview.app.widgets.row_table import Column, RowTable
from sfview.sframe.bulk.overview import Overview
from sfview.sframe.model import terms
from sfview.sframe.model.records import OFFSET_SIZES
from sfview.sframe.model.section import Function, Row, Section

__all__ = ["FreTable"]

PCMASK_MARK = " [m]"
"""After a PCMASK function's row address: the row applies at that offset of every repeated block."""
MANGLED = {True: "yes", False: "no"}
"""Whether the row's return address is signed (pointer authentication)."""
DWARF_AT_LEAST = 10
"""The DWARF column gives up width down to this many cells, when the table is narrow."""


class FreTable(RowTable):
    """One row per FRE: where it starts, its CFA/FP/RA rules, how it is encoded, its bytes."""

    size_lays_out = False  # its share of the stack follows the section's biggest function (`rows_wanted`)

    def __init__(self, section: Section, overview: Overview, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.section = section
        self.function: Function | None = None
        self.problems: set[tuple[int, int]] = set()
        """The rows (FDE index, FRE index) a check of the section found an error or a warning in: marked."""
        self.dwarf: Callable[[Function, Row], str] | None = None
        """What DWARF CFI says at a row's address, beside it (`=` when it agrees); None: no such column."""
        self._dwarf_width = len("DWARF")
        self.consumers: list[ConsumerMarks] = []
        """The consumers marked: what each one's lookups do at each row's PCs, in a column named after it."""
        self.measure(overview)

    def measure(self, overview: Overview) -> None:
        """The columns as wide as the section's widest values, as far as `overview` knows them (again,
        once it is whole)."""
        self._fixed = self._measure(overview)
        self._most_rows = overview.most_rows
        self.columns = self._make_columns()

    def _measure(self, overview: Overview) -> list[Column]:
        """The columns but DWARF's, each as wide as its title and the widest value of the section."""
        section = self.section
        rules = overview.rules
        pcmask = overview.pcmask_count > 0
        return [
            Column.fitting("#", [str(max(overview.most_rows - 1, 0))], right=True),
            Column.fitting("start", [f"{overview.last_address:#x}" + (PCMASK_MARK if pcmask else "")]),
            Column.fitting("CFA", (rule_notation.cfa_text(section, cfa) for cfa, _, _ in rules)),
            Column.fitting("FP", (rule_notation.saved_text(section, fp) for _, fp, _ in rules)),
            Column.fitting("RA", (rule_notation.saved_text(section, ra) for _, _, ra in rules)),
            Column.fitting("base", terms.BASE_REG_NAMES.values()),
            Column.fitting("off.size", (str(size) for size in OFFSET_SIZES.values()), right=True),
            Column.fitting("mangled", MANGLED.values()),
            Column.fitting("bytes", [" ".join(["00"] * overview.widest_row)], optional=True),
        ]

    def _make_columns(self) -> list[Column]:
        """The section's columns, and DWARF's after the rules while it is shown."""
        rules = self._fixed[:5]
        if self.dwarf is not None:
            rules = [*rules, Column("DWARF", self._dwarf_width, yields_to=DWARF_AT_LEAST)]
        rules = [*rules, *(Column.fitting(column_title(marks.name), CELLS) for marks in self.consumers)]
        return [*rules, *self._fixed[5:]]

    @property
    def row_count(self) -> int:
        return len(self.function.rows) if self.function is not None else 0

    def row_cells(self, index: int) -> tuple[str, ...]:
        func = self.function
        assert func is not None
        row = func.rows[index]
        return (
            str(row.index),
            f"{row.address:#x}" + (PCMASK_MARK if func.pcmask else ""),
            rule_notation.cfa_text(func.section, row.cfa),
            rule_notation.saved_text(func.section, row.fp),
            rule_notation.saved_text(func.section, row.ra),
            *([self.dwarf(func, row)] if self.dwarf is not None else []),
            *(marks.mark(func, row) for marks in self.consumers),
            terms.BASE_REG_NAMES[row.base_reg],
            str(row.offset_size),
            MANGLED[row.mangled_ra],
            func.section.data[row.span.start : row.span.end].hex(" "),
        )

    @property
    def rows_wanted(self) -> int:
        """The rows of the section's biggest function (of the sample, until the overview is whole): the
        same for every function, so that moving from one to the next does not share the height anew."""
        return self._most_rows

    def row_is_error(self, index: int) -> bool:
        """A row a check found wrong is drawn as an error (its problem is in the Problems tab)."""
        func = self.function
        return func is not None and (func.index, index) in self.problems

    def set_problems(self, problems: set[tuple[int, int]]) -> None:
        self.problems = problems
        self.refresh()

    def show_dwarf(self, dwarf: Callable[[Function, Row], str] | None) -> None:
        """Show (or, with None, hide) a column with DWARF's rules at each row's address."""
        self.dwarf = dwarf
        self._widen_dwarf()
        self.columns = self._make_columns()
        self.rows_changed()

    def show_consumers(self, consumers: list[ConsumerMarks]) -> None:
        """Show a column per consumer marked (none: no such column), each saying what its lookups do at the
        PCs of each row."""
        self.consumers = consumers
        self.columns = self._make_columns()
        self.rows_changed()

    def show_function(self, func: Function) -> bool:
        """Show `func`'s rows (decoding them if this is the first look), cursor on the first.

        Returns whether the table changed size (see `RowTable.rows_changed`).
        """
        if func is self.function:
            return False
        self.function = func
        if self._widen_dwarf():
            self.columns = self._make_columns()
        return self.rows_changed()

    def _widen_dwarf(self) -> bool:
        """Make the DWARF column as wide as this function's widest (it never narrows); whether it grew.

        DWARF's rules are worked out row by row, when shown: the section's widest is not known beforehand.
        """
        func = self.function
        if self.dwarf is None or func is None:
            return False
        widest = max((len(self.dwarf(func, row)) for row in func.rows), default=0)
        grew = widest > self._dwarf_width
        self._dwarf_width = max(widest, self._dwarf_width)
        return grew
