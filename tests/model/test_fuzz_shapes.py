"""Hand-built pathological shapes, fuzzed: the repeats that make a small input costly, mixed by Hypothesis.

The random fuzzing (`tests/commands/test_fuzz_elf.py`, `test_mutants.py`)
damages real files byte by byte; it never writes an FDE of eight thousand
advances, an expression of a million operations or two hundred threads whose
stacks lead into one another. Here each shape is assembled from such motifs
(in any mix and number), and what the reader owes any of them is checked:
no exception but sfview's `InputError`, and work bounded by the input's bytes
(memory as `tracemalloc` counts it; frames walked).
"""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from leb128_bytes import uleb
from test_dwarf_bounded import X86_64, eh_frame

from sfview.dwarf.ehframe import FrameSection
from sfview.dwarf.expression import describe, evaluate
from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.unwind.engine import Crossings, Machine, Unwinder

pytestmark = pytest.mark.slow

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                    HealthCheck.data_too_large])  # fmt: skip


def _peak(work) -> int:
    """The most memory `work()` held at once, in bytes, as tracemalloc counts it."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# DWARF CFI: rows, remembered states and register rules ------------------------------------------------

register = st.one_of(st.integers(0, X86_64.registers - 1), st.integers(X86_64.registers, 1 << 20))
motif = st.one_of(
    st.tuples(st.just("advance"), st.integers(1, 63)),
    st.tuples(st.just("remember"), st.just(0)),
    st.tuples(st.just("restore_state"), st.just(0)),
    st.tuples(st.just("offset"), register),
    st.tuples(st.just("same"), register),
    st.tuples(st.just("expression"), register),
    st.tuples(st.just("every register"), st.just(0)),
)


def _instruction(kind: str, value: int) -> bytes:
    match kind:
        case "advance":
            return bytes([0x40 | value])
        case "remember":
            return b"\x0a"
        case "restore_state":
            return b"\x0b"
        case "offset":
            return b"\x05" + uleb(value) + b"\x01"
        case "same":
            return b"\x08" + uleb(value)
        case "every register":
            return b"".join(b"\x05" + uleb(reg) + b"\x01" for reg in range(X86_64.registers))
    return b"\x10" + uleb(value) + b"\x02\x96\x96"  # DW_CFA_expression: two DW_OP_nop


@SETTINGS
@given(st.lists(st.tuples(st.lists(motif, min_size=1, max_size=3), st.integers(1, 2000)), min_size=1, max_size=5))
@example([([("every register", 0)], 1), ([("advance", 1), ("offset", 5)], 2000)])  # a change at each row
def test_an_fde_of_repeated_motifs_costs_its_changes(runs: list[tuple[list[tuple[str, int]], int]]) -> None:
    """Runs of one to three instructions repeated (up to 2,000 times each), every register given a rule
    among them: the table keeps each row's address and each change (a restored state: the columns it
    changes back), so that what reading it holds is within ten times its bytes and a constant (it held
    every register's rule for each row after a change, then a block of them for each change)."""
    instructions = b"".join(b"".join(_instruction(*what) for what in motifs) * times for motifs, times in runs)
    data = eh_frame(instructions)
    outcome: list = []

    def read() -> None:
        try:
            outcome.append(FrameSection(".eh_frame", data, 0, True, 8).headers(X86_64))
        except InputError as exc:
            outcome.append(exc)

    peak = _peak(read)
    assert len(outcome) == 1
    bound = 200_000 + 10 * len(data)
    assert peak < bound, f"{peak} bytes for {len(data)} bytes of CFI"


# DWARF expressions ------------------------------------------------------------------------------------

operation = st.sampled_from(
    [
        b"\x96",  # DW_OP_nop
        b"\x31",  # DW_OP_lit1
        b"\x12",  # DW_OP_dup
        b"\x22",  # DW_OP_plus
        b"\x2f\xfd\xff",  # DW_OP_skip -3: to itself
        b"\x2f\x00\x00",  # DW_OP_skip 0
        b"\x28\x01\x00",  # DW_OP_bra +1: into the next operation's operand
        b"\x77\x08",  # DW_OP_breg7 8
        b"\x06",  # DW_OP_deref
        b"\x0e" + bytes(8),  # DW_OP_const8u 0
        b"\x10" + b"\xff" * 30 + b"\x7f",  # DW_OP_constu of 31 bytes
        b"\x08",  # DW_OP_const1u without its byte, when last
        b"\xff",  # no operation
    ]
)


@SETTINGS
@given(st.lists(st.tuples(operation, st.integers(1, 20_000)), min_size=1, max_size=4))
def test_an_expression_of_repeated_operations_costs_its_steps(runs: list[tuple[bytes, int]]) -> None:
    """Up to 80,000 operations in runs: evaluated and described within the step limit, the trace
    and the words bounded, whatever the length."""
    expr = b"".join(op * times for op, times in runs)
    found: list = []
    peak = _peak(lambda: found.append((evaluate(expr, {7: 0x1000}.get, lambda a, s: 0), describe(expr, str))))
    result, words = found[0]
    assert len(result.trace) <= 24 + 1 + 8
    assert sum(map(len, result.trace)) < 10_000 and len(words) < 4_000
    assert result.value is not None or result.stop
    assert peak < 8_000_000, f"{peak} bytes for an expression of {len(expr)} bytes"


# Threads whose stacks lead into one another -----------------------------------------------------------

RSP, RBP = int(Sframe.Amd64Reg.rsp), int(Sframe.Amd64Reg.rbp)
X86 = Machine(Sframe.AbiArch.amd64_endian_little, RSP, RBP, int(Sframe.Amd64Reg.rip), False)
STACK = 0x7FFC_0000_0000


@SETTINGS
@given(
    st.integers(2, 400),
    st.lists(st.tuples(st.integers(0, 399), st.integers(0, 399)), min_size=1, max_size=200),
)
def test_threads_on_frame_records_that_lead_into_each_other_walk_each_once(
    records: int, threads: list[tuple[int, int]]
) -> None:
    """`records` frame records, each leading to the next (the last to the first, a ring), and threads that
    start at one of them: every walk together takes each record's frame once, plus one a thread."""
    words: dict[int, int] = {}
    for i in range(records):
        words[STACK + 0x20 * i] = STACK + 0x20 * ((i + 1) % records)
        words[STACK + 0x20 * i + 8] = 0x40_0000 + 4 * ((i + 1) % records)
    unwinder, crossings = Unwinder([], X86, words.get), Crossings()
    walked = 0
    for number, (first, _) in enumerate(threads, 1):
        at = first % records
        fp = STACK + 0x20 * at
        walk = unwinder.frames(0x40_0000 + 4 * at, {RSP: fp - 0x40, RBP: fp}, crossings=(crossings, number))
        walked += len(list(walk))
        assert walk.stop
    assert walked <= records + 2 * len(threads)
