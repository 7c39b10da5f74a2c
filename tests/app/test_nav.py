"""Getting about the explorer: history, ambiguous addresses in a `.o`, searching and copying bytes,
the frame picture, and a help that speaks of the section at hand.

Expected values come from the model (`Section`, its rows and rules), from
the relocations pyelftools reads, or from readelf's dump of the fixtures.
"""

from __future__ import annotations

import io
from pathlib import Path

from conftest import DATA, debugger_shown, v3_section
from rich.console import Console
from test_app import explorer, status
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from sfview.app import notation
from sfview.app.app import SfviewApp
from sfview.app.explorer.state import History
from sfview.app.screens.debugger import DebuggerScreen
from sfview.app.screens.goto import Prompt, parse_pattern
from sfview.app.screens.help import HelpScreen, help_text
from sfview.app.textual_compat import notifications
from sfview.app.widgets.frame_picture import picture
from sfview.document import Document
from sfview.inputs.core import read_core
from sfview.inputs.opening import raw_section
from sfview.sframe.model import terms
from sfview.sframe.model.rules import Kind
from sfview.unwind import session

FP_BUILD = DATA / "shapes-x86_64-O0-fp"
OBJECT = DATA / "shapes-x86_64-O2.o"
RAW = DATA / "shapes-x86_64-O2.sframe"
SIZE = (120, 40)


def chosen(app: SfviewApp) -> tuple[int | None, int | None]:
    selected = app.explorer.state.selected
    assert selected is not None
    return selected.fde, selected.fre


def messages(app: SfviewApp) -> list[str]:
    return [n.message for n in notifications(app)]


# ---------------------------------------------------------------- history


def test_history_forgets_what_lies_ahead_of_a_new_jump() -> None:
    history: History[str] = History(limit=3)
    history.jump("a", "b")
    history.jump("b2", "c")  # moved about inside b before jumping on
    assert history.back("c") == "b2", "back finds the place as it was left"
    assert history.back("b2") == "a"
    assert history.back("a") is None
    assert history.forward("a") == "b2"
    history.jump("b2", "d")
    assert history.forward("d") is None, "the jump dropped c"
    history.jump("d", "e")
    assert history.places == ["b2", "d", "e"], "only `limit` places are kept"


async def test_back_and_forward_walk_the_functions_visited() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "tab", "down")  # FDE 1, FDE 2, then row 1 of FDE 2
        assert chosen(app) == (2, 1)
        await pilot.press("left_square_bracket")
        assert chosen(app)[0] == 1, "back: the function before"
        await pilot.press("alt+left")
        assert chosen(app)[0] == 0
        await pilot.press("right_square_bracket", "alt+right")
        assert chosen(app) == (2, 1), "forward again, to the row last looked at"
        await pilot.press("ctrl+o")
        assert chosen(app)[0] == 1
        assert "back (2 of 3)" in status(app)


async def test_back_returns_from_a_go_to() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "n")
        before = chosen(app)
        await pilot.press("g", *"huge_frame+0x16", "enter")
        assert chosen(app)[0] != before[0]
        await pilot.press("left_square_bracket")
        assert chosen(app) == before
        await pilot.press("o", *"c6", "enter", "left_square_bracket")
        assert chosen(app) == before, "a go to offset is a jump too"


async def test_a_backtrace_frame_shown_from_the_debugger_is_a_jump() -> None:
    program, core = DATA / "deep-x86_64", DATA / "deep-x86_64.core"
    started = session.from_core(str(program), read_core(str(core)), None, [], None)
    app = SfviewApp(Document.open(str(program)), started)
    async with app.run_test(size=(130, 40)) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        # After two steps the cursor is on frame #1, whose step the pane shows: enter, the row it used.
        await pilot.press("space", "space", "enter")
        frame = debugger.frames[1]
        assert app.screen is app.explorer
        assert chosen(app) == (frame.function.index, frame.row.index)
        places = app.explorer.state.history.places
        assert len(places) >= 2 and (places[-2].fde, places[-2].fre) != chosen(app)


# ---------------------------------------------------------------- a relocatable object


async def test_an_address_in_a_relocatable_object_is_not_guessed() -> None:
    """Every function of a .o starts at 0: `g 10` names each function that holds it, and picks none."""
    app = explorer(OBJECT)
    async with app.run_test(size=SIZE) as pilot:
        places = app.doc.relocated_places
        section = app.section
        holding = [
            f.index
            for f in section.functions()
            if places[f.span.start].offset <= 0x10 < places[f.span.start].offset + f.size
        ]
        assert len(holding) > 1, "the fixture has several sections' functions at 0x10"
        await pilot.press("g", *"10", "enter")
        assert chosen(app) == (0, None), "nothing chosen"
        text = " ".join(messages(app))
        assert "ambiguous" in text
        assert all(f"(fdes[{index}])" in text for index in holding)
        text_section = [i for i in holding if places[section.function(i).span.start].section == ".text"]
        await pilot.press("g", *".text+0x10", "enter")
        assert [chosen(app)[0]] == text_section, "the section says which"
        main = next(f for f in section.functions() if app.doc.function_name(f) == "main")
        await pilot.press("g", *"main+0x10", "enter")
        assert chosen(app)[0] == main.index
        assert chosen(app)[1] == main.row_for(main.start_address + 0x10).index


async def test_go_to_symbol_in_a_relocatable_object_uses_the_relocations() -> None:
    app = explorer(OBJECT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s", *"main", "enter")
        assert app.doc.function_name(app.section.function(chosen(app)[0])) == "main"


# ---------------------------------------------------------------- search and copy


def test_what_can_be_searched_for() -> None:
    assert parse_pattern("e2 de") == parse_pattern("e2de") == b"\xe2\xde"
    assert parse_pattern('"main"') == b"main"
    assert "neither hex bytes" in parse_pattern("xyz")


async def test_search_finds_the_magic_in_a_raw_section() -> None:
    app = explorer(RAW)
    data = RAW.read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "end", "ctrl+f")  # the cursor away from the start: the search wraps round
        assert isinstance(app.screen, Prompt)
        await pilot.press(*"e2de", "enter")
        hex_view = app.explorer.hex_view
        assert hex_view.cursor == data.find(b"\xe2\xde") == 0
        assert hex_view.match == (0, 2)
        count = data.count(b"\xe2\xde")
        assert status(app).startswith(f"match 1 of {count} for e2 de: preamble.magic")


async def test_n_and_shift_n_go_from_match_to_match() -> None:
    app = explorer(RAW)
    data = RAW.read_bytes()
    wanted = bytes([data[0x40]])
    offsets = [i for i, b in enumerate(data) if b == wanted[0]]
    assert len(offsets) > 2
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "slash", *wanted.hex(), "enter")
        hex_view = app.explorer.hex_view
        assert hex_view.cursor == offsets[0]
        await pilot.press("n", "n")
        assert hex_view.cursor == offsets[2]
        await pilot.press("N")
        assert hex_view.cursor == offsets[1]
        assert f"match 2 of {len(offsets)}" in status(app)


async def test_copy_a_value_a_path_and_a_row() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "C")
        table = app.explorer.fde_table
        assert app.clipboard == "  ".join(cell.strip() for cell in table.row_cells(2))
        await pilot.press("c")
        func = app.section.function(2)
        assert app.clipboard == app.section.data[func.span.start : func.span.end].hex(" "), "an FDE's bytes"
        await pilot.press("o", *"3d", "enter", "c")  # FDE 1's info byte: a byte of bit fields
        field = app.explorer.fields.field_at(0x3D)
        assert field.is_bit_byte and app.clipboard == app.section.data[0x3D:0x3E].hex()
        await pilot.press("o", *"30", "enter", "c")  # FDE 1's start
        field = app.explorer.fields.field_at(0x30)
        assert field.kind == "int" and app.clipboard == field.display
        await pilot.press("C")
        assert app.clipboard == field.path
        assert any(field.path in m for m in messages(app)), "a notification says what was copied"


# ---------------------------------------------------------------- the frame picture


def _row_text(path: Path, name: str, index: int) -> tuple[str, object]:
    doc = Document.open(str(path))
    func = next(f for f in doc.section.functions() if doc.function_name(f) == name)
    row = func.rows[index]
    return picture(doc.section, func, row, name).plain, row


def _slot_line(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if label in line and "│" in line)


def test_the_picture_puts_ra_and_fp_in_their_slots() -> None:
    """small_leaf, row 1 (after `push rbp`): readelf's dump says FP c-16, and the header fixes RA at c-8."""
    dump = (DATA / "shapes-x86_64-O0-fp.readelf-sframe.txt").read_text()
    assert "0000000000001149  sp+8      u         u" in dump and "000000000000114a  sp+16     c-16      u" in dump
    text, row = _row_text(FP_BUILD, "small_leaf", 1)
    assert (row.ra.offset, row.fp.offset) == (-8, -16)
    assert _slot_line(text, "return address").split()[:2] == ["CFA-8", "sp+8"]
    assert _slot_line(text, "caller's FP").split()[:2] == ["CFA-16", "sp+0"]
    assert "← rsp" in _slot_line(text, "caller's FP")
    assert "CFA offset 8 → 16: push" in text


def test_a_cfa_from_fp_leaves_the_frame_size_unknown() -> None:
    text, row = _row_text(FP_BUILD, "small_leaf", 2)
    assert row.cfa.base == Document.open(str(FP_BUILD)).section.fp_reg
    assert "not known statically" in text and "SP: somewhere below" in text
    assert "← rbp" in _slot_line(text, "caller's FP")


def test_aarch64_keeps_the_return_address_in_the_link_register() -> None:
    doc = Document.open(str(DATA / "shapes-aarch64-O2"))
    section = doc.section
    func, row = next((f, r) for f in section.functions() for r in f.rows if r.ra.kind is Kind.SAME)
    text = picture(section, func, row).plain
    assert f"RA still in {terms.register_name(section.abi, section.ra_reg)}, the link register" in text


def test_an_undefined_ra_and_a_flexible_rule() -> None:
    """Version 3: a row without offsets is the outermost frame; a flexible CFA loaded from memory has no size."""
    outermost = v3_section(0, [(0, 1, [8]), (4, 1, [])])
    section = Document("v3", raw_section(outermost, 0)).section
    func = section.function(0)
    assert "RA undefined: the outermost frame" in picture(section, func, func.rows[1]).plain
    # Flexible: CFA = *(rbp + 16) (control word: rbp, deref_p, reg_p); RA at CFA-8 (deref_p alone).
    flexible = v3_section(1, [(0, 1, [(6 << 3) | 3, 16, 2, -8])])
    section = Document("flex", raw_section(flexible, 0)).section
    func = section.function(0)
    assert func.flexible
    text = picture(section, func, func.rows[0]).plain
    assert "loaded from memory, so the frame's size is not known statically" in text
    assert "RA saved at CFA-8" in text


async def test_the_frame_tab_follows_the_fre_table() -> None:
    app = explorer(FP_BUILD)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", *"small_leaf+1", "enter", "f")
        picture_pane = app.explorer.frame_picture
        assert app.explorer.tabs.active == "frame" and app.focused is picture_pane
        func, index = picture_pane.shown
        assert func.index == chosen(app)[0] and index == 1
        await pilot.press("right")
        assert picture_pane.shown[1] == 2 == chosen(app)[1]
        await pilot.press("f")
        assert app.explorer.tabs.active == "functions"


# ---------------------------------------------------------------- the notation and the help


def test_the_legend_names_only_what_the_version_can_show() -> None:
    v1 = Document.open(str(FP_BUILD)).section
    assert v1.version == 1 and v1.fixed_ra_offset
    assert "f = header's RA CFA-8 (the dump: u)" in notation.legend(v1)
    assert "undef" not in notation.legend(v1) and "U =" not in notation.legend(v1)
    aarch64 = Document.open(str(DATA / "shapes-aarch64-O2")).section
    assert not aarch64.fixed_ra_offset and "f =" not in notation.legend(aarch64)
    v3 = Document("v3", raw_section(v3_section(0, [(0, 1, [8])]), 0)).section
    assert "undef = outermost" in notation.legend(v3) and "(fp+8)" in notation.legend(v3)


async def test_the_legend_is_under_the_fre_table() -> None:
    app = explorer(FP_BUILD)
    async with app.run_test(size=SIZE):
        legend = app.explorer.fre_legend
        assert str(legend.render()) == notation.legend(app.section)
        assert legend.region.y == app.explorer.fre_table.region.bottom


def test_the_help_speaks_of_the_version_at_hand() -> None:
    v1 = help_text(Document.open(str(FP_BUILD)).section)
    assert "attr" not in v1 and "attribute" not in v1, "no version 3 attribute blocks in a version 1 help"
    assert "binutils 2.40" in v1 and "prints it u" in v1
    v3 = help_text(Document("v3", raw_section(v3_section(0, [(0, 1, [8])]), 0)).section)
    assert "Attribute block fields" in v3 and "func_info2" in v3


async def test_help_has_no_raw_markup_and_ends_are_reachable() -> None:
    app = explorer(FP_BUILD)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one("#help-body", VerticalScroll)
        await pilot.press("end")
        assert body.scroll_y == body.max_scroll_y > 0
        shown = app.screen.query_one(Markdown)
        blocks = [str(block._content) for block in shown.query("MarkdownBlock")]
        cells = [str(cell.render()) for cell in shown.query(Static)]  # the tables' cells
        text = "\n".join(blocks + cells)
        assert "ctrl+f" in text and "func_start_fre_off" in text, "the text of the help, as shown"
        assert "`" not in text
        await pilot.press("home", *["down"] * 3)
        assert body.scroll_y == 3


async def test_the_field_detail_speaks_of_the_version_at_hand() -> None:
    """The Structure tab's detail on a version 1 FDE: the .ksy's doc, less version 3's `attr`, no backticks."""
    app = explorer()
    async with app.run_test(size=(120, 45)) as pilot:
        await pilot.press("2")
        await pilot.pause()
        assert app.explorer.detail.field.path == "fdes[0]"
        console = Console(width=100, file=io.StringIO(), record=True)
        console.print(app.explorer.detail.query_one("#detail-text", Static).content)
        text = console.export_text()
        assert "function descriptor entry" in text
        assert "attr" not in text and "`" not in text
