#!/usr/bin/env python3
"""How fast `sfview unwind --gdbstub` reads a qemu-user guest, beside gdb-multiarch on the same guest.

Why: the guest is stopped while it is read, and the stub carries every
register and memory word in a packet: the round trips are the cost. The
program is `tests/data/src/guest.c` (built here for AArch64 with
`-Wa,--gsframe`): main `--depth` calls deep, then reading its stdin
(`wait_input`), one more thread blocked reading a pipe. qemu's gdbstub takes
one debugger, and its guest runs on after it: each run starts the guest
(`qemu-aarch64 -g PORT`, not timed), then times the tool connecting, running
the guest to `wait_input`'s first instruction, printing every thread's
backtrace and detaching (`sfview unwind --gdbstub PORT --break wait_input
--thread all`; `gdb-multiarch -batch` with `target remote`, `break
*wait_input`, `continue`, `thread apply all bt`, `detach`), and the guest is
given its line and must exit 0. The tools take turns.

Usage: python bench/bench_gdbstub.py [--repeat N] [--depth N]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT, RunResult, Summary, child_env, run_measured, sfview_argv

SOURCE = REPO_ROOT / "tests" / "data" / "src" / "guest.c"
SYSROOT = "/usr/aarch64-linux-gnu"


def build(depth: int) -> Path:
    program = BUILD_DIR / f"guest-aarch64-{depth}"
    if not program.exists() or program.stat().st_mtime < SOURCE.stat().st_mtime:
        program.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["aarch64-linux-gnu-gcc", "-O2", "-Wa,--gsframe", "-pthread", f"-DDEPTH={depth}",
                        str(SOURCE), "-o", str(program)], check=True)  # fmt: skip
    return program


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def one_run(program: Path, command: list[str]) -> RunResult:
    """`command` (`{port}` in it replaced) timed against a fresh guest, which must then exit 0."""
    port = str(free_port())
    qemu = subprocess.Popen(["qemu-aarch64", "-g", port, "-L", SYSROOT, str(program)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    try:
        time.sleep(0.3)  # qemu listening (a connection to probe it would be taken for the debugger)
        result = run_measured([part.replace("{port}", port) for part in command], env=child_env())
        out, _ = qemu.communicate(b"\n", timeout=60)
        if result.returncode != 0 or qemu.returncode != 0 or out != b"ready\n":
            raise RuntimeError(f"{command[0]}: exit {result.returncode}, guest {qemu.returncode} {out!r}: "
                               f"{result.stderr.decode(errors='replace')}")  # fmt: skip
        return result
    finally:
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--depth", type=int, default=1000, help="main's recursion (default 1000)")
    args = parser.parse_args()
    for tool in ("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed", file=sys.stderr)
            return 2
    program = build(args.depth)
    gdb = ["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {SYSROOT}", "-ex", "target remote :{port}",
           "-ex", "break *wait_input", "-ex", "continue"]  # fmt: skip
    commands = {
        "sfview unwind --gdbstub --break --thread all": sfview_argv(
            "unwind",
            str(program),
            "--gdbstub",
            "{port}",
            "--break",
            "wait_input",
            "--sysroot",
            SYSROOT,
            "--thread",
            "all",
        ),
        "gdb-multiarch, thread apply all bt": [*gdb, "-ex", "thread apply all bt", "-ex", "detach", str(program)],
        "gdb-multiarch, no bt (connect, break, detach)": [*gdb, "-ex", "detach", str(program)],
    }
    print(f"{program.name}: 2 threads, main {args.depth + 3} frames deep; {args.repeat} runs each, a fresh guest each")
    results: dict[str, list[RunResult]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            results[name].append(one_run(program, command))
    for name, runs in results.items():
        summary = Summary.of(runs)
        print(f"{name:48} best {summary.best_s:.3f} s, median {summary.median_s:.3f} s, "
              f"{summary.peak_rss_mb:.1f} MB")  # fmt: skip
    print("every guest exited 0 after its line (it ran on after the tool detached)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
