"""ELF tables built to cost: more relocations than their section has bytes, symbols in sections far down a
long header table, tens of thousands of program headers. Work and memory bounded by the file's bytes, the
refusal said where.

The files are `shapes-x86_64-O2.o` and its program edited here (tests/elf_edit.py): `.rela.sframe` and
`.rela.eh_frame` repeated or pointed elsewhere, the section and program header tables grown.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from conftest import DATA, run_cli
from elf_edit import Elf

from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.elf import pyelftools_view
from sfview.inputs.elf.image import SectionHeader, SectionTable
from sfview.inputs.elf.names import relocated_places

OBJECT = DATA / "shapes-x86_64-O2.o"
RELA = struct.Struct("<QQq")
STT_FUNC_GLOBAL = 0x12


@pytest.mark.parametrize(("relocations", "target"), [(".rela.sframe", ".sframe"), (".rela.eh_frame", ".eh_frame")])
def test_more_relocations_than_bytes_are_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relocations: str, target: str
) -> None:
    """300,000 copies of one relocation for a section of 220 bytes: each read by pyelftools (some 10 us), for
    the names, the placement and again to relocate `.eh_frame` (7 s of `compare` from a 7 MB object). More
    relocations than their section's bytes are refused before one is read, and said."""
    from elftools.elf.relocation import RelocationSection

    made: list[int] = []
    real = RelocationSection.get_relocation
    monkeypatch.setattr(RelocationSection, "get_relocation", lambda self, n: (made.append(n), real(self, n))[1])
    elf = Elf.of(OBJECT.read_bytes())
    elf.replace(relocations, elf.contents(relocations)[: RELA.size] * 20_000)
    path = tmp_path / "many.o"
    path.write_bytes(elf.bytes())
    doc = Document.open(str(path))
    size = elf.section(target)["sh_size"]
    said = f"20000 relocations for the {size} bytes of {target}: more than one a byte"
    with pytest.raises(InputError, match=said):
        relocated_places(doc.image, pyelftools_view.open_view(doc.image), target)
    if target == ".eh_frame":  # and the CFI, relocated, read unrelocated
        pyelftools_view.relocated_section_bytes(doc.image, doc.image.section(target))
        assert any(said in str(e) for e in doc.image.lost), doc.image.lost
    assert len(made) < 100


def test_a_symbols_section_is_found_at_its_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each relocation's symbol's section was looked for through the whole header table: 20,000 relocations
    against a symbol in section 65,000 ran past 30 s from a 5 MB object. The table is read at the index."""
    made = [0]
    real = SectionTable.__getitem__

    def counted(self: SectionTable, index: int) -> SectionHeader:
        made[0] += 1
        return real(self, index)

    monkeypatch.setattr(SectionTable, "__getitem__", counted)

    elf = Elf.of(OBJECT.read_bytes())
    count = elf.header()["e_shnum"]
    far = count + 5_000 - 1
    elf.add_sections(5_000, sh_name=elf.section(".text")["sh_name"])
    symbols = elf.contents(".symtab")
    elf.replace(".symtab", symbols + struct.pack("<IBBHQQ", 1, STT_FUNC_GLOBAL, 0, far, 0, 16))
    number = len(symbols) // 24
    elf.replace(".rela.sframe", b"".join(RELA.pack(i, number << 32 | 2, 0) for i in range(200)))
    path = tmp_path / "far.o"
    path.write_bytes(elf.bytes())
    doc = Document.open(str(path))
    places = relocated_places(doc.image, pyelftools_view.open_view(doc.image), ".sframe")
    assert len(places) == 200
    assert made[0] < 10 * (count + 5_000)  # a few passes over the table, not one a relocation (1,000,000)


def test_program_headers_are_walked_not_held(tmp_path: Path) -> None:
    """`check` and `export` asked pyelftools for every program header at once to find the executable ranges
    and the load address: a Container of some 450 bytes per 56-byte header, held beside the image's own
    (65,000 `PT_GNU_SFRAME` headers, 3.7 MB: `check` at 82 MB). They are walked one at a time."""
    import tracemalloc

    program = DATA / "shapes-x86_64-O2"
    elf = Elf.of(program.read_bytes())
    h = elf.header()
    table = bytes(elf.data[h["e_phoff"] : h["e_phoff"] + h["e_phnum"] * h["e_phentsize"]])
    many = table + table[-h["e_phentsize"] :] * 20_000
    offset = (len(elf.data) + 7) & ~7
    elf.data += bytes(offset - len(elf.data)) + many
    elf.set_header(e_phoff=offset, e_phnum=len(many) // h["e_phentsize"])
    path = tmp_path / "many-headers"
    path.write_bytes(elf.bytes())
    view = pyelftools_view.open_view(Document.open(str(path)).image)
    expected = pyelftools_view.executable_ranges(pyelftools_view.open_view(Document.open(str(program)).image))
    tracemalloc.start()
    try:
        ranges = pyelftools_view.executable_ranges(view)
        base = pyelftools_view.load_address(view)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ranges == expected and base == 0
    size = len(many)
    assert peak < size, (peak, size)  # main: eight times the headers' bytes


@pytest.mark.parametrize("command", [("check",), ("export",)])
def test_section_headers_are_read_when_asked_not_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    """Each section header was held twice for the life of the file: as pyelftools' Container and as the
    image's `SectionHeader`, some 800 bytes a 64-byte header (65,000 headers, 4.25 MB: `check` at 74 MB
    against 21 MB for the program alone). One table, read from the bytes when asked: the memory they add
    is below the bytes they add, and the output is the program's own."""
    import tracemalloc

    program = DATA / "shapes-x86_64-O2"
    elf = Elf.of(program.read_bytes())
    elf.add_sections(20_000, sh_name=elf.section(".text")["sh_name"])
    path = tmp_path / program.name  # named as the program (`export` writes the name)
    path.write_bytes(elf.bytes())
    added = path.stat().st_size - program.stat().st_size

    def peak(target: Path) -> tuple[str, int]:
        tracemalloc.start()
        try:
            out = run_cli(*command, str(target), capsys=capsys).out
            return out, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    run_cli(*command, str(program), capsys=capsys)  # the modules imported
    expected, constant = peak(program)
    out, most = peak(path)
    assert out.replace(str(path), str(program)) == expected
    assert most - constant < added, (most - constant) / added  # main: thirteen times the added bytes


def test_a_relocation_past_the_symbols_is_said_by_its_number(tmp_path: Path) -> None:
    """A relocation naming symbol 0xffffff of a table of 15: pyelftools said "expected 4, found 0", neither
    which relocation nor what. The refusal names the relocation, its offset, the symbol and the table."""
    elf = Elf.of(OBJECT.read_bytes())
    relocations = bytearray(elf.contents(".rela.sframe"))
    offset, _, addend = RELA.unpack_from(relocations, 0)
    RELA.pack_into(relocations, 0, offset, 0xFFFFFF << 32 | 2, addend)
    elf.replace(".rela.sframe", bytes(relocations))
    path = tmp_path / "past.o"
    path.write_bytes(elf.bytes())
    doc = Document.open(str(path))
    count = elf.section(".symtab")["sh_size"] // 24
    said = f"relocation 0 (offset 0x0) names symbol 16777215: .symtab has {count}"
    with pytest.raises(InputError, match=re.escape(said)):
        relocated_places(doc.image, pyelftools_view.open_view(doc.image), ".sframe")
