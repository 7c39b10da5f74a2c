"""The `sfview` command: `sfview FILE` opens the explorer, `sfview dump FILE` prints.

Every input problem ends as one line on stderr (`sfview: FILE: where: what`)
and exit status 2; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import sys

from sfview.errors import InputError

EXIT_BAD_INPUT = 2


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
        epilog="commands: `sfview dump FILE` prints the section as readelf --sframe does.",
    )
    parser.add_argument("file", help="an ELF file, or a raw .sframe section")
    parser.add_argument("--base", type=_address, default=None, help="load address of a raw section (default 0)")
    return parser


def run_dump(argv: list[str]) -> int:
    from sfview.document import Document  # each command loads only what it needs: start-up stays lean

    args = _dump_parser().parse_args(argv)
    doc = Document.open(args.file, args.base)
    section = doc.require_section()
    if args.json:
        from sfview.output.jsondoc import json_text

        sys.stdout.write(json_text(doc) + "\n")
        error = doc.first_error()
    else:
        from sfview.output.readelf import text

        out, error = text(section)
        sys.stdout.write(out)
        error = doc.error or (doc.locate(error) if error is not None else None)
    if error is not None:
        sys.stdout.flush()
        raise error
    return 0


def run_app(argv: list[str]) -> int:
    from sfview.document import Document

    args = _app_parser().parse_args(argv)
    doc = Document.open(args.file, args.base)
    from sfview.app.app import SfviewApp  # the UI loads only when it is wanted

    SfviewApp(doc).run()
    return 0


def _unwind_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfview unwind",
        description="Print a backtrace found with SFrame, from a core file or from registers you give.",
    )
    parser.add_argument("program", help="the program (ELF file with .sframe)")
    parser.add_argument("--core", help="a core file of the program")
    parser.add_argument("--thread", type=int, default=1, help="which thread of the core, from 1 (default 1)")
    parser.add_argument("--lib-dir", action="append", default=[], help="where to look for shared libraries")
    parser.add_argument("--sysroot", help="prefix for the paths of mapped files")
    parser.add_argument("--regs", help="registers instead of a core: pc=0x…,sp=0x…,fp=0x…[,lr=0x…]")
    parser.add_argument("--mem", action="append", default=[], help="a memory word for --regs: ADDR=VALUE")
    parser.add_argument("--pac-mask", type=_address, help="AArch64: the bits of a return-address signature")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--explain", action="store_true", help="show the FDE, FRE, rules and arithmetic per frame")
    return parser


def run_unwind(argv: list[str]) -> int:
    from sfview.output import backtrace
    from sfview.unwind import unwind_core, unwind_regs

    parser = _unwind_parser()
    args = parser.parse_args(argv)
    if (args.core is None) == (args.regs is None):
        parser.error("give either --core CORE or --regs pc=…,sp=…")
    if args.core is not None:
        trace = unwind_core(args.program, args.core, args.thread, args.lib_dir, args.sysroot, args.pac_mask)
    else:
        trace = unwind_regs(args.program, args.regs, args.mem, args.pac_mask)
    sys.stdout.write(backtrace.json_text(trace) + "\n" if args.json else backtrace.text(trace, args.explain))
    return 0


COMMANDS = {"unwind": run_unwind, "dump": run_dump}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = COMMANDS.get(argv[0]) if argv else None
    try:
        if command is not None:
            return command(argv[1:])
        return run_app(argv)
    except InputError as exc:
        sys.stdout.flush()
        print(f"sfview: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
