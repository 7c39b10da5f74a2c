"""The instructions pane (`i`) in the explorer, driven by keys: it follows and sets the selection."""

from __future__ import annotations

import pytest
from conftest import DATA, count_layouts, settled

from sfview.app.app import SfviewApp
from sfview.app.widgets.code_table import INSTRUCTION_WIDTH
from sfview.code.disasm import listing
from sfview.document import Document

SHAPES = DATA / "shapes-x86_64-O2"
SIZE = (100, 32)
MAIN = 2


def status(app: SfviewApp) -> str:
    return str(app.explorer.status_line.render())


async def test_i_shows_the_functions_instructions_in_place_of_its_rows() -> None:
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        await pilot.press("n", "n", "i")
        await pilot.pause()
        assert ex.focused is ex.code_table and ex.code_table.display and not ex.fre_table.display
        expected = listing(app.explorer.doc, app.section.function(MAIN)).instructions
        assert ex.code_table.row_count == len(expected)
        cells = ex.code_table.row_cells(1)
        assert cells[1] == f"{expected[1].address:#x}" and cells[3] == expected[1].text == "movslq %edi, %rdi"
        assert cells[4] == "▶ 1: CFA sp+8 → sp+16"  # right after `pushq %rbx`
        await pilot.press("down")  # onto row 1's first instruction: row 1 is the selection
        row = app.section.function(MAIN).rows[1]
        assert ex.state.selected.fre == 1 and ex.fre_table.cursor == 1
        assert ex.hex_view.highlighted == (row.span.start, row.span.end)
        await pilot.press("i")  # the rows again, on the same row
        assert ex.fre_table.display and not ex.code_table.display and ex.fre_table.cursor == 1


async def test_go_to_an_address_lands_on_its_instruction() -> None:
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        await pilot.press("i", "g", *"1058", "enter")  # inside `movq %rdi, %r9` at 0x1057
        await pilot.pause()
        line = ex.code_table.listing.line_of(0x1058)
        assert ex.code_table.listing.instructions[line].address == 0x1057
        assert ex.code_table.cursor == line
        assert ex.state.selected.fde == MAIN and ex.state.selected.fre == 1


async def test_dwarf_beside_each_rows_first_instruction() -> None:
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        await pilot.press("n", "n", "i", "d")
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [c.title for c in ex.code_table.columns][-1] == "DWARF"
        assert ex.code_table.row_cells(0)[-1] == "="  # DWARF agrees at main's entry
        assert ex.code_table.row_cells(2)[-1] == ""  # not a row's first instruction


async def test_a_raw_section_says_it_has_no_code() -> None:
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2.sframe")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert "raw SFrame section" in app.explorer.code_table.row_cells(0)[3]
        assert "raw SFrame section" in status(app)


async def test_n_with_the_instructions_shown_lays_nothing_out(monkeypatch) -> None:
    """From a function of 3 instructions to one of 13,073 and back (through 2, 8, 16, ...): the tables keep
    their heights and the screen is never laid out again, only repainted (a layout each was 5-10 ms)."""
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        await pilot.press("i")
        await pilot.pause()
        ex.fde_table.focus()
        await settled(app, pilot)  # the worker's deliveries, the focus and the footer's keys, before the count
        regions = (ex.fde_table.region, ex.code_table.region)
        layouts = count_layouts(monkeypatch, ex)
        counts = set()
        for key in "n" * (len(app.section) - 1) + "p" * 3:
            await pilot.press(key)
            await pilot.pause()
            counts.add(ex.code_table.row_count)
            assert (ex.fde_table.region, ex.code_table.region) == regions
        assert len(counts) >= 8 and max(counts) > ex.code_table.size.height > min(counts)
        assert not layouts
        assert ex.code_table.virtual_size.height == len(ex.code_table.listing.instructions) + 1
        await pilot.press("tab", "end")  # scrolls to the last instruction of what is shown now
        await pilot.pause()
        assert (
            ex.code_table.scroll_offset.y
            == ex.code_table.row_count + 1 - ex.code_table.scrollable_content_region.height
        )


@pytest.mark.parametrize("width", [64, 70])
async def test_the_columns_fit_beside_the_vertical_scrollbars(width: int) -> None:
    """Both tables scroll up and down at 24 lines; where their names (70 wide) or instructions (64) give
    up width, they are laid out in the width the vertical scrollbar leaves, so no horizontal scrollbar
    takes a line and the last column is whole."""
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=(width, 24)) as pilot:
        ex = app.explorer
        await pilot.press("n", "n", "i")
        await pilot.pause()
        table = ex.code_table if width == 64 else ex.fde_table
        assert table.show_vertical_scrollbar and not table.show_horizontal_scrollbar
        assert table.virtual_size.width == table.scrollable_content_region.width == table.size.width - 1
        if table is ex.code_table:
            assert table.widths(table.view_width)[3] < INSTRUCTION_WIDTH, "the instructions gave way"
            change = table.listing.instructions[1].change
            assert change == "▶ 1: CFA sp+8 → sp+16" and table.render_line(2).text.rstrip().endswith(change)
        else:
            assert table.widths(table.view_width)[4] < table.columns[4].width, "the names gave way"
            assert table.render_line(0).text.rstrip().endswith("notes")


async def test_a_row_chosen_in_the_rows_shows_the_instruction_that_made_it() -> None:
    """Row 2 of fdes[7] (chosen elsewhere, as the debugger chooses a frame's row) starts at its 885th
    instruction: after `i`, the cursor is on it and the instruction above it (the one that made the row)
    is on the screen too, as when moving up."""
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        ex.show_row(7, 2)  # as the debugger does, for a frame's row
        await pilot.press("i")
        await pilot.pause()
        code = ex.code_table
        line = code.listing.first_of_row(2)
        assert ex.state.selected.fde == 7 and ex.state.selected.fre == 2 and line > code.size.height
        top, rows = code.scroll_offset.y, code.scrollable_content_region.height - 1
        assert code.cursor == line and top <= line - 1 and line < top + rows
        made, first = code.listing.instructions[line - 1 : line + 1]
        assert made.text == "addq $0x28, %rsp" and first.change == "▶ 2: CFA sp+48 → sp+8"
        await pilot.press("up", "up", "down")
        await pilot.pause()
        assert code.cursor == line - 1 and code.scroll_offset.y == line - 3


async def test_at_80x24_i_says_whole_which_instruction_made_a_row_and_where_to_see_why() -> None:
    """The status line after `i` says how to read the pane (the instruction above `▶` made the row,
    `f` draws the frame it left), whole at 80 columns; `f` from an instruction draws its row's frame."""
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=(80, 24)) as pilot:
        ex = app.explorer
        await pilot.press("n", "n", "i")
        await pilot.pause()
        shown = status(app)
        assert "instruction just above made it" in shown and "f: frame" in shown
        assert len(shown) <= ex.status_line.content_region.width
        await pilot.press("down", "f")  # row 1's first instruction: the frame after `pushq %rbx`
        await pilot.pause()
        assert ex.tabs.active == "frame" and ex.state.selected.fre == 1
        assert "CFA offset 8 → 16: push" in str(ex.frame_picture.query_one("#frame-text").render())
