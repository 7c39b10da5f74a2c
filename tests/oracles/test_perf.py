"""`sfview perf` against `perf script` on profiles recorded here.

A C program with a few call levels (tests/data/perf-work.c, built with `gcc
-Wa,--gsframe -O2`) is profiled once for the module with `perf record -e
cpu-clock:u --call-graph dwarf` (about 0.3 s); perf's build-id cache goes to a
folder of the test (`perf --buildid-dir`, which sfview reads as `PERF_BUILDID_DIR`,
the variable perf sets for what it runs), not to the machine's `~/.debug`.

- The reader: every record sits at the file offset `perf report -D` prints, each
  mapping with its fields; every sample's PID, TID, time and IP are the ones `perf script
  -F pid,tid,time,ip` prints.
- The DWARF walk: each sample's stack is `perf script --no-inline`'s callchain
  (perf prints the PC of frame 0 and each caller's return address minus one,
  relative to its file's mapping), for at least 99 % of the samples.
- The report: its counts add up to the samples perf script prints, libc (which
  Debian builds without `.sframe`, as readelf shows) is said to have none; the
  kernel's reader (`sfview.consumers.kernel`, itself held to the kernel's code)
  refuses the system's version 1 section and accepts binutils 2.47's version
  3, whose SFrame walk then gives DWARF's frames through the program.
- Code without CFI (an assembly loop) is named as the place SFrame parts from
  DWARF, with why, and its sample opens; a sample opens in the debugger.
- Bad input: a profile cut short is read up to the cut, and says so; a
  profile without `--call-graph dwarf` is refused with how to record one; a
  program rebuilt since the profile is named, its frames left out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, debugger_shown, run_process
from toolchains import toolchain

from sfview.consumers import PROFILES, kernel_linux_mm
from sfview.document import Document
from sfview.inputs.perf_data import Mmap, PerfData, Record, Sample, Task
from sfview.output import profile_report
from sfview.profiling import profile
from sfview.profiling.coverage import Coverage
from sfview.profiling.profile import Profile
from sfview.profiling.walks import Mode, Walker
from sfview.unwind.engine import Frame

SOURCE = DATA / "perf-work.c"
ROUNDS = "250"
"""The program's rounds: about 0.3 s of work, a thousand samples."""
RECORD = ["record", "-q", "-e", "cpu-clock:u"]
ERROR_ENTRY = 0xFFFFFFFFFFFFFFFF
"""What perf script prints as the last entry of a callchain whose unwinding failed (libdw's error)."""


def _perf(*args: str, cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    """perf with its build-id cache in `env`'s `PERF_BUILDID_DIR` (perf itself reads only its option and
    config: it sets that variable for the commands it runs, and sfview reads it)."""
    argv = ["perf", "--buildid-dir", env["PERF_BUILDID_DIR"], *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=120, check=check)


class Recorded:
    """The program, its profile, and what perf needs to read the profile again."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.program = folder / "work"
        self.data = folder / "perf.data"
        self.env = {**os.environ, "PERF_BUILDID_DIR": str(folder / "buildid")}
        self.chains: dict[tuple[int, str], list[int]] | None = None

    def script(self, *fields: str) -> str:
        args = ["script", "-i", str(self.data), *fields]
        return _perf(*args, cwd=self.folder, env=self.env).stdout

    def sfview(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_process("perf", *args, env={"PERF_BUILDID_DIR": self.env["PERF_BUILDID_DIR"]})


def _build(folder: Path, *flags: str) -> Path:
    program = folder / "work"
    subprocess.run(["gcc", "-Wa,--gsframe", "-O2", *flags, "-o", str(program), str(SOURCE)], check=True)
    return program


def _record(recorded: Recorded, output: Path, *options: str) -> None:
    args = [*RECORD, *options, "-o", str(output), "--", str(recorded.program), ROUNDS]
    result = _perf(*args, cwd=recorded.folder, env=recorded.env, check=False)
    if result.returncode != 0 or not output.exists():
        pytest.skip(f"perf record cannot record here (as root, perf_event_paranoid ≤ 1): {result.stderr.strip()}")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    for tool in ("perf", "gcc"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: it records the profile sfview is compared on (linux-perf, gcc)")
    recorded = Recorded(tmp_path_factory.mktemp("perf"))
    _build(recorded.folder)
    _record(recorded, recorded.data, "--call-graph", "dwarf")
    return recorded


def _samples(path: Path) -> list[Sample]:
    with PerfData(str(path)) as perf:
        return [record for record in perf.records() if isinstance(record, Sample)]


def _time(ns: int) -> str:
    """A time as perf script prints it: seconds, and microseconds cut (not rounded)."""
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000 // 1000:06d}"


def test_every_sample_is_perf_scripts(recorded: Recorded) -> None:
    printed = recorded.script("--hide-call-graph", "-F", "pid,tid,time,ip")
    theirs = sorted(
        (int(m[1]), int(m[2]), m[3], int(m[4], 16))
        for m in re.finditer(r"^\s*(\d+)/(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s*$", printed, re.M)
    )
    ours = sorted((s.pid, s.tid, _time(s.time), s.ip) for s in _samples(recorded.data))
    assert len(theirs) == len(printed.strip().splitlines()) > 200
    assert ours == theirs


DUMPED = re.compile(
    r"^(\d+) (0x[0-9a-f]+) \[(0x[0-9a-f]+)\]: PERF_RECORD_(SAMPLE|MMAP2|COMM|FORK|EXIT|FINISHED_ROUND)(.*)$", re.M
)
"""A record as `perf report -D` prints it: time, file offset, size, type, the rest."""
KINDS = {Sample: "SAMPLE", Mmap: "MMAP2"}
MMAP2 = re.compile(r" (\d+)/(\d+): \[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: ([r-][w-][x-])\S* (.*)$")


def test_every_record_is_where_perf_report_dumps_it(recorded: Recorded) -> None:
    """The file offset of every sample, mapping and task record, and each mapping's fields, as `perf
    report -D` prints them."""
    dump = _perf("report", "-D", "-i", str(recorded.data), cwd=recorded.folder, env=recorded.env).stdout
    theirs = {int(m[2], 16): (m[4], m[5]) for m in DUMPED.finditer(dump)}
    with PerfData(str(recorded.data)) as perf:
        ours = {record.offset: record for record in perf.records()}
    assert sorted(ours) == sorted(theirs)
    for offset, record in ours.items():
        kind, rest = theirs[offset]
        assert (record.kind.name if isinstance(record, Task) else KINDS[type(record)]) == kind
        if kind == "MMAP2":
            m = MMAP2.match(rest)
            assert m, rest
            fields = (record.pid, record.tid, record.start, record.length, record.pgoff, record.executable, record.path)
            assert fields == (int(m[1]), int(m[2]), int(m[3], 16), int(m[4], 16), int(m[5], 16), m[6][2] == "x", m[7])
        elif kind == "COMM":
            assert rest.endswith(f"{record.name}:{record.pid}/{record.tid}")


def _perf_callchains(recorded: Recorded) -> dict[tuple[int, str], list[int]]:
    """(TID, time) → the callchain perf script unwound with DWARF, its error entry dropped (read once)."""
    if recorded.chains is not None:
        return recorded.chains
    chains = recorded.chains = {}
    for block in recorded.script("--no-inline", "-F", "pid,tid,time,ip").strip().split("\n\n"):
        head, *lines = block.strip().splitlines()
        m = re.match(r"\s*\d+/(\d+)\s+([\d.]+):", head)
        assert m, head
        chain = [int(line.split()[0], 16) for line in lines]
        chains[int(m[1]), m[2]] = [ip for ip in chain if ip != ERROR_ENTRY]
    return chains


def _assert_dwarf_stacks_are_perf_scripts(recorded: Recorded) -> int:
    """At least 99 % of the samples' DWARF stacks are perf script's callchains; the samples."""
    chains = _perf_callchains(recorded)
    with PerfData(str(recorded.data)) as perf:
        profile = Profile(perf)
        equal = total = 0
        differing = []
        for sample, walked in profile.walks():
            assert walked is not None
            space = profile.space(sample.pid)
            ours = []
            for frame in walked[Mode.DWARF].frames:  # as perf prints: relative to the file's mapping
                mapped = space.at(frame.lookup_pc)
                ours.append(frame.lookup_pc - mapped.start + mapped.pgoff if mapped else frame.lookup_pc)
            total += 1
            if ours == chains[sample.tid, _time(sample.time)]:
                equal += 1
            else:
                differing.append(sample.number)
    assert total == len(chains)
    share = equal / total
    assert share >= 0.99, f"{equal} of {total} DWARF stacks ({share:.1%}) are perf script's; not: {differing[:10]}"
    return total


def test_dwarf_stacks_are_perf_scripts(recorded: Recorded) -> None:
    _assert_dwarf_stacks_are_perf_scripts(recorded)


def _raw_records(data: bytes) -> tuple[int, int, list[tuple[int, int, int, bytes]]]:
    """A perf.data's data section (offset, size) and its records in file order: type, misc, PID (of a
    COMM or MMAP2, else -1), bytes."""
    offset, size = struct.unpack_from("<QQ", data, 0x28)
    records, at = [], offset
    while at < offset + size:
        kind, misc, length = struct.unpack_from("<IHH", data, at)
        pid = struct.unpack_from("<I", data, at + 8)[0] if kind in (3, 10) else -1
        records.append((kind, misc, pid, data[at : at + length]))
        at += length
    return offset, size, records


def test_samples_before_their_mappings_in_the_file_are_walked_in_time_order(recorded: Recorded, tmp_path: Path) -> None:
    """perf writes each CPU's buffer in turn: a process that moved to another CPU after its `exec` has
    samples in the file before its `COMM` and `MMAP2` records. The profile made so: the program's exec
    and mappings moved to the end of their round, as another CPU's buffer written last would put them
    (`perf script` takes the records by time within its rounds, and prints the same stacks from both
    files). Its DWARF stacks are still perf script's, those of the samples moved before the mappings too."""
    data = recorded.data.read_bytes()
    offset, size, records = _raw_records(data)
    rounds = [i for i, (kind, *_) in enumerate(records) if kind == 68]
    pid = next(p for kind, misc, p, _ in records if kind == 3 and misc & 1 << 13 and p != -1)  # the exec
    moved = [i for i, (kind, _, p, _) in enumerate(records) if kind in (3, 10) and p == pid]
    later = [r for r in rounds if r > moved[-1]]
    assert later, f"the program's mappings are in the file's last rounds: {len(rounds)} rounds"
    into = later[0]
    order = [i for i in range(into) if i not in moved] + moved + list(range(into, len(records)))
    program = next(i for i in moved if records[i][0] == 10 and str(recorded.program).encode() + b"\0" in records[i][3])
    before = [i for i in order[: order.index(program)] if records[i][0] == 9 and i > program]
    assert before, "no sample of the program in the round its mappings were moved to"
    again = Recorded(recorded.folder)
    again.data = tmp_path / "reordered.data"
    again.data.write_bytes(data[:offset] + b"".join(records[i][3] for i in order) + data[offset + size :])
    assert _perf_callchains(again) == _perf_callchains(recorded), "perf reads both files alike"
    _assert_dwarf_stacks_are_perf_scripts(again)
    kinds = [records[i][0] for i in order]
    numbers = {kinds[: order.index(i)].count(9) for i in before}  # samples are numbered in file order
    chains, walked = _perf_callchains(again), 0
    with PerfData(str(again.data)) as perf:
        profile = Profile(perf)
        for sample, walks in profile.walks(lambda s: s.number in numbers):
            assert walks is not None
            space = profile.space(sample.pid)
            ours = [
                frame.lookup_pc - m.start + m.pgoff
                for frame in walks[Mode.DWARF].frames
                if (m := space.at(frame.lookup_pc))
            ]
            assert ours == chains[sample.tid, _time(sample.time)], sample.number
            walked += 1
    assert walked == len(numbers) > 0


def test_a_profile_of_several_processes(recorded: Recorded, tmp_path: Path) -> None:
    """A shell that starts the program twice at once: each process's mappings (its fork, its exec) are
    its own. The samples are perf script's; perf script (6.1) unwinds the forked processes' samples one
    frame or two deep here, so their stacks are held to their own CFI: each walk of the program's
    processes ends where DWARF says the outermost frame is (`_start`)."""
    again = Recorded(tmp_path)
    shutil.copy(recorded.program, again.program)
    command = f"{again.program} 60 & {again.program} 60; wait"
    result = _perf(*RECORD, "--call-graph", "dwarf", "-o", str(again.data), "--", "sh", "-c", command,
                   cwd=tmp_path, env=again.env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    printed = again.script("--hide-call-graph", "-F", "pid,tid,time,ip")
    theirs = sorted(
        (int(m[1]), int(m[2]), m[3], int(m[4], 16))
        for m in re.finditer(r"^\s*(\d+)/(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s*$", printed, re.M)
    )
    samples = _samples(again.data)
    assert sorted((s.pid, s.tid, _time(s.time), s.ip) for s in samples) == theirs
    with PerfData(str(again.data)) as perf:
        profile = Profile(perf)
        ends = [
            walked[Mode.DWARF].frames[-1].name().split("+")[0] == "_start"
            and walked[Mode.DWARF].stop == "the outermost frame: DWARF says the return address is undefined"
            for sample, walked in profile.walks()
            if walked is not None and profile.names.get(sample.pid) == "work"
        ]
        pids = {pid for pid, name in profile.names.items() if name == "work"}
    assert len(pids) == 2 and len(ends) > 100
    assert sum(ends) >= 0.99 * len(ends), f"{sum(ends)} of {len(ends)}"


def test_processes_that_exit_are_let_go(tmp_path: Path) -> None:
    """A shell starting 300 short processes one after another: a process's mappings are let go once it has
    exited (`EXIT`) and the file's rounds say no record of it can follow, so that the address spaces held
    stay a few whatever the processes a profile saw; every sample is still walked in its own process's
    mappings (its PC at the file offset perf script says)."""
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed: it records the profile (linux-perf)")
    again = Recorded(tmp_path)
    result = _perf(*RECORD, "--call-graph", "dwarf", "-o", str(again.data), "--", "sh", "-c",
                   "for i in $(seq 300); do /bin/true; done", cwd=tmp_path, env=again.env, check=False)  # fmt: skip
    if result.returncode != 0 or not again.data.exists():
        pytest.skip(f"perf record cannot record here (as root, perf_event_paranoid ≤ 1): {result.stderr.strip()}")
    chains = _perf_callchains(again)
    held = walked = 0
    with PerfData(str(again.data)) as perf:
        # how many processes can be held at once, as the file's rounds go: those that exit within two
        # rounds (perf writes a round each time it empties its buffers: fewer on a busy machine)
        exits = [0]
        for record in perf.records():
            if isinstance(record, Task) and record.kind is Record.FINISHED_ROUND:
                exits.append(0)
            elif isinstance(record, Task) and record.kind is Record.EXIT and record.pid == record.tid:
                exits[-1] += 1
        rounds = max(a + b + c for a, b, c in zip(exits, [*exits[1:], 0], [*exits[2:], 0, 0], strict=True))
        profile = Profile(perf)
        for sample, walks in profile.walks():
            held = max(held, len(profile.spaces) + sum(space is not None for space in profile.exited.values()))
            space = profile.space(sample.pid)
            ours = []
            for frame in walks[Mode.DWARF].frames if walks else []:
                mapped = space.at(frame.lookup_pc)
                ours.append(frame.lookup_pc - mapped.start + mapped.pgoff if mapped else frame.lookup_pc)
            theirs = chains[sample.tid, _time(sample.time)]
            assert ours[:1] == theirs[:1], (sample.number, ours, theirs)
            walked += 1
        processes = len(profile.names)
    assert processes > 300 and walked == len(chains)
    assert held <= rounds + 2 and held < processes, f"{held} address spaces held at once, of {processes} processes"


def _report(recorded: Recorded) -> dict:
    result = recorded.sfview(str(recorded.data), "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_report_counts_every_sample(recorded: Recorded) -> None:
    report = _report(recorded)
    samples = len(_perf_callchains(recorded))
    assert report["samples"] == samples and report["without_registers"] == 0
    equal = report["equal_to_dwarf"]
    parted = sum(place["samples"] for place in report["by_function"])
    assert parted == samples - equal["sframe"] == sum(entry["samples"] for entry in report["by_file"])
    assert sum(row["samples"] for row in report["by_depth"]) == samples
    assert all(0 <= place["sample"] < samples for place in report["by_function"])
    files = {entry["file"]: entry for entry in report["files"]}
    assert files[str(recorded.program)]["has_sframe"]
    libc = next(path for path in files if os.path.basename(path).startswith("libc.so"))
    sections = subprocess.run(["readelf", "-SW", libc], capture_output=True, text=True, check=True).stdout
    assert files[libc]["has_sframe"] == (".sframe" in sections)
    # the kernel's reader (v14 series) reads version 3 alone: binutils 2.40's version 1 is refused
    assert files[str(recorded.program)]["kernel"].startswith("refused: -EINVAL")
    assert "SFRAME_VERSION_3" in files[str(recorded.program)]["kernel"]
    assert {place["reason"] for place in report["by_file"] if place["file"] == str(recorded.program)} == {
        "kernel_refuses"
    }
    # as the format reads it, SFrame gives DWARF's frames as far as the program goes (libc has none here)
    result = recorded.sfview(str(recorded.data), "--json", "--no-kernel-rules")
    equal = json.loads(result.stdout)["equal_to_dwarf"]
    assert equal["sframe_as_far_as_files_with_sframe_go"] >= 0.99 * samples


def test_the_report_is_the_same_in_two_processes(recorded: Recorded) -> None:
    one = recorded.sfview(str(recorded.data), "--json", "--jobs", "1")
    two = recorded.sfview(str(recorded.data), "--json", "--jobs", "2")
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    assert one.stdout == two.stdout


@pytest.mark.parametrize("warm", [1, 37, 400, 10**9], ids=lambda n: f"forked-after-{n}")
def test_processes_forked_mid_profile_count_each_sample_once(
    recorded: Recorded, warm: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process that merges unwinds the first `WARM_SAMPLES` samples (at most a `WARM_PART`-th of the
    file: 10**9 is that bound), then forks the others in the middle of reading the records: perf's
    rounds then hold samples read and not given yet, which the first process forked takes and the others
    pass over, each reading the file on its own from there. Whatever the point, in two or three
    processes, the report and each mode's folded stacks are those of one process, which the tests above
    hold to perf script; and the processes were forked there."""
    monkeypatch.setenv("PERF_BUILDID_DIR", recorded.env["PERF_BUILDID_DIR"])
    one, notes = profile.coverage(str(recorded.data), jobs=1)
    expected = [profile_report.json_text(one, "p", notes), *(profile_report.folded(one, mode) for mode in Mode)]
    warmed: list[int] = []
    fork = profile._forked

    def forked(prof: Profile, walks: Any, counts: Coverage, *rest: Any) -> tuple[Coverage, list[str]]:
        warmed.append(counts.samples)  # the samples this process counted before forking
        return fork(prof, walks, counts, *rest)

    monkeypatch.setattr(profile, "WARM_SAMPLES", warm)
    monkeypatch.setattr(profile, "_forked", forked)
    for jobs in (2, 3):
        counts, notes = profile.coverage(str(recorded.data), jobs=jobs)
        got = [profile_report.json_text(counts, "p", notes), *(profile_report.folded(counts, mode) for mode in Mode)]
        assert got == expected, f"{jobs} processes forked after {warm} samples"
    assert len(warmed) == 2 and 0 < warmed[0] == warmed[1] < one.samples, warmed
    assert warmed[0] == warm or warm > 100, warmed


def test_a_process_that_dies_unsent_is_said(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked process that ends without sending its counts (killed, out of memory) is said, not waited
    for for ever."""
    monkeypatch.setenv("PERF_BUILDID_DIR", recorded.env["PERF_BUILDID_DIR"])
    monkeypatch.setattr(profile, "SENT_WAIT", 0.05)
    monkeypatch.setattr(profile, "_share", lambda *_: os._exit(3))
    with pytest.raises(RuntimeError, match="a process unwinding the profile ended with status 3"):
        profile.coverage(str(recorded.data), jobs=2)


def _frame(frame: Frame) -> tuple:
    """What a frame of a walk says: where, its registers, what covered its PC and how its caller was found."""
    module = frame.module
    function = frame.function
    return (
        frame.number, frame.pc, frame.registers, frame.cfa, frame.found, frame.lookup, frame.interrupted,
        frame.dwarf, None if module is None else (type(module).__name__, module.name),
        None if function is None else function.index, frame.row is None,
    )  # fmt: skip


@pytest.mark.parametrize("kernel_rules", [True, False], ids=["kernel-rules", "no-kernel-rules"])
def test_counted_walks_are_the_walks_shown(recorded: Recorded, kernel_rules: bool) -> None:
    """The walks a report counts record nothing: each step follows its rules' plan, and a frame in the
    state of a frame walked before, its memory holding the same words where that walk read, takes
    that walk's end. Each is, frame for frame and register for register, the walk `--sample` shows
    (the unwinder working out and recording every step, the walk held to gdb and perf script), in
    every mode; the ends are taken (frames of one sample's walk are another's); and a report counted
    from the walks shown is the same text."""
    with PerfData(str(recorded.data)) as perf:
        counted = Profile(perf, kernel_rules=kernel_rules)
        shown = Walker(counted.walker.machine, record=True, kernel=counted.walker.kernel)
        seen: dict[int, Frame] = {}
        walks = taken = 0
        for sample, walked in counted.walks():
            assert walked is not None
            again = shown.walk(sample, counted.space(sample.pid), counted.arch)
            assert again is not None
            for mode in Mode:
                ours, theirs = walked[mode], again[mode]
                assert (ours.stop, ours.missing_address, ours.pcs) == (theirs.stop, theirs.missing_address, theirs.pcs)
                assert [_frame(f) for f in ours.frames] == [_frame(f) for f in theirs.frames], (sample.number, mode)
                walks += 1
                taken += any(seen.get(id(f)) is f for f in ours.frames)
                seen.update((id(f), f) for f in ours.frames)
    assert walks > 1000 and taken > 0, f"{taken} of {walks} walks took an end walked before"
    with PerfData(str(recorded.data)) as perf:
        counts = Profile(perf, kernel_rules=kernel_rules).coverage()
    with PerfData(str(recorded.data)) as perf:
        recounted = Profile(perf, record=True, kernel_rules=kernel_rules).coverage()
    path = str(recorded.data)
    assert profile_report.text(counts, path) == profile_report.text(recounted, path)
    assert profile_report.json_text(counts, path) == profile_report.json_text(recounted, path)
    for mode in Mode:
        assert profile_report.folded(counts, mode) == profile_report.folded(recounted, mode)


def test_folded_stacks_of_each_mode(recorded: Recorded) -> None:
    samples = len(_perf_callchains(recorded))
    result = recorded.sfview(str(recorded.data), "--folded", "dwarf")
    assert result.returncode == 0, result.stderr
    assert "main;outer;middle" in result.stdout
    with PerfData(str(recorded.data)) as perf:
        counts = Profile(perf).coverage()
    assert profile_report.folded(counts, Mode.DWARF) == result.stdout
    for mode in Mode:
        lines = profile_report.folded(counts, mode).splitlines()
        assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == samples, mode


def test_a_sample_opens_with_its_three_walks(recorded: Recorded) -> None:
    number = _report(recorded)["by_function"][0]["sample"]
    result = recorded.sfview(str(recorded.data), "--sample", str(number))
    assert result.returncode == 0, result.stderr
    for title in ("SFrame (as the kernel would):", "frame pointers alone:", "DWARF CFI (as perf script):"):
        assert title in result.stdout
    assert result.stdout.count("stopped:") == 3


def test_a_profile_cut_short_is_read_up_to_the_cut(recorded: Recorded, tmp_path: Path) -> None:
    data = recorded.data.read_bytes()
    cut = tmp_path / "cut.data"
    cut.write_bytes(data[: len(data) // 2])
    result = recorded.sfview(str(cut), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert 0 < report["samples"] < len(_samples(recorded.data))
    assert any("cut short" in note for note in report["notes"])
    assert any("ends inside a record" in note for note in report["notes"])
    header_only = tmp_path / "header.data"
    header_only.write_bytes(data[:60])
    result = recorded.sfview(str(header_only))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "file header is cut short" in result.stderr


def test_a_profile_without_user_stacks_says_how_to_record_one(recorded: Recorded) -> None:
    plain = recorded.folder / "plain.data"
    _record(recorded, plain)
    result = recorded.sfview(str(plain))
    assert result.returncode == 2
    assert "no user registers" in result.stderr and "--call-graph dwarf" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_a_program_rebuilt_since_the_profile_is_left_out(recorded: Recorded, tmp_path: Path) -> None:
    folder = tmp_path / "rebuilt"
    folder.mkdir()
    data = folder / "perf.data"
    again = Recorded(folder)
    _build(folder)
    _record(again, data, "--call-graph", "dwarf", "--no-buildid-cache")
    _build(folder, "-DREBUILT=1", "-fno-inline")  # another build at the same path
    result = again.sfview(str(data))
    assert result.returncode == 0, result.stderr
    assert f"note: {again.program}: changed since the profile" in result.stdout
    assert "its frames are left out" in result.stdout
    # in two processes, each reading its share of the file: the same notes, once each
    two = again.sfview(str(data), "--jobs", "2")
    assert two.returncode == 0, two.stderr
    assert two.stdout == result.stdout


ENDS_IN_ZERO = "0x" + "5f" * 19 + "00"
"""A build-id whose last byte is zero, as one build in 256 has (`ld --build-id=0x…`)."""


def test_a_build_id_ending_in_a_zero_byte_is_the_programs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A build-id's trailing zeros are its own: with them cut, the program ran was taken for another build
    and every frame of it left out. Then the program rebuilt (another build-id): perf's copy of the build
    that ran, in its build-id cache under the whole id, is read as `perf script` reads it."""
    recorded = Recorded(tmp_path)
    monkeypatch.setenv("PERF_BUILDID_DIR", recorded.env["PERF_BUILDID_DIR"])
    _build(tmp_path, f"-Wl,--build-id={ENDS_IN_ZERO}")
    _record(recorded, recorded.data, "--call-graph", "dwarf")
    ids = _perf("buildid-list", "-i", str(recorded.data), cwd=tmp_path, env=recorded.env).stdout
    assert f"{ENDS_IN_ZERO[2:]} {recorded.program}" in ids, ids
    result = recorded.sfview(str(recorded.data))
    assert result.returncode == 0, result.stderr
    assert "changed since the profile" not in result.stdout, result.stdout
    _assert_dwarf_stacks_are_perf_scripts(recorded)
    _build(tmp_path, f"-Wl,--build-id={ENDS_IN_ZERO[:-2]}01")
    again = Recorded(tmp_path)
    assert _perf_callchains(again) == _perf_callchains(recorded), "perf script reads the build that ran"
    result = again.sfview(str(again.data))
    assert result.returncode == 0, result.stderr
    assert f"{recorded.program}: changed since the profile (build-id {ENDS_IN_ZERO[2:]} in the profile" in result.stdout
    assert "read from perf's build-id cache" in result.stdout, result.stdout
    _assert_dwarf_stacks_are_perf_scripts(again)


def test_perfs_build_id_cache_is_where_its_configuration_puts_it(tmp_path: Path) -> None:
    """`buildid.dir` in perf's configuration (here the file `PERF_CONFIG` names) moves perf's build-id
    cache: perf record writes the copies there, and sfview reads a program rebuilt since from there, as
    perf script does."""
    cache, config = tmp_path / "elsewhere", tmp_path / "perfconfig"
    config.write_text(f"[buildid]\n\tdir = {cache}\n")
    recorded = Recorded(tmp_path)
    env = {**os.environ, "PERF_CONFIG": str(config)}
    env.pop("PERF_BUILDID_DIR", None)
    _build(tmp_path, "-Wl,--build-id=0x" + "a1" * 20)
    args = [*RECORD, "--call-graph", "dwarf", "-o", str(recorded.data), "--", str(recorded.program), ROUNDS]
    result = subprocess.run(["perf", *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    if result.returncode != 0:
        pytest.skip(f"perf record cannot record here (as root, perf_event_paranoid ≤ 1): {result.stderr.strip()}")
    copy = cache / ".build-id" / "a1" / ("a1" * 19) / "elf"
    assert copy.is_file(), f"perf record kept no copy at {copy}"
    _build(tmp_path, "-Wl,--build-id=0x" + "b2" * 20)
    script = ["perf", "script", "--no-inline", "-F", "ip,sym,dso", "-i", str(recorded.data)]
    named = subprocess.run(script, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120).stdout
    assert f" main ({recorded.program})" in named, "perf script reads the build that ran, from its copy"
    ours = subprocess.run(
        [sys.executable, "-m", "sfview", "perf", str(recorded.data)], capture_output=True, text=True, env=env
    )
    assert ours.returncode == 0, ours.stderr
    assert f"read from perf's build-id cache, {copy}" in ours.stdout, ours.stdout


NO_CFI = r"""
#include <stdio.h>
/* spin: a loop written in assembly without CFI directives: neither .sframe nor .eh_frame covers it */
__asm__(".text\n.globl spin\n.type spin,@function\nspin:\n mov %rdi,%rax\n1: dec %rax\n jnz 1b\n ret\n"
        ".size spin,.-spin\n");
unsigned long spin(unsigned long n);
int main(void) { unsigned long t = 0; for (int i = 0; i < 300; i++) t += spin(1000000); printf("%lu\n", t); }
"""


def test_where_sframe_parts_names_the_function_and_why(recorded: Recorded, tmp_path: Path) -> None:
    if os.uname().machine != "x86_64":
        pytest.skip("the assembly is x86-64's")
    source = tmp_path / "spin.c"
    source.write_text(NO_CFI)
    again = Recorded(tmp_path)
    subprocess.run(["gcc", "-Wa,--gsframe", "-O2", "-o", str(again.program), str(source)], check=True)
    result = _perf(*RECORD, "--call-graph", "dwarf", "-o", str(again.data), "--", str(again.program),
                   cwd=tmp_path, env=again.env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    result = again.sfview(str(again.data), "--json", "--no-kernel-rules")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    places = {(p["function"], os.path.basename(p["file"])): p for p in report["by_function"]}
    spin = places["spin", "work"]
    assert spin["reason"] == "no_fde" and spin["samples"] > report["samples"] // 2
    opened = again.sfview(str(again.data), "--sample", str(spin["sample"]), "--no-kernel-rules").stdout
    sframe, dwarf = opened.split("frame pointers alone:")[0], opened.split("DWARF CFI (as perf script):")[1]
    assert "in spin ()" in sframe and "no FDE covers" in sframe
    assert "in main ()" in dwarf and "prologue" in dwarf


def test_sframe_walks_follow_the_newest_revision_of_the_kernels_reader(recorded: Recorded) -> None:
    """SFrame's walks follow the newest revision of the kernel's reader sfview knows (`kernel`), or the one
    `--kernel` names; the report says which, and each file's verdict is that revision's own (the consumer
    profiles are held to each revision's code). Both read version 3 alone: the system's binutils 2.40
    writes version 1, refused by either."""
    program = str(recorded.program)
    for args, revision in (((), kernel_linux_mm.NAME), (("--kernel", "kernel-v14"), "kernel-v14")):
        result = recorded.sfview(str(recorded.data), "--json", *args)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["kernel_reader"] == revision
        verdict = PROFILES[revision].judge_document(Document.open(program), None)
        assert not verdict.accepted and "SFRAME_VERSION_3" in verdict.rule
        files = {entry["file"]: entry for entry in report["files"]}
        assert files[program]["kernel"] == f"refused: {verdict.error} {verdict.rule}"
    text = recorded.sfview(str(recorded.data)).stdout
    assert f"SFrame walked as the kernel would: {kernel_linux_mm.NAME}, {kernel_linux_mm.TITLE}" in text
    unknown = recorded.sfview(str(recorded.data), "--kernel", "kernel-v13")
    assert unknown.returncode == 2 and "--kernel kernel-v13: not a revision" in unknown.stderr


def test_a_version_3_program_as_the_kernel_reads_it(recorded: Recorded, tmp_path: Path) -> None:
    """binutils 2.47 writes version 3, which the kernel's reader accepts: SFrame's walk, as the kernel
    would make it, gives DWARF's frames as far as the program goes."""
    again = Recorded(tmp_path)
    toolchain("2.47", "x86_64").compile("-O2", "-o", again.program, SOURCE)
    _record(again, again.data, "--call-graph", "dwarf")
    report = _report(again)
    files = {entry["file"]: entry for entry in report["files"]}
    assert files[str(again.program)]["kernel"] == "accepted"
    walked = report["samples"] - report["without_registers"]
    assert report["equal_to_dwarf"]["sframe_as_far_as_files_with_sframe_go"] >= 0.99 * walked
    assert not [p for p in report["by_function"] if p["file"] == str(again.program)]


async def test_a_sample_opens_in_the_debugger(recorded: Recorded) -> None:
    """A sample in the program's own code, as the debugger's state: stepping it with SFrame goes through
    the program to `main`; `d` shows DWARF's step beside each; the memory pane lists the words the steps
    read, each in the sample's stack copy, and says they came from there."""
    from textual.widgets import DataTable

    from sfview.app.profile_app import ProfileApp
    from sfview.app.screens.debugger import DebuggerScreen
    from sfview.document import Document

    with PerfData(str(recorded.data)) as perf:
        profile = Profile(perf, record=True)
        number = next(
            sample.number
            for sample, walked in profile.walks()
            if walked and walked[Mode.DWARF].frames[0].name().startswith("leaf")
        )
    with PerfData(str(recorded.data)) as perf:
        found = Profile(perf, record=True).session(number)
    assert found is not None
    session, program = found
    assert program == str(recorded.program)
    app = ProfileApp(Document.open(program), "places", [], lambda _: session)
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause()
        app.open_sample(number)
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press("d", "space")
        assert "With DWARF CFI instead:" in str(debugger.query_one("#dbg-explain").render())
        await pilot.press("r")
        names = [frame.name().split("+")[0] for frame in debugger.frames]
        calls = [name for i, name in enumerate(names) if i == 0 or names[i - 1] != name]  # a recursion once
        assert calls[:4] == ["leaf", "middle", "outer", "main"], names
        await pilot.pause()
        memory = debugger.query_one("#dbg-memory", DataTable)
        assert memory.border_title == f"memory words read from sample #{number}'s stack copy, or given (m)"
        sample = next(s for s in _samples(recorded.data) if s.number == number)
        read = [int(str(memory.get_row_at(i)[0]), 16) for i in range(memory.row_count)]
        sp = sample.registers["rsp"]
        assert read and all(sp <= address < sp + len(sample.stack) for address in read), (hex(sp), read)


async def test_the_samples_view_sorts_and_opens_each_sample(recorded: Recorded) -> None:
    """`--app`: the places where SFrame parts from DWARF, sortable; enter opens the row's sample in the
    debugger at that sample's PC, escape comes back; `g` opens any sample by its number."""
    from textual.widgets import DataTable

    from sfview.app.profile_app import ProfileApp
    from sfview.app.screens.debugger import DebuggerScreen
    from sfview.app.screens.samples import SamplesScreen
    from sfview.document import Document

    with PerfData(str(recorded.data)) as perf:
        counts = Profile(perf).coverage()
    samples = {sample.number: sample for sample in _samples(recorded.data)}

    def load(number: int):
        with PerfData(str(recorded.data)) as perf:
            found = Profile(perf, record=True).session(number)
        assert found is not None
        return found[0]

    places = counts.by_function()
    app = ProfileApp(Document.open(str(recorded.program)), "places", places, load)
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SamplesScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(places)
        assert [int(table.get_row_at(i)[0]) for i in range(table.row_count)] == sorted(
            (seen.count for _, seen in places), reverse=True
        )
        await pilot.press("S", "S")  # by the function's name
        names = [str(table.get_row_at(i)[2]) for i in range(table.row_count)]
        assert names == sorted(names)
        first = int(table.get_row_at(0)[1])
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DebuggerScreen)
        assert app.screen.frames[0].pc == samples[first].ip
        await pilot.press("r")
        await pilot.pause()
        memory = app.screen.query_one("#dbg-memory", DataTable)
        assert memory.border_title == f"memory words read from sample #{first}'s stack copy, or given (m)"
        sp, copied = samples[first].registers["rsp"], len(samples[first].stack)
        read = [int(str(memory.get_row_at(i)[0]), 16) for i in range(memory.row_count)]
        assert all(sp <= address < sp + copied for address in read), (hex(sp), copied, read)
        await pilot.press("escape")
        assert isinstance(app.screen, SamplesScreen)
        await pilot.press("g", *"7", "enter")
        await pilot.pause()
        assert isinstance(app.screen, DebuggerScreen) and app.screen.frames[0].pc == samples[7].ip
