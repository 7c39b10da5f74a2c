"""Guards shared by every reader of an input's bytes: failures as `InputError`s, bounded string tables, regular files.

Used by the ELF readers (`elf.image` with struct, `elf.pyelftools_view`), the
core reader and the CFI decoder alike, so it imports no ELF reader itself.
"""

from __future__ import annotations

import bisect
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


def check_relocations(count: int, target: str, size: int) -> None:
    """Refuse more relocations for a section than it has bytes: each rewrites a field of it, and a few may
    share one (a pair of RISC-V's), but 300,000 for a 208-byte `.eh_frame` are a small file's way of making
    every reader of them take seconds, not relocations."""
    if count > max(size, 1):
        raise InputError(f"{count} relocations for the {size} bytes of {target}: more than one a byte")


MAX_STRING = 1 << 16
"""The longest string `TerminatedStrings` gives: past it, a run of bytes without a NUL is not a name."""

SHORT_RUN = 1 << 12
"""Runs up to this long are looked through again when asked for again; longer ones are remembered."""

KEPT_STRING = 1 << 8
"""Strings this long or longer are kept by offset and given again, not copied: their bytes together at most
`names_bound` of the table's."""


class TerminatedStrings:
    """The NUL-terminated strings of a table (DWARF's `.debug_str`), by offset, each byte of the table looked
    through at most once for a long string however many offsets ask into it: pyelftools read from an offset
    to the next NUL every time (2,000 names pointing into one megabyte without a NUL: 18 s). A long string is
    one object however often asked for, and long strings at different offsets (the tails of one) together no
    more than `names_bound` of the table: past that, None. No search goes past `MAX_STRING` from its offset
    (a table inflating to 256 MiB without a NUL was read whole by the first name, every page of it)."""

    def __init__(self, table: bytes) -> None:
        self.table = table
        self.kept: dict[int, bytes] = {}
        self.left = names_bound(table)
        self.starts: list[int] = []
        """The runs longer than `SHORT_RUN` looked through, in order, disjoint; `ends` where each one's NUL is
        (the table's length where it has none)."""
        self.ends: list[int] = []

    def at(self, offset: int) -> bytes | None:
        """The string at `offset`, without its NUL; None where no NUL ends it, or it is longer than
        `MAX_STRING`, or `offset` is outside the table, or the long strings given have reached their bound."""
        table = self.table
        kept = self.kept.get(offset)
        if kept is not None or not 0 <= offset < len(table):
            return kept
        end = table.find(b"\0", offset, offset + SHORT_RUN)
        if end < 0:
            end = self._long(offset)
        if end == len(table) or end - offset > MAX_STRING:
            return None
        if end - offset < KEPT_STRING:
            return table[offset:end]
        self.left -= end - offset
        if self.left < 0:
            return None
        kept = self.kept[offset] = table[offset:end]
        return kept

    def _long(self, offset: int) -> int:
        """Where the NUL after `offset` is, `offset` starting a long run: from the runs remembered, else
        looked for up to the next one (which the run then joins)."""
        at = bisect.bisect_right(self.starts, offset)
        if at and offset < self.ends[at - 1]:
            return self.ends[at - 1]
        stop = self.starts[at] if at < len(self.starts) else len(self.table)
        if stop - offset > MAX_STRING + 1:  # no name is longer: a table of 256 MiB without a NUL is not read whole
            end = self.table.find(b"\0", offset, offset + MAX_STRING + 1)
            return offset + MAX_STRING + 1 if end < 0 else self._remember(at, offset, end)
        end = self.table.find(b"\0", offset, stop)
        if end < 0:
            end = self.ends[at] if at < len(self.starts) else len(self.table)
            if at < len(self.starts):
                del self.starts[at], self.ends[at]
        return self._remember(at, offset, end)

    def _remember(self, at: int, offset: int, end: int) -> int:
        self.starts.insert(at, offset)
        self.ends.insert(at, end)
        return end


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
