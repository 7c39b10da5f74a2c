#!/usr/bin/env python3
"""How fast `sfview check` validates the 40,000-function benchmark binary, beside `readelf --sframe`.

Why: a build can gate on `sfview check` only if it costs next to nothing:
the goal is under 1 s and under 10x readelf's dump, measured in the same run.
`--profile libsframe-2.40` adds a model of that release's decoder and one
`sframe_find_fre` per row, in Python: its cost is printed beside them.

Usage: python bench/bench_check.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys

from _common import big_binary, child_env, interleaved, sfview_argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    binary = big_binary(None)
    print(f"{binary.name}: {args.repeat} runs each, interleaved")
    summaries = interleaved(
        {
            "readelf": ["readelf", "--sframe", str(binary)],
            "sfview check": sfview_argv("check", str(binary)),
            "sfview check --profile libsframe-2.40": sfview_argv("check", "--profile", "libsframe-2.40", str(binary)),
        },
        args.repeat,
        child_env(),
    )
    ratio = summaries["sfview check"].median_s / summaries["readelf"].median_s
    print(f"sfview check / readelf: {ratio:.1f}x (median)")
    profiled = summaries["sfview check --profile libsframe-2.40"].median_s / summaries["readelf"].median_s
    print(f"sfview check --profile libsframe-2.40 / readelf: {profiled:.1f}x (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
