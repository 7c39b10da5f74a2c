"""A core that names one library under many paths: the file is read once, one module where it is mapped.

The core is the deep-x86_64 fixture, its `NT_FILE` mappings given 200 more
names for libc: symbolic links to it (the same device and inode) and one copy
(the same bytes). Each name read the whole file again and made a module of
it (300 aliases of libc: 590 MB).
"""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest
from conftest import DATA

from sfview.inputs.core import Mapping, read_core
from sfview.unwind import session

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"


@pytest.fixture(scope="module")
def core():
    found = read_core(str(DATA / "deep-x86_64.core"))
    if not Path(LIBC).is_file() or LIBC not in found.mapped_files():
        pytest.skip(f"the fixture's core maps {LIBC}, which this machine does not have")
    return found


def test_a_library_under_200_names_is_read_once(core, tmp_path: Path) -> None:
    plain = session.from_core(str(DATA / "deep-x86_64"), core, None, [], None)
    libc = [m for m in core.mappings if m.path == LIBC]
    aliases = []
    for i in range(200):
        link = tmp_path / f"libc-{i}.so.6"
        link.symlink_to(LIBC)
        aliases.append(link)
    copy = tmp_path / "libc-copy.so.6"
    shutil.copyfile(LIBC, copy)
    aliases.append(copy)
    core.mappings.extend(Mapping(m.start, m.end, m.file_offset, str(alias)) for alias in aliases for m in libc)
    try:
        tracemalloc.start()
        many = session.from_core(str(DATA / "deep-x86_64"), core, None, [], None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        del core.mappings[-len(aliases) * len(libc) :]
    assert [m.name for m in many.unwinder.modules] == [m.name for m in plain.unwinder.modules]
    assert peak < 32 * 1024 * 1024, f"{peak} bytes traced"
    assert many.pc == plain.pc and many.registers == plain.registers
