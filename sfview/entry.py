"""The `sfview` command's entry point, importing nothing before it can catch Ctrl-C.

Importing the command line (argparse, pyelftools, Kaitai, Textual for the
app) takes a noticeable while; a Ctrl-C then would end in a traceback from
an import. Here the import itself runs under the handler.
"""

import sys

from sfview import EXIT_INTERRUPTED  # the package itself: nothing to import


def run() -> int:
    """Run the command line; a Ctrl-C at any point, imports included, ends it with one line."""
    try:
        from sfview.cli import run as command

        return command()
    except KeyboardInterrupt:
        print("sfview: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
