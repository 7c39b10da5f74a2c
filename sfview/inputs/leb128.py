"""LEB128 numbers (DWARF's variable-length integers) read with their bits bounded.

Each byte of a LEB128 number adds seven bits above the ones before it:
read naively, a number of a million continuation bytes shifts a number of
up to seven million bits a million times, the square of its length (a
200 KB number in `.eh_frame` took 4 s, 800 KB 87 s; pyelftools reads them
so too). No field DWARF defines needs more than 64 bits: the bits past the
70th are dropped, the bytes read past, and the work stays the bytes'.
pyelftools' readers are made the same (`bound_pyelftools`).
"""

from __future__ import annotations

from typing import IO, Any

LEB_BITS = 70
"""The bits of a number kept."""


def leb128(data: bytes | memoryview, pos: int, signed: bool) -> tuple[int, int]:
    """The number at `pos` in `data` and where it ends; an `IndexError` when it runs past the end."""
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        if shift < LEB_BITS:
            value |= (byte & 0x7F) << shift
            shift += 7
        if byte < 0x80:
            if signed and byte & 0x40:
                value -= 1 << shift
            return value, pos


def bound_pyelftools() -> None:
    """Make pyelftools read its LEB128 numbers as `leb128` does (the same value for any number of 70 bits or
    fewer, which every well-formed one is). pyelftools is imported here, not with this module: an unwind reads
    its LEB128 numbers without it."""
    from elftools.common.construct_utils import SLEB128, ULEB128
    from elftools.construct import FieldError

    def from_stream(stream: IO[bytes], signed: bool) -> int:
        value, shift = 0, 0
        while True:
            data = stream.read(1)
            if len(data) != 1:
                raise FieldError("unexpected end of stream while parsing a LEB128 encoded value")
            byte = data[0]
            if shift < LEB_BITS:
                value |= (byte & 0x7F) << shift
                shift += 7
            if byte < 0x80:
                return value - (1 << shift) if signed and byte & 0x40 else value

    def unsigned(self: Any, stream: IO[bytes], context: Any) -> int:
        return from_stream(stream, False)

    def signed(self: Any, stream: IO[bytes], context: Any) -> int:
        return from_stream(stream, True)

    ULEB128._parse = unsigned
    SLEB128._parse = signed
