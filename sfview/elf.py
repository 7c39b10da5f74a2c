"""Finding the SFrame bytes and the function names inside an ELF file.

pyelftools does the ELF reading. The section is found by name (`.sframe`), or,
when the section headers are gone, through the `PT_GNU_SFRAME` program header,
which pyelftools does not name yet (it reports the bare number).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

from sfview.errors import InputError
from sfview.symbols import Symbol, SymbolTable

PT_GNU_SFRAME = 0x6474E554
FUNCTION_TYPES = ("STT_FUNC", "STT_GNU_IFUNC")


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
    symbols: SymbolTable
    relocated_names: dict[int, str]
    """Relocatable objects only: section offset of an FDE's start field → function name."""


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
        symbols = _symbols(elf)
        relocated = _relocated_names(elf) if elf["e_type"] == "ET_REL" and origin.startswith(".sframe") else {}
    except InputError:
        raise
    except Exception as exc:  # pyelftools has no single error type: ELFError, struct and construct errors...
        raise InputError(f"not a readable ELF file: {exc or type(exc).__name__}") from None
    return ElfSframe(data, address, file_offset, origin, info, symbols, relocated)


def _from_section(elf: ELFFile) -> tuple[bytes, int, int, str] | None:
    section = elf.get_section_by_name(".sframe")
    if section is None:
        return None
    if section["sh_type"] == "SHT_NOBITS":
        raise InputError("the .sframe section has no contents here (SHT_NOBITS, as in a separate debug file)")
    data = section.data()
    if len(data) != section["sh_size"]:
        raise InputError(
            f"the .sframe section is cut short: {section['sh_size']} bytes from file offset "
            f"{section['sh_offset']:#x}, but the file holds only {len(data)}"
        )
    return data, section["sh_addr"], section["sh_offset"], ".sframe section"


def _from_segment(elf: ELFFile) -> tuple[bytes, int, int, str] | None:
    for segment in elf.iter_segments():
        if segment["p_type"] in (PT_GNU_SFRAME, "PT_GNU_SFRAME"):
            data = segment.data()
            if len(data) != segment["p_filesz"]:
                raise InputError(
                    f"the PT_GNU_SFRAME segment is cut short: {segment['p_filesz']} bytes "
                    f"from file offset {segment['p_offset']:#x}, but the file holds only {len(data)}"
                )
            return data, segment["p_vaddr"], segment["p_offset"], "PT_GNU_SFRAME segment"
    return None


def _symbols(elf: ELFFile) -> SymbolTable:
    """Function symbols from `.symtab`, else `.dynsym`, else relocations of `.sframe`."""
    for name in (".symtab", ".dynsym"):
        table = elf.get_section_by_name(name)
        if isinstance(table, SymbolTableSection):
            symbols = [
                Symbol(sym.name, sym["st_value"], sym["st_size"])
                for sym in table.iter_symbols()
                if sym["st_info"]["type"] in FUNCTION_TYPES and sym.name and sym["st_shndx"] != "SHN_UNDEF"
            ]
            if symbols and elf["e_type"] != "ET_REL":
                return SymbolTable(symbols, name)
    return SymbolTable([], "none")


def _relocated_names(elf: ELFFile) -> dict[int, str]:
    """For a relocatable object: section offset of each relocated `.sframe` field → function name.

    In a `.o` file the function start fields are still zero; the relocation
    against each one says which section and offset it will point to, and the
    function symbol defined there names it.
    """
    names: dict[int, str] = {}
    by_place = {}
    for section in elf.iter_sections():
        if isinstance(section, SymbolTableSection):
            for sym in section.iter_symbols():
                if sym["st_info"]["type"] in FUNCTION_TYPES and isinstance(sym["st_shndx"], int):
                    by_place[(sym["st_shndx"], sym["st_value"])] = sym.name
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection):
            continue
        target = elf.get_section(section["sh_info"])
        if target is None or target.name != ".sframe":
            continue
        symtab = elf.get_section(section["sh_link"])
        for reloc in section.iter_relocations():
            sym = symtab.get_symbol(reloc["r_info_sym"])
            addend = reloc["r_addend"] if reloc.is_RELA() else 0
            if sym["st_info"]["type"] == "STT_SECTION":
                name = by_place.get((sym["st_shndx"], addend))
            else:
                name = sym.name if not addend else f"{sym.name}{addend:+#x}"
            if name:
                names[reloc["r_offset"]] = name
    return names
