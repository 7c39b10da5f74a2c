#!/usr/bin/env python3
"""How fast `sfview unwind --core` names frames from debug information, beside `gdb -batch -ex bt` on the same core.

Why: with debug information (the program's own, libc's from libc6-dbg) a
backtrace reads `.debug_info` and `.debug_line` for every frame's names,
lines and inlined calls; sfview reads only the compilation units holding the
frames' PCs. The program is `tests/data/src/inline.c` built with `-g -O2
-Wa,--gsframe`, its core written by gdb stopped inside libc's malloc (in
`checked_request2size`, which malloc inlines), so that both tools read libc's
debug file. The commands run in turns as separate processes: `sfview unwind
--core`, the same with `--no-inline`, `gdb -batch -nx -ex bt` (with the
debug files, as a user runs it) and again without them (`set
debug-file-directory` to nowhere), and the floor, this Python doing nothing.

Usage: python bench/bench_inline.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT, child_env, interleaved, sfview_argv

SOURCE = REPO_ROOT / "tests" / "data" / "src" / "inline.c"


def build() -> tuple[Path, Path]:
    """The program and its core in malloc, made once (again when the source changes)."""
    program, core = BUILD_DIR / "inline", BUILD_DIR / "inline-malloc.core"
    if not core.exists() or core.stat().st_mtime < SOURCE.stat().st_mtime:
        program.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-g", "-O2", "-Wa,--gsframe", str(SOURCE), "-o", str(program)], check=True)
        stops = ["break grab", "run", "break checked_request2size", "continue", f"generate-core-file {core}"]
        subprocess.run(
            ["gdb", "-batch", "-nx", *(arg for stop in stops for arg in ("-ex", stop)), str(program)],
            capture_output=True, check=True, timeout=120,
        )  # fmt: skip
    return program, core


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    for tool in ("gcc", "gdb"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed", file=sys.stderr)
            return 2
    program, core = build()
    print(f"{core.name}: {args.repeat} runs each")
    gdb = ["gdb", "-batch", "-nx"]
    nowhere = ["-iex", "set debug-file-directory /nonexistent"]
    on_core = [str(program), "--core", str(core)]
    interleaved(
        {
            "sfview unwind --core": sfview_argv("unwind", *on_core),
            "sfview unwind --core --no-inline": sfview_argv("unwind", *on_core, "--no-inline"),
            "gdb -batch -ex bt": [*gdb, "-ex", "bt", str(program), str(core)],
            "gdb, no debug files": [*gdb, *nowhere, "-ex", "bt", str(program), str(core)],
            "floor: python -c pass": [sys.executable, "-c", "pass"],
        },
        args.repeat,
        child_env(),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
