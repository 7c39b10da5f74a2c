"""`TableStack`: the FDE table over the FRE table, sharing the height by what they hold.

Fixed proportions waste the screen one way or the other: nine functions
leave most of a tall FDE table empty, and a function of sixty rows gets six
lines in a short FRE table. Each table asks for its rows (and its header);
when both fit, each gets what it asks and the FRE table the rest; else the
one that asks less gets what it asks, up to half, and the other the rest.
The FRE table asks for the rows of the section's biggest function, not the
shown one's (`RowTable.rows_wanted`): the shares stay put from one function
to the next, where following each function's rows laid out the whole screen
on nearly every move (36 layouts in 40 `down`s at 1,000,000 functions).

The stack is a container of its own, so that whatever else its tab shows (a
filter line, notes under the rows) is laid out first: its size is then
exactly the two tables', and a `Resize` tells it when that changes.
"""

from __future__ import annotations

from textual import events
from textual.containers import Vertical
from textual.widget import Widget

from sfview.app.widgets.row_table import RowTable

__all__ = ["TableStack", "share_height"]


def share_height(total: int, first: int, second: int) -> int:
    """Lines for the first of two panes stacked in `total` lines, which want `first` and `second`."""
    if first + second <= total:
        return first
    half = total // 2
    if second <= half:
        return total - second
    if first <= half:
        return first
    return total - half


def wanted(table: RowTable) -> int:
    """Lines a table would fill: its rows, its header, its border, a horizontal scrollbar if it needs one."""
    scrollbar = table.styles.scrollbar_size_horizontal if table.virtual_size.width > table.view_width else 0
    return table.rows_wanted + 1 + table.styles.gutter.height + scrollbar


class TableStack(Vertical):
    """`above` takes the lines `share_height` gives it, `below` (`height: 1fr`) the rest.

    `alternate`, if given, can take `below`'s place (`swap`): the instructions in place of the rows.
    It asks for all the height whatever it holds, so that it keeps one share from one function to the
    next (half, unless the upper table asks less): the number of instructions changes with every
    function, and a new share each time would lay out the whole screen on every `n`.
    """

    def __init__(
        self, above: RowTable, below: RowTable, alternate: RowTable | None = None, *, id: str | None = None
    ) -> None:
        super().__init__(above, below, *([alternate] if alternate is not None else []), id=id)
        self.above = above
        self.below = below
        self.alternate = alternate
        self._other = alternate

    def swap(self) -> RowTable:
        """Show the alternate table in the lower place, or the first one again; returns the one now shown."""
        if self._other is None:
            return self.below
        shown, self._other = self._other, self.below
        self._other.display = False
        shown.display = True
        self.below = shown
        self.share()
        return shown

    def on_mount(self) -> None:
        self.watch(self.screen, "maximized", self._zoomed, init=False)

    def on_resize(self, event: events.Resize) -> None:
        self.share()

    def _zoomed(self, widget: Widget | None) -> None:
        """A table zoomed to the whole screen takes its height from the stylesheet (all of it), not its share."""
        if widget is self.above:
            self.above.styles.height = None
        else:
            self.share()

    def share(self) -> None:
        """Give the upper table its share of the height, for the rows both tables hold now."""
        total = self.size.height
        if total > 0 and self.screen.maximized is not self.above:
            below = total if self.below is self.alternate else wanted(self.below)
            height = share_height(total, wanted(self.above), below)
            if self.above.styles.height is None or self.above.styles.height.value != height:
                self.above.styles.height = height
