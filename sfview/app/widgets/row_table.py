"""`RowTable`: a read-only table with a row cursor, drawn with the Line API.

Textual's `DataTable` measures every cell when rows are added and re-measures
on idle, which costs a second layout and frame each time its rows change; it
also cannot hold 40,000 rows (a second to fill, ten to show). This table asks
its subclass for a row's cells only when that row is drawn, has fixed column
widths (one column may take the width that is left), and keeps a fixed
header line on top. The FDE and FRE tables are both built on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.signal import Signal
from textual.strip import Strip

__all__ = ["Column", "RowTable"]

GAP = " "


@dataclass(frozen=True)
class Column:
    title: str
    width: int
    right: bool = False
    """Right-aligned (numbers), else left-aligned."""
    flex_to: int = 0
    """If set, the column grows up to this width with the table's."""


def _fit(text: str, width: int, right: bool) -> str:
    """`text` padded to `width` cells, or cut with an ellipsis (the texts are ASCII)."""
    if len(text) > width:
        return text[: max(width - 1, 0)] + "…"
    return text.rjust(width) if right else text.ljust(width)


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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cursor = 0
        self._styles: _Styles | None = None
        self.columns: list[Column] = []
        """Set by the subclass."""
        self.row_highlighted: Signal[int] = Signal(self, "row-highlighted")
        """Published with the row's index when the cursor moves to it (see `move_cursor`).

        A signal, not a message: a subscriber told at once can update the other
        panes in the same frame; a message bubbling up to the app arrives after
        the table has been repainted, and the rest follows a frame or two later.
        """

    # ------------------------------------------------------------------ what subclasses say

    @property
    def row_count(self) -> int:
        raise NotImplementedError

    def row_cells(self, index: int) -> tuple[str, ...]:
        """The texts of row `index`, one per column."""
        raise NotImplementedError

    def row_is_error(self, index: int) -> bool:
        """Whether row `index` shows something that could not be decoded."""
        return False

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

        Returns whether the table changed size. The virtual size is only set
        when it changes: setting it means a new layout.
        """
        self._cursor = 0
        size = Size(self._line_width(), self.row_count + 1)  # + the header line
        resized = size != self.virtual_size
        if resized:
            self.virtual_size = size
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()
        return resized

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """With `height: auto`, every row and the header."""
        return self.row_count + 1

    # ------------------------------------------------------------------ lines

    def _line_width(self, width: int | None = None) -> int:
        """Width of a line when the table is `width` wide (None: as narrow as it gets)."""
        fixed = sum(c.width for c in self.columns) + len(GAP) * (len(self.columns) - 1)
        if width is None:
            return fixed
        slack = max(0, width - fixed)
        return fixed + sum(min(slack, c.flex_to - c.width) for c in self.columns if c.flex_to)

    def _line(self, cells: tuple[str, ...], width: int) -> str:
        slack = max(0, width - self._line_width())
        parts = []
        for column, text in zip(self.columns, cells, strict=True):
            grow = min(slack, column.flex_to - column.width) if column.flex_to else 0
            slack -= grow
            parts.append(_fit(text, column.width + grow, column.right))
        return GAP.join(parts)

    def on_mount(self) -> None:
        self.virtual_size = Size(self._line_width(), self.row_count + 1)

    def on_resize(self, event: events.Resize) -> None:
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

    def render_line(self, y: int) -> Strip:
        """Screen line 0 is the header; line `y` shows row `scroll_y + y - 1`."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        styles = self._get_styles()
        if y == 0:
            text = self._line(tuple(c.title for c in self.columns), width)
            style = styles.header
        else:
            index = scroll_y + y - 1
            if index >= self.row_count:
                return Strip.blank(width, styles.base)
            text = self._line(self.row_cells(index), width)
            error = self.row_is_error(index)
            if index == self._cursor:
                style = styles.cursor_error if error else styles.cursor
            else:
                style = styles.error if error else styles.base
        strip = Strip([Segment(text, style)], len(text))
        return strip.crop_extend(scroll_x, scroll_x + width, style if y == 0 else styles.base)

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
        """A click on a row puts the cursor there."""
        region = self.scrollable_content_region
        y = event.screen_y - region.y
        if region.contains(event.screen_x, event.screen_y) and y >= 1:
            event.stop()
            self.focus()
            self.move_cursor(self.scroll_offset.y + y - 1)

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
