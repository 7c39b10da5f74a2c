"""`HeaderSummary`: what the section is, in two lines at the top of the screen.

On a narrow screen each fact of the file's line falls back to a shorter form,
so that it still fits 80 columns; the section's line is always in its short
form, so that it reads the same at every width. The Structure tab has every
header field in full.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from sfview.app.names import ExplorerNames
from sfview.document import Document
from sfview.errors import InputError
from sfview.output.safe_text import pictured
from sfview.sframe.model import terms
from sfview.sframe.model.section import Section

__all__ = ["HeaderSummary"]


def _header_only(data: bytes) -> str:
    """readelf's header of a section whose rest cannot be read (`output/readelf.py`, imported for it alone)."""
    from sfview.output.readelf import header_only

    return header_only(data)


SEPARATOR = " · "

Fact = tuple[str, str]
"""A fact in full, and as short as it gets ("" when it can go)."""


NAMES_ROOM = 40
"""The room the names' count is given in the file's line (`16 names from .symtab`) whether or not they have been
read: the line's full or short form is then the same while the names load and after (the whole path, then
its base name, was how the header changed under the eye)."""


def _fit(facts: list[Fact], width: int, reserved: int = 0) -> str:
    """The facts in full if they fit `width` with `reserved` cells to spare, else each in its short form."""
    full = SEPARATOR.join(long for long, _ in facts)
    if len(full) + reserved <= width:
        return full
    return SEPARATOR.join(short for _, short in facts if short)


class HeaderSummary(Widget):
    """File, origin, address and size; version, flags, ABI, endianness and counts; any error."""

    def __init__(
        self,
        doc: Document,
        section: Section | None,
        error: InputError | None,
        names: ExplorerNames,
        fde_counts: Callable[[], Fact] | None = None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.doc = doc
        self.section = section
        self.error = error
        self.names = names
        self.problems: int | None = None
        """How many problems the validator found (infos aside); None until it has run."""
        self.fde_counts = fde_counts
        """What the FDE table shows (`9 FDEs · 1 PCMASK · 0 flexible`, `3 of 9 FDEs shown`): given with a section."""

    def render(self) -> Text:
        return self.summary(self.size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As many lines as the summary takes at `width` (which decides full or short facts)."""
        return self._lines(width)

    def _lines(self, width: int) -> int:
        return len(self.summary(width).wrap(self.app.console, max(width, 1)))

    def counts_changed(self) -> None:
        """The FDE table's counts changed: drawn again, and laid out again only if that takes more or
        fewer lines (a layout of the whole screen at every key typed in the filter costs a frame)."""
        self.refresh(layout=self._lines(self.size.width) != self.size.height)

    def summary(self, width: int) -> Text:
        facts, reserved = self._file_facts()
        text = Text(_fit(facts, width, reserved), style="bold")
        if self.section is not None:
            # Always the short forms: a line that changed its words with the width (or the filter's
            # counts) would move under the eye; every field is in full in the Structure tab.
            text.append("\n" + SEPARATOR.join(short for _, short in self._section_facts(self.section) if short))
        elif header := _header_only(self.doc.data):  # what can be read of it: its preamble and header
            facts = [line.strip() for line in header.splitlines()[2:] if line.strip()]
            text.append("\n" + _fit([(fact, fact) for fact in facts], width))
        if self.problems:
            text.append(f"  {self.problems} problem{'s' * (self.problems > 1)} (4: list)", style="bold red")
        if self.error is not None:
            text.append(f"\nError: {self.error}", style="bold red")
        return text

    def _file_facts(self) -> tuple[list[Fact], int]:
        """The file's facts, and the cells to keep for the names' count (`NAMES_ROOM`) beyond them."""
        doc = self.doc
        size = f"{len(doc.data)} bytes at address {doc.address:#x}"
        path = pictured(doc.path)  # a file named with an escape sequence: shown, not obeyed
        facts = [(path, os.path.basename(path)), (doc.origin, doc.origin), (size, size)]
        if doc.file_offset:
            facts.append((f"file offset {doc.file_offset:#x}", ""))
        if doc.elf is None and doc.address == 0:
            # Start addresses count from the section's: at 0, they wrap to 0xffff… below it.
            facts.append(("its load address: --base ADDR", "--base ADDR"))
        if doc.elf is None:
            return facts, 0
        if not self.names.ready:
            return facts, len(SEPARATOR) + NAMES_ROOM
        count = self.names.count()
        facts.append((count, ""))
        return facts, max(NAMES_ROOM - len(count), 0)

    def _section_facts(self, section: Section) -> list[Fact]:
        version = terms.VERSION_NAMES.get(section.version, f"version {section.version}")
        flags = terms.flag_names(section.flags)
        abi = terms.abi_name(section.abi)
        assert self.fde_counts is not None, "a section comes with its FDE table"
        fres = f"{section.num_fres} FREs"
        facts = [
            (version, f"v{section.version}"),
            (" ".join(flags) or "no flags", " ".join(f.removeprefix("SFRAME_F_") for f in flags) or "no flags"),
            (abi, abi),
        ]
        if section.endian not in abi:
            facts.append((f"but the magic says {section.endian}-endian", f"magic: {section.endian}-endian"))
        facts += [self.fde_counts(), (fres, fres)]
        offsets = (("FP", section.fixed_fp_offset), ("RA", section.fixed_ra_offset))
        fixed = [f"{what} c{offset:+d}" for what, offset in offsets if offset]
        if fixed:
            facts.append((f"fixed {', '.join(fixed)}", ", ".join(fixed)))
        return facts
