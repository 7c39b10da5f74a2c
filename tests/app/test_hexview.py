"""Tests for `HexView`, the Line-API hex pane.

The widget is driven the way the explorer drives it: composed in a small app, moved
with keys and clicks, highlighted from code. The size test is the point of the Line
API: a 2 MB section must cost only the visible lines.
"""

from __future__ import annotations

import math
import time

from rich.style import Style
from textual.app import App, ComposeResult
from textual.strip import Strip

from sfview.app.widgets.hexview import BYTES_PER_LINE, HexView

SIZE = (100, 30)  # no border around the widget: content starts at screen (0, 0)
BASE = 0x141A8
HEADER = 1
"""The header line on top: dump line `n` (unscrolled) is on screen row `n + HEADER`."""

# Column geometry of a line (offsets < 4 GiB): "oooooooo  aaaaaaaaaaaaaaaa  hh hh ..  ascii"
HEX_X = 8 + 2 + 16 + 2
ASCII_X = HEX_X + 48 + 2


def hex_x(index: int) -> int:
    """Screen column of byte `index` (0-15) in the hex column."""
    return HEX_X + index * 3 + (1 if index >= 8 else 0)


class HexApp(App[None]):
    """Composes one HexView and records every move of the cursor it publishes (`cursor_moved`)."""

    def __init__(self, data: bytes, base_address: int = BASE, view_class: type[HexView] = HexView) -> None:
        super().__init__()
        self.data = data
        self.base_address = base_address
        self.view_class = view_class
        self.moves: list[int] = []

    def compose(self) -> ComposeResult:
        yield self.view_class(self.data, self.base_address, id="hex")

    def on_mount(self) -> None:
        self.query_one(HexView).cursor_moved.subscribe(self, self.moves.append, immediate=True)


def sample(size: int) -> bytes:
    """Deterministic bytes where every offset's value is recognisable."""
    return bytes(i & 0xFF for i in range(size))


# ---------------------------------------------------------------- line format


def test_line_text_format() -> None:
    data = b"\x7fELF\x02\x01\x01\x00" + b"ABCDEFGH" + b"\x00\x1f \x7e\x7f\x80\xff!"
    view = HexView(data, base_address=BASE)
    assert view.line_count == 2
    assert view.virtual_size.height == 2 + HEADER
    assert view.line_text(0) == (
        "00000000  00000000000141a8  7f 45 4c 46 02 01 01 00  41 42 43 44 45 46 47 48  .ELF....ABCDEFGH"
    )
    # A short last line keeps the ASCII column aligned and shows only the bytes present.
    assert view.line_text(1) == (
        "00000010  00000000000141b8  00 1f 20 7e 7f 80 ff 21                           .. ~...!"
    )
    assert view.line_text(1).index(".. ~") == ASCII_X
    assert view.line_text(0).index("41 42") == hex_x(8)


async def test_the_header_names_each_column_above_it() -> None:
    app = HexApp(sample(64))
    async with app.run_test(size=SIZE):
        view = app.query_one(HexView)
        header = view.render_line(0).text
        first = view.render_line(HEADER).text
        assert header.split() == ["offset", "address", *(f"{i:02x}" for i in range(16)), "ASCII"]
        for index in range(16):  # the first line holds bytes 0..15: each under its own offset
            assert header[hex_x(index) : hex_x(index) + 2] == f"{index:02x}" == first[hex_x(index) : hex_x(index) + 2]
        assert header.index("ASCII") == ASCII_X


def test_line_text_out_of_range_and_wide_offsets() -> None:
    view = HexView(sample(40))
    try:
        view.line_text(3)
    except IndexError:
        pass
    else:
        raise AssertionError("line 3 of a 3-line dump must not exist")
    assert HexView(b"\x00" * 17, base_address=0xFFFF_FFFF_FFFF_FFF8).line_text(1).split()[1] == "0000000000000008"


# ---------------------------------------------------------------- cursor


async def test_cursor_keys_publish_cursor_moved() -> None:
    app = HexApp(sample(4096))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        assert view.has_focus
        assert view.cursor == 0

        await pilot.press("left", "up")  # already at the first byte: nothing moves, nothing posted
        await pilot.press("right", "right", "down", "end", "home", "up", "left")
        await pilot.pause()
        assert app.moves == [1, 2, 18, 31, 16, 0]
        assert view.cursor == 0

        app.moves.clear()
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert view.cursor == 4095
        assert app.moves == [4095]
        lines_visible = view.visible_lines
        assert lines_visible == view.scrollable_content_region.height - HEADER
        assert view.scroll_offset.y == 256 - lines_visible  # the cursor's line is the bottom one

        await pilot.press("right", "down", "ctrl+home")
        await pilot.pause()
        assert view.cursor == 0
        assert view.scroll_offset.y == 0
        assert app.moves == [4095, 0]


async def test_page_keys_move_by_a_screenful() -> None:
    app = HexApp(sample(4096))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        page = view.visible_lines
        await pilot.press("right", "pagedown")
        await pilot.pause()
        assert view.cursor == page * BYTES_PER_LINE + 1
        assert view.scroll_offset.y == page  # the view moved with the cursor
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        assert view.cursor == 1
        assert view.scroll_offset.y == 0
        assert app.moves == [1, page * BYTES_PER_LINE + 1, 1]


async def test_down_on_short_last_line_clamps_to_last_byte() -> None:
    app = HexApp(sample(20))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        await pilot.press("end", "down")
        await pilot.pause()
        assert view.cursor == 19
        await pilot.press("down", "end")  # no line below; the line's end is the data's end
        await pilot.pause()
        assert app.moves == [15, 19]


async def test_programmatic_move_notifies_only_when_asked() -> None:
    app = HexApp(sample(64 * 1024))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        view.move_cursor(0x8000, notify=False)
        await pilot.pause()
        assert view.cursor == 0x8000
        assert app.moves == []
        # ...but it still scrolls the cursor into view.
        top = view.scroll_offset.y
        assert top <= 0x8000 // BYTES_PER_LINE < top + view.scrollable_content_region.height

        view.move_cursor(0x10)
        view.move_cursor(10**9, notify=False)  # clamped, silently
        await pilot.pause()
        assert app.moves == [0x10]
        assert view.cursor == 64 * 1024 - 1


async def test_click_on_hex_or_ascii_byte_sets_cursor() -> None:
    app = HexApp(sample(4096))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        await pilot.click(HexView, offset=(hex_x(5), 2 + HEADER))
        await pilot.pause()
        assert view.cursor == 2 * 16 + 5
        await pilot.click(HexView, offset=(hex_x(9) + 1, 3 + HEADER))  # second digit of the pair counts too
        await pilot.pause()
        assert view.cursor == 3 * 16 + 9
        await pilot.click(HexView, offset=(ASCII_X + 15, 4 + HEADER))
        await pilot.pause()
        assert view.cursor == 4 * 16 + 15
        # Gaps, the mid gap, the address column and the header line are not bytes.
        for x, y in ((hex_x(5) + 2, 2), (hex_x(8) - 1, 2), (12, 2), (hex_x(5), 0)):
            assert view.offset_at(x, y + HEADER if y else 0) is None
            await pilot.click(HexView, offset=(x, y + HEADER if y else 0))
        await pilot.pause()
        assert view.cursor == 4 * 16 + 15
        assert app.moves == [37, 57, 79]


async def test_offset_at_accounts_for_scrolling() -> None:
    app = HexApp(sample(4096))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        view.scroll_to(y=100, animate=False)
        await pilot.pause()
        assert view.offset_at(hex_x(0), HEADER) == 100 * 16
        assert view.offset_at(ASCII_X + 3, 1 + HEADER) == 101 * 16 + 3
        assert view.offset_at(200, HEADER) is None
        assert view.offset_at(hex_x(0), 0) is None, "the header line, which does not scroll"


# ---------------------------------------------------------------- highlight


def _bg(view: HexView, screen_y: int, column: int) -> object:
    """Background colour of one cell as rendered (`column` in widget content coordinates)."""
    strip = view.render_line(screen_y)
    cropped = strip.crop(column, column + 1)
    (segment,) = list(cropped)
    assert isinstance(segment.style, Style)
    return segment.style.bgcolor


async def test_highlight_scrolls_far_range_into_view_and_stripes_fields() -> None:
    app = HexApp(sample(64 * 1024))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        height = view.visible_lines
        start = 0x8004
        view.highlight(start, start + 8, [start + 4])
        await pilot.pause()
        line = start // BYTES_PER_LINE
        top = view.scroll_offset.y
        assert top <= line < top + height
        assert abs((line - top) - height // 2) <= 1  # centred
        assert view.highlighted == (start, start + 8)
        assert app.moves == []  # highlighting does not move the cursor

        row = line - top + HEADER
        even = view.get_component_rich_style("hexview--highlight").bgcolor
        odd = view.get_component_rich_style("hexview--highlight-alt").bgcolor
        plain = view.rich_style.bgcolor
        assert len({even, odd, plain}) == 3
        assert _bg(view, row, hex_x(3)) == plain
        assert _bg(view, row, hex_x(4)) == even  # field 0: bytes 4..7
        assert _bg(view, row, hex_x(4) + 2) == even  # space inside a field is painted
        assert _bg(view, row, hex_x(8) - 1) == plain  # ...but not at a field boundary
        assert _bg(view, row, hex_x(8)) == odd  # field 1: bytes 8..11
        assert _bg(view, row, ASCII_X + 4) == even
        assert _bg(view, row, ASCII_X + 8) == odd
        assert _bg(view, row, ASCII_X + 12) == plain

        # A range whose start is already on screen does not scroll.
        view.highlight(start + 16, start + 20)
        await pilot.pause()
        assert view.scroll_offset.y == top

        view.clear_highlight()
        await pilot.pause()
        assert view.highlighted is None
        assert _bg(view, row, hex_x(4)) == plain


async def test_highlight_spanning_many_lines_before_mount_scrolls_once_laid_out() -> None:
    class Early(HexApp):
        def on_mount(self) -> None:
            self.query_one(HexView).highlight(0x40000, 0x40000 + 100 * 16)

    app = Early(sample(1 << 20))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(HexView)
        top = view.scroll_offset.y
        # Taller than the view: its start goes near the top.
        assert 0 <= 0x40000 // BYTES_PER_LINE - top <= 2
        # All visible lines are inside the range and painted.
        even = view.get_component_rich_style("hexview--highlight").bgcolor
        assert _bg(view, view.scrollable_content_region.height - 1, hex_x(0)) == even


# ---------------------------------------------------------------- styles


async def test_theme_change_restyles() -> None:
    app = HexApp(sample(256))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        dark = view.render_line(0)
        app.theme = "textual-light"
        await pilot.pause()
        light = view.render_line(0)
        assert dark.text == light.text
        assert [s.style for s in dark] != [s.style for s in light]


# ---------------------------------------------------------------- size & laziness


class CountingHexView(HexView):
    """Records which dump lines get asked for, and which get formatted."""

    rendered: list[int]
    formatted: list[int]

    def render_line(self, y: int) -> Strip:
        if y >= HEADER:
            self.rendered.append(self.scroll_offset.y + y - HEADER)
        return super().render_line(y)

    def _line_parts(self, line_no: int) -> tuple[str, str, str, str]:
        self.formatted.append(line_no)
        return super()._line_parts(line_no)


async def test_two_megabytes_render_only_visible_lines() -> None:
    data = sample(2 * 1024 * 1024 + 5)
    CountingHexView.rendered = []
    CountingHexView.formatted = []
    app = HexApp(data, view_class=CountingHexView)
    began = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(CountingHexView)
        assert view.virtual_size.height == math.ceil(len(data) / 16) + HEADER
        assert view.virtual_size.width == 94
        height = view.visible_lines
        assert set(CountingHexView.rendered) == set(range(height))
        # Formatting work is a few screenfuls at most, not 131,073 lines.
        assert len(CountingHexView.formatted) <= 4 * height

        CountingHexView.rendered.clear()
        CountingHexView.formatted.clear()
        await pilot.press("ctrl+end")
        await pilot.pause()
        last = view.line_count - 1
        assert set(CountingHexView.rendered) == set(range(last - height + 1, last + 1))
        assert len(CountingHexView.formatted) <= 4 * height
        assert view.line_text(last).startswith(f"{len(data) - 5:08x}")
    assert time.perf_counter() - began < 5  # seconds, for the whole app run: nothing is O(size)


async def test_empty_data_does_not_crash() -> None:
    app = HexApp(b"")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        await pilot.press("right", "down", "pagedown", "end", "ctrl+end", "ctrl+home")
        await pilot.click(HexView, offset=(hex_x(0), 0))
        view.highlight(0, 10)
        view.move_cursor(5)
        await pilot.pause()
        assert view.cursor == 0
        assert view.line_count == 0
        assert view.highlighted is None
        assert view.offset_at(hex_x(0), 0) is None
        assert app.moves == []


async def test_assigning_data_resets_view() -> None:
    app = HexApp(sample(4096))
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(HexView)
        await pilot.press("ctrl+end")
        view.highlight(10, 20)
        view.data = b"hello"
        await pilot.pause()
        assert (view.cursor, view.highlighted, view.scroll_offset.y) == (0, None, 0)
        assert view.virtual_size.height == 1 + HEADER
        assert view.line_text(0).endswith("hello")


# ---------------------------------------------------------------- snapshot


def test_snapshot_highlight_and_cursor(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """What the pane looks like: two striped fields across a line break, cursor inside."""

    async def decorate(pilot) -> None:  # type: ignore[no-untyped-def]
        view = pilot.app.query_one(HexView)
        view.highlight(0x2C, 0x48, [0x30, 0x38, 0x40])
        view.move_cursor(0x3A, notify=False)
        await pilot.pause()

    app = HexApp(sample(256) + b"SFrame section\x00!", base_address=0x1000)
    assert snap_compare(app, terminal_size=(100, 20), run_before=decorate)
