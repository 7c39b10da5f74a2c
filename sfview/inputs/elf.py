"""Finding the SFrame bytes and the function names inside an ELF file.

pyelftools does the ELF reading. The section is found by name (`.sframe`), or,
when the section headers are gone, through the `PT_GNU_SFRAME` program header,
which pyelftools does not name yet (it reports the bare number).
"""

from __future__ import annotations

import bisect
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from elftools.common.exceptions import ELFError
from elftools.elf.constants import P_FLAGS, SH_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

from sfview.errors import InputError
from sfview.inputs.plt import plt_symbols
from sfview.inputs.symbols import Place, Symbol, SymbolTable

PT_GNU_SFRAME = 0x6474E554
MAX_INFLATED = 64 << 20
"""The most a compressed `.sframe` may inflate to: far beyond any real section, far below what a forged
compression header can ask for (a 1 MB file claiming 1 GB)."""
STT_NOTYPE, STT_FUNC, STT_GNU_IFUNC = 0, 2, 10
SHN_UNDEF = 0


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
    elf: ELFFile
    """The file itself, for what comes beside the section (`.eh_frame`, notes, program headers)."""
    names: Callable[[], tuple[SymbolTable, dict[int, str], dict[int, Place]]]
    """Reads, when called, the function symbols and (relocatable objects only) maps from
    the section offset of each FDE's start field to the function it will point to, and
    to the section and offset the relocation puts it at."""


def executable_ranges(elf: ELFFile) -> list[tuple[int, int]]:
    """The address ranges [start, end) the program headers load executable; none for an object file."""
    return [
        (seg["p_vaddr"], seg["p_vaddr"] + seg["p_memsz"])
        for seg in elf.iter_segments()
        if seg["p_type"] == "PT_LOAD" and seg["p_flags"] & P_FLAGS.PF_X
    ]


def read_elf_sframe(stream: BinaryIO) -> ElfSframe:
    """The SFrame bytes of an ELF file, their address, and the function names.

    pyelftools raises many kinds of exceptions on a damaged file (its own, and
    struct or construct errors from deep inside); all become an `InputError`.
    """
    try:
        elf = ELFFile(stream)
        info = ElfInfo(elf["e_machine"], elf["e_type"], elf.elfclass, elf.little_endian)
        found = _from_section(elf) or _from_segment(elf)
        if found is None:
            raise InputError("no .sframe section and no PT_GNU_SFRAME segment (built without -Wa,--gsframe?)")
        data, address, file_offset, origin = found
    except InputError:
        raise
    except Exception as exc:  # pyelftools has no single error type: ELFError, struct and construct errors...
        raise InputError(f"not a readable ELF file: {exc or type(exc).__name__}") from None
    return ElfSframe(data, address, file_offset, origin, info, elf, lambda: _names(elf, origin))


def function_symbols(stream: BinaryIO) -> SymbolTable:
    """The function symbols of any ELF file, one with no SFrame too (an unwinder still names its frames).

    A file pyelftools cannot read gives no names, as a damaged table does.
    """
    try:
        return _symbols(ELFFile(stream))
    except Exception:  # whatever pyelftools or struct raise on a damaged file
        return SymbolTable([], "unreadable")


def _names(elf: ELFFile, origin: str) -> tuple[SymbolTable, dict[int, str], dict[int, Place]]:
    """Function names, read only when a view needs them (a text dump does not).

    A damaged symbol table costs the names, not the section: it gives none.
    """
    try:
        relocatable = elf["e_type"] == "ET_REL"
        symbols = SymbolTable([], "none") if relocatable else _symbols(elf)
        names, places = _relocated_names(elf) if relocatable and origin.startswith(".sframe") else ({}, {})
    except Exception:  # as above: whatever pyelftools or struct raise on a damaged table
        return SymbolTable([], "unreadable"), {}, {}
    return symbols, names, places


def _from_section(elf: ELFFile) -> tuple[bytes, int, int, str] | None:
    section = elf.get_section_by_name(".sframe")
    if section is None:
        return None
    if section["sh_type"] == "SHT_NOBITS":
        raise InputError("the .sframe section has no contents here (SHT_NOBITS, as in a separate debug file)")
    if section.compressed and section.data_size > MAX_INFLATED:
        raise InputError(
            f"the .sframe section is compressed and says it inflates to {section.data_size} bytes; sfview reads "
            f"at most {MAX_INFLATED} (a section for 40,000 functions takes about 1 MB)"
        )
    try:
        data = section.data()
    except (zlib.error, ELFError) as exc:
        raise InputError(f"the .sframe section is compressed and cannot be inflated: {exc}") from None
    size = section.data_size if section.compressed else section["sh_size"]
    data = _whole(".sframe section", data, size, section["sh_offset"])
    return data, section["sh_addr"], section["sh_offset"], ".sframe section"


def _from_segment(elf: ELFFile) -> tuple[bytes, int, int, str] | None:
    for segment in elf.iter_segments():
        if segment["p_type"] in (PT_GNU_SFRAME, "PT_GNU_SFRAME"):
            data = _whole("PT_GNU_SFRAME segment", segment.data(), segment["p_filesz"], segment["p_offset"])
            return data, segment["p_vaddr"], segment["p_offset"], "PT_GNU_SFRAME segment"
    return None


def _whole(what: str, data: bytes, size: int, offset: int) -> bytes:
    """`data` if the file held all `size` bytes of it, else an error saying how much it held."""
    if len(data) != size:
        raise InputError(
            f"the {what} is cut short: {size} bytes from file offset {offset:#x}, but the file holds only {len(data)}"
        )
    return data


@dataclass(frozen=True, slots=True)
class _RawSymbol:
    name: str
    value: int
    size: int
    type: int
    shndx: int


def _raw_symbols(elf: ELFFile, table: SymbolTableSection) -> list[_RawSymbol]:
    """Every entry of a symbol table.

    pyelftools finds the table and its string table; the entries are unpacked
    here with `struct`, because pyelftools' per-symbol objects take over a
    second for the 40,000 symbols of a big program.
    """
    order = "<" if elf.little_endian else ">"
    layout = "IBBHQQ" if elf.elfclass == 64 else "IIIBBH"
    entry = struct.Struct(order + layout)
    strtab = elf.get_section(table["sh_link"]).data()
    data = table.data()
    count = len(data) // table["sh_entsize"] if table["sh_entsize"] else 0
    out = []
    for i in range(count):
        fields = entry.unpack_from(data, i * table["sh_entsize"])
        if elf.elfclass == 64:
            name_off, info, _, shndx, value, size = fields
        else:
            name_off, value, size, info, _, shndx = fields
        end = strtab.find(b"\0", name_off)
        name = strtab[name_off : end if end >= 0 else len(strtab)].decode("utf-8", "replace")
        out.append(_RawSymbol(name, value, size, info & 0xF, shndx))
    return out


def _symbols(elf: ELFFile) -> SymbolTable:
    """Function symbols from `.symtab`, else `.dynsym`; code sections for what they leave unnamed."""
    sections = [
        Symbol(sec.name, sec["sh_addr"], sec["sh_size"])
        for sec in elf.iter_sections()
        if sec["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and sec["sh_addr"] and sec.name
    ]
    for name in (".symtab", ".dynsym"):
        table = elf.get_section_by_name(name)
        if isinstance(table, SymbolTableSection):
            symbols = [
                Symbol(sym.name, sym.value, sym.size)
                for sym in _raw_symbols(elf, table)
                if sym.type in (STT_FUNC, STT_GNU_IFUNC) and sym.name and sym.shndx != SHN_UNDEF
            ]
            if symbols:
                return SymbolTable(symbols + plt_symbols(elf), name, sections)
    plt = plt_symbols(elf)
    return SymbolTable(plt, "PLT entries" if plt else "none", sections)


def relocated_places(elf: ELFFile, target: str) -> dict[int, Place]:
    """For a relocatable object: offset in section `target` of each relocated field → the section
    and offset it will point to (`.eh_frame`'s FDEs, to pair them with `.sframe`'s)."""
    return _relocated_names(elf, target)[1]


def _relocated_names(elf: ELFFile, target_name: str = ".sframe") -> tuple[dict[int, str], dict[int, Place]]:
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
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection):
            continue
        target = elf.get_section(section["sh_info"])
        if target is None or target.name != target_name:
            continue
        symtab = elf.get_section(section["sh_link"])
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
    return names, places


def _section_name(elf: ELFFile, index: int | str) -> str:
    """The name of section `index` (a symbol's `st_shndx`), "" for an undefined or special one."""
    if not isinstance(index, int) or index == SHN_UNDEF:
        return ""
    return elf.get_section(index).name


DEBUG_ROOT = "/usr/lib/debug"
"""Where distributions install separate debug files (`…/.build-id/xx/yyyy.debug`), as gdb's
`debug-file-directory` default."""


def build_id(elf: ELFFile) -> str | None:
    """The GNU build-id (hex), from the note section or a `PT_NOTE` segment."""
    try:
        sources = [seg for seg in elf.iter_segments() if seg["p_type"] == "PT_NOTE"] or [
            sec for sec in elf.iter_sections() if sec["sh_type"] == "SHT_NOTE"
        ]
        for source in sources:
            for note in source.iter_notes():
                if note["n_type"] == "NT_GNU_BUILD_ID":
                    return str(note["n_desc"])
    except Exception:  # a damaged note costs the build-id, nothing else
        return None
    return None


def debug_file(elf: ELFFile, path: str, root: str = DEBUG_ROOT) -> str | None:
    """The separate debug file of `path`, found as gdb finds it: by build-id under `root`
    (`.build-id/ab/cdef….debug`), else by `.gnu_debuglink` next to the file, in its `.debug/`, or
    under `root` followed by its directory."""
    found = build_id(elf)
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


def unwinding_symbols(elf: ELFFile, path: str, table: SymbolTable, root: str = DEBUG_ROOT) -> SymbolTable:
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
            debug = ELFFile(f)
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
