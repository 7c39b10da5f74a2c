#!/usr/bin/env python3
"""How fast `sfview unwind` walks a core, beside gdb on the same core, and what one lookup costs.

Why: an unwinder built on SFrame should be quicker than a debugger that
reads DWARF; and a lookup on a big section must touch only the FDEs of its
binary search, not decode the section. Two figures:

* `sfview unwind PROG --core CORE` against `gdb -batch -ex bt PROG CORE`,
  interleaved, both as separate processes, min and median of the runs (the
  fixture core of `tests/data/deep-x86_64`, six frames to `main`; and a
  1,000-frame recursion, `tests/data/src/states.c` built here and stopped by
  gdb at its deepest call, where gdb's `bt` prints every frame too);
  and a static build of the same program (built here, its core written by
  gdb's `generate-core-file`), whose C library has DWARF CFI alone and no
  `.eh_frame_hdr`: the frames below `main` are walked with `.eh_frame`;
* with `--chain`: the adversarial core of `tests/oracles/test_unwind_stream.py` (`chain_core`), the fixture's
  stack rewritten into a 2 MB frame-pointer chain of 131,071 frames, and the same chain with every
  RA in the program's text (a legitimate deep recursion): `sfview unwind` in each output mode
  beside gdb's `bt` (which stops the first after 5 frames: its guess at a PC in no function is a
  frameless one, and two frames then unwind the PC from one stack slot);
* on the 40,000-function benchmark binary (`make_big.py`), the per-frame
  lookup (FDE by binary search, then its row) for PCs across the section:
  time per lookup, and how many FDEs each decoded.

sfview runs as users run it: the `sfview` console script beside this Python
(`pip install .` or `pip install -e .` put it there; run this with the venv's
Python to time that copy), with this checkout kept off `PYTHONPATH`; without
the script, `python -m sfview` from this checkout. The first line printed says
which. Beside each pair, the floor: this Python starting and doing nothing
(what sfview cannot go below; an unwind reads ELF files with
`sfview.inputs.elf.image`, not pyelftools).

Usage: python bench/bench_unwind.py [--repeat N] [--chain]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT, Summary, big_binary, child_env, run_measured, sfview_argv

sys.path.insert(0, str(REPO_ROOT))

PROGRAM = REPO_ROOT / "tests" / "data" / "deep-x86_64"
CORE = REPO_ROOT / "tests" / "data" / "deep-x86_64.core"


SCRIPT = Path(sys.executable).with_name("sfview")
"""The console script pip installs beside the Python that runs this (not resolved: a venv's Python is a link)."""


def sfview_command(*args: str) -> list[str]:
    """What a user runs: the `sfview` console script, else `python -m sfview` from this checkout."""
    return [str(SCRIPT), *args] if SCRIPT.exists() else sfview_argv(*args)


def sfview_env() -> dict[str, str]:
    """The measured children's environment; for the console script without this checkout on `PYTHONPATH`,
    so that an installed copy runs its own code."""
    env = child_env()
    if SCRIPT.exists():
        env.pop("PYTHONPATH")
        if "PYTHONPATH" in os.environ:
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


FLOOR = [sys.executable, "-c", "pass"]
"""What any run of sfview pays before its own code: this Python starting (its site packages,
an editable install's finder among them)."""


def deep_core(folder: Path) -> tuple[Path, Path] | None:
    """The states program stopped by gdb 1,000 calls deep (None without gcc or gdb)."""
    if not (shutil.which("gcc") and shutil.which("gdb")):
        return None
    program, core = folder / "states", folder / "deep.core"
    source = REPO_ROOT / "tests" / "data" / "src" / "states.c"
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", str(source), "-o", str(program)], check=True)
    subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "break stop_here", "-ex", "run 4", "-ex", f"generate-core-file {core}",
         str(program)],
        capture_output=True, check=True,
    )  # fmt: skip
    return program, core


def static_program() -> tuple[Path, Path] | None:
    """bench/build/deep-static and a core of it stopped in `leaf` (built once); None without gcc's
    static C library or gdb."""
    program, core = BUILD_DIR / "deep-static", BUILD_DIR / "deep-static.core"
    if core.exists():
        return program, core
    source = REPO_ROOT / "tests" / "data" / "src" / "deep.c"
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    built = subprocess.run(["gcc", "-O2", "-static", "-Wa,--gsframe", str(source), "-o", str(program)])
    if built.returncode != 0 or shutil.which("gdb") is None:
        return None
    gcore = ["-ex", "break leaf", "-ex", "run", "-ex", f"generate-core-file {core}"]
    subprocess.run(["gdb", "-batch", "-nx", *gcore, str(program)], capture_output=True)
    return (program, core) if core.exists() else None


def against_gdb(program: Path, core: Path, repeat: int) -> None:
    env = sfview_env()
    sfview = sfview_command("unwind", str(program), "--core", str(core))
    gdb = ["gdb", "-batch", "-nx", "-ex", "bt", str(program), str(core)]
    ours, theirs, floor = [], [], []
    run_measured(sfview, env=env)  # warm-up: files into the page cache
    for _ in range(repeat):
        ours.append(run_measured(sfview, env=env))
        if shutil.which("gdb"):
            theirs.append(run_measured(gdb, env=env))
        floor.append(run_measured(FLOOR, env=env))
    print(f"sfview unwind vs gdb bt, {program.name} core {core.name}, {repeat} runs each, interleaved")
    print(f"{'':8} {'best':>9} {'median':>9} {'CPU median':>11} {'peak RSS':>10}")
    for name, runs in (("sfview", ours), ("gdb", theirs), ("floor", floor)):
        if not runs:
            print(f"{name:8} not installed")
            continue
        if not all(r.ok for r in runs):
            print(f"{name:8} FAILED: {runs[0].stderr.decode(errors='replace')[:200]}")
            continue
        s, cpu = Summary.of(runs), statistics.median(r.cpu_s for r in runs)
        print(f"{name:8} {s.best_s:8.3f}s {s.median_s:8.3f}s {cpu * 1e3:8.1f} ms {s.peak_rss_mb:7.1f} MB")
    if ours and theirs:
        print(f"gdb/sfview: {Summary.of(theirs).median_s / Summary.of(ours).median_s:.2f}x (median)")
    frames = ours[0].stdout.decode().count("\n#") + 1
    gdb_frames = theirs[0].stdout.decode().count("\n#") + 1 if theirs else 0
    print(f"sfview found {frames} frames, gdb printed {gdb_frames}\n")


CHAIN_MODES = ((), ("--json",), ("--explain",), ("--cfi", "both"), ("--cfi", "dwarf"), ("--cfi", "sframe"))
"""The output modes `--chain` times: each writes every frame of the chain."""


def chain_cores(folder: Path) -> list[tuple[str, Path]]:
    """The chain core of `tests/oracles/test_unwind_stream.py` with 2 MB of stack, and the same chain with every RA
    `with_alloca`'s (in the program's text)."""
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    from test_unwind_stream import _with_alloca_return, chain_core

    cores = []
    for name, returns in (("adversarial", None), ("in the text", (_with_alloca_return(),))):
        (folder / name).mkdir()
        cores.append((name, chain_core(folder / name, 2 << 20, returns)[0]))
    return cores


GDB_LIMIT_S = 60
"""gdb's `bt` of the chain in the text (131,071 frames) runs for minutes: it is given this long, once."""


def chain_modes(core: Path, repeat: int) -> None:
    """`sfview unwind` of a chain core in each output mode, interleaved, and gdb's `bt` on it (within
    `GDB_LIMIT_S`). Each run's output is counted, not kept (`--json` of the chain is hundreds of megabytes)."""
    env = sfview_env()
    runs: dict[tuple[str, ...], list] = {mode: [] for mode in CHAIN_MODES}
    frames: dict[tuple[str, ...], int] = {}
    run_measured(sfview_command("unwind", str(PROGRAM), "--core", str(core)), env=env)  # warm-up
    for _ in range(repeat):
        for mode in CHAIN_MODES:
            run = run_measured(sfview_command("unwind", str(PROGRAM), "--core", str(core), *mode), env=env)
            out = run.stdout.decode(errors="replace")
            frames[mode] = out.count('"number"') if "--json" in mode else out.count("\n#") + out.startswith("#")
            run.stdout = b""
            runs[mode].append(run)
    print(f"{'':16} {'best':>8} {'median':>8} {'CPU median':>11} {'peak RSS':>9} {'frames':>8}")
    for mode, measured in runs.items():
        label = " ".join(mode) or "text"
        if not all(r.ok for r in measured):
            print(f"{label:16} FAILED: {measured[0].stderr.decode(errors='replace')[:200]}")
            continue
        s, cpu = Summary.of(measured), statistics.median(r.cpu_s for r in measured)
        print(f"{label:16} {s.best_s:7.2f}s {s.median_s:7.2f}s {cpu:9.2f} s {s.peak_rss_mb:6.1f} MB {frames[mode]:8}")
    print(f"{'gdb bt':16} {_gdb_bt(core, env)}\n")


def _gdb_bt(core: Path, env: dict[str, str]) -> str:
    """gdb's `bt` of the core, once: its wall time and the frames it printed (or that it was cut short)."""
    if shutil.which("gdb") is None:
        return "not installed"
    started = time.perf_counter()
    try:
        done = subprocess.run(["gdb", "-batch", "-nx", "-ex", "bt", str(PROGRAM), str(core)], env=env,
                              capture_output=True, timeout=GDB_LIMIT_S, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"not done after {GDB_LIMIT_S} s"
    wall, out = time.perf_counter() - started, done.stdout.decode(errors="replace")
    stop = next((line for line in out.splitlines() if line.startswith("Backtrace stopped")), "")
    numbers = [int(n) for n in re.findall(r"^#(\d+)", out, re.MULTILINE)]  # gdb shows frame #0 on loading too
    return f"{wall:7.2f}s (one run), {max(numbers, default=-1) + 1} frames; {stop}"


OWNERS = ("elftools", "sfview")
"""The packages whose import cost `import_shares` separates from the rest."""


def import_shares(program: Path, core: Path, repeat: int) -> None:
    """Where `sfview unwind`'s import time goes (Python's own `-X importtime`, self times, median over
    the runs): each module counts to the nearest of pyelftools or sfview that imported it (pyelftools'
    `construct.debug` imports `pdb`, and with it `inspect`, `ast`, `tokenize`: pyelftools' cost), the
    rest is Python's start (and an editable install's finder). The unwind reads ELF files with
    `sfview.inputs.elf.image`: pyelftools' share is its exceptions module alone (`cfi.DECODE_ERRORS`),
    and a rise of it means something on the unwind's path imports pyelftools again. Not interleaved
    with anything: a share, not a speed."""
    argv = sfview_command("unwind", str(program), "--core", str(core))
    env = dict(sfview_env(), PYTHONPROFILEIMPORTTIME="1")  # `-X importtime`, for the console script too
    shares: dict[str, list[float]] = {name: [] for name in (*OWNERS, "other")}
    for _ in range(repeat):
        stderr = subprocess.run(argv, env=env, capture_output=True, check=True).stderr.decode()
        for name, ms in _owned_import_times(stderr).items():
            shares[name].append(ms)
    medians = ", ".join(f"{name} {statistics.median(ms):.1f} ms" for name, ms in shares.items())
    print(f"imports of sfview unwind {program.name}, by who imported them, median of {repeat} runs:\n  {medians}\n")


def _owned_import_times(importtime: str) -> dict[str, float]:
    """Self import times in ms summed by owner: `-X importtime` prints a module after the modules it
    imported, indented deeper, so a line owns the unowned deeper lines pending before it (which then
    belong to its subtree: its siblings do not own them)."""
    pending: list[tuple[int, float, str | None]] = []  # (depth, self ms, owner)
    for line in importtime.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue
        name = fields[2].rstrip()
        depth, top = len(name) - len(name.lstrip()), name.strip().split(".")[0]
        owner = top if top in OWNERS else None
        inner = [entry for entry in pending if entry[0] > depth]
        pending = [entry for entry in pending if entry[0] <= depth]
        pending += [(depth, ms, held or owner) for _, ms, held in inner]  # now in this line's subtree
        pending.append((depth, int(fields[0]) / 1e3, owner))
    totals = dict.fromkeys((*OWNERS, "other"), 0.0)
    for _, ms, owner in pending:
        totals[owner or "other"] += ms
    return totals


def lookups(samples: int) -> None:
    from sfview.document import Document

    binary = big_binary(None)
    doc = Document.open(str(binary))
    section = doc.require_section()
    first, last = section.function(0).start_address, section.function(len(section) - 1).end_address
    section._functions = [None] * len(section)  # start cold: nothing decoded
    rng = random.Random(1)
    pcs = [rng.randrange(first, last) for _ in range(samples)]
    decoded_before = 0
    per_lookup, decoded = [], []
    for pc in pcs:
        started = time.perf_counter()
        func = section.find_function(pc)
        if func is not None:
            func.row_for(pc)
        per_lookup.append(time.perf_counter() - started)
        now = sum(f is not None for f in section._functions)
        decoded.append(now - decoded_before)
        decoded_before = now
    print(f"lookups on {binary.name}: {len(section)} FDEs, {samples} random PCs, cold start")
    print(f"  per lookup: {statistics.median(per_lookup) * 1e6:.0f} us median, {max(per_lookup) * 1e6:.0f} us max")
    print(f"  FDEs decoded per lookup: first {decoded[0]}, median {statistics.median(decoded)}, max {max(decoded)}")
    print(
        f"  FDEs decoded in all: {decoded_before} of {len(section)} (log2 of the count is {len(section).bit_length()})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--chain", action="store_true", help="time the 131,071-frame chain cores alone, every mode")
    args = parser.parse_args(argv)
    print(f"sfview run as: {' '.join(sfview_command())}\n")
    if args.chain:
        with tempfile.TemporaryDirectory() as folder:
            for name, core in chain_cores(Path(folder)):
                print(f"sfview unwind of the chain core ({name}, {core.stat().st_size >> 10} KB), {args.repeat} runs")
                chain_modes(core, args.repeat)
        return 0
    against_gdb(PROGRAM, CORE, args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        deep = deep_core(Path(folder))
        if deep is not None:
            against_gdb(*deep, args.repeat)
    static = static_program()
    if static is None:
        print("no static build (gcc -static or gdb missing): static program not measured\n")
    else:
        against_gdb(*static, args.repeat)
        import_shares(*static, args.repeat)
    lookups(args.samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
