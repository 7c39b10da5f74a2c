"""The format model: an SFrame section as plain, version-independent objects.

The Kaitai parser generated from `sframe.ksy` knows the layout of every
version; this module turns its objects into what every view wants to ask:
a `Section` with its header facts, a `Function` per FDE with a resolved start
address, and a `Row` per FRE with its CFA, FP and RA rules interpreted for the
section's ABI. Every object keeps its Kaitai object and its `span`, the
bytes it occupies in the section.

Decoding uses the fast parser (no position records). When a record cannot be
decoded, the same bytes are read again with the debug parser, whose position
records tell exactly which field failed and at which byte.

Functions are decoded when first asked for, and a function's rows when first
asked for, so that a section with 40,000 functions opens at once.

`Span` and `Row` are plain classes with slots, not dataclasses: `sfview unwind` imports this module (see
`sfview.unwind`).
"""

from __future__ import annotations

import bisect
import gc
import itertools
import struct
import weakref
from array import array
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, NamedTuple

from kaitaistruct import KaitaiStruct, KaitaiStructError

from sfview import ADDRESS_MASK
from sfview.errors import InputError
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe.model.lazy import Lazy
from sfview.sframe.model.records import FRE_LENGTHS, OFFSET_SIZES, START_ADDR_SIZES, UNDEFINED_LENGTH, info_bits
from sfview.sframe.model.rules import CFA, PADDING, SAME, UNDEFINED, Kind, Rule, interned, padded
from sfview.sframe.model.stream import BufferStream

PARSE_ERRORS = (KaitaiStructError, EOFError, ValueError)

FLEXIBLE = int(Sframe.FdeType.flexible)
DEFAULT = int(Sframe.FdeType.default)
RULE_BYTES, RULES_MIN = 256, 1024
"""A section keeps at most one distinct rule per so many of its bytes, and at least so many (`Section.rule`,
`Section.kept_max`): as many as the bulk reader keeps row patterns (`sfview.sframe.bulk.reader.KEPT_BYTES`)."""
KEPT_FUNCTIONS = 32
"""The functions last asked for that a section keeps decoded though nothing else holds them (a lookup's
bisection, the rows the app shows)."""
FRE_MOST = (
    max(START_ADDR_SIZES.values())
    + 1
    + ((1 << layout.BITS["fre_info"]["offset_count"][1]) - 1) * max(OFFSET_SIZES.values())
)
"""The most bytes an FRE takes: the widest start address, the info byte and the most data words, of the widest
size (a flexible row's words are counted by the same bits)."""
FLEX_WORDS = ("cfa_control", "cfa_offset", "ra_control", "ra_offset", "fp_control", "fp_offset")
"""The data words of a flexible FRE, in their order (as `fre_flex` in sframe.ksy names them)."""


class Span:
    """A byte range of the section, `start` included, `end` excluded: a value, equal to a span of the same
    bytes (a `len` of its bytes makes it no tuple)."""

    __slots__ = ("end", "start")

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Span(start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Span):
            return NotImplemented
        return (self.start, self.end) == (other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __len__(self) -> int:
        return self.end - self.start

    def __contains__(self, offset: object) -> bool:
        return isinstance(offset, int) and self.start <= offset < self.end


class Row:
    """One frame row entry (FRE): the rules that hold from `address` on."""

    index: int
    start_offset: int
    """The raw start address field: an offset into the function (or block)."""
    address: int
    """The first PC this row covers: function start + `start_offset`."""
    span: Span
    info: int
    base_reg: int
    """0: the CFA is computed from the frame pointer; 1: from the stack pointer."""
    offset_size: int
    """Width in bytes of each stack offset."""
    offsets: tuple[int, ...]
    """The row's data words as stored (for a flexible FDE, control words included)."""
    mangled_ra: bool
    cfa: Rule
    fp: Rule
    ra: Rule
    kaitai: Any
    """The Kaitai object it was decoded from (None for a row decoded in bulk)."""

    __slots__ = (
        "address",
        "base_reg",
        "cfa",
        "fp",
        "index",
        "info",
        "kaitai",
        "mangled_ra",
        "offset_size",
        "offsets",
        "ra",
        "span",
        "start_offset",
    )

    def __init__(
        self,
        index: int,
        start_offset: int,
        address: int,
        span: Span,
        info: int,
        base_reg: int,
        offset_size: int,
        offsets: tuple[int, ...],
        mangled_ra: bool,
        cfa: Rule,
        fp: Rule,
        ra: Rule,
        kaitai: Any = None,
    ) -> None:
        self.index = index
        self.start_offset = start_offset
        self.address = address
        self.span = span
        self.info = info
        self.base_reg = base_reg
        self.offset_size = offset_size
        self.offsets = offsets
        self.mangled_ra = mangled_ra
        self.cfa = cfa
        self.fp = fp
        self.ra = ra
        self.kaitai = kaitai

    @property
    def ra_undefined(self) -> bool:
        """Version 3: no offsets at all, the outermost frame (nothing to unwind to)."""
        return self.ra.kind is Kind.UNDEFINED

    @property
    def ra_padding(self) -> bool:
        """The RA slot holds the padding word: the RA keeps its default rule (AMD64: the header's fixed
        offset; AArch64: still in the link register)."""
        return self.ra.padding


class _Place:
    """Where a function's fields are, from its FDE's place (`span`) and its attribute block's (`attr_offset`)."""

    section: Section
    index: int
    span: Span
    attr_offset: int

    def _at(self, section: Section, index: int) -> None:
        """Function `index` of `section`, its FDE's place (`span`) worked out."""
        self.section = section
        self.index = index
        start = section.fde_start + index * section.fde_size
        self.span = Span(start, start + section.fde_size)

    def field_offset(self, name: str) -> int:
        """Section offset of one of this FDE's fixed fields (`func_start_fre_off`, ...)."""
        return self.span.start + layout.FDE[self.section.version].fields[name][0]

    def num_fres_offset(self) -> int:
        """Section offset of `func_num_fres`: in the FDE, or (version 3) in the attribute block."""
        if self.section.version >= 3:
            return self.attr_offset + layout.FDE_ATTR.fields["func_num_fres"][0]
        return self.field_offset("func_num_fres")


class Placed(_Place):
    """A function as the bulk reader read it, for saying why its rows stop (`Section.rows_stop`) without
    decoding its FDE: its number, FRE type, row count and where its rows start. A section of damaged
    functions would otherwise decode each FDE again (the model's `Function`) only to name a field's place."""

    __slots__ = ("attr_offset", "fde_type", "fre_type", "fres_start", "index", "num_fres", "section", "span")

    def __init__(self, section: Section, index: int, fre_type: int, num_fres: int, fres_start: int) -> None:
        self._at(section, index)
        self.fre_type = fre_type
        self.fde_type = DEFAULT
        """The bulk reader reads the default type's rows alone (flexible ones are the model's)."""
        self.num_fres = num_fres
        self.fres_start = fres_start
        self.attr_offset = fres_start - (section.kaitai.attr_size if section.version >= 3 else 0)


class Function(_Place):
    """One function descriptor entry (FDE), version-independent.

    Built from the Kaitai FDE object; a function whose FDE could not be decoded
    has `error` set and holds what was read.
    """

    def __init__(self, section: Section, index: int, fde: Any, error: InputError | None) -> None:
        self._at(section, index)
        self.kaitai = fde
        self.error = error
        self.raw_start: int = getattr(fde, "func_start", 0)
        self.size: int = getattr(fde, "func_size", 0)
        self.fre_off: int = getattr(fde, "func_start_fre_off", 0)
        self.start_address = self._resolve_start()
        self.attr_offset = section.fre_start + self.fre_off
        """Section offset `func_start_fre_off` points at: the first FRE, or (v3) the attribute block."""
        info = None
        self.num_fres = 0
        self.rep_size = 0
        """`func_rep_size` as stored (0 in version 1, which has no such field)."""
        self.block_size = 0
        """What a PCMASK function's rows repeat every (the .ksy's `block_size`: version 1's is implicit)."""
        self.fde_type = 0
        self.attr_span: Span | None = None
        if error is None:
            _unlinked(fde)
            self.num_fres = fde.num_fres
            info = fde.info
            self.fde_type = int(fde.fde_type)
            if section.version >= 3:
                self.attr_span = Span(self.attr_offset, self.attr_offset + section.kaitai.attr_size)
                self.rep_size = fde.attr.func_rep_size
            elif section.version == 2:
                self.rep_size = fde.func_rep_size
            self.block_size = fde.block_size
        record_start = self.attr_offset if section.version >= 3 else self.span.start
        self.info_offset = record_start + section.kaitai.info_offset
        """Section offset of the function's info byte (in the FDE, or in the v3 attribute block)."""
        self.info_byte = section.data[self.info_offset] if info is not None else 0
        self.fre_type = int(info.fre_type) if info is not None else 0
        self.pc_type = int(info.pc_type) if info is not None else 0
        self.pauth_key = int(info.pauth_key) if info is not None else 0
        self.signal = bool(info.signal_frame) if info is not None else False
        self.rows_error: InputError | None = None

    def _resolve_start(self) -> int:
        """Start address: from the section start, or (PCREL flag) from this field.

        In a relocatable object a PCREL field holds 0 until linked; readelf (2.45 on, the releases
        that write PCREL) applies its relocation, S + A - P, and adds the field's place P: the start is
        S + A, the function's offset in its own section. So does sfview, for such sections.
        """
        field = self.span.start + layout.FDE[self.section.version].fields["func_start"][0]
        return self.section.start_from(field, self.raw_start)

    @property
    def end_address(self) -> int:
        return (self.start_address + self.size) & ADDRESS_MASK

    @property
    def pcmask(self) -> bool:
        return self.pc_type == Sframe.PcType.pcmask

    @property
    def flexible(self) -> bool:
        """Version 3 flexible FDE: each rule is a control word and an offset."""
        return self.fde_type == FLEXIBLE

    @property
    def fres_start(self) -> int:
        """Section offset of the first FRE (after the v3 attribute block)."""
        return self.kaitai.fres_start if self.error is None else self.attr_offset

    @cached_property
    def rows(self) -> Rows:
        """The function's FREs: found on first use, each decoded when asked for.

        Rows that cannot be decoded end the sequence; `rows_error` says why.
        """
        rows = Rows(self)
        self.rows_error = rows.error
        return rows

    def stored(self) -> tuple[int | None, int | None]:
        """`func_num_fres` and the info byte's FRE type as the section's bytes hold them, read even where
        the FDE could not be decoded (its `num_fres` and `fre_type` are then 0): None where the bytes are
        not in the section."""
        data, version = self.section.data, self.section.version
        at = self.num_fres_offset()
        char = (layout.FDE_ATTR if version >= 3 else layout.FDE[version]).fields["func_num_fres"][1]
        size = struct.calcsize(char)
        count = None
        if at >= 0 and at + size <= len(data):
            (count,) = struct.unpack_from(("<" if self.section.little_endian else ">") + char, data, at)
        fre_type = info_bits(data[self.info_offset], "fde_info", "fre_type") if self.info_offset < len(data) else None
        return count, fre_type

    def row_for(self, pc: int, rows: Sequence[Row] | None = None) -> Row | None:
        """The row an unwinder uses at `pc`: for PCMASK, `pc`'s offset modulo the block size (version 1's
        implicit 16 bytes included). The one rule every lookup uses: the model, the app's `g`, the
        unwinder, compare and export.

        `rows`: the function's rows, when the caller has decoded them already (compare walks them all).
        """
        offset = (pc - self.start_address) & ADDRESS_MASK
        if offset >= max(self.size, 1) and not self.pcmask:
            return None
        if self.pcmask and self.block_size:
            offset %= self.block_size
        if rows is not None:
            i = bisect.bisect_right(rows, offset, key=lambda row: row.start_offset) - 1
            return rows[i] if i >= 0 else None
        index = self.rows.index_at(offset)
        return self.rows[index] if index is not None else None


class Rows(Lazy[Row]):
    """A function's FREs: where each starts, found in one pass with `struct`; each decoded when asked for.

    Why not a list of `Row`s: a function may claim millions of rows, and the
    app shows twenty of them. The pass keeps two integers per row (its start
    offset and its section offset) and stops where the Kaitai parser would
    fail, so that `error` says why there are fewer rows than `num_fres`.
    """

    keep = 4096
    """Decoded rows kept for asking again (the rows on screen, a lookup's neighbours)."""

    def __init__(self, func: Function) -> None:
        super().__init__()
        self.section = func.section
        # What decoding a row needs of its function, not the function: a function holds its rows, and rows
        # holding it back would be a cycle, kept (with the Kaitai objects of both) until the cyclic collector
        # runs, which compare and export pause: every damaged function they hand to the model kept.
        self._fre_type, self._fde_type, self._fde = func.fre_type, func.fde_type, func.kaitai
        self._start_address = func.start_address
        self.starts = array("Q")
        """Each row's start address field (an offset into the function or block)."""
        self.positions = array("Q")
        """Each row's section offset, then where the last row ends."""
        self.error: InputError | None = None
        self.increasing = True
        """Start offsets strictly increase, as they should: a lookup may search them by halves."""
        self._highest: array | None = None
        """Where starts do not increase: the highest start up to each row (`index_at`), made when first asked."""
        if func.error is None and func.num_fres:
            self._find(func)

    def _find(self, func: Function) -> None:
        section = func.section
        data, fre_end, limit = section.data, section.fre_end, len(section.data)
        pos = func.fres_start
        if not section.fre_start <= pos <= fre_end:
            self.error = InputError(
                f"function {func.index}: its FREs would start at section offset "
                f"{pos:#x}, outside the FRE sub-section [{section.fre_start:#x}, {fre_end:#x})",
                offset=func.field_offset("func_start_fre_off"),
            )
            return
        width = START_ADDR_SIZES.get(func.fre_type)
        char = layout.FRE_START_ADDR.get(func.fre_type)
        unpack = struct.Struct(("<" if section.little_endian else ">") + (char or "B")).unpack_from
        starts, positions = self.starts, self.positions
        previous = -1
        for j in range(func.num_fres):
            end = pos + (width or 0) + 1
            if (
                limit <= pos
                or pos >= fre_end
                or width is None
                or end > limit
                or (end := end - 1 + FRE_LENGTHS[data[end - 1]]) > limit
            ):
                self.error = section.rows_stop(func, j, pos)
                break
            start = unpack(data, pos)[0]
            self.increasing &= start > previous
            previous = start
            starts.append(start)
            positions.append(pos)
            pos = end
        positions.append(pos)

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[Row]:
        """Every row in order, decoded one at a time (not kept: a pass over a million rows stays small)."""
        return (self._made.get(i) or self._make(i) for i in range(len(self)))

    def _make(self, index: int) -> Row:
        """Row `index`; its rules decoded once per distinct bytes after its start (`Section.decoded_row`)."""
        section = self.section
        start, end = self.positions[index], self.positions[index + 1]
        fre, words, rules = section.decoded_row(self._fre_type, self._fde_type, self._fde, start, end)
        info = fre.info
        start_offset = self.starts[index]  # the FRE may be another row's of the same bytes past the start
        return Row(
            index=index,
            start_offset=start_offset,
            address=(self._start_address + start_offset) & ADDRESS_MASK,
            span=Span(start, end),
            info=section.data[start + START_ADDR_SIZES[self._fre_type]],
            base_reg=int(info.cfa_base_reg),
            offset_size=OFFSET_SIZES[int(info.offset_size)],
            offsets=words,
            mangled_ra=bool(info.mangled_ra),
            cfa=rules[0],
            fp=rules[1],
            ra=rules[2],
            kaitai=fre,
        )

    def index_at(self, offset: int) -> int | None:
        """The row that applies at `offset`: the last that starts at or before it (libsframe's walk,
        which stops at the first row starting after `offset`; by halves when starts increase)."""
        if self.increasing:
            index = bisect.bisect_right(self.starts, offset) - 1
            return index if index >= 0 else None
        # The walk stops at the first start past `offset`: the first whose running highest start is past it
        # (every start before it is at or below `offset`, and so is their highest). Made once, searched by
        # halves: a walk of every row at each lookup cost a core's threads their rows each, again and again.
        if self._highest is None:
            self._highest = array("I", itertools.accumulate(self.starts, max))  # a start field is 4 bytes at most
        index = bisect.bisect_right(self._highest, offset) - 1
        return index if index >= 0 else None


class Section:
    """An SFrame section: its header, and its functions decoded on demand.

    Every size and offset comes from the generated parser's instances
    (`header_end`, `fde_size`, `fde_start`, `fre_start`, ...) or its layout
    module: nothing here repeats a fact of `sframe.ksy`.
    """

    def __init__(self, data: bytes, address: int = 0, relocated: Mapping[int, int] | None = None) -> None:
        """`relocated`, for a relocatable object: section offset of a relocated start field → the offset,
        in the section the relocation names, that the field will point to once linked."""
        self.data = data
        self.address = address
        self.io = BufferStream(data)
        try:
            self.root = Sframe(self.io)
        except PARSE_ERRORS as exc:
            raise _header_error(exc, data) from None
        self.kaitai = self.root.section
        self.preamble = self.kaitai.preamble
        self.header = self.kaitai.header
        self.version = int(self.preamble.version)
        self.flags = self.preamble.flags.value
        self.abi = int(self.header.abi_arch)
        self.little_endian = bool(self.kaitai._is_le)
        self.fixed_fp_offset = self.header.cfa_fixed_fp_offset
        self.fixed_ra_offset = self.header.cfa_fixed_ra_offset
        self.num_fdes = self.header.num_fdes
        """How many FDEs there are to decode: the header's count, unless the section is too short for it."""
        self.num_fres = self.header.num_fres
        if self.version not in layout.VERSIONS:
            versions = ", ".join(map(str, layout.VERSIONS))
            raise InputError(
                f"SFrame version {self.version} is not one sfview knows ({versions})",
                offset=layout.PREAMBLE.fields["version"][0],
            )
        sec = self.kaitai
        self.fde_size: int = sec.fde_size
        self.header_end: int = sec.header_end
        self.fde_start: int = sec.fde_start
        self.fre_start: int = sec.fre_start
        self.fre_end: int = sec.fre_end
        self.sp_reg: int = sec.sp_reg
        """The ABI's DWARF number for the stack pointer (AMD64 7, AArch64 31)."""
        self.fp_reg: int = sec.fp_reg
        """The ABI's DWARF number for the frame pointer (AMD64 6, AArch64 29)."""
        self.ra_reg: int = sec.ra_reg
        """The ABI's DWARF number for the return address (AMD64 16, AArch64 30: the link register)."""
        self.relocated_starts: Mapping[int, int] = relocated if relocated and self.start_pcrel else {}
        """Start fields whose relocation gives the function's start (see `Function._resolve_start`)."""
        self.cfa_offset_scale: int = sec.cfa_offset_scale
        self.cfa_offset_bias: int = sec.cfa_offset_bias
        """A stored CFA offset means `stored * cfa_offset_scale + cfa_offset_bias` (s390x: x8 + 160)."""
        self.sp_val_offset: int = sec.sp_val_offset
        """The caller's SP is the CFA plus this (s390x: -160; elsewhere 0)."""
        self.offset_regnum: bool = sec.offset_regnum
        """Version 2 s390x: an FP/RA offset with its low bit set names the register that holds the value."""
        self.error: InputError | None = None
        """A problem with the section as a whole, that still leaves something to show."""
        fde_end = self.fde_start + self.num_fdes * self.fde_size
        if fde_end > len(data):
            fitting = max(0, (len(data) - self.fde_start) // self.fde_size)
            self.error = InputError(
                f"header says {self.num_fdes} FDEs of {self.fde_size} bytes from section offset "
                f"{self.fde_start:#x}, which ends at {fde_end:#x}, past the section's end ({len(data):#x}); "
                f"only the first {fitting} fit",
                offset=layout.PREAMBLE.size + layout.HEADER.fields["num_fdes"][0],
            )
            self.num_fdes = fitting
        self._functions: weakref.WeakValueDictionary[int, Function] = weakref.WeakValueDictionary()
        self._recent: deque[Function] = deque(maxlen=KEPT_FUNCTIONS)
        self.fp_index, self.ra_index = self._offset_indexes()
        self.kept_max = max(RULES_MIN, len(data) // RULE_BYTES)
        """How many distinct rules, and explanations of rows that cannot be decoded, the section keeps."""
        self.rule = interned(self.kept_max)
        """Makes the section's rules, one object per distinct rule (within a bound that follows its bytes)."""
        rule = self.rule
        self._fixed_fp = rule(Kind.VALUE, CFA, self.fixed_fp_offset, True, True) if self.fixed_fp_offset else None
        self._explained: dict[tuple[int, int, bytes], tuple[str, int | None]] = {}
        """Why rows of these bytes cannot be decoded (`explain_fre`): the message after its row's name, and
        where, from the row's start."""
        self._fixed_ra = rule(Kind.VALUE, CFA, self.fixed_ra_offset, True, True) if self.fixed_ra_offset else None
        self._decoded: dict[tuple[int, int, bytes], tuple[Any, tuple[int, ...], tuple[Rule, Rule, Rule]]] = {}
        """Rows decoded through Kaitai, by FRE type, FDE type and bytes past the start address
        (`decoded_row`)."""
        self._overruns: dict[tuple[int, int, int, int], str] = {}
        """Why rows run past the FRE sub-section (`rows_overrun`), by row count, first row, FRE type and the
        rows found: the same for every function of a damaged section that reads the same rows."""

    @property
    def endian(self) -> str:
        return "little" if self.little_endian else "big"

    @property
    def fdes_sorted(self) -> bool:
        """SFRAME_F_FDE_SORTED: the FDEs may be binary-searched."""
        return bool(self.flags & Sframe.Flag.fde_sorted)

    @property
    def start_pcrel(self) -> bool:
        """SFRAME_F_FDE_FUNC_START_PCREL: start addresses count from their own field."""
        return bool(self.flags & Sframe.Flag.fde_func_start_pcrel)

    @property
    def is_aarch64(self) -> bool:
        return self.abi in (Sframe.AbiArch.aarch64_endian_big, Sframe.AbiArch.aarch64_endian_little)

    @property
    def is_s390x(self) -> bool:
        return self.abi == Sframe.AbiArch.s390x_endian_big

    def cfa_offset(self, stored: int) -> int:
        """The CFA offset a stored one means (s390x: `stored * 8 + 160`, SFRAME_V3_S390X_CFA_OFFSET_DECODE)."""
        return stored * self.cfa_offset_scale + self.cfa_offset_bias

    def __len__(self) -> int:
        return self.num_fdes

    def start_from(self, field: int, raw: int) -> int:
        """The start address a function's `func_start` field at section offset `field` holding `raw` means
        (see `Function._resolve_start`)."""
        if field in self.relocated_starts:
            return self.relocated_starts[field] & ADDRESS_MASK
        base = self.address
        if self.start_pcrel:
            base += field
        return (base + raw) & ADDRESS_MASK

    def function(self, index: int) -> Function:
        """FDE number `index`, decoded on first use: the same object while anything holds it (and for the
        `KEPT_FUNCTIONS` last asked for), decoded again once let go, so that a pass over every function
        through the model holds a few, not all (1.5 KB each, for FDEs of 16 bytes)."""
        if index < 0:
            index += self.num_fdes
        if not 0 <= index < self.num_fdes:
            raise IndexError(f"function {index} of {self.num_fdes}")
        func = self._functions.get(index)
        if func is None:
            func = self._functions[index] = self._decode_function(index)
        self._recent.append(func)
        return func

    def functions(self) -> Iterator[Function]:
        """Every function, in FDE order."""
        return (self.function(i) for i in range(self.num_fdes))

    def _decode_function(self, index: int) -> Function:
        start = self.fde_start + index * self.fde_size
        self.io.seek(start)
        try:
            fde = Sframe.Section.Fde(self.io, self.kaitai, self.root, self.little_endian)
            if self.version >= 3:
                misplaced = self._misplaced_attr(index, start, fde)
                if misplaced is not None:
                    return Function(self, index, fde, misplaced)
                fde.attr  # noqa: B018 - read the attribute block now, to report it with the FDE
        except PARSE_ERRORS:
            fde, error = self._explain(
                start,
                lambda io, parent, root: _debug().Section.Fde(io, parent, root, self.little_endian),
                f"function {index}",
                then="attr",
            )
            return Function(self, index, fde, error)
        return Function(self, index, fde, None)

    def _misplaced_attr(self, index: int, start: int, fde: Any) -> InputError | None:
        """Version 3: an attribute block outside the FRE sub-section, blamed on the offset that put it there."""
        end = min(self.fre_end, len(self.data))
        if self.fre_start <= fde.attr_pos and fde.attr_pos + self.kaitai.attr_size <= end:
            return None
        return InputError(
            f"function {index}: func_start_fre_off = {fde.func_start_fre_off} puts its attribute block at "
            f"section offset {fde.attr_pos:#x}, outside the FRE sub-section [{self.fre_start:#x}, {end:#x})",
            offset=start + layout.FDE[self.version].fields["func_start_fre_off"][0],
        )

    def fre_room(self, func: Function | Placed) -> int:
        """How many FREs of the smallest size (a start address and an info byte) fit from `func`'s first
        to the end of the FRE sub-section (or of the section, if that ends first)."""
        end = min(self.fre_end, len(self.data))
        return max(0, end - func.fres_start) // (START_ADDR_SIZES[func.fre_type] + 1)

    def rows_stop(self, func: Function | Placed, index: int, pos: int) -> InputError:
        """Why row `index` of `func`, at `pos`, cannot be read, where `Rows` stops (a caller that read the
        rows before another way asks it without reading them again)."""
        fre_end, limit = self.fre_end, len(self.data)
        if limit <= pos < fre_end:
            return self.rows_cut(func, index, pos)
        if pos >= fre_end:
            return self.rows_overrun(func, index)
        width = START_ADDR_SIZES.get(func.fre_type)
        end = pos + (width or 0) + 1
        if width is not None and end <= limit:
            end += FRE_LENGTHS[self.data[end - 1]] - 1
        out_of_bytes = width is not None and end > limit and end < UNDEFINED_LENGTH
        too_many = out_of_bytes and func.num_fres > self.fre_room(func)
        return self.rows_overrun(func, index) if too_many else self.explain_fre(func, index, pos)

    def rows_cut(self, func: Function | Placed, index: int, pos: int) -> InputError:
        """Row `index` of `func` would start past the end of a section shorter than its header says."""
        return InputError(
            f"function {func.index}: FRE {index} would start at section offset {pos:#x}, past the end of the "
            f"section ({len(self.data):#x}), which is shorter than its header says (the FRE sub-section "
            f"ends at {self.fre_end:#x})",
            offset=len(self.data) - 1,
        )

    def rows_overrun(self, func: Function | Placed, index: int) -> InputError:
        """Why row `index` of `func` starts past the FRE sub-section: its count, blamed at the field (the why
        worded once for functions alike, within `kept_max`)."""
        key = (func.num_fres, func.fres_start, func.fre_type, index)
        why = self._overruns.get(key)
        if why is None:
            room = self.fre_room(func)
            end = min(self.fre_end, len(self.data))
            if func.num_fres > room:
                why = (
                    f"more FREs than the FRE sub-section can hold from section offset {func.fres_start:#x} "
                    f"(room for at most {room}; {index} found before its end at {end:#x})"
                )
            else:
                why = f"the FRE sub-section ends at {end:#x} after {index} of them"
            if len(self._overruns) < self.kept_max:
                self._overruns[key] = why
        return InputError(f"fdes[{func.index}].func_num_fres = {func.num_fres}: {why}", offset=func.num_fres_offset())

    def decoded_row(
        self, fre_type: int, fde_type: int, fde: Any, start: int, end: int
    ) -> tuple[Any, tuple[int, ...], tuple[Rule, Rule, Rule]]:
        """The Kaitai FRE at `start` (to `end`), its data words and its (CFA, FP, RA) rules.

        What a row says past its start address depends on its bytes, FRE type and FDE type alone, so it
        is decoded once for rows of the same, within the section's bound (`kept_max`): a row through
        Kaitai costs tens of microseconds, and a function the bulk reader leaves to the model (a version 3
        flexible FDE) may have hundreds of thousands of rows of a few patterns. The FRE handed out for
        another row of the same bytes has that row's `start_addr`: callers take the start from `Rows`."""
        key = (fre_type, fde_type, self.data[start + START_ADDR_SIZES[fre_type] : end])
        known = self._decoded.get(key)
        if known is None:
            io = self.io
            io.seek(start)
            fre = Sframe.Section.Fre(fre_type, fde_type, io, fde, self.root, self.little_endian)
            if fde_type == FLEXIBLE:
                words, rules = self.flexible_rules(fre.flex)
            else:
                words = tuple(fre.offsets)
                rules = self.default_rules(int(fre.info.cfa_base_reg), words)
            _unlinked(fre)
            known = (fre, words, rules)
            if len(self._decoded) < self.kept_max:
                self._decoded[key] = known
        return known

    def explain_fre(self, func: Function | Placed, index: int, start: int) -> InputError:
        """Why FRE `index` of `func`, at `start`, cannot be decoded.

        The debug parser reads the section's header and the row again to say it: the same bytes of a row
        (and as far from the section's end) fail the same way, so what it said is kept for them, within the
        bound of the section's rules (a section of damaged functions would read it again for each)."""
        key = (func.fre_type, func.fde_type, self.data[start : start + FRE_MOST])
        known = self._explained.get(key)
        if known is None:
            _, error = self._explain(
                start,
                lambda io, parent, root: _debug().Section.Fre(
                    func.fre_type, func.fde_type, io, parent, root, self.little_endian
                ),
                "",
            )
            known = (error.message, None if error.offset is None else error.offset - start)
            if len(self._explained) < self.kept_max:
                self._explained[key] = known
        message, at = known
        return InputError(f"function {func.index}: FRE {index}{message}", offset=None if at is None else start + at)

    def _explain(self, start: int, make: Any, what: str, then: str | None = None) -> tuple[Any, InputError]:
        """Read a record again with the debug parser, to locate the field that fails."""
        io = BufferStream(self.data)
        root = _debug()(io)
        root._read()
        io.seek(start)
        obj = make(io, root.section, root)
        try:
            obj._read()
            if then and self.version >= 3:
                getattr(obj, then)
        except PARSE_ERRORS as exc:
            return obj, _inside(kaitai_error(exc, obj, what), len(self.data))
        return obj, InputError(f"{what}: cannot be decoded", offset=start)

    def find_function(self, pc: int) -> Function | None:
        """The function whose range holds `pc` (binary search when sorted; else the first in FDE order, the
        FDEs' starts and sizes read from their bytes, only those that hold `pc` decoded)."""
        if self.fdes_sorted:
            starts = _LazyStarts(self)
            i = bisect.bisect_right(starts, pc) - 1
            candidates: Iterable[Function] = [self.function(i)] if i >= 0 else []
        else:
            placed = self._placed
            candidates = (
                self.function(i)
                for i, (start, size) in enumerate(zip(placed.starts, placed.sizes, strict=True))
                if start <= pc < start + max(size, 1)
            )
        for func in candidates:
            if func.start_address <= pc < func.start_address + max(func.size, 1):
                return func
        return None

    def around(self, pc: int) -> tuple[Function | None, Function | None]:
        """The functions that start last at or before `pc` and first after it (binary search when sorted)."""
        if self.fdes_sorted:
            i = bisect.bisect_right(_LazyStarts(self), pc)
            before = self.function(i - 1) if i > 0 else None
            after = self.function(i) if i < len(self) else None
            return before, after
        starts = self._placed.starts
        order = sorted(range(self.num_fdes), key=starts.__getitem__)
        at = bisect.bisect_right([starts[i] for i in order], pc)
        decoded = (self.function(i) for i in reversed(order[:at]))
        before = next((f for f in decoded if f.error is None and f.start_address <= pc), None)
        later = (self.function(i) for i in order[at:])
        after = next((f for f in later if f.error is None and f.start_address > pc), None)
        return before, after

    @cached_property
    def _placed(self) -> _Extents:
        """Every FDE's start address and size, read from its bytes (for the lookups of an unsorted section)."""
        record = layout.FDE[self.version]
        fde = struct.Struct(("<" if self.little_endian else ">") + record.format)
        names = list(record.fields)  # in the record's order, as struct unpacks them
        start_index, size_index = names.index("func_start"), names.index("func_size")
        placed = _Extents(array("Q"), array("Q"))
        end = self.fde_start + self.num_fdes * self.fde_size
        for index, values in enumerate(fde.iter_unpack(self.data[self.fde_start : end])):
            field = self.fde_start + index * self.fde_size + record.fields["func_start"][0]
            placed.starts.append(self.start_from(field, values[start_index]))
            placed.sizes.append(values[size_index])
        return placed

    # How FRE stack offsets are interpreted, after libsframe: the first is the
    # CFA's; the RA's comes next unless the header fixes it (AMD64), then the
    # FP's unless the header fixes that.
    def _offset_indexes(self) -> tuple[int | None, int | None]:
        ra_index = None if self.fixed_ra_offset else 1
        fp_index = None if self.fixed_fp_offset else 1 if self.fixed_ra_offset else 2
        return fp_index, ra_index

    def default_rules(self, base_reg: int, offsets: tuple[int, ...]) -> tuple[Rule, Rule, Rule]:
        """(CFA, FP, RA) from a row's offsets, as versions 1 to 3 define them.

        A version 3 row without offsets is the outermost frame; an RA offset
        of 0 is the padding word (`SFRAME_FRE_RA_OFFSET_INVALID`): an FP is
        saved, the RA is not.
        """
        if not offsets:
            return (UNDEFINED, UNDEFINED, UNDEFINED) if self.version >= 3 else (SAME, SAME, SAME)
        base = self.sp_reg if base_reg == Sframe.BaseReg.sp else self.fp_reg
        cfa = self.rule(Kind.VALUE, base, self.cfa_offset(offsets[0]))
        fp = self._fixed_fp or self._saved(offsets, self.fp_index)
        ra = self._fixed_ra or self._saved(offsets, self.ra_index)
        if ra.kind is Kind.VALUE and ra.deref and not ra.fixed and ra.offset == 0:
            ra = PADDING
        return cfa, fp, ra

    def _saved(self, offsets: tuple[int, ...], index: int | None) -> Rule:
        """An FP or RA saved at CFA + offset; version 2 s390x: in register `offset >> 1` when its low bit is 1."""
        if index is None or index >= len(offsets):
            return SAME
        offset = offsets[index]
        if self.offset_regnum and offset & Sframe.S390xAbi.offset_regnum_bit:
            return self.rule(Kind.VALUE, offset >> 1, 0, False)
        return self.rule(Kind.VALUE, CFA, offset, True)

    def flexible_rules(self, flex: Any) -> tuple[tuple[int, ...], tuple[Rule, Rule, Rule]]:
        """A version 3 flexible row: its data words, and (CFA, FP, RA) from its control words.

        The generated parser has already placed each word (CFA pair, RA pair or
        padding word, FP pair); an entity the row stops before keeps the
        header's fixed offset, else is untracked. The RA padding word keeps the
        default rule too (AMD64: CFA - 8), as libsframe and the kernel read it.
        """
        # A word the row stops before is not set on the Kaitai object at all.
        cfa_c, cfa_o, ra_c, ra_o, fp_c, fp_o = (getattr(flex, name, None) for name in FLEX_WORDS)
        words = tuple(w.value for w in (cfa_c, cfa_o, ra_c, ra_o, fp_c, fp_o) if w is not None)
        words += tuple(w.value for w in getattr(flex, "extra", None) or ())
        if not words:
            return words, (UNDEFINED, UNDEFINED, UNDEFINED)
        cfa = self._flexible_rule(cfa_c, cfa_o, None)
        if cfa.kind is Kind.VALUE and cfa.base != CFA:
            cfa = self.rule(Kind.VALUE, cfa.base, self.cfa_offset(cfa.offset), cfa.deref)
        if ra_c is not None and flex.ra_padding:
            ra = padded(self._fixed_ra or SAME)
        else:
            ra = self._flexible_rule(ra_c, ra_o, self._fixed_ra)
        fp = self._flexible_rule(fp_c, fp_o, self._fixed_fp)
        return words, (cfa, fp, ra)

    def _flexible_rule(self, control: Any, offset: Any, fixed: Rule | None) -> Rule:
        """One entity's rule; a value based on the CFA (`reg_p` clear) was saved at CFA + offset."""
        if control is None:
            return fixed or SAME
        if offset is None or control.value == 0:
            return SAME
        if not control.reg_p:
            return self.rule(Kind.VALUE, CFA, offset.value, True)
        return self.rule(Kind.VALUE, control.regnum_read, offset.value, control.deref_p)


def _unlinked(obj: Any) -> None:
    """Each Kaitai object under `obj` (the fast parser's) holds its parent weakly: a child pointing back at the
    parent that holds it is a cycle, every FDE with its info byte and every FRE with its own, kept until the
    cyclic collector runs, which compare and export pause. The generated parser never reads a child's
    `_parent` (only an FDE's, the section's), and the model holds the top object while it holds any child.

    The children are found as the collector finds them (`gc.get_referents`): `vars` would build each
    object a dict of its own, in time and memory. Where the object has a dict already (CPython gives a
    class's new objects one once another of them was given attributes in another order, as the app's
    field views do), they are its values."""
    parent = None
    referents = gc.get_referents(obj)
    for value in itertools.chain(referents, *(r.values() for r in referents if type(r) is dict)):
        if isinstance(value, KaitaiStruct):
            children: Iterable[Any] = (value,)
        elif type(value) is list and value and isinstance(value[0], KaitaiStruct):
            children = value
        else:
            continue
        for child in children:
            if child._parent is obj:
                child._parent = parent = parent or weakref.proxy(obj)
                _unlinked(child)


def _debug() -> Any:
    """The debug parser, which records where each field is: only errors need it, and it is slow to import."""
    from sfview.generated.sframe_debug import Sframe as SframeDebug

    return SframeDebug


class _Extents(NamedTuple):
    """Each FDE's start address and size, in FDE order."""

    starts: array[int]
    sizes: array[int]


class _LazyStarts:
    """The FDE start addresses as a sequence, decoding FDEs only as bisect asks."""

    def __init__(self, section: Section) -> None:
        self.section = section

    def __len__(self) -> int:
        return len(self.section)

    def __getitem__(self, index: int) -> int:
        return self.section.function(index).start_address


def _failing_field(obj: Any) -> tuple[list[str], int | None]:
    """Follow a Kaitai object's debug records to the field whose read failed."""
    path: list[str] = []
    offset = None
    while obj is not None and hasattr(obj, "_debug"):
        open_fields = [(name, rec) for name, rec in obj._debug.items() if "start" in rec and "end" not in rec]
        if not open_fields:
            break
        name, rec = open_fields[-1]
        offset = rec["start"]
        path.append(name.removeprefix("_m_"))
        child = getattr(obj, name, None)
        if rec.get("arr"):
            path[-1] += f"[{len(rec['arr']) - 1}]"
            offset = rec["arr"][-1]["start"]
            child = child[-1] if isinstance(child, list) and child else None
        obj = child
    return path, offset


def kaitai_error(exc: Exception, obj: Any, what: str) -> InputError:
    """Turn a Kaitai parse error into an `InputError` at the failing field."""
    path, offset = _failing_field(obj)
    detail = _describe_exception(exc)
    where = ".".join(path) if path else "?"
    return InputError(f"{what}: {where}: {detail}", offset=offset)


def _inside(error: InputError, size: int) -> InputError:
    """`error` at a byte of the section: a field cut short by the section's end is located at its last byte."""
    if error.offset is None or error.offset < size or size == 0:
        return error
    return InputError(f"{error.message}; the section ends at {size:#x}", offset=size - 1)


def _describe_exception(exc: Exception) -> str:
    if isinstance(exc, EOFError) or type(exc).__name__ == "EndOfStreamError":
        return f"truncated ({exc})"
    if type(exc).__name__ == "ValidationNotInEnumError":
        return f"value {exc.actual} is not a defined value"
    if type(exc).__name__ == "ValidationNotEqualError":
        return f"value {exc.actual:#x} should be {exc.expected:#x}"
    return str(exc)


def _header_error(exc: Exception, data: bytes) -> InputError:
    """Why the preamble and header could not be read, in a person's words."""
    header = layout.PREAMBLE.size + layout.HEADER.size
    if len(data) < 2:
        return InputError(f"too short for an SFrame section: {len(data)} bytes, a header takes {header}", offset=0)
    if type(exc).__name__ == "UndecidedEndiannessError":
        return InputError(
            f"bad magic {data[0]:02x} {data[1]:02x}: an SFrame section starts with "
            "0xdee2 (bytes e2 de little-endian, de e2 big-endian)",
            offset=0,
        )
    if len(data) < header and type(exc).__name__ != "ValidationNotEqualError":
        cut = [name for name, (at, char) in layout.HEADER.fields.items()
               if layout.PREAMBLE.size + at + struct.calcsize(char) > len(data)]  # fmt: skip
        return InputError(
            f"the section is too short: {len(data)} bytes, where its preamble and header take {header} "
            f"({' and '.join([', '.join(cut[:-1]), cut[-1]] if len(cut) > 1 else cut)} "
            f"{'are' if len(cut) > 1 else 'is'} missing)",
            offset=len(data) - 1,
        )
    aux_at = layout.PREAMBLE.size + layout.HEADER.fields["auxhdr_len"][0]
    if len(data) >= header and header + data[aux_at] > len(data):
        return InputError(
            f"auxhdr_len = {data[aux_at]}: the auxiliary header would end at {header + data[aux_at]:#x}, "
            f"past the section's end ({len(data):#x})",
            offset=aux_at,
        )
    root = _debug()(BufferStream(data))
    try:
        root._read()
    except PARSE_ERRORS as again:
        return _inside(kaitai_error(again, root, "header"), len(data))
    return InputError(f"header: {_describe_exception(exc)}", offset=0)
