"""Damaging real ELF files by byte edits, for the tests of what sfview does with them.

The files are the gcc-built fixtures (or programs built at test time), read
with the ELF64 layout of the gABI, written here from the spec and not from
sfview's reader, so that a test's damage does not depend on the code it tests.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
"""e_ident, type, machine, version, entry, phoff, shoff, flags, ehsize, phentsize, phnum, shentsize, shnum, shstrndx."""
EHDR_FIELDS = ("e_ident", "e_type", "e_machine", "e_version", "e_entry", "e_phoff", "e_shoff", "e_flags",
               "e_ehsize", "e_phentsize", "e_phnum", "e_shentsize", "e_shnum", "e_shstrndx")  # fmt: skip
SHDR = struct.Struct("<IIQQQQIIQQ")
SHDR_FIELDS = ("sh_name", "sh_type", "sh_flags", "sh_addr", "sh_offset", "sh_size", "sh_link", "sh_info",
               "sh_addralign", "sh_entsize")  # fmt: skip
PHDR = struct.Struct("<IIQQQQQQ")
PHDR_FIELDS = ("p_type", "p_flags", "p_offset", "p_vaddr", "p_paddr", "p_filesz", "p_memsz", "p_align")
PT_LOAD, PT_NOTE, PT_GNU_SFRAME = 1, 4, 0x6474E554
SHT_NOTE = 7
SHF_COMPRESSED = 0x800
CHDR = struct.Struct("<IIQQ")
"""Elf64_Chdr: ch_type, reserved, ch_size, ch_addralign."""


@dataclass
class Elf:
    """A little-endian ELF64 file's bytes, with its headers found and editable by field name."""

    data: bytearray

    @classmethod
    def of(cls, raw: bytes) -> Elf:
        return cls(bytearray(raw))

    def header(self) -> dict[str, int]:
        return dict(zip(EHDR_FIELDS, EHDR.unpack_from(self.data), strict=True))

    def set_header(self, **fields: int) -> Elf:
        values = self.header() | fields
        EHDR.pack_into(self.data, 0, *(values[name] for name in EHDR_FIELDS))
        return self

    def _section_at(self, index: int) -> int:
        h = self.header()
        return h["e_shoff"] + index * h["e_shentsize"]

    def section_index(self, name: str) -> int:
        h = self.header()
        strtab = self.section(h["e_shstrndx"])
        for i in range(h["e_shnum"]):
            at = strtab["sh_offset"] + self.section(i)["sh_name"]
            if self.data[at : self.data.index(0, at)].decode() == name:
                return i
        raise KeyError(name)

    def section(self, which: int | str) -> dict[str, int]:
        index = which if isinstance(which, int) else self.section_index(which)
        return dict(zip(SHDR_FIELDS, SHDR.unpack_from(self.data, self._section_at(index)), strict=True))

    def set_section(self, which: int | str, **fields: int) -> Elf:
        index = which if isinstance(which, int) else self.section_index(which)
        values = self.section(index) | fields
        SHDR.pack_into(self.data, self._section_at(index), *(values[name] for name in SHDR_FIELDS))
        return self

    def segments(self) -> list[tuple[int, dict[str, int]]]:
        h = self.header()
        out = []
        for i in range(h["e_phnum"]):
            at = h["e_phoff"] + i * h["e_phentsize"]
            out.append((at, dict(zip(PHDR_FIELDS, PHDR.unpack_from(self.data, at), strict=True))))
        return out

    def set_segment(self, p_type: int, **fields: int) -> Elf:
        for at, seg in self.segments():
            if seg["p_type"] == p_type:
                values = seg | fields
                PHDR.pack_into(self.data, at, *(values[name] for name in PHDR_FIELDS))
                return self
        raise KeyError(hex(p_type))

    def contents(self, which: int | str) -> bytes:
        sec = self.section(which)
        return bytes(self.data[sec["sh_offset"] : sec["sh_offset"] + sec["sh_size"]])

    def compress(self, which: int | str, ch_type: int = 1, stream: bytes | None = None) -> Elf:
        """Replace a section by a compressed copy appended at the end (zlib, or `stream` as given)."""
        raw = self.contents(which)
        body = zlib.compress(raw) if stream is None else stream
        blob = CHDR.pack(ch_type, 0, len(raw), 8) + body
        offset = (len(self.data) + 7) & ~7
        self.data += bytes(offset - len(self.data)) + blob
        sec = self.section(which)
        return self.set_section(which, sh_offset=offset, sh_size=len(blob), sh_flags=sec["sh_flags"] | SHF_COMPRESSED)

    def replace(self, which: int | str, raw: bytes) -> Elf:
        """Give a section the bytes `raw`, appended at the end of the file."""
        offset = (len(self.data) + 7) & ~7
        self.data += bytes(offset - len(self.data)) + raw
        return self.set_section(which, sh_offset=offset, sh_size=len(raw))

    def add_sections(self, count: int, sh_name: int = 0) -> Elf:
        """`count` empty sections after the others (named by `sh_name`, an offset in the section names): the
        header table copied to the end with them."""
        h = self.header()
        table = self.data[h["e_shoff"] : h["e_shoff"] + h["e_shnum"] * SHDR.size]
        offset = (len(self.data) + 7) & ~7
        self.data += bytes(offset - len(self.data)) + table + SHDR.pack(sh_name, 1, 0, 0, 0, 0, 0, 0, 1, 0) * count
        return self.set_header(e_shoff=offset, e_shnum=h["e_shnum"] + count)

    def poke(self, offset: int, raw: bytes) -> Elf:
        self.data[offset : offset + len(raw)] = raw
        return self

    def bytes(self) -> bytes:
        return bytes(self.data)
