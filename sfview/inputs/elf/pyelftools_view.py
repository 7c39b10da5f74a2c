"""pyelftools' view of an ELF file, for what only pyelftools reads: relocations, DWARF, the views' sections.

pyelftools raises on a damaged file not one exception type but many (its own,
struct's, construct's, zlib's, an AttributeError where a header links to the
wrong kind of section, a RecursionError, a MemoryError when it believes a
size); everything read through it goes through `boundary.reading`, which turns
them into `InputError`s saying what was being read. Here:

- `ElfFile` is pyelftools' `ELFFile` made to cost only what is damaged: its
  section names come from the headers alone, sections it cannot make objects
  of are skipped when iterating, and its DWARF sections are read by
  `section_bytes`;
- `section_bytes` reads no more than the file holds and no more than the
  size limit, inflates zlib and zstd, and never trusts a size.

What an unwind reads (headers, notes, a few sections) is read without
pyelftools by `image.ElfImage`; `open_view` opens this view of the same file
when something only pyelftools reads is asked for. The view knows nothing of
the image it was opened from: `document.Document` holds both.
"""

from __future__ import annotations

import functools
import io
import mmap
from collections.abc import Iterator
from typing import Any, BinaryIO

from elftools.construct import Construct, FieldError
from elftools.dwarf import structs as dwarf_structs
from elftools.dwarf.dwarfinfo import DebugSectionDescriptor
from elftools.dwarf.structs import DWARFStructs
from elftools.elf.constants import P_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationHandler, RelocationSection
from elftools.elf.sections import Section, SymbolTableSection
from elftools.elf.segments import Segment

from sfview.errors import InputError
from sfview.inputs import limits
from sfview.inputs.boundary import check_relocations, reading, reason
from sfview.inputs.elf.image import (
    ELFCOMPRESS_ZLIB,
    ELFCOMPRESS_ZSTD,
    SHF_COMPRESSED,
    ElfImage,
    SectionHeader,
    SectionTable,
    inflate,
)
from sfview.inputs.leb128 import bound_pyelftools

bound_pyelftools()  # before any DWARF is read through this view: a number's work is its bytes'


class _Block(Construct):
    """A DWARF block (`DW_FORM_block*`, `DW_FORM_exprloc`): its length, then its bytes read at once, as
    `bytes` (indexed and iterated as pyelftools' list of numbers is). pyelftools parsed a block a byte at a
    time, each through construct: a megabyte's block took two seconds."""

    def __init__(self, length: Construct) -> None:
        super().__init__(None)
        self.length = length

    def _parse(self, stream: BinaryIO, context: Any) -> bytes:
        size = self.length._parse(stream, context)
        data = stream.read(size)
        if len(data) != size:
            raise FieldError(f"a block of {size} bytes, {len(data)} left")
        return data


class _String(Construct):
    """A NUL-terminated string of a DWARF section (`DW_FORM_string`, a line table's names), found by `find` in
    the section's contents: pyelftools' `CString` read it a byte at a time, each through construct, and held a
    list of one-byte objects (a 1 MB name: 1.75 s and 77 MB)."""

    def _parse(self, stream: BinaryIO, context: Any) -> bytes:
        if not isinstance(stream, SectionStream):
            return _CString(self.name)._parse(stream, context)
        end = stream.contents.find(b"\0", stream.position)
        if end < 0:
            raise FieldError("a string without its NUL before the section's end")
        data = bytes(stream.contents[stream.position : end])
        stream.seek(end + 1)
        return data


_CString = dwarf_structs.CString
DWARFStructs._make_block_struct = lambda self, length: _Block(length(""))  # before any unit's structs are made
dwarf_structs.CString = _String


class ElfFile(ELFFile):
    """pyelftools' ELF reader, damaged parts costing only themselves.

    pyelftools names sections by building every section's object, so one
    symbol table whose entry size does not divide its size made the whole
    file unreadable (`Expected section size to be a multiple of entry size`),
    where readelf dumps the rest. Here names come from the headers alone.
    """

    def __init__(self, stream: BinaryIO, lost: list[InputError], headers: SectionTable) -> None:
        super().__init__(stream)
        self.section_headers = headers
        """Every section header the file holds, in order, named, read from the bytes when asked for: the
        image's table (`ElfImage.sections`; none when it cannot be read), not a `Container` held for each."""
        self.lost = lost
        """What pyelftools' readers could not do here and what it cost (a DWARF section left unrelocated):
        the list of the image it was opened from, said with the rest."""

    def _get_section_name(self, section_header: Any) -> str:
        """The name `section_headers` read for this header (pyelftools reads it again, unbounded, for
        every section object it makes)."""
        return self.section_headers.name_at(section_header["sh_name"])

    @property
    def _section_name_map(self) -> dict[str, int]:
        return self.section_headers.first_index

    def iter_sections(self, type: str | None = None) -> Iterator[Section]:
        """Every section pyelftools can make an object of; one it cannot is skipped (asked for by
        name, it says why)."""
        for index in range(len(self.section_headers)):
            try:
                header = self._get_section_header(index)
                if type is not None and header["sh_type"] != type:
                    continue
                section = self._make_section(header)
            except Exception:  # skipped here; `get_section` on it raises the reason
                continue
            yield section

    @functools.cache  # noqa: B019 - one view a file, kept as long as the file
    def get_machine_arch(self) -> str:
        """pyelftools' name of the machine, asked for once per relocation applied."""
        return super().get_machine_arch()

    def _make_section(self, section_header: Any) -> Section:
        """pyelftools' section object; a compressed relocation section reads its entries from its inflated
        bytes (`section_bytes`), where pyelftools reads them from the stored, compressed ones (a compressed
        `.rela.eh_frame` gave "Unsupported relocation type: 67108848")."""
        section = super()._make_section(section_header)
        if isinstance(section, SymbolTableSection):
            # applying relocations asks for a symbol per relocation, mostly the same few (`.text`'s)
            section.get_symbol = functools.lru_cache(maxsize=4096)(section.get_symbol)
        if isinstance(section, RelocationSection) and section.compressed:
            data = section_bytes(section)
            # `RelocationTable`'s own reading place: its stream, offset and size
            section._stream, section._offset, section._size = io.BytesIO(data), 0, len(data)
        return section

    def _read_dwarf_section(self, section: Section, relocate_dwarf_sections: bool) -> DebugSectionDescriptor:
        """A DWARF section read by `section_bytes` (zstd too, bounded), relocated as pyelftools does."""
        data = self.dwarf_section_bytes(section, relocate_dwarf_sections)
        return DebugSectionDescriptor(
            SectionStream(data), section.name, section["sh_offset"], len(data), section["sh_addr"]
        )

    def dwarf_section_bytes(self, section: Section, relocate: bool) -> bytes:
        """A DWARF section's bytes (`section_bytes`: zstd too, bounded), its relocations applied when
        `relocate`; relocations that cannot be read cost the relocated addresses (said in `lost`)."""
        data = section_bytes(section)
        if not relocate:
            return data
        stream = io.BytesIO(data)
        try:
            with reading(f"the relocations of {section.name}"):
                handler = RelocationHandler(self)
                relocations = handler.find_relocations_for_section(section)
                if relocations is not None:
                    check_relocations(relocations.num_relocations(), section.name, len(data))
                    handler.apply_section_relocations(stream, relocations)
        except InputError as exc:  # costs the relocated addresses, not the CFI
            self.lost.append(InputError(f"{exc.message} (read unrelocated)"))
            return data
        return stream.getvalue()


class SectionStream:
    """A DWARF section's bytes as the stream pyelftools reads (`seek`, `tell`, `read`), over `contents` without
    a copy: `io.BytesIO` copies what it is given, and a section inflated past `SPILL_SIZE` is a mapping of
    hundreds of megabytes that it made a copy of (and every reader of its whole contents another)."""

    def __init__(self, contents: bytes | mmap.mmap) -> None:
        self.contents = contents
        self.position = 0

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: len(self.contents)}[whence]
        self.position = max(base + offset, 0)
        return self.position

    def tell(self) -> int:
        return self.position

    def read(self, size: int | None = -1) -> bytes:
        end = len(self.contents) if size is None or size < 0 else self.position + size
        data = bytes(self.contents[self.position : end])
        self.position += len(data)
        return data


def open_view(image: ElfImage) -> ElfFile:
    """pyelftools' view of the file `image` was read from (its stream, or its bytes for an image held in
    memory), its losses said in the image's `lost`; an `InputError` when pyelftools cannot read its header."""
    try:
        stream = image.stream if image.stream is not None else io.BytesIO(image.data)
        return ElfFile(stream, image.lost, image.sections)
    except Exception as exc:  # as `reading`
        raise InputError(f"not a readable ELF file: {reason(exc)}") from None


def relocated_section_bytes(image: ElfImage, header: SectionHeader) -> bytes:
    """A relocatable object's DWARF section (`.eh_frame`, `.debug_frame`) with its relocations applied by
    pyelftools, as its `get_dwarf_info()` applies them; relocations that cannot be read cost the relocated
    addresses (said in the image's `lost`)."""
    view = open_view(image)
    return view.dwarf_section_bytes(view.get_section(header.index), relocate=True)


def section_named(elf: ELFFile, name: str) -> Section | None:
    """The section called `name`, None when there is none; an `InputError` when its header is unreadable."""
    with reading(f"the {name} section header"):
        return elf.get_section_by_name(name)


def section_named_quietly(elf: ELFFile, name: str) -> Section | None:
    """The section called `name`, None when there is none or its header cannot be read."""
    try:
        return section_named(elf, name)
    except InputError:
        return None


def section_bytes(section: Section, prefix: int | None = None, *, partial: bool = False) -> bytes:
    """A section's contents, inflated if compressed (zlib, zstd).

    A section the file holds only part of is an `InputError`, or with
    `partial`, the bytes the file holds (the caller compares with `sh_size`
    to say so). A size over `limits.max_size` is refused before anything is
    read. `prefix`: only that many bytes are wanted.
    """
    name = section.name or "unnamed"
    header = section.header
    with reading(f"the {name} section (file offset {header['sh_offset']:#x}, {header['sh_size']} bytes)"):
        if header["sh_type"] == "SHT_NOBITS":
            raise InputError("it has no contents in this file (SHT_NOBITS)")
        if header["sh_flags"] & SHF_COMPRESSED:
            inflated = _inflate(section, _read_at(section.elffile, header["sh_offset"], header["sh_size"], None))
            return inflated if prefix is None else inflated[:prefix]
        data = _read_at(section.elffile, header["sh_offset"], header["sh_size"], prefix)
        wanted = header["sh_size"] if prefix is None else min(header["sh_size"], prefix)
        if not partial and len(data) < wanted:
            raise InputError(f"the file holds only {len(data)} of its bytes")
        return data


def _read_at(elf: ELFFile, offset: int, size: int, prefix: int | None) -> bytes:
    """Up to `size` bytes from `offset` (`prefix` at most), no more than the file holds; over the limit, refused."""
    held = max(0, min(size, elf.stream_len - offset))
    want = held if prefix is None else min(held, prefix)
    limits.check_size(want, "bytes")
    elf.stream.seek(offset)
    return elf.stream.read(want)


def _inflate(section: Section, stored: bytes) -> bytes:
    """A compressed section's bytes (its `Elf_Chdr`, then the stream), inflated; no more than it claims."""
    chdr = section.structs.Elf_Chdr
    head = chdr.sizeof()
    if len(stored) < head:
        raise InputError(f"compressed, but holds {len(stored)} bytes, fewer than its compression header's {head}")
    fields = chdr.parse(stored[:head])
    kind, size = fields["ch_type"], fields["ch_size"]
    limits.check_size(size, "bytes once inflated")
    kind = {"ELFCOMPRESS_ZLIB": ELFCOMPRESS_ZLIB, "ELFCOMPRESS_ZSTD": ELFCOMPRESS_ZSTD}.get(kind, kind)
    return inflate(kind, size, stored[head:])


def segments(elf: ELFFile) -> Iterator[Segment]:
    """The program headers, each made as it is reached and let go (a core's tens of thousands held at once
    were some 500 bytes each); an `InputError` (saying where the table is) when they cannot be read: at once
    for a table past the end of the file."""
    what = f"the program headers (e_phoff {elf['e_phoff']:#x}, {elf['e_phnum']} of {elf['e_phentsize']} bytes)"
    with reading(what):
        count = elf.num_segments()
        end = elf["e_phoff"] + count * elf["e_phentsize"]
        if count and end > elf.stream_len:
            raise InputError(f"they end at {end:#x}, past the end of the file ({elf.stream_len:#x} bytes)")
    return _each_segment(elf, count, what)


def _each_segment(elf: ELFFile, count: int, what: str) -> Iterator[Segment]:
    with reading(what):
        for index in range(count):
            yield elf.get_segment(index)


def executable_ranges(elf: ELFFile) -> list[tuple[int, int]]:
    """The address ranges [start, end) the program headers load executable; none for an object file."""
    return [
        (seg["p_vaddr"], seg["p_vaddr"] + seg["p_memsz"])
        for seg in segments(elf)
        if seg["p_type"] == "PT_LOAD" and seg["p_flags"] & P_FLAGS.PF_X
    ]


def load_address(elf: ELFFile) -> int:
    """Where the module's addresses count from: the first loadable segment's address less its offset (0 for PIE)."""
    return min((seg["p_vaddr"] - seg["p_offset"] for seg in segments(elf) if seg["p_type"] == "PT_LOAD"), default=0)
