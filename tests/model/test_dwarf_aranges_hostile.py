"""`.debug_aranges` built to cost (`sfview.dwarf.aranges`): a unit of 100,000 entries, headers damaged.
The entries cost words, not objects; each damaged header is refused naming its place, and the units are
then looked through by their own ranges, as for a file without the section.

The files are deep-x86_64 with a unit added after its `.debug_aranges`' own, whose entries name its one
compilation unit (at offset 0).
"""

from __future__ import annotations

import io
import random
import struct
import tracemalloc
from pathlib import Path

import pytest
from conftest import DATA, run_with_peak
from elf_edit import Elf
from elftools.dwarf.aranges import ARanges
from elftools.dwarf.structs import DWARFStructs

from sfview.dwarf.aranges import AddressTable
from sfview.dwarf.source import open_debug_info
from sfview.errors import InputError

STOP_HERE = 0x1160
"""`stop_here` in deep-x86_64, as linked: in the range its own `.debug_aranges` unit lists."""
FAR = 0x10_0000
"""Where the added entries start: 16 bytes apart, 8 long, shuffled."""


def _unit(pairs: bytes, header: bytes = struct.pack("<HIBB", 2, 0, 8, 0)) -> bytes:
    """A `.debug_aranges` unit: its length, `header`, padding to 16, `pairs` and the pair of zeros."""
    body = header + bytes(-(4 + len(header)) % 16) + pairs + bytes(16)
    return struct.pack("<I", len(body)) + body


def _entries(count: int) -> bytes:
    starts = [FAR + 16 * i for i in range(count)]
    random.Random(count).shuffle(starts)
    return b"".join(struct.pack("<QQ", start, 8) for start in starts)


def _with_aranges(extra: bytes) -> bytes:
    """deep-x86_64 with `extra` after its `.debug_aranges`' own unit."""
    elf = Elf.of((DATA / "deep-x86_64").read_bytes())
    data = elf.contents(".debug_aranges") + extra
    offset = (len(elf.data) + 15) & ~15
    elf.data += bytes(offset - len(elf.data)) + data
    return elf.set_section(".debug_aranges", sh_offset=offset, sh_size=len(data)).bytes()


def _table(data: bytes) -> AddressTable:
    return AddressTable(Elf.of(data).contents(".debug_aranges"), little_endian=True)


def test_a_hundred_thousand_entries_cost_words_not_objects(tmp_path: Path) -> None:
    """pyelftools kept a named tuple an entry: 15 MB held for 1.6 MB of entries. Now three words an entry,
    and the sort of shuffled entries within eight times their bytes at its peak."""
    extra = _unit(_entries(100_000))
    path = tmp_path / "hostile"
    path.write_bytes(_with_aranges(extra))
    info = open_debug_info([str(path)])
    assert info is not None
    tracemalloc.start()
    try:
        assert info.frames(FAR + 3) == ([], False)  # in the unit, no function there
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 2 * len(extra) + (1 << 20)
    assert peak < 8 * len(extra) + (1 << 20)
    assert [f.function for f in info.frames(STOP_HERE)[0]] == ["stop_here"]
    table = _table(path.read_bytes())
    assert [table.unit_at(FAR + 16 * i + 3) for i in (0, 4_321, 99_999)] == [0, 0, 0]
    assert [table.unit_at(FAR + 16 * i + 9) for i in (0, 4_321, 99_999)] == [None, None, None]
    assert table.unit_at(STOP_HERE) == 0 and table.unit_at(0x10) is None


def test_unwinding_stays_within_ten_times_the_entries(tmp_path: Path) -> None:
    """`unwind` on a program whose `.debug_aranges` has 100,000 entries more: 18 MB more resident memory
    for 1.6 MB of entries (11 times); its frames named as before."""
    plain, hostile = tmp_path / "plain", tmp_path / "hostile"
    plain.write_bytes(_with_aranges(b""))
    extra = _unit(_entries(100_000))
    hostile.write_bytes(_with_aranges(extra))

    def unwound(program: Path) -> tuple[str, int]:
        return run_with_peak("unwind", str(program), "--core", str(DATA / "deep-x86_64.core"))

    (plain_out, plain_peak), (out, peak) = unwound(plain), unwound(hostile)
    assert "#0  stop_here () at shared/fixtures/src/deep.c:5" in plain_out
    assert out == plain_out
    assert peak - plain_peak < 10 * len(extra)


def test_lookups_are_pyelftools_own() -> None:
    """The unit found for an address is the one pyelftools' `ARanges` found (the entry starting last at or
    before it, among equal starts the last listed), on shuffled entries sharing starts across two units."""
    pairs = _entries(1_000) + struct.pack("<QQ", FAR + 32, 100) + struct.pack("<QQ", FAR - 64, 8)
    other = _unit(pairs[:4_000], struct.pack("<HIBB", 2, 0x40, 8, 0))
    contents = Elf.of(_with_aranges(_unit(pairs) + other)).contents(".debug_aranges")
    table = AddressTable(contents, little_endian=True)
    structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=8)
    reference = ARanges(io.BytesIO(contents), len(contents), structs)
    probes = sorted({FAR + step for step in range(-80, 16 * 1_000 + 120, 3)} | {STOP_HERE, 0x1000})
    assert [table.unit_at(a) for a in probes] == [reference.cu_offset_at_addr(a) for a in probes]
    assert {0, 0x40} == {reference.cu_offset_at_addr(a) for a in probes} - {None}


GOOD = struct.pack("<HIBB", 2, 0, 8, 0)


@pytest.mark.parametrize(
    ("unit", "reason"),
    [
        (_unit(b"", struct.pack("<HIBB", 5, 0, 8, 0)), "version 5, not one of (2, 3)"),
        (_unit(b"", struct.pack("<HIBB", 2, 0, 3, 0)), "an address size of 3 bytes, not 4 or 8"),
        (_unit(b"", struct.pack("<HIBB", 2, 0, 8, 4)), "a segment selector of 4 bytes (segmented addresses)"),
        (struct.pack("<I", 0x1000) + GOOD + bytes(20), "its length 0x1000 runs past the section's end (0x60)"),
        (struct.pack("<I", 0xFFFFFFF5), "a reserved length 0xfffffff5"),
        (struct.pack("<I", 4) + GOOD[:4], "its header runs past the section's end (0x48)"),
        (
            struct.pack("<I", 36) + GOOD + bytes(4) + struct.pack("<QQ", FAR, 8) + bytes(8),
            "a pair runs past its end (0x68)",
        ),
    ],
    ids=["version", "address size", "segments", "length", "reserved", "header", "pair"],
)
def test_a_damaged_unit_is_refused_naming_its_place(tmp_path: Path, unit: bytes, reason: str) -> None:
    """Each refusal names the section, the unit's offset and what is wrong; the file's frames are then named
    through the units' own ranges, as without the section."""
    data = _with_aranges(unit)
    with pytest.raises(InputError) as refused:
        _table(data)
    assert refused.value.message == f".debug_aranges: the unit at 0x40: {reason}"
    path = tmp_path / "damaged"
    path.write_bytes(data)
    info = open_debug_info([str(path)])
    assert info is not None
    assert [f.function for f in info.frames(STOP_HERE)[0]] == ["stop_here"]
