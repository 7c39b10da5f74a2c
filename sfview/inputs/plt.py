"""Names for PLT entries, as objdump gives them: `printf@plt`, `__cxa_finalize@plt`.

No symbol covers a PLT entry; objdump makes one up ("synthetic symbols") from
where each entry jumps: the GOT slot it loads its target from is the place a
dynamic relocation (`JUMP_SLOT`, or `GLOB_DAT` for `.plt.got`) names.
`elf.image.ElfImage` reads the sections, the relocations and symbols are
unpacked here with `struct`; the jump itself is decoded here too, because
no library at hand decodes PLT stubs: x86-64's `jmp *disp32(%rip)` (`ff 25`),
and AArch64's `adrp x16, page` + `ldr x17, [x16, #off]`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

from sfview.errors import InputError
from sfview.inputs.boundary import BoundedStrings
from sfview.inputs.elf.image import (
    PF_X,
    PT_LOAD,
    SHT_DYNSYM,
    SHT_REL,
    SHT_RELA,
    SHT_SYMTAB,
    ElfImage,
    SectionHeader,
)
from sfview.inputs.symbols import Symbol

SHT_PROGBITS = 1

PLT_SECTIONS = (".plt", ".plt.sec", ".plt.got")
X86_JMP_GOT = b"\xff\x25"  # jmp *disp32(%rip)
ABSOLUTE = "*ABS*"
"""BFD's name for the absolute section: what a PLT entry whose relocation has no symbol is named after."""


def plt_symbols(elf: ElfImage) -> list[Symbol]:
    """A `name@plt` symbol for every PLT entry whose GOT slot a dynamic relocation names."""
    slots = _got_slot_names(elf)
    if not slots:
        return []
    decode = {"EM_X86_64": _x86_64_target, "EM_AARCH64": _aarch64_target}.get(elf.machine)
    if decode is None:
        return []
    out = []
    for name in PLT_SECTIONS:
        section = elf.section(name)
        if section is None or section.type != SHT_PROGBITS:
            continue
        size = section.entsize or 16
        text = _mapped_text(elf, section.addr)
        if text <= 0:
            continue
        data, base = elf.section_bytes(section, text), section.addr
        for start in range(0, len(data) - size + 1, size):
            target = decode(data[start : start + size], base + start, elf.little_endian)
            slot = slots.get(target) if target is not None else None
            if slot is not None:
                named = slot if isinstance(slot, str) else ABSOLUTE + (f"+{slot:#x}" if slot else "")
                out.append(Symbol(f"{named}@plt", base + start, size))
    return out


def _mapped_text(elf: ElfImage, address: int) -> int:
    """How many bytes of code the file maps from `address` on (an executable `PT_LOAD`'s file bytes): what
    a PLT there can hold, whatever its section claims or inflates to; 0 outside every one."""
    for segment in elf.segments:
        if (
            segment.type == PT_LOAD
            and segment.flags & PF_X
            and segment.vaddr <= address < segment.vaddr + segment.filesz
        ):
            return segment.vaddr + segment.filesz - address
    return 0


def _got_slot_names(elf: ElfImage) -> dict[int, str | int]:
    """GOT address → the function a dynamic relocation will put there: its symbol's name; for a relocation
    without a symbol (`IRELATIVE`: an IFUNC's resolver, as libc's own PLT calls `memcpy`), its addend, which
    objdump and gdb name the entry by, after BFD's absolute section: `*ABS*+0x9f1c0@plt` (perf 6.1 has no
    name for it: `@plt`). The addend is named only for the slots a PLT entry jumps through: a PIE has a
    relocation without a symbol for each pointer it holds."""
    names: dict[int, str | int] = {}
    for section in elf.sections:
        if section.type not in (SHT_REL, SHT_RELA) or section.name not in (".rela.plt", ".rel.plt", ".rela.dyn"):
            continue
        symtab = elf.section_at(section.link)
        if symtab is None or symtab.type not in (SHT_SYMTAB, SHT_DYNSYM):
            continue
        symbol_name = _symbol_names(elf, symtab)
        for offset, sym, addend in _relocations(elf, section):
            if not sym:
                names[offset] = addend
            elif name := symbol_name(sym):
                names[offset] = name
    return names


def _symbol_names(elf: ElfImage, symtab: SectionHeader) -> Callable[[int], str]:
    """Symbol number → its name, read from the table as it is asked for (as pyelftools' `get_symbol`,
    which fails for a number past the table)."""
    strtab = elf.section_at(symtab.link)
    strings = elf.section_bytes(strtab) if strtab is not None else b""
    data, step = elf.section_bytes(symtab), symtab.entsize
    names = BoundedStrings(strings, "replace")

    def name(number: int) -> str:
        if not step or (number + 1) * step > len(data):
            raise InputError(f"no symbol {number} in {symtab.name} ({len(data) // max(step, 1)} symbols)")
        (offset,) = struct.unpack_from(elf.order + "I", data, number * step)
        return names.at(offset) or ""

    return name


def _relocations(elf: ElfImage, section: SectionHeader) -> Iterator[tuple[int, int, int]]:
    """(r_offset, symbol index, r_addend) of each relocation (the addend 0 in a `REL` section).

    Written by hand with `struct` where pyelftools' `iter_relocations` would do: it parses an entry
    slowly, and a PIE has one relocation per pointer it holds, so through it the relocations would be
    most of a `sfview check`. Entries of another size than the ELF class's go through pyelftools.
    """
    rela = section.type == SHT_RELA
    char = "Q" if elf.elfclass == 64 else "I"
    entry = struct.Struct(elf.order + char * (3 if rela else 2))
    if section.entsize != entry.size or section.size % entry.size:
        from sfview.inputs.elf.pyelftools_view import open_view  # pyelftools: only for entries of another size

        relocations = open_view(elf).get_section(section.index).iter_relocations()
        yield from ((r["r_offset"], r["r_info_sym"], r["r_addend"] if rela else 0) for r in relocations)
        return
    shift = 32 if elf.elfclass == 64 else 8  # ELF64_R_SYM / ELF32_R_SYM
    for offset, info, *addend in entry.iter_unpack(elf.section_bytes(section)):
        yield offset, info >> shift, addend[0] if addend else 0


def _x86_64_target(entry: bytes, address: int, little_endian: bool) -> int | None:
    """The GOT slot of the entry's `jmp *disp32(%rip)` (after an `endbr64`/`bnd` prefix, if any)."""
    at = entry.find(X86_JMP_GOT)
    if at < 0 or at + 6 > len(entry):
        return None
    (disp,) = struct.unpack_from("<i", entry, at + 2)
    return address + at + 6 + disp


def _aarch64_target(entry: bytes, address: int, little_endian: bool) -> int | None:
    """The GOT slot of `adrp x16, page; ldr x17, [x16, #off]`, the first two instructions of an entry."""
    if len(entry) < 8:
        return None
    adrp, ldr = struct.unpack_from("<II" if little_endian else ">II", entry)
    if adrp & 0x9F00001F != 0x90000010 or ldr & 0xFFC003FF != 0xF9400211:  # adrp x16 / ldr x17, [x16, #imm]
        return None
    imm = ((adrp >> 5) & 0x7FFFF) << 2 | (adrp >> 29) & 0x3
    if imm & (1 << 20):
        imm -= 1 << 21
    page = (address & ~0xFFF) + (imm << 12)
    return page + ((ldr >> 10) & 0xFFF) * 8
