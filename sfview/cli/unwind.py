"""`sfview unwind`: a backtrace from a core or typed registers, as gdb prints one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from sfview.cli.common import Parser, TerminalWidth, add_state_arguments, parse
from sfview.cli.state import of_program, started, stopped
from sfview.errors import InputError
from sfview.inputs.core import Core, Thread, read_core
from sfview.inputs.numbers import quoted
from sfview.output import backtrace
from sfview.output.backtrace import Trace
from sfview.unwind import session
from sfview.unwind.call_sites import ProcessCallSites
from sfview.unwind.engine import Backtrace, Crossings, Lookups, RuleSource, Walk

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
        description="Walk a stack with the program's SFrame data, from a core file, a running process (--pid), a"
        " qemu-user guest (--gdbstub) or registers you give.",
    )
    parser.add_argument(
        "program",
        nargs="?",
        help="the program (an ELF file with .sframe); with --pid, the process's by default (with --gdbstub, the"
        " one the stub names, where it does)",
    )
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
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("needs at least 1 frame")
    return value


def run(argv: list[str]) -> int:
    """Run `sfview unwind` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    if args.pid is not None or args.gdbstub is not None:
        return _unwind_process(args)
    if args.break_at is not None:
        raise InputError("--break needs --gdbstub: a core or typed registers are a stop already")
    if args.program is None:
        raise InputError("needs the program (an ELF file with .sframe); only with --pid is it found by itself")
    if args.thread == "all":
        if not args.core:
            raise InputError("--thread all needs --core, --pid or --gdbstub: typed registers are one thread's")
        core = read_core(args.core)
        first = _from_core(args, args.program, core, None)
        _write_threads(args, _thread_walks(first, core, args), first)
        return 0
    first = started(args.program, args)
    walk, found = _walk(first, args)
    _write_backtrace(walk, args, found, first)
    return 0


def _from_core(args: argparse.Namespace, program: str, core: Core, thread: int | None) -> session.Session:
    try:
        return session.from_core(program, core, thread, args.lib_dir, args.sysroot)
    except InputError as exc:
        raise of_program(exc, program) from None


def _walk(first: session.Session, args: argparse.Namespace) -> tuple[Walk, list[str]]:
    """The walk `--cfi` and `--limit` ask for, and what `--cfi both` found: where the SFrame and the DWARF
    walks part (printed after the backtrace, on stdout: it is what was asked)."""
    unwinder = first.unwinder.following(RULE_SOURCES[args.cfi])
    found = []
    if args.cfi == "both":
        # Two walks that share nothing but the heuristics each would use alone: SFrame with its own
        # fallbacks (as the kernel's unwinder), DWARF CFI with its own.
        sframe, dwarf = (unwinder.following(source).frames(first.pc, first.registers, args.limit)
                         for source in (RuleSource.SFRAME, RuleSource.DWARF))  # fmt: skip
        found.append(backtrace.agreement(sframe, dwarf, unwinder.machine))
    return unwinder.frames(first.pc, first.registers, args.limit), found


def _write_backtrace(walk: Trace, args: argparse.Namespace, found: list[str], first: session.Session) -> None:
    """A walk written to stdout frame by frame, as `--json` or `--explain` ask; what `--cfi both` found
    after it; the notes on the core and its files on stderr once the backtrace is out (JSON: in the document).
    Both have gdb's tail call frames, found through the session's files."""
    sites = ProcessCallSites(first.unwinder)
    if args.json:
        backtrace.write_json(sys.stdout, walk, found + first.notes, sites)
    else:
        backtrace.write_text(sys.stdout, walk, explain=args.explain, notes=found, inline=args.inline, tail_calls=sites)
        backtrace.write_notes(sys.stderr, first.notes)


def _thread_walks(first: session.Session, core: Core, args: argparse.Namespace) -> Iterator[tuple[int, Thread, Walk]]:
    """Every thread's walk, numbered in the core's order and given the last first, as gdb's `thread apply
    all bt` does."""
    source = RULE_SOURCES[args.cfi]
    crossings = Crossings()  # threads whose stacks lead into one another: each frame walked once
    # One process's code: what a PC's lookup found serves every thread (each thread's walk looked up its own
    # PCs, every function's rows decoded again once more than the section keeps were met).
    lookups = Lookups()
    for number, thread in reversed(list(enumerate(core.threads, 1))):
        begun = session.of_thread(first, core, thread)
        unwinder = begun.unwinder.following(source)
        walk = unwinder.frames(begun.pc, begun.registers, args.limit, crossings=(crossings, number), lookups=lookups)
        yield number, thread, walk


def _write_threads(
    args: argparse.Namespace, walks: Iterable[tuple[int, Thread, Trace]], first: session.Session
) -> None:
    """Every thread of the core, as gdb's `thread apply all bt` prints them, each under its `Thread N
    (Thread 0x… (LWP tid)):` line; with `--json`, one document."""
    sites = ProcessCallSites(first.unwinder)
    if args.json:
        backtrace.write_json_threads(sys.stdout, ((n, t.tid, trace) for n, t, trace in walks), first.notes, sites)
        return
    for number, thread, trace in walks:
        title = backtrace.thread_title(number, thread.tid, thread.registers, thread.name)
        sys.stdout.write(f"\n{title}\n")
        backtrace.write_text(sys.stdout, trace, explain=args.explain, inline=args.inline, tail_calls=sites)
    backtrace.write_notes(sys.stderr, first.notes)  # the core's and its files': said once, at the end, on stderr


def _kept(walk: Walk) -> Backtrace:
    """A walk's frames all found now, while the process is stopped, to print once it runs again."""
    return Backtrace(list(walk), walk.stop, walk.missing_address)


def _unwind_process(args: argparse.Namespace) -> int:
    """`--pid`, `--gdbstub`: the process stopped while its threads are walked, then let go; the walks printed
    after."""
    with stopped(args.program, args) as (program, process):
        if args.thread == "all":
            first = _from_core(args, program, process, None)
            walks = [(n, t, _kept(walk)) for n, t, walk in _thread_walks(first, process, args)]
        else:
            first = _from_core(args, program, process, args.thread)
            walk, found = _walk(first, args)
            kept = _kept(walk)
    if args.thread == "all":
        _write_threads(args, walks, first)
    else:
        _write_backtrace(kept, args, found, first)
    return 0
