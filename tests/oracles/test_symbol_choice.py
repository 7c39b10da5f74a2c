"""Which of the symbols sharing an address names a frame, as gdb chooses (its minimal symbols, where no DWARF
names the function): `sfview unwind --core` against `gdb -batch -ex bt` on a program whose functions have local and
global aliases (`tests/data/src/aliases.c`, built without `-g`), and every function symbol of libc (its `.dynsym`
and its separate debug file's `.symtab`) named as gdb's `info symbol` names it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process
from test_inline import LIBC, _core, frame_lines
from test_unwind import need

from sfview.inputs.elf.image import ElfImage
from sfview.inputs.elf.names import debug_file, function_symbols, unwinding_symbols

INFO = re.compile(r"^(\S+?)(?: \+ (\d+))? in section ")
"""gdb's `info symbol` answer: the name and the offset in decimal."""


@pytest.fixture(scope="module")
def aliases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need("gcc", "gdb")
    program = tmp_path_factory.mktemp("aliases") / "aliases"
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", str(DATA / "src" / "aliases.c"), "-o", str(program)], check=True)
    return program


def test_frames_are_named_by_the_alias_gdb_prefers(aliases: Path) -> None:
    """`work` (global) over `work_impl` (local, last by name); `step_c` (local, last by name, after the local
    `step_b`) over the global `step_a`; `last_weak` (weak, last by name) over the local `held`."""
    core = aliases.parent / "aliases.core"
    expected = frame_lines(_core(aliases, core, "break stop_here", "run"))
    names = [line.split(" in ")[1].split(" (")[0] for line in expected[1:4]]
    assert names == ["work", "step_c", "last_weak"], expected
    result = run_process("unwind", str(aliases), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert frame_lines(result.stdout, ours=True)[: len(expected)] == expected, result.stdout


def gdb_names(path: str, addresses: list[int]) -> list[str | None]:
    """gdb's `info symbol` for each address (as `name+0x12`), None where it prints another form."""
    commands = [arg for address in addresses for arg in ("-ex", f"info symbol {address:#x}")]
    out = subprocess.run(["gdb", "-batch", "-nx", *commands, path], capture_output=True, text=True, timeout=300)
    answers = [line for line in out.stdout.splitlines() if " in section " in line or line.startswith("No symbol")]
    assert len(answers) == len(addresses), out.stdout[-2000:] + out.stderr[-2000:]
    named = []
    for line in answers:
        m = INFO.match(line)
        named.append(None if m is None else m[1] if m[2] is None else f"{m[1]}+{int(m[2]):#x}")
    return named


def test_libc_addresses_are_named_as_gdb_names_them() -> None:
    """Each start of a libc function symbol, and the byte after it: gdb looks in libc's own `.dynsym` first,
    then in its debug file's `.symtab`, and of several symbols at one address takes the last by name unless
    a global one of its size is just before a local one. (`.cold` parts are left out: gdb 13 prints
    `strfromd.cold` as if it were an Ada name, `strfromd[cold]`, which sfview does not copy.)"""
    need("gdb")
    with open(LIBC, "rb") as f:
        image = ElfImage.of(f)
        if debug_file(image, LIBC) is None:
            pytest.skip("libc's separate debug file is not installed (libc6-dbg): its local symbols are there")
        table = unwinding_symbols(image, LIBC, function_symbols(f))
    starts = {s.address for s in table.symbols if "." not in s.name}
    addresses = sorted(starts | {a + 1 for a in starts if (table.at(a) or table.symbols[0]).size > 1})
    expected = gdb_names(LIBC, addresses)
    differ = [
        (hex(a), theirs, table.name_at(a))
        for a, theirs in zip(addresses, expected, strict=True)
        if theirs is not None and theirs != table.name_at(a)
    ]
    assert len(addresses) > 5000 and not differ, differ[:20]
