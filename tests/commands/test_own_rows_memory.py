"""`check`, `dump` and `stats` on a section whose every function has rows of its own hold memory within ten
times the section, plus a constant.

The shape: 10,000 functions, each one row whose CFA offset (4 bytes) is its own, so that no two functions
share a row block, a row pattern or a rule. What grew with it: one rule object per distinct rule, kept by a
cache of a fixed count (65,536) whatever the section; the dump's notes keeping each pattern's warnings,
worded, though it prints only errors; `stats`' dict of every place of rows. Measured with `tracemalloc`, each
command in a process of its own (a cache filled by an earlier test or command would hide what the command
itself keeps), the constant being the same command's on ten such functions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import DATA
from test_diff import v2

FUNCTIONS = 10_000
PER_BYTE = 10

MEASURE = """
import io, json, os, sys, tracemalloc, contextlib
from sfview.cli import main

command, small, big = sys.argv[1:]

def peak(command, path):
    with open(os.devnull, 'w') as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()):
        tracemalloc.start()
        try:
            code = main([command, path])
            return code, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

peak(command, small)  # the modules imported
_, constant = peak(command, small)
code, most = peak(command, big)
print(json.dumps([code, most - constant]))
"""


def own_rows(count: int) -> bytes:
    """`count` functions 0x100 apart, each one row at +0 whose CFA offset (SP + i, 4 bytes) no other has."""
    return v2([(0x1000 + 0x100 * i, 0x100, [(0, i)]) for i in range(count)], offset_size=2)


def test_functions_with_rows_of_their_own_are_bounded_by_the_bytes(tmp_path: Path) -> None:
    small, big = tmp_path / "small.sframe", tmp_path / "big.sframe"
    small.write_bytes(own_rows(10))
    big.write_bytes(own_rows(FUNCTIONS))
    found = {}
    for command in ("check", "dump", "stats"):  # each in a process of its own: what one made, the next would reuse
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, command, str(small), str(big)],
            capture_output=True,
            text=True,
            cwd=DATA.parents[1],
            check=True,
        )
        found[command] = json.loads(done.stdout)
    size = big.stat().st_size
    assert {command: code for command, (code, _) in found.items()} == {"check": 1, "dump": 0, "stats": 0}
    ratios = {command: round(grown / size, 1) for command, (_, grown) in found.items()}
    assert all(ratio < PER_BYTE for ratio in ratios.values()), ratios
