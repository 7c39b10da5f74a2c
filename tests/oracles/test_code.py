"""The instructions beside the rows (`sfview.code.disasm`), checked against `objdump -d` of each target.

objdump is the oracle for where instructions start (Capstone must cut the
code where binutils does) and for which bytes a function has; the rows are
the model's `row_for`, and the instruction just before a row that grew the
CFA by one slot on x86-64 must be a push, as the compiler emitted it.
"""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path

import pytest
from conftest import DATA
from toolchains import toolchain

from sfview.code.disasm import Instructions, listing
from sfview.document import Document
from sfview.sframe.model.rules import Kind

OBJDUMP_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*(?:\t(.*))?$")


def objdump_starts(objdump: str, path: Path, start: int, end: int, endian: str) -> dict[int, bytes]:
    """Each instruction objdump decodes in [start, end): its address and its bytes (a long one's are joined).

    objdump prints x86 and s390x code byte by byte, and AArch64's as 32-bit words (`a9bd7bfd`): a word
    is turned back into bytes in the file's byte order.
    """
    out = subprocess.run(
        [objdump, "-d", "-z", f"--start-address={start:#x}", f"--stop-address={end:#x}", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: dict[int, bytes] = {}
    last = None
    for line in out.splitlines():
        m = OBJDUMP_LINE.match(line)
        if not m:
            continue
        address, text = int(m[1], 16), m[3]
        words = m[2].split()
        code = b"".join(int(w, 16).to_bytes(len(w) // 2, endian) if len(w) == 8 else bytes.fromhex(w) for w in words)
        if text is None and last is not None:  # the rest of a long instruction's bytes, on a line of their own
            found[last] += code
            continue
        found[address] = code
        last = address
    return found


def check_against_objdump(path: Path, objdump: str) -> int:
    """Every function's instructions start where objdump's do, with the same bytes; returns how many."""
    doc = Document.open(str(path))
    count = 0
    for func in doc.section.functions():
        shown = listing(doc, func)
        assert not shown.missing, (func.index, shown.missing)
        ours = {ins.address: ins.code for ins in shown.instructions}
        theirs = objdump_starts(objdump, path, func.start_address, func.end_address, doc.section.endian)
        assert ours == theirs, f"{path.name} fdes[{func.index}] at {func.start_address:#x}"
        count += len(ours)
    return count


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("shapes-x86_64-O2", "x86_64"),
        ("shapes-x86_64-O0-fp", "x86_64"),
        ("libshapes-x86_64.so", "x86_64"),
        ("shapes-aarch64-O2", "aarch64"),
        ("shapes-aarch64-O0-fp", "aarch64"),
    ],
)
def test_instructions_start_where_objdump_says(name: str, target: str) -> None:
    objdump = toolchain("2.40", target).tool("objdump")
    assert check_against_objdump(DATA / name, objdump) > 20


OBJDUMP_TARGET = re.compile(r"\s([0-9a-f]+) <([^>]+)>$")
"""A direct branch in objdump's text: its target address and the symbol objdump names it by."""


@pytest.mark.parametrize(
    ("name", "target"),
    [("shapes-x86_64-O2", "x86_64"), ("libshapes-x86_64.so", "x86_64"), ("shapes-aarch64-O0-fp", "aarch64")],
)
def test_branches_name_their_targets_as_objdump_does(name: str, target: str) -> None:
    """Calls were shown without a name (`callq 0x2370`) where objdump writes `call 2370 <very_long_function>`:
    every direct branch objdump names goes where objdump says, and each call, to the symbol objdump names."""
    objdump = toolchain("2.40", target).tool("objdump")
    path = DATA / name
    doc = Document.open(str(path))
    calls = 0
    for func in doc.section.functions():
        ours = {ins.address: ins.text for ins in listing(doc, func).instructions}
        out = subprocess.run(
            [objdump, "-d", "-w", f"--start-address={func.start_address:#x}", f"--stop-address={func.end_address:#x}",
             str(path)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        for line in out.splitlines():
            found = OBJDUMP_LINE.match(line)
            named = OBJDUMP_TARGET.search(found.group(3) or "") if found else None
            if named is None or "#" in found.group(3):  # `# 15ff8 <…>`: a comment on a memory operand
                continue
            mnemonic = found.group(3).split()[0]
            if not mnemonic.startswith(("j", "call", "b", "cb", "tb")) or mnemonic in ("bic", "bics", "bfi", "bfxil"):
                continue  # objdump names `adrp`'s page too: only branches are compared
            text = ours[int(found.group(1), 16)]
            address, symbol = int(named.group(1), 16), named.group(2)
            assert re.search(rf"#?{address:#x} <", text), (line, text)
            if mnemonic in ("call", "bl"):
                assert text.endswith(f" <{symbol}>"), (line, text)
                calls += 1
    assert calls >= 5


def test_s390x_big_endian_instructions_start_where_objdump_says(tmp_path: Path) -> None:
    tc = toolchain("2.47", "s390x")
    prog = tmp_path / "shapes-s390x"
    tc.compile("-O1", "-o", prog, DATA / "src" / "shapes.c")
    assert check_against_objdump(prog, tc.tool("objdump")) > 20


def test_each_instruction_is_on_the_row_an_unwinder_uses_there() -> None:
    doc = Document.open(str(DATA / "shapes-x86_64-O2"))
    for func in doc.section.functions():
        seen = set()
        for ins in listing(doc, func).instructions:
            row = func.row_for(ins.address)
            assert ins.row == (row.index if row is not None else None)
            first = ins.row is not None and ins.row not in seen
            assert ins.change.startswith(f"▶ {ins.row}: ") == first, (func.index, hex(ins.address), ins.change)
            seen.add(ins.row)


def test_a_push_ends_the_row_before_one_that_grew_the_cfa_by_a_slot() -> None:
    """On x86-64, CFA sp+8 → sp+16 comes right after the `push` that made it (as gcc emitted it)."""
    doc = Document.open(str(DATA / "shapes-x86_64-O0-fp"))
    checked = 0
    for func in doc.section.functions():
        if func.pcmask:
            continue
        instructions = listing(doc, func).instructions
        for before, ins in itertools.pairwise(instructions):
            if not ins.change or ins.row in (None, 0):
                continue
            old, new = func.rows[ins.row - 1].cfa, func.rows[ins.row].cfa
            if old.kind is new.kind is Kind.VALUE and old.base == new.base and new.offset - old.offset == 8:
                assert before.text.startswith("push"), (func.index, before.text, ins.change)
                assert f"sp+{old.offset} → sp+{new.offset}" in ins.change
                checked += 1
    assert checked >= 3


def test_an_object_file_is_disassembled_from_its_sections() -> None:
    path = DATA / "shapes-x86_64-O2.o"
    doc = Document.open(str(path))
    objdump = toolchain("2.40", "x86_64").tool("objdump")
    out = subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    for func in doc.section.functions():
        place = doc.relocated_places[func.span.start]
        block = out.split(f"Disassembly of section {place.section}:")[1].split("Disassembly of section")[0]
        theirs = {int(m[1], 16) for line in block.splitlines() if (m := OBJDUMP_LINE.match(line)) and m[3]}
        ours = {ins.address - func.start_address + place.offset for ins in listing(doc, func).instructions}
        assert ours <= theirs, func.index
        assert ours, func.index


def test_a_raw_section_has_no_code_and_says_so() -> None:
    doc = Document.open(str(DATA / "shapes-x86_64-O2.sframe"))
    shown = listing(doc, doc.section.function(2))
    assert len(shown.instructions) == 0
    assert "raw SFrame section" in shown.missing


@pytest.mark.parametrize(
    "name", ["shapes-x86_64-O2", "shapes-x86_64-O0-fp", "libshapes-x86_64.so", "shapes-aarch64-O2"]
)
def test_the_notes_and_rows_firsts_found_without_making_every_line_are_those_of_every_line(name: str) -> None:
    """`changes()` and `first_of_row` look only where rows start (PCMASK's PLT: everywhere); a scan of
    every instruction, made one by one, is the reference."""
    doc = Document.open(str(DATA / name))
    pcmask = 0
    for func in doc.section.functions():
        every = list(listing(doc, func).instructions)
        shown = listing(doc, func)
        assert [ins for ins in every if ins.change] == shown.instructions.changes(), (name, func.index)
        for row in range(len(func.rows)):
            first = next((i for i, ins in enumerate(every) if ins.row == row), None)
            assert shown.first_of_row(row) == first, (name, func.index, row)
        for i, ins in enumerate(every):
            assert shown.line_of(ins.address + len(ins.code) - 1) == i
        pcmask += func.pcmask
    assert pcmask == ("x86_64" in name), "the PLT's PCMASK function, on x86-64"


def test_a_row_that_starts_inside_an_instruction_is_noted_on_it() -> None:
    """`push %rbx` and the instruction after it cut as one (as a wrong row start would fall): row 1 starts
    inside it, and the next instruction is row 1's first."""
    doc = Document.open(str(DATA / "shapes-x86_64-O2"))
    func = doc.section.function(2)
    real = listing(doc, func).instructions
    line = real.first_of_row(1)
    decoded = list(real.decoded)
    (at, size, _, _), (inside, next_size, _, _) = decoded[line - 1 : line + 1]
    decoded[line - 1 : line + 1] = [(at, size + next_size, "two", "")]
    cut = Instructions(func, real.code, decoded)
    assert cut[line - 1].change.endswith(f"row 1 starts inside this instruction, at {inside:#x}")
    assert cut[line].row == 1 and cut[line].change.startswith("▶ 1: ") and cut.first_of_row(1) == line
    assert cut[line - 1] in cut.changes() and cut[line] in cut.changes()
