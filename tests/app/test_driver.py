"""The terminal driver's input thread (`sfview/app/driver.py`): an escape byte read alone handed on at once, one
that ends a longer read after the escape delay, not at the input loop's next 0.1 s wake-up; `ESCDELAY` still
obeyed; Textual's loop, which ours follows, unchanged."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import selectors
import sys
import threading
import time

import pytest
from conftest import DATA
from textual import constants, events
from textual.drivers.linux_driver import LinuxDriver
from textual.drivers.web_driver import WebDriver

from sfview.app import driver as sfview_driver
from sfview.app.app import SfviewApp
from sfview.document import Document

TEXTUAL_LOOP_SHA256 = "d796af6d69db337d6fa6bd463984f7d17188d991dbb22f60efb92a8a9619507c"
"""Of `LinuxDriver.run_input_thread`'s source in Textual 8.2.8."""


def _escape_through_the_input_thread(
    monkeypatch: pytest.MonkeyPatch, written: bytes = b"\x1b"
) -> tuple[list[float], list[object]]:
    """Runs the app's driver's input thread on a pipe, writes `written` (a lone escape byte), and gives the
    `select` timeouts the loop asked for after the bytes were read, and the messages it sent, each with how many
    of those `select`s came before it."""
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "__stdin__", os.fdopen(read_end, "rb", closefd=False))  # the driver reads it
    driver = app.driver_class(app)
    assert isinstance(driver, LinuxDriver) and driver.fileno == read_end
    sent: list[object] = []
    byte_read = threading.Event()
    timeouts: list[float] = []
    driver.send_message = lambda message: sent.append((message, len(timeouts)))  # no app running to send it to

    class Recording(selectors.SelectSelector):
        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            if byte_read.is_set():
                timeouts.append(timeout if timeout is not None else float("inf"))
            ready = super().select(timeout)
            if ready:
                byte_read.set()
            return ready

    monkeypatch.setattr(selectors, "SelectSelector", Recording)
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    thread.start()
    try:
        os.write(write_end, written)
        deadline = time.monotonic() + 5
        while not any(isinstance(m, events.Key) and m.key == "escape" for m, _ in sent) and time.monotonic() < deadline:
            time.sleep(0.001)
    finally:
        driver.exit_event.set()
        os.close(write_end)
        thread.join(5)
        os.close(read_end)
    return timeouts, sent


def _keys(sent: list[object]) -> list[tuple[str, int]]:
    return [(message.key, selects) for message, selects in sent if isinstance(message, events.Key)]


async def test_an_escape_read_alone_is_handed_on_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """An escape byte that is the whole of its read is the escape key, sent before the loop waits again (the
    rest of a sequence comes in the same read: a terminal writes it at once)."""
    monkeypatch.delenv("ESCDELAY", raising=False)
    monkeypatch.setattr(constants, "ESCAPE_DELAY", constants.ESCAPE_DELAY)  # put back after the test
    _timeouts, sent = _escape_through_the_input_thread(monkeypatch)
    assert _keys(sent) == [("escape", 0)], "sent before any wait"


async def test_an_escape_at_the_end_of_a_read_waits_the_escape_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """An escape byte after other bytes in a read may begin a sequence whose rest is still to come: the loop
    waits for it no longer than the escape delay, tmux's 10 ms (Textual's loop waited its 0.1 s whatever the
    delay); a whole sequence in a read is its key."""
    monkeypatch.delenv("ESCDELAY", raising=False)
    monkeypatch.setattr(constants, "ESCAPE_DELAY", constants.ESCAPE_DELAY)
    timeouts, sent = _escape_through_the_input_thread(monkeypatch, b"\x1b[Aa\x1b")
    assert [key for key, _ in _keys(sent)] == ["up", "a", "escape"]
    assert constants.ESCAPE_DELAY == 0.010
    assert timeouts and timeouts[0] <= 0.010, f"select waited {timeouts[0]} s after the escape byte"
    assert _keys(sent)[-1][1] >= 1, "the escape after the wait"


async def test_escdelay_in_the_environment_is_obeyed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's `ESCDELAY` (which Textual reads at import) is left as it is, and the loop waits for it, for an
    escape read alone too."""
    monkeypatch.setenv("ESCDELAY", "40")
    monkeypatch.setattr(constants, "ESCAPE_DELAY", 0.040)
    timeouts, sent = _escape_through_the_input_thread(monkeypatch)
    assert [key for key, _ in _keys(sent)] == ["escape"]
    assert constants.ESCAPE_DELAY == 0.040
    assert timeouts and 0.010 < timeouts[0] <= 0.040


def test_with_nothing_pending_the_loop_wakes_as_textual_s_does() -> None:
    """No escape pending: the loop's timeout is Textual's 0.1 s, so that it sees the exit as soon."""
    from sfview.app.textual_compat import XTermParser

    parser = XTermParser()
    assert sfview_driver.select_timeout(parser) == sfview_driver.IDLE_WAIT_S == 0.1
    list(parser.feed("a"))
    assert sfview_driver.select_timeout(parser) == 0.1


def test_textual_s_input_loop_is_the_one_ours_follows() -> None:
    """`driver.py`'s input loop is Textual's `LinuxDriver.run_input_thread` with its `select` timeout changed:
    when Textual's changes (a new release), this fails, so that ours is compared with it again and the hash
    below updated."""
    source = inspect.getsource(LinuxDriver.run_input_thread)
    assert hashlib.sha256(source.encode()).hexdigest() == TEXTUAL_LOOP_SHA256


async def test_a_browser_s_screen_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve`'s browser gives the screen's size (textual-serve passes the websocket URL's `width` and
    `height` on as COLUMNS and ROWS, and its resize messages as they come): a client asking for 100,000 x
    100,000 cells had the app grow by gigabytes. The app's driver under textual-serve (Textual's WebDriver,
    which `TEXTUAL_DRIVER` names) keeps the size within `MAX_SCREEN`, through Textual's own message path."""
    monkeypatch.setattr(constants, "DRIVER", "textual.drivers.web_driver:WebDriver")
    monkeypatch.setenv("COLUMNS", "100000")
    monkeypatch.setenv("ROWS", "100000")
    read_end, write_end = os.pipe()  # the driver's reader waits on its stdin: textual-serve's pipe
    monkeypatch.setattr(sys, "__stdin__", os.fdopen(read_end, "rb", closefd=False))
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    driver = app.driver_class(app)
    assert isinstance(driver, WebDriver)
    assert driver._size == sfview_driver.MAX_SCREEN
    posted: list[object] = []
    monkeypatch.setattr(app, "post_message", posted.append)
    for width, height, size in (
        (10**6, 10**6, sfview_driver.MAX_SCREEN),
        (120, 40, (120, 40)),
        (-5, "many", (1, 1)),
    ):
        driver._on_meta("M", json.dumps({"type": "resize", "width": width, "height": height}).encode())
        resize = posted.pop()
        assert isinstance(resize, events.Resize) and tuple(resize.size) == size
    driver._input_reader.close()
    os.close(read_end)
    os.close(write_end)
