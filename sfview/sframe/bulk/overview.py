"""A few facts of every function of a section, read in one pass, kept in compact arrays.

A table of a million functions draws a screenful, but to sort them by frame
size, keep only the PCMASK ones or make a column as wide as its widest value
it needs a fact of every function, and a `Function` each (a Kaitai object per
FDE and per FRE) would take minutes. One pass of the bulk reader gives them
all (a function the bulk reader finds unusual, a version 3 flexible FDE or
damaged bytes, is read through the model, as `check` does). Even that pass
takes seconds on a million functions, so it can run after the first screen
(`build`, in a worker): until it is done, `facts` reads a function alone,
for the rows on the screen.

What is kept is a few bytes a function, not an object each: the start, size
and FRE count in arrays, and the rest (frame size, encoding, attributes) as
the index of its shape (`Facts`), of which a section has a few hundred distinct ones.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from sfview import ADDRESS_MASK
from sfview.generated.sframe import Sframe
from sfview.sframe.bulk.reader import Bulk
from sfview.sframe.model.records import START_ADDR_SIZES
from sfview.sframe.model.rules import Kind, Rule
from sfview.sframe.model.section import Function, Section

__all__ = ["Facts", "FrameSize", "Overview", "frame_size"]

PROGRESS_EVERY = 4096
"""Functions gone through between two updates of `Overview.done` (what the progress indicator shows)."""

SAMPLED = 64
"""Functions read alone, before the pass, for the first screen's column widths (the first ones, and the last)."""


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
    """One function's facts (see `Function` for what each means).

    The facts from `frame` on are the function's shape, which many functions share: `Overview.shapes` holds
    each distinct one once, as facts whose `start`, `size` and `num_fres` are 0 (`SHAPE` picks them out)."""

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


SHAPE = slice(3, None)
"""The facts that make a function's shape (`Facts`): all but where it is and how many rows it has."""


class _Block(NamedTuple):
    """What a function's rows say: its frame size, their start offsets (and the last), how many,
    the widest's bytes."""

    frame: int | None
    offsets: Sequence[int]
    last_offset: int
    rows: int
    widest: int


class Overview:
    """Every function's `Facts` (once `ready`), and what the section's rows hold in all.

    Made empty (`Overview(section)`), it answers for a function at a time (`facts`) and its
    section-wide figures are those of a sample (`sample`); `build` goes through every function once
    and makes them whole. `of` does both at once.
    """

    def __init__(self, section: Section) -> None:
        self.section = section
        self.ready = False
        """Every function has been gone through (`build`): the arrays, counts and figures are whole."""
        self.done = 0
        """Functions gone through so far, while `build` runs (in a worker thread)."""
        self.start = array("Q")
        self.size = array("Q")
        self.num_fres = array("Q")
        self.shape = array("L")
        """Each function's index in `shapes`."""
        self.shapes: list[Facts] = []
        """Each distinct shape, once (`Facts` whose `start`, `size` and `num_fres` are 0)."""
        self.shape_counts: dict[int, int] = {}
        """How many functions have each shape."""
        self.rules: set[tuple[Rule, Rule, Rule]] = set()
        """Every distinct (CFA, FP, RA) a row of the section holds (of the sample, before `ready`)."""
        self.most_rows = 0
        """The most rows a function has (as decoded, not as a damaged count says)."""
        self.widest_row = 0
        """The most bytes one row takes."""
        self.last_address = 0
        """The highest address a function ends at or a row starts at."""
        self.sampled: list[int] = []
        """The functions `sample` read, by FDE index."""
        self._alone: dict[int, Facts] = {}

    def __len__(self) -> int:
        return self.section.num_fdes

    @classmethod
    def of(cls, section: Section) -> Overview:
        """Every function gone through, at once (a small section, or where nobody waits on a screen)."""
        overview = cls(section)
        overview.build(section)
        return overview

    # One function -----------------------------------------------------------

    def facts(self, index: int) -> Facts:
        """FDE `index`'s facts: from the arrays once `ready`, before that read alone (through the model)."""
        if self.ready:
            shape = self.shapes[self.shape[index]]
            return Facts(self.start[index], self.size[index], self.num_fres[index], *shape[SHAPE])
        facts = self._alone.get(index)
        if facts is None:
            facts = self._alone[index] = _model_facts(self.section.function(index))[0]
        return facts

    def sample(self, indexes: Iterable[int]) -> None:
        """Before the pass, the section-wide figures (rules, most rows, widest row, last address) of these
        functions, read alone: column widths for the first screen, which the pass makes whole."""
        for index in indexes:
            self.sampled.append(index)
            facts, block, rules = _model_facts(self.section.function(index))
            self._alone[index] = facts
            self.rules.update(rules)
            self._note(block)
            self.last_address = max(self.last_address, self._end(facts.start, facts.size, block))

    # Every function ---------------------------------------------------------

    def column(self, name: str) -> Sequence[Any]:
        """One fact of every function, by FDE index (`column("size")[i]`): a sort key. Once `ready`.

        A fact of the shapes is a list made at each call, not kept (it is large for a large section): the
        FDE table makes each column's order once."""
        if name in ("start", "size", "num_fres"):
            return getattr(self, name)
        field = Facts._fields.index(name)
        values = [shape[field] for shape in self.shapes]
        return [values[k] for k in self.shape]

    def passing(self, test: Callable[[Facts], bool]) -> bytes:
        """A byte per function, by FDE index: 1 if its shape passes `test`, else 0. Once `ready`.

        Each shape is tested once, and the bytes made by a C loop (`map`): a million functions in
        tens of milliseconds, for a filter word typed."""
        passes = [1 if test(shape) else 0 for shape in self.shapes]
        return bytes(map(passes.__getitem__, self.shape))

    def count(self, test: Callable[[Facts], bool]) -> int:
        """How many functions have a shape that passes `test`. Once `ready`."""
        return sum(n for k, n in self.shape_counts.items() if test(self.shapes[k]))

    @property
    def pcmask_count(self) -> int:
        """How many functions are PCMASK (PLT entries); before `ready`, of those read alone."""
        if not self.ready:
            return sum(facts.pcmask for facts in self._alone.values())
        return self.count(lambda shape: shape.pcmask)

    @property
    def flexible_count(self) -> int:
        """How many functions have version 3 flexible FDEs. Once `ready`."""
        return self.count(lambda shape: shape.flexible)

    def build(self, section: Section, progress: int = PROGRESS_EVERY) -> None:
        """Go through every function once: through the bulk reader, the unusual ones through the model of
        `section` (this overview's own, or, from a worker thread, one of the thread's own: a model's
        functions are decoded from one stream, which two threads cannot share).

        The loop runs a million times on a big section: what repeats (a block of rows, an info byte's
        fields, a shape) is worked out once, and the rest kept in locals. The arrays are filled aside and
        handed over at the end, so that nobody reads them half made.
        """
        reader = Bulk(section)
        starts, sizes, counts, shape_of = array("Q"), array("Q"), array("Q"), array("L")
        shapes: list[Facts] = []
        shape_ids: dict[tuple[Any, ...], int] = {}
        whole = Overview(section)  # the section-wide figures, made aside too
        last = 0
        for done, item in enumerate(reader.functions()):
            if isinstance(item, int):
                facts, block, found = _model_facts(section.function(item))
                whole.rules.update(found)
                whole._note(block)
                start, size, count = facts.start, facts.size, facts.num_fres
                key: tuple[Any, ...] = (facts.frame, getattr(facts.frame, "variable", False), *facts[4:])
                shape = Facts(0, 0, 0, *facts[SHAPE])
            else:
                _, start, size, _, _, read = item
                info, count = read.info, read.count
                block = read.made
                if block is None:
                    block = whole._block(reader, read.rows, info.fre_type)  # rows gone through once
                    if read.shared:  # the reader hands these rows out again
                        read.made = block
                complete = read.complete  # known once the rows have been gone through
                # One of the 256 decoded info bytes: `id` is stable.
                key = (block.frame, getattr(block.frame, "variable", False), id(info), complete)
                shape = None
            k = shape_ids.get(key)
            if k is None:
                if shape is None:
                    broken = not complete
                    shape = Facts(
                        0, 0, 0, block.frame, info.fre_type, info.pc_type, info.pauth_key, info.signal, False, broken
                    )
                k = shape_ids[key] = len(shapes)
                shapes.append(shape)
            starts.append(start)
            sizes.append(size)
            counts.append(count)
            shape_of.append(k)
            end = self._end(start, size, block)
            last = end if end > last else last
            if not done % progress:
                self.done = done
        self.rules, self.most_rows, self.widest_row = whole.rules, whole.most_rows, whole.widest_row
        self.last_address = last
        self.start, self.size, self.num_fres, self.shape, self.shapes = starts, sizes, counts, shape_of, shapes
        self.shape_counts = dict(Counter(shape_of))
        self.done = len(starts)
        self.ready = True

    @staticmethod
    def _end(start: int, size: int, block: _Block) -> int:
        """Where a function ends: its size, or its last row's start if that is further."""
        end = start + (size if size > block.last_offset else block.last_offset)
        if end > ADDRESS_MASK:  # near the top of the address space: which wraps, which does not
            end = max((start + offset) & ADDRESS_MASK for offset in (size, *block.offsets))
        return end

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


def _model_facts(func: Function) -> tuple[Facts, _Block, set[tuple[Rule, Rule, Rule]]]:
    """A function read through the model (flexible, or damaged; or alone): its facts, its block of rows,
    the rules its rows hold."""
    rows = func.rows
    offsets = array("Q", (row.start_offset for row in rows))
    block = _Block(
        frame_size([row.cfa for row in rows], func.section.sp_reg),
        offsets,
        max(offsets, default=0),
        len(rows),
        max((len(row.span) for row in rows), default=0),
    )
    broken = func.error is not None or func.rows_error is not None
    count, fre_type = func.num_fres, func.fre_type
    if func.error is not None:  # what the bytes say, not the 0s of an FDE that could not be decoded
        stored = func.stored()
        count, fre_type = (0 if value is None else value for value in stored)
    facts = Facts(
        func.start_address, func.size, count, block.frame,
        fre_type, func.pc_type, func.pauth_key, func.signal, func.flexible, broken,
    )  # fmt: skip
    return facts, block, {(row.cfa, row.fp, row.ra) for row in rows}
