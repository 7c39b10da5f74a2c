#!/usr/bin/env python3
"""`sfview diff` of two million-function sections, beside `sfview dump` of both.

Why: the goal is a diff of two 1,000,075-function sections within twice the
time `sfview dump` takes for the two. A is `make_million.py`'s file; B is a
copy of it in which every 1,000th function's first row has its CFA offset
changed by 8 (a different meaning at a known PC), so that the pairing, the
shapes seen before and the comparison of the rows all run. `readelf
--sframe` of both is printed beside them for scale.

Usage: python bench/bench_diff.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import make_million  # puts the checkout on sys.path
from _common import child_env, interleaved, sfview_argv

from sfview.document import Document
from sfview.sframe.bulk.reader import Bulk

EVERY = 1000


def changed_copy(binary: Path, out: Path) -> Path:
    """A copy of `binary` with the CFA offset of the first row of every `EVERY`-th function plus 8."""
    if out.exists() and out.stat().st_mtime > binary.stat().st_mtime:
        return out
    doc = Document.open(str(binary))
    section = doc.require_section()
    data = bytearray(binary.read_bytes())
    changed = 0
    for walked in Bulk(section).functions():
        if isinstance(walked, int) or walked[0] % EVERY:
            continue
        _, _, _, pos, _, block = walked
        rows = block.rows if isinstance(block.rows, list) else list(block.rows)
        if not rows:
            continue
        width = {0: 1, 1: 2, 2: 4}[block.info.fre_type]
        info = rows[0][1][0]
        if (info >> 5) & 3:  # CFA offsets of one byte only: the byte after the info byte
            continue
        at = doc.file_offset + pos + width + 1
        data[at] = (data[at] + 8) & 0xFF
        changed += 1
    out.write_bytes(data)
    print(f"{out}: {changed} functions' first row changed")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    a = make_million.build()
    b = changed_copy(a, a.with_name(a.name + "-changed"))
    copy = a.with_name(a.name + "-copy")
    if not copy.exists() or copy.stat().st_mtime < a.stat().st_mtime:
        shutil.copyfile(a, copy)
    print(f"A {a}, B {b}: {args.repeat} runs each, interleaved")
    summaries = interleaved(
        {
            "readelf --sframe A": ["readelf", "--sframe", str(a)],
            "sfview dump A": sfview_argv("dump", str(a)),
            "sfview dump B": sfview_argv("dump", str(b)),
            "sfview diff A copy-of-A": sfview_argv("diff", str(a), str(copy)),
            "sfview diff A B": sfview_argv("diff", str(a), str(b)),
        },
        args.repeat,
        child_env(),
    )
    dumps = summaries["sfview dump A"].median_s + summaries["sfview dump B"].median_s
    for name in ("sfview diff A copy-of-A", "sfview diff A B"):
        print(f"{name} / (sfview dump A + sfview dump B): {summaries[name].median_s / dumps:.2f}x (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
