"""`sfview dump`: an SFrame section printed as `readelf --sframe` prints it, or as JSON."""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO, TextIO

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
    parser.add_argument(
        "--max-output",
        type=_bytes,
        default=None,
        metavar="BYTES",
        help=f"the most bytes written (default {OUTPUT_PER_BYTE} times the section's size, at least"
        f" {OUTPUT_FLOOR >> 20} MiB): functions that share rows repeat them, so that a small section can"
        " describe gigabytes",
    )
    return parser


OUTPUT_PER_BYTE = 1000
"""`--max-output`'s default, per byte of section: real sections print 10 to 60 bytes of JSON a byte."""
OUTPUT_FLOOR = 64 << 20


def _bytes(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 20):
        from sfview.inputs.numbers import quoted  # only a refusal needs it

        raise argparse.ArgumentTypeError(f"not a number of bytes: {quoted(text)} (write 1000000000)")
    return int(text)


class _Capped:
    """Standard output, refused past `limit` bytes: the dump streams, and stops with an `InputError` once it
    has written more than its bound (what was written stays written)."""

    def __init__(self, inner: TextIO, limit: int, why: str, path: str) -> None:
        self.inner, self.limit, self.why, self.path = inner, limit, why, path
        self.written = 0
        self.encoding = getattr(inner, "encoding", None)
        self.errors = getattr(inner, "errors", None)

    def count(self, size: int) -> None:
        self.written += size
        if self.written > self.limit:
            raise InputError(
                f"the dump passes {self.limit:,} bytes ({self.why}): stopped (give --max-output)", path=self.path
            )

    def write(self, text: str) -> int:
        self.count(len(text))
        return self.inner.write(text)

    def flush(self) -> None:
        self.inner.flush()

    @property
    def buffer(self) -> _CappedBytes:
        return _CappedBytes(self, self.inner.buffer)  # AttributeError for a stream of text only, as the inner's


class _CappedBytes:
    """`_Capped`'s buffer: bytes counted against the same bound."""

    def __init__(self, outer: _Capped, inner: BinaryIO) -> None:
        self.outer, self.inner = outer, inner

    def write(self, data: bytes) -> int:
        self.outer.count(len(data))
        return self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()


def run(argv: list[str]) -> int:
    """Run `sfview dump` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    doc = Document.open(args.file, args.base)
    limit = args.max_output
    why = "--max-output"
    if limit is None:
        limit = max(OUTPUT_PER_BYTE * len(doc.data), OUTPUT_FLOOR)
        why = f"{OUTPUT_PER_BYTE} times the section's {len(doc.data):,} bytes"
    out, sys.stdout = sys.stdout, _Capped(sys.stdout, limit, why, doc.path)
    try:
        return _dump(doc, args)
    finally:
        sys.stdout = out


def _dump(doc: Document, args: argparse.Namespace) -> int:
    """The dump itself, text or JSON, to standard output (bounded by `run`)."""
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
