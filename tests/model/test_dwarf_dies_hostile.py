"""`.debug_info` built to cost (`sfview.dwarf.source`): a unit of a million one-byte DIEs, DIEs nested deep,
origins that loop. The names of that unit are lost (the frame is named from the symbols, as without debug
information); nothing else is, and nothing raises.

The files are deep-x86_64 with its one compilation unit grown: DIEs added
before the unit's last byte (the end of its top DIE's children), and their
abbreviation added to the unit's table.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
import zstandard
from conftest import DATA, run_process, run_with_peak
from elf_edit import Elf
from elftools.dwarf.die import DIE
from elftools.dwarf.structs import DWARFStructs
from elftools.elf.elffile import ELFFile
from hypothesis import given
from hypothesis import strategies as st
from leb128_bytes import uleb

from sfview.dwarf import source
from sfview.dwarf.line_program import MAX_ENTRIES, check_header
from sfview.dwarf.source import open_debug_info
from sfview.inputs import boundary
from sfview.inputs.elf.image import SPILL_CHUNK
from sfview.inputs.elf.pyelftools_view import SectionStream

STOP_HERE = 0x1160
"""`stop_here` in deep-x86_64, as linked."""


def _grown(dies: bytes, abbreviation: bytes) -> bytes:
    """deep-x86_64 with `dies` at the end of its unit's top DIE's children, and `abbreviation` (code 99)
    at the end of its abbreviation table."""
    elf = Elf.of((DATA / "deep-x86_64").read_bytes())
    info, abbrev = bytearray(elf.contents(".debug_info")), bytearray(elf.contents(".debug_abbrev"))
    assert struct.unpack_from("<I", info)[0] + 4 == len(info) and abbrev[-1] == 0  # one unit, one table
    info = info[:-1] + dies + info[-1:]
    struct.pack_into("<I", info, 0, len(info) - 4)
    abbrev = abbrev[:-1] + abbreviation + b"\0"
    for name, data in ((".debug_info", info), (".debug_abbrev", abbrev)):
        offset = (len(elf.data) + 7) & ~7
        elf.data += bytes(offset - len(elf.data)) + data
        elf = elf.set_section(name, sh_offset=offset, sh_size=len(data))
    return elf.bytes()


FLAT = bytes([99, 0x34, 0, 0, 0])
"""Code 99: a `DW_TAG_variable` without children or attributes (one byte a DIE)."""
NESTED = bytes([99, 0x0B, 1, 0, 0])
"""Code 99: a `DW_TAG_lexical_block` with children and no attributes."""


def _named(path: Path) -> list:
    info = open_debug_info([str(path)])
    assert info is not None
    return info.frames(STOP_HERE)[0]


@pytest.mark.parametrize(
    ("dies", "abbreviation"),
    [(bytes([99]) * 2000, FLAT), (bytes([99]) * 2000 + bytes(2000), NESTED)],
    ids=["flat", "nested"],
)
def test_a_unit_past_the_bound_loses_its_names_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dies: bytes, abbreviation: bytes
) -> None:
    path = tmp_path / "grown"
    path.write_bytes(_grown(dies, abbreviation))
    assert [f.function for f in _named(path)] == ["stop_here"]  # within the bound: read as before
    monkeypatch.setattr(source, "MAX_DIES", 1000)
    assert _named(path) == []


def test_a_million_one_byte_dies_are_not_all_held(tmp_path: Path) -> None:
    """A million DIEs of one byte held 330 MB through pyelftools: `unwind` now stops at the bound, its frames
    named from the symbols, and its peak stays within a bound's worth of DIEs."""
    plain, hostile = tmp_path / "plain", tmp_path / "hostile"
    plain.write_bytes(_grown(b"", FLAT))
    hostile.write_bytes(_grown(bytes([99]) * 1_000_000, FLAT))

    def unwound(program: Path) -> tuple[str, int]:
        return run_with_peak("unwind", str(program), "--core", str(DATA / "deep-x86_64.core"))

    (plain_out, plain_peak), (out, peak) = unwound(plain), unwound(hostile)
    assert "#0  stop_here () at shared/fixtures/src/deep.c:5" in plain_out
    assert "#0  0x0000555555555160 in stop_here ()" in out
    assert peak - plain_peak < 400 * source.MAX_DIES  # pyelftools' some 300 bytes a DIE, for the bound's DIEs


def _peak_naming(path: Path) -> tuple[list[str], int]:
    """The names at `STOP_HERE` from `path`'s DWARF, and the peak of what Python allocated to find them."""
    tracemalloc.start()
    try:
        names = [frame.function for frame in _named(path)]
        return names, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("dies", "abbreviation"),
    [(bytes([99]) * 100_000, FLAT), (bytes([99]) * 50_000 + bytes(50_000), NESTED)],
    ids=["100,000 flat", "50,000 nested"],
)
def test_dies_of_one_byte_cost_words_not_objects(tmp_path: Path, dies: bytes, abbreviation: bytes) -> None:
    """Within the bound, pyelftools held every DIE it parsed (about a kilobyte each): 100,000 one-byte DIEs
    under the top DIE cost 38 MB listed; blocks nested past Python's recursion were read whole first. Now the
    DIEs are parsed and let go, the end of each one's children kept as words: the unit is named, its cost
    within ten times the bytes added."""
    plain, grown = tmp_path / "plain", tmp_path / "grown"
    plain.write_bytes(_grown(b"", abbreviation))
    grown.write_bytes(_grown(dies, abbreviation))
    (names, peak), (plain_names, plain_peak) = _peak_naming(grown), _peak_naming(plain)
    assert names == plain_names == ["stop_here"]
    assert peak - plain_peak < 10 * len(dies)


SUBPROGRAM = bytes([98, 0x2E, 1, 0x11, 0x01, 0x12, 0x06, 0, 0])
"""Code 98: a `DW_TAG_subprogram` with children, `DW_AT_low_pc` (an address) and `DW_AT_high_pc` (data4)."""
LEAF = bytes([97, 0x2E, 0, 0x11, 0x01, 0x12, 0x06, 0, 0])
"""Code 97: the same without children."""
FILLER = bytes([96, 0x34, 0, 0x1C, 0x04, 0, 0])
"""Code 96: a `DW_TAG_variable` whose `DW_AT_const_value` is a block of four-byte length (bytes in one DIE)."""
IN_TAIL = 0x1203
"""An address in the last bytes of deep-x86_64's unit's code, where the added functions are."""


def _held_naming(path: Path, address: int) -> tuple[list[str], int, int]:
    """The names at `address` from `path`'s DWARF, what Python still holds after finding them, and its peak."""
    info = open_debug_info([str(path)])
    assert info is not None
    tracemalloc.start()
    try:
        names = [frame.function for frame in info.frames(address)[0]]
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [frame.function for frame in info.frames(STOP_HERE)[0]] == ["stop_here"]
    return names, held, peak


def test_listed_children_at_the_bound_cost_words_not_dies(tmp_path: Path) -> None:
    """A function of 35,000 one-byte lexical blocks in a unit grown by a megabyte, so that its children stay
    within the bound: pyelftools' DIEs, kept, held 13 MB (13 times the unit). Now each is kept as its offset,
    kind and hull."""
    blocks = 35_000
    assert blocks < source.MAX_HELD + (1 << 20) // source.HELD_BYTES
    dies = FILLER[:1] + struct.pack("<I", 1 << 20) + bytes(1 << 20)
    dies += SUBPROGRAM[:1] + struct.pack("<QI", IN_TAIL - 3, 7) + bytes([99]) * blocks + b"\0"
    path = tmp_path / "grown"
    path.write_bytes(_grown(dies, SUBPROGRAM + bytes([99, 0x0B, 0, 0, 0]) + FILLER))
    names, held, peak = _held_naming(path, IN_TAIL)
    assert names == ["??"]  # the function is found, its children looked through: it has no name
    assert held < 2 * len(dies) and peak < 3 * len(dies)


def test_functions_cost_words_not_dies(tmp_path: Path) -> None:
    """50,000 functions with code, 13 bytes each: pyelftools' DIEs, one kept for each function's range,
    held 48 MB (73 times their bytes). Now a function's range is three words, its DIE parsed when asked."""
    dies = b"".join(LEAF[:1] + struct.pack("<QI", IN_TAIL - 3 + i % 7, 1) for i in range(50_000))
    path = tmp_path / "grown"
    path.write_bytes(_grown(dies, LEAF))
    names, held, peak = _held_naming(path, IN_TAIL)
    assert names == ["??"]
    assert held < 3 * len(dies) and peak < 10 * len(dies)


def test_a_sibling_pointing_back_ends_the_walk(tmp_path: Path) -> None:
    """A lexical block whose `DW_AT_sibling` points at itself, then one like it: pyelftools listed the first
    child again and again, for ever, its memory growing (a 20 KB file). A sibling that does not point past
    its DIE is passed over, and the children's end found by reading on."""
    info = Elf.of((DATA / "deep-x86_64").read_bytes()).contents(".debug_info")
    at = len(info) - 1  # where the added DIEs start, in the unit (which starts the section)
    block = bytes([99]) + struct.pack("<I", at)
    path = tmp_path / "grown"
    path.write_bytes(_grown(block + block + bytes(2), bytes([99, 0x0B, 1, 0x01, 0x13, 0, 0])))  # DW_AT_sibling ref4
    named = subprocess.run(
        [sys.executable, "-c", f"from sfview.dwarf.source import open_debug_info\n{NAMED}", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert named.stdout.split() == ["stop_here"], named.stderr


NAMED = (
    "import sys\n"
    f"frames = open_debug_info([sys.argv[1]]).frames({STOP_HERE:#x})[0]\n"
    "print(*(frame.function for frame in frames))\n"
)
"""Prints the names at `STOP_HERE` from the file `sys.argv[1]`'s DWARF."""


def _with_sections(raw: bytes, sections: dict[str, bytes]) -> bytes:
    """`raw` with each of `sections` given new contents at its end."""
    elf = Elf.of(raw)
    for name, data in sections.items():
        offset = (len(elf.data) + 7) & ~7
        elf.data += bytes(offset - len(elf.data)) + data
        elf = elf.set_section(name, sh_offset=offset, sh_size=len(data))
    return elf.bytes()


def test_names_pointing_into_a_long_string_are_looked_through_once(tmp_path: Path) -> None:
    """8,000 DIEs whose `DW_AT_name` (`DW_FORM_strp`) points into a megabyte of `.debug_str` without a NUL:
    pyelftools read the megabyte again for each DIE it parsed (2,000 took 18 s). Each byte is looked through
    once now; a string without its NUL is no name ("??", where `None` was printed)."""
    strp = bytes([99, 0x34, 0, 0x03, 0x0E, 0, 0])  # DW_TAG_variable, DW_AT_name in DW_FORM_strp
    dies = b"".join(struct.pack("<BI", 99, at) for at in range(0, 8000 * 64, 64))
    path = tmp_path / "grown"
    path.write_bytes(_with_sections(_grown(dies, strp), {".debug_str": b"A" * (1 << 20)}))
    named = subprocess.run(
        [sys.executable, "-c", f"from sfview.dwarf.source import open_debug_info\n{NAMED}", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert named.stdout.split() == ["??"], named.stderr


@given(st.binary(max_size=64), st.lists(st.integers(-2, 70), max_size=30))
def test_terminated_strings_are_those_read_to_each_nul(runs: bytes, offsets: list[int]) -> None:
    """Whatever runs were remembered before, each offset gives the bytes up to the next NUL (None without
    one), as reading from it would; runs made long with `SHORT_RUN` at 4."""
    table = bytes(byte & 0x41 for byte in runs)  # NULs among the letters
    strings = boundary.TerminatedStrings(table)
    for offset in offsets:
        end = table.find(b"\0", offset) if 0 <= offset < len(table) else -1
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(boundary, "SHORT_RUN", 4)
            assert strings.at(offset) == (table[offset:end] if end >= 0 else None)


def _line_header_claiming(directories: int, files: int) -> bytes:
    """deep-x86_64's `.debug_line` (DWARF 5) with directory and file name lists of no fields (each entry no
    byte), claiming `directories` and `files` entries."""
    line = Elf.of((DATA / "deep-x86_64").read_bytes()).contents(".debug_line")
    length, version, address_size, selector_size, header_length = struct.unpack_from("<IHBBI", line)
    assert version == 5
    opcode_base = line[17]
    fixed = line[12 : 18 + opcode_base - 1]  # minimum_instruction_length … the standard opcodes' lengths
    header = fixed + bytes([0]) + uleb(directories) + bytes([0]) + uleb(files)
    body = struct.pack("<HBBI", 5, address_size, selector_size, len(header)) + header
    body += line[12 + header_length : 4 + length]
    return struct.pack("<I", len(body)) + body + line[4 + length :]


@pytest.mark.parametrize(("directories", "files"), [(1 << 32, 0), (0, 10_000_000)], ids=["directories", "files"])
def test_a_line_header_claiming_entries_of_no_bytes_is_refused(tmp_path: Path, directories: int, files: int) -> None:
    """A DWARF 5 line table header whose entry format has no field claims 2³² directories (or 10⁷ files):
    pyelftools made an object for each (1.5 GB in 30 s, from a 20 KB file). Refused before pyelftools reads
    it: the unit's frames keep their names, without lines (in a process of a gigabyte at most)."""
    path = tmp_path / "grown"
    path.write_bytes(
        _with_sections((DATA / "deep-x86_64").read_bytes(), {".debug_line": _line_header_claiming(directories, files)})
    )
    limited = "import resource\nresource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    named = subprocess.run(
        [sys.executable, "-c", f"{limited}from sfview.dwarf.source import open_debug_info\n{NAMED}", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert named.stdout.split() == ["stop_here"], named.stderr


def test_a_sound_line_header_passes_the_check() -> None:
    """deep-x86_64's own header, as gcc wrote it, is not refused."""
    check_header(Elf.of((DATA / "deep-x86_64").read_bytes()).contents(".debug_line"), 0, "<")


def _line_header_listing(directories: bytes, files: bytes) -> bytes:
    """deep-x86_64's `.debug_line` (DWARF 5) with its directory and file name lists replaced (each list its
    entry formats, its count and its entries)."""
    line = Elf.of((DATA / "deep-x86_64").read_bytes()).contents(".debug_line")
    length, _, address_size, selector_size, header_length = struct.unpack_from("<IHBBI", line)
    header = line[12 : 18 + line[17] - 1] + directories + files
    body = struct.pack("<HBBI", 5, address_size, selector_size, len(header)) + header
    body += line[12 + header_length : 4 + length]
    return struct.pack("<I", len(body)) + body + line[4 + length :]


LINE_STRP, UDATA, DATA1 = 0x1F, 0x0F, 0x0B
"""Forms of a line table header's fields."""
PATH, DIRECTORY = 1, 2
"""`DW_LNCT_path`, `DW_LNCT_directory_index`."""


@pytest.mark.parametrize("shape", ["100,000 files of one byte", "2,000 files in one 60 KB directory"])
def test_a_line_header_costs_its_bytes(tmp_path: Path, shape: str) -> None:
    """pyelftools' object for each of 100,000 one-byte entries (98 MB); each of 2,000 file names joined to a
    directory of 60 KB at once (120 MB, from 70 KB). Now a header listing more than `MAX_ENTRIES` is refused
    (the unit's frames keep their names and lose their lines), and a file's name is joined to its directory
    when asked for: the cost is the bytes' and pyelftools' objects for the entries, a kilobyte each at most."""
    if shape.startswith("100,000"):
        count = 100_000
        directories = bytes([1]) + uleb(PATH) + uleb(DATA1) + uleb(1) + bytes(1)
        files = bytes([1]) + uleb(PATH) + uleb(DATA1) + uleb(count) + bytes(count)
        strings = {}
    else:
        count = 2000
        directories = bytes([1]) + uleb(PATH) + uleb(LINE_STRP) + uleb(1) + struct.pack("<I", 0)
        files = bytes([2]) + uleb(PATH) + uleb(LINE_STRP) + uleb(DIRECTORY) + uleb(UDATA) + uleb(count)
        files += (struct.pack("<I", 60_001) + bytes(1)) * count
        strings = {".debug_line_str": b"a" * 60_000 + b"\0deep.c\0"}
    line = _line_header_listing(directories, files)
    plain, grown = tmp_path / "plain", tmp_path / "grown"
    plain.write_bytes((DATA / "deep-x86_64").read_bytes())
    grown.write_bytes(_with_sections(plain.read_bytes(), {".debug_line": line, **strings}))
    (names, peak), (_, plain_peak) = _peak_naming(grown), _peak_naming(plain)
    assert names == ["stop_here"]
    assert peak - plain_peak < 10 * (grown.stat().st_size - plain.stat().st_size) + 1000 * min(count, MAX_ENTRIES)


def test_long_strings_at_many_offsets_are_given_within_the_bound() -> None:
    """Every offset into a 64 KB string: each long one a slice of its own, 2 GB in all. The long strings
    given are kept by offset and together no more than `names_bound` of the table."""
    table = b"a" * 65_000 + b"\0"
    strings = boundary.TerminatedStrings(table)
    given = [strings.at(offset) for offset in range(0, 64_000, 7)]  # the last a kilobyte long
    assert given[0] == table[:-1] and strings.at(0) is given[0]
    assert sum(len(text) for text in given if text is not None) <= boundary.names_bound(table)
    assert given[-1] is None


@pytest.mark.parametrize("section", [".debug_line", ".debug_str", ".debug_info"])
def test_a_dwarf_section_inflating_to_64_mib_is_not_copied(tmp_path: Path, section: str) -> None:
    """A zstd stream of a few kilobytes inflating to 64 MiB (the section, then zeros): spilled to a mapped
    temporary file, but pyelftools' `io.BytesIO` copied it, and a reader of the whole section another (a
    25 KB file of 200 MiB: 461 MB). Each reader now reads the mapping; what is left is the inflating's own
    chunks."""
    plain, grown = tmp_path / "plain", tmp_path / "grown"
    plain.write_bytes((DATA / "deep-x86_64").read_bytes())
    elf = Elf.of(plain.read_bytes())
    inflated = elf.contents(section) + bytes(64 << 20)
    out = elf.compress(section, 2, zstandard.ZstdCompressor(level=3).compress(inflated))
    struct.pack_into("<Q", out.data, out.section(section)["sh_offset"] + 8, len(inflated))  # the inflated size
    grown.write_bytes(out.bytes())
    (names, peak), (_, plain_peak) = _peak_naming(grown), _peak_naming(plain)
    assert names == ["stop_here"]
    assert peak - plain_peak < 10 * (grown.stat().st_size - plain.stat().st_size) + 4 * SPILL_CHUNK  # inflating


def test_a_block_is_read_at_once(tmp_path: Path) -> None:
    """A DIE's `DW_FORM_block4` of a megabyte: pyelftools read it a byte at a time, each through construct
    (two seconds to name a frame in a 1 MB file). Read at once, and the frame named as before."""
    location = bytes([99, 0x34, 0, 0x02, 0x04, 0, 0])  # DW_TAG_variable, DW_AT_location in DW_FORM_block4
    block = bytes(range(256)) * 4096
    path = tmp_path / "grown"
    path.write_bytes(_grown(bytes([99]) + struct.pack("<I", len(block)) + block, location))
    assert [frame.function for frame in _named(path)] == ["stop_here"]
    reads = 0

    class Counted(SectionStream):
        def read(self, size: int | None = -1) -> bytes:
            nonlocal reads
            reads += 1
            return super().read(size)

    structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=8, dwarf_version=5)
    stream = Counted(struct.pack("<I", len(block)) + block)
    assert bytes(structs.Dwarf_dw_form["DW_FORM_block4"].parse_stream(stream)) == block
    assert reads <= 2


def test_an_inline_string_is_found_at_once(tmp_path: Path) -> None:
    """A DIE's `DW_AT_name` in `DW_FORM_string`, a megabyte long: pyelftools' `CString` read it a byte at a
    time and held a list of one-byte objects (1.75 s and 77 MB for a 1 MB file). Found by its NUL at once,
    within ten times its bytes."""
    inline = bytes([99, 0x34, 0, 0x03, 0x08, 0, 0])  # DW_TAG_variable, DW_AT_name in DW_FORM_string
    name = b"a" * (1 << 20)
    plain, grown = tmp_path / "plain", tmp_path / "grown"
    plain.write_bytes(_grown(b"", inline))
    grown.write_bytes(_grown(bytes([99]) + name + b"\0", inline))
    (names, peak), (_, plain_peak) = _peak_naming(grown), _peak_naming(plain)
    assert names == ["stop_here"]
    assert peak - plain_peak < 10 * len(name)
    structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=8, dwarf_version=5)
    assert structs.Dwarf_dw_form["DW_FORM_string"].parse_stream(SectionStream(name + b"\0")) == name


def test_a_long_number_in_a_die_is_read_in_its_bytes_time(tmp_path: Path) -> None:
    """A `DW_FORM_exprloc` whose length is a LEB128 number of 4 MB of 0xff bytes: the pass over a unit's DIEs by
    their forms (`_Layouts`) shifted a number of up to 28 million bits once a byte (800 KB: 22 s; 4 MB some
    nine minutes). Its bits past the 70th dropped, as everywhere (`leb128`), `unwind` names the frame at once
    (the guard: `run_process`'s two minutes)."""
    exprloc = bytes([99, 0x34, 0, 0x02, 0x18, 0, 0])  # DW_TAG_variable, DW_AT_location in DW_FORM_exprloc
    path = tmp_path / "grown"
    path.write_bytes(_grown(bytes([99]) + b"\xff" * (4 << 20) + b"\0", exprloc))
    result = run_process("unwind", str(path), "--core", str(DATA / "deep-x86_64.core"))
    assert result.returncode == 0, result.stderr
    assert "#0  stop_here () at shared/fixtures/src/deep.c:5" in result.stdout


def test_a_form_given_in_the_die_is_left_to_pyelftools(tmp_path: Path) -> None:
    """`DW_FORM_indirect` (the form written in the DIE, here `DW_FORM_string`) is one the pass over a unit's DIEs
    by their abbreviations' forms (`_Layouts`) does not take: pyelftools reads those DIEs, and the unit is named
    as before."""
    indirect = bytes([99, 0x34, 0, 0x03, 0x16, 0, 0])  # DW_TAG_variable, DW_AT_name in DW_FORM_indirect
    first = len(Elf.of((DATA / "deep-x86_64").read_bytes()).contents(".debug_info")) - 1  # where they go
    path = tmp_path / "grown"
    path.write_bytes(_grown((bytes([99, 0x08]) + b"indirect\0") * 3, indirect))
    assert [frame.function for frame in _named(path)] == ["stop_here"]
    with path.open("rb") as f:
        info = ELFFile(f).get_dwarf_info(relocate_dwarf_sections=False)
        cu = next(info.iter_CUs())
        layouts = source._Layouts(cu, info.debug_info_sec.stream.getvalue())
        assert layouts.after(first) is None
        assert DIE(cu, info.debug_info_sec.stream, first).attributes["DW_AT_name"].value == b"indirect"


def test_an_origin_in_a_far_unit_is_found_without_the_units_between(tmp_path: Path) -> None:
    """A function at `stop_here`'s address whose `DW_AT_abstract_origin` (`DW_FORM_ref_addr`) is in the last
    of 100,000 units of 12 bytes: pyelftools parsed and kept every unit before it (63 MB, 3.7 s, from 1.2 MB).
    The unit is found among the units' starts, read from their lengths."""
    tiny = struct.pack("<IHIB", 8, 4, 0, 8) + b"\0"  # DWARF 4, deep's abbreviations, a null DIE
    count = 100_000
    origin = bytes([99, 0x2E, 0, 0x11, 0x01, 0x12, 0x06, 0x31, 0x10, 0, 0])  # low_pc, high_pc, ref_addr origin
    size = len(Elf.of(_grown(b"", origin)).contents(".debug_info")) + 17  # with the DIE below
    die = struct.pack("<BQII", 99, STOP_HERE, 0x10, size + count * len(tiny) - 1)  # the last unit's null DIE
    raw = _grown(die, origin)
    plain, grown = tmp_path / "plain", tmp_path / "grown"
    plain.write_bytes(raw)
    grown.write_bytes(_with_sections(raw, {".debug_info": Elf.of(raw).contents(".debug_info") + tiny * count}))
    (names, peak), (_, plain_peak) = _peak_naming(grown), _peak_naming(plain)
    assert names == ["??"]  # the origin found: a DIE of no name
    assert peak - plain_peak < 10 * count * len(tiny)


def _parses_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A count of the DIEs parsed from now on (while `monkeypatch` holds)."""
    parsed, every = [0], source.DIE

    def counted(*args: object) -> object:
        parsed[0] += 1
        return every(*args)

    monkeypatch.setattr(source, "DIE", counted)
    return parsed


def test_a_dies_scopes_are_found_again_by_a_die_a_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """A C++ frame's name is qualified by the scopes its DIE is in: each name asked read the children of every
    scope down to it again (the top DIE's thousands, in a large unit). The children's offsets are listed once
    a scope; asked again, a DIE is parsed a level."""
    info = open_debug_info([str(DATA / "deep-x86_64")])
    assert info is not None
    unit = info._unit(STOP_HERE)
    assert unit is not None
    (function,) = unit.chain(STOP_HERE)
    assert [scope.tag for scope in unit.tree.ancestors(function)] == ["DW_TAG_compile_unit"]
    parsed = _parses_counted(monkeypatch)
    assert [scope.tag for scope in unit.tree.ancestors(function)] == ["DW_TAG_compile_unit"]
    assert parsed[0] <= 1


@pytest.mark.parametrize(
    ("dies", "abbreviation"),
    [(bytes([99]) * 20_000, FLAT), (bytes([99]) * 10_000 + bytes(10_000), NESTED)],
    ids=["flat", "nested"],
)
def test_a_unit_is_walked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dies: bytes, abbreviation: bytes
) -> None:
    """Naming an address reads each DIE of its unit once: its functions were found by walking down from the top
    DIE, then the pass that finds where children end (a DIE with children and no `DW_AT_sibling`, as gcc
    writes the last of a level) read the unit again: 130,000 flat DIEs took 2.6 s. The one pass finds both."""
    grown = tmp_path / "grown"
    grown.write_bytes(_grown(dies, abbreviation))
    parsed = _parses_counted(monkeypatch)
    assert [frame.function for frame in _named(grown)] == ["stop_here"]
    assert parsed[0] < len(dies) + 200  # deep-x86_64's own unit is 72 DIEs


@given(st.binary(max_size=64), st.lists(st.integers(-2, 70), max_size=30))
def test_strings_longer_than_the_longest_are_none(runs: bytes, offsets: list[int]) -> None:
    """`test_terminated_strings_are_those_read_to_each_nul`, strings past `MAX_STRING` (8 here) being None."""
    table = bytes(byte & 0x41 for byte in runs)
    strings = boundary.TerminatedStrings(table)
    for offset in offsets:
        end = table.find(b"\0", offset) if 0 <= offset < len(table) else -1
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(boundary, "SHORT_RUN", 4)
            patch.setattr(boundary, "MAX_STRING", 8)
            assert strings.at(offset) == (table[offset:end] if end >= 0 and end - offset <= 8 else None)


def test_a_string_table_without_a_nul_is_not_read_whole() -> None:
    """A `.debug_str` inflating to 256 MiB of one letter: the first name asked for looked through all of it for
    a NUL (every page of the inflated file mapped in: 307 MB of resident memory from a 30 KB program). No
    search goes further than the longest name from where it starts."""
    looked: list[int] = []

    class Table(bytes):
        def find(self, sub, start=0, end=None):  # type: ignore[no-untyped-def, override]
            stop = len(self) if end is None else min(end, len(self))
            looked.append(stop - start)
            return super().find(sub, start, end)

    strings = boundary.TerminatedStrings(Table(b"A" * (4 << 20)))
    for offset in range(0, 4 << 20, 1 << 20):
        assert strings.at(offset) is None
    assert max(looked) <= boundary.MAX_STRING + 1
