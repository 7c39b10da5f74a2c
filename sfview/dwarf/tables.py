"""A file's DWARF CFI as tables: every FDE by its header, its rows worked out on demand.

`read_cfi` gives a `CfiTable` (every FDE of the file by address, held in
arrays, each FDE's function made when asked for: the views, `compare`, an
unwind without `.eh_frame_hdr`), and `EhFrameIndex` finds one `.eh_frame`
FDE by address through `.eh_frame_hdr` (what an unwinder crossing a library
asks). The rows' types are `cfi.py`'s; the bytes
are read by `ehframe.py`, imported only when a file is read, so that an
unwind that never crosses into DWARF does not load it.
"""

from __future__ import annotations

import array
import bisect
import heapq
import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from sfview import ADDRESS_MASK
from sfview.dwarf.cfi import Abi, CfiFunction, MadeFunctions, abi_for
from sfview.errors import InputError
from sfview.inputs.boundary import reading

if TYPE_CHECKING:
    from sfview.inputs.elf.image import ElfImage


class Fdes(Protocol):
    """One section's FDEs in its order (`ehframe.FdeHeaders`, or functions already made): each one's start
    (masked to 64 bits), size and shape (-1: none) as numbers, its `CfiFunction` made when asked for."""

    name: str
    """The section's name (`.eh_frame` first among FDEs at one address)."""
    starts: Sequence[int]
    sizes: Sequence[int]
    shapes: Sequence[int]

    def __len__(self) -> int: ...

    def function(self, i: int) -> CfiFunction: ...


class _Made:
    """Functions already made, read from elsewhere (a Breakpad file), as the FDEs of a `CfiTable`."""

    def __init__(self, name: str, functions: list[CfiFunction]) -> None:
        self.name = name
        self.functions = functions
        self.starts = [f.start_address for f in functions]
        self.sizes = [f.size for f in functions]
        self.shapes = [-1] * len(functions)

    def __len__(self) -> int:
        return len(self.functions)

    def function(self, i: int) -> CfiFunction:
        return self.functions[i]


class CfiTable(MadeFunctions):
    """Every FDE of a file by its header, sorted by address (`.eh_frame` first at one), with the ABI's
    register numbers: each FDE's `CfiFunction`, rows included, made when asked for (an index, `find`:
    a new object each time, equal to the last), its number in the table what identifies it; its shape
    (`shapes`) says when another's rows hold for it. Arrays, not an object per FDE.
    """

    def __init__(self, abi: Abi, parts: list[tuple[Fdes, Sequence[int]]]) -> None:
        """`parts`: each section's FDEs, and which of them are in (in section order); held, each function
        made by its part."""
        self.abi = abi
        self._parts = [fdes for fdes, _ in parts]
        self.sections = sorted({fdes.name for fdes, kept in parts if kept})
        """The sections its FDEs come from, by name."""
        self.starts = array.array("Q")
        self.sizes: array.array[int] | list[int] = array.array("q")
        self._part = array.array("B")
        self._index = array.array("Q")
        self.shapes = array.array("q")
        """Each FDE's shape, a number for its section and its shape there; -1 when it has none."""
        for number, (fdes, kept) in enumerate(parts):
            whole = isinstance(kept, range) and kept == range(len(fdes))
            self.starts.extend(fdes.starts if whole else (fdes.starts[i] for i in kept))
            sizes = fdes.sizes if whole else [fdes.sizes[i] for i in kept]
            try:
                self.sizes.extend(array.array("q", sizes))
            except OverflowError:  # a damaged `address_range` past 2^63 (a list holds them)
                self.sizes = [*self.sizes, *sizes]
            self._part.extend(bytes([number]) * len(kept))
            self._index.extend(kept)
            shapes = fdes.shapes
            self.shapes.extend(shapes[i] * len(parts) + number if shapes[i] >= 0 else -1 for i in kept)
        if any(map(operator.gt, self.starts, itertools.islice(self.starts, 1, None))):
            order = array.array("Q", self._order())
            self.starts = array.array("Q", (self.starts[k] for k in order))
            try:
                self.sizes = array.array("q", (self.sizes[k] for k in order))
            except OverflowError:  # a damaged `address_range` past 2^63
                self.sizes = [self.sizes[k] for k in order]
            self._part = array.array("B", (self._part[k] for k in order))
            self._index = array.array("Q", (self._index[k] for k in order))
            self.shapes = array.array("q", (self.shapes[k] for k in order))

    @classmethod
    def of(cls, abi: Abi, functions: list[CfiFunction]) -> CfiTable:
        """A table of functions already made, all of one section (a Breakpad file's)."""
        return cls(abi, [(_Made(functions[0].section if functions else "", functions), range(len(functions)))])

    def _order(self) -> Iterator[int]:
        """The entries by address, `.eh_frame` first at one, else as they came. Nearly in order already
        (crt's `_start` comes first): those in order are kept, the others sorted and merged in, so that
        40,000 FDEs need no object each."""
        starts, part = self.starts, self._part
        debug = [fdes.name != ".eh_frame" for fdes in self._parts]

        def key(k: int) -> tuple[int, bool, int]:
            return starts[k], debug[part[k]], k

        kept, misplaced = array.array("Q"), []
        last = (-1, False, -1)
        for k in range(len(starts)):
            if key(k) >= last:
                kept.append(k)
                last = key(k)
            else:
                misplaced.append(k)
        return heapq.merge(kept, sorted(misplaced, key=key), key=key)

    def __len__(self) -> int:
        return len(self.starts)

    def function(self, i: int) -> CfiFunction:
        """FDE number `i` with its rows, made by its section's FDEs."""
        return self._parts[self._part[i]].function(self._index[i])

    def overlapping(self, start: int, end: int) -> list[int]:
        """The FDEs (by number) whose ranges meet `[start, end)`."""
        out = []
        starts, sizes = self.starts, self.sizes
        for i in range(max(bisect.bisect_right(starts, start) - 1, 0), len(starts)):
            if starts[i] >= end:
                break
            if starts[i] + sizes[i] > start and sizes[i]:
                out.append(i)
        return out

    def find(self, pc: int) -> CfiFunction | None:
        """The FDE covering `pc` (`.eh_frame` before `.debug_frame`)."""
        found = self.overlapping(pc, pc + 1)
        return self.function(found[0]) if found else None


class EhFrameIndex:
    """A file's `.eh_frame` FDEs found one at a time, by address.

    What an unwinder crossing a library needs is the FDE of two or three PCs:
    the address is looked up in `.eh_frame_hdr`'s sorted table (`PT_GNU_EH_FRAME`,
    written by the linker for exactly this), and only the FDE it points at is
    read. A static program has no `.eh_frame_hdr` (gcc does not ask ld for one):
    the same table is built once from the FDEs' headers, without working out
    any FDE's rows. `usable` is False when neither can be had.
    """

    def __init__(self, elf: ElfImage) -> None:
        from sfview.dwarf.ehframe import frame_section, hdr_table  # the reader, imported when a file is read

        self.abi = abi_for(elf)
        self.usable = False
        eh_frame = frame_section(elf, ".eh_frame")
        if eh_frame is None:
            return
        table = hdr_table(elf, eh_frame)
        if table is None:
            try:
                places = sorted((start & ADDRESS_MASK, offset) for start, offset in eh_frame.fde_places())
            except InputError:
                return
            table = [start for start, _ in places], [offset for _, offset in places]
        self._starts, self._offsets = table
        self._eh_frame = eh_frame
        self.usable = True

    def find(self, pc: int) -> CfiFunction | None:
        """The FDE covering `pc`, or None."""
        i = bisect.bisect_right(self._starts, pc) - 1
        if i < 0:
            return None
        try:
            fde = self._eh_frame.fde_at(self._offsets[i])
            if fde is None or not (fde.start & ADDRESS_MASK) <= pc < (fde.start & ADDRESS_MASK) + fde.size:
                return None  # a PC past the nearest FDE's end: its rows are not worked out
            return self._eh_frame.function(fde, self.abi)
        except InputError:
            return None


def read_cfi(elf: ElfImage) -> CfiTable:
    """The CFI of `.eh_frame` and `.debug_frame`, by the FDEs' headers (rows worked out for those asked for).

    Raises `InputError` when the file has neither, or when they cannot be decoded.
    """
    from sfview.dwarf.ehframe import frame_section  # the reader, imported when a file is read

    abi = abi_for(elf)
    with reading("DWARF CFI cannot be decoded"):  # whatever the reader did not foresee, located
        eh_frame, debug_frame = frame_section(elf, ".eh_frame"), frame_section(elf, ".debug_frame")
        if eh_frame is None and debug_frame is None:
            raise InputError("no DWARF CFI (neither .eh_frame nor .debug_frame)")
        parts: list[tuple[Fdes, Sequence[int]]] = []
        if eh_frame is not None:
            headers = eh_frame.headers(abi)
            parts.append((headers, range(len(headers))))
        if debug_frame is not None:
            # An FDE in both sections (`.cfi_sections .eh_frame, .debug_frame`) counts once, as the unwinder's.
            eh, headers = CfiTable(abi, parts), debug_frame.headers(abi)
            sizes = enumerate(zip(headers.starts, headers.sizes, strict=True))
            parts.append((headers, [i for i, (start, size) in sizes if not eh.overlapping(start, start + size)]))
    return CfiTable(abi, parts)
