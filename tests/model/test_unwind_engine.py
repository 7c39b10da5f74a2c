"""The unwinder's arithmetic on every version, from expectations written independently of the model.

- Every row of the 28 binutils 2.40-2.46 sections (versions 1, 2, 2 with
  PCREL, 3; AMD64 and AArch64) is stepped through with made-up registers and
  memory, and the caller must be what the row's rule *as objdump printed it*
  says: `sp+16` → CFA = SP + 16; `c-16` → the word at CFA - 16; `u` → the
  register unchanged (on AArch64, the RA still in the link register);
  `f`, and `u` in a version 1 AMD64 RA column → the header's fixed CFA - 8.
- Version 3 flexible rules (register bases, dereferenced CFA, RA in a
  register), from the rows' own comments in `test_v3_flexible.py`.
- Every stop reason: outermost frame, RA 0, a CFA that does not grow, the
  depth limit, no FDE and no usable frame pointer; and the frame-pointer chain.
"""

from __future__ import annotations

import re

import pytest
from conftest import SECTIONS, load_section_fixture
from test_v3_flexible import amd64_section

from sfview import ADDRESS_MASK
from sfview.sframe.model.section import Section
from sfview.unwind.engine import End, Found, Frame, Machine, Module, Unwinder

SP, FP, LR = 0x7FFF_0000, 0x7FFF_0800, 0x4444


def memory(address: int) -> int:
    """Made-up memory: every word is a function of its address, so expected values can be computed."""
    return (address * 3 + 1) & ADDRESS_MASK


def unwinder(section: Section, read=memory) -> Unwinder:
    return Unwinder([Module("t", section, 0, lambda *_: "")], Machine.of(section), read)


ROW = re.compile(r"^    ([0-9a-f]{16})  (sp|fp)([+-]\d+)\s+(\S+)\s+(\S+?)(\[s\])?\s*$")
FUNC = re.compile(r"func idx \[(\d+)\]: pc = (0x[0-9a-f]+), size = (\d+) bytes")


def objdump_rows(text: str) -> list[tuple[int, bool, str, int, str, str]]:
    """(pc, pcmask, cfa base, cfa offset, fp column, ra column) for every row objdump printed."""
    rows = []
    start, pcmask = 0, False
    for line in text.splitlines():
        m = FUNC.search(line)
        if m:
            start = int(m.group(2), 16)
        if "STARTPC" in line:
            pcmask = "[m]" in line
        m = ROW.match(line)
        if m:
            address = int(m.group(1), 16)
            rows.append(
                (start + address if pcmask else address, pcmask, m.group(2), int(m.group(3)), m.group(4), m.group(5))
            )
    return rows


def _saved(column: str, cfa: int) -> int | None:
    m = re.fullmatch(r"c([+-]\d+)", column)
    return memory((cfa + int(m.group(1))) & ADDRESS_MASK) if m else None


@pytest.mark.parametrize("path", SECTIONS, ids=[p.stem for p in SECTIONS])
def test_every_binutils_row_steps_as_objdump_prints_it(path) -> None:
    data, base, text = load_section_fixture(path)
    section = Section(data, base)
    machine = Machine.of(section)
    rows = objdump_rows(text)
    assert rows, "objdump printed rows"
    for pc, _pcmask, cfa_base, cfa_offset, fp_col, ra_col in rows:
        registers = {machine.sp: SP, machine.fp: FP}
        if machine.aarch64:
            registers[machine.ra] = LR
        frame = Frame(0, pc, registers)
        caller, stop, _ = unwinder(section).step(frame)
        assert caller is not None, (hex(pc), stop)
        cfa = (SP if cfa_base == "sp" else FP) + cfa_offset
        assert caller.registers[machine.sp] == cfa, hex(pc)
        expected_fp = FP if fp_col == "u" else _saved(fp_col, cfa)
        assert caller.registers[machine.fp] == expected_fp, hex(pc)
        if machine.aarch64:
            expected_ra = LR if ra_col == "u" else _saved(ra_col, cfa)
        else:
            assert ra_col in ("f", "u"), "AMD64: the header fixes the RA"
            expected_ra = memory(cfa - 8)
        assert caller.pc == expected_ra, hex(pc)


# Version 3 flexible rules ---------------------------------------------------------------

RSP, RBP, R2, R10 = 7, 6, 2, 10
V3_REGISTERS = {RSP: SP, RBP: FP, R2: 0x2222, R10: 0x7FFF_1000}


def _v3_step(pc: int):
    frame = Frame(0, pc, dict(V3_REGISTERS))
    return unwinder(amd64_section()).step(frame)


@pytest.mark.parametrize(
    ("pc", "cfa", "ra", "fp"),
    [
        (0x1000, SP + 8, memory(SP + 8 - 8), FP),  # CFA sp+8, RA the header's CFA-8, FP untracked
        (0x1001, SP + 16, memory(SP + 16 - 8), FP),  # the RA padding word: the default rule, CFA-8
        (0x1003, SP + 16, memory(SP + 16 - 8), memory(SP + 16 - 16)),  # RA padding, FP at CFA-16
        (0x1002, SP + 16, memory(SP + 16 - 8), FP),  # RA saved at CFA-8 by the row
        (0x1004, FP + 16, 0x2222, memory(FP)),  # RA in r2, FP loaded from (fp+0)
        (0x1005, memory(FP - 48), memory(FP + 8), memory(memory(FP - 48) - 16)),  # dereferenced CFA
        (0x1006, 0x7FFF_1000, memory(0x7FFF_1000 - 8), FP),  # CFA from r10
    ],
)
def test_version_3_flexible_rules(pc: int, cfa: int, ra: int, fp: int) -> None:
    caller, stop, _ = _v3_step(pc)
    assert caller is not None, stop
    assert (caller.registers[RSP], caller.pc, caller.registers[RBP]) == (cfa, ra, fp)


def test_version_3_row_without_words_is_the_outermost_frame() -> None:
    caller, stop, _ = _v3_step(0x1007)
    assert caller is None and "outermost" in stop


def test_version_3_ra_padding_keeps_the_default_rule() -> None:
    """An RA padding word is not "not saved": on AMD64 the RA is at CFA + the header's fixed offset,
    as libsframe and the kernel read it (and as binutils 2.46+ write DRAP functions, which
    test_unwind_states checks against gdb)."""
    caller, stop, _ = _v3_step(0x1003)
    assert caller is not None, stop
    assert caller.pc == memory(caller.registers[RSP] - 8)


# Stop reasons and the frame-pointer chain -----------------------------------------------------


def _x86_section() -> Section:
    data, base, _ = load_section_fixture(next(p for p in SECTIONS if p.stem == "test-fp-x86_64-2.44"))
    return Section(data, base)


def _function(section: Section, cfa_from_fp: bool):
    for func in section.functions():
        for row in func.rows:
            if not func.pcmask and (row.cfa.base == section.fp_reg) == cfa_from_fp and row.start_offset:
                return func, row
    raise AssertionError("no such row")


def test_a_return_address_of_0_ends_the_walk() -> None:
    section = _x86_section()
    trace = unwinder(section, read=lambda _: 0).backtrace(_function(section, False)[1].address, {7: SP, 6: FP})
    assert len(trace.frames) == 1 and trace.stop == "the return address is 0: the outermost frame"


def test_a_cfa_that_does_not_grow_ends_the_walk() -> None:
    section = _x86_section()
    _, row = _function(section, True)  # CFA = fp + 16: below SP when FP is
    frame = Frame(1, row.address + 1, {7: SP, 6: SP - 0x100})
    caller, stop, _ = unwinder(section).step(frame)
    assert caller is None and "does not grow" in stop


def test_the_depth_limit_ends_a_walk_that_would_not_end() -> None:
    section = _x86_section()
    _, row = _function(section, False)  # CFA = sp + N: grows every frame
    trace = unwinder(section, read=lambda _: row.address + 1).backtrace(row.address, {7: SP, 6: FP}, limit=5)
    assert len(trace.frames) == 5 and "the limit asked for" in trace.stop
    sps = [f.registers[7] for f in trace.frames]
    assert sps == sorted(sps) and len(set(sps)) == 5


def test_without_an_fde_the_frame_pointer_chain_is_followed() -> None:
    section = _x86_section()
    func, _ = _function(section, False)
    words = {FP: FP + 0x40, FP + 8: func.start_address + 1}
    frame = Frame(0, 0x9_0000, {7: SP, 6: FP})
    caller, stop, _ = unwinder(section, read=words.get).step(frame)
    assert caller is not None, stop
    assert frame.fallback
    assert (caller.pc, caller.registers[7], caller.registers[6]) == (func.start_address + 1, FP + 16, FP + 0x40)


@pytest.mark.parametrize("fp", [0, SP - 0x10, FP + 3])
def test_without_an_fde_a_frame_pointer_that_is_not_one_ends_the_walk(fp: int) -> None:
    frame = Frame(0, 0x9_0000, {7: SP, 6: fp})
    caller, stop, _ = unwinder(_x86_section()).step(frame)
    assert caller is None and "no FDE covers 0x90000" in stop


@pytest.mark.parametrize(
    ("found", "fallback", "heuristic", "signal"),
    [
        (Found.RULES, False, "", False),
        (Found.SIGNAL_FRAME, False, "", True),
        (Found.LINK_REGISTER, True, "LR (PLT stub)", False),
        (Found.PROLOGUE_ANALYSIS, True, "prologue analysis", False),
        (Found.FRAME_POINTER_CHAIN, True, "frame-pointer chain", False),
    ],
)
def test_how_a_caller_was_found_as_the_printers_read_it(
    found: Found, fallback: bool, heuristic: str, signal: bool
) -> None:
    frame = Frame(1, 0x1000, {}, found=found)
    assert (frame.fallback, frame.heuristic, frame.signal) == (fallback, heuristic, signal)
    assert frame.lookup_pc == (0x1000 if signal else 0xFFF), "a trampoline's PC is looked up as it is"


def test_an_ends_words_are_compared_at_once_where_they_lie_near() -> None:
    """A walk's end compares the words it read in one `struct` over the stack copy where they lie near
    each other; words of the code and of the stack lie too far apart for one (a `struct` that long cannot
    be made), and are compared one by one, as words that overlap are."""
    near = End([], 0, [(0x1000, 5), (0x1010, 7), (0x1000, 5)], 0, "", None)
    assert near.words is not None
    start, stop, layout, values = near.words
    memory = (5).to_bytes(8, "little") + bytes(8) + (7).to_bytes(8, "little")
    assert (start, stop, values) == (0x1000, 0x1018, (5, 7)) and layout.unpack_from(memory) == values
    assert End([], 0, [(0x7FFC0000, 1), (0xFFFFFFFFFFFF0000, 2)], 0, "", None).words is None
    assert End([], 0, [(0x1000, 1), (0x1004, 2)], 0, "", None).words is None
    assert End([], 0, [(0x1000, None)], 0, "", None).words is None
