"""The gdbstub client carries a stopped process unchanged: a fake stub that serves a qemu-user core.

The stub (`tests/fake_stub.py`) answers from `tests/data/deep-aarch64.core` (qemu-aarch64's core of
`deep-aarch64` stopped in `stop_here`): its thread's registers in a `g` reply, its auxiliary vector, its
memory, every reply escaped and run-length encoded as a stub may, memory in replies shorter than asked.
Through it `sfview unwind --gdbstub` must print gdb's backtrace of that core (`deep-aarch64.core.gdb-bt.txt`),
and what `sfview unwind --core` prints.
"""

from __future__ import annotations

import re

import pytest
from conftest import DATA
from fake_stub import FakeStub, core_answers, core_stub, packet, speaking

from sfview import cli
from sfview.inputs.core import read_core

PROGRAM = str(DATA / "deep-aarch64")
CORE = str(DATA / "deep-aarch64.core")
FRAME = re.compile(r"^#\d+\s+(0x[0-9a-f]+) in (\S+) \(", re.M)


def _unwind(capsys: pytest.CaptureFixture[str], *state: str, program: str | None = PROGRAM) -> str:
    assert cli.main(["unwind", *([program] if program else []), *state]) == 0
    return capsys.readouterr().out


def test_the_stub_gives_the_core_as_gdb_unwound_it(capsys: pytest.CaptureFixture[str]) -> None:
    stub, answers = core_stub(CORE)
    through_stub = _unwind(capsys, "--gdbstub", str(stub.port))
    stub.thread.join(5)
    gdb = FRAME.findall((DATA / "deep-aarch64.core.gdb-bt.txt").read_text())
    assert len(gdb) == 6 and FRAME.findall(through_stub)[:6] == gdb, through_stub
    assert through_stub == _unwind(capsys, "--core", CORE)
    assert stub.requests[-1] == b"D"
    sp = read_core(CORE).threads[0].registers["sp"]
    assert b"*" in packet(answers(b"m%x,400" % sp) or b"", compress=True)  # the stack's replies were compressed


def test_the_program_the_stub_names_is_the_one_unwound(capsys: pytest.CaptureFixture[str]) -> None:
    stub, _ = core_stub(CORE, program=PROGRAM)
    assert _unwind(capsys, "--gdbstub", str(stub.port), program=None) == _unwind(capsys, "--core", CORE)


def test_without_a_program_from_stub_or_user_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    stub, _ = core_stub(CORE)
    assert cli.main(["unwind", "--gdbstub", str(stub.port)]) == 2
    assert capsys.readouterr().err == (
        f"sfview: the guest at {stub.port} does not name its program (the stub serves no qXfer:exec-file):"
        " give the program\n"
    )
    stub.thread.join(5)
    assert stub.requests[-1] == b"D"


def test_signals_on_the_way_to_the_breakpoint_are_handed_to_the_guest(capsys: pytest.CaptureFixture[str]) -> None:
    """`--break`: the guest stops for a SIGSEGV (`T0b`) before its breakpoint's SIGTRAP (`T05`); sfview
    continues it with the signal (`C0b`), then reads it where the breakpoint stopped it."""
    answers = core_answers(CORE)
    stops = {b"c": b"T0bthread:%x;" % answers.tid, b"C0b": b"T05thread:%x;" % answers.tid}
    stub = FakeStub(speaking(lambda r: stops.get(r) or (b"OK" if r[:2] in (b"Z0", b"z0") else answers(r))))
    assert _unwind(capsys, "--gdbstub", str(stub.port), "--break", "stop_here") == _unwind(capsys, "--core", CORE)
    stub.thread.join(5)
    asked = [r for r in stub.requests if r[:1] in (b"Z", b"z", b"c", b"C", b"D")]
    assert asked == [b"Z0,4006d0,4", b"c", b"C0b", b"z0,4006d0,4", b"D"]
