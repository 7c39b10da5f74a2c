"""LEB128 numbers read in work bounded by their bytes (`sfview.inputs.leb128`), by sfview and by pyelftools.

A number's every byte shifted a number of all the bits before it: 800 KB
of 0xff in a CIE's code alignment made `compare` run 87 s, and pyelftools
read `.debug_abbrev` so too. The numbers a well-formed file holds read as
before; longer ones keep their low 70 bits.
"""

from __future__ import annotations

import io

from elftools.common.construct_utils import SLEB128, ULEB128
from hypothesis import given
from hypothesis import strategies as st

from sfview.inputs.leb128 import LEB_BITS, bound_pyelftools, leb128


def _encode(value: int, signed: bool) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        done = (value in (0, -1) and bool(byte & 0x40) == (value == -1)) if signed else not value
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


@given(st.integers(0, (1 << 64) - 1), st.integers(-(1 << 63), (1 << 63) - 1), st.binary(max_size=3))
def test_numbers_of_64_bits_read_as_written(unsigned: int, signed: int, after: bytes) -> None:
    bound_pyelftools()
    for value, is_signed, reader in ((unsigned, False, ULEB128("n")), (signed, True, SLEB128("n"))):
        encoded = _encode(value, is_signed)
        assert leb128(encoded + after, 0, is_signed) == (value, len(encoded))
        assert reader.parse_stream(io.BytesIO(encoded + after)) == value


def test_a_number_of_a_hundred_thousand_bytes_keeps_its_low_bits() -> None:
    bound_pyelftools()
    long = b"\xff" * 100_000 + b"\x01"
    assert leb128(long, 0, False) == ((1 << LEB_BITS) - 1, len(long))
    assert ULEB128("n").parse_stream(io.BytesIO(long)) == (1 << LEB_BITS) - 1
    negative = b"\x80" * 100_000 + b"\x7f"
    assert leb128(negative, 0, True) == (-(1 << LEB_BITS), len(negative))
    assert SLEB128("n").parse_stream(io.BytesIO(negative)) == -(1 << LEB_BITS)
