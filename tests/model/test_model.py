"""The format model: lookups an unwinder makes, and version 3 rules built by hand.

Version 3 flexible FDEs and RA-undefined rows appear in no fixture yet: the
sections here are built from the layout in shared/spec's version 3 notes.
"""

from __future__ import annotations

import pytest
from conftest import DATA, v3_section

from sfview import rule_notation
from sfview.document import Document
from sfview.output import readelf as dump
from sfview.sframe.model.rules import Kind
from sfview.sframe.model.section import Section


def test_find_function_and_row_like_an_unwinder() -> None:
    section = Document.open(str(DATA / "shapes-x86_64-O2")).require_section()
    func = section.find_function(0x11D1 + 5)
    assert func is not None and func.index == 5
    row = func.row_for(0x11D1 + 5)
    assert row is not None and rule_notation.cfa_text(section, row.cfa) == "sp+70016"
    assert section.find_function(0x1) is None
    assert section.find_function(func.end_address) is None or section.find_function(func.end_address) is not func


def test_pcmask_rows_match_modulo_the_block() -> None:
    section = Section((DATA / "shapes-x86_64-O2.sframe").read_bytes(), 0x141A8)
    plt = section.find_function(0x1030)
    assert plt is not None and plt.pcmask
    # Version 1 has no block size: rows match the offset into the first block.
    assert plt.row_for(0x1030 + 0xA).start_offset == 0
    assert plt.row_for(0x1030 + 0xB).start_offset == 0xB


def test_v3_flexible_rules() -> None:
    cfa_rsp = (7 << 3) | 1  # CFA = RSP + off
    deref_rbp = (6 << 3) | 1 | 2  # CFA = *(RBP + off)
    saved = 2  # X = *(CFA + off)
    section = Section(v3_section(1, [(0, 1, [cfa_rsp, 8, 0, saved, -16]), (4, 0, [deref_rbp, 48])]))
    func = section.function(0)
    assert (func.start_address, func.fde_type, func.num_fres) == (0x1000, 1, 2)
    first, second = func.rows
    assert (
        rule_notation.cfa_text(section, first.cfa),
        first.ra_padding,
        rule_notation.saved_text(section, first.fp),
    ) == (
        "sp+8",
        True,
        "c-16",
    )
    assert (rule_notation.cfa_text(section, second.cfa), second.ra.kind, second.fp.kind) == (
        "(fp+48)",
        Kind.SAME,
        Kind.SAME,
    )
    text, errors = dump.text(section)
    assert errors == []
    assert 'func idx [0]: pc = 0x1000, size = 64 bytes, attr = "F"' in text
    assert "    0000000000001000  sp+8      c-16      U            " in text
    assert "    0000000000001004  (fp+48)   u         u            " in text


def test_v3_row_without_offsets_is_the_outermost_frame() -> None:
    section = Section(v3_section(0, [(0, 1, [8]), (2, 1, [])], fixed_ra=-8))
    first, last = section.function(0).rows
    assert not first.ra_undefined and first.ra.kind is Kind.VALUE and first.ra.fixed
    assert last.ra_undefined and last.cfa.kind is Kind.UNDEFINED
    assert "    0000000000001002  RA undefined" in dump.text(section)[0]


@pytest.mark.parametrize("flags", [0x8, 0x80])
def test_unknown_flags_are_shown(flags: int) -> None:
    data = bytearray(v3_section(0, [(0, 1, [8])]))
    data[3] |= flags
    text = dump.text(Section(bytes(data)))[0]
    assert f"           {flags}" in text
