"""The one boundary between sfview and an ELF file's bytes.

pyelftools reads the ELF structures; what it raises on a damaged file is not
one exception type (its own, struct's, construct's, zlib's, an AttributeError
where a header links to the wrong kind of section, a RecursionError, a
MemoryError when it believes a size). Everything read from an ELF file beyond
its header goes through this module:

- `reading(what)` turns any failure into an `InputError` that says what was
  being read and why it failed; the caller decides what the loss costs (the
  names, the placement, the build-id, the CFI), never the SFrame section;
- `ElfFile` is pyelftools' `ELFFile` made to cost only what is damaged: its
  section names come from the headers alone, sections it cannot make objects
  of are skipped when iterating, and its DWARF sections are read by
  `section_bytes`;
- `section_bytes` and `segment_bytes` read no more than the file holds and no
  more than the size limit, inflate zlib and zstd, and never trust a size.
"""

from __future__ import annotations

import io
import mmap
import os
import stat
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any, BinaryIO

from elftools.dwarf.dwarfinfo import DebugSectionDescriptor
from elftools.elf.constants import P_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationHandler
from elftools.elf.sections import Section
from elftools.elf.segments import Segment

from sfview.errors import InputError
from sfview.inputs import limits

SHF_COMPRESSED = 0x800
ELFCOMPRESS_ZLIB, ELFCOMPRESS_ZSTD = 1, 2
NT_GNU_BUILD_ID = 3


def reason(exc: BaseException) -> str:
    """Why reading failed, in words (some exceptions have none: a MemoryError, an empty struct.error)."""
    if isinstance(exc, RecursionError):
        return "its references lead back to themselves"
    if isinstance(exc, MemoryError):
        return "it asks for more memory than there is"
    return str(exc) or f"its bytes are not what pyelftools expects ({type(exc).__name__})"


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Any failure inside, whatever pyelftools, struct or zlib raise, as an `InputError` naming `what`."""
    try:
        yield
    except InputError as exc:  # said once, when the reader inside already put it first
        raise InputError(exc.message if exc.message.startswith(what) else f"{what}: {exc.message}") from None
    except Exception as exc:  # the boundary: pyelftools has no single error type
        raise InputError(f"{what}: {reason(exc)}") from None


class ElfFile(ELFFile):
    """pyelftools' ELF reader, damaged parts costing only themselves.

    pyelftools names sections by building every section's object, so one
    symbol table whose entry size does not divide its size made the whole
    file unreadable (`Expected section size to be a multiple of entry size`),
    where readelf dumps the rest. Here names come from the headers alone.
    """

    def __init__(self, stream: BinaryIO) -> None:
        super().__init__(stream)
        self.headers_error: InputError | None = None
        """Why the section headers could not all be read (the rest of them is used)."""
        self.lost: list[InputError] = []
        """What pyelftools' readers could not do here and what it cost (a DWARF section left unrelocated)."""

    @cached_property
    def mapped(self) -> memoryview:
        """The whole file, mapped (read by the OS page by page as it is used), or the bytes in memory."""
        if isinstance(self.stream, io.BytesIO):
            return self.stream.getbuffer().toreadonly()
        if self.stream_len == 0:
            return memoryview(b"")
        return memoryview(mmap.mmap(self.stream.fileno(), 0, access=mmap.ACCESS_READ))

    @cached_property
    def section_headers(self) -> list[tuple[int, str, Any]]:
        """(index, name, header) of every section header the file holds, in order; a header
        whose name cannot be read is named ""."""
        out: list[tuple[int, str, Any]] = []
        try:
            with reading(f"the section headers (e_shoff {self['e_shoff']:#x})"):
                count = self.num_sections()
                size = max(self["e_shentsize"], 1)
                if count and self["e_shoff"] + count * size > self.stream_len:
                    raise InputError(
                        f"{count} headers of {size} bytes run past the end of the file ({self.stream_len:#x} bytes)"
                    )
                headers = [self._get_section_header(i) for i in range(count)]
        except InputError as exc:
            self.headers_error = exc
            return out
        names = BoundedStrings(self._section_names_bytes(), "replace")  # as pyelftools decodes them
        return [(index, names.at(header["sh_name"]) or "", header) for index, header in enumerate(headers)]

    def _get_section_name(self, section_header: Any) -> str:
        """The name `section_headers` read for this header (pyelftools reads it again, unbounded, for
        every section object it makes)."""
        return self._names_by_offset.get(section_header["sh_name"], "")

    @cached_property
    def _names_by_offset(self) -> dict[int, str]:
        return {header["sh_name"]: name for _, name, header in self.section_headers}

    def _section_names_bytes(self) -> bytes:
        """`.shstrtab`'s bytes, as many as the file holds; none when it cannot be read (the sections are
        still there, unnamed)."""
        table = self._section_header_stringtable
        try:
            return section_bytes(table, partial=True) if table is not None else b""
        except InputError:
            return b""

    @cached_property
    def _section_name_map(self) -> dict[str, int]:
        names: dict[str, int] = {}
        for index, name, _ in self.section_headers:
            names.setdefault(name, index)
        return names

    def iter_sections(self, type: str | None = None) -> Iterator[Section]:
        """Every section pyelftools can make an object of; one it cannot is skipped (asked for by
        name, it says why)."""
        for _, _, header in self.section_headers:
            if type is not None and header["sh_type"] != type:
                continue
            try:
                section = self._make_section(header)
            except Exception:  # skipped here; `get_section` on it raises the reason
                continue
            yield section

    def _read_dwarf_section(self, section: Section, relocate_dwarf_sections: bool) -> DebugSectionDescriptor:
        """A DWARF section read by `section_bytes` (zstd too, bounded), relocated as pyelftools does."""
        data = self.dwarf_section_bytes(section, relocate_dwarf_sections)
        return DebugSectionDescriptor(
            io.BytesIO(data), section.name, section["sh_offset"], len(data), section["sh_addr"]
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
                    handler.apply_section_relocations(stream, relocations)
        except InputError as exc:  # costs the relocated addresses, not the CFI
            self.lost.append(InputError(f"{exc.message} (read unrelocated)"))
            return data
        return stream.getvalue()


NAMES_SLACK = 1 << 20
"""Names in a string table may share bytes (a linker merges a name that ends another), but only so
much: with the NULs of one gone, every name ran on into the same 8 MB string, one copy each (420 MB
and 12 s for section names, 380 MB for symbols, from an 8 MB file)."""


def names_bound(table: bytes) -> int:
    """How many bytes of names a string table may give in all: twice itself and `NAMES_SLACK`."""
    return 2 * len(table) + NAMES_SLACK


class BoundedStrings:
    """Names from a string table's bytes, by offset (decoded with `errors`), all of them together no
    more than twice the table and `NAMES_SLACK`: past that, `at` says None."""

    def __init__(self, table: bytes, errors: str) -> None:
        self.table = table
        self.errors = errors
        self.left = names_bound(table)

    def at(self, offset: int) -> str | None:
        """The name at `offset` ("" outside the table), None once the names run past the bound."""
        end = self.table.find(b"\0", offset)
        end = len(self.table) if end < 0 else end
        self.left -= max(end - offset, 0)
        if self.left < 0:
            return None
        return self.table[offset:end].decode("utf-8", self.errors)


def open_regular_file(path: str) -> BinaryIO:
    """`path` opened for reading, if it is a regular file; an `InputError` naming it otherwise.

    A FIFO would block for ever in `open` itself, a device such as /dev/zero
    never end: inputs (a program, a raw section, a core) are regular files.
    """
    if not path:
        raise InputError("an empty file name", path="")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise InputError(
                "not a regular file (a directory, a FIFO or a device): there is nothing to read", path=path
            )
        return open(path, "rb")
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), path=path) from None


def open_elf(stream: BinaryIO) -> ElfFile:
    """The ELF file in `stream`; an `InputError` when not even its header can be read."""
    try:
        return ElfFile(stream)
    except Exception as exc:  # as `reading`
        raise InputError(f"not a readable ELF file: {reason(exc)}") from None


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
            return _inflate(section, _read_at(section.elffile, header["sh_offset"], header["sh_size"], None))[:prefix]
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
    if kind == ELFCOMPRESS_ZLIB:
        try:
            out = zlib.decompressobj().decompress(stored[head:], size + 1)
        except zlib.error as exc:
            raise InputError(f"its zlib stream is corrupt ({exc})") from None
    elif kind == ELFCOMPRESS_ZSTD:
        import zstandard  # only for the rare zstd section

        try:
            out = zstandard.ZstdDecompressor().stream_reader(stored[head:], read_across_frames=True).read(size + 1)
        except zstandard.ZstdError as exc:
            raise InputError(f"its zstd stream is corrupt ({exc})") from None
    else:
        raise InputError(f"compressed in a way sfview does not know (ch_type {kind})")
    if len(out) != size:
        raise InputError(f"it inflates to {len(out)} bytes, but its compression header says {size}")
    return out


def segments(elf: ELFFile) -> list[Segment]:
    """The program headers; an `InputError` (saying where the table is) when they cannot be read."""
    what = f"the program headers (e_phoff {elf['e_phoff']:#x}, {elf['e_phnum']} of {elf['e_phentsize']} bytes)"
    with reading(what):
        count = elf.num_segments()
        end = elf["e_phoff"] + count * elf["e_phentsize"]
        if count and end > elf.stream_len:
            raise InputError(f"they end at {end:#x}, past the end of the file ({elf.stream_len:#x} bytes)")
        return list(elf.iter_segments())


def segment_bytes(elf: ELFFile, segment: Segment, start: int = 0, size: int | None = None) -> bytes:
    """`size` bytes (all, when None) from `start` in a segment's file bytes, no more than the file holds."""
    want = segment["p_filesz"] - start if size is None else min(size, segment["p_filesz"] - start)
    with reading(f"the segment at file offset {segment['p_offset']:#x}"):
        return _read_at(elf, segment["p_offset"] + start, max(want, 0), None)


def segment_view(elf: ElfFile, segment: Segment) -> memoryview:
    """A segment's file bytes as a view of the file mapped once: no copy, however many headers
    point at the same bytes (a forged core or program with thousands of them costs nothing)."""
    start = min(segment["p_offset"], elf.stream_len)
    return elf.mapped[start : start + segment["p_filesz"]]


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


def build_id(elf: ElfFile) -> bytes | None:
    """The GNU build-id note's bytes, if the file has one.

    The notes are split here with `struct` over bytes already read: pyelftools'
    note reader reads as many bytes as a note's header claims, from the file.
    """
    order = "<" if elf.little_endian else ">"
    for _, name, header in elf.section_headers:
        if header["sh_type"] != "SHT_NOTE":
            continue
        with reading(f"the {name or 'unnamed'} note section header"):
            section = elf._make_section(header)
        data = section_bytes(section)
        with reading(f"the notes of {name or 'an unnamed section'}"):
            for kind, owner, desc in _notes(data, order):
                if kind == NT_GNU_BUILD_ID and owner == b"GNU\0" and desc:
                    return desc
    return None


def _notes(data: bytes, order: str) -> Iterator[tuple[int, bytes, bytes]]:
    """(type, name, descriptor) of each note in a note section, stopping where one runs past the end."""
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, kind = struct.unpack_from(order + "III", data, pos)
        name_at = pos + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        end = desc_at + (descsz + 3) // 4 * 4
        if desc_at + descsz > len(data):
            return
        yield kind, data[name_at : name_at + namesz], data[desc_at : desc_at + descsz]
        pos = end
