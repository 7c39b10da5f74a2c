#!/usr/bin/env python3
"""How fast `sfview compare` and `sfview export --breakpad` run on 40,000 functions, beside readelf.

Why: both read every function's SFrame rows; `compare` also reads every DWARF
FDE. readelf's dumps of the same two tables (`--debug-dump=frames-interp` for
compare, `--sframe` for export) are the scale: the goal is 10 times theirs at
most. The ratios are of the best times of one interleaved run.

`--baseline DIR`: also run the same commands from another checkout of sfview
(`git worktree add /tmp/before main`), in the same run, for a before/after.

Usage: python bench/bench_compare.py [--repeat N] [--baseline DIR] [--binary PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import big_binary, child_env, interleaved, sfview_argv

REFERENCE = {"compare": "readelf --debug-dump=frames-interp", "export --breakpad": "readelf --sframe"}
"""Each sfview command, and the readelf command it is measured against."""


def _from(checkout: Path, *args: str) -> list[str]:
    """sfview run from another checkout: its directory first on the path (`-m` puts the working one there)."""
    return ["sh", "-c", 'cd "$0" && PYTHONPATH="$0" exec "$@"', str(checkout), *sfview_argv(*args)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout of sfview to run beside this one")
    parser.add_argument("--binary", type=Path, help="measure this ELF file instead of the generated one")
    args = parser.parse_args(argv)
    binary = str(big_binary(args.binary))
    print(f"{binary}: {args.repeat} runs each, interleaved")
    commands = {
        "readelf --sframe": ["readelf", "--sframe", binary],
        "readelf --debug-dump=frames-interp": ["readelf", "--debug-dump=frames-interp", binary],
    }
    for command in REFERENCE:
        commands[f"sfview {command}"] = sfview_argv(*command.split(), binary)
        if args.baseline:
            commands[f"baseline sfview {command}"] = _from(args.baseline.resolve(), *command.split(), binary)
    summaries = interleaved(commands, args.repeat, child_env())
    for command, reference in REFERENCE.items():
        for who in ("", "baseline ") if args.baseline else ("",):
            ratio = summaries[f"{who}sfview {command}"].best_s / summaries[reference].best_s
            print(f"{who}sfview {command} / {reference}: {ratio:.1f}x (goal: 10x at most)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
