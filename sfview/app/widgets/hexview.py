"""`HexView`: a scrollable hex pane over the raw bytes of an SFrame section.

A section can be megabytes (40,000 functions is ~75,000 lines of 16 bytes), so the
widget uses Textual's Line API: it only ever formats the lines that are on screen,
and the whole document is described to the scrolling machinery by `virtual_size`.
Nothing proportional to the data size is built up front.

Each line looks like::

    000001d0  00000000000141a8  7f 45 4c 46 02 01 01 00  00 00 00 00 00 00 00 00  .ELF............

offset in the section, load address (`base_address` + offset), 16 bytes in hex with
an extra gap after 8, and the same bytes as ASCII (`.` for non-printables). A fixed
header line on top names the columns (`00 01 … 0f` over the bytes), so that a byte's
offset can be read off its column; it scrolls sideways with the lines, never down.

On top of the bytes the widget paints a one-byte cursor (keyboard and mouse driven)
and one highlighted range, which the explorer uses to show which bytes a decoded
structure came from; field boundaries inside the range alternate between two
shades so adjacent fields can be told apart.

It also finds bytes: `search` marks the first match at or after the cursor in a
colour of its own and puts the cursor on it; `n` and `N` go to the next and
previous match (wrapping round). `/` asks the screen for something to search for
(`SearchRequested`): what to type is the screen's business.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate
from typing import ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.signal import Signal
from textual.strip import Strip

__all__ = ["BYTES_PER_LINE", "HexView"]

BYTES_PER_LINE = 16
"""Bytes shown on one line, when the pane is wide enough for them (94 columns)."""
NARROW_BYTES_PER_LINE = 8
"""Bytes on one line of a narrower pane (80 columns): every column, ASCII included, still shows."""

_COLUMN_GAP = "  "
_ADDRESS_DIGITS = 16

# One translation table instead of a per-byte `chr`/`isprintable` test: printable ASCII
# stays, everything else becomes ".". Latin-1 decoding of the result is then exact.
_ASCII_TABLE = bytes(b if 0x20 <= b < 0x7F else ord(".") for b in range(256))

# Paint states of one byte cell. Ints (not an Enum) because they index style tuples
# in the hot path.
_PLAIN, _HIGHLIGHT, _HIGHLIGHT_ALT, _CURSOR, _MATCH, _PROBLEM = 0, 1, 2, 3, 4, 5

_OVERLAYS = ("hexview--highlight", "hexview--highlight-alt", "hexview--cursor", "hexview--match", "hexview--problem")
"""The component classes painted over a byte, in the order of the paint states after `_PLAIN`."""

MATCHES_KEPT = 100_000
"""Matches of a search counted at most (a one-byte pattern in a big section matches everywhere)."""


def _hex_width(per_line: int) -> int:
    """Cells of the hex field: "hh " per byte, minus the last space, plus the extra mid gap (48 for 16)."""
    return per_line * 3


def _hex_of(chunk: bytes, per_line: int) -> str:
    """Hex text of up to `per_line` bytes with the mid gap, padded to the full column width."""
    half = per_line // 2
    if len(chunk) <= half:
        return chunk.hex(" ").ljust(_hex_width(per_line))
    return f"{chunk[:half].hex(' ')}  {chunk[half:].hex(' ')}".ljust(_hex_width(per_line))


def _hex_column(index: int, per_line: int) -> int:
    """Column of byte `index` (0 to `per_line` - 1) inside the hex field."""
    return index * 3 + (1 if index >= per_line // 2 else 0)


class _Styles(NamedTuple):
    """Every Rich style a line needs, resolved once per style change (not per byte)."""

    base: Style
    header: Style
    offset: Style
    address: Style
    hex: tuple[Style, ...]  # indexed by paint state
    ascii: tuple[Style, ...]


class HexView(ScrollView, can_focus=True):
    """A hex dump of `data` with a byte cursor and one highlighted, field-striped range.

    Only the visible lines are rendered (Line API), so opening a multi-megabyte section
    costs nothing beyond keeping a reference to the bytes.
    """

    ALLOW_SELECT = False  # clicks place the cursor; Textual's text selection would fight them

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor_left", "Previous byte", show=False),
        Binding("right", "cursor_right", "Next byte", show=False),
        Binding("up", "cursor_up", "Line up", show=False),
        Binding("down", "cursor_down", "Line down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "line_start", "Line start", show=False),
        Binding("end", "line_end", "Line end", show=False),
        Binding("ctrl+home", "first_byte", "First byte", show=False),
        Binding("ctrl+end", "last_byte", "Last byte", show=False),
        Binding("slash", "ask_search", "Search"),
        Binding("n", "next_match(1)", "Next match"),
        Binding("N", "next_match(-1)", "Previous match", show=False),
    ]
    """Navigation keys (not shown in the footer: they are the keys everyone expects), and search;
    `n`/`N` only while there is something searched for (else the screen's keys have them)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "hexview--header",
        "hexview--offset",
        "hexview--address",
        "hexview--hex",
        "hexview--ascii",
        "hexview--cursor",
        "hexview--highlight",
        "hexview--highlight-alt",
        "hexview--match",
        "hexview--problem",
    }
    """
    | Class | Description |
    | :- | :- |
    | `hexview--header` | The line naming the columns. |
    | `hexview--offset` | Section offset column. |
    | `hexview--address` | Load address column. |
    | `hexview--hex` | Hex bytes. |
    | `hexview--ascii` | ASCII column. |
    | `hexview--cursor` | The byte under the cursor (hex and ASCII). |
    | `hexview--highlight` | Highlighted range, even fields (the first field is even). |
    | `hexview--highlight-alt` | Highlighted range, odd fields. |
    | `hexview--match` | The bytes the last search found. |
    | `hexview--problem` | Bytes a check of the section found a problem in (under any highlight). |
    """

    DEFAULT_CSS = """
    HexView {
        background: $surface;
        color: $foreground;
        & > .hexview--header { color: $foreground-muted; background: $panel; }
        & > .hexview--offset { color: $foreground-muted; }
        & > .hexview--address { color: $text-secondary; }
        & > .hexview--hex { color: $foreground; }
        & > .hexview--ascii { color: $foreground-muted; }
        & > .hexview--highlight { background: $primary 55%; color: $foreground; }
        & > .hexview--problem { background: $error 35%; color: $foreground; }
        & > .hexview--highlight-alt { background: $primary 25%; color: $foreground; }
        & > .hexview--match { background: $warning 70%; color: $foreground; text-style: underline; }
        & > .hexview--cursor { background: $foreground 25%; text-style: bold; }
        &:focus > .hexview--cursor { background: $surface; text-style: bold reverse; }
    }
    """
    """Two shades of `$primary` for alternating fields; the focused cursor is reversed so it
    stands out on plain and highlighted bytes alike (its background must be the plain
    one: reversing turns the column colour into the cursor block)."""

    class SearchRequested(Message):
        """`/` was pressed: the screen asks what to look for, then calls `search`."""

    def __init__(
        self,
        data: bytes,
        base_address: int = 0,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        """Show `data`; `base_address` is the load address of offset 0 (for the address column)."""
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._data = b""
        self._base_address = base_address
        self._cursor = 0
        self._highlight: tuple[int, int] | None = None
        self._boundaries: tuple[int, ...] = ()
        self._pattern = b""
        self.problems: list[tuple[int, int]] = []
        """Ranges a check found problems in, sorted (see `mark_problems`)."""
        self._problem_ends: list[int] = []
        self._matches: list[int] = []
        """Offsets of the pattern's matches, in order (at most `MATCHES_KEPT`)."""
        self._match: tuple[int, int] | None = None
        """The match shown, `(start, end)`."""
        self._styles: _Styles | None = None
        # Strips of lines with no cursor/highlight on them; they depend only on the
        # bytes and the styles, so scrolling back and forth reuses them.
        self._plain_cache: LRUCache[int, Strip] = LRUCache(1024)
        self._per_line = BYTES_PER_LINE
        self.kind_style: Callable[[int], Style | None] | None = None
        """The colour of the byte at an offset (its field's kind, with the minimap: `colour_by_kind`), or None."""
        self.cursor_moved: Signal[int] = Signal(self, "cursor-moved")
        """Published with the section offset now under the cursor when the user (or
        `move_cursor(..., notify=True)`) moves it.

        A signal, not a message, as `RowTable.row_highlighted`: a subscriber told at
        once updates the other panes in the frame that moves the cursor; a message
        would arrive after the hex pane's own lines were painted, and every move would take two frames.
        """
        self._set_data(data)

    # ------------------------------------------------------------------ properties

    @property
    def data(self) -> bytes:
        """The bytes shown. Assigning new bytes resets cursor, highlight and scroll."""
        return self._data

    @data.setter
    def data(self, data: bytes) -> None:
        self._set_data(data)
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    @property
    def base_address(self) -> int:
        """Load address of section offset 0."""
        return self._base_address

    @property
    def cursor(self) -> int:
        """Section offset of the byte under the cursor (0 when there is no data)."""
        return self._cursor

    @property
    def line_count(self) -> int:
        """Number of lines of the dump."""
        return self._line_count

    @property
    def highlighted(self) -> tuple[int, int] | None:
        """The highlighted range as `(start, end)`, or None."""
        return self._highlight

    # ------------------------------------------------------------------ public API

    def move_cursor(self, offset: int, notify: bool = True) -> None:
        """Put the cursor on `offset` (clamped to the data) and scroll it into view.

        `notify=False` is for the app syncing the cursor to a selection made elsewhere:
        publishing `cursor_moved` then would echo back into the handler that caused it.
        """
        self._set_cursor(offset, notify=notify)

    def highlight(self, start: int, end: int, boundaries: Iterable[int] | None = None, *, scroll: bool = True) -> None:
        """Paint bytes `[start, end)`, striping fields that begin at `boundaries`.

        Offsets in `boundaries` outside `(start, end)` are ignored; `start` always begins
        the first field. With `scroll`, the range is brought into view: nothing moves if
        its start is already on screen (except to also reveal its end when the whole
        range fits); otherwise the range is centred (or, if taller than the view, its
        start is put near the top).
        """
        start = max(0, min(start, len(self._data)))
        end = max(start, min(end, len(self._data)))
        self._highlight = (start, end) if end > start else None
        self._boundaries = tuple(sorted({b for b in boundaries or () if start < b < end}))
        self.refresh()
        if scroll and self._highlight is not None:
            self._reveal_range(start, end)

    def clear_highlight(self) -> None:
        """Remove the highlighted range."""
        if self._highlight is not None:
            self._highlight = None
            self._boundaries = ()
            self.refresh()

    @property
    def pattern(self) -> bytes:
        """What the last search looked for (empty: no search)."""
        return self._pattern

    @property
    def match(self) -> tuple[int, int] | None:
        """The match shown, as `(start, end)`, or None."""
        return self._match

    def search(self, pattern: bytes) -> int | None:
        """Find `pattern` at or after the cursor (wrapping round), mark it and put the cursor on it.

        Returns the match's offset, or None (and no mark) when the bytes hold none.
        """
        self._pattern = pattern
        self._matches = []
        start = self._data.find(pattern)
        while start >= 0 and len(self._matches) < MATCHES_KEPT:
            self._matches.append(start)
            start = self._data.find(pattern, start + 1)
        if not self._matches:
            self._show_match(None, notify=False)
            return None
        index = bisect_left(self._matches, self._cursor) % len(self._matches)
        return self._show_match(self._matches[index], notify=False)

    def match_number(self) -> tuple[int, int] | None:
        """`(k, n)`: the match shown is the `k`th of `n` (1-based), or None without one."""
        if self._match is None:
            return None
        return bisect_left(self._matches, self._match[0]) + 1, len(self._matches)

    def _show_match(self, offset: int | None, *, notify: bool) -> int | None:
        """Mark the match at `offset` (None: no mark) and move the cursor onto it."""
        self._match = (offset, offset + len(self._pattern)) if offset is not None else None
        self.refresh()
        if offset is not None:
            self._set_cursor(offset, notify=notify)
        return offset

    def offset_at(self, x: int, y: int) -> int | None:
        """Byte offset under screen cell (`x`, `y`), from the hex or ASCII column; None elsewhere."""
        region = self.scrollable_content_region
        if not region.contains(x, y) or y == region.y:  # the header line
            return None
        scroll_x, scroll_y = self.scroll_offset
        return self._offset_at_virtual(x - region.x + scroll_x, y - region.y - 1 + scroll_y)

    def line_text(self, line_no: int) -> str:
        """Plain text of dump line `line_no` (exactly what is drawn, without styles)."""
        if not 0 <= line_no < self._line_count:
            raise IndexError(f"line {line_no} out of range (0..{self._line_count - 1})")
        offset_text, address_text, hex_text, ascii_text = self._line_parts(line_no)
        return _COLUMN_GAP.join((offset_text, address_text, hex_text, ascii_text))

    # ------------------------------------------------------------------ layout

    @property
    def bytes_per_line(self) -> int:
        """16, or 8 while the pane is too narrow for 16 (an 80-column terminal)."""
        return self._per_line

    def on_resize(self) -> None:
        """16 bytes a line when they fit, else 8: the ASCII column is never cut off."""
        wanted = BYTES_PER_LINE if self.size.width >= self._width_for(BYTES_PER_LINE) else NARROW_BYTES_PER_LINE
        if wanted != self._per_line:
            self._per_line = wanted
            self._lay_out()
            self._plain_cache.clear()
            self.refresh()
            self.call_after_refresh(self._scroll_cursor_into_view)

    def _width_for(self, per_line: int) -> int:
        """Cells a line of `per_line` bytes takes."""
        return self._offset_digits + _ADDRESS_DIGITS + _hex_width(per_line) + per_line + 3 * len(_COLUMN_GAP)

    def _set_data(self, data: bytes) -> None:
        """Adopt new bytes: recompute column geometry and the virtual size, reset state."""
        self._data = bytes(data)
        self._cursor = 0
        self._highlight = None
        self._boundaries = ()
        self._plain_cache.clear()
        self._lay_out()

    def _lay_out(self) -> None:
        """Column geometry, header and virtual size for the bytes and the bytes per line."""
        size = len(self._data)
        self._line_count = -(-size // self._per_line)
        # Offsets are 8 digits like readelf/hexdump, wider only for sections past 4 GiB.
        self._offset_digits = max(8, len(f"{max(size - 1, 0):x}"))
        self._hex_x = self._offset_digits + len(_COLUMN_GAP) + _ADDRESS_DIGITS + len(_COLUMN_GAP)
        self._ascii_x = self._hex_x + _hex_width(self._per_line) + len(_COLUMN_GAP)
        self._line_width = self._ascii_x + self._per_line
        self._header = _COLUMN_GAP.join(
            (
                "offset".ljust(self._offset_digits),
                "address".ljust(_ADDRESS_DIGITS),
                _hex_of(bytes(range(self._per_line)), self._per_line),
                "ASCII",
            )
        ).ljust(self._line_width)
        self.virtual_size = Size(self._line_width, self._line_count + 1)  # + the header line

    def _line_parts(self, line_no: int) -> tuple[str, str, str, str]:
        """Offset, address, hex and ASCII text of one line."""
        start = line_no * self._per_line
        chunk = self._data[start : start + self._per_line]
        return (
            f"{start:0{self._offset_digits}x}",
            f"{(self._base_address + start) & 0xFFFF_FFFF_FFFF_FFFF:016x}",
            _hex_of(chunk, self._per_line),
            chunk.translate(_ASCII_TABLE).decode("latin-1"),
        )

    def _offset_at_virtual(self, column: int, line_no: int) -> int | None:
        """Byte offset at a position in the whole (unscrolled) dump, or None."""
        if not 0 <= line_no < self._line_count:
            return None
        index: int | None = None
        relative = column - self._hex_x
        if 0 <= relative < _hex_width(self._per_line):
            if relative >= _hex_column(self._per_line // 2, self._per_line):
                relative -= 1  # skip the extra mid gap
            elif relative == _hex_column(self._per_line // 2, self._per_line) - 1:
                return None
            if relative % 3 != 2:  # not the space between two bytes
                index = relative // 3
        elif 0 <= column - self._ascii_x < self._per_line:
            index = column - self._ascii_x
        if index is None:
            return None
        offset = line_no * self._per_line + index
        return offset if offset < len(self._data) else None

    # ------------------------------------------------------------------ styles

    def notify_style_update(self) -> None:
        """Styles changed (theme, focus, CSS reload): drop everything derived from them."""
        super().notify_style_update()
        self._styles = None
        self._plain_cache.clear()

    def _get_styles(self) -> _Styles:
        """Resolve component styles into ready-to-use Rich styles, once per style change.

        A painted byte keeps its column's colour and takes the background (and text
        style) of its paint state. The background comes from the *full* component style
        because that is where Textual blends alpha backgrounds (`$primary 45%`) onto
        the widget's own; the partial style would carry the unblended colour.
        """
        if self._styles is None:
            get = self.get_component_rich_style
            base = self.rich_style
            hex_style = get("hexview--hex")
            ascii_style = get("hexview--ascii")
            overlays = []
            for name in _OVERLAYS:
                full = get(name)
                partial = get(name, partial=True)
                overlays.append(partial + Style(bgcolor=full.bgcolor))

            def painted(column: Style) -> tuple[Style, ...]:
                return (column, *(column + overlay for overlay in overlays))

            self._styles = _Styles(
                base=base,
                header=get("hexview--header"),
                offset=get("hexview--offset"),
                address=get("hexview--address"),
                hex=painted(hex_style),
                ascii=painted(ascii_style),
            )
        return self._styles

    # ------------------------------------------------------------------ rendering

    def render_line(self, y: int) -> Strip:
        """Render screen row `y` of the widget: the header, then one dump line each, cropped to the view."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        styles = self._get_styles()
        if y == 0:
            strip = Strip([Segment(self._header, styles.header)], self._line_width)
            return strip.crop_extend(scroll_x, scroll_x + width, styles.header)
        line_no = scroll_y + y - 1
        if not 0 <= line_no < self._line_count:
            return Strip.blank(width, styles.base)
        strip = self._render_dump_line(line_no, styles)
        return strip.crop_extend(scroll_x, scroll_x + width, styles.base)

    def _paint_states(self, start: int, end: int) -> list[int] | None:
        """Per-byte state of bytes `[start, end)`: highlight, then the search match over it
        (cursor not applied); None if all plain."""
        states = self._highlight_states(start, end)
        states = self._problem_states(start, end, states)
        match = self._match
        if match is None or match[1] <= start or match[0] >= end:
            return states
        states = states or [_PLAIN] * (end - start)
        for offset in range(max(start, match[0]), min(end, match[1])):
            states[offset - start] = _MATCH
        return states

    def colour_by_kind(self, kind_style: Callable[[int], Style | None] | None) -> None:
        """Plain bytes in the colour `kind_style` gives each offset (None: one colour)."""
        self.kind_style = kind_style
        self._plain_cache.clear()
        self.refresh()

    @property
    def shown_bytes(self) -> tuple[int, int]:
        """The section offsets [start, end) of the lines on the screen."""
        first = self.scroll_offset.y * self._per_line
        return first, min(len(self._data), first + max(1, self.visible_lines) * self._per_line)

    def mark_problems(self, ranges: Iterable[tuple[int, int]]) -> None:
        """Bytes [start, end) a check found problems in, shown as such wherever nothing else is painted."""
        self.problems = sorted(ranges)
        self._problem_ends = list(accumulate((end for _, end in self.problems), max))
        self._plain_cache.clear()
        self.refresh()

    def _problem_states(self, start: int, end: int, states: list[int] | None) -> list[int] | None:
        """`states` with the bytes of `[start, end)` that lie in a problem's range marked (over plain ones)."""
        problems = self.problems
        # The first range that may reach `start`: ranges are sorted by start, their ends accumulated.
        i = bisect_right(self._problem_ends, start)
        while i < len(problems) and problems[i][0] < end:
            lo, hi = problems[i]
            for offset in range(max(start, lo), min(end, hi)):
                states = states or [_PLAIN] * (end - start)
                if states[offset - start] == _PLAIN:
                    states[offset - start] = _PROBLEM
            i += 1
        return states

    def _highlight_states(self, start: int, end: int) -> list[int] | None:
        """Per-byte highlight state of bytes `[start, end)`, or None if none is highlighted."""
        if self._highlight is None:
            return None
        hl_start, hl_end = self._highlight
        if hl_end <= start or hl_start >= end:
            return None
        boundaries = self._boundaries
        states = []
        field = bisect_right(boundaries, start) if boundaries else 0
        next_boundary = boundaries[field] if field < len(boundaries) else hl_end
        for offset in range(start, end):
            if hl_start <= offset < hl_end:
                while offset >= next_boundary and field < len(boundaries):
                    field += 1
                    next_boundary = boundaries[field] if field < len(boundaries) else hl_end
                states.append(_HIGHLIGHT if field % 2 == 0 else _HIGHLIGHT_ALT)
            else:
                states.append(_PLAIN)
        return states

    def _render_dump_line(self, line_no: int, styles: _Styles) -> Strip:
        """Full-width strip of one dump line (before horizontal cropping)."""
        start = line_no * self._per_line
        end = min(start + self._per_line, len(self._data))
        states = self._paint_states(start, end)
        has_cursor = start <= self._cursor < end
        kinds = [self.kind_style(offset) for offset in range(start, end)] if self.kind_style is not None else None
        if states is None and not has_cursor and kinds is None:
            cached = self._plain_cache.get(line_no)
            if cached is not None:
                return cached

        offset_text, address_text, hex_text, ascii_text = self._line_parts(line_no)
        base = styles.base
        segments = [
            Segment(offset_text, styles.offset),
            Segment(_COLUMN_GAP, base),
            Segment(address_text, styles.address),
            Segment(_COLUMN_GAP, base),
        ]
        if states is None and not has_cursor and kinds is None:
            segments += [
                Segment(hex_text, styles.hex[_PLAIN]),
                Segment(_COLUMN_GAP, base),
                Segment(ascii_text, styles.ascii[_PLAIN]),
            ]
            strip = Strip(segments, self._line_width)
            self._plain_cache[line_no] = strip
            return strip

        count = end - start
        fields = states or [_PLAIN] * count
        cells = list(fields)
        if has_cursor:
            cells[self._cursor - start] = _CURSOR
        # Hex column: byte cells, and between them separators that share the field's
        # shade only inside one field, so a field boundary shows as a gap.
        pieces: list[tuple[str, Style]] = []
        hex_styles = styles.hex
        plain = hex_styles[_PLAIN]
        for index in range(count):
            column = _hex_column(index, self._per_line)
            kind = kinds[index] if kinds is not None and cells[index] == _PLAIN else None
            pieces.append((hex_text[column : column + 2], plain + kind if kind else hex_styles[cells[index]]))
            if index + 1 < count:
                separator = "  " if index + 1 == self._per_line // 2 else " "
                state = fields[index] if fields[index] == fields[index + 1] else _PLAIN
                pieces.append((separator, hex_styles[state]))
        tail = _hex_width(self._per_line) - (_hex_column(count - 1, self._per_line) + 2)
        if tail:
            pieces.append((" " * tail, base))
        pieces.append((_COLUMN_GAP, base))
        ascii_styles = styles.ascii
        pieces.extend((ascii_text[index], ascii_styles[cells[index]]) for index in range(count))
        segments.extend(_merge(pieces))
        return Strip(segments, self._line_width)

    # ------------------------------------------------------------------ cursor & scrolling

    def _set_cursor(self, offset: int, *, notify: bool) -> None:
        """Move the cursor, repaint the two affected lines, keep it visible, maybe notify."""
        if not self._data:
            return
        offset = max(0, min(offset, len(self._data) - 1))
        old = self._cursor
        self._cursor = offset
        if offset != old:
            self.refresh_line(old // self._per_line + 1)  # + the header line
            self.refresh_line(offset // self._per_line + 1)
        self._scroll_cursor_into_view()
        if notify and offset != old:
            self.cursor_moved.publish(offset)

    @property
    def visible_lines(self) -> int:
        """Dump lines on the screen at once (the header takes a line)."""
        return self.scrollable_content_region.height - 1

    @property
    def _page_lines(self) -> int:
        """Lines in one screenful (at least 1)."""
        return max(1, self.visible_lines)

    def _scroll_cursor_into_view(self) -> None:
        """Scroll the least distance that shows the cursor's line and hex cell."""
        line_no = self._cursor // self._per_line
        height = self.visible_lines
        if height <= 0:
            return
        scroll_x, scroll_y = self.scroll_offset
        target_y = scroll_y
        if line_no < scroll_y:
            target_y = line_no
        elif line_no >= scroll_y + height:
            target_y = line_no - height + 1
        width = self.scrollable_content_region.width
        column = self._hex_x + _hex_column(self._cursor % self._per_line, self._per_line)
        target_x = scroll_x
        if column < scroll_x:
            target_x = column
        elif column + 2 > scroll_x + width:
            target_x = column + 2 - width
        if (target_x, target_y) != (scroll_x, scroll_y):
            self.scroll_to(target_x, target_y, animate=False, immediate=True)

    def _reveal_range(self, start: int, end: int) -> None:
        """Bring the highlighted range into view (see `highlight`); defer until laid out."""
        height = self.visible_lines
        if height <= 0 or not self.is_mounted:
            self.call_after_refresh(self._reveal_range, start, end)
            return
        first = start // self._per_line
        last = (end - 1) // self._per_line
        top = self.scroll_offset.y
        fits = last - first + 1 <= height
        if top <= first < top + height:
            if fits and last >= top + height:
                self.scroll_to(y=last - height + 1, animate=False, immediate=True)
            return
        # Centre a range that fits; a taller one starts near the top, with a little context.
        target = (first + last) // 2 - height // 2 if fits else first - min(2, height // 4)
        self.scroll_to(y=max(0, target), animate=False, immediate=True)

    # ------------------------------------------------------------------ input

    def on_click(self, event: events.Click) -> None:
        """A click on a byte (hex or ASCII column) puts the cursor there."""
        offset = self.offset_at(event.screen_x, event.screen_y)
        if offset is not None:
            event.stop()
            self._set_cursor(offset, notify=True)

    def action_cursor_left(self) -> None:
        """Previous byte."""
        self._set_cursor(self._cursor - 1, notify=True)

    def action_cursor_right(self) -> None:
        """Next byte."""
        self._set_cursor(self._cursor + 1, notify=True)

    def action_cursor_up(self) -> None:
        """Same column, previous line (stays put on the first line)."""
        if self._cursor >= self._per_line:
            self._set_cursor(self._cursor - self._per_line, notify=True)

    def action_cursor_down(self) -> None:
        """Same column, next line; clamps to the last byte when the last line is short."""
        if self._cursor // self._per_line < self._line_count - 1:
            self._set_cursor(self._cursor + self._per_line, notify=True)

    def action_page_up(self) -> None:
        """Up one screenful; the view scrolls with the cursor so it keeps its screen row."""
        self._page(-1)

    def action_page_down(self) -> None:
        """Down one screenful; the view scrolls with the cursor so it keeps its screen row."""
        self._page(+1)

    def _page(self, direction: int) -> None:
        """Move cursor and view by one page in `direction` (-1 or +1)."""
        if not self._data:
            return
        lines = self._page_lines
        column = self._cursor % self._per_line
        line_no = max(0, min(self._cursor // self._per_line + direction * lines, self._line_count - 1))
        self.scroll_to(y=self.scroll_offset.y + direction * lines, animate=False, immediate=True)
        self._set_cursor(line_no * self._per_line + column, notify=True)

    def action_line_start(self) -> None:
        """First byte of the cursor's line."""
        self._set_cursor(self._cursor - self._cursor % self._per_line, notify=True)

    def action_line_end(self) -> None:
        """Last byte of the cursor's line."""
        self._set_cursor(self._cursor - self._cursor % self._per_line + self._per_line - 1, notify=True)

    def action_first_byte(self) -> None:
        """First byte of the section."""
        self._set_cursor(0, notify=True)

    def action_last_byte(self) -> None:
        """Last byte of the section."""
        self._set_cursor(len(self._data) - 1, notify=True)

    def action_ask_search(self) -> None:
        """`/`: the screen asks what to look for."""
        self.post_message(self.SearchRequested())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`n`/`N` are the search's only after a search found something; else they go to the screen."""
        if action == "next_match":
            return bool(self._matches)
        return True

    def action_next_match(self, step: int) -> None:
        """The next (`step` 1) or previous (-1) match from the cursor, wrapping round."""
        matches = self._matches
        if step > 0:
            index = bisect_right(matches, self._cursor) % len(matches)
        else:
            index = (bisect_left(matches, self._cursor) - 1) % len(matches)
        self._show_match(matches[index], notify=True)


def _merge(pieces: list[tuple[str, Style]]) -> list[Segment]:
    """Join adjacent pieces that share a style into one Segment (fewer, longer segments)."""
    segments: list[Segment] = []
    text_run: list[str] = []
    run_style: Style | None = None
    for text, style in pieces:
        if style is not run_style and text_run:
            segments.append(Segment("".join(text_run), run_style))
            text_run = []
        run_style = style
        text_run.append(text)
    if text_run:
        segments.append(Segment("".join(text_run), run_style))
    return segments
