"""Helpers shared by the bench/ scripts.

Why: every benchmark needs the same two things -- the big test binary and a
way to run a child process while measuring its wall time and peak RSS -- and
they should be measured the same way everywhere so figures are comparable.
"""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import make_big

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
BUILD_DIR = make_big.BUILD_DIR


@dataclass
class RunResult:
    """Outcome of one measured child process."""

    argv: list[str]
    returncode: int
    wall_s: float
    cpu_s: float  # user + system time of the child
    peak_rss_mb: float
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        """True when the child exited with status 0."""
        return self.returncode == 0


RSS_RUNNER_SRC = BENCH_DIR / "rss_runner.c"
RSS_RUNNER = BUILD_DIR / "rss_runner"


@functools.cache
def rss_runner() -> Path | None:
    """Build bench/build/rss_runner when needed; None if there is no C compiler.

    Linux counts the memory a child had before exec() -- a copy of this whole
    Python process -- in its ru_maxrss.  Starting the measured command from a
    tiny C program keeps readelf's few-MB peak from being drowned out.
    """
    if RSS_RUNNER.exists() and RSS_RUNNER.stat().st_mtime > RSS_RUNNER_SRC.stat().st_mtime:
        return RSS_RUNNER
    RSS_RUNNER.parent.mkdir(parents=True, exist_ok=True)
    argv = [os.environ.get("CC", "cc"), "-O2", "-o", str(RSS_RUNNER), str(RSS_RUNNER_SRC)]
    try:
        subprocess.run(argv, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(
            f"warning: cannot build {RSS_RUNNER.name} ({exc}); "
            "peak RSS figures will include the benchmark's own memory",
            file=sys.stderr,
        )
        return None
    return RSS_RUNNER


def run_measured(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> RunResult:
    """Run `argv` to completion; measure wall time, CPU time and peak RSS.

    Output goes to temporary files rather than pipes so the parent does no
    work while the child runs.  The rusage comes from wait4() on the command
    itself, done by rss_runner if available (see rss_runner()), else by us.
    """
    runner = rss_runner()
    with tempfile.TemporaryDirectory(prefix="sfview-bench-") as tmp:
        report = Path(tmp) / "report"
        command = [str(runner), str(report), *argv] if runner else argv
        with open(Path(tmp) / "stdout", "w+b") as out, open(Path(tmp) / "stderr", "w+b") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from waiting again
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        if runner is None:
            cpu, maxrss_kib = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
        elif proc.returncode != 0:
            raise RuntimeError(f"{runner} failed for {argv}: {stderr.decode(errors='replace')}")
        else:
            fields = report.read_text().split()
            status, maxrss_kib = int(fields[0]), int(fields[1])
            cpu, wall = float(fields[2]) + float(fields[3]), float(fields[4])
    return RunResult(
        argv=list(argv),
        returncode=os.waitstatus_to_exitcode(status),
        wall_s=wall,
        cpu_s=cpu,
        peak_rss_mb=maxrss_kib / 1024,  # ru_maxrss is in KiB on Linux
        stdout=stdout,
        stderr=stderr,
    )


@dataclass
class Summary:
    """Figures over several runs of the same command."""

    runs: int
    best_s: float
    median_s: float
    peak_rss_mb: float  # maximum over the runs
    cpu_median_s: float = 0.0  # user + system

    @classmethod
    def of(cls, results: list[RunResult]) -> Summary:
        """Summarise a non-empty list of results."""
        walls = [r.wall_s for r in results]
        return cls(
            runs=len(results),
            best_s=min(walls),
            median_s=statistics.median(walls),
            peak_rss_mb=max(r.peak_rss_mb for r in results),
            cpu_median_s=statistics.median(r.cpu_s for r in results),
        )


def child_env() -> dict[str, str]:
    """Environment for measured children: C locale (readelf's output is
    localised), this checkout first on PYTHONPATH (so `-m sfview` works
    from any directory), and bytecode caching on."""
    env = dict(os.environ, LC_ALL="C")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    # As a user's Python runs it: with its bytecode cached (some shells and tools turn that off,
    # and then every run compiles sfview anew). The warm-up run writes the cache.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def sfview_argv(*args: str) -> list[str]:
    """Command line for running sfview from this checkout."""
    return [sys.executable, "-m", "sfview", *args]


def big_binary(
    binary: Path | None = None,
    *,
    functions: int = make_big.DEFAULT_FUNCTIONS,
    force: bool = False,
) -> Path:
    """Return `binary` if given, else build (or reuse) bench/build/big-<functions>."""
    if binary is not None:
        if not binary.is_file():
            raise SystemExit(f"no such file: {binary}")
        return binary.resolve()
    return make_big.build(functions, force=force)


def first_difference(a: bytes, b: bytes) -> tuple[int, str, str] | None:
    """(1-based line number, line of a, line of b) of the first difference."""
    if a == b:
        return None
    lines_a, lines_b = a.splitlines(), b.splitlines()
    for number, (la, lb) in enumerate(zip(lines_a, lines_b, strict=False), start=1):
        if la != lb:
            return number, la.decode(errors="replace"), lb.decode(errors="replace")
    number = min(len(lines_a), len(lines_b)) + 1
    rest_a = lines_a[number - 1] if len(lines_a) >= number else b"<end of output>"
    rest_b = lines_b[number - 1] if len(lines_b) >= number else b"<end of output>"
    if rest_a == rest_b:  # only line endings / trailing newline differ
        return number, repr(a[-20:]), repr(b[-20:])
    return number, rest_a.decode(errors="replace"), rest_b.decode(errors="replace")


def interleaved(commands: dict[str, list[str]], repeat: int, env: dict[str, str]) -> dict[str, Summary]:
    """Run each command `repeat` times, taking turns (so that a busy moment hits them all), after one
    warm-up run each; print best, median, peak RSS and exit statuses, and return the summaries."""
    for argv in commands.values():
        run_measured(argv, env=env)  # warm-up: page cache and bytecode cache
    runs: dict[str, list[RunResult]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            runs[name].append(run_measured(argv, env=env))
    width = max(len(name) for name in commands)
    summaries = {}
    for name, results in runs.items():
        s = summaries[name] = Summary.of(results)
        status = {r.returncode for r in results}
        print(f"{name:{width}} {s.best_s:7.3f}s best {s.median_s:7.3f}s median {s.peak_rss_mb:6.1f} MB  exit {status}")
    return summaries
