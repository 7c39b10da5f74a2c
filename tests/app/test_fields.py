"""The field tree: every byte of a section has a named, documented field."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, SECTIONS, load_section_fixture

from sfview.app.fields import FieldTree
from sfview.document import Document
from sfview.sframe.model.section import Section


@pytest.fixture(scope="module")
def tree() -> FieldTree:
    return FieldTree(Document.open(str(DATA / "shapes-x86_64-O2")).require_section())


def test_status_names_path_value_and_bytes(tree: FieldTree) -> None:
    assert tree.field_at(2).status() == "preamble.version = V1 (1) at 0x2..0x3"
    assert tree.field_at(8).status() == "header.num_fdes = 9 at 0x8..0xc"
    assert tree.field_at(0x1D).status() == "fdes[0].func_start = -78216 (-0x13188) at 0x1c..0x20"
    assert tree.field_at(0xC7).status() == "fdes[5].fres[1].offsets[0] = 70016 (0x11180) at 0xc7..0xcb"


def test_info_bytes_are_whole_bytes_with_their_bit_fields(tree: FieldTree) -> None:
    info = tree.field_at(28 + 17 * 7 + 16)
    assert info.path == "fdes[7].func_info" and info.is_bit_byte
    assert info.status().endswith("pc_type=PCINC fre_type=ADDR2 at 0xa3..0xa4")
    bits = {b.name: b for b in tree.bit_breakdown(info)}
    assert (bits["fre_type"].high, bits["fre_type"].low, bits["fre_type"].bits) == (3, 0, "0001")
    assert bits["fre_type"].meaning == "each row's start address takes 2 bytes (the function is 4415 bytes long)"
    assert bits["pauth_key"].meaning == "unused outside AArch64"


def test_bit_7_of_a_version_1_info_byte_is_unused_not_a_signal_frame(tree: FieldTree) -> None:
    """Version 1 has no signal-frame bit (the `.ksy`: "version 3; unused before"): it was explained as
    `an ordinary function`, and its doc as a signal trampoline's."""
    bits = {b.name: b for b in tree.bit_breakdown(tree.field_at(28 + 17 * 7 + 16))}
    assert bits["signal_frame"].meaning == "clear, as unused in version 1 (version 3; unused before)"
    assert bits["signal_frame"].doc == ""
    content, base, _ = load_section_fixture(next(p for p in SECTIONS if p.name.endswith("2.46.json")))
    v3 = FieldTree(Section(bytes(content), base))
    assert v3.section.version == 3
    info = next(f for f in (v3.field_at(o) for o in range(len(content))) if f.path.endswith("func_info"))
    assert {b.name: b for b in v3.bit_breakdown(info)}["signal_frame"].meaning == "an ordinary function"


def test_fre_info_bits_and_meanings(tree: FieldTree) -> None:
    info = tree.field_at(0xC6)
    assert info.path == "fdes[5].fres[1].info"
    bits = [(b.name, b.high, b.low, b.bits, b.value) for b in tree.bit_breakdown(info)]
    assert bits == [
        ("mangled_ra", 7, 7, "0", "0 (no)"),
        ("offset_size", 6, 5, "10", "B4 (2)"),
        ("offset_count", 4, 1, "0001", "1"),
        ("cfa_base_reg", 0, 0, "1", "SP (1)"),
    ]
    offset = tree.field_at(0xC7)
    assert offset.meaning == "CFA = SP + 70016"
    assert "4 bytes" in next(c for c in info.children() if c.name == "offset_size").meaning


def test_every_byte_belongs_to_a_field(tree: FieldTree) -> None:
    section = tree.section
    for offset in range(len(section.data)):
        field = tree.field_at(offset)
        assert offset in field.span, (offset, field.path)
        assert field.path, f"byte {offset:#x} is claimed by no field"


def test_aarch64_offsets_say_what_they_save() -> None:
    tree = FieldTree(Document.open(str(DATA / "shapes-aarch64-O0-fp")).require_section())
    meanings = [tree.field_at(off).meaning for off in range(0xA1, 0xA7)]
    assert meanings[0] == "CFA = SP + 352"
    assert meanings[2] == "the caller's return address is saved at CFA -344"
    assert meanings[4] == "the caller's frame pointer is saved at CFA -352"


def test_every_field_carries_its_ksy_doc(tree: FieldTree) -> None:
    def walk(node, depth=0):
        yield node
        if depth < 5:
            for child in node.children():
                yield from walk(child, depth + 1)

    fields = list(walk(tree.function_field(5)))
    assert len(fields) > 20
    assert all(f.doc for f in fields), [f.path for f in fields if not f.doc]


@pytest.mark.parametrize("path", [p for p in SECTIONS if "2.46" in p.name], ids=lambda p: p.stem)
def test_v3_attribute_blocks_are_fields(path: Path) -> None:
    content, base, _ = load_section_fixture(path)
    section = Section(content, base)
    tree = FieldTree(section)
    func = section.function(0)
    assert func.attr_span is not None
    field = tree.field_at(func.attr_span.start)
    assert field.path == "fdes[0].attr.func_num_fres"
    assert field.value == func.num_fres
    assert tree.field_at(func.attr_span.start + 2).path == "fdes[0].attr.func_info"


def test_fields_know_their_fde_and_row() -> None:
    """Each field carries the FDE and FRE it lies in: nothing reads them back out of a path."""
    tree = FieldTree(Document.open(str(DATA / "shapes-x86_64-O2")).require_section())
    section = tree.section
    row = section.function(5).rows[1]
    info = tree.field_at(row.span.start + 1)
    assert (info.path, info.fde, info.fre) == ("fdes[5].fres[1].info", 5, 1)
    size = tree.field_at(section.function(2).span.start + 4)
    assert (size.path, size.fde, size.fre) == ("fdes[2].func_size", 2, None)
    assert (tree.field_at(8).path, tree.field_at(8).fde, tree.field_at(8).fre) == ("header.num_fdes", None, None)


def test_sub_section_offsets_say_where_they_land() -> None:
    tree = FieldTree(Document.open(str(DATA / "shapes-x86_64-O2")).require_section())
    assert tree.field_at(0x14).meaning == "the FDE array starts at section offset 0x1c = header end 0x1c + 0x0"
    assert tree.field_at(0x18).meaning == "the FRE sub-section starts at section offset 0xb5 = header end 0x1c + 0x99"


def test_a_row_that_cannot_be_decoded_is_shown_as_far_as_it_goes() -> None:
    """An FRE whose info byte says offset size 3: the record, its info byte and bit fields, the problem said."""
    from conftest import DATA

    from sfview.sframe.model.section import Section

    raw = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    raw[0xC6] = 0x63
    tree = FieldTree(Section(bytes(raw)))
    info = tree.field_at(0xC6)
    assert info.path == "fdes[5].fres[1].info"
    record = info.parent
    assert record is not None and record.path == "fdes[5].fres[1]" and (record.fde, record.fre) == (5, 1)
    assert "offset size" in record.problem or "not a defined value" in record.problem
    bits = {c.name: c.value for c in info.children() if c.kind == "bits"}
    assert int(bits["offset_size"]) == 3


def test_the_magic_reads_in_hex() -> None:
    from conftest import DATA

    from sfview.sframe.model.section import Section

    magic = FieldTree(Section((DATA / "shapes-x86_64-O2.sframe").read_bytes())).field_at(0)
    assert (magic.path, magic.display) == ("preamble.magic", "0xdee2")


def _blocks_by_the_model(section: Section) -> list[tuple[int, int]]:
    """Each function's FRE block (the offset its `func_start_fre_off` points at) with its index, sorted."""
    return sorted((section.function(i).attr_offset, i) for i in range(len(section)))


@pytest.mark.parametrize("path", SECTIONS[::3], ids=lambda p: p.stem)
def test_the_fre_blocks_read_from_the_fde_array_are_the_models(path: Path) -> None:
    """`_fre_block_starts` reads the FRE offsets straight from the FDE array (and sorts them only if need be):
    the same blocks, in the same order, as each function of the model says; blocks that start before their
    FDE's predecessor's (shuffled) as well."""
    content, base, _ = load_section_fixture(path)
    section = Section(content, base)
    starts, indexes = FieldTree(section)._fre_block_starts()
    assert list(zip(starts, indexes, strict=True)) == _blocks_by_the_model(section)
    if len(section) > 2:
        shuffled = bytearray(content)  # the first two FDEs swapped: their blocks out of FDE order
        first, size = section.fde_start, section.fde_size
        shuffled[first : first + 2 * size] = content[first + size : first + 2 * size] + content[first : first + size]
        section = Section(bytes(shuffled), base)
        starts, indexes = FieldTree(section)._fre_block_starts()
        assert list(zip(starts, indexes, strict=True)) == _blocks_by_the_model(section)
