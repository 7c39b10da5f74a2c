"""Byte patches: where a value sits (`Slot`), what typing a value there writes (`encode`), the edits kept
in order with undo and redo (`Edits`), and the patched copy of the file written (`write_copy`)."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from typing import BinaryIO, NamedTuple

from sfview.errors import InputError
from sfview.inputs.numbers import evaluate, quoted


class Slot(NamedTuple):
    """Where one value is stored in the section's bytes, and how it may be written.

    `bits` is (highest, lowest) bit of the value within the word its bytes make
    (read in the section's byte order); None for a value that is the whole word.
    `names` are the names a value may be typed by (an enum's), `flags` the
    one-bit fields of a flags byte by name, with their masks.
    """

    path: str
    start: int
    end: int
    signed: bool = False
    bits: tuple[int, int] | None = None
    names: Mapping[str, int] = {}
    flags: Mapping[str, int] = {}


class Patch(NamedTuple):
    """Bytes `old` at section offset `offset` replaced by `new` (as long), for the edit `what` says."""

    offset: int
    old: bytes
    new: bytes
    what: str


_FLAG_SEPARATORS = re.compile(r"[\s|,+]+")


def _named(slot: Slot, text: str) -> int | None:
    """The value `text` names: an enum's value, or the flags it lists (`fde_sorted|frame_pointer`)."""
    word = text.strip().lower()
    if word in slot.names:
        return slot.names[word]
    if slot.flags and word:
        parts = [p for p in _FLAG_SEPARATORS.split(word) if p]
        if parts == ["none"]:
            return 0
        if all(p in slot.flags for p in parts):
            value = 0
            for p in parts:
                value |= slot.flags[p]
            return value
    return None


def _range(slot: Slot) -> tuple[int, int]:
    """The smallest and largest value the slot holds."""
    width = slot.bits[0] - slot.bits[1] + 1 if slot.bits else 8 * (slot.end - slot.start)
    return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if slot.signed else (0, (1 << width) - 1)


def value_of(slot: Slot, text: str) -> int | str:
    """The value typed for `slot`: a name it takes, else a number by the one rule (`sfview.inputs.numbers`,
    `-8.` for minus eight); a sentence saying what is wrong when it is neither, or does not fit."""
    value = _named(slot, text)
    if value is None:
        value = evaluate(text)
    if isinstance(value, str):
        names = [*slot.names, *slot.flags]
        return value + (f"; or one of: {', '.join(names)}" if names else "")
    if not isinstance(value, int):
        return f"{quoted(text)} is not a number"
    low, high = _range(slot)
    if not low <= value <= high:
        return f"{slot.path} holds {low} to {high} ({low:#x} to {high:#x}): {value} ({value:#x}) does not fit"
    return value


def encode(slot: Slot, value: int, data: bytes, little_endian: bool) -> Patch:
    """The patch that stores `value` (in range: `value_of`) in `slot` of `data`."""
    order = "little" if little_endian else "big"
    old = bytes(data[slot.start : slot.end])
    size = len(old)
    if slot.bits is None:
        new = value.to_bytes(size, order, signed=slot.signed)
    else:
        high, low = slot.bits
        mask = ((1 << (high - low + 1)) - 1) << low
        word = int.from_bytes(old, order)
        new = ((word & ~mask) | ((value << low) & mask)).to_bytes(size, order)
    return Patch(slot.start, old, new, f"{slot.path} = {value:#x}" if value >= 0 else f"{slot.path} = {value}")


class Edits:
    """The patches made to a section, in order, with undo and redo: `data` is the section with them applied."""

    def __init__(self, original: bytes) -> None:
        self.original = bytes(original)
        self._data = self.original
        """Bytes, never changed in place: the document opened on them holds them, not a copy of its own."""
        self.done: list[Patch] = []
        """The patches in force, oldest first."""
        self.undone: list[Patch] = []
        """The patches undone, the most recently undone last: `redo` makes it again."""

    @property
    def data(self) -> bytes:
        """The section's bytes with every patch in force."""
        return self._data

    def _put(self, offset: int, new: bytes) -> None:
        self._data = b"".join((self._data[:offset], new, self._data[offset + len(new) :]))

    def apply(self, patch: Patch) -> None:
        """Make `patch` (its `old` is what the bytes hold now); what was undone can no longer be redone."""
        if patch.old == patch.new:
            return
        self._put(patch.offset, patch.new)
        self.done.append(patch)
        self.undone.clear()

    def undo(self) -> Patch | None:
        """Take the last patch back; None when there is none."""
        if not self.done:
            return None
        patch = self.done.pop()
        self._put(patch.offset, patch.old)
        self.undone.append(patch)
        return patch

    def redo(self) -> Patch | None:
        """Make the last patch undone again; None when there is none."""
        if not self.undone:
            return None
        patch = self.undone.pop()
        self._put(patch.offset, patch.new)
        self.done.append(patch)
        return patch


def same_file(path: str, other: str) -> bool:
    """Whether `path` and `other` name one file (a link, `./a` and `a`), or would once written."""
    try:
        return os.path.samefile(path, other)
    except OSError:
        return os.path.realpath(path) == os.path.realpath(other)


COPY_CHUNK = 1 << 20
"""The bytes of the source held at once while its patched copy is written."""


def write_copy(source: str, file_offset: int, original: bytes, data: bytes, out: str) -> None:
    """Write `source` to `out` with the section's bytes (`original`, at `file_offset`) replaced by `data`.

    The section must be stored as it reads (not compressed), else there is
    no place in the file to put the bytes; an `InputError` says so, or what
    kept the file from being read or the copy from being written. Only a
    regular file is written: a FIFO would hold the caller (the app's own
    thread) until something read it, and a device would be changed in mode.
    The file is copied a chunk at a time, not held: a sparse file may be
    gigabytes (its holes stay holes in the copy).
    """
    with _opened(source) as stream:
        if _read(stream, source, file_offset, len(original)) != original:
            raise InputError("the section is not stored as it reads (compressed?): no patched copy", path=source)
        target = os.path.realpath(out)  # a link's file is written, not the link replaced
        try:
            if os.path.exists(target):
                if not stat.S_ISREG(os.stat(target).st_mode):
                    raise InputError("not a regular file (a directory, a FIFO or a device): no copy written", path=out)
                if not os.access(target, os.W_OK):
                    raise InputError("cannot write: Permission denied", path=out)
            mode = os.fstat(stream.fileno()).st_mode & 0o777
            _replace_whole(target, lambda copy: _copy(stream, source, copy, file_offset, data), mode)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=out) from None


def _opened(source: str) -> BinaryIO:
    """`source` open for reading; a failure said as reading it."""
    try:
        return open(source, "rb")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=source) from None


def _read(stream: BinaryIO, source: str, offset: int, size: int) -> bytes:
    """`size` bytes of `source` at `offset` (fewer at its end); a failed read said as reading `source`."""
    try:
        stream.seek(offset)
        return stream.read(size)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=source) from None


def _copy(stream: BinaryIO, source: str, copy: BinaryIO, file_offset: int, data: bytes) -> None:
    """`source` written to `copy` a chunk at a time, chunks of zeros passed over, then `data` at
    `file_offset`."""
    at = 0
    while chunk := _read(stream, source, at, COPY_CHUNK):
        if chunk.count(0) == len(chunk):
            copy.seek(len(chunk), os.SEEK_CUR)
        else:
            copy.write(chunk)
        at += len(chunk)
    copy.truncate(at)
    copy.seek(file_offset)
    copy.write(data)


def _replace_whole(target: str, write: Callable[[BinaryIO], None], mode: int) -> None:
    """`target` made to hold what `write` writes, at once: written beside it and renamed over it.

    A write that fails part way (a full disk, a file size limit) leaves the file
    that was there as it was: the copy may be the file itself, asked twice.
    """
    handle, temporary = tempfile.mkstemp(prefix=".sfview-", dir=os.path.dirname(target))
    try:
        with os.fdopen(handle, "wb") as copy:
            write(copy)
            os.fchmod(copy.fileno(), mode)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
