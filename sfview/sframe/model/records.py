"""Widths and lengths of SFrame records, and the bit fields of info bytes, from the generated layout.

What a pass over rows needs to step from one FRE to the next without a
Kaitai object per row: how wide a row's start address is for each FRE type,
and how many bytes follow it for each info byte. All of it is read off
`sframe_layout.py`, generated from `sframe.ksy` like the parsers.
"""

from __future__ import annotations

import struct

from sfview.generated import sframe_layout as layout


def info_bits(byte: int, table: str, field: str) -> int:
    """A bit field of an info byte, where the generated layout says it is."""
    low, width = layout.BITS[table][field]
    return (byte >> low) & ((1 << width) - 1)


START_ADDR_SIZES = {fre_type: struct.calcsize(c) for fre_type, c in layout.FRE_START_ADDR.items()}
"""FRE type → width in bytes of each FRE's start address."""
OFFSET_SIZES = {size: struct.calcsize(c) for size, c in layout.FRE_OFFSET.items()}
"""Offset size (FRE info bits) → width in bytes of each stack offset."""

UNDEFINED_LENGTH = 1 << 62
"""The length given to a row whose offset size no version defines: past the end of any section."""


def _fre_length(info: int) -> int:
    size = OFFSET_SIZES.get(info_bits(info, "fre_info", "offset_size"))
    return UNDEFINED_LENGTH if size is None else 1 + info_bits(info, "fre_info", "offset_count") * size


FRE_LENGTHS = [_fre_length(info) for info in range(256)]
"""Info byte → bytes an FRE takes after its start address (the info byte and its data words)."""
