"""`SfviewApp`: opens the Document, installs the screens, keeps the global keys.

The explorer (`screens/explorer.py`) is the first screen; the help and go-to
dialogs are pushed over it, and further screens (the unwinding debugger) sit
beside it. What the command palette offers comes from the screen on top
(`commands.py`).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from sfview.app.commands import SfviewCommands
from sfview.app.screens.explorer import ExplorerScreen
from sfview.document import Document
from sfview.errors import InputError
from sfview.sframe.section import Section

if TYPE_CHECKING:
    from sfview.app.screens.debugger import DebuggerScreen
    from sfview.unwind.session import Session

__all__ = ["SfviewApp"]


class SfviewApp(App[None]):
    """sfview's terminal app: one Document, the explorer and the screens beside it."""

    CSS_PATH = Path(__file__).with_name("sfview.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = "sfview"
    COMMANDS: ClassVar = App.COMMANDS | {SfviewCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
    ]

    def __init__(self, doc: Document, session: Session | None = None) -> None:
        super().__init__()
        self.doc = doc
        self.source = doc.source
        self.section: Section | None = doc.section
        self.error: InputError | None = doc.error
        self.explorer = ExplorerScreen(doc)
        self.session = session
        """A machine state to unwind from (a core, typed registers): the debugger opens on it."""
        self.debugger: DebuggerScreen | None = None

    def on_mount(self) -> None:
        self.call_after_refresh(self._freeze_the_heap)
        if self.session is not None:
            self.call_after_refresh(self.open_debugger)

    def open_debugger(self) -> None:
        """The unwinding debugger, on the session's state, else on registers to type in."""
        if self.section is None:
            self.notify("The section could not be read: there is nothing to unwind with.", severity="error")
            return
        if self.debugger is None:
            from sfview.app.screens.debugger import DebuggerScreen
            from sfview.unwind import session

            started = self.session or session.typed(self.doc)
            self.debugger = DebuggerScreen(
                started.unwinder, started.memory, started.pc, started.registers, self.explorer
            )
            self.install_screen(self.debugger, "debugger")
        self.push_screen("debugger")

    @staticmethod
    def _freeze_the_heap() -> None:
        """After the first screen, move everything built so far out of the cyclic GC's sight.

        The section's model, the widgets and Textual itself live as long as the
        app; left in the collected generations, every full collection walks them
        again, and a key press that triggers one takes 100 ms instead of 20.
        """
        gc.collect()
        gc.freeze()

    def get_default_screen(self) -> ExplorerScreen:
        """The explorer is the screen at the bottom of the stack: the others are pushed over it."""
        return self.explorer

    def action_help(self) -> None:
        from sfview.app.screens.help import HelpScreen  # Markdown costs 0.1 s to import: not at start-up

        self.push_screen(HelpScreen(self.section))
