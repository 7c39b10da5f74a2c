"""Whole-section passes without a Kaitai object per record.

A dump (and a check) visits every function and every row. Through Kaitai
that costs an object per FDE, per FRE and per info byte, and the cyclic GC
walks them all: many times readelf's time on a large section. Here the
records are read with `struct`, from the formats `sframe_layout.py` (generated
from `sframe.ksy` like the parsers) gives, so the format is still written
once. Rows repeat: a real section has a few hundred distinct FRE byte
patterns (info byte and offsets) among tens of thousands of rows, so each
pattern is decoded once, into the model's own interned rules, and callers
cache what they make of it by the same key.

Only the common case is done here. A function that is in any way unusual (a
version 3 flexible FDE, an undefined FRE type, FREs starting outside the FRE
sub-section) is reported as such, and the caller takes it through the Kaitai
path (`Section.function`). Rows that stop early (an undefined offset size, a
count past the FRE sub-section's end) are handed out as far as they go, and
the model says why they stop, so that every error message has one source.
"""

from __future__ import annotations

import struct
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any, NamedTuple

from sfview import ADDRESS_MASK
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe.model.records import FRE_LENGTHS, info_bits
from sfview.sframe.model.rules import Rule
from sfview.sframe.model.section import Section

BulkRow = tuple[int, bytes]
"""A row as the bulk reader hands it out: its start offset, and its pattern key (info byte and data words)."""

LISTED_ROWS = 4096
"""Rows of a function beyond this many are handed out as they are read, never held in a list (or shared)."""

KEPT_BYTES, KEPT_MIN = 256, 1024
"""The reader keeps (to hand out again) at most one block of rows, and one decoded row pattern, per so many
bytes of the section, and at least so many (`Bulk.kept_max`): a block kept, its key and what callers make of
it weigh about a kilobyte, and a section whose every function has rows of its own would otherwise have a
kept block per FDE of 20 bytes, and a pattern per row of 7."""


class Pattern(NamedTuple):
    """What an FRE's info byte and offsets say, whatever its start address."""

    cfa: Rule
    fp: Rule
    ra: Rule
    mangled_ra: bool
    offsets: tuple[int, ...]


class FdeInfo(NamedTuple):
    """An FDE info byte's bit fields, decoded once for each of the 256 values."""

    byte: int
    fre_type: int
    pcmask: bool
    pauth_key_b: bool
    signal: bool
    pc_type: int
    pauth_key: int


def _fde_info(byte: int) -> FdeInfo:
    pc_type = info_bits(byte, "fde_info", "pc_type")
    pauth_key = info_bits(byte, "fde_info", "pauth_key")
    return FdeInfo(
        byte,
        info_bits(byte, "fde_info", "fre_type"),
        pc_type == Sframe.PcType.pcmask,
        pauth_key == Sframe.PauthKey.key_b,
        bool(info_bits(byte, "fde_info", "signal_frame")),
        pc_type,
        pauth_key,
    )


FDE_INFOS = [_fde_info(byte) for byte in range(256)]


def kept_max(section: Section) -> int:
    """How many blocks of rows, and how many row patterns, a reader of `section` keeps (`KEPT_BYTES`)."""
    return max(KEPT_MIN, len(section.data) // KEPT_BYTES)


NO_ROWS = -(1 << 64)
"""`Block.last` of a block of no rows: before the start of any section, from any place."""


@dataclass(slots=True, weakref_slot=True)
class Block:
    """The rows of one or more functions, as the reader read them: what every function with these rows
    shares (its FDE info byte, its row count, the rows), so that a caller works each block out once.

    A function of more than `LISTED_ROWS` rows has a block of its own whose rows are an iterator to go
    through once; `length` and `complete` are known when it has been gone through."""

    info: FdeInfo
    count: int
    """The FDE's row count (`func_num_fres`)."""
    rows: list[BulkRow] | Iterator[BulkRow]
    length: int = 0
    """How many bytes the rows take."""
    complete: bool = True
    """All `count` rows were read; else the rows stop where one cannot be (`Function.rows_error` says why)."""
    last: int = NO_ROWS
    """Where the last row starts, from where the rows start: the same bytes elsewhere read as the same rows
    only while this row still starts inside the FRE sub-section, as the model reads them (`NO_ROWS`: anywhere)."""
    shared: bool = False
    """The reader keeps this block and hands it out again, to every later function whose rows are these bytes
    (set from the first function on) or that points at these rows (from the second): callers may keep what
    they make of it (`made`, or by its identity)."""
    read: bool = True
    """False for a function the caller asked not to read (`Bulk.functions`' `unread`): no rows, and `length`
    and `complete` unknown."""
    made: Any = None
    """What a caller makes of these rows, kept with them for the next function that has them (the dump's
    text template): one attribute to read, where a table of the caller's by the list's identity would be a
    call and a lookup for every function."""


BulkFunction = tuple[int, int, int, int, int, Block]
"""A function as the bulk reader hands it out: its index, start address, size, the section offset where its
rows start, its rep size, and its `Block` of rows (its info byte's fields, its row count, the rows). A plain
tuple, unpacked by its readers: the reader makes one for every function of the section, and a named tuple's
constructor is a Python call each."""


class Bulk:
    """Iterates a section's functions and rows with `struct`, for passes over the whole section."""

    def __init__(self, section: Section) -> None:
        self.section = section
        self.data = section.data
        order = "<" if section.little_endian else ">"
        version = section.version
        fde = layout.FDE[version]
        self._fde = struct.Struct(order + fde.format)
        self._fde_fields = {name: i for i, name in enumerate(fde.fields)}
        self._start_field = fde.fields["func_start"][0]
        self._attr = struct.Struct(order + layout.FDE_ATTR.format) if version >= 3 else None
        self._attr_fields = {name: i for i, name in enumerate(layout.FDE_ATTR.fields)}
        self._starts = {t: struct.Struct(order + c) for t, c in layout.FRE_START_ADDR.items()}
        self._offsets = {s: (order, c) for s, c in layout.FRE_OFFSET.items()}
        self._patterns: dict[bytes, Pattern] = {}
        self.kept_max = kept_max(section)
        """How many blocks of rows, and how many row patterns, the reader keeps; callers that keep what they
        make of each pattern keep as many."""

    # Functions ------------------------------------------------------------

    def functions(self, unread: Callable[[int, int], bool] | None = None) -> Iterator[BulkFunction | int]:
        """Every function in FDE order as a `BulkFunction`, or its index when it needs the Kaitai path.

        `unread(pos, count)`: asked before the rows of a function are read (not for rows already read for
        another); when it says so, the function is handed out with a `Block` whose rows are not read
        (`Block.read` False), for a caller that reads rows many functions share its own way.

        A block of rows is handed out again for every function whose rows are the same bytes, or that points
        at the same rows (`Block.shared`): most functions of a program share theirs with another.

        One loop for functions and rows, its lookups hoisted: on a big section
        the cost of a method call per function would be a large share of the pass.
        """
        section = self.section
        data = self.data
        fde_size, fde_start = section.fde_size, section.fde_start
        end = fde_start + section.num_fdes * fde_size
        fields = self._fde_fields
        i_start, i_size, i_off = fields["func_start"], fields["func_size"], fields["func_start_fre_off"]
        i_info, i_count = fields.get("func_info"), fields.get("func_num_fres")
        i_rep = fields.get("func_rep_size")
        base = section.address + (fde_start + self._start_field if section.start_pcrel else 0)
        step = fde_size if section.start_pcrel else 0
        relocated = section.relocated_starts
        fre_start, fre_end, limit = section.fre_start, section.fre_end, len(data)
        starts, infos = self._starts, FDE_INFOS
        v3 = self._attr is not None
        quick = not v3 and not relocated
        blocks: dict[tuple[int, int, bytes], Block] = {}  # by info byte, row count and the rows' bytes
        same_place: dict[tuple[int, int, int], Block] = {}  # by info byte, row count and where the rows start
        room = self.kept_max  # blocks still to be kept; past them, each is its own
        # With each record the one after it: where the next function's block starts, this one's end if in order
        # (after the last, a record that says the sub-section's end). Read as they are used, so that a million
        # functions never have a million tuples at once; each once (a second pass over the records, a step
        # behind, would add a tenth to the reading).
        records = self._fde.iter_unpack(memoryview(data)[fde_start:end])
        closing = [0] * len(fields)
        closing[i_off] = fre_end - fre_start
        after = next(records, None)
        block_end = fre_start + after[i_off] if after is not None else fre_end
        for index, following in enumerate(chain(records, (tuple(closing),)) if after is not None else ()):
            record, after = after, following
            pos, block_end = block_end, fre_start + after[i_off]  # where this function's rows start, and the next's
            if quick:  # most functions: rows already read for another, all of them (a slice past the end is empty)
                block = blocks.get((record[i_info], record[i_count], data[pos:block_end]))
                if block is not None and pos + block.last < fre_end:  # (an offset is unsigned: pos >= fre_start)
                    start = (base + index * step + record[i_start]) & ADDRESS_MASK
                    yield index, start, record[i_size], pos, record[i_rep] if i_rep is not None else 0, block
                    continue
            start = (base + index * step + record[i_start]) & ADDRESS_MASK
            if relocated:
                start = relocated.get(fde_start + index * fde_size + self._start_field, start) & ADDRESS_MASK
            if v3:
                found = self._v3_attr(fre_start + record[i_off])
                if found is None:
                    yield index
                    continue
                info, rep, count, pos = found
            else:
                info, count, pos = infos[record[i_info]], record[i_count], fre_start + record[i_off]
                rep = record[i_rep] if i_rep is not None else 0
            address = starts.get(info.fre_type)
            if address is None or (count and not fre_start <= pos <= fre_end):
                yield index
                continue
            # Functions repeat their row blocks byte for byte (every small leaf: one row, `sp+8`): a block
            # already read gives the same rows, when its reading stayed within the bytes of the key.
            # And FDEs that point at the same rows (with the same count) read the same rows.
            key = (info.byte, count, data[pos:block_end])
            known = blocks.get(key)
            if known is None or pos + known.last >= fre_end:  # rows past the sub-section's end: not these
                known = same_place.get((info.byte, count, pos))
            if known is not None:
                known.shared = True
                yield index, start, record[i_size], pos, rep, known
                continue
            if unread is not None and unread(pos, count):
                yield index, start, record[i_size], pos, rep, Block(info, count, [], complete=False, read=False)
                continue
            block = Block(info, count, [])
            if count > LISTED_ROWS:
                block.rows = self._walk(block, pos, address, fre_end, limit)  # read as it is written out
                yield index, start, record[i_size], pos, rep, block
                continue
            rows = block.rows = list(self._walk(block, pos, address, fre_end, limit))
            block.last = block.length - address.size - len(rows[-1][1]) if rows else NO_ROWS
            if not room:
                yield index, start, record[i_size], pos, rep, block
                continue
            room -= 1
            same_place[(info.byte, count, pos)] = block
            if block.complete and pos + block.length <= block_end:
                blocks[key] = block
                block.shared = True
            yield index, start, record[i_size], pos, rep, block

    def _walk(self, block: Block, pos: int, address: struct.Struct, fre_end: int, limit: int) -> Iterator[BulkRow]:
        """(start offset, pattern key) of the block's rows from `pos`; when done, `block.complete` and
        `block.length` say whether all were read and how many bytes they took (fewer rows when one cannot be
        read, where the model's `Rows` stops too, and says why). The block is held weakly: a block whose rows
        are this iterator, never gone through, would be a cycle with it, kept until the cyclic collector runs
        (which `compare`, `export` and `stats` pause while they work)."""
        return self._rows(weakref.ref(block), pos, address, fre_end, limit)

    def _rows(
        self, of: weakref.ref[Block], pos: int, address: struct.Struct, fre_end: int, limit: int
    ) -> Iterator[BulkRow]:
        """`_walk`'s rows, for the block `of` refers to."""
        block = of()
        if block is None:
            return
        count = block.count
        del block
        data, lengths = self.data, FRE_LENGTHS
        unpack, width = address.unpack_from, address.size
        first = pos
        read = 0
        try:
            for _ in range(count):
                info_at = pos + width
                # An undefined offset size has a length past any section: one test catches both.
                row_end = info_at + lengths[data[info_at]]
                if pos >= fre_end or row_end > limit:
                    break
                yield unpack(data, pos)[0], data[info_at:row_end]
                read += 1
                pos = row_end
        except IndexError:  # the start address is the section's last byte: no info byte
            pass
        block = of()
        if block is not None:
            block.complete = read == count
            block.length = pos - first

    def _v3_attr(self, attr_pos: int) -> tuple[FdeInfo, int, int, int] | None:
        """A version 3 function's info, rep size, row count and where its rows start, from its attribute
        block; None for one the Kaitai path reads."""
        assert self._attr is not None
        if attr_pos + self._attr.size > min(self.section.fre_end, len(self.data)):
            return None
        attr = self._attr.unpack_from(self.data, attr_pos)
        fields = self._attr_fields
        if info_bits(attr[fields["func_info2"]], "fde_info2", "fde_type") != Sframe.FdeType.default:
            return None  # flexible (or undefined) FDE types: the Kaitai path reads their words
        info = FDE_INFOS[attr[fields["func_info"]]]
        return info, attr[fields["func_rep_size"]], attr[fields["func_num_fres"]], attr_pos + self._attr.size

    def pattern(self, key: bytes) -> Pattern:
        """The rules a row's info byte and offsets give (decoded once per distinct pattern)."""
        found = self._patterns.get(key)
        if found is None:
            info = key[0]
            order, char = self._offsets[info_bits(info, "fre_info", "offset_size")]
            count = info_bits(info, "fre_info", "offset_count")
            offsets = struct.unpack_from(f"{order}{count}{char}", key, 1)
            cfa, fp, ra = self.section.default_rules(info_bits(info, "fre_info", "cfa_base_reg"), offsets)
            mangled = bool(info_bits(info, "fre_info", "mangled_ra"))
            found = Pattern(cfa, fp, ra, mangled, offsets)
            if len(self._patterns) < self.kept_max:
                self._patterns[key] = found
        return found
