"""Function names for addresses, from whatever symbol table the input had."""

from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    address: int
    size: int


class SymbolTable:
    """Function symbols sorted by address, for naming PCs and finding names."""

    def __init__(self, symbols: list[Symbol] | None = None, origin: str = "none") -> None:
        self.symbols = sorted(symbols or [], key=lambda s: (s.address, -s.size, s.name))
        self._starts = [s.address for s in self.symbols]
        self.origin = origin
        """Where the names came from: `.symtab`, `.dynsym`, relocations, or `none`."""

    def __len__(self) -> int:
        return len(self.symbols)

    def at(self, address: int) -> Symbol | None:
        """The symbol whose range holds `address` (or that starts exactly there)."""
        i = bisect.bisect_right(self._starts, address) - 1
        while i >= 0 and self.symbols[i].address == self._starts[i]:
            sym = self.symbols[i]
            if sym.address == address or address < sym.address + sym.size:
                return sym
            if i == 0 or self._starts[i - 1] != sym.address:
                break
            i -= 1
        return None

    def name_at(self, address: int) -> str:
        """`name`, `name+0x12`, or "" when no symbol covers `address`."""
        sym = self.at(address)
        if sym is None:
            return ""
        delta = address - sym.address
        return f"{sym.name}+{delta:#x}" if delta else sym.name

    def search(self, text: str) -> list[Symbol]:
        """Symbols whose name contains `text` (case-insensitive), exact matches first."""
        needle = text.lower()
        hits = [s for s in self.symbols if needle in s.name.lower()]
        return sorted(hits, key=lambda s: (s.name.lower() != needle, not s.name.lower().startswith(needle), s.name))
