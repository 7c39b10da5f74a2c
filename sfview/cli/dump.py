"""`sfview dump`: an SFrame section printed as `readelf --sframe` prints it, or as JSON."""

from __future__ import annotations

import argparse
import sys

from sfview.cli.common import Parser, TerminalWidth, address, parse, raise_first, say, say_losses
from sfview.document import Document
from sfview.errors import InputError


def parser() -> argparse.ArgumentParser:
    """`sfview dump`'s arguments, its help and its usage."""
    parser = Parser(
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
    """Run `sfview dump` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    doc = Document.open(args.file, args.base)
    if args.json:
        from sfview.output import jsondoc  # each format's writer is imported when it is asked for

        doc.require_section()
        errors = jsondoc.write(doc, sys.stdout)
    else:
        errors = _write_text(doc)
    say_losses(doc)
    raise_first(doc, errors, "each in the dump")
    return 0


def _write_text(doc: Document) -> list[InputError]:
    """The section as readelf prints it, then what it printed that `check` calls an error (readelf says
    nothing), one note a line on stderr; the problems met in the section."""
    from sfview.check.run import RowNotes
    from sfview.output import readelf

    if doc.section is None:
        sys.stdout.write(readelf.header_only(doc.data))  # what can be read of it: its preamble and header
    section = doc.require_section()
    notes = RowNotes(section)
    errors = readelf.write(section, sys.stdout, notes)
    if not errors and doc.error is None:  # else the command ends in its error: one line says it
        for note in notes.notes():
            say(f"{doc.path}: note: {note}")
    return errors
