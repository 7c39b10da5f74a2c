"""Inputs built to cost: each refused or bounded by its bytes, with a message that names the file and the place.

Each test builds its input (none is an attack's own file) and would have failed
before the fix its docstring names.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, PEAK, run_process


@pytest.mark.oracle
def test_a_pc_a_dwarf_fde_covers_gets_no_bias_hint(cli) -> None:
    """`_start` (crt1's, assembled without --gsframe) has no SFrame FDE, but readelf finds the DWARF FDE that
    covers it: the note "no FDE covers pc … give --bias" is not given (it was: it asked SFrame alone)."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed: it is the reference for the FDEs")
    program = DATA / "shapes-x86_64-O2"
    frames = subprocess.run(["readelf", "--debug-dump=frames", str(program)], capture_output=True, text=True).stdout
    assert "pc=0000000000001090..00000000000010b2" in frames  # `_start`
    result = cli("unwind", str(program), "--regs", "pc=0x1094,sp=0x7ffc0000", "--mem", "0x7ffc0000=0")
    assert result.code == 0, result.err
    assert "_start" in result.out and "[DWARF CFI]" in result.out
    assert "give --bias" not in result.out + result.err
    outside = cli("unwind", str(program), "--regs", "pc=0x555555559000,sp=0x7ffc0000")  # past every FDE: the note stays
    notes = outside.out + outside.err  # the notes on stderr (they were on stdout)
    assert "no FDE covers pc 0x555555559000" in notes and "give --bias" in notes


def test_a_thread_id_of_5000_digits_is_refused_in_one_short_line() -> None:
    """`--thread 999…9` (5,000 digits) was echoed whole in the refusal: now its start and its length."""
    core = DATA / "deep-x86_64.core"
    result = run_process("unwind", str(DATA / "deep-x86_64"), "--core", str(core), "--thread", "9" * 5000)
    assert result.returncode == 2
    assert "not a thread: '" in result.stderr and "… (5,000 characters)" in result.stderr
    assert len(result.stderr) < 1000


def zero_size_functions(count: int) -> bytes:
    """A version 2 section of `count` functions of 0 bytes sharing one row: two problems each (size zero,
    rows overlapping another function's)."""
    block = bytes([0, 0x03, 8])
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 + 0x10 * i, 0, 0, 1, 0, 0, 0) for i in range(count))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, count, count, len(block), 0, len(fdes))
    return header + fdes + block


def test_check_says_problems_as_found_and_counts_past_the_bound(tmp_path: Path) -> None:
    """30,000 functions, 60,000 problems: the first 1,000 of each kind said, the rest counted in a line a
    kind (JSON: `more`), every one with --max-problems 0; the peak memory does not grow with the problems
    (every problem was held to the end: 116 MB for 100,000 functions)."""
    small, big = tmp_path / "small.sframe", tmp_path / "big.sframe"
    small.write_bytes(zero_size_functions(100))
    big.write_bytes(zero_size_functions(30_000))
    peaks, outputs = [], []
    for path in (small, big):
        done = subprocess.run([sys.executable, "-c", PEAK, "check", str(path)], capture_output=True, text=True)
        assert "Traceback" not in done.stderr
        peaks.append(int(done.stderr.rsplit("VmHWM ", 1)[1].split()[0]))
        outputs.append(done.stdout.splitlines())
    lines = outputs[1]
    assert len(lines) == 2002
    assert lines[-2:] == [
        f"{big}: and 29,000 more warning function-size-zero problems (--max-problems 1000)",
        f"{big}: and 28,999 more warning fres-overlap problems (--max-problems 1000)",
    ]
    assert peaks[1] - peaks[0] < 10 * big.stat().st_size // 1024, f"peaks {peaks} KB"
    every = run_process("check", "--max-problems", "0", str(big))
    assert every.returncode == 1 and len(every.stdout.splitlines()) == 59_999
    report = json.loads(run_process("check", "--json", "--max-problems", "10", str(big)).stdout)
    assert len(report[0]["problems"]) == 20
    assert report[0]["more"] == {"function-size-zero": 29_990, "fres-overlap": 29_989}


@pytest.mark.parametrize("form", [[], ["--json"]], ids=["text", "json"])
def test_a_dump_of_functions_sharing_rows_stops_at_its_bound(tmp_path: Path, form: list[str]) -> None:
    """400 FDEs that each point at one block of 2,000 rows (an 8 KB section that describes 800,000 rows):
    the dump streams, and stops once past the bound it states (it wrote gigabytes for a 160 KB section)."""
    rows, count = 2000, 400
    block = b"".join(bytes([j % 256, 0x03, 8]) for j in range(rows))
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 * (i + 1), 0x1000, 0, rows, 0, 0, 0) for i in range(count))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, count, count * rows, len(block), 0, len(fdes))
    path = tmp_path / "shared.sframe"
    path.write_bytes(header + fdes + block)
    done = subprocess.run(
        [sys.executable, "-m", "sfview", "dump", *form, "--max-output", "1000000", str(path)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"sfview: {path}: the dump passes 1,000,000 bytes (--max-output): stopped (give --max-output)\n"
    )
    assert 0 < len(done.stdout) <= 1_000_000  # what would pass the bound is not written
