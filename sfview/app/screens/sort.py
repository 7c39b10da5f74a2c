"""`SortPicker`: `S` asks which column to sort the functions by, answered with one key.

`S` went to the next column at each press: six presses to sort by frame size,
past columns nobody sorts by. The picker lists every column with its key (its
position: `6` for frame; `n` for notes, the eleventh), the current one
highlighted; one key, or `enter` on a line, sorts.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from sfview.app.widgets.fde_table import COLUMNS

__all__ = ["SORT_KEYS", "SortPicker"]

SORT_KEYS = tuple(str(i) if i < 10 else COLUMNS[i].title[0] for i in range(len(COLUMNS)))
"""The key that picks each column of `COLUMNS`: its position, past 9 its title's first letter."""


class SortPicker(ModalScreen[int | None]):
    """Pick the column the functions are sorted by: its key, or `enter` on its line (escape: no change)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, current: int) -> None:
        super().__init__(classes="goto", id="sort-picker")
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="goto-dialog") as dialog:
            dialog.border_title = "Sort the functions by"
            yield Label("a column's key, or enter (R reverses after; escape: as they are)", classes="goto-hint")
            yield OptionList(
                *(Option(f"{key}  {spec.title}" + ("  (FDE order)" if i == 0 else "")) for i, (key, spec) in
                  enumerate(zip(SORT_KEYS, COLUMNS, strict=True))),
                id="goto-matches",
            )  # fmt: skip

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = self.current
        options.focus()

    def on_key(self, event: events.Key) -> None:
        if event.character in SORT_KEYS:
            event.stop()
            self.dismiss(SORT_KEYS.index(event.character))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)
