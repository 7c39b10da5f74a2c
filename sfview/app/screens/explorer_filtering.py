"""Sorting and filtering the functions in the explorer.

A mixin of `ExplorerScreen`: the FDE table sorts (`S` by the next column, `R`
the other way, or a click on a title) and filters (`/`) the functions; the
selection always shows in it (choosing, elsewhere, a function the filter
hides clears the filter), and a sort selects the top row, the answer.

The focus moves at once (`Screen.set_focus`), not after the next frame as
`Widget.focus` moves it: the footer's keys (the letters' go while the filter
line has the focus) then change in the frame that shows the rest, not in
a frame of their own, which laid out and drew the screen once more (on a
million functions, `enter` showed its footer 50 ms after the key).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import messages
from textual.widgets import Input

from sfview.app.widgets.fde_table import COLUMNS

if TYPE_CHECKING:
    from sfview.app.screens.explorer import ExplorerScreen

    _Base = ExplorerScreen
else:
    _Base = object

__all__ = ["Filtering"]


class Filtering(_Base):
    """The filter line (`/`) and the sort keys (`S`, `R`) of the FDE table."""

    def action_filter(self) -> None:
        """The filter line, to type in (on the Functions tab)."""
        if self.section is None:
            return
        self.tabs.active = "functions"
        self.set_focus(self.filter_line)

    def _filter_typed(self, value: str) -> None:
        """The filter line's text changed: the rows filtered in the handling of the key that changed it, not
        on the line's `Changed` message (see `FilterLine`), so that the letter and the rows it keeps are laid
        out once, in one frame. A text set by `_filter` itself is the table's query already: nothing to do."""
        if value != self.fde_table.query:
            self._filter(value)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        """`enter`: back to the table, the filter kept (the line shows it)."""
        if message.input is self.filter_line:
            self.set_focus(self.fde_table)

    def action_clear_filter(self) -> None:
        """`escape`: every function again, the filter line emptied and left."""
        if self.section is None or not (self.fde_table.filtered or self.focused is self.filter_line):
            return
        self._clear_filter()
        self.set_focus(self.fde_table)

    def _clear_filter(self) -> None:
        """Every function again, the filter line emptied, drawn in the next frame with the header's count and
        the footer's keys. Each widget tells the screen it changed when its own messages are next handled, and
        at a million functions the header's and the line's came after the frame (the layout that the rows
        brought back ask for): 30 ms later in tmux. Drawing the whole screen again after the key caught them,
        in a second frame when there was a layout: 5 ms more of `escape` in tmux. So the screen is told here."""
        self._filter("")
        for widget in (self.summary, self.filter_line, self.footer):
            self.post_message(messages.Update(widget))

    def _filter(self, query: str) -> None:
        """The FDE table keeps what `query` asks for (the line shows it), the summary counts it."""
        waiting = not self.fde_table.filter(query)
        if self.filter_line.value != query:  # after the table took the query: `_filter_typed` has nothing to do
            with self.filter_line.prevent(Input.Changed):
                self.filter_line.value = query
        if waiting and self.overview.ready:  # a sort waits for its column's order: the rows are kept meanwhile
            self._say_sort_waits()
        elif waiting:
            self._status(f"working… the filter applies once every function is read ({self._progress_text()})")
        self.summary.counts_changed()
        self.tables.share()

    def action_sort_next(self) -> None:
        """Sort the FDE table by the next column (after the last, by index again)."""
        if self.section is not None:
            self.sort_functions((self.fde_table.sort.column + 1) % len(COLUMNS))

    def action_sort_reverse(self) -> None:
        if self.section is not None:
            sort = self.fde_table.sort
            self.sort_functions(sort.column, not sort.reverse)

    def sort_functions(self, column: int, reverse: bool = False) -> None:
        """The FDE table sorted by column `column` (an index in `COLUMNS`), the first row selected (the
        largest frame, the most rows: what was asked), the status line saying so."""
        if self.section is not None:
            if not self.fde_table.sort_by(column, reverse):
                if self.overview.ready:
                    self.sort_asked = True
                    self._say_sort_waits()
                    self.summary.counts_changed()
                else:
                    self._status(f"working… the functions sort once every one is read ({self._progress_text()})")
                return
            self.sort_asked = False
            self.sorted_shown()

    def sorted_shown(self) -> None:
        """The FDE table was sorted: its first row (the largest frame, the most rows) selected, and said."""
        if self.fde_table.row_count:  # the top rows are the answer: the selection goes there
            self.fde_table.move_cursor(0, notify=False)
            self._fde_highlighted(0)
        self._say_sort()

    def _progress_text(self) -> str:
        """How far the overview is: `37% read`."""
        return f"{self.overview.done * 100 // max(len(self.overview), 1)}% read"

    def _say_sort_waits(self) -> None:
        title = COLUMNS[self.fde_table.sort.column].title
        self._status(f"working… the functions sort by {title} once its order is made")

    def _say_sort(self) -> None:
        sort = self.fde_table.sort
        order = "descending" if sort.reverse else "ascending"
        self._status(f"functions by {COLUMNS[sort.column].title}, {order} (S: next column, R: reverse)")
