#!/usr/bin/env python3
"""How fast `sfview check` validates the 40,000-function benchmark binary, beside `readelf --sframe`.

Why: a build can gate on `sfview check` only if it costs next to nothing:
the goal is under 1 s and under 10x readelf's dump, measured in the same run.

Usage: python bench/bench_check.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys

from _common import Summary, big_binary, child_env, run_measured, sfview_argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    binary = big_binary(None)
    env = child_env()
    readelf_argv, check_argv = ["readelf", "--sframe", str(binary)], sfview_argv("check", str(binary))
    run_measured(check_argv, env=env)  # warm-up: page cache and bytecode cache
    readelf, ours = [], []
    for _ in range(args.repeat):
        readelf.append(run_measured(readelf_argv, env=env))
        ours.append(run_measured(check_argv, env=env))
    print(f"{binary.name}: {args.repeat} runs each, interleaved")
    for name, runs in (("readelf", readelf), ("sfview check", ours)):
        s = Summary.of(runs)
        status = {r.returncode for r in runs}
        print(f"{name:13} {s.best_s:7.3f}s best {s.median_s:7.3f}s median {s.peak_rss_mb:6.1f} MB  exit {status}")
    ratio = Summary.of(ours).median_s / Summary.of(readelf).median_s
    print(f"sfview check / readelf: {ratio:.1f}x (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
