#!/usr/bin/env python3
"""Time `sfview dump` against `readelf --sframe` on the same binary.

Why: `sfview dump` aims to reproduce readelf's output byte for byte, so
readelf is both the correctness oracle and the speed yardstick.  Both are
measured in the same run, interleaved, so that machine noise hits both alike.

Usage: python bench/bench_dump.py [--binary PATH] [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import make_big
from _common import (
    RunResult,
    Summary,
    big_binary,
    child_env,
    first_difference,
    run_measured,
    sfview_argv,
)


def measure(binary: Path, repeat: int) -> tuple[list[RunResult], list[RunResult]]:
    """Run readelf and sfview `repeat` times each, alternating.

    sfview is not run again once it has failed: a broken build would only
    repeat the same traceback.
    """
    env = child_env()
    readelf_argv = ["readelf", "--sframe", str(binary)]
    run_measured(readelf_argv, env=env)  # warm-up: get the binary into the page cache
    readelf: list[RunResult] = []
    sfview: list[RunResult] = []
    for _ in range(repeat):
        readelf.append(run_measured(readelf_argv, env=env))
        if not sfview or sfview[-1].ok:
            sfview.append(run_measured(sfview_argv("dump", str(binary)), env=env))
    return readelf, sfview


def report(binary: Path, readelf: list[RunResult], sfview: list[RunResult]) -> dict[str, object]:
    """Collect all figures into one JSON-friendly dict."""
    if not readelf[0].ok:
        raise SystemExit(f"readelf failed:\n{readelf[0].stderr.decode(errors='replace')}")
    reference = readelf[0].stdout
    try:
        fdes, fres = make_big.parse_header_counts(reference.decode(errors="replace"))
    except ValueError:  # no .sframe section: still worth comparing the (empty) dumps
        fdes = fres = None
    figures: dict[str, object] = {
        "binary": str(binary),
        "size_mb": round(binary.stat().st_size / 2**20, 1),
        "fdes": fdes,
        "fres": fres,
        "readelf": vars(Summary.of(readelf)) | {"ok": True, "output_bytes": len(reference)},
    }
    if not all(r.stdout == reference for r in readelf):
        figures["warning"] = "readelf output is not stable between runs"

    failed = [r for r in sfview if not r.ok]
    if failed:
        figures["sfview"] = {
            "ok": False,
            "returncode": failed[0].returncode,
            "stderr": failed[0].stderr.decode(errors="replace"),
        }
        figures["identical"] = None
        return figures

    sfview_sum = Summary.of(sfview)
    readelf_sum = Summary.of(readelf)
    figures["sfview"] = vars(sfview_sum) | {"ok": True, "output_bytes": len(sfview[0].stdout)}
    figures["ratio_best"] = sfview_sum.best_s / readelf_sum.best_s
    figures["ratio_median"] = sfview_sum.median_s / readelf_sum.median_s
    diff = first_difference(reference, sfview[0].stdout)
    figures["identical"] = diff is None
    if diff is not None:
        line, expected, actual = diff
        figures["first_difference"] = {"line": line, "readelf": expected, "sfview": actual}
    if not all(r.stdout == sfview[0].stdout for r in sfview):
        figures["warning"] = "sfview output is not stable between runs"
    return figures


def print_table(figures: dict[str, object]) -> None:
    """Human-readable summary of `figures`."""
    counts = f"{figures['fdes']} FDEs, {figures['fres']} FREs" if figures["fdes"] is not None else "no SFrame header"
    print(f"binary: {figures['binary']} ({figures['size_mb']} MB, {counts})\n")
    print(f"{'':10} {'best':>9} {'median':>9} {'peak RSS':>10} {'runs':>5}")
    for tool in ("readelf", "sfview"):
        row = figures[tool]
        assert isinstance(row, dict)
        if row["ok"]:
            print(
                f"{tool:10} {row['best_s']:8.3f}s {row['median_s']:8.3f}s {row['peak_rss_mb']:7.1f} MB {row['runs']:5}"
            )
        else:
            print(f"{tool:10} FAILED (exit status {row['returncode']})")
    if "ratio_best" in figures:
        print(f"\nsfview/readelf: {figures['ratio_best']:.2f}x (best), {figures['ratio_median']:.2f}x (median)")
    if "warning" in figures:
        print(f"\nWARNING: {figures['warning']}")
    sfview = figures["sfview"]
    assert isinstance(sfview, dict)
    if not sfview["ok"]:
        print(f"\nsfview stderr:\n{sfview['stderr'].rstrip()}")
    elif figures["identical"]:
        print(f"\noutputs: byte-identical ({sfview['output_bytes']} bytes)")
    else:
        diff = figures["first_difference"]
        assert isinstance(diff, dict)
        print("\n" + "=" * 20 + " OUTPUT DIFFERS " + "=" * 20)
        print(f"first difference at line {diff['line']}:")
        print(f"  readelf: {diff['readelf']}")
        print(f"  sfview:  {diff['sfview']}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; exits 0 even when the outputs differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, help="default: build/reuse bench/build/big-N")
    parser.add_argument("--functions", type=int, default=make_big.DEFAULT_FUNCTIONS)
    parser.add_argument("--force", action="store_true", help="rebuild the big binary")
    parser.add_argument("--repeat", type=int, default=5, help="runs per tool (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    binary = big_binary(args.binary, functions=args.functions, force=args.force)
    readelf, sfview = measure(binary, args.repeat)
    figures = report(binary, readelf, sfview)
    if args.json:
        sf = figures["sfview"]
        if isinstance(sf, dict) and not sf["ok"]:
            print(f"sfview failed:\n{sf['stderr']}", file=sys.stderr)
        if figures["identical"] is False:
            print("OUTPUT DIFFERS", file=sys.stderr)
        print(json.dumps(figures, indent=2))
    else:
        print_table(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
