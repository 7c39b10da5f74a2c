"""`sfview check`: what is wrong in SFrame sections, one line a problem, and what consumers make of them."""

from __future__ import annotations

import argparse
import sys
from typing import NamedTuple

from sfview.check.run import check_document
from sfview.cli.common import EXIT_BAD_INPUT, Parser, TerminalWidth, address, parse, say, say_losses
from sfview.consumers.kernel import Arch
from sfview.consumers.verdicts import judge_document, profiles
from sfview.document import Document
from sfview.errors import InputError
from sfview.output import diagnostics
from sfview.output.safe_text import printable


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
    parser.add_argument(
        "--dwarf",
        action="store_true",
        help="also compare the SFrame rules with the file's DWARF CFI, as `sfview compare` does: each"
        " disagreement is a problem (a CI gate for assemblers and linkers)",
    )
    parser.add_argument("--base", type=address, default=None, help="load address of raw sections (default 0)")
    parser.add_argument(
        "--max-problems",
        type=_count,
        default=diagnostics.DEFAULT_MAX_PROBLEMS,
        metavar="N",
        help=f"the most problems of one kind said for a file (default {diagnostics.DEFAULT_MAX_PROBLEMS}); the"
        " rest are counted, in one line a kind (in JSON, `more`); 0: every one",
    )
    parser.add_argument(
        "--arch",
        choices=[a.value for a in Arch],
        help="the machine whose kernel reads the section (its byte order and SP/FP registers; default: the one "
        "the section's ABI byte names, said as an assumption)",
    )
    return parser


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        from sfview.inputs.numbers import quoted  # only a refusal needs it

        raise argparse.ArgumentTypeError(f"not a count: {quoted(text)} (write 1000, or 0 for every problem)")
    return int(text)


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
        tally = diagnostics.Tally(args.max_problems)  # problems said as found, past the bound counted
        found = []
        for diag in check_document(doc):
            if tally.keep(diag):
                if args.json:
                    found.append(diag)
                else:
                    print(diagnostics.line(doc, diag))
        say_losses(doc)
        verdicts = [judge_document(doc, name, args.arch) for name in args.profile or []]
        refused = any(not v.accepted or v.lookups for v in verdicts)
        try:
            disagree = _against_dwarf(doc, path) if args.dwarf else None
        except InputError as exc:
            say(str(exc))
            status, disagree = EXIT_BAD_INPUT, None
        disagreeing = disagree is not None and not disagree.agrees
        if (refused or disagreeing or tally.serious) and status == 0:
            status = 1
        if args.json:
            report = diagnostics.as_json(doc, found, verdicts)
            if tally.more():
                report["more"] = tally.more()
            if disagree is not None:
                report["dwarf"] = disagree.json
            reports.append(report)
        else:
            for line in (*tally.lines(doc), *diagnostics.lines(doc, [], verdicts)):
                print(line)
            for line in disagree.lines if disagree is not None else []:
                print(printable(f"{path}: error sframe-dwarf-disagreement: {line}"))
    if args.json:
        sys.stdout.write(diagnostics.json_text(reports) + "\n")
    return status


class Disagreements(NamedTuple):
    """What `check --dwarf` says of the section against the file's DWARF CFI."""

    agrees: bool
    lines: list[str]
    """Each disagreement as `compare` words it."""
    json: dict[str, object]
    """`compare --json`'s document."""


def _against_dwarf(doc: Document, path: str) -> Disagreements:
    """The section against the file's DWARF CFI, by `compare`'s engine: its disagreements are problems.
    Imported here: `check` without `--dwarf` starts without the DWARF reader."""
    from sfview.cli.compare import compared
    from sfview.output import comparison

    if doc.elf is None:
        raise InputError("a raw section: --dwarf needs the ELF file around it (its .eh_frame)", path=path)
    section, result = doc.require_section(), compared(doc, path)[2]
    lines = [comparison.difference_text(section, pair, diff) for pair, diff in result.differences(explained=False)]
    return Disagreements(result.agrees, lines, comparison.json_document(section, result, path))
