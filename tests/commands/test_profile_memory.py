"""A consumer profile's verdict holds memory within ten times the section, plus a constant.

The shape that cost the most per byte: 50,000 functions all starting at one
address, each its own two rows (`handmade.at_one_start`), where every lookup
fails, so the libsframe profile holds a failure, an FDE and a function's PCs
for each. Peak resident memory (`run_with_peak`), the constant being the same
command's on ten functions of the same shape. The answers themselves are held
to libsframe's own code by tests/oracles/test_libsframe.py.
"""

from __future__ import annotations

from pathlib import Path

from conftest import run_with_peak
from handmade import at_one_start

FUNCTIONS = 50_000
PER_BYTE = 10


def test_the_libsframe_verdict_on_functions_at_one_start_is_bounded_by_the_bytes(tmp_path: Path) -> None:
    small, big = tmp_path / "small.sframe", tmp_path / "big.sframe"
    small.write_bytes(at_one_start(2, 10))
    big.write_bytes(at_one_start(2, FUNCTIONS))
    _, constant = run_with_peak("check", "--profile", "libsframe", str(small))
    out, peak = run_with_peak("check", "--profile", "libsframe", str(big))
    assert f"and {FUNCTIONS - 3} more ranges fail with SFRAME_ERR_FDE_NOTFOUND" in out
    assert peak - constant < PER_BYTE * big.stat().st_size, (peak - constant) / big.stat().st_size
