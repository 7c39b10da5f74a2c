"""`SfviewApp`: opens the Document, installs the screens, keeps the global keys.

The explorer (`explorer/screen.py`) is the first screen the user sees, pushed
over a blank screen of the app's own (`Host`) so that an edit can replace it
(Textual replaces only a pushed screen); the help and go-to dialogs are pushed
over it, and further screens (the unwinding debugger) sit beside it. What the
command palette offers comes from the screen on top (`commands.py`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen

from sfview.app.driver import noting_driver
from sfview.app.explorer.background import IDLE_COLLECTION_CHECK_S, Heap
from sfview.app.explorer.screen import ExplorerScreen
from sfview.document import Document
from sfview.edit.patches import Edits, Patch, write_copy
from sfview.errors import InputError
from sfview.sframe.model.section import Section

if TYPE_CHECKING:
    from textual.driver import Driver

    from sfview.app.screens.debugger import DebuggerScreen, Threads
    from sfview.unwind.session import Session

__all__ = ["SfviewApp"]


def _commands() -> type:
    """The palette's provider (`commands.py`), imported when the palette first opens: it brings Textual's
    command palette, which the first screen does not draw."""
    from sfview.app.commands import SfviewCommands

    return SfviewCommands


class Host(Screen[None]):
    """The blank screen at the bottom of the stack, under the explorers.

    Textual's default screen is never pushed, and `switch_screen` replaces only a pushed one: were the first
    explorer the default screen, it would stay under the explorer each edit opens, with its whole section.
    """


class SfviewApp(App[None]):
    """sfview's terminal app: one Document, the explorer and the screens beside it."""

    CSS_PATH = Path(__file__).with_name("sfview.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = "sfview"
    ALLOW_IN_MAXIMIZED_VIEW = "KeyFooter"  # the footer under a zoomed pane (`z`), as Textual keeps its `Footer`
    COMMANDS: ClassVar = App.COMMANDS | {lambda: _commands()}  # imported when the palette opens

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        # Textual's ctrl+c only says "press ctrl+q": in a terminal it means leave (an input copies with it first).
        Binding("ctrl+c", "quit", "Quit", show=False),
    ]

    def __init__(
        self, doc: Document, session: Session | None = None, threads: Threads | None = None, *, inline: bool = True
    ) -> None:
        super().__init__()
        self.inline = inline
        """The debugger lists the functions inlined at a frame's PC as frames, as gdb does (`--no-inline`: not)."""
        self.doc = doc
        self.section: Section | None = doc.section
        self.error: InputError | None = doc.error
        self.explorer = ExplorerScreen(doc)
        self.session = session
        """A machine state to unwind from (a core, typed registers): the debugger opens on it."""
        self.threads = threads
        """A core's threads, when it has several: the debugger lists them (`t`)."""
        self.debugger: DebuggerScreen | None = None
        self._last_input = 0.0
        """When a key or a click last came (`time.monotonic()`)."""
        self.heap = Heap()
        """The garbage collector's policy: frozen after the first screen, collected while nobody types."""
        self.edits = Edits(doc.data)
        """The patches made to the section (`e`), kept across the explorers each edit opens."""

    def on_mount(self) -> None:
        for screen in self.first_screens():
            self.push_screen(screen)
        self.heap.collect_less_often()
        self.call_after_refresh(self.heap.freeze)
        self.set_interval(IDLE_COLLECTION_CHECK_S, lambda: self.heap.collect_when_idle(self._last_input))
        if self.session is not None:
            self.call_after_refresh(self.open_debugger)

    def first_screens(self) -> list[Screen[None]]:
        """The screens pushed when the app starts, in order (the last is shown): the explorer.

        A subclass adds its own here rather than in an `on_mount` of its own: Textual calls every class's
        `on_mount`, the subclass's first."""
        return [self.explorer]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A notification, never read as markup, whatever the caller asks: messages quote names from the file,
        paths and what was typed, and Textual ends the app on a `[/]` in markup it cannot match."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

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
                started.unwinder,
                started.memory,
                started.pc,
                started.registers,
                self.explorer,
                self.threads,
                started.origin,
                inline=self.inline,
                memory_from=started.memory_from,
            )
            self.install_screen(self.debugger, "debugger")
        self.push_screen("debugger")

    def edit(self, patch: Patch) -> None:
        """Make `patch` and open the explorer on the edited section."""
        self.edits.apply(patch)
        self._reopen(f"edited {patch.what} ({patch.old.hex(' ')} → {patch.new.hex(' ')}): ctrl+z undoes it")

    def undo(self) -> None:
        patch = self.edits.undo()
        if patch is None:
            self.bell()
            self.explorer.notify("Nothing to undo.", severity="warning")
            return
        self._reopen(f"undone: {patch.what} (ctrl+y makes it again)")

    def redo(self) -> None:
        patch = self.edits.redo()
        if patch is None:
            self.bell()
            self.explorer.notify("Nothing to redo.", severity="warning")
            return
        self._reopen(f"made again: {patch.what}")

    def _reopen(self, said: str) -> None:
        """A new explorer on the section as the edits leave it, decoded afresh, where the last one was: every
        pane, check and verdict is the edited section's. The debugger is made again when next opened."""
        resume = self.explorer.resume_here(said)
        self.heap.let_go(self.doc)
        self.doc = self.doc.patched(self.edits.data)
        self.section, self.error = self.doc.section, self.doc.error
        if self.debugger is not None:  # made again, on the edited section, when next opened
            self.uninstall_screen(self.debugger)
            self.debugger.remove()  # an installed screen stays the app's child, its id taken, until removed
            self.debugger = None
        self._follow_in_the_debugger()
        self.explorer = ExplorerScreen(self.doc, resume)
        self.switch_screen(self.explorer)  # the replaced explorer removed, and its document with it

    def _follow_in_the_debugger(self) -> None:
        """The state the debugger unwinds (a core's, typed registers') with the program's section as edited,
        each thread's too; made again from the document when there is none (`session.typed`)."""
        from sfview.unwind import session  # the unwinder: only once a state to unwind was given

        section = self.section
        if self.session is not None:
            self.session = session.with_program_section(self.session, section)
        if self.threads is not None:
            load = self.threads.load
            self.threads = replace(self.threads, load=lambda tid: session.with_program_section(load(tid), section))

    def write_copy(self, path: str) -> None:
        """The file written to `path` with the edits in force (an `InputError` says what kept it from being)."""
        write_copy(self.doc.path, self.doc.file_offset, self.edits.original, self.edits.data, path)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, noting each key or click as its input thread reads it, and handing a lone escape
        on in milliseconds (`driver.py` says why)."""
        return noting_driver(super().get_driver_class(), self.note_input)

    def note_input(self) -> None:
        """A key or a click came (from any thread): the worker waits (`last_input`)."""
        self._last_input = time.monotonic()

    @property
    def last_input(self) -> float:
        """When a key was last pressed or a button clicked (`time.monotonic`), 0 before any."""
        return self._last_input

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseDown):  # also keys sent by tests, which no driver reads
            self.note_input()
        await super().on_event(event)

    def get_default_screen(self) -> Host:
        """A blank screen under the explorers (`Host`): the first explorer is pushed over it when mounted."""
        return Host()

    def action_help(self) -> None:
        from sfview.app.screens.help import HelpScreen  # Markdown is slow to import: not at start-up

        self.push_screen(HelpScreen(self.section))
