"""`.debug_aranges` read with `struct` into arrays: which compilation unit covers an address.

The section is a run of units, each a header (length, version, `.debug_info` offset, address and segment
sizes) and (address, length) pairs to a pair of zeros, the first pair aligned to twice the address size.
pyelftools' `ARanges` kept a named tuple of seven fields an entry (some 40 times the entry's 16 bytes); here
an entry is three words in arrays, sorted by address as pyelftools sorts them (stably), and looked up as it
does: the entry starting last at or before an address covers it or none does. A header that cannot be read,
a unit past the section's end, a pair past its unit's end: an `InputError` naming the unit's offset.
"""

from __future__ import annotations

import bisect
import struct
from array import array

from sfview.errors import InputError

_ADDRESS = {4: "I", 8: "Q"}
"""The address sizes a unit may have (pyelftools reads those two only)."""
VERSIONS = (2, 3)
"""The versions of a unit's header (DWARF 2 to 5 all say 2; readelf reads 3 too)."""


class AddressTable:
    """The (start, length, unit offset) entries of a `.debug_aranges` section, sorted by start."""

    def __init__(self, data: bytes, little_endian: bool) -> None:
        order = "<" if little_endian else ">"
        starts, lengths, units = array("Q"), array("Q"), array("Q")
        self.listed = array("Q")
        """The offsets of the units in `.debug_info` that have entries, sorted."""
        at = 0
        while at < len(data):
            pos, unit_end, offset, pair = _header(data, at, order)
            first = len(starts)
            while pos + pair.size <= unit_end:
                address, length = pair.unpack_from(data, pos)
                pos += pair.size
                if address == 0 and length == 0:
                    break
                starts.append(address)
                lengths.append(length)
                units.append(offset)
            else:
                if pos != unit_end:
                    raise InputError(f".debug_aranges: the unit at {at:#x}: a pair runs past its end ({unit_end:#x})")
            if len(starts) > first:
                self.listed.append(offset)
            at = unit_end
        starts, lengths, units = sorted_by_start(starts, lengths, units)
        self.starts, self.lengths, self.units = starts, lengths, units
        self.listed = array("Q", sorted(set(self.listed)))

    def unit_at(self, address: int) -> int | None:
        """The offset of the unit whose entry starting last at or before `address` holds it; None if it does not."""
        at = bisect.bisect_right(self.starts, address) - 1
        if at < 0 or address >= self.starts[at] + self.lengths[at]:
            return None
        return self.units[at]

    def lists(self, offset: int) -> bool:
        """Whether the unit at `offset` in `.debug_info` has entries."""
        at = bisect.bisect_left(self.listed, offset)
        return at < len(self.listed) and self.listed[at] == offset


def sorted_by_start(starts: array, *columns: array) -> tuple[array, ...]:
    """`starts` sorted, stably (among equal starts, in their order), and each of `columns` in the same order;
    an index sorted with its start in one integer, so the sort holds one number an entry, not a tuple."""
    if all(starts[i] <= starts[i + 1] for i in range(len(starts) - 1)):
        return (starts, *columns)
    shift = len(starts).bit_length()
    keys = [start << shift | i for i, start in enumerate(starts)]
    keys.sort()
    mask = (1 << shift) - 1
    moved = tuple(array(column.typecode, (column[key & mask] for key in keys)) for column in columns)
    return (array(starts.typecode, (key >> shift for key in keys)), *moved)


def _header(data: bytes, at: int, order: str) -> tuple[int, int, int, struct.Struct]:
    """The unit at `at`: where its first pair is, where it ends, its unit's offset in `.debug_info`, and the
    layout of its pairs."""
    where = f".debug_aranges: the unit at {at:#x}"
    try:
        (length,) = struct.unpack_from(order + "I", data, at)
        pos, offset_size = at + 4, "I"
        if length == 0xFFFFFFFF:
            (length,), pos, offset_size = struct.unpack_from(order + "Q", data, pos), pos + 8, "Q"
        elif length >= 0xFFFFFFF0:
            raise InputError(f"{where}: a reserved length {length:#x}")
        end = pos + length
        if end > len(data):
            raise InputError(f"{where}: its length {length:#x} runs past the section's end ({len(data):#x})")
        version, offset, address_size, segment_size = struct.unpack_from(order + "H" + offset_size + "BB", data, pos)
    except struct.error:
        raise InputError(f"{where}: its header runs past the section's end ({len(data):#x})") from None
    if version not in VERSIONS:
        raise InputError(f"{where}: version {version}, not one of {VERSIONS}")
    if address_size not in _ADDRESS:
        raise InputError(f"{where}: an address size of {address_size} bytes, not 4 or 8")
    if segment_size:
        raise InputError(f"{where}: a segment selector of {segment_size} bytes (segmented addresses)")
    pair = struct.Struct(order + _ADDRESS[address_size] * 2)
    pos += struct.calcsize(order + "H" + offset_size + "BB")
    pos = -(-pos // pair.size) * pair.size  # the first pair aligned to its size in the section
    return pos, end, offset, pair
