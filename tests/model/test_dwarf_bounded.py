"""DWARF CFI tables bounded by their bytes: rules shared between rows, register numbers bounded by the ABI.

An FDE of a few kilobytes can set rules for a thousand registers, then advance
eight thousand times: a table that copied every rule at each row held eight
million rules (585 MB in `compare`). Here a table keeps each row's address and
what changed, the rows are made when asked for, and a register number past the
ABI's DWARF numbering is refused, naming the FDE and the number. The sections are generated; what the
rows say is pyelftools' reading (its reference, `tests/oracles/test_ehframe.py`).
"""

from __future__ import annotations

import io
import struct
import tracemalloc

import pytest
from elftools.dwarf.callframe import FDE, CallFrameInfo
from elftools.dwarf.structs import DWARFStructs
from leb128_bytes import uleb

from sfview.dwarf.cfi import ABIS
from sfview.dwarf.ehframe import FrameSection
from sfview.errors import InputError
from sfview.sframe.model.rules import CFA, Kind, Rule

X86_64 = ABIS["EM_X86_64"]


def eh_frame(instructions: bytes, size: int = 0x1000) -> bytes:
    """An `.eh_frame` of one x86-64 CIE (CFA rsp+8, RA at CFA-8) and one FDE at 0 of `instructions`."""
    body = struct.pack("<I", 0) + b"\x01zR\0" + uleb(1) + b"\x78" + uleb(16) + uleb(1) + b"\x1b"
    body += bytes([0x0C, 7, 8, 0x90, 1])
    body += b"\0" * (-(len(body) + 4) % 8)
    cie = struct.pack("<I", len(body)) + body
    at = len(cie)
    fde = struct.pack("<Iii", at + 4, -(at + 8), size) + b"\0" + instructions
    fde += b"\0" * (-(len(fde) + 4) % 8)
    return cie + struct.pack("<I", len(fde)) + fde + bytes(4)


def offsets(registers: range) -> bytes:
    """`DW_CFA_offset_extended` (saved at CFA-8) for each register."""
    return b"".join(b"\x05" + uleb(reg) + b"\x01" for reg in registers)


def read(data: bytes) -> list:
    return FrameSection(".eh_frame", data, 0, True, 8).headers(X86_64)[0].rows


def reference(data: bytes) -> list[dict]:
    """pyelftools' table lines for the FDE."""
    cfi = CallFrameInfo(io.BytesIO(data), len(data), 0, DWARFStructs(True, 32, 8), for_eh_frame=True)
    fde = next(entry for entry in cfi.get_entries() if isinstance(entry, FDE))
    return fde.get_decoded().table


def test_rows_that_change_no_rule_share_one_set() -> None:
    """Every register x86-64 numbers, then 2,000 advances (and as many remembered states): one set of rules,
    not 2,000 copies; the rows are pyelftools' rows."""
    data = eh_frame(offsets(range(X86_64.registers)) + b"\x41\x0a" * 2000)
    rows = read(data)
    assert len(rows) == 2001
    assert len({id(row.others) for row in rows}) == 1
    lines = reference(data)
    assert [row.address for row in rows] == [line["pc"] for line in lines]
    assert sorted(rows[-1].others) == sorted(k for k in lines[-1] if isinstance(k, int) and k not in (6, 16))


def test_a_changed_rule_is_a_copy_of_its_own() -> None:
    """After a row, a change copies the set: the earlier row keeps its rule (as pyelftools reads it)."""
    data = eh_frame(offsets(range(4)) + b"\x41" + b"\x85\x02" + b"\x41" + b"\x0a\xc5\x41\x0b\x41")
    rows = read(data)
    lines = reference(data)
    assert [sorted(row.others.items()) for row in rows] != [sorted(rows[0].others.items())] * len(rows)
    for row, line in zip(rows, lines, strict=True):
        assert {reg: (rule.offset if rule.kind.name == "VALUE" else None) for reg, rule in row.others.items()} == {
            reg: getattr(value, "arg", None) if value.type != "SAME_VALUE" else None
            for reg, value in line.items()
            if isinstance(reg, int) and reg not in (6, 16)
        }


@pytest.mark.parametrize(
    ("instructions", "register"),
    [
        (offsets(range(1000)) + b"\x41" * 8000, 130),  # the attack's shape: 1,000 registers, 8,000 rows
        (b"\x0c" + uleb(5000) + b"\x08", 5000),  # a CFA of register 5000
        (b"\x09\x03" + uleb(300), 300),  # DW_CFA_register: saved in register 300
    ],
    ids=["1000-registers", "cfa-register", "register-rule"],
)
def test_a_register_the_abi_does_not_number_is_refused(instructions: bytes, register: int) -> None:
    with pytest.raises(
        InputError, match=rf"^DWARF CFI cannot be decoded: \.eh_frame\+0x18: register {register} is past"
    ):
        read(eh_frame(instructions))


def test_a_change_at_each_row_costs_its_bytes() -> None:
    """Every register x86-64 numbers, then 4,000 rows that each change one (register 5 at CFA-16, then at
    CFA-24, in turn): 12 KB of CFI. A row held a copy of all 130 rules (19.6 MB for half as many rows),
    then a share of a set of rules and an object of its own (290 bytes a row of 3 bytes of CFI); the
    table now keeps each row's address and change, so that what reading it holds, at its peak and after,
    and what making every row from it holds at its peak, is within ten times its bytes and a constant
    (the interpreter's own objects, the section's). The rows are pyelftools' rows, each made from a
    checkpoint and the changes after it, or from the row before."""
    data = eh_frame(offsets(range(X86_64.registers)) + (b"\x41\x85\x02" + b"\x41\x85\x03") * 2000)
    bound = 64_000 + 10 * len(data)
    tracemalloc.start()
    try:
        rows = read(data)
        kept, peak = tracemalloc.get_traced_memory()
        made = sum(1 for _ in rows)
        walked = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert made == len(rows) == 4001
    assert peak < bound, f"{peak} bytes at the peak for {len(data)} bytes of CFI"
    assert kept < bound, f"{kept} bytes kept for {len(data)} bytes of CFI"
    assert walked < bound + 200_000, f"{walked} bytes at the peak of making the rows of {len(data)} bytes of CFI"
    lines = reference(data)
    assert rows[-1].others != rows[1].others != rows[0].others
    for i in (*range(0, len(rows), 97), len(rows) - 1, 3, 2, 1):  # out of order: from a checkpoint
        assert rows[i].others == {
            reg: rule_of(value) for reg, value in lines[i].items() if isinstance(reg, int) and reg not in (6, 16)
        }
    for row, line in zip(rows, lines, strict=True):  # in order: each from the row before
        assert row.address == line["pc"]
        assert row.others == {
            reg: rule_of(value) for reg, value in line.items() if isinstance(reg, int) and reg not in (6, 16)
        }
        assert [row.others.get(reg) for reg in range(X86_64.registers)] == [
            rule_of(line[reg]) if reg in line and reg not in (6, 16) else None for reg in range(X86_64.registers)
        ]


def rule_of(value: object) -> Rule:
    """pyelftools' `OFFSET(n)` as sfview's rule: saved at CFA+n."""
    assert value.type == "OFFSET"
    return Rule(Kind.VALUE, CFA, value.arg, deref=True)
