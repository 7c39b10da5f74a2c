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
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from handmade import (
    across_fde_types,
    at_one_start,
    bare_rows,
    distinct_rows,
    long_function,
    nested,
    past_the_pool,
    pcmask_gigabytes,
    row_heavy,
    signed_rows,
)

from sfview.consumers import BYTES_PER_FAILURE, FAILURES_FREE
from sfview.consumers.verdicts import profiles

FUNCTIONS = 20_000
PROFILES = profiles()
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


def _judged_peak(data: bytes, profile: str = "libsframe", whole: bool = True) -> int:
    """The most memory `profile`'s verdict on `data` held at once (the profile alone: `check`'s own problems
    are bounded by `--max-problems`, a constant this test does not measure); `whole`: judged to the end."""
    tracemalloc.start()
    try:
        verdict = PROFILES[profile].judge(data, 0)
        assert verdict.accepted, verdict.notes
        assert not whole or not any("not judged" in note for note in verdict.notes[:-1]), verdict.notes
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _added_within_bound(fewer: bytes, more: bytes, profile: str = "libsframe", whole: bool = True) -> None:
    """The memory `profile`'s verdict holds on `more` beyond what it holds on `fewer` is within `PER_BYTE`
    times the bytes `more` adds (`fewer` judged once first: the caches any verdict fills)."""
    _judged_peak(fewer, profile, whole)
    added = _judged_peak(more, profile, whole) - _judged_peak(fewer, profile, whole)
    assert added < PER_BYTE * (len(more) - len(fewer)), added / (len(more) - len(fewer))


@pytest.mark.parametrize("version", [2, 3])
def test_functions_claiming_rows_past_one_pool_are_judged_within_the_bound(version: int) -> None:
    """Functions 2 KB long, each claiming 65,535 rows of one pool of 1,000: each walk runs through the pool
    into its end. The rows found are one answer (more rows are claimed than the verdict compares), the
    failures kept once each, and in 2.47 the functions alike share one walk: judged to the end (the verdict
    stopped at its bound of rows walked after a few functions, holding 150 MB at 30,000), and the memory
    2,000 more functions add within ten times the bytes they add."""
    fewer, more = past_the_pool(version, 1000, 1000, size=0x800), past_the_pool(version, 3000, 1000, size=0x800)
    _added_within_bound(fewer, more)


def test_the_glibc_verdict_on_functions_at_one_start_is_bounded_by_the_bytes() -> None:
    """glibc 2.43's profile on functions all starting at one address (`handmade.at_one_start`): its FDE table,
    the search's breaks and the failures held as arrays, the failures kept without their tracebacks; the
    memory 15,000 more functions add within ten times the bytes they add (it held 12 times)."""
    fewer, more = at_one_start(2, 5000), at_one_start(2, 20_000)
    _added_within_bound(fewer, more, "glibc-2.43")


def test_walks_kept_in_2_40_hold_conditions_within_the_bound() -> None:
    """2.40 (keys are PCs) on functions claiming 65,535 rows past one pool of 1,000: each walk goes on into
    the rows past the pool until the row tests' bound stops the verdict (as it did before). The walks kept
    for functions asked again hold a bounded number of conditions in all, not 256 walks of any length: the
    memory 9,000 more functions add within ten times the bytes they add (it was 315 times)."""
    fewer, more = past_the_pool(1, 1000, 1000, size=0x800), past_the_pool(1, 10_000, 1000, size=0x800)
    _added_within_bound(fewer, more, "libsframe-2.40", whole=False)


@pytest.mark.parametrize(
    ("profile", "version", "first", "fewer", "more"),
    [
        ("libsframe-2.44", 2, 0, 2000, 10_000),
        ("libsframe-2.40", 1, 0, 2000, 10_000),
        pytest.param("glibc-2.43", 2, 4, 10_000, 30_000, marks=pytest.mark.slow),  # its kept runs filled first
    ],
)
def test_pcmask_functions_failing_every_repeat_list_failures_within_the_bound(
    profile: str, version: int, first: int, fewer: int, more: int
) -> None:
    """PCMASK functions of 4 GB (`handmade.pcmask_gigabytes`) where 2.44 (and 2.40 on version 1) fails a
    lookup every 16 bytes, and glibc in the first 4 bytes of every repeat (`first` 4): billions of failures.
    At most one is listed per 8 bytes of the section past a constant, a note saying where the judging
    stopped, and the memory the functions past `fewer` add within ten times the bytes they add (28 bytes a
    range listed, up to one a byte before: 18-20 times)."""
    small, big = pcmask_gigabytes(fewer, version, first=first), pcmask_gigabytes(more, version, first=first)
    verdict = PROFILES[profile].judge(big, 0)
    assert verdict.accepted
    listed = len(verdict.lookups)
    assert listed == len(big) // BYTES_PER_FAILURE + FAILURES_FREE  # every profile's one bound
    reason = f"more than {listed} failing ranges (one per {BYTES_PER_FAILURE} bytes)"
    (stop,) = [int(note.split()[2], 16) for note in verdict.notes if note.endswith(f"and past not judged: {reason}")]
    assert stop >= verdict.lookups[-1].end  # the first failing PC not listed
    _added_within_bound(small, big, profile, whole=False)


@pytest.mark.parametrize("bare", [False, True], ids=["cfa", "bare"])
@pytest.mark.parametrize("profile", ["libsframe", "libsframe-2.44", "glibc-2.43"])
def test_one_long_function_is_judged_within_the_bound(profile: str, bare: bool) -> None:
    """One function of 20,000 rows, none repeating (`handmade.long_function`, 4 bytes a row; `bare`, without
    data words: 3): its walk keeps its conditions as columns of numbers and its rows as references decoded
    again when asked for, and paints its runs one at a time (it held a tuple and a decoded row or step for
    each: 73-160 times the bytes), so the memory 15,000 more rows add stays within ten times the bytes they
    add. The answers are held to the libraries' own code by tests/oracles/test_libsframe.py and
    test_glibc.py."""
    fewer, more = long_function(2, 5000, bare), long_function(2, 20_000, bare)
    _added_within_bound(fewer, more, profile)


def test_rows_failing_one_after_another_for_one_reason_are_one_range() -> None:
    """glibc on a function of 20,000 rows without data words: every row's step fails the same way, each row
    its own answer; the failing ranges list them as one (`LookupFailures.add`: a range going on from the last
    for the same reason in the same function), not one a row (28 bytes held a row of 3 bytes)."""
    data = long_function(2, 20_000, bare=True)
    verdict = PROFILES["glibc-2.43"].judge(data, 0)
    rule = "the row has no CFA offset (sframe_get_fre_offset)"
    assert [(f.start, f.end, f.rule, f.function) for f in verdict.lookups] == [(0x1000, 0x1000 + 40_000, rule, 0)]


ROW_HEAVY = [("libsframe", 3, "s390x"), ("glibc-2.43", 2, "aarch64")]
"""The libsframe profiles' rows and glibc's, each on a shape it reads (glibc reads its host's byte order
only)."""


@pytest.mark.slow  # huge inputs: 40,000 rows and more under tracemalloc
@pytest.mark.parametrize(("profile", "version", "abi"), ROW_HEAVY)
def test_functions_of_many_rows_are_judged_within_the_bound(profile: str, version: int, abi: str) -> None:
    """Ordinary functions of 100 rows each, their own block (`handmade.row_heavy`: AArch64 with signed RAs,
    big-endian s390x): the rows decoded are kept for the functions being judged, not for the whole section
    (kept all, they held 50-90 times the section): with the walks and rows kept filled by the fewer, the
    memory 1,200 more functions add within ten times the bytes they add."""
    fewer, more = row_heavy(version, abi, 400, 100), row_heavy(version, abi, 1600, 100)
    _added_within_bound(fewer, more, profile, whole=False)


@pytest.mark.parametrize("profile", ["libsframe", "libsframe-2.44"])
def test_a_pcmask_function_repeating_its_rows_is_judged_within_the_bound(profile: str) -> None:
    """One PCMASK function of 4 GB whose rows' starts repeat every 256 (rep_size 255, big-endian s390x): the
    rows past the first 256 test keys the earlier ones hold, and its walk does not keep them (it kept two
    conditions and a decoded row for each: 120-140 times the section at 65,535 rows), so the memory 49,152
    more rows add stays within ten times the bytes they add."""
    version = 3 if profile == "libsframe" else 2
    fewer, more = (row_heavy(version, "s390x", 1, rows, size=0xFFFFFFFF, rep=255) for rows in (16384, 65535))
    _added_within_bound(fewer, more, profile, whole=False)


KERNELS = ["kernel", "kernel-v14", "kernel-arm64-module"]


@pytest.mark.parametrize("profile", KERNELS)
def test_the_kernel_holds_nested_functions_within_the_bound(profile: str) -> None:
    """Nested functions (`handmade.nested`): the rows the validation reads held as columns, each distinct
    answer (frame or refusal) once, the functions as columns: the memory 8,000 more functions add within
    ten times the bytes they add."""
    fewer, more = nested(2000), nested(10_000)
    _added_within_bound(fewer, more, profile)


@pytest.mark.parametrize("profile", KERNELS)
def test_pcmask_functions_of_gigabytes_are_judged_within_the_bound(profile: str) -> None:
    """PCMASK functions of 4 GB whose every lookup succeeds: nothing listed, and the memory 8,000 more
    functions add within ten times the bytes they add."""
    fewer, more = pcmask_gigabytes(2000, 3), pcmask_gigabytes(10_000, 3)
    _added_within_bound(fewer, more, profile)


@pytest.mark.parametrize("profile", KERNELS)
def test_pcmask_functions_failing_in_every_repeat_stop_at_the_bound(profile: str) -> None:
    """The same whose first 4 bytes of every repeat fail: 4,096 failing ranges a function, millions in all.
    The failures listed are the first ones, exactly (each repeat's first 4 bytes, in order), a note says
    where the judging stopped, and the memory 8,000 more functions add stays within ten times the bytes
    they add."""
    fewer, more = pcmask_gigabytes(2000, 3, first=4), pcmask_gigabytes(10_000, 3, first=4)
    verdict = PROFILES[profile].judge(more, 0)
    assert verdict.accepted
    assert [(f.start, f.end, f.rule) for f in verdict.lookups] == [
        (0x1000 + 16 * k, 0x1004 + 16 * k, "__find_fre: no FRE at or before ip_off")
        for k in range(len(verdict.lookups))
    ]
    stop, listed = 0x1000 + 16 * len(verdict.lookups), len(verdict.lookups)
    assert listed == len(more) // BYTES_PER_FAILURE + FAILURES_FREE  # every profile's one bound
    reason = f"more than {listed} failing ranges (one per {BYTES_PER_FAILURE} bytes)"
    assert f"lookups at {stop:#x} and past not judged: {reason}" in verdict.notes
    _added_within_bound(fewer, more, profile, whole=False)


@pytest.mark.parametrize("profile", KERNELS)
@pytest.mark.parametrize("shape", [signed_rows, distinct_rows, bare_rows], ids=["signed", "distinct", "bare"])
def test_the_kernel_judges_functions_of_many_rows_within_the_bound(profile: str, shape: Callable[[int], bytes]) -> None:
    """Functions of 100 rows each, each its own block: AArch64 signed rows alike (`handmade.signed_rows`,
    5 bytes a row: 11.6 bytes a byte held when each row was a node of 38 bytes), rows all different
    (`distinct_rows`: each distinct answer was a tuple held), rows of two bytes (`bare_rows`, the smallest):
    the memory 400 more functions add within ten times the bytes they add."""
    fewer, more = shape(100), shape(500)
    _added_within_bound(fewer, more, profile)


@pytest.mark.parametrize("profile", KERNELS)
def test_rows_read_by_two_fde_types_are_held_within_the_bound(profile: str) -> None:
    """Rows of two bytes each read by a function of FDE type 0 and one of type 5 (`handmade.across_fde_types`:
    the kernel reads them as two tables, a node each): the nodes of each 4 bytes of rows chained from one
    slot (one slot a byte held 11.7 times the bytes), the memory 90 more pairs add within ten times the
    bytes they add."""
    fewer, more = across_fde_types(10), across_fde_types(100)
    _added_within_bound(fewer, more, profile)
