#!/usr/bin/env python3
"""How long a libsframe profile takes on one function of 6,000 rows, beside the release's own library.

Why: a profile must cost time linear in the section's rows (issue 35, item 7:
one lookup per row, each a linear search, took ~50 s here). For each release,
`sfview check --profile libsframe-X` on the raw 24 KB section of
`tests/handmade.long_function` (the version that release reads), beside the
release's own `sframe_find_fre` run at every PC of the function by the
tests' harness (`tests/libsframe_harness.c`, built here). Goal: under 1 s.

`--baseline DIR`: also run the profile from another checkout of sfview
(e.g. `git worktree add /tmp/before main`), once, for a before/after.

Usage: python bench/bench_profiles.py [--repeat N] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT, child_env, interleaved, run_measured, sfview_argv

sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT))
from handmade import long_function
from libsframe_oracle import FRE_INFO_AT, HARNESS, HOST_LIBSFRAME, NEW_API
from toolchains import SUITES, cache_dir

VERSIONS = {"2.40": 1, "2.44": 2, "2.47": 3}
"""The section version each release is timed on (the one binutils of that release writes)."""
ROWS = 6000


def _library(release: str) -> list[str] | None:
    """The command that runs the harness on that release's libsframe.so, or None if it is missing."""
    harness = BUILD_DIR / "libsframe_harness"
    if not harness.exists() or harness.stat().st_mtime < HARNESS.stat().st_mtime:
        harness.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-O1", "-o", str(harness), str(HARNESS), "-ldl"], check=True)
    args = [str(NEW_API[release]), str(FRE_INFO_AT[release])]
    if release == "2.40":
        return [str(harness), str(HOST_LIBSFRAME), *args] if HOST_LIBSFRAME.exists() else None
    cache = cache_dir()
    if cache is None:
        return None
    suite = cache / SUITES[release]
    return [str(suite / "run"), str(harness), str(suite / "libsframe.so"), *args]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout of sfview to run beside this one, once")
    args = parser.parse_args(argv)
    env = child_env()
    for release, version in VERSIONS.items():
        data = long_function(version, ROWS)
        section = BUILD_DIR / f"long-{ROWS}-v{version}.sframe"
        section.parent.mkdir(parents=True, exist_ok=True)
        section.write_bytes(data)
        start = 0x1000  # the function's start, section-relative as the library takes it
        request = BUILD_DIR / f"long-{ROWS}-v{version}.request"
        span = struct.pack("<qqI", start - 4, start + 2 * ROWS + 4, 0)
        request.write_bytes(struct.pack("<I", len(data)) + data + struct.pack("<II", 0, 1) + span)
        print(f"libsframe {release}: one function of {ROWS} rows, version {version}, {len(data)} bytes")
        profile = f"libsframe-{release}"
        commands = {f"sfview check --profile {profile}": sfview_argv("check", "--profile", profile, str(section))}
        library = _library(release)
        if library is not None:
            shell = " ".join(f"'{word}'" for word in library) + f" < '{request}' > /dev/null"
            commands[f"libsframe {release}, every PC"] = ["sh", "-c", shell]
        interleaved(commands, args.repeat, env)
        if args.baseline:
            before = dict(env, PYTHONPATH=str(args.baseline.resolve()))
            argv = [sys.executable, "-m", "sfview", "check", "--profile", profile, str(section)]
            run = run_measured(argv, cwd=args.baseline.resolve(), env=before)  # -m puts the cwd first
            print(f"baseline sfview check --profile {profile}: {run.wall_s:.3f}s (one run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
