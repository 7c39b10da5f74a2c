"""`sfview export [--breakpad]`: the SFrame rules written as a Breakpad symbol file (STACK CFI)."""

from __future__ import annotations

import argparse
import sys

from sfview.cli.common import Parser, TerminalWidth, collector_paused, elf_document, parse, raise_first, say, say_losses
from sfview.document import Document
from sfview.errors import InputError
from sfview.output.breakpad import write_symbol_file


def parser() -> argparse.ArgumentParser:
    """`sfview export`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview export",
        formatter_class=TerminalWidth,
        description="Write the SFrame rules in another format (Breakpad STACK CFI).",
    )
    parser.add_argument("file", help="an ELF file with .sframe")
    parser.add_argument(
        "--breakpad", action="store_true", help="a Breakpad symbol file (the one format, and the default: optional)"
    )
    parser.add_argument("-o", "--output", default="-", help="where to write it (default: standard output)")
    return parser


@collector_paused
def run(argv: list[str]) -> int:
    """Run `sfview export` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    doc = elf_document(args.file)
    if args.output == "-":
        problems, errors = write_symbol_file(doc, sys.stdout.write)  # written as it is made
    else:
        try:
            out = open(args.output, "w", encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 - closed below
        except OSError as exc:
            problems, _ = write_symbol_file(doc, lambda _: None)  # what it would have said, said first
            _say_problems(args.file, problems, doc)
            raise InputError(f"cannot write: {exc.strerror}", path=args.output) from None
        try:
            with out:  # closing flushes the last of it: a full disk may refuse that too
                problems, errors = write_symbol_file(doc, out.write)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=args.output) from None
    _say_problems(args.file, problems, doc)
    raise_first(doc, errors, "left out of the export")
    return 0


def _say_problems(path: str, problems: list[str], doc: Document) -> None:
    """What the export left out, then what around the section could not be read, one line each on stderr."""
    for problem in problems:
        say(f"{path}: {problem}")
    say_losses(doc)
