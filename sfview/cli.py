"""The `sfview` command: `sfview FILE` opens the explorer, `sfview dump FILE` prints.

Every input problem ends as one line on stderr (`sfview: FILE: where: what`)
and exit status 2; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from typing import TYPE_CHECKING

from sfview.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sfview.document import Document
    from sfview.sframe.bulk import RowsFunction
    from sfview.sframe.section import Function

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
"""As a shell reports a command ended by Ctrl-C (128 + SIGINT)."""


def _address(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an address: {text!r} (write 0x1000 or 4096)") from None


def _dump_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview dump", description="Print an SFrame section as `readelf --sframe` does (or as JSON)."
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
    parser = argparse.ArgumentParser(
        prog="sfview",
        description="Explore the SFrame stack-trace section of an ELF file.",
        epilog="commands: `sfview dump FILE` prints the section as readelf --sframe does; "
        "`sfview unwind PROG --core CORE` prints a backtrace.",
    )
    parser.add_argument("file", help="an ELF file, or a raw .sframe section")
    parser.add_argument("--base", type=_address, default=None, help="load address of a raw section (default 0)")
    _add_state_arguments(parser, required=False)  # with one: the unwinding debugger opens on it
    return parser


def run_dump(argv: list[str]) -> int:
    from sfview.document import Document  # each command loads only what it needs: start-up stays lean

    args = _dump_parser().parse_args(argv)
    doc = Document.open(args.file, args.base)
    section = doc.require_section()
    if args.json:
        from sfview.output import jsondoc

        errors = jsondoc.write(doc, sys.stdout)
    else:
        from sfview.output import readelf

        errors = readelf.write(section, sys.stdout)
    _raise_first(doc, errors, "each in the dump")
    return 0


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


def _function_errors(functions: Sequence[Function | RowsFunction]) -> list[InputError]:
    """Why functions cannot be decoded, or their rows stop short: what compare and export leave out."""
    return [e for func in functions for e in (func.error, func.rows_error) if e is not None]


def _compare_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview compare",
        description="Compare the SFrame rules with the same file's DWARF CFI (.eh_frame, .debug_frame). "
        "Exit 0: they agree where both describe the code; 1: they disagree; 2: unreadable input.",
    )
    parser.add_argument("file", help="an ELF file with .sframe and .eh_frame")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview export", description="Write the SFrame rules in another format (Breakpad STACK CFI)."
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


def run_compare(argv: list[str]) -> int:
    from sfview.dwarf.cfi import read_cfi
    from sfview.dwarf.compare import compare
    from sfview.output import comparison
    from sfview.sframe.bulk import functions_with_rows

    args = _compare_parser().parse_args(argv)
    doc = _elf_document(args.file)
    section = doc.require_section()
    try:
        table = read_cfi(doc.elf)
    except InputError as exc:
        raise exc.located(args.file) from None
    functions = functions_with_rows(section)
    result = compare(section, table, doc.function_name, doc.symbols.name_at, doc.placement, functions)
    if args.json:
        sys.stdout.write(comparison.json_text(section, result, args.file) + "\n")
    else:
        sys.stdout.write(comparison.text(section, table, result, args.file))
    _raise_first(doc, _function_errors(functions), "left out of the comparison")
    return 0 if result.agrees else 1


def run_export(argv: list[str]) -> int:
    from sfview.output.breakpad import symbol_file
    from sfview.sframe.bulk import functions_with_rows

    args = _export_parser().parse_args(argv)
    doc = _elf_document(args.file)
    functions = functions_with_rows(doc.require_section())
    out, problems = symbol_file(doc, functions)
    for problem in problems:
        print(f"sfview: {args.file}: {problem}", file=sys.stderr)
    if args.output == "-":
        sys.stdout.write(out)
    else:
        try:
            with open(args.output, "w", encoding="ascii") as f:
                f.write(out)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=args.output) from None
    _raise_first(doc, _function_errors(functions), "left out of the export")
    return 0


def run_app(argv: list[str]) -> int:
    from sfview.document import Document

    args = _app_parser().parse_args(argv)
    doc = Document.open(args.file, args.base)
    started = _session(args.file, args) if args.core or args.regs else None
    from sfview.app.app import SfviewApp  # the UI loads only when it is wanted

    SfviewApp(doc, started).run()
    return 0


def _add_state_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """The machine state to unwind from: a core file, or registers and memory words typed here."""
    state = parser.add_mutually_exclusive_group(required=required)
    state.add_argument("--core", help="a core file of the program")
    state.add_argument("--regs", help="registers: pc=0x…,sp=0x…,fp=0x…[,lr=0x…] (any of the ABI's by name)")
    parser.add_argument("--mem", action="append", default=[], metavar="ADDR=VALUE", help="a memory word (8 bytes)")
    parser.add_argument(
        "--bias", type=_address, default=0, help="with --regs: where a PIE program was loaded (its load bias)"
    )
    parser.add_argument("--thread", type=int, help="the thread (its id, as the core gives it); default the first")
    parser.add_argument("--lib-dir", action="append", default=[], help="where to look for shared libraries by name")
    parser.add_argument("--sysroot", help="a root to find the core's libraries under")


def _unwind_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview unwind",
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
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _session(program: str, args: argparse.Namespace):
    """The unwind the arguments ask for: from `--core`, or from `--regs` and `--mem`."""
    from sfview.inputs.core import parse_registers, read_core
    from sfview.unwind import session

    if args.core:
        return session.from_core(program, read_core(args.core), args.thread, args.lib_dir, args.sysroot)
    words = {}
    for item in args.mem:
        address, _, value = item.partition("=")
        try:
            words[int(address, 0)] = int(value, 0)
        except ValueError:
            raise InputError(f"--mem: {item!r} is not ADDRESS=VALUE (0x7ffc1000=0x401136)") from None
    return session.from_registers(program, parse_registers(args.regs), words, args.bias)


def run_unwind(argv: list[str]) -> int:
    from sfview.output import backtrace

    args = _unwind_parser().parse_args(argv)
    started = _session(args.program, args)
    unwinder = started.unwinder
    unwinder.cfi = args.cfi if args.cfi in ("sframe", "dwarf") else "sframe+dwarf"
    trace = unwinder.backtrace(started.pc, started.registers)
    notes = list(started.notes)
    if args.cfi == "both":
        unwinder.cfi = "dwarf"
        notes.insert(0, backtrace.agreement(trace, unwinder.backtrace(started.pc, started.registers)))
    if args.json:
        sys.stdout.write(backtrace.json_text(trace, notes) + "\n")
    else:
        sys.stdout.write(backtrace.text(trace, explain=args.explain, notes=notes))
    return 0


def _check_parser() -> argparse.ArgumentParser:
    from sfview.check.catalogue import PROFILES

    parser = argparse.ArgumentParser(
        prog="sfview check",
        description="Find what is wrong in SFrame sections. Exit 0: clean (infos aside); 1: problems found; "
        "2: a file cannot be read at all.",
    )
    parser.add_argument("files", nargs="+", help="ELF files or raw .sframe sections")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        help="also check what one consumer refuses: " + "; ".join(f"{k}: {v}" for k, v in PROFILES.items()),
    )
    parser.add_argument("--base", type=_address, default=None, help="load address of raw sections (default 0)")
    return parser


def run_check(argv: list[str]) -> int:
    """Exit 0 when every file is clean, 1 when a problem is found, 2 when a file cannot be read at all."""
    from sfview.check.catalogue import Severity
    from sfview.check.run import check_document
    from sfview.document import Document
    from sfview.output import diagnostics

    args = _check_parser().parse_args(argv)
    status, reports = 0, []
    for path in args.files:
        try:
            doc = Document.open(path, args.base)
        except InputError as exc:
            print(f"sfview: {exc}", file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        found = list(check_document(doc, args.profile))
        if any(d.severity is not Severity.INFO for d in found) and status == 0:
            status = 1
        if args.json:
            reports.append(diagnostics.as_json(doc, found, args.profile))
        else:
            for line in diagnostics.lines(doc, found, args.profile):
                print(line)
    if args.json:
        sys.stdout.write(diagnostics.json_text(reports) + "\n")
    return status


COMMANDS = {"dump": run_dump, "unwind": run_unwind, "compare": run_compare, "export": run_export, "check": run_check}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = COMMANDS.get(argv[0]) if argv else None
    try:
        status = command(argv[1:]) if command is not None else run_app(argv)
        sys.stdout.flush()  # here, where a full disk can still be said in one line
        return status
    except InputError as exc:
        _flush_quietly()
        print(f"sfview: {exc}", file=sys.stderr)
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
    """The program's entry point: `main`, then the interpreter's exit made cheap.

    Everything sfview built lives until the process ends; frozen, the
    collector's last pass at exit skips it (a tenth of a big dump's time).
    """
    status = main()
    gc.freeze()
    return status
