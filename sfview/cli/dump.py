"""`sfview dump`: an SFrame section printed as `readelf --sframe` prints it, or as JSON."""

from __future__ import annotations

import argparse
import sys

from sfview.cli.common import TerminalWidth, address, parse, raise_first, say, say_losses
from sfview.document import Document


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview dump",
        formatter_class=TerminalWidth,
        description="Print an SFrame section as `readelf --sframe` does (or as JSON).",
    )
    parser.add_argument("file", help="an ELF file, or a raw .sframe section")
    parser.add_argument(
        "--base",
        type=address,
        default=None,
        help="load address of a raw section (default 0; for ELF, overrides the section's)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def run(argv: list[str]) -> int:
    args = parse(parser(), argv)
    doc = Document.open(args.file, args.base)
    # Each format's writer is imported when it is asked for: the text dump loads no JSON, the JSON no text.
    if doc.section is None and not args.json:
        from sfview.output import readelf

        sys.stdout.write(readelf.header_only(doc.data))  # what can be read of it: its preamble and header
    section = doc.require_section()
    if args.json:
        from sfview.output import jsondoc

        errors = jsondoc.write(doc, sys.stdout)
    else:
        from sfview.check.run import RowNotes
        from sfview.output import readelf

        notes = RowNotes(section)
        errors = readelf.write(section, sys.stdout, notes)
        if not errors and doc.error is None:  # else the command ends in its error: one line says it
            for note in notes.notes():  # what the dump printed that `check` calls an error (readelf says nothing)
                say(f"{doc.path}: note: {note}")
    say_losses(doc)
    raise_first(doc, errors, "each in the dump")
    return 0
