"""`sfview perf`'s frames named as `perf script` names them where there is debug information: the program
(tests/data/perf-work.c) built with `-g -O2`, which inlines `mix` into `leaf` and `outer`, and libc named from its
separate debug file (libc6-dbg) with the functions inlined in it (`msort_with_tmp` in itself, `pad_func`).

`perf script` (without `--no-inline`) prints a line for each function inlined at a callchain's address, then the
function it was inlined into, each named from DWARF; `stackcollapse-perf.pl` makes each line a frame of the folded
stack. sfview's `--folded dwarf` is held to the stacks so made from `perf script`'s own output, its `--sample N`
to that sample's lines, and `--no-inline` to the physical frames alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import BinaryIO, NamedTuple

import pytest
from conftest import run_process
from test_perf import RECORD, Recorded, _build, _perf, _record, _time

from sfview.dwarf.source import DebugInfo
from sfview.inputs.perf_data import PerfData
from sfview.profiling.coverage import DebugNames, FrameNames
from sfview.profiling.profile import Profile, coverage
from sfview.profiling.walks import Mode
from sfview.unwind.session import file_debug_info

LINE = re.compile(r"^\s*[0-9a-f]+ (.*?)(?:\+0x[0-9a-f]+)? \((?:inlined|\S*)\)$")
"""A callchain line of `perf script`: the address, the name (and offset), `(inlined)` or the file."""
HEAD = re.compile(r"^\S+\s+\d+/?(\d*)\s+([\d.]+):")
"""A sample's first line in `perf script`'s default output: command, PID (or PID/TID), time."""


def _stacks(script: str) -> dict[str, list[str]]:
    """Each sample's callchain names by its time, innermost first."""
    stacks = {}
    for block in script.split("\n\n"):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        head = HEAD.match(lines[0])
        assert head is not None, lines[0]
        names = [m[1] for m in map(LINE.match, lines[1:]) if m is not None]
        stacks[head[2]] = names
    return stacks


class Profiled(NamedTuple):
    """A profile recorded here, and the build-id cache perf wrote beside it (`PERF_BUILDID_DIR`)."""

    data: Path
    build_ids: str

    def stacks(self, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """Each sample's callchain names by its time, innermost first: `perf script`'s, and sfview's DWARF
        stack named as `sfview perf` names its frames (a line for each function inlined at a PC); the same
        samples in both."""
        env = {**os.environ, "PERF_BUILDID_DIR": self.build_ids}
        theirs = _stacks(_perf("script", "-i", str(self.data), cwd=self.data.parent, env=env).stdout)
        monkeypatch.setenv("PERF_BUILDID_DIR", self.build_ids)
        ours = {}
        with PerfData(str(self.data)) as perf:
            profile = Profile(perf)
            counted, debug = FrameNames(True, profile.files.found), DebugNames(file_debug_info)
            for sample, walked in profile.walks():
                assert walked is not None
                chains = (debug.chain(counted.name(frame)) for frame in walked[Mode.DWARF].frames)
                ours[_time(sample.time)] = [name for chain in chains for name in reversed(chain)]
        assert sorted(ours) == sorted(theirs)
        return theirs, ours

    def sfview(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`sfview perf` on the profile."""
        return run_process("perf", str(self.data), *args, env={"PERF_BUILDID_DIR": self.build_ids})


def record_profile(program: Path, *args: str) -> Profiled:
    """`perf record -e cpu-clock:u --call-graph dwarf` of `program ARGS`, beside it, on one CPU (`taskset`):
    perf writes each CPU's buffer in turn, so that a sample on one CPU can come in the file before the
    mappings of its process written on another, which both `perf script` and sfview order by time within
    perf's rounds (`test_perf.py` holds that); the tests of names are not about it."""
    build_ids, data = str(program.parent / "buildid"), program.parent / "perf.data"
    perf = ["taskset", "-c", "0", "perf", "--buildid-dir", build_ids]
    record = [*perf, *RECORD, "--call-graph", "dwarf", "-o", str(data), "--", str(program)]
    env = {**os.environ, "PERF_BUILDID_DIR": build_ids}
    result = subprocess.run([*record, *args], capture_output=True, text=True, cwd=program.parent, env=env, timeout=120)
    if result.returncode != 0 or not data.exists():
        pytest.skip(f"perf record cannot record here (as root, perf_event_paranoid ≤ 1): {result.stderr.strip()}")
    return Profiled(data, build_ids)


@pytest.fixture(scope="module")
def with_debug(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    for tool in ("perf", "gcc"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: it records the profile sfview is compared on (linux-perf, gcc)")
    recorded = Recorded(tmp_path_factory.mktemp("perfnames"))
    _build(recorded.folder, "-g")
    _record(recorded, recorded.data, "--call-graph", "dwarf")
    return recorded


def _folded(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        counts[stack] += int(count)
    return counts


def test_folded_stacks_have_perf_scripts_inlined_frames(with_debug: Recorded) -> None:
    theirs = Counter(";".join(reversed(names)) for names in _stacks(with_debug.script()).values())
    result = with_debug.sfview(str(with_debug.data), "--folded", "dwarf")
    assert result.returncode == 0, result.stderr
    ours = _folded(result.stdout)
    samples = sum(theirs.values())
    assert samples > 200 and sum(ours.values()) == samples
    assert any(";leaf;mix" in stack for stack in theirs), "perf script shows mix inlined into leaf"
    same = sum((theirs & ours).values())
    assert same >= 0.99 * samples, (same, samples, list((theirs - ours).items())[:3], list((ours - theirs).items())[:3])


def test_no_inline_folds_the_physical_frames(with_debug: Recorded) -> None:
    result = with_debug.sfview(str(with_debug.data), "--folded", "dwarf", "--no-inline")
    assert result.returncode == 0, result.stderr
    ours = _folded(result.stdout)
    assert not [stack for stack in ours if ";mix" in stack], "mix is never a physical frame"
    assert any(stack.endswith(";middle;leaf") for stack in ours)


def test_a_sample_prints_perf_scripts_frames(with_debug: Recorded) -> None:
    """A sample in `mix` inlined into `leaf`: its DWARF walk as gdb prints it, a line for each function, as
    `perf script` names them; `--no-inline`: the physical frames alone."""
    stacks = _stacks(with_debug.script())
    with PerfData(str(with_debug.data)) as perf:
        number, time = next(
            (sample.number, _time(sample.time))
            for sample, _ in Profile(perf).walks(walk=False)
            if stacks.get(_time(sample.time), [""])[:2] == ["mix", "leaf"]
        )
    result = with_debug.sfview(str(with_debug.data), "--sample", str(number))
    assert result.returncode == 0, result.stderr
    assert _dwarf_names(result.stdout) == stacks[time], result.stdout
    physical = with_debug.sfview(str(with_debug.data), "--sample", str(number), "--no-inline").stdout
    assert _dwarf_names(physical)[0] == "leaf" and "mix" not in _dwarf_names(physical), physical


def _dwarf_names(shown: str) -> list[str]:
    """The functions of the DWARF walk `--sample` prints, a frame line each."""
    dwarf = shown.split("DWARF CFI (as perf script):")[1]
    lines = [line for line in dwarf.splitlines() if line.startswith("#")]
    return [re.sub(r"^#\d+\s+(0x[0-9a-f]+ in )?", "", line).split(" (")[0] for line in lines]


def test_the_report_groups_by_the_function_inlined(with_debug: Recorded) -> None:
    """Where SFrame parts from DWARF in `mix`, the place says so: `mix (inlined into leaf)`, its samples
    apart from `leaf`'s own; without inlining, they count as `leaf`'s."""
    report = json.loads(with_debug.sfview(str(with_debug.data), "--json").stdout)
    functions = {p["function"] for p in report["by_function"]}
    assert "mix (inlined into leaf)" in functions, functions
    physical = json.loads(with_debug.sfview(str(with_debug.data), "--json", "--no-inline").stdout)
    assert not [p for p in physical["by_function"] if "inlined" in p["function"]]
    leaf = sum(p["samples"] for p in physical["by_function"] if p["function"] == "leaf")
    inline = sum(p["samples"] for p in report["by_function"] if p["function"] in ("leaf", "mix (inlined into leaf)"))
    assert leaf == inline > 0


def test_each_files_debug_information_is_opened_once(
    with_debug: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two processes unwinding, the frames are named once, after their counts are merged: each file's
    debug information is opened once in the run, not once a process (each opening written to a file the
    forked processes write to as well), and the folded stacks are those of one process."""
    log = tmp_path / "opened"
    opened = DebugInfo.__init__

    def counted(self: DebugInfo, stream: BinaryIO, path: str) -> None:
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {path}\n")
        opened(self, stream, path)

    monkeypatch.setattr(DebugInfo, "__init__", counted)
    monkeypatch.setenv("PERF_BUILDID_DIR", with_debug.env["PERF_BUILDID_DIR"])
    counts, _ = coverage(str(with_debug.data), jobs=2)
    lines = log.read_text().splitlines()
    by_file = Counter(line.split(" ", 1)[1] for line in lines)
    assert str(with_debug.program) in by_file, by_file
    assert set(by_file.values()) == {1}, by_file
    assert {line.split(" ", 1)[0] for line in lines} == {str(os.getpid())}, "named in the process that merges"
    log.unlink()
    alone, _ = coverage(str(with_debug.data), jobs=1)
    assert alone.folded == counts.folded
    assert any(";leaf;mix" in stack for stack in counts.folded[Mode.DWARF])
