"""The function names of an ELF file: its symbol tables and PLT, a `.o`'s relocations, separate debug files.

Symbol tables are unpacked with `struct` from `image.ElfImage`; only a
relocatable object's relocations are read by pyelftools (`pyelftools_view`).
A damaged table costs the names it holds, never the SFrame section.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, TypeVar

from sfview import quantity
from sfview.errors import InputError
from sfview.inputs import limits
from sfview.inputs.boundary import BoundedStrings, check_relocations, names_bound, reading
from sfview.inputs.elf.image import (
    SHF_EXECINSTR,
    SHT_DYNSYM,
    SHT_NOBITS,
    SHT_STRTAB,
    SHT_SYMTAB,
    ElfImage,
    SectionHeader,
    open_image,
)
from sfview.inputs.plt import plt_symbols
from sfview.inputs.symbols import PackedSymbols, Place, Symbol, SymbolTable

if TYPE_CHECKING:
    from elftools.elf.relocation import RelocationSection

    from sfview.inputs.elf.pyelftools_view import ElfFile

SHT_SUNW_LDYNSYM = 0x6FFFFFF3
SYMBOL_TABLES = (SHT_SYMTAB, SHT_DYNSYM, SHT_SUNW_LDYNSYM)
"""The section types pyelftools reads as symbol tables."""
STT_NOTYPE, STT_FUNC, STT_GNU_IFUNC = 0, 2, 10
STB_GLOBAL, STB_WEAK = 1, 2
SHN_UNDEF = 0


class FunctionNames(NamedTuple):
    """What names the functions of a file's SFrame section."""

    symbols: SymbolTable
    """The function symbols (none for a relocatable object, whose functions all start at 0)."""
    relocated_names: dict[int, str]
    """Relocatable objects: section offset of an FDE's start field → the function it will point to."""
    relocated_places: dict[int, Place]
    """Relocatable objects: section offset of an FDE's start field → where its function is
    (`.text+0x40`): until the object is linked, every function starts at 0."""


def read_names(elf: ElfImage, origin: str, lost: list[InputError]) -> FunctionNames:
    """The function names of the file whose SFrame bytes came from `origin`, read only when a view
    needs them (a text dump does not).

    A damaged symbol table costs the names, not the section: it gives none,
    and says why in `lost`.
    """
    try:
        relocatable = elf.relocatable
        symbols = SymbolTable([], "none") if relocatable else _symbols(elf, lost)
        names, places = _relocated_names(elf) if relocatable and origin.startswith(".sframe") else ({}, {})
    except InputError as exc:
        lost.append(InputError(f"no function names: {exc.message}"))
        return FunctionNames(SymbolTable([], "unreadable"), {}, {})
    return FunctionNames(symbols, names, places)


def function_symbols(stream: BinaryIO) -> SymbolTable:
    """The function symbols of any ELF file, one with no SFrame too (an unwinder still names its frames).

    A file that cannot be read gives no names, as a damaged table does.
    """
    try:
        return image_symbols(open_image(stream))
    except InputError:
        return SymbolTable([], "unreadable")


def image_symbols(elf: ElfImage) -> SymbolTable:
    """The function symbols of an ELF image already read (the vDSO, a view of a core's memory, not copied
    to be read as a stream), as `function_symbols` gives them."""
    try:
        return _symbols(elf, [])
    except InputError:
        return SymbolTable([], "unreadable")


T = TypeVar("T")


class _RawSymbol(NamedTuple):
    name: str
    value: int
    size: int
    type: int
    bind: int
    shndx: int


def _raw_symbols(elf: ElfImage, table: SectionHeader) -> Iterator[_RawSymbol]:
    """Every entry of a symbol table, made as it is asked for (a list of them all would be held at once)."""
    strtab, entries = _entries(elf, table)
    names = BoundedStrings(strtab, "surrogateescape")
    for name_off, value, size, kind, bind, shndx in entries:
        name = names.at(name_off)
        if name is None:
            raise _names_overlap(table, strtab)
        yield _RawSymbol(name, value, size, kind, bind, shndx)


def _names_overlap(table: SectionHeader, strtab: bytes) -> InputError:
    """What a symbol table whose names run on into each other past `BoundedStrings`' bound costs."""
    return InputError(
        f"{table.name}: its names run to more than twice its string table's {len(strtab)} bytes together:"
        " they overlap (a string table with its NULs gone)"
    )


def _symbol_table(elf: ElfImage, name: str) -> SectionHeader | None:
    """The symbol table called `name`, None when there is none (or the section of that name is not
    one); an `InputError` where pyelftools would refuse to make a table of its header."""
    table = elf.section(name)
    if table is None or table.type not in SYMBOL_TABLES:
        return None
    with reading(f"the {name} section header"):
        _check_symbol_table(elf, table)
    return table


def _check_symbol_table(elf: ElfImage, table: SectionHeader) -> None:
    """What pyelftools checks as it makes a symbol table of a header (its words)."""
    strings = elf.section_at(table.link)
    if strings is None:
        raise InputError(f"no section {table.link} for its string table (the file has {len(elf.sections)})")
    if strings.type != SHT_STRTAB:
        raise InputError(f"its string table, section {table.link}, is not a string table (type {strings.type})")
    if table.entsize <= 0:
        raise InputError(f"Expected entry size of section {table.name!r} to be > 0")
    if table.size % table.entsize:
        raise InputError(f"Expected section size to be a multiple of entry size in section {table.name!r}")


def _entries(elf: ElfImage, table: SectionHeader) -> tuple[bytes, Iterator[tuple[int, int, int, int, int, int]]]:
    """A symbol table's string table, and its entries: (name offset, value, size, type, binding, section
    index).

    Unpacked with `struct`: pyelftools' per-symbol objects take over a second
    for the 40,000 symbols of a big program.
    """
    layout = "IBBHQQ" if elf.elfclass == 64 else "IIIBBH"
    entry = struct.Struct(elf.order + layout)
    with reading(f"the string table of {table.name} (section {table.link})"):
        strings = elf.section_at(table.link)
        if strings is None:
            raise InputError(f"no section {table.link}")
        strtab = elf.section_bytes(strings)
    data = elf.section_bytes(table)
    step = table.entsize
    if step < entry.size:
        raise InputError(f"{table.name}: entries of {step} bytes, too small for a symbol ({entry.size})")
    wide = elf.elfclass == 64

    def entries() -> Iterator[tuple[int, int, int, int, int, int]]:
        for i in range(len(data) // step):
            fields = entry.unpack_from(data, i * step)
            if wide:
                name_off, info, _, shndx, value, size = fields
            else:
                name_off, value, size, info, _, shndx = fields
            yield name_off, value, size, info & 0xF, info >> 4, shndx

    return strtab, entries()


def _symbols(elf: ElfImage, lost: list[InputError]) -> SymbolTable:
    """Function symbols from `.symtab`, else `.dynsym`; code sections for what they leave unnamed.

    A table that cannot be read costs its own names (said in `lost`): the next
    table, and the PLT's, still name what they can.
    """
    sections = [
        Symbol(header.name, header.addr, header.size)
        for header in elf.sections
        if header.flags & SHF_EXECINSTR and header.addr and header.name
    ]
    plt = _lossy(lambda: plt_symbols(elf), "the PLT", lost) or []
    for name in (".symtab", ".dynsym"):
        symbols = _lossy(lambda name=name: _function_symbols(elf, name, lost), f"no names from {name}", lost)
        if symbols:
            for entry in plt:
                symbols.add(entry.name, entry.address, entry.size)
            return SymbolTable(symbols, name, sections)
    return SymbolTable(plt, "PLT entries" if plt else "none", sections)


def _function_symbols(elf: ElfImage, name: str, lost: list[InputError]) -> PackedSymbols:
    """The defined function symbols of the symbol table `name` (none when there is no such table), their
    names left in the string table.

    Symbols whose name offset is past the string table (readelf's `<corrupt>`)
    are unnamed: said in `lost`, once a table, the first by index and offset.
    """
    table = _symbol_table(elf, name)
    if table is None:
        return PackedSymbols()
    strtab, entries = _entries(elf, table)
    symbols = PackedSymbols(strtab)
    end = len(strtab)
    left = names_bound(strtab)
    first: tuple[int, int] | None = None
    corrupt = 0
    for index, (name_off, value, size, kind, bind, shndx) in enumerate(entries):
        if name_off >= end:
            first, corrupt = first or (index, name_off), corrupt + 1
            continue
        if kind in (STT_FUNC, STT_GNU_IFUNC) and strtab[name_off] and shndx != SHN_UNDEF:
            stop = strtab.find(b"\0", name_off)
            left -= (stop if stop >= 0 else end) - name_off
            if left < 0:
                raise _names_overlap(table, strtab)
            symbols.add(name_off, value, size, _gdb_text(kind, bind))
    if first is not None:
        lost.append(_names_past(table, end, first, corrupt))
    return symbols


def _names_past(table: SectionHeader, end: int, first: tuple[int, int], count: int) -> InputError:
    """What symbols whose names lie past their string table cost: their names, said once a table."""
    index, offset = first
    others = f" (so are the names of {quantity(count - 1, 'more symbol')})" if count > 1 else ""
    return InputError(
        f"{table.name}: symbol {index}'s name is at offset {offset:#x}, past its string table's {end} bytes{others}:"
        " left unnamed (readelf shows <corrupt>)"
    )


def _lossy(read: Callable[[], T], what: str, lost: list[InputError]) -> T | None:
    """What `read` gives, or None with why in `lost` (under `what`)."""
    try:
        with reading(what):
            return read()
    except InputError as exc:
        lost.append(exc)
        return None


def relocated_places(image: ElfImage, view: ElfFile, target: str) -> dict[int, Place]:
    """For a relocatable object (`image`, and pyelftools' `view` of it): offset in section `target` of
    each relocated field → the section and offset it will point to (`.eh_frame`'s FDEs, to pair them
    with `.sframe`'s). An `InputError` when the relocations or the symbols they name cannot be read."""
    return _relocations(image, view, target)[1]


def _relocated_names(image: ElfImage) -> tuple[dict[int, str], dict[int, Place]]:
    """`_relocations` of `.sframe`, read through a pyelftools view opened for them."""
    from sfview.inputs.elf.pyelftools_view import open_view  # pyelftools reads a `.o`'s relocations

    return _relocations(image, open_view(image), ".sframe")


def _relocations(image: ElfImage, elf: ElfFile, target_name: str) -> tuple[dict[int, str], dict[int, Place]]:
    """For a relocatable object: section offset of each relocated field of `target_name` → function
    name, and → the section and offset it will point to.

    In a `.o` file the function start fields are still zero; the relocation
    against each one says which section and offset it will point to, and the
    function symbol defined there names it.
    """
    from elftools.elf.relocation import RelocationSection  # pyelftools reads a `.o`'s relocations

    names: dict[int, str] = {}
    places: dict[int, Place] = {}
    by_place = {}
    for table in _symbol_tables(image):
        for sym in _raw_symbols(image, table):
            if sym.type in (STT_FUNC, STT_GNU_IFUNC) and sym.shndx != SHN_UNDEF:
                by_place[(sym.shndx, sym.value)] = sym.name
    unreadable = []
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection):
            continue
        try:
            with reading(f"the relocations in {section.name or 'an unnamed section'}"):
                _relocations_of(elf, section, target_name, by_place, names, places)
        except InputError as exc:  # another section's relocations (`.rela.text`) cost nothing here
            unreadable.append(exc)
    if unreadable and not places:
        raise unreadable[0]
    return names, places


def _symbol_tables(elf: ElfImage) -> Iterator[SectionHeader]:
    """Every symbol table of the file pyelftools would make one of (as its `iter_sections` skips the others)."""
    for table in elf.sections:
        if table.type in SYMBOL_TABLES:
            try:
                _check_symbol_table(elf, table)
            except InputError:
                continue
            yield table


def _relocations_of(
    elf: ElfFile,
    section: RelocationSection,
    target_name: str,
    by_place: dict[tuple[int, int], str],
    names: dict[int, str],
    places: dict[int, Place],
) -> None:
    """Add what the relocations of one section say about `target_name`'s fields to `names` and `places`."""
    from elftools.elf.sections import SymbolTableSection  # as `_relocations`

    target = elf.get_section(section["sh_info"])
    if target is None or target.name != target_name:
        return
    symtab = elf.get_section(section["sh_link"])
    if not isinstance(symtab, SymbolTableSection):
        raise InputError(f"sh_link {section['sh_link']} is not a symbol table")
    check_relocations(section.num_relocations(), target_name, target["sh_size"])
    symbols: dict[int, Any] = {}  # most relocations name one of a few symbols (`.text`'s section symbol)
    count = symtab.num_symbols()
    for index, reloc in enumerate(section.iter_relocations()):
        number = reloc["r_info_sym"]
        sym = symbols.get(number)
        if sym is None:
            if number >= count:  # pyelftools would say "expected 4, found 0", neither which nor where
                at = index * section["sh_entsize"]
                said = f"names symbol {number}: {symtab.name} has {count}"
                raise InputError(f"relocation {index} (offset {at:#x}) {said}")
            sym = symbols[number] = symtab.get_symbol(number)
        addend = reloc["r_addend"] if reloc.is_RELA() else 0
        if sym["st_info"]["type"] == "STT_SECTION":
            name = by_place.get((sym["st_shndx"], addend))
            offset = addend
        else:
            name = sym.name if not addend else f"{sym.name}{addend:+#x}"
            offset = sym["st_value"] + addend
        if name:
            names[reloc["r_offset"]] = name
        target_section = _section_name(elf, sym["st_shndx"])
        if target_section:
            places[reloc["r_offset"]] = Place(target_section, offset)


def _section_name(elf: ElfFile, index: int | str) -> str:
    """The name of section `index` (a symbol's `st_shndx`), "" for an undefined or special one."""
    headers = elf.section_headers  # in order of index: the one asked for found at its place, not looked for
    if not isinstance(index, int) or not 0 < index < len(headers):
        return ""
    return headers[index].name


DEBUG_ROOT = "/usr/lib/debug"
"""Where distributions install separate debug files (`…/.build-id/xx/yyyy.debug`), as gdb's
`debug-file-directory` default."""


def _build_id_hex(elf: ElfImage) -> str | None:
    """The GNU build-id as hex (the one reader, `ElfImage.build_id`); None without one, or for a file read
    from memory (the vDSO), which has no debug file."""
    if elf.stream is None:
        return None
    try:
        found = elf.build_id()
    except InputError:  # a damaged note costs the build-id, nothing else
        return None
    return found.hex() if found else None


def debug_file(elf: ElfImage, path: str, root: str = DEBUG_ROOT) -> str | None:
    """The separate debug file of `path`, found as gdb finds it: by build-id under `root`
    (`.build-id/ab/cdef….debug`), else by `.gnu_debuglink` next to the file, in its `.debug/`, or
    under `root` followed by its directory. As gdb, a file is taken only when it is the one asked for:
    the same build-id, or the CRC `.gnu_debuglink` records (another program's debug file would name
    every frame wrongly)."""
    found = _build_id_hex(elf)
    if found and len(found) > 2:
        candidate = os.path.join(root, ".build-id", found[:2], found[2:] + ".debug")
        if os.path.isfile(candidate) and _build_id_of(candidate) == found:
            return candidate
    link = elf.section(".gnu_debuglink")
    if link is None or link.type == SHT_NOBITS:
        return None
    data = elf.section_bytes(link, partial=True)
    end = data.find(b"\0")  # what its first NUL ends (bytes, or an inflated section's mapping: no `split`)
    if end <= 0:
        return None
    name = data[:end].decode("utf-8", "replace")
    crc_at = (end + 4) & ~3  # the name, its NUL, padding to 4 bytes, then the CRC
    if len(data) < crc_at + 4:
        return None
    crc = int.from_bytes(data[crc_at : crc_at + 4], "little" if elf.little_endian else "big")
    here = os.path.dirname(os.path.realpath(path))
    for folder in (here, os.path.join(here, ".debug"), root + here):
        candidate = os.path.join(folder, name)
        if (
            os.path.isfile(candidate)
            and os.path.realpath(candidate) != os.path.realpath(path)
            and _crc_of(candidate) == crc
        ):
            return candidate
    return None


def _crc_of(path: str) -> int | None:
    """The CRC-32 of the file at `path` (gdb's `gnu_debuglink_crc32` is zlib's), or None for a file that cannot
    be read, is not ELF or is larger than `--max-size`.

    Read a MiB at a time, once for each file as it is (a module's names and its debug information both ask).
    All its bytes are read, so a larger debug file is found by build-id, or with `--max-size` raised."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return _crc(os.path.realpath(path), found.st_size, found.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _crc(path: str, size: int, _mtime_ns: int) -> int | None:
    """`_crc_of`'s reading, kept by the file's path, size and time of change."""
    if size > limits.max_size:
        return None
    crc = 0
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return None
            f.seek(0)
            while chunk := f.read(1 << 20):
                crc = zlib.crc32(chunk, crc)
    except OSError:
        return None
    return crc


def _build_id_of(path: str) -> str | None:
    """The build-id (hex) of the ELF file at `path`; None when it has none or cannot be read."""
    try:
        with open(path, "rb") as f:
            return _build_id_hex(ElfImage.of(f))
    except (OSError, InputError):
        return None


def unwinding_symbols(elf: ElfImage, path: str, table: SymbolTable, root: str = DEBUG_ROOT) -> SymbolTable:
    """The names a debugger gives a file's PCs: its `.symtab`; without one (a distribution's library,
    a stripped program), its separate debug file's `.symtab` with the file's PLT entries; else `table`
    (`.dynsym`, or nothing)."""
    if table.origin == ".symtab":
        return table
    found = debug_file(elf, path, root)
    if found is None:
        return table
    try:
        with open(found, "rb") as f:
            debug = ElfImage.of(f)
            symtab = _symbol_table(debug, ".symtab")
            if symtab is None:
                return table
            code = {header.index for header in debug.sections if header.flags & SHF_EXECINSTR}
            # functions, and the untyped labels of assembly code (ld.so's `_start`), as gdb's minimal symbols
            raw = [
                sym
                for sym in _raw_symbols(debug, symtab)
                if sym.name
                and sym.shndx != SHN_UNDEF
                and (sym.type in (STT_FUNC, STT_GNU_IFUNC) or (sym.type == STT_NOTYPE and sym.shndx in code))
            ]
    except Exception:  # an unreadable debug file gives no names, as a damaged table does
        return table
    if not raw:
        return table
    # A versioned name (`clock_gettime@GLIBC_2.2.5`) where a plain one starts at the same address: the plain one.
    plain = {sym.value for sym in raw if "@" not in sym.name}
    raw = [sym for sym in raw if "@" not in sym.name or sym.value not in plain]
    # gdb looks in the file's own symbols (`.dynsym`, its PLT) before its debug file's: where both name an
    # address, the file's own names win
    own = {sym.address for sym in table.symbols}
    symbols = PackedSymbols()
    for sym, size in zip(raw, _sizes(raw), strict=True):
        if sym.value not in own:
            symbols.add(sym.name, sym.value, size, _gdb_text(sym.type, sym.bind))
    table.copy_into(symbols)
    return SymbolTable(symbols, f".symtab of {found}")


def _gdb_text(kind: int, bind: int) -> bool:
    """Whether gdb makes a function symbol an `mst_text` minimal symbol (a global or weak function, not an
    ifunc), which it names an address by over a local alias of the same size (`PackedSymbols.add`)."""
    return kind != STT_GNU_IFUNC and bind in (STB_GLOBAL, STB_WEAK)


def _sizes(symbols: list[_RawSymbol]) -> list[int]:
    """The symbols' sizes, those of size 0 (assembly entry points: ld.so's `_start`) made to reach the next
    symbol, as gdb names a PC after the nearest symbol at or before it."""
    starts = sorted({sym.value for sym in symbols})
    out = []
    for sym in symbols:
        size = sym.size
        if not size:
            i = bisect.bisect_right(starts, sym.value)
            if i < len(starts):
                size = starts[i] - sym.value
        out.append(size)
    return out


class MinimalSymbols:
    """A file's symbols by name as gdb's minimal symbols find them (`lookup_minimal_symbol`), for the functions
    a call site names: its `.dynsym`, its `.symtab` and its separate debug file's, each defined symbol under
    its name and a versioned one (`pthread_kill@GLIBC_2.2.5`, `pthread_kill@@GLIBC_2.34`) under its name
    without the version too. Of a name's global symbols gdb's hash chain gives the one of highest address (its
    symbols installed in address order, each chain's newest first), of its local ones the lowest. Read whole
    when a name is first asked for."""

    def __init__(self, elf: ElfImage, path: str, root: str = DEBUG_ROOT) -> None:
        self.elf, self.path, self.root = elf, path, root
        self._found: tuple[dict[str, int], dict[str, int]] | None = None

    def named(self, name: str) -> tuple[int | None, int | None]:
        """The address gdb finds for `name` among the file's global symbols, and among its local ones."""
        if self._found is None:
            self._found = self._read()
        external, local = self._found
        return external.get(name), local.get(name)

    def _read(self) -> tuple[dict[str, int], dict[str, int]]:
        external: dict[str, int] = {}
        local: dict[str, int] = {}
        try:
            files = [self.elf]
            found = debug_file(self.elf, self.path, self.root)
            with open(found, "rb") if found is not None else contextlib.nullcontext() as f:
                if f is not None:
                    files.append(ElfImage.of(f))
                for elf in files:
                    for table in (_symbol_table(elf, ".dynsym"), _symbol_table(elf, ".symtab")):
                        if table is not None:
                            _index(_raw_symbols(elf, table), external, local)
        except Exception:  # an unreadable table names nothing, as a damaged table does
            pass
        return external, local


def _index(symbols: Iterator[_RawSymbol], external: dict[str, int], local: dict[str, int]) -> None:
    for sym in symbols:
        if not sym.name or sym.shndx == SHN_UNDEF:
            continue
        for name in {sym.name, sym.name.split("@", 1)[0]}:
            if sym.bind in (STB_GLOBAL, STB_WEAK):
                external[name] = max(external.get(name, sym.value), sym.value)
            else:
                local[name] = min(local.get(name, sym.value), sym.value)
