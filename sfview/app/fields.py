"""The section as a tree of fields: every byte named, placed and explained.

This is the learner's view of the format. Each `Field` has a dotted path as
the Kaitai objects name it (`fdes[12].func_info.fre_type`), its byte range,
its value, the `doc:` written for it in `sframe.ksy`, and, for bit fields, the
bits it occupies. It is built from the debug parser, whose position records
give the ranges, one record at a time as the tree is opened, so that a big
section costs nothing until a person looks at it.
"""

from __future__ import annotations

import bisect
import contextlib
import operator
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from kaitaistruct import KaitaiStruct

from sfview import rule_notation
from sfview.app import format_docs, notation
from sfview.edit.patches import Slot
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe_debug import Sframe as SframeDebug
from sfview.generated.sframe_docs import ENUMS, TYPES
from sfview.sframe.model import terms
from sfview.sframe.model.lazy import Lazy
from sfview.sframe.model.records import OFFSET_SIZES, START_ADDR_SIZES
from sfview.sframe.model.section import FLEX_WORDS, PARSE_ERRORS, Function, Row, Section, Span
from sfview.sframe.model.stream import BufferStream


@dataclass(eq=False)
class Field:
    """One node of the field tree: a structure, an array, or a value."""

    name: str
    path: str
    span: Span
    kind: str
    """`struct`, `array`, `int`, `bits`, `bytes` or `group`."""
    value: Any = None
    type_name: str | None = None
    doc: str = ""
    enum: str | None = None
    bits: tuple[int, int] | None = None
    """For a bit field: (highest, lowest) bit number within its byte, 7 = MSB."""
    width: int = 0
    """For a bit field: its width in bits."""
    parent: Field | None = None
    meaning: str = ""
    """What the value means here, in this section (filled by `explain`)."""
    loader: Callable[[Field], Sequence[Field]] | None = field(default=None, repr=False)
    _children: Sequence[Field] | None = field(default=None, repr=False)
    fde: int | None = None
    """The FDE this field belongs to (its own, its FREs' and its attribute block's), else None."""
    fre: int | None = None
    """The FRE (row) of that FDE this field belongs to, else None."""
    constant: bool = False
    """A field that must hold one value (the magic): shown in hex, as the spec writes it."""
    problem: str = ""
    """Why this record could not be decoded whole (a partial record: only what could be read is below it)."""

    def __post_init__(self) -> None:
        if self.parent is not None and self.fde is None:
            self.fde, self.fre = self.parent.fde, self.parent.fre

    @property
    def has_children(self) -> bool:
        """Whether the field has sub-fields, built or still to build."""
        return self.loader is not None or bool(self._children)

    def children(self) -> Sequence[Field]:
        """The sub-fields, built on first use."""
        if self._children is None:
            self._children = self.loader(self) if self.loader else []
        return self._children

    @property
    def is_bit_byte(self) -> bool:
        """A byte made of bit fields (an info byte, the flags)."""
        return self.kind == "struct" and bool(self.children()) and all(c.kind == "bits" for c in self.children())

    @property
    def display(self) -> str:
        """The value as a person reads it: `ADDR2 (1)`, `16 (0x10)`, `e2 de`."""
        if self.constant and isinstance(self.value, int):
            return f"{self.value:#x}"
        return display_value(self.value, self.enum)

    def status(self) -> str:
        """`fdes[12].func_info.fre_type = ADDR2 at 0x1d4..0x1d5`, for the status line."""
        value = f" = {self.display}" if self.kind not in ("struct", "array", "group") else ""
        if self.is_bit_byte:
            value = " = " + " ".join(f"{c.name}={c.display.split(' ')[0]}" for c in self.children())
        bits = f" bits {self.bits[0]}..{self.bits[1]}" if self.bits else ""
        return f"{self.path}{value} at {self.span.start:#x}..{self.span.end:#x}{bits}"


class RowFields(Lazy[Field]):
    """The fields of a function's rows, each built when asked for.

    A function may have a million rows; the tree shows a few of them, and
    finding the row at an offset is a binary search in the rows' positions.
    """

    def __init__(self, tree: FieldTree, parent: Field, func: Function, broken: Span | None) -> None:
        super().__init__()
        self.tree, self.parent, self.func, self.broken = tree, parent, func, broken

    def __len__(self) -> int:
        return len(self.func.rows) + (self.broken is not None)

    def _make(self, index: int) -> Field:
        rows = self.func.rows
        if index < len(rows):
            return self.tree._row_field(self.parent, self.func, rows[index])
        assert self.broken is not None
        return self.tree._broken_row_field(self.parent, self.func, self.broken)

    def index_at(self, offset: int) -> int | None:
        """The row whose bytes hold `offset`, by its position."""
        positions = self.func.rows.positions
        if self.broken is not None and offset in self.broken:
            return len(self) - 1
        i = bisect.bisect_right(positions, offset) - 1
        if 0 <= i < len(self.func.rows) and offset < positions[i + 1]:
            return i
        return None


def enum_name(enum: str, value: int) -> str | None:
    """The upper-case name of an enum value (`ADDR2`), None if it isn't defined."""
    entry = ENUMS.get(enum, {}).get(str(int(value)))
    return entry["id"].upper() if entry else None


def display_value(value: Any, enum: str | None = None) -> str:
    """A value as a person reads it: `1 (yes)`, `ADDR2 (1)`, `16 (0x10)`, `e2 de`; "" for anything else."""
    if isinstance(value, bool):
        return "1 (yes)" if value else "0 (no)"
    if enum is not None and isinstance(value, int):
        name = enum_name(enum, value)
        return f"{name} ({int(value)})" if name else f"{int(value)} (undefined)"
    if isinstance(value, int):
        return f"{value} ({value:#x})" if not -10 < value < 10 else str(value)
    if isinstance(value, bytes):
        return value.hex(" ") if value else "(empty)"
    return ""


@dataclass(frozen=True)
class Bit:
    """One bit field of an info byte, for the bit-by-bit breakdown."""

    name: str
    high: int
    low: int
    bits: str
    """The field's bits as written in the byte, e.g. `01`."""
    value: str
    doc: str
    meaning: str


class FieldTree:
    """The field tree of one section, built lazily from the debug parser."""

    def __init__(self, section: Section) -> None:
        self.section = section
        self.io = BufferStream(section.data)
        self.root_obj = SframeDebug(self.io)
        self.root_obj._read()
        self.section_obj = self.root_obj.section
        data = section.data
        self.root = Field(
            "section",
            "",
            Span(0, len(data)),
            "struct",
            type_name="section",
            doc=TYPES["section"]["doc"],
            loader=self._section_children,
        )
        self._fre_starts: tuple[list[int], Sequence[int]] | None = None
        self._function_fields: dict[int, Field] = {}
        sec = section
        self.fdes_field = Field(
            "fdes",
            "fdes",
            Span(sec.fde_start, sec.fde_start + sec.num_fdes * sec.fde_size),
            "array",
            doc=TYPES["section"]["fields"]["fdes"]["doc"],
            parent=self.root,
            loader=lambda f: [self.function_field(i) for i in range(sec.num_fdes)],
        )
        """The FDE array. Its `children()` builds a field for every FDE: views of a big
        section ask `function_field` for the ones they show instead."""

    # Building -----------------------------------------------------------

    def _section_children(self, parent: Field) -> list[Field]:
        out = self._struct_fields(self.section_obj, "section", parent)
        if not self.section.header.auxhdr_len:
            out = [f for f in out if f.name != "auxhdr"]
        sec = self.section
        fre_end = sec.fre_start + sec.header.fre_len
        fres = Field(
            "fre_subsection",
            "fre_subsection",
            Span(sec.fre_start, min(fre_end, len(sec.data))),
            "group",
            doc="The FRE sub-section: every function's frame row entries, one block per function "
            "(in version 3 each block starts with the function's attributes). Open a function "
            "under `fdes` to see its rows.",
            parent=parent,
        )
        return [*out, self.fdes_field, fres]

    def function_field(self, index: int) -> Field:
        """The field of FDE `index`, with its FREs (and v3 attributes) under it."""
        if index in self._function_fields:
            return self._function_fields[index]
        func = self.section.function(index)
        obj = self._read_record(
            func.span.start,
            lambda: SframeDebug.Section.Fde(self.io, self.section_obj, self.root_obj, self.section.little_endian),
        )
        node = Field(
            f"fdes[{index}]",
            f"fdes[{index}]",
            func.span,
            "struct",
            type_name="fde",
            doc=TYPES["fde"]["doc"],
            parent=None,
            loader=lambda f: self._fde_children(f, func, obj),
            fde=index,
        )
        node.parent = self.fdes_field
        self._function_fields[index] = node
        return node

    def _fde_children(self, node: Field, func: Function, obj: Any) -> list[Field]:
        out = self._struct_fields(obj, "fde", node)
        if self.section.version >= 3 and func.attr_span is not None:
            attr = self._read_record(
                func.attr_span.start,
                lambda: SframeDebug.Section.FdeAttr(self.io, obj, self.root_obj, self.section.little_endian),
            )
            out.append(
                self._make(attr, "attr", "fde_attr", func.attr_span, node, TYPES["fde"]["fields"]["attr"]["doc"])
            )
        rows = func.rows
        broken = self._broken_row_span(func)
        if rows or broken is not None:
            start = rows[0].span.start if rows else func.fres_start
            end = broken.end if broken is not None else rows[-1].span.end
            out.append(
                Field(
                    "fres",
                    f"{node.path}.fres",
                    Span(start, end),
                    "array",
                    doc=TYPES["fde"]["fields"]["fres"]["doc"],
                    parent=node,
                    loader=lambda f: self._row_fields(f, func, broken),
                )
            )
        return out

    def _broken_row_span(self, func: Function) -> Span | None:
        """The bytes of the row the model could not decode, up to the failing field's: a partial record
        the tree still shows (its info byte and bit fields), when that row starts inside the section."""
        rows, error = func.rows, func.rows_error
        if error is None or error.offset is None or not len(rows.positions):
            return None
        start = rows.positions[-1]
        if not start <= error.offset < len(self.section.data):
            return None  # not this row's bytes: a count or an offset blamed at its field
        return Span(start, error.offset + 1)

    def _row_fields(self, parent: Field, func: Function, broken: Span | None) -> RowFields:
        return RowFields(self, parent, func, broken)

    def _broken_row_field(self, parent: Field, func: Function, broken: Span) -> Field:
        """The partial record of the row that cannot be decoded, as far as it goes."""
        index = len(func.rows)
        obj = self._read_record(
            broken.start,
            lambda: SframeDebug.Section.Fre(
                func.fre_type, func.fde_type, self.io, None, self.root_obj, self.section.little_endian
            ),
        )
        node = self._make(obj, f"fres[{index}]", "fre", broken, parent, TYPES["fre"]["doc"])
        node.path, node.fre = f"{parent.path}[{index}]", index
        node.problem = func.rows_error.message if func.rows_error is not None else ""
        return node

    def _row_field(self, parent: Field, func: Function, row: Row) -> Field:
        obj = self._read_record(
            row.span.start,
            lambda: SframeDebug.Section.Fre(
                func.fre_type, func.fde_type, self.io, None, self.root_obj, self.section.little_endian
            ),
        )
        node = self._make(obj, f"fres[{row.index}]", "fre", row.span, parent, TYPES["fre"]["doc"])
        node.path = f"{parent.path}[{row.index}]"
        node.fre = row.index
        return node

    def _read_record(self, start: int, make: Callable[[], Any]) -> Any:
        """Read one record with the debug parser; a failing one keeps what it read."""
        self.io.seek(start)
        obj = make()
        with contextlib.suppress(*PARSE_ERRORS):
            obj._read()
        return obj

    def _make(self, obj: Any, name: str, type_name: str, span: Span, parent: Field, doc: str) -> Field:
        path = f"{parent.path}.{name}" if parent.path else name
        if _word_bits(type_name):
            # A word read as bits (a v3 control word): shown like an info byte, its bits as children.
            node = Field(name, path, span, "struct", value=obj.value, type_name=type_name, doc=doc, parent=parent)
            node._children = self._word_bit_fields(obj, type_name, node)
            node.meaning = explain(self.section, node)
            return node
        return Field(
            name,
            path,
            span,
            "struct",
            type_name=type_name,
            doc=doc,
            parent=parent,
            loader=lambda f: self._struct_fields(obj, type_name, f),
        )

    def _word_bit_fields(self, obj: Any, type_name: str, parent: Field) -> list[Field]:
        """The bit fields of a word, from the value instances that `sframe.ksy` marks with `-bits`."""
        out = []
        for name, (high, low) in _word_bits(type_name):
            info = TYPES[type_name]["fields"][name]
            value = getattr(obj, name)
            out.append(
                Field(
                    name,
                    f"{parent.path}.{name}",
                    parent.span,
                    "bits",
                    value=value,
                    doc=info["doc"],
                    bits=(high, low),
                    width=high - low + 1,
                    parent=parent,
                )
            )
        for node in out:
            node.meaning = explain(self.section, node)
        return out

    def _struct_fields(self, obj: Any, type_name: str, parent: Field) -> list[Field]:
        """The sequence fields of a Kaitai object, in order, as tree nodes."""
        spec = TYPES[type_name]
        out: list[Field] = []
        bit_pos = 0
        for name in spec["seq"]:
            info = spec["fields"][name]
            rec = obj._debug.get(name)
            if rec is None or "start" not in rec or not hasattr(obj, name):
                continue
            value = getattr(obj, name)
            path = f"{parent.path}.{name}" if parent.path else name
            doc = info["doc"]
            if "bits" in info:
                width = info["bits"]
                byte = parent.span.start + bit_pos // 8
                high = 7 - bit_pos % 8
                bit_pos += width
                out.append(
                    Field(
                        name,
                        path,
                        Span(byte, byte + 1),
                        "bits",
                        value=value,
                        type_name=info.get("type"),
                        doc=doc,
                        enum=info.get("enum"),
                        bits=(high, high - width + 1),
                        width=width,
                        parent=parent,
                    )
                )
                continue
            span = self._span(rec)
            if isinstance(value, KaitaiStruct):
                type_name = info["type"].split("(")[0]  # `control_word(offset_size)`: the type, not its arguments
                if _word_bits(type_name) and not hasattr(value, "value"):
                    continue  # a word the section ends before (a cut row): not read, as any field not read
                out.append(self._make(value, name, type_name, span, parent, doc))
            elif isinstance(value, list):
                out.append(self._array(name, path, span, value, rec.get("arr", []), info, parent))
            else:
                out.append(
                    Field(
                        name,
                        path,
                        span,
                        "bytes" if isinstance(value, bytes) else "int",
                        value=value,
                        type_name=info.get("type"),
                        doc=doc,
                        enum=info.get("enum"),
                        parent=parent,
                        constant="valid" in info,
                    )
                )
        for node in out:
            node.meaning = explain(self.section, node)
        return out

    def _span(self, rec: dict[str, Any]) -> Span:
        """A field's bytes from its debug record; a field whose read failed has no end: its first byte."""
        start = rec["start"]
        return Span(start, rec.get("end", min(start + 1, len(self.section.data))))

    def _array(self, name: str, path: str, span: Span, values: list, recs: list, info: dict, parent: Field) -> Field:
        node = Field(name, path, span, "array", type_name=info.get("type"), doc=info["doc"], parent=parent)
        node._children = [
            Field(
                f"{name}[{i}]",
                f"{path}[{i}]",
                self._span(rec),
                "int",
                value=value,
                type_name=info.get("type"),
                doc=info["doc"],
                parent=node,
            )
            for i, (value, rec) in enumerate(zip(values, recs, strict=False))
        ]
        for child in node._children:
            child.meaning = explain(self.section, child)
        return node

    # Finding ------------------------------------------------------------

    def field_at(self, offset: int) -> Field:
        """The innermost field that holds the byte at `offset`."""
        node = self._record_at(offset)
        while True:
            children = node.children()
            if isinstance(children, RowFields):  # a million rows: found by position, not by looking at each
                at = children.index_at(offset)
                inner = [children[at]] if at is not None else []
            else:
                inner = [c for c in children if offset in c.span and c.kind != "group"]
            # Bit fields share their byte: the info byte that holds them stands for it.
            if not inner or inner[0].kind == "bits":
                return node
            node = inner[0]

    def _record_at(self, offset: int) -> Field:
        sec = self.section
        fde_end = sec.fde_start + sec.num_fdes * sec.fde_size
        if sec.fde_start <= offset < fde_end:
            fde = self.function_field((offset - sec.fde_start) // sec.fde_size)
            return _without(fde, ("fres", "attr"))
        if offset >= sec.fre_start:
            found = self._fre_record_at(offset)
            if found is not None:
                return found
        return self.root

    def _fre_record_at(self, offset: int) -> Field | None:
        """The FRE (or v3 attribute block) holding `offset`, found by FRE block starts."""
        starts, indexes = self._fre_block_starts()
        i = bisect.bisect_right(starts, offset) - 1  # the last block starting at or before it (of ties, the last FDE)
        if i < 0:
            return None
        index = indexes[i]
        fde = self.function_field(index)
        for child in fde.children():
            if child.name in ("fres", "attr") and offset in child.span:
                if child.name == "attr":
                    return child
                rows = child.children()
                assert isinstance(rows, RowFields)
                at = rows.index_at(offset)
                return rows[at] if at is not None else None
        return None

    def _fre_block_starts(self) -> tuple[list[int], Sequence[int]]:
        """The section offset of each function's FRE block, sorted, and the FDE index of each.

        Read straight from the FDE array, where the generated layout puts the
        FRE offset field, so that a million functions need no decoding at all:
        one `iter_unpack` over the array, sorted only if the blocks are not
        already in FDE order (they are, as linkers write them): sorting a list
        of (offset, index) pairs would hold up the first move of the hex cursor
        into the rows of a big section.
        """
        if self._fre_starts is None:
            sec = self.section
            at, char = layout.FDE[sec.version].fields["func_start_fre_off"]
            width = struct.calcsize("<" + char)
            record = struct.Struct(("<" if sec.little_endian else ">") + f"{at}x{char}{sec.fde_size - at - width}x")
            array = memoryview(sec.data)[sec.fde_start : sec.fde_start + sec.num_fdes * sec.fde_size]
            offsets = [sec.fre_start + off for (off,) in record.iter_unpack(array)]
            if all(map(operator.le, offsets, islice(offsets, 1, None))):
                self._fre_starts = (offsets, range(len(offsets)))
            else:
                indexes = sorted(range(len(offsets)), key=offsets.__getitem__)  # stable: ties in FDE order
                self._fre_starts = ([offsets[i] for i in indexes], indexes)
        return self._fre_starts

    def find(self, path: str) -> Field | None:
        """The field at `path` as the tree names it (`fdes[3].func_info.fre_type`), None if there is none.

        An FDE and a row are found by their index, not by building their
        neighbours: a path into a big section costs what it names.
        """
        node, done = self.root, ""
        while node.path != path:
            rest = path[len(done) :].removeprefix(".")
            step = re.match(r"[a-z_0-9]+(\[\d{1,19}\])?", rest)  # an index of more digits is no index
            if step is None:
                return None
            name = step[0].split("[")[0]
            inner = next((c for c in node.children() if c.name == name), None)
            if inner is None:
                inner = next((c for c in node.children() if c.name == step[0]), None)
            elif step[1] is not None:
                index = int(step[1][1:-1])
                if inner is self.fdes_field:
                    inner = self.function_field(index) if index < self.section.num_fdes else None
                else:
                    items = inner.children()
                    inner = items[index] if index < len(items) else None
            if inner is None:
                return None
            node, done = inner, inner.path
        return node

    # Teaching -----------------------------------------------------------

    def bit_breakdown(self, node: Field) -> list[Bit]:
        """For an info byte (or one of its bit fields): every bit field in it."""
        holder = node.parent if node.kind == "bits" and node.parent else node
        if holder.kind != "struct" or holder is self.root:
            return []
        bits = [c for c in holder.children() if c.kind == "bits"]
        if not bits:
            return []
        # An info byte's bits are its byte's; a control word's, its value's (its low byte is not always first).
        word = holder.value if isinstance(holder.value, int) else self.section.data[holder.span.start]
        out = []
        for b in bits:
            high, low = b.bits or (0, 0)
            raw = (word >> low) & ((1 << (high - low + 1)) - 1)
            doc = "" if format_docs.elsewhere(b.doc, self.section.version) else b.doc  # the meaning says it
            out.append(Bit(b.name, high, low, format(raw, f"0{high - low + 1}b"), b.display, doc, b.meaning))
        return out


def slot_of(node: Field, section: Section) -> Slot | str:
    """Where `node`'s value is stored and how it may be typed (its enum's names, a flags byte's flags), from the
    Kaitai description; a sentence saying why it cannot be edited when it is not a value."""
    if node.kind == "bits" and node.bits is not None:
        return Slot(node.path, node.span.start, node.span.end, bits=node.bits, names=_enum_names(node.enum))
    if node.kind == "int":
        info = _ksy_info(node)
        types = [info["type"]] if "type" in info else info.get("cases", [])
        signed = bool(types) and all(t.startswith("s") for t in types)
        return Slot(node.path, node.span.start, node.span.end, signed=signed, names=_enum_names(node.enum))
    if node.kind == "struct" and node.is_bit_byte:
        flags = {c.name: 1 << c.bits[1] for c in node.children() if c.bits is not None and c.width == 1}
        return Slot(node.path, node.span.start, node.span.end, flags=flags)
    return f"{node.path or 'the section'} is not a value: choose one of its fields, or a byte in the hex pane"


def byte_slot(offset: int) -> Slot:
    """The byte at section offset `offset`, as a number."""
    return Slot(f"byte {offset:#x}", offset, offset + 1)


def _enum_names(enum: str | None) -> dict[str, int]:
    """An enum's value names (lower case, as `sframe.ksy` writes them) → their values."""
    return {entry["id"]: int(value) for value, entry in ENUMS.get(enum, {}).items()} if enum else {}


def _ksy_info(node: Field) -> dict[str, Any]:
    """What `sframe.ksy` says of `node`'s field (its type, or the types a switch chooses from)."""
    owner = node.parent
    if owner is not None and owner.kind == "array":
        owner = owner.parent
    fields = TYPES.get(owner.type_name or "", {}).get("fields", {}) if owner is not None else {}
    return fields.get(node.name.split("[")[0], {})


def _word_bits(type_name: str) -> list[tuple[str, tuple[int, int]]]:
    """(name, (high, low)) of each value instance of `type_name` that takes bits from its word, high first."""
    fields = TYPES.get(type_name, {}).get("fields", {})
    marked = [(name, tuple(info["at"])) for name, info in fields.items() if "at" in info]
    return sorted(marked, key=lambda item: -item[1][0])  # type: ignore[return-value]


def _without(node: Field, names: tuple[str, ...]) -> Field:
    """A view of an FDE node without its out-of-line children, for lookups by offset."""
    view = Field(
        node.name,
        node.path,
        node.span,
        node.kind,
        type_name=node.type_name,
        doc=node.doc,
        parent=node.parent,
        fde=node.fde,
    )
    view._children = [c for c in node.children() if c.name not in names]
    return view


# What a value means in this section -------------------------------------


def explain(section: Section, node: Field) -> str:
    """A sentence on what `node`'s value means here, or "" when the doc says it all."""
    unused = format_docs.elsewhere(node.doc, section.version)
    if node.kind == "bits" and unused:
        # a bit the `.ksy` gives a meaning in other versions only (bit 7, a signal frame in version 3)
        set_or_clear = "set, though" if node.value else "clear, as"
        return f"{set_or_clear} unused in version {section.version} ({unused})"
    owner = node.parent
    if owner is not None and owner.kind == "array":
        owner = owner.parent
    explainer = _EXPLAINERS.get((owner.type_name if owner else None, node.name.split("[")[0]))
    if explainer is None:
        return ""
    try:
        return explainer(section, node)
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return ""


def _fde_of(section: Section, node: Field) -> Function | None:
    return section.function(node.fde) if node.fde is not None else None


def _row_of(section: Section, node: Field) -> Row | None:
    return section.function(node.fde).rows[node.fre] if node.fde is not None and node.fre is not None else None


def _flags(section: Section, node: Field) -> str:
    set_or_not = "set" if node.value else "clear"
    return {
        "fde_sorted": f"{set_or_not}: "
        + ("FDEs may be binary-searched by address" if node.value else "an unwinder must scan every FDE"),
        "frame_pointer": f"{set_or_not}: "
        + ("every function keeps a frame pointer" if node.value else "no promise that frame pointers are kept"),
        "fde_func_start_pcrel": f"{set_or_not}: "
        + (
            "start addresses are relative to their own field"
            if node.value
            else "start addresses are relative to the section"
        ),
        "reserved": "all clear, as required" if not node.value else f"{node.value:#x}: reserved bits set (invalid)",
    }.get(node.name, "")


def _func_start(section: Section, node: Field) -> str:
    func = _fde_of(section, node)
    if func is None:
        return ""
    base = (
        f"field address {section.address + func.span.start:#x}"
        if section.start_pcrel
        else f"section address {section.address:#x}"
    )
    sign = "-" if node.value < 0 else "+"
    return f"function starts at {func.start_address:#x} = {base} {sign} {abs(node.value):#x}"


def _func_size(section: Section, node: Field) -> str:
    func = _fde_of(section, node)
    return f"covers {func.start_address:#x}..{func.end_address:#x}" if func else ""


def _fre_off(section: Section, node: Field) -> str:
    return (
        f"FRE block at section offset {section.fre_start + node.value:#x} (FRE sub-section {section.fre_start:#x} "
        f"+ {node.value})"
    )


def _fre_type(section: Section, node: Field) -> str:
    func = _fde_of(section, node)
    size = START_ADDR_SIZES.get(int(node.value))
    if size is None:
        return "not a defined FRE type: the function's rows cannot be read"
    tail = f" (the function is {func.size} bytes long)" if func else ""
    return f"each row's start address takes {size} byte{'s' if size > 1 else ''}{tail}"


def _pc_type(section: Section, node: Field) -> str:
    func = _fde_of(section, node)
    if int(node.value) == 1:
        size = func.block_size if func else 0
        return f"rows match (PC - start) % {size or 'block size'}: a repeated block such as PLT entries"
    return "rows match PC - start: the last row starting at or before it applies"


def _pauth_key(section: Section, node: Field) -> str:
    if not section.is_aarch64:
        return "unused outside AArch64"
    return f"return addresses are signed with key {'B' if int(node.value) else 'A'}"


def _signal(section: Section, node: Field) -> str:
    return "a signal trampoline" if node.value else "an ordinary function"


def _offset_count(section: Section, node: Field) -> str:
    row = _row_of(section, node)
    n = int(node.value)
    if n == 0:
        return (
            "no offsets: the return address is undefined here (outermost frame)"
            if section.version >= 3
            else "no offsets"
        )
    func = _fde_of(section, node)
    if func is not None and func.flexible and row is not None:
        words = [w.replace("_", " ") for w in FLEX_WORDS if getattr(row.kaitai.flex, w, None) is not None]
        if row.ra_padding:
            words[words.index("ra control")] = "RA padding word"
        return f"{n} data words: {', '.join(words)}"
    names = ["CFA"]
    if section.fixed_ra_offset == 0:
        names.append("RA")
    if section.fixed_fp_offset == 0:
        names.append("FP")
    given = names[:n] + [f"extra {i}" for i in range(len(names), n)]
    suffix = f" ({row.offset_size} byte{'s' if row.offset_size > 1 else ''} each)" if row else ""
    return f"{n} offset{'s follow' if n > 1 else ' follows'}: {', '.join(given)}{suffix}"


def _offset_size(section: Section, node: Field) -> str:
    size = OFFSET_SIZES.get(int(node.value))
    return (
        f"each stack offset takes {size} byte{'s' if size and size > 1 else ''}"
        if size
        else "not a defined size: the row cannot be read"
    )


def _base_reg(section: Section, node: Field) -> str:
    base = "SP" if int(node.value) else "FP"
    if section.cfa_offset_scale != 1 or section.cfa_offset_bias:
        scale, bias = section.cfa_offset_scale, section.cfa_offset_bias
        return f"CFA = {base} + the first offset x {scale} + {bias}"
    return f"CFA = {base} + the first offset"


def _mangled(section: Section, node: Field) -> str:
    if not node.value:
        return "the saved return address is used as is"
    return "the saved return address is signed: strip the PAC bits before use"


def _offsets(section: Section, node: Field) -> str:
    row = _row_of(section, node)
    if row is None:
        return ""
    k = int(node.name[node.name.index("[") + 1 : -1])
    if k == 0:
        offset = section.cfa_offset(node.value)
        sign = "-" if offset < 0 else "+"
        rule = f"CFA = {terms.BASE_REG_NAMES[row.base_reg].upper()} {sign} {abs(offset)}"
        decoded = notation.stored_cfa_offset(section, node.value)
        return f"{decoded}: {rule}" if decoded else rule
    if k == section.ra_index:
        if row.ra_padding:
            return f"0, the padding word: {notation.saved_words(section, 'RA', row.ra)}"
        if not row.ra.saved_on_stack and row.ra.is_value:
            return f"{notation.stored_register(section, node.value)}: the caller's return address is there"
        return f"the caller's return address is saved at CFA {node.value:+d}"
    if k == section.fp_index:
        if not row.fp.saved_on_stack and row.fp.is_value:
            return f"{notation.stored_register(section, node.value)}: the caller's frame pointer is there"
        return f"the caller's frame pointer is saved at CFA {node.value:+d}"
    return "an offset this ABI gives no meaning"


def _start_addr(section: Section, node: Field) -> str:
    row = _row_of(section, node)
    func = _fde_of(section, node)
    if row is None or func is None:
        return ""
    if func.pcmask:
        return f"applies from offset {node.value:#x} of every {func.block_size or '?'}-byte block"
    return f"applies from {row.address:#x} = function start {func.start_address:#x} + {node.value:#x}"


_ENTITY_NAMES = {"cfa": "CFA", "ra": "RA", "fp": "FP"}


def _entity(node: Field) -> str:
    """`cfa`, `ra` or `fp`: which rule a flexible FRE's word belongs to, from its name (`ra_control`)."""
    return node.name.split("_")[0]


def _entity_rule(section: Section, node: Field) -> str:
    """`CFA = rsp + 8`, `RA = *(CFA - 8)`: the rule the word takes part in, from the decoded row."""
    row = _row_of(section, node)
    entity = _entity(node)
    if row is None or entity not in _ENTITY_NAMES:
        return ""
    return f"{_ENTITY_NAMES[entity]} = {rule_notation.rule_formula(section, getattr(row, entity))}"


def _control_word(section: Section, node: Field) -> str:
    if _entity(node) == "ra" and node.value == 0:
        row = _row_of(section, node)
        default = f"; {notation.saved_words(section, 'RA', row.ra)}" if row is not None and row.ra_padding else ""
        return f"0, the padding word: no RA offset word follows, the RA keeps its default rule{default}"
    return _entity_rule(section, node)


def _flex_offset(section: Section, node: Field) -> str:
    holder = node.parent
    if holder is None:
        return ""
    rule = _entity_rule(section, holder)
    decoded = notation.stored_cfa_offset(section, int(node.value)) if _entity(holder) == "cfa" else ""
    return f"{decoded}: {rule}" if decoded and rule else rule


def _control_bit(section: Section, node: Field) -> str:
    word = node.parent
    if word is None:
        return ""
    reg_p = int(word.value) & 1
    cfa = _entity(word) == "cfa"
    value = int(node.value)
    if node.name == "reg_p":
        if value:
            return "1: the base is the register that regnum names"
        return "0: the base would be the CFA itself, which a CFA rule cannot use" if cfa else "0: the base is the CFA"
    if node.name == "deref_p":
        if not reg_p and not cfa:
            return "the value was saved on the stack at CFA + offset"
        return "1: the value is loaded from base + offset" if value else "0: the value is base + offset itself"
    if node.name == "regnum":
        if not reg_p:
            return "unused: the base is the CFA"
        return f"DWARF register {value}: {terms.register_name(section.abi, value)}"
    return "0, as required" if not value else "1: a reserved bit is set (invalid)"


def _sub_section_offset(section: Section, node: Field) -> str:
    """Where `fdeoff`/`freoff` land: counted from the end of the header (and its auxiliary header)."""
    what, start = (
        ("the FDE array", section.fde_start) if node.name == "fdeoff" else ("the FRE sub-section", section.fre_start)
    )
    return f"{what} starts at section offset {start:#x} = header end {section.header_end:#x} + {node.value:#x}"


def _abi(section: Section, node: Field) -> str:
    return terms.abi_name(int(node.value))


def _fixed(section: Section, node: Field) -> str:
    what = "FP" if "fp" in node.name else "RA"
    if node.value:
        return f"the caller's {what} is always saved at CFA {node.value:+d}; rows don't track it"
    return f"0: the {what} is tracked row by row (or not saved)"


def _magic(section: Section, node: Field) -> str:
    return f"{section.endian}-endian section (bytes {section.data[0]:02x} {section.data[1]:02x})"


_EXPLAINERS: dict[tuple[str | None, str], Callable[[Section, Field], str]] = {
    ("flags", "fde_sorted"): _flags,
    ("flags", "frame_pointer"): _flags,
    ("flags", "fde_func_start_pcrel"): _flags,
    ("flags", "reserved"): _flags,
    ("preamble", "magic"): _magic,
    ("header", "abi_arch"): _abi,
    ("header", "fdeoff"): _sub_section_offset,
    ("header", "freoff"): _sub_section_offset,
    ("header", "cfa_fixed_fp_offset"): _fixed,
    ("header", "cfa_fixed_ra_offset"): _fixed,
    ("fde", "func_start"): _func_start,
    ("fde", "func_size"): _func_size,
    ("fde", "func_start_fre_off"): _fre_off,
    ("fde_info", "fre_type"): _fre_type,
    ("fde_info", "pc_type"): _pc_type,
    ("fde_info", "pauth_key"): _pauth_key,
    ("fde_info", "signal_frame"): _signal,
    ("fre", "start_addr"): _start_addr,
    ("fre", "offsets"): _offsets,
    ("fre_info", "offset_count"): _offset_count,
    ("fre_info", "offset_size"): _offset_size,
    ("fre_info", "cfa_base_reg"): _base_reg,
    ("fre_info", "mangled_ra"): _mangled,
    ("fre_flex", "cfa_control"): _control_word,
    ("fre_flex", "ra_control"): _control_word,
    ("fre_flex", "fp_control"): _control_word,
    ("flex_offset", "value"): _flex_offset,
    ("control_word", "reg_p"): _control_bit,
    ("control_word", "deref_p"): _control_bit,
    ("control_word", "regnum"): _control_bit,
    ("control_word", "reserved"): _control_bit,
}
