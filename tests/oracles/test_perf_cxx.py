"""`sfview perf` on a C++ program against `perf script`, sample by sample: each DWARF stack's frames named as perf
6.1 names them, with the functions inlined at each PC.

The program (`tests/data/src/perf_names.cc`, built once with `g++ -O2 -g -Wa,--gsframe`, profiled for about
0.2 s with `perf record -e cpu-clock:u --call-graph dwarf`) spends its time in functions named with what C++
names have: an ABI tag, templates, a lambda, an operator, an anonymous namespace, and functions inlined.
perf names them from addr2line (binutils' BFD) and demangles without parameters: `shapes::label[abi:cxx11]`,
`shapes::mixed<unsigned char>`, `main::{lambda(unsigned long)#1}::operator()` (a lambda's DIE has no linkage
name: the symbol's), `shapes::twist<unsigned int>` inlined into `shapes::Box<unsigned int>::stir`, and a
static function inlined without a linkage name (`fold`) named after the symbol it is in (`shapes::label`
twice).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process
from test_live_names import frames
from test_perf_names import Profiled, record_profile

ROUNDS = "100000"
"""The program's rounds: about 0.2 s, some 500 samples."""
NAMES = (
    "shapes::label[abi:cxx11]",
    "shapes::mixed<unsigned char>",
    "shapes::Box<unsigned int>::stir",
    "shapes::twist<unsigned int>",
    "shapes::operator+",
    "(anonymous namespace)::churn",
    "main::{lambda(unsigned long)#1}::operator()",
)
"""What perf script names the program's frames (each in some sample: what the program is for)."""


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Profiled:
    for tool in ("perf", "g++"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: it records the profile sfview is compared on (linux-perf, g++)")
    program = tmp_path_factory.mktemp("perfcxx") / "names"
    subprocess.run(["g++", "-O2", "-g", "-Wa,--gsframe", "-o", str(program), str(DATA / "src" / "perf_names.cc")],
                   check=True)  # fmt: skip
    return record_profile(program, ROUNDS)


def test_every_sample_is_named_as_perf_script_names_it(profile: Profiled, monkeypatch: pytest.MonkeyPatch) -> None:
    theirs, ours = profile.stacks(monkeypatch)
    assert len(theirs) > 200
    named = {name for names in theirs.values() for name in names}
    assert set(NAMES) <= named, f"perf script names these frames so: {sorted(set(NAMES) - named)} not seen"
    differing = [time for time in theirs if ours[time] != theirs[time]]
    assert not differing, [(theirs[time], ours[time]) for time in differing[:3]]


def test_folded_stacks_have_perf_scripts_names(profile: Profiled) -> None:
    result = profile.sfview("--folded", "dwarf")
    assert result.returncode == 0, result.stderr
    stacks = result.stdout
    assert ";main;shapes::Box<unsigned int>::stir;shapes::twist<unsigned int> " in stacks, stacks
    assert ";main;main::{lambda(unsigned long)#1}::operator() " in stacks, stacks


STOPS = ("total = total * 3", "return t * 31", "x = x * 6364136223846793005UL")
"""Lines gdb stops the program at, once each: in the lambda, in `twist` inlined into `Box<unsigned int>::stir`,
in `fold` inlined into `label`."""


def test_unwind_names_the_frames_as_gdb(profile: Profiled, tmp_path: Path) -> None:
    """The same program stopped by gdb in each of `STOPS`: its `bt` there, and sfview's backtrace of the core gdb
    writes, line for line (the lambda's `operator()` unqualified, as gdb prints it: its closure has no name)."""
    if shutil.which("gdb") is None:
        pytest.skip("gdb is not installed: it is the reference here")
    source = DATA / "src" / "perf_names.cc"
    lines = source.read_text().splitlines()
    numbers = [next(n for n, line in enumerate(lines, 1) if stop in line) for stop in STOPS]
    program = profile.data.parent / "names"
    args = ["-ex", "set backtrace past-main on", *(a for n in numbers for a in ("-ex", f"tbreak {source.name}:{n}"))]
    args += ["-ex", "run"]
    for count in range(len(STOPS)):
        args += ["-ex", "echo <stop>\\n", "-ex", "bt", "-ex", f"gcore {tmp_path / f'core{count}'}", "-ex", "continue"]
    gdb = subprocess.run(["gdb", "-batch", "-nx", *args, "--args", str(program), "3"],
                         capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    stops = gdb.split("<stop>\n")[1:]
    assert len(stops) == len(STOPS), gdb
    for count, stopped in enumerate(stops):
        theirs = frames(stopped[: stopped.find("Saved corefile")])
        result = run_process("unwind", str(program), "--core", str(tmp_path / f"core{count}"))
        assert result.returncode == 0, result.stderr
        assert frames(result.stdout) == theirs, result.stdout + stopped
    assert frames(stops[0])[0].startswith("#0 operator() at "), stops[0]
