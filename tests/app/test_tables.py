"""The FDE and FRE tables as a person uses them: sorted, filtered, every value whole, sharing the screen.

Orders and selections are checked against the model (`Section.function`),
widths against every cell of every row, at the narrowest and the widest
terminal the explorer is made for.
"""

from __future__ import annotations

import pytest
from conftest import DATA, count_layouts, settled
from textual.widget import Widget

from sfview import ADDRESS_MASK
from sfview.app.app import SfviewApp
from sfview.app.screens.sort import SortPicker
from sfview.app.textual_compat import notifications
from sfview.app.widgets.fde_table import COLUMNS, NOTES, SYMBOL_AT_LEAST, FdeTable
from sfview.app.widgets.filter_line import FilterLine
from sfview.app.widgets.footer import KeyFooter
from sfview.app.widgets.header import HeaderSummary
from sfview.app.widgets.row_table import RowTable
from sfview.app.widgets.table_stack import share_height
from sfview.check.catalogue import Severity
from sfview.document import Document
from sfview.sframe.bulk.overview import Overview

SHAPES = DATA / "shapes-x86_64-O2"
AARCH64 = DATA / "shapes-aarch64-O2"
OBJECT = DATA / "shapes-x86_64-O2.o"
SIZE = (120, 40)


def explorer(path=SHAPES) -> SfviewApp:
    return SfviewApp(Document.open(str(path)))


def shown(table: FdeTable) -> list[int]:
    """The FDE index on each row, top to bottom."""
    return [table.fde_at(row) for row in range(table.row_count)]


def column(table: RowTable, title: str) -> list[str]:
    """The cells of the column called `title` (its sort arrow aside), top to bottom."""
    index = [c.title.rstrip("▲▼") for c in table.columns].index(title)
    return [table.row_cells(row)[index] for row in range(table.row_count)]


def summary(app: SfviewApp) -> str:
    return str(app.screen.query_one(HeaderSummary).render())


# ---------------------------------------------------------------- sorting


async def test_s_sorts_by_the_column_picked_with_one_key_and_r_reverses() -> None:
    """`S` went to the next column at each press (six to sort by frame): it asks which, one key answers."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        assert shown(table) == list(range(9))
        await pilot.press("down", "down")  # main, fdes[2]
        await pilot.press("S")
        assert isinstance(app.screen, SortPicker)
        await pilot.press("3")  # by size, the fourth column
        sizes = [app.section.function(i).size for i in shown(table)]
        assert sizes == sorted(sizes) and shown(table) != list(range(9)), "the order changed, by size"
        assert column(table, "size") == [str(size) for size in sizes]
        assert [c.title for c in table.columns][3] == "size▲"
        top = shown(table)[0]
        assert table.cursor == 0 and app.explorer.state.selected.fde == top, "the top row (the answer) is selected"
        assert app.explorer.fre_table.function is app.section.function(top)
        before = app.explorer.state.selected.fde
        await pilot.press("R")
        assert [app.section.function(i).size for i in shown(table)] == sorted(sizes, reverse=True)
        assert [c.title for c in table.columns][3] == "size▼"
        assert table.cursor == 0 and app.explorer.state.selected.fde == shown(table)[0]
        await pilot.press("[")  # the selection the sort moved from is in the history
        assert app.explorer.state.selected.fde == before


async def test_sorting_by_name_and_among_equals_by_index() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        await pilot.press("S", "4")  # by symbol
        names = [app.doc.function_name(app.section.function(i)).lower() for i in shown(table)]
        assert names == sorted(names) and names[0] == ".plt"
        await pilot.press("S", "5")  # by FREs: equal counts keep the FDE order
        counts = [(app.section.function(i).num_fres, i) for i in shown(table)]
        assert counts == sorted(counts)


async def test_a_click_on_a_title_sorts_by_that_column_and_again_reverses() -> None:
    app = explorer(AARCH64)
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        widths = table.widths(table.size.width)
        frame = [c.title for c in table.columns].index("frame")
        x = sum(width + 1 for width in widths[:frame] if width)
        await pilot.click(table, offset=(x, 0))
        frames = [int(cell) for cell in column(table, "frame")]
        assert frames == sorted(frames) and shown(table) != list(range(len(app.section)))
        await pilot.click(table, offset=(x + 2, 0))
        assert [int(cell) for cell in column(table, "frame")] == sorted(frames, reverse=True)
        assert table.fde_at(0) == 3, "huge_frame, 70016 bytes"


async def test_the_palette_sorts_by_any_column() -> None:
    app = explorer(AARCH64)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p", *"sort functions by frame")
        await pilot.pause(0.3)
        await pilot.press("enter")
        table = app.explorer.fde_table
        frames = [int(cell) for cell in column(table, "frame")]
        assert frames == sorted(frames) and shown(table) != list(range(len(app.section)))
        assert "functions by frame, ascending" in str(app.explorer.status_line.render())


# ---------------------------------------------------------------- filtering


async def test_the_filter_pcmask_keeps_only_the_plt() -> None:
    app = explorer()
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.explorer.fde_table
        await pilot.press("slash", *"pcmask")
        pcmask = [func.index for func in app.section.functions() if func.pcmask]
        assert shown(table) == pcmask == [1]
        assert "1 of 9 FDEs shown" in summary(app)
        assert app.explorer.state.selected.fde == 1, "the function chosen before is hidden: the first shown is chosen"
        assert app.explorer.fre_table.function is app.section.function(1)
        await pilot.press("enter")
        assert app.focused is table and app.explorer.filter_line.value == "pcmask", "the filter stays, and shows"
        await pilot.press("escape")
        assert shown(table) == list(range(9)) and app.explorer.filter_line.value == ""
        assert "9 FDEs (1 PCMASK)" in summary(app)
        assert table.fde_at(table.cursor) == 1, "the cursor stays on the function"


async def test_filter_words_combine_with_names() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        await pilot.press("slash", *"FRAME")
        named = [f.index for f in app.section.functions() if "frame" in app.doc.function_name(f).lower()]
        assert shown(table) == named and len(named) == 3
        await pilot.press(*" key:a")
        assert shown(table) == named, "AMD64 has no key B"
        await pilot.press(*" signal")
        assert shown(table) == [] and "0 of 9 FDEs shown" in summary(app)
        await pilot.press("down", "up", "S", "1", "R")  # nothing to move to or sort: nothing breaks
        assert app.explorer.state.selected.fde in named


async def test_the_problems_word_keeps_what_the_screen_is_given() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        while app.explorer.summary.problems is None:  # the section's own check, in a worker
            await pilot.pause(0.05)
        await pilot.press("slash", *"problems")
        assert shown(table) == [], "a clean section"
        app.explorer.problem_functions = {2: Severity.WARNING, 5: Severity.ERROR}
        assert shown(table) == [2, 5]
        assert [table.row_cells(row)[-1] for row in range(2)] == ["warning", "error"]
        app.explorer.problem_functions = {7: Severity.ERROR}
        assert shown(table) == [7] and "1 of 9 FDEs shown" in summary(app)


async def test_the_problems_word_keeps_what_cannot_be_decoded(tmp_path) -> None:
    raw = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    raw[28 + 17 * 3 + 16] = 0x03  # FDE 3's info byte: FRE type 3 does not exist
    raw[0xC6] = 0x63  # FDE 5, FRE 1 info byte: offset size 3 does not exist
    (tmp_path / "broken.sframe").write_bytes(bytes(raw))
    app = explorer(tmp_path / "broken.sframe")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"problems")
        assert shown(app.explorer.fde_table) == [3, 5]


async def test_going_to_a_function_the_filter_hides_clears_the_filter() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        await pilot.press("slash", *"pcmask", "enter")
        await pilot.press("g", *"1060", "enter")
        assert table.row_count == 9 and not table.filtered
        assert table.fde_at(table.cursor) == 2 and app.explorer.fre_table.cursor == 1
        assert any("cleared" in n.message for n in notifications(app))


async def test_escape_gives_back_the_rows_and_the_selection_from_before_the_filter() -> None:
    """A filter that keeps the selected function, then `escape`: the rows in the order they were (sorted by
    size), the same function selected on the same row, and the focus in the table at once (`Screen.set_focus`:
    the footer's keys then change in the key's frame)."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        table = ex.fde_table
        await pilot.press("S", "3")  # by size
        named = {f.index for f in app.section.functions() if "frame" in app.doc.function_name(f).lower()}
        row = next(row for row, fde in enumerate(shown(table)) if fde in named and row)
        await pilot.press(*["down"] * row)
        before = shown(table), ex.state.selected.fde, table.cursor
        assert before[1] in named and before[0] != list(range(9))
        await pilot.press("slash", *"frame")
        assert sorted(shown(table)) == sorted(named) and ex.state.selected.fde == before[1]
        ex.action_clear_filter()
        assert app.focused is table, "focused at once, not after the next frame"
        await pilot.pause()
        assert (shown(table), ex.state.selected.fde, table.cursor) == before
        assert ex.filter_line.value == "" and "9 FDEs" in summary(app) and "shown" not in summary(app)


async def test_sorting_with_a_filter_keeps_the_filter() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        table = ex.fde_table
        await pilot.press("slash", *"frame", "enter")
        named = [f.index for f in app.section.functions() if "frame" in app.doc.function_name(f).lower()]
        assert shown(table) == named and app.focused is table
        await pilot.press("S", "3", "R")  # by size, largest first
        sizes = [app.section.function(i).size for i in shown(table)]
        assert sorted(shown(table)) == named and sizes == sorted(sizes, reverse=True)
        assert shown(table) != named, "the order changed"
        assert table.query == "frame" and ex.filter_line.value == "frame"
        assert "3 of 9 FDEs shown" in summary(app)
        assert table.cursor == 0 and ex.state.selected.fde == shown(table)[0]


async def test_a_sort_with_a_filter_kept_tests_no_function_again_until_the_names_change(monkeypatch) -> None:
    """Each word's bytes (which functions it keeps) are made once: `S` with a filter kept only picks the rows
    of the new order (a million names tested again took 10-17 ms of each sort); new names test them anew."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot)  # the names in: names delivered later would be tested anew, rightly
        table = app.explorer.fde_table
        tested: list[str] = []
        made = FdeTable._tested
        monkeypatch.setattr(FdeTable, "_tested", lambda self, word: (tested.append(word), made(self, word))[1])
        await pilot.press("slash", *"frame", "enter")
        named = sorted(shown(table))
        assert tested and len(named) == 3
        tested.clear()
        await pilot.press("S", "3", "R")
        assert not tested and sorted(shown(table)) == named
        renamed = [f"frame{i}" if i not in named else name for i, name in enumerate(table.names)]
        table.names_changed(renamed)
        assert tested == ["frame"] and shown(table) == sorted(shown(table), key=lambda i: -app.section.function(i).size)
        assert len(shown(table)) == 9, "every function is named frame now"


# ---------------------------------------------------------------- widths


def _cut(table: RowTable, rows: list[tuple[str, ...]]) -> list[str]:
    """Every cell of `rows` (and title) that its column, as laid out now, is too narrow for."""
    widths = table.widths(table.size.width)
    titles = tuple(c.title for c in table.columns)
    return [
        cell
        for cells in [titles, *rows]
        for cell, column, width in zip(cells, table.columns, widths, strict=True)
        if len(cell) > width and not (width == 0 and column.optional)
    ]


@pytest.mark.parametrize("path", [AARCH64, OBJECT, SHAPES], ids=["aarch64", "object", "x86_64"])
@pytest.mark.parametrize("width", [80, 250])
async def test_no_value_is_cut(path, width: int) -> None:
    """Every cell fits its column at 80 and 250 columns; only the FRE table's bytes may be left out."""
    app = explorer(path)
    async with app.run_test(size=(width, 24 if width == 80 else 50)) as pilot:
        await pilot.pause()
        fdes, fres = app.explorer.fde_table, app.explorer.fre_table
        assert _cut(fdes, [fdes.row_cells(row) for row in range(fdes.row_count)]) == []
        assert all(w for w in fdes.widths(fdes.size.width)), "every FDE column shows"
        for index in range(len(app.section)):
            app.explorer.show_row(index, None)
            await pilot.pause()
            assert _cut(fres, [fres.row_cells(row) for row in range(fres.row_count)]) == []
            for table in (fdes, fres):
                drawn = [table.render_line(y).text for y in range(table.size.height)]
                assert not any("…" in line for line in drawn)
                assert table.virtual_size.width <= table.size.width, "nothing to scroll sideways to"
        bytes_shown = fres.widths(fres.size.width)[-1] > 0
        assert bytes_shown == (width == 250 or path != AARCH64), "only AArch64's 14-byte rows leave no room"


def test_the_symbol_column_yields_first() -> None:
    doc = Document.open(str(AARCH64))
    section = doc.require_section()
    overview = Overview.of(section)
    names = [doc.function_name(f) for f in section.functions()]
    table = FdeTable(section, overview, names)
    natural = table.widths(1000)
    symbol = [c.title for c in table.columns].index("symbol")
    full = sum(natural) + len(natural) - 1
    others = natural[:symbol] + natural[symbol + 1 :]
    for narrower in range(1, natural[symbol] + 5):
        widths = table.widths(full - narrower)
        assert widths[symbol] == max(natural[symbol] - narrower, SYMBOL_AT_LEAST)
        assert widths[:symbol] + widths[symbol + 1 :] == others, "no other column gives up width"
    assert natural[symbol] == max(map(len, names)) == len("very_long_function"), "no wider than the widest name"


# ---------------------------------------------------------------- height


@pytest.mark.parametrize(
    ("total", "fdes", "fres", "expected"),
    [
        (40, 8, 10, 8),  # both fit: each what it asks, the FRE table the rest
        (12, 40004, 3, 9),  # a small function's rows: the FDE table the rest
        (20, 8, 30, 8),  # a few functions, many rows: the FRE table the rest
        (12, 40004, 30, 6),  # both want more than half: halves
    ],
)
def test_share_height(total: int, fdes: int, fres: int, expected: int) -> None:
    assert share_height(total, fdes, fres) == expected


async def test_the_tables_share_the_height_by_what_they_hold() -> None:
    app = explorer(AARCH64)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("down", "down", "down")  # huge_frame, 7 rows
        await pilot.pause()
        fdes, fres = app.explorer.fde_table, app.explorer.fre_table
        assert fdes.size.height == len(app.section) + 1, "every function, no empty lines under them"
        assert fres.size.height >= fres.row_count + 1, "every row of the function"
    async with explorer(AARCH64).run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "down", "down")
        await pilot.pause()
        screen = pilot.app.explorer
        assert screen.fde_table.size.height >= 4 and screen.fre_table.size.height >= 3
        assert screen.hex_view.visible_lines >= 4


async def test_the_tree_and_the_detail_widen_with_the_screen() -> None:
    widths = {}
    for size in ((200, 50), (250, 50)):
        app = explorer(AARCH64)
        async with app.run_test(size=size) as pilot:
            await pilot.press("2")
            await pilot.pause()
            tree, detail = app.explorer.structure, app.explorer.detail
            assert tree.size.width >= tree.virtual_size.width, "the labels are not cut"
            widths[size] = detail.size.width
    assert widths[(250, 50)] > widths[(200, 50)]


async def test_down_through_functions_of_any_rows_lays_nothing_out(monkeypatch) -> None:
    """Every function in turn, whatever its number of rows: the tables keep their heights (the FRE table's
    share is the section's biggest function's) and the screen is only repainted, never laid out again (at
    1,000,000 functions a layout was 13 ms of a 45 ms move)."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        await pilot.pause()
        regions = (ex.fde_table.region, ex.fre_table.region)
        await settled(app, pilot)
        layouts = count_layouts(monkeypatch, ex)
        rows = set()
        for _ in range(len(app.section) - 1):
            await pilot.press("down")
            await pilot.pause()
            rows.add(ex.fre_table.row_count)
            assert (ex.fde_table.region, ex.fre_table.region) == regions
        assert len(rows) >= 3, "functions of different numbers of rows were shown"
        assert ex.fre_table.size.height >= max(rows) + 1 or ex.fde_table.size.height >= ex.fre_table.size.height
        assert not layouts


@pytest.mark.parametrize("height", [20, 24])
async def test_opening_and_leaving_the_filter_line_lays_nothing_out(monkeypatch, height) -> None:
    """The filter line is always above the FDE table: `/`, `escape` and `enter` move the focus and repaint, the
    tables keep their height and nothing is laid out. Shown and hidden, the line laid the whole screen out at
    each (and drew it twice): 7 ms of `escape`'s 25 in tmux on a million functions."""
    app = explorer()
    async with app.run_test(size=(120, height)) as pilot:
        ex = app.explorer
        await pilot.pause()
        height = ex.tables.size.height
        await settled(app, pilot)
        layouts = count_layouts(monkeypatch, ex)
        for key in ("slash", "escape", "slash", "enter", "slash", "escape"):
            await pilot.press(key)
            await pilot.pause()
            assert ex.tables.size.height == height, key
            assert app.focused is (ex.filter_line if key == "slash" else ex.fde_table), key
        assert not layouts


def _laid_out(ex) -> list[object]:
    """What a layout of the screen decides for the tables: each one's region, virtual size and scrollbars, and
    the stack's virtual size."""
    tables = (ex.fde_table, ex.fre_table)
    return [(t.region, t.virtual_size, t.show_vertical_scrollbar, t.show_horizontal_scrollbar) for t in tables] + [
        ex.tables.virtual_size
    ]


async def _as_a_new_layout_finds_it(pilot, ex) -> None:
    """The screen laid out once more, by Textual from the start, decides for the tables what they show now."""
    shown = _laid_out(ex)
    ex.refresh(layout=True)
    await pilot.pause()
    assert _laid_out(ex) == shown


@pytest.mark.parametrize(("size", "path"), [((80, 18), SHAPES), ((120, 20), AARCH64)])
async def test_a_filter_letter_that_keeps_no_function_lays_the_screen_out_once(monkeypatch, size, path) -> None:
    """The filter's first letter keeps no function (a million functions without symbols: `f`): the FDE table
    becomes its header line and its scrollbar goes, and `escape` brings both back; each in one layout of the
    screen. Before, three each: the letter's own (the filter line's new virtual size), the table's, and the one
    its scrollbar shown or hidden after the layout asked for (23 ms of the letter's 30-50 on a million
    functions). The tables' scrollbars are decided as the screen is laid out (`RowTable.fit`), as a layout of
    the screen from the start decides them."""
    app = explorer(path)
    async with app.run_test(size=size) as pilot:
        ex = app.explorer
        table = ex.fde_table
        await settled(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        assert table.show_vertical_scrollbar, "more functions than the table has lines"
        layouts = count_layouts(monkeypatch, ex)
        await pilot.press("z")
        await pilot.pause()
        assert table.row_count == 0 and not table.show_vertical_scrollbar and table.size.height == 1
        assert len(layouts) == 1
        await _as_a_new_layout_finds_it(pilot, ex)
        layouts.clear()
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count == len(app.section) and table.show_vertical_scrollbar and ex.filter_line.value == ""
        assert len(layouts) == 1
        await _as_a_new_layout_finds_it(pilot, ex)


async def test_a_letter_that_changes_no_row_lays_nothing_out(monkeypatch) -> None:
    """A letter typed in the filter that leaves the rows as they were (none kept, and none still) is a repaint
    of the filter line, not a layout of the screen: `Input` sets its virtual size (its text's width) at every
    letter, which laid the whole screen out (3 ms of each letter on a million functions; `FilterLine`)."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        await pilot.press("slash", "z")
        await pilot.pause()
        await settled(app, pilot)
        layouts = count_layouts(monkeypatch, ex)
        await pilot.press(*"z" * 130)  # past the line's width: its text scrolls
        await pilot.pause()
        assert ex.fde_table.row_count == 0 and not layouts
        line = ex.filter_line
        assert 0 < line.scroll_x == line.virtual_size.width - line.scrollable_content_region.width, "the end shown"


@pytest.mark.parametrize("width", [80, 120])
async def test_the_filter_line_ends_at_the_screen_edge(width: int) -> None:
    """The filter line takes what its prompt leaves of the width: as wide as the screen (`Input`'s 100%), it ran
    past the screen's edge by the prompt's width, and a long filter's end and cursor with it."""
    app = explorer()
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.press("slash", *"z" * width)
        await pilot.pause()
        line = app.explorer.filter_line
        assert line.region.right == width and line.region.x > 0
        assert line.scroll_x + line.scrollable_content_region.width == line.virtual_size.width, "the end shown"


@pytest.mark.parametrize("size", [(80, 24), (120, 32)])
async def test_enter_lays_nothing_out_and_escape_in_the_table_once(monkeypatch, size) -> None:
    """`enter` in the filter line moves the focus to the table and the footer's keys with it: a repaint (before,
    one layout for the footer's keys, and once two); `escape` in the table then brings back every function and
    the FDE table's scrollbar in one layout (before, three: the scrollbar shown after the layout asked for one
    more, the stack's new virtual size one more again; `TableStack._fit`)."""
    app = explorer(AARCH64)
    async with app.run_test(size=size) as pilot:
        ex = app.explorer
        await pilot.press("slash", *"frame")
        await pilot.pause()
        await settled(app, pilot)
        layouts = count_layouts(monkeypatch, ex)
        await pilot.press("enter")
        await pilot.pause()
        assert 0 < ex.fde_table.row_count < len(app.section) and app.focused is ex.fde_table
        assert not layouts
        await pilot.press("escape")
        await pilot.pause()
        assert ex.fde_table.row_count == len(app.section) and ex.filter_line.value == ""
        assert len(layouts) == 1
        await _as_a_new_layout_finds_it(pilot, ex)


async def test_a_name_word_is_looked_for_in_the_names_joined_not_name_by_name(monkeypatch) -> None:
    """A part of a name that no name holds keeps nothing without a test of each name (a million of them took
    12 ms of the filter's first letter in a program without symbols); one that names hold keeps those."""
    from sfview.app.widgets import fde_table

    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        tests: list[str] = []
        monkeypatch.setattr(fde_table, "contains", lambda name, word: (tests.append(name), word in name)[1])
        await pilot.press("slash", "z")
        await pilot.pause()
        assert ex.fde_table.row_count == 0 and not tests
        await pilot.press("backspace", *"frame")
        await pilot.pause()
        assert [app.doc.function_name(app.section.function(i)) for i in shown(ex.fde_table)] == [
            "medium_frame",
            "huge_frame",
            "dynamic_frame",
        ]


@pytest.mark.parametrize("seed", range(20))
def test_names_holding_keeps_the_names_that_hold_the_word(seed: int) -> None:
    """`names_holding` against a test of each name: the same bytes, or None when many names hold the word."""
    import random
    from itertools import repeat
    from operator import contains

    from sfview.app.widgets.fde_table import FEW_HOLDERS, SEPARATOR, names_holding

    rng = random.Random(seed)
    for _ in range(50):
        names = ["".join(rng.choice("ab_.") for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(0, 2000))]
        word = "".join(rng.choice("ab_.") for _ in range(rng.randint(1, 4)))
        kept = names_holding(SEPARATOR.join(names), word, len(names))
        expected = bytearray(map(contains, names, repeat(word)))
        if kept is None:
            assert expected.count(1) > len(names) // FEW_HOLDERS
        else:
            assert kept == expected
    assert names_holding(SEPARATOR.join(["ab", "cd"]), f"b{SEPARATOR}c", 2) == bytearray(2), "not across two names"


# ---------------------------------------------------------------- a sort before the worker's orders


def _worker_held(monkeypatch) -> list[int]:
    """A big section's worker that has not made the orders yet (held, never run), each section a big one
    (`ORDERS_AT_ONCE`); gives the columns whose orders are made (`SortOrders.make`) from then on."""
    from sfview.app.explorer.background import Background
    from sfview.app.widgets import fde_orders, fde_table

    monkeypatch.setattr(fde_table, "ORDERS_AT_ONCE", 0)
    monkeypatch.setattr(Background, "prepare", lambda background: None)
    made: list[int] = []
    make = fde_orders.SortOrders.make

    def recorded(orders: fde_orders.SortOrders, column: int, *args: object) -> None:
        made.append(column)
        make(orders, column, *args)

    monkeypatch.setattr(fde_orders.SortOrders, "make", recorded)
    return made


async def test_a_sort_waits_for_the_worker_s_order_rather_than_make_it_in_the_key(monkeypatch) -> None:
    """On a big section whose orders the worker has not made yet, `S` makes none in the key (a million functions:
    0.65 s of it): the rows stay, the header and the status line say the sort is coming, and the worker makes
    that column's order first; when it comes, the rows are sorted and the first one selected."""
    made = _worker_held(monkeypatch)
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        await pilot.press("down", "down", "S", "1")  # by start
        assert made == [] and table.waiting and shown(table) == list(range(9))
        assert "sorting by start…" in summary(app) and "working… the functions sort by start" in str(
            app.explorer.status_line.render()
        )
        await pilot.press("escape", "down")  # keys go on meanwhile
        assert table.waiting and table.cursor == 3
        table.prepare_orders(lambda: None, app.explorer.order_made)  # the worker, at last
        await pilot.pause()
        assert made[0] == 1, "the column waited for, first"
        starts = [app.section.function(i).start_address for i in shown(table)]
        assert starts == sorted(starts) and not table.waiting and table.cursor == 0
        assert "sorting" not in summary(app)
        assert "functions by start, ascending" in str(app.explorer.status_line.render())


async def test_a_sort_still_waiting_when_the_worker_ends_is_made_then(monkeypatch) -> None:
    """A sort that waits for an order the worker did not make (it stopped, or the order was forgotten after)
    is made when the worker says it is done."""
    made = _worker_held(monkeypatch)
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        await pilot.press("S", "3")  # by size
        assert table.waiting and made == []
        table.expect_orders(False)
        sizes = [app.section.function(i).size for i in shown(table)]
        assert made == [3] and not table.waiting and sizes == sorted(sizes)


@pytest.mark.parametrize("query", ["frame", "pcmask", "_f", "a"])
async def test_the_rows_a_filter_keeps_are_sorted_alone_as_the_whole_order_sorts_them(monkeypatch, query) -> None:
    """While a sort waits for its column's order, the few rows a filter keeps are sorted alone, in the order
    the column's whole order gives them (equal values in FDE order, reversed too), every column, problems in
    the notes; no whole order made in the key."""
    from sfview.app.widgets import fde_table

    made = _worker_held(monkeypatch)
    monkeypatch.setattr(fde_table, "FEW_TO_SORT", 1)  # fewer than every function: few
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        table.set_problems({4: Severity.ERROR, 6: Severity.WARNING, 7: Severity.WARNING})
        app.explorer._filter(query)
        await pilot.pause()
        kept = shown(table)
        assert 0 < len(kept) < 9
        alone = {}
        for at in range(1, len(fde_table.COLUMNS)):
            for reverse in (False, True):
                assert table.sort_by(at, reverse), "the rows kept, sorted alone"
                alone[at, reverse] = shown(table)
                if fde_table.COLUMNS[at].title == "notes":  # the problems' notes among them, as shown
                    assert column(table, "notes") == sorted(column(table, "notes"), reverse=reverse)
        assert made == [], "no whole order made"
        table.prepare_orders(lambda: None)
        for (at, reverse), rows in alone.items():
            whole = table.orders.get(at, reverse)
            assert rows == [i for i in whole if i in kept], (fde_table.COLUMNS[at].title, reverse)


async def test_escape_with_a_sort_waiting_shows_every_row_and_says_the_sort_comes(monkeypatch) -> None:
    """A filter kept, `S` sorts the few rows alone; `escape` then shows every function in the order they had
    (the sort's whole order not made yet), the header and the status line saying so, until it comes."""
    from sfview.app.widgets import fde_table

    _worker_held(monkeypatch)
    monkeypatch.setattr(fde_table, "FEW_TO_SORT", 1)
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        table = app.explorer.fde_table
        await pilot.press("slash", *"frame", "enter", "S", "3")  # by size, the three frame functions alone
        sizes = [app.section.function(i).size for i in shown(table)]
        assert len(sizes) == 3 and sizes == sorted(sizes) and not table.waiting
        await pilot.press("escape")
        assert shown(table) == list(range(9)) and table.waiting
        assert "sorting by size…" in summary(app)
        assert "working… the functions sort by size" in str(app.explorer.status_line.render())
        table.prepare_orders(lambda: None, app.explorer.order_made)
        await pilot.pause()
        sizes = [app.section.function(i).size for i in shown(table)]
        assert sizes == sorted(sizes) and "sorting" not in summary(app)
        assert "functions by size, ascending" in str(app.explorer.status_line.render())


@pytest.mark.parametrize("keys", [("slash", *"frame"), ("slash", *"frame", "enter")])
async def test_escape_draws_the_count_the_line_and_the_keys_in_its_first_frame(monkeypatch, keys) -> None:
    """`escape` brings every function back, which lays the screen out: the header's count, the emptied filter
    line and the footer's keys are drawn in that frame, not in one after it (their widgets told the screen
    when their own messages were next handled, which at a million functions came after the frame had begun;
    here they never come; `Filtering._clear_filter`)."""
    app = explorer(AARCH64)
    async with app.run_test(size=(120, 32)) as pilot:
        ex = app.explorer
        await pilot.press(*keys)
        await pilot.pause()
        frames: list[set[str]] = []
        drawn: set[str] = set()
        refresh, render_lines = type(ex)._compositor_refresh, Widget.render_lines

        def counted(screen) -> None:
            drawn.clear()
            refresh(screen)
            frames.append(set(drawn))

        def noted(widget, crop):
            drawn.add(type(widget).__name__)
            return render_lines(widget, crop)

        monkeypatch.setattr(type(ex), "_compositor_refresh", counted)
        monkeypatch.setattr(Widget, "render_lines", noted)
        for late in (HeaderSummary, FilterLine, KeyFooter):  # their own notices after the frame, as at 1M
            monkeypatch.setattr(late, "_check_refresh", lambda widget: None)
        await pilot.press("escape")
        await pilot.pause()
        assert ex.fde_table.row_count == len(app.section) and ex.filter_line.value == ""
        assert frames and {"HeaderSummary", "FilterLine", "KeyFooter"} <= frames[0], frames


@pytest.mark.parametrize("path", [AARCH64, OBJECT, SHAPES], ids=["aarch64", "object", "x86_64"])
async def test_the_columns_measured_in_the_worker_are_those_measured_in_the_keys_thread(path, monkeypatch) -> None:
    """The worker measures the columns the overview alone decides (`measure_overview`): the overview ready,
    the checks done and the names come then go through no function in the keys' thread (at a million
    functions, 80 ms each time, a key waiting), and the widths are those worked out there, and the ends'
    as every function's start plus size says."""
    doc = Document.open(str(path))
    section = doc.require_section()
    overview = Overview.of(section)
    names = [doc.function_name(f) for f in section.functions()]
    measured = FdeTable(section, overview, names)._value_widths
    ends = [(f.start_address + f.size) & ADDRESS_MASK for f in section.functions()]
    assert measured[[c.title for c in COLUMNS].index("end")] == len(f"{max(ends):#x}")

    app = explorer(path)
    async with app.run_test() as pilot:
        await pilot.pause()
        table = app.explorer.fde_table
        table.measure_overview()
        monkeypatch.setattr(FdeTable, "_widths_of_overview", lambda self: pytest.fail("measured in the keys' thread"))
        table.overview_ready()
        table.names_changed(names, max(map(len, names)))
        table.set_problems({0: Severity.ERROR})
        assert table._value_widths[NOTES] == len("error")  # the notes measured again, not the overview's columns
        table.set_problems({})
        assert table._value_widths == measured


def test_an_end_past_the_top_of_the_address_space_is_measured_as_it_wraps() -> None:
    """A function running past 2**64 ends where the address wraps (as the end column shows it): the widest
    end is the others', not a 17-digit number."""
    doc = Document.open(str(SHAPES))
    section = doc.require_section()
    overview = Overview.of(section)
    others = [(f.start_address + f.size) & ADDRESS_MASK for f in section.functions()][1:]
    overview.start[0], overview.size[0] = ADDRESS_MASK - 15, 32
    table = FdeTable(section, overview, [""] * len(section), widest=0)
    table.measure_overview()
    assert table._value_widths[[c.title for c in COLUMNS].index("end")] == len(f"{max(others):#x}")


def test_a_cut_name_keeps_its_start_and_its_end() -> None:
    """Names were cut from the right: two methods of one class read the same (`geo::detail::Vec<do…`).
    Cut, each keeps its namespace and its own end, the argument list going first, and two such names
    stay apart."""
    doc = Document.open(str(AARCH64))
    section = doc.require_section()
    stem = "geo::detail::Vec<double, 3ul>::"
    names = [f"{stem}{('norm', 'dot')[i % 2]}(geo::detail::Vec<double, 3ul> const&) const" for i in range(len(section))]
    table = FdeTable(section, Overview.of(section), names)
    natural = table.widths(1000)
    symbol = [c.title for c in table.columns].index("symbol")
    widths = table.widths(sum(natural) + len(natural) - 1 - (len(names[0]) - len(stem) - len("norm(…) const")))
    assert SYMBOL_AT_LEAST < widths[symbol] < len(names[0])

    def symbol_cell(row: int, widths: list[int]) -> str:
        at = sum(w + 1 for w in widths[:symbol] if w)
        return table._line(table.row_cells(row), widths)[at : at + widths[symbol]].strip()

    assert sorted(symbol_cell(row, widths) for row in range(2)) == [f"{stem}dot(…) const", f"{stem}norm(…) const"]
    narrow = table.widths(sum(natural) + len(natural) - 1 - (natural[symbol] - 20))
    assert {symbol_cell(row, narrow) for row in range(2)} == {"geo::d…norm(…) const", "geo::d…:dot(…) const"}


def test_a_damaged_fdes_row_says_what_its_bytes_say(tmp_path) -> None:
    """A damaged FDE's row showed `section o…` for its name, `0` FREs where 3 are stored, and `ADDR1` where
    the info byte says 7: its name (nm's), the count readelf printed rows for, and the undefined type named."""
    import re
    import shutil
    import subprocess

    path = tmp_path / "damaged"
    shutil.copy(SHAPES, path)
    doc = Document.open(str(path))
    func = doc.require_section().function(4)
    data = bytearray(path.read_bytes())
    at = doc.file_offset + func.info_offset
    data[at] = (data[at] & 0xF0) | 7  # bits 3..0, the FRE type: 7, which no version defines
    path.write_bytes(data)
    doc = Document.open(str(path))
    section = doc.require_section()
    assert section.function(4).error is not None
    table = FdeTable(section, Overview.of(section), [doc.function_name(f) for f in section.functions()])
    cells = dict(zip([c.title for c in table.columns], table.row_cells(table.order.index(4)), strict=True))
    readelf = (DATA / "shapes-x86_64-O2.readelf-sframe.txt").read_text()
    block = readelf.split("func idx [4]: pc = 0x1190")[1].split("func idx [5]")[0]
    stored_rows = len(re.findall(r"^\s+[0-9a-f]{16}\s", block, re.M))
    nm = subprocess.run(["nm", str(SHAPES)], capture_output=True, text=True, check=True).stdout
    (name,) = [line.split()[2] for line in nm.splitlines() if line.startswith("0000000000001190 ")]
    assert (cells["symbol"], cells["FREs"], cells["FRE type"]) == (name, str(stored_rows), "7 undefined")
    widths = table.widths(1000)
    assert all(len(cell) <= width for cell, width in zip(table.row_cells(table.order.index(4)), widths, strict=True))
