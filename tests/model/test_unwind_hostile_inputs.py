"""What attacking `sfview unwind` with fuzzed programs found (issue 17), each from a small generated input.

- A fuzzed AArch64 program whose row left the RA in x30 (`u`) with the CFA
  at SP + 48: from `--regs` alone (no memory to run out of) every caller was
  the same PC with the CFA 48 bytes further, for ever (1.4 GB in a minute).
- `.eh_frame_hdr` entries whose FDE address is outside `.eh_frame`: a
  `struct.error` from the lazy FDE reader.
- A CIE whose return-address column is another register: in `_start`, where
  the RA is `DW_CFA_undefined`, an `AssertionError`.
"""

from __future__ import annotations

import struct
from pathlib import Path

from conftest import AARCH64, DATA, v3_section
from elf_edit import Elf
from handmade import PCREL_SORTED, reg

from sfview.sframe.model.section import Section
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


PROGRAM = DATA / "deep-x86_64"


def _unwind(cli, path: Path, pc: str):
    result = cli("unwind", str(path), "--cfi", "dwarf", "--regs", f"pc={pc},sp=0x7ffc0000,fp=0")
    assert result.code == 0 and "Traceback" not in result.err, result
    return result


def test_eh_frame_hdr_entries_outside_eh_frame_are_passed_over(cli, tmp_path: Path) -> None:
    """Every FDE pointer of `.eh_frame_hdr`'s table 2 GB back: the table cost the DWARF rules ("no FDE
    covers"). gdb never reads that table; sfview passes it over and finds the FDEs by their own headers, as
    in the sound file (`tests/oracles/test_unwind.py` holds the walk to gdb's on such a file)."""
    elf = Elf.of(PROGRAM.read_bytes())
    hdr = elf.section(".eh_frame_hdr")["sh_offset"]
    (count,) = struct.unpack_from("<I", elf.data, hdr + 8)  # after version, 3 encodings, eh_frame_ptr
    for i in range(count):  # each (initial location, FDE address) pair, datarel sdata4: the FDE's 2 GB back
        elf.poke(hdr + 12 + 8 * i + 4, struct.pack("<i", -0x80000000))
    path = tmp_path / "hdr"
    path.write_bytes(elf.bytes())
    assert _unwind(cli, path, "leaf+4").out == _unwind(cli, PROGRAM, "leaf+4").out


def test_a_cie_whose_return_address_column_is_another_register(cli, tmp_path: Path) -> None:
    elf = Elf.of(PROGRAM.read_bytes())
    cie = elf.data.index(b"zR\0\x01\x78\x10", elf.section(".eh_frame")["sh_offset"])  # code 1, data -8, RA r16
    elf.poke(cie + 5, b"\0")  # the RA column: r0 (rax)
    path = tmp_path / "ra-column"
    path.write_bytes(elf.bytes())
    out = _unwind(cli, path, "_start+4").out
    assert "stopped: no rule gives the RA (rip) and it is not a register the caller keeps" in out
