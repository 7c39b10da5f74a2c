"""The `sfview` command's entry point, importing nothing before it can catch Ctrl-C.

Importing the command line (argparse, pyelftools, Kaitai, Textual for the
app) takes a noticeable while; a Ctrl-C then would end in a traceback from
an import. Here the import itself runs under the handler, and from the
moment this module runs until `run` is under way (and again as the
interpreter ends), a Ctrl-C ends the process in the same one line.
"""

import os
import signal
import sys

from sfview import EXIT_INTERRUPTED  # the package itself: nothing to import


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C outside `run`'s handler: no traceback, the line and the status `run` gives."""
    os.write(2, b"sfview: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


signal.signal(signal.SIGINT, _interrupted)


def run() -> int:
    """Run the command line; a Ctrl-C at any point, imports included, ends it with one line."""
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a KeyboardInterrupt, caught below
        from sfview.cli import run as command

        return command()
    except KeyboardInterrupt:
        print("sfview: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, _interrupted)  # the interpreter's exit, after this returns
