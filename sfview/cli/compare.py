"""`sfview compare`: the SFrame rules beside the same file's DWARF CFI, address range by range."""

from __future__ import annotations

import argparse
import sys

from sfview.cli.common import Parser, TerminalWidth, collector_paused, elf_document, parse, raise_first, say_losses
from sfview.document import Document
from sfview.dwarf.compare import Comparison, compare, compare_outline
from sfview.dwarf.tables import CfiTable, read_cfi
from sfview.errors import InputError
from sfview.output import comparison
from sfview.sframe.bulk.shapes import Shapes


def parser() -> argparse.ArgumentParser:
    """`sfview compare`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview compare",
        formatter_class=TerminalWidth,
        description="Compare the SFrame rules with the same file's DWARF CFI (.eh_frame, .debug_frame). "
        "Exit 0: they agree where both describe the code; 1: they disagree; 2: unreadable input.",
    )
    parser.add_argument("file", help="an ELF file with .sframe and .eh_frame")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


@collector_paused
def run(argv: list[str]) -> int:
    """Run `sfview compare` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    doc = elf_document(args.file)
    section = doc.require_section()
    table, shapes, result = compared(doc, args.file)
    if args.json:
        sys.stdout.write(comparison.json_text(section, result, args.file) + "\n")
    else:
        sys.stdout.write(comparison.text(section, table, result, args.file))
    say_losses(doc)
    raise_first(doc, shapes.errors(), "left out of the comparison")
    return 0 if result.agrees else 1


def compared(doc: Document, path: str) -> tuple[CfiTable, Shapes, Comparison]:
    """The file's DWARF CFI, its section's functions and the comparison of the two (`compare`, and
    `check --dwarf`): in an object file, functions paired by their relocations, whatever their addresses."""
    section = doc.require_section()
    relocatable = doc.relocatable
    try:
        table = read_cfi(doc.image)
    except InputError as exc:
        raise exc.located(path) from None
    shapes = Shapes(section)
    if relocatable:
        functions = list(shapes.with_rows())
        return table, shapes, compare(section, table, doc.function_name, doc.symbols.name_at, doc.placement, functions)
    return table, shapes, compare_outline(shapes, table, doc.function_name, doc.symbols.name_at)
