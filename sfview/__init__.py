"""sfview: a viewer, checker and unwinder for SFrame stack-trace sections.

The package holds the few constants every layer shares, below them all (the
model, the inputs, the engines and the command line import them from here),
so that none defines its own.
"""

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

ADDRESS_MASK = (1 << 64) - 1
"""2**64 - 1: the largest 64-bit address or machine word, and the mask that wraps a sum to one."""

EXIT_INTERRUPTED = 130
"""The exit status of a command ended by Ctrl-C, as a shell reports it (128 + SIGINT)."""


def quantity(count: int, noun: str) -> str:
    """`1 frame`, `6 frames`: a count and its noun, plural unless the count is one."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def interrupted(signum: int, frame: object) -> None:
    """The SIGINT handler of the `sfview` program outside its command line's own (set first thing by
    `sfview.entry` and by `python -m sfview`): no traceback, the line and the status a Ctrl-C gives."""
    os.write(2, b"sfview: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


@contextmanager
def uncollected() -> Iterator[None]:
    """No automatic collection of reference cycles inside (the process's switch, set back after): for work that
    makes many objects and no cycles (or leaves its cycles to a later collection) beside a large heap, whose
    young collections meanwhile would walk that heap over and over."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
