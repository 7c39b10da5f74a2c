"""The DWARF expression machine (`sfview/dwarf/expression.py`) and the engine's register file around it.

The expressions come from real files where they can: the linker's PLT rule in
`.eh_frame`, decoded by pyelftools and described as readelf describes it. Whole
walks through expressions (glibc's `__restore_rt`, ld.so's resolver, DRAP functions,
the vDSO) are checked against gdb in test_unwind_states.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tracemalloc

import pytest
from conftest import DATA

from sfview.dwarf.cfi import Unexpressible
from sfview.dwarf.expression import describe, evaluate
from sfview.dwarf.tables import read_cfi
from sfview.generated.sframe import Sframe
from sfview.inputs.elf.image import ElfImage
from sfview.unwind import sigframe
from sfview.unwind.engine import Frame, Machine, Unwinder

RSP, RIP = int(Sframe.Amd64Reg.rsp), int(Sframe.Amd64Reg.rip)
X86 = Machine(Sframe.AbiArch.amd64_endian_little, RSP, int(Sframe.Amd64Reg.rbp), RIP, False)
ARM = Machine(Sframe.AbiArch.aarch64_endian_little, int(Sframe.Aarch64Reg.sp), int(Sframe.Aarch64Reg.x29), 30, True)


def _plt_rule() -> tuple[int, Unexpressible]:
    """The PLT's CFA expression in a real program's `.eh_frame`, and the PLT's address."""
    with open(DATA / "shapes-x86_64-O2", "rb") as f:
        elf = ElfImage.of(f)
        table = read_cfi(elf)
        plt = elf.section(".plt").addr
    fde = table.find(plt + 16)
    assert fde is not None
    rule = fde.row_for(plt + 16).cfa
    assert isinstance(rule, Unexpressible) and rule.what == "CFA expression"
    return plt, rule


@pytest.mark.oracle
def test_the_plt_expression_reads_as_readelf_reads_it() -> None:
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed: it is the reference for the text")
    _, rule = _plt_rule()
    dump = subprocess.run(
        ["readelf", "--debug-dump=frames", str(DATA / "shapes-x86_64-O2")], capture_output=True, text=True
    ).stdout
    theirs = re.search(r"DW_CFA_def_cfa_expression \((.*)\)", dump)
    assert theirs is not None
    # readelf: `DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; ...`
    assert describe(rule.expr, X86.name) == theirs.group(1).replace("): ", ") ")


@pytest.mark.parametrize("offset", range(16))
def test_the_plt_expression_at_every_byte_of_an_entry(offset: int) -> None:
    """`rsp + 8 + ((rip & 15) >= 11) * 8`: before an entry's `push` (its first 11 bytes) the RA is at
    rsp, after it at rsp + 8."""
    plt, rule = _plt_rule()
    rip, rsp = plt + 32 + offset, 0x7FFC_0000_1000
    result = evaluate(rule.expr, {RSP: rsp, RIP: rip}.get, lambda *_: None, register_name=X86.name)
    assert result.value == rsp + 8 + (8 if offset >= 11 else 0), result
    assert result.trace[0] == f"DW_OP_breg7 (rsp) 8 → {rsp + 8:#x}"


# Hand-made expressions: DW_OP_* opcodes as DWARF 5 numbers them (section 7.7.1) ----------------

LIT = 0x30  # DW_OP_lit0
BRA, SKIP, DEREF, DEREF_SIZE, DUP, SWAP, ROT, MINUS, NEG, LT, REG0 = (
    0x28, 0x2F, 0x06, 0x94, 0x12, 0x16, 0x17, 0x1C, 0x1F, 0x2D, 0x50,
)  # fmt: skip


def _run(code: list[int], memory: dict[int, int] | None = None, initial: tuple[int, ...] = ()):
    words = memory or {}
    return evaluate(bytes(code), {7: 0x1000}.get, lambda address, size: words.get(address), initial=initial)


def test_branches_and_stack_operations() -> None:
    # |a - b| with branches: a b minus dup 0 lt; bra +3 (to neg); skip +1 (over neg); neg
    for a, b in ((3, 5), (5, 3)):
        assert _run([LIT + a, LIT + b, MINUS, DUP, LIT, LT, BRA, 3, 0, SKIP, 1, 0, NEG]).value == 2
    assert _run([LIT + 1, LIT + 2, LIT + 3, ROT]).value == 2  # rot: 1 2 3 -> 3 1 2
    assert _run([LIT + 1, LIT + 2, SWAP]).value == 1
    assert _run([LIT + 7], initial=(0x50,)).value == 7
    assert _run([], initial=(0x50,)).value == 0x50  # a register rule starts with the CFA pushed


def test_memory_and_its_absence() -> None:
    assert _run([0x77, 8, DEREF], {0x1008: 0xABCD}).value == 0xABCD  # DW_OP_breg7 8; deref
    missing = _run([0x77, 16, DEREF])
    assert missing.value is None and missing.missing_address == 0x1010
    assert "the memory word at 0x1010" in missing.stop
    assert _run([0x77, 8, DEREF_SIZE, 1], {0x1008: 0x1234}).value == 0x1234  # the reader gets the size


def test_what_it_does_not_evaluate_is_named() -> None:
    stop = _run([REG0])
    assert stop.value is None and stop.stop == "DW_OP_reg0 is not an operation sfview evaluates in CFI"
    assert "not known" in _run([0x70 + 3, 0]).stop  # DW_OP_breg3: rbx not given
    assert "past 10000 operations" in _run([SKIP, 0xFD, 0xFF]).stop  # skip -3: to itself, forever
    assert _run([0x08]).stop == "the expression 08 cannot be decoded at byte 0"  # DW_OP_const1u without its byte


def test_a_huge_expression_costs_what_is_run_of_it() -> None:
    """1.5 million operations: decoded as run, stopped at the step limit, the trace and the words bounded.
    (Decoded whole first, it held half a gigabyte.)"""
    expr = bytes([LIT + 1]) + bytes([0x96]) * 1_500_000  # DW_OP_lit1, then DW_OP_nop
    tracemalloc.start()
    try:
        result = _run(list(expr))
        words = describe(expr, X86.name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.value is None and result.stop == "the expression runs past 10000 operations"
    assert len(result.trace) == 24 + 1 + 8 and result.trace[24] == "… 9968 operations …"
    assert words.startswith("DW_OP_lit1; DW_OP_nop; ") and words.endswith("; … (1499969 more bytes)")
    assert len(words) < 1000
    assert peak < 20 * 1024 * 1024, f"{peak} bytes traced"


def test_a_jump_decodes_up_to_its_target() -> None:
    """`skip` forward over operations not yet decoded, and back to one decoded: each lands on an operation."""
    # lit1; skip +2 (over two nops); nop; nop; lit2; plus → 3
    assert _run([LIT + 1, SKIP, 2, 0, 0x96, 0x96, LIT + 2, 0x22]).value == 3
    assert "starts no operation" in _run([LIT + 1, SKIP, 1, 0, 0x08, 0x05, LIT]).stop  # into const1u's operand


# The register file ------------------------------------------------------------------------


def test_a_signal_frame_that_leads_to_itself_is_a_loop() -> None:
    """A walk ends at a frame whose PC and CFA a frame before it had (no depth cap any more)."""
    tramp = sigframe.X86_64
    pc, sp = 0x40_1000, 0x7FFC_0000_0000
    words = {pc + i: int.from_bytes(tramp.code.ljust(16, b"\0")[i : i + 8], "little") for i in (0, 8)}
    for reg, offset in tramp.saved.items():  # the interrupted state is the trampoline's own
        words[sp + offset] = pc if reg == sigframe.PC else sp if reg == RSP else 0
    trace = Unwinder([], X86, words.get).backtrace(pc, {RSP: sp})
    assert "a loop" in trace.stop and "frame #0" in trace.stop and len(trace.frames) == 2


@pytest.mark.parametrize("machine", [X86, ARM], ids=["x86_64", "aarch64"])
def test_a_trampoline_is_known_at_each_of_its_instructions(machine: Machine) -> None:
    (tramp,) = sigframe.trampolines(machine.abi)
    pc, sp, interrupted = 0x40_1000, 0x7FFC_0000_0000, 0x40_2222
    words = {pc + i: int.from_bytes(tramp.code.ljust(16, b"\0")[i : i + 8], "little") for i in (0, 8)}
    words.update(
        {sp + offset: interrupted if reg == sigframe.PC else sp + 0x400 for reg, offset in tramp.saved.items()}
    )
    for start in tramp.starts:
        frame = Frame(0, pc + start, {machine.sp: sp})
        caller, stop, _ = Unwinder([], machine, words.get).step(frame)
        assert caller is not None and frame.signal, stop
        assert caller.pc == interrupted and caller.registers[machine.sp] == sp + 0x400
        assert caller.interrupted
    off_by_one = Frame(0, pc + 1, {machine.sp: sp})
    Unwinder([], machine, words.get).step(off_by_one)
    assert not off_by_one.signal, "only at an instruction's first byte"


def test_callee_saved_registers_are_carried_and_others_dropped() -> None:
    """An SFrame step on x86-64: rbx (callee-saved) reaches the caller, rax (caller-saved) does not."""
    from conftest import load_section_fixture
    from test_unwind_engine import SECTIONS

    from sfview.sframe.model.section import Section
    from sfview.unwind.engine import Module

    data, base, _ = load_section_fixture(next(p for p in SECTIONS if p.stem == "test-fp-x86_64-2.44"))
    section = Section(data, base)
    func = next(f for f in section.functions() if not f.pcmask)
    unwinder = Unwinder([Module("t", section, 0, lambda *_: "")], X86, lambda address: 0x40_5000)
    frame = Frame(0, func.start_address, {RSP: 0x7FF0_0000, 3: 0x3333, 0: 0xAAAA})
    caller, stop, _ = unwinder.step(frame)
    assert caller is not None, stop
    assert caller.registers[3] == 0x3333 and 0 not in caller.registers and caller.registers[RIP] == caller.pc
    changed, carried = frame.changed(caller)
    assert RSP in changed and 3 in carried
