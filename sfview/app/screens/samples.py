"""`SamplesScreen`: where SFrame parts from DWARF in a profile (`sfview perf FILE --app`), a row a place.

Each row is a place `sfview perf` reports (the function and file of the frame
whose caller SFrame misses, and why), with its samples and one sample's
number; `S` sorts by the next column (or click a column's title), `R`
reverses, `enter` opens the row's sample in the unwinding debugger, `g` any
sample by its number. `escape` in the debugger comes back here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import ClassVar

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from sfview.app.screens.goto import Prompt
from sfview.app.widgets.footer import KeyFooter
from sfview.app.widgets.row_table import cells, cut
from sfview.inputs.numbers import quoted
from sfview.output.safe_text import pictured
from sfview.profiling.coverage import Place, Seen

__all__ = ["SamplesScreen"]

COLUMNS = ("samples", "sample", "function", "file", "why")
"""The table's columns, in the order `S` sorts by them."""
FUNCTION_AT_LEAST = 24
"""The cells a function's name keeps however narrow the screen (or all of a shorter name)."""


class SamplesScreen(Screen[None]):
    """The places where SFrame's stack parts from DWARF's, and a way into each sample."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open in the debugger"),
        Binding("g", "goto", "Sample by number"),
        Binding("S", "sort", "Sort"),
        Binding("R", "reverse", "Reverse"),
    ]

    def __init__(self, title: str, places: list[tuple[Place, Seen]], open_sample: Callable[[int], None]) -> None:
        super().__init__(id="samples")
        self.title_line = title
        self.places = places
        self.open_sample = open_sample
        self.sort_column = 0
        self.reverse = True
        """The most samples first, to begin with."""

    def compose(self) -> ComposeResult:
        yield Static(self.title_line, id="samples-title", markup=False)
        yield DataTable(id="samples-table", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        rows = [
            (str(seen.count), str(seen.sample), place.function, os.path.basename(place.file), place.reason.value)
            for place, seen in self.places
        ]
        widest = [max((cells(row[i]) for row in rows), default=len(name)) for i, name in enumerate(COLUMNS)]
        widest = [max(width, len(name)) for width, name in zip(widest, COLUMNS, strict=True)]
        others = sum(widest) - widest[2] + 2 * len(COLUMNS) * table.cell_padding + table.styles.scrollbar_size_vertical
        room = max(min(widest[2], FUNCTION_AT_LEAST), self.app.size.width - others)
        for count, sample, function, file, why in rows:
            # escaped: as markup, `[unknown]` (and C++'s `operator[]`) would be read as a style's tag and vanish
            # cut in the middle: a function inlined into another ends with the other's name
            table.add_row(int(count), int(sample), escape(cut(pictured(function), room)), escape(pictured(file)), why)
        self._sort()
        table.focus()

    def _sort(self) -> None:
        self.query_one(DataTable).sort(COLUMNS[self.sort_column], reverse=self.reverse)

    def action_sort(self) -> None:
        """By the next column (numbers from the most, words from A)."""
        self.sort_column = (self.sort_column + 1) % len(COLUMNS)
        self.reverse = self.sort_column == 0
        self._sort()

    def action_reverse(self) -> None:
        self.reverse = not self.reverse
        self._sort()

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self.sort_column = COLUMNS.index(str(event.column_key.value))
        self.reverse = self.sort_column == 0
        self._sort()

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            self.open_sample(int(table.get_row_at(table.cursor_row)[1]))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_goto(self) -> None:
        def chosen(number: int | None) -> None:
            if number is not None:
                self.open_sample(number)

        prompt = Prompt("Sample", "a sample's number, as the report gives it (#12: 12)", "12", _sample_number)
        self.app.push_screen(prompt, chosen)


def _sample_number(text: str) -> int | str:
    """A sample's number (decimal, as the report prints it), or why not."""
    text = text.strip().lstrip("#")
    if text.isascii() and text.isdigit() and len(text) <= 19:  # `int` takes neither "²" nor 5,000 digits
        return int(text)
    return f"{quoted(text)} is not a sample's number"
