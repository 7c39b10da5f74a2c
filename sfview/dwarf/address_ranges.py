"""DWARF range lists (`.debug_ranges`, `.debug_rnglists`) read with `struct`: each list once, bounded.

`DW_AT_ranges` names the code of a function or a unit as a list of address ranges. pyelftools parses a list
entry by entry through `construct` each time a DIE asks, so many DIEs or units pointing into one long list made
the work their number times its length (100 units on one list of 100,000 entries: minutes). Here a list is read
once per unit and offset, at most `MAX_ENTRIES` entries, and all the lists of one file at most about half the
sections' bytes of entries (each entry takes at least 3 bytes): past either, an `InputError` costs the unit
asking its names, as any damaged DWARF does.
"""

from __future__ import annotations

import struct
from typing import Any

from sfview.errors import InputError
from sfview.inputs.leb128 import leb128

MAX_ENTRIES = 1 << 16
"""The entries of one list at most (a unit's own list names each of its functions' pieces: thousands)."""

_ADDRESS = {1: "B", 2: "H", 4: "I", 8: "Q"}

END, BASE_ADDRESSX, STARTX_ENDX, STARTX_LENGTH, OFFSET_PAIR, BASE_ADDRESS, START_END, START_LENGTH = range(8)
"""`DW_RLE_*`: the kinds of a `.debug_rnglists` entry (DWARF 5, section 7.25)."""


def _contents(section: Any) -> bytes:
    """A section's bytes as its stream holds them (`SectionStream`: no copy)."""
    return b"" if section is None else section.stream.contents


class RangeLists:
    """The range lists of one file's DWARF, each read once per (unit, base, offset)."""

    def __init__(self, info: Any) -> None:
        self.info = info
        self.ranges_v4 = _contents(info.debug_ranges_sec)
        self.ranges_v5 = _contents(info.debug_rnglists_sec)
        self.order = "<" if info.config.little_endian else ">"
        self.left = (len(self.ranges_v4) + len(self.ranges_v5)) // 2 + MAX_ENTRIES
        """The entries still to be read for this file."""
        self.read: dict[tuple[int, int, int], list[tuple[int, int]]] = {}

    def at(self, cu: Any, base: int, offset: int) -> list[tuple[int, int]]:
        """The ranges [start, end) of the list at `offset` for `cu` (`base`: its base address), empty ones
        left out."""
        key = (cu.cu_offset, base, offset)
        found = self.read.get(key)
        if found is None and not (self.ranges_v4 or self.ranges_v5):
            return []
        if found is None:
            v5 = bool(self.ranges_v5) and (cu.header.version >= 5 or not self.ranges_v4)
            found = self.read[key] = (self._v5 if v5 else self._v4)(cu, base, offset)
        return found

    def _take(self, section: str, offset: int, count: int) -> None:
        """Count one entry more of the list at `offset`, refused past the bounds."""
        self.left -= 1
        if count >= MAX_ENTRIES:
            raise InputError(f"{section}: the range list at {offset:#x} holds more than {MAX_ENTRIES} entries")
        if self.left < 0:
            raise InputError(
                f"{section}: the range list at {offset:#x} is read past the entries the sections can hold "
                "(lists read again for one unit after another)"
            )

    def _v4(self, cu: Any, base: int, offset: int) -> list[tuple[int, int]]:
        """A `.debug_ranges` list: pairs of addresses to a (0, 0), a pair whose first is all ones a new base."""
        data, size = self.ranges_v4, cu.header.address_size
        pair = struct.Struct(self.order + _ADDRESS.get(size, "Q") * 2)
        every = (1 << 8 * pair.size // 2) - 1
        out: list[tuple[int, int]] = []
        pos = offset
        for count in range(MAX_ENTRIES + 1):
            self._take(".debug_ranges", offset, count)
            if pos < 0 or pos + pair.size > len(data):
                raise InputError(f".debug_ranges: the range list at {offset:#x} runs past the section's end")
            begin, end = pair.unpack_from(data, pos)
            pos += pair.size
            if begin == 0 and end == 0:
                break
            if begin == every:
                base = end
            elif end > begin:
                out.append((begin + base, end + base))
        return out

    def _v5(self, cu: Any, base: int, offset: int) -> list[tuple[int, int]]:
        """A `.debug_rnglists` list: entries of a kind byte and its operands, to `DW_RLE_end_of_list`."""
        data = self.ranges_v5
        address = struct.Struct(self.order + _ADDRESS.get(cu.header.address_size, "Q"))
        out: list[tuple[int, int]] = []
        pos = offset

        def uleb() -> int:
            nonlocal pos
            value, pos = leb128(data, pos, signed=False)
            return value

        def addr() -> int:
            nonlocal pos
            value = address.unpack_from(data, pos)[0]
            pos += address.size
            return value

        def indexed() -> int:
            return self.info.get_addr(cu, uleb())

        try:
            for count in range(MAX_ENTRIES + 1):
                self._take(".debug_rnglists", offset, count)
                kind = data[pos]
                pos += 1
                if kind == END:
                    break
                if kind in (BASE_ADDRESSX, BASE_ADDRESS):
                    base = indexed() if kind == BASE_ADDRESSX else addr()
                    continue
                if kind == STARTX_ENDX:
                    start, end = indexed(), indexed()
                elif kind == STARTX_LENGTH:
                    start = indexed()
                    end = start + uleb()
                elif kind == OFFSET_PAIR:
                    start, end = base + uleb(), base + uleb()
                elif kind == START_END:
                    start, end = addr(), addr()
                elif kind == START_LENGTH:
                    start = addr()
                    end = start + uleb()
                else:
                    raise InputError(f".debug_rnglists: an entry of unknown kind {kind} at {pos - 1:#x}")
                if end > start:
                    out.append((start, end))
        except (IndexError, struct.error):
            raise InputError(
                f".debug_rnglists: the range list at {offset:#x} runs past the section's end ({len(data):#x})"
            ) from None
        return out
