"""The `sfview` command: `sfview FILE` opens the explorer, `sfview dump FILE` prints.

Every input problem ends as one line on stderr (`sfview: FILE: where: what`)
and exit status 2; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import sys

from sfview.errors import InputError
from sfview.inputs.source import open_source

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
    from sfview.output import readelf as dump  # only the dump needs it: the app starts faster without

    args = _dump_parser().parse_args(argv)
    source = open_source(args.file, args.base)
    section = source.parse()
    if args.json:
        sys.stdout.write(dump.json_text(source, section) + "\n")
        error = dump.first_error(section)
    else:
        out, error = dump.text(section)
        sys.stdout.write(out)
    error = section.error or error
    if error is not None:
        sys.stdout.flush()
        raise source.error(error)
    return 0


def run_app(argv: list[str]) -> int:
    args = _app_parser().parse_args(argv)
    source = open_source(args.file, args.base)
    from sfview.app.app import SfviewApp  # the UI loads only when it is wanted

    SfviewApp(source).run()
    return 0


COMMANDS = {"dump": run_dump}


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
