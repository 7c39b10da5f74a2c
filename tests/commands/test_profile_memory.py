"""A consumer profile's verdict holds memory within ten times the section, plus a constant.

The shape that cost the most per byte: 20,000 functions all starting at one
address, each its own two rows (`handmade.at_one_start`), where every lookup
fails, so the libsframe profile held a failure, an FDE and a function's PCs
for each. Memory as `tracemalloc` counts it (peak resident memory came
out too close to the bound to gate on), the
constant being the same command's on ten functions of the same shape. The
answers themselves are held to libsframe's own code by
tests/oracles/test_libsframe.py.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from conftest import run_cli
from handmade import at_one_start

FUNCTIONS = 20_000
PER_BYTE = 10


def _peak(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, int]:
    """What `check --profile libsframe PATH` printed, and the most memory it held at once."""
    tracemalloc.start()
    try:
        out = run_cli("check", "--profile", "libsframe", str(path), capsys=capsys).out
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_libsframe_verdict_on_functions_at_one_start_is_bounded_by_the_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small, big = tmp_path / "small.sframe", tmp_path / "big.sframe"
    small.write_bytes(at_one_start(2, 10))
    big.write_bytes(at_one_start(2, FUNCTIONS))
    run_cli("check", "--profile", "libsframe", str(small), capsys=capsys)  # the modules imported
    _, constant = _peak(small, capsys)
    out, peak = _peak(big, capsys)
    assert f"and {FUNCTIONS - 3} more ranges fail with SFRAME_ERR_FDE_NOTFOUND" in out
    assert peak - constant < PER_BYTE * big.stat().st_size, (peak - constant) / big.stat().st_size
