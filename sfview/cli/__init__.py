"""The `sfview` command: `sfview FILE` opens the explorer, `sfview dump FILE` prints.

A module per command (`sfview.cli.dump`, `check`, `compare`, `export`,
`unwind`, and `explore` for `sfview FILE`) holds its parser and its `run`;
`sfview.cli.common` what they share. This dispatcher imports a command's
module only when that command runs: each loads only what it needs.
"""

from __future__ import annotations

import contextlib
import gc
import io
import sys

from sfview import EXIT_INTERRUPTED
from sfview.cli.common import EXIT_BAD_INPUT, Output, drop_stdout, flush_quietly, say
from sfview.errors import InputError

COMMANDS = {
    "dump": "print the section as readelf --sframe does (--json: as JSON)",
    "check": "say what is wrong in sections, one line a problem (--profile kernel|libsframe)",
    "compare": "compare SFrame's rules with the file's DWARF CFI, address range by range",
    "export": "write a Breakpad symbol file from SFrame alone (--breakpad)",
    "diff": "compare two files' SFrame by meaning: functions paired by name, rules PC by PC (--json)",
    "stats": "where each section's bytes go, files side by side, beside .eh_frame (--json)",
    "unwind": "print a backtrace from a core, a live process (--pid) or typed registers, as gdb does (--thread all)",
    "perf": "unwind a perf.data's samples with SFrame, frame pointers and DWARF: SFrame's coverage (--folded)",
    "gdb": "print the line that loads the `sframe` commands (info, bt, check, unwinder) into gdb",
    "patch": "write a copy with fields of the section changed: --set fdes[3].func_size=0x40 -o OUT",
    "serve": "serve the explorer to a web browser (textual-serve): sfview serve FILE [--port N]",
}
"""Each command, run by the module of its name in this package, and its line for `sfview --help`."""

MAX_OPTIONS = 4096
"""The options (arguments starting with `-`) read from one command line at most: argparse looks through
every option string again for each one it takes, time as their count squared (40,000 `--mem` words ran
past 30 s), before sfview sees any."""


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` names (the explorer when it names none); its exit status."""
    argv = sys.argv[1:] if argv is None else argv
    options = sum(1 for arg in argv if arg.startswith("-"))
    if options > MAX_OPTIONS:
        say(f"{options} options on the command line: at most {MAX_OPTIONS} are read (each --mem word is one)")
        return EXIT_BAD_INPUT
    name = argv[0] if argv and argv[0] in COMMANDS else None
    out = sys.stdout
    if name is not None:
        sys.stdout = Output(out)  # the app draws on the terminal itself
    try:
        # `__import__` with a `fromlist` gives the submodule: `importlib` would be one more import
        command = __import__(f"sfview.cli.{name or 'explore'}", fromlist=["run"])
        status = command.run(argv[1:] if name is not None else argv)
        sys.stdout.flush()  # here, where a full disk can still be said in one line
        return status
    except InputError as exc:
        flush_quietly()
        say(str(exc))
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        drop_stdout()
        return 0
    except KeyboardInterrupt:
        drop_stdout()
        print("sfview: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:
        drop_stdout()
        print("sfview: out of memory", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # writing the output: a full disk, a closed terminal
        drop_stdout()
        print(f"sfview: writing the output: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if isinstance(sys.stdout, Output):
            sys.stdout = out


def run() -> int:
    """The program's entry point (through `sfview.entry`): `main`, then the interpreter's exit made cheap.

    Output is UTF-8 whatever the locale, with what cannot be encoded escaped
    rather than fatal. Everything sfview built lives until the process ends;
    frozen, the collector's last pass at exit skips it.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            stream.reconfigure(encoding="utf-8", errors="backslashreplace")
    status = main()
    gc.freeze()
    return status
