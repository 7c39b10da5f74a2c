"""`.debug_info` built to cost (`sfview.dwarf.source`): a unit of a million one-byte DIEs, DIEs nested deep,
origins that loop. The names of that unit are lost (the frame is named from the symbols, as without debug
information); nothing else is, and nothing raises.

The files are deep-x86_64 with its one compilation unit grown: DIEs added
before the unit's last byte (the end of its top DIE's children), and their
abbreviation added to the unit's table.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import DATA, run_with_peak
from elf_edit import Elf

from sfview.dwarf import source
from sfview.dwarf.source import open_debug_info

STOP_HERE = 0x1160
"""`stop_here` in deep-x86_64, as linked."""


def _grown(dies: bytes, abbreviation: bytes) -> bytes:
    """deep-x86_64 with `dies` at the end of its unit's top DIE's children, and `abbreviation` (code 99)
    at the end of its abbreviation table."""
    elf = Elf.of((DATA / "deep-x86_64").read_bytes())
    info, abbrev = bytearray(elf.contents(".debug_info")), bytearray(elf.contents(".debug_abbrev"))
    assert struct.unpack_from("<I", info)[0] + 4 == len(info) and abbrev[-1] == 0  # one unit, one table
    info = info[:-1] + dies + info[-1:]
    struct.pack_into("<I", info, 0, len(info) - 4)
    abbrev = abbrev[:-1] + abbreviation + b"\0"
    for name, data in ((".debug_info", info), (".debug_abbrev", abbrev)):
        offset = (len(elf.data) + 7) & ~7
        elf.data += bytes(offset - len(elf.data)) + data
        elf = elf.set_section(name, sh_offset=offset, sh_size=len(data))
    return elf.bytes()


FLAT = bytes([99, 0x34, 0, 0, 0])
"""Code 99: a `DW_TAG_variable` without children or attributes (one byte a DIE)."""
NESTED = bytes([99, 0x0B, 1, 0, 0])
"""Code 99: a `DW_TAG_lexical_block` with children and no attributes."""


def _named(path: Path) -> list:
    info = open_debug_info([str(path)])
    assert info is not None
    return info.frames(STOP_HERE)[0]


@pytest.mark.parametrize(
    ("dies", "abbreviation"),
    [(bytes([99]) * 2000, FLAT), (bytes([99]) * 2000 + bytes(2000), NESTED)],
    ids=["flat", "nested"],
)
def test_a_unit_past_the_bound_loses_its_names_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dies: bytes, abbreviation: bytes
) -> None:
    path = tmp_path / "grown"
    path.write_bytes(_grown(dies, abbreviation))
    assert [f.function for f in _named(path)] == ["stop_here"]  # within the bound: read as before
    monkeypatch.setattr(source, "MAX_DIES", 1000)
    assert _named(path) == []


def test_a_million_one_byte_dies_are_not_all_held(tmp_path: Path) -> None:
    """A million DIEs of one byte held 330 MB through pyelftools: `unwind` now stops at the bound, its frames
    named from the symbols, and its peak stays within a bound's worth of DIEs."""
    plain, hostile = tmp_path / "plain", tmp_path / "hostile"
    plain.write_bytes(_grown(b"", FLAT))
    hostile.write_bytes(_grown(bytes([99]) * 1_000_000, FLAT))

    def unwound(program: Path) -> tuple[str, int]:
        return run_with_peak("unwind", str(program), "--core", str(DATA / "deep-x86_64.core"))

    (plain_out, plain_peak), (out, peak) = unwound(plain), unwound(hostile)
    assert "#0  stop_here () at shared/fixtures/src/deep.c:5" in plain_out
    assert "#0  0x0000555555555160 in stop_here ()" in out
    assert peak - plain_peak < 400 * source.MAX_DIES  # pyelftools' some 300 bytes a DIE, for the bound's DIEs
