#!/usr/bin/env python3
"""How fast `sfview perf` reads and unwinds a real profile, beside `perf script` on the same file.

Why: a profile holds tens of thousands of samples, each a stack to walk three
ways; a report a user waits minutes for is one they do not ask for. The
program is Lua 5.4 from Debian's source (`tools/toolchains.sh` fetches it),
built with the system's `gcc -Wa,--gsframe -O2`, running a script of real work
(string formatting, sorting 60,000 strings, pattern matching, recursion). It is
recorded once with `perf record -e cpu-clock:u --call-graph dwarf` until the
profile holds at least `--samples` samples (10,000), and kept for the next
runs (`--record`: record anew), then:

* `perf script -i FILE` (its DWARF unwinding through libdw, each callchain
  printed with its symbols) and `sfview perf FILE --json` with one process and
  with the default, and the default with `--no-inline` (frames named from the
  symbol tables alone), interleaved, best and median wall time, median CPU time,
  peak RSS; with `--baseline DIR`, also another checkout's `sfview perf` (`git
  worktree add /tmp/before main`), in the same run, for a before/after;
* the report's figures: samples, SFrame's and the frame pointers' share of
  DWARF's stacks, and where SFrame parts from DWARF most.

Usage: python bench/bench_perf.py [--repeat N] [--samples N] [--record] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT, child_env, interleaved, run_measured, sfview_argv

WORK = """
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for round = 1, tonumber(arg[1]) do
  for i = 1, 60000 do t[i] = string.format("%08d:%s", (i * 7919 + round) % 100003, tostring(i)) end
  table.sort(t)
  local words = {}
  for _, v in ipairs(t) do local a, b = v:match("(%d+):(%d+)"); words[#words + 1] = a .. b end
  local s = table.concat(words, ",", 1, 5000)
  local n = 0
  for w in s:gmatch("[^,]+") do n = n + #w end
  fib(22)
end
"""
"""The Lua script profiled: a round of each kind of work per argument."""


def lua_source() -> Path:
    out = subprocess.run(["bash", str(REPO_ROOT / "tools" / "toolchains.sh")], capture_output=True, text=True)
    folder = Path(out.stdout.strip().splitlines()[-1]) / "src" / "lua5.4" if out.returncode == 0 else None
    if folder is None or not (folder / ".done").exists():
        raise SystemExit(f"Debian's lua5.4 source could not be fetched (tools/toolchains.sh): {out.stderr[-500:]}")
    return folder / "src"


def build(folder: Path) -> Path:
    lua = folder / "lua"
    if not lua.exists():
        sources = [str(f) for f in sorted(lua_source().glob("*.c")) if f.name != "luac.c"]
        argv = ["gcc", "-Wa,--gsframe", "-O2", "-DLUA_USE_LINUX", "-o", str(lua), *sources, "-lm", "-ldl"]
        subprocess.run(argv, check=True)
    return lua


def counted(data: Path) -> int:
    """The samples of a profile, as perf script counts them."""
    out = subprocess.run(["perf", "script", "-i", str(data), "-F", "pid"], capture_output=True, text=True)
    return len(out.stdout.split())


def record(folder: Path, lua: Path, samples: int, anew: bool) -> tuple[Path, int]:
    """A profile of at least `samples` samples (more rounds until it has them), and its samples; the one
    recorded before when it has them and is newer than the program, unless `anew`."""
    script = folder / "work.lua"
    data = folder / "lua.data"
    if not anew and data.exists() and data.stat().st_mtime > lua.stat().st_mtime:
        got = counted(data)
        if got >= samples:
            return data, got
    script.write_text(WORK)
    rounds = 12
    while True:
        argv = ["perf", "record", "-q", "-e", "cpu-clock:u", "--call-graph", "dwarf", "-o", str(data), "--"]
        subprocess.run([*argv, str(lua), str(script), str(rounds)], check=True, capture_output=True)
        got = counted(data)
        if got >= samples:
            return data, got
        rounds = rounds * samples // max(got, 1) + 1


def from_checkout(checkout: Path, *args: str) -> list[str]:
    """sfview run from another checkout: its directory first on the path (`-m` puts the working one there)."""
    return ["sh", "-c", 'cd "$0" && PYTHONPATH="$0" exec "$@"', str(checkout), *sfview_argv(*args)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--record", action="store_true", help="record the profile anew")
    parser.add_argument("--baseline", type=Path, help="another checkout of sfview to run beside this one")
    args = parser.parse_args()
    if shutil.which("perf") is None:
        raise SystemExit("perf is not installed (Debian: linux-perf)")
    folder = BUILD_DIR / "perf"
    folder.mkdir(parents=True, exist_ok=True)
    lua = build(folder)
    data, samples = record(folder, lua, args.samples, args.record)
    print(f"{data}: {samples} samples of {lua} ({data.stat().st_size / 1e6:.0f} MB)")
    env = child_env()
    commands = {
        "perf script (DWARF)": ["perf", "script", "-i", str(data)],
        "sfview perf --jobs 1": sfview_argv("perf", str(data), "--json", "--jobs", "1"),
        "sfview perf": sfview_argv("perf", str(data), "--json"),
        "sfview perf --no-inline": sfview_argv("perf", str(data), "--json", "--no-inline"),
    }
    if args.baseline:
        baseline = args.baseline.resolve()
        commands["baseline sfview perf --jobs 1"] = from_checkout(baseline, "perf", str(data), "--json", "--jobs", "1")
        commands["baseline sfview perf"] = from_checkout(baseline, "perf", str(data), "--json")
    summaries = interleaved(commands, args.repeat, env)
    for name, summary in summaries.items():
        print(f"{name}: {summary.cpu_median_s:.2f} s CPU (median)")
    reference = summaries["perf script (DWARF)"]
    for name in commands:
        if name.startswith(("sfview", "baseline")):
            wall, cpu = (
                summaries[name].median_s / reference.median_s,
                summaries[name].cpu_median_s / reference.cpu_median_s,
            )
            print(f"{name} / perf script, median wall time: {wall:.1f}x, median CPU: {cpu:.1f}x")
    report = json.loads(run_measured(commands["sfview perf"], env=env).stdout)
    equal, walked = report["equal_to_dwarf"], report["samples"] - report["without_registers"]
    for key in ("sframe", "sframe_as_far_as_files_with_sframe_go", "fp"):
        print(f"{key}: {equal[key]} of {walked} ({100 * equal[key] / walked:.1f} %)")
    for place in report["by_function"][:5]:
        print(f"  {place['samples']:6}  {place['function']} ({place['file']}): {place['why']}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
