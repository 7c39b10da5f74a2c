"""Finding the SFrame bytes of an ELF file: the `.sframe` section, else the `PT_GNU_SFRAME` segment.

`image.ElfImage` does the reading; the section is found by name, or, when
the section headers are gone, through the program header. What is damaged
around the bytes costs what depends on it (`Located.lost`), not the bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import BinaryIO, NamedTuple

from sfview.errors import InputError
from sfview.inputs.boundary import reading
from sfview.inputs.elf.image import PT_GNU_SFRAME, SHF_COMPRESSED, ElfImage, open_image
from sfview.inputs.elf.names import FunctionNames, read_names


class Located(NamedTuple):
    """An input's SFrame bytes, where they were found, and what surrounds them (an ELF file's image and
    names; none for a raw section)."""

    data: bytes
    address: int
    file_offset: int
    origin: str
    """`.sframe section`, `PT_GNU_SFRAME segment` or `raw section`."""
    lost: list[InputError]
    """What around the bytes could not be read, each with why (the names fill it in when they are read)."""
    image: ElfImage | None = None
    """The ELF file, for what comes beside the section (`.eh_frame`, notes, program headers)."""
    names: Callable[[], FunctionNames] | None = None
    """Reads the function names when first called, and gives the same names after."""
    cut: InputError | None = None
    """The file holds fewer bytes than the section or segment says: `data` is what it holds."""


def read_elf_sframe(stream: BinaryIO) -> Located:
    """The SFrame bytes of an ELF file, their address, and the function names.

    The section is found by its header; when the section headers are
    unreadable or have no `.sframe`, through `PT_GNU_SFRAME`. What is damaged
    around it costs what depends on it (`lost`), not the section.
    """
    elf = open_image(stream)
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
    names = functools.cache(lambda: read_names(elf, origin, lost))
    return Located(data, address, file_offset, origin, lost, elf, names, cut)


Found = tuple[bytes, int, int, str, InputError | None]


def _from_section(elf: ElfImage) -> Found | None:
    section = elf.section(".sframe")
    if section is None:
        return None
    data = elf.section_bytes(section, partial=True)
    compressed = section.flags & SHF_COMPRESSED
    cut = (
        None
        if compressed or len(data) == section.size
        else _cut(".sframe section", section.size, section.offset, len(data))
    )
    return data, section.addr, section.offset, ".sframe section", cut


def _from_segment(elf: ElfImage) -> Found | None:
    for segment in elf.segments:
        if segment.type == PT_GNU_SFRAME:
            with reading(f"the segment at file offset {segment.offset:#x}"):
                data = elf.segment_bytes(segment)  # copied: the section model keeps its bytes
            cut = (
                None
                if len(data) == segment.filesz
                else _cut("PT_GNU_SFRAME segment", segment.filesz, segment.offset, len(data))
            )
            return data, segment.vaddr, segment.offset, "PT_GNU_SFRAME segment", cut
    return None


def _cut(what: str, size: int, offset: int, held: int) -> InputError:
    return InputError(
        f"the {what} is cut short: {size} bytes from file offset {offset:#x}, but the file holds only {held}"
        " (shown as far as it goes)"
    )
