"""`sfview patch` refusing what it cannot do, in one line each; the edit model's undo and redo."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, run_process

from sfview.edit.patches import Edits, Slot, encode, value_of

PROGRAM = DATA / "shapes-x86_64-O2"


@pytest.mark.parametrize(
    ("assignment", "said"),
    [
        ("fdes[3].func_size=0x100000000", "fdes[3].func_size holds 0 to 4294967295"),
        ("fdes[99].func_size=1", "fdes[99].func_size: no such field"),
        ("fdes[3]=1", "fdes[3] is not a value"),
        ("header.abi_arch=sparc", "or one of: aarch64_endian_big"),
        ("fdes[0].fres[0].offsets[0]=200.", "holds -128 to 127"),
        ("no-equals", "not PATH=VALUE"),
    ],
)
def test_what_cannot_be_set_is_said_in_one_line(tmp_path: Path, assignment: str, said: str) -> None:
    out = tmp_path / "out"
    done = run_process("patch", str(PROGRAM), "--set", assignment, "-o", str(out))
    assert done.returncode == 2
    assert said in done.stderr.splitlines()[-1] and "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "assignment",
    ["fdes[3].func_size=1" + "0" * 5000, "a." * 3000 + "b=1", "fdes[" + "9" * 5000 + "].func_size=1"],
    ids=["value", "path", "index"],
)
def test_a_long_assignment_is_named_by_its_start_and_length(tmp_path: Path, assignment: str) -> None:
    """A refusal repeated the 5,000 digits or the 6,000-character path typed, whole; an index of 5,000 digits
    was a ValueError traceback (`int()` refuses past 4,300 digits)."""
    done = run_process("patch", str(PROGRAM), "--set", assignment, "-o", str(tmp_path / "out"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert len(line) < 300 and "characters)" in line


def test_the_original_is_written_only_when_asked_twice(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.write_bytes(PROGRAM.read_bytes())
    refused = run_process("patch", str(copy), "--set", "fdes[3].func_size=0x40", "-o", str(copy))
    assert refused.returncode == 2 and "--overwrite" in refused.stderr
    assert copy.read_bytes() == PROGRAM.read_bytes()
    done = run_process("patch", str(copy), "--set", "fdes[3].func_size=0x40", "-o", str(copy), "--overwrite")
    assert done.returncode == 0 and copy.read_bytes() != PROGRAM.read_bytes()


def test_undo_and_redo_walk_the_patches_back_and_forth() -> None:
    data = bytes(8)
    edits = Edits(data)
    word = Slot("w", 0, 4, signed=True)
    bits = Slot("b", 4, 5, bits=(3, 0), names={"addr4": 2})
    edits.apply(encode(word, value_of(word, "-2."), edits.data, little_endian=True))
    edits.apply(encode(bits, value_of(bits, "addr4"), edits.data, little_endian=True))
    assert edits.data == bytes.fromhex("feffffff 02 000000")
    assert edits.undo().what == "b = 0x2" and edits.data == bytes.fromhex("feffffff 00 000000")
    assert edits.undo() is not None and edits.data == data and edits.undo() is None
    assert edits.redo().what == "w = -2" and edits.data == bytes.fromhex("feffffff 00 000000")
    edits.apply(encode(bits, 0xF, edits.data, little_endian=False))
    assert edits.redo() is None and edits.data == bytes.fromhex("feffffff 0f 000000")


def test_a_compressed_section_has_no_place_for_the_bytes(tmp_path: Path) -> None:
    """Read inflated, a compressed section cannot be patched in the file: said in one line, nothing written."""
    from test_bad_input import _compressed_copy

    out = tmp_path / "out"
    done = run_process("patch", str(_compressed_copy(tmp_path)), "--set", "fdes[3].func_size=0x40", "-o", str(out))
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith("the section is not stored as it reads (compressed?): no patched copy")
    assert not out.exists()
