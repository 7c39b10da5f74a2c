"""`SortOrders`: the FDE table's rows in the order of each column, made once rather than at each key.

Why: sorting a million functions takes a third of a second in Python, far
more than a key may (40 ms). So each column's order is made once, in the
worker that goes through the section (`prepare`), and a sort key only swaps
the order the table shows.

An order is kept ascending, equal values in FDE order. Descending is the
same order read from the end, with each run of equal values put back in FDE
order (as `sorted(..., reverse=True)` keeps equals): the runs are found once,
with the order, so reading it backwards is a copy and a few slices, not a
sort.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import compress, islice, pairwise
from operator import le, ne
from typing import NamedTuple

__all__ = ["Ordered", "SortOrders", "argsort"]

INDEX = "I"
"""The typecode of an order: FDE indexes are 32-bit (`num_fdes` is a u32)."""


class Ordered(NamedTuple):
    """A column's order: FDE indexes by ascending value (by index among equals), and where equal values run."""

    ascending: Sequence[int]
    ties: array[int]
    """The start and end (positions in `ascending`) of each run of two or more equal values, one after the other."""

    def descending(self) -> Sequence[int]:
        """FDE indexes by descending value, by index among equals."""
        count, ties = len(self.ascending), self.ties
        order = self.ascending[::-1]
        if not ties:
            return order
        order = order if isinstance(order, array) else array(INDEX, order)
        for start, end in zip(islice(ties, 0, None, 2), islice(ties, 1, None, 2), strict=True):
            order[count - end : count - start] = order[count - end : count - start][::-1]
        return order


def argsort(keys: Sequence[object]) -> Sequence[int]:
    """The indexes of `keys` in the order of their values (by index among equals), as a compact array.

    Keys already in order (a section's starts, most often: FDEs are sorted by them) give a `range`, which
    takes no memory. Integer keys (a column kept as an array) are sorted packed with their index into one
    number, without a key function: a million functions then cost one number each while sorting, not three
    objects."""
    if all(map(le, keys, islice(keys, 1, None))):
        return range(len(keys))
    if isinstance(keys, array):
        bits = len(keys).bit_length()
        packed = [key << bits | index for index, key in enumerate(keys)]
        packed.sort()
        return array(INDEX, map(((1 << bits) - 1).__and__, packed))
    return array(INDEX, sorted(range(len(keys)), key=keys.__getitem__))


def order_of(keys: Sequence[object]) -> Ordered:
    """`keys`' ascending order and its runs of equal values (found with C loops: `map`, `compress`)."""
    ascending = argsort(keys)
    values = list(map(keys.__getitem__, ascending))
    changes = [0, *compress(range(1, len(values)), map(ne, values, islice(values, 1, None))), len(values)]
    ties = array(INDEX)
    for start, end in pairwise(changes):
        if end - start > 1:
            ties.extend((start, end))
    return Ordered(ascending, ties)


class SortOrders:
    """Each column's `Ordered`, once made (`make`, from any thread), until its values change (`forget`)."""

    def __init__(self) -> None:
        self._made: dict[int, Ordered] = {}
        self._versions: dict[int, int] = {}
        """How many times each column's values changed: an order made from older values is not kept."""
        self._descending: tuple[int, Sequence[int]] | None = None
        """The last descending order read (its column), for `R` pressed twice."""

    def __contains__(self, column: int) -> bool:
        return column in self._made

    def make(self, column: int, keys: Sequence[object]) -> None:
        """Column `column`'s order, from its values `keys` (in a worker thread, or at once when asked for)."""
        version = self._versions.get(column, 0)
        made = order_of(keys)
        if self._versions.get(column, 0) == version:  # the values did not change meanwhile
            self._made[column] = made

    def forget(self, column: int) -> None:
        """Column `column`'s values changed (names arrived, problems found): its order is made again."""
        self._versions[column] = self._versions.get(column, 0) + 1
        self._made.pop(column, None)
        if self._descending is not None and self._descending[0] == column:
            self._descending = None

    def get(self, column: int, reverse: bool) -> Sequence[int] | None:
        """The FDE indexes by column `column`'s values (descending if `reverse`), None until made."""
        made = self._made.get(column)
        if made is None or not reverse:
            return made.ascending if made is not None else None
        if self._descending is None or self._descending[0] != column:
            self._descending = column, made.descending()
        return self._descending[1]
