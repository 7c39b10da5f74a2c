"""Names for PLT entries, as objdump gives them: `printf@plt`, `__cxa_finalize@plt`.

No symbol covers a PLT entry; objdump makes one up ("synthetic symbols") from
where each entry jumps: the GOT slot it loads its target from is the place a
dynamic relocation (`JUMP_SLOT`, or `GLOB_DAT` for `.plt.got`) names. pyelftools
reads the sections and relocations; the jump itself is decoded here, because
no library at hand decodes PLT stubs: x86-64's `jmp *disp32(%rip)` (`ff 25`),
and AArch64's `adrp x16, page` + `ldr x17, [x16, #off]`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from sfview.inputs.elffile import section_bytes
from sfview.inputs.symbols import Symbol

PLT_SECTIONS = (".plt", ".plt.sec", ".plt.got")
X86_JMP_GOT = b"\xff\x25"  # jmp *disp32(%rip)


def plt_symbols(elf: ELFFile) -> list[Symbol]:
    """A `name@plt` symbol for every PLT entry whose GOT slot a dynamic relocation names."""
    slots = _got_slot_names(elf)
    if not slots:
        return []
    decode = {"EM_X86_64": _x86_64_target, "EM_AARCH64": _aarch64_target}.get(elf["e_machine"])
    if decode is None:
        return []
    out = []
    for name in PLT_SECTIONS:
        section = elf.get_section_by_name(name)
        if section is None or section["sh_type"] != "SHT_PROGBITS":
            continue
        size = section["sh_entsize"] or 16
        data, base = section_bytes(section), section["sh_addr"]
        for start in range(0, len(data) - size + 1, size):
            target = decode(data[start : start + size], base + start, elf.little_endian)
            if target in slots:
                out.append(Symbol(f"{slots[target]}@plt", base + start, size))
    return out


def _got_slot_names(elf: ELFFile) -> dict[int, str]:
    """GOT address → the function a dynamic relocation will put there."""
    names: dict[int, str] = {}
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection) or section.name not in (".rela.plt", ".rel.plt", ".rela.dyn"):
            continue
        symtab = elf.get_section(section["sh_link"])
        if symtab is None or not hasattr(symtab, "get_symbol"):
            continue
        for offset, sym in _relocations(elf, section):
            if sym:
                name = symtab.get_symbol(sym).name
                if name:
                    names[offset] = name
    return names


def _relocations(elf: ELFFile, section: RelocationSection) -> Iterator[tuple[int, int]]:
    """(r_offset, symbol index) of each relocation.

    Written by hand with `struct` where pyelftools' `iter_relocations` would do: it parses an entry in
    about 13 µs, and a PIE has one relocation per pointer it holds (measured: 40,000 in the benchmark
    binary, 0.55 s of a 0.8 s `sfview check`; `struct` reads them in 10 ms). Entries of another size
    than the ELF class's go through pyelftools.
    """
    rela = section.is_RELA()
    char = "Q" if elf.elfclass == 64 else "I"
    entry = struct.Struct(("<" if elf.little_endian else ">") + char * (3 if rela else 2))
    if section["sh_entsize"] != entry.size or section["sh_size"] % entry.size:
        yield from ((r["r_offset"], r["r_info_sym"]) for r in section.iter_relocations())
        return
    shift = 32 if elf.elfclass == 64 else 8  # ELF64_R_SYM / ELF32_R_SYM
    for offset, info, *_ in entry.iter_unpack(section_bytes(section)):
        yield offset, info >> shift


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
