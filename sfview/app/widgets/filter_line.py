"""`FilterLine`: the FDE table's filter line, an `Input` whose text never lays the screen out.

Textual's `Input` sets its virtual size (the width of its text) at every
letter typed, and `Widget.virtual_size` is a reactive that lays the whole
screen out when it changes: a layout for every letter typed in the filter,
for a line whose size never changes (its bar's width, one line; the
stylesheet sets both). Here a new virtual size is only repainted:
the text still scrolls, as `Input` scrolls it from the virtual size set, at
once, by the same assignment.

The filter itself is applied by the screen as the value changes (a watcher,
called in the handling of the key), not on the `Changed` message that the
line posts: the message reaches the screen after a frame has been laid out
for the letter alone, and the layout the filter asks for would then come in
a frame of its own.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input

__all__ = ["FilterLine"]


class FilterLine(Input):
    """An `Input` of a fixed size, whose text only repaints it; the footer says what `enter` and `escape` do in it
    (the line's hint, always above the table, says what it takes)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Keep"),
        Binding("escape", "screen.clear_filter", "Clear"),
    ]

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)
    """`Widget.virtual_size` without its layout (Textual 8 names the reactive so; `tests/app/test_tables.py`
    checks that typing in the line lays nothing out)."""
