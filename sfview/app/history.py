"""`History`: the places jumped between, for back and forward as in a browser.

A jump (go to an address, a symbol or an offset, another function chosen in
the FDE table, a frame shown from the debugger) leaves one place for
another. Moving about inside a place (another row, another byte) is not a
jump: it only updates where the current place is, so that coming back finds
the row or byte that was last looked at, as an editor's back does.
"""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["History"]

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
