"""A faster Kaitai stream for sections held in memory.

The Kaitai runtime's `KaitaiStream` wraps a file object: every field read
goes through `read_bytes`, a file `read` and a `struct.unpack`, and every
debug position through `tell()`; a section of tens of thousands of functions
has hundreds of thousands of fields. So `BufferStream` reads the same values
with `struct.unpack_from` straight from the bytes and keeps its position as an
integer. It implements exactly the reads the parser generated from
`sframe.ksy` makes (integers, bit fields, byte arrays), with the same errors;
a test parses every fixture through both streams and compares the results.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from kaitaistruct import BytesIO, EndOfStreamError, InvalidArgumentError, KaitaiStream


def _eof(wanted: int, available: int) -> EndOfStreamError:
    return EndOfStreamError(
        f"requested {wanted} bytes, but only {max(available, 0)} bytes available", wanted, max(available, 0)
    )


def _reader(fmt: str) -> Callable[[BufferStream], int]:
    packer = struct.Struct(fmt)
    size = packer.size
    unpack_from = packer.unpack_from

    def read(self: BufferStream) -> int:
        p = self._p
        end = p + size
        if end > self._len:
            raise _eof(size, self._len - p)
        self.bits_left = 0
        self.bits = 0
        self._p = end
        return unpack_from(self._buf, p)[0]

    return read


class BufferStream(KaitaiStream):
    """`KaitaiStream` over bytes in memory (or a mapping read as bytes, an inflated section's), with an
    integer position. Every read is this class's, from `_buf`: the `BytesIO` under it is given no
    bytes, so that a mapping is not copied into it."""

    def __init__(self, data: bytes) -> None:
        self._buf = data
        self._len = len(data)
        self._p = 0
        super().__init__(BytesIO())

    def pos(self) -> int:
        return self._p

    def seek(self, n: int) -> None:
        if n < 0:
            raise InvalidArgumentError(f"cannot seek to invalid position {n}")
        self.bits_left = 0
        self.bits = 0
        self._p = n

    def size(self) -> int:
        return self._len

    def is_eof(self) -> bool:
        return self.bits_left <= 0 and self._p >= self._len

    def _read_bytes_not_aligned(self, n: int) -> bytes:
        if n < 0:
            raise InvalidArgumentError(f"requested invalid {n} amount of bytes")
        p = self._p
        end = p + n
        if end > self._len:
            raise _eof(n, self._len - p)
        self._p = end
        return self._buf[p:end]

    def read_bytes_full(self) -> bytes:
        self.align_to_byte()
        data = self._buf[self._p :]
        self._p = self._len
        return data

    def read_bits_int_be(self, n: int) -> int:
        """Big-endian bit fields; the common case (within the next byte) inline."""
        left = self.bits_left
        if n <= left:
            left -= n
            value = self.bits >> left
            self.bits &= (1 << left) - 1
            self.bits_left = left
            return value
        need = n - left
        p = self._p
        if need > 8 or p >= self._len:
            return super().read_bits_int_be(n)
        byte = self._buf[p]
        self._p = p + 1
        left = 8 - need
        self.bits_left = left
        value = (self.bits << need) | (byte >> left)
        self.bits = byte & ((1 << left) - 1)
        return value

    def read_u1(self) -> int:
        p = self._p
        if p >= self._len:
            raise _eof(1, 0)
        self.bits_left = 0
        self.bits = 0
        self._p = p + 1
        return self._buf[p]

    read_s1 = _reader("b")
    read_u2le = _reader("<H")
    read_u2be = _reader(">H")
    read_s2le = _reader("<h")
    read_s2be = _reader(">h")
    read_u4le = _reader("<I")
    read_u4be = _reader(">I")
    read_s4le = _reader("<i")
    read_s4be = _reader(">i")
    read_u8le = _reader("<Q")
    read_u8be = _reader(">Q")
    read_s8le = _reader("<q")
    read_s8be = _reader(">q")
