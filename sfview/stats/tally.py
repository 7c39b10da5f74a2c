"""A section's bytes, part by part, and its functions and rows counted.

Every byte of the section is in exactly one part: the preamble and header, the auxiliary header, the FDE
array, the version 3 attribute blocks, the rows' start addresses (by FRE type), their info bytes, their
offsets (by offset size), FRE sub-section bytes no function's rows take (`unused`), and bytes outside the
sub-sections the header places (`outside`). Rows that several FDEs point at take their bytes once.

The counts say what the bytes hold: functions (PCMASK, flexible, signal), rows per function, and rows
that repeat the rules of the row before them (`redundant`: an unwinder gets the same rules without them,
the meaning `diff` compares). One pass through the bulk reader; each block of rows is tallied once.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import overload

from sfview.diff.shapes import plain
from sfview.errors import InputError
from sfview.sframe.bulk.reader import Block, Bulk
from sfview.sframe.model.records import OFFSET_SIZES, START_ADDR_SIZES
from sfview.sframe.model.section import Placed, Section

ROW_BINS = ((1, 1), (2, 2), (3, 3), (4, 7), (8, 15), (16, 63), (64, None))
"""Rows per function, binned: (least, most), None for no bound."""


@dataclass(slots=True)
class BlockTally:
    """What one block of rows holds, counted once per block (`Block.made`)."""

    rows: int = 0
    start_bytes: int = 0
    info_bytes: int = 0
    offset_rows: Counter[int] = field(default_factory=Counter)
    """Rows by the size of their offsets (bytes; 0 for a row with none)."""
    offset_bytes: Counter[int] = field(default_factory=Counter)
    redundant: int = 0
    redundant_bytes: int = 0
    length: int = 0


class Unreadable(Sequence[InputError]):
    """Why functions could not be counted, in FDE order, each error made again when asked for: the function's
    number held, and for rows the bulk reader read, where they stopped (said from there, as `check` and
    `dump` say it, `Section.rows_stop`); for a function the model read, the model's error made again. A
    section of damaged functions has one per FDE of 20 bytes, and the errors themselves, worded, held
    until the counts are written, weighed twenty times the section."""

    def __init__(self, section: Section) -> None:
        self.section = section
        self.indexes = array("Q")
        self._stops = array("q")
        """Per function: its FRE type (-1: the model's), row count, where its rows start, how many were read
        and where they stop."""

    def add(self, index: int, fre_type: int = -1, count: int = 0, pos: int = 0, read: int = 0, end: int = 0) -> None:
        """Function `index` could not be counted: its rows, read by the bulk reader, stop at `end` after `read`
        of its `count` (or, without an FRE type, the model says why)."""
        self.indexes.append(index)
        self._stops.extend((fre_type, count, pos, read, end))

    def __len__(self) -> int:
        return len(self.indexes)

    @overload
    def __getitem__(self, i: int) -> InputError: ...
    @overload
    def __getitem__(self, i: slice) -> list[InputError]: ...
    def __getitem__(self, i: int | slice) -> InputError | list[InputError]:
        if isinstance(i, slice):
            return [self._error(j) for j in range(*i.indices(len(self)))]
        return self._error(range(len(self))[i])

    def _error(self, i: int) -> InputError:
        """Why the `i`-th function could not be counted: its FDE, or its rows, cannot be read."""
        section, index = self.section, self.indexes[i]
        fre_type, count, pos, read, end = self._stops[5 * i : 5 * i + 5]
        if fre_type >= 0:
            return section.rows_stop(Placed(section, index, fre_type, count, pos), read, end)
        func = section.function(index)
        if func.error is None:
            _ = func.rows  # finds the rows, and why they stop
        return func.error or func.rows_error or InputError(f"fdes[{index}]: rows cut short")


@dataclass(slots=True)
class Tally:
    """Where one section's bytes go, and what its functions and rows are."""

    size: int
    version: int
    header: int
    """The preamble and the fixed header."""
    auxiliary: int
    fdes: int
    """The FDE array (in version 3, the index entries)."""
    unreadable: Unreadable
    """Why functions could not be counted (their bytes are `unused`)."""
    attributes: int = 0
    """Version 3: the attribute blocks in front of each function's rows."""
    start_rows: Counter[int] = field(default_factory=Counter)
    """Rows by FRE type (the size of their start address)."""
    start_bytes: Counter[int] = field(default_factory=Counter)
    info_bytes: int = 0
    offset_rows: Counter[int] = field(default_factory=Counter)
    offset_bytes: Counter[int] = field(default_factory=Counter)
    unused: int = 0
    """FRE sub-section bytes that no function's rows (or attribute block) take."""
    outside: int = 0
    """Bytes between the header and the FDE array, between the FDE array and the FRE sub-section, and after it."""
    functions: int = 0
    rows_per_function: Counter[int] = field(default_factory=Counter)
    pcmask: int = 0
    flexible: int = 0
    signal: int = 0
    shared: int = 0
    """Functions whose rows are another function's (the same bytes, pointed at twice)."""
    rows: int = 0
    """Rows written (shared ones once)."""
    redundant: int = 0
    redundant_bytes: int = 0

    @property
    def parts(self) -> dict[str, int]:
        """Every part of the section, by name; they add up to `size`."""
        parts = {"header": self.header, "auxiliary header": self.auxiliary, "FDEs": self.fdes}
        parts["attribute blocks"] = self.attributes
        for fre_type, width in START_ADDR_SIZES.items():
            parts[f"FRE start addresses of {width} bytes"] = self.start_bytes.get(fre_type, 0)
        parts["FRE info bytes"] = self.info_bytes
        for size in OFFSET_SIZES.values():
            parts[f"FRE offsets of {size} bytes"] = self.offset_bytes.get(size, 0)
        parts["unused"] = self.unused
        parts["outside the sub-sections"] = self.outside
        return parts

    def binned_rows(self) -> list[tuple[str, int]]:
        """Functions by how many rows they have, in `ROW_BINS`."""
        out = []
        for least, most in ROW_BINS:
            count = sum(
                n for rows, n in self.rows_per_function.items() if rows >= least and (most is None or rows <= most)
            )
            label = str(least) if least == most else f"{least}+" if most is None else f"{least}-{most}"
            out.append((label, count))
        none = self.rows_per_function.get(0, 0)
        return [("0", none), *out] if none else out


def tally(section: Section) -> Tally:
    """Count where `section`'s bytes go (see the module's doc)."""
    data = section.data
    fde_end = section.fde_start + section.num_fdes * section.fde_size
    fre_start, fre_end = section.fre_start, section.fre_end
    header_size = section.header_end - section.kaitai.header.auxhdr_len
    out = Tally(
        size=len(data),
        version=section.version,
        header=header_size,
        auxiliary=section.header_end - header_size,
        fdes=fde_end - section.fde_start,
        unreadable=Unreadable(section),
    )
    out.outside = (section.fde_start - section.header_end) + (fre_start - fde_end) + (len(data) - fre_end)
    attr_size = section.kaitai.attr_size if section.version >= 3 else 0
    bulk = Bulk(section)
    taken = _Taken(len(data))
    unreadable = out.unreadable
    last = -1  # the place last met that is taken
    for walked in bulk.functions():
        out.functions += 1
        if isinstance(walked, int):
            _model_function(section, walked, out, taken)
            continue
        _, _, _, pos, _, block = walked
        info = block.info
        out.pcmask += info.pcmask
        out.signal += info.signal
        out.rows_per_function[block.count] += 1
        place = pos - attr_size
        if place == last or place in taken:  # (the last place met first: functions sharing rows come together)
            out.shared += 1
            last = place
            continue
        counted = block.made if isinstance(block.made, BlockTally) else None
        if counted is None:
            counted = _block_tally(bulk, block)
            if block.shared:
                block.made = counted
        if not block.complete:
            unreadable.add(walked[0], info.fre_type, block.count, pos, counted.rows, pos + counted.length)
        taken.add(place, attr_size + counted.length)
        last = place
        out.attributes += attr_size
        _add(out, info.fre_type, counted)
    out.unused = (fre_end - fre_start) - taken.covered(fre_start, fre_end)
    return out


class _Taken:
    """Where each placed block (its attribute block, then its rows) starts, and its length: each place once.

    Two arrays hold the places and lengths in the order met: some 16 bytes a place, where a dict of them
    would hold a hundred (a section whose every function has rows of its own has a place per FDE of 20
    bytes). While places come in increasing order (the FDEs of a sound section), none was met before; from
    the first that does not, a bit per byte of the section says which are taken (a place outside it, where
    a damaged function's rows would start, in a set)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._bits: bytearray | None = None
        self._outside: set[int] = set()
        self.starts = array("q")
        self.lengths = array("q")
        self.most = -1
        """The greatest place added: a place past it was not."""

    def __contains__(self, place: int) -> bool:
        if place > self.most:
            return False
        if self._bits is None:
            self._bitmap()
        assert self._bits is not None
        if 0 <= place < self._size:
            return bool(self._bits[place >> 3] >> (place & 7) & 1)
        return place in self._outside

    def add(self, place: int, length: int) -> None:
        """`length` bytes from `place` are taken (a place not taken before)."""
        if place > self.most:
            self.most = place
            if self._bits is not None:
                self._mark(place)
        else:
            if self._bits is None:
                self._bitmap()
            self._mark(place)
        self.starts.append(place)
        self.lengths.append(length)

    def _bitmap(self) -> None:
        """The bits of the places added so far."""
        self._bits = bytearray((self._size + 7) >> 3)
        for before in self.starts:
            self._mark(before)

    def _mark(self, place: int) -> None:
        assert self._bits is not None
        if 0 <= place < self._size:
            self._bits[place >> 3] |= 1 << (place & 7)
        else:
            self._outside.add(place)

    def covered(self, low: int, high: int) -> int:
        """How many bytes of [low, high) the placed blocks take, each byte once."""
        starts, lengths = self.starts, self.lengths
        order = range(len(starts)) if self._bits is None else sorted(range(len(starts)), key=starts.__getitem__)
        covered = 0
        reach = low
        for i in order:
            start = starts[i]
            begin, end = max(start, reach, low), min(start + lengths[i], high)
            if end > begin:
                covered += end - begin
                reach = end
        return covered


def _add(out: Tally, fre_type: int, counted: BlockTally) -> None:
    out.rows += counted.rows
    out.start_rows[fre_type] += counted.rows
    out.start_bytes[fre_type] += counted.start_bytes
    out.info_bytes += counted.info_bytes
    out.offset_rows.update(counted.offset_rows)
    out.offset_bytes.update(counted.offset_bytes)
    out.redundant += counted.redundant
    out.redundant_bytes += counted.redundant_bytes


def _block_tally(bulk: Bulk, block: Block) -> BlockTally:
    """A block's rows counted: bytes by part, and those that repeat the rules of the row before."""
    width = START_ADDR_SIZES[block.info.fre_type]
    rows = block.rows if isinstance(block.rows, list) else list(block.rows)
    counted = BlockTally(rows=len(rows), length=block.length)
    before = None
    for _, key in rows:
        pattern = bulk.pattern(key)
        words = len(pattern.offsets)
        size = (len(key) - 1) // words if words else 0
        counted.start_bytes += width
        counted.info_bytes += 1
        counted.offset_rows[size] += 1
        counted.offset_bytes[size] += len(key) - 1
        rules = (plain(pattern.cfa), plain(pattern.fp), plain(pattern.ra), pattern.mangled_ra)
        if rules == before:
            counted.redundant += 1
            counted.redundant_bytes += width + len(key)
        before = rules
    return counted


def _model_function(section: Section, index: int, out: Tally, taken: _Taken) -> None:
    """A function the bulk reader leaves to the model (flexible, or unusual): counted from its rows' spans."""
    func = section.function(index)
    if func.error is not None:
        out.unreadable.add(index)
        return
    rows = list(func.rows)
    if func.rows_error is not None:
        out.unreadable.add(index)
    out.pcmask += func.pcmask
    out.flexible += func.flexible
    out.signal += func.signal
    out.rows_per_function[func.num_fres] += 1
    place = func.attr_offset if func.attr_span is not None else func.fres_start
    if place in taken:
        out.shared += 1
        return
    width = START_ADDR_SIZES.get(func.fre_type, 0)
    end = rows[-1].span.end if rows else func.fres_start
    taken.add(place, end - place)
    if func.attr_span is not None:
        out.attributes += len(func.attr_span)
    out.rows += len(rows)
    before = None
    for row in rows:
        words = len(row.span) - width - 1
        out.start_rows[func.fre_type] += 1
        out.start_bytes[func.fre_type] += width
        out.info_bytes += 1
        size = words // len(row.offsets) if row.offsets else 0
        out.offset_rows[size] += 1
        out.offset_bytes[size] += words
        rules = (plain(row.cfa), plain(row.fp), plain(row.ra), row.mangled_ra)
        if rules == before:
            out.redundant += 1
            out.redundant_bytes += len(row.span)
        before = rules
