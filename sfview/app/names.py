"""Function names for the explorer, which may arrive after the first screen.

Reading the symbol table of a big binary takes a few tenths of a second (0.2 s
for 40,000 functions): the explorer reads it in a thread and shows the
functions without names until then, rather than make the first screen wait.
"""

from __future__ import annotations

from collections.abc import Sequence

from sfview.document import Document
from sfview.sframe.section import Function, Section

__all__ = ["Names"]


class Names:
    """`of(func)` is the function's name once `load()` has run, "" before."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.source = doc.source
        self.ready = False

    def load(self) -> None:
        """Read the names (in a worker thread for a big section)."""
        _ = len(self.source.symbols)
        self.ready = True

    def of(self, func: Function) -> str:
        return self.doc.function_name(func) if self.ready else ""

    def listing(self, section: Section, starts: Sequence[int]) -> list[str]:
        """Every function's name by FDE index, from its start address (`Overview` gives them all):
        no `Function` each, so that 40,000 names take tens of milliseconds, not seconds."""
        if not self.ready:
            return [""] * len(starts)
        name_at, first, size = self.source.name_at, section.fde_start, section.fde_size
        return [name_at(start, first + index * size) for index, start in enumerate(starts)]

    def count(self) -> str:
        """`14 names from .symtab`, `8 names from relocations` (a `.o`), or `no names`, once read."""
        symbols, relocated = self.source.symbols, self.source.relocated_names
        if relocated:
            return f"{len(relocated)} names from relocations"
        return f"{len(symbols)} names from {symbols.origin}" if len(symbols) else "no names"
