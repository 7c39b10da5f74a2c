"""Editing from the explorer: what `e` edits, what a typed value patches, where the new explorer resumes.

Pure functions over the edit model (`sfview.edit`), no Textual. The app keeps
the `Edits` (they outlive an explorer: each edit opens a new one on the
patched bytes, decoded afresh, so that every pane, check and consumer's
verdict follows), and the explorer hands it a `Resume` so that the new one
opens where the person was.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from sfview.app.explorer.panes import Tab
from sfview.app.fields import Field, byte_slot, slot_of
from sfview.edit.patches import Edits, Patch, Slot, encode, same_file, value_of
from sfview.inputs.numbers import quoted
from sfview.sframe.model.section import Section


class Resume(NamedTuple):
    """Where the explorer was when the section was edited: the new explorer opens there."""

    tab: Tab
    path: str | None
    """The selected field's path (`fdes[3].func_size`), found again in the edited section when it is there."""
    offset: int
    """The hex cursor's byte: the field there is selected when the path is gone."""
    hex_focused: bool
    consumer: str
    """Whose verdict the Problems tab showed (`ExplorerState.consumer`): judged again on the new bytes."""
    kept: tuple[str, ...]
    """The consumers kept marked (`ExplorerState.kept`): judged again on the new bytes, and marked."""
    said: str
    """What the status line says once the new explorer is open."""


def target(section: Section, field: Field | None, hex_focused: bool, hex_cursor: int) -> Slot | str:
    """What `e` edits: the byte under the hex cursor when the hex pane has the focus, else the selected
    field; a sentence saying why when that is not a value."""
    if hex_focused:
        return byte_slot(hex_cursor)
    if field is None:
        return "choose a field in the Structure tab, or a byte in the hex pane (x)"
    return slot_of(field, section)


def hint(slot: Slot, data: bytes, current: str) -> str:
    """The edit dialog's line: the bytes, what the field holds now, and what may be typed."""
    stored = data[slot.start : slot.end].hex(" ")
    bits = f", bits {slot.bits[0]}..{slot.bits[1]}" if slot.bits else ""
    names = [*slot.names, *slot.flags]
    taken = f"a name ({', '.join(names)}) or a number" if names else "a number"
    sign = ", signed" if slot.signed else ""
    return (
        f"bytes {slot.start:#x}..{slot.end:#x} ({stored}{bits}{sign}), now {current or stored}. "
        f"Type {taken}: hex, or decimal with a dot (16., -8.). The section is decoded again at once."
    )


def typed(slot: Slot, text: str, data: bytes, little_endian: bool) -> Patch | str:
    """The patch that typing `text` into `slot` makes; a sentence saying what is wrong with it."""
    value = value_of(slot, text)
    if isinstance(value, str):
        return value
    return encode(slot, value, data, little_endian)


def listing(edits: Edits) -> list[str]:
    """`E`: every edit in force, oldest first, then those undone (which `ctrl+y` makes again), one line each."""
    done = [f"{i + 1:>3}  {_line(p)}" for i, p in enumerate(edits.done)]
    undone = [f"  -  {_line(p)}  (undone)" for p in reversed(edits.undone)]
    return done + undone


def _line(patch: Patch) -> str:
    return f"{patch.what}  at {patch.offset:#x}: {patch.old.hex(' ')} → {patch.new.hex(' ')}"


PATH_SHOWN = 80
"""The longest path a notification shows whole; a longer one is quoted cut (a pasted megabyte, the reason lost)."""


def shown_path(path: str) -> str:
    """`path` as a notification says it: whole, or cut to its start and length when long."""
    return path if len(path) <= PATH_SHOWN else quoted(path)


class WriteCheck:
    """The write dialog's check of a path: the original file is refused once, and written when asked again."""

    def __init__(self, original: str) -> None:
        self.original = original
        self._asked: str | None = None

    def __call__(self, text: str) -> Path | str:
        """`text` as the path to write; or the sentence that asks again, the first time it names the original."""
        path = text.strip()
        if not path:
            return "type the path of the copy to write"
        if "\0" in path:  # the system takes a path up to its first NUL: Python refuses it (ValueError)
            return f"{quoted(path)}: a path cannot hold a NUL character"
        if same_file(path, self.original) and self._asked != path:
            self._asked = path
            return "this is the file itself: press enter again to write over it"
        return Path(path)
