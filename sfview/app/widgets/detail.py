"""`FieldDetail`: everything about the selected field, for someone learning the format.

Where it is, its raw bytes, its value in decimal, hex (and binary for a
byte of bit fields), what the format says it is (the `doc:` of `sframe.ksy`),
what it means in this section, and for an info byte, every bit field in it:
which bits, their name, their bits as stored, their value and its meaning.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from sfview.app import format_docs
from sfview.app.fields import Bit, Field, FieldTree
from sfview.document import Document

__all__ = ["FieldDetail"]

RAW_BYTES_SHOWN = 64
"""A structure's bytes are listed up to this many; the hex pane shows them all."""

BIT_STYLES = ("bold black on #87afd7", "bold black on #d7af87")
"""Alternating colours that tie each bit field to its bits in the diagram."""


class FieldDetail(VerticalScroll):
    """A scrollable explanation of one field."""

    ALLOW_MAXIMIZE = True  # `z`: a long explanation on the whole screen (Textual's scroll containers refuse)

    def __init__(self, fields: FieldTree, doc: Document, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.fields = fields
        self.doc = doc
        self.field: Field | None = None
        self.consumer_rule: Callable[[Field], str | None] | None = None
        """The chosen consumer's rule that fails at a field's row (`kernel: __read_fre: ...`), if any."""
        self._text = Static(id="detail-text", markup=False)

    def compose(self) -> ComposeResult:
        yield self._text

    def show(self, field: Field) -> bool:
        """Explain `field` (scrolled back to the top).

        Returns whether the explanation's height changed. Only then does it ask
        for a new layout, which repaints the whole screen; moving from field to
        field, the height is often the same.
        """
        self.field = field
        text = self._text
        explanation = self._explain(field)
        width = text.content_region.width
        height = len(self.app.console.render_lines(explanation, self.app.console.options.update_width(width)))
        resized = width == 0 or height != text.content_region.height
        text.update(explanation, layout=resized)
        self.scroll_home(animate=False)
        return resized

    def _explain(self, field: Field) -> RenderableType:
        parts: list[RenderableType] = [Text(field.path or "section", style="bold underline")]
        parts.append(Text(self._where(field), style="dim"))
        parts.append(self._value(field))
        if field.doc:
            parts += [Text(""), Text(self._doc(field.doc))]
        if field.meaning:
            parts += [Text(""), Text.assemble(("Here: ", "bold"), field.meaning)]
        parts += self._problems(field)
        if field.kind == "bits" or field.is_bit_byte:
            parts += [Text(""), *self._bits(field)]
        return Group(*parts)

    def _doc(self, doc: str) -> str:
        """A field's doc as this section's version reads it."""
        return _unwrap(doc, self.fields.section.version)

    def _where(self, field: Field) -> str:
        span = field.span
        size = len(span)
        kind = field.type_name or field.kind
        address = self.fields.section.address + span.start
        where = self.doc.where(span.start)
        return f"{kind} · {size} byte{'s' if size != 1 else ''} at {where}, address {address:#x}"

    def _value(self, field: Field) -> Text:
        data = self.fields.section.data
        raw = data[field.span.start : min(field.span.end, field.span.start + RAW_BYTES_SHOWN)]
        more = "…" if len(field.span) > RAW_BYTES_SHOWN else ""
        text = Text.assemble(("bytes  ", "bold"), raw.hex(" ") + more if raw else "(none)")
        value = field.value
        if field.kind == "bits":
            high, low = field.bits or (0, 0)
            stored = (data[field.span.start] >> low) & ((1 << (high - low + 1)) - 1)
            text.append("\nvalue  ", style="bold")
            text.append(f"{field.display} (bits {high}..{low} = {stored:0{high - low + 1}b})")
        elif isinstance(value, int) and not isinstance(value, bool):
            sign = "-" if value < 0 else ""
            text.append("\nvalue  ", style="bold")
            text.append(f"{value} = {sign}{abs(value):#x}")
            if field.enum:
                text.append(f" → {field.display}")
        elif field.is_bit_byte:
            text.append("\nvalue  ", style="bold")
            text.append(f"{raw[0]} = {raw[0]:#04x} = {raw[0]:08b}")
        return text

    def _problems(self, field: Field) -> list[RenderableType]:
        """The decoding errors of the function the field belongs to, if any."""
        index = field.fde
        if index is None:
            return []
        func = self.fields.section.function(index)
        _ = func.rows  # rows_error is known once the rows have been read
        found = [
            Text.assemble(("\nProblem: ", "bold red"), (str(error), "red"))
            for error in (func.error, func.rows_error)
            if error is not None
        ]
        rule = self.consumer_rule(field) if self.consumer_rule is not None else None
        if rule is not None:
            found.append(Text.assemble(("\nConsumer: ", "bold magenta"), (rule, "magenta")))
        return found

    def _bits(self, field: Field) -> list[RenderableType]:
        """The byte drawn bit by bit, then each bit field: bits, stored value, value, meaning, doc."""
        holder = field.parent if field.kind == "bits" and field.parent else field
        bits = self.fields.bit_breakdown(field)
        byte = self.fields.section.data[holder.span.start]
        numbers = Text.assemble(("bit    ", "bold"))
        stored = Text.assemble(("value  ", "bold"))
        for k, bit in enumerate(bits):
            style = BIT_STYLES[k % 2]
            for position in range(bit.high, bit.low - 1, -1):
                numbers.append(f" {position} ", style=style)
                stored.append(f" {(byte >> position) & 1} ", style=style)
        out: list[RenderableType] = [Text(f"The byte {byte:#04x}, bit by bit:", style="bold"), numbers, stored]
        for k, bit in enumerate(bits):
            out.append(self._bit_entry(bit, BIT_STYLES[k % 2], selected=bit.name == field.name))
        return out

    def _bit_entry(self, bit: Bit, style: str, *, selected: bool) -> RenderableType:
        where = f"bit {bit.high}" if bit.high == bit.low else f"bits {bit.high}..{bit.low}"
        title = Text.assemble((f" {where} ", style))
        title.append(f" {bit.name}", style="bold underline" if selected else "bold")
        title.append(f" = {bit.bits} → {bit.value}")
        body = Text(bit.meaning) if bit.meaning else Text()
        if bit.doc:
            body.append(("\n" if bit.meaning else "") + self._doc(bit.doc), style="dim")
        return Group(Text(""), title, Padding(body, (0, 0, 0, 2)))


def _unwrap(doc: str, version: int) -> str:
    """A `.ksy` doc as flowing paragraphs of plain text (its line breaks are only where the source
    was wrapped), less what it says of other versions than `version`."""
    paragraphs = (format_docs.for_version(paragraph, version) for paragraph in doc.strip().split("\n\n"))
    return "\n\n".join(paragraph for paragraph in paragraphs if paragraph)
