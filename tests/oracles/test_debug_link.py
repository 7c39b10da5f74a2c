"""A separate debug file is taken only when it is the program's, as gdb takes it: the CRC that
`.gnu_debuglink` records, or the build-id the `.build-id/` path is named after.

Another program's debug file at the linked name (or at the build-id's path) named every frame of a core
from the other program's functions (`small_leaf`, `huge_frame` for deep-x86_64's `leaf`, `recurse`);
gdb refuses it ("CRC mismatch", "has a different build-id, file skipped"), and so does sfview now.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process
from test_unwind import need

from sfview.inputs.elf.image import ElfImage
from sfview.inputs.elf.names import debug_file

BUILD_ID = "b4982e0ae329bb3d77b486664ad77e7a3fbf77c3"
"""deep-x86_64's build-id (`readelf -n`)."""


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """deep-x86_64 stripped and linked to `prog.debug`; its own debug file (`own.debug`) and another
    program's (`other.debug`) beside it, to be copied to the linked name."""
    need("objcopy")
    folder = tmp_path_factory.mktemp("debuglink")
    shutil.copy(DATA / "deep-x86_64", folder / "full")
    subprocess.run(["objcopy", "--only-keep-debug", folder / "full", folder / "prog.debug"], check=True)
    shutil.copy(folder / "prog.debug", folder / "own.debug")
    subprocess.run(["objcopy", "--strip-all", "--add-gnu-debuglink=prog.debug", "full", "prog"], check=True, cwd=folder)
    subprocess.run(["objcopy", "--only-keep-debug", DATA / "shapes-x86_64-O2", folder / "other.debug"], check=True)
    return folder


def _gdb_reading(program: Path, *commands: str) -> str:
    need("gdb")
    args = ["gdb", "-nx", "-batch"] + [a for c in commands for a in ("-ex", c)] + ["-ex", f"file {program}"]
    return subprocess.run(args, capture_output=True, text=True, timeout=60).stderr


def _frame_names(program: Path, *options: str) -> list[str]:
    done = run_process("unwind", str(program), "--core", str(DATA / "deep-x86_64.core"), *options)
    assert done.returncode == 0, done.stderr
    return re.findall(r"^#\d+ +(?:0x[0-9a-f]+ in )?(\S+) \(", done.stdout, re.M)


def test_another_programs_debug_file_at_the_linked_name_is_refused(linked: Path) -> None:
    shutil.copy(linked / "other.debug", linked / "prog.debug")
    assert "(CRC mismatch)" in _gdb_reading(linked / "prog")
    names = _frame_names(linked / "prog")
    assert names[:6] == ["??"] * 6  # the stripped program names none of them itself


def test_the_programs_own_debug_file_names_its_frames_as_gdb(linked: Path) -> None:
    shutil.copy(linked / "own.debug", linked / "prog.debug")
    assert "CRC mismatch" not in _gdb_reading(linked / "prog")
    gdb_bt = (DATA / "deep-x86_64.core.gdb-bt.txt").read_text()
    expected = re.findall(r"^#\d+ +(?:0x[0-9a-f]+ in )?(\S+) \(", gdb_bt, re.M)
    assert _frame_names(linked / "prog")[: len(expected)] == expected


def test_a_file_at_the_build_id_path_of_another_build_is_refused(linked: Path) -> None:
    root = linked / "root"
    place = root / ".build-id" / BUILD_ID[:2] / f"{BUILD_ID[2:]}.debug"
    place.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(linked / "other.debug", place)
    (linked / "prog.debug").unlink(missing_ok=True)
    subprocess.run(["objcopy", "--strip-all", linked / "full", linked / "unlinked"], check=True)
    assert "has a different build-id, file skipped" in _gdb_reading(
        linked / "unlinked", f"set debug-file-directory {root}"
    )
    with open(linked / "unlinked", "rb") as f:
        assert debug_file(ElfImage.of(f), str(linked / "unlinked"), str(root)) is None
    shutil.copy(linked / "own.debug", place)
    with open(linked / "unlinked", "rb") as f:
        assert debug_file(ElfImage.of(f), str(linked / "unlinked"), str(root)) == str(place)


def test_a_linked_file_larger_than_max_size_is_not_read(linked: Path) -> None:
    """Its CRC would read every byte (a sparse file of 4 GiB: 11.7 s); past `--max-size` it is passed over."""
    shutil.copy(linked / "own.debug", linked / "prog.debug")
    assert (linked / "prog.debug").stat().st_size > 4096
    assert _frame_names(linked / "prog", "--max-size", "4096")[:6] == ["??"] * 6
