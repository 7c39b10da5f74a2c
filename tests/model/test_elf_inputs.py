"""Finding the section: by name, through PT_GNU_SFRAME when section headers are gone, symbols."""

from __future__ import annotations

import struct
from pathlib import Path

from conftest import DATA

from sfview.document import Document
from sfview.errors import InputError


def without_section_headers(data: bytes) -> bytes:
    """The ELF with e_shoff, e_shnum and e_shstrndx zeroed, as `sstrip` leaves it."""
    out = bytearray(data)
    assert out[4] == 2 and out[5] == 1, "a 64-bit little-endian ELF"
    struct.pack_into("<Q", out, 0x28, 0)  # e_shoff
    struct.pack_into("<HH", out, 0x3C, 0, 0)  # e_shnum, e_shstrndx
    return bytes(out)


def test_segment_is_used_when_section_headers_are_gone(cli, tmp_path: Path) -> None:
    stripped = tmp_path / "sstripped"
    stripped.write_bytes(without_section_headers((DATA / "shapes-x86_64-O2").read_bytes()))
    doc = Document.open(str(stripped))
    assert doc.origin == "PT_GNU_SFRAME segment"
    assert doc.address == 0x141A8
    result = cli("dump", str(stripped))
    assert result.code == 0
    assert result.out == (DATA / "shapes-x86_64-O2.readelf-sframe.txt").read_text()


def test_symbols_come_from_symtab_then_dynsym() -> None:
    full = Document.open(str(DATA / "shapes-x86_64-O2"))
    assert full.symbols.origin == ".symtab"
    section = full.require_section()
    assert full.function_name(section.function(5)) == "huge_frame"
    stripped = Document.open(str(DATA / "shapes-x86_64-O2-stripped"))
    assert stripped.symbols.origin == "PLT entries", "no .symtab, no defined function in .dynsym: only PLT names"
    lib = Document.open(str(DATA / "libshapes-x86_64.so"))
    names = {lib.function_name(f) for f in lib.require_section().functions()}
    assert "huge_frame" in names


def test_base_overrides_the_section_address() -> None:
    doc = Document.open(str(DATA / "shapes-x86_64-O2"), base=0x1000)
    assert doc.address == 0x1000


def test_aarch64_and_relocatable_origins() -> None:
    arm = Document.open(str(DATA / "shapes-aarch64-O2"))
    assert arm.image is not None and arm.image.machine == "EM_AARCH64"
    assert arm.elf is not None and arm.elf["e_machine"] == "EM_AARCH64", "the ELF file itself stays reachable"
    assert arm.require_section().is_aarch64
    obj = Document.open(str(DATA / "shapes-x86_64-O2.o"))
    assert obj.relocatable
    assert obj.origin == ".sframe section"


def test_relocatable_is_answered_once_by_the_image() -> None:
    """A `.o` is relocatable, a linked file and a raw section are not; the Document asks its image."""
    obj, linked = Document.open(str(DATA / "shapes-x86_64-O2.o")), Document.open(str(DATA / "shapes-x86_64-O2"))
    assert obj.relocatable and obj.image is not None and obj.image.relocatable
    assert not linked.relocatable and linked.image is not None and not linked.image.relocatable
    assert not Document.open(str(DATA / "shapes-x86_64-O2.sframe")).relocatable


def test_the_image_and_the_view_know_nothing_of_each_other() -> None:
    """The Document holds the struct image and pyelftools' view side by side: no pointer back."""
    doc = Document.open(str(DATA / "shapes-x86_64-O2.o"))
    assert doc.elf is not None and doc.elf is doc.elf, "opened once"
    assert not hasattr(doc.elf, "image") and not hasattr(doc.image, "library")
    assert Document.open(str(DATA / "shapes-x86_64-O2.sframe")).elf is None


def test_a_model_of_its_own_shares_the_rest_of_the_file() -> None:
    """`with_own_model` (for a worker thread): a new `Section`, the same image, names and losses."""
    doc = Document.open(str(DATA / "shapes-x86_64-O2"))
    twin = doc.with_own_model()
    assert twin.section is not None and twin.section is not doc.section
    assert twin.image is doc.image and twin.symbols is doc.symbols
    twin.note_loss(InputError("a loss"))
    assert [exc.message for exc in doc.lost] == ["a loss"]


def test_unnamed_code_is_named_by_section_as_objdump_does() -> None:
    source = Document.open(str(DATA / "shapes-x86_64-O2"))
    names = [source.function_name(f) for f in source.require_section().functions()]
    assert names[:3] == [".plt", "printf@plt", "main"], "PLT entries by their synthetic name, else the section"
    stripped = Document.open(str(DATA / "shapes-x86_64-O2-stripped"))
    names = [stripped.function_name(f) for f in stripped.require_section().functions()]
    assert names[2:4] == [".text", ".text+0x130"]


def test_symbol_search_narrows_and_ranks() -> None:
    from sfview.inputs.symbols import Symbol, SymbolSearch, SymbolTable

    table = SymbolTable([Symbol(name, 0x1000 + i * 16, 16) for i, name in enumerate(["fmain", "main", "main2", "a"])])
    search = SymbolSearch(table)
    assert search.find("ma") == ([table.at(0x1010), table.at(0x1020), table.at(0x1000)], 3)
    top, count = search.find("main")  # extends "ma": only its matches are looked at again
    assert [s.name for s in top] == ["main", "main2", "fmain"] and count == 3
    assert search.find("main", 1) == ([table.at(0x1010)], 3), "the exact match first, the count still whole"
    assert search.find("zz") == ([], 0)


def test_symbols_are_ordered_by_address_then_largest_then_name() -> None:
    """The table's order, made without a key tuple per symbol, is the order of (address, -size, name)."""
    import random

    from sfview.inputs.symbols import Symbol, SymbolTable

    rng = random.Random(19)
    for _ in range(300):
        symbols = [Symbol(rng.choice("abc") * rng.randint(1, 2), rng.randrange(6), rng.randrange(4))
                   for _ in range(rng.randrange(30))]  # fmt: skip
        table = SymbolTable(symbols)
        assert table.symbols == sorted(symbols, key=lambda s: (s.address, -s.size, s.name))
        assert list(SymbolTable(symbols).by_address()) == table.symbols, "one at a time, the same order"
        starts = {s.address for s in symbols}
        assert [a for a in range(-1, 8) if table.starts_at(a)] == sorted(starts)
