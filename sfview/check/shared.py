"""Rows that several functions read: each decoded and judged once, whichever functions read it.

A function's rows are `func_num_fres` rows read one after another from where its
FDE points. Functions may point into rows another function reads (the same place,
or a row later): read afresh for each, a pool of rows costs functions times rows. Here
rows are read along a `Chain` (from one place, one row after another, as far as any
function asks), each row once, with its problems found once (by the caller's
`problems`, a tuple interned to a small id), so that a function is a range of
ordinals on a chain, and what the checks ask of a range (whether its starts
increase, which rows start past a size) is answered without walking it.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left
from collections.abc import Callable

from sfview.sframe.model.records import FRE_LENGTHS

Problems = tuple[tuple[str, str], ...]
"""What a row pattern breaks: (check id, message with `{j}` for the row's number), as `check` judges it."""

NAMED = 3
"""Functions named in what is said of a chain's readers; the others are counted."""


class Chain:
    """Rows read one after another from one place: where each lies, its start, its problems (an id), and a
    running count of the rows that do not start after the one before (so that a range's order is two reads).
    `judged`: a byte a row, set once the row's problems have been said (with the first function to read it)."""

    __slots__ = ("down", "end", "judged", "kinds", "named", "number", "positions", "readers", "starts", "stopped")

    def __init__(self, number: int, pos: int) -> None:
        self.number = number
        """Its place in `SharedRows.chains`."""
        self.positions = array("I")
        self.starts = array("I")
        self.kinds = array("I")
        self.down = array("I")
        self.judged = bytearray()
        self.end = pos
        """Where the row after the last read would start."""
        self.stopped = False
        """The row at `end` cannot be read (past the FRE sub-section or the section)."""
        self.readers = 0
        """How many functions read rows of this chain."""
        self.named: list[int] = []
        """The first `NAMED` of them."""

    def __len__(self) -> int:
        return len(self.positions)

    def span(self, k: int) -> tuple[int, int]:
        """The bytes of row `k`."""
        positions = self.positions
        return positions[k], positions[k + 1] if k + 1 < len(positions) else self.end

    def ordered(self, first: int, stop: int) -> bool:
        """Whether every row of [first, stop) starts after the one before it (within the range)."""
        return stop - first < 2 or self.down[stop - 1] == self.down[first]


class SharedRows:
    """The chains of one FRE type (its start address's width) over a section's FRE sub-section.

    `owner` maps a byte of the sub-section to the chain that read a row starting there (4 bytes a byte,
    made with the first chain): a function pointing at a row already read continues its chain."""

    def __init__(
        self, data: bytes, low: int, fre_end: int, address: struct.Struct, problems: Callable[[bytes], Problems]
    ) -> None:
        self.data, self.low, self.fre_end = data, low, fre_end
        self.limit = len(data)
        self.address = address
        self.problems = problems
        self.kinds: list[Problems] = [()]
        """Each distinct tuple of problems, by its id (0: none)."""
        self._kind_ids: dict[Problems, int] = {(): 0}
        self._keys: dict[bytes, int] = {}
        self.chains: list[Chain] = []
        self._owner: array[int] | None = None

    def read(self, pos: int, count: int) -> tuple[Chain, int]:
        """The chain holding the `count` rows from `pos` (read as far as they can be), and the first's ordinal."""
        owner = self._owner
        if owner is None:
            owner = self._owner = array("i", [-1]) * max(0, min(self.fre_end, self.limit) - self.low)
        at = pos - self.low
        found = owner[at] if 0 <= at < len(owner) else -1
        if found >= 0:
            chain = self.chains[found]
            first = bisect_left(chain.positions, pos)
        else:
            chain, first = Chain(len(self.chains), pos), 0
            self.chains.append(chain)
        self._extend(chain, first + count, owner)
        return chain, first

    def _extend(self, chain: Chain, upto: int, owner: array[int]) -> None:
        """Read rows onto the chain until it has `upto` or the next cannot be read (as the bulk reader stops)."""
        data, low, fre_end, limit, lengths = self.data, self.low, self.fre_end, self.limit, FRE_LENGTHS
        unpack, width = self.address.unpack_from, self.address.size
        positions, starts, kinds, down = chain.positions, chain.starts, chain.kinds, chain.down
        number = chain.number
        pos = chain.end
        while len(positions) < upto and not chain.stopped:
            info_at = pos + width
            if pos >= fre_end or info_at >= limit or info_at + lengths[data[info_at]] > limit:
                chain.stopped = True
                break
            row_end = info_at + lengths[data[info_at]]
            start = unpack(data, pos)[0]
            before = down[-1] if down else 0
            down.append(before + 1 if starts and start <= starts[-1] else before)
            positions.append(pos)
            starts.append(start)
            kinds.append(self._kind(data[info_at:row_end]))
            chain.judged.append(0)
            if 0 <= pos - low < len(owner) and owner[pos - low] < 0:
                owner[pos - low] = number
            pos = row_end
        chain.end = pos

    def _kind(self, key: bytes) -> int:
        """The id of what a row pattern breaks."""
        found = self._keys.get(key)
        if found is None:
            problems = self.problems(key)
            found = self._kind_ids.get(problems)
            if found is None:
                found = self._kind_ids[problems] = len(self.kinds)
                self.kinds.append(problems)
            self._keys[key] = found
        return found
