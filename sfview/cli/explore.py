"""`sfview FILE`: the explorer opened on a file, or the unwinding debugger on a core, a running process
(a snapshot of it) or typed registers."""

from __future__ import annotations

import argparse
import textwrap
from importlib.metadata import PackageNotFoundError, version

from sfview.cli import COMMANDS
from sfview.cli.common import Parser, TerminalWidth, add_state_arguments, address, parse
from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.numbers import RULE


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
    parser.add_argument("--version", action="version", version=f"sfview {_version()}")
    parser.add_argument(
        "file", nargs="?", help="an ELF file, or a raw .sframe section (with --pid: the process's program by default)"
    )
    parser.add_argument("--base", type=address, default=None, help="load address of a raw section (default 0)")
    parser.add_argument("--diff", metavar="B", help="compare with another file by meaning (as `sfview diff`)")
    add_state_arguments(parser, required=False)  # with one: the unwinding debugger opens on it
    return parser


def _version() -> str:
    """The installed package's version (pyproject.toml's)."""
    try:
        return version("sfview")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def run(argv: list[str]) -> int:
    """Run the explorer (or the debugger) with `argv`, the whole command line; its exit status."""
    args = parse(parser(), argv)
    first, threads, program = None, None, args.file
    if args.file is None and (args.pid is None or args.diff is not None):
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
    if args.pid is not None:
        from sfview.cli import state  # the unwinder loads only when a state is given to start from

        program, first, threads = state.process_snapshot(args.file, args)
    doc = Document.open(program, args.base)
    if args.core is not None or args.regs is not None:
        from sfview.cli import state  # the unwinder loads only when a state is given to start from

        first, threads = state.for_debugger(program, args)
    from sfview.app.app import SfviewApp  # the UI loads only when it is wanted

    SfviewApp(doc, first, threads).run()
    return 0
