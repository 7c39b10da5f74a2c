"""Inputs built to cost: each refused or bounded by its bytes, with a message that names the file and the place.

Each test builds its input (none is an attack's own file) and would have failed
before the fix its docstring names.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import DATA, run_process


@pytest.mark.oracle
def test_a_pc_a_dwarf_fde_covers_gets_no_bias_hint(cli) -> None:
    """`_start` (crt1's, assembled without --gsframe) has no SFrame FDE, but readelf finds the DWARF FDE that
    covers it: the note "no FDE covers pc … give --bias" is not given (it was: it asked SFrame alone)."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed: it is the reference for the FDEs")
    program = DATA / "shapes-x86_64-O2"
    frames = subprocess.run(["readelf", "--debug-dump=frames", str(program)], capture_output=True, text=True).stdout
    assert "pc=0000000000001090..00000000000010b2" in frames  # `_start`
    result = cli("unwind", str(program), "--regs", "pc=0x1094,sp=0x7ffc0000", "--mem", "0x7ffc0000=0")
    assert result.code == 0, result.err
    assert "_start" in result.out and "[DWARF CFI]" in result.out
    assert "give --bias" not in result.out
    outside = cli("unwind", str(program), "--regs", "pc=0x555555559000,sp=0x7ffc0000")  # past every FDE: the note stays
    assert "no FDE covers pc 0x555555559000" in outside.out and "give --bias" in outside.out


def test_a_thread_id_of_5000_digits_is_refused_in_one_short_line() -> None:
    """`--thread 999…9` (5,000 digits) was echoed whole in the refusal: now its start and its length."""
    core = DATA / "deep-x86_64.core"
    result = run_process("unwind", str(DATA / "deep-x86_64"), "--core", str(core), "--thread", "9" * 5000)
    assert result.returncode == 2
    assert "not a thread id: '" in result.stderr and "… (5,000 characters)" in result.stderr
    assert len(result.stderr) < 1000
