"""The bytes of a program's code, for the disassembly beside the rows.

Read with `os.pread` on the ELF file's descriptor rather than through the
stream pyelftools seeks: the explorer reads the symbol table in a worker
thread, and two readers must not move one file position under each other.
Only what is asked for is read (one function's bytes), never a whole section.
"""

from __future__ import annotations

import os

from elftools.elf.elffile import ELFFile

from sfview.errors import InputError
from sfview.inputs.elf.pyelftools_view import section_named_quietly, segments

__all__ = ["loaded_code", "section_code"]


def _read(elf: ELFFile, offset: int, size: int) -> bytes | None:
    try:
        data = os.pread(elf.stream.fileno(), size, offset)
    except (OSError, AttributeError, ValueError):  # not a real file (a BytesIO in a test), or closed
        elf.stream.seek(offset)
        data = elf.stream.read(size)
    return data if len(data) == size else None


def loaded_code(elf: ELFFile, address: int, size: int) -> bytes | None:
    """The `size` bytes the program headers load at `address`, from the file; None when no `PT_LOAD`
    segment holds them all in the file (past its `p_filesz` is zero-filled memory, not code), or when the
    program headers cannot be read."""
    try:
        for seg in segments(elf):
            start = seg["p_vaddr"]
            if seg["p_type"] == "PT_LOAD" and start <= address and address + size <= start + seg["p_filesz"]:
                return _read(elf, seg["p_offset"] + address - start, size)
    except InputError:
        return None
    return None


def section_code(elf: ELFFile, name: str, offset: int, size: int) -> bytes | None:
    """`size` bytes at `offset` of section `name` (an object file's code, not yet relocated)."""
    section = section_named_quietly(elf, name)
    if section is None or section["sh_type"] == "SHT_NOBITS" or offset + size > section["sh_size"]:
        return None
    return _read(elf, section["sh_offset"] + offset, size)
