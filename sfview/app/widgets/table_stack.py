"""`TableStack`: the FDE table over the FRE table, sharing the height by what they hold.

Fixed proportions waste the screen one way or the other: nine functions
leave most of a tall FDE table empty, and a function of sixty rows gets six
lines in a short FRE table. Each table asks for its rows (and its header);
when both fit, each gets what it asks and the FRE table the rest; else the
one that asks less gets what it asks, up to half, and the other the rest.
The FRE table asks for the rows of the section's biggest function, not the
shown one's (`RowTable.rows_wanted`): the shares stay put from one function
to the next, where following each function's rows would lay out the whole
screen on nearly every move.

The stack is a container of its own, so that whatever else its tab shows (a
filter line, notes under the rows) is laid out first: its size is then
exactly the two tables'. It shares a new size as it is arranged in it
(`arrange`), in the same layout: shared after the `Resize`, the filter line
opened or closed above would cost a second layout of the screen.
"""

from __future__ import annotations

from textual.containers import Vertical
from textual.css.scalar import Scalar
from textual.geometry import Region, Size
from textual.layout import DockArrangeResult
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

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """The tables arranged in `size`, the upper one's share of it set first: without a refresh, as the
        stack is being laid out now (a refresh would ask for one more layout, what this spares)."""
        height = self._share_of(size.height)
        if height is not None:
            self.above.styles.set_rule("height", Scalar.from_number(height))
        arranged = super().arrange(size, optimal)
        if not optimal:
            self._fit(size, arranged)
        return arranged

    def _fit(self, size: Size, arranged: DockArrangeResult) -> None:
        """What the layout being made will find, set before it does, so that it asks for no other: each table's
        scrollbars and virtual size for its new size (`RowTable.fit`), and the stack's own virtual size (its
        size, or what its tables cover). Textual lays the screen out again for any widget whose virtual size a
        layout changed (`Widget._size_updated`): the stack's, whenever the filter line opens or closes above it.
        """
        for placement in arranged.placements:
            if isinstance(placement.widget, RowTable):
                placement.widget.fit(placement.region.size)
        self.set_reactive(Widget.virtual_size, Region(0, 0, *size).union(arranged.total_region).size)

    def _zoomed(self, widget: Widget | None) -> None:
        """A table zoomed to the whole screen takes its height from the stylesheet (all of it), not its share."""
        if widget is self.above:
            self.above.styles.height = None
        else:
            self.share()

    def share(self) -> None:
        """Give the upper table its share of the height, for the rows both tables hold now."""
        height = self._share_of(self.size.height)
        if height is not None:
            self.above.styles.height = height

    def _share_of(self, total: int) -> int | None:
        """The upper table's lines in `total`, for the rows both tables hold now; None if it has them already,
        or takes its height from the stylesheet (zoomed to the whole screen)."""
        if total <= 0 or self.screen.maximized is self.above:
            return None
        below = total if self.below is self.alternate else wanted(self.below)
        height = share_height(total, wanted(self.above), below)
        current = self.above.styles.height
        return None if current is not None and current == Scalar.from_number(height) else height
