"""`ProblemList`: what the validator found in the section, one line a problem, then each marked consumer's
failing ranges.

Filled once the checks have run (in a worker: the first screen never waits
for them). Choosing a problem asks the screen to select its bytes, and with
them its field, function and row; choosing a consumer's failing range asks
for its function and the row at its first PC.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from sfview.app.consumer_marks import CRASH, ConsumerMarks
from sfview.check.catalogue import Severity
from sfview.consumers import LookupFailure
from sfview.output.safe_text import pictured

if TYPE_CHECKING:
    from sfview.check.run import Diagnostic

__all__ = ["ProblemList"]

SEVERITY_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}
FAILURES_SHOWN = 500
"""A consumer's failing ranges listed at most (`sfview check --profile` lists them all)."""


class ProblemList(OptionList):
    """The diagnostics of `sfview check`, each with where it is and what is wrong."""

    class Chosen(Message):
        """A problem was chosen (Enter or a click): show its place."""

        def __init__(self, diagnostic: Diagnostic) -> None:
            super().__init__()
            self.diagnostic = diagnostic

    class FailureChosen(Message):
        """A consumer's failing range was chosen: show its function and row."""

        def __init__(self, consumer: str, failure: LookupFailure) -> None:
            super().__init__()
            self.consumer = consumer
            self.failure = failure

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diagnostics: list[Diagnostic] = []
        self._more = 0
        self._checked = False
        self._failed: str | None = None
        self.consumers: list[ConsumerMarks] = []
        self.failures: list[tuple[str, LookupFailure]] = []
        """The failing ranges listed, by their option's number (`f3`)."""

    def show(self, diagnostics: Sequence[Diagnostic], more: int) -> None:
        """List `diagnostics` (and say how many more there are, not listed), then the consumers' failures."""
        self.diagnostics, self._more, self._checked = list(diagnostics), more, True
        self._list()

    def show_consumers(self, consumers: list[ConsumerMarks]) -> None:
        """List, after the checks' problems, each of `consumers`' failing ranges with the consumer's reason."""
        self.consumers = consumers
        self._list()

    def _list(self) -> None:
        diagnostics = self.diagnostics
        highlighted = self.highlighted
        self.clear_options()
        self.failures = []
        if diagnostics:
            self.add_options(Option(_line(d), id=str(i)) for i, d in enumerate(diagnostics))
            if self._more:
                note = f"… and {self._more} more: `sfview check` lists them all"
                self.add_option(Option(Text(note, style="dim"), disabled=True))
        elif self._failed is not None:
            failed = pictured(f"The check failed: {self._failed}")
            self.add_option(Option(Text(failed, style="bold red"), disabled=True))
        elif self._checked:
            # the format's checks alone: a consumer's verdict (`v`, above the list) may still refuse the section
            clean = "No problem in the format's own checks (v: what each consumer makes of the section)."
            self.add_option(Option(Text(clean, style="green"), disabled=True))
        for marks in self.consumers:
            self._list_consumer(marks)
        if self.option_count and any(not self.get_option_at_index(i).disabled for i in range(self.option_count)):
            self.highlighted = highlighted if highlighted is not None and highlighted < self.option_count else None
            if self.highlighted is None or self.get_option_at_index(self.highlighted).disabled:
                self.highlighted = next(i for i in range(self.option_count) if not self.get_option_at_index(i).disabled)

    def _list_consumer(self, marks: ConsumerMarks) -> None:
        """A consumer's heading, then each failing range (the first `FAILURES_SHOWN`), one line each."""
        verdict = marks.verdict
        if marks.refused:
            heading = f"{marks.name}: refuses the section: {verdict.rule} ({verdict.error}): no lookup is answered"
            self.add_option(Option(Text(heading, style="bold red"), disabled=True))
            return
        failures = marks.failures()
        if not failures:
            heading = f"{marks.name}: every lookup is answered, at every PC of every function"
            self.add_option(Option(Text(heading, style="green"), disabled=True))
            return
        pcs = marks.failing_pcs
        ranges = f"{len(failures)} range" + ("s" if len(failures) > 1 else "")
        heading = f"{marks.name}: lookups fail at {pcs} PCs, in {ranges} (enter: its function and row)"
        self.add_option(Option(Text(heading, style="bold magenta"), disabled=True))
        for failure in failures[:FAILURES_SHOWN]:
            self.add_option(Option(_failure_line(failure), id=f"f{len(self.failures)}"))
            self.failures.append((marks.name, failure))
        if len(failures) > FAILURES_SHOWN:
            note = f"… and {len(failures) - FAILURES_SHOWN} more: `sfview check --profile {marks.name}` lists them all"
            self.add_option(Option(Text(note, style="dim"), disabled=True))

    def failed(self, why: str) -> None:
        """The checks could not be run to the end: say so, and why (a blank tab would say "nothing found")."""
        self.diagnostics, self._failed = [], why
        self._list()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option.id
        if chosen is None:
            return
        if chosen.startswith("f"):
            self.post_message(self.FailureChosen(*self.failures[int(chosen[1:])]))
        else:
            self.post_message(self.Chosen(self.diagnostics[int(chosen)]))


def _line(diag: Diagnostic) -> Text:
    text = Text()
    text.append(f"{diag.severity.value:<7} ", style=SEVERITY_STYLES[diag.severity])
    text.append(f"{diag.start:#06x}  ", style="bold")
    text.append(f"{diag.check.id}  ", style="cyan")
    text.append(pictured(f"{diag.path}: {diag.message}"))  # a message may quote the file: a section's name
    return text


def _failure_line(failure: LookupFailure) -> Text:
    """`  0x1031..0x1037  fdes[1]  fails: rule (error)`, under its consumer's heading."""
    text = Text("  ")
    text.append(f"{failure.start:#x}..{failure.end - 1:#x}  ", style="bold")
    text.append(f"fdes[{failure.function}]  ", style="cyan")
    text.append(f"{'crash' if failure.error == CRASH else 'fails'}: {failure.rule} ({failure.error})")
    return text
