"""The explorer's state: the selection, the history of jumps, and what the panes are still to be brought to.

Plain Python, no Textual: the screen's parts read and change it, the panes
show it. A pane that chooses something (a function in the FDE table, a row in
the FRE table, a node in the tree, a byte in the hex pane) says so with a
`Selection`: the FDE and FRE it lies in, and the field itself. The other panes
follow it; nobody reads indices back out of a field's path.

`History` keeps the places jumped between, for back and forward as in a
browser. A jump (go to an address, a symbol or an offset, another function
chosen in the FDE table, a frame shown from the debugger) leaves one place for
another. Moving about inside a place (another row, another byte) is not a
jump: it only updates where the current place is, so that coming back finds
the row or byte that was last looked at, as an editor's back does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from sfview.app.consumer_marks import FORMAT, ConsumerMarks
from sfview.app.fields import Field

__all__ = ["ExplorerState", "History", "Selection"]

T = TypeVar("T")

LIMIT = 200
"""Places kept: holding `n` down through 40,000 functions must not keep 40,000 of them."""


class History(Generic[T]):
    """Places visited, and which of them is the current one."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.places: list[T] = []
        self.index = -1
        """The current place's index in `places` (-1 before the first jump)."""
        self.limit = limit

    def jump(self, here: T, there: T) -> None:
        """Leave `here` (the current place, as it is now) for `there`; the places ahead are forgotten."""
        if here == there:
            return
        del self.places[self.index + 1 :]
        if self.places:
            self.places[-1] = here
        else:
            self.places.append(here)
        self.places.append(there)
        del self.places[: max(0, len(self.places) - self.limit)]
        self.index = len(self.places) - 1

    def back(self, here: T) -> T | None:
        """The place before the current one (which is now `here`), or None at the first."""
        return self._move(here, -1)

    def forward(self, here: T) -> T | None:
        """The place after the current one, or None at the last."""
        return self._move(here, +1)

    def _move(self, here: T, step: int) -> T | None:
        target = self.index + step
        if not 0 <= target < len(self.places):
            return None
        self.places[self.index] = here
        self.index = target
        return self.places[target]

    @property
    def position(self) -> str:
        """`2 of 5`: where the current place is among those kept."""
        return f"{self.index + 1} of {len(self.places)}"


@dataclass(frozen=True, slots=True)
class Selection:
    """What the explorer's panes agree on, passed between them as one small object."""

    fde: int | None
    """The function (FDE index) the selection lies in, if any."""
    fre: int | None
    """The row (FRE index) of that function, if any."""
    field: Field
    """The field selected: its bytes are highlighted, its explanation shown."""

    @classmethod
    def of(cls, field: Field) -> Selection:
        """The selection of `field`, in the FDE and FRE it belongs to."""
        return cls(field.fde, field.fre, field)


class ExplorerState:
    """What the explorer shows and remembers, apart from the widgets that show it."""

    def __init__(self) -> None:
        self.selected: Selection | None = None
        self.history: History[Selection] = History()
        self.reveal_pending: Field | None = None
        """The field the hidden tree and detail panel are to be brought to (`Panes.reveal`)."""
        self.tables_pending: Selection | None = None
        """The selection the hidden tables are to be brought to (`Panes.show_tables`)."""
        self.status_shown = ""
        """The status line's text."""
        self.sort_asked = False
        """A sort key waits for its column's order (`FdeTable.waiting`): its first row is selected when it comes."""
        self.consumer = FORMAT
        """Whose view the Problems tab takes: the format's checks, or a consumer's (`v` cycles)."""
        self.verdicts: dict[str, ConsumerMarks] = {}
        """The consumers' verdicts judged so far, by consumer, laid over the rows."""
        self.kept: list[str] = []
        """The consumers kept marked (`V`) besides the one the cycle shows."""
        self.judging: set[str] = set()
        """The consumers whose verdict a worker is judging."""

    def marked(self) -> list[str]:
        """The consumers whose marks the tables and the Problems tab show: those kept, then the one shown."""
        shown = [] if self.consumer == FORMAT or self.consumer in self.kept else [self.consumer]
        return [*self.kept, *shown]
