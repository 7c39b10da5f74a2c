"""The `sfview` command's entry point, importing nothing before it can catch Ctrl-C.

Importing the command line (argparse, pyelftools, Kaitai, Textual for the
app) takes a noticeable while; a Ctrl-C then would end in a traceback from
an import. Here the import itself runs under the handler, and from the
moment this module runs until `run` is under way (and again as the
interpreter ends), a Ctrl-C ends the process in the same one line.

Before the first line of sfview runs (`python -m sfview`'s `__main__`, or
this module under a console script), a Ctrl-C meets the interpreter's own
start-up: its `site` module, `runpy`'s imports, the script's `import re`,
under the handler Python sets before any of them. Its traceback there is
Python's; no module of sfview runs early enough to replace it.
"""

import _signal  # `signal` without its `enum` (the handler is set milliseconds sooner)
import sys

from sfview import EXIT_INTERRUPTED, interrupted  # the package itself: nothing to import

_signal.signal(_signal.SIGINT, interrupted)


def run() -> int:
    """Run the command line; a Ctrl-C at any point, imports included, ends it with one line."""
    try:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)  # a KeyboardInterrupt, caught below
        from sfview.cli import run as command

        return command()
    except KeyboardInterrupt:
        print("sfview: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        _signal.signal(_signal.SIGINT, interrupted)  # the interpreter's exit, after this returns
