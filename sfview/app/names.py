"""Function names for the explorer, which may arrive after the first screen.

Reading the symbol table of a big binary takes a noticeable while: the
explorer reads it in a thread and shows the functions without names until
then, rather than make the first screen wait.

In a relocatable object (`.o`) every function starts at 0 until it is linked:
an address alone cannot say which function it is in. There the relocation on
each FDE's start field says where its function will be (`.text+0x40`), and
`holding` finds the functions an address falls in, section by section.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from sfview.document import Document
from sfview.inputs.demangle import demangle
from sfview.inputs.symbols import Place, Symbol, SymbolTable
from sfview.output.safe_text import pictured
from sfview.sframe.model.section import Function, Section

__all__ = ["ExplorerNames"]


class ExplorerNames:
    """The explorer's function names: `of(func)` is the function's name once `load()` has run, "" before."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.ready = False

    def load(self) -> None:
        """Read the names (in a worker thread for a big section)."""
        _ = len(self.doc.symbols)
        self.ready = True

    def of(self, func: Function) -> str:
        """The function's name as people read it (C++ demangled, its control characters pictured: a name is the
        file's bytes, which the terminal would obey), "" before the names are read."""
        return pictured(demangle(self.doc.function_name(func))) if self.ready else ""

    def listing(self, section: Section, starts: Sequence[int], first: int = 0) -> list[str]:
        """The names of FDEs `first`, `first + 1`... (every function by default) from their start addresses
        (`Overview` gives them all): no `Function` each, which would make a big section's names far slower.
        The same names as `of`."""
        if not self.ready:
            return [""] * len(starts)
        name_at, size = self.doc.name_at, section.fde_size
        offset = section.fde_start + first * size
        return [pictured(demangle(name_at(start, offset + index * size))) for index, start in enumerate(starts)]

    def count(self) -> str:
        """`14 names from .symtab`, `8 names from relocations` (a `.o`), or `no names`, once read."""
        symbols, relocated = self.doc.symbols, self.doc.relocated_names
        if relocated:
            return f"{len(relocated)} names from relocations"
        return f"{len(symbols)} names from {symbols.origin}" if len(symbols) else "no names"

    # Relocatable objects ----------------------------------------------------------

    @property
    def relocatable(self) -> bool:
        """Whether the functions' places come from relocations (a `.o`): addresses alone are ambiguous."""
        return bool(self.doc.relocated_places)

    def place_of(self, func: Function) -> Place | None:
        """Where the relocation on the function's start field puts it (`.text+0x40`), if it has one."""
        return self.doc.relocated_places.get(func.span.start)

    def holding(self, address: int, section: str | None = None) -> list[tuple[Function, Place]]:
        """The functions whose place holds `address` (in `section`, else in any), each with that place."""
        functions = self.doc.section.functions() if self.doc.section is not None else ()
        found = []
        for func in functions:
            place = self.place_of(func)
            if place is None or (section is not None and place.section != section):
                continue
            if place.offset <= address < place.offset + max(func.size, 1):
                found.append((func, Place(place.section, address)))
        return found

    def named(self, name: str) -> Place | None:
        """A function (by the name its relocation gives it) or a code section, as a place."""
        for func_offset, func_name in self.doc.relocated_names.items():
            place = self.doc.relocated_places.get(func_offset)
            if func_name == name and place is not None:
                return place
        sections = {place.section for place in self.doc.relocated_places.values()}
        return Place(name, 0) if name in sections else None

    @cached_property
    def relocated_symbols(self) -> SymbolTable:
        """The functions of a `.o` as symbols (their offset in their section), for go-to-symbol."""
        symbols = []
        for func in self.doc.section.functions() if self.doc.section is not None else ():
            place, name = self.place_of(func), self.doc.function_name(func) if self.ready else ""
            if place is not None and name:
                symbols.append(Symbol(name, place.offset, func.size))
        return SymbolTable(symbols, "relocations")
