"""A bare Textual app, the reference for sfview's first screen (`bench_first_screen.py`): one line of text."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

SHOWN = "a bare Textual app"
"""What its first screen shows."""


class MinimalApp(App[None]):
    """Textual's start-up and one frame: what any Textual app pays before it draws anything of its own."""

    def compose(self) -> ComposeResult:
        yield Static(SHOWN)


if __name__ == "__main__":
    MinimalApp().run()
