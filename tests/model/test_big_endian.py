"""Big-endian sections parse and dump exactly as their little-endian twins.

No big-endian section exists among the fixtures, so each little-endian one is
byte-swapped field by field here, from the layout the specification gives
(written out independently of sframe.ksy, so that the test checks it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SECTIONS, load_section_fixture
from handmade import to_big_endian

from sfview.sframe.model.section import Section


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
