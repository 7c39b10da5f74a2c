"""Every consumer profile reads a section's rows a bounded number of times, however its functions overlap.

Not timed (timings flake on a shared machine): what is counted is the rows
each profile reads, on the shapes that cost the most per byte, functions
reading overlapping blocks of one pool of rows (`handmade.overlapping`:
2,000 functions of 2,000 rows each, where reading every function's rows
again is four million row reads). The answers themselves are held to the
consumers' own code on smaller sections of the same shapes
(tests/oracles/test_libsframe.py, test_glibc.py; the kernel's corpus has them
too). bench/bench_profiles.py times them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import run_process
from handmade import at_one_start, long_function, overlapping, past_the_pool, pcmask_gigabytes, rows_alike

from sfview.consumers import glibc, kernel, kernel_linux_mm, libsframe_lookups
from sfview.consumers.libsframe import row_bound
from sfview.consumers.verdicts import profiles

FUNCTIONS = ROWS = 2000
WALKED = 32 * FUNCTIONS
"""Row tests walked at most: a few per function (the search over overlapping functions sends a PC to an
earlier function holding it too, O(log) functions back, whose rows are walked to the PC's offset)."""


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Count what `module.name` (a generator of conditions, or a method reading a row) gives."""
    count = [0]
    original: Callable = getattr(module, name)

    def walk(*args: object) -> Iterator[object]:
        for step in original(*args):
            count[0] += 1
            yield step

    def read(*args: object) -> object:
        count[0] += 1
        return original(*args)

    monkeypatch.setattr(module, name, read if name in ("head", "add") else walk)
    return count


@pytest.mark.parametrize(
    ("profile", "version", "slide"),
    [
        ("libsframe-2.40", 1, True),
        ("libsframe-2.40", 1, False),
        ("libsframe-2.44", 2, True),
        ("libsframe-2.47", 2, False),
        ("libsframe-2.47", 3, True),
    ],
)
def test_libsframe_walks_each_function_as_far_as_its_pcs(
    monkeypatch: pytest.MonkeyPatch, profile: str, version: int, slide: bool
) -> None:
    """A function's rows are walked until they answer every PC judged (4 bytes a function here), not to
    their count; the byte-swapping walk, which the library does go through in full, stops at the bound
    and the verdict says so."""
    walked = _counting(monkeypatch, libsframe_lookups, "_walk")
    data = overlapping(version, FUNCTIONS, ROWS, slide)
    verdict = profiles()[profile].judge(data, 0)
    assert verdict.accepted
    assert 0 < walked[0] <= WALKED
    assert not any("lookups past" in note for note in verdict.notes)
    assert any(note.startswith("rows not compared with the format's") for note in verdict.notes)
    if version < 3:
        bound = row_bound(data)
        assert any(f"not judged: the byte-swapping walk goes on past {bound} rows" in note for note in verdict.notes)


@pytest.mark.parametrize(
    ("profile", "version"), [("libsframe-2.40", 1), ("libsframe-2.44", 2), ("libsframe-2.47", 2), ("libsframe", 3)]
)
def test_libsframe_searches_the_pcs_of_functions_at_one_start_once(
    monkeypatch: pytest.MonkeyPatch, profile: str, version: int
) -> None:
    """2,000 functions at one start judge the same PCs, each: the search over the FDEs runs for the first
    (as often as its PCs meet FDE starts and ends, a dozen times in 2.47's eyes of version 2), and the
    others are given its answers again, where searching again is 2,000 times that. Every function still
    gets its own verdict on them (2.47 on version 2: its first 28 PCs before any FDE, for each)."""
    searched = [0]
    search = libsframe_lookups._search

    def counted(*args: object) -> int:
        searched[0] += 1
        return search(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(libsframe_lookups, "_search", counted)
    verdict = profiles()[profile].judge(at_one_start(version, FUNCTIONS), 0)
    assert verdict.accepted
    assert 0 < searched[0] <= 64
    missed = FUNCTIONS if (profile, version) == ("libsframe-2.47", 2) else 0
    assert len(verdict.lookups) == missed
    assert sorted(f.function for f in verdict.lookups) == list(range(missed))


def test_glibc_searches_the_pcs_of_functions_at_one_start_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for glibc's profile: 2,000 functions at one start, the search over the FDEs run for the
    first function's PCs only (glibc reads the starts as they are: two pieces), where searching again is
    2,000 times that; every function gets its own verdict (none fails: each PC is in some FDE's rows)."""
    searched = [0]
    search = glibc.Reader.search

    def counted(reader: glibc.Reader, pc: int) -> int:
        searched[0] += 1
        return search(reader, pc)

    monkeypatch.setattr(glibc.Reader, "search", counted)
    verdict = profiles()["glibc-2.43"].judge(at_one_start(2, FUNCTIONS), 0)
    assert verdict.accepted
    assert 0 < searched[0] <= 8
    assert verdict.notes[0] == f"backtrace() computes the caller's frame from the section at {FUNCTIONS * 0x100} PCs"


@pytest.mark.parametrize("slide", [True, False])
def test_glibc_walks_each_function_as_far_as_its_pcs(monkeypatch: pytest.MonkeyPatch, slide: bool) -> None:
    walked = _counting(monkeypatch, glibc, "_walk")
    verdict = profiles()["glibc-2.43"].judge(overlapping(2, FUNCTIONS, ROWS, slide), 0)
    assert verdict.accepted
    assert 0 < walked[0] <= WALKED
    assert not any("not judged" in note for note in verdict.notes)


@pytest.mark.parametrize(
    ("profile", "reader"), [("kernel-v14", kernel._Reader), ("kernel", kernel_linux_mm._NewestReader)]
)
def test_the_kernel_reads_each_row_once(monkeypatch: pytest.MonkeyPatch, profile: str, reader: type) -> None:
    """Every function validated against the one block of rows (the kernel reads it 2,000 times): the
    profile's validation reads each row once (one node a row), its lookups read a few rows again a
    function (the store keeps offsets, not answers), and the verdict is the same as for one function
    alone."""
    nodes = _counting(monkeypatch, kernel._Rows, "add")
    reads = _counting(monkeypatch, reader, "head")
    data = overlapping(3, FUNCTIONS, ROWS)
    verdict = profiles()[profile].judge(data, 0)
    assert verdict.accepted and not verdict.lookups
    assert ROWS <= nodes[0] <= ROWS + 2
    assert ROWS <= reads[0] <= ROWS + 8 * FUNCTIONS


@pytest.mark.parametrize(
    ("version", "damage"), [(3, b""), (2, b""), (1, b""), (3, b"\xde\xe3")], ids=["v3", "v2", "v1", "bad-magic"]
)
def test_three_consumers_answer_in_one_run(tmp_path: Path, version: int, damage: bytes) -> None:
    """`check --profile kernel-v14 --profile kernel --profile glibc-2.43` on any section: each profile's verdict,
    once each, in one run (a damaged magic included: every one refuses)."""
    data = long_function(version, 40)
    path = tmp_path / "section.sframe"
    path.write_bytes(damage + data[len(damage) :])
    names = ("kernel-v14", "kernel", "glibc-2.43")
    result = run_process("check", *(word for name in names for word in ("--profile", name)), str(path))
    assert result.returncode in (0, 1), result.stderr
    for name in names:
        said = [
            line for line in result.stdout.splitlines() if line.startswith(f"{path}: {name}: ") and "  " not in line
        ]
        assert len(said) == 1, (name, result.stdout)
        verdict = profiles()[name].judge(path.read_bytes(), 0)
        assert said[0].startswith(f"{path}: {name}: {'accepted' if verdict.accepted else 'refused'}"), said
        if damage:
            assert not verdict.accepted


def _lookups_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A count of the kernel's `Lookup`s made from now on (while `monkeypatch` holds)."""
    made = [0]

    class Counted(kernel.Lookup):
        def __init__(self, *args: object) -> None:
            made[0] += 1
            super().__init__(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(kernel, "Lookup", Counted)
    return made


def test_the_kernel_lists_only_the_rows_inside_each_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row of the one block fails its lookups in the v14 kernel (no data words): each function lists
    the failing rows inside its own 4 bytes, not the 2,000 rows its count claims."""
    made = _lookups_counted(monkeypatch)
    rows = b"".join(struct.pack("<HB", 2 * k, 0x01) for k in range(ROWS))  # 2-byte starts, no data words
    block = struct.pack("<HBBB", ROWS, 0x01, 0, 0) + rows
    table = b"".join(struct.pack("<qII", 0x1000 + 4 * i - (28 + 16 * i), 2 * ROWS + 2, 0) for i in range(FUNCTIONS))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 3, 5, 3, 0, -8, 0, FUNCTIONS, ROWS, len(block), 0, len(table))
    verdict = profiles()["kernel-v14"].judge(header + table + block, 0)
    assert verdict.accepted
    assert [(f.start, f.end, f.error) for f in verdict.lookups] == [
        (0x1000, 0x1000 + 4 * FUNCTIONS - 4 + 2 * ROWS + 2, "-EINVAL")
    ]
    assert made[0] <= 8 * FUNCTIONS  # a few a function (those merged included), not 2,000


def test_the_kernel_lists_rows_alike_as_one_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 functions of 4 KB, each holding all 2,000 rows of one block, every row failing one way
    (`handmade.rows_alike`: 4 million ranges of rows in all): each function lists one range, not a range
    a row, and the verdict is the one range every function's PCs make together, judged to the end."""
    made = _lookups_counted(monkeypatch)
    size = 0x1000
    verdict = profiles()["kernel-v14"].judge(rows_alike(FUNCTIONS, ROWS, size), 0)
    assert verdict.accepted
    assert [(f.start, f.end, f.error) for f in verdict.lookups] == [(0x1000, 0x1000 + size * FUNCTIONS, "-EINVAL")]
    assert not any("not judged" in note for note in verdict.notes)
    assert made[0] <= 8 * FUNCTIONS


def test_pcmask_functions_of_gigabytes_stop_within_a_few_runs_a_byte() -> None:
    """200 PCMASK functions of 4 GB each, rep_size 16, two rows: under 2.44 a lookup fails every 16 bytes,
    billions of failing runs. The verdict judges a run per byte of the section (each some microseconds of
    work, each failure listed), says where it stopped, and the bound it names is at most 1 a byte (it was
    64, then 4: 20,000 such functions took 10 s and 52 MB)."""
    data = pcmask_gigabytes(200)
    verdict = profiles()["libsframe-2.44"].judge(data, 0)
    stops = [note for note in verdict.notes if "not judged: more than" in note]
    assert stops, verdict.notes
    bound = int(stops[0].split("more than ")[1].split()[0])
    assert bound <= len(data) + 4096


@pytest.mark.parametrize("profile", ["libsframe", "glibc-2.43"])
def test_pcmask_functions_of_gigabytes_are_painted_once(monkeypatch: pytest.MonkeyPatch, profile: str) -> None:
    """The same 200 functions where every lookup finds a row (2.47, glibc): the verdict judges every PC of
    them, each function's rows' pattern painted once and a stretch of blocks finding rows one answer (a few
    runs painted a function, where painting block by block is 4,096 blocks a function, past the bound)."""
    painted = _counting(monkeypatch, libsframe_lookups.Periodic, "runs")
    verdict = profiles()[profile].judge(pcmask_gigabytes(200), 0)
    assert verdict.accepted
    assert not any("not judged" in note for note in verdict.notes), verdict.notes
    assert 0 < painted[0] <= 8 * 200


@pytest.mark.parametrize(("profile", "version"), [("libsframe", 3), ("libsframe", 2), ("glibc-2.43", 2)])
def test_pcmask_functions_past_a_pool_paint_one_block_per_cut(
    monkeypatch: pytest.MonkeyPatch, profile: str, version: int
) -> None:
    """3,000 PCMASK functions of 2 KB each claiming 65,535 rows of a pool of 1,000 (rep_size 16): below the
    last row's start a row's start test cuts each block. Each cut is painted once and the runs merged from
    offset 0 are shared by the functions alike (2.47 sees a version 2 function's PCs cut elsewhere in each):
    the verdict is whole, the runs painted a few thousand for the walk, not the 128 blocks of each function
    (each painted from its 2,000 conditions: the section's 30,000 functions took 30 s)."""
    painted = _counting(monkeypatch, libsframe_lookups.Periodic, "runs")
    verdict = profiles()[profile].judge(past_the_pool(version, 3000, 1000, size=0x800, pcmask=True), 0)
    assert verdict.accepted
    assert not any("not judged" in note for note in verdict.notes), verdict.notes
    assert 0 < painted[0] <= 8 * 1000


@pytest.mark.parametrize("profile", ["libsframe", "libsframe-2.44", "glibc-2.43"])
def test_a_pcmask_function_of_many_row_starts_is_painted_within_the_bound(
    monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    """One PCMASK function of 4 GB, rep_size 255, whose first 255 rows start one byte apart (a block of 255
    runs) and whose next 5,000 start 600 bytes apart (4-byte starts): each of those starts cuts the blocks
    after it again, 255 runs read for each cut. The work the function's `Periodic` does, the cuts read
    included, stays within the verdict's runs bound (plus one span's merging), and the verdict says where
    it stopped (it was 12 million runs read before the first answer). 2.44 tests the rows on the PC modulo
    rep_size alone: every block alike, judged whole."""
    made: list[libsframe_lookups.Periodic] = []
    init = libsframe_lookups.Periodic.__init__

    def kept(self: libsframe_lookups.Periodic, *args: object) -> None:
        init(self, *args)  # type: ignore[arg-type]
        made.append(self)

    monkeypatch.setattr(libsframe_lookups.Periodic, "__init__", kept)
    starts = list(range(255)) + [255 + 600 * k for k in range(5000)]
    rows = b"".join(struct.pack("<IBb", start, 0x03, 8 + i % 64) for i, start in enumerate(starts))
    fde = struct.pack("<iIIIBBH", 0x1000, 0xFFFFFFFF, 0, len(starts), 0x12, 255, 0)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 1, len(starts), len(rows), 0, len(fde))
    data = header + fde + rows
    verdict = profiles()[profile].judge(data, 0)
    assert verdict.accepted and made
    assert sum(periodic.steps for periodic in made) <= len(data) + 4096 + 2 * libsframe_lookups.PERIODIC_RUNS
    stopped = any("not judged" in note for note in verdict.notes)
    assert stopped == (profile != "libsframe-2.44"), verdict.notes  # 2.44 tests no start: one block, repeated
