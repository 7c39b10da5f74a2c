"""`sfview perf`'s report: SFrame's coverage of a profile as text or JSON, and stacks in the folded format.

The folded format is one line a distinct stack, its functions from the
outermost to the innermost joined by `;`, then a space and the samples that
had it: what `flamegraph.pl`, inferno and speedscope read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from sfview import quantity
from sfview.output.safe_text import printable_lines
from sfview.profiling.coverage import Coverage
from sfview.profiling.walks import Mode

DEEPEST = 24
"""Depths past this are counted together in the table by depth."""


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _depths(counts: Coverage) -> list[tuple[str, int, int]]:
    """(depth, samples, SFrame equal), one row a depth, the deepest together."""
    rows: dict[str, list[int]] = {}
    for depth in sorted(counts.by_depth):
        key = str(depth) if depth <= DEEPEST else f">{DEEPEST}"
        row = rows.setdefault(key, [0, 0])
        row[0] += counts.by_depth[depth]
        row[1] += counts.equal_by_depth[depth]
    return [(key, samples, equal) for key, (samples, equal) in rows.items()]


def _copy_short(counts: Coverage) -> list[str]:
    """The line on stacks the stack copy cut, if any were."""
    seen = counts.copy_short
    if seen is None:
        return []
    return [
        f"{seen.count} samples (the first #{seen.sample}): the DWARF stack ends where the stack copy of"
        f" {counts.copy_asked} bytes does; record with --call-graph dwarf,65528 for deeper stacks"
    ]


def _reader(counts: Coverage) -> str:
    """Whose rules the SFrame walks followed."""
    if counts.reader is None:
        return "SFrame walked as the format reads every section (--no-kernel-rules)"
    name, title = counts.reader
    return f"SFrame walked as the kernel would: {name}, {title}"


def text(counts: Coverage, path: str, notes: Iterable[str] = ()) -> str:
    walked = counts.samples - counts.without_registers
    lines = [
        f"{path}: {quantity(counts.samples, 'sample')}"
        + (f", {counts.without_registers} without user registers (not unwound)" if counts.without_registers else ""),
        _reader(counts),
        "",
        f"SFrame stack = DWARF stack:        {counts.equal[Mode.SFRAME]:>8} of {walked}  "
        f"{_share(counts.equal[Mode.SFRAME], walked)}",
        f"  as far as files with SFrame go:  {counts.equal_within:>8} of {walked}  "
        f"{_share(counts.equal_within, walked)}",
        f"frame-pointer stack = DWARF stack: {counts.equal[Mode.FP]:>8} of {walked}  "
        f"{_share(counts.equal[Mode.FP], walked)}",
        *_copy_short(counts),
        "",
        "By depth of the DWARF stack:",
        f"  {'depth':>6} {'samples':>8} {'SFrame =':>8} {'coverage':>9}",
    ]
    lines += [f"  {d:>6} {s:>8} {e:>8} {_share(e, s):>9}" for d, s, e in _depths(counts)]
    lines += ["", "Where SFrame parts from DWARF, by function (the frame whose caller SFrame misses):"]
    places = counts.by_function()
    lines += [f"  {'samples':>8}  {'sample':>7}  function (file): reason"] if places else ["  nowhere"]
    for place, seen in places:
        where = f"{place.function} ({os.path.basename(place.file)})"
        lines.append(f"  {seen.count:>8}  #{seen.sample:<6}  {where}: {place.reason.value}")
    lines += ["", "By file:"]
    files = counts.by_file()
    lines += [f"  {'samples':>8}  {'sample':>7}  file: reason"] if files else ["  nowhere"]
    for (file, reason), seen in files:
        lines.append(f"  {seen.count:>8}  #{seen.sample:<6}  {file}: {reason.value}")
    lines += ["", "Files the DWARF stacks go through:", f"  {'SFrame':<6} {'samples':>8} {'coverage':>9}  file"]
    for lib in counts.libraries_seen():
        has = "yes" if lib.has_sframe else "no"
        kernel = counts.kernel.get(lib.path)
        lines.append(f"  {has:<6} {lib.samples:>8} {_share(lib.equal, lib.samples):>9}  {lib.path}")
        if kernel:
            lines.append(f"  {'':<6} {'':>8} {'':>9}    the kernel's reader: {kernel}")
    lines += ["", "Open a sample: sfview perf FILE --sample N (its three walks, each frame with how it was found)"]
    lines += [f"note: {note}" for note in notes]
    return printable_lines(lines)


def json_text(counts: Coverage, path: str, notes: Iterable[str] = ()) -> str:
    walked = counts.samples - counts.without_registers
    doc = {
        "file": path,
        "samples": counts.samples,
        "without_registers": counts.without_registers,
        "kernel_reader": counts.reader[0] if counts.reader else None,
        "equal_to_dwarf": {
            "sframe": counts.equal[Mode.SFRAME],
            "sframe_as_far_as_files_with_sframe_go": counts.equal_within,
            "fp": counts.equal[Mode.FP],
            "of": walked,
        },
        "stack_copy_short": {"samples": counts.copy_short.count, "sample": counts.copy_short.sample}
        if counts.copy_short
        else None,
        "by_depth": [
            {
                "depth": int(d.lstrip(">")) + d.startswith(">"),
                "or_deeper": d.startswith(">"),
                "samples": s,
                "sframe_equal": e,
            }
            for d, s, e in _depths(counts)
        ],
        "by_function": [
            {
                "function": p.function,
                "file": p.file,
                "reason": p.reason.name.lower(),
                "why": p.reason.value,
                "samples": seen.count,
                "sample": seen.sample,
            }
            for p, seen in counts.by_function()
        ],
        "by_file": [
            {"file": file, "reason": reason.name.lower(), "samples": seen.count, "sample": seen.sample}
            for (file, reason), seen in counts.by_file()
        ],
        "files": [
            {
                "file": lib.path,
                "has_sframe": lib.has_sframe,
                "kernel": counts.kernel.get(lib.path) or None,
                "samples": lib.samples,
                "sframe_equal": lib.equal,
            }
            for lib in counts.libraries_seen()
        ],
        "notes": list(notes),
    }
    return json.dumps(doc, indent=2) + "\n"


def folded(counts: Coverage, mode: Mode) -> str:
    """The mode's stacks, one line each (`main;outer;leaf 12`), the most sampled first."""
    stacks = sorted(counts.folded[mode].items(), key=lambda item: (-item[1], item[0]))
    return printable_lines([f"{stack} {count}" for stack, count in stacks])
