"""`ElfImage` (the struct reader an unwind uses) against pyelftools, its reference, field by field.

Why: the unwind reads ELF files and cores without pyelftools to start
quickly; what it reads must be what pyelftools reads, on every fixture, and a
damaged file must give a located `InputError`, never a traceback.
"""

from __future__ import annotations

import io
import struct
import time
import tracemalloc
from pathlib import Path

import pytest
from elftools.elf import enums
from elftools.elf.elffile import ELFFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfview.errors import InputError
from sfview.inputs.core import Memory, read_core
from sfview.inputs.elf.image import PT_NOTE, SHF_COMPRESSED, SHT_NOBITS, ElfImage

DATA = Path(__file__).parents[1] / "data"
SHARED = Path("/work/wt/shared/fixtures/elf")
FILES = sorted({p.resolve() for folder in (DATA, SHARED) if folder.is_dir() for p in folder.iterdir() if p.is_file()})
ELF_FILES = [p for p in FILES if p.read_bytes()[:4] == b"\x7fELF"]


def _is(number: int, named: str | int, prefix: str) -> bool:
    """Whether pyelftools' `named` (a name from one of its `prefix` tables, or the bare number) is `number`."""
    if named == number:
        return True
    tables = [getattr(enums, t) for t in dir(enums) if t.startswith(prefix)]
    return any(table.get(named) == number for table in tables)


def _compare(image: ElfImage, elf: ELFFile) -> None:
    """Every field the unwind reads, both ways."""
    assert (image.type, image.machine) == (elf["e_type"], elf["e_machine"])
    assert (image.elfclass, image.little_endian, image.entry) == (elf.elfclass, elf.little_endian, elf["e_entry"])
    assert (image.phoff, image.shoff, image.e_shstrndx) == (elf["e_phoff"], elf["e_shoff"], elf["e_shstrndx"])
    assert image.section_count == elf.num_sections()
    segments = list(elf.iter_segments())
    assert len(image.segments) == len(segments)
    for ours, theirs in zip(image.segments, segments, strict=True):
        assert _is(ours.type, theirs["p_type"], "ENUM_P_TYPE")
        fields = ("flags", "offset", "vaddr", "paddr", "filesz", "memsz", "align")
        assert [getattr(ours, f) for f in fields] == [theirs[f"p_{f}"] for f in fields]
        if ours.type == PT_NOTE:
            _compare_notes(image, ours, theirs)
    for ours, theirs in zip(image.sections, elf.iter_sections(), strict=True):
        assert ours.name == theirs.name
        assert _is(ours.type, theirs["sh_type"], "ENUM_SH_TYPE")
        fields = ("flags", "addr", "offset", "size", "link", "info", "addralign", "entsize")
        assert [getattr(ours, f) for f in fields] == [theirs[f"sh_{f}"] for f in fields]
        if ours.type != SHT_NOBITS and not ours.flags & SHF_COMPRESSED and ours.offset + ours.size <= image.size:
            assert image.section_bytes(ours) == theirs.data()


def _compare_notes(image: ElfImage, segment, theirs) -> None:
    notes = list(image.notes(image.segment_view(segment)))
    expected = list(theirs.iter_notes())
    assert len(notes) == len(expected)
    for note, other in zip(notes, expected, strict=True):
        assert _is(note.type, other["n_type"], "ENUM_")
        assert (segment.offset + note.offset, note.size) == (other["n_offset"], other["n_size"])
        assert note.desc == other["n_descdata"]
        assert bytes(note.name).rstrip(b"\0").decode() == (other["n_name"] or "")


@pytest.mark.parametrize("path", ELF_FILES, ids=lambda p: p.name)
def test_every_fixture_reads_as_pyelftools_reads_it(path: Path) -> None:
    with path.open("rb") as f:
        _compare(ElfImage.of(f), ELFFile(f))


@pytest.mark.parametrize("path", [p for p in ELF_FILES if p.suffix == ".core"], ids=lambda p: p.name)
def test_a_core_s_mapped_files_are_pyelftools_nt_file(path: Path) -> None:
    """`NT_FILE`, unpacked by hand for the unwind, against pyelftools' parse of it."""
    with path.open("rb") as f:
        elf = ELFFile(f)
        expected = [
            (entry["vm_start"], entry["vm_end"], entry["page_offset"], name.decode())
            for seg in elf.iter_segments()
            if seg["p_type"] == "PT_NOTE"
            for note in seg.iter_notes()
            if note["n_type"] == "NT_FILE"
            for entry, name in zip(note["n_desc"]["Elf_Nt_File_Entry"], note["n_desc"]["filename"], strict=True)
        ]
    core = read_core(str(path))
    assert [(m.start, m.end, m.file_offset, m.path) for m in core.mappings] == expected


def test_a_header_that_is_not_elf_is_refused_as_pyelftools_words_it() -> None:
    for data in (b"\x7fELG" + bytes(60), b"\x7fELF\x03" + bytes(59), b"\x7fELF\x02\x07" + bytes(58)):
        with pytest.raises(Exception) as theirs:
            ELFFile(io.BytesIO(data))
        with pytest.raises(InputError) as ours:
            ElfImage(data)
        assert ours.value.message == str(theirs.value)


SMALL = [p for p in ELF_FILES if p.stat().st_size < 200_000]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(SMALL),
    st.lists(st.tuples(st.integers(0, 1 << 32), st.integers(0, 255)), min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(0, 1 << 32)),
)
def test_a_damaged_file_reads_as_pyelftools_reads_it_or_is_a_located_refusal(
    path: Path, changes: list[tuple[int, int]], cut: int | None
) -> None:
    """Bytes changed (half of them in the ELF header and the program headers, half anywhere: the section
    headers are at the end) and the file cut short: what both readers read is the same; where
    `ElfImage` refuses, it is an `InputError` (what the callers locate), never another exception."""
    data = bytearray(path.read_bytes())
    for i, (at, value) in enumerate(changes):
        data[at % (1024 if i % 2 else len(data))] = value
    data = data[: cut % (len(data) + 1)] if cut is not None else data
    try:
        image = ElfImage(bytes(data))
        segments, sections, error = image.segments, image.sections, image.headers_error
        for segment in segments:
            if segment.type == PT_NOTE:
                list(image.notes(image.segment_view(segment)))
    except InputError:
        return
    try:
        elf = ELFFile(io.BytesIO(bytes(data)))
        theirs_segments = [dict(seg.header) for seg in elf.iter_segments()]
        theirs_sections = [dict(s.header) for s in elf.iter_sections()] if error is None else None
    except Exception:  # pyelftools refuses what the struct reader reads: nothing to compare
        return
    assert len(segments) == len(theirs_segments)
    for ours, theirs in zip(segments, theirs_segments, strict=True):
        assert (ours.offset, ours.vaddr, ours.filesz, ours.memsz) == (
            theirs["p_offset"],
            theirs["p_vaddr"],
            theirs["p_filesz"],
            theirs["p_memsz"],
        )
    if theirs_sections is not None and len(theirs_sections) == len(sections):
        for ours, theirs in zip(sections, theirs_sections, strict=True):
            assert (ours.offset, ours.size, ours.link) == (theirs["sh_offset"], theirs["sh_size"], theirs["sh_link"])


def test_a_file_that_cannot_be_mapped_is_a_located_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that cannot map files (mmap's ENODEV) refuses the core in one located line."""
    from sfview.inputs.elf import image as elfimage

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(19, "No such device")

    monkeypatch.setattr(elfimage.mmap, "mmap", refuse)
    core = DATA / "deep-x86_64.core"
    with pytest.raises(InputError) as refused:
        read_core(str(core))
    size = core.stat().st_size
    assert str(refused.value) == f"{core}: not a readable core file: mapping its {size} bytes fails (No such device)"


@pytest.mark.parametrize("path", ["/proc/self/status", "/proc/self/maps"])
def test_a_file_with_no_end_is_a_located_refusal(path: str) -> None:
    """A `/proc` file cannot be sought to its end: the refusal names it and what failed (it said "writing
    the output: Invalid argument")."""
    with pytest.raises(InputError) as refused:
        read_core(path)
    assert str(refused.value) == (
        f"{path}: not a readable core file: seeking its end fails (Invalid argument): not a regular file"
    )


def test_memory_reads_the_first_range_added_at_an_address_whatever_the_order() -> None:
    memory = Memory()
    for start, fill in ((0x3000, b"c"), (0x1000, b"a"), (0x1000, b"A"), (0x2000, b"b")):
        memory.add(start, fill * 0x10)
    assert memory.read(0x2000, 1) == ord("b")
    memory.add(0x2000, b"B" * 0x10)  # after a read: still the first added
    assert [memory.read(at, 1) for at in (0x1000, 0x2000, 0x3000)] == [ord("a"), ord("b"), ord("c")]
    assert memory.read(0x1010, 1) is None and memory.bytes_from(0x300F) == b"c"


def test_200000_ranges_added_in_reverse_order_are_sorted_in_a_moment() -> None:
    """A core's `PT_LOAD`s were each inserted into a sorted list: 200,000 in reverse order took 4.9 s."""
    memory = Memory()
    started = time.perf_counter()
    for i in range(200_000, 0, -1):
        memory.add(i * 0x1000, b"\x01")
    assert memory.read(0x1000, 1) == 1 and memory.read(200_000 * 0x1000, 1) == 1
    assert time.perf_counter() - started < 2.0


def test_a_core_s_note_is_not_copied_to_be_walked_past(tmp_path: Path) -> None:
    """A sparse core's 64 MB note of a type nobody reads was copied whole (600 MB: 1.2 GB of memory)."""
    raw = bytearray((DATA / "deep-x86_64.core").read_bytes())
    image = ElfImage(bytes(raw))
    rows = [bytes(raw[image.phoff + i * 56 : image.phoff + (i + 1) * 56]) for i in range(image.e_phnum)]
    size, note_at = 64 << 20, (len(raw) + 4095) & ~4095
    table_at = note_at + 16 + size
    rows.append(struct.pack("<IIQQQQQQ", PT_NOTE, 0, note_at, 0, 0, 16 + size, 0, 4))
    path = tmp_path / "big-note.core"
    with path.open("wb") as f:
        f.write(raw)
        f.seek(note_at)
        f.write(struct.pack("<III", 4, size, 0x999) + b"GNU\0")
        f.seek(table_at)
        f.write(b"".join(rows))
        f.seek(32)
        f.write(struct.pack("<Q", table_at))
        f.seek(56)
        f.write(struct.pack("<H", len(rows)))
    tracemalloc.start()
    try:
        core = read_core(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert core.threads and peak < 8 << 20
