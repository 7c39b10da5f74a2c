"""Version 3 complete: flexible FDEs, signal frames and RA-undefined rows, as binutils 2.46 prints them.

No real section with a flexible FDE exists here (binutils 2.46 emits one only
for unusual CFI), so these sections are built from shared/spec's version 3
notes, and the expected text is written from the notes' account of
libsframe's dumper: word positions, `U`, `f`/`u` for an RA the row leaves
out, `r<N>`, `c`, parentheses for `deref_p`, `%+d` signs.
"""

from __future__ import annotations

import json

from conftest import AARCH64, run_process, v3_section
from handmade import AMD64_ROWS, PCREL_SORTED, R10, RBP, SAVED, reg

from sfview import rule_notation
from sfview.app.fields import FieldTree
from sfview.document import Document
from sfview.inputs.opening import raw_section
from sfview.output.readelf import text
from sfview.sframe.model.rules import CFA, Kind
from sfview.sframe.model.section import Section

# Each line as objdump writes it, less the blanks that pad its last column.
AMD64_LINES = [
    '    func idx [0]: pc = 0x1000, size = 64 bytes, attr = "SF"',
    "    STARTPC         CFA       FP        RA",
    "    0000000000001000  sp+8      u         f",
    "    0000000000001001  sp+16     u         U",
    "    0000000000001002  sp+16     u         c-8",
    "    0000000000001003  sp+16     c-16      U",
    "    0000000000001004  fp+16     (fp+0)    r2+0",
    "    0000000000001005  (fp-48)   c-16      (fp+8)",
    "    0000000000001006  r10+0     u         f",
    "    0000000000001007  RA undefined",
]


def amd64_section() -> Section:
    data = v3_section(1, AMD64_ROWS, fixed_ra=-8, info=0x80, flags=PCREL_SORTED)
    return Section(data)


def test_flexible_amd64_rows_print_as_binutils_2_46() -> None:
    out, errors = text(amd64_section())
    assert errors == []
    lines = out.splitlines()
    body = lines[lines.index("  Function Index :") + 2 :]
    assert [line.rstrip() for line in body] == AMD64_LINES
    assert len(body[1]) == 53 and all(len(line) == 55 for line in body[2:-1]), "columns padded as binutils pads"
    assert "    Flags: SFRAME_F_FDE_SORTED,\n           SFRAME_F_FDE_FUNC_START_PCREL\n" in out
    assert "    CFA fixed RA offset: -8\n" in out


def test_flexible_aarch64_rows_with_signed_return_addresses() -> None:
    sp = 31
    rows = [
        (0, 1, [reg(sp), 16, SAVED, -8, SAVED, -16], True),
        (4, 1, [reg(sp), 16], True),  # the row stops before the RA: no fixed RA on AArch64, so `u`
        (8, 1, [reg(sp), 16, 0, SAVED, -16]),
    ]
    section = Section(v3_section(1, rows, info=0x20, abi=AARCH64, flags=PCREL_SORTED))
    out = text(section)[0]
    assert '    func idx [0]: pc = 0x1000, size = 64 bytes, attr = "F", pauth = B key\n' in out
    assert "    0000000000001000  sp+16     c-16      c-8[s]       \n" in out
    assert "    0000000000001004  sp+16     u         u[s]         \n" in out
    assert "    0000000000001008  sp+16     c-16      U            \n" in out


def test_flexible_rules_are_numbers() -> None:
    rows = amd64_section().function(0).rows
    assert (rows[4].cfa.base, rows[4].cfa.offset, rows[4].cfa.deref) == (RBP, 16, False)
    assert (rows[4].ra.kind, rows[4].ra.base, rows[4].ra.offset) == (Kind.VALUE, 2, 0)
    assert (rows[4].fp.base, rows[4].fp.deref) == (RBP, True)
    assert (rows[5].cfa.base, rows[5].cfa.offset, rows[5].cfa.deref) == (RBP, -48, True)
    assert rows[5].fp.saved_on_stack and rows[5].fp.base == CFA and rows[5].fp.offset == -16
    assert rows[0].ra.fixed and rows[0].ra.offset == -8, "a row that stops before its RA keeps the header's"
    assert rows[1].ra_padding and rows[3].ra_padding
    assert rows[6].cfa.base == R10
    assert rows[7].ra_undefined and rows[7].cfa.kind is Kind.UNDEFINED


def test_frame_pointer_flag_is_not_a_version_3_flag() -> None:
    """SFRAME_F_FRAME_POINTER no longer exists in version 3: its bit prints as an unknown one."""
    section = Section(v3_section(0, [(0, 1, [8])], fixed_ra=-8, flags=0x3))
    out = text(section)[0]
    assert "SFRAME_F_FRAME_POINTER" not in out
    assert "    Flags: SFRAME_F_FDE_SORTED,\n           2\n" in out


def test_json_carries_numeric_flexible_rules(tmp_path) -> None:
    path = tmp_path / "flex.sframe"
    path.write_bytes(v3_section(1, AMD64_ROWS, fixed_ra=-8, info=0x80, flags=PCREL_SORTED))
    result = run_process("dump", "--json", str(path))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    func = doc["functions"][0]
    assert (func["fde_type"], func["signal_frame"]) == ("FLEXIBLE", True)
    row = func["fres"][5]
    assert row["cfa"] == {
        "text": "(fp-48)",
        "kind": "value",
        "base": RBP,
        "base_name": "rbp",
        "offset": -48,
        "deref": True,
        "fixed": False,
        "formula": "*(rbp - 48)",
    }
    assert func["fres"][4]["ra"]["base_name"] == "rcx", "DWARF register 2 on AMD64 (0 rax, 1 rdx, 2 rcx)"
    padding = func["fres"][1]["ra"]
    assert (padding["text"], padding["padding"], padding["formula"]) == ("U", True, "*(CFA - 8)"), (
        "the RA padding word keeps the default rule: the header's fixed offset"
    )
    assert func["fres"][7]["ra_undefined"] is True


def test_the_tree_explains_a_control_word_as_a_control_word() -> None:
    section = amd64_section()
    tree = FieldTree(section)
    row = section.function(0).rows[5]
    control = tree.field_at(row.span.start + 2)  # start address, info byte, then the CFA's control word
    assert control.path == "fdes[0].fres[5].flex.cfa_control"
    assert control.meaning == "CFA = *(rbp - 48)"
    bits = {b.name: (b.high, b.low, b.bits, b.meaning) for b in tree.bit_breakdown(control)}
    assert bits["regnum"] == (7, 3, "00110", "DWARF register 6: rbp")
    assert bits["deref_p"][2] == "1" and bits["reg_p"][2] == "1"
    assert bits["reserved"][3] == "0, as required"
    offset = tree.field_at(row.span.start + 3)
    assert offset.path == "fdes[0].fres[5].flex.cfa_offset.value"
    assert offset.value == -48
    padding = tree.field_at(section.function(0).rows[1].span.start + 4)
    assert padding.path == "fdes[0].fres[1].flex.ra_control"
    assert padding.meaning.startswith("0, the padding word")


def test_the_app_notation_agrees_with_the_table_and_the_tree() -> None:
    section = amd64_section()
    row = section.function(0).rows[4]
    assert rule_notation.rules_text(section, row) == "CFA fp+16 FP (fp+0) RA rcx+0"  # DWARF 2 is rcx on AMD64


def test_every_byte_of_a_flexible_section_belongs_to_one_field() -> None:
    data = v3_section(1, AMD64_ROWS, fixed_ra=-8, info=0x80, flags=PCREL_SORTED)
    tree = FieldTree(Document("flex", raw_section(data, 0)).require_section())
    for offset in range(len(data)):
        field = tree.field_at(offset)
        assert offset in field.span, f"offset {offset:#x}: {field.path}"
    assert tree.field_at(len(data) - 1).path == "fdes[0].fres[7].info"


def test_a_version_3_fre_offset_error_names_the_fre_offset_field() -> None:
    """`func_start` is 8 bytes in version 3: the FRE offset field is 12 bytes into the FDE, not 8."""
    data = bytearray(v3_section(0, [(0, 1, [8])], fixed_ra=-8))
    data[28 + 12 : 28 + 16] = (0x7FFF_0000).to_bytes(4, "little")
    section = Section(bytes(data))
    func = section.function(0)
    assert func.error is not None and func.error.offset == 28 + 12
    assert "func_start_fre_off = 2147418112 puts its attribute block at section offset 0x7fff002c" in str(func.error)
