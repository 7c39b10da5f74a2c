"""`sfview FILE`: the explorer opened on a file, or the unwinding debugger on a core, a running process
(a snapshot of it) or typed registers."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import TextIO

from sfview.cli import COMMANDS
from sfview.cli.common import Parser, TerminalWidth, add_state_arguments, address, parse
from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.numbers import RULE
from sfview.output.safe_text import printable


class _RawDescription(argparse.RawDescriptionHelpFormatter, TerminalWidth):
    """The explorer's formatter: its epilog (the commands' list) kept as written."""


def parser() -> argparse.ArgumentParser:
    """`sfview FILE`'s arguments, its help and its usage."""
    width = max(map(len, COMMANDS))
    parser = Parser(
        prog="sfview",
        description="Explore the SFrame stack-trace section of an ELF file (`sfview FILE`), or run a command.",
        epilog="commands (`sfview COMMAND --help` for each):\n"
        + "\n".join(f"  {name:<{width}}  {line}" for name, line in COMMANDS.items())
        + "\n\n"
        + textwrap.fill(f"numbers (--regs, --mem, --bias, --base, and in the app): {RULE}", 79),
        formatter_class=_RawDescription,
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="show the program's version number and exit")
    parser.add_argument(
        "file", nargs="?", help="an ELF file, or a raw .sframe section (with --pid: the process's program by default)"
    )
    parser.add_argument("--base", type=address, default=None, help="load address of a raw section (default 0)")
    parser.add_argument("--diff", metavar="B", help="compare with another file by meaning (as `sfview diff`)")
    add_state_arguments(parser, required=False)  # with one: the unwinding debugger opens on it
    return parser


class _Version(argparse.Action):
    """`--version`: the installed package's version (pyproject.toml's), looked up when asked for (the package
    metadata's readers are most of what parsing the command line imports, and the explorer never needs them)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("sfview")
        except PackageNotFoundError:  # run from a checkout that was never installed
            found = "(not installed)"
        print(f"sfview {found}")  # on stdout, as argparse's own `version` action writes it
        parser.exit()


def reading_note(core: str, out: TextIO) -> None:
    """`reading CORE (26 MB) and the libraries it maps…` on a terminal, before the debugger's screen: a big core
    takes seconds to read, which a blank terminal left unexplained. Nothing where `out` is not a terminal (a
    pipe, a file: a one-line error stays the only line)."""
    if not out.isatty():
        return
    try:
        size = f" ({os.path.getsize(core) / 1e6:.0f} MB)"
    except OSError:
        size = ""  # read next, and said then
    out.write(f"sfview: reading {printable(core)}{size} and the libraries it maps…\n")
    out.flush()


def run(argv: list[str]) -> int:
    """Run the explorer (or the debugger) with `argv`, the whole command line; its exit status."""
    args = parse(parser(), argv)
    first, threads, program = None, None, args.file
    live = args.pid is not None or args.gdbstub is not None
    if args.break_at is not None and args.gdbstub is None:
        raise InputError("--break needs --gdbstub: the other states are read where they are")
    if args.file is None and (not live or args.diff is not None):
        raise InputError("needs a file (an ELF file, or a raw .sframe section); only with --pid is it found by itself")
    if args.diff is not None:
        from sfview.app.screens.diff import DiffApp  # the UI loads only when it is wanted
        from sfview.cli.diff import compared, why_not

        doc_a, doc_b, result = compared(args.file, args.diff, keep_same=True)
        other_abi = why_not(doc_a, doc_b)
        if other_abi is not None:
            raise other_abi
        DiffApp(doc_a, doc_b, result).run()
        return 0
    if live:
        from sfview.cli import state  # the unwinder loads only when a state is given to start from

        program, first, threads = state.process_snapshot(args.file, args)
    doc = Document.open(program, args.base)
    if args.core is not None or args.regs is not None:
        from sfview.cli import state  # the unwinder loads only when a state is given to start from

        if args.core is not None:
            reading_note(args.core, sys.stderr)
        first, threads = state.for_debugger(program, args)
    from sfview.app.app import SfviewApp  # the UI loads only when it is wanted

    SfviewApp(doc, first, threads, inline=args.inline).run()
    return 0
