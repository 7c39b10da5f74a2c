"""The ELF structures an unwind reads, unpacked with `struct`: the headers, sections and segments, notes.

Why not pyelftools here: importing its ELF reader loads its DWARF modules and
construct, a large share of an unwind's start-up (see `sfview.unwind`), and an
unwind reads only a core's notes and memory and, of each file, its headers and
two or three sections. pyelftools
stays the reference: `tests/model/test_elfimage.py` compares every field read here
with its reading, on every fixture and on damaged files. What this reader does
not do (relocations, DWARF) stays with pyelftools (`pyelftools_view.ElfFile`).

Numbers are kept as numbers; the names pyelftools gives the header's type and
machine (`ET_CORE`, `EM_X86_64`), which messages and the architecture tables
use, are given by `ElfImage.type` and `ElfImage.machine`.
"""

from __future__ import annotations

import io
import mmap
import os
import struct
from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import BinaryIO, NamedTuple, overload

from sfview.errors import InputError
from sfview.inputs import limits
from sfview.inputs.boundary import BoundedStrings, reading

ELF_MAGIC = b"\x7fELF"
ET_REL = 1
ET_NAMES = {0: "ET_NONE", 1: "ET_REL", 2: "ET_EXEC", 3: "ET_DYN", 4: "ET_CORE"}
EM_NAMES = {3: "EM_386", 22: "EM_S390", 40: "EM_ARM", 62: "EM_X86_64", 183: "EM_AARCH64", 243: "EM_RISCV"}
"""pyelftools' names of the machines sfview meets; any other is named by pyelftools' table (`machine`)."""
PT_LOAD, PT_DYNAMIC, PT_NOTE, PT_PHDR = 1, 2, 4, 6
PT_GNU_EH_FRAME, PT_GNU_SFRAME = 0x6474E550, 0x6474E554
PF_X, PF_W = 1, 2
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS, SHT_REL, SHT_DYNSYM = 2, 3, 4, 7, 8, 9, 11
SHF_EXECINSTR, SHF_COMPRESSED = 0x4, 0x800
SHN_XINDEX = 0xFFFF
PN_XNUM = 0xFFFF
ELFCOMPRESS_ZLIB, ELFCOMPRESS_ZSTD = 1, 2
NT_GNU_BUILD_ID = 3
NOTE_HEADER = 12
"""namesz, descsz, type: three 4-byte words in both classes (as Linux and pyelftools read them)."""

# The layouts of the ELF specification, by class, without the byte order.
HEADER_LAYOUT = {32: "HHIIIIIHHHHHH", 64: "HHIQQQIHHHHHH"}
"""After e_ident's 16 bytes: e_type ... e_shstrndx."""
SEGMENT_LAYOUT = {32: "IIIIIIII", 64: "IIQQQQQQ"}
SECTION_LAYOUT = {32: "IIIIIIIIII", 64: "IIQQQQIIQQ"}
CHDR_LAYOUT = {32: "III", 64: "IIQQ"}


class Segment(NamedTuple):
    """A program header."""

    type: int
    flags: int
    offset: int
    vaddr: int
    paddr: int
    filesz: int
    memsz: int
    align: int


class SectionHeader(NamedTuple):
    """A section header, with its index and its name from `.shstrtab` ("" when it has none)."""

    index: int
    name: str
    name_offset: int
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


class Note(NamedTuple):
    """One note: its type, name (with its NUL, as stored) and descriptor, and where it starts.

    Name and descriptor are views of the bytes the notes were split from, not copies: a sparse core's
    note may be far larger than the file, and no reader may want it.
    """

    type: int
    name: memoryview
    desc: memoryview
    offset: int
    """From the start of the bytes the notes were split from."""
    size: int
    """Header, name and descriptor, each padded to 4 bytes."""


class SectionTable(Sequence[SectionHeader]):
    """The section headers, each unpacked from the file's bytes when asked for and let go: an object per
    header held for the life of the file (a `SectionHeader`, and pyelftools' `Container` for its view)
    cost some 800 bytes a 64-byte header. What is kept: one name per distinct name offset, and where each
    name is first found."""

    def __init__(self, image: ElfImage, count: int) -> None:
        self._image = image
        self._count = count
        self.names: BoundedStrings | None = None
        """`.shstrtab`, once read (until then every header is unnamed)."""
        self._named: dict[int, str] = {}

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> SectionHeader: ...

    @overload
    def __getitem__(self, index: slice) -> list[SectionHeader]: ...

    def __getitem__(self, index: int | slice) -> SectionHeader | list[SectionHeader]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError(f"section {index} of {self._count}")
        index %= self._count
        image = self._image
        fields = image._section.unpack_from(image.data, image.shoff + index * image.shentsize)
        return SectionHeader(index, self.name_at(fields[0]), *fields)

    def __iter__(self) -> Iterator[SectionHeader]:
        return (self[index] for index in range(self._count))

    def name_at(self, offset: int) -> str:
        """The name at `offset` in `.shstrtab` ("" for none), decoded once for every header naming it."""
        name = self._named.get(offset)
        if name is None:
            name = (self.names.at(offset) or "") if self.names is not None else ""
            if self.names is not None:
                self._named[offset] = name
        return name

    @cached_property
    def first_index(self) -> dict[str, int]:
        """Each name's first section, found in one pass when first asked for."""
        first: dict[str, int] = {}
        for header in self:
            first.setdefault(header.name, header.index)
        return first

    def index_of(self, name: str) -> int | None:
        """The index of the first section called `name`, None when there is none."""
        return self.first_index.get(name)


def _map(stream: BinaryIO) -> memoryview:
    """The whole file, mapped (read by the OS as it is used), or the bytes a test holds in memory."""
    getbuffer = getattr(stream, "getbuffer", None)
    if getbuffer is not None:
        return getbuffer().toreadonly()
    try:
        size = stream.seek(0, 2)
    except OSError as exc:  # a file with no end to seek to (`/proc/self/status`)
        raise InputError(f"seeking its end fails ({exc.strerror or exc}): not a regular file") from None
    if not size:
        return memoryview(b"")
    try:
        return memoryview(mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ))
    except (OSError, ValueError) as exc:  # a file system that cannot map files, a size that is not its own
        reason = getattr(exc, "strerror", None) or exc
        raise InputError(f"mapping its {size} bytes fails ({reason})") from None


class ElfImage:
    """An ELF file read from its bytes (a mapped file, or an image such as the vDSO's from a core).

    Building one reads the header and no more; an `InputError` says why when
    there is no ELF header. Program and section headers are read when asked
    for, each refusal naming the table and why.
    """

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data).toreadonly()
        self.size = len(self.data)
        if bytes(self.data[:4]) != ELF_MAGIC:
            raise InputError("Magic number does not match")
        self.elfclass = {1: 32, 2: 64}.get(self._byte(4), 0)
        if not self.elfclass:
            raise InputError(f"Invalid EI_CLASS {bytes(self.data[4:5])!r}")
        if self._byte(5) not in (1, 2):
            raise InputError(f"Invalid EI_DATA {bytes(self.data[5:6])!r}")
        self.little_endian = self._byte(5) == 1
        self.order = "<" if self.little_endian else ">"
        header = struct.Struct(self.order + HEADER_LAYOUT[self.elfclass])
        if self.size < 16 + header.size:
            raise InputError(f"its header needs {16 + header.size} bytes, the file has {self.size}")
        (self.e_type, self.e_machine, _, self.entry, self.phoff, self.shoff, _, _, self.phentsize, self.e_phnum,
         self.shentsize, self.e_shnum, self.e_shstrndx) = header.unpack_from(self.data, 16)  # fmt: skip
        self._segment = struct.Struct(self.order + SEGMENT_LAYOUT[self.elfclass])
        self._section = struct.Struct(self.order + SECTION_LAYOUT[self.elfclass])
        self.stream: BinaryIO | None = None
        """The file it was mapped from, which a pyelftools view of it reads too."""
        self.lost: list[InputError] = []
        """What the readers could not do here and what it cost (a DWARF section left unrelocated)."""

    @classmethod
    def of(cls, stream: BinaryIO) -> ElfImage:
        """The ELF file open in `stream`, mapped whole."""
        image = cls(_map(stream))
        image.stream = stream
        return image

    @property
    def relocatable(self) -> bool:
        """Whether this is a relocatable object (`ET_REL`, a `.o`): its addresses are not known until linked."""
        return self.e_type == ET_REL

    def _byte(self, at: int) -> int:
        return self.data[at] if at < self.size else -1

    @property
    def type(self) -> str | int:
        """The ELF type as pyelftools names it (`ET_CORE`), or its number."""
        return ET_NAMES.get(self.e_type) or _enum_name("ENUM_E_TYPE", self.e_type)

    @property
    def machine(self) -> str | int:
        """The machine as pyelftools names it (`EM_X86_64`), or its number."""
        return EM_NAMES.get(self.e_machine) or _enum_name("ENUM_E_MACHINE", self.e_machine)

    # Program headers --------------------------------------------------------

    @cached_property
    def segments(self) -> list[Segment]:
        """The program headers; an `InputError` (saying where the table is) when they cannot be read."""
        what = f"the program headers (e_phoff {self.phoff:#x}, {self.e_phnum} of {self.phentsize} bytes)"
        with reading(what):
            count = self.e_phnum if self.e_phnum < PN_XNUM else self._first_section().info
            if count and self.phentsize < self._segment.size:
                raise InputError(f"Too small e_phentsize: {self.phentsize}")
            end = self.phoff + count * self.phentsize
            if count and end > self.size:
                raise InputError(f"they end at {end:#x}, past the end of the file ({self.size:#x} bytes)")
            return [Segment(*self._unpack_segment(self.phoff + i * self.phentsize)) for i in range(count)]

    def _unpack_segment(self, at: int) -> tuple[int, ...]:
        fields = self._segment.unpack_from(self.data, at)
        if self.elfclass == 32:  # p_flags comes after p_memsz in ELF32
            kind, offset, vaddr, paddr, filesz, memsz, flags, align = fields
            return kind, flags, offset, vaddr, paddr, filesz, memsz, align
        return fields

    @cached_property
    def read_only_loads(self) -> list[tuple[Segment, memoryview]]:
        """The loadable segments with file bytes that no process writes to, each with a view of them, made
        once: a file mapped at a thousand places holds one view a segment, not one a place."""
        return [
            (seg, self.segment_view(seg))
            for seg in self.segments
            if seg.type == PT_LOAD and not seg.flags & PF_W and seg.filesz
        ]

    def segment_view(self, segment: Segment, start: int = 0, size: int | None = None) -> memoryview:
        """`size` bytes (all, when None) from `start` in a segment's file bytes, as many as the file
        holds: a view of the mapped file, no copy however many headers point at the same bytes."""
        want = segment.filesz - start if size is None else min(size, segment.filesz - start)
        begin = min(segment.offset + start, self.size)
        return self.data[begin : begin + max(want, 0)]

    def segment_bytes(self, segment: Segment) -> bytes:
        """A segment's file bytes, copied (as many as the file holds); over the limit, refused."""
        return self._read_at(min(segment.offset, self.size), segment.filesz, None)

    # Section headers --------------------------------------------------------

    def _first_section(self) -> SectionHeader:
        """Section header 0, which holds the counts too big for the ELF header (and is read by itself)."""
        return self._section_header(0)

    def _section_header(self, index: int) -> SectionHeader:
        """Section header `index`, unnamed (`sections` names them once `.shstrtab` is read)."""
        if self.shentsize < self._section.size:
            raise InputError(f"Too small e_shentsize: {self.shentsize}")
        at = self.shoff + index * self.shentsize
        if at + self._section.size > self.size:
            raise InputError(f"section header {index} runs past the end of the file ({self.size:#x} bytes)")
        fields = self._section.unpack_from(self.data, at)
        return SectionHeader(index, "", *fields)

    @cached_property
    def section_count(self) -> int:
        """How many section headers the ELF header (or section header 0) says there are."""
        if not self.shoff:
            return 0
        return self.e_shnum or self._first_section().size

    @cached_property
    def _sections(self) -> tuple[SectionTable, InputError | None]:
        try:
            with reading(f"the section headers (e_shoff {self.shoff:#x})"):
                count, size = self.section_count, max(self.shentsize, 1)
                if count and self.shoff + count * size > self.size:
                    raise InputError(
                        f"{count} headers of {size} bytes run past the end of the file ({self.size:#x} bytes)"
                    )
                if count:
                    self._section_header(0)  # the entry size checked, and the table's place
        except InputError as exc:
            return SectionTable(self, 0), exc
        table = SectionTable(self, count)
        table.names = BoundedStrings(self._section_names(table), "replace")  # as pyelftools decodes them
        return table, None

    @property
    def sections(self) -> SectionTable:
        """Every section header, in order, named; none when the table cannot be read (`headers_error` says why)."""
        return self._sections[0]

    @property
    def headers_error(self) -> InputError | None:
        """Why the section headers could not be read."""
        return self._sections[1]

    def _section_names(self, headers: SectionTable) -> bytes:
        """`.shstrtab`'s bytes, as many as the file holds; none when there is no such table (the
        sections are still there, unnamed)."""
        index = self.e_shstrndx if self.e_shstrndx != SHN_XINDEX else headers[0].link if len(headers) else 0
        if not 0 < index < len(headers) or headers[index].type == SHT_NOBITS:
            return b""
        try:
            return self.section_bytes(headers[index], partial=True)
        except InputError:
            return b""

    def section(self, name: str) -> SectionHeader | None:
        """The first section called `name`, None when there is none."""
        index = self.sections.index_of(name)
        return None if index is None else self.sections[index]

    def section_at(self, index: int) -> SectionHeader | None:
        """Section `index`, None when there is no such section."""
        sections = self.sections
        return sections[index] if 0 <= index < len(sections) else None

    def section_bytes(self, header: SectionHeader, prefix: int | None = None, *, partial: bool = False) -> bytes:
        """A section's contents, inflated if compressed (zlib, zstd).

        A section the file holds only part of is an `InputError`, or with
        `partial`, the bytes the file holds (the caller compares with the
        size to say so). A size over `limits.max_size` is refused before
        anything is read. `prefix`: only that many bytes are wanted.
        """
        name = header.name or "unnamed"
        with reading(f"the {name} section (file offset {header.offset:#x}, {header.size} bytes)"):
            if header.type == SHT_NOBITS:
                raise InputError("it has no contents in this file (SHT_NOBITS)")
            if header.flags & SHF_COMPRESSED:
                inflated = self._inflate(self._read_at(header.offset, header.size, None))
                return inflated if prefix is None else inflated[:prefix]
            data = self._read_at(header.offset, header.size, prefix)
            wanted = header.size if prefix is None else min(header.size, prefix)
            if not partial and len(data) < wanted:
                raise InputError(f"the file holds only {len(data)} of its bytes")
            return data

    def _read_at(self, offset: int, size: int, prefix: int | None) -> bytes:
        """Up to `size` bytes from `offset` (`prefix` at most), no more than the file holds; over the limit, refused."""
        held = max(0, min(size, self.size - offset))
        want = held if prefix is None else min(held, prefix)
        limits.check_size(want, "bytes")
        if self.stream is not None and not isinstance(self.stream, io.BytesIO) and not self.stream.closed:
            # Read from the file, not copied out of its mapping: the mapped pages a copy touches count
            # in the process's memory as much as the copy (compare on 40,003 functions: 14 -> 9.4 bytes
            # per section byte).
            return os.pread(self.stream.fileno(), want, offset)
        return bytes(self.data[offset : offset + want])

    def _inflate(self, stored: bytes) -> bytes:
        """A compressed section's bytes (its `Elf_Chdr`, then the stream), inflated; no more than it claims."""
        chdr = struct.Struct(self.order + CHDR_LAYOUT[self.elfclass])
        if len(stored) < chdr.size:
            raise InputError(
                f"compressed, but holds {len(stored)} bytes, fewer than its compression header's {chdr.size}"
            )
        kind, *fields = chdr.unpack_from(stored)
        size = fields[0] if self.elfclass == 32 else fields[1]  # ELF64 has a reserved word first
        limits.check_size(size, "bytes once inflated")
        return inflate(kind, size, stored[chdr.size :])

    # Notes ------------------------------------------------------------------

    def notes(self, data: bytes | memoryview) -> Iterator[Note]:
        """The notes in a note section's or segment's bytes, in order, stopping where one runs past them
        (as pyelftools, which stops once no whole header is left)."""
        header = struct.Struct(self.order + "III")
        data = memoryview(data)
        pos = 0
        while pos + NOTE_HEADER < len(data):
            namesz, descsz, kind = header.unpack_from(data, pos)
            desc_at = pos + NOTE_HEADER + (namesz + 3) // 4 * 4
            end = desc_at + (descsz + 3) // 4 * 4
            if desc_at + descsz > len(data):
                return
            name = data[pos + NOTE_HEADER : pos + NOTE_HEADER + namesz]
            yield Note(kind, name, data[desc_at : desc_at + descsz], pos, end - pos)
            pos = end

    def build_id(self) -> bytes | None:
        """The GNU build-id note's bytes, if the file has one (its note sections searched in order).

        Each stretch of the file is searched once (section headers may share one), and no more than
        `NOTES_SEARCHED` notes in all, each section searched counting as one at least: a section that
        inflates to millions of empty notes, or thousands of sections over one run of them, are left
        there, and named (an `InputError`) if no note before gives the build-id.
        """
        searched: set[tuple[int, int]] = set()
        left = NOTES_SEARCHED
        for header in self.sections:
            if header.type != SHT_NOTE or (header.offset, header.size) in searched:
                continue
            if left <= 0:
                name = header.name or "an unnamed section"
                raise InputError(f"no build-id in the first {NOTES_SEARCHED} notes: the search stops before {name}")
            searched.add((header.offset, header.size))
            left -= 1
            data = self.section_bytes(header)
            name = header.name or "an unnamed section"
            with reading(f"the notes of {name}"):
                for note in self.notes(data):
                    if note.type == NT_GNU_BUILD_ID and note.name == b"GNU\0" and note.desc:
                        return bytes(note.desc)
                    left -= 1
                    if left < 0:
                        break
            if left < 0:  # said once, not inside what the notes are read as
                raise InputError(f"no build-id in the first {NOTES_SEARCHED} notes: the search stops in {name}")
        return None


NOTES_SEARCHED = 4096
"""The most notes `build_id` reads in all (a linker writes the build-id note first, in a section of its own;
a program has a few note sections)."""


def open_image(stream: BinaryIO) -> ElfImage:
    """The ELF file in `stream`; an `InputError` when not even its header can be read."""
    try:
        return ElfImage.of(stream)
    except InputError as exc:
        raise InputError(f"not a readable ELF file: {exc.message}") from None


def inflate(kind: int, size: int, stream: bytes) -> bytes:
    """A section's compressed `stream` (`ch_type` `kind`), inflated to its `size` bytes and no more.

    The last stream inflated is kept with what it gave: the readers that ask for one section (the image's,
    pyelftools' view's), or sections that share one stream, get the same bytes, not a copy each (two
    copies of a 256 MiB inflation from a 27 KB file). More than `SPILL_SIZE` bytes are inflated a chunk
    at a time into an unlinked temporary file, and what is given is its mapping (an `mmap`, read as
    bytes are: by index, slice, `find`, `struct`): only the pages a reader touches are in memory, not
    the 256 MiB a 27 KB file may inflate to.
    """
    key = (kind, size, bytes(stream))
    if _last_inflated and _last_inflated[0] == key:
        return _last_inflated[1]
    out = _inflate_stream(kind, size, key[2])
    _last_inflated[:] = [key, out]
    return out


_last_inflated: list = []
"""The last stream inflated (its kind, size and bytes) and its inflated bytes."""


SPILL_SIZE = 16 << 20
"""Inflated sections larger than this go to a temporary file, mapped (`inflate`)."""
SPILL_CHUNK = 1 << 20
"""What is inflated at a time into the temporary file."""


def _inflate_stream(kind: int, size: int, stream: bytes) -> bytes:
    """`stream` inflated: `size` bytes, else an `InputError` saying how many it gave."""
    chunks = _chunks(kind, stream, size + 1)
    out = b"".join(chunks) if size <= SPILL_SIZE else _spilled(chunks)  # a mapping is read as bytes are
    if len(out) != size:
        raise InputError(f"it inflates to {len(out)} bytes, but its compression header says {size}")
    return out


def _chunks(kind: int, stream: bytes, most: int) -> Iterator[bytes]:
    """What `stream` inflates to, no more than `most` bytes, `SPILL_CHUNK` at a time."""
    if kind == ELFCOMPRESS_ZLIB:
        import zlib  # only for a compressed section

        try:
            inflater = zlib.decompressobj()
            left, data = most, stream
            while left > 0:
                chunk = inflater.decompress(data, min(left, SPILL_CHUNK))
                if not chunk:
                    return
                left -= len(chunk)
                data = inflater.unconsumed_tail
                yield chunk
        except zlib.error as exc:
            raise InputError(f"its zlib stream is corrupt ({exc})") from None
    elif kind == ELFCOMPRESS_ZSTD:
        import zstandard  # only for the rare zstd section

        try:
            reader = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)
            left = most
            while left > 0:
                chunk = reader.read(min(left, SPILL_CHUNK))
                if not chunk:
                    return
                left -= len(chunk)
                yield chunk
        except zstandard.ZstdError as exc:
            raise InputError(f"its zstd stream is corrupt ({exc})") from None
    else:
        raise InputError(f"compressed in a way sfview does not know (ch_type {kind})")


def _spilled(chunks: Iterator[bytes]) -> mmap.mmap | bytes:
    """`chunks` written to an unlinked temporary file, and its mapping (b"" when they are none)."""
    import tempfile  # only for a large inflated section

    try:
        with tempfile.TemporaryFile() as spill:
            for chunk in chunks:
                spill.write(chunk)
            spill.flush()
            if not spill.tell():
                return b""
            return mmap.mmap(spill.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise InputError(f"inflating it into a temporary file fails ({exc.strerror or exc})") from None


def _enum_name(table: str, value: int) -> str | int:
    """pyelftools' name for a header value sfview has no name of its own for (a refusal's message
    only: its tables load its construct library)."""
    from elftools.elf import enums

    return next((name for name, number in getattr(enums, table).items() if number == value), value)
