"""`sfview perf`: what SFrame-based profiling would show of a `perf.data` recorded with `--call-graph dwarf`."""

from __future__ import annotations

import argparse
import os
import sys

from sfview.cli.common import Parser, TerminalWidth, parse, whole_number
from sfview.errors import InputError
from sfview.inputs.perf_data import PerfData
from sfview.output import backtrace, profile_report
from sfview.profiling.address_space import KERNEL, kernel_reader
from sfview.profiling.coverage import Coverage
from sfview.profiling.profile import Profile, coverage
from sfview.profiling.walks import MAX_STACK, Mode
from sfview.unwind.session import Session

JOBS = 4
"""The processes `sfview perf` unwinds in at most, by default."""
ONE_PROCESS_BELOW = 64 << 20
"""A profile smaller than this is unwound in one process by default: starting more costs more than it saves."""
RECORD = "perf record -e cpu-clock:u --call-graph dwarf -- PROGRAM"


def parser() -> argparse.ArgumentParser:
    """`sfview perf`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview perf",
        formatter_class=TerminalWidth,
        description="Unwind every sample of a perf profile three ways (SFrame as the kernel would, frame"
        " pointers alone, DWARF CFI as perf script does) and report how often SFrame gives DWARF's stack,"
        f" and where and why not. Record the profile with `{RECORD}`.",
    )
    parser.add_argument("file", help="a perf.data recorded with --call-graph dwarf")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the report as JSON")
    shown.add_argument(
        "--folded",
        choices=[mode.value for mode in Mode],
        help="print the stacks of one mode in the folded format (flamegraph.pl, inferno, speedscope)",
    )
    shown.add_argument(
        "--sample",
        type=whole_number,
        metavar="N",
        help="print sample #N's three walks, each frame with how it was found",
    )
    shown.add_argument(
        "--app",
        action="store_true",
        help="open the places where SFrame parts from DWARF in the app, each sample a key away from the debugger",
    )
    shown.add_argument(
        "--open",
        type=whole_number,
        metavar="N",
        help="open sample #N in the unwinding debugger (its registers and stack copy; `d` shows DWARF beside)",
    )
    parser.add_argument(
        "--max-stack",
        type=whole_number,
        default=MAX_STACK,
        metavar="N",
        help=f"the frames of a walk at most (perf's --max-stack, default {MAX_STACK})",
    )
    parser.add_argument(
        "--no-inline",
        action="store_true",
        help="name each frame by its symbol alone, without the functions inlined at its PC (named from DWARF"
        " debug information where a file has it, as perf script does)",
    )
    parser.add_argument(
        "--no-kernel-rules",
        action="store_true",
        help="walk SFrame with every .sframe as the format reads it, also those the kernel's reader refuses"
        " (a version 1 or 2 section: the kernel reads version 3 alone) or where its lookups fail",
    )
    parser.add_argument(
        "--kernel",
        default=KERNEL,
        metavar="REVISION",
        help="the revision of the kernel's SFrame reader the SFrame walks follow (a consumer profile of `check"
        " --profile`: kernel-v14, kernel-5ce6138798d7; default: kernel, the newest)",
    )
    parser.add_argument(
        "--jobs",
        type=whole_number,
        default=None,
        metavar="N",
        help=f"unwind in N processes (default: one for a profile under {ONE_PROCESS_BELOW >> 20} MB, else the"
        f" machine's processors, at most {JOBS})",
    )
    return parser


def run(argv: list[str]) -> int:
    """Run `sfview perf` with `argv` (the arguments after the command's name); its exit status."""
    args = parse(parser(), argv)
    if args.max_stack < 1:
        raise InputError(f"--max-stack {args.max_stack}: a walk has at least one frame")
    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs {args.jobs}: at least one process unwinds")
    most = max(os.cpu_count() or 1, JOBS)
    if args.jobs is not None and args.jobs > most:
        # The pool forks every process at once, each a copy of this one: 100,000 of them were asked for.
        raise InputError(
            f"--jobs {args.jobs}: more processes than this machine's {os.cpu_count()} processors unwind no faster"
            f" (at most {most})"
        )
    with PerfData(args.file) as perf:
        if args.open is not None:
            return _open(Profile(perf, args.max_stack, record=True, kernel=args.kernel), args.open, args.file)
        if args.sample is not None:
            profile = Profile(
                perf, args.max_stack, record=True, kernel_rules=not args.no_kernel_rules, kernel=args.kernel
            )
            return _sample(profile, args.sample, args.file, not args.no_inline)
        perf.check_unwindable()  # a profile that cannot be unwound is refused before any process starts
        kernel_reader(args.kernel)  # so is a revision of the kernel's reader that is none
        jobs = args.jobs or (1 if perf.size < ONE_PROCESS_BELOW else min(os.cpu_count() or 1, JOBS))
    counts, notes = coverage(args.file, args.max_stack, jobs, not args.no_kernel_rules, args.kernel, not args.no_inline)
    if args.app:
        return _app(counts, args.file, args.max_stack, not args.no_kernel_rules, args.kernel, not args.no_inline)
    if args.folded:
        sys.stdout.write(profile_report.folded(counts, Mode(args.folded)))
    elif args.json:
        sys.stdout.write(profile_report.json_text(counts, args.file, notes))
    else:
        sys.stdout.write(profile_report.text(counts, args.file, notes))
    return 0


def _sample(profile: Profile, number: int, path: str, inline: bool) -> int:
    for sample, walked in profile.walks(lambda s: s.number == number):
        sys.stdout.write(
            f"sample #{number}: pid {sample.pid}, tid {sample.tid}, time {sample.time}, "
            f"ip {sample.ip:#x}, stack copy {len(sample.stack)} of {sample.stack_asked} bytes\n"
        )
        if walked is None:
            sys.stdout.write("no user registers: nothing to unwind\n")
            return 0
        for mode, title in (
            (Mode.SFRAME, "SFrame (as the kernel would)"),
            (Mode.FP, "frame pointers alone"),
            (Mode.DWARF, "DWARF CFI (as perf script)"),
        ):
            sys.stdout.write(f"\n{title}:\n")
            walk = walked[mode]
            trace = backtrace.Backtrace(walk.frames, walk.stop, walk.missing_address)
            backtrace.write_text(sys.stdout, trace, explain=True, inline=inline)
        return 0
    raise InputError(f"no sample #{number}: the profile has fewer samples", path=path)


def _open(profile: Profile, number: int, path: str) -> int:
    found = profile.session(number)
    if found is None:
        raise InputError(f"no sample #{number}: the profile has fewer samples", path=path)
    session, program = found
    from sfview.app.app import SfviewApp  # the UI loads only when it is wanted
    from sfview.app.profile_app import stack_copy
    from sfview.document import Document

    session.memory_from = stack_copy(number)

    SfviewApp(Document.open(program), session).run()
    return 0


def _app(counts: Coverage, path: str, limit: int, kernel_rules: bool, kernel: str, inline: bool) -> int:
    """The samples view: the places, and each sample read again from the file when opened."""
    program = next((lib.path for lib in counts.libraries_seen() if lib.has_sframe), None)
    if program is None:
        raise InputError("no file the samples ran has SFrame: nothing to step with", path=path)

    def load(number: int) -> Session:
        with PerfData(path) as perf:
            found = Profile(perf, limit, record=True, kernel_rules=kernel_rules, kernel=kernel).session(number)
        if found is None:
            raise InputError(f"no sample #{number}: the profile has fewer samples")
        return found[0]

    from sfview.app.profile_app import ProfileApp  # the UI loads only when it is wanted
    from sfview.document import Document

    walked = counts.samples - counts.without_registers
    title = (
        f"{path}: {counts.equal[Mode.SFRAME]} of {walked} samples have SFrame's stack = DWARF's, {counts.equal_within}"
        " as far as files with SFrame go. Where they part, by function (enter: open the sample in the debugger;"
        " g: a sample by number):"
    )
    ProfileApp(Document.open(program), title, counts.by_function(), load, inline=inline).run()
    return 0
