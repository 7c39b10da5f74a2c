"""Finding the SFrame bytes and the function names inside an ELF file.

pyelftools does the ELF reading. The section is found by name (`.sframe`), or,
when the section headers are gone, through the `PT_GNU_SFRAME` program header,
which pyelftools does not name yet (it reports the bare number).
"""

from __future__ import annotations

import bisect
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, TypeVar

from elftools.elf.constants import SH_FLAGS
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

from sfview.errors import InputError
from sfview.inputs.elffile import (
    BoundedStrings,
    ElfFile,
    build_id,
    names_bound,
    open_elf,
    reading,
    section_bytes,
    section_named,
    segment_bytes,
    segments,
)
from sfview.inputs.plt import plt_symbols
from sfview.inputs.symbols import PackedSymbols, Place, Symbol, SymbolTable

PT_GNU_SFRAME = 0x6474E554
STT_NOTYPE, STT_FUNC, STT_GNU_IFUNC = 0, 2, 10
SHN_UNDEF = 0

Names = tuple[SymbolTable, dict[int, str], dict[int, Place]]


@dataclass(frozen=True, slots=True)
class ElfInfo:
    """What the ELF header says about the file, for the header summary."""

    machine: str
    elf_type: str
    elfclass: int
    little_endian: bool


@dataclass(frozen=True, slots=True)
class ElfSframe:
    data: bytes
    address: int
    file_offset: int
    origin: str
    info: ElfInfo
    elf: ElfFile
    """The file itself, for what comes beside the section (`.eh_frame`, notes, program headers)."""
    names: Callable[[], Names]
    """Reads, when called, the function symbols and (relocatable objects only) maps from
    the section offset of each FDE's start field to the function it will point to, and
    to the section and offset the relocation puts it at."""
    cut: InputError | None = None
    """The file holds fewer bytes than the section or segment says: `data` is what it holds."""
    lost: list[InputError] | None = None
    """What could not be read on the way (the names fill it in when they are read)."""


def read_elf_sframe(stream: BinaryIO) -> ElfSframe:
    """The SFrame bytes of an ELF file, their address, and the function names.

    The section is found by its header; when the section headers are
    unreadable or have no `.sframe`, through `PT_GNU_SFRAME`. What is damaged
    around it costs what depends on it (`lost`), not the section.
    """
    elf = open_elf(stream)
    with reading("the ELF header"):
        info = ElfInfo(elf["e_machine"], elf["e_type"], elf.elfclass, elf.little_endian)
    found, unreadable = _from_section(elf), [e.message for e in (elf.headers_error,) if e is not None]
    if found is None:
        try:
            found = _from_segment(elf)
        except InputError as exc:
            unreadable.append(exc.message)
    if found is None:
        why = "".join(f"; {what}" for what in unreadable) or " (built without -Wa,--gsframe?)"
        raise InputError(f"no .sframe section and no PT_GNU_SFRAME segment{why}")
    data, address, file_offset, origin, cut = found
    lost = elf.lost
    return ElfSframe(data, address, file_offset, origin, info, elf, lambda: _names(elf, origin, lost), cut, lost)


def function_symbols(stream: BinaryIO) -> SymbolTable:
    """The function symbols of any ELF file, one with no SFrame too (an unwinder still names its frames).

    A file pyelftools cannot read gives no names, as a damaged table does.
    """
    try:
        return _symbols(open_elf(stream), [])
    except InputError:
        return SymbolTable([], "unreadable")


def _names(elf: ElfFile, origin: str, lost: list[InputError]) -> Names:
    """Function names, read only when a view needs them (a text dump does not).

    A damaged symbol table costs the names, not the section: it gives none,
    and says why in `lost`.
    """
    try:
        relocatable = elf["e_type"] == "ET_REL"
        symbols = SymbolTable([], "none") if relocatable else _symbols(elf, lost)
        names, places = _relocated_names(elf) if relocatable and origin.startswith(".sframe") else ({}, {})
    except InputError as exc:
        lost.append(InputError(f"no function names: {exc.message}"))
        return SymbolTable([], "unreadable"), {}, {}
    return symbols, names, places


T = TypeVar("T")

Found = tuple[bytes, int, int, str, InputError | None]


def _from_section(elf: ElfFile) -> Found | None:
    section = section_named(elf, ".sframe")
    if section is None:
        return None
    data = section_bytes(section, partial=True)
    offset, size = section["sh_offset"], section["sh_size"]
    compressed = section["sh_flags"] & SH_FLAGS.SHF_COMPRESSED
    cut = None if compressed or len(data) == size else _cut(".sframe section", size, offset, len(data))
    return data, section["sh_addr"], offset, ".sframe section", cut


def _from_segment(elf: ElfFile) -> Found | None:
    for segment in segments(elf):
        if segment["p_type"] in (PT_GNU_SFRAME, "PT_GNU_SFRAME"):
            data = segment_bytes(elf, segment)
            size, offset = segment["p_filesz"], segment["p_offset"]
            cut = None if len(data) == size else _cut("PT_GNU_SFRAME segment", size, offset, len(data))
            return data, segment["p_vaddr"], offset, "PT_GNU_SFRAME segment", cut
    return None


def _cut(what: str, size: int, offset: int, held: int) -> InputError:
    return InputError(
        f"the {what} is cut short: {size} bytes from file offset {offset:#x}, but the file holds only {held}"
        " (shown as far as it goes)"
    )


@dataclass(frozen=True, slots=True)
class _RawSymbol:
    name: str
    value: int
    size: int
    type: int
    shndx: int


def _raw_symbols(elf: ElfFile, table: SymbolTableSection) -> Iterator[_RawSymbol]:
    """Every entry of a symbol table, made as it is asked for (a list of 40,000 was 5 MB at once)."""
    strtab, entries = _entries(elf, table)
    names = BoundedStrings(strtab, "surrogateescape")
    for name_off, value, size, kind, shndx in entries:
        name = names.at(name_off)
        if name is None:
            raise _names_overlap(table, strtab)
        yield _RawSymbol(name, value, size, kind, shndx)


def _names_overlap(table: SymbolTableSection, strtab: bytes) -> InputError:
    """What a symbol table whose names run on into each other past `BoundedStrings`' bound costs."""
    return InputError(
        f"{table.name}: its names run to more than twice its string table's {len(strtab)} bytes together:"
        " they overlap (a string table with its NULs gone)"
    )


def _entries(elf: ElfFile, table: SymbolTableSection) -> tuple[bytes, Iterator[tuple[int, int, int, int, int]]]:
    """A symbol table's string table, and its entries: (name offset, value, size, type, section index).

    pyelftools finds the table and its string table; the entries are unpacked
    here with `struct`, because pyelftools' per-symbol objects take over a
    second for the 40,000 symbols of a big program.
    """
    order = "<" if elf.little_endian else ">"
    layout = "IBBHQQ" if elf.elfclass == 64 else "IIIBBH"
    entry = struct.Struct(order + layout)
    with reading(f"the string table of {table.name} (section {table['sh_link']})"):
        strtab = section_bytes(elf.get_section(table["sh_link"]))
    data = section_bytes(table)
    step = table["sh_entsize"]
    if step < entry.size:
        raise InputError(f"{table.name}: entries of {step} bytes, too small for a symbol ({entry.size})")
    wide = elf.elfclass == 64

    def entries() -> Iterator[tuple[int, int, int, int, int]]:
        for i in range(len(data) // step):
            fields = entry.unpack_from(data, i * step)
            if wide:
                name_off, info, _, shndx, value, size = fields
            else:
                name_off, value, size, info, _, shndx = fields
            yield name_off, value, size, info & 0xF, shndx

    return strtab, entries()


def _symbols(elf: ElfFile, lost: list[InputError]) -> SymbolTable:
    """Function symbols from `.symtab`, else `.dynsym`; code sections for what they leave unnamed.

    A table that cannot be read costs its own names (said in `lost`): the next
    table, and the PLT's, still name what they can.
    """
    sections = [
        Symbol(name, header["sh_addr"], header["sh_size"])
        for _, name, header in elf.section_headers
        if header["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and header["sh_addr"] and name
    ]
    plt = _lossy(lambda: plt_symbols(elf), "the PLT", lost) or []
    for name in (".symtab", ".dynsym"):
        symbols = _lossy(lambda name=name: _function_symbols(elf, name), f"no names from {name}", lost)
        if symbols:
            for entry in plt:
                symbols.add(entry.name, entry.address, entry.size)
            return SymbolTable(symbols, name, sections)
    return SymbolTable(plt, "PLT entries" if plt else "none", sections)


def _function_symbols(elf: ElfFile, name: str) -> PackedSymbols:
    """The defined function symbols of the symbol table `name` (none when there is no such table), their
    names left in the string table."""
    table = section_named(elf, name)
    if not isinstance(table, SymbolTableSection):
        return PackedSymbols()
    strtab, entries = _entries(elf, table)
    symbols = PackedSymbols(strtab)
    end = len(strtab)
    left = names_bound(strtab)
    for name_off, value, size, kind, shndx in entries:
        if kind in (STT_FUNC, STT_GNU_IFUNC) and name_off < end and strtab[name_off] and shndx != SHN_UNDEF:
            stop = strtab.find(b"\0", name_off)
            left -= (stop if stop >= 0 else end) - name_off
            if left < 0:
                raise _names_overlap(table, strtab)
            symbols.add(name_off, value, size)
    return symbols


def _lossy(read: Callable[[], T], what: str, lost: list[InputError]) -> T | None:
    """What `read` gives, or None with why in `lost` (under `what`)."""
    try:
        with reading(what):
            return read()
    except InputError as exc:
        lost.append(exc)
        return None


def relocated_places(elf: ElfFile, target: str) -> dict[int, Place]:
    """For a relocatable object: offset in section `target` of each relocated field → the section
    and offset it will point to (`.eh_frame`'s FDEs, to pair them with `.sframe`'s).
    An `InputError` when the relocations or the symbols they name cannot be read."""
    return _relocated_names(elf, target)[1]


def _relocated_names(elf: ElfFile, target_name: str = ".sframe") -> tuple[dict[int, str], dict[int, Place]]:
    """For a relocatable object: section offset of each relocated field of `target_name` → function
    name, and → the section and offset it will point to.

    In a `.o` file the function start fields are still zero; the relocation
    against each one says which section and offset it will point to, and the
    function symbol defined there names it.
    """
    names: dict[int, str] = {}
    places: dict[int, Place] = {}
    by_place = {}
    for section in elf.iter_sections():
        if isinstance(section, SymbolTableSection):
            for sym in _raw_symbols(elf, section):
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


def _relocations_of(
    elf: ElfFile,
    section: RelocationSection,
    target_name: str,
    by_place: dict[tuple[int, int], str],
    names: dict[int, str],
    places: dict[int, Place],
) -> None:
    """Add what the relocations of one section say about `target_name`'s fields to `names` and `places`."""
    target = elf.get_section(section["sh_info"])
    if target is None or target.name != target_name:
        return
    symtab = elf.get_section(section["sh_link"])
    if not isinstance(symtab, SymbolTableSection):
        raise InputError(f"sh_link {section['sh_link']} is not a symbol table")
    for reloc in section.iter_relocations():
        sym = symtab.get_symbol(reloc["r_info_sym"])
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
    if not isinstance(index, int) or index == SHN_UNDEF:
        return ""
    return next((name for i, name, _ in elf.section_headers if i == index), "")


DEBUG_ROOT = "/usr/lib/debug"
"""Where distributions install separate debug files (`…/.build-id/xx/yyyy.debug`), as gdb's
`debug-file-directory` default."""


def _build_id_hex(elf: ElfFile) -> str | None:
    """The GNU build-id as hex (the one reader, `elffile.build_id`); None without one, or for a file read
    from memory (the vDSO), which has no debug file."""
    if not isinstance(elf, ElfFile):
        return None
    try:
        found = build_id(elf)
    except InputError:  # a damaged note costs the build-id, nothing else
        return None
    return found.hex() if found else None


def debug_file(elf: ElfFile, path: str, root: str = DEBUG_ROOT) -> str | None:
    """The separate debug file of `path`, found as gdb finds it: by build-id under `root`
    (`.build-id/ab/cdef….debug`), else by `.gnu_debuglink` next to the file, in its `.debug/`, or
    under `root` followed by its directory."""
    found = _build_id_hex(elf)
    if found and len(found) > 2:
        candidate = os.path.join(root, ".build-id", found[:2], found[2:] + ".debug")
        if os.path.isfile(candidate):
            return candidate
    link = elf.get_section_by_name(".gnu_debuglink")
    if link is None or link["sh_type"] == "SHT_NOBITS":
        return None
    name = link.data().split(b"\0", 1)[0].decode("utf-8", "replace")
    here = os.path.dirname(os.path.realpath(path))
    for folder in (here, os.path.join(here, ".debug"), root + here):
        candidate = os.path.join(folder, name)
        if name and os.path.isfile(candidate) and os.path.realpath(candidate) != os.path.realpath(path):
            return candidate
    return None


def unwinding_symbols(elf: ElfFile, path: str, table: SymbolTable, root: str = DEBUG_ROOT) -> SymbolTable:
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
            debug = ElfFile(f)
            symtab = debug.get_section_by_name(".symtab")
            if not isinstance(symtab, SymbolTableSection):
                return table
            code = {i for i, sec in enumerate(debug.iter_sections()) if sec["sh_flags"] & SH_FLAGS.SHF_EXECINSTR}
            # functions, and the untyped labels of assembly code (ld.so's `_start`), as gdb's minimal symbols
            symbols = [
                Symbol(sym.name, sym.value, sym.size)
                for sym in _raw_symbols(debug, symtab)
                if sym.name
                and sym.shndx != SHN_UNDEF
                and (sym.type in (STT_FUNC, STT_GNU_IFUNC) or (sym.type == STT_NOTYPE and sym.shndx in code))
            ]
    except Exception:  # an unreadable debug file gives no names, as a damaged table does
        return table
    if not symbols:
        return table
    # A versioned name (`clock_gettime@GLIBC_2.2.5`) where a plain one starts at the same address: the plain one.
    plain = {sym.address for sym in symbols if "@" not in sym.name}
    symbols = _sized([sym for sym in symbols if "@" not in sym.name or sym.address not in plain])
    plt = [sym for sym in table.symbols if sym.name.endswith("@plt")]  # the file's own, already named
    return SymbolTable(symbols + plt, f".symtab of {found}")


def _sized(symbols: list[Symbol]) -> list[Symbol]:
    """Symbols of size 0 (assembly entry points: ld.so's `_start`) made to reach the next symbol, as
    gdb names a PC after the nearest symbol at or before it."""
    starts = sorted({sym.address for sym in symbols})
    out = []
    for sym in symbols:
        if not sym.size:
            i = bisect.bisect_right(starts, sym.address)
            if i < len(starts):
                sym = Symbol(sym.name, sym.address, starts[i] - sym.address)
        out.append(sym)
    return out
