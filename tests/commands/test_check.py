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
from conftest import DATA, ELF_FIXTURES, SECTIONS, fuzzed_section, load_section_fixture, run_process, v3_section

from sfview.check import run
from sfview.check.catalogue import CHECKS
from sfview.check.run import Program, check, check_bytes
from sfview.errors import InputError
from sfview.generated import sframe_layout as layout
from sfview.sframe.model.section import Section

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
    found = list(check(Section(bytes(data))))
    assert {d.check.id for d in found} == {"fre-type-undefined", "offset-size-undefined"}
    fde_problem = next(d for d in found if d.check.id == "fre-type-undefined")
    assert fde_problem.start == MODEL.function(3).span.start + layout.FDE[1].fields["func_info"][0]


def test_more_fdes_than_fit() -> None:
    """The FDEs that do fit past the real ones are FRE bytes read as FDEs: they have problems of their own."""
    data = bytearray(SECTION)
    header("num_fdes", 50)(data)
    found = list(check(Section(bytes(data))))
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


def v2_section(fdes: list[tuple[int, int, int, int, int]], block: bytes, *, fres_first: bool = False) -> bytes:
    """A version 2 AMD64 section written from the spec: FDEs (start, size, fre_off, num_fres, info), then the
    FRE bytes, or (`fres_first`) the FRE bytes before the FDE array."""
    fde_bytes = b"".join(struct.pack("<iIIIBBH", *f, 0, 0) for f in fdes)
    fdeoff, freoff = (len(block), 0) if fres_first else (0, len(fde_bytes))
    num_fres = sum(f[3] for f in fdes)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, len(fdes), num_fres, len(block), fdeoff, freoff)
    return header + (block + fde_bytes if fres_first else fde_bytes + block)


ROW = bytes([0, 0x02, 8])  # start 0, one 1-byte offset from the SP, CFA = SP + 8


def ids_in(found: object) -> set[str]:
    return {d.check.id for d in found}  # type: ignore[attr-defined]


def test_an_unreadable_header_is_reported_not_raised() -> None:
    found = list(check_bytes(b"\xe2\xde\x01"))
    assert ids_in(found) == {"section-unreadable"}
    assert "too short" in found[0].message
    assert ids_in(check_bytes(b"\x00\x00" + SECTION[2:])) == {"section-unreadable"}


def test_an_auxiliary_header_past_the_end() -> None:
    data = bytearray(SECTION[:40])
    header("auxhdr_len", 200)(data)
    found = list(check_bytes(bytes(data)))
    assert [d.check.id for d in found] == ["auxhdr-out-of-bounds"]
    assert found[0].message == "auxhdr_len = 200: the auxiliary header would end at 0xe4, past the section's end (0x28)"


def test_fres_before_fdes() -> None:
    data = v2_section([(0x1000, 16, 0, 1, 0)], ROW, fres_first=True)
    assert ids_of(data) == {"fdeoff-after-freoff"}
    assert ids_of(v2_section([(0x1000, 16, 0, 1, 0)], ROW)) == set()


def test_fre_bytes_no_function_uses() -> None:
    data = bytearray(SECTION + b"\0")
    header("fre_len", Section(SECTION).header.fre_len + 1)(data)
    assert ids_of(bytes(data)) == {"fre-len-unused"}


def test_a_count_past_the_sub_section_is_blamed_on_the_count() -> None:
    data = bytearray(SECTION)
    fde(5, "func_num_fres", 0xFFFFFFFF)(data)
    found = [d for d in check(Section(bytes(data))) if d.check.id == "num-fres-too-many"]
    field = MODEL.function(5).span.start + layout.FDE[1].fields["func_num_fres"][0]
    assert [d.start for d in found] == [field]
    assert found[0].message.startswith("fdes[5].func_num_fres = 4294967295: more FREs than the FRE sub-section")
    assert "room for at most" in found[0].message


def test_rows_outside_the_sub_section_and_rows_shared() -> None:
    data = bytearray(SECTION)
    fde(5, "func_start_fre_off", 0x10000)(data)
    assert ids_of(bytes(data)) == {"fres-outside-fre-subsection"}
    data = bytearray(SECTION)
    fde(5, "func_start_fre_off", MODEL.function(4).fre_off)(data)
    assert "fres-overlap" in ids_of(bytes(data))


def test_a_signal_bit_in_version_1() -> None:
    data = bytearray(SECTION)
    fde(5, "func_info", MODEL.function(5).info_byte | 0x80)(data)
    assert ids_of(bytes(data)) == {"signal-bit-v1"}


def test_functions_against_the_program() -> None:
    first = MODEL.function(0).start_address
    nowhere = Program([(0, 0x10)], lambda address: True)
    assert ids_in(check(MODEL, program=nowhere)) == {"function-outside-text"}
    unnamed = Program([(0, 1 << 64)], lambda address: address != first)
    found = list(check(MODEL, program=unnamed))
    assert [(d.check.id, d.fde) for d in found] == [("function-unnamed", 0)]


def test_version_3_types_and_attribute_blocks() -> None:
    assert ids_of(v3_section(5, [(0, 1, [8])], fixed_ra=-8)) == {"fde-type-undefined"}
    data = bytearray(v3_section(0, [(0, 1, [8])], fixed_ra=-8))
    at = HEADER + layout.HEADER.size + layout.FDE[3].fields["func_start_fre_off"][0]
    struct.pack_into("<I", data, at, 0x100)
    assert ids_of(bytes(data)) == {"attr-outside-fre-subsection"}


RSP, RBP = 7, 6  # DWARF register numbers on AMD64


def control(regnum: int, reg_p: int = 1, deref_p: int = 0, reserved: int = 0) -> int:
    """A 1-byte control word (bits 7..3 register, 2 reserved, 1 deref_p, 0 reg_p), as the v3 notes lay it out."""
    return regnum << 3 | reserved << 2 | deref_p << 1 | reg_p


def flexible(*words: int) -> bytes:
    return v3_section(1, [(0, 1, list(words))], fixed_ra=-8)


def test_flexible_control_words() -> None:
    assert ids_of(flexible(control(RSP), 8)) == set()
    assert ids_of(flexible(control(RSP, reg_p=0), 8)) == {"flex-cfa-not-register"}
    assert ids_of(flexible(control(RSP, reserved=1), 8)) == {"flex-reserved-bits"}
    assert ids_of(flexible(control(31), 8)) == {"flex-register-unknown"}
    saved = control(0, reg_p=0, deref_p=1)
    assert ids_of(flexible(control(RSP), 16, saved, -8, saved, -16)) == set()
    assert ids_of(flexible(control(RSP), 16, saved, -8, saved, -16, 1)) == {"flex-words-left-over"}


def test_a_row_cut_short_by_the_end_of_the_section() -> None:
    found = list(check(Section(v2_section([(0x1000, 16, 0, 1, 0)], bytes([0, 2 << 5 | 2 << 1, 8])))))
    assert [d.check.id for d in found] == ["fre-undecodable"]
    assert "truncated" in found[0].message and found[0].start < len(v2_section([(0x1000, 16, 0, 1, 0)], ROW))


def test_an_fde_the_model_cannot_read_for_another_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback when no known cause explains an undecodable FDE (none is known to reach it)."""
    monkeypatch.setattr(Section, "_misplaced_attr", lambda self, index, start, fde: InputError("odd", offset=start))
    assert ids_of(flexible(control(RSP), 8)) == {"fde-undecodable"}


def test_one_check_on_many_rows_speaks_a_few_times_then_counts() -> None:
    rows = b"".join(bytes([0, 0x02, 4]) for _ in range(10))  # ten rows at +0, each CFA = SP + 4
    found = list(check(Section(v2_section([(0x1000, 16, 0, 10, 0)], rows))))
    counted = [d for d in found if d.check.id == "cfa-offset-implausible"]
    assert [d.fre for d in counted] == [0, 1, 2, None]
    assert counted[-1].message == "and 7 more rows of this function like these"
    assert counted[1].start == len(v2_section([(0x1000, 16, 0, 10, 0)], b"")) + 3, "row 1's own bytes"


def test_every_check_has_a_test() -> None:
    """Each id of the catalogue appears in this file's tests (a check nobody triggers is not known to work)."""
    source = Path(__file__).read_text()
    untested = [check_id for check_id in CHECKS if f'"{check_id}"' not in source]
    assert untested == []


@pytest.mark.parametrize("path", SECTIONS, ids=lambda p: p.stem)
def test_binutils_sections_are_clean(path: Path) -> None:
    data, base, _ = load_section_fixture(path)
    assert list(check(Section(data, base))) == []


def test_the_command_line(tmp_path: Path) -> None:
    clean = [str(p) for p in ELF_FIXTURES if p.exists() and not p.name.endswith("-no-sframe")]
    result = run_process("check", *clean)
    assert (result.returncode, result.stderr) == (0, "")
    infos = result.stdout.splitlines()
    assert infos and all(": info function-unnamed: " in line and "-stripped:" in line for line in infos), (
        "only the stripped binary has functions no symbol names, and an info does not fail the check"
    )
    kernel = run_process("check", "--profile", "kernel", str(DATA / "shapes-x86_64-O2"))
    assert kernel.returncode == 1, "the kernel refuses it: a CI job gates on that"
    assert kernel.stdout.splitlines()[-2] == (
        f"{DATA / 'shapes-x86_64-O2'}: kernel: refused: -EINVAL at section offset 0x2: "
        "sframe_read_header: preamble.version != SFRAME_VERSION_3"
    )
    report = json.loads(
        run_process("check", "--json", "--profile", "libsframe-2.40", str(DATA / "shapes-x86_64-O2")).stdout
    )
    verdict = report[0]["profiles"]["libsframe-2.40"]
    assert verdict["accepted"] is True and report[0]["problems"] == [] and verdict["lookups"] == []
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
    from handmade import mutants

    from sfview.errors import InputError

    reported = 0
    for mutant in mutants(seed, 500):
        try:
            section = Section(mutant)
        except InputError:
            continue
        reported += bool(check(section))
    assert reported > 100, "the damage is seen"


@pytest.mark.parametrize("seed", range(30))
def test_row_blocks_are_sorted_only_when_two_share_a_byte(seed: int) -> None:
    """Which FRE bytes are taken says whether any two functions' rows overlap, as the sorted blocks do, and
    where the last rows end; sorted, the blocks are those inside the sub-section in (start, end, index) order."""
    import random

    from sfview.check.run import _Blocks

    rng = random.Random(seed)
    low, high = rng.randrange(0, 50), rng.randrange(50, 400)
    blocks = _Blocks(low, high)
    kept = []
    for index in range(rng.randrange(1, 60)):
        start = rng.randrange(0, 420)
        block = (start, start + rng.randrange(0, 12 if seed % 2 else 3), index)
        blocks.append(block)
        if low <= block[0] < block[1] <= high:
            kept.append(block)
    kept.sort()
    overlap = any(b[0] < max(a[1] for a in kept[:i]) for i, b in enumerate(kept) if i)
    assert blocks.disjoint == (not overlap)
    assert blocks.reach == max([low] + [b[1] for b in kept])
    assert len(blocks) == len(kept)
    assert list(blocks.in_order()) == kept


@pytest.mark.parametrize("seed", range(8))
def test_the_checks_pause_every_few_functions_and_find_the_same(seed: int, tmp_path: Path, monkeypatch) -> None:
    """`pace` is called before every `PACE_EVERY`th function (the explorer waits in it while keys are pressed)
    and changes nothing found: a damaged section's diagnostics are the same with it and without."""
    monkeypatch.setattr(run, "PACE_EVERY", 3)
    data = fuzzed_section(seed, tmp_path).read_bytes()
    try:
        section = Section(data, 0x1000)
    except InputError:
        pytest.skip("the damage broke the header: no function is walked")
    paced = []
    assert list(check(section, pace=lambda: paced.append(1))) == list(check(section))
    assert len(paced) == -(-len(section) // 3)


def test_the_messages_worded_when_read() -> None:
    """The checks that speak of every function keep a template and its values (a million functions make
    millions of problems, most only counted): each worded when read, as it was written at once."""
    f = [MODEL.function(i) for i in range(6)]
    data = bytearray(SECTION)
    fde(3, "func_size", 0)(data)
    fde(2, "func_size", 0x200)(data)
    found = {d.check.id: d.message for d in check(Section(bytes(data)))}
    assert found == {
        "function-size-zero": f"func_size is 0: the function at {f[3].start_address:#x} covers no byte",
        "functions-overlap": f"starts at {f[3].start_address:#x}, inside fdes[2] "
        f"(ends {f[2].start_address + 0x200:#x})",
    }
    data = bytearray(SECTION)
    swap_fdes(3, 4)(data)
    (unsorted,) = check(Section(bytes(data)))
    assert unsorted.message == (
        f"starts at {f[3].start_address:#x}, not after fdes[3] ({f[4].start_address:#x}), though "
        "SFRAME_F_FDE_SORTED is set"
    )
    data = bytearray(SECTION)
    fde(5, "func_start_fre_off", f[4].fre_off)(data)
    rows = next(d for d in check(Section(bytes(data))) if d.check.id == "fres-overlap")
    assert rows.message.startswith(f"its FRE bytes [{f[4].rows.positions[0]:#x}, ") and " overlap those of fdes[" in (
        rows.message
    )
    nowhere, unnamed = Program([(0, 0x10)], lambda address: True), Program([(0, 1 << 64)], lambda address: False)
    outside = next(iter(check(MODEL, program=nowhere)))
    assert outside.message == (
        f"[{f[0].start_address:#x}, {f[0].start_address + f[0].size:#x}) is not inside any executable segment of "
        "the file"
    )
    assert next(iter(check(MODEL, program=unnamed))).message == f"no symbol starts at {f[0].start_address:#x}"
