"""A few facts of every function of a section, read in one pass.

A table of 40,000 functions draws a screenful, but to sort them by frame
size, keep only the PCMASK ones or make a column as wide as its widest value
it needs a fact of every function, and a `Function` each (a Kaitai object per
FDE and per FRE) would take seconds. One pass of the bulk reader gives them
all in a few tens of milliseconds; a function the bulk reader finds unusual
(a version 3 flexible FDE, damaged bytes) is read through the model, as
`check` does.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple

from sfview.generated.sframe import Sframe
from sfview.sframe.bulk import Bulk
from sfview.sframe.records import START_ADDR_SIZES
from sfview.sframe.rules import Kind, Rule
from sfview.sframe.section import ADDRESS_MASK, Function, Section

__all__ = ["Facts", "FrameSize", "Overview", "frame_size"]


class FrameSize(int):
    """A frame size that also says whether it is `variable`: a row computes the CFA from another
    register than SP (`fp+16` after `alloca` or a VLA), or from memory. Then the offsets say where
    the CFA is from FP, not how far SP moved: the frame's size is not in the rules."""

    variable: bool = False

    def __new__(cls, value: int, variable: bool = False) -> FrameSize:
        size = super().__new__(cls, value)
        size.variable = variable
        return size


def frame_size(cfas: Sequence[Rule], sp: int | None = None) -> FrameSize | None:
    """The largest CFA offset of a function's rows: at its deepest, how far the function's
    frame reaches (`sp+48`: 48 bytes). None when no row computes a CFA.

    A dereferenced CFA (a flexible rule) is a word in memory, not a distance: it does not count.
    With `sp` (the ABI's stack pointer), a CFA from any other base makes the size `variable` (the
    number stays the largest offset, for sorting).
    """
    values = [cfa for cfa in cfas if cfa.kind is Kind.VALUE]
    offsets = [cfa.offset for cfa in values if not cfa.deref]
    variable = sp is not None and any(cfa.deref or cfa.base != sp for cfa in values)
    return FrameSize(max(offsets), variable) if offsets else None


class Facts(NamedTuple):
    """One function's facts (see `Function` for what each means)."""

    start: int
    size: int
    num_fres: int
    """As the FDE says (a damaged one may say 4294967295)."""
    frame: int | None
    """`frame_size` of its rows."""
    fre_type: int
    pc_type: int
    pauth_key: int
    signal: bool
    flexible: bool
    broken: bool
    """The FDE or one of its rows cannot be decoded."""

    @property
    def pcmask(self) -> bool:
        return self.pc_type == Sframe.PcType.pcmask

    @property
    def key_b(self) -> bool:
        return self.pauth_key == Sframe.PauthKey.key_b


class _Block(NamedTuple):
    """What a function's rows say: its frame size, their start offsets (and the last), how many,
    the widest's bytes."""

    frame: int | None
    offsets: Sequence[int]
    last_offset: int
    rows: int
    widest: int


@dataclass
class Overview:
    """Every function's `Facts`, and what the section's rows hold in all."""

    functions: list[Facts] = field(default_factory=list)
    rules: set[tuple[Rule, Rule, Rule]] = field(default_factory=set)
    """Every distinct (CFA, FP, RA) a row of the section holds."""
    most_rows: int = 0
    """The most rows a function has (as decoded, not as a damaged count says)."""
    widest_row: int = 0
    """The most bytes one row takes."""
    last_address: int = 0
    """The highest address a function ends at or a row starts at."""
    _columns: dict[str, list[Any]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.functions)

    def column(self, name: str) -> list[Any]:
        """One fact of every function, by FDE index (`column("size")[i]`): a sort key, a filter's input."""
        column = self._columns.get(name)
        if column is None:
            column = self._columns[name] = list(map(itemgetter(Facts._fields.index(name)), self.functions))
        return column

    @cached_property
    def pcmask_count(self) -> int:
        """How many functions are PCMASK (PLT entries)."""
        return self.column("pc_type").count(Sframe.PcType.pcmask)

    @cached_property
    def flexible_count(self) -> int:
        """How many functions have version 3 flexible FDEs."""
        return self.column("flexible").count(True)

    @classmethod
    def of(cls, section: Section) -> Overview:
        """Read every function once: through the bulk reader, the unusual ones through the model.

        The loop runs 40,000 times on a big section, before the first screen: what repeats (a block of
        rows, an info byte's fields) is worked out once, and the rest kept in locals.
        """
        overview = cls()
        reader = Bulk(section)
        append, make = overview.functions.append, Facts._make
        # The bulk reader hands out one list per distinct block of rows and keeps it (`shared`):
        # what was made of such a list is kept by its id.
        blocks: dict[int, tuple[Iterable[tuple[int, bytes]], _Block]] = {}
        infos: dict[int, tuple[int, int, int, bool, bool, bool]] = {}
        last = 0
        for item in reader.functions():
            if isinstance(item, int):
                facts, block = overview._model_facts(section.function(item))
                append(facts)
                start, size = facts.start, facts.size
            else:
                fast, rows = item
                known = blocks.get(id(rows)) if fast.shared else None
                if known is None:
                    known = rows, overview._block(reader, rows, fast.info.fre_type)  # rows gone through once
                    if fast.shared:  # the reader keeps this list, and hands it out again
                        blocks[id(rows)] = known
                block = known[1]
                info = fast.info
                tail = infos.get(id(info))  # one of the 256 decoded info bytes: `id` is stable
                if tail is None:
                    tail = infos[id(info)] = (info.fre_type, info.pc_type, info.pauth_key, info.signal, False, False)
                start, size = fast.start_address, fast.size
                facts = make((start, size, fast.num_fres, block.frame, *tail))
                append(facts if fast.complete else facts._replace(broken=True))
            end = start + (size if size > block.last_offset else block.last_offset)
            if end > ADDRESS_MASK:  # near the top of the address space: which wraps, which does not
                end = max((start + offset) & ADDRESS_MASK for offset in (size, *block.offsets))
            last = end if end > last else last
        overview.last_address = last
        return overview

    def _note(self, block: _Block) -> _Block:
        """A block of rows seen for the first time: its rows count towards the section's widest."""
        self.most_rows = max(self.most_rows, block.rows)
        self.widest_row = max(self.widest_row, block.widest)
        return block

    def _block(self, reader: Bulk, rows: Iterable[tuple[int, bytes]], fre_type: int) -> _Block:
        """A block of rows the bulk reader read, gone through once (a function may have a million):
        its start offsets kept as an array, its patterns once each."""
        address_size = START_ADDR_SIZES[fre_type]
        offsets = array("Q")
        keys: set[bytes] = set()
        widest = 0
        for start, key in rows:
            offsets.append(start)
            if key not in keys:
                keys.add(key)
                widest = max(widest, address_size + len(key))
        patterns = [reader.pattern(key) for key in keys]
        self.rules.update((p.cfa, p.fp, p.ra) for p in patterns)
        return self._note(
            _Block(
                frame_size([p.cfa for p in patterns], reader.section.sp_reg),
                offsets,
                max(offsets, default=0),
                len(offsets),
                widest,
            )
        )

    def _model_facts(self, func: Function) -> tuple[Facts, _Block]:
        """A function read through the model (flexible, or damaged)."""
        rows = func.rows
        self.rules.update((row.cfa, row.fp, row.ra) for row in rows)
        offsets = array("Q", (row.start_offset for row in rows))
        block = self._note(
            _Block(
                frame_size([row.cfa for row in rows], func.section.sp_reg),
                offsets,
                max(offsets, default=0),
                len(rows),
                max((len(row.span) for row in rows), default=0),
            )
        )
        broken = func.error is not None or func.rows_error is not None
        facts = Facts(
            func.start_address, func.size, func.num_fres, block.frame,
            func.fre_type, func.pc_type, func.pauth_key, func.signal, func.flexible, broken,
        )  # fmt: skip
        return facts, block
