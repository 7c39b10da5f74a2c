"""PLT entries are named as objdump names them (`printf@plt`), on both architectures."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, ELF_FIXTURES

from sfview.document import Document
from sfview.inputs.elf.locate import read_elf_sframe
from sfview.inputs.plt import plt_symbols

OBJDUMPS = {"EM_X86_64": "objdump", "EM_AARCH64": "aarch64-linux-gnu-objdump"}
PLT_LINE = re.compile(r"^([0-9a-f]+) <([^>]+@plt)>:$", re.M)


def _objdump_plt(path: Path, machine: str) -> list[tuple[str, int]]:
    tool = OBJDUMPS[machine]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed: it gives the names to compare with")
    out = subprocess.run([tool, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return [(name, int(address, 16)) for address, name in PLT_LINE.findall(out)]


# Every linked fixture (a relocatable object has no PLT yet; one fixture has no .sframe to open).
LINKED = [p for p in ELF_FIXTURES if p.exists() and not p.name.endswith((".o", "-no-sframe"))]


@pytest.mark.parametrize("path", LINKED, ids=lambda p: p.name)
def test_plt_names_match_objdump(path: Path) -> None:
    with path.open("rb") as f:
        elf = read_elf_sframe(f).image
        ours = [(s.name, s.address) for s in plt_symbols(elf)]
        assert ours == _objdump_plt(path, elf.machine)


def test_the_plt_function_is_named_in_the_tables() -> None:
    doc = Document.open(str(DATA / "shapes-x86_64-O2"))
    section = doc.require_section()
    plt = section.find_function(0x1030)
    assert plt is not None and plt.pcmask
    assert doc.function_name(plt) == "printf@plt"
    assert doc.symbols.name_at(0x1036) == "printf@plt+0x6"


def test_compare_names_each_plt_entry_as_objdump_does(tmp_path: Path) -> None:
    """One PCMASK FDE covers every PLT entry: each difference `compare` finds there is named after the entry
    it is in (`__cxa_throw@plt`), not after the first stub."""
    from sfview.dwarf.compare import compare

    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    prog = tmp_path / "thrower"
    subprocess.run(["g++", "-O1", "-Wa,--gsframe", "-o", str(prog), str(DATA / "src" / "thrower.cc")], check=True)
    entries = sorted((address, name) for name, address in _objdump_plt(prog, "EM_X86_64"))
    doc = Document.open(str(prog))
    result = compare(doc.section, doc.cfi, doc.function_name, doc.symbols.name_at, doc.placement)
    found = [(d, pair.sframe.block_size) for pair in result.pairs if pair.sframe.pcmask for d in pair.differences]
    entry_at = lambda pc: next(n for address, n in reversed(entries) if address <= pc)  # noqa: E731
    for diff, _ in found:
        assert diff.name == entry_at(diff.start), hex(diff.start)
    # a difference that recurs block after block is said once (`repeats`): the entries it covers
    covered = {entry_at(d.start + k * block) for d, block in found for k in range(d.repeats)}
    assert len(covered) >= 5
