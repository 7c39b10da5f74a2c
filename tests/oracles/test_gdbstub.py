"""`sfview unwind --gdbstub` against gdb-multiarch on guests run by qemu-user (AArch64, s390x, x86-64).

The program (`tests/data/src/guest.c`, built once for each architecture with `-Wa,--gsframe`) holds two
threads; main recurses `DEPTH` calls deep and then reads its stdin (`wait_input`), the other reads a pipe.
qemu's gdbstub takes one debugger at a time, so the two tools look at two runs of the same deterministic
program, each stopped at a breakpoint on `wait_input`'s first instruction: gdb-multiarch sets it (`break
*wait_input`) and prints `bt` and `thread apply all bt`; sfview sets it itself (`--break wait_input`),
prints, detaches; then a line on the guest's stdin lets it finish, and qemu must exit 0.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import DATA
from test_gdb_extension import SYSROOT, _free_port, _need
from test_live import FRAME
from test_s390x import SYSROOT as S390X_SYSROOT
from toolchains import toolchain

from sfview.cli import explore, state
from sfview.output.backtrace import symbol_and_offset

DEPTH = 50
SFVIEW = [sys.executable, "-m", "sfview"]
GDB_TITLE = re.compile(r"^Thread (\d+) \(.*\):$", re.M)


class Guest(NamedTuple):
    """A program built for one architecture, and what runs it."""

    program: Path
    qemu: str
    sysroot: str
    gdb_loads_libraries: bool = True
    """False where gdb-multiarch loads none of the guest's libraries (qemu-x86_64's stub, as tried here: its
    other thread, in libc, is `?? ()` to gdb): there only the thread in the program is compared."""


def _build(architecture: str, source: str, folder: Path, *flags: str) -> Guest:
    """`source` built for `architecture` with SFrame: AArch64 and x86-64 by the system's compilers (gas 2.40),
    s390x by binutils 2.47 (s390x's SFrame)."""
    _need(f"qemu-{architecture}", "gdb-multiarch")
    built = folder / f"{Path(source).stem}-{architecture}"
    flags = ("-O2", "-pthread", *flags, str(DATA / "src" / source), "-o", str(built))
    if architecture == "aarch64":
        _need("aarch64-linux-gnu-gcc")
        subprocess.run(["aarch64-linux-gnu-gcc", "-Wa,--gsframe", *flags], check=True)
        return Guest(built, "qemu-aarch64", SYSROOT)
    if architecture == "x86_64":
        _need("gcc")
        subprocess.run(["gcc", "-Wa,--gsframe", *flags], check=True)
        return Guest(built, "qemu-x86_64", "/", gdb_loads_libraries=False)
    toolchain("2.47", "s390x").compile(*flags)
    return Guest(built, "qemu-s390x", S390X_SYSROOT)


@pytest.fixture(scope="module", params=["aarch64", "s390x", "x86_64"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Guest:
    return _build(request.param, "guest.c", tmp_path_factory.mktemp("gdbstub"), f"-DDEPTH={DEPTH}")


@contextlib.contextmanager
def _guest(guest: Guest) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """The program under qemu-user, waiting for a debugger at the port given; killed after if still there."""
    port = _free_port()
    qemu = subprocess.Popen([guest.qemu, "-g", str(port), "-L", guest.sysroot, str(guest.program)],
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


class GdbView(NamedTuple):
    """What gdb-multiarch printed at the breakpoint: `bt` (the thread that stopped) up to main, and `thread
    apply all bt`, each thread by gdb's number (main's up to main)."""

    bt: list[tuple[int, str]]
    threads: dict[int, list[tuple[int, str]]]


def _frames(text: str) -> list[tuple[int, str]]:
    """Each frame's (PC, name) up to main."""
    return _up_to_main([(int(pc, 16), name) for _, pc, name in FRAME.findall(text) if pc])


@pytest.fixture(scope="module")
def gdb_view(built: Guest) -> GdbView:
    with _guest(built) as (_qemu, port):
        command = ["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {built.sysroot}", "-ex",
                   f"target remote :{port}", "-ex", "break *wait_input", "-ex", "continue", "-ex", "bt",
                   "-ex", "echo ALL\\n", "-ex", "thread apply all bt", "-ex", "kill", str(built.program)]  # fmt: skip
        output = _retried(command).stdout
    bt, _, every = output.partition("ALL\n")
    parts = GDB_TITLE.split(every)[1:]
    threads = {int(number): _frames(body) for number, body in zip(parts[::2], parts[1::2], strict=True)}
    view = GdbView(_frames(bt), threads)
    assert [name for _, name in view.bt] == ["wait_input"] + ["recurse"] * (DEPTH + 1) + ["main"], output
    assert len(threads) == 2 and threads[1] == view.bt, output
    assert "waiting" in {name for _, name in threads[2]} or not built.gdb_loads_libraries, output
    return view


def _finishes_normally(qemu: subprocess.Popen[bytes]) -> None:
    """The guest ran on after sfview detached: a line on stdin lets it exit 0, "ready" written before."""
    out, _ = qemu.communicate(b"\n", timeout=60)
    assert qemu.returncode == 0 and out == b"ready\n", (qemu.returncode, out)


def test_unwind_equals_gdb_multiarch_and_the_guest_runs_on(built: Guest, gdb_view: GdbView) -> None:
    with _guest(built) as (qemu, port):
        result = _retried([*SFVIEW, "unwind", str(built.program), "--gdbstub", str(port), "--break", "wait_input",
                           "--sysroot", built.sysroot])  # fmt: skip
        assert result.returncode == 0, result.stderr
        _finishes_normally(qemu)
    assert _frames(result.stdout) == gdb_view.bt, result.stdout


def test_every_thread_as_json_equals_gdbs_thread_apply_all_bt(built: Guest, gdb_view: GdbView) -> None:
    with _guest(built) as (qemu, port):
        result = _retried([*SFVIEW, "unwind", "--gdbstub", f"localhost:{port}", str(built.program), "--break",
                           "wait_input", "--sysroot", built.sysroot, "--thread", "all", "--json"])  # fmt: skip
        assert result.returncode == 0, result.stderr
        _finishes_normally(qemu)
    threads = json.loads(result.stdout)["threads"]
    ours = {t["thread"]: _up_to_main([(f["pc"], f["name"]) for f in t["frames"]]) for t in threads}
    assert len(ours) == 2 and ours[1] == gdb_view.threads[1]
    if built.gdb_loads_libraries:  # the other thread, blocked in read (qemu-user runs it on): gdb names no
        # frame of libc's that its symbols do not name (`??`), where sfview's JSON gives the section
        theirs = gdb_view.threads[2]
        assert [pc for pc, _ in ours[2]] == [pc for pc, _ in theirs]
        assert [name for (_, name), (_, gdb) in zip(ours[2], theirs, strict=True) if gdb != "??"] == [
            name for _, name in theirs if name != "??"
        ]


def test_the_debugger_snapshot_of_the_guest(built: Guest, gdb_view: GdbView) -> None:
    """`sfview --gdbstub` opens the debugger on a snapshot: the state it is given, then the guest runs on."""
    with _guest(built) as (qemu, port):
        args = explore.parser().parse_args(
            ["--gdbstub", str(port), "--break", "wait_input", "--sysroot", built.sysroot]
        )
        for _ in range(100):
            try:
                found, first, threads = state.process_snapshot(str(built.program), args)
                break
            except Exception as exc:  # qemu not listening yet
                assert "nothing listens there" in str(exc), exc
                time.sleep(0.1)
        _finishes_normally(qemu)
    assert threads is not None and len(threads.listed) == 2
    assert found == str(built.program) and first.pc == gdb_view.bt[0][0]
    assert "a snapshot of the guest at" in (first.origin or "")
    walk = first.unwinder.frames(first.pc, first.registers, DEPTH + 3)
    walked = [(frame.pc, symbol_and_offset(frame.name())[0]) for frame in walk]
    assert walked[: len(gdb_view.bt)] == gdb_view.bt


def test_through_the_signal_frame_qemu_wrote(tmp_path: Path) -> None:
    """signal.c: `fault` stores through NULL, the SIGSEGV handler calls `stop_here`. `--break` hands the guest
    its SIGSEGV (gdb: `handle SIGSEGV nostop pass`) and stops in the handler; the walk crosses the signal
    frame qemu-user wrote. On s390x, where gdb-multiarch 13 walks that frame too (on qemu-aarch64's it stops,
    `Invalid vector length in signal frame`; on qemu-x86_64's, without libc's `__restore_rt`, it is lost)."""
    guest = _build("s390x", "signal.c", tmp_path)
    with _guest(guest) as (_qemu, port):
        output = _retried(["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {guest.sysroot}", "-ex",
                           f"target remote :{port}", "-ex", "handle SIGSEGV nostop noprint pass", "-ex",
                           "break *stop_here", "-ex", "continue", "-ex", "bt", "-ex", "kill",
                           str(guest.program)]).stdout  # fmt: skip
    theirs = _frames(output)
    assert [name for _, name in theirs] == ["stop_here", "handler", "fault", "middle", "main"], output
    assert "<signal handler called>" in output
    with _guest(guest) as (qemu, port):
        result = _retried([*SFVIEW, "unwind", str(guest.program), "--gdbstub", str(port), "--break", "stop_here",
                           "--sysroot", guest.sysroot])  # fmt: skip
        qemu.communicate(timeout=60)
    assert result.returncode == 0, result.stderr
    assert _frames(result.stdout) == theirs and "#2  <signal handler called>" in result.stdout, result.stdout
    assert qemu.returncode == 0  # the handler's _exit(0), after sfview detached
