"""`sfview dump` prints what binutils prints, byte for byte."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, ELF_FIXTURES, SECTIONS, fuzzed_section, load_section_fixture

from sfview.document import Document
from sfview.output import jsondoc, readelf
from sfview.sframe.bulk import reader


@pytest.mark.parametrize("binary", [p for p in ELF_FIXTURES if "no-sframe" not in p.name], ids=lambda p: p.name)
def test_elf_dump_matches_readelf(cli, binary: Path) -> None:
    expected = binary.with_name(binary.name + ".readelf-sframe.txt").read_text()
    result = cli("dump", str(binary))
    assert result.err == ""
    assert result.code == 0
    assert result.out == expected


@pytest.mark.parametrize("path", SECTIONS, ids=lambda p: p.stem)
def test_raw_section_dump_matches_objdump(cli, tmp_path: Path, path: Path) -> None:
    content, base, expected = load_section_fixture(path)
    raw = tmp_path / "section.sframe"
    raw.write_bytes(content)
    result = cli("dump", str(raw), "--base", hex(base))
    assert (result.code, result.err) == (0, "")
    assert result.out == expected


@pytest.mark.parametrize(
    "path", [p for p in ELF_FIXTURES if "no-sframe" not in p.name] + SECTIONS, ids=lambda p: p.name
)
def test_dump_with_no_block_kept_matches_binutils(
    cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, path: Path
) -> None:
    """Past what the bulk reader keeps (here from the first block: every block its own, none shared, no row
    pattern kept), the dump is still binutils' text."""
    monkeypatch.setattr(reader, "KEPT_MIN", 0)
    monkeypatch.setattr(reader, "KEPT_BYTES", 1 << 62)
    if path.suffix == ".json":
        content, base, expected = load_section_fixture(path)
        (tmp_path / "section.sframe").write_bytes(content)
        result = cli("dump", str(tmp_path / "section.sframe"), "--base", hex(base))
    else:
        expected = path.with_name(path.name + ".readelf-sframe.txt").read_text()
        result = cli("dump", str(path))
    assert (result.code, result.err, result.out) == (0, "", expected)


def test_raw_section_with_its_address_dumps_like_the_elf(cli) -> None:
    address = (DATA / "shapes-x86_64-O2.sframe.addr").read_text().strip()
    raw = cli("dump", str(DATA / "shapes-x86_64-O2.sframe"), "--base", address)
    assert raw.out == (DATA / "shapes-x86_64-O2.readelf-sframe.txt").read_text()


def test_raw_section_defaults_to_address_zero(cli) -> None:
    out = cli("dump", str(DATA / "shapes-x86_64-O2.sframe")).out
    # func_start of FDE 0 is -78216 from the section start: with base 0 it wraps as readelf's %lx does.
    assert "func idx [0]: pc = 0xfffffffffffece78, size = 16 bytes" in out


def test_json_dump_has_header_functions_and_rows(cli) -> None:
    result = cli("dump", "--json", str(DATA / "shapes-x86_64-O2"))
    assert result.code == 0
    doc = json.loads(result.out)
    header = doc["header"]
    assert (header["version"], header["num_fdes"], header["num_fres"]) == (1, 9, 23)
    assert header["flag_names"] == ["SFRAME_F_FDE_SORTED"]
    assert header["abi_name"] == "AMD64 little-endian"
    assert doc["section_address"] == 0x141A8
    plt = doc["functions"][1]
    assert (plt["address"], plt["pc_type"], plt["fre_type"]) == (0x1030, "PCMASK", "ADDR1")
    huge = doc["functions"][5]
    assert huge["symbol"] == "huge_frame"
    assert [row["cfa"]["text"] for row in huge["fres"]] == ["sp+8", "sp+70016", "sp+8"]
    assert huge["fres"][1]["offset_size"] == 4
    assert huge["fres"][1]["ra"] == {
        "text": "f",
        "kind": "value",
        "base": "cfa",
        "base_name": "CFA",
        "offset": -8,
        "deref": True,
        "fixed": True,
        "formula": "*(CFA - 8)",
    }
    assert sum(len(f["fres"]) for f in doc["functions"]) == header["num_fres"]


def test_json_dump_aarch64_tracks_fp_and_ra(cli) -> None:
    doc = json.loads(cli("dump", "--json", str(DATA / "shapes-aarch64-O0-fp")).out)
    rows = [row for func in doc["functions"] for row in func["fres"] if len(row["offsets"]) == 3]
    assert rows, "the -O0 AArch64 build saves FP and LR in most functions"
    for row in rows:
        cfa, ra, fp = row["offsets"]
        assert (row["cfa"]["offset"], row["ra"]["offset"], row["fp"]["offset"]) == (cfa, ra, fp)


def test_relocatable_object_names_functions_by_relocation(cli) -> None:
    doc = json.loads(cli("dump", "--json", str(DATA / "shapes-x86_64-O2.o")).out)
    names = [f["symbol"] for f in doc["functions"]]
    assert names == [
        "small_leaf",
        "medium_frame",
        "huge_frame",
        "dynamic_frame",
        "long_function",
        "very_long_function",
        "main",
    ]


@pytest.mark.parametrize("corrupt", [False, True])
def test_bulk_dump_is_the_model_dump(cli, tmp_path: Path, corrupt: bool) -> None:
    """The dump reads functions in bulk; the Kaitai model must print the same, on a section whole and broken."""
    data = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    if corrupt:
        data[28 + 17 * 6 + 16] = 0x0F  # FDE 6: an undefined FRE type
    raw = tmp_path / "section.sframe"
    raw.write_bytes(bytes(data))
    bulk = cli("dump", str(raw))
    section = Document.open(str(raw)).require_section()
    assert readelf.text(section, bulk=False)[0] == bulk.out == readelf.text(section)[0]
    assert bulk.code == (2 if corrupt else 0)
    if corrupt:
        assert "function 6" in bulk.err and "func idx [5]" in bulk.out
        assert "    func idx [6]:\n    [cannot be decoded at section offset 0x92: " in bulk.out, "in its place, why"
        assert "func idx [7]" in bulk.out and "func idx [8]" in bulk.out, "and the dump goes on"


def _both_json(doc: Document) -> tuple[object, object]:
    bulk, model = io.StringIO(), io.StringIO()
    jsondoc.write(doc, bulk)
    jsondoc.write(doc, model, bulk=False)
    return json.loads(bulk.getvalue()), json.loads(model.getvalue())


@pytest.mark.parametrize(
    "path", [*SECTIONS, *(p for p in ELF_FIXTURES if "no-sframe" not in p.name)], ids=lambda p: p.name
)
def test_bulk_json_is_the_model_json(tmp_path: Path, path: Path) -> None:
    if path.suffix == ".json":
        data, base, _ = load_section_fixture(path)
        raw = tmp_path / "section.sframe"
        raw.write_bytes(data)
        doc = Document.open(str(raw), base)
    else:
        doc = Document.open(str(path))
    bulk, model = _both_json(doc)
    assert bulk == model


@pytest.mark.parametrize("seed", range(40))
def test_bulk_json_is_the_model_json_on_damaged_sections(tmp_path: Path, seed: int) -> None:
    """Rows cut short, counts too big, undefined types: both paths say the same, problem included."""
    from sfview.errors import InputError

    try:
        doc = Document.open(str(fuzzed_section(seed, tmp_path)))
        doc.require_section()
    except InputError:
        return
    bulk, model = _both_json(doc)
    assert bulk == model


def test_a_dump_loads_neither_the_ui_nor_the_debug_parser() -> None:
    """Start-up stays lean: the text dump of a raw section needs no Textual and no position records."""
    assert _modules_a_dump_loads(DATA / "shapes-x86_64-O2.sframe", ("textual", "sfview.generated.sframe_debug")) == "[]"


def test_a_dump_of_an_executable_loads_no_pyelftools() -> None:
    """The dump of an executable reads its ELF structures with `elf.image` (struct): importing pyelftools, its
    DWARF modules and construct, was a quarter of the start-up (19 ms of 82), paid on every dump for `check`'s
    code ranges, which the dump's notes never ask for."""
    assert _modules_a_dump_loads(DATA / "shapes-x86_64-O2", ("elftools",)) == "[]"


def _modules_a_dump_loads(path: Path, prefixes: tuple[str, ...]) -> str:
    """The modules named `prefixes…` that `sfview dump PATH` imports, in a fresh interpreter, as it prints them."""
    code = (
        "import sys, io, contextlib\n"
        "from sfview.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['dump', {str(path)!r}])\n"
        f"print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.strip()


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", None], ids=["utf-8 buffer", "utf-16 buffer", "text only"])
def test_a_streamed_dump_is_the_text_in_its_place(encoding: str | None) -> None:
    """`write` gives a UTF-8 stream its bytes straight to its buffer (after what the stream already held), any
    other stream the text: either way what `text` returns, where it was written."""
    section = Document.open(str(DATA / "shapes-x86_64-O2")).require_section()
    expected = "before\n" + readelf.text(section)[0] + "after\n"
    stream: io.TextIOBase = io.StringIO() if encoding is None else io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    stream.write("before\n")
    readelf.write(section, stream)  # type: ignore[arg-type]
    stream.write("after\n")
    stream.flush()
    if isinstance(stream, io.StringIO):
        assert stream.getvalue() == expected
    else:
        assert stream.buffer.getvalue() == expected.encode(encoding)  # type: ignore[attr-defined]


def _info(**fields: int) -> int:
    """An FDE info byte with these bit fields set, placed where the generated layout says."""
    from sfview.generated import sframe_layout as layout

    return sum(value << layout.BITS["fde_info"][name][0] for name, value in fields.items())


@pytest.mark.parametrize("seed", range(40))
def test_bulk_dump_of_every_kind_of_function_is_the_model_dump(seed: int) -> None:
    """The dump prints a function of the common kind from its block's template, the others (PCMASK, signal
    frames, B keys on AArch64, sizes past 2**31, addresses that wrap) line by line or with their own title:
    the model's text, whichever it is, for blocks of one row to many shared by several functions."""
    import random
    import struct

    from sfview.sframe.model.section import Section

    rng = random.Random(seed)
    blocks = [[(4 * j, 8 * (j + 1)) for j in range(n)] for n in (1, 2, 3, 5, 9)]
    data, offsets = b"", []
    for rows in blocks:
        offsets.append(len(data))
        data += b"".join(bytes([start, 0x03]) + struct.pack("<b", cfa) for start, cfa in rows)
    kinds = [{}, {}, {"pc_type": 1}, {"signal_frame": 1}, {"pauth_key": 1}]
    fdes = b""
    count = rng.randint(1, 30)
    num_fres = 0
    for i in range(count):
        b = rng.randrange(len(blocks))
        size = rng.choice([0x100, 0x100, 0x80000000, 0xFFFFFFFF])
        start = rng.choice([0x1000 * i, -0x1000 * i, 0x7FFFFFF0, 0xF8 - 20 * i])  # the last: at the very top
        fdes += struct.pack("<iIIIBBH", start, size, offsets[b], len(blocks[b]), _info(**rng.choice(kinds)), 4, 0)
        num_fres += len(blocks[b])
    abi = rng.choice([2, 3])  # AArch64 (where a B key is printed) or AMD64, both little-endian
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, abi, 0, -8 if abi == 3 else 0, 0, count, num_fres,
                         len(data), 0, len(fdes))  # fmt: skip
    section = Section(header + fdes + data, rng.choice([0, 0x1000, 0xFFFFFFFFFFFF0000, (1 << 64) - 0x100]))
    assert readelf.text(section)[0] == readelf.text(section, bulk=False)[0]


def test_notes_count_every_row_of_a_shared_block(cli, tmp_path: Path) -> None:
    """The dump tells its notes of each row as it prints it: a block of rows three functions share is three rows."""
    import struct

    block = bytes([0, 0x03, 8, 4, 0x01])  # a row with one offset, then one with none
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 + 0x100 * i, 0x100, 0, 2, 0, 0, 0) for i in range(3))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 3, 6, len(block), 0, len(fdes))
    raw = tmp_path / "shared.sframe"
    raw.write_bytes(header + fdes + block)
    done = cli("dump", str(raw))
    assert done.code == 0
    assert done.err == (
        f"sfview: {raw}: note: fdes[0].fres[1]: row 1 has 0 offsets; on AMD64 little-endian a row has 1 or 2 "
        "(and 2 more rows like it) (offset-count-impossible)\n"
    )


def test_rows_addresses_of_every_number_of_digits() -> None:
    """The common template writes a row's address as zeros and `%x`, for as many digits as the function's rows
    have: functions whose rows cross from one number of digits to the next (0xffc: 0xffc, 0x1000, 0x1004),
    start on the boundary, or go back and forth between two numbers, must print what the model prints."""
    import struct

    from sfview.sframe.model.section import Section

    block = b"".join(bytes([4 * j, 0x03, 8 * (j + 1)]) for j in range(3))  # rows at +0, +4, +8
    starts = [0, 0x4, 0xF, 0x10, 0xFF8, 0xFFC, 0x1000, 0xFF4, 0x10000, 0xFFFC, 0x0FFFFFF8, 0x10000000, 0x7FFFFEF0, 0x8]
    fdes = b"".join(struct.pack("<iIIIBBH", start, 0x10, 0, 3, 0, 0, 0) for start in starts)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 0, 3, 0, -8, 0, len(starts), 3 * len(starts), len(block), 0,
                         len(fdes))  # fmt: skip
    section = Section(header + fdes + block)
    text = readelf.text(section)[0]
    assert text == readelf.text(section, bulk=False)[0]
    assert "    0000000000001000  sp+16 " in text and "    0000000010000000  sp+8 " in text


@pytest.mark.parametrize("gap", [0, 3], ids=["at its end", "past its end"])
def test_rows_past_the_fre_subsection_are_not_a_block_read_before(gap: int) -> None:
    """Function 1's rows start at the FRE sub-section's end, or past it, on bytes the same as function 0's block
    (which the sub-section holds): the bulk reader must not hand out function 0's rows again, but leave it to
    the model, which stops where a row would start outside the sub-section, and says so."""
    import struct

    from sfview.sframe.model.section import Section

    block = bytes([0, 0x03, 8]) + bytes(gap)  # one row, CFA = SP + 8; the sub-section ends after it
    offsets = [0, len(block), 2 * len(block)]
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 * (i + 1), 0x100, off, 1, 0, 0, 0) for i, off in enumerate(offsets))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 3, 3, 3, 0, len(fdes))
    section = Section(header + fdes + block * 3)
    text = readelf.text(section)[0]
    assert text == readelf.text(section, bulk=False)[0]
    assert text.count("  sp+8  ") == 1, "function 0's row only"


@pytest.mark.parametrize("info", [0, _info(signal_frame=1)], ids=["plain", "signal"])
def test_rows_past_the_top_of_the_address_space_wrap(info: int) -> None:
    """A function 8 bytes below the top of the address space: its third row is at 0, as readelf prints it."""
    import struct

    from sfview.sframe.model.section import Section

    block = bytes([0, 0x03, 8, 4, 0x03, 16, 8, 0x03, 24])
    fdes = struct.pack("<iIIIBBH", 0xF8, 0x100, 0, 3, info, 4, 0)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 1, 3, len(block), 0, len(fdes))
    section = Section(header + fdes + block, (1 << 64) - 0x100)
    text = readelf.text(section)[0]
    assert text == readelf.text(section, bulk=False)[0]
    assert text.endswith("    0000000000000000  sp+24     u         f            \n")
