"""Editing in the explorer: what `e` refuses, what a value typed wrong says, undo with nothing to undo.

(Edits that change what the consumers say, and the copy written: tests/oracles/test_app_editing.py.)
"""

from __future__ import annotations

import weakref

from conftest import DATA
from textual.widgets import Label

from sfview.app.app import SfviewApp
from sfview.app.explorer.screen import ExplorerScreen
from sfview.app.screens.goto import Prompt
from sfview.app.textual_compat import notifications
from sfview.document import Document

SIZE = (100, 32)


def _app() -> SfviewApp:
    return SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))


async def test_a_whole_function_is_not_a_value_to_type() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        assert not isinstance(app.screen, Prompt)
        assert any("fdes[0] is not a value" in n.message for n in notifications(app))


async def test_a_value_that_does_not_fit_is_said_in_the_dialog_and_nothing_changes() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o", *"5", "enter", "2", "e")  # header.cfa_fixed_fp_offset, a signed byte
        assert isinstance(app.screen, Prompt) and "signed" in str(app.screen.query_one(".goto-hint", Label).render())
        await pilot.press(*"200.", "enter")
        said = str(app.screen.query_one("#goto-message", Label).render())
        assert said == "header.cfa_fixed_fp_offset holds -128 to 127 (-0x80 to 0x7f): 200 (0xc8) does not fit"
        await pilot.press("escape")
        assert app.edits.done == [] and app.explorer.doc.data == app.edits.original


async def test_an_enum_by_name_and_the_byte_under_the_hex_cursor() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o", *"4", "enter", "2", "e", *"aarch64_endian_little", "enter")
        assert "AArch64" in str(app.explorer.summary.render())
        await pilot.press("x", "e", *"ff", "enter")  # the hex pane: the byte itself
        assert app.explorer.doc.data[4] == 0xFF
        assert [p.what for p in app.edits.done] == ["header.abi_arch = 0x2", "byte 0x4 = 0xff"]


async def test_undo_with_nothing_done_says_so() -> None:
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        explorer = app.explorer
        await pilot.press("ctrl+z", "ctrl+y")
        assert app.explorer is explorer
        assert [n.message for n in notifications(app)] == ["Nothing to undo.", "Nothing to redo."]


async def test_the_explorer_an_edit_replaces_is_let_go_with_its_document() -> None:
    """Each edit, undo and redo opens a new explorer; the one it replaces must go, with its section's model (on
    a section of a million functions, each kept one was 130 MB), even though the app froze it (`Heap`)."""
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        replaced = [weakref.ref(app.explorer.doc)]
        await pilot.press("x", "e", *"ff", "enter")
        replaced.append(weakref.ref(app.explorer.doc))
        await pilot.press("ctrl+z")
        await app.workers.wait_for_complete()  # a replaced explorer's worker holds its document until it ends
        for _ in range(20):  # the app's own checks, as its timer makes them, until the replaced are freed
            await pilot.pause()
            app.heap.collect_when_idle(app.last_input)
            if all(doc() is None for doc in replaced):
                break
        assert [s for s in app.screen_stack if isinstance(s, ExplorerScreen)] == [app.explorer]
        assert [doc() is None for doc in replaced] == [True, True]
        assert app.explorer.doc.data[4] != 0xFF


async def test_a_byte_refuses_a_word_without_asking_for_a_function_name() -> None:
    """A byte (and an offset) take no names: what is not a number is refused as that, not as an unknown
    function, which only `g` and the debugger's boxes look up."""
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "e", *"pcmask", "enter")
        assert isinstance(app.screen, Prompt)
        said = str(app.screen.query_one("#goto-message", Label).render())
        assert said == "not a hex number (decimal has a trailing dot: 16.): 'pcmask'"
        await pilot.press("escape", "o", *"main", "enter")
        assert str(app.screen.query_one("#goto-message", Label).render()) == said.replace("pcmask", "main")
        assert app.edits.done == []
