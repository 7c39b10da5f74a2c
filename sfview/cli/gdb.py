"""`sfview gdb`: the line that loads sfview's `sframe` commands into gdb."""

from __future__ import annotations

import argparse
import sysconfig
from pathlib import Path

from sfview.cli.common import Parser, TerminalWidth, parse

MODULE = "sfview.gdb.commands"
"""What gdb imports: it registers the `sframe` commands."""


def parser() -> argparse.ArgumentParser:
    """`sfview gdb`'s arguments (none), its help and its usage."""
    return Parser(
        prog="sfview gdb",
        formatter_class=TerminalWidth,
        description="Print the line that loads sfview's `sframe` commands (info, bt, check, unwinder) into gdb: "
        "type it at gdb's prompt or put it in ~/.gdbinit. gdb runs its own Python; the line puts this sfview "
        "and the packages of the Python that runs it (a venv's too) on that Python's path.",
    )


def load_line() -> str:
    """`python import sys; sys.path[:0] = [...]; import sfview.gdb.commands`: this package's folder, then
    the site-packages of the Python running sfview, first on gdb's Python's path (before its own
    dist-packages, whose older releases of sfview's dependencies would otherwise be found first)."""
    paths = [str(Path(__file__).resolve().parents[2])]
    for key in ("purelib", "platlib"):
        found = sysconfig.get_paths()[key]
        if found not in paths:
            paths.append(found)
    return f"python import sys; sys.path[:0] = {paths!r}; import {MODULE}"


def run(argv: list[str]) -> int:
    """Run `sfview gdb`: print the line."""
    parse(parser(), argv)
    print(load_line())
    return 0
