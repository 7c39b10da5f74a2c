"""LEB128 numbers written as DWARF writes them, for the tests and benchmarks that build CFI and line programs.

Written here from the DWARF specification (§7.6), apart from sfview's reader
(`sfview/inputs/leb128.py`), so that what the tests build checks the reader.
"""

from __future__ import annotations


def uleb(value: int) -> bytes:
    """An unsigned LEB128: seven bits a byte, the low ones first, the high bit set on all but the last."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def sleb(value: int) -> bytes:
    """A signed LEB128: as `uleb`, ending where the rest is the sign bit of the last byte."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)
