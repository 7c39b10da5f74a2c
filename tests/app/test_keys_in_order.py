"""Keys read together from the terminal act in the order they were typed, in every line the app asks in.

A terminal hands the app what it read at once (`\\x7fc`: backspace, then `c`); Textual 8's `Input` typed
`c` at once but let the backspace act only once it had bubbled to the app, so that it deleted the `c`
(Textualize/textual#6605). The keys are posted here as the driver posts them, none awaited before the next.
"""

from __future__ import annotations

import pytest
from conftest import DATA, debugger_shown
from textual import events
from textual.widgets import Input

from sfview.app.app import SfviewApp
from sfview.document import Document

SIZE = (120, 36)
TOGETHER = [("backspace", "\x7f"), ("c", "c"), ("left", None), ("left", None), ("backspace", "\x7f"), ("x", "x")]
"""After `ab`: backspace, `c`, two lefts (to the start), a backspace there (nothing to delete), `x`."""


def _typed_together(app: SfviewApp) -> None:
    for key, character in TOGETHER:
        app.post_message(events.Key(key, character))


@pytest.mark.parametrize(("opening", "line"), [("g", "#goto-input"), ("s", "#goto-input"), ("slash", "#fde-filter")])
async def test_keys_read_together_act_in_the_order_typed(opening: str, line: str) -> None:
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(opening, "a", "b")
        _typed_together(app)
        await pilot.pause()
        assert app.screen.query_one(line, Input).value == "xac"


async def test_the_debugger_s_register_boxes_take_keys_in_order() -> None:
    app = SfviewApp(Document.open(str(DATA / "deep-x86_64")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        debugger = await debugger_shown(app, pilot)
        box = debugger.inputs["pc"]
        box.value = ""
        box.focus()
        await pilot.press("a", "b")
        _typed_together(app)
        await pilot.pause()
        assert box.value == "xac"
