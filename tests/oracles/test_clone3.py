"""A thread stopped right after `clone3`'s system call, where glibc's CFI ends (`cfi_endproc` before the
`syscall`: no FDE covers the instructions after it) and the new thread's stack holds nothing yet: gdb's prologue
analysis reads its return address at SP, 0, prints `#1  0x0000000000000000 in ?? ()` and ends there ("zero PC").
`sfview unwind --pid` against `gdb -p`, and `sfview unwind --core` against gdb on a core of the same process.

The program (`tests/data/src/clone_stop.c`) waits for a line; gdb attaches, breaks at the instruction after the
syscall in the new thread (`$rax == 0`), queues a SIGSTOP and detaches: the process stays stopped with the thread
there, for both tools to read; a SIGCONT then lets it finish."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, run_process
from test_inline import frame_lines
from test_live import TITLE, _as_gdb, _need_ptrace, _state, _wait_until

from sfview.unwind.engine import ZERO_PC

CLONE3_AFTER_SYSCALL = "*(clone3+25)"
"""glibc 2.36's x86-64 `clone3`: the `test %rax,%rax` after its `syscall` (gdb names the address)."""


class Stopped:
    def __init__(self, program: Path, process: subprocess.Popen[bytes]) -> None:
        self.program, self.process = program, process


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stopped]:
    _need_ptrace()
    program = tmp_path_factory.mktemp("clone3") / "clone_stop"
    subprocess.run(["gcc", "-O2", "-g", "-Wa,--gsframe", "-pthread", str(DATA / "src" / "clone_stop.c"), "-o",
                    str(program)], check=True)  # fmt: skip
    process = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        pid = process.pid
        held = subprocess.run(
            ["gdb", "-p", str(pid), "-batch", "-nx", "-ex", f"break {CLONE3_AFTER_SYSCALL} if $rax == 0",
             "-ex", f"shell echo go > /proc/{pid}/fd/0", "-ex", "continue", "-ex", "queue-signal SIGSTOP",
             "-ex", "delete", "-ex", "detach"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if "hit Breakpoint 1, clone3 ()" not in held.stdout:
            pytest.skip(f"gdb could not stop the new thread after clone3's syscall here: {held.stdout[-300:]}")
        _wait_until(lambda: _state(pid) == "T")
        yield Stopped(program, process)
    finally:
        if process.poll() is None:
            process.send_signal(18)  # SIGCONT: it runs on to its end
        process.wait(timeout=60)


def test_the_new_thread_ends_at_gdbs_zero_pc_frame_live(stopped: Stopped) -> None:
    text = _as_gdb(stopped.process)
    first = TITLE.split(text)[1]
    assert "#1  0x0000000000000000 in ?? ()" in first and ZERO_PC in first, text
    assert _state(stopped.process.pid) == "T", "a process sfview found stopped stays stopped"


def test_the_new_thread_ends_at_gdbs_zero_pc_frame_in_a_core(stopped: Stopped) -> None:
    core = stopped.program.parent / "clone3.core"
    pid = stopped.process.pid
    subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", f"generate-core-file {core}"],
                   capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    bt = subprocess.run(["gdb", "-batch", "-nx", "-ex", "thread 2", "-ex", "bt", str(stopped.program), str(core)],
                        capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    expected = frame_lines(bt)
    assert expected[1:] == ["#1  0x0000000000000000 in ?? ()"], bt
    result = run_process("unwind", str(stopped.program), "--core", str(core), "--thread", "2")
    assert result.returncode == 0, result.stderr
    assert frame_lines(result.stdout, ours=True) == expected, result.stdout
    assert result.stdout.rstrip().endswith(f"stopped: {ZERO_PC}")
