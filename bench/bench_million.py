#!/usr/bin/env python3
"""`sfview dump`, `dump --json` and `check` on a million functions, beside `readelf --sframe`.

Why: the goals for 1,000,000 functions are `dump` within 2x
readelf and 100 MB, `dump --json` within 100 MB, `check` within 5 s and
150 MB. The input is `make_million.py`'s: make_big.py's section repeated 25
times in a small ELF file. `check` reads the same section as a raw section
file, since in the ELF file no function lies in an executable segment and
every one of them would be a problem to print. The explorer on the same
input: `python bench/bench_app.py --binary bench/build/big-1000075`.

Usage: python bench/bench_million.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

import make_million
from _common import child_env, interleaved, sfview_argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    binary = make_million.build()
    raw = binary.with_suffix(".sframe")
    if not raw.exists() or raw.stat().st_mtime < binary.stat().st_mtime:
        objcopy = shutil.which("objcopy") or "objcopy"
        subprocess.run([objcopy, "--dump-section", f".sframe={raw}", str(binary), "/dev/null"], check=True)
    print(f"{binary}: {args.repeat} runs each, interleaved")
    summaries = interleaved(
        {
            "readelf --sframe": ["readelf", "--sframe", str(binary)],
            "sfview dump": sfview_argv("dump", str(binary)),
            "sfview dump --json": sfview_argv("dump", "--json", str(binary)),
            "sfview check (raw section)": sfview_argv("check", str(raw)),
        },
        args.repeat,
        child_env(),
    )
    readelf = summaries["readelf --sframe"].median_s
    for name in ("sfview dump", "sfview dump --json", "sfview check (raw section)"):
        print(f"{name} / readelf --sframe: {summaries[name].median_s / readelf:.1f}x (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
