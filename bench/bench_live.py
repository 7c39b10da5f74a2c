#!/usr/bin/env python3
"""How fast `sfview unwind --pid` reads a running process, beside `gdb -p` on the same process.

Why: a stack of a live process is read while the process is stopped; the
quicker, the shorter the stop. The program is `tests/data/src/live.c`
(built here with `-Wa,--gsframe`): three threads blocked reading pipes, main
at the bottom of a recursion of `--depth` calls, one thread inside a signal
handler. Both tools attach, print every thread's backtrace and detach, in
turns, as separate processes, on the same process: `sfview unwind --pid PID
--thread all` and `gdb -p PID -batch -nx -ex 'thread apply all bt'` (gdb as a
user runs it: with the distribution's debug files where they are installed,
which name libc's frames and add its inlined ones; and again without them,
`set debug-file-directory` to nowhere, names from the symbols as sfview
gives them). Beside them, the floor: this Python starting and doing
nothing. At the end the process is given its line and must exit 0.

Usage: python bench/bench_live.py [--repeat N] [--depth N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT, child_env, interleaved, sfview_argv

SOURCE = REPO_ROOT / "tests" / "data" / "src" / "live.c"


def build(depth: int) -> Path:
    program = BUILD_DIR / f"live-{depth}"
    if not program.exists() or program.stat().st_mtime < SOURCE.stat().st_mtime:
        program.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["gcc", "-O2", "-Wa,--gsframe", "-pthread", f"-DDEPTH={depth}", str(SOURCE), "-o", str(program)],
            check=True,
        )
    return program


def blocked(pid: int) -> bool:
    """Every thread of the three in its `read` (x86-64's system call 0; AArch64's is 63)."""
    tasks = os.listdir(f"/proc/{pid}/task")
    return len(tasks) == 3 and all(
        Path(f"/proc/{pid}/task/{tid}/syscall").read_text().split()[0] in ("0", "63") for tid in tasks
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--depth", type=int, default=1000, help="main's recursion (default 1000)")
    args = parser.parse_args()
    for tool in ("gcc", "gdb"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed", file=sys.stderr)
            return 2
    program = build(args.depth)
    process = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        while not blocked(process.pid):
            time.sleep(0.01)
        pid = str(process.pid)
        print(f"process {pid}: {program.name}, 3 threads, main {args.depth + 4} frames deep; {args.repeat} runs each")
        gdb = ["gdb", "-p", pid, "-batch", "-nx"]
        bt = ["-ex", "thread apply all bt"]
        interleaved(
            {
                "sfview unwind --pid --thread all": sfview_argv("unwind", "--pid", pid, "--thread", "all"),
                "gdb -p, thread apply all bt": [*gdb, *bt],
                "gdb -p, no debug files": [*gdb, "-iex", "set debug-file-directory /nonexistent", *bt],
                "floor: python -c pass": [sys.executable, "-c", "pass"],
            },
            args.repeat,
            child_env(),
        )
        process.communicate(b"\n", timeout=60)
        print(f"the process exited {process.returncode} after its line (0: it ran on as it was)")
        return 0 if process.returncode == 0 else 1
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


if __name__ == "__main__":
    sys.exit(main())
