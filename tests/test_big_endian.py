"""Big-endian sections parse and dump exactly as their little-endian twins.

No big-endian section exists among the fixtures, so each little-endian one is
byte-swapped field by field here, from the layout the specification gives
(written out independently of sframe.ksy, so that the test checks it).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import SECTIONS, load_section_fixture

from sfview.sframe.model.section import Section

FDE_LAYOUT = {1: "iIIIB", 2: "iIIIBBH", 3: "qII"}
ADDR = {0: "B", 1: "H", 2: "I"}
OFFSET = {0: "b", 1: "h", 2: "i"}


def _swap(buf: bytearray, at: int, fmt: str) -> int:
    """Rewrite the fields `fmt` at `at` from little- to big-endian; return the end."""
    values = struct.unpack_from("<" + fmt, buf, at)
    struct.pack_into(">" + fmt, buf, at, *values)
    return at + struct.calcsize("<" + fmt)


def to_big_endian(data: bytes) -> bytes:
    src = bytearray(data)
    out = bytearray(data)
    version = src[2]
    num_fdes, _, _, fdeoff, freoff = struct.unpack_from("<5I", src, 8)
    header_end = 28 + src[7]
    _swap(out, 0, "H")
    _swap(out, 8, "5I")
    if src[4] == 2:  # AArch64 little-endian → AArch64 big-endian
        out[4] = 1
    fde_size = struct.calcsize("<" + FDE_LAYOUT[version])
    fre_start = header_end + freoff
    for i in range(num_fdes):
        at = header_end + fdeoff + i * fde_size
        fields = struct.unpack_from("<" + FDE_LAYOUT[version], src, at)
        _swap(out, at, FDE_LAYOUT[version])
        fre_off = fields[2]
        if version == 3:
            num_fres, info = struct.unpack_from("<HB", src, fre_start + fre_off)
            pos = _swap(out, fre_start + fre_off, "H") + 3
        else:
            num_fres, info = fields[3], fields[4]
            pos = fre_start + fre_off
        for _ in range(num_fres):
            addr = ADDR[info & 0xF]
            pos = _swap(out, pos, addr)
            fre_info = src[pos]
            pos += 1
            count, size = (fre_info >> 1) & 0xF, (fre_info >> 5) & 3
            for _ in range(count):
                pos = _swap(out, pos, OFFSET[size])
    return bytes(out)


@pytest.mark.parametrize("path", SECTIONS, ids=lambda p: p.stem)
def test_swapped_section_dumps_identically(cli, tmp_path: Path, path: Path) -> None:
    content, base, expected = load_section_fixture(path)
    swapped = to_big_endian(content)
    assert swapped != content
    raw = tmp_path / "be.sframe"
    raw.write_bytes(swapped)
    result = cli("dump", str(raw), "--base", hex(base))  # numbers are hex, by the one rule
    assert (result.code, result.err) == (0, "")
    assert result.out == expected


def test_model_reports_big_endian() -> None:
    content, base, _ = load_section_fixture(next(p for p in SECTIONS if "aarch64-2.44" in p.name))
    section = Section(to_big_endian(content), base)
    assert section.endian == "big"
    assert section.abi == 1
    little = Section(content, base)
    for a, b in zip(section.functions(), little.functions(), strict=True):
        assert (a.start_address, a.size, [r.offsets for r in a.rows]) == (
            b.start_address,
            b.size,
            [r.offsets for r in b.rows],
        )
