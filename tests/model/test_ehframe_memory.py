"""A whole `.eh_frame` of many small FDEs read in memory near its bytes.

Every FDE became a handful of objects (its `Fde`, the tuple of where its
instructions are, its own copy of the instruction bytes, a closure giving
pyelftools' entry, its function and rows object), all held at once: 35 times
the bytes on FDEs of 24 bytes; then a function and a rows object each, 12
times. Now they are held by their headers, in arrays, each function made when
asked for. The generated section is one CIE and 20,000 FDEs; what the rows
say is pyelftools' reading (tests/oracles/test_ehframe.py compares every row
of real files).
"""

from __future__ import annotations

import io
import struct
import tracemalloc

from elftools.dwarf.callframe import FDE, CallFrameInfo
from elftools.dwarf.structs import DWARFStructs
from leb128_bytes import uleb

from sfview.dwarf.cfi import ABIS
from sfview.dwarf.ehframe import FrameSection

X86_64 = ABIS["EM_X86_64"]
FDES = 20_000


def many_fdes(count: int) -> bytes:
    """One x86-64 CIE, then `count` FDEs of 24 bytes, 0x40 bytes each, 0x100 apart, each `advance 1;
    def_cfa_offset 16`."""
    body = struct.pack("<I", 0) + b"\x01zR\0" + uleb(1) + b"\x78" + uleb(16) + uleb(1) + b"\x1b"
    body += bytes([0x0C, 7, 8, 0x90, 1])
    body += b"\0" * (-(len(body) + 4) % 8)
    out = bytearray(struct.pack("<I", len(body)) + body)
    for i in range(count):
        at = len(out)
        fde = struct.pack("<Iii", at + 4, -(at + 8) + 0x100 * i, 0x40) + b"\0" + b"\x41\x0e\x10"
        fde += b"\0" * (-(len(fde) + 4) % 8)
        out += struct.pack("<I", len(fde)) + fde
    return bytes(out + bytes(4))


def test_many_small_fdes_are_held_within_ten_times_their_bytes() -> None:
    """What reading every FDE keeps (functions and rows on demand), at its peak: within 10 times the bytes
    (35, then 12 before), and the rows are pyelftools' rows."""
    data = many_fdes(FDES)
    tracemalloc.start()
    try:
        functions = FrameSection(".eh_frame", data, 0, True, 8).headers(X86_64)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(functions) == FDES
    assert peak < 10 * len(data) + (256 << 10), peak / len(data)
    cfi = CallFrameInfo(io.BytesIO(data), len(data), 0, DWARFStructs(True, 32, 8), for_eh_frame=True)
    reference = [entry for entry in cfi.get_entries() if isinstance(entry, FDE)]
    assert [f.start_address for f in functions] == [fde["initial_location"] for fde in reference]
    for i in (0, 1, FDES // 2, FDES - 1):
        lines = reference[i].get_decoded().table
        rows = functions[i].rows
        assert functions[i].start_address == reference[i]["initial_location"]
        assert [row.address for row in rows] == [line["pc"] for line in lines]
        assert [row.cfa.offset for row in rows] == [line["cfa"].offset for line in lines]
    assert functions[FDES - 1].entry is not None  # pyelftools' entry, read again when asked for
    assert functions[FDES - 1].entry.offset == functions[FDES - 1].fde_offset
