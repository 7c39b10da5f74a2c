"""`Minimap`: the whole section in one narrow column, by part, with its problems and the selection.

Each line stands for an equal slice of the section's bytes, drawn in the
colour of the part that holds most of it (`palette.Part`: the header, the FDE
array, the FRE sub-section); `!` marks a slice a check found a problem in,
`◀` the slice of the selection, and a bar the bytes the hex pane shows. A
click, or `up`/`down`/`pageup`/`pagedown`/`home`/`end` with the focus on it,
asks the screen to go to the slice's first byte (`Jump`): the minimap only
draws what it is given.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from sfview.app.palette import PART_COLOURS, Part

__all__ = ["Minimap"]

WIDTH = 4
"""The column's cells: the part's block (2), the problem mark, the selection mark."""


class Minimap(Widget, can_focus=True):
    """The section by part in one column; a click or a key asks to go to a slice (`Jump`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "move(-8)", "Page up", show=False),
        Binding("pagedown", "move(8)", "Page down", show=False),
        Binding("home", "move(-1_000_000)", "First", show=False),
        Binding("end", "move(1_000_000)", "Last", show=False),
    ]

    DEFAULT_CSS = f"""
    Minimap {{
        width: {WIDTH};
        height: 1fr;
        background: $surface;
    }}
    Minimap:focus {{
        background: $boost;
    }}
    """

    class Jump(Message):
        """Go to section offset `offset` (the first byte of the slice clicked or moved to)."""

        def __init__(self, offset: int) -> None:
            super().__init__()
            self.offset = offset

    def __init__(self, length: int, parts: list[tuple[int, int, Part]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.length = length
        """The section's size in bytes."""
        self.parts = parts
        """(start, end, part), in order."""
        self.problems: list[tuple[int, int]] = []
        self.selection: tuple[int, int] | None = None
        self.view: tuple[int, int] | None = None
        """The bytes the hex pane shows."""
        self.line = 0
        """The slice the keys are on."""

    @property
    def per_line(self) -> int:
        """Bytes each line stands for (at least 1)."""
        return max(1, -(-self.length // max(1, self.lines_shown)))

    @property
    def lines_shown(self) -> int:
        """The minimap's lines on the screen (1 before it is laid out)."""
        return self.content_region.height or 1

    def show(
        self,
        *,
        problems: list[tuple[int, int]] | None = None,
        selection: tuple[int, int] | None = None,
        view: tuple[int, int] | None = None,
    ) -> None:
        """What to mark: a check's problems, the selection's bytes, the hex pane's bytes (None: unchanged)."""
        if problems is not None:
            self.problems = problems
        if selection is not None:
            self.selection = selection
            self.line = min(selection[0] // self.per_line, self.lines_shown - 1)
        if view is not None:
            self.view = view
        self.refresh()

    def part_at(self, start: int, end: int) -> Part:
        """The part that holds most of bytes [start, end)."""
        best, most = Part.OTHER, 0
        for lo, hi, part in self.parts:
            overlap = min(hi, end) - max(lo, start)
            if overlap > most:
                best, most = part, overlap
        return best

    def _touches(self, ranges: list[tuple[int, int]] | tuple[tuple[int, int], ...], start: int, end: int) -> bool:
        return any(lo < end and start < max(hi, lo + 1) for lo, hi in ranges)

    def render_line(self, y: int) -> Strip:
        per = self.per_line
        start, end = y * per, min((y + 1) * per, self.length)
        if start >= self.length:
            return Strip.blank(WIDTH, self.rich_style)
        colour = PART_COLOURS[self.part_at(start, end)]
        viewed = self.view is not None and self._touches((self.view,), start, end)
        block = "██" if viewed else "▐▌"
        problem = self._touches(self.problems, start, end)
        chosen = self.selection is not None and self._touches((self.selection,), start, end)
        cursor = self.has_focus and y == self.line
        base = self.rich_style
        return Strip(
            [
                Segment(block, base + Style(color=colour, reverse=cursor)),
                Segment("!" if problem else " ", base + Style(color="red", bold=True)),
                Segment("◀" if chosen else " ", base + Style(bold=True)),
            ],
            WIDTH,
        )

    def on_click(self, event: events.Click) -> None:
        self.line = max(0, event.y)
        self.post_message(self.Jump(min(self.line * self.per_line, max(self.length - 1, 0))))

    def action_move(self, lines: int) -> None:
        last = max(0, min(self.lines_shown, -(-self.length // self.per_line)) - 1)
        self.line = max(0, min(self.line + lines, last))
        self.refresh()
        self.post_message(self.Jump(min(self.line * self.per_line, max(self.length - 1, 0))))
