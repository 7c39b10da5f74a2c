"""Whole-section passes without a Kaitai object per record.

A dump (and a check) visits every function and every row. Through Kaitai
that costs an object per FDE, per FRE and per info byte, and the cyclic GC
walks them all: 25 to 50 times readelf's time on 40,000 functions. Here the
records are read with `struct`, from the formats `sframe_layout.py` (generated
from `sframe.ksy` like the parsers) gives, so the format is still written
once. Rows repeat: a real section has a few hundred distinct FRE byte
patterns (info byte and offsets) among 90,000 rows, so each pattern is
decoded once, into the model's own interned rules, and callers cache what
they make of it by the same key.

Only the common case is done here. A function that is in any way unusual (a
version 3 flexible FDE, an undefined FRE type, FREs starting outside the FRE
sub-section) is reported as such, and the caller takes it through the Kaitai
path (`Section.function`). Rows that stop early (an undefined offset size, a
count past the FRE sub-section's end) are handed out as far as they go, and
the model says why they stop, so that every error message has one source.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any, NamedTuple

from sfview.errors import InputError
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe.model.records import FRE_LENGTHS, OFFSET_SIZES, START_ADDR_SIZES, info_bits
from sfview.sframe.model.rules import Rule
from sfview.sframe.model.section import ADDRESS_MASK, Function, Section, Span
from sfview.sframe.model.section import Row as ModelRow

Row = tuple[int, bytes]
"""A row as the bulk reader hands it out: its start offset, and its pattern key (info byte and offsets)."""

LISTED_ROWS = 4096
"""Rows of a function beyond this many are handed out as they are read, never held in a list (or shared)."""


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


@dataclass(slots=True)
class FastFunction:
    """The facts of one FDE a whole-section pass needs (see `Function` for their meaning)."""

    index: int
    start_address: int
    size: int
    info: FdeInfo
    rep_size: int
    num_fres: int
    fres_start: int
    complete: bool = True
    """All `num_fres` rows were read; else the rows stop where one cannot be (`Function.rows_error` says why).
    Known once the rows have been gone through."""
    rows_end: int = 0
    shared: bool = False
    """The rows list is kept by the reader and handed out again for every function whose row bytes are
    the same: callers may keep what they make of it by its identity."""
    """Section offset where the rows read end (known, like `complete`, once they have been gone through)."""


@dataclass(slots=True)
class Block:
    """A block of rows the reader read once, all of them, and hands out again for every function whose FDE
    has the same info byte and row count and whose row bytes are the same (`Bare`)."""

    info: FdeInfo
    count: int
    rows: list[Row]
    length: int
    """How many bytes the rows take."""
    complete: bool
    """All `count` rows were read (only such a block is handed out as `Bare`)."""
    last: int
    """Where the last row starts, from where the rows start: the same bytes elsewhere read as the same rows
    only while this row still starts inside the FRE sub-section, as the model reads them (`NO_ROWS`: anywhere)."""
    made: Any = None
    """What a caller makes of these rows, kept with them for the next function that has them (the dump's
    text template): one attribute to read, where a table of the caller's by the list's identity was a
    call and a lookup for every function."""


NO_ROWS = -(1 << 64)
"""`Block.last` of a block of no rows: before the start of any section, from any place."""


Bare = tuple[int, int, int, int, int, Block]
"""A function whose rows are a block the reader keeps, all read, as `Bulk.functions(bare=True)` gives it:
its index, start address, size, where its rows start, its rep size, and the block. `bare_function` makes
its `FastFunction`."""


def bare_function(bare: Bare) -> FastFunction:
    """The `FastFunction` of a `Bare` function (`shared` and `complete`)."""
    index, start, size, pos, rep, block = bare
    return FastFunction(index, start, size, block.info, rep, block.count, pos, True, pos + block.length, True)


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

    # Functions ------------------------------------------------------------

    def functions(self, bare: bool = False) -> Iterator[tuple[FastFunction, list[Row] | Iterator[Row]] | Bare | int]:
        """Every function in FDE order with its rows as (start offset, pattern key), or its
        index when it needs the Kaitai path. Rows come as a list (the same list for functions
        whose row bytes repeat), or for a function of more than `LISTED_ROWS` as an iterator
        to go through once.

        `bare`: a function whose rows are a block the reader keeps, all read (`shared` and
        `complete`: most functions of a program) comes as a `Bare` tuple, not a `FastFunction`
        and its rows; making the record was a third of a million-function dump's reading.

        One loop for functions and rows, its lookups hoisted: on a big section
        the cost of a method call per function would be a third of the pass.
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
        quick = bare and not v3 and not relocated
        blocks: dict[tuple[int, int, bytes], Block] = {}  # by info byte, row count and the rows' bytes
        same_place: dict[tuple[int, int, int], Block] = {}  # by info byte, row count and where the rows start
        # With each record the one after it: where the next function's block starts, this one's end if in order
        # (after the last, a record that says the sub-section's end). Read as they are used, so that a million
        # functions never have a million tuples at once; each once (a second pass over the records, a step
        # behind, was a tenth of the reading).
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
                if bare and known.complete:
                    yield index, start, record[i_size], pos, rep, known
                    continue
                rows_end = pos + known.length
                func = FastFunction(index, start, record[i_size], info, rep, count, pos, known.complete, rows_end, True)
                yield func, known.rows
                continue
            func = FastFunction(index, start, record[i_size], info, rep, count, pos)
            if count > LISTED_ROWS:
                yield func, self._walk(func, pos, address, fre_end, limit)  # read as it is written out
                continue
            rows = list(self._walk(func, pos, address, fre_end, limit))
            length = func.rows_end - pos
            last = length - address.size - len(rows[-1][1]) if rows else NO_ROWS
            entry = same_place[(info.byte, count, pos)] = Block(info, count, rows, length, func.complete, last)
            if func.complete and func.rows_end <= block_end:
                blocks[key] = entry
                func.shared = True
                if bare:
                    yield index, start, func.size, pos, rep, entry
                    continue
            yield func, rows

    def _walk(self, func: FastFunction, pos: int, address: struct.Struct, fre_end: int, limit: int) -> Iterator[Row]:
        """(start offset, pattern key) of the function's rows from `pos`; when done, `func.complete` and
        `func.rows_end` say whether all were read and where they ended (fewer rows when one cannot be read,
        where the model's `Rows` stops too, and says why)."""
        data, lengths = self.data, FRE_LENGTHS
        unpack, width = address.unpack_from, address.size
        read = 0
        try:
            for _ in range(func.num_fres):
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
        func.complete = read == func.num_fres
        func.rows_end = pos

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
            found = self._patterns[key] = Pattern(cfa, fp, ra, mangled, offsets)
        return found


@dataclass(slots=True)
class RowsFunction:
    """A function as the engines that go through every row (compare, export) see it: what `Function`
    says of it, its rows the model's `Row`s, made from the bulk reader's patterns rather than Kaitai
    objects (a fifth of the time, on 40,000 functions)."""

    section: Section
    index: int
    start_address: int
    size: int
    span: Span
    rows: list[ModelRow]
    pcmask: bool = False
    """PCINC only: a PCMASK function (a PLT) is the model's, which knows the block its rows repeat every."""
    block_size: int = 0
    error: None = None
    rows_error: None = None

    row_for = Function.row_for


def functions_with_rows(section: Section) -> list[RowsFunction | Function]:
    """Every function in FDE order, rows decoded (`iter_functions_with_rows`, all at once: compare pairs them)."""
    return list(iter_functions_with_rows(section))


def iter_functions_with_rows(section: Section) -> Iterator[RowsFunction | Function]:
    """Every function in FDE order, rows decoded: through the bulk reader, or (a function it leaves to
    the Kaitai path, or whose rows stop short, or a PCMASK one) the model's `Function`, errors and all.

    Made one at a time, so that a writer that drops each function once written (export) holds one: the
    model keeps every function it decodes, 85 bytes of memory per section byte for 10,000 functions."""
    return Shapes(section).with_rows()


class Shaped(NamedTuple):
    """A function the bulk reader read whole: its facts, its rows as (start offset, pattern key), and its
    shape, the same for every function whose rows are the same bytes: what is worked out from one
    function's rows relative to its start (an export's records, a comparison) holds for all of them."""

    func: FastFunction
    rows: list[Row]
    shape: tuple[int, bytes]
    """The FRE type and the rows' bytes."""


class Shapes:
    """A section's functions in FDE order for the engines that go through every row (compare, export):
    `Shaped` for each the bulk reader reads whole (PCMASK ones too: their rows repeat every block, which
    the model's `Function` knows), the model's `Function` for the others (those the bulk reader leaves to
    the Kaitai path, or whose rows stop short), errors and all.

    A caller builds a function's model rows (`rows_function`) only when it needs them: most functions of a
    program share their shape with another, and what was worked out for that one holds."""

    def __init__(self, section: Section) -> None:
        self.section = section
        self.bulk = Bulk(section)
        self._made: dict[bytes, tuple] = {}
        self._left: list[Function] = []
        """The functions handed out as the model's because the bulk reader could not read them whole."""

    def __iter__(self) -> Iterator[Shaped | Function]:
        data = self.section.data
        for item in self.bulk.functions():
            if isinstance(item, int):
                yield self._model(item)
                continue
            func, rows = item
            rows = rows if isinstance(rows, list) else list(rows)
            if not func.complete:  # the model says why rows stop
                yield self._model(func.index)
                continue
            yield Shaped(func, rows, (func.info.fre_type, data[func.fres_start : func.rows_end]))

    def with_rows(self) -> Iterator[RowsFunction | Function]:
        """Every function with its model rows (`iter_functions_with_rows`)."""
        for item in self:
            yield self.model_function(item) if isinstance(item, Shaped) else item

    def model_function(self, shaped: Shaped) -> RowsFunction | Function:
        """A function read whole with its model rows: the model's own for a PCMASK one (which knows the
        block its rows repeat every), else made from the patterns."""
        return self.section.function(shaped.func.index) if shaped.func.info.pcmask else self.rows_function(shaped)

    def _model(self, index: int) -> Function:
        func = self.section.function(index)
        self._left.append(func)  # the section keeps it too
        return func

    def errors(self) -> list[InputError]:
        """Why the functions handed out so far as the model's (not PCMASK ones read whole) cannot be
        decoded, or their rows stop short: what the engines leave out."""
        errors = []
        for func in self._left:
            if func.error is None:
                _ = func.rows  # finds the rows, and why they stop
            errors += [e for e in (func.error, func.rows_error) if e is not None]
        return errors

    def rows_function(self, shaped: Shaped) -> RowsFunction:
        """The function with its rows as the model's `Row`s (made from the patterns, not Kaitai objects)."""
        func, made, bulk, section = shaped.func, self._made, self.bulk, self.section
        start, width = func.start_address, START_ADDR_SIZES[func.info.fre_type]
        pos = func.fres_start
        model_rows = []
        for index, (offset, key) in enumerate(shaped.rows):
            facts = made.get(key)
            if facts is None:
                facts = made[key] = _row_facts(bulk, key)
            end = pos + width + len(key)
            model_rows.append(ModelRow(index, offset, (start + offset) & ADDRESS_MASK, Span(pos, end), *facts))
            pos = end
        place = section.fde_start + func.index * section.fde_size
        return RowsFunction(section, func.index, start, func.size, Span(place, place + section.fde_size), model_rows)


def _row_facts(bulk: Bulk, key: bytes) -> tuple:
    """A row's fields after its place (`Row`'s info, base_reg, offset_size, offsets, mangled_ra, cfa, fp, ra)."""
    info = key[0]
    pattern = bulk.pattern(key)
    return (
        info,
        info_bits(info, "fre_info", "cfa_base_reg"),
        OFFSET_SIZES[info_bits(info, "fre_info", "offset_size")],
        pattern.offsets,
        pattern.mangled_ra,
        pattern.cfa,
        pattern.fp,
        pattern.ra,
    )
