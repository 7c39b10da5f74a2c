"""Walks that a damaged row could make endless, found by attacking sfview with fuzzed files (issue 17).

A fuzzed AArch64 program whose row left the RA in x30 (`u`) with the CFA at
SP + 48: from `--regs` alone (no memory to run out of) every caller was the
same PC with the CFA 48 bytes further, for ever (1.4 GB in a minute).
"""

from __future__ import annotations

from conftest import AARCH64, v3_section
from test_v3_flexible import PCREL_SORTED, reg

from sfview.sframe.section import Section
from sfview.unwind.engine import Machine, Module, Unwinder

SP, LR = 31, 30


def test_a_return_address_kept_in_its_register_is_a_loop_past_frame_0() -> None:
    """Frame 0 may keep its RA in x30 (a leaf); a caller that does, at the PC x30 holds, is a loop."""
    section = Section(v3_section(1, [(0, 1, [reg(SP), 48])], info=0x20, abi=AARCH64, flags=PCREL_SORTED))
    assert section.function(0).rows[0].ra.kind.value != "value", "the RA rule is `u`: unchanged, in x30"
    unwinder = Unwinder([Module("t", section, 0, lambda *_: "")], Machine.of(section), lambda _: None)
    trace = unwinder.backtrace(0x1004, {SP: 0x7FFF_0000, LR: 0x1008})
    assert [f.pc for f in trace.frames] == [0x1004, 0x1008]
    assert trace.stop == "the RA 0x1008, kept in a register, is this frame's PC: a loop, the walk stops"
    assert trace.frames[1].cfa == 0x7FFF_0000 + 48 * 2


def test_a_leaf_keeping_its_return_address_in_its_register_is_walked() -> None:
    """Frame 0 in the same row: its caller is x30's PC, walked as before."""
    section = Section(v3_section(1, [(0, 1, [reg(SP), 48])], info=0x20, abi=AARCH64, flags=PCREL_SORTED))
    unwinder = Unwinder([Module("t", section, 0, lambda *_: "")], Machine.of(section), lambda _: None)
    trace = unwinder.backtrace(0x1004, {SP: 0x7FFF_0000, LR: 0x2000})
    assert [f.pc for f in trace.frames] == [0x1004, 0x2000]
