"""The terminal driver: Textual's, noting each key as it reads it, and handing a lone escape on without delay.

Two changes to Textual's driver for the platform, both in its input thread:

* every key or click read is noted (`SfviewApp.note_input`) before it is sent
  to the app: the worker that runs beside the keys
  (`Background.give_way`) stops for it before the keys' thread, which
  shares the interpreter with it, has got to the key, which otherwise
  waits for the worker's next pause;
* a lone escape byte is handed on as the escape key once the parser's own
  wait for the rest of an escape sequence is over (`ESCDELAY`), not at the
  next of the input loop's wake-ups (`IDLE_WAIT_S`): Textual's Linux loop only
  looks at the parser's deadline when `select` returns, so `escape` reached
  the app a whole wake-up late whatever `ESCDELAY` said.
  And unless `ESCDELAY` is set, that wait is `ESCAPE_DELAY_MS`, not
  Textual's longer default; and an escape byte that came alone in its read is the
  escape key at once, without the wait (`ALONE`). Terminals that speak the
  kitty keyboard protocol send an unambiguous escape, which Textual asks
  for: there, none of this applies.

The input loop is Textual 8's `LinuxDriver.run_input_thread` with only its
`select` timeout changed; `tests/app/test_driver.py` fails when Textual's loop
changes, so that this one is looked at again.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import constants, events
from textual.drivers.linux_driver import LinuxDriver
from textual.drivers.web_driver import WebDriver

from sfview.app.textual_compat import ParseError, XTermParser, end_parser_wait, get_time, parser_deadline

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.message import Message

__all__ = ["ALONE", "ESCAPE_DELAY_MS", "IDLE_WAIT_S", "MAX_SCREEN", "bounded_size", "noting_driver", "select_timeout"]

ESCAPE_DELAY_MS = 10
"""How long a lone escape byte waits for the rest of a sequence, unless `ESCDELAY` says: tmux's `escape-time`
(its default since tmux 3.5). A terminal writes a key's whole sequence at once, so its bytes come in one read;
Textual's longer default only delays the escape key."""

ALONE = "\x1b"
"""A read that holds this and nothing else is the escape key, handed on at once unless `ESCDELAY` is set: a
terminal (tmux, and ssh, which sends what it read from one) writes a key's sequence in one write, so the rest
of a sequence comes in the same read as its escape byte; crossterm and Bubble Tea decide so, without a timer.
Waiting `ESCAPE_DELAY_MS` would be a good part of every `escape` on a large file."""

MAX_SCREEN = (1000, 500)
"""The largest screen the app draws, in columns and rows: more than a 4K display at a legible font holds. A
browser's terminal says its size in the URL of `serve`'s websocket and in its resize messages, both the
client's to choose; the app drew every cell asked for, and went on after the browser had gone."""


def bounded_size(width: object, height: object) -> tuple[int, int]:
    """A size a browser sent, each side a whole number from 1 to `MAX_SCREEN`'s (anything else: the least)."""
    columns, rows = MAX_SCREEN

    def side(value: object, most: int) -> int:
        return min(max(value, 1), most) if isinstance(value, int) else 1

    return side(width, columns), side(height, rows)


IDLE_WAIT_S = 0.1
"""The input loop's `select` timeout with no escape pending: Textual's, so that it sees `exit_event` as soon."""


def select_timeout(parser: XTermParser) -> float:
    """How long the input loop may wait for bytes: until the parser's escape deadline, if one is pending."""
    deadline = parser_deadline(parser)
    if deadline is None:
        return IDLE_WAIT_S
    return min(IDLE_WAIT_S, max(0.0, deadline - get_time()))


def noting_driver(base: type[Driver], note_input: Callable[[], None]) -> type[Driver]:
    """`base` (Textual's driver for the platform) calling `note_input` for each key or click it reads, and, on
    Linux and macOS, with the escape key handed on after `ESCAPE_DELAY_MS`."""

    class NotingDriver(base):  # type: ignore[misc,valid-type]
        """`base`, noting each key or click before it is sent to the app."""

        def process_message(self, message: Message) -> None:
            """In the driver's input thread: each message read from the terminal, before it is sent."""
            if isinstance(message, events.Key | events.MouseDown):
                note_input()
            super().process_message(message)

    if issubclass(base, WebDriver):

        class BrowserDriver(NotingDriver):
            """`serve`'s driver: the noting driver, the screen's size as the browser asks, within `MAX_SCREEN`."""

            def __init__(self, *args: object, **kwargs: object) -> None:
                super().__init__(*args, **kwargs)
                if self._size is not None:
                    self._size = bounded_size(*self._size)

            def on_meta(self, packet_type: str, payload: dict[str, object]) -> None:
                """The browser's messages, a resize bounded."""
                if packet_type == "resize":
                    width, height = bounded_size(payload.get("width"), payload.get("height"))
                    payload = {**payload, "width": width, "height": height}
                super().on_meta(packet_type, payload)

        return BrowserDriver
    if not issubclass(base, LinuxDriver):
        return NotingDriver

    class PromptDriver(NotingDriver):
        """Linux and macOS: the noting driver, its input loop handing a lone escape on (`ESCAPE_DELAY_MS`, `ALONE`)."""

        def run_input_thread(self) -> None:
            """Textual's input loop (`LinuxDriver.run_input_thread`), its `select` waiting no longer than the
            parser's escape deadline (`select_timeout`)."""
            assert isinstance(self, LinuxDriver)
            alone_is_the_key = "ESCDELAY" not in os.environ
            if alone_is_the_key:
                constants.ESCAPE_DELAY = ESCAPE_DELAY_MS / 1000  # read by XTermParser at each escape byte
            selector = selectors.SelectSelector()
            selector.register(self.fileno, selectors.EVENT_READ)
            parser = XTermParser(self._debug)
            decode = getincrementaldecoder("utf-8")().decode

            def process_selector_events(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
                for index, (_key, mask) in enumerate(ready):
                    if mask & selectors.EVENT_READ:
                        data = decode(os.read(self.fileno, 1024 * 4), final=final and index == len(ready) - 1)
                        if not data:  # stdin piped, and at its end
                            break
                        for event in parser.feed(data):
                            self.process_message(event)
                        if data == ALONE and alone_is_the_key:
                            end_parser_wait(parser)  # `tick` hands the key on
                for event in parser.tick():
                    self.process_message(event)

            try:
                while not self.exit_event.is_set():
                    process_selector_events(selector.select(select_timeout(parser)))
                selector.unregister(self.fileno)
                process_selector_events(selector.select(IDLE_WAIT_S), final=True)
            finally:
                selector.close()
                try:
                    for _event in parser.feed(""):
                        pass
                except (EOFError, ParseError):
                    pass

    return PromptDriver
