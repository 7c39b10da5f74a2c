"""`FramePicture`: the stack frame one FRE describes, drawn to scale in text.

A row's rules say where the CFA is and where the caller's RA and FP were
saved; read as numbers they are hard to picture. This pane draws the stack
from the CFA down to SP (or, when the CFA is computed from FP and the frame's
size is not known statically, down to the lowest slot the row names), one
line per 8-byte slot, each labelled relative to the CFA and to SP or FP, with
the saved RA and FP in their slots and the registers that point into the
frame. Under it: what changed from the row before, and the CFA offset of
every row of the function as a sparkline.

The rules are the model's numeric `Rule`s; every word comes from
`notation.py`. Long runs of slots the row says nothing about (locals, other
saved registers) are folded into one line, so that a 4 KB frame still fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from sfview import rule_notation
from sfview.app import notation
from sfview.sframe.model.rules import STACK_SLOT, Kind, Rule
from sfview.sframe.model.section import Function, Row, Section

__all__ = ["FramePicture", "picture"]

FOLD = 4
"""Runs of more than this many slots the row says nothing about are folded into one line."""

SPARK = "▁▂▃▄▅▆▇█"
SPARK_ROWS = 64
"""Rows shown in the sparkline at most: a window around the row shown."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One 8-byte stack slot, `offset` bytes from the CFA (negative: below it)."""

    offset: int
    label: str
    pointers: str = ""
    below_sp: bool = False


def frame_size(section: Section, cfa: Rule) -> int | None:
    """Bytes from SP up to the CFA, when the rule gives them (CFA = SP + offset); else None."""
    if cfa.kind is Kind.VALUE and cfa.base == section.sp_reg and not cfa.deref:
        return cfa.offset
    return None


def fp_offset(section: Section, cfa: Rule) -> int | None:
    """Where FP points, from the CFA, when the CFA is computed from it (CFA = FP + n: FP is at CFA - n)."""
    if cfa.kind is Kind.VALUE and cfa.base == section.fp_reg and not cfa.deref:
        return -cfa.offset
    return None


def slots(section: Section, row: Row) -> list[Slot | int]:
    """The slots from just below the CFA down to SP (or the lowest one the row names), top first.

    A run of more than `FOLD` slots the row names nothing in is given as its
    length: it is never built slot by slot (a frame may be megabytes).
    """
    size = frame_size(section, row.cfa)
    fp_at = fp_offset(section, row.cfa)
    saved = {rule.offset: what for what, rule in (("FP", row.fp), ("RA", row.ra)) if rule.saved_on_stack}
    pointers: dict[int, list[str]] = {}
    if size is not None:
        pointers.setdefault(-size, []).append(notation.pointer_label(section, section.sp_reg))
    if fp_at is not None:
        pointers.setdefault(fp_at, []).append(notation.pointer_label(section, section.fp_reg))
    if section.sp_val_offset:
        pointers.setdefault(section.sp_val_offset, []).append(notation.caller_sp_label(section))
    out: list[Slot | int] = []
    above = 0
    for offset in sorted({o for o in (*saved, *pointers) if o < 0}, reverse=True):
        out += _blank(above, offset, size)
        what = saved.get(offset)
        label = notation.slot_label(section, what, row.mangled_ra and what == "RA") if what else ""
        out.append(Slot(offset, label, " ".join(pointers.get(offset, [])), _below(offset, size)))
        above = offset
    return out


def _blank(above: int, below: int, size: int | None) -> list[Slot | int]:
    """The unnamed slots between two named ones (offsets from the CFA), or their count when many."""
    offsets = range(above - STACK_SLOT, below, -STACK_SLOT)
    if len(offsets) > FOLD:
        return [len(offsets)]
    return [Slot(offset, "", "", _below(offset, size)) for offset in offsets]


def _below(offset: int, size: int | None) -> bool:
    """Whether the slot at `offset` from the CFA lies below SP (popped already)."""
    return size is not None and offset < -size


def _stack_lines(section: Section, row: Row) -> Text:
    """The frame from the caller's side of the CFA down to SP, one line per slot."""
    size = frame_size(section, row.cfa)
    fp_at = fp_offset(section, row.cfa)
    items = slots(section, row)
    named = [item for item in items if isinstance(item, Slot)]
    left = max([3, *(len(f"CFA{slot.offset:+d}") for slot in named)])
    right = max([len(_beside(slot.offset, size, fp_at)) for slot in named] + [len(_beside(0, size, fp_at))])
    box = 30
    out = Text()
    out.append(f"{'':>{left}} {'':>{right}}  ┊ {notation.CALLER_FRAME:<{box - 2}} ┊\n", style="dim")
    out.append(f"{'CFA':>{left}} {_beside(0, size, fp_at):>{right}}  ┼{'─' * box}┼  {notation.cfa_label(section)}\n")
    for item in items:
        if isinstance(item, int):
            fold = f"⋮ {item} slots, {item * STACK_SLOT} bytes"
            out.append(f"{'':>{left}} {'':>{right}}  │ {fold:<{box - 2}} │\n", style="dim")
            continue
        style = "bold cyan" if item.label else "dim" if item.below_sp else ""
        where = f"CFA{item.offset:+d}"
        out.append(f"{where:>{left}} {_beside(item.offset, size, fp_at):>{right}}  ")
        out.append(f"│ {item.label or '·':<{box - 2}} │", style=style)
        out.append(f"  {item.pointers}" if item.pointers else "", style="bold")
        out.append(f"  {notation.BELOW_SP}" if item.below_sp and item.label else "", style="dim")
        out.append("\n")
    if size is None:
        out.append(f"{'':>{left}} {'':>{right}}  ┊ {notation.SP_UNKNOWN:<{box - 2}} ┊\n", style="dim")
    return out


def _beside(offset: int, size: int | None, fp_at: int | None) -> str:
    """A slot's place relative to SP (known frame size), else to FP (CFA from FP), else nothing."""
    if size is not None:
        return f"sp{offset + size:+d}"
    if fp_at is not None:
        return f"fp{offset - fp_at:+d}"
    return ""


def _drawn(size: int | None) -> int | None:
    """A frame size to draw to scale, None for none (a CFA not SP-based, or below the SP)."""
    return size if size is not None and size >= 0 else None


def sparkline(section: Section, func: Function, current: int) -> Text:
    """The CFA offset of each row (SP-based ones to scale; others `·`), with a mark under `current`."""
    rows = func.rows
    first = max(0, min(current - SPARK_ROWS // 2, len(rows) - SPARK_ROWS))
    shown = rows[first : first + SPARK_ROWS]
    # a CFA below the SP (a negative offset, in a damaged section) is no frame size: drawn unscaled
    sizes = [_drawn(frame_size(section, row.cfa)) for row in shown]
    top = max((s for s in sizes if s is not None), default=0) or 1
    marks = "".join(SPARK[min(len(SPARK) - 1, s * len(SPARK) // (top + 1))] if s is not None else "·" for s in sizes)
    known = [s for s in sizes if s is not None]
    scale = f", {min(known)}..{max(known)} bytes" if known else ""
    out = Text(f"{notation.SPARKLINE_TITLE}: rows {first}..{first + len(shown) - 1}{scale}\n", style="bold")
    out.append(f"  {marks}\n")
    out.append(f"  {' ' * (current - first)}^ row {current}\n", style="bold")
    return out


def picture(section: Section, func: Function, row: Row, name: str = "") -> Text:
    """Everything the pane shows for `row` of `func`, as one text: the drawing first, the words after."""
    out = Text()
    title = f"fdes[{func.index}]{f' {name}' if name else ''} · FRE {row.index} of {len(func.rows)} at {row.address:#x}"
    out.append(f"{title}: {rule_notation.rules_text(section, row)}\n", style="bold underline")
    out.append(notation.cfa_words(section, row.cfa) + "\n")
    if row.cfa.kind is Kind.VALUE and not row.cfa.deref:
        out.append_text(_stack_lines(section, row))
    before = func.rows[row.index - 1] if row.index else None
    out.append(notation.row_change(section, before, row) + "\n", style="italic")
    out.append(
        notation.saved_words(section, "RA", row.ra) + "; " + notation.saved_words(section, "FP", row.fp) + "\n\n"
    )
    out.append_text(sparkline(section, func, row.index))
    return out


class FramePicture(VerticalScroll, can_focus=True):
    """The selected row's frame as a picture, scrollable; `←`/`→` move to the previous/next row."""

    ALLOW_MAXIMIZE = True  # `z`: a deep frame on the whole screen (Textual's scroll containers refuse)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous row"),
        Binding("right", "step(1)", "Next row"),
    ]

    class Step(Message):
        """The user asked for the row `delta` rows away (the explorer moves the FRE table's cursor)."""

        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text = Static(id="frame-text", markup=False)
        self.shown: tuple[Function, int] | None = None
        """The function and row index on show."""

    def compose(self) -> ComposeResult:
        yield self._text

    def show(self, func: Function, index: int | None, name: str = "") -> None:
        """Draw row `index` of `func` (its first row when None); say so when it has none."""
        rows = func.rows
        if not rows:
            self.shown = None
            self._text.update(notation.NO_ROWS)
            return
        index = min(index or 0, len(rows) - 1)
        self.shown = (func, index)
        self._text.update(picture(func.section, func, rows[index], name))

    def action_step(self, delta: int) -> None:
        self.post_message(self.Step(delta))
