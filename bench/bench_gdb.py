#!/usr/bin/env python3
"""How long the `sframe` commands take inside gdb, per frame, beside gdb's own `bt` in the same session.

Why: `sframe bt` and the SFrame unwinder run in gdb's Python at every stop;
they should cost about what gdb's own unwinding costs, not seconds. One gdb
process, stopped at `stop_here` in `tests/data/src/states.c`'s 1,000-frame
recursion (`run 4`, built here with `gcc -O2 -Wa,--gsframe`), and in
`deep.c`'s six frames; in it, interleaved, each timed with `time.perf_counter`
around `gdb.execute(…, to_string=True)`, gdb's frame cache flushed before each
(`maint flush register-cache`), so that every run unwinds from scratch:

* gdb's `bt` (its DWARF CFI unwinder);
* `bt` with `sframe unwinder on` (gdb asks the SFrame unwinder for each frame);
* the SFrame walk alone (`sfview.unwind.engine.Walk` over gdb's memory, what
  `sframe bt` prints);
* `sframe bt` whole (the walk, and gdb's own frames beside it).

The first of each is left out (files opened, the section read); the figure
is the median per frame. Usage: python bench/bench_gdb.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))

from sfview.cli.gdb import load_line

MEASURE = """
import statistics, time
import gdb
from sfview.gdb import inferior
from sfview.unwind.engine import Frame, RuleSource, Walk

def sframe_walk():
    walker, _ = inferior.unwinder(RuleSource.SFRAME)
    frame = gdb.selected_frame()
    return list(Walk(walker, Frame(0, frame.pc(), inferior.registers(frame.read_register, walker.machine)), None))

def timed(what):
    gdb.execute("maint flush register-cache", to_string=True)
    start = time.perf_counter()
    what()
    return time.perf_counter() - start

KINDS = {
    "gdb bt": lambda: gdb.execute("bt", to_string=True),
    "bt, sframe unwinder on": lambda: gdb.execute("bt", to_string=True),
    "SFrame walk alone": sframe_walk,
    "sframe bt": lambda: gdb.execute("sframe bt", to_string=True),
}
frames = gdb.execute("bt", to_string=True).count("\\n#") + 1
walked = len(sframe_walk())
runs = {kind: [] for kind in KINDS}
for turn in range(REPEAT + 1):
    for kind, what in KINDS.items():
        gdb.execute(f"sframe unwinder {'on' if kind == 'bt, sframe unwinder on' else 'off'}", to_string=True)
        took = timed(what)
        if turn:
            runs[kind].append(took)
gdb.write(f"RESULT {frames} gdb frames, {walked} SFrame frames, {REPEAT} runs each, interleaved\\n")
for kind, times in runs.items():
    count = walked if kind == "SFrame walk alone" else frames
    median = statistics.median(times)
    gdb.write(f"RESULT {kind:24} {median * 1e3:9.2f} ms  {median / count * 1e6:8.1f} us/frame\\n")
"""


def measure(program: Path, run: str, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "measure.py"
        script.write_text(f"REPEAT = {repeat}\n" + MEASURE)
        result = subprocess.run(
            ["gdb", "-batch", "-nx", "-ex", load_line(), "-ex", "set backtrace limit 0", "-ex", "break stop_here",
             "-ex", run, "-ex", f"source {script}", str(program)],
            capture_output=True, text=True,
        )  # fmt: skip
    lines = [line.removeprefix("RESULT ") for line in result.stdout.splitlines() if line.startswith("RESULT")]
    if not lines:
        print(f"{program.name}: FAILED\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
        return
    print(f"{program.name} ({run}): " + lines[0])
    for line in lines[1:]:
        print("  " + line)
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    if not (shutil.which("gcc") and shutil.which("gdb")):
        sys.exit("needs gcc (with -Wa,--gsframe) and gdb")
    with tempfile.TemporaryDirectory() as folder:
        for source, run in (("deep.c", "run"), ("states.c", "run 4")):
            program = Path(folder) / source.removesuffix(".c")
            src = REPO_ROOT / "tests" / "data" / "src" / source
            subprocess.run(["gcc", "-O2", "-Wa,--gsframe", str(src), "-o", str(program)], check=True)
            measure(program, run, args.repeat)


if __name__ == "__main__":
    main()
