#!/usr/bin/env python3
"""How long a libsframe profile takes on one function of 6,000 rows, beside the release's own library.

Why: a profile must cost time linear in the section's rows (issue 35, item 7:
one lookup per row, each a linear search, took ~50 s here). For each release,
`sfview check --profile libsframe-X` on the raw 24 KB section of
`tests/handmade.long_function` (the version that release reads), beside the
release's own `sframe_find_fre` run at every PC of the function by the
tests' harness (`tests/libsframe_harness.c`, built here). Goal: under 1 s.

Then the shape that costs a profile the most per byte: 2,000 functions
reading overlapping blocks of one pool of rows (`tests/handmade.overlapping`,
each block a row later; version 3: one block for all), under every profile
(libsframe's, glibc's, the kernel's), each alone in a process, beside the
libsframe release's own lookups at every PC of every function, and the whole
`sfview check --profile` (with the format's checks). Goal: the profiles
linear (under 1 s each).

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
from handmade import long_function, overlapping
from libsframe_oracle import FRE_INFO_AT, HARNESS, HOST_LIBSFRAME, NEW_API
from toolchains import SUITES, cache_dir

VERSIONS = {"2.40": 1, "2.44": 2, "2.47": 3}
"""The section version each release is timed on (the one binutils of that release writes)."""
ROWS = 6000
OVERLAPPING = 2000
"""Functions, and rows each, of the overlapping shape."""
OTHERS = {1: [], 2: ["glibc-2.43"], 3: ["kernel-v14", "kernel"]}
"""The other profiles timed on the overlapping shape of each version."""


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
    for release, version in VERSIONS.items():
        data = overlapping(version, OVERLAPPING, OVERLAPPING)
        section = BUILD_DIR / f"overlapping-{OVERLAPPING}-v{version}.sframe"
        section.write_bytes(data)
        request = BUILD_DIR / f"overlapping-{OVERLAPPING}-v{version}.request"
        spans = b"".join(struct.pack("<qqI", 0x1000 + 4 * i, 0x1004 + 4 * i, 0) for i in range(OVERLAPPING))
        request.write_bytes(struct.pack("<I", len(data)) + data + struct.pack("<II", 0, OVERLAPPING) + spans)
        print(f"version {version}: {OVERLAPPING} functions reading overlapping blocks of rows, {len(data)} bytes")
        commands = {}
        for profile in [f"libsframe-{release}", *OTHERS[version]]:
            # The profile alone: `check` also runs the format's own checks, which read every function's rows.
            judge = (
                "from sfview.consumers.verdicts import profiles; "
                f"profiles()[{profile!r}].judge(open({str(section)!r}, 'rb').read(), 0)"
            )
            commands[f"profile {profile} alone"] = [sys.executable, "-c", judge]
        commands[f"sfview check --profile libsframe-{release}"] = sfview_argv(
            "check", "--profile", f"libsframe-{release}", str(section)
        )
        library = _library(release)
        if library is not None:
            shell = " ".join(f"'{word}'" for word in library) + f" < '{request}' > /dev/null"
            commands[f"libsframe {release}, every PC"] = ["sh", "-c", shell]
        interleaved(commands, args.repeat, env)
        if args.baseline:  # the format's own checks, before rows many functions read were read once each
            before = dict(env, PYTHONPATH=str(args.baseline.resolve()))
            argv = [sys.executable, "-m", "sfview", "check", "--profile", f"libsframe-{release}", str(section)]
            run = run_measured(argv, cwd=args.baseline.resolve(), env=before)
            print(
                f"baseline sfview check --profile libsframe-{release}: {run.wall_s:.3f}s "
                f"{run.peak_rss_mb:.1f} MB (one run)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
