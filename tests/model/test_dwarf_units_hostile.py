"""Units and range lists built to cost frame naming (`sfview.dwarf.source`): many units `.debug_aranges`
does not list, all of them pointing at one long range list. Each list's bytes are read once, and the units
looked through for an address are let go as they are read.

The files are deep-x86_64 with units of a dozen bytes added after its own (so that its `.debug_aranges`
still lists it), an abbreviation table for them, and a list of offset pairs after its `.debug_rnglists`.
"""

from __future__ import annotations

import io
import struct
import tracemalloc
from pathlib import Path

from conftest import DATA
from elf_edit import Elf
from leb128_bytes import uleb

from sfview.dwarf import source
from sfview.dwarf.source import open_debug_info
from sfview.inputs.elf.pyelftools_view import SectionStream

STOP_HERE = 0x1160
"""`stop_here` in deep-x86_64, as linked: in the unit `.debug_aranges` lists."""
NOWHERE = 0x10
"""An address no unit's ranges hold: every unit `.debug_aranges` leaves out is looked through for it."""


def _with_units(count: int, entries: int) -> bytes:
    """deep-x86_64 with `count` DWARF 5 units after its own, each a top DIE whose `DW_AT_ranges` is one list
    of `entries` offset pairs (none: the units have no attributes)."""
    elf = Elf.of((DATA / "deep-x86_64").read_bytes())
    info, abbrev = elf.contents(".debug_info"), elf.contents(".debug_abbrev")
    lists = elf.contents(".debug_rnglists")
    table = len(abbrev)
    abbrev += uleb(200) + bytes([0x11, 0]) + (bytes([0x55, 0x17]) if entries else b"") + bytes([0, 0, 0])
    body = struct.pack("<HBBI", 5, 1, 8, table) + uleb(200) + (struct.pack("<I", len(lists) + 12) if entries else b"")
    info += (struct.pack("<I", len(body)) + body) * count
    pairs = struct.pack("<HBBI", 5, 8, 0, 0) + bytes([4, 0x10, 0x20]) * entries + b"\0"
    lists += struct.pack("<I", len(pairs)) + pairs
    for name, data in ((".debug_info", info), (".debug_abbrev", abbrev), (".debug_rnglists", lists)):
        offset = (len(elf.data) + 7) & ~7
        elf.data += bytes(offset - len(elf.data)) + data
        elf = elf.set_section(name, sh_offset=offset, sh_size=len(data))
    return elf.bytes()


class _Counted(SectionStream):
    """A section's bytes that count how many are read, through the stream or taken whole."""

    read_bytes = 0

    def __init__(self, contents: bytes) -> None:
        super().__init__(b"")
        self.whole = contents

    @property
    def contents(self) -> bytes:
        _Counted.read_bytes += len(self.whole)
        return self.whole

    @contents.setter
    def contents(self, value: bytes) -> None:
        pass

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: len(self.whole)}[whence]
        self.position = max(base + offset, 0)
        return self.position

    def read(self, size: int | None = -1) -> bytes:
        end = len(self.whole) if size is None or size < 0 else self.position + size
        out = self.whole[self.position : end]
        self.position += len(out)
        _Counted.read_bytes += len(out)
        return out


def test_a_range_list_many_units_point_at_is_read_once(tmp_path: Path) -> None:
    """200 units on one list of 3,000 entries: its bytes were parsed once a unit (1.8 MB of 9 KB)."""
    path = tmp_path / "shared-list"
    path.write_bytes(_with_units(200, 3000))
    info = open_debug_info([str(path)])
    assert info is not None
    section = info.info.debug_rnglists_sec
    stream = _Counted(bytes(section.stream.contents))
    info.info.debug_rnglists_sec = section._replace(stream=stream)
    _Counted.read_bytes = 0
    assert info.frames(NOWHERE) == ([], False)
    assert 0 < _Counted.read_bytes <= 2 * section.size
    assert [f.function for f in info.frames(STOP_HERE)[0]] == ["stop_here"]  # its own unit, named as before


def test_units_looked_through_are_not_all_held(tmp_path: Path) -> None:
    """10,000 units of 12 bytes: pyelftools kept each with its top DIE (about a kilobyte each)."""
    units = 10_000
    path = tmp_path / "many-units"
    path.write_bytes(_with_units(units, 0))
    info = open_debug_info([str(path)])
    assert info is not None
    tracemalloc.start()
    try:
        assert info.frames(NOWHERE) == ([], False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 12 * units + (1 << 20)
    assert [f.function for f in info.frames(STOP_HERE)[0]] == ["stop_here"]


def _with_tables(count: int, codes: int) -> bytes:
    """deep-x86_64 with one abbreviation table of `codes` codes (each a `DW_TAG_compile_unit` without
    attributes) after its own, and `count` DWARF 4 units after its unit, each a top DIE of the last code,
    each pointing at a different code of the table as the start of its own."""
    elf = Elf.of((DATA / "deep-x86_64").read_bytes())
    info, abbrev = elf.contents(".debug_info"), elf.contents(".debug_abbrev")
    starts = []
    for code in range(1, codes + 1):
        starts.append(len(abbrev))
        abbrev += uleb(code) + bytes([0x11, 0, 0, 0])
    abbrev += b"\0"
    for unit in range(count):
        body = struct.pack("<HIB", 4, starts[unit * 7 % codes], 8) + uleb(codes)
        info += struct.pack("<I", len(body)) + body
    for name, data in ((".debug_info", info), (".debug_abbrev", abbrev)):
        offset = (len(elf.data) + 7) & ~7
        elf.data += bytes(offset - len(elf.data)) + data
        elf = elf.set_section(name, sh_offset=offset, sh_size=len(data))
    return elf.bytes()


def test_abbreviation_tables_at_many_offsets_into_one_are_read_within_its_bytes(tmp_path: Path) -> None:
    """200 units whose tables start at different codes of one table of 2,000: each was read to its end."""
    path = tmp_path / "shared-table"
    path.write_bytes(_with_tables(200, 2000))
    info = open_debug_info([str(path)])
    assert info is not None
    section = info.info.debug_abbrev_sec
    stream = _Counted(bytes(section.stream.contents))
    info.info.debug_abbrev_sec = section._replace(stream=stream)
    _Counted.read_bytes = 0
    assert info.frames(NOWHERE) == ([], False)
    # read once, again up to the bound, and the table that crosses it
    assert 0 < _Counted.read_bytes <= 3 * section.size + source.ABBREV_SLACK
    assert [f.function for f in info.frames(STOP_HERE)[0]] == ["stop_here"]
