"""`unwind --pid` on a thread that cannot stop: a vfork parent waits in state D (uninterruptible) until its
child execs or exits, and ptrace's interrupt reaches it only then. sfview waited for it for ever (gdb -p
does too); it now gives the threads `live.STOP_WAIT` seconds, leaves out with a note those still running,
and refuses a process none of whose threads stopped, naming the thread and its state.

And a process that calls exec while it is read: exec ends every other thread, and waits holding the
process's `cred_guard_mutex` until each is gone, which a traced thread is only once its tracer has waited
for it; sfview's next `PTRACE_SEIZE` waited for that mutex, for ever (1 run in 7 to 25 here). Meanwhile
ptrace refuses the thread with `EPERM` (the new memory not yet dumpable), which was said as "it may not be
traced (a set-user-ID program, or one that made itself undumpable)"."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA
from test_live import _need_ptrace, _state, _wait_until


def _built(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """`tests/data/src/NAME.c` built with SFrame, where this machine lets a process trace another."""
    _need_ptrace()
    built = tmp_path_factory.mktemp(name) / name
    source = DATA / "src" / f"{name}.c"
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", "-pthread", str(source), "-o", str(built)], check=True)
    return built


@pytest.fixture(scope="module")
def reexec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _built(tmp_path_factory, "reexec")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _built(tmp_path_factory, "vfork_wait")


def _waiting(pid: int) -> int:
    """The id of the thread of `pid` in state D, once there is one."""
    found: list[int] = []

    def one() -> bool:
        found[:] = [int(t) for t in os.listdir(f"/proc/{pid}/task") if _state(pid, int(t)) == "D"]
        return bool(found)

    _wait_until(one)
    return found[0]


@contextlib.contextmanager
def _vforked(program: Path, others: int) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """The program with `others` threads beside the vfork parent (state D), and that thread's id; its child
    killed after, then the parent must go on and say so."""
    started = subprocess.Popen([str(program), str(others)], stdout=subprocess.PIPE)
    try:
        assert started.stdout is not None and started.stdout.readline() == b"ready\n"
        waiting = _waiting(started.pid)
        yield started, waiting
        children = Path(f"/proc/{started.pid}/task/{waiting}/children").read_text().split()
        for child in children:
            os.kill(int(child), 9)
        assert started.stdout.readline() == b"resumed\n"  # let go: the parent runs on once its child is gone
        assert started.wait(timeout=60) == 0
    finally:
        if started.poll() is None:
            started.kill()
        started.wait()


def _unwind(pid: int) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sfview", "unwind", "--pid", str(pid), "--thread", "all"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def test_a_vfork_parent_alone_is_refused_naming_its_state(program: Path) -> None:
    with _vforked(program, 0) as (process, waiting):
        done = _unwind(process.pid)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"sfview: process {process.pid}: no thread stopped within 2 s: thread {waiting} is in an uninterruptible"
        " wait (state D: a vfork parent waiting for its child, a hung disk): its registers cannot be read until"
        " it leaves it"
    ]


def test_the_other_threads_are_walked_and_the_waiting_one_said(program: Path) -> None:
    with _vforked(program, 2) as (process, waiting):
        done = _unwind(process.pid)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\nThread ") + done.stdout.startswith("Thread ") == 2
    assert f"(LWP {waiting})" not in done.stdout
    assert f"note: process {process.pid}: thread {waiting} is in an uninterruptible wait" in done.stderr


@pytest.mark.slow
def test_a_process_calling_exec_while_read_is_walked_or_said_changed(reexec: Path) -> None:
    started = subprocess.Popen([str(reexec)])
    try:
        for _ in range(30):
            done = _unwind(started.pid)  # a wait for ever ends in `TimeoutExpired`
            said = done.stderr.splitlines()
            assert done.returncode == 0 or said == [
                f"sfview: process {started.pid} changed while sfview was reading it: the threads it stopped are gone"
                " (a thread called exec, or they ended) and the process runs on; run sfview again"
            ], said
            assert started.poll() is None  # let go: it runs on, calling exec
    finally:
        started.kill()
        started.wait()
