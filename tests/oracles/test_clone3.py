"""A thread stopped right after `clone3`'s system call, where glibc's CFI ends (`cfi_endproc` before the
`syscall`: no FDE covers the instructions after it) and the new thread's stack holds nothing yet: gdb's prologue
analysis reads its return address at SP, 0, prints `#1  0x0000000000000000 in ?? ()` and ends there ("zero PC").
`sfview unwind --pid` against `gdb -p`, and `sfview unwind --core` against gdb on a core of the same process.

The program (`tests/data/src/clone_stop.c`) waits for a line; gdb attaches, breaks at the instruction after the
syscall in the new thread (`$rax == 0`), queues a SIGSTOP and detaches: the process stays stopped with the thread
there, for both tools to read; a SIGCONT then lets it finish."""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, run_process
from test_inline import frame_lines
from test_live import TITLE, _by_thread, _gdb, _need_ptrace, _state, _wait_until

from sfview.unwind.engine import ZERO_PC

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def _after_syscall() -> str:
    """Where in glibc's `clone3` its first `syscall` returns to, as gdb disassembles it (`*(clone3+25)`)."""
    listing = subprocess.run(["gdb", "-batch", "-nx", "-ex", "disassemble clone3", LIBC],
                             capture_output=True, text=True, timeout=120).stdout  # fmt: skip
    offsets = re.findall(r"<\+(\d+)>:\s+(\S+)", listing)
    after = next((offsets[i + 1][0] for i, (_, op) in enumerate(offsets[:-1]) if op == "syscall"), None)
    if after is None:
        pytest.skip(f"no clone3 with a syscall in {LIBC} (glibc's x86-64 clone3.S): {listing[-300:]}")
    return f"*(clone3+{after})"


class Stopped:
    def __init__(self, program: Path, process: subprocess.Popen[bytes]) -> None:
        self.program, self.process = program, process


ATTEMPTS = 5
"""How often the process is started and held: the SIGSTOP gdb queues is at times lost as it detaches (the
process then runs to its end), about one time in four here."""


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stopped]:
    _need_ptrace()
    program = tmp_path_factory.mktemp("clone3") / "clone_stop"
    subprocess.run(["gcc", "-O2", "-g", "-Wa,--gsframe", "-pthread", str(DATA / "src" / "clone_stop.c"), "-o",
                    str(program)], check=True)  # fmt: skip
    for _ in range(ATTEMPTS):
        process = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   start_new_session=True)  # fmt: skip
        try:
            if _held(process):
                yield Stopped(program, process)
                return
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)  # it runs on to its end
            process.wait(timeout=60)
    pytest.fail(f"the process never stayed stopped with its new thread after clone3's syscall in {ATTEMPTS} tries")


def _held(process: subprocess.Popen[bytes]) -> bool:
    """gdb stops the new thread after clone3's syscall, queues a SIGSTOP and detaches: whether the process is
    then stopped (not run to its end)."""
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    pid = process.pid
    held = subprocess.run(
        ["gdb", "-p", str(pid), "-batch", "-nx", "-ex", f"break {_after_syscall()} if $rax == 0",
         "-ex", f"shell echo go > /proc/{pid}/fd/0", "-ex", "continue", "-ex", "queue-signal SIGSTOP",
         "-ex", "delete", "-ex", "detach"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if "hit Breakpoint 1, clone3 ()" not in held.stdout:
        pytest.skip(f"gdb could not stop the new thread after clone3's syscall here: {held.stdout[-300:]}")
    _wait_until(lambda: process.poll() is not None or _state(pid) == "T")
    return process.poll() is None


def test_the_new_thread_ends_at_gdbs_zero_pc_frame_live(stopped: Stopped) -> None:
    """The new thread's frames, PC for PC and name for name, as `gdb -p` prints them. (The thread that made it
    is left out: let go as gdb detached, it may run on a few instructions before the SIGSTOP takes it too.)"""
    pid = stopped.process.pid
    theirs = _by_thread(_gdb(pid))
    title = next(title for title, frames in theirs.items() if frames[-1:] == [(0, "??")])
    result = run_process("unwind", "--pid", str(pid), "--thread", "all")
    assert result.returncode == 0, result.stderr
    assert _by_thread(result.stdout)[title] == theirs[title], result.stdout
    body = TITLE.split(result.stdout)[list(_by_thread(result.stdout)).index(title) + 1]
    assert "#1  0x0000000000000000 in ?? ()" in body and ZERO_PC in body, result.stdout
    assert _state(pid) == "T", "a process sfview found stopped stays stopped"


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
