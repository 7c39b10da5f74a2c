"""`ProfileApp`: the app on a profile (`sfview perf FILE --app`): the samples view first, each sample's
walk in the unwinding debugger, the explorer on the profile's program.

The places come from the report's counts; a sample is read again from the
file when it is opened (`load`), its registers and stack copy the debugger's
state. `escape` in the debugger returns to the samples.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen

from sfview.app.app import SfviewApp
from sfview.app.screens.samples import SamplesScreen
from sfview.document import Document
from sfview.errors import InputError
from sfview.profiling.coverage import Place, Seen
from sfview.unwind.session import Session

__all__ = ["ProfileApp", "stack_copy"]


def stack_copy(number: int) -> str:
    """Where a sample's memory comes from, as the debugger's memory pane says it: its copy of the stack."""
    return f"sample #{number}'s stack copy"


class ProfileApp(SfviewApp):
    """The explorer on `doc`, with the samples view over it."""

    def __init__(
        self,
        doc: Document,
        title: str,
        places: list[tuple[Place, Seen]],
        load: Callable[[int], Session],
        *,
        inline: bool = True,
    ) -> None:
        super().__init__(doc, inline=inline)
        self.samples = SamplesScreen(title, places, self.open_sample)
        self.load = load

    def first_screens(self) -> list[Screen[None]]:
        """The samples view over the explorer."""
        return [*super().first_screens(), self.samples]

    def open_sample(self, number: int) -> None:
        """Sample #`number` in a new debugger, over the samples view."""
        from sfview.app.screens.debugger import DebuggerScreen

        try:
            started = self.load(number)
        except InputError as exc:
            self.notify(exc.message, severity="error")
            return
        self.debugger = DebuggerScreen(
            started.unwinder,
            started.memory,
            started.pc,
            started.registers,
            self.explorer,
            inline=self.inline,
            memory_from=stack_copy(number),
        )
        self.push_screen(self.debugger)
