"""`Lazy`: a sequence whose items are made when first asked for.

A function may have a million rows, and a view shows twenty: its rows (and
their fields in the tree) are made one by one, as they are asked for, and
kept for asking again (all of them, or the last `keep`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class Lazy(Sequence[T]):
    """Items made by `_make(index)` on first use; `__len__` says how many there are."""

    keep: int | None = None
    """How many made items are kept at most (None: all)."""

    def __init__(self) -> None:
        self._made: dict[int, T] = {}

    def _make(self, index: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        item = self._made.get(index)
        if item is None:
            if self.keep is not None and len(self._made) >= self.keep:
                self._made.clear()
            item = self._made[index] = self._make(index)
        return item
