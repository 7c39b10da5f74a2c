"""Symbols whose names lie past their string table: readelf -s shows them `<corrupt>`; sfview said nothing
(their functions went unnamed, and `check` then said "no symbol starts at" where a symbol does)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import DATA
from elftools.elf.elffile import ELFFile

PROGRAM = DATA / "shapes-x86_64-O2"


def _with_names_past(tmp_path: Path, offsets: dict[str, int]) -> tuple[Path, int]:
    """A copy of the program whose function symbols named in `offsets` have their `st_name` set to those
    offsets (`-1`: just past the string table); the string table's size."""
    data = bytearray(PROGRAM.read_bytes())
    with PROGRAM.open("rb") as stream:
        symtab = ELFFile(stream).get_section_by_name(".symtab")
        end = ELFFile(stream).get_section(symtab["sh_link"])["sh_size"]
        for index, symbol in enumerate(symtab.iter_symbols()):
            if symbol.name in offsets:
                at = offsets[symbol.name]
                struct.pack_into("<I", data, symtab["sh_offset"] + index * symtab["sh_entsize"], end if at < 0 else at)
    out = tmp_path / "names-past"
    out.write_bytes(data)
    return out, end


def _readelf_corrupt(path: Path) -> list[int]:
    """The indices of `.symtab`'s symbols readelf shows `<corrupt>`."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    out = subprocess.run(["readelf", "-sW", str(path)], capture_output=True, text=True, check=True).stdout
    table = out.split("'.symtab'")[1]
    return [int(m) for m in re.findall(r"^\s*(\d+):.*<corrupt>$", table, re.M)]


@pytest.mark.parametrize(
    "offsets", [{"medium_frame": 0xFFFFFFEF}, {"huge_frame": -1, "medium_frame": 0x1000, "_start": 0x7FFFFFFF}]
)
def test_names_past_the_string_table_are_said_once(tmp_path: Path, cli, offsets: dict[str, int]) -> None:
    path, end = _with_names_past(tmp_path, offsets)
    corrupt = _readelf_corrupt(path)
    assert len(corrupt) == len(offsets)
    result = cli("check", str(path))
    notes = [line for line in result.err.splitlines() if "past its string table" in line]
    first = corrupt[0]
    with PROGRAM.open("rb") as stream:
        name = ELFFile(stream).get_section_by_name(".symtab").get_symbol(first).name
    offset = end if offsets[name] < 0 else offsets[name]
    others = len(corrupt) - 1
    more = f" (so are the names of {others} more symbol{'s' * (others > 1)})" if others else ""
    assert notes == [
        f"sfview: {path}: .symtab: symbol {first}'s name is at offset {offset:#x}, past its string table's {end}"
        f" bytes{more}: left unnamed (readelf shows <corrupt>)"
    ], result.err


def test_thousands_of_names_past_it_are_one_line(tmp_path: Path, cli) -> None:
    """Every symbol of the table past it: one line, however many."""
    data = bytearray(PROGRAM.read_bytes())
    with PROGRAM.open("rb") as stream:
        symtab = ELFFile(stream).get_section_by_name(".symtab")
        for index in range(symtab.num_symbols()):
            struct.pack_into("<I", data, symtab["sh_offset"] + index * symtab["sh_entsize"], 0xFFFFFFF0 - index)
    path = tmp_path / "all-past"
    path.write_bytes(data)
    count = len(_readelf_corrupt(path))
    result = cli("check", str(path))
    notes = [line for line in result.err.splitlines() if "past its string table" in line]
    assert len(notes) == 1 and "symbol 0's name is at offset 0xfffffff0" in notes[0], result.err
    assert f"(so are the names of {count - 1} more symbols)" in notes[0], notes
