"""The `sfview` command: `sfview FILE` opens the explorer, `sfview dump FILE` prints.

Every input problem ends as one line on stderr (`sfview: FILE: where: what`)
and exit status 2; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from sfview.entry import EXIT_INTERRUPTED
from sfview.errors import InputError

if TYPE_CHECKING:
    from sfview.app.screens.debugger import Threads
    from sfview.document import Document
    from sfview.inputs.core import Core
    from sfview.unwind.engine import Walk

EXIT_BAD_INPUT = 2


WORD_MAX = (1 << 64) - 1


def machine_word(value: int, what: str) -> int:
    """`value` if it fits a 64-bit machine word, else an `InputError` naming `what` and the value.

    The one check of every number typed for an address, register or memory
    word (`--base`, `--bias`, `--regs`, `--mem`): a parser of richer
    expressions calls it on what it computes.
    """
    if not 0 <= value <= WORD_MAX:
        raise InputError(f"{what}: {value:#x} does not fit a 64-bit machine word (0 to {WORD_MAX:#x})")
    return value


def _address(text: str) -> int:
    """An address by the one number rule (`sfview.inputs.numbers`): hex, decimal with a dot."""
    from sfview.inputs.numbers import evaluate

    value = evaluate(text)
    if not isinstance(value, int):
        raise argparse.ArgumentTypeError(f"not an address: {text!r} (write 0x1000, 1000, or 4096. in decimal)")
    try:
        return machine_word(value, "address")
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc.message}") from None


def _thread(text: str) -> int | str:
    """`--thread`: a thread id (decimal, as the kernel and gdb write LWPs), or `all`."""
    if text == "all":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a thread id: {text!r} (write 12345, or all)") from None


def _size(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (write 268435456 or 0x10000000)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (more than 0)")
    return value


def _add_max_size(parser: argparse.ArgumentParser) -> None:
    from sfview.inputs.limits import DEFAULT_MAX_SIZE

    parser.add_argument(
        "--max-size",
        type=_size,
        default=DEFAULT_MAX_SIZE,
        metavar="BYTES",
        help=f"the most bytes read of one section, raw file or inflated stream (default {DEFAULT_MAX_SIZE})",
    )


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The arguments, the size limit they give applied to this process."""
    from sfview.inputs import limits

    _add_max_size(parser)
    args = parser.parse_args(argv)
    limits.max_size = args.max_size
    return args


class _TerminalWidth(argparse.HelpFormatter):
    """argparse's formatter, the terminal's width asked for when help or usage is written, not when it is made.

    argparse makes a formatter for every argument it adds (to check its metavar), and each asked `shutil`
    for the width: importing it (with bz2, lzma and zlib) was 1.5 ms of `sfview unwind`'s 36 ms start
    (issue 16). The width is still `shutil`'s, worked out as argparse works it out.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        width_for_now = 0 if width is None else width  # the terminal's is asked for in format_help
        super().__init__(prog, indent_increment, max_help_position, width_for_now)
        self._asked = (max_help_position, width)

    def format_help(self) -> str:
        max_help_position, width = self._asked
        if width is None:
            import shutil

            width = shutil.get_terminal_size().columns - 2
        self._width = width
        self._max_help_position = min(max_help_position, max(width - 20, self._indent_increment * 2))
        return super().format_help()


class _RawDescription(argparse.RawDescriptionHelpFormatter, _TerminalWidth):
    """The explorer's formatter: its epilog (the commands' list) kept as written."""


def _dump_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview dump",
        formatter_class=_TerminalWidth,
        description="Print an SFrame section as `readelf --sframe` does (or as JSON).",
    )
    parser.add_argument("file", help="an ELF file, or a raw .sframe section")
    parser.add_argument(
        "--base",
        type=_address,
        default=None,
        help="load address of a raw section (default 0; for ELF, overrides the section's)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _app_parser() -> argparse.ArgumentParser:
    import textwrap  # only the explorer's parser fills a paragraph: not worth every command's start

    from sfview.inputs.numbers import RULE

    width = max(map(len, SUMMARIES))
    parser = argparse.ArgumentParser(
        prog="sfview",
        description="Explore the SFrame stack-trace section of an ELF file (`sfview FILE`), or run a command.",
        epilog="commands (`sfview COMMAND --help` for each):\n"
        + "\n".join(f"  {name:<{width}}  {line}" for name, line in SUMMARIES.items())
        + "\n\n"
        + textwrap.fill(f"numbers (--regs, --mem, --bias, --base, and in the app): {RULE}", 79),
        formatter_class=_RawDescription,
    )
    parser.add_argument("--version", action="version", version=f"sfview {_version()}")
    parser.add_argument("file", help="an ELF file, or a raw .sframe section")
    parser.add_argument("--base", type=_address, default=None, help="load address of a raw section (default 0)")
    _add_state_arguments(parser, required=False)  # with one: the unwinding debugger opens on it
    return parser


def run_dump(argv: list[str]) -> int:
    from sfview.document import Document  # each command loads only what it needs: start-up stays lean

    args = _parse(_dump_parser(), argv)
    doc = Document.open(args.file, args.base)
    if doc.section is None and not args.json:
        from sfview.output import readelf

        sys.stdout.write(readelf.header_only(doc.data))  # what can be read of it: its preamble and header
    section = doc.require_section()
    if args.json:
        from sfview.output import jsondoc

        errors = jsondoc.write(doc, sys.stdout)
    else:
        from sfview.check.run import RowNotes
        from sfview.output import readelf

        notes = RowNotes(section)
        errors = readelf.write(section, sys.stdout, notes)
        if not errors and doc.error is None:  # else the command ends in its error: one line says it
            for note in notes.notes():  # what the dump printed that `check` calls an error (readelf says nothing)
                _say(f"{doc.path}: note: {note}")
    _say_losses(doc)
    _raise_first(doc, errors, "each in the dump")
    return 0


def _say_losses(doc: Document) -> None:
    """What around the section could not be read and what it cost, one line each on stderr."""
    for exc in doc.lost:
        _say(str(exc))


def _say(message: str) -> None:
    """`sfview: MESSAGE` on stderr, what the file put in it escaped."""
    from sfview.output.safe_text import printable

    print(f"sfview: {printable(message)}", file=sys.stderr)


def _raise_first(doc: Document, errors: list[InputError], where: str) -> None:
    """After the output: the section's first problem as the command's error (exit 2), with how many more."""
    error = doc.error or (doc.locate(errors[0]) if errors else None)
    if error is not None and len(errors) > 1:
        more = len(errors) - 1
        error = InputError(f"{error.message} (and {more} more problem{'s' * (more > 1)}, {where})",
                           offset=error.offset, path=error.path, where=error.where)  # fmt: skip
    if error is not None:
        sys.stdout.flush()
        raise error


def _compare_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview compare",
        formatter_class=_TerminalWidth,
        description="Compare the SFrame rules with the same file's DWARF CFI (.eh_frame, .debug_frame). "
        "Exit 0: they agree where both describe the code; 1: they disagree; 2: unreadable input.",
    )
    parser.add_argument("file", help="an ELF file with .sframe and .eh_frame")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview export",
        formatter_class=_TerminalWidth,
        description="Write the SFrame rules in another format (Breakpad STACK CFI).",
    )
    parser.add_argument("file", help="an ELF file with .sframe")
    parser.add_argument("--breakpad", action="store_true", required=True, help="a Breakpad symbol file")
    parser.add_argument("-o", "--output", default="-", help="where to write it (default: standard output)")
    return parser


def _elf_document(path: str) -> Document:
    """The opened ELF file, with its SFrame section readable."""
    from sfview.document import Document as Opened

    doc = Opened.open(path)
    doc.require_section()
    if doc.elf is None:
        raise InputError("a raw section: this command needs the ELF file around it", path=path)
    return doc


def _collector_paused(command: Callable[[list[str]], int]) -> Callable[[list[str]], int]:
    """`command` with the cyclic collector paused: compare and export keep what they build until they end
    (the symbols, the FDE outline, each shape's outcome), and the collector's passes over it free nothing
    but take a tenth of the time."""

    @functools.wraps(command)
    def run(argv: list[str]) -> int:
        paused = gc.isenabled()
        gc.disable()
        try:
            return command(argv)
        finally:
            if paused:
                gc.enable()

    return run


@_collector_paused
def run_compare(argv: list[str]) -> int:
    from sfview.dwarf.cfi import read_cfi, read_cfi_outline
    from sfview.dwarf.compare import compare, compare_outline
    from sfview.output import comparison
    from sfview.sframe.bulk.shapes import Shapes

    args = _parse(_compare_parser(), argv)
    doc = _elf_document(args.file)
    section = doc.require_section()
    relocatable = doc.elf["e_type"] == "ET_REL"
    try:  # an object file's functions are paired by their relocations, whatever their addresses
        table = read_cfi(doc.image) if relocatable else read_cfi_outline(doc.image)
    except InputError as exc:
        raise exc.located(args.file) from None
    shapes = Shapes(section)
    if relocatable:
        functions = list(shapes.with_rows())
        result = compare(section, table, doc.function_name, doc.symbols.name_at, doc.placement, functions)
    else:
        result = compare_outline(shapes, table, doc.function_name, doc.symbols.name_at)
    if args.json:
        sys.stdout.write(comparison.json_text(section, result, args.file) + "\n")
    else:
        sys.stdout.write(comparison.text(section, table, result, args.file))
    _say_losses(doc)
    _raise_first(doc, shapes.errors(), "left out of the comparison")
    return 0 if result.agrees else 1


@_collector_paused
def run_export(argv: list[str]) -> int:
    from sfview.output.breakpad import write_symbol_file

    args = _parse(_export_parser(), argv)
    doc = _elf_document(args.file)
    if args.output == "-":
        problems, errors = write_symbol_file(doc, sys.stdout.write)  # written as it is made
    else:
        try:
            out = open(args.output, "w", encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 - closed below
        except OSError as exc:
            problems, _ = write_symbol_file(doc, lambda _: None)  # what it would have said, said first
            _say_problems(args.file, problems, doc)
            raise InputError(f"cannot write: {exc.strerror}", path=args.output) from None
        with out:
            try:
                problems, errors = write_symbol_file(doc, out.write)
            except OSError as exc:
                raise InputError(f"cannot write: {exc.strerror}", path=args.output) from None
    _say_problems(args.file, problems, doc)
    _raise_first(doc, errors, "left out of the export")
    return 0


def _say_problems(path: str, problems: list[str], doc: Document) -> None:
    """What the export left out, then what around the section could not be read, one line each on stderr."""
    for problem in problems:
        _say(f"{path}: {problem}")
    _say_losses(doc)


def run_app(argv: list[str]) -> int:
    from sfview.document import Document

    args = _parse(_app_parser(), argv)
    doc = Document.open(args.file, args.base)
    threads = None
    if args.core is not None:
        from sfview.inputs.core import read_core
        from sfview.unwind import session

        core = read_core(args.core)
        thread = None if args.thread == "all" else args.thread
        try:
            started = session.from_core(args.file, core, thread, args.lib_dir, args.sysroot)
        except InputError as exc:
            raise _of_program(exc, args.file) from None
        threads = _threads(args.file, core, args.lib_dir, args.sysroot)
    else:
        started = _session(args.file, args) if args.regs is not None else None
    from sfview.app.app import SfviewApp  # the UI loads only when it is wanted

    SfviewApp(doc, started, threads).run()
    return 0


def _threads(program: str, core: Core, lib_dirs: list[str], sysroot: str | None) -> Threads | None:
    """A core's threads for the debugger's list (`t`), when it has more than one."""
    if len(core.threads) < 2:
        return None
    from sfview.app.screens.debugger import Threads
    from sfview.output.backtrace import thread_title
    from sfview.unwind import session

    return Threads(
        [
            (thread_title(n, t.tid, t.registers), t.tid, t.registers[core.pc_name])
            for n, t in enumerate(core.threads, 1)
        ],
        lambda tid: session.from_core(program, core, tid, lib_dirs, sysroot),
    )


def _add_state_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """The machine state to unwind from: a core file, or registers and memory words typed here."""
    state = parser.add_mutually_exclusive_group(required=required)
    state.add_argument("--core", help="a core file of the program")
    state.add_argument("--regs", help="registers: pc=0x…,sp=0x…,fp=0x…[,lr=0x…] (any of the ABI's by name)")
    parser.add_argument("--mem", action="append", default=[], metavar="ADDR=VALUE", help="a memory word (8 bytes)")
    parser.add_argument(
        "--bias", type=_address, default=0, help="with --regs: where a PIE program was loaded (its load bias)"
    )
    parser.add_argument(
        "--thread",
        type=_thread,
        help="the thread (its id, as the core gives it); default the first; `all`: every thread, as gdb's"
        " `thread apply all bt` prints them (with --json, one document of `threads`)",
    )
    parser.add_argument("--lib-dir", action="append", default=[], help="where to look for shared libraries by name")
    parser.add_argument("--sysroot", help="a root to find the core's libraries under")


def _unwind_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview unwind",
        formatter_class=_TerminalWidth,
        description="Walk a stack with the program's SFrame data, from a core file or from registers you give.",
    )
    parser.add_argument("program", help="the program (an ELF file with .sframe)")
    _add_state_arguments(parser, required=True)
    parser.add_argument("--explain", action="store_true", help="show each frame's FDE, FRE, rules and arithmetic")
    parser.add_argument(
        "--cfi",
        choices=("sframe", "dwarf", "both"),
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


def _session(program: str, args: argparse.Namespace):
    """The unwind the arguments ask for: from `--core`, or from `--regs` and `--mem`."""
    from sfview.inputs.core import parse_registers, read_core
    from sfview.unwind import session

    try:
        if args.core is not None:
            return session.from_core(program, read_core(args.core), args.thread, args.lib_dir, args.sysroot)
        from sfview.inputs.numbers import evaluate  # typed registers and memory words only, not a core

        symbols = _symbol_addresses(program, args.bias)
        registers = {name: machine_word(v, f"--regs {name}") for name, v in parse_registers(args.regs, symbols).items()}
        words = {}
        for item in args.mem:
            address, sep, value = item.partition("=")
            at = evaluate(address, lambda name: registers.get(name.lower(), symbols(name)))
            word = evaluate(value, symbols)
            if not (sep and isinstance(at, int) and isinstance(word, int)):
                why = next((f": {v}" for v in (at, word) if isinstance(v, str)), "")
                raise InputError(f"--mem: {item!r} is not ADDRESS=VALUE (0x7ffc1000=0x401136, sp+8=main+0x34){why}")
            words[machine_word(at, f"--mem {item!r}")] = machine_word(word, f"--mem {item!r}")
        return session.from_registers(program, registers, words, args.bias)
    except InputError as exc:
        raise _of_program(exc, program) from None


def _of_program(exc: InputError, program: str) -> InputError:
    """An unwind's error that names no file, named as the program's (what the core or an option
    says is already named so): `--thread all` and one thread alike."""
    return exc if exc.path is not None or exc.message.startswith("--") else exc.located(program)


def _symbol_addresses(program: str, bias: int) -> Callable[[str], int | None]:
    """A name of the program → its address where it is loaded (`bias` past its link address), for
    `--regs pc=main+0x34` and `--mem`."""
    from sfview.document import Document

    symbols = Document.open(program).symbols

    def address(name: str) -> int | None:
        symbol = symbols.named(name)
        return symbol.address + bias if symbol is not None else None

    return address


def run_unwind(argv: list[str]) -> int:
    from sfview.output import backtrace

    args = _parse(_unwind_parser(), argv)
    if args.thread == "all":
        return _unwind_all_threads(args)
    started = _session(args.program, args)
    unwinder = started.unwinder.following(args.cfi if args.cfi in ("sframe", "dwarf") else "sframe+dwarf")
    notes = list(started.notes)
    if args.cfi == "both":
        # Two walks that share nothing but the heuristics each would use alone: SFrame with its own
        # fallbacks (as the kernel's unwinder), DWARF CFI with its own.
        sframe, dwarf = (unwinder.following(cfi).frames(started.pc, started.registers, args.limit)
                         for cfi in ("sframe", "dwarf"))  # fmt: skip
        notes.insert(0, backtrace.agreement(sframe, dwarf, unwinder.machine))
    _write_backtrace(unwinder.frames(started.pc, started.registers, args.limit), args, notes)
    return 0


def _write_backtrace(walk: Walk, args: argparse.Namespace, notes: list[str]) -> None:
    """A walk written to stdout frame by frame, as `--json` or `--explain` ask."""
    from sfview.output import backtrace

    if args.json:
        backtrace.write_json(sys.stdout, walk, notes)
    else:
        backtrace.write_text(sys.stdout, walk, explain=args.explain, notes=notes)


def _unwind_all_threads(args: argparse.Namespace) -> int:
    """Every thread of the core, as gdb's `thread apply all bt` prints them: numbered in the core's order,
    the last first, each under its `Thread N (Thread 0x… (LWP tid)):` line; with `--json`, one document."""
    from sfview.inputs.core import read_core
    from sfview.output import backtrace
    from sfview.unwind import session

    if not args.core:
        raise InputError("--thread all needs --core: typed registers are one thread's")
    core = read_core(args.core)
    try:
        first = session.from_core(args.program, core, None, args.lib_dir, args.sysroot)
    except InputError as exc:
        raise _of_program(exc, args.program) from None
    cfi = args.cfi if args.cfi in ("sframe", "dwarf") else "sframe+dwarf"
    threads = list(reversed(list(enumerate(core.threads, 1))))

    def walk(tid: int) -> Walk:
        started = session.for_thread(first, core, tid)
        return started.unwinder.following(cfi).frames(started.pc, started.registers)

    if args.json:
        backtrace.write_json_threads(sys.stdout, ((n, t.tid, walk(t.tid)) for n, t in threads), first.notes)
        return 0
    for number, thread in threads:
        sys.stdout.write(f"\n{backtrace.thread_title(number, thread.tid, thread.registers)}\n")
        last = number == threads[-1][0]  # the notes are the core's and its files': said once, at the end
        backtrace.write_text(sys.stdout, walk(thread.tid), explain=args.explain, notes=first.notes if last else None)
    return 0


def _check_parser() -> argparse.ArgumentParser:
    from sfview.consumers.verdicts import profiles

    parser = argparse.ArgumentParser(
        prog="sfview check",
        formatter_class=_TerminalWidth,
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
    parser.add_argument("--base", type=_address, default=None, help="load address of raw sections (default 0)")
    return parser


def run_check(argv: list[str]) -> int:
    """Exit 0 when every file is clean, 1 when a problem is found, 2 when a file cannot be read at all."""
    from sfview.check.catalogue import Severity
    from sfview.check.run import check_document
    from sfview.consumers.verdicts import judge_document
    from sfview.document import Document
    from sfview.output import diagnostics

    args = _parse(_check_parser(), argv)
    status, reports = 0, []
    for path in args.files:
        try:
            doc = Document.open(path, args.base)
        except InputError as exc:
            _say(str(exc))
            status = EXIT_BAD_INPUT
            if args.json:
                reports.append(diagnostics.unreadable(path, exc))
            continue
        found = list(check_document(doc))
        _say_losses(doc)
        verdicts = [judge_document(doc, name) for name in args.profile or []]
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


COMMANDS = {"dump": run_dump, "unwind": run_unwind, "compare": run_compare, "export": run_export, "check": run_check}
SUMMARIES = {
    "dump": "print the section as readelf --sframe does (--json: as JSON)",
    "check": "say what is wrong in sections, one line a problem (--profile kernel|libsframe)",
    "compare": "compare SFrame's rules with the file's DWARF CFI, address range by range",
    "export": "write a Breakpad symbol file from SFrame alone (--breakpad)",
    "unwind": "print a backtrace from a core or typed registers, as gdb does (--thread all: every thread)",
}
"""One line per command, for `sfview --help`."""


def _version() -> str:
    """The installed package's version (pyproject.toml's)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sfview")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = COMMANDS.get(argv[0]) if argv else None
    out = sys.stdout
    if command is not None:
        sys.stdout = _Output(out)  # the app draws on the terminal itself
    try:
        status = command(argv[1:]) if command is not None else run_app(argv)
        sys.stdout.flush()  # here, where a full disk can still be said in one line
        return status
    except InputError as exc:
        _flush_quietly()
        _say(str(exc))
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        _drop_stdout()
        return 0
    except KeyboardInterrupt:
        _drop_stdout()
        print("sfview: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:
        _drop_stdout()
        print("sfview: out of memory", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # writing the output: a full disk, a closed terminal
        _drop_stdout()
        print(f"sfview: writing the output: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if isinstance(sys.stdout, _Output):
            sys.stdout = out


class _Output:
    """Standard output for the commands: once its reader has gone (`sfview check BAD | head -1`), the
    rest is dropped and the command goes on, so that it still ends with the exit status it earns
    (1 for problems, 2 for an unreadable file) rather than one a closed pipe chose."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self.inner.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        """What is still buffered goes nowhere: the descriptor is pointed at /dev/null, so that the
        interpreter's last flush at exit does not fail again."""
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.inner.fileno())
            os.close(null)

    @property
    def buffer(self) -> _BinaryOutput:
        """The stream's bytes (what `dump` writes), dropped as its text is once the reader has gone; none
        (AttributeError) for a stream of text only."""
        if not hasattr(self.inner, "buffer"):
            raise AttributeError("buffer")
        return _BinaryOutput(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _BinaryOutput:
    """`_Output`'s buffer: bytes written to the stream's own, or nowhere once its reader has gone."""

    def __init__(self, outer: _Output) -> None:
        self.outer = outer

    def write(self, data: bytes) -> int:
        outer = self.outer
        if not outer.gone:
            try:
                return outer.inner.buffer.write(data)
            except BrokenPipeError:
                outer._reader_gone()
        return len(data)

    def flush(self) -> None:
        self.outer.flush()


def _flush_quietly() -> None:
    try:
        sys.stdout.flush()
    except OSError:
        _drop_stdout()


def _drop_stdout() -> None:
    """What could not be written is dropped: the interpreter would try again at exit and fail with a traceback."""
    with contextlib.suppress(OSError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces stdout until the process ends


def run() -> int:
    """The program's entry point (through `sfview.entry`): `main`, then the interpreter's exit made cheap.

    Output is UTF-8 whatever the locale, with what cannot be encoded escaped
    rather than fatal. Everything sfview built lives until the process ends;
    frozen, the collector's last pass at exit skips it (a tenth of a big
    dump's time).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            stream.reconfigure(encoding="utf-8", errors="backslashreplace")
    status = main()
    gc.freeze()
    return status
