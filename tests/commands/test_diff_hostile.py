"""`sfview diff` on sections built to mislead or to cost: functions that share a start, every function
different (the pairs held within a share of the bytes, made again past it), and the JSON written as it is
made.

The sections are written by tests/commands/test_diff.py's writer (version 2, AMD64, from the spec).
"""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, PEAK
from test_diff import BASE, v2, write

from sfview.cli.diff import compared
from sfview.diff import engine
from sfview.diff.engine import Diff
from sfview.output import differences
from sfview.output.differences import Labelled


def _sharing(count: int, cfa: int) -> bytes:
    """`count` functions without names, all at 0x1000 (a damaged or hand-made section), each its own rows."""
    return v2([(0x1000, 0x100, [(0, 8 + 8 * (i % 12)), (1 + i % 200, cfa)]) for i in range(count)])


def test_functions_sharing_a_start_are_each_paired(cli, tmp_path: Path) -> None:
    """50 nameless functions at one start on each side: 50 pairs, not 49 functions only in A and the last of
    B's paired with the first of A's."""
    a, b = write(tmp_path, "a", _sharing(50, 16)), write(tmp_path, "b", _sharing(50, 24))
    result = cli("diff", "--json", a, b)
    doc = json.loads(result.out)
    assert result.code == 1 and doc["b"]["functions"] == 50
    assert doc["summary"]["different_meaning"] == 50 and doc["summary"]["only_in_a"] == 0
    assert [p["a"]["fde_index"] for p in doc["different_meaning"]] == [
        p["b"]["fde_index"] for p in doc["different_meaning"]
    ]
    same = json.loads(cli("diff", "--json", a, a).out)
    assert same["summary"]["same"] == 50 and same["same_meaning"]


def test_the_json_written_in_pieces_is_json_dumps_text(cli, tmp_path: Path) -> None:
    """Every list of the report filled (a meaning pair, functions only in A and in B) and every one empty:
    the text is what `json.dumps(…, indent=2)` writes of the same document."""
    moved = [(0x2000, 0x40, [(0, 8), (1, 24), (0x30, 8)]), (0x1100, 0x20, [(0, 8)])]
    for b in (v2(moved), v2(BASE)):
        result = cli("diff", "--json", write(tmp_path, "a", v2(BASE)), write(tmp_path, "b", b))
        assert result.out == json.dumps(json.loads(result.out), indent=2) + "\n"
    filled = json.loads(cli("diff", "--json", str(tmp_path / "a"), write(tmp_path, "c", v2(moved))).out)
    assert filled["only_in_a"] and filled["only_in_b"]


def test_every_function_different_is_not_held_as_json(tmp_path: Path) -> None:
    """Sections that differ at every one of 20,000 functions: the JSON (some 28 MB) is written as it is made,
    its peak not the JSON's objects (737 MB for 50,000 functions when they were all made first)."""
    a, b = write(tmp_path, "a", _sharing(20_000, 16)), write(tmp_path, "b", _sharing(20_000, 24))
    done = subprocess.run([sys.executable, "-c", PEAK, "diff", "--json", a, b], capture_output=True, text=True)
    peak = int(done.stderr.split("VmHWM")[-1].split()[0]) << 10
    assert json.loads(done.stdout)["summary"]["different_meaning"] == 20_000
    assert peak < 2 * len(done.stdout)


def test_every_function_different_is_not_held_as_text(tmp_path: Path) -> None:
    """The same in text (some 4 MB): written a pair at a time, not joined whole first."""
    a, b = write(tmp_path, "a", _sharing(20_000, 16)), write(tmp_path, "b", _sharing(20_000, 24))
    done = subprocess.run([sys.executable, "-c", PEAK, "diff", a, b], capture_output=True, text=True)
    peak = int(done.stderr.split("VmHWM")[-1].split()[0]) << 10
    assert (
        "different in meaning: 20000" in done.stdout
        and done.stdout.count("\n  (no name) A 0x1000 (size 0x100) B 0x1000") == 20_000
    )
    assert peak < 2 * 18_000_000  # the JSON's bound above: the text holds no more than the JSON does


def _apart(count: int, cfa: int) -> bytes:
    """`count` functions without names, 16 bytes apart, each one row: a CFA of `cfa` (23 bytes a function)."""
    return v2([(0x1000 + 0x10 * i, 0x10, [(0, cfa)]) for i in range(count)])


def _digest(pieces: Iterator[str]) -> bytes:
    """What is written, as one digest (the text itself is not held)."""
    digest = hashlib.sha256()
    for piece in pieces:
        digest.update(piece.encode())
    return digest.digest()


def test_every_function_different_is_held_within_ten_times_the_sections(tmp_path: Path) -> None:
    """Sections that differ at every one of 20,000 functions, paired and written: at the peak, within 10 times
    the two sections' bytes (every pair held until written: 14 times); the pairs past the first share of
    the bytes are made again as they are written, and say what holding them says."""
    a, b = write(tmp_path, "a", _apart(20_000, 8)), write(tmp_path, "b", _apart(20_000, 16))
    size = Path(a).stat().st_size + Path(b).stat().st_size
    result, peak, written, sides = _peak_written(a, b)
    assert len(result.meaning) == 20_000 and result.meaning.held is None
    assert peak < 10 * size + (256 << 10), peak / size
    result.meaning.held = list(result.meaning)  # as if held: the same text
    assert _digest(differences.text(result, *sides)) == written


def _peak_written(a: str, b: str) -> tuple[Diff, int, bytes, list[Labelled]]:
    """`diff` of two files made and its text written (as one digest), under `tracemalloc`: the result, the
    peak, the digest, and the two sides as the text names them."""
    tracemalloc.start()
    try:
        doc_a, doc_b, result = compared(a, b)
        sides = [Labelled(path, doc.origin, doc.require_section()) for path, doc in ((a, doc_a), (b, doc_b))]
        written = _digest(differences.text(result, *sides))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak, written, sides


@pytest.mark.parametrize("many", ["a", "b"])
def test_functions_one_side_alone_has_are_held_within_ten_times_the_sections(tmp_path: Path, many: str) -> None:
    """One function against 20,000 without rows (each 20 bytes of FDE), either way round: at the peak, within
    10 times the two sections' bytes (a dict slot, a tuple and a label seen for each, then an `Entry`: 15
    times with them in B, 10.6 in A); every one said to be that side's alone, by start, as many as there are."""
    few, lots = v2([(0x1000, 0x10, [(0, 8)])]), v2([(0x2000 + 0x10 * i, 0x10, []) for i in range(20_000)])
    a, b = write(tmp_path, "a", lots if many == "a" else few), write(tmp_path, "b", few if many == "a" else lots)
    size = Path(a).stat().st_size + Path(b).stat().st_size
    result, peak, _, _ = _peak_written(a, b)
    alone, other = (result.only_a, result.only_b) if many == "a" else (result.only_b, result.only_a)
    assert len(alone) == 20_000 and len(other) == 1 and result.same == 0
    assert [e.start for e in alone[::4_999]] == [0x2000 + 0x10 * i for i in range(0, 20_000, 4_999)]
    assert peak < 10 * size + (256 << 10), peak / size


def _rows_laid_backwards(data: bytes) -> bytes:
    """A section of `v2`'s (one-byte rows, three bytes each) with each function's rows moved so that the
    last function's come first: every block of rows then runs past where the next FDE's start, and the bulk
    reader hands each out as its own (a shape made for it alone, let go after it)."""
    count, _, fre_len, _, fde_len = struct.unpack_from("<IIIII", data, 8)
    fdes, fres = data[28 : 28 + fde_len], data[28 + fde_len :]
    offsets = [struct.unpack_from("<I", fdes, 20 * i + 8)[0] for i in range(count)] + [fre_len]
    blocks = [fres[offsets[i] : offsets[i + 1]] for i in range(count)]
    out_fdes, out_fres = bytearray(fdes), b""
    for i in reversed(range(count)):
        struct.pack_into("<I", out_fdes, 20 * i + 8, len(out_fres))
        out_fres += blocks[i]
    return data[:28] + bytes(out_fdes) + out_fres


def test_a_shape_let_go_does_not_lend_its_verdict(cli, tmp_path: Path) -> None:
    """A's 400 functions each with rows of their own (laid backwards), every other one as B's shared rows: 200
    the same, 200 not (the verdicts cached by the shapes' ids, the shapes let go, gave 340 and 60)."""
    a = [(0x1000 + 0x10 * i, 0x10, [(0, 8), (4, 16 if i % 2 == 0 else 24 + 8 * (i % 10))]) for i in range(400)]
    b = [(0x1000 + 0x10 * i, 0x10, [(0, 8), (4, 16)]) for i in range(400)]
    doc = json.loads(
        cli("diff", "--json", write(tmp_path, "a", _rows_laid_backwards(v2(a))), write(tmp_path, "b", v2(b))).out
    )
    assert (doc["summary"]["same"], doc["summary"]["different_meaning"]) == (200, 200)
    assert {p["a"]["start"] for p in doc["different_meaning"]} == {0x1000 + 0x10 * i for i in range(1, 400, 2)}


@pytest.mark.parametrize(
    "a, b",
    [
        (DATA / "shapes-x86_64-O2", DATA / "shapes-x86_64-O0-fp"),
        (DATA / "shapes-aarch64-O2", DATA / "shapes-aarch64-O0-fp"),
        (DATA / "shapes-x86_64-O2.o", DATA / "shapes-x86_64-O2"),
    ],
)
def test_pairs_made_again_say_what_pairs_held_say(cli, monkeypatch: pytest.MonkeyPatch, a: Path, b: Path) -> None:
    """Real programs built two ways (meaning and encoding differences, PLTs, functions one side alone has):
    text and JSON the same whether the pairs are held or made again by a second pass."""
    held = [cli("diff", *options, str(a), str(b)) for options in ((), ("--json",))]
    monkeypatch.setattr(engine, "HELD_SHARE", 0)
    again = [cli("diff", *options, str(a), str(b)) for options in ((), ("--json",))]
    assert [(r.code, r.out, r.err) for r in again] == [(r.code, r.out, r.err) for r in held]
    assert held[0].code == 1


def test_functions_sharing_one_long_block_make_its_shape_once(cli, monkeypatch, tmp_path: Path) -> None:
    """40 functions reading one block of 5,000 rows (more than the bulk reader lists, so it hands the block
    out afresh to each): its shape is made once a side, not once a function (200 functions of a 65,535-row
    block took 42 s); the same section on both sides is the same everywhere, and a copy with one row changed
    differs in every function."""
    from handmade import overlapping

    from sfview.diff.shapes import BulkShapes

    made: list[int] = []
    of_block = BulkShapes.of_block
    monkeypatch.setattr(BulkShapes, "of_block", lambda self, *args: (made.append(1), of_block(self, *args))[1])
    data = overlapping(3, 40, 5000)
    a = write(tmp_path, "a", data)
    changed = bytearray(data)
    changed[-1] ^= 0x10  # the last row's CFA offset
    b = write(tmp_path, "b", bytes(changed))
    same = json.loads(cli("diff", "--json", a, a).out)
    assert len(made) == 2 and same["same_meaning"] and same["summary"]["same"] == 40, same["summary"]
    made.clear()
    differ = json.loads(cli("diff", "--json", a, b).out)
    assert len(made) == 2 and differ["summary"]["different_meaning"] == 40, differ["summary"]


def _claiming_past_the_pool(count: int) -> bytes:
    """Version 3: `count` functions each claiming 65,535 rows of a pool that holds one (every one damaged,
    each read through the model)."""
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 3, 5, 3, 0, -8, 0, count, 1, 8, 0, 16 * count)
    fdes = b"".join(struct.pack("<qII", 0x1000 + 0x10 * i - 28 - 16 * i, 0x10, 0) for i in range(count))
    return header + fdes + struct.pack("<HBBB", 0xFFFF, 0, 0, 0) + b"\x00\x02\x08" * 3


def test_damaged_functions_read_through_the_model_are_let_go(tmp_path: Path) -> None:
    """Damaged functions, each a cycle with its rows once the model reads it, diffed with the collector
    paused as the command pauses it: what 15,000 functions more a side add to the peak is within 10 times
    their bytes (every function was kept until the end, some 3 KB each, 190 times; then the two `Entry`s of
    each pair not compared, some 300 bytes, 17 times); every function counted as unreadable, and listed."""
    from sfview import uncollected

    peaks, sizes = [], []
    for count in (5_000, 20_000):
        a = b = write(tmp_path, f"a{count}", _claiming_past_the_pool(count))
        with uncollected():
            result, peak, _, _ = _peak_written(a, b)
        assert len(result.unreadable_a) == len(result.unreadable_b) == count
        assert len(result.not_compared) == 2 * count and result.not_compared[-1].start == 0x1000 + 0x10 * (count - 1)
        peaks.append(peak)
        sizes.append(2 * Path(a).stat().st_size)
    assert peaks[1] - peaks[0] < 10 * (sizes[1] - sizes[0]), (peaks, sizes)
