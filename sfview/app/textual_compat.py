"""Textual's private members sfview relies on, in one place, so that a Textual release that drops one fails a test.

Textual's public API does not offer everything the app needs to draw a key in
one frame: its terminal parser (for the escape key's wait), a tree's line
drawing and invalidation, a scroll view's scrollbars and size updates. What
can be imported or read through this module is (`ParseError`, `XTermParser`,
`get_time`, `parser_deadline`, ...); what is overridden or used on a drawing
path (where a call more would cost every line drawn) is named in `PRIVATE`,
which `tests/app/test_textual_compat.py` checks against the installed Textual:
each member still there, a method's parameters as sfview calls or overrides
them. The tests' own uses of Textual's privates are named here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import Notification

__all__ = [
    "PRIVATE",
    "REFRESH_LAYOUT",
    "ParseError",
    "Private",
    "XTermParser",
    "end_parser_wait",
    "get_time",
    "notifications",
    "parser_deadline",
]


class Private(NamedTuple):
    """A private member of a Textual class that sfview uses, and how."""

    owner: str
    """The class, as `module:Class` (imported by the test alone: the driver imports this module at start-up)."""
    name: str
    parameters: tuple[str, ...] | None
    """A method's parameters after `self`, as sfview calls or overrides it (None: an attribute)."""
    user: str
    """Who uses it, and for what."""


REFRESH_LAYOUT = "_refresh_layout"
"""`Screen._refresh_layout`: the tests count the screen's layouts by wrapping it (`conftest.count_layouts`)."""

PRIVATE = (
    Private(
        "textual._xterm_parser:XTermParser",
        "_timeout_time",
        None,
        "driver.py: the escape key's deadline (`parser_deadline`)",
    ),
    Private(
        "textual.drivers.linux_driver:LinuxDriver",
        "_debug",
        None,
        "driver.py: the input loop makes its parser as Textual's does",
    ),
    Private(
        "textual.scroll_view:ScrollView",
        "_size_updated",
        ("size", "virtual_size", "container_size", "layout"),
        "structure_tree.py overrides it: the cursor scrolled into view in the layout that gives the tree a size",
    ),
    Private(
        "textual.widgets._tree:Tree",
        "_invalidate",
        (),
        "structure_tree.py overrides it: once per node opened, not per child",
    ),
    Private(
        "textual.widgets._tree:Tree",
        "_render_line",
        ("y", "x1", "x2", "base_style"),
        "structure_tree.py draws a line with it",
    ),
    Private(
        "textual.widgets._tree:Tree",
        "_line_cache",
        None,
        "structure_tree.py drops the lines drawn when only the style changed",
    ),
    Private("textual.widgets._tree:Tree", "_build", (), "tests/app/test_app.py counts the tree's builds"),
    Private(
        "textual.widget:Widget",
        "_scroll_update",
        ("virtual_size",),
        "row_table.py: the scrollbars follow a virtual size",
    ),
    Private(
        "textual.widget:Widget", "_vertical_scrollbar", None, "row_table.py sets the scrollbars the layout will find"
    ),
    Private(
        "textual.widget:Widget", "_horizontal_scrollbar", None, "row_table.py sets the scrollbars the layout will find"
    ),
    Private("textual.screen:Screen", REFRESH_LAYOUT, ("size", "scroll"), "the tests count layouts by wrapping it"),
    Private("textual.screen:Screen", "_compositor", None, "tests/app/test_app.py counts what each frame draws"),
    Private("textual.screen:Screen", "_compositor_refresh", (), "tests/app/test_tables.py counts the frames drawn"),
    Private(
        "textual.widgets._markdown:MarkdownBlock", "_content", None, "tests/app/test_nav.py reads the help's paragraphs"
    ),
    Private("textual.app:App", "_notifications", None, "the tests read the notifications shown (`notifications`)"),
    Private("textual.app:App", "_exit", None, "tests/app/test_daily_use.py: whether the app is leaving"),
)
"""Every private Textual member sfview and its tests use (besides the private modules imported above): read,
called, overridden or wrapped."""


def parser_deadline(parser: XTermParser) -> float | None:
    """When the parser hands on a pending escape byte as the escape key (`get_time`'s clock), None if none is."""
    return parser._timeout_time


def end_parser_wait(parser: XTermParser) -> None:
    """The parser's wait for the rest of an escape sequence over: its next `tick` hands the escape key on."""
    parser._timeout_time = get_time()


def notifications(app: App[object]) -> list[Notification]:
    """The notifications the app shows, oldest first."""
    return list(app._notifications)
