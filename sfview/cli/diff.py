"""`sfview diff A B`: two files' SFrame sections compared by meaning, not by bytes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from sfview import uncollected
from sfview.cli.common import Parser, TerminalWidth, parse, raise_first, say_losses
from sfview.diff.engine import Diff, Side, comparable, diff
from sfview.document import Document
from sfview.errors import InputError
from sfview.output import differences


def parser() -> argparse.ArgumentParser:
    """`sfview diff`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview diff",
        formatter_class=TerminalWidth,
        description="Compare two SFrame sections by meaning: functions paired by name (by address where "
        "names are missing), their rules compared PC by PC; rows split or merged, or written with another "
        "FRE type, are encoding, not meaning. Exit 0: the same meaning; 1: different meaning; 2: unreadable "
        "input.",
    )
    parser.add_argument("a", metavar="A", help="an ELF file with SFrame, or a raw section")
    parser.add_argument("b", metavar="B", help="the other")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _open(path: str, letter: str) -> Document:
    """One side, opened with its section readable; an error names the side as well as the file."""
    try:
        doc = Document.open(path)
        doc.require_section()
    except InputError as exc:
        raise InputError(f"{letter}: {exc.message}", offset=exc.offset, path=exc.path, where=exc.where) from None
    return doc


def _namer(doc: Document) -> Callable[[int, int], str]:
    """`Document.name_at` for every function of a section: by the relocation on its start field in a `.o`,
    else from the symbols (`SymbolTable.quick_name_at`)."""
    quick = doc.symbols.quick_name_at()
    relocated = doc.relocated_names
    if relocated:
        return lambda address, fde_offset: relocated.get(fde_offset) or quick(address)
    return lambda address, _: quick(address)


def compared(path_a: str, path_b: str, keep_same: bool = False) -> tuple[Document, Document, Diff]:
    """Both files opened and their sections compared (`diff.engine.diff`); an `InputError` naming the side
    when one cannot be read, or when the two name registers differently."""
    doc_a, doc_b = _open(path_a, "A"), _open(path_b, "B")
    sides = (Side(doc.require_section(), _namer(doc), doc.symbols.section_at) for doc in (doc_a, doc_b))
    return doc_a, doc_b, diff(*sides, keep_same=keep_same, rules=why_not(doc_a, doc_b) is None)


def why_not(doc_a: Document, doc_b: Document) -> InputError | None:
    """Why the two sections' rules cannot be compared (their ABIs), as the command's error; None if they can."""
    why = comparable(doc_a.require_section(), doc_b.require_section())
    if why is None:
        return None
    return InputError(f"{doc_a.path} and {doc_b.path}: {why}; functions paired by name only, rules not compared")


def run(argv: list[str]) -> int:
    """Run `sfview diff` with `argv` (the arguments after the command's name); its exit status. The collector
    is paused while the diff is built, not while it is written (JSON's pieces leave cycles behind)."""
    args = parse(parser(), argv)
    with uncollected():
        doc_a, doc_b, result = compared(args.a, args.b)
    a = differences.Labelled(args.a, doc_a.origin, doc_a.require_section())
    b = differences.Labelled(args.b, doc_b.origin, doc_b.require_section())
    if args.json:
        for chunk in differences.json_chunks(result, a, b):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
    else:
        for lines in differences.text(result, a, b):
            sys.stdout.write(lines)
    for doc in (doc_a, doc_b):
        say_losses(doc)
    other_abi = why_not(doc_a, doc_b)
    if other_abi is not None:
        sys.stdout.flush()
        raise other_abi
    raise_first(doc_a, result.unreadable_a, "left out of the diff")
    raise_first(doc_b, result.unreadable_b, "left out of the diff")
    return 0 if result.same_meaning else 1
