"""`.eh_frame` and `.debug_frame` read with `struct`, each distinct instruction string decoded once.

pyelftools builds a construct `Container` per CIE and FDE header, an object
per instruction and a dict per table line: far slower than readelf on a
large program. Yet a program's FDEs say very few different things: tens of
thousands of FDEs hold a few hundred distinct instruction strings (every
leaf function: none at all; every `push rbp` prologue: the same three
bytes). So here the headers are read with `struct`, the instructions are
parsed once per distinct byte string, and the rows of a CIE and an
instruction string are worked out once, relative to the function's start,
then shifted to each FDE that repeats them.

What the rows are is pyelftools' reading, kept exactly (`tests/oracles/test_ehframe.py`
compares the two over every fixture, the binaries the tests build and
thousands of generated sections, rows and failures alike), including where a
damaged section takes it: an entry is read where the previous one's
instructions ended, a CIE wherever an FDE's pointer says. Two places differ
on purpose: `DW_CFA_def_cfa_sf`'s offset is factored by the data alignment
(DWARF 5 section 6.4.2.2; pyelftools uses the code alignment), and a 64-bit
`.eh_frame` FDE's CIE pointer counts from the pointer field itself, as for a
32-bit one. Where pyelftools raises (or recurses without end), this raises
`InputError`, naming the section and the entry's offset.

An FDE's table is a `RowTable`: each row's address and each change of a
register's rule, kept as compactly as the instructions that make them (a
column and the offset of the instruction), with a checkpoint every few dozen
changes; the rows are `cfi.py`'s `CfiRow` objects, made when asked for
(`FdeRows`) from the nearest checkpoint or the row before. A table is shared
by every FDE that repeats its instructions. Register numbers
past the ABI's DWARF numbering are refused, naming the FDE: with them, an FDE
of a few kilobytes could ask for rules of thousands of registers in each row.

`Cie` and `Fde` are plain classes with slots, not dataclasses: `sfview unwind`
reads libc's `.eh_frame` here (see `sfview.unwind`).
"""

from __future__ import annotations

import array
import bisect
import contextlib
import io
import itertools
import mmap
import struct
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple, NoReturn, overload

from sfview import ADDRESS_MASK
from sfview.dwarf.cfi import DECODE_ERRORS, CfiFunction, CfiRow, CfiRule, MadeFunctions, RowSequence, Unexpressible
from sfview.errors import InputError
from sfview.inputs.boundary import reading
from sfview.inputs.elf.image import PT_GNU_EH_FRAME
from sfview.inputs.leb128 import leb128
from sfview.sframe.model.rules import CFA, SAME, UNDEFINED, Kind, rule

if TYPE_CHECKING:
    from elftools.dwarf.callframe import FDE, CallFrameInfo

    from sfview.dwarf.cfi import Abi
    from sfview.inputs.elf.image import ElfImage

PE_OMIT = 0xFF
PE_PCREL = 0x10
"""`DW_EH_PE_pcrel`: the value is relative to the address of the field that holds it."""
ULEB, SLEB = "uleb", "sleb"
ENCODED = {0x01: ULEB, 0x02: "H", 0x03: "I", 0x04: "Q", 0x09: SLEB, 0x0A: "h", 0x0B: "i", 0x0C: "q"}
"""`DW_EH_PE_*` value formats (the low four bits of an encoding); `absptr` (0) is an address."""

DW_CFA = {
    "nop": 0x00,
    "set_loc": 0x01,
    "advance_loc1": 0x02,
    "advance_loc2": 0x03,
    "advance_loc4": 0x04,
    "offset_extended": 0x05,
    "restore_extended": 0x06,
    "undefined": 0x07,
    "same_value": 0x08,
    "register": 0x09,
    "remember_state": 0x0A,
    "restore_state": 0x0B,
    "def_cfa": 0x0C,
    "def_cfa_register": 0x0D,
    "def_cfa_offset": 0x0E,
    "def_cfa_expression": 0x0F,
    "expression": 0x10,
    "offset_extended_sf": 0x11,
    "def_cfa_sf": 0x12,
    "def_cfa_offset_sf": 0x13,
    "val_offset": 0x14,
    "val_offset_sf": 0x15,
    "val_expression": 0x16,
    "AARCH64_negate_ra_state": 0x2D,
    "GNU_args_size": 0x2E,
    "advance_loc": 0x40,
    "offset": 0x80,
    "restore": 0xC0,
}
"""The call frame opcodes the decoder reads (DWARF 5 section 7.24, GNU's and AArch64's), by pyelftools'
names: written here so that an unwind does not import pyelftools' constants module;
`tests/oracles/test_ehframe.py` checks every one against pyelftools' `DW_CFA`."""

# Instructions are read as `(op, a, b)`: the DWARF opcode, with the three kinds
# that carry an operand in their low six bits (and the longer forms of the
# same instruction) under one code each.
ADVANCE = DW_CFA["advance_loc"]
OFFSET = DW_CFA["offset"]
RESTORE = DW_CFA["restore"]
SET_LOC = DW_CFA["set_loc"]
NEGATE_RA_STATE = DW_CFA["AARCH64_negate_ra_state"]
ARGS_SIZE = DW_CFA["GNU_args_size"]
REMEMBER, RESTORE_STATE = DW_CFA["remember_state"], DW_CFA["restore_state"]

_OPERANDS: dict[int, tuple[int, tuple[str, ...]]] = {
    DW_CFA["nop"]: (DW_CFA["nop"], ()),
    DW_CFA["set_loc"]: (SET_LOC, ("addr",)),
    DW_CFA["advance_loc1"]: (ADVANCE, ("B",)),
    DW_CFA["advance_loc2"]: (ADVANCE, ("H",)),
    DW_CFA["advance_loc4"]: (ADVANCE, ("I",)),
    DW_CFA["offset_extended"]: (OFFSET, (ULEB, ULEB)),
    DW_CFA["restore_extended"]: (RESTORE, (ULEB,)),
    DW_CFA["undefined"]: (DW_CFA["undefined"], (ULEB,)),
    DW_CFA["same_value"]: (DW_CFA["same_value"], (ULEB,)),
    DW_CFA["register"]: (DW_CFA["register"], (ULEB, ULEB)),
    REMEMBER: (REMEMBER, ()),
    RESTORE_STATE: (RESTORE_STATE, ()),
    DW_CFA["def_cfa"]: (DW_CFA["def_cfa"], (ULEB, ULEB)),
    DW_CFA["def_cfa_register"]: (DW_CFA["def_cfa_register"], (ULEB,)),
    DW_CFA["def_cfa_offset"]: (DW_CFA["def_cfa_offset"], (ULEB,)),
    DW_CFA["def_cfa_expression"]: (DW_CFA["def_cfa_expression"], ("block",)),
    DW_CFA["expression"]: (DW_CFA["expression"], (ULEB, "block")),
    DW_CFA["offset_extended_sf"]: (OFFSET, (ULEB, SLEB)),
    DW_CFA["def_cfa_sf"]: (DW_CFA["def_cfa_sf"], (ULEB, SLEB)),
    DW_CFA["def_cfa_offset_sf"]: (DW_CFA["def_cfa_offset_sf"], (SLEB,)),
    DW_CFA["val_offset"]: (DW_CFA["val_offset"], (ULEB, ULEB)),
    DW_CFA["val_offset_sf"]: (DW_CFA["val_offset"], (ULEB, SLEB)),
    DW_CFA["val_expression"]: (DW_CFA["val_expression"], (ULEB, "block")),
    NEGATE_RA_STATE: (NEGATE_RA_STATE, ()),
    ARGS_SIZE: (ARGS_SIZE, (ULEB,)),
}
"""Each extended opcode: the code it is decoded under, and its operands' formats."""


class OutOfBytes(Exception):
    """A read ran past the end of the section."""


ZEROS_CHUNK = 1 << 16
"""How much of a run of `.eh_frame` zero terminators is looked through at a time (a multiple of the page
size: what a mapping gives back once looked through starts on a page)."""


class Cie:
    """A CIE as read: its alignment factors, RA column, pointer encodings and initial instructions."""

    offset: int
    end: int
    """Where the entry ends by its length field."""
    code_align: int
    data_align: int
    ra_reg: int
    fde_encoding: int | None
    lsda_encoding: int | None
    code: tuple[int, int]
    """Where its instructions are in the section: from, and the end they are read up to."""
    signs: bool
    """Its instructions toggle the RA's signing state (`DW_CFA_AARCH64_negate_ra_state`)."""
    decoded: bool
    last: tuple[CfaState, array.array[int]] | None
    """The state of the last row its instructions give, where its FDEs' rows start (None when they give
    none); worked out when an FDE first needs it (`decoded`)."""
    sets_loc: bool
    """Its instructions set an absolute address (`DW_CFA_set_loc`): its FDEs' rows are their own."""

    __slots__ = (
        "code",
        "code_align",
        "data_align",
        "decoded",
        "end",
        "fde_encoding",
        "last",
        "lsda_encoding",
        "offset",
        "ra_reg",
        "sets_loc",
        "signs",
    )

    def __init__(
        self,
        offset: int,
        end: int,
        code_align: int,
        data_align: int,
        ra_reg: int,
        fde_encoding: int | None,
        lsda_encoding: int | None,
        code: tuple[int, int],
        signs: bool,
    ) -> None:
        self.offset = offset
        self.end = end
        self.code_align = code_align
        self.data_align = data_align
        self.ra_reg = ra_reg
        self.fde_encoding = fde_encoding
        self.lsda_encoding = lsda_encoding
        self.code = code
        self.signs = signs
        self.decoded = False
        self.last = None
        self.sets_loc = False


class Fde:
    """An FDE as read: its CIE, its address range, where its `initial_location` lies, its instructions."""

    offset: int
    end: int
    cie: Cie
    start: int
    """`initial_location` as read (a pc-relative one resolved; not yet masked to 64 bits)."""
    size: int
    location_offset: int
    code_start: int
    """Where its instructions start in the section (they are read up to `end`)."""
    key: bytes | None
    """The instruction bytes, when the rows may be shared with every FDE of the same CIE and bytes
    (None when a `DW_CFA_set_loc`, its own or its CIE's, makes them absolute, or the instructions ran
    past the entry)."""
    signs: bool
    """Its instructions toggle the RA's signing state (`DW_CFA_AARCH64_negate_ra_state`)."""

    __slots__ = ("cie", "code_start", "end", "key", "location_offset", "offset", "signs", "size", "start")

    def __init__(
        self,
        offset: int,
        end: int,
        cie: Cie,
        start: int,
        size: int,
        location_offset: int,
        code_start: int,
        key: bytes | None,
        signs: bool,
    ) -> None:
        self.offset = offset
        self.end = end
        self.cie = cie
        self.start = start
        self.size = size
        self.location_offset = location_offset
        self.code_start = code_start
        self.key = key
        self.signs = signs

    @property
    def code(self) -> tuple[int, int]:
        """Where its instructions are in the section: from, and the end they are read up to (made when
        asked for: a tuple kept by every FDE of a large section would weigh more than its bytes)."""
        return self.code_start, self.end


class FdeHeaders(MadeFunctions):
    """A section's FDEs by their headers, in section order: start (masked to 64 bits), size, offset,
    shape (-1: none), bytes and `initial_location`'s offset, in arrays; each FDE's `CfiFunction` made when
    asked for (`function`, or an index: a new object each time, equal to the last), so that a section of
    many small FDEs is held in arrays, not in an object (and its integers) per FDE.

    Two FDEs of one shape (the same CIE and instruction bytes, without a `DW_CFA_set_loc`) have the same
    rows relative to their start, signing state included: what is worked out from one holds for the other.
    Once one FDE of a shape is read again whole, the others' functions are made from the arrays.
    """

    def __init__(self, frames: FrameSection, abi: Abi) -> None:
        self.frames = frames
        self.name = frames.name
        self.abi = abi
        self.starts = array.array("Q")
        self.sizes: array.array[int] | list[int] = array.array("q")
        """As read: a damaged `address_range` may be negative, or past 2^63 (then a list holds them)."""
        self.offsets = array.array("Q")
        self.shapes = array.array("q")
        self.fde_sizes = array.array("Q")
        self.locations = array.array("Q")
        self._shape_ids: dict[tuple[int, bytes], int] = {}
        self._settled: dict[int, tuple[int, RowTable]] = {}
        """A shape's CIE offset and table, once one of its FDEs, read whole, had rows relative to its start
        and no signing state."""

    def __len__(self) -> int:
        return len(self.starts)

    def add(
        self, start: int, size: int, shape: tuple[int, bytes] | None, offset: int, fde_size: int, location: int
    ) -> bool:
        """Add one FDE (its `initial_location`, `address_range`, shape: CIE offset and instruction bytes,
        offset, bytes, offset of its `initial_location`); whether it is the first of its shape, or has none."""
        shape_id, new = -1, True
        if shape is not None:
            shape_id = self._shape_ids.get(shape, -1)
            new = shape_id < 0
            if new:
                shape_id = self._shape_ids[shape] = len(self._shape_ids)
        self.starts.append(start & ADDRESS_MASK)
        try:
            self.sizes.append(size)
        except OverflowError:
            self.sizes = [*self.sizes, size]
        self.offsets.append(offset)
        self.shapes.append(shape_id)
        self.fde_sizes.append(fde_size)
        self.locations.append(location)
        return new

    def function(self, i: int) -> CfiFunction:
        """The `i`th FDE with its rows: of a shape settled, from the arrays; else read again whole."""
        frames, shape, start = self.frames, self.shapes[i], self.starts[i]
        settled = self._settled.get(shape) if shape >= 0 else None
        if settled is None:
            fde = frames.read_again(self.offsets[i])
            table, base, signing = frames.fde_rows(fde, self.abi)
            if shape >= 0 and fde.key is not None and signing is None:
                self._settled[shape] = fde.cie.offset, table
            cie_offset = fde.cie.offset
        else:
            (cie_offset, table), base, signing = settled, start, None
        rows = FdeRows(table, base, signing)
        return CfiFunction(
            start,
            self.sizes[i],
            rows,
            frames.name,
            self.offsets[i],
            cie_offset,
            frames.entry_source,
            self.fde_sizes[i],
            self.locations[i],
        )


def frame_section(elf: ElfImage, name: str) -> FrameSection | None:
    """The file's `name` section (`.eh_frame`, `.debug_frame`) to read CFI from, None when it has none.

    In a relocatable object the section's relocations are applied first, as
    pyelftools' `get_dwarf_info()` does (the FDEs' `initial_location` fields
    are relocated there).
    """
    section = elf.section(name)
    if section is None:
        return None
    with reading(f"the {name} section"):
        if elf.relocatable:
            from sfview.inputs.elf.pyelftools_view import relocated_section_bytes  # pyelftools: for a .o only

            data = relocated_section_bytes(elf, section)
        else:
            data = elf.section_bytes(section)
    return FrameSection(name, data, section.addr, elf.little_endian, elf.elfclass // 8)


COMMON_FDE = struct.Struct("<IIiiB")
"""length, CIE pointer, initial_location and address_range (`pcrel|sdata4`), augmentation data length."""
COMMON_ENCODING = 0x1B
"""`DW_EH_PE_pcrel|DW_EH_PE_sdata4`: what GNU as writes for an FDE's pointers."""


EH_FRAME_HDR = struct.Struct("<BBBBiI")
"""`.eh_frame_hdr`: version, eh_frame_ptr encoding, fde_count encoding, table encoding, eh_frame_ptr, fde_count."""
EH_FRAME_HDR_ENCODINGS = (1, 0x1B, 0x03, 0x3B)
"""Version 1; DW_EH_PE_pcrel|sdata4; DW_EH_PE_udata4; DW_EH_PE_datarel|sdata4: what every GNU linker writes."""


def hdr_table(elf: ElfImage, eh_frame: FrameSection) -> tuple[list[int], list[int]] | None:
    """`.eh_frame_hdr`'s sorted table (`PT_GNU_EH_FRAME`, written by the linker for unwinders): each
    FDE's start address and its offset in `.eh_frame`. None when the file has none, one in encodings
    other than those every GNU linker writes, or one that is not sorted or points outside `.eh_frame`:
    a search of it would miss FDEs that gdb, which reads `.eh_frame` itself, finds."""
    header = next((seg for seg in elf.segments if seg.type == PT_GNU_EH_FRAME), None)
    if header is None or not elf.little_endian:
        return None
    data = elf.segment_view(header)
    if len(data) < EH_FRAME_HDR.size:
        return None
    *encodings, _, count = EH_FRAME_HDR.unpack_from(data)
    if tuple(encodings) != EH_FRAME_HDR_ENCODINGS or len(data) < EH_FRAME_HDR.size + 8 * count:
        return None
    base = header.vaddr
    table = struct.unpack_from(f"<{2 * count}i", data, EH_FRAME_HDR.size)
    starts = [base + start for start in table[0::2]]
    offsets = [base + fde - eh_frame.address for fde in table[1::2]]
    if any(a > b for a, b in itertools.pairwise(starts)) or any(not 0 <= o < len(eh_frame.data) for o in offsets):
        return None
    return starts, offsets


CfaState = tuple[int | None, int | None, bytes | None]
"""The CFA while a table is worked out: (register, offset, expression)."""


class FrameSection:
    """One `.eh_frame` or `.debug_frame` section: its entries read on demand, rows shared between
    FDEs that repeat them."""

    def __init__(self, name: str, data: bytes, address: int, little_endian: bool, address_size: int) -> None:
        self.name = name
        self.data = data
        self.address = address
        self.eh = name == ".eh_frame"
        self.little_endian = little_endian
        self.address_size = address_size
        order = "<" if little_endian else ">"
        self._order = order
        self._u32 = struct.Struct(order + "I").unpack_from
        self._u64 = struct.Struct(order + "Q").unpack_from
        self._fixed = {c: struct.Struct(order + c) for c in "BHIQhiq"}
        self._fixed["addr"] = self._fixed["Q" if address_size == 8 else "I"]
        self._common = struct.Struct(order + COMMON_FDE.format[1:])
        self._entries: dict[int, Cie | Fde] = {}
        self._reading: set[int] = set()
        self._instructions: dict[bytes, tuple[bool, bool, bytes]] = {}
        self.entry_source = self.pyelftools_entry
        """One bound method for every function's `entry_source` (a closure each would weigh as much as the
        function)."""
        self._rows: dict[tuple[int, bytes, int, int], RowTable] = {}
        self._rules: dict[int, CfiRule] = {}
        self.wide = "i" if len(data) < 1 << 23 else "q"
        """The array type of a `RowTable`'s columns and changes: an offset in this section, times 256."""
        self._cfi: CallFrameInfo | None = None

    # Entries --------------------------------------------------------------

    def headers(self, abi: Abi) -> FdeHeaders:
        """Every FDE by its header, in section order, with its shape, each FDE's function (rows included)
        made when asked for: without keeping an object (or rows) per FDE.

        Fails where pyelftools' walk over the section does: the entries are all read first, then the rows
        of each shape's first FDE (and of every FDE without a shape) worked out, so that the others' hold.
        The FDE every GNU toolchain writes, of a CIE and instruction bytes already seen, is read here with
        one `struct` call (`_common_fde`'s reading, without its object); any other goes through `_entry_at`.
        """
        headers = FdeHeaders(self, abi)
        unsettled: list[int] = []  # the FDEs whose rows are worked out now: failures are said here, not on demand
        data, entries, known = self.data, self._entries, self._instructions
        unpack, fixed, base = self._common.unpack_from, COMMON_FDE.size, self.address + 8
        offset, size = 0, len(data)
        while offset < size:
            at = offset
            if self.eh and at + fixed <= size and at not in entries:
                length, pointer, start, extent, augmentation = unpack(data, at)
                cie = entries.get(at + 4 - pointer) if pointer else None
                end = at + 4 + length
                pos = min(at + fixed + augmentation, size)
                key = data[pos:end]
                found = known.get(key) if pos < end <= size else None
                if (
                    (found is not None or pos >= end)
                    and isinstance(cie, Cie)
                    and cie.fde_encoding == COMMON_ENCODING
                    and cie.lsda_encoding in (None, PE_OMIT)
                    and augmentation < 0x80
                    and length not in (0, 0xFFFFFFFF)
                ):
                    shape = None if found is not None and not found[0] else (cie.offset, key)
                    if headers.add(base + at + start, extent, shape, at, end - at, at + 8):
                        unsettled.append(at)
                    offset = max(pos, end)  # where `_instructions_at` says reading stopped
                    continue
            entry, offset = self._entry_at(at)
            if isinstance(entry, Fde):
                del entries[at]  # read once by the walk: kept, every FDE would stay in memory
                shape = (entry.cie.offset, entry.key) if entry.key is not None else None
                if headers.add(entry.start, entry.size, shape, at, entry.end - at, entry.location_offset):
                    unsettled.append(at)
        for at in unsettled:
            self.fde_rows(self.read_again(at), abi)
        return headers

    def fde_places(self) -> list[tuple[int, int]]:
        """`(initial_location, offset)` of every FDE, the entries walked by their lengths: what an
        index by address needs, without reading any FDE's instructions (`fde_at` reads them)."""
        out = []
        offset, size = 0, len(self.data)
        while offset < size:
            common = self._common_place(offset)
            if common is not None:
                out.append((common[0], offset))
                offset = common[1]
                continue
            with self._located(offset):
                end, pos, cie = self._head(offset)
                if cie is not None:
                    out.append((self._fde_fields(cie, pos)[0], offset))
            offset = end if end >= 0 else self._past_terminators(pos)
        return out

    def _common_place(self, offset: int) -> tuple[int, int] | None:
        """`(initial_location, end)` of the FDE at `offset` when it is the kind every GNU toolchain
        writes (as `_common_fde` reads it, one `struct` call, its instructions left alone); None for
        anything else (read by `_head`)."""
        data = self.data
        if not self.eh or offset + COMMON_FDE.size > len(data):
            return None
        length, pointer, start, _, _ = self._common.unpack_from(data, offset)
        cie = self._entries.get(offset + 4 - pointer) if pointer else None
        if not isinstance(cie, Cie) or cie.fde_encoding != COMMON_ENCODING or length in (0, 0xFFFFFFFF):
            return None
        return start + self.address + offset + 8, offset + 4 + length

    def fde_at(self, offset: int) -> Fde | None:
        """The FDE at `offset` (None for a CIE or a terminator)."""
        entry = self._entry_at(offset)[0]
        return entry if isinstance(entry, Fde) else None

    def read_again(self, offset: int) -> Fde:
        """The FDE at `offset`, read whole before (by its headers), read again; its object let go after,
        unless something had kept it (asked for one by one, FDEs would all stay in memory)."""
        kept = offset in self._entries
        fde = self.fde_at(offset)
        assert fde is not None  # read whole before: it reads again
        if not kept:
            del self._entries[offset]
        return fde

    def _entry_at(self, offset: int) -> tuple[Cie | Fde | None, int]:
        """The entry at `offset` (None: a zero terminator) and where the next one starts."""
        known = self._entries.get(offset)
        if known is not None:
            return known, known.end
        if offset in self._reading:
            self._fail(offset, "the CIE pointer leads back to this entry")
        if not 0 <= offset < len(self.data):  # an `.eh_frame_hdr` entry's FDE address: a claim
            self._fail(offset, f"no entry there: outside the section ({len(self.data):#x} bytes)")
        self._reading.add(offset)
        try:
            with self._located(offset):
                return self._read_entry(offset)
        finally:
            self._reading.discard(offset)

    @contextlib.contextmanager
    def _located(self, offset: int) -> Iterator[None]:
        """What goes wrong reading the entry at `offset` as an `InputError` that names it."""
        try:
            yield
        except OutOfBytes:
            self._fail(offset, f"the entry runs past the end of the section ({len(self.data):#x} bytes)")
        except (KeyError, ValueError) as exc:
            self._fail(offset, str(exc))

    def _fail(self, offset: int, what: str) -> NoReturn:
        raise InputError(f"DWARF CFI cannot be decoded: {self.name}+{offset:#x}: {what}")

    def _read_entry(self, offset: int) -> tuple[Cie | Fde | None, int]:
        """Read the entry at `offset` as pyelftools' `CallFrameInfo._parse_entry_at` does."""
        fde = self._common_fde(offset)
        if fde is not None:
            return fde
        end, pos, cie = self._head(offset)
        if end < 0:
            return None, self._past_terminators(pos)
        if cie is None:
            return self._read_cie(offset, end, pos)
        start, size, location_offset, pos = self._fde_fields(cie, pos)
        key, signs, _, after = self._instructions_at(pos, end)
        fde = Fde(offset, end, cie, start, size, location_offset, pos, None if cie.sets_loc else key, signs)
        self._entries[offset] = fde
        return fde, after

    def _common_fde(self, offset: int) -> tuple[Fde, int] | None:
        """The FDE every GNU toolchain writes, read with one `struct` call: a 32-bit `.eh_frame` FDE
        of a CIE already read whose pointers are `pcrel|sdata4`, without an LSDA, its augmentation
        data shorter than 128 bytes. None for anything else (read field by field)."""
        data = self.data
        if not self.eh or offset + COMMON_FDE.size > len(data):
            return None
        length, pointer, start, size, augmentation = self._common.unpack_from(data, offset)
        cie = self._entries.get(offset + 4 - pointer) if pointer else None
        if (
            not isinstance(cie, Cie)
            or cie.fde_encoding != COMMON_ENCODING
            or cie.lsda_encoding not in (None, PE_OMIT)
            or augmentation >= 0x80
            or length in (0, 0xFFFFFFFF)
        ):
            return None
        pos = min(offset + COMMON_FDE.size + augmentation, len(data))
        end = offset + 4 + length
        key, signs, _, after = self._instructions_at(pos, end)
        start += self.address + offset + 8
        fde = Fde(offset, end, cie, start, size, offset + 8, pos, None if cie.sets_loc else key, signs)
        self._entries[offset] = fde
        return fde, after

    def _past_terminators(self, pos: int) -> int:
        """Where the zero terminators that follow one at `pos` end: the next word with a byte set (or the
        last, partial word). Each is an entry of nothing, walked past at once: a small file whose
        compressed `.eh_frame` inflates to a huge run of zeros would take minutes a word at a time."""
        data, stop = self.data, len(self.data)
        release = getattr(data, "madvise", None)  # an inflated section's mapping: the pages read go again
        at = pos
        while at < len(data):
            chunk = data[at : (at // ZEROS_CHUNK + 1) * ZEROS_CHUNK]
            if chunk.count(0) != len(chunk):  # counted in C, far faster than a search for what is not zero
                stop = at + len(chunk) - len(chunk.lstrip(b"\0"))
                break
            if release is not None and at % ZEROS_CHUNK == 0:
                release(mmap.MADV_DONTNEED, at, len(chunk))
            at += len(chunk)
        return pos + (stop - pos) // 4 * 4

    def _head(self, offset: int) -> tuple[int, int, Cie | None]:
        """An entry's length and identity: where it ends by its length (-1: a zero terminator), where
        its fields after the CIE pointer start (after the terminator, for one), and for an FDE its CIE
        (None for a CIE)."""
        read = self._read
        if offset < 0:
            raise ValueError("the entry would start before the section")
        length, pos = read("I", offset)
        if self.eh and length == 0:
            return -1, pos, None
        wide = length == 0xFFFFFFFF
        if wide:
            length, pos = read("Q", pos)
        end = pos + length
        pointer_at = pos
        ident, pos = read("Q" if wide else "I", pos)
        cie_id = 0 if self.eh else (1 << (64 if wide else 32)) - 1
        if ident == cie_id:
            return end, pos, None
        cie_offset = pointer_at - ident if self.eh else ident
        if not 0 <= cie_offset < len(self.data):
            raise ValueError(f"its CIE pointer leads outside the section (to {cie_offset:#x})")
        cie = self._entry_at(cie_offset)[0]
        if not isinstance(cie, Cie):
            raise ValueError(f"its CIE pointer leads to {'an FDE' if cie else 'a terminator'} at {cie_offset:#x}")
        return end, pos, cie

    def _fde_fields(self, cie: Cie, pos: int) -> tuple[int, int, int, int]:
        """An FDE's `initial_location` and `address_range`, where the first is, and where its
        instructions start (after the augmentation data or the LSDA pointer, as pyelftools reads them)."""
        location_offset = pos
        if self.eh:
            if cie.fde_encoding is None:
                raise ValueError(f"its CIE (at {cie.offset:#x}) gives no FDE pointer encoding")
            value = self._format(cie.fde_encoding, "FDE pointer")
            start, pos = self._value(value, pos)
            size, pos = self._value(value, pos)
            if cie.fde_encoding & 0xF0 == PE_PCREL:
                start += self.address + location_offset
            length, lsda_at = self._uleb(pos)  # the augmentation data: the LSDA pointer, when there is one
            pos = min(lsda_at + length, len(self.data))
        else:
            start, pos = self._read("addr", pos)
            size, pos = self._read("addr", pos)
            lsda_at = pos
        if cie.lsda_encoding is not None and cie.lsda_encoding != PE_OMIT:
            pos = self._value(self._format(cie.lsda_encoding, "LSDA pointer"), lsda_at)[1]
        return start, size, location_offset, pos

    def _read_cie(self, offset: int, end: int, pos: int) -> tuple[Cie, int]:
        read, uleb = self._read, self._uleb
        version, pos = read("B", pos)
        nul = self.data.find(b"\0", pos)
        if nul < 0:
            raise OutOfBytes
        augmentation, pos = self.data[pos:nul], nul + 1
        if version >= 4:
            pos += 2  # address_size and segment_selector_size (addresses are the ELF class's)
        code_align, pos = uleb(pos)
        data_align, pos = self._sleb(pos)
        ra_reg, pos = uleb(pos) if version > 1 else read("B", pos)
        fields: dict[str, int] = {}
        if augmentation and not augmentation.startswith(b"armcc"):
            pos = self._augmentation(augmentation, pos, fields)
        _, signs, sets_loc, after = self._instructions_at(pos, end)
        cie = Cie(offset, end, code_align, data_align, ra_reg, fields.get("R"), fields.get("L"), (pos, end), signs)
        cie.sets_loc = sets_loc
        self._entries[offset] = cie
        return cie, after

    def _augmentation(self, augmentation: bytes, pos: int, fields: dict[str, int]) -> int:
        """Read the CIE's augmentation data into `fields` (`R`, `L`); where its instructions start.

        As pyelftools: the letters are read up to the first it does not know, and
        the data is then skipped by its length (`.eh_frame`) or not at all.
        """
        if not augmentation.startswith(b"z"):
            raise ValueError(f"augmentation {augmentation!r} does not start with 'z'")
        at = pos
        for letter in augmentation.decode("latin-1"):
            match letter:
                case "z":
                    at = self._uleb(at)[1]
                case "L" | "R":
                    fields[letter], at = self._read("B", at)
                case "P":
                    encoding, at = self._read("B", at)
                    at = self._value("addr" if encoding & 0x0F == 0 else ENCODED.get(encoding & 0x0F, ""), at)[1]
                case "S":
                    pass
                case _:
                    break
        if not self.eh:
            return pos
        length, pos = self._uleb(pos)
        return min(pos + length, len(self.data))

    def _format(self, encoding: int, what: str) -> str:
        """The value format of a `DW_EH_PE_*` encoding pyelftools reads (absolute or pc-relative)."""
        if encoding == PE_OMIT or encoding & 0xF0 not in (0, PE_PCREL):
            raise ValueError(f"{what} encoding {encoding:#x} is not one sfview reads")
        found = "addr" if encoding & 0x0F == 0 else ENCODED.get(encoding & 0x0F)
        if found is None:
            raise ValueError(f"{what} encoding {encoding:#x} is not one sfview reads")
        return found

    # Values -------------------------------------------------------------------

    def _read(self, fmt: str, pos: int) -> tuple[int, int]:
        layout = self._fixed[fmt]
        if pos < 0 or pos + layout.size > len(self.data):
            raise OutOfBytes
        return layout.unpack_from(self.data, pos)[0], pos + layout.size

    def _value(self, fmt: str, pos: int) -> tuple[int, int]:
        if fmt == ULEB:
            return self._uleb(pos)
        if fmt == SLEB:
            return self._sleb(pos)
        if fmt not in self._fixed:
            raise ValueError("a personality encoding sfview does not read")
        return self._read(fmt, pos)

    def _uleb(self, pos: int) -> tuple[int, int]:
        data = self.data
        try:
            byte = data[pos]
            if byte < 0x80:
                return byte, pos + 1
            return leb128(data, pos, False)  # its bits bounded: a long number costs its bytes, not their square
        except IndexError:
            raise OutOfBytes from None

    def _sleb(self, pos: int) -> tuple[int, int]:
        try:
            return leb128(self.data, pos, True)
        except IndexError:
            raise OutOfBytes from None

    # Instructions -------------------------------------------------------------

    def _instructions_at(self, pos: int, end: int) -> tuple[bytes | None, bool, bool, int]:
        """The instructions from `pos` to the entry's `end`, read once for what the entry keeps of them:
        their bytes when they can be shared (they end at `end` and set no absolute address); whether
        they toggle the RA's signing state; whether they set an absolute address; and where reading
        stopped (past `end` when the last instruction's operands run over it, as pyelftools reads them)."""
        if pos >= end:
            return b"", False, False, pos
        key = self.data[pos:end]
        known = self._instructions.get(key) if end <= len(self.data) else None
        if known is None:
            signs = sets_loc = False
            after = pos
            for _, op, _, _, following in self._operations(pos, end):
                signs |= op == NEGATE_RA_STATE
                sets_loc |= op == SET_LOC
                after = following
            if after != end or end > len(self.data):
                return None, signs, sets_loc, after
            known = self._instructions[key] = not sets_loc, signs, key
        shared, signs, key = known  # the bytes first read: every FDE of the same instructions holds one object
        return key if shared else None, signs, not shared, end

    def _operations(self, pos: int, end: int) -> Iterator[tuple[int, int, int, int | bytes, int]]:
        """The instructions from `pos` to `end`: `(offset, op, a, b, next)`, each decoded under the code of
        its kind (`_OPERANDS`), from its offset in the section to where the next starts."""
        while pos < end:
            op, a, b, after = self._operation(pos)
            yield pos, op, a, b, after
            pos = after

    def _operation(self, pos: int) -> tuple[int, int, int | bytes, int]:
        """The instruction at `pos`: its code, its operands (0 for those it lacks), where the next starts."""
        data = self.data
        if pos >= len(data):
            raise OutOfBytes
        raw = data[pos]
        primary = raw & 0xC0
        if primary == OFFSET:
            value, after = self._uleb(pos + 1)
            return OFFSET, raw & 0x3F, value, after
        if primary:
            return primary, raw & 0x3F, 0, pos + 1
        found = _OPERANDS.get(raw)
        if found is None:
            raise ValueError(f"unknown CFI opcode {raw:#04x} at {self.name}+{pos:#x}")
        op, formats = found
        args: list[int | bytes] = []
        pos += 1
        for fmt in formats:
            if fmt == "block":
                length, pos = self._uleb(pos)
                if pos + length > len(data):
                    raise OutOfBytes
                args.append(data[pos : pos + length])
                pos += length
            else:
                value, pos = self._value(fmt, pos)
                args.append(value)
        args += [0, 0]
        return op, args[0], args[1], pos  # type: ignore[return-value]

    # Rows -------------------------------------------------------------------

    def function(self, fde: Fde, abi: Abi) -> CfiFunction:
        """One FDE with its rows (the table of a CIE and an instruction string worked out once, its rows
        made when asked for)."""
        return CfiFunction(
            fde.start & ADDRESS_MASK,
            fde.size,
            FdeRows(*self.fde_rows(fde, abi)),
            self.name,
            fde.offset,
            fde.cie.offset,
            self.entry_source,
            fde.end - fde.offset,
            fde.location_offset,
        )

    def fde_rows(self, fde: Fde, abi: Abi) -> tuple[RowTable, int, tuple[Sequence[int], bytes] | None]:
        """What an FDE's `FdeRows` are made of: its table (shared by the FDEs of one CIE and instruction
        string), the address its rows count from, its RA's signing state; raises `InputError` where
        the table cannot be worked out."""
        cie = fde.cie
        start = fde.start & ADDRESS_MASK
        try:
            if fde.key is None:
                table, base = self._table(cie, fde.code, fde.start, abi), 0
            else:
                cache_key = (cie.offset, fde.key, abi.fp, cie.ra_reg)
                table, base = self._rows.get(cache_key), start
                if table is None:
                    table = self._rows[cache_key] = self._table(cie, fde.code, 0, abi)
        except (IndexError, ValueError) as exc:
            self._fail(fde.offset, str(exc) or "DW_CFA_restore_state without a remembered state")
        signing = self._signing(fde, start) if fde.signs or cie.signs else None
        return table, base, signing

    def _table(self, cie: Cie, code: tuple[int, int], start: int, abi: Abi) -> RowTable:
        """The table of an FDE whose instructions are at `code`, its rows from `start`."""
        if not cie.decoded:
            cie.last = self._decode(cie, cie.code, 0, None, abi, False).last_row()
            cie.decoded = True
        return self._decode(cie, code, start, cie.last, abi, True)

    def _decode(
        self,
        cie: Cie,
        code: tuple[int, int],
        start: int,
        last: tuple[CfaState, array.array[int]] | None,
        abi: Abi,
        is_fde: bool,
    ) -> RowTable:
        """The table of `code`, as pyelftools' `CFIEntry._decode_CFI_table` works it out.

        `last`: for an FDE, the state of its CIE's last row (None for a CIE, or a CIE without rows, where
        `DW_CFA_restore` has nothing to restore to). A register number past the ABI's DWARF numbering
        raises `ValueError` naming it.

        The state is a column of each register's rule, and two of the CFA's (its base, its offset), each
        the offset of the instruction that set it; a change is kept as the column and the new value
        (`RowTable`). A remembered state is where the changes were; restoring it changes the columns
        that differ from it.
        """
        registers = abi.registers
        table = RowTable(self, cie.data_align, cie.ra_reg + 2, abi.fp + 2, registers + 2, last)
        put, ids = table.put, table.ids
        cfa: CfaState = last[0] if last else (None, 0, None)
        pc = start
        stack = array.array("q")
        bad_cfa = False
        code_align, data_align = cie.code_align, cie.data_align
        for at, op, a, b, _ in self._operations(*code):
            if op in _NAMES_REGISTER and (a >= registers or (op == 0x09 and b >= registers)):  # type: ignore[operator]
                bad = a if a >= registers else b
                raise ValueError(f"register {bad} is past the ABI's DWARF registers (0 to {registers - 1})")
            match op:
                case 0x40:  # ADVANCE
                    bad_cfa |= table.row(pc, cfa)
                    pc += a * code_align
                case 0x80 | 0x07 | 0x08 | 0x14 | 0x09 | 0x10 | 0x16:  # a register's rule, at `at`
                    put(a + 2, at)
                case 0x01:  # SET_LOC
                    bad_cfa |= table.row(pc, cfa)
                    pc = a
                case 0xC0:  # RESTORE
                    if not is_fde:
                        raise ValueError("DW_CFA_restore in a CIE")
                    if last is None:
                        raise ValueError("DW_CFA_restore in an FDE whose CIE has no rules")
                    put(a + 2, last[1][a + 2])
                case 0x0A:  # REMEMBER
                    stack.append(table.changes)
                case 0x0B:  # RESTORE_STATE
                    if not stack:
                        raise IndexError("DW_CFA_restore_state without a remembered state")
                    then = table.state_at(stack.pop())
                    for column, value in enumerate(then):
                        if ids[column] != value:
                            put(column, value)
                    cfa = table.cfa_of(ids[CFA_BASE], ids[CFA_OFFSET])
                case 0x0C | 0x12:  # def_cfa, def_cfa_sf (factored by the data alignment; pyelftools: by the code's)
                    put(CFA_BASE, at)
                    put(CFA_OFFSET, at)
                    cfa = (a, b if op == 0x0C else b * data_align, None)  # type: ignore[operator]
                case 0x0D:
                    put(CFA_BASE, at)
                    cfa = (a, cfa[1], None)
                case 0x0E | 0x13:
                    if cfa[2] is not None:  # the expression goes: no base is left
                        put(CFA_BASE, NO_RULE)
                    put(CFA_OFFSET, at)
                    cfa = (cfa[0], a if op == 0x0E else a * data_align, None)
                case 0x0F:
                    put(CFA_BASE, at)
                    put(CFA_OFFSET, at)
                    cfa = (None, None, a)  # type: ignore[assignment]
                case 0x00 | 0x2D:  # nop, AARCH64_negate_ra_state (its state is `_signing`'s)
                    pass
                case 0x2E if is_fde:  # GNU_args_size: nothing the table holds
                    pass
                case _:  # GNU_args_size in a CIE
                    raise ValueError(f"CFI opcode {op:#04x} in a CIE")
        if cfa[0] is not None or table.live:
            bad_cfa |= table.row(pc, cfa)
        if bad_cfa and is_fde:  # valid only for a CFA of a register and an offset (DWARF 5, 6.4.2.2)
            raise ValueError("DW_CFA_def_cfa_register where the CFA is an expression: no offset to keep")
        return table.done()

    def rule_at(self, at: int, data_align: int) -> CfiRule:
        """The register rule the instruction at `at` sets (one the section's decoding read before)."""
        found = self._rules.get(at)
        if found is None:
            op, _, b, _ = self._operation(at)
            match op:
                case 0x80:
                    found = rule(Kind.VALUE, CFA, b * data_align, True)  # type: ignore[operator]
                case 0x14:
                    found = rule(Kind.VALUE, CFA, b * data_align, False)  # type: ignore[operator]
                case 0x09:
                    found = rule(Kind.VALUE, b, 0, False)
                case 0x07:
                    found = UNDEFINED
                case 0x08:
                    found = SAME
                case _:
                    found = Unexpressible("expression" if op == 0x10 else "val_expression", b)  # type: ignore[arg-type]
            if len(self._rules) >= RULES_KEPT:
                self._rules.clear()
            self._rules[at] = found
        return found

    def _signing(self, fde: Fde, start: int) -> tuple[Sequence[int], bytes]:
        """Where the RA's signing state changes: the addresses, in order, and the state from each.

        `DW_CFA_AARCH64_negate_ra_state` toggles it at the current address; it is
        kept and restored with `DW_CFA_remember_state`/`DW_CFA_restore_state` as
        libgcc's unwinder does (the state is its pseudo-register 34).
        """
        at: array.array[int] | list[int] = array.array("Q")
        states = bytearray()
        signed, stack, pc = False, bytearray(), start
        for code in (fde.cie.code, fde.code):
            for _, op, a, _, _ in self._operations(*code):
                if op == SET_LOC:
                    pc = a & ADDRESS_MASK
                elif op == ADVANCE:
                    pc += a * fde.cie.code_align
                elif op == REMEMBER:
                    stack.append(signed)
                elif (op == RESTORE_STATE and stack) or op == NEGATE_RA_STATE:
                    signed = bool(stack.pop()) if op == RESTORE_STATE else not signed
                    try:
                        at.append(pc)
                    except OverflowError:  # advances past 2^64: compared as they are
                        at = [*at, pc]
                    states.append(signed)
        return at, bytes(states)

    def pyelftools_entry(self, offset: int) -> FDE | None:
        """pyelftools' object for the FDE at `offset`: it describes the instructions in readelf's words
        (`DW_CFA_def_cfa_offset: 16`), one FDE when the app asks for it (pyelftools' reader, and the
        construct library under it, imported then, not at `compare`'s start-up)."""
        from elftools.dwarf.callframe import FDE, CallFrameInfo
        from elftools.dwarf.structs import DWARFStructs

        if self._cfi is None:
            self._cfi = CallFrameInfo(
                stream=io.BytesIO(self.data),
                size=len(self.data),
                address=self.address,
                base_structs=DWARFStructs(self.little_endian, 32, self.address_size),
                for_eh_frame=self.eh,
            )
        try:
            entry = self._cfi._parse_entry_at(offset)
        except DECODE_ERRORS:
            return None
        if not isinstance(entry, FDE):
            return None
        entry.instructions = [i for i in entry.instructions if i.opcode != ARGS_SIZE]
        return entry


NO_RULE = -1
"""A column without a rule (the CFA's: no base; no offset is 0)."""
CFA_BASE, CFA_OFFSET = 0, 1
"""The columns of the CFA's base register (or expression) and offset; register `r` is column `r + 2`."""
RULES_KEPT = 1024
"""Rules a section keeps by the offset of the instruction that sets them, so that rows made again and
again do not decode it again: a bound, not a table as large as the section."""
_NAMES_REGISTER = frozenset({0x80, 0xC0, 0x07, 0x08, 0x14, 0x09, 0x10, 0x16, 0x0C, 0x12, 0x0D})
"""The instructions (as decoded) whose first operand (and `DW_CFA_register`'s second) is a register number."""


class RowTable:
    """An FDE's table (or a CIE's), kept as its bytes are: each row's address, the runs of rows in one
    state, and the changes between them, with a checkpoint of every column every `interval` changes.

    A row of an FDE changes a column or two of up to 132 (every register's rule, the CFA's base and
    offset); an object per row, or a set of rules per change, held hundreds of bytes for three bytes of
    CFI. Here a row is an address, a change a column and a value (the offset of the instruction that
    set it: its rule is decoded from the section when asked for, `FrameSection.rule_at`), and a state
    is the changes up to it: the state of a row is a checkpoint's columns and at most `interval`
    changes on top, work bounded by the ABI's register count. The tables of FDEs of one CIE start from
    one state, the CIE's, shared.
    """

    __slots__ = (
        "changed",
        "checkpoints",
        "columns",
        "data_align",
        "fp_column",
        "frames",
        "ids",
        "interval",
        "live",
        "log",
        "pcs",
        "ra_column",
        "run_changes",
        "runs",
        "wide",
    )

    def __init__(
        self,
        frames: FrameSection,
        data_align: int,
        ra_column: int,
        fp_column: int,
        width: int,
        last: tuple[CfaState, array.array[int]] | None,
    ) -> None:
        self.frames = frames
        self.data_align = data_align
        self.ra_column = ra_column
        self.fp_column = fp_column
        self.wide = frames.wide
        initial = last[1] if last else array.array(self.wide, [NO_RULE]) * width
        self.ids = array.array(self.wide, initial)
        """The columns as the decoding stands (dropped when it is done)."""
        self.live = sum(value != NO_RULE for value in initial[2:])
        self.checkpoints: list[array.array[int]] = [initial]
        self.interval = max(32, width)
        self.log = array.array(self.wide)
        """Each change: `value * 256 + column` (a value of `NO_RULE`: -256 + column)."""
        self.pcs: array.array[int] = array.array("I")
        self.runs = array.array("I")
        """The first row of each run of rows in one state."""
        self.run_changes = array.array("I")
        """How many changes each run's state is."""
        self.changed = bytearray(width)
        """The columns ever set (the rows look at these only)."""
        self.columns = b""
        for column, value in enumerate(initial):
            if value != NO_RULE:
                self.changed[column] = 1

    @property
    def changes(self) -> int:
        return len(self.log)

    def put(self, column: int, value: int) -> None:
        """Set a column of the state."""
        ids = self.ids
        old = ids[column]
        if old == value:
            return
        ids[column] = value
        if column >= 2:
            self.live += (value != NO_RULE) - (old != NO_RULE)
        self.changed[column] = 1
        self.log.append(value * 256 + column)
        if len(self.log) % self.interval == 0:
            self.checkpoints.append(array.array(self.wide, ids))

    def row(self, pc: int, cfa: CfaState) -> bool:
        """A row at `pc` in the state as it stands; whether its CFA is a register without an offset."""
        if not self.runs or self.run_changes[-1] != len(self.log):
            self.runs.append(len(self.pcs))
            self.run_changes.append(len(self.log))
        pc &= ADDRESS_MASK
        try:
            self.pcs.append(pc)
        except OverflowError:
            self.pcs = array.array("Q", self.pcs)
            self.pcs.append(pc)
        return cfa[2] is None and cfa[0] is not None and cfa[1] is None

    def done(self) -> RowTable:
        """The table, its decoding state dropped."""
        self.columns = bytes(column for column, changed in enumerate(self.changed) if changed)
        self.ids = self.changed = None  # type: ignore[assignment]
        return self

    def last_row(self) -> tuple[CfaState, array.array[int]] | None:
        """The state of the last row (a CIE's, where its FDEs start), every column; None without rows."""
        if not self.pcs:
            return None
        state = self.state_at(self.run_changes[-1])
        return self.cfa_of(state[CFA_BASE], state[CFA_OFFSET]), state

    def state_at(self, changes: int) -> array.array[int]:
        """Every column after the first `changes` changes."""
        k = changes // self.interval
        state = array.array(self.wide, self.checkpoints[k])
        log = self.log
        for i in range(k * self.interval, changes):
            value, column = divmod(log[i], 256)
            state[column] = value
        return state

    def columns_at(self, changes: int) -> dict[int, int]:
        """The columns ever set, after the first `changes` changes."""
        k = changes // self.interval
        checkpoint = self.checkpoints[k]
        state = {column: checkpoint[column] for column in self.columns}
        log = self.log
        for i in range(k * self.interval, changes):
            value, column = divmod(log[i], 256)
            state[column] = value
        return state

    def cfa_of(self, base: int, offset: int) -> CfaState:
        """The CFA as (register, offset, expression) from its two columns."""
        operation = self.frames._operation
        reg: int | None = None
        expr: bytes | None = None
        if base != NO_RULE:
            op, a, _, _ = operation(base)
            if op == 0x0F:
                expr = a  # type: ignore[assignment]
            else:
                reg = a  # type: ignore[assignment]
        value: int | None = 0
        if offset != NO_RULE:
            op, a, b, _ = operation(offset)
            value = {0x0C: b, 0x12: b * self.data_align, 0x0E: a, 0x13: a * self.data_align}.get(op)  # type: ignore[operator]
        if expr is not None:
            return None, None, expr
        return reg, value, None


class FdeRows(RowSequence):
    """An FDE's rows, each made from its `RowTable` when asked for: the table's addresses from `base`,
    the RA's signing state from `signing` (where it changes, and to what)."""

    __slots__ = ("_base", "_signing", "_table")

    def __init__(self, table: RowTable, base: int, signing: tuple[Sequence[int], bytes] | None) -> None:
        self._table = table
        self._base = base
        self._signing = signing

    def __len__(self) -> int:
        return len(self._table.pcs)

    @property
    def addresses(self) -> Sequence[int]:
        return self._table.pcs if not self._base else _Shifted(self._table.pcs, self._base)

    @overload
    def __getitem__(self, i: int) -> CfiRow: ...
    @overload
    def __getitem__(self, i: slice) -> list[CfiRow]: ...
    def __getitem__(self, i: int | slice) -> CfiRow | list[CfiRow]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        table = self._table
        if i < 0:
            i += len(table.pcs)
        if not 0 <= i < len(table.pcs):
            raise IndexError("row index out of range")
        run = bisect.bisect_right(table.runs, i) - 1
        owner, kept = _LAST_RUN[0]
        if owner is not self:
            kept = None
        if kept is None or kept.run != run:
            kept = self._run(run, kept)
            _LAST_RUN[0] = (self, kept)
        address = (self._base + table.pcs[i]) & ADDRESS_MASK
        return CfiRow(address, kept.cfa, kept.ra, kept.fp, kept.others, self._signed(address))

    def __iter__(self) -> Iterator[CfiRow]:
        return (self[i] for i in range(len(self)))

    def _run(self, run: int, kept: _Kept | None) -> _Kept:
        """The rules of run `run`: from `kept` and the changes since when it is a few changes before,
        else from a checkpoint."""
        table = self._table
        changes = table.run_changes[run]
        rule_at, align = table.frames.rule_at, table.data_align
        ra_column, fp_column = table.ra_column, table.fp_column
        if kept is None or not kept.changes <= changes <= kept.changes + table.interval:
            state = table.columns_at(changes)
            cfa = _cfa_rule(table.cfa_of(state.get(CFA_BASE, NO_RULE), state.get(CFA_OFFSET, NO_RULE)))
            ra_at, fp_at = state.get(ra_column, NO_RULE), state.get(fp_column, NO_RULE)
            ra = rule_at(ra_at, align) if ra_at != NO_RULE else SAME
            fp = rule_at(fp_at, align) if fp_at != NO_RULE else SAME
            others = {
                column - 2: rule_at(at, align)
                for column, at in state.items()
                if at != NO_RULE and column not in (CFA_BASE, CFA_OFFSET, ra_column, fp_column)
            }
            return _Kept(run, changes, state, cfa, ra, fp, others)
        state, cfa, ra, fp, others = dict(kept.state), kept.cfa, kept.ra, kept.fp, kept.others
        copied = False
        log = table.log
        for i in range(kept.changes, changes):
            at, column = divmod(log[i], 256)
            state[column] = at
            if column <= CFA_OFFSET:
                cfa = None  # type: ignore[assignment]
            elif column == ra_column:
                ra = rule_at(at, align) if at != NO_RULE else SAME
            elif column == fp_column:
                fp = rule_at(at, align) if at != NO_RULE else SAME
            else:
                if not copied:  # the rows of the run before keep theirs
                    others, copied = dict(others), True
                if at == NO_RULE:
                    others.pop(column - 2, None)
                else:
                    others[column - 2] = rule_at(at, align)
        if cfa is None:
            cfa = _cfa_rule(table.cfa_of(state.get(CFA_BASE, NO_RULE), state.get(CFA_OFFSET, NO_RULE)))
        return _Kept(run, changes, state, cfa, ra, fp, others)

    def _signed(self, address: int) -> bool:
        if self._signing is None:
            return False
        at, states = self._signing
        i = bisect.bisect_right(at, address) - 1
        return bool(states[i]) if i >= 0 else False


class _Kept(NamedTuple):
    """A run of rows made: its number, its changes, its columns (those ever set), its rules."""

    run: int
    changes: int
    state: dict[int, int]
    cfa: CfiRule
    ra: CfiRule
    fp: CfiRule
    others: dict[int, CfiRule]


_LAST_RUN: list[tuple[FdeRows | None, _Kept | None]] = [(None, None)]
"""The rows whose run was made last, and that run: rows of a run share its rules, and rows are asked for
in order (the next run is made from it, by the changes between). One for the process, not one per FDE:
a table of thousands of FDEs, each asked for a row, keeps none of their rules."""


class _Shifted(Sequence[int]):
    """Addresses relative to a function's start, as addresses."""

    __slots__ = ("_base", "_pcs")

    def __init__(self, pcs: Sequence[int], base: int) -> None:
        self._pcs = pcs
        self._base = base

    def __len__(self) -> int:
        return len(self._pcs)

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> list[int]: ...
    def __getitem__(self, i: int | slice) -> int | list[int]:
        if isinstance(i, slice):
            return [(self._base + pc) & ADDRESS_MASK for pc in self._pcs[i]]
        return (self._base + self._pcs[i]) & ADDRESS_MASK


def _cfa_rule(cfa: CfaState) -> CfiRule:
    """A CFA rule: `reg + offset`, or an expression (a register without an offset is refused as the
    table is made)."""
    reg, offset, expr = cfa
    if expr is not None or reg is None:
        return Unexpressible("CFA expression", expr or b"")
    return rule(Kind.VALUE, reg, offset)
