"""`SortOrders`: the FDE table's rows in the order of each column, made once rather than at each key.

Why: sorting a million functions in Python takes far longer than a key may.
So each column's order is made once, in the worker that goes through the
section (`FdeTable.prepare_orders`), and a sort key only swaps the order the
table shows.

The worker shares the interpreter with the keys: what it does in C (a sort,
a `map` over every function) it does a piece at a time (`PIECE`), and
before each piece it calls its `pace`, in which it waits while keys are
pressed (`Background.give_way`): sharing the interpreter unpaced, a move on
a million functions would take several times its time while the orders are
made.

An order is kept ascending, equal values in FDE order. Descending is the
same order read from the end, with each run of equal values put back in FDE
order (as `sorted(..., reverse=True)` keeps equals): the runs are found once,
with the order, so reading it backwards is a copy and a few slices, not a
sort.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence, Sized
from itertools import chain, compress, groupby, islice, repeat
from operator import le, lt, ne, sub
from typing import Any, NamedTuple

__all__ = ["INDEX", "Ordered", "Pace", "SortOrders", "argsort", "order_of"]

Pace = Callable[[], None]
"""Called before each piece of work: where the worker making the orders waits while keys come."""

INDEX = "I"
"""The typecode of an order: FDE indexes are 32-bit (`num_fdes` is a u32)."""
PIECE = 1 << 15
"""Items one C loop (a sort, a `map`) goes through at once while the orders are made in the worker. A C loop
holds the interpreter from start to end, and a key pressed meanwhile waits as long: over a million functions,
far longer than a key may; over `PIECE` items, briefly."""


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


def _no_pace() -> None:
    """The pace of an order made at once (a key that asked for it): no waiting."""


def argsort(keys: Sequence[Any], pace: Pace = _no_pace) -> Sequence[int]:
    """The indexes of `keys` in the order of their values (by index among equals), as a compact array.

    Keys already in order (a section's starts, most often: FDEs are sorted by them) give a `range`, which
    takes no memory. Integer keys (a column kept as an array) are sorted packed with their index into one
    number, without a key function: a million functions then cost one number each while sorting, not three
    objects."""
    for start in _pieces(keys):
        pace()
        if not all(map(le, keys[start : start + PIECE], keys[start + 1 : start + PIECE + 1])):
            break
    else:
        return range(len(keys))
    if isinstance(keys, array):
        bits = len(keys).bit_length()
        packed: list[int] = []
        for start in _pieces(keys):
            pace()
            packed.extend(key << bits | index for index, key in enumerate(keys[start : start + PIECE], start))
        return _compact(_sorted(packed, pace=pace), pace, ((1 << bits) - 1).__and__)
    return _compact(_sorted(range(len(keys)), keys.__getitem__, pace), pace)


def _compact(indexes: list[int], pace: Pace, index: Callable[[int], int] = int) -> array[int]:
    """`indexes` (each through `index`) as an order's compact array, a piece at a time: a million of them in one
    `array` call would hold the interpreter as long as a key may wait. The list is emptied as it goes (its pieces
    replaced by `None`), so that its numbers are freed a piece at a time too, not all at the end in one go."""
    order = array(INDEX)
    for start in _pieces(indexes):
        pace()
        piece = indexes[start : start + PIECE]
        order.extend(map(index, piece))
        indexes[start : start + PIECE] = repeat(None, len(piece))
    return order


def order_of(keys: Sequence[Any], pace: Pace = _no_pace) -> Ordered:
    """`keys`' ascending order and its runs of equal values (found with C loops: `map`, `compress`).

    The values in order are read a piece at a time, each piece with the last value of the one before, and where
    they change kept in an array: a list of a million values, and one of a million changes, would be freed at
    the end in one go, holding the interpreter while a key waits."""
    ascending = argsort(keys, pace)
    changes = array(INDEX, [0])
    last: list[Any] = []  # the value before the piece
    for start in _pieces(ascending):
        pace()
        values = last + list(map(keys.__getitem__, ascending[start : start + PIECE]))
        changes.extend(compress(range(start - len(last) + 1, start + PIECE), map(ne, values, values[1:])))
        last = values[-1:]
    changes.append(len(ascending))
    return Ordered(ascending, _ties(changes, pace))


def _ties(changes: Sequence[int], pace: Pace = _no_pace) -> array[int]:
    """The runs of two or more equal values, from where the values change (`changes`, the length last): their
    start and end, one after the other. Found by C loops, a piece at a time: a million distinct values are a
    million changes, which a Python loop over every pair goes through without a pace, a key pressed meanwhile
    sharing the interpreter with it and reaching the screen late."""
    ties = array(INDEX)
    if changes[-1] == len(changes) - 1:  # every value differs from the one before (the starts, most often)
        return ties
    for start in range(0, len(changes) - 1, PIECE):
        pace()
        stop = min(start + PIECE, len(changes) - 1)
        starts, ends = changes[start:stop], changes[start + 1 : stop + 1]
        ties.extend(
            chain.from_iterable(compress(zip(starts, ends, strict=True), map(lt, repeat(1), map(sub, ends, starts))))
        )
    return ties


def _pieces(items: Sized) -> range:
    """Where each piece of `items` a C loop goes through at once starts (see `PIECE`)."""
    return range(0, len(items), PIECE)


def _sorted(items: Sequence[Any], key: Callable[[Any], Any] | None = None, pace: Pace = _no_pace) -> list[Any]:
    """`sorted(items, key=key)` (stable) in sorts of about `PIECE` items, so that none holds the interpreter
    for long: each piece sorted, then each cut where the values of a sample of them fall (the same values in
    the same bucket), and each bucket (its part of every piece, in their order) sorted and put after the last
    (a sample sort). Merging the sorted pieces two at a time would hold it long at the end.

    The values equal to a sample's value are a bucket of their own, not sorted: each piece has them in its
    order, so the pieces' parts one after the other are in order already. A column of few values (the FRE type,
    the frame size) would otherwise leave most of a million functions in one bucket, whose sort would hold the
    interpreter as long as a key pressed meanwhile waits."""
    runs = []
    for start in _pieces(items):
        pace()
        runs.append(sorted(items[start : start + PIECE], key=key))
    if len(runs) < 2:
        return runs[0] if runs else []
    step = max(PIECE // len(runs), 1)
    sample = sorted((run[i] for run in runs for i in range(0, len(run), step)), key=key)
    every = len(sample) // len(runs)
    splitters = [value for value, _ in groupby(v if key is None else key(v) for v in sample[every::every])]
    cuts = []
    for run in runs:
        bounds = ((bisect_left(run, v, key=key), bisect_right(run, v, key=key)) for v in splitters)
        cuts.append([0, *chain.from_iterable(bounds), len(run)])
    result: list[Any] = []
    for bucket in range(2 * len(splitters) + 1):
        pace()
        parts = (run[cut[bucket] : cut[bucket + 1]] for run, cut in zip(runs, cuts, strict=True))
        if bucket % 2:  # the values equal to a splitter
            for part in parts:
                result += part
        else:
            result += sorted(chain.from_iterable(parts), key=key)
    return result


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

    def make(self, column: int, keys: Sequence[object], pace: Pace = _no_pace) -> None:
        """Column `column`'s order, from its values `keys` (in a worker thread, at its `pace`; or at once when
        asked for)."""
        version = self._versions.get(column, 0)
        made = order_of(keys, pace)
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
