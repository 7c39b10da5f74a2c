#!/usr/bin/env python3
"""Memory per section byte of every command: peak RSS on a big section, less the same command's on a small one.

Why: what a command holds must grow with the section, not with what the file
claims, and not many times over: the aim is at most 10 bytes of memory per
byte of `.sframe` beyond a constant (the interpreter and its imports). The
figure printed for each command is

    (peak RSS on the big binary - peak RSS on the small one) / (big section - small section)

beside readelf's own for `--sframe` (the same subtraction), in the same run.
For `compare`, which reads the file's DWARF CFI too, a second line divides
the same growth by the growth of `.sframe`, `.eh_frame` and `.debug_frame`
together.

Usage: python bench/bench_memory.py [--functions N] [--binary PATH]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from _common import REPO_ROOT, big_binary, child_env, run_measured, sfview_argv

SMALL = REPO_ROOT / "tests" / "data" / "shapes-x86_64-O2"
COMMANDS = {
    "dump": ["dump"],
    "dump --json": ["dump", "--json"],
    "check": ["check"],
    "compare": ["compare"],
    "export": ["export", "--breakpad"],
}


def section_size(path: Path) -> int:
    sys.path.insert(0, str(REPO_ROOT))
    from sfview.document import Document

    return len(Document.open(str(path)).data)


def cfi_size(path: Path) -> int:
    """Bytes of DWARF CFI (`.eh_frame` and `.debug_frame`): what `compare` reads beside `.sframe`."""
    from elftools.elf.elffile import ELFFile

    with path.open("rb") as f:
        elf = ELFFile(f)
        return sum(s["sh_size"] for name in (".eh_frame", ".debug_frame") if (s := elf.get_section_by_name(name)))


def _line(name: str, small_mb: float, big_mb: float, grown: int, what: str = "section byte") -> None:
    per_byte = (big_mb - small_mb) * (1 << 20) / grown
    print(f"{name:20} {small_mb:6.1f} MB -> {big_mb:6.1f} MB  {per_byte:5.1f} bytes per {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=None, help="functions in the generated big binary")
    parser.add_argument("--binary", type=Path, help="measure this ELF file instead of the generated one")
    args = parser.parse_args()
    big = big_binary(args.binary, **({"functions": args.functions} if args.functions else {}))
    sizes = {path: section_size(path) for path in (SMALL, big)}
    grown = sizes[big] - sizes[SMALL]
    env = child_env()
    print(f"{big.name}: .sframe of {sizes[big]} bytes; {SMALL.name}: {sizes[SMALL]} bytes")
    rows = dict(COMMANDS)
    readelf = shutil.which("readelf")
    for name, command in rows.items():
        peaks = {}
        for path in (SMALL, big):
            run_measured(sfview_argv(*command, str(path)), env=env)  # warm-up: page cache, bytecode
            result = run_measured(sfview_argv(*command, str(path)), env=env)
            peaks[path] = result.peak_rss_mb
        _line(f"sfview {name}", peaks[SMALL], peaks[big], grown)
        if name == "compare":  # it reads the DWARF CFI as well: the same growth over both sections' growth
            both = grown + cfi_size(big) - cfi_size(SMALL)
            _line("", peaks[SMALL], peaks[big], both, "byte of .sframe + .eh_frame + .debug_frame")
    if readelf:
        peaks = {path: run_measured([readelf, "--sframe", str(path)], env=env).peak_rss_mb for path in (SMALL, big)}
        _line("readelf --sframe", peaks[SMALL], peaks[big], grown)


if __name__ == "__main__":
    main()
