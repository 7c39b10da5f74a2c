"""`sfview check`: what is wrong in SFrame sections, one line a problem, and what consumers make of them."""

from __future__ import annotations

import argparse
import sys

from sfview.check.catalogue import Severity
from sfview.check.run import check_document
from sfview.cli.common import EXIT_BAD_INPUT, Parser, TerminalWidth, address, parse, say, say_losses
from sfview.consumers.kernel import Arch
from sfview.consumers.verdicts import judge_document, profiles
from sfview.document import Document
from sfview.errors import InputError
from sfview.output import diagnostics


def parser() -> argparse.ArgumentParser:
    """`sfview check`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview check",
        formatter_class=TerminalWidth,
        description="Find what is wrong in SFrame sections. Exit 0: clean (infos aside); 1: problems found, or a "
        "profile's consumer refuses the section, crashes or fails a lookup; 2: a file cannot be read at all.",
    )
    parser.add_argument("files", nargs="+", help="ELF files or raw .sframe sections")
    parser.add_argument("--json", action="store_true", help="print JSON")
    consumers = {name: profile.title for name, profile in profiles().items()}
    parser.add_argument(
        "--profile",
        action="append",
        choices=sorted(consumers),
        help="also say what a consumer does with the section (repeatable): "
        + "; ".join(f"{k}: {v}" for k, v in consumers.items()),
    )
    parser.add_argument("--base", type=address, default=None, help="load address of raw sections (default 0)")
    parser.add_argument(
        "--arch",
        choices=[a.value for a in Arch],
        help="the machine whose kernel reads the section (its byte order and SP/FP registers; default: the one "
        "the section's ABI byte names, said as an assumption)",
    )
    return parser


def run(argv: list[str]) -> int:
    """Run `sfview check` with `argv`: 0 when every file is clean, 1 when a problem is found, 2 when a file
    cannot be read at all."""
    args = parse(parser(), argv)
    status, reports = 0, []
    for path in args.files:
        try:
            doc = Document.open(path, args.base, raw=True)
        except InputError as exc:
            say(str(exc))
            status = EXIT_BAD_INPUT
            if args.json:
                reports.append(diagnostics.unreadable(path, exc))
            continue
        found = list(check_document(doc))
        say_losses(doc)
        verdicts = [judge_document(doc, name, args.arch) for name in args.profile or []]
        refused = any(not v.accepted or v.lookups for v in verdicts)
        if (refused or any(d.severity is not Severity.INFO for d in found)) and status == 0:
            status = 1
        if args.json:
            reports.append(diagnostics.as_json(doc, found, verdicts))
        else:
            for line in diagnostics.lines(doc, found, verdicts):
                print(line)
    if args.json:
        sys.stdout.write(diagnostics.json_text(reports) + "\n")
    return status
