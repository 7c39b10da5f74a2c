"""`sfview diff`: sections built by hand from the spec, differing in known ways, in encoding or in meaning.

Each pair is built to differ in one known way: rows split or written wider (encoding), a CFA changed at
one row (meaning), a flexible version 3 FDE against its version 2 default form, sides that cannot be
compared. What `diff` says is held to what was built.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from conftest import AARCH64, DATA, v3_section
from handmade import RSP, reg

from sfview.diff.engine import Column, Side, Verdict, diff
from sfview.sframe.model.section import Section

START_WIDTH = {0: "B", 1: "H", 2: "I"}
OFFSET_WIDTH = {0: "b", 1: "h", 2: "i"}


def v2(functions: list[tuple[int, int, list[tuple[int, int]]]], fre_type: int = 0, offset_size: int = 0) -> bytes:
    """A version 2 AMD64 section from the spec: each function (start, size, rows), each row (start offset,
    CFA offset from SP), start addresses of FRE type `fre_type`, offsets of `offset_size`; the RA at the
    header's fixed CFA-8."""
    blocks, fdes = b"", b""
    for start, size, rows in functions:
        fdes += struct.pack("<iIIIBBH", start, size, len(blocks), len(rows), fre_type, 0, 0)
        for offset, cfa in rows:
            info = 0x03 | (offset_size << 5)  # base SP, one offset
            blocks += struct.pack(f"<{START_WIDTH[fre_type]}B{OFFSET_WIDTH[offset_size]}", offset, info, cfa)
    num_fres = sum(len(rows) for _, _, rows in functions)
    header = struct.pack(
        "<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, len(functions), num_fres, len(blocks), 0, len(fdes)
    )
    return header + fdes + blocks


BASE = [(0x1000, 0x40, [(0, 8), (1, 16), (0x30, 8)]), (0x1100, 0x20, [(0, 8)])]


def write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


def run_json(cli, a: str, b: str):
    result = cli("diff", "--json", a, b)
    return result.code, json.loads(result.out)


def test_the_same_bytes_are_the_same(cli, tmp_path):
    a = write(tmp_path, "a", v2(BASE))
    code, doc = run_json(cli, a, write(tmp_path, "b", v2(BASE)))
    assert code == 0 and doc["same_meaning"]
    assert doc["summary"]["same"] == 2 and doc["summary"]["encoded_differently"] == 0


@pytest.mark.parametrize(
    "b_functions, fre_type, offset_size",
    [
        ([(0x1000, 0x40, [(0, 8), (1, 16), (8, 16), (0x30, 8)]), BASE[1]], 0, 0),  # a row split in two
        (BASE, 1, 0),  # 2-byte start addresses
        (BASE, 2, 1),  # 4-byte start addresses, 2-byte offsets
    ],
    ids=["row split", "wider FRE type", "wider FRE type and offsets"],
)
def test_encoding_is_not_meaning(cli, tmp_path, b_functions, fre_type, offset_size):
    a = write(tmp_path, "a", v2(BASE))
    b = write(tmp_path, "b", v2(b_functions, fre_type, offset_size))
    code, doc = run_json(cli, a, b)
    assert code == 0 and doc["same_meaning"], doc
    assert doc["summary"]["different_meaning"] == 0
    assert doc["summary"]["encoded_differently"] >= 1
    assert 0x1000 in {p["a"]["start"] for p in doc["encoded_differently"]}


def test_a_different_cfa_is_meaning(cli, tmp_path):
    changed = [(0x1000, 0x40, [(0, 8), (1, 24), (0x30, 8)]), BASE[1]]
    code, doc = run_json(cli, write(tmp_path, "a", v2(BASE)), write(tmp_path, "b", v2(changed)))
    assert code == 1 and not doc["same_meaning"]
    (pair,) = doc["different_meaning"]
    (change,) = pair["changes"]
    assert (change["start"], change["end"], change["column"]) == (1, 0x30, "CFA")
    assert (change["a"]["text"], change["b"]["text"]) == ("sp+16", "sp+24")
    text = cli("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert text.code == 1
    assert "+0x1..+0x30 (A 0x1001..0x1030, B 0x1001..0x1030) CFA: A sp+16, B sp+24" in text.out


def test_other_code_covered_is_meaning(cli, tmp_path):
    longer = [(0x1000, 0x48, BASE[0][2]), BASE[1]]
    code, doc = run_json(cli, write(tmp_path, "a", v2(BASE)), write(tmp_path, "b", v2(longer)))
    assert code == 1
    (change,) = doc["different_meaning"][0]["changes"]
    assert (change["column"], change["start"], change["end"], change["a"], change["b"]) == (
        "size",
        0x40,
        0x48,
        0x40,
        0x48,
    )


def test_functions_only_on_one_side(cli, tmp_path):
    code, doc = run_json(cli, write(tmp_path, "a", v2(BASE)), write(tmp_path, "b", v2(BASE[:1])))
    assert code == 1
    assert [e["start"] for e in doc["only_in_a"]] == [0x1100] and doc["only_in_b"] == []


def test_a_moved_function_is_the_same_function():
    """Named functions pair by name wherever they are: B's are 0x200 further on."""
    moved = [(start + 0x200, size, rows) for start, size, rows in BASE]
    names = {0x1000: "f", 0x1100: "g", 0x1200: "f", 0x1300: "g"}
    side = lambda data: Side(Section(data), lambda address, _: names[address], lambda _: "")  # noqa: E731
    result = diff(side(v2(BASE)), side(v2(moved)))
    assert result.same == 2 and not result.only_a and not result.only_b and result.same_meaning
    unnamed = diff(Side(Section(v2(BASE)), lambda *_: "", str), Side(Section(v2(moved)), lambda *_: "", str))
    assert len(unnamed.only_a) == 2 and len(unnamed.only_b) == 2  # by address, they are other functions


def test_flexible_v3_against_its_default_form():
    """A version 3 flexible FDE whose control words say CFA = SP+8, RA at CFA-8, against version 2's
    default row of the same rules: the same meaning, another encoding."""
    flexible = v3_section(1, [(0, 1, [reg(RSP), 8])], fixed_ra=-8, size=0x40)
    default = v2([(0x1000, 0x40, [(0, 8)])])
    result = diff(Side(Section(flexible), lambda *_: "", str), Side(Section(default), lambda *_: "", str))
    assert result.same_meaning and result.same == 0
    assert [p.verdict for p in result.encoding] == [Verdict.ENCODING]
    other = v2([(0x1000, 0x40, [(0, 16)])])
    changed = diff(Side(Section(flexible), lambda *_: "", str), Side(Section(other), lambda *_: "", str))
    assert [c.column for c in changed.meaning[0].changes] == [Column.CFA]


def test_different_architectures_are_said_and_paired(cli, tmp_path):
    a = write(tmp_path, "a", v3_section(0, [(0, 1, [8])]))
    b = write(tmp_path, "b", v3_section(0, [(0, 1, [16])], abi=AARCH64))
    result = cli("diff", a, b)
    assert result.code == 2 and len(result.err.splitlines()) == 1
    assert "A is AMD64 little-endian, B is AArch64 little-endian" in result.err
    assert "functions: 1 in both (rules not compared), 0 only in A, 0 only in B" in result.out  # paired by address
    assert "meaning: not compared" in result.out


def test_one_side_without_sframe(cli, tmp_path):
    a = write(tmp_path, "a", v2(BASE))
    result = cli("diff", a, str(DATA / "shapes-x86_64-no-sframe"))
    assert result.code == 2 and result.err.startswith("sfview: ") and "B: " in result.err
    assert "shapes-x86_64-no-sframe" in result.err and len(result.err.splitlines()) == 1


@pytest.mark.parametrize("damaged_side", ["a", "b"])
def test_a_damaged_section_on_either_side(cli, tmp_path, damaged_side):
    """The last function's row count runs past the FRE sub-section: it is left out, said, exit 2; the
    other function is still compared."""
    good = v2(BASE)
    bad = bytearray(good)
    fde = 28 + 20  # the header, then the second FDE
    struct.pack_into("<I", bad, fde + 12, 50)
    paths = {"a": write(tmp_path, "a", good), "b": write(tmp_path, "b", good)}
    paths[damaged_side] = write(tmp_path, damaged_side, bytes(bad))
    result = cli("diff", paths["a"], paths["b"])
    assert result.code == 2
    assert "functions: 1 same" in result.out and "only in A: none" in result.out and "only in B: none" in result.out
    assert "not compared, rows unreadable on one side: 1\n  0x1100..0x1120" in result.out
    assert len(result.err.splitlines()) == 1 and paths[damaged_side] in result.err


def test_damaged_sections_are_said_never_a_traceback(cli, tmp_path):
    """Mutants of every sample section (tests/handmade.py) against a sound one, on either side, and
    counted by `stats`: an exit status of 0, 1 or 2, every line on stderr sfview's own."""
    from handmade import mutants

    sound = write(tmp_path, "sound", v2(BASE))
    for i, data in enumerate(mutants(seed=31, count=120)):
        damaged = write(tmp_path, f"m{i}", data)
        for args in (("diff", damaged, sound), ("diff", "--json", sound, damaged), ("stats", damaged)):
            result = cli(*args)
            assert result.code in (0, 1, 2), (args, result)
            assert all(line.startswith("sfview: ") for line in result.err.splitlines()), (args, result.err)
