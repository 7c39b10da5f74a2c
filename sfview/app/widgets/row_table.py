"""`RowTable`: a read-only table with a row cursor, drawn with the Line API.

Textual's `DataTable` measures every cell when rows are added and re-measures
on idle, which costs a second layout and frame each time its rows change; it
also cannot hold tens of thousands of rows (far too slow to fill and show). This table asks
its subclass for a row's cells only when that row is drawn, and keeps a fixed
header line on top. The FDE and FRE tables are both built on it.

Its subclass sizes each column once, to its title and its widest value
(`Column.fitting`), from facts of the whole section rather than from the
cells, so that widths neither cost a pass over the rows nor change from one
function to the next. When the table is narrower than its columns, optional
columns (shown elsewhere too) are left out first, then the one column that
yields (a name) gives up width down to its minimum; no other value is ever
cut. Past that, the table scrolls sideways.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, NamedTuple

from rich.cells import cell_len, split_graphemes
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.css.styles import RenderStyles
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.signal import Signal
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["Column", "Cut", "RowTable", "cells", "cut"]

GAP = " "


class Cut(Enum):
    """Where a value too long for its cells loses characters (for an ellipsis)."""

    END = "end"
    """A number (`0x5555…`): a cut at the end never leaves a shorter number that reads as a real one."""
    MIDDLE = "middle"
    """An instruction, a rule: the start and the end kept, the middle dropped."""
    START = "start"
    """A place in the source (`at ../sysdeps/nptl/libc_start_call_main.h:58`): the end kept, the file and its
    line, which the directories before them matter less than."""
    NAME = "name"
    """A function's name: the argument list goes first (`geo::Vec<double>::norm(…) const`), then the middle,
    so that the start (the namespace) and the end (the function, an offset) stay: cut from the right,
    every method of a class read the same (`geo::detail::Vec<do…`)."""


@dataclass(frozen=True)
class Column:
    """One column of a `RowTable`: its title, its width, its alignment, and how it gives way when narrow."""

    title: str
    width: int
    """As wide as the title and the widest value."""
    right: bool = False
    """Right-aligned (numbers), else left-aligned."""
    yields_to: int = 0
    """If set, the column gives up width down to this when the table is too narrow (its values are cut)."""
    optional: bool = False
    """Left out when the table is too narrow for every column: what it shows is shown elsewhere too."""
    cut: Cut = Cut.MIDDLE
    """Where a yielding column's values lose characters."""

    @classmethod
    def fitting(
        cls, title: str, values: Iterable[str], *, right: bool = False, yields_to: int = 0, optional: bool = False
    ) -> Column:
        """A column as wide as `title` and the widest of `values`."""
        return cls(title, max(cells(title), max(map(cells, values), default=0)), right, yields_to, optional)


def cells(text: str) -> int:
    """The cells `text` takes on the screen, as Textual draws it (Rich's `cell_len`): a CJK character takes two,
    a combining mark none, so a name's length in characters is not its width. Printable ASCII at once."""
    return len(text) if text.isascii() and text.isprintable() else cell_len(text)


def _head(text: str, width: int) -> str:
    """The start of `text` that fits `width` cells, padded to them (a wide character that does not fit is
    left out whole, and a space stands for its half)."""
    if text.isascii() and text.isprintable():
        return text[:width]
    spans, _ = split_graphemes(text)
    taken = 0
    for start, _, size in spans:
        if taken + size > width:
            return text[:start] + " " * (width - taken)
        taken += size
    return text + " " * (width - taken)


def _tail(text: str, width: int) -> str:
    """The end of `text` that fits `width` cells, padded to them as `_head` pads."""
    if width <= 0:
        return ""
    if text.isascii() and text.isprintable():
        return text[-width:]
    spans, _ = split_graphemes(text)
    taken = 0
    for _, end, size in reversed(spans):
        if taken + size > width:
            return " " * (width - taken) + text[end:]
        taken += size
    return " " * (width - taken) + text


def cut(text: str, width: int, how: Cut = Cut.MIDDLE) -> str:
    """`text` in at most `width` cells: whole, or cut with an ellipsis as `how` says (by cells, not characters:
    a name may be CJK, or carry combining marks)."""
    if cells(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    if how is Cut.END:
        return _head(text, width - 1) + "…"
    if how is Cut.START:
        return "…" + _tail(text, width - 1)
    if how is Cut.NAME:
        close = text.rfind(")")
        opened, depth = close, 0
        while opened >= 0:
            depth += {")": 1, "(": -1}.get(text[opened], 0)
            if depth == 0:
                break
            opened -= 1
        if opened >= 0 and close - opened > 2:
            return cut(text[: opened + 1] + "…" + text[close:], width)
    head = (width - 1) // 3
    return _head(text, head) + "…" + _tail(text, width - 1 - head)


def _fit(text: str, width: int, column: Column) -> str:
    """`text` padded to `width` cells, or cut with an ellipsis as the column says (only a yielding
    column's values, names and instructions, are ever cut)."""
    taken = cells(text)
    if taken > width:
        return cut(text, width, column.cut)
    pad = " " * (width - taken)
    return pad + text if column.right else text + pad


def _line_width(widths: list[int]) -> int:
    """Cells a line takes with columns that wide (0: left out), gaps included."""
    shown = [w for w in widths if w]
    return sum(shown) + len(GAP) * max(len(shown) - 1, 0)


def _scrollbars(styles: RenderStyles, virtual: Size, container: Size) -> tuple[bool, bool]:
    """Whether a widget of `styles`, `container` (its size less border and padding) and `virtual` shows its
    vertical and horizontal scrollbars: Textual 8's rules (`Widget._refresh_scrollbars`), for `RowTable.fit`."""
    overflow_x, overflow_y = styles.overflow_x, styles.overflow_y
    vertical = overflow_y == "scroll" or (overflow_y == "auto" and virtual.height > container.height)
    horizontal = overflow_x == "scroll" or (overflow_x == "auto" and virtual.width > container.width)
    if overflow_x == "auto" and vertical and not horizontal:  # the vertical one narrows the lines
        horizontal = virtual.width > container.width - styles.scrollbar_size_vertical
    if overflow_y == "auto" and horizontal and not vertical:  # the horizontal one takes a line
        vertical = virtual.height > container.height - styles.scrollbar_size_horizontal
    return vertical, horizontal


class _Styles(NamedTuple):
    base: Style
    header: Style
    error: Style
    cursor: Style
    cursor_error: Style


class RowTable(ScrollView, can_focus=True):
    """Rows of cells under a fixed header; subclasses say how many rows, and what is in one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Previous row", show=False),
        Binding("down", "cursor_down", "Next row", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First row", show=False),
        Binding("end", "last", "Last row", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "row-table--header",
        "row-table--cursor",
        "row-table--error",
    }

    DEFAULT_CSS = """
    RowTable {
        background: $surface;
        & > .row-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .row-table--cursor { background: $block-cursor-blurred-background; }
        &:focus > .row-table--cursor {
            background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold;
        }
        & > .row-table--error { color: $error; }
    }
    """

    size_lays_out: ClassVar[bool] = True
    """Whether a new virtual size lays the screen out, as Textual does: a table whose height follows
    its rows (its share of a stack) is laid out again anyway. A table whose height never does (the
    instructions) sets False: then only its scrollbars follow (`_scroll_update`, what Textual's own
    resize does; a scrollbar shown or hidden still lays out), and a new function under `n` is a
    repaint, not a layout of the whole screen (slower for the FRE table)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cursor = 0
        self._styles: _Styles | None = None
        self._columns: list[Column] = []
        self._widths: dict[int, list[int]] = {}
        self.title_colours: dict[str, str] = {}
        """Column title → its colour (`colour_titles`); empty: the header in one style."""
        self.row_highlighted: Signal[int] = Signal(self, "row-highlighted")
        """Published with the row's index when the cursor moves to it (see `move_cursor`).

        A signal, not a message: a subscriber told at once can update the other
        panes in the same frame; a message bubbling up to the app arrives after
        the table has been repainted, and the rest follows a frame or two later.
        """

    # ------------------------------------------------------------------ what subclasses say

    @property
    def row_count(self) -> int:
        """How many rows the table holds."""
        raise NotImplementedError

    def row_cells(self, index: int) -> tuple[str, ...]:
        """The texts of row `index`, one per column."""
        raise NotImplementedError

    def row_is_error(self, index: int) -> bool:
        """Whether row `index` shows something that could not be decoded."""
        return False

    @property
    def rows_wanted(self) -> int:
        """Rows the table asks room for in a stack (`TableStack`): all it holds. A table whose rows change
        with every selection asks for a figure that does not (`FreTable`), so that a move keeps the shares."""
        return self.row_count

    def header_clicked(self, column: int) -> None:
        """The title of column `column` was clicked."""

    # ------------------------------------------------------------------ columns

    @property
    def columns(self) -> list[Column]:
        return self._columns

    @columns.setter
    def columns(self, columns: list[Column]) -> None:
        """New columns (or new widths): laid out again, and drawn again."""
        self._columns = list(columns)
        self._widths.clear()
        if self.is_mounted:
            self._size_to_width()
            self.refresh()

    def widths(self, width: int) -> list[int]:
        """Each column's width when the table is `width` wide; 0 for a column left out."""
        widths = self._widths.get(width)
        if widths is None:
            widths = self._widths[width] = self._lay_out(width)
        return widths

    def _lay_out(self, width: int) -> list[int]:
        """Every column as wide as it wants; if that is too wide, without the optional ones, then with
        the yielding one narrower. What still does not fit scrolls sideways."""
        columns = self._columns
        widths = [c.width for c in columns]
        if _line_width(widths) > width:
            widths = [0 if c.optional else w for c, w in zip(columns, widths, strict=True)]
        excess = _line_width(widths) - width
        for i, column in enumerate(columns):
            if excess > 0 and column.yields_to and widths[i]:
                cut = min(excess, widths[i] - min(column.yields_to, widths[i]))
                widths[i] -= cut
                excess -= cut
        return widths

    def _size_to_width(self) -> bool:
        """The virtual size for the rows and the table's width (wider than the view only when even the
        narrowest layout is). Returns whether it changed, for the owner to re-share the height.

        See `size_lays_out` for how the new size is taken.
        """
        resized = False
        for _ in range(2):  # again if that showed or hid the vertical scrollbar: the lines' width changed
            width = self.view_width
            size = Size(_line_width(self.widths(width)), self.row_count + 1)  # + the header line
            if size == self.virtual_size:
                break
            resized = True
            if self.size_lays_out and self.display:  # a hidden table is laid out when it is shown
                self.virtual_size = size
            else:
                self.set_reactive(ScrollView.virtual_size, size)
                if self.display and self.is_mounted:
                    self._scroll_update(size)
                self.refresh()
            if self.view_width == width:
                break
        return resized

    def fit(self, size: Size) -> None:
        """Take now the scrollbars and the virtual size the table will have at `size`, the size the screen is
        being laid out with (see `TableStack.arrange`), without asking for another layout.

        Why: Textual decides a table's scrollbars after a layout, from the size that layout gave it
        (`Widget._refresh_scrollbars`); a scrollbar shown or hidden then lays the whole screen out again, and the
        lines' new width (the virtual size) once more. The filter's first letter on a big section, which leaves
        the FDE table its header line, would take three layouts of the screen so, `escape` as many.
        Decided here by Textual's own rules for the size coming, they are what Textual finds after the layout:
        it changes nothing, and asks for nothing.

        Relies on Textual 8's `show_vertical_scrollbar` and `show_horizontal_scrollbar` (reactives that lay out
        when set, hence `set_reactive`) and its rules for `overflow` (`auto`: a scrollbar when the virtual size
        exceeds the size; one shown narrows the other way); `tests/app/test_tables.py` checks that the layout that
        follows finds them unchanged.
        """
        styles = self.styles
        container = size - styles.gutter.totals
        rows = self.row_count + 1  # + the header line
        vertical = self.show_vertical_scrollbar
        for _ in range(2):  # again if the scrollbar decided changed the lines' width it was decided with
            view = container.width - (styles.scrollbar_size_vertical if vertical else 0)
            virtual = Size(_line_width(self.widths(view)), rows)
            shown = _scrollbars(styles, virtual, container)
            if shown[0] == vertical:
                break
            vertical = shown[0]
        self.set_reactive(ScrollView.virtual_size, virtual)
        self.set_reactive(ScrollView.show_vertical_scrollbar, shown[0])
        self.set_reactive(ScrollView.show_horizontal_scrollbar, shown[1])
        for bar, show in ((self._vertical_scrollbar, shown[0]), (self._horizontal_scrollbar, shown[1])):
            if bar is None:  # made by Textual when first shown (a layout more, once)
                continue
            bar.styles.set_rule("display", "block" if show else "none")  # as `_refresh_scrollbars` sets it
            if show:  # the virtual size the layout gives a scrollbar: the table's inner size (a new one lays out)
                bar.set_reactive(Widget.virtual_size, container)

    @property
    def view_width(self) -> int:
        """Cells a line shows: the table's width less its vertical scrollbar's (laid out to the whole
        width, the last column would go under the scrollbar, and a horizontal one would take a line for it)."""
        return self.scrollable_content_region.width

    # ------------------------------------------------------------------ public API

    @property
    def cursor(self) -> int:
        """Index of the row under the cursor."""
        return self._cursor

    def move_cursor(self, index: int, notify: bool = True) -> None:
        """Put the cursor on row `index` and scroll to it.

        `notify=False` is for following a selection made elsewhere, which must
        not echo back as a new selection; else `row_highlighted` is published.
        """
        if not self.row_count:
            return
        index = max(0, min(index, self.row_count - 1))
        old, self._cursor = self._cursor, index
        if index != old:
            self.refresh_line(old + 1)  # + the header line
            self.refresh_line(index + 1)
        self._scroll_cursor_into_view()
        if notify and index != old:
            self.row_highlighted.publish(index)

    def rows_changed(self) -> bool:
        """The rows are new: cursor back to the first, size and picture redone.

        Returns whether that lays the screen out again: the table changed size
        and its height follows its rows (`size_lays_out`). The virtual size is
        only set when it changes: setting it means a new layout.
        """
        self._cursor = 0
        resized = self._size_to_width()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()
        return resized and self.size_lays_out

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """With `height: auto`, every row and the header."""
        return self.row_count + 1

    # ------------------------------------------------------------------ lines

    def _line(self, cells: tuple[str, ...], widths: list[int]) -> str:
        return GAP.join(
            _fit(text, width, column) for column, text, width in zip(self._columns, cells, widths, strict=True) if width
        )

    def on_mount(self) -> None:
        self._size_to_width()

    def on_resize(self, event: events.Resize) -> None:
        self._size_to_width()
        self._scroll_cursor_into_view()

    def notify_style_update(self) -> None:
        """Styles changed (theme, focus): resolve them again on the next render."""
        super().notify_style_update()
        self._styles = None

    def _get_styles(self) -> _Styles:
        """The Rich style of every kind of line, resolved once per style change, not per line."""
        if self._styles is None:
            base = self.rich_style
            error = base + self.get_component_rich_style("row-table--error", partial=True)
            cursor = self.get_component_rich_style("row-table--cursor")
            header = self.get_component_rich_style("row-table--header")
            self._styles = _Styles(base, header, error, base + cursor, error + cursor)
        return self._styles

    def colour_titles(self, colours: Mapping[str, str]) -> None:
        """Each column's title in the colour given for it (`palette`: its field's kind); empty: none."""
        self.title_colours = dict(colours)
        self.refresh()

    def _coloured_header(self, widths: list[int], header: Style) -> Strip:
        segments: list[Segment] = []
        for column, width in zip(self._columns, widths, strict=True):
            if not width:
                continue
            if segments:
                segments.append(Segment(GAP, header))
            colour = self.title_colours.get(column.title)
            style = header + Style(color=colour) if colour else header
            segments.append(Segment(_fit(column.title, width, column), style))
        return Strip(segments)

    def render_line(self, y: int) -> Strip:
        """Screen line 0 is the header; line `y` shows row `scroll_y + y - 1`."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.view_width
        widths = self.widths(width)
        styles = self._get_styles()
        if y == 0 and self.title_colours:
            return self._coloured_header(widths, styles.header).crop_extend(scroll_x, scroll_x + width, styles.header)
        if y == 0:
            text = self._line(tuple(c.title for c in self._columns), widths)
            style = styles.header
        else:
            index = scroll_y + y - 1
            if index >= self.row_count:
                return Strip.blank(width, styles.base)
            text = self._line(self.row_cells(index), widths)
            error = self.row_is_error(index)
            if index == self._cursor:
                style = styles.cursor_error if error else styles.cursor
            else:
                style = styles.error if error else styles.base
        strip = Strip([Segment(text, style)], len(text))
        return strip.crop_extend(scroll_x, scroll_x + width, style)  # the header and the cursor span the width

    # ------------------------------------------------------------------ cursor and scrolling

    @property
    def _page_rows(self) -> int:
        """Rows in one screenful (the header takes a line)."""
        return max(1, self.scrollable_content_region.height - 1)

    def _scroll_cursor_into_view(self) -> None:
        """Scroll the least distance that shows the cursor's row below the header."""
        rows = self._page_rows
        top = self.scroll_offset.y
        if self._cursor < top:
            top = self._cursor
        elif self._cursor >= top + rows:
            top = self._cursor - rows + 1
        if top != self.scroll_offset.y:
            self.scroll_to(y=top, animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        """A click on a row puts the cursor there; one on a title tells the subclass (`header_clicked`)."""
        region = self.scrollable_content_region
        if not region.contains(event.screen_x, event.screen_y):
            return
        event.stop()
        self.focus()
        y = event.screen_y - region.y
        if y >= 1:
            self.move_cursor(self.scroll_offset.y + y - 1)
            return
        column = self.column_at(event.screen_x - region.x + self.scroll_offset.x)
        if column is not None:
            self.header_clicked(column)

    def column_at(self, x: int) -> int | None:
        """The column at `x` cells from the start of a line (a gap belongs to the column before it)."""
        left = 0
        for i, width in enumerate(self.widths(self.view_width)):
            if width:
                left += width + len(GAP)
                if x < left:
                    return i
        return None

    def action_cursor_up(self) -> None:
        self.move_cursor(self._cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self._cursor + 1)

    def action_page_up(self) -> None:
        self.scroll_to(y=self.scroll_offset.y - self._page_rows, animate=False, immediate=True)
        self.move_cursor(self._cursor - self._page_rows)

    def action_page_down(self) -> None:
        self.scroll_to(y=self.scroll_offset.y + self._page_rows, animate=False, immediate=True)
        self.move_cursor(self._cursor + self._page_rows)

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(self.row_count - 1)
