"""`sfview patch`: readelf reads the edited values in the copy, and nothing else changed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process

PROGRAM = DATA / "shapes-x86_64-O2"


def _readelf(path: Path) -> str:
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    return subprocess.run(["readelf", "--sframe", str(path)], capture_output=True, text=True, check=True).stdout


def test_readelf_reads_the_patched_size_and_offset_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "patched"
    done = run_process(
        "patch", str(PROGRAM), "--set", "fdes[3].func_size=0x40", "--set", "fdes[0].fres[1].offsets[0]=-8.",
        "-o", str(out),
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    before, after = _readelf(PROGRAM).splitlines(), _readelf(out).splitlines()
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert changed == [
        (
            "    0000000000001026  sp+24     u         u            ",
            "    0000000000001026  sp+-8     u         u            ",
        ),
        ("    func idx [3]: pc = 0x1180, size = 6 bytes", "    func idx [3]: pc = 0x1180, size = 64 bytes"),
    ]
    assert len(out.read_bytes()) == len(PROGRAM.read_bytes())
    assert out.stat().st_mode == PROGRAM.stat().st_mode


def test_an_enum_and_a_flag_by_name(tmp_path: Path) -> None:
    out = tmp_path / "patched"
    done = run_process(
        "patch", str(PROGRAM), "--set", "preamble.flags=fde_sorted|frame_pointer",
        "--set", "fdes[2].func_info.pc_type=pcmask", "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = _readelf(out)
    assert "Flags: SFRAME_F_FRAME_POINTER" in text  # binutils 2.40 prints the last flag of several
    assert "func idx [2]: pc = 0x1050, size = 59 bytes\n    STARTPC[m]" in text
