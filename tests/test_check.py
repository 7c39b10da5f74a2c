"""`sfview check`: one crafted section per check, each triggering that check; clean sections, none.

Sections are damaged where the generated layout (and the model's spans) say a
field is, so that each test changes exactly one fact.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DATA, ELF_FIXTURES, SECTIONS, load_section_fixture, run_process, v3_section

from sfview.check.catalogue import CHECKS
from sfview.check.run import check
from sfview.generated import sframe_layout as layout
from sfview.sframe.section import Section

SECTION = (DATA / "shapes-x86_64-O2.sframe").read_bytes()
MODEL = Section(SECTION)
HEADER = layout.PREAMBLE.size


def header(field: str, value: int) -> Callable[[bytearray], None]:
    offset, char = layout.HEADER.fields[field]
    return lambda data: struct.pack_into("<" + char, data, HEADER + offset, value)


def fde(index: int, field: str, value: int) -> Callable[[bytearray], None]:
    offset, char = layout.FDE[1].fields[field]
    return lambda data: struct.pack_into("<" + char, data, MODEL.function(index).span.start + offset, value)


def row_byte(index: int, row: int, at: int, value: int | Callable[[int], int]) -> Callable[[bytearray], None]:
    """Byte `at` of a row (0: its 1-byte start address, 1: its info byte) set, or changed by a function."""

    def change(data: bytearray) -> None:
        pos = MODEL.function(index).rows[row].span.start + at
        data[pos] = value(data[pos]) if callable(value) else value

    return change


def swap_fdes(a: int, b: int) -> Callable[[bytearray], None]:
    def change(data: bytearray) -> None:
        fa, fb = MODEL.function(a).span, MODEL.function(b).span
        data[fa.start : fa.end], data[fb.start : fb.end] = data[fb.start : fb.end], data[fa.start : fa.end]

    return change


def ids_of(data: bytes) -> set[str]:
    return {d.check.id for d in check(Section(data))}


MUTATIONS: dict[str, Callable[[bytearray], None]] = {
    "flags-unknown": lambda data: data.__setitem__(3, data[3] | 0x08),
    "abi-unknown": header("abi_arch", 9),
    "fre-subsection-out-of-bounds": header("fre_len", 0x200),
    "num-fres-mismatch": header("num_fres", 24),
    "trailing-bytes": lambda data: data.extend(b"\x01"),
    "fdes-unsorted": swap_fdes(3, 4),
    "functions-overlap": fde(2, "func_size", 0x200),
    "function-size-zero": fde(3, "func_size", 0),
    "pauth-key-not-aarch64": fde(5, "func_info", 0x20),
    "first-row-not-at-zero": row_byte(5, 0, 0, 1),
    "rows-not-increasing": row_byte(5, 1, 0, 0),
    "row-past-function": row_byte(5, 2, 0, 0xFF),
    "mangled-ra-not-aarch64": row_byte(5, 1, 1, lambda info: info | 0x80),
}


@pytest.mark.parametrize("check_id", MUTATIONS)
def test_each_damage_triggers_exactly_its_check(check_id: str) -> None:
    data = bytearray(SECTION)
    MUTATIONS[check_id](data)
    assert ids_of(bytes(data)) == {check_id}


def test_an_undecodable_fde_and_row() -> None:
    data = bytearray(SECTION)
    fde(3, "func_info", 0x03)(data)  # FRE type 3 does not exist
    row_byte(5, 1, 1, 0x63)(data)  # offset size 3 does not exist
    found = check(Section(bytes(data)))
    assert {d.check.id for d in found} == {"fde-undecodable", "fre-undecodable"}
    fde_problem = next(d for d in found if d.check.id == "fde-undecodable")
    assert fde_problem.start == MODEL.function(3).span.start + layout.FDE[1].fields["func_info"][0]


def test_more_fdes_than_fit() -> None:
    """The FDEs that do fit past the real ones are FRE bytes read as FDEs: they have problems of their own."""
    data = bytearray(SECTION)
    header("num_fdes", 50)(data)
    found = check(Section(bytes(data)))
    assert found[0].check.id == "fde-array-out-of-bounds" and found[0].path == "header.num_fdes"
    assert "header says 50 FDEs" in found[0].message


def test_overlapping_sub_sections() -> None:
    data = bytearray(SECTION)
    header("fdeoff", 0x10)(data)  # the FDE array moved into the FRE sub-section
    assert "subsections-overlap" in ids_of(bytes(data))


def test_a_pcmask_function_without_a_block_size() -> None:
    path = next(p for p in SECTIONS if p.name == "test-x86_64-2.44.json")
    data, base, _ = load_section_fixture(path)
    section = Section(data, base)
    plt = next(f for f in section.functions() if f.pcmask)
    damaged = bytearray(data)
    damaged[plt.span.start + layout.FDE[2].fields["func_rep_size"][0]] = 0
    assert ids_of(bytes(damaged)) == {"pcmask-rep-size-zero"}


def test_rows_with_offsets_the_abi_does_not_have_and_odd_cfa_offsets() -> None:
    assert ids_of(v3_section(0, [(0, 1, [8, -16, 3])], fixed_ra=-8)) == {"offset-count-impossible"}
    assert ids_of(v3_section(0, [(0, 1, [4])], fixed_ra=-8)) == {"cfa-offset-implausible"}
    assert ids_of(v3_section(0, [(0, 1, [8]), (2, 1, [])], fixed_ra=-8)) == set(), "0 offsets: the outermost frame"


def test_every_check_has_a_test() -> None:
    tested = set(MUTATIONS) | {
        "fde-array-out-of-bounds",
        "fde-undecodable",
        "fre-undecodable",
        "subsections-overlap",
        "pcmask-rep-size-zero",
        "offset-count-impossible",
        "cfa-offset-implausible",
    }
    assert tested == set(CHECKS)


@pytest.mark.parametrize("path", SECTIONS, ids=lambda p: p.stem)
def test_binutils_sections_are_clean(path: Path) -> None:
    data, base, _ = load_section_fixture(path)
    assert check(Section(data, base)) == []


def test_the_command_line(tmp_path: Path) -> None:
    clean = [str(p) for p in ELF_FIXTURES if p.exists() and not p.name.endswith("-no-sframe")]
    result = run_process("check", *clean)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    damaged = tmp_path / "unsorted.sframe"
    data = bytearray(SECTION)
    swap_fdes(3, 4)(data)
    damaged.write_bytes(bytes(data))
    result = run_process("check", str(damaged))
    assert result.returncode == 1
    assert f"{damaged}: section offset 0x60: error fdes-unsorted: fdes[4]: starts at " in result.stdout
    doc = json.loads(run_process("check", "--json", str(damaged)).stdout)
    assert [p["id"] for p in doc[0]["problems"]] == ["fdes-unsorted"]
    missing = run_process("check", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


@pytest.mark.parametrize("seed", range(3))
def test_no_damage_makes_check_raise(seed: int) -> None:
    """Bit flips, extreme values, truncations of every fixture: check reports, it never raises."""
    from test_bulk import _mutants

    from sfview.errors import InputError

    reported = 0
    for mutant in _mutants(seed, 500):
        try:
            section = Section(mutant)
        except InputError:
            continue
        reported += bool(check(section))
    assert reported > 100, "the damage is seen"
