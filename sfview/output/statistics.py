"""`sfview stats` as text (a column per file, side by side) and as JSON: the view of `stats.tally.Tally`s."""

from __future__ import annotations

import json
from typing import NamedTuple

from sfview.output.safe_text import printable_lines
from sfview.sframe.model.records import START_ADDR_SIZES
from sfview.stats.tally import Tally

UNWIND_SECTIONS = (".eh_frame", ".eh_frame_hdr", ".debug_frame")
"""The DWARF unwind tables set beside SFrame."""


class Counted(NamedTuple):
    """One file's figures: its path, where its SFrame came from, the tally, and its DWARF unwind tables'
    sizes (None for a section the file does not have, or for a raw section)."""

    path: str
    origin: str
    tally: Tally
    unwind: dict[str, int | None]


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def _per(a: int, b: int) -> str:
    return f"{a / b:.1f}" if b else "-"


def _dwarf(counted: Counted) -> int:
    """.eh_frame + .eh_frame_hdr: what a program's unwinder reads at run time (0 for neither)."""
    return sum(counted.unwind.get(name) or 0 for name in UNWIND_SECTIONS[:2])


def text(files: list[Counted]) -> str:
    """A table, a column per file: the parts of each section, then its counts, then DWARF beside it."""
    tallies = [c.tally for c in files]
    rows: list[tuple[str, list[object]]] = [
        ("file", [c.path for c in files]),
        ("SFrame from", [c.origin for c in files]),
        ("version", [t.version for t in tallies]),
        (".sframe bytes", [t.size for t in tallies]),
    ]
    names = list(dict.fromkeys(name for t in tallies for name in t.parts))
    rows += [(f"  {name}", [t.parts.get(name, 0) for t in tallies]) for name in names]
    rows.append(("  (parts added up)", [sum(t.parts.values()) for t in tallies]))
    rows.append(("functions", [t.functions for t in tallies]))
    rows += [
        ("  PCMASK", [t.pcmask for t in tallies]),
        ("  flexible", [t.flexible for t in tallies]),
        ("  signal frames", [t.signal for t in tallies]),
        ("  rows shared with another", [t.shared for t in tallies]),
    ]
    bins = [t.binned_rows() for t in tallies]
    labels = list(dict.fromkeys(label for b in bins for label, _ in b))
    rows += [(f"  of {label} row{'s' * (label != '1')}", [dict(b).get(label, 0) for b in bins]) for label in labels]
    rows.append(("rows", [t.rows for t in tallies]))
    fre_types = sorted({k for t in tallies for k in t.start_rows})
    rows += [(f"  {START_ADDR_SIZES[k]}-byte start", [t.start_rows.get(k, 0) for t in tallies]) for k in fre_types]
    sizes = sorted({k for t in tallies for k in t.offset_rows})
    rows += [(f"  {k}-byte offsets", [t.offset_rows.get(k, 0) for t in tallies]) for k in sizes]
    rows.append(("  redundant (rules of the row before)", [t.redundant for t in tallies]))
    rows.append(("  bytes of redundant rows", [t.redundant_bytes for t in tallies]))
    for name in UNWIND_SECTIONS:
        rows.append((f"{name} bytes", [_absent(c.unwind.get(name)) for c in files]))
    rows.append((".sframe / (.eh_frame + .eh_frame_hdr)", [_ratio(c.tally.size, _dwarf(c)) for c in files]))
    rows.append(("bytes per SFrame function: .sframe", [_per(t.size, t.functions) for t in tallies]))
    rows.append(
        ("  .eh_frame + .eh_frame_hdr", [_per(_dwarf(c), c.tally.functions) if _dwarf(c) else "-" for c in files])
    )
    width = max(len(label) for label, _ in rows)
    columns = [max(len(str(values[i])) for _, values in rows) for i in range(len(files))]
    lines = []
    for label, values in rows:
        cells = "  ".join(f"{value!s:>{columns[i]}}" for i, value in enumerate(values))
        lines.append(f"{label:<{width}}  {cells}".rstrip())
    return printable_lines(lines)


def _absent(size: int | None) -> object:
    return "-" if size is None else size


def json_text(files: list[Counted]) -> str:
    """Every file's figures as JSON, one object a file, in the order given."""

    def one(counted: Counted) -> dict[str, object]:
        t = counted.tally
        return {
            "file": counted.path,
            "origin": counted.origin,
            "version": t.version,
            "bytes": t.size,
            "parts": t.parts,
            "functions": t.functions,
            "pcmask": t.pcmask,
            "flexible": t.flexible,
            "signal": t.signal,
            "shared": t.shared,
            "rows_per_function": {str(k): v for k, v in sorted(t.rows_per_function.items())},
            "rows": t.rows,
            "rows_by_start_size": {str(START_ADDR_SIZES[k]): v for k, v in sorted(t.start_rows.items())},
            "rows_by_offset_size": {str(k): v for k, v in sorted(t.offset_rows.items())},
            "redundant_rows": t.redundant,
            "redundant_bytes": t.redundant_bytes,
            "unwind_sections": counted.unwind,
            "unreadable_functions": len(t.unreadable),
        }

    return json.dumps([one(c) for c in files], indent=2)
