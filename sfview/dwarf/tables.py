"""A file's DWARF CFI as tables: every FDE with its rows, or by header with rows on demand.

`read_cfi` gives a `CfiTable` (every row of every FDE, for the views and
`export`), `read_cfi_outline` a `CfiOutline` (each FDE by its header, rows
worked out when asked, for `compare` over large files), and `EhFrameIndex`
finds one `.eh_frame` FDE by address through `.eh_frame_hdr` (what an
unwinder crossing a library asks). The rows' types are `cfi.py`'s; the bytes
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
from typing import TYPE_CHECKING

from sfview import ADDRESS_MASK
from sfview.dwarf.cfi import Abi, CfiFunction, abi_for
from sfview.errors import InputError
from sfview.inputs.boundary import reading

if TYPE_CHECKING:
    from sfview.dwarf.ehframe import FdeHeaders
    from sfview.inputs.elf.image import ElfImage


class CfiTable:
    """Every FDE of a file, sorted by address, with the ABI's register numbers."""

    def __init__(self, abi: Abi, functions: list[CfiFunction]) -> None:
        self.abi = abi
        self.functions = sorted(functions, key=lambda f: (f.start_address, f.section != ".eh_frame"))
        self._starts = [f.start_address for f in self.functions]

    def overlapping(self, start: int, end: int) -> list[CfiFunction]:
        """The FDEs whose ranges meet `[start, end)`."""
        out = []
        functions = self.functions
        for i in range(max(bisect.bisect_right(self._starts, start) - 1, 0), len(functions)):
            func = functions[i]
            if func.start_address >= end:
                break
            if func.end_address > start and func.size:
                out.append(func)
        return out

    def find(self, pc: int) -> CfiFunction | None:
        """The FDE covering `pc` (`.eh_frame` before `.debug_frame`)."""
        return next(iter(self.overlapping(pc, pc + 1)), None)

    @property
    def sections(self) -> list[str]:
        """The sections its FDEs come from, by name."""
        return sorted({f.section for f in self.functions})


class CfiOutline:
    """Every FDE of a file by its header, in `CfiTable`'s order (by address, `.eh_frame` first): what
    `compare` pairs SFrame's functions with, each FDE's rows worked out only when asked for (`function`),
    its shape saying when another's hold for it (`shapes`). Arrays, not an object per FDE.
    """

    def __init__(self, abi: Abi, parts: list[tuple[FdeHeaders, Sequence[int]]]) -> None:
        """`parts`: each section's headers, and which of its FDEs are in (in section order).

        What it takes from the headers is copied (each FDE's section, and its offset there where the
        headers kept its index), so that the headers, large for a large file, can go once it is made.
        """
        self.abi = abi
        self._frames = [headers.frames for headers, _ in parts]
        self.sections = sorted({headers.frames.name for headers, kept in parts if kept})
        self.starts = array.array("Q")
        self.sizes: array.array[int] | list[int] = array.array("q")
        self._part = array.array("B")
        self._offset = array.array("Q")
        self.shapes = array.array("q")
        """Each FDE's shape, a number for its section and its shape there; -1 when it has none."""
        for number, (headers, kept) in enumerate(parts):
            whole = isinstance(kept, range) and kept == range(len(headers))
            self.starts.extend(headers.starts if whole else (headers.starts[i] for i in kept))
            sizes = headers.sizes if whole else [headers.sizes[i] for i in kept]
            try:
                self.sizes.extend(array.array("q", sizes))
            except OverflowError:  # a damaged `address_range` past 2^63 (a list holds them)
                self.sizes = [*self.sizes, *sizes]
            self._part.extend(bytes([number]) * len(kept))
            self._offset.extend(headers.offsets if whole else (headers.offsets[i] for i in kept))
            shapes = headers.shapes
            self.shapes.extend(shapes[i] * len(parts) + number if shapes[i] >= 0 else -1 for i in kept)
        if any(map(operator.gt, self.starts, itertools.islice(self.starts, 1, None))):
            order = array.array("Q", self._order())
            self.starts = array.array("Q", (self.starts[k] for k in order))
            try:
                self.sizes = array.array("q", (self.sizes[k] for k in order))
            except OverflowError:  # a damaged `address_range` past 2^63
                self.sizes = [self.sizes[k] for k in order]
            self._part = array.array("B", (self._part[k] for k in order))
            self._offset = array.array("Q", (self._offset[k] for k in order))
            self.shapes = array.array("q", (self.shapes[k] for k in order))

    def _order(self) -> Iterator[int]:
        """The entries in `CfiTable`'s order: by address, `.eh_frame` first at one, else as they came. Nearly
        in order already (crt's `_start` comes first): those in order are kept, the others sorted and merged
        in, so that 40,000 FDEs need no object each."""
        starts, part = self.starts, self._part
        debug = [frames.name != ".eh_frame" for frames in self._frames]

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

    def overlapping(self, start: int, end: int) -> list[int]:
        """The FDEs (by number) whose ranges meet `[start, end)`, found as `CfiTable.overlapping` finds them."""
        out = []
        starts, sizes = self.starts, self.sizes
        for i in range(max(bisect.bisect_right(starts, start) - 1, 0), len(starts)):
            if starts[i] >= end:
                break
            if starts[i] + sizes[i] > start and sizes[i]:
                out.append(i)
        return out

    def function(self, i: int) -> CfiFunction:
        """FDE number `i` with its rows."""
        from sfview.dwarf.ehframe import fde_function  # the reader, imported when a file is read

        return fde_function(self._frames[self._part[i]], self._offset[i], self.abi)


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


def read_cfi_outline(elf: ElfImage) -> CfiOutline:
    """What `read_cfi` reads, by the FDEs' headers (rows worked out for those asked for); raises as it does."""
    from sfview.dwarf.ehframe import frame_section  # the reader, imported when a file is read

    abi = abi_for(elf)
    with reading("DWARF CFI cannot be decoded"):  # whatever the reader did not foresee, located
        eh_frame, debug_frame = frame_section(elf, ".eh_frame"), frame_section(elf, ".debug_frame")
        if eh_frame is None and debug_frame is None:
            raise InputError("no DWARF CFI (neither .eh_frame nor .debug_frame)")
        parts = []
        if eh_frame is not None:
            headers = eh_frame.headers(abi)
            parts.append((headers, range(len(headers))))
        if debug_frame is not None:
            # An FDE in both sections (`.cfi_sections .eh_frame, .debug_frame`) counts once, as the unwinder's.
            eh, headers = CfiOutline(abi, parts), debug_frame.headers(abi)
            sizes = enumerate(zip(headers.starts, headers.sizes, strict=True))
            parts.append((headers, [i for i, (start, size) in sizes if not eh.overlapping(start, start + size)]))
    return CfiOutline(abi, parts)


def read_cfi(elf: ElfImage) -> CfiTable:
    """The CFI of `.eh_frame` and `.debug_frame`, as numeric rules.

    Raises `InputError` when the file has neither, or when they cannot be decoded.
    """
    from sfview.dwarf.ehframe import frame_section  # the reader, imported when a file is read

    abi = abi_for(elf)
    with reading("DWARF CFI cannot be decoded"):  # whatever the reader did not foresee, located
        eh_frame, debug_frame = frame_section(elf, ".eh_frame"), frame_section(elf, ".debug_frame")
        if eh_frame is None and debug_frame is None:
            raise InputError("no DWARF CFI (neither .eh_frame nor .debug_frame)")
        functions = list(eh_frame.functions(abi)) if eh_frame is not None else []
        if debug_frame is not None:
            # An FDE in both sections (`.cfi_sections .eh_frame, .debug_frame`) counts once, as the unwinder's.
            eh = CfiTable(abi, list(functions))
            functions += [f for f in debug_frame.functions(abi) if not eh.overlapping(f.start_address, f.end_address)]
    return CfiTable(abi, functions)
