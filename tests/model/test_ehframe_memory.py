"""A whole `.eh_frame` of many small FDEs read in memory near its bytes.

Every FDE became a handful of objects (its `Fde`, the tuple of where its
instructions are, its own copy of the instruction bytes, a closure giving
pyelftools' entry, its function and rows object), all held at once: 35 times
the bytes on FDEs of 24 bytes; then a function and a rows object each, 12
times. Now they are held by their headers, in arrays, each function made when
asked for; so is a file's whole table (`read_cfi`), which kept a function per
FDE after the headers had stopped. The generated section is one CIE and
20,000 FDEs; what the rows say is pyelftools' reading
(tests/oracles/test_ehframe.py compares every row of real files).
"""

from __future__ import annotations

import io
import struct
import tracemalloc
from pathlib import Path

from conftest import DATA
from elf_edit import Elf
from elftools.dwarf.callframe import FDE, CallFrameInfo
from elftools.dwarf.structs import DWARFStructs
from leb128_bytes import uleb

from sfview.dwarf.cfi import ABIS
from sfview.dwarf.ehframe import FrameSection
from sfview.dwarf.tables import read_cfi
from sfview.inputs.elf.image import ElfImage

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


def reference_fdes(data: bytes, address: int) -> list[FDE]:
    """pyelftools' FDEs of the section at `address`."""
    cfi = CallFrameInfo(io.BytesIO(data), len(data), address, DWARFStructs(True, 32, 8), for_eh_frame=True)
    return [entry for entry in cfi.get_entries() if isinstance(entry, FDE)]


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
    reference = reference_fdes(data, 0)
    assert [f.start_address for f in functions] == [fde["initial_location"] for fde in reference]
    for i in (0, 1, FDES // 2, FDES - 1):
        lines = reference[i].get_decoded().table
        rows = functions[i].rows
        assert functions[i].start_address == reference[i]["initial_location"]
        assert [row.address for row in rows] == [line["pc"] for line in lines]
        assert [row.cfa.offset for row in rows] == [line["cfa"].offset for line in lines]
    assert functions[FDES - 1].entry is not None  # pyelftools' entry, read again when asked for
    assert functions[FDES - 1].entry.offset == functions[FDES - 1].fde_offset


def test_a_files_whole_table_of_many_small_fdes_is_held_within_ten_times_their_bytes(tmp_path: Path) -> None:
    """`read_cfi` (the app's views, `compare` on an object, an unwind without `.eh_frame_hdr`), its table
    made and every function of it asked for, at its peak: within 10 times the section's bytes (it kept a
    function per FDE, sorted: 14.5 times here); the table is pyelftools' FDEs in address order."""
    data = many_fdes(FDES)
    program = Elf.of((DATA / "shapes-x86_64-O2").read_bytes())
    offset = (len(program.data) + 7) & ~7
    program.data += bytes(offset - len(program.data)) + data  # the program's `.eh_frame` moved onto it
    program.set_section(".eh_frame", sh_offset=offset, sh_size=len(data))
    path = tmp_path / "many-fdes"
    path.write_bytes(program.bytes())
    with path.open("rb") as f:
        elf = ElfImage.of(f)
        address = elf.section(".eh_frame").addr
        tracemalloc.start()
        try:
            table = read_cfi(elf)
            starts = [func.start_address for func in table]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(table) == FDES
    assert peak < 10 * len(data) + (256 << 10), peak / len(data)
    reference = reference_fdes(data, address)
    assert starts == sorted(fde["initial_location"] for fde in reference)
    for fde in (reference[0], reference[FDES // 2], reference[-1]):
        func = table.find(fde["initial_location"])
        assert func is not None and func.fde_offset == fde.offset
        assert [(row.address, row.cfa.offset) for row in func.rows] == [
            (line["pc"], line["cfa"].offset) for line in fde.get_decoded().table
        ]
