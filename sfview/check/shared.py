"""Rows that several functions read: each decoded and judged once, whichever functions read it.

A function's rows are `func_num_fres` rows read one after another from where its
FDE points. Functions may point into rows another function reads (the same place,
or a row later): read afresh for each, a pool of rows costs functions times rows. Here
rows are read along a `Chain` (from one place, one row after another, as far as any
function asks), each row once, with its problems found once (by the caller's
`problems`, a tuple interned to a small id), so that a function is a range of
ordinals on a chain, and what the checks ask of a range (whether its starts
increase, which rows start past a size) is answered without walking it. A chain
whose next row is one in the middle of another chain (it began at bytes that are
not a row boundary there, and fell into step) goes on in that one, through a
link: a function is then a range on each chain it runs through.
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
    """Rows read one after another from one place: where each lies, its start, its problems (an id), and
    whether it fails to start after the row before it (`down`). The rows are `[head, len)` of the arrays:
    room kept before `head` lets a chain that runs into this one's first row be put in front of it.
    `judged`: a byte a row, set once the row's problems have been said (with the first function to read it)."""

    __slots__ = (
        "crossed",
        "down",
        "end",
        "head",
        "judged",
        "kinds",
        "link",
        "link_down",
        "named",
        "number",
        "positions",
        "readers",
        "starts",
        "stopped",
    )

    def __init__(self, number: int, pos: int) -> None:
        self.number = number
        """Its place in `SharedRows.chains`."""
        self.positions = array("I")
        self.starts = array("I")
        self.kinds = array("I")
        self.down = bytearray()
        self.judged = bytearray()
        self.head = 0
        self.end = pos
        """Where the row after the last read would start."""
        self.stopped = False
        """The row at `end` cannot be read (past the FRE sub-section or the section)."""
        self.link = -1
        """Where the rows go on, in the middle of another chain (-1: they do not): the row at `end`."""
        self.link_down = False
        """The row at `link` does not start after this chain's last row."""
        self.crossed = False
        """A function has read on through the link (the order of the two rows there has been said)."""
        self.readers = 0
        """How many functions read rows of this chain."""
        self.named: list[int] = []
        """The first `NAMED` of them (by index)."""

    def __len__(self) -> int:
        """The end of the rows (`head` is where they begin)."""
        return len(self.positions)

    def span(self, k: int) -> tuple[int, int]:
        """The bytes of row `k`."""
        positions = self.positions
        return positions[k], positions[k + 1] if k + 1 < len(positions) else self.end

    def ordered(self, first: int, stop: int) -> bool:
        """Whether every row of [first, stop) starts after the one before it (within the range)."""
        return stop - first < 2 or self.down.find(1, first + 1, stop) < 0

    def put_before(self, other: Chain) -> None:
        """Put `other`'s rows, which end where this chain's first row starts, in front of them."""
        rows, head = len(other) - other.head, self.head
        if head < rows:  # room for at least as many rows again: each row is moved a bounded number of times
            room = rows + len(self) - head
            for name in ("positions", "starts", "kinds"):
                setattr(self, name, array("I", bytes(4 * room)) + getattr(self, name)[head:])
            self.down = bytearray(room) + self.down[head:]
            self.judged = bytearray(room) + self.judged[head:]
            head = room
        at = head - rows
        self.positions[at:head] = other.positions[other.head :]
        self.starts[at:head] = other.starts[other.head :]
        self.kinds[at:head] = other.kinds[other.head :]
        self.down[at:head] = other.down[other.head :]
        self.judged[at:head] = other.judged[other.head :]
        self.down[head] = 1 if self.starts[head] <= self.starts[head - 1] else 0
        self.down[at] = 0
        self.head = at
        self._take_readers(other)

    def put_after(self, other: Chain) -> None:
        """Put `other`'s rows, which start where this chain ends, after them."""
        at = len(self)
        self.positions.extend(other.positions[other.head :])
        self.starts.extend(other.starts[other.head :])
        self.kinds.extend(other.kinds[other.head :])
        self.down += other.down[other.head :]
        self.judged += other.judged[other.head :]
        self.down[at] = 1 if self.starts[at] <= self.starts[at - 1] else 0
        self.end, self.stopped = other.end, other.stopped
        self.link, self.link_down, self.crossed = other.link, other.link_down, other.crossed
        self._take_readers(other)

    def _take_readers(self, other: Chain) -> None:
        self.readers += other.readers
        self.named = sorted(self.named + other.named)[:NAMED]
        other.readers, other.named = 0, []
        other.positions = other.starts = other.kinds = array("I")
        other.down = other.judged = bytearray()
        other.link = -1


class SharedRows:
    """The chains of one FRE type (its start address's width) over a section's FRE sub-section.

    `owner` maps a byte of the sub-section to the chain that read a row starting there (4 bytes a byte,
    made with the first chain), through `_merged` when that chain was put into another: a function
    pointing at a row already read continues its chain, a chain that runs into another's first row
    joins it (the shorter moved), and one that runs into the middle of another (rows read from bytes
    that do not start a row there, then in step) links to it: no row is read twice."""

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
        self._merged: list[int] = []
        """For each chain, the chain it was put into (itself while it stands alone)."""
        self._owner: array[int] | None = None

    def read(self, pos: int, count: int) -> list[tuple[Chain, int, int]]:
        """The `count` rows from `pos` (read as far as they can be): for each chain they run through, in
        order, the chain, the index of the first row on it and how many rows."""
        owner = self._owner
        if owner is None:
            owner = self._owner = array("i", [-1]) * max(0, min(self.fre_end, self.limit) - self.low)
        chain = self._chain_at(pos, owner)
        if chain is None:
            chain = Chain(len(self.chains), pos)
            self.chains.append(chain)
            self._merged.append(chain.number)
        runs: list[tuple[Chain, int, int]] = []
        while True:
            first = bisect_left(chain.positions, pos, chain.head)
            held = len(chain) - first
            if held >= count or chain.stopped:
                if min(held, count) > 0:
                    runs.append((chain, first, min(held, count)))
                return runs
            if chain.link >= 0:  # its rows go on in another chain
                if held > 0:
                    runs.append((chain, first, held))
                count -= held
                pos = chain.link
                linked = self._chain_at(pos, owner)
                assert linked is not None
                chain = linked
                continue
            joined = self._extend(chain, count - held, owner)
            if joined is not None:
                chain = joined

    def holds(self, pos: int) -> bool:
        """Whether a chain has read a row starting at `pos`."""
        owner, at = self._owner, pos - self.low
        return owner is not None and 0 <= at < len(owner) and owner[at] >= 0

    def _chain_at(self, pos: int, owner: array[int]) -> Chain | None:
        """The chain a row starting at `pos` was read into, if any."""
        at = pos - self.low
        number = owner[at] if 0 <= at < len(owner) else -1
        if number < 0:
            return None
        merged = self._merged
        while merged[number] != number:
            merged[number] = number = merged[merged[number]]
        return self.chains[number]

    def _extend(self, chain: Chain, missing: int, owner: array[int]) -> Chain | None:
        """Read up to `missing` rows onto the chain, stopping where the next cannot be read (as the bulk
        reader stops); when it runs into the first row of another chain, the two joined (returned); into
        another row of another chain, linked to it."""
        data, low, fre_end, limit, lengths = self.data, self.low, self.fre_end, self.limit, FRE_LENGTHS
        unpack, width = self.address.unpack_from, self.address.size
        positions, starts, kinds, down = chain.positions, chain.starts, chain.kinds, chain.down
        number = chain.number
        pos = chain.end
        for _ in range(missing):
            other = self._chain_at(pos, owner)
            if other is not None and other is not chain:
                chain.end = pos
                if other.positions[other.head] == pos:
                    return self._join(chain, other)
                at = bisect_left(other.positions, pos, other.head)
                if at - other.head < len(chain) - chain.head:  # the other's rows before are fewer: they go
                    self._split(other, at, owner)
                    return self._join(chain, other)
                chain.link = pos
                chain.link_down = len(positions) > chain.head and other.starts[at] <= starts[-1]
                return None
            info_at = pos + width
            if pos >= fre_end or info_at >= limit or info_at + lengths[data[info_at]] > limit:
                chain.stopped = True
                break
            row_end = info_at + lengths[data[info_at]]
            start = unpack(data, pos)[0]
            down.append(1 if len(positions) > chain.head and start <= starts[-1] else 0)
            positions.append(pos)
            starts.append(start)
            kinds.append(self._kind(data[info_at:row_end]))
            chain.judged.append(0)
            if 0 <= pos - low < len(owner) and owner[pos - low] < 0:
                owner[pos - low] = number
            pos = row_end
        chain.end = pos
        return None

    def _split(self, chain: Chain, at: int, owner: array[int]) -> None:
        """Make the rows of `chain` before row `at` a chain of their own, linked to row `at`, so that the rows
        of a chain that ran into row `at`, more than these, go in front of it instead: every chain a function
        runs through then has at least as many rows before it as the last had (a function runs through
        a number of chains bounded by the square root of the rows, not by the rows). Their readers go
        with them (some of them may have read only the rows after)."""
        head, low = chain.head, self.low
        prefix = Chain(len(self.chains), chain.positions[head])
        self.chains.append(prefix)
        self._merged.append(prefix.number)
        prefix.positions, prefix.starts, prefix.kinds = (
            chain.positions[head:at],
            chain.starts[head:at],
            chain.kinds[head:at],
        )
        prefix.down, prefix.judged = chain.down[head:at], chain.judged[head:at]
        prefix.end = prefix.link = chain.positions[at]
        prefix.link_down, prefix.crossed = chain.down[at] == 1, chain.judged[at] == 1
        prefix.readers, prefix.named = chain.readers, list(chain.named)
        for pos in prefix.positions:
            if 0 <= pos - low < len(owner):
                owner[pos - low] = prefix.number
        chain.head = at
        chain.down[at] = 0

    def _join(self, before: Chain, after: Chain) -> Chain:
        """One chain of `before`'s rows then `after`'s, the shorter moved into the longer."""
        if len(before) - before.head <= len(after) - after.head:
            after.put_before(before)
            kept, gone = after, before
        else:
            before.put_after(after)
            kept, gone = before, after
        self._merged[gone.number] = kept.number
        return kept

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
