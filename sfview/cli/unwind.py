"""`sfview unwind`: a backtrace from a core or typed registers, as gdb prints one."""

from __future__ import annotations

import argparse
import sys

from sfview.cli.common import Parser, TerminalWidth, add_state_arguments, parse
from sfview.cli.state import of_program, started
from sfview.errors import InputError
from sfview.inputs.core import read_core
from sfview.output import backtrace
from sfview.unwind import session
from sfview.unwind.engine import RuleSource, Walk

RULE_SOURCES = {
    "sframe": RuleSource.SFRAME,
    "dwarf": RuleSource.DWARF,
    "both": RuleSource.SFRAME_DWARF,
    None: RuleSource.SFRAME_DWARF,
}
"""`--cfi`'s choices and the rules the walk follows for each (`both`: SFrame, DWARF CFI where it has none,
with the two walks of each alone compared; none given: the same walk alone)."""


def parser() -> argparse.ArgumentParser:
    """`sfview unwind`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview unwind",
        formatter_class=TerminalWidth,
        description="Walk a stack with the program's SFrame data, from a core file or from registers you give.",
    )
    parser.add_argument("program", help="the program (an ELF file with .sframe)")
    add_state_arguments(parser, required=True)
    parser.add_argument("--explain", action="store_true", help="show each frame's FDE, FRE, rules and arithmetic")
    parser.add_argument(
        "--cfi",
        choices=[choice for choice in RULE_SOURCES if choice is not None],
        help="unwind with SFrame alone (by default, code without SFrame data is unwound with its DWARF CFI),"
        " with DWARF CFI (.eh_frame) alone, or both ways and show where they part",
    )
    parser.add_argument(
        "--limit", type=_positive, metavar="N", help="stop after N frames (by default the walk goes on until it stops)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("needs at least 1 frame")
    return value


def run(argv: list[str]) -> int:
    """Run `sfview unwind` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    if args.thread == "all":
        return _unwind_all_threads(args)
    first = started(args.program, args)
    unwinder = first.unwinder.following(RULE_SOURCES[args.cfi])
    found = []
    if args.cfi == "both":
        # Two walks that share nothing but the heuristics each would use alone: SFrame with its own
        # fallbacks (as the kernel's unwinder), DWARF CFI with its own.
        sframe, dwarf = (unwinder.following(source).frames(first.pc, first.registers, args.limit)
                         for source in (RuleSource.SFRAME, RuleSource.DWARF))  # fmt: skip
        found.append(backtrace.agreement(sframe, dwarf, unwinder.machine))
    _write_backtrace(unwinder.frames(first.pc, first.registers, args.limit), args, found, first.notes)
    return 0


def _write_backtrace(walk: Walk, args: argparse.Namespace, found: list[str], notes: list[str]) -> None:
    """A walk written to stdout frame by frame, as `--json` or `--explain` ask; what `--cfi both` found
    after it; the notes on the core and its files on stderr once the backtrace is out (JSON: in the document)."""
    if args.json:
        backtrace.write_json(sys.stdout, walk, found + notes)
    else:
        backtrace.write_text(sys.stdout, walk, explain=args.explain, notes=found)
        backtrace.write_notes(sys.stderr, notes)


def _unwind_all_threads(args: argparse.Namespace) -> int:
    """Every thread of the core, as gdb's `thread apply all bt` prints them: numbered in the core's order,
    the last first, each under its `Thread N (Thread 0x… (LWP tid)):` line; with `--json`, one document."""
    if not args.core:
        raise InputError("--thread all needs --core: typed registers are one thread's")
    core = read_core(args.core)
    try:
        first = session.from_core(args.program, core, None, args.lib_dir, args.sysroot)
    except InputError as exc:
        raise of_program(exc, args.program) from None
    source = RULE_SOURCES[args.cfi]
    threads = list(reversed(list(enumerate(core.threads, 1))))

    def walk(tid: int) -> Walk:
        begun = session.for_thread(first, core, tid)
        return begun.unwinder.following(source).frames(begun.pc, begun.registers)

    if args.json:
        backtrace.write_json_threads(sys.stdout, ((n, t.tid, walk(t.tid)) for n, t in threads), first.notes)
        return 0
    for number, thread in threads:
        sys.stdout.write(f"\n{backtrace.thread_title(number, thread.tid, thread.registers)}\n")
        backtrace.write_text(sys.stdout, walk(thread.tid), explain=args.explain)
    backtrace.write_notes(sys.stderr, first.notes)  # the core's and its files': said once, at the end
    return 0
