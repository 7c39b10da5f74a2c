"""`ProblemList`: what the validator found in the section, one line a problem.

Filled once the checks have run (in a worker: the first screen never waits
for them). Choosing a problem asks the screen to select its bytes, and with
them its field, function and row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from sfview.check.catalogue import Severity

if TYPE_CHECKING:
    from sfview.check.run import Diagnostic

__all__ = ["ProblemList"]

SEVERITY_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}


class ProblemList(OptionList):
    """The diagnostics of `sfview check`, each with where it is and what is wrong."""

    class Chosen(Message):
        """A problem was chosen (Enter or a click): show its place."""

        def __init__(self, diagnostic: Diagnostic) -> None:
            super().__init__()
            self.diagnostic = diagnostic

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diagnostics: list[Diagnostic] = []

    def show(self, diagnostics: Sequence[Diagnostic], more: int) -> None:
        """List `diagnostics` (and say how many more there are, not listed)."""
        self.diagnostics = list(diagnostics)
        self.clear_options()
        if not diagnostics:
            # the format's checks alone: a consumer's verdict (`v`, above the list) may still refuse the section
            clean = "No problem in the format's own checks (v: what each consumer makes of the section)."
            self.add_option(Option(Text(clean, style="green"), disabled=True))
            return
        self.add_options(Option(_line(d), id=str(i)) for i, d in enumerate(diagnostics))
        if more:
            note = f"… and {more} more: `sfview check` lists them all"
            self.add_option(Option(Text(note, style="dim"), disabled=True))
        self.highlighted = 0

    def failed(self, why: str) -> None:
        """The checks could not be run to the end: say so, and why (a blank tab would say "nothing found")."""
        self.diagnostics = []
        self.clear_options()
        self.add_option(Option(Text(f"The check failed: {why}", style="bold red"), disabled=True))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Chosen(self.diagnostics[int(event.option.id)]))


def _line(diag: Diagnostic) -> Text:
    text = Text()
    text.append(f"{diag.severity.value:<7} ", style=SEVERITY_STYLES[diag.severity])
    text.append(f"{diag.start:#06x}  ", style="bold")
    text.append(f"{diag.check.id}  ", style="cyan")
    text.append(f"{diag.path}: {diag.message}")
    return text
