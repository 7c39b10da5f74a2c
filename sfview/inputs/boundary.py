"""Guards shared by every reader of an input's bytes: failures as `InputError`s, bounded string tables, regular files.

Used by the ELF readers (`elf.image` with struct, `elf.pyelftools_view`), the
core reader and the CFI decoder alike, so it imports no ELF reader itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from sfview.errors import InputError


def reason(exc: BaseException) -> str:
    """Why reading failed, in words (some exceptions have none: a MemoryError, an empty struct.error)."""
    if isinstance(exc, RecursionError):
        return "its references lead back to themselves"
    if isinstance(exc, MemoryError):
        return "it asks for more memory than there is"
    return str(exc) or f"its bytes are not what pyelftools expects ({type(exc).__name__})"


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Any failure inside, whatever pyelftools, struct or zlib raise, as an `InputError` naming `what`."""
    try:
        yield
    except InputError as exc:  # said once, when the reader inside already put it first
        raise InputError(exc.message if exc.message.startswith(what) else f"{what}: {exc.message}") from None
    except Exception as exc:  # the boundary: pyelftools has no single error type
        raise InputError(f"{what}: {reason(exc)}") from None


NAMES_SLACK = 1 << 20
"""Names in a string table may share bytes (a linker merges a name that ends another), but only so
much: with the NULs of a damaged table gone, every name runs on into the same long string, one copy
each, and a small file makes names many times its size."""


def names_bound(table: bytes) -> int:
    """How many bytes of names a string table may give in all: twice itself and `NAMES_SLACK`."""
    return 2 * len(table) + NAMES_SLACK


class BoundedStrings:
    """Names from a string table's bytes, by offset (decoded with `errors`), all of them together no
    more than twice the table and `NAMES_SLACK`: past that, `at` says None."""

    def __init__(self, table: bytes, errors: str) -> None:
        self.table = table
        self.errors = errors
        self.left = names_bound(table)

    def at(self, offset: int) -> str | None:
        """The name at `offset` ("" outside the table), None once the names run past the bound."""
        end = self.table.find(b"\0", offset)
        end = len(self.table) if end < 0 else end
        self.left -= max(end - offset, 0)
        if self.left < 0:
            return None
        return self.table[offset:end].decode("utf-8", self.errors)


def open_regular_file(path: str, buffering: int = -1) -> BinaryIO:
    """`path` opened for reading, if it is a regular file; an `InputError` naming it otherwise.
    `buffering`: `open`'s (a file read through from start to end wants a large buffer).

    A FIFO would block for ever in `open` itself, a device such as /dev/zero
    never end: inputs (a program, a raw section, a core) are regular files.
    """
    if not path:
        raise InputError("an empty file name", path="")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise InputError(
                "not a regular file (a directory, a FIFO or a device): there is nothing to read", path=path
            )
        return open(path, "rb", buffering=buffering)
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), path=path) from None
