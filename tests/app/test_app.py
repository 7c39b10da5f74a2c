"""The explorer, driven as a person drives it: keys, clicks, dialogs.

Each test checks what the panes hold against the model: the FRE table
against `Function.rows`, the hex highlight against spans, the status line
and the tree cursor against `FieldTree.field_at`, go-to against
`find_function` and `row_for`.
"""

from __future__ import annotations

import gc
import io
import re
import struct
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import DATA, count_layouts, fuzzed_section, load_section_fixture, settled
from rich.console import Console
from textual import events
from textual.app import App
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widgets import Input, Static, Tree

from sfview import rule_notation
from sfview.app.app import SfviewApp
from sfview.app.explorer import background, panes
from sfview.app.explorer.background import KEYS_BUSY_S, SWITCH_INTERVAL_S, Background
from sfview.app.explorer.screen import ExplorerScreen
from sfview.app.fields import FieldTree
from sfview.app.screens.goto import SYMBOLS_SHOWN, GotoNumber, GotoSymbol
from sfview.app.screens.help import HelpScreen
from sfview.app.textual_compat import REFRESH_LAYOUT, notifications
from sfview.app.widgets import fde_orders, structure_tree
from sfview.app.widgets.fde_table import FdeTable
from sfview.app.widgets.footer import KeyFooter, key_width
from sfview.app.widgets.header import HeaderSummary
from sfview.app.widgets.structure_tree import CHUNK, CHUNK_TYPE, StructureTree
from sfview.document import Document
from sfview.inputs.opening import raw_section
from sfview.sframe.model import terms

SHAPES = DATA / "shapes-x86_64-O2"
SIZE = (100, 32)


def explorer(path: Path = SHAPES) -> SfviewApp:
    return SfviewApp(Document.open(str(path)))


def status(app: SfviewApp) -> str:
    return str(app.explorer.status_line.render())


def detail_text(app: SfviewApp, width: int = 100) -> str:
    """The detail panel's explanation as plain text."""
    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(app.explorer.detail.query_one("#detail-text", Static).content)
    return console.export_text()


def tree_path(app: SfviewApp) -> str:
    node = app.explorer.structure.cursor_node
    assert node is not None
    return app.explorer.structure.field_of(node).path


async def type_text(pilot, text: str) -> None:
    await pilot.press(*text)


# ---------------------------------------------------------------- tables


async def test_fde_table_holds_every_function() -> None:
    app = explorer()
    async with app.run_test(size=SIZE):
        section = app.section
        assert app.explorer.fde_table.row_count == len(section) == 9
        for index in range(len(section)):
            func = section.function(index)
            cells = app.explorer.fde_table.row_cells(index)
            assert cells[:4] == (str(index), f"{func.start_address:#x}", f"{func.end_address:#x}", str(func.size))
            assert cells[4] == app.doc.function_name(func)
            assert cells[5] == str(func.num_fres)
            assert cells[6] == str(max(row.cfa.offset for row in func.rows)), "frame: the largest CFA offset"
        assert app.explorer.fde_table.row_cells(1)[7:10] == ("ADDR1", "PCMASK", "A")
        assert app.explorer.fde_table.row_cells(8)[7] == "ADDR4"
        assert app.explorer.fde_table.row_cells(2)[4] == "main"


async def test_choosing_a_function_fills_the_fre_table() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down")
        func = app.section.function(2)
        assert app.explorer.fde_table.cursor == 2
        assert app.explorer.fre_table.function is func
        assert app.explorer.fre_table.row_count == len(func.rows) == 3
        for row in func.rows:
            cells = app.explorer.fre_table.row_cells(row.index)
            data = app.section.data[row.span.start : row.span.end].hex(" ")
            expected = (
                f"{row.address:#x}",
                rule_notation.cfa_text(app.section, row.cfa),
                rule_notation.saved_text(app.section, row.fp),
                rule_notation.saved_text(app.section, row.ra),
                terms.BASE_REG_NAMES[row.base_reg],
            )
            assert cells[1:6] == expected
            assert cells[-1] == data
        assert [app.explorer.fre_table.row_cells(i)[2] for i in range(3)] == ["sp+8", "sp+16", "sp+8"]
        assert app.explorer.fre_table.row_cells(0)[4] == "f", "AMD64: the RA is at the header's fixed offset"
        assert app.explorer.hex_view.highlighted == (func.span.start, func.span.end)
        assert status(app).startswith("fdes[2] at 0x3e..0x4f") and "(main)" in status(app)


async def test_an_fre_row_highlights_exactly_its_bytes() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "tab", "down")
        row = app.section.function(2).rows[1]
        assert app.focused is app.explorer.fre_table
        assert app.explorer.hex_view.highlighted == (row.span.start, row.span.end)
        assert app.explorer.hex_view.cursor == row.span.start
        assert status(app).startswith("fdes[2].fres[1] at 0xf8..0xfb")


async def test_a_pcmask_function_marks_its_rows() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down")
        assert app.section.function(1).pcmask
        assert app.explorer.fre_table.row_cells(0)[1] == "0x1030 [m]"


async def test_next_and_previous_function() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "n", "n", "p")
        assert app.explorer.fde_table.cursor == 2
        assert app.explorer.fre_table.function is app.section.function(2)


async def test_a_click_chooses_a_row() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click(app.explorer.fde_table, offset=(5, 4))  # line 0 is the header: row 3
        assert app.explorer.fde_table.cursor == 3
        assert app.explorer.fre_table.function is app.section.function(3)


# ---------------------------------------------------------------- hex pane and tree


async def test_the_hex_cursor_selects_the_innermost_field() -> None:
    app = explorer()
    fields = FieldTree(app.section)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        assert app.focused is app.explorer.hex_view
        start = app.explorer.hex_view.cursor  # FDE 0 is chosen at start: the cursor is on its first byte
        await pilot.press("right", "right", "right", "right", "down")
        offset = start + 4 + 16
        assert app.explorer.hex_view.cursor == offset
        field = fields.field_at(offset)
        assert status(app).startswith(field.status())
        assert field.path == "fdes[1].func_start"
        assert app.explorer.fde_table.cursor == 1, "the FDE table follows the byte's function"
        await pilot.press("2")
        assert tree_path(app) == "fdes[1].func_start"
        assert app.explorer.hex_view.highlighted == (field.span.start, field.span.end)


@pytest.mark.parametrize("name", ["test-x86_64-2.40", "test-x86_64-2.41", "test-fp-x86_64-2.45", "test-aarch64-2.46"])
async def test_every_byte_leads_the_tree_to_its_field(name: str) -> None:
    """Versions 1, 2, 2 with PC-relative starts, 3 (attribute blocks): the tree reaches every field."""
    data, base, _ = load_section_fixture(DATA / "sections" / f"{name}.json")
    app = SfviewApp(Document(name, raw_section(data, base)))
    fields = FieldTree(app.section)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        for offset in range(len(data)):
            app.explorer.goto_offset(offset)
            field = fields.field_at(offset)
            assert tree_path(app) == field.path, f"offset {offset:#x}"
            assert app.explorer.hex_view.highlighted == (field.span.start, field.span.end)


async def test_a_tree_node_highlights_its_bytes() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        assert tree_path(app) == "fdes[0]", "the tree follows the function chosen before"
        await pilot.press("home", "down", "enter", "down", "down")  # section, preamble (opened), magic, version
        assert tree_path(app) == "preamble.version"
        assert app.explorer.hex_view.highlighted == (2, 3)
        assert status(app) == "preamble.version = V1 (1) at 0x2..0x3"
        assert app.explorer.detail.field.path == "preamble.version"
        assert "value  1 = 0x1 → V1 (1)" in detail_text(app)


async def test_the_hidden_tables_follow_the_tree_when_their_tab_is_shown() -> None:
    """Moving in the tree leaves the hidden FDE and FRE tables alone (no layout of the whole
    screen per move); showing their tab brings them to the function chosen in the tree."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        assert tree_path(app) == "fdes[0]"
        await pilot.press("down")
        while not tree_path(app).startswith("fdes[2]"):
            await pilot.press("down")
        assert app.explorer.fde_table.cursor == 0, "the hidden FDE table did not move"
        assert app.explorer.fre_table.function.index == 0
        await pilot.press("n")
        assert tree_path(app) == "fdes[3]", "the next function after the one chosen in the tree"
        await pilot.press("1")
        assert app.explorer.fde_table.cursor == 3
        assert app.explorer.fre_table.function.index == 3
        assert app.explorer.fre_table.border_title.startswith("FREs of fdes[3]")


async def test_choosing_an_fde_chunk_of_a_big_section_does_not_build_every_fde() -> None:
    app = SfviewApp(_synthetic_document(3 * CHUNK + 5))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        assert app.explorer.fde_table.cursor == 3 * CHUNK + 4
        await pilot.press("2")
        assert tree_path(app) == f"fdes[{3 * CHUNK + 4}]"
        fdes = next(
            c for c in app.explorer.structure.root.children if app.explorer.structure.field_of(c).name == "fdes"
        )
        chunks = [app.explorer.structure.field_of(c) for c in fdes.children]
        assert [c.name for c in chunks] == [f"fdes[{k * CHUNK}..{k * CHUNK + CHUNK - 1}]" for k in range(3)] + [
            f"fdes[{3 * CHUNK}..{3 * CHUNK + 4}]"
        ]
        assert all(c.type_name == CHUNK_TYPE for c in chunks)
        assert [len(c.children) for c in fdes.children] == [0, 0, 0, 5], "only the chunk opened has nodes"
        await pilot.press("up", "up", "up", "up", "up")  # up to the chunk node
        chunk = chunks[3]
        assert tree_path(app) == chunk.name
        assert app.explorer.hex_view.highlighted == (chunk.span.start, chunk.span.end)


async def test_the_chunks_of_a_huge_section_are_grouped(monkeypatch) -> None:
    """Past `CHUNKS_AT_MOST` chunks, the tree groups them: a first look opens one group and one chunk."""
    monkeypatch.setattr(structure_tree, "CHUNKS_AT_MOST", 2)
    app = SfviewApp(_synthetic_document(3 * CHUNK + 5))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "2")
        assert tree_path(app) == f"fdes[{3 * CHUNK + 4}]"
        tree = app.explorer.structure
        fdes = next(c for c in tree.root.children if tree.field_of(c).name == "fdes")
        groups = [tree.field_of(c).name for c in fdes.children]
        assert groups == [f"fdes[0..{2 * CHUNK - 1}]", f"fdes[{2 * CHUNK}..{3 * CHUNK + 4}]"]
        assert [tree.field_of(c).name for c in fdes.children[1].children] == [
            f"fdes[{2 * CHUNK}..{3 * CHUNK - 1}]",
            f"fdes[{3 * CHUNK}..{3 * CHUNK + 4}]",
        ]
        assert len(fdes.children[0].children) == 0, "the group not looked at is not opened"
        app.explorer.goto_offset(app.section.function(5).span.start)  # into the other group
        await pilot.pause()
        assert tree_path(app).startswith("fdes[5]")


def _tree_nodes(node) -> int:
    return 1 + sum(_tree_nodes(child) for child in node.children)


async def _first_open_of_the_tree(functions: int) -> tuple[int, int]:
    """Nodes the tree holds, and times Textual's tree was invalidated, once the Structure tab is first shown."""
    app = SfviewApp(_synthetic_document(functions))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        invalidated = []
        tree = app.explorer.structure
        textual_invalidate = Tree._invalidate
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Tree, "_invalidate", lambda this: (invalidated.append(1), textual_invalidate(this)))
            await pilot.press("2")
            await pilot.pause()
        assert tree_path(app) == "fdes[0]"
        return _tree_nodes(tree.root), len(invalidated)


async def test_the_first_look_at_the_tree_costs_what_it_shows_not_the_section(monkeypatch) -> None:
    """However many functions, the first look builds the header's fields, one group, one chunk, one FDE each
    (the chunk's FDEs): ten times the functions, the same nodes but for the top level's groups; and a chunk of
    FDEs is added at once (Textual's tree invalidated once per node opened, not once per FDE)."""
    monkeypatch.setattr(structure_tree, "CHUNK", 50)
    monkeypatch.setattr(structure_tree, "CHUNKS_AT_MOST", 4)
    small_nodes, small_invalidated = await _first_open_of_the_tree(1000)
    big_nodes, big_invalidated = await _first_open_of_the_tree(10000)
    # Each level opened holds at most CHUNKS_AT_MOST groups or CHUNK FDEs, whatever the count: one level more.
    assert big_nodes - small_nodes <= 2 * structure_tree.CHUNKS_AT_MOST, (small_nodes, big_nodes)
    assert big_nodes < 100 + structure_tree.CHUNK
    assert max(small_invalidated, big_invalidated) < structure_tree.CHUNK // 2, "once a node opened, not a child"


async def test_the_first_look_at_the_tree_shows_the_selected_fde_in_its_first_layout(monkeypatch) -> None:
    """The tree is brought to the selection before the tab's first frame, and scrolled to it in the layout that
    gives it its size: the first layout after the key, which draws the tab, already shows the selected FDE under
    the cursor (the reveal used to wait for that frame, and a second layout showed it)."""
    app = SfviewApp(_synthetic_document(CHUNK + 5))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        chosen = 3 * SIZE[1]  # several screens down the chunk
        app.explorer.fde_table.move_cursor(chosen)
        await pilot.pause()
        tree = app.explorer.structure
        drawn: list[tuple[str, list[str]]] = []

        def looked(screen: ExplorerScreen, *args, **kwargs) -> None:
            laid_out(screen, *args, **kwargs)
            window = tree.scrollable_content_region.reset_offset
            if window and not drawn:  # the tree's state as that layout drew it
                node = tree.cursor_node
                drawn.append((tree.field_of(node).path if node else "", [s.text for s in tree.render_lines(window)]))

        laid_out = getattr(ExplorerScreen, REFRESH_LAYOUT)
        monkeypatch.setattr(ExplorerScreen, REFRESH_LAYOUT, looked)
        await pilot.press("2")
        assert drawn, "the tab was laid out"
        path, lines = drawn[0]
        assert path == f"fdes[{chosen}]"
        assert any(f"fdes[{chosen}]  0x" in line for line in lines), lines
        assert tree.scroll_offset.y > 0, "scrolled: the FDE is not on the tree's first screen"


async def test_the_first_look_at_a_grouped_section_builds_a_few_hundred_nodes() -> None:
    """With the tree's own chunk sizes, a section big enough to be grouped (a million functions are 21 groups)
    opens as its header, its groups, one group's chunks and one chunk's FDEs: a few hundred nodes, each about
    10 µs of the tab's first frame (chunks of 1,000 FDEs made it 1,116 nodes, a third of that frame)."""
    functions = structure_tree.CHUNK * structure_tree.CHUNKS_AT_MOST + 1
    nodes, _ = await _first_open_of_the_tree(functions)
    assert nodes <= structure_tree.CHUNK + structure_tree.CHUNKS_AT_MOST + 20, nodes
    assert nodes <= 500, nodes


def _expanded(tree: StructureTree) -> list[str]:
    """The paths of the tree's expanded nodes, in the tree's order."""
    return [
        tree.field_of(tree.get_node_at_line(line)).path
        for line in range(tree.last_line + 1)
        if tree.get_node_at_line(line).is_expanded
    ]


async def _readied(pilot, app: SfviewApp) -> None:
    """Pause until the hidden tree has been brought to the selection (`TREE_READY_AFTER_S` made short)."""
    for _ in range(100):
        await pilot.pause(0.01)
        if app.explorer.state.reveal_pending is None:
            return
    raise AssertionError("the hidden tree was not readied")


async def test_the_tree_is_readied_while_nobody_types_and_its_first_look_builds_nothing(monkeypatch) -> None:
    """Once no key has come for `TREE_READY_AFTER_S`, the hidden tree is brought to the selection: showing its
    tab then adds no node in the key's handling (at a million functions, 470 nodes and their lines were a third
    of that key), and shows the selected FDE under the cursor."""
    monkeypatch.setattr(panes, "TREE_READY_AFTER_S", 0.02)
    app = SfviewApp(_synthetic_document(3 * CHUNK + 5))
    async with app.run_test(size=SIZE) as pilot:
        chosen = 2 * CHUNK + 7
        app.explorer.fde_table.move_cursor(chosen)
        await _readied(pilot, app)
        tree = app.explorer.structure
        assert tree.field_of(tree.cursor_node).path == f"fdes[{chosen}]", "readied while hidden"
        added = []
        add_children = StructureTree._add_children
        monkeypatch.setattr(
            StructureTree, "_add_children", lambda this, node: (added.append(node), add_children(this, node))
        )
        await pilot.press("2")
        await pilot.pause()
        assert tree_path(app) == f"fdes[{chosen}]"
        assert not added, "no node built in the key's handling"
        assert any(
            f"fdes[{chosen}]  0x" in strip.text
            for strip in tree.render_lines(tree.scrollable_content_region.reset_offset)
        )


async def test_a_tree_readied_for_a_selection_left_since_opens_as_if_revealed_when_shown(monkeypatch) -> None:
    """What the hidden tree opened for a selection nobody saw it show is closed again when it is brought to the
    next: the tab shows the nodes it would have, had it been brought to the selection as it was shown (what it
    showed before stays open), and a chunk closed so is opened again when its FDE is chosen."""
    monkeypatch.setattr(panes, "TREE_READY_AFTER_S", 0.02)

    async def shown_after(*readied: int) -> tuple[list[str], str]:
        app = SfviewApp(_synthetic_document(3 * CHUNK + 5))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2", "1")  # seen: the first chunk
            for index in readied:
                app.explorer.fde_table.move_cursor(index)
                await _readied(pilot, app)
            app.explorer.fde_table.move_cursor(CHUNK + 3)
            await pilot.press("2")  # at once: not readied
            await pilot.pause()
            return _expanded(app.explorer.structure), tree_path(app)

    at_once = await shown_after()
    assert at_once == (["", "fdes", f"fdes[0..{CHUNK - 1}]", f"fdes[{CHUNK}..{2 * CHUNK - 1}]"], f"fdes[{CHUNK + 3}]")
    assert await shown_after(CHUNK + 9, 3 * CHUNK + 2) == at_once


async def test_the_focus_leaving_the_tree_or_coming_back_redraws_its_lines_without_measuring_them(monkeypatch) -> None:
    """New styles (the focus gained or lost) change how the tree's lines are drawn, not which they are: they are
    drawn again, in the new style, without being made again from every node (Textual's tree does, and lays
    the screen out: 1.1 ms at the Structure tab's first open of a million functions)."""
    app = SfviewApp(_synthetic_document(3 * CHUNK + 5))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await pilot.pause()
        tree = app.explorer.structure

        def cursor_line() -> Strip:
            window = tree.scrollable_content_region.reset_offset
            return tree.render_lines(window)[tree.cursor_line - tree.scroll_offset.y]

        focused = cursor_line()
        built: list[int] = []
        build = Tree._build
        monkeypatch.setattr(Tree, "_build", lambda this: (built.append(1), build(this)))
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is not tree
        blurred = cursor_line()
        assert blurred.text == focused.text and blurred != focused, "drawn again, in the style without the focus"
        await pilot.press("shift+tab")
        await pilot.pause()
        assert app.focused is tree and cursor_line() == focused
        assert not built, "the lines were not made again"


async def test_the_tree_counts_its_lines_as_textual_draws_them() -> None:
    """`get_label_width` counts cells; Textual's own draws every label to count them: the same widths, expanded
    or not, leaf or not, with names and without."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await pilot.pause()
        tree = app.explorer.structure
        fdes = next(c for c in tree.root.children if tree.field_of(c).name == "fdes")
        fdes.children[1].expand()
        await pilot.pause()
        nodes = [tree.get_node_at_line(line) for line in range(tree.last_line + 1)]
        assert any(n.allow_expand and n.is_expanded for n in nodes) and any(not n.allow_expand for n in nodes)
        assert any(n.allow_expand and not n.is_expanded for n in nodes)
        assert [tree.get_label_width(n) for n in nodes] == [Tree.get_label_width(tree, n) for n in nodes]


async def test_a_move_in_the_hex_pane_is_shown_everywhere_before_the_key_is_done(monkeypatch) -> None:
    """The hex pane tells the screen at once (a signal): the selection follows in the same handler, in the
    same frame as the hex pane's own lines, and nothing is laid out (keys keep coming: the hidden tree is not
    readied meanwhile)."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        ex = app.explorer
        await pilot.press("x")
        await pilot.pause()
        await settled(app, pilot)
        layouts = count_layouts(monkeypatch, ex)
        for _ in range(12):
            app.note_input()  # as the key would
            ex.hex_view.action_cursor_down()  # no pause: what follows is the key's own doing
            assert ex.state.selected.field is app.explorer.fields.field_at(ex.hex_view.cursor)
            await pilot.pause()
        assert not layouts


async def test_the_work_after_the_first_screen_hands_the_interpreter_back_sooner(monkeypatch) -> None:
    """While the overview, the names and the checks run in their thread, the switch interval is
    `SWITCH_INTERVAL_S` (the keys wait less for the interpreter); it is set back after."""
    before = sys.getswitchinterval()
    seen = []
    validate = Background.validate
    monkeypatch.setattr(Background, "validate", lambda this: (seen.append(sys.getswitchinterval()), validate(this)))
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        while app.explorer.summary.problems is None:
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()  # the notes' order is made after the checks
    assert seen == [SWITCH_INTERVAL_S] and before > SWITCH_INTERVAL_S
    assert sys.getswitchinterval() == before


async def test_the_checks_wait_while_keys_are_pressed() -> None:
    """In the checks' thread, `give_way` waits while a key was pressed within `KEYS_BUSY_S`, and no longer;
    not at all once the keys have stopped. (A clock of the test's own: tests do not time.)"""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down")
        await pilot.pause()
        clock = [app.last_input + KEYS_BUSY_S / 10]
        naps: list[float] = []

        def nap(seconds: float) -> None:
            naps.append(seconds)
            clock[0] += seconds

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(background.time, "monotonic", lambda: clock[0])
            patch.setattr(background.time, "sleep", nap)
            app.explorer.background.give_way()
            assert naps and app.last_input + KEYS_BUSY_S <= clock[0] < app.last_input + KEYS_BUSY_S * 1.5
            naps.clear()
            app.explorer.background.give_way()
            assert not naps, "the keys stopped: the checks go on at once"


async def test_the_driver_notes_a_key_as_it_reads_it() -> None:
    """The driver's input thread notes a key or a click (`last_input`) before it sends it on, so that the worker
    stops for it without waiting for the keys' thread to get to it; other messages leave the time alone."""
    app = explorer()
    driver = app.driver_class(app)
    assert isinstance(driver, App.get_driver_class(app)), "Textual's driver for the platform, noting"
    sent: list[object] = []
    driver.send_message = sent.append  # no app running to send it to
    driver.process_message(events.Resize(Size(80, 24), Size(80, 24)))
    assert app.last_input == 0.0 and len(sent) == 1
    before = time.monotonic()
    driver.process_message(events.Key("down", None))
    assert before <= app.last_input <= time.monotonic() and len(sent) == 2


async def test_the_orders_are_made_at_the_pace_the_checks_are(monkeypatch) -> None:
    """The worker makes the FDE table's orders as it runs the checks: giving way to the keys (`give_way`)
    before every piece of every column's order, not only between columns (a column of a million functions
    held the keys two to four times their time for a third of a second)."""
    monkeypatch.setattr(fde_orders, "PIECE", 2)
    callers: list[str] = []
    give_way = Background.give_way
    monkeypatch.setattr(
        Background, "give_way", lambda this: (callers.append(sys._getframe(1).f_code.co_name), give_way(this))
    )
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        while app.explorer.summary.problems is None:
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()
        assert app.explorer.fde_table.orders_made
    functions = len(app.section)
    assert {"prepare_orders", "argsort", "order_of", "_sorted"} <= set(callers)
    assert callers.count("order_of") >= functions // 2, "every piece of the values read and compared"


async def test_no_cycles_are_collected_while_the_orders_are_made(monkeypatch) -> None:
    """While the worker makes the FDE table's orders (lists of a million numbers, young while they are made),
    the automatic collections are off, so that none walks those lists in the keys' thread; on again after."""
    seen = []
    prepare = FdeTable.prepare_orders
    monkeypatch.setattr(
        FdeTable, "prepare_orders", lambda this, *args: (seen.append(gc.isenabled()), prepare(this, *args))
    )
    assert gc.isenabled()
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        while app.explorer.summary.problems is None:
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()
        assert gc.isenabled(), "on again once the orders are made"
    assert seen == [False, False], "the orders made before the checks and after (their notes column)"


def footer_words(footer: KeyFooter) -> list[str]:
    """The footer's line as Textual draws it, in words."""
    return footer.render_lines(Region(0, 0, footer.size.width, 1))[0].text.split()


def keys_words(footer: KeyFooter) -> list[str]:
    """The words the keys the footer holds should draw: each key, then what it does."""
    return [word for binding, _, _, shown in footer.keys for word in (shown, *binding.description.split())]


async def test_a_focus_move_draws_what_it_changes_not_the_whole_screen(monkeypatch) -> None:
    """Textual's screen draws itself whole again when its focus changes (`Screen.focused` repaints): a second
    frame of the whole screen right after each frame of a focus move (the Structure tab's first open, `tab`,
    `x`), which held the interpreter while the first waited to be written. The explorer's does not."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        whole: list[bool] = []
        update_widgets = type(screen._compositor).update_widgets

        def noting_the_whole_screen(compositor, widgets) -> None:
            whole.extend([True] if screen in widgets else [])
            update_widgets(compositor, widgets)

        monkeypatch.setattr(type(screen._compositor), "update_widgets", noting_the_whole_screen)
        for key in ("x", "tab", "2", "1", "3", "1"):
            focused = app.focused
            await pilot.press(key)
            await pilot.pause()
            assert app.focused is not focused, key
            assert not whole, f"{key}: the whole screen drawn again"


async def test_the_footer_draws_the_focused_panes_keys_and_lays_nothing_out_for_them(monkeypatch) -> None:
    """Each focus move shows the keys of the pane that has the focus, drawn on the footer's line; new keys
    repaint that line and lay nothing out (a dozen `FooterKey` widgets shown again took 9 ms of `escape` on a
    million functions, half of it laying the screen out)."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(KeyFooter)
        for key in ("x", "2", "1", "tab", "i", "x", "f", "1"):
            await pilot.press(key)
            await pilot.pause()
            assert footer.keys == footer._keys(), key
            assert footer_words(footer) == keys_words(footer), key
        assert "ask_search" not in [binding.action for binding, *_ in footer.keys], "the hex pane's keys went"
        await settled(app, pilot)
        layouts = count_layouts(monkeypatch, app.screen)
        before = footer.keys
        await pilot.press("x")  # the FDE table to the hex pane: its keys, nothing else moves
        await pilot.pause()
        assert footer.keys != before and footer_words(footer) == keys_words(footer)
        assert layouts == [], "a repaint"


# ---------------------------------------------------------------- teaching


async def test_the_detail_explains_an_info_byte_bit_by_bit() -> None:
    app = explorer()
    async with app.run_test(size=(120, 50)) as pilot:
        app.explorer.goto_offset(0x3D)  # FDE 1's info byte
        await pilot.press("2")
        await pilot.pause()
        text = detail_text(app)
        assert app.explorer.detail.field.path == "fdes[1].func_info"
        assert "value  16 = 0x10 = 00010000" in text
        assert "bit by bit" in text
        assert "bit 4  pc_type = 1 → PCMASK (1)" in text
        assert "bits 3..0  fre_type = 0000 → ADDR1 (0)" in text
        assert "a repeated block such as PLT entries" in text


async def test_the_header_summary_names_what_the_section_is() -> None:
    app = explorer()
    async with app.run_test(size=(200, 40)):
        text = str(app.screen.query_one(HeaderSummary).render())
        # The section's line in its short form at every width (issue 18: it must not change with the width).
        assert "v1 · FDE_SORTED · AMD64 little-endian · 9 FDEs (1 PCMASK) · 23 FREs" in text
        assert ".sframe section" in text and "266 bytes at address 0x141a8" in text
        assert str(SHAPES) in text


# ---------------------------------------------------------------- navigation


@pytest.mark.parametrize(
    ("pc", "fde", "row"),
    [
        ("1035", 1, 0),  # the PLT (PCMASK) function, first row
        ("0x103d", 1, 1),  # its second row starts at block offset 0xb
        ("1060", 2, 1),  # main: the row from 0x1051 holds up to 0x1087
        ("1087", 2, 2),
    ],
)
async def test_go_to_address_finds_the_unwinders_row(pc: str, fde: int, row: int) -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        assert isinstance(app.screen, GotoNumber)
        await type_text(pilot, pc)
        await pilot.press("enter")
        func = app.section.function(fde)
        expected = func.row_for(int(pc, 16))
        assert expected is not None and expected.index == row
        assert app.explorer.fde_table.cursor == fde
        assert app.explorer.fre_table.cursor == row
        assert app.explorer.hex_view.highlighted == (expected.span.start, expected.span.end)
        assert f"→ fdes[{fde}]" in status(app) and f"FRE {row}" in status(app)
        if func.pcmask:
            assert "PCMASK" in status(app)


async def test_go_to_an_address_no_function_covers() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", *"10", "enter")
        assert app.explorer.fde_table.cursor == 0
        assert any("No function covers 0x10" in n.message for n in notifications(app))


async def test_go_to_address_rejects_what_is_not_hex() -> None:
    """Neither a number nor a name (`main` itself is now accepted: see the test of names below)."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", *"mian", "enter")
        assert isinstance(app.screen, GotoNumber)
        assert "neither a hex number nor a function name" in str(app.screen.query_one("#goto-message").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, GotoNumber)


@pytest.mark.parametrize("key", ["g", "o"])
async def test_go_to_refuses_a_number_longer_than_a_word(key: str) -> None:
    """A 5,000-digit decimal (past `int()`'s 4,300) crashed the app: the dialog says why and stays open."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        dialog = app.screen
        assert isinstance(dialog, GotoNumber)
        dialog.query_one("#goto-input", Input).value = "9" * 5000 + "."
        await pilot.press("enter")
        assert app.screen is dialog
        said = str(dialog.query_one("#goto-message").render())
        assert "5,000 decimal digits, more than a 64-bit word holds (20 at most)" in said, said
        await pilot.press("escape")
        assert not isinstance(app.screen, GotoNumber)


async def test_go_to_symbol() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        assert isinstance(app.screen, GotoSymbol)
        await type_text(pilot, "frame")
        names = ["dynamic_frame", "huge_frame", "medium_frame", "frame_dummy"]
        assert [s.name for s in app.screen.matches] == names, "functions an FDE covers first"
        await pilot.press("down", "down", "down", "enter")  # into the list, then down to the third match
        assert app.explorer.fde_table.cursor == 4
        assert "medium_frame" in status(app)


async def test_go_to_symbols_matches_follow_the_line_in_the_same_frame() -> None:
    """The matches change as the line's text does, not a message later: on `Input.Changed` they were drawn a
    frame after the letter (25-40 ms later in tmux, Textual drawing at most 60 frames a second)."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        dialog = app.screen
        assert isinstance(dialog, GotoSymbol)
        dialog.query_one("#goto-input", Input).value = "frame"
        assert [s.name for s in dialog.matches] == ["dynamic_frame", "huge_frame", "medium_frame", "frame_dummy"]
        await pilot.press("backspace", "backspace")
        expected, _ = dialog.search.find("fra", SYMBOLS_SHOWN)
        assert dialog.matches == expected


async def test_go_to_symbol_lists_the_functions_an_fde_covers_first() -> None:
    """The first match of an empty line was `frame_dummy`, which no FDE covers: the names of the functions
    readelf lists (`func idx [n]: pc = 0x…`) come first, then the rest."""
    readelf = (DATA / "shapes-x86_64-O2.readelf-sframe.txt").read_text()
    covered = [int(pc, 16) for pc in re.findall(r"func idx \[\d+\]: pc = (0x[0-9a-f]+)", readelf)]
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        dialog = app.screen
        assert isinstance(dialog, GotoSymbol)
        inside = [any(pc <= s.address < pc + 1 for pc in covered) for s in dialog.matches]
        assert inside[0] and dialog.matches[0].name != "frame_dummy"
        assert inside == sorted(inside, reverse=True), [s.name for s in dialog.matches]
        assert not all(inside), "names no FDE covers are still listed, after"


async def test_go_to_symbol_without_names() -> None:
    """A raw section has no names at all (a stripped binary still names its PLT entries, as objdump does)."""
    app = explorer(DATA / "shapes-x86_64-O2.sframe")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        assert not isinstance(app.screen, GotoSymbol)
        assert any("no function names" in n.message for n in notifications(app))
    stripped = explorer(DATA / "shapes-x86_64-O2-stripped")
    async with stripped.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        assert isinstance(stripped.screen, GotoSymbol)
        assert [s.name for s in stripped.doc.symbols.symbols] == ["printf@plt", "__cxa_finalize@plt"]


async def test_go_to_offset_selects_the_field_there() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o", *"c6", "enter")
        assert app.explorer.hex_view.cursor == 0xC6
        assert status(app).startswith("fdes[5].fres[1].info = mangled_ra=0")
        assert app.explorer.fde_table.cursor == 5 and app.explorer.fre_table.cursor == 1


async def test_the_command_palette_goes_to_addresses_and_names() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p", *"1060")
        await pilot.pause(0.3)
        await pilot.press("enter")
        assert app.explorer.fde_table.cursor == 2 and app.explorer.fre_table.cursor == 1
        await pilot.press("ctrl+p", *"long_f")
        await pilot.pause(0.3)
        await pilot.press("enter")
        assert app.explorer.fde_table.cursor == 7


async def test_help_and_zoom() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("z")
        assert app.screen.maximized is app.explorer.fde_table
        await pilot.press("z")
        assert app.screen.maximized is None


async def test_q_quits() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
    assert app.return_code == 0


# ---------------------------------------------------------------- layout


@pytest.mark.parametrize(("size", "beside"), [((80, 24), False), ((120, 40), False), ((200, 50), True)])
async def test_the_layout_fits_the_terminal(size: tuple[int, int], beside: bool) -> None:
    app = explorer()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        hex_region, fdes_region = app.explorer.hex_view.region, app.explorer.fde_table.region
        assert hex_region.right <= size[0] and hex_region.bottom <= size[1]
        assert (hex_region.x > fdes_region.x) == beside
        assert fdes_region.height >= 5, "at least a few functions show"
        assert app.explorer.status_line.region.height == 1
        assert hex_region.height >= 6
        await pilot.resize_terminal(*((200, 50) if not beside else (80, 24)))
        await pilot.pause()
        assert (app.explorer.hex_view.region.x > app.explorer.fde_table.region.x) != beside


# ---------------------------------------------------------------- bad input


async def test_a_section_cut_short_shows_the_error_and_what_fits(tmp_path: Path) -> None:
    cut = tmp_path / "cut.sframe"
    cut.write_bytes((DATA / "shapes-x86_64-O2.sframe").read_bytes()[:150])
    app = explorer(cut)
    async with app.run_test(size=SIZE) as pilot:
        assert app.error is not None and "past the section's end" in str(app.error)
        assert "past the section's end" in status(app)
        assert "Error:" in str(app.screen.query_one(HeaderSummary).render())
        assert app.section is not None and len(app.section) == 7, "the 7 FDEs that fit are shown"
        assert app.explorer.fde_table.row_count == 7
        await pilot.press("g", *f"{app.section.function(5).start_address + 5:x}", "enter")
        assert app.explorer.fde_table.cursor == 5, "go to address still works on what fits"


async def test_a_header_cut_short_shows_the_error_and_the_bytes(tmp_path: Path) -> None:
    cut = tmp_path / "cut.sframe"
    cut.write_bytes((DATA / "shapes-x86_64-O2.sframe").read_bytes()[:20])
    app = explorer(cut)
    async with app.run_test(size=SIZE) as pilot:
        assert app.section is None and app.error is not None
        assert "too short: 20 bytes, where its preamble and header take 28 (fdeoff and freoff are missing)" in status(
            app
        )
        assert app.error.offset == 19, "the last byte there is: a message's offset is always inside the file"
        assert app.explorer.hex_view.cursor == 19, "as near the cut field as the bytes go"
        await pilot.press("left", "left")
        assert status(app) == "section offset 0x11"


async def test_a_function_that_cannot_be_decoded(tmp_path: Path) -> None:
    raw = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    raw[28 + 17 * 3 + 16] = 0x03  # FDE 3's info byte: FRE type 3 does not exist
    raw[0xC6] = 0x63  # FDE 5, FRE 1 info byte: offset size 3 does not exist
    path = tmp_path / "broken.sframe"
    path.write_bytes(bytes(raw))
    app = explorer(path)
    async with app.run_test(size=SIZE) as pilot:
        assert app.explorer.fde_table.row_is_error(3)
        assert app.explorer.fde_table.row_cells(3)[10] == "error"
        await pilot.press("down", "down", "down")
        note = str(app.explorer.fre_note.render())
        assert app.explorer.fre_note.display and "function 3" in note and "value 3 is not a defined value" in note
        await pilot.press("down", "down")
        assert app.explorer.fre_table.row_count == 1, "the row before the broken one is shown"
        assert "function 5: FRE 1" in str(app.explorer.fre_note.render())
        await pilot.press("2")
        assert "Problem: section offset 0xc6: function 5: FRE 1" in detail_text(app)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
async def test_random_corruption_never_crashes_the_explorer(tmp_path: Path, seed: int) -> None:
    path = fuzzed_section(seed, tmp_path)
    app = explorer(path)
    async with app.run_test(size=SIZE) as pilot:
        keys = ["down", "end", "tab", "down", "x", "down", "right", "ctrl+end", "2", "down", "enter", "down", "down"]
        await pilot.press(*keys)
        await pilot.press("g", *"1000", "enter")
        assert app.is_running


# ---------------------------------------------------------------- helpers


def _synthetic_document(functions: int) -> Document:
    """A version 2 AMD64 section of `functions` 16-byte functions, one row each (CFA = SP + 8)."""
    header = struct.pack("<HBB", 0xDEE2, 2, 1) + struct.pack(
        "<BbbBIIIII", 3, 0, -8, 0, functions, functions, 3 * functions, 0, 20 * functions
    )
    address = 0x100000
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 + 16 * i - address, 16, 3 * i, 1, 0, 0, 0) for i in range(functions))
    return Document("synthetic.sframe", raw_section(header + fdes + bytes([0, 0x03, 8]) * functions, address))


async def test_the_explorer_is_a_screen_and_the_palette_asks_the_screen_on_top() -> None:
    from sfview.app.commands import SfviewCommands
    from sfview.app.explorer.screen import ExplorerScreen

    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, ExplorerScreen) and app.screen is app.explorer
        names = [name for name, _, _ in SfviewCommands(app.screen)._commands()]
        assert "Go to address…" in names
        await pilot.press("question_mark")
        assert not isinstance(app.screen, ExplorerScreen)
        assert SfviewCommands(app.screen)._commands() == [], "over the help screen, no explorer commands"


async def test_panes_pass_a_selection_with_fde_and_fre() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "tab", "down")  # FDE 2, then its second row
        selected = app.explorer.state.selected
        assert selected is not None and (selected.fde, selected.fre) == (2, 1)
        assert selected.field.path == "fdes[2].fres[1]"


async def test_dwarf_beside_the_rows() -> None:
    """`d`: what .eh_frame says at each row's address; the PLT's CFA is a DWARF expression there."""
    app = explorer()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("d")
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.explorer.fre_table
        dwarf = [c.title for c in table.columns].index("DWARF")
        await pilot.press("n")  # the PLT (PCMASK)
        assert {table.row_cells(i)[dwarf] for i in range(table.row_count)} == {"≠ CFA expr"}
        await pilot.press("n")  # main
        assert {table.row_cells(i)[dwarf] for i in range(table.row_count)} == {"="}
        note = str(app.explorer.dwarf_note.render())
        assert "DWARF: FDE at .eh_frame+0x120, 28 bytes: 18 00 00 00" in note, "the FDE SFrame condenses, its bytes"
        assert "DW_CFA_def_cfa_offset: 16" in note and "CIE at +0x30: DW_CFA_def_cfa: r7 ofs 8" in note
        await pilot.press("d")
        assert "DWARF" not in [c.title for c in table.columns]


async def test_help_reaches_its_last_section_by_keyboard() -> None:
    from textual.containers import VerticalScroll

    app = explorer()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        body = app.screen.query_one("#help-body", VerticalScroll)
        assert body.max_scroll_y > 0
        await pilot.press(*["pagedown"] * 40)
        assert body.scroll_y == body.max_scroll_y, "PageDown goes past the Keys table to the end"
        await pilot.press("home")
        assert body.scroll_y == 0
        await pilot.press("end")
        assert body.scroll_y == body.max_scroll_y


async def test_go_to_a_name_or_a_name_plus_an_offset() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", *"huge_frame+0x16", "enter")
        selected = app.explorer.state.selected
        assert selected is not None and (selected.fde, selected.fre) == (5, 1), "huge_frame's second row, at +0x16"
        await pilot.press("g", *"no_such", "enter")
        assert "neither a hex number nor a function name: 'no_such'" in str(
            app.screen.query_one("#goto-message").render()
        )
        await pilot.press("escape", "g", *"1100", "enter")  # between main and small_leaf
        await pilot.pause()
        assert any("No function covers 0x1100: after main (ends 0x108b), before small_leaf (0x1180)" in n.message
                   for n in notifications(app))  # fmt: skip


async def test_problems_are_found_on_open_listed_and_shown_at_their_bytes(tmp_path: Path) -> None:
    """Two FDEs swapped under FDE_SORTED and a row with offset size 3: both listed, counted, flagged, shown."""
    raw = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    a, b = 28 + 17 * 3, 28 + 17 * 4
    raw[a : a + 17], raw[b : b + 17] = raw[b : b + 17], raw[a : a + 17]
    raw[0xC6] = 0x63
    path = tmp_path / "broken.sframe"
    path.write_bytes(bytes(raw))
    app = explorer(path)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):  # the checks run in a worker
            if app.explorer.summary.problems is not None:
                break
            await pilot.pause(0.05)
        assert app.explorer.summary.problems == 2
        assert "2 problems" in str(app.explorer.summary.render())
        table = app.explorer.fde_table
        assert [table.row_cells(i)[-1] for i in (3, 4, 5)] == ["", "error", "error"]
        assert (0xC6, 0xC7) in app.explorer.hex_view.problems, "the bad byte marked in the hex pane"
        assert "error" in str(app.explorer.structure._fde_label(4)) and "error" not in str(
            app.explorer.structure._fde_label(3)
        )
        await pilot.press("4")
        assert app.explorer.tabs.active == "problems-tab" and app.focused is app.explorer.problems
        assert [d.check.id for d in app.explorer.problems.diagnostics] == ["fdes-unsorted", "offset-size-undefined"]
        await pilot.press("down", "enter")
        assert app.explorer.hex_view.cursor == 0xC6 and app.explorer.hex_view.highlighted == (0xC6, 0xC7)
        assert app.explorer.state.selected is not None and (
            app.explorer.state.selected.fde,
            app.explorer.state.selected.fre,
        ) == (5, 1)
        assert status(app).startswith("error offset-size-undefined: fdes[5].fres[1]: ")


async def test_a_clean_section_has_no_problems() -> None:
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):
            if app.explorer.problems.option_count:
                break
            await pilot.pause(0.05)
        assert app.explorer.summary.problems == 0
        assert "problem" not in str(app.explorer.summary.render())
        assert "No problem in the format's own checks" in str(app.explorer.problems.get_option_at_index(0).prompt)


async def test_a_consumers_refusal_is_not_followed_by_every_check_passed() -> None:
    """The Problems tab said "kernel: refused…" right above "No problems found: every check passed." on a
    version 1 section (the kernel reads version 3 alone): the list speaks for the format's checks only."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):
            if app.explorer.problems.option_count:
                break
            await pilot.pause(0.05)
        await pilot.press("v")
        for _ in range(100):
            if "refused" in str(app.explorer.consumer_line.render()):
                break
            await pilot.pause(0.05)
        assert str(app.explorer.consumer_line.render()).startswith("kernel: refused: -EINVAL")
        shown = [
            str(app.explorer.problems.get_option_at_index(i).prompt) for i in range(app.explorer.problems.option_count)
        ]
        assert not any("every check passed" in line or "No problems found" in line for line in shown), shown
        assert "format's own checks" in shown[0]


async def test_a_raw_section_without_its_address_says_how_to_give_it() -> None:
    app = explorer(DATA / "shapes-x86_64-O2.sframe")
    async with app.run_test(size=(160, 40)):
        assert "--base ADDR" in str(app.explorer.summary.render())
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2.sframe"), 0x141A8))
    async with app.run_test(size=(160, 40)):
        assert "--base" not in str(app.explorer.summary.render())


async def test_the_heap_is_collected_and_frozen_again_while_nobody_types() -> None:
    """Full collections wait for a second without input (none while keys come), and only run when
    something was allocated since the last one."""
    import gc

    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert gc.get_threshold()[2] >= 100, "no automatic full collection every ~15 moves"
        app.heap.freeze()
        seen = app.heap.collections_seen
        app.heap.collect_when_idle(app.last_input)
        assert app.heap.collections_seen == seen, "nothing allocated: nothing to collect"
        # Input as of now, as the key below will say: else the app's own idle check (every half second) may
        # collect the garbage before the key is read, as the test cannot know when its timer fires.
        app._last_input = time.monotonic()
        garbage = [[object()] for _ in range(20_000)]
        del garbage
        await pilot.press("down")  # input just now: not yet
        app.heap.collect_when_idle(app.last_input)
        assert app.heap.collections_seen == seen
        app._last_input -= 2.0  # two seconds of quiet
        app.heap.collect_when_idle(app.last_input)
        assert app.heap.collections_seen != seen and gc.get_freeze_count() > 0


async def test_the_letters_keys_leave_the_footer_while_the_filter_line_takes_letters() -> None:
    """The filter line takes the letters: their keys go from the footer while it has the focus, and `escape`
    or `enter` brings them back, `? Help` and `q Quit` with them."""
    app = explorer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = app.explorer.query_one(KeyFooter)
        steps = ((("slash", "a"), False), (("escape",), True), (("slash",), False), (("enter",), True))
        for keys, letters in steps:
            await pilot.press(*keys)
            await pilot.pause()
            assert ("Quit" in footer_words(footer)) is letters, keys
            assert ("Address" in footer_words(footer)) is letters, keys
            assert footer_words(footer) == keys_words(footer), keys


async def test_a_click_on_a_footer_key_presses_it_and_the_mouse_shows_its_tooltip() -> None:
    """As on Textual's footer: a click on a key presses it, the key under the mouse is highlighted with its
    tooltip shown, and one that does nothing where the focus is (its `check_action` says None) is dim and
    only rings the bell."""

    class Keys(App[None]):
        BINDINGS: ClassVar = [("a", "ring", "Ring"), Binding("b", "off", "Off", tooltip="does nothing here")]

        def __init__(self) -> None:
            super().__init__()
            self.rung: list[str] = []

        def compose(self):
            yield KeyFooter()

        def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
            return None if action == "off" else True

        def action_ring(self) -> None:
            self.rung.append("a")

        def bell(self) -> None:
            self.rung.append("bell")

    app = Keys()
    async with app.run_test(size=(60, 3)) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(KeyFooter)
        ring_at, off_at = 1, key_width("a", "Ring") + 1
        assert footer_words(footer) == ["a", "Ring", "b", "Off", "^p", "palette"]
        await pilot.click(KeyFooter, offset=(ring_at, 0))
        await pilot.click(KeyFooter, offset=(off_at, 0))
        assert app.rung == ["a", "bell"]
        await pilot.hover(KeyFooter, offset=(off_at, 0))
        assert footer.tooltip == "does nothing here"
        drawn = footer.render_lines(Region(0, 0, footer.size.width, 1))[0]
        styles = {segment.text.strip(): segment.style for segment in drawn if segment.text.strip()}
        assert styles["b"].color != styles["a"].color and styles["Off"].color != styles["Ring"].color, "dim"
        assert styles["b"].bgcolor != styles["a"].bgcolor, "the key under the mouse highlighted"
        await pilot.hover(KeyFooter, offset=(footer.size.width - 1, 0))
        assert footer.tooltip is None


async def test_the_headers_path_keeps_its_form_while_the_names_load() -> None:
    """The header showed the whole path while the names loaded, and the base name once their count joined
    the line: at every width, the path's form is the same before and after."""
    path = str(SHAPES.resolve())
    app = SfviewApp(Document.open(path))
    async with app.run_test(size=SIZE) as pilot:
        summary = app.explorer.summary
        for _ in range(100):
            if summary.names.ready:
                break
            await pilot.pause(0.05)
        assert summary.names.ready
        after = {width: summary.summary(width).plain.splitlines()[0] for width in range(40, 260)}
        summary.names.ready = False  # as while they load
        before = {width: summary.summary(width).plain.splitlines()[0] for width in range(40, 260)}
        summary.names.ready = True
        for width in range(40, 260):
            assert before[width].startswith(path) == after[width].startswith(path), width
        assert any(line.startswith(path) for line in after.values()), "wide enough: the whole path"
        assert not all(line.startswith(path) for line in after.values()), "narrow: its base name"
