"""`python -m sfview`, the same as the `sfview` command.

The handler a Ctrl-C meets is set first (`sfview.entry`'s doc), before the entry point is even compiled.
"""

import _signal
import sys

from sfview import interrupted

_signal.signal(_signal.SIGINT, interrupted)


def _main() -> int:
    from sfview.entry import run  # after the handler is set

    return run()


sys.exit(_main())
