"""`sfview patch FILE --set PATH=VALUE -o OUT`: a copy of the file with fields of its section changed.

Each `--set` names a field as the app's Structure tab does (`fdes[3].func_size`,
`fdes[0].func_info.fre_type`, `preamble.flags`; the names are `sframe.ksy`'s)
and a value by the number rule, or by name for an enum or a flags byte
(`addr4`, `fde_sorted|frame_pointer`). They apply in order, each to the
section as the ones before it left it, through the edit model the app
uses (`sfview.edit`). The original is never written unless `-o` names it and
`--overwrite` says so.
"""

from __future__ import annotations

import argparse

from sfview.cli.common import Parser, TerminalWidth, parse
from sfview.document import Document
from sfview.edit.patches import Edits, encode, same_file, value_of, write_copy
from sfview.errors import InputError
from sfview.inputs.numbers import quoted

SHOWN_ARGUMENT = 120
"""The longest `--set` argument a refusal repeats whole."""


def _assignment(text: str) -> tuple[str, str]:
    path, equals, value = text.partition("=")
    if not equals or not path.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"not PATH=VALUE: {text!r} (write fdes[3].func_size=0x40)")
    return path.strip(), value.strip()


def parser() -> argparse.ArgumentParser:
    """`sfview patch`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview patch",
        formatter_class=TerminalWidth,
        description="Write a copy of FILE with fields of its SFrame section changed (the section keeps its size).",
    )
    parser.add_argument("file", help="an ELF file, or a raw .sframe section")
    parser.add_argument(
        "--set",
        dest="sets",
        type=_assignment,
        action="append",
        required=True,
        metavar="PATH=VALUE",
        help="a field as the Structure tab names it, and its new value: fdes[3].func_size=0x40, "
        "fdes[0].func_info.fre_type=addr4, preamble.flags=fde_sorted|frame_pointer (repeatable)",
    )
    parser.add_argument("-o", "--output", required=True, help="where to write the patched copy")
    parser.add_argument("--overwrite", action="store_true", help="allow -o to name FILE itself")
    return parser


def _shown(argument: str) -> str:
    """An argument of `--set` as a refusal names it: whole, or cut to its start and length when long (a
    refusal is one line, not the 5,000 digits typed)."""
    return argument if len(argument) <= SHOWN_ARGUMENT else quoted(argument)


def run(argv: list[str]) -> int:
    """Run `sfview patch` with `argv` (the arguments after the command's name); its exit status."""
    from sfview.app.fields import FieldTree, slot_of  # the field tree names the fields; no Textual in it

    args = parse(parser(), argv)
    if same_file(args.file, args.output) and not args.overwrite:
        raise InputError("-o names the file itself: add --overwrite to write over it", path=args.output)
    doc = Document.open(args.file)
    section = doc.require_section()
    edits = Edits(doc.data)
    for path, text in args.sets:
        slot = slot_of(node, section) if (node := FieldTree(section).find(path)) is not None else None
        if slot is None:
            raise InputError(f"--set {_shown(path)}: no such field (the Structure tab's names: fdes[3].func_size)")
        if isinstance(slot, str):
            raise InputError(f"--set {_shown(path)}: {slot}")
        value = value_of(slot, text)
        if isinstance(value, str):
            raise InputError(f"--set {_shown(f'{path}={text}')}: {value}")
        patch = encode(slot, value, edits.data, section.little_endian)
        edits.apply(patch)
        print(f"{patch.what}: {patch.old.hex(' ')} -> {patch.new.hex(' ')} at {doc.where(patch.offset)}")
        doc = doc.patched(edits.data)
        section = doc.require_section()
    write_copy(args.file, doc.file_offset, edits.original, edits.data, args.output)
    return 0
