#!/usr/bin/env python3
"""How fast `sfview compare` and `sfview export --breakpad` run on 40,000 functions, beside readelf.

Why: both read every function's SFrame rows; `compare` also decodes every DWARF
FDE (through pyelftools), which is where its time goes. readelf's dumps of the
same two tables (`--sframe`, `--debug-dump=frames-interp`) are the scale.

Usage: python bench/bench_compare.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys

from _common import big_binary, child_env, interleaved, sfview_argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    binary = str(big_binary(None))
    print(f"{binary}: {args.repeat} runs each, interleaved")
    interleaved(
        {
            "readelf --sframe": ["readelf", "--sframe", binary],
            "readelf --debug-dump=frames-interp": ["readelf", "--debug-dump=frames-interp", binary],
            "sfview export --breakpad": sfview_argv("export", "--breakpad", binary),
            "sfview compare": sfview_argv("compare", binary),
        },
        args.repeat,
        child_env(),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
