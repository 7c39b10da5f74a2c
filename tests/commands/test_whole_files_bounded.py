"""Files read whole, bounded: a library without SFrame, and the source of a patched copy.

A sparse file costs nothing on disk and may say it is gigabytes: both were read
whole into memory (an 8 GiB library under `--sysroot` took 24 GB of anonymous
memory before the kernel's OOM killer ended sfview; `patch` of a 1 GiB file
1 GB before running out). Each test builds its sparse file and fails on the
code before the fix.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import DATA, run_process

from sfview.document import Document
from sfview.edit import patches

SPARSE = 64 << 20
"""The size the sparse files are given (a few KB on disk)."""
HELD = 8 << 20
"""The most of the patched copy's source held at once (a few chunks)."""


def test_a_library_past_max_size_is_not_read_and_said(tmp_path: Path) -> None:
    """deep-x86_64's core maps /usr/lib/x86_64-linux-gnu/libc.so.6; under `--sysroot` that name is an ELF
    file with no SFrame made sparse to 64 MiB: past `--max-size`, not read, and said in a note naming it (it
    was read whole, then copied twice, unsaid). The program's frames are walked as before."""
    folder = tmp_path / "usr" / "lib" / "x86_64-linux-gnu"
    folder.mkdir(parents=True)
    libc = folder / "libc.so.6"
    shutil.copyfile(DATA / "shapes-x86_64-no-sframe", libc)
    os.truncate(libc, SPARSE)
    core, program = DATA / "deep-x86_64.core", DATA / "deep-x86_64"
    result = run_process(
        "unwind", str(program), "--core", str(core), "--sysroot", str(tmp_path), "--max-size", "0x1000000"
    )
    assert result.returncode == 0, result.stderr
    said = f"note: {libc}: {SPARSE} bytes, more than sfview reads (16777216; --max-size raises it): not read"
    assert said in result.stderr.splitlines()
    assert [line.split(" in ")[-1].split(" (")[0] for line in result.stdout.splitlines()[1:6]] == [
        "leaf",
        "with_alloca",
        "recurse",
        "fp_func",
        "main",
    ]


def test_a_patched_copy_of_a_sparse_file_is_written_a_chunk_at_a_time(tmp_path: Path) -> None:
    """The copy of a 64 MiB sparse program holds its bytes with the section's changed, and no more than
    a few chunks of it were held at once (the whole file was, as a `bytearray`)."""
    import tracemalloc

    source = tmp_path / "program"
    shutil.copyfile(DATA / "shapes-x86_64-O2", source)
    os.truncate(source, SPARSE)
    doc = Document.open(str(source))
    original = doc.data
    changed = bytearray(original)
    changed[0x20:0x24] = (0x40).to_bytes(4, "little")  # FDE 0's func_size
    out = tmp_path / "patched"
    tracemalloc.start()
    try:
        patches.write_copy(str(source), doc.file_offset, original, bytes(changed), str(out))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < HELD, peak
    assert out.stat().st_size == SPARSE
    with source.open("rb") as a, out.open("rb") as b:
        for at in range(0, SPARSE, HELD):
            want, got = bytearray(a.read(HELD)), b.read(HELD)
            if at <= doc.file_offset < at + HELD:
                start = doc.file_offset - at
                want[start : start + len(changed)] = changed
            assert got == want, at
