"""Function names for addresses, from whatever symbol table the input had.

`Symbol` and `Place` are named tuples, not dataclasses: `sfview unwind` reads symbols (see `sfview.unwind`).
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from functools import cached_property
from typing import NamedTuple

from sfview.inputs.demangle import demangle


class Symbol(NamedTuple):
    name: str
    address: int
    size: int


class Place(NamedTuple):
    """Where something is in a relocatable object, whose addresses are not known until it is linked:
    a section and an offset in it (`.text+0x40`)."""

    section: str
    offset: int

    def __str__(self) -> str:
        return f"{self.section}+{self.offset:#x}"

    def moved(self, delta: int) -> Place:
        """The place `delta` bytes further on in the same section."""
        return Place(self.section, self.offset + delta)


class PackedSymbols:
    """Symbols held as numbers, each name in the string table it came from and decoded when asked for.

    A `Symbol` for each of a big program's functions, with its name and its
    numbers, is an object each; `check` and `dump --json` need the addresses
    and a name at a time: here a symbol is three numbers in arrays, and its
    share of the string table.
    """

    def __init__(self, strtab: bytes = b"") -> None:
        self.strtab = strtab
        self.addresses: MutableSequence[int] = array("Q")
        self.sizes: MutableSequence[int] = array("Q")
        self.names = array("q")
        """An offset in the string table, or (negative, `~i`) a name of `own_names`."""
        self.preferred = bytearray()
        """1 for a symbol gdb takes over another of its size at its address (`_preferred_last`)."""
        self.own_names: list[str] = []
        """Names not in the string table (PLT entries, symbols given as objects)."""

    def __len__(self) -> int:
        return len(self.names)

    def add(self, name: int | str, address: int, size: int, preferred: bool = False) -> None:
        """A symbol named at offset `name` of the string table, or named `name`; `preferred`: a global or
        weak function (gdb's `mst_text`), which gdb names an address by over a local alias."""
        if isinstance(name, str):
            self.own_names.append(name)
            name = ~(len(self.own_names) - 1)
        try:
            self.addresses.append(address)
            self.sizes.append(size)
        except OverflowError:  # numbers no ELF field holds (given by hand): kept as they are
            self.addresses, self.sizes = list(self.addresses)[: len(self.names)], list(self.sizes)[: len(self.names)]
            self.addresses.append(address)
            self.sizes.append(size)
        self.names.append(name)
        self.preferred.append(preferred)

    def name(self, i: int) -> str:
        ref = self.names[i]
        if ref < 0:
            return self.own_names[~ref]
        end = self.strtab.find(b"\0", ref)
        return self.strtab[ref : end if end >= 0 else len(self.strtab)].decode("utf-8", "surrogateescape")

    def symbol(self, i: int) -> Symbol:
        return Symbol(self.name(i), self.addresses[i], self.sizes[i])

    @classmethod
    def of(cls, symbols: Iterable[Symbol]) -> PackedSymbols:
        packed = cls()
        for symbol in symbols:
            packed.add(symbol.name, symbol.address, symbol.size)
        return packed


def _by_address(packed: PackedSymbols) -> array:
    """The symbols' indexes by address, then the largest first, then as gdb prefers them (`_preferred_last`).

    Sorted by address, each packed with its index into one integer; only
    symbols that share an address are then ordered by size and name (their
    names decoded). A key of three for each symbol would cost many times the packed symbol."""
    addresses = packed.addresses
    keyed = sorted((address << 32) | i for i, address in enumerate(addresses))
    order = array("I", (key & 0xFFFFFFFF for key in keyed))
    del keyed
    shared = [j for j, (a, b) in enumerate(itertools.pairwise(order)) if addresses[a] == addresses[b]]
    for first, last in _runs(shared):
        run = sorted(order[first : last + 2], key=lambda i: (-packed.sizes[i], packed.name(i)))
        order[first : last + 2] = array("I", _preferred_last(run, packed))
    return order


def _preferred_last(run: list[int], packed: PackedSymbols) -> list[int]:
    """Symbols at one address (by size, largest first, then by name) with the one gdb names it by last among
    those of each size: gdb's `lookup_minimal_symbol_by_pc_section` takes the last by name, unless that one is
    local (or an ifunc) and the one just before it is a global or weak function of its size, then that one
    (one step back only: a local alias after another local one wins over a global before both)."""
    out = list(run)
    for end in range(len(out), 1, -1):
        last, before = out[end - 1], out[end - 2]
        same = packed.sizes[last] == packed.sizes[before]
        group_end = end == len(out) or packed.sizes[out[end]] != packed.sizes[last]
        if group_end and same and not packed.preferred[last] and packed.preferred[before]:
            out[end - 2], out[end - 1] = last, before
    return out


def _runs(numbers: list[int]) -> Iterator[tuple[int, int]]:
    """(first, last) of each run of consecutive numbers in a sorted list."""
    for _, run in itertools.groupby(enumerate(numbers), key=lambda pair: pair[1] - pair[0]):
        values = [n for _, n in run]
        yield values[0], values[-1]


class _Ranges:
    """Named address ranges sorted by start, for the innermost one holding an address."""

    def __init__(self, packed: PackedSymbols) -> None:
        self.packed = packed
        self.order = _by_address(packed)
        """Indexes of `packed` in the order of the ranges."""
        starts = (packed.addresses[i] for i in self.order)
        self._starts: Sequence[int] = array("Q", starts) if isinstance(packed.addresses, array) else list(starts)

    def __len__(self) -> int:
        return len(self.order)

    def each(self) -> Iterator[Symbol]:
        """Every range, in order, as a `Symbol` made when it is taken."""
        return (self.packed.symbol(i) for i in self.order)

    def starts_at(self, address: int) -> bool:
        """Whether a range begins exactly at `address`."""
        i = bisect.bisect_left(self._starts, address)
        return i < len(self._starts) and self._starts[i] == address

    def at(self, address: int) -> Symbol | None:
        i = bisect.bisect_right(self._starts, address) - 1
        start = self._starts[i] if i >= 0 else None
        # Among ranges starting at the same place, the smallest that holds it wins.
        while i >= 0 and self._starts[i] == start:
            k = self.order[i]
            if address == start or address < start + self.packed.sizes[k]:
                return self.packed.symbol(k)
            i -= 1
        return None


class SymbolTable:
    """Function symbols sorted by address, for naming PCs and finding names."""

    def __init__(
        self,
        symbols: list[Symbol] | PackedSymbols | None = None,
        origin: str = "none",
        sections: list[Symbol] | None = None,
    ) -> None:
        packed = symbols if isinstance(symbols, PackedSymbols) else PackedSymbols.of(symbols or [])
        self._symbols = _Ranges(packed)
        self._sections = _Ranges(PackedSymbols.of(sections or []))
        self.origin = origin
        """Where the names came from: `.symtab`, `.dynsym`, or `none`."""

    @cached_property
    def symbols(self) -> list[Symbol]:
        """Every symbol, by address (made on first use: looking up names needs none of them)."""
        return list(self._symbols.each())

    def by_address(self) -> Iterator[Symbol]:
        """Every symbol, by address, each made as it is taken: one pass over them (export's `PUBLIC`
        records) then needs no list of them all."""
        return self._symbols.each()

    def __len__(self) -> int:
        return len(self._symbols)

    def copy_into(self, packed: PackedSymbols) -> None:
        """Add every symbol to `packed`, with its preference (a file's own symbols under its debug file's)."""
        mine = self._symbols.packed
        for i in self._symbols.order:
            packed.add(mine.name(i), mine.addresses[i], mine.sizes[i], bool(mine.preferred[i]))

    def at(self, address: int) -> Symbol | None:
        """The function symbol whose range holds `address` (or that starts exactly there)."""
        return self._symbols.at(address)

    def starts_at(self, address: int) -> bool:
        """Whether a function symbol, a PLT entry or a code section begins exactly at `address` (searched in
        the sorted starts: a set of them would cost `check` more memory than the symbols)."""
        return self._symbols.starts_at(address) or self._sections.starts_at(address)

    def name_at(self, address: int, lookup: int | None = None) -> str:
        """`name`, `name+0x12`, else the code section as objdump names it (`.plt+0x10`), else "".

        `lookup`: the address whose symbol names `address`. A return address is
        named after the call before it (`address - 1`), as gdb does: after a call
        that never returns, it points past the end of the calling function.
        """
        at = address if lookup is None else lookup
        sym = self._symbols.at(at) or self._sections.at(at)
        if sym is None:
            return ""
        delta = address - sym.address
        return f"{sym.name}+{delta:#x}" if delta else sym.name

    def quick_name_at(self) -> Callable[[int], str]:
        """`name_at` for a pass over many addresses (`diff` names every function of two sections), most of
        them where a symbol starts: those found in a table of the starts, addresses outside every symbol and
        section answered "" without a search, the rest by `name_at`."""
        packed, order = self._symbols.packed, self._symbols.order
        addresses = packed.addresses
        exact = {addresses[k]: k for k in order}  # where several start at one place, the last, as `at` finds
        spans = [(r.packed.addresses[k], r.packed.addresses[k] + r.packed.sizes[k])
                 for r in (self._symbols, self._sections) for k in r.order]  # fmt: skip
        low = min((lo for lo, _ in spans), default=0)
        high = max((hi for _, hi in spans), default=0)
        name, slow = packed.name, self.name_at

        def name_at(address: int) -> str:
            k = exact.get(address)
            if k is not None:
                return name(k)
            return slow(address) if low <= address <= high else ""

        return name_at

    def section_at(self, address: int) -> str:
        """The code section that holds `address`, as objdump names it (`.plt`, `.text`), or ""."""
        sym = self._sections.at(address)
        return sym.name if sym is not None else ""

    @cached_property
    def by_name(self) -> tuple[list[Symbol], list[str]]:
        """The symbols in name order and their lowercased names, made once for searching."""
        ordered = sorted(self.symbols, key=lambda s: (s.name.lower(), s.name, s.address))
        return ordered, [s.name.lower() for s in ordered]

    @cached_property
    def demangled_names(self) -> list[str]:
        """The names of `by_name`'s symbols as people read them (C++ demangled), lowercased: searched too."""
        return [demangle(s.name).lower() for s in self.by_name[0]]

    @cached_property
    def searched_names(self) -> list[str]:
        """What a search matches for each of `by_name`'s symbols: its lowercased name, and for a C++ name
        its demangled form after a NUL (which no query holds), so that one substring test covers both."""
        lowered, shown = self.by_name[1], self.demangled_names
        return [low if low == human else f"{low}\0{human}" for low, human in zip(lowered, shown, strict=True)]

    @cached_property
    def _by_demangled(self) -> dict[str, Symbol]:
        """A C++ symbol by its demangled name, with and without its parameters (`ns::f(int)`, `ns::f`)."""
        found: dict[str, Symbol] = {}
        for symbol in self.symbols:
            shown = demangle(symbol.name)
            if shown != symbol.name:
                found.setdefault(shown, symbol)
                found.setdefault(shown.split("(")[0], symbol)
        return found

    def named(self, name: str) -> Symbol | None:
        """The symbol called exactly `name` (else the one that is, but for case; else a C++ symbol whose
        demangled name, with or without its parameters, is `name`), or None."""
        return self._named_raw(name) or self._by_demangled.get(name.strip())

    def _named_raw(self, name: str) -> Symbol | None:
        ordered, lowered = self.by_name
        needle = name.lower()
        i = bisect.bisect_left(lowered, needle)
        matches = []
        while i < len(lowered) and lowered[i] == needle:
            matches.append(ordered[i])
            i += 1
        return next((s for s in matches if s.name == name), matches[0] if matches else None)

    def search(self, text: str, limit: int | None = None) -> list[Symbol]:
        """Symbols whose name contains `text` (case-insensitive), exact matches first, then prefixes."""
        return SymbolSearch(self).find(text, limit)[0]


class SymbolSearch:
    """Type-ahead search over a table's names, fast at every keystroke of a big program's 40,000.

    Names are lowercased and sorted once (`SymbolTable.by_name`); a query that
    extends the last one only filters the last one's matches; and only the
    `limit` best are ranked (names an FDE covers first, if told which; then
    exact, prefix, the rest, each in name order), never the whole list.
    """

    def __init__(self, table: SymbolTable, covered: Callable[[int], bool] | None = None) -> None:
        self.table = table
        self.covered = covered
        """Whether an FDE covers an address: such names come first (`frame_dummy`, which none covers,
        was the first match of an empty line); None: every name alike."""
        self._last: tuple[str, list[int]] | None = None

    def find(self, text: str, limit: int | None = None) -> tuple[list[Symbol], int]:
        """The best `limit` matches for `text` (all, when None), and how many match in all."""
        ordered, lowered = self.table.by_name
        shown, searched = self.table.demangled_names, self.table.searched_names
        needle = text.strip().lower()
        if self._last is not None and self._last[0] in needle:
            candidates: list[int] | range = self._last[1]
        else:
            candidates = range(len(lowered))
        hits = [i for i in candidates if needle in searched[i]]
        self._last = (needle, hits)
        want = len(hits) if limit is None else limit
        # covered (exact, prefix, inside), then the rest (exact, prefix, inside)
        groups: list[list[int]] = [[], [], [], [], [], []]
        covered = self.covered
        for i in hits:
            names = (lowered[i], shown[i])
            rank = 0 if needle in names else 1 if any(n.startswith(needle) for n in names) else 2
            group = groups[rank if covered is None or covered(ordered[i].address) else rank + 3]
            if len(group) < want:
                group.append(i)
            if len(groups[0]) + len(groups[1]) >= want:
                break
        best = [i for group in groups for i in group][:want]
        return [ordered[i] for i in best], len(hits)
