"""`sfview stats`: sections built by hand from the spec, whose every byte's place is known."""

from __future__ import annotations

import json
import re
import struct

from conftest import DATA
from test_diff import BASE, v2, write

from sfview.sframe.model.section import Section
from sfview.stats.tally import tally

HEADER = 28
FDE = 20


def test_every_byte_of_a_built_section(cli, tmp_path):
    """Two functions: 3 rows and 1 row of 3 bytes each (1-byte start, info, 1-byte offset)."""
    path = write(tmp_path, "a", v2(BASE))
    result = cli("stats", "--json", path)
    assert result.code == 0, result.err
    (doc,) = json.loads(result.out)
    parts = doc["parts"]
    assert parts["header"] == HEADER and parts["FDEs"] == 2 * FDE
    assert parts["FRE start addresses of 1 bytes"] == parts["FRE info bytes"] == parts["FRE offsets of 1 bytes"] == 4
    assert parts["unused"] == parts["outside the sub-sections"] == 0
    assert sum(parts.values()) == doc["bytes"] == HEADER + 2 * FDE + 12
    assert (doc["functions"], doc["rows"], doc["rows_per_function"]) == (2, 4, {"1": 1, "3": 1})


def test_rows_pointed_at_twice_take_their_bytes_once():
    """A third FDE pointing at the second function's rows: the same bytes, counted once."""
    data = bytearray(v2(BASE))
    fres = data[HEADER + 2 * FDE :]
    extra = struct.pack("<iIIIBBH", 0x1200, 0x20, 9, 1, 0, 0, 0)
    struct.pack_into("<I", data, 8, 3)  # num_fdes
    struct.pack_into("<I", data, 24, 3 * FDE)  # freoff
    section = Section(bytes(data[: HEADER + 2 * FDE]) + extra + bytes(fres))
    counted = tally(section)
    assert (counted.functions, counted.shared, counted.rows) == (3, 1, 4)
    assert counted.unused == 0 and sum(counted.parts.values()) == counted.size


def test_unused_and_redundant_rows():
    """A row repeating the one before's rules is redundant; bytes after the last rows inside the FRE
    sub-section are unused."""
    split = [(0x1000, 0x40, [(0, 8), (1, 16), (8, 16), (0x30, 8)])]
    data = bytearray(v2(split) + b"\0\0\0")
    struct.pack_into("<I", data, 16, 12 + 3)  # fre_len: three bytes more than the rows
    counted = tally(Section(bytes(data)))
    assert (counted.redundant, counted.redundant_bytes, counted.unused) == (1, 3, 3)
    assert sum(counted.parts.values()) == len(data)


def test_side_by_side_and_a_bad_file(cli, tmp_path):
    """Two sections in two columns; a file without SFrame said on stderr, the others still shown."""
    a = write(tmp_path, "a", v2(BASE))
    b = write(tmp_path, "b", v2(BASE[:1], fre_type=2))
    result = cli("stats", a, b, str(DATA / "shapes-x86_64-no-sframe"))
    assert result.code == 2
    assert "shapes-x86_64-no-sframe" in result.err and len(result.err.splitlines()) == 1
    lines = {re.split(r"\s{2,}", line.strip())[0]: line.split()[-2:] for line in result.out.splitlines()}
    assert lines[".sframe bytes"] == [str(HEADER + 2 * FDE + 12), str(HEADER + FDE + 18)]  # 3 rows of 6 bytes
    assert lines["FRE start addresses of 4 bytes"] == ["0", "12"]
