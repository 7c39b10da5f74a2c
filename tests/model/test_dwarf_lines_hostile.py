"""The DWARF line program run by sfview (`sfview.dwarf.line_program`): pyelftools' rows, in bounded memory.

pyelftools is the reference for the rows: random line programs (every
standard and extended opcode, special opcodes of every kind, sequences out of
order) are run by both and must give the same rows in the same order. Then
the hostile shapes: a `.debug_line` of a million one-byte rows (617 MB and
20 s through pyelftools), LEB128 numbers of thousands of bytes, a program
longer than sfview runs.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from conftest import DATA, run_with_peak
from elf_edit import Elf
from elftools.common.utils import struct_parse
from elftools.dwarf.lineprogram import LineProgram
from elftools.dwarf.structs import DWARFStructs
from hypothesis import given, settings
from hypothesis import strategies as st
from leb128_bytes import sleb, uleb

from sfview.dwarf import line_program
from sfview.dwarf.line_program import line_rows
from sfview.errors import InputError

OPCODE_BASE, LINE_BASE, LINE_RANGE = 13, -5, 14
LENGTHS = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
"""The standard opcodes' operand counts (DWARF 4 §6.2.5.2), as gcc writes them."""


def _unit(program: bytes, min_length: int = 1) -> bytes:
    """A DWARF 4 line program unit around `program`: one directory, two files."""
    tables = b"dir\0\0" + b"a.c\0\x01\0\0" + b"b.c\0\x00\0\0" + b"\0"
    header = struct.pack("<BBBbBB", min_length, 1, 1, LINE_BASE, LINE_RANGE, OPCODE_BASE) + LENGTHS + tables
    body = struct.pack("<HI", 4, len(header)) + header + program
    return struct.pack("<I", len(body)) + body


def _program(unit: bytes) -> LineProgram:
    """pyelftools' `LineProgram` of a unit (its header parsed by pyelftools)."""
    structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=8, dwarf_version=4)
    stream = io.BytesIO(unit)
    header = struct_parse(structs.Dwarf_lineprog_header, stream, 0)
    end = 4 + header["unit_length"]
    return LineProgram(header, stream, structs, stream.tell(), end)


def _reference(unit: bytes) -> list[tuple[int, int, int, bool, bool]]:
    rows = [e.state for e in _program(unit).get_entries() if e.state is not None]
    table = [(s.address, s.file, s.line, bool(s.is_stmt), bool(s.end_sequence)) for s in rows]
    return sorted(table, key=lambda row: (row[0], not row[4]))


def _ours(unit: bytes) -> list[tuple[int, int, int, bool, bool]]:
    rows = line_rows(_program(unit))
    return [
        (rows.addresses[i], rows.file(i), rows.line(i), rows.is_stmt(i), rows.ends(i))
        for i in range(len(rows.addresses))
    ]


OPCODES = st.one_of(
    st.integers(OPCODE_BASE, 255).map(lambda op: bytes([op])),  # special
    st.just(b"\x01"),  # copy
    st.integers(0, 1 << 20).map(lambda n: b"\x02" + uleb(n)),  # advance_pc
    st.integers(0, 1000).map(lambda n: b"\x03" + sleb(n)),  # advance_line (kept positive: lines are unsigned)
    st.integers(1, 2).map(lambda n: b"\x04" + uleb(n)),  # set_file
    st.integers(0, 300).map(lambda n: b"\x05" + uleb(n)),  # set_column
    st.sampled_from([b"\x06", b"\x07", b"\x08", b"\x0a", b"\x0b"]),  # negate_stmt, basic_block, const_add_pc, …
    st.integers(0, 0xFFFF).map(lambda n: b"\x09" + struct.pack("<H", n)),  # fixed_advance_pc
    st.integers(0, 3).map(lambda n: b"\x0c" + uleb(n)),  # set_isa
    st.integers(0, 1 << 40).map(lambda a: b"\x00\x09\x02" + struct.pack("<Q", a)),  # set_address
    st.just(b"\x00\x01\x01"),  # end_sequence
    st.integers(0, 9).map(lambda n: b"\x00" + uleb(1 + len(uleb(n))) + b"\x04" + uleb(n)),  # set_discriminator
)


@settings(max_examples=300, deadline=None)
@given(st.lists(OPCODES, max_size=80), st.sampled_from([1, 4]))
def test_random_programs_give_pyelftools_rows(opcodes: list[bytes], min_length: int) -> None:
    unit = _unit(b"".join(opcodes) + b"\x00\x01\x01", min_length)
    assert _ours(unit) == _reference(unit)


def test_long_leb128_numbers_are_read_past_not_multiplied() -> None:
    """An advance of 20,000 continuation bytes: the bits past the 70th are dropped, not accumulated (each
    byte would shift a number of the bytes before it: the square of the length)."""
    huge = b"\x02" + b"\xff" * 20_000 + b"\x01"
    rows = line_rows(_program(_unit(huge + b"\x01\x00\x01\x01")))
    assert len(rows.addresses) == 2 and rows.addresses[0] == (1 << 64) - 1  # 70 one bits, as an address


def test_a_program_running_past_its_end_is_refused() -> None:
    unit = _unit(b"\x02\xff\xff")  # an advance whose number never ends
    with pytest.raises(InputError, match="LEB128 number runs past the program's end"):
        line_rows(_program(unit))


def test_a_program_longer_than_the_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_program, "MAX_PROGRAM", 100)
    with pytest.raises(InputError, match="a line program of 200 bytes: sfview runs 100 at most"):
        line_rows(_program(_unit(b"\x0d" * 197 + b"\x00\x01\x01")))


def _with_rows(rows: int) -> bytes:
    """deep-x86_64 with a second sequence of `rows` one-byte rows (each a special opcode advancing one byte,
    at addresses no function has) after its own line program, ended past its last row as gcc ends one."""
    elf = Elf.of((DATA / "deep-x86_64").read_bytes())
    own = elf.contents(".debug_line")
    (length,) = struct.unpack_from("<I", own)
    unit, rest = own[: 4 + length], own[4 + length :]
    advance_one = bytes([13 - (-5) + 14])  # this file's opcode_base 13, line_base -5, line_range 14
    sequence = b"\x00\x09\x02" + struct.pack("<Q", 0x100000) + advance_one * rows + b"\x02\x01\x00\x01\x01"
    body = unit[4:] + sequence
    section = struct.pack("<I", len(body)) + body + rest
    offset = (len(elf.data) + 7) & ~7
    elf.data += bytes(offset - len(elf.data)) + section
    return elf.set_section(".debug_line", sh_offset=offset, sh_size=len(section)).bytes()


def test_a_million_one_byte_rows_cost_their_words(tmp_path: Path) -> None:
    """The program's rows at 16 bytes each, and the frames still named at their lines as gdb names them."""
    plain, hostile = tmp_path / "plain", tmp_path / "hostile"
    plain.write_bytes(_with_rows(0))
    added = 300_000
    hostile.write_bytes(_with_rows(added))

    def unwound(program: Path) -> tuple[str, int]:
        return run_with_peak("unwind", str(program), "--core", str(DATA / "deep-x86_64.core"))

    (plain_out, plain_peak), (out, peak) = unwound(plain), unwound(hostile)
    assert out == plain_out and "#0  stop_here () at shared/fixtures/src/deep.c:5" in out
    assert peak - plain_peak < 24 * added  # 16 bytes a row, the arrays' slack, the program's bytes: not 600
