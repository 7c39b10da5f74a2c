"""What each libsframe release does with a section: `sframe_decode`, then `sframe_find_fre` and the getters.

A model of binutils' own code, step by step in its order, driven by the
per-release facts of `libsframe_releases.py`: which versions and flags the
header check lets through, where the FDEs and FREs are taken from, how the
byte-swapping walk (`flip_sframe`) checks a section in the other byte order,
and how a row is decoded (`libsframe_lookups.py` walks a function's rows for
every PC at once; `libsframe_verdict.py` gives the verdict). It says where the real library
refuses (with the error a caller gets), where it reads or writes past a
buffer (a crash: SIGSEGV, or an `assert` or a division by zero), and which
row a lookup returns. Bytes are read as the library reads them, so that a
section the format calls broken is judged by what the code does with it, not
by what the specification says; `check` keeps saying the latter.

The tests (tests/oracles/test_libsframe.py) run each release's own `libsframe.so`
on every fixture and thousands of mutants, with every allocation ending at
an unreadable page, and compare each answer with this model's.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import struct
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sfview import ADDRESS_MASK
from sfview.consumers.libsframe_releases import CODES, Release, error_text
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe.model.records import START_ADDR_SIZES, info_bits

HEADER_AT = layout.PREAMBLE.size
FIXED_HEADER = layout.PREAMBLE.size + layout.HEADER.size
"""`sizeof (sframe_header)`: the preamble and the header's fixed fields."""
MAGIC = int(Sframe.Magic.sframe)
SWAPPED_MAGIC = int.from_bytes(MAGIC.to_bytes(2, "little"), "big")
S390X = int(Sframe.AbiArch.s390x_endian_big)
FLEXIBLE = int(Sframe.FdeType.flexible)
FDE_ATTR = layout.FDE_ATTR
U32 = 0xFFFFFFFF


FRE_TYPES = [info_bits(info, "fde_info", "fre_type") for info in range(256)]
PCMASK = [bool(info_bits(info, "fde_info", "pc_type")) for info in range(256)]
COUNTS = [info_bits(info, "fre_info", "offset_count") for info in range(256)]
SIZES = [info_bits(info, "fre_info", "offset_size") for info in range(256)]
"""The FDE and FRE info bytes' fields, for each of their 256 values (a lookup reads them for every row)."""


ROWS_PER_BYTE = 2
"""The most rows a verdict walks per byte of the section: functions whose blocks of rows overlap make the
library walk the same rows again for each (the byte-swapping walk, the lookups); past the bound, the verdict
says where it stopped."""
ROWS_KEPT = 1 << 12
"""The most decoded rows a decoder keeps by position (`decode_fre`): a function's lookups decode its rows
again while it is judged; kept for every row of the section, they would hold many times its bytes."""


def row_bound(data: bytes | bytearray) -> int:
    """The most rows (or row tests) a verdict on `data` walks."""
    return ROWS_PER_BYTE * len(data) + 4096


class Unjudged(Exception):
    """The walk would take more rows than `row_bound`: what the library does there is not said."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


class Crash(Exception):
    """The library reads or writes past a buffer, fails an `assert`, or divides by zero."""

    def __init__(self, rule: str, offset: int | None = None) -> None:
        super().__init__(rule)
        self.rule = rule
        self.offset = offset


class Refusal(Exception):
    """`sframe_decode` returns NULL and sets `*errp`."""

    def __init__(self, error: str, rule: str, offset: int | None = None) -> None:
        super().__init__(rule)
        self.error = error
        self.rule = rule
        self.offset = offset


class Miss(Exception):
    """`sframe_find_fre` returns SFRAME_ERR (its error code stays inside: a caller sees only -1)."""

    def __init__(self, error: str, rule: str) -> None:
        super().__init__(rule)
        self.error = error
        self.rule = rule


Failure = TypeVar("Failure", Miss, Crash)


def bare(failure: Failure) -> Failure:
    """`failure` without its traceback and context: an answer kept (walks, runs given again) must not keep
    alive the frames that raised it (each holds its locals)."""
    failure.__context__ = None
    return failure.with_traceback(None)


def _int32(value: int) -> int:
    value &= U32
    return value - (1 << 32) if value & 0x80000000 else value


@functools.cache
def _struct(fmt: str) -> struct.Struct:
    return struct.Struct(fmt)


SECTION = "the section"
"""The caller's section, as a `Buffer` names it."""


class Buffer:
    """Bytes as the library holds them (the caller's section, its own copy or table), read in the host's
    byte order; a read or write past the end is a crash, as it is with the tests' guarded allocator."""

    def __init__(self, data: bytes | bytearray, order: str, what: str, base: int = 0) -> None:
        self.data = data
        self.order = order
        self.what = what
        self.base = base
        """The section offset of byte 0, for messages (the caller's section: 0)."""

    def _reach(self, at: int, size: int, rule: str) -> None:
        if size and (at < 0 or at + size > len(self.data)):
            if self.what == SECTION and at >= 0:  # what follows the caller's section decides
                over = at + size - len(self.data)
                raise Crash(
                    f"{rule}: reads {size} bytes at {at:#x}, {over} past the section's end: a fault where nothing "
                    "readable follows the section; where memory does (a section inside a loaded file), it reads "
                    "those bytes and goes on"
                )
            raise Crash(f"{rule}: reads {size} bytes at {at:#x}, past the {len(self.data)} bytes of {self.what}")

    def read(self, at: int, char: str, rule: str) -> int:
        record = _struct(self.order + char)
        if at < 0 or at + record.size > len(self.data):  # (checked inline: the most frequent call of a verdict)
            self._reach(at, record.size, rule)
        return record.unpack_from(self.data, at)[0]

    def take(self, at: int, size: int, rule: str) -> bytes:
        self._reach(at, size, rule)
        return bytes(self.data[at : at + size]) if size else b""

    def swap(self, at: int, size: int, rule: str) -> None:
        """Reverse `size` bytes in place (`swap_thing`)."""
        self._reach(at, size, rule)
        assert isinstance(self.data, bytearray)
        self.data[at : at + size] = self.data[at : at + size][::-1]


@dataclass(frozen=True)
class Header:
    """`sframe_header` as the library holds it: the preamble's version and flags, then the header's fields."""

    version: int
    flags: int
    abi: int
    fixed_fp: int
    fixed_ra: int
    auxhdr_len: int
    num_fdes: int
    num_fres: int
    fre_len: int
    fdeoff: int
    freoff: int

    @property
    def size(self) -> int:
        """`SFRAME_V1_HDR_SIZE`: the header and its auxiliary header."""
        return FIXED_HEADER + self.auxhdr_len


def _header(buf: Buffer) -> Header:
    values = struct.unpack_from(buf.order + layout.PREAMBLE.format + layout.HEADER.format, buf.data, 0)
    _, version, flags, abi, fixed_fp, fixed_ra, aux, num_fdes, num_fres, fre_len, fdeoff, freoff = values
    return Header(version, flags, abi, fixed_fp, fixed_ra, aux, num_fdes, num_fres, fre_len, fdeoff, freoff)


def _header_fault(rel: Release, buf: Buffer) -> tuple[str, int] | None:
    """`sframe_header_sanity_check_p`: why it fails (and at which byte), or None."""
    magic = buf.read(0, "H", "header")
    h = _header(buf)
    if magic != MAGIC:
        return "sframe_header_sanity_check_p: bad magic", 0
    if h.version not in rel.versions:
        known = ", ".join(map(str, sorted(rel.versions)))
        return f"sframe_header_sanity_check_p: version {h.version} (this release reads {known})", 2
    allowed = rel.flags[h.version]
    if h.flags & ~allowed:
        return f"sframe_header_sanity_check_p: flags {h.flags:#x} outside {allowed:#x}", 3
    if h.fdeoff > h.freoff:
        return f"sframe_header_sanity_check_p: sfh_fdeoff {h.fdeoff:#x} > sfh_freoff {h.freoff:#x}", HEADER_AT + 16
    return None


@dataclass(frozen=True)
class Fde:
    """One `sframe_func_desc_entry` (2.40, 2.44) or `sframe_func_desc_entry_int` (2.47), as the library holds it."""

    start: int
    size: int
    fre_off: int
    num_fres: int
    info: int
    info2: int
    rep_size: int

    @property
    def fre_type(self) -> int:
        return FRE_TYPES[self.info]

    @property
    def pcmask(self) -> bool:
        return PCMASK[self.info]


PACKED_CHUNK = 1 << 12


def packed(values: Iterable[int]) -> Sequence[int]:
    """`values` as an array of int64 (8 bytes each, not an object each), or a list where one does not fit;
    taken a few thousand at a time (a list of every value first would hold an object each)."""
    out = array("q")
    rest = iter(values)
    while chunk := list(itertools.islice(rest, PACKED_CHUNK)):
        try:
            out.extend(array("q", chunk))
        except OverflowError:
            return [*out, *chunk, *rest]
    return out


class FdeTable(Sequence[Fde]):
    """FDEs held as columns of numbers, each `Fde` made when asked for: a table of a million FDEs costs
    bytes per FDE, not objects."""

    def __init__(self, fdes: Iterable[tuple[int, int, int, int, int, int, int]] = ()) -> None:
        self._starts = array("q")
        self._sizes, self._fre_offs, self._counts = array("I"), array("I"), array("I")
        """32-bit fields in every version: 4 bytes each."""
        self._bytes = array("B")
        """info, info2 and rep_size, three a FDE."""
        for fde in fdes:
            self.append(*fde)

    def append(self, start: int, size: int, fre_off: int, num_fres: int, info: int, info2: int, rep: int) -> None:
        self._starts.append(start)
        self._sizes.append(size)
        self._fre_offs.append(fre_off)
        self._counts.append(num_fres)
        self._bytes.extend((info, info2, rep))

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, index: int) -> Fde:  # type: ignore[override]
        if index < 0:
            index += len(self)
        info, info2, rep = self._bytes[3 * index : 3 * index + 3]
        return Fde(
            self._starts[index], self._sizes[index], self._fre_offs[index], self._counts[index], info, info2, rep
        )

    def __iter__(self) -> Iterator[Fde]:
        return map(self.__getitem__, range(len(self)))


@dataclass(frozen=True, slots=True)
class Fre:
    """`sframe_frame_row_entry` after `sframe_decode_fre`: the start, the data words' room, the info byte."""

    start: int
    words: bytes
    info: int


class Decoder:
    """What `sframe_decode` returned: the header, the FDE table, the copy of the FRE bytes."""

    def __init__(self, rel: Release, header: Header, fdes: Buffer | FdeTable, fres: Buffer) -> None:
        self.rel = rel
        self.header = header
        self.fres = fres
        self.fde_size = layout.FDE[rel.fde_layouts[header.version]].size
        self._copied = fdes if isinstance(fdes, Buffer) else None
        self._table = fdes if isinstance(fdes, FdeTable) else self._whole_entries()
        self._starts: Sequence[int] | None = None
        self._ordered: bool | None = None
        self.rows: dict[tuple[int, int], tuple[Fre, int]] = {}
        self.older_rows: dict[tuple[int, int], tuple[Fre, int]] = {}
        """Rows decoded lately, by position and FRE type (`decode_fre`): the newest, then those before."""
        self._failures: dict[tuple[type, str, str | int | None], Miss | Crash] = {}

    def kept(self, failure: Miss | Crash) -> Miss | Crash:
        """The one object for `failure`'s answer (its kind, rule and error or offset), without a traceback:
        the answers kept (walks, runs given again) hold one failure per distinct answer, not one per
        function, and not the frames that raised it."""
        detail = failure.error if isinstance(failure, Miss) else failure.offset
        key = (type(failure), failure.rule, detail)
        known = self._failures.get(key)
        if known is None:
            known = self._failures[key] = bare(failure)
        return known

    def _whole_entries(self) -> FdeTable:
        """The copied FDE array's entries that it holds whole (all of them, unless num_fdes * size wrapped)."""
        copied = self._copied
        assert copied is not None
        record = layout.FDE[self.rel.fde_layouts[self.header.version]]
        whole = min(self.header.num_fdes, len(copied.data) // record.size)
        names = list(record.fields)
        out = FdeTable()
        for values in struct.iter_unpack(copied.order + record.format, copied.data[: whole * record.size]):
            field = dict(zip(names, values, strict=True))
            rep = field.get("func_rep_size", 0)
            out.append(
                field["func_start"],
                field["func_size"],
                field["func_start_fre_off"],
                field["func_num_fres"],
                field["func_info"],
                0,
                rep,
            )
        return out

    def _field(self, index: int, name: str) -> int:
        """One field of an FDE the copied array does not hold whole: read alone, as C reads `fdp[mid].field`."""
        copied = self._copied
        assert copied is not None
        offset, char = layout.FDE[self.rel.fde_layouts[self.header.version]].fields[name]
        return copied.read(index * self.fde_size + offset, char, f"sframe_find_fre: FDE {index} of the copied array")

    def fde(self, index: int) -> Fde:
        """The FDE at `index` (past the copied array's end, a crash)."""
        if index < len(self._table):
            return self._table[index]
        names = ("func_start", "func_size", "func_start_fre_off", "func_num_fres", "func_info")
        values = [self._field(index, name) for name in names]
        rep = self._field(index, "func_rep_size") if self.rel.fde_layouts[self.header.version] >= 2 else 0
        return Fde(*values, 0, rep)

    def start(self, index: int) -> int:
        """Where the function at `index` starts, in the PCs `sframe_find_fre` takes."""
        if index >= len(self._table):
            return self._field(index, "func_start")
        if self._starts is None:
            starts = self._table._starts
            if self.rel.field_relative_starts:  # sframe_decoder_get_offsetof_fde_start_addr ignores sfh_fdeoff
                size = self.header.size
                starts = packed(s + _int32(size + i * self.fde_size) for i, s in enumerate(starts))
            self._starts = starts
        return self._starts[index]

    def ordered(self) -> bool:
        """Whether every FDE is held whole and the starts strictly increase (for 2.47: the functions do not
        overlap either). Then the binary search's answer is the one a bisection gives, and the search
        (`libsframe_lookups`) takes that shortcut; the tests hold it to the library on sorted and unsorted
        sections alike."""
        if self._ordered is None:
            count = self.header.num_fdes if self.rel.exact_search else _int32(self.header.num_fdes)
            whole = count == len(self._table)
            sizes = self._table._sizes if self.rel.exact_search else None
            self._ordered = (
                whole
                and len(self._table) > 0
                and all(
                    self.start(i) < self.start(i + 1)
                    and self.start(i) + (sizes[i] if sizes is not None else 0) <= self.start(i + 1)
                    for i in range(len(self._table) - 1)
                )
            )
        return self._ordered

    def last_starting_by(self, pc: int) -> int:
        """The last FDE starting at or before `pc` (-1: none), when `ordered`."""
        assert self._starts is not None
        return bisect.bisect_right(self._starts, pc) - 1


# sframe_decode -------------------------------------------------------------------------


def decode(rel: Release, data: bytes, order: str = "<") -> Decoder:
    """`sframe_decode` on a host of byte order `order`; raises Refusal or Crash."""
    if not data:
        raise Refusal("SFRAME_ERR_INVAL", "sframe_decode: an empty buffer")
    if len(data) < FIXED_HEADER:
        raise Refusal("SFRAME_ERR_BUF_INVAL", f"sframe_decode: {len(data)} bytes, less than sizeof (sframe_header)")
    magic = struct.unpack_from(order + "H", data, 0)[0]
    if magic == SWAPPED_MAGIC:
        buf = Buffer(bytearray(data), order, "the byte-swapped copy")
        (_flip_checked if rel.checked_walk else _flip)(rel, buf)
    elif magic == MAGIC:
        buf = Buffer(data, order, SECTION)
    else:
        raise Refusal("SFRAME_ERR_BUF_INVAL", f"sframe_decode: magic {magic:#06x}", 0)
    fault = _header_fault(rel, buf)
    if fault is not None:
        raise Refusal(rel.header_error, *fault)
    return (_read_tables if rel.uses_offsets else _copy_tables)(rel, buf)


def _copy_tables(rel: Release, buf: Buffer) -> Decoder:
    """2.40, 2.44: memcpy num_fdes FDEs from the header's end, then sfh_fre_len bytes right after them."""
    h = _header(buf)
    fde_size = layout.FDE[rel.fde_layouts[h.version]].size
    fidx = _int32(h.num_fdes * fde_size)  # `int fidx_size`
    if fidx < 0:
        raise Refusal(
            "SFRAME_ERR_NOMEM", f"sframe_decode: malloc of num_fdes * {fde_size} = {fidx} bytes (an int) fails"
        )
    fdes = buf.take(h.size, fidx, "sframe_decode: memcpy of num_fdes FDEs from the header's end")
    fres = buf.take(h.size + fidx, h.fre_len, "sframe_decode: memcpy of sfh_fre_len bytes after the FDEs")
    table = Buffer(fdes, buf.order, "the copied FDE array", h.size)
    return Decoder(rel, h, table, Buffer(fres, buf.order, "the copied FRE bytes", h.size + fidx))


def _read_tables(rel: Release, buf: Buffer) -> Decoder:
    """2.47: `sframe_fde_tbl_init` reads each FDE at sfh_fdeoff (and a version 3 one's attributes at its
    rows), then sfh_fre_len bytes are copied from sfh_freoff."""
    h = _header(buf)
    if h.version not in rel.fde_layouts:
        raise Refusal("SFRAME_ERR_BUF_INVAL", f"sframe_fde_tbl_init: no reader for version {h.version}", 2)
    fdes_at, fres_at = h.size + h.fdeoff, h.size + h.freoff
    fields = layout.FDE[h.version].fields
    size = layout.FDE[h.version].size
    table = FdeTable()
    for index in range(h.num_fdes):  # bounded: a read past the section ends it
        at = fdes_at + index * size
        rule = f"sframe_fde_tbl_init: FDE {index}"

        def field(name: str, at: int = at, rule: str = rule, fields: dict = fields) -> int:
            offset, char = fields[name]
            return buf.read(at + offset, char, rule)

        start, func_size, fre_off = field("func_start"), field("func_size"), field("func_start_fre_off")
        if h.version >= 3:
            attr = fres_at + fre_off
            num_fres, info, info2, rep = (
                buf.read(attr + offset, char, f"sframe_fde_tbl_init: FDE {index}'s attributes")
                for offset, char in FDE_ATTR.fields.values()
            )
            table.append(start, func_size, fre_off, num_fres, info, info2, rep)
        else:
            info, rep = field("func_info"), field("func_rep_size")
            table.append(start, func_size, fre_off, field("func_num_fres"), info, 0, rep)
    fres = buf.take(fres_at, h.fre_len, "sframe_decode: memcpy of sfh_fre_len bytes from sfh_freoff")
    return Decoder(rel, h, table, Buffer(fres, buf.order, "the copied FRE bytes", fres_at))


# The byte-swapping walks (a section in the other byte order) ---------------------------------


def _flip_header(buf: Buffer) -> Header:
    buf.swap(0, 2, "flip_header")
    for offset, char in layout.HEADER.fields.values():
        if struct.calcsize(char) > 1:
            buf.swap(HEADER_AT + offset, struct.calcsize(char), "flip_header")
    return _header(buf)


WORDS_BYTES = [COUNTS[i] * SIZES[i] * 2 if SIZES[i] in (1, 2) else COUNTS[i] for i in range(256)]
"""`sframe_fre_offset_bytes_size` for each info byte: 1-byte words for size codes 0 and 3 (undefined) alike."""


def _datawords_bytes(info: int) -> int:
    return WORDS_BYTES[info]


def _addr_size(fre_type: int, where: str) -> int:
    """`sframe_fre_start_addr_size`: `sframe_assert (0)` (abort) on an FRE type no version defines."""
    size = START_ADDR_SIZES.get(fre_type)
    if size is None:
        raise Crash(f"{where}: sframe_fre_start_addr_size asserts on FRE type {fre_type} (abort)")
    return size


def _swap_fre(buf: Buffer, at: int, fre_type: int, room: int | None) -> int:
    """`flip_fre`: swap one row's start address and data words; its size. `room`: the bytes 2.47 lets it
    have (None: 2.40 and 2.44 check nothing)."""
    rule = "flip_fre"
    size = _addr_size(fre_type, rule)
    if room is not None and size > room:
        raise Refusal("SFRAME_ERR_BUF_INVAL", f"{rule}: a row's start address past the section's end", at)
    if fre_type in (1, 2):  # ADDR1's single byte has no order
        buf.swap(at, size, rule)
    info_at = at + size
    if room is not None and size + 1 > room:
        raise Refusal("SFRAME_ERR_BUF_INVAL", f"{rule}: a row's info byte past the section's end", info_at)
    info = buf.read(info_at, "B", rule)
    words = _datawords_bytes(info)
    if room is not None and size + 1 + words > room:
        raise Refusal("SFRAME_ERR_BUF_INVAL", f"{rule}: a row's data words past the section's end", info_at)
    width = {1: 2, 2: 4}.get(SIZES[info])
    if width is not None:
        for k in range(COUNTS[info]):
            buf.swap(info_at + 1 + k * width, width, rule)
    return size + 1 + words


def _past_bound(row: int) -> Unjudged:
    """Why the walk is not judged past `row` rows (a walk that ends sooner on a bad row does so within the
    bound, and is judged)."""
    return Unjudged(f"the byte-swapping walk goes on past {row} rows (functions reading the same rows again)")


def _flip(rel: Release, buf: Buffer) -> None:
    """2.40, 2.44 `flip_sframe`: every FDE from sfh_fdeoff and its rows from sfh_freoff swapped in place;
    the records must add up to the section's size after the header, the rows to sfh_num_fres."""
    h = _flip_header(buf)
    bad = "SFRAME_ERR_BUF_INVAL"
    fault = _header_fault(rel, buf)
    if fault is not None:
        raise Refusal(bad, "flip_sframe: " + fault[0], fault[1])
    size = len(buf.data)
    fde_size = layout.FDE[rel.fde_layouts[h.version]].size
    fields = layout.FDE[1].fields  # the four words flip_fde swaps and the info byte: the same in v1 and v2
    at, row, done, flipped = h.size + h.fdeoff, 0, 0, 0
    bound = row_bound(buf.data)
    for index in range(h.num_fdes):
        if at >= size:
            raise Refusal(bad, f"flip_sframe: FDE {index} starts at {at:#x}, past the section's end", at)
        rule = f"flip_fde: FDE {index}"
        for name in ("func_start", "func_size", "func_start_fre_off", "func_num_fres"):
            buf.swap(at + fields[name][0], 4, rule)
        flipped += fde_size
        num_fres = buf.read(at + fields["func_num_fres"][0], "I", rule)
        fre_type = info_bits(buf.read(at + fields["func_info"][0], "B", rule), "fde_info", "fre_type")
        pos = h.size + h.freoff + buf.read(at + fields["func_start_fre_off"][0], "I", rule)
        while row < (done + num_fres) & U32:
            if row >= bound:
                raise _past_bound(row)
            esz = _swap_fre(buf, pos, fre_type, None)
            flipped += esz
            if esz > size:
                raise Refusal(bad, f"flip_sframe: a row of {esz} bytes, more than the section", pos)
            pos += esz
            row += 1
        done = row
        at += fde_size
    if row != h.num_fres or flipped != size - h.size:
        raise Refusal(
            bad,
            f"flip_sframe: {row} rows and {flipped} bytes of records walked; the header says {h.num_fres} rows "
            f"and the section has {size - h.size} bytes after the header",
        )


def _flip_checked(rel: Release, buf: Buffer) -> None:
    """2.47 `flip_sframe_fdes_with_fres_v2/v3`: each record checked against the buffer's end (but an FDE
    whose rows start past the end makes the room negative, unchecked), byte counts against the header,
    and only zeros after the rows."""
    h = _flip_header(buf)
    bad = "SFRAME_ERR_BUF_INVAL"
    if h.auxhdr_len:
        raise Refusal(bad, "flip_header: an auxiliary header cannot be swapped", HEADER_AT + 3)
    fault = _header_fault(rel, buf)
    if fault is not None:
        raise Refusal(bad, "flip_sframe: " + fault[0], fault[1])
    if h.version not in (2, 3):
        raise Refusal(bad, f"flip_sframe: no walk for version {h.version}", 2)
    end = len(buf.data)
    fde = layout.FDE[h.version]
    fres_at = h.size + h.freoff
    at, row, done, fde_bytes, fre_bytes = h.size + h.fdeoff, 0, 0, 0, 0
    bound = row_bound(buf.data)

    def room(pos: int) -> int:
        return end - pos if pos <= end else 1 << 64  # `buf_end - fp` as a size_t

    for index in range(h.num_fdes):
        rule = f"flip_fde_desc: FDE {index}"
        if at >= end or room(at) < fde.size:
            raise Refusal(bad, f"{rule}: past the section's end", min(at, end))
        for offset, char in fde.fields.values():
            if char in "qiI":
                buf.swap(at + offset, struct.calcsize(char), rule)
        fde_bytes += fde.size
        pos = fres_at + buf.read(at + fde.fields["func_start_fre_off"][0], "I", rule)
        if h.version >= 3:
            if room(pos) < FDE_ATTR.size:
                raise Refusal(bad, f"flip_fde_attr_v3: FDE {index}'s attributes past the section's end", pos)
            buf.swap(pos, 2, "flip_fde_attr_v3")
            fre_bytes += FDE_ATTR.size
            num_fres = buf.read(pos, "H", "flip_fde_attr_v3")
            info = buf.read(pos + FDE_ATTR.fields["func_info"][0], "B", "flip_fde_attr_v3")
            pos += FDE_ATTR.size
        else:
            num_fres = buf.read(at + fde.fields["func_num_fres"][0], "I", rule)
            info = buf.read(at + fde.fields["func_info"][0], "B", rule)
        fre_type = info_bits(info, "fde_info", "fre_type")
        while row < (done + num_fres) & U32:
            if row >= bound:
                raise _past_bound(row)
            esz = _swap_fre(buf, pos, fre_type, room(pos))
            fre_bytes += esz
            pos += esz
            row += 1
        done = row
        at += fde.size
    if fde_bytes > h.freoff - h.fdeoff:
        raise Refusal(bad, f"flip_sframe: {fde_bytes} bytes of FDEs, more than sfh_freoff - sfh_fdeoff")
    if row != h.num_fres or fre_bytes > h.fre_len:
        raise Refusal(
            bad,
            f"flip_sframe: {row} rows and {fre_bytes} bytes walked; sfh_num_fres {h.num_fres}, sfh_fre_len {h.fre_len}",
        )
    tail = h.size + h.freoff + fre_bytes
    if any(buf.data[tail:]):
        raise Refusal(bad, f"flip_sframe: non-zero bytes after the rows (from {tail:#x})", tail)


# sframe_decode_fre ---------------------------------------------------------------------------


def decode_fre(dec: Decoder, at: int, fre_type: int) -> tuple[Fre, int]:
    """`sframe_decode_fre`: the data words are copied into the row's fixed room unchecked; past it they
    overwrite `fre_info` (and `sframe_fre_entry_size`'s assert then compares sizes), past the structure
    they overwrite the caller's stack. Kept per position, two generations of `ROWS_KEPT` // 2: a function's
    lookups decode its rows again, and a row asked for again soon is the same object (runs compare rows by
    identity)."""
    key = (at, fre_type)
    known = dec.rows.get(key)
    if known is None:
        known = dec.older_rows.get(key) or _decode_fre_at(dec, at, fre_type)
        if len(dec.rows) >= ROWS_KEPT // 2:  # functions come in address order: those judged before are done with
            dec.older_rows, dec.rows = dec.rows, {}
        dec.rows[key] = known
    return known


def _decode_fre_at(dec: Decoder, at: int, fre_type: int) -> tuple[Fre, int]:
    rule = "sframe_decode_fre"
    size = _addr_size(fre_type, rule)
    start = dec.fres.read(at, layout.FRE_START_ADDR[fre_type], rule)
    info = dec.fres.read(at + size, "B", rule)
    count = _datawords_bytes(info)
    words = dec.fres.take(at + size + 1, count, rule)
    room = dec.rel.dataword_bytes
    if count > room + 4:  # 4: fre_info and the structure's padding
        raise Crash(f"{rule}: copies {count} bytes of data words into {room}: writes past the row on the stack")
    if count > room:
        info = words[room]
        if _datawords_bytes(info) != count:
            raise Crash(f"{rule}: the data words overwrite fre_info; sframe_fre_entry_size's assert fails (abort)")
    return Fre(start, words[:room].ljust(room, b"\0"), info), size + 1 + count


def sane(rel: Release, info: int) -> bool:
    """`sframe_fre_sanity_check_p`."""
    return SIZES[info] in (0, 1, 2) and COUNTS[info] <= rel.max_datawords


# The getters ---------------------------------------------------------------------------------

NOPRESENT = CODES["SFRAME_ERR_FREOFFSET_NOPRESENT"]


def _word(dec: Decoder, row: Fre, index: int, signed: bool = True) -> tuple[int, int]:
    """`sframe_get_fre_offset` / `sframe_get_fre_udata`: (value, error)."""
    if not sane(dec.rel, row.info):
        return -1, CODES["SFRAME_ERR_FRE_INVAL"]
    if COUNTS[row.info] < index + 1:
        return -1, NOPRESENT
    char = layout.FRE_OFFSET[SIZES[row.info]]
    char = char if signed else char.upper()
    return struct.unpack_from(dec.fres.order + char, row.words, index * struct.calcsize(char))[0], 0


def _fixed(kind: str, value: int) -> tuple[int, int]:
    """A getter's answer for an offset the header fixes: 2.40 says it is not in the row, 2.44 gives it."""
    return (value, 0) if kind == "fixed" else (-1, NOPRESENT)


def getters(dec: Decoder, row: Fre, fde_type: int = 0) -> tuple[tuple[int, int], ...]:
    """`sframe_fre_get_cfa_offset`, `_fp_offset`, `_ra_offset`: each (value, error) as a caller gets them."""
    h, kind = dec.header, dec.rel.getters
    fixed_ra_index = 1 if h.fixed_ra else 2
    if kind != "flex":
        cfa = _word(dec, row, 0)
        fp = _fixed(kind, h.fixed_fp) if h.fixed_fp else _word(dec, row, fixed_ra_index)
        ra = _fixed(kind, h.fixed_ra) if h.fixed_ra else _word(dec, row, 1)
        return cfa, fp, ra
    flex = fde_type == FLEXIBLE
    value, err = _word(dec, row, 1 if flex else 0)
    if not err and h.abi == S390X:  # SFRAME_V2_S390X_CFA_OFFSET_DECODE
        value = _int32(value * 8 + 160)
    cfa = (value, err)
    defined = COUNTS[row.info] != 0
    fp_index = fixed_ra_index
    if flex:
        padding, perr = _word(dec, row, 2, signed=False)
        fp_index = 4 if perr == 0 and padding == 0 else 5
    fp = _word(dec, row, fp_index)
    if (not flex or fp[1]) and h.fixed_fp and defined:
        fp = (h.fixed_fp, 0)
    ra = _word(dec, row, 3 if flex else 1)
    if (not flex or ra[1]) and h.fixed_ra and defined:
        ra = (h.fixed_ra, 0)
    return cfa, fp, ra


# The verdict ----------------------------------------------------------------------------------


def outcome(rel: Release, data: bytes, order: str) -> Decoder | Refusal | Crash | Unjudged:
    """`sframe_decode`'s answer on a host of byte order `order` (`Unjudged` only from the byte-swapping walk:
    a section in the host's own order is read without one)."""
    try:
        return decode(rel, data, order)
    except (Refusal, Crash, Unjudged) as exc:
        return exc


def describe(result: Decoder | Refusal | Crash | Unjudged) -> str:
    if isinstance(result, Decoder):
        return "accepted"
    if isinstance(result, Unjudged):
        return f"not judged: {result.rule}"
    if isinstance(result, Crash):
        return f"crashes: {result.rule}"
    return f"refused with {error_text(result.error)} ({result.rule})"


def relative(pc: int, address: int) -> int:
    """A PC as `sframe_find_fre` takes it: relative to the section's start, signed."""
    offset = (pc - address) & ADDRESS_MASK
    return offset - (1 << 64) if offset >> 63 else offset


@functools.cache
def named(error: str) -> str:
    """`SFRAME_ERR_FRE_INVAL (2007)` (one string for each error: a verdict may name one for every function)."""
    return f"{error} ({CODES[error]})"


def own_order(data: bytes) -> str:
    """The section's byte order, by its magic (little-endian when it cannot be told)."""
    return ">" if data[:2] == MAGIC.to_bytes(2, "big") else "<"
