"""`sfview stats FILE…`: where each section's bytes go, files side by side, beside their DWARF unwind tables."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable

from sfview.cli.common import Parser, TerminalWidth, collector_paused, parse, say, say_losses
from sfview.document import Document
from sfview.errors import InputError
from sfview.output import statistics
from sfview.stats.tally import tally


def parser() -> argparse.ArgumentParser:
    """`sfview stats`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview stats",
        formatter_class=TerminalWidth,
        description="Where each SFrame section's bytes go (header, FDEs, rows by FRE type and offset size, "
        "what no row takes), its functions and rows counted, beside the file's .eh_frame, .eh_frame_hdr and "
        ".debug_frame; several files side by side. Exit 0; 2 when a file or some of its functions cannot be read "
        "(the others still shown).",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="ELF files with SFrame, or raw sections")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _counted(path: str) -> tuple[statistics.Counted, Document]:
    doc = Document.open(path)
    section = doc.require_section()
    unwind: dict[str, int | None] = {}
    for name in statistics.UNWIND_SECTIONS:
        header = doc.image.section(name) if doc.image is not None else None
        unwind[name] = header.size if header is not None else None
    return statistics.Counted(path, doc.origin, tally(section), unwind), doc


@collector_paused
def run(argv: list[str]) -> int:
    """Run `sfview stats` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    files: list[statistics.Counted] = []
    problems: list[Iterable[str]] = []
    """Each file's problems, said after the counts: the functions that could not be counted worded only
    then, one at a time (a section may have one per FDE)."""
    for path in args.files:
        try:
            counted, doc = _counted(path)
        except InputError as exc:
            problems.append([str(exc)])
            continue
        files.append(counted)
        say_losses(doc)
        problems.append([str(doc.error)] if doc.error is not None else [])
        problems.append(map(str, map(doc.locate, counted.tally.unreadable)))
    if files:
        sys.stdout.write(statistics.json_text(files) + "\n" if args.json else statistics.text(files))
    sys.stdout.flush()
    said = False
    for problem in itertools.chain.from_iterable(problems):
        say(problem)
        said = True
    return 2 if said else 0
