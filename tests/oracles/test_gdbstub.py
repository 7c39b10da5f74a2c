"""`sfview unwind --gdbstub` against gdb-multiarch's `bt` on an AArch64 guest run by qemu-user.

The program (`tests/data/src/guest.c`, built once for AArch64 with `-Wa,--gsframe`) holds two threads;
main recurses `DEPTH` calls deep and then reads its stdin (`wait_input`). qemu's gdbstub takes one
debugger at a time, so the two tools look at two runs of the same deterministic program, each stopped at
a breakpoint on `wait_input`'s first instruction: gdb-multiarch sets it (`break *wait_input`) and prints
`bt`; sfview sets it itself (`--break wait_input`), prints, detaches; then a line on the guest's stdin
lets it finish, and qemu must exit 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA
from test_gdb_extension import SYSROOT, _free_port, _need
from test_live import FRAME

from sfview.cli import state
from sfview.output.backtrace import symbol_and_offset

DEPTH = 50
SFVIEW = [sys.executable, "-m", "sfview"]


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch")
    built = tmp_path_factory.mktemp("gdbstub") / "guest"
    subprocess.run(["aarch64-linux-gnu-gcc", "-O2", "-Wa,--gsframe", "-pthread", f"-DDEPTH={DEPTH}",
                    str(DATA / "src" / "guest.c"), "-o", str(built)], check=True)  # fmt: skip
    return built


@contextlib.contextmanager
def _guest(program: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """The program under qemu-aarch64, waiting for a debugger at the port given; killed after if still there."""
    port = _free_port()
    qemu = subprocess.Popen(["qemu-aarch64", "-g", str(port), "-L", SYSROOT, str(program)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    try:
        yield qemu, port
    finally:
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()


def _retried(command: list[str]) -> subprocess.CompletedProcess[str]:
    """`command` run until qemu listens (a bound on the wait, not a measurement)."""
    for _ in range(100):
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if "nothing listens there" not in result.stderr and "Connection refused" not in result.stdout + result.stderr:
            return result
        time.sleep(0.1)
    return result


def _up_to_main(frames: list[tuple[int, str]]) -> list[tuple[int, str]]:
    names = [name for _, name in frames]
    return frames[: names.index("main") + 1] if "main" in names else frames


@pytest.fixture(scope="module")
def gdb_frames(program: Path) -> list[tuple[int, str]]:
    """gdb-multiarch's `bt` at the breakpoint: each frame's (PC, name) up to main."""
    with _guest(program) as (_qemu, port):
        command = ["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {SYSROOT}", "-ex", f"target remote :{port}",
                   "-ex", "break *wait_input", "-ex", "continue", "-ex", "bt", "-ex", "kill", str(program)]  # fmt: skip
        output = _retried(command).stdout
    frames = _up_to_main([(int(pc, 16), name) for _, pc, name in FRAME.findall(output) if pc])
    assert [name for _, name in frames] == ["wait_input"] + ["recurse"] * (DEPTH + 1) + ["main"], output
    return frames


def _finishes_normally(qemu: subprocess.Popen[bytes]) -> None:
    """The guest ran on after sfview detached: a line on stdin lets it exit 0, "ready" written before."""
    out, _ = qemu.communicate(b"\n", timeout=60)
    assert qemu.returncode == 0 and out == b"ready\n", (qemu.returncode, out)


def test_unwind_equals_gdb_multiarch_and_the_guest_runs_on(program: Path, gdb_frames: list[tuple[int, str]]) -> None:
    with _guest(program) as (qemu, port):
        result = _retried([*SFVIEW, "unwind", str(program), "--gdbstub", str(port), "--break", "wait_input",
                           "--sysroot", SYSROOT])  # fmt: skip
        assert result.returncode == 0, result.stderr
        _finishes_normally(qemu)
    frames = [(int(pc, 16), name) for _, pc, name in FRAME.findall(result.stdout) if pc]
    assert _up_to_main(frames) == gdb_frames, result.stdout


def test_every_thread_as_json_the_stopped_one_equals_gdb(program: Path, gdb_frames: list[tuple[int, str]]) -> None:
    with _guest(program) as (qemu, port):
        result = _retried([*SFVIEW, "unwind", "--gdbstub", f"localhost:{port}", str(program), "--break",
                           "wait_input", "--sysroot", SYSROOT, "--thread", "all", "--json"])  # fmt: skip
        assert result.returncode == 0, result.stderr
        _finishes_normally(qemu)
    threads = json.loads(result.stdout)["threads"]
    assert len(threads) == 2, result.stdout  # main and the thread it started, as qfThreadInfo lists them
    main = next(t for t in threads if t["thread"] == 1)
    frames = [(f["pc"], f["name"]) for f in main["frames"]]
    assert _up_to_main(frames) == gdb_frames


def test_the_debugger_snapshot_of_the_guest(program: Path, gdb_frames: list[tuple[int, str]]) -> None:
    """`sfview --gdbstub` opens the debugger on a snapshot: the state it is given, then the guest runs on."""
    args = argparse.Namespace(gdbstub=None, pid=None, break_at="wait_input", thread=None, lib_dir=[], sysroot=SYSROOT)
    with _guest(program) as (qemu, port):
        args.gdbstub = str(port)
        for _ in range(100):
            try:
                found, first, _threads = state.process_snapshot(str(program), args)
                break
            except Exception as exc:  # qemu not listening yet
                assert "nothing listens there" in str(exc), exc
                time.sleep(0.1)
        _finishes_normally(qemu)
    assert found == str(program) and first.pc == gdb_frames[0][0]
    assert "a snapshot of the guest at" in (first.origin or "")
    walk = first.unwinder.frames(first.pc, first.registers, DEPTH + 3)
    walked = [(frame.pc, symbol_and_offset(frame.name())[0]) for frame in walk]
    assert walked[: len(gdb_frames)] == gdb_frames
