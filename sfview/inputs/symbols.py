"""Function names for addresses, from whatever symbol table the input had."""

from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    address: int
    size: int


class _Ranges:
    """Named address ranges sorted by start, for the innermost one holding an address."""

    def __init__(self, items: list[Symbol]) -> None:
        self.items = sorted(items, key=lambda s: (s.address, -s.size, s.name))
        self._starts = [s.address for s in self.items]

    def at(self, address: int) -> Symbol | None:
        i = bisect.bisect_right(self._starts, address) - 1
        start = self._starts[i] if i >= 0 else None
        # Among ranges starting at the same place, the smallest that holds it wins.
        while i >= 0 and self._starts[i] == start:
            item = self.items[i]
            if address == item.address or address < item.address + item.size:
                return item
            i -= 1
        return None


class SymbolTable:
    """Function symbols sorted by address, for naming PCs and finding names."""

    def __init__(
        self, symbols: list[Symbol] | None = None, origin: str = "none", sections: list[Symbol] | None = None
    ) -> None:
        self._symbols = _Ranges(symbols or [])
        self._sections = _Ranges(sections or [])
        self.origin = origin
        """Where the names came from: `.symtab`, `.dynsym`, or `none`."""

    @property
    def symbols(self) -> list[Symbol]:
        return self._symbols.items

    def __len__(self) -> int:
        return len(self.symbols)

    def at(self, address: int) -> Symbol | None:
        """The function symbol whose range holds `address` (or that starts exactly there)."""
        return self._symbols.at(address)

    def name_at(self, address: int) -> str:
        """`name`, `name+0x12`, else the code section as objdump names it (`.plt+0x10`), else ""."""
        sym = self._symbols.at(address) or self._sections.at(address)
        if sym is None:
            return ""
        delta = address - sym.address
        return f"{sym.name}+{delta:#x}" if delta else sym.name

    def search(self, text: str) -> list[Symbol]:
        """Symbols whose name contains `text` (case-insensitive), exact matches first."""
        needle = text.lower()
        hits = [s for s in self.symbols if needle in s.name.lower()]
        return sorted(hits, key=lambda s: (s.name.lower() != needle, not s.name.lower().startswith(needle), s.name))
