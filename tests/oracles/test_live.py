"""A running process: `sfview unwind --pid` against `gdb -p`'s `thread apply all bt` on the same stopped
process, and the process left as it was (running on and exiting normally, or stopped if it was).

The program (`tests/data/src/live.c`, built once with `-Wa,--gsframe`) holds three threads, each blocked
reading a pipe: main at the bottom of a deep recursion, one inside a signal handler, one a few calls
down. gdb attaches, prints, detaches; then sfview does the same; then a line on the program's stdin lets
it finish, and it must exit 0.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import DATA, debugger_shown, run_process
from test_unwind import need

from sfview.errors import InputError
from sfview.inputs import live
from sfview.unwind import session

DEPTH = 200
TITLE = re.compile(r"^Thread \d+ \(.*\):$", re.M)
FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) \(", re.M)
"""A frame line, gdb's or sfview's: without an address for a function inlined into the next frame, or for
frame 0 where a line starts at its PC (both print them alike where debug information names the frames)."""
READ = 0
"""x86-64's `read` system call number: what `/proc/PID/task/TID/syscall` shows of a thread blocked in it."""


def _need_ptrace() -> None:
    need("gcc", "gdb")
    if os.uname().machine != "x86_64":
        pytest.skip("the program and gdb's output compared here are x86-64's")
    try:
        scope = Path("/proc/sys/kernel/yama/ptrace_scope").read_text().strip()
    except OSError:
        scope = "0"
    if scope != "0" and os.geteuid() != 0:
        pytest.skip(f"ptrace_scope is {scope}: only root may attach to a process it did not start")
    refused = _gdb_refused()
    if refused:
        pytest.skip(f"gdb -p cannot attach here (a container without ptrace?): {refused}")


@functools.cache
def _gdb_refused() -> str:
    """What gdb says when it cannot attach to a process here, "" when it can."""
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        probe = subprocess.run(
            ["gdb", "-p", str(sleeper.pid), "-batch", "-nx"], capture_output=True, text=True, timeout=120
        )
    finally:
        sleeper.kill()
        sleeper.wait()
    return next((line for line in probe.stderr.splitlines() if line.startswith("ptrace:")), "")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need_ptrace()
    built = tmp_path_factory.mktemp("live") / "live"
    subprocess.run(
        ["gcc", "-O2", "-Wa,--gsframe", "-pthread", f"-DDEPTH={DEPTH}", str(DATA / "src" / "live.c"), "-o", str(built)],
        check=True,
    )
    return built


def _blocked_in_read(pid: int) -> bool:
    tasks = os.listdir(f"/proc/{pid}/task")
    return len(tasks) == 3 and all(
        Path(f"/proc/{pid}/task/{tid}/syscall").read_text().split()[0] == str(READ) for tid in tasks
    )


@pytest.fixture
def process(program: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The program, every thread blocked in `read`; killed after the test if it is still there."""
    with _running(program) as started:
        yield started


@contextlib.contextmanager
def _running(program: Path) -> Iterator[subprocess.Popen[bytes]]:
    started = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert started.stdout is not None and started.stdout.readline() == b"ready\n"
        _wait_until(lambda: _blocked_in_read(started.pid))
        yield started
    finally:
        if started.poll() is None:
            started.kill()
        started.wait()


def _wait_until(condition: Callable[[], bool]) -> None:
    """Wait for what another process does (a bound on the wait, not a measurement)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "waited a minute in vain"
        time.sleep(0.01)


def _finishes_normally(process: subprocess.Popen[bytes]) -> None:
    """The process runs on as before: each thread back in its read (a thread let go, or continued, runs a
    moment before it blocks again), then a line lets it exit 0."""
    _wait_until(lambda: _blocked_in_read(process.pid) and _state(process.pid) == "S")
    process.communicate(b"\n", timeout=60)
    assert process.returncode == 0


def _state(pid: int, tid: int | None = None) -> str:
    where = f"/proc/{pid}" if tid is None else f"/proc/{pid}/task/{tid}"
    text = Path(f"{where}/stat").read_text()
    return text[text.rfind(")") + 2]


def _gdb(pid: int) -> str:
    """gdb's `thread apply all bt`, as a user gets it: libc's frames named from its separate debug file
    where one is installed, with their inlined frames, as sfview names them."""
    return subprocess.run(
        ["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip


def _by_thread(text: str) -> dict[str, list[tuple[int, str]]]:
    """Each thread's title → its frames' (PC, name), up to `main` where gdb stops: the frames printed with
    their PC (both tools leave it out in the same places)."""
    titles, parts = TITLE.findall(text), TITLE.split(text)[1:]
    out = {}
    for title, body in zip(titles, parts, strict=True):
        frames = [(int(pc, 16), name) for _, pc, name in FRAME.findall(body) if pc]
        names = [name for _, name in frames]
        out[title] = frames[: names.index("main") + 1] if "main" in names else frames
    return out


def _physical(text: str) -> list[int | None]:
    """The PC of each frame of `sfview unwind --no-inline` up to `main` (None for frame 0's, left out where a
    line starts there)."""
    frames = [(int(pc, 16) if pc else None, name) for _, pc, name in FRAME.findall(text)]
    names = [name for _, name in frames]
    return [pc for pc, _ in frames[: names.index("main") + 1 if "main" in names else len(frames)]]


GDB_PHYSICAL = """
import gdb
for thread in gdb.selected_inferior().threads():
    thread.switch()
    frame = gdb.newest_frame()
    while frame is not None:
        if frame.type() == gdb.NORMAL_FRAME:
            print("frame", thread.ptid[1], hex(frame.pc()))
        frame = frame.older()
"""


def _gdb_physical(pid: int, folder: Path) -> dict[int, list[int]]:
    """gdb's frames on each thread's stack (by LWP), their PCs: not the inlined frames it adds from debug
    information (which the debugger's frames are not), nor the signal trampolines."""
    script = folder / "physical.py"
    script.write_text(GDB_PHYSICAL)
    out = subprocess.run(
        ["gdb", "-p", str(pid), "-batch", "-nx", "-ex", f"source {script}"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    frames: dict[int, list[int]] = {}
    for line in out.splitlines():
        if line.startswith("frame "):
            _, tid, pc = line.split()
            frames.setdefault(int(tid), []).append(int(pc, 16))
    return frames


def _lwp(title: str) -> int:
    return int(re.search(r"LWP (\d+)", title)[1])


def _as_gdb(process: subprocess.Popen[bytes], between: Callable[[], None] = lambda: None) -> str:
    """`sfview unwind --pid --thread all`, held to gdb's: the same threads, numbered, titled and ordered
    alike, PCs frame for frame, the same names where gdb has one. `between` runs after gdb, before sfview."""
    theirs = _by_thread(_gdb(process.pid))
    between()
    result = run_process("unwind", "--pid", str(process.pid), "--thread", "all")
    assert result.returncode == 0, result.stderr
    ours = _by_thread(result.stdout)
    assert list(ours) == list(theirs), "the same threads, numbered, titled and ordered as gdb does"
    for (title, walked), frames in zip(ours.items(), theirs.values(), strict=True):
        assert [pc for pc, _ in walked] == [pc for pc, _ in frames], title
        for (pc, mine), (_, gdbs) in zip(walked, frames, strict=True):
            assert gdbs == "??" or mine == gdbs, (title, hex(pc))
    return result.stdout


def test_every_thread_unwinds_as_gdb_p_does_and_the_process_runs_on(process: subprocess.Popen[bytes]) -> None:
    text = _as_gdb(process)
    theirs = _by_thread(text)
    main = theirs[TITLE.findall(text)[-1]]
    assert sum(name == "recurse" for _, name in main) == DEPTH + 1  # recurse(DEPTH) down to recurse(0)
    assert text.count("<signal handler called>") == 1
    _finishes_normally(process)


def test_a_program_deleted_while_it_runs_is_read_where_the_process_holds_it(program: Path, tmp_path: Path) -> None:
    """Rebuilt or removed since it started: the program is read through `/proc/PID/exe`. gdb 13 does not (its
    frames stop at the program's), so it is asked before the file goes."""
    copy = tmp_path / "removed"
    shutil.copy(program, copy)
    with _running(copy) as process:
        text = _as_gdb(process, copy.unlink)
        assert "wait_input" in text and "note: " + str(copy) not in text
        _finishes_normally(process)


def test_one_thread_and_json_give_the_same_frames(process: subprocess.Popen[bytes]) -> None:
    """`--thread TID` (with each `--cfi`), `--json` and `--limit` read the process as they read a core."""
    text = run_process("unwind", "--pid", str(process.pid), "--no-inline").stdout
    main = _physical(text)
    assert len(main) == DEPTH + 4  # read, wait_input, the recursion, main
    document = json.loads(run_process("unwind", "--pid", str(process.pid), "--json", "--cfi", "dwarf").stdout)
    given = [frame["pc"] for frame in document["frames"]][: len(main)]
    assert all(pc in (None, found) for pc, found in zip(main, given, strict=True)), "frame 0's PC may be left out"
    limited = run_process("unwind", "--pid", str(process.pid), "--limit", "5", "--no-inline").stdout
    assert FRAME.findall(limited) == FRAME.findall(text)[:5], "the last frame, given as found, named too"
    # SFrame alone, as the kernel would: where libc has none (Debian's), the walk stops in `read`, which keeps
    # no frame pointer; where it has some, it goes as far
    alone = run_process("unwind", "--pid", str(process.pid), "--cfi", "sframe", "--no-inline").stdout
    walked = _physical(alone)
    assert walked == main[:1] if "libc.so.6, which has no SFrame data" in alone else walked[: len(main)] == main
    tids = sorted(int(t) for t in os.listdir(f"/proc/{process.pid}/task"))
    threads = json.loads(run_process("unwind", "--pid", str(process.pid), "--thread", "all", "--json").stdout)
    assert sorted(t["tid"] for t in threads["threads"]) == tids
    last = threads["threads"][0]  # gdb's order: the last thread first
    alone_thread = json.loads(run_process("unwind", "--pid", str(process.pid), "--thread", str(last["tid"]),
                                          "--json").stdout)  # fmt: skip
    assert alone_thread["frames"] == last["frames"] and len(last["frames"]) > 5
    _finishes_normally(process)


def test_a_stopped_process_stays_stopped(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGSTOP)
    _wait_until(lambda: _state(process.pid) == "T")
    result = run_process("unwind", "--pid", str(process.pid), "--thread", "all")
    assert result.returncode == 0, result.stderr
    assert {_state(process.pid, int(t)) for t in os.listdir(f"/proc/{process.pid}/task")} == {"T"}
    os.kill(process.pid, signal.SIGCONT)
    _finishes_normally(process)


def test_a_process_traced_by_gdb_is_refused_and_left_to_gdb(process: subprocess.Popen[bytes]) -> None:
    gdb = subprocess.Popen(
        ["gdb", "-p", str(process.pid), "-batch", "-nx", "-ex", "shell read line"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_until(lambda: live._status_field(process.pid, "TracerPid") not in ("0", None))
        result = run_process("unwind", "--pid", str(process.pid))
        assert result.returncode == 2
        assert result.stderr == (
            f"sfview: process {process.pid} is already traced by process {gdb.pid} (gdb): a process has one"
            " tracer at a time (detach the other first)\n"
        )
    finally:
        gdb.communicate(b"\n", timeout=60)
    _finishes_normally(process)


def test_a_process_sfview_may_not_trace_is_refused(process: subprocess.Popen[bytes]) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root, to run sfview as another user")
    need("setpriv")
    if _as_nobody(sys.executable, "-c", "import sfview").returncode:
        pytest.skip("user nobody cannot run this Python and checkout (a home directory closed to others?)")
    result = _as_nobody(sys.executable, "-m", "sfview", "unwind", "--pid", str(process.pid))
    assert result.returncode == 2
    assert result.stderr == (
        f"sfview: not allowed to trace process {process.pid} (Operation not permitted): it belongs to user 0,"
        " sfview runs as user 65534 (run it as that user or as root)\n"
    )
    _finishes_normally(process)
    # The same user's process, made undumpable (prctl PR_SET_DUMPABLE 0, as a set-user-ID program is)
    undumpable = subprocess.Popen(
        [*NOBODY, sys.executable, "-c",
         "import ctypes, sys; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); print('ready', flush=True); sys.stdin.read(1)"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert undumpable.stdout is not None and undumpable.stdout.readline() == b"ready\n"
        result = _as_nobody(sys.executable, "-m", "sfview", "unwind", "--pid", str(undumpable.pid))
        assert result.returncode == 2
        assert result.stderr == (
            f"sfview: not allowed to trace process {undumpable.pid} (Operation not permitted): it runs as this user"
            " but may not be traced (a set-user-ID program, or one that made itself undumpable); run sfview as root\n"
        )
        undumpable.communicate(b"\n", timeout=60)
        assert undumpable.returncode == 0
    finally:
        if undumpable.poll() is None:
            undumpable.kill()
        undumpable.wait()


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NOBODY, *argv], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])


def test_no_process_a_zombie_and_a_kernel_thread_are_refused() -> None:
    _need_ptrace()
    done = subprocess.Popen(["true"])
    done.wait()
    for argv in (["unwind", "--pid", str(done.pid)], ["--pid", str(done.pid)]):  # `unwind`, and the debugger
        result = run_process(*argv)
        assert (result.returncode, result.stderr) == (2, f"sfview: no process {done.pid}\n")
    zombie = subprocess.Popen(["true"])
    try:
        _wait_until(lambda: _state(zombie.pid) == "Z")
        result = run_process("unwind", "--pid", str(zombie.pid))
        assert result.returncode == 2
        assert result.stderr == (
            f"sfview: process {zombie.pid} is a zombie: it has exited (its parent has not reaped it), no stack is"
            " left\n"
        )
    finally:
        zombie.wait()
    kernel = next((pid for pid in _pids() if _flags(pid) & live.PF_KTHREAD), None)
    if kernel is not None:  # none is visible in a container's own process namespace
        result = run_process("unwind", "--pid", str(kernel))
        assert (result.returncode, result.stderr) == (
            2,
            f"sfview: process {kernel} is a kernel thread: it has no user stack to unwind\n",
        )


def _pids() -> Iterator[int]:
    for name in os.listdir("/proc"):
        if name.isdigit():
            yield int(name)


def _flags(pid: int) -> int:
    """A process's flags (`stat`'s ninth field), 0 when it is gone (the machine's processes come and go)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[6])
    except (OSError, IndexError, ValueError):
        return 0


def test_a_process_killed_while_it_is_read_is_said_to_have_exited(
    program: Path, process: subprocess.Popen[bytes]
) -> None:
    """SIGKILL reaches a thread that ptrace holds: what was read of it may be cut short, and is not given."""
    exited = f"^process {process.pid} exited while sfview was reading it$"
    with pytest.raises(InputError, match=exited), live.stopped(process.pid) as stopped:
        session.from_core(str(program), stopped, None, [], None)
        os.kill(process.pid, signal.SIGKILL)
        _wait_until(lambda: _state(process.pid) == "Z")
    process.wait(timeout=60)  # sfview, its tracer, reaped the threads; this test, its parent too, the process
    assert not Path(f"/proc/{process.pid}").exists()


async def test_the_debugger_opens_on_a_snapshot_and_the_process_runs_on(
    process: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    """`sfview --pid`: the process is let go before the app opens; the debugger walks what was read, as gdb
    walked the process, and says that it is a snapshot."""
    from sfview.app.app import SfviewApp
    from sfview.app.screens.debugger import DebuggerScreen, ThreadPicker
    from sfview.app.textual_compat import notifications
    from sfview.cli.state import process_snapshot
    from sfview.document import Document

    theirs = _by_thread(_gdb(process.pid))
    physical = _gdb_physical(process.pid, tmp_path)
    args = argparse.Namespace(pid=process.pid, gdbstub=None, break_at=None, thread=None, lib_dir=[], sysroot=None)
    program, first, threads = process_snapshot(None, args)
    _wait_until(lambda: _blocked_in_read(process.pid))  # let go: running, not stopped (nor traced)
    assert live._status_field(process.pid, "TracerPid") == "0"
    assert threads is not None
    assert [title for title, _, _ in reversed(threads.listed)] == list(theirs)
    app = SfviewApp(Document.open(program), first, threads)
    async with app.run_test(size=(130, 40)) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        title = debugger.query_one("#dbg-frames").border_title
        assert title is not None and title.endswith(", a snapshot")
        assert any(f"a snapshot of process {process.pid}" in n.message for n in notifications(app))
        await pilot.press("r")
        main = physical[_lwp(threads.listed[0][0])]
        assert [frame.pc for frame in debugger.frames][: len(main)] == main
        await pilot.press("t")
        assert isinstance(app.screen, ThreadPicker)
        await pilot.press("down", "enter")  # thread 2: the one in the signal handler
        await pilot.pause()
        await pilot.press("r")
        second = physical[_lwp(threads.listed[1][0])]
        walked = [frame.pc for frame in debugger.frames if not frame.signal]
        assert walked[: len(second)] == second
        assert any(frame.signal for frame in debugger.frames)
    _finishes_normally(process)


def test_a_ctrl_c_while_the_process_is_held_lets_it_go(process: subprocess.Popen[bytes]) -> None:
    with pytest.raises(KeyboardInterrupt), live.stopped(process.pid) as stopped:
        assert {_state(process.pid, thread.tid) for thread in stopped.threads} == {"t"}  # traced, stopped
        raise KeyboardInterrupt
    assert live._status_field(process.pid, "TracerPid") == "0"
    _finishes_normally(process)


def test_a_qemu_user_process_is_refused_with_where_its_guest_is(tmp_path: Path) -> None:
    """qemu-user runs an AArch64 program as an x86-64 process: ptrace sees the emulator, not the guest."""
    _need_ptrace()
    need("aarch64-linux-gnu-gcc", "qemu-aarch64")
    guest = tmp_path / "live-aarch64"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-static", "-Wa,--gsframe", "-pthread", str(DATA / "src" / "live.c"),
         "-o", str(guest)],
        check=True,
    )  # fmt: skip
    emulated = subprocess.Popen(["qemu-aarch64", str(guest)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert emulated.stdout is not None and emulated.stdout.readline() == b"ready\n"
        result = run_process("unwind", "--pid", str(emulated.pid))
        assert result.returncode == 2
        assert f"process {emulated.pid} runs " in result.stderr and "qemu-aarch64, an emulator" in result.stderr
        emulated.communicate(b"\n", timeout=60)
        assert emulated.returncode == 0, "let go, it runs on"
    finally:
        if emulated.poll() is None:
            emulated.kill()
        emulated.wait()


CHURN = r"""
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static volatile int done;
static void *nothing(void *arg) { return arg; }
static void *churn(void *arg) {
    while (!done) { pthread_t t; if (pthread_create(&t, 0, nothing, 0) == 0) pthread_join(t, 0); }
    return arg;
}
int main(void) {
    pthread_t a, b;
    char c;
    pthread_create(&a, 0, churn, 0);
    pthread_create(&b, 0, churn, 0);
    puts("ready");
    fflush(stdout);
    if (read(0, &c, 1) != 1) return 1;
    done = 1;
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
"""


def test_threads_that_come_and_go_while_the_process_is_stopped(tmp_path: Path) -> None:
    """Two threads start and end threads without a pause: each is stopped, or found gone, never waited for
    in vain; every run walks main, and the process runs on and exits 0."""
    _need_ptrace()
    source, program = tmp_path / "churn.c", tmp_path / "churn"
    source.write_text(CHURN)
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", "-pthread", str(source), "-o", str(program)], check=True)
    churning = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert churning.stdout is not None and churning.stdout.readline() == b"ready\n"
        for _ in range(5):
            result = run_process("unwind", "--pid", str(churning.pid), "--thread", "all")
            assert result.returncode == 0, result.stderr
            assert re.search(r"^#\d+ +0x[0-9a-f]+ in main \(\)", result.stdout, re.M), result.stdout
            assert _state(churning.pid) != "t" and live._status_field(churning.pid, "TracerPid") == "0"
        churning.communicate(b"\n", timeout=60)
        assert churning.returncode == 0
    finally:
        if churning.poll() is None:
            churning.kill()
        churning.wait()


def test_a_signal_sent_while_the_process_is_held_reaches_it_after(process: subprocess.Popen[bytes]) -> None:
    """Nothing is lost: a SIGTERM sent while sfview holds the process ends it once it is let go."""
    with live.stopped(process.pid):
        os.kill(process.pid, signal.SIGTERM)
        assert _state(process.pid) == "t", "held: the signal waits"
    assert process.wait(timeout=60) == -signal.SIGTERM


def test_the_vdso_is_read_from_the_process(program: Path, process: subprocess.Popen[bytes]) -> None:
    """The vDSO is no file: it is read from the process's memory, where `AT_SYSINFO_EHDR` says, and names
    what gdb names there."""
    printed = subprocess.run(
        ["gdb", "-p", str(process.pid), "-batch", "-nx", "-ex", "p/x &__vdso_clock_gettime"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    address = int(re.search(r"^\$1 = (0x[0-9a-f]+)$", printed, re.M)[1], 16)
    with live.stopped(process.pid) as stopped:
        first = session.from_core(str(program), stopped, None, [], None)
        vdso = next(module for module in first.unwinder.modules if module.name == "[vdso]")
        at = address - vdso.bias
        assert vdso.name_at(at, at) in ("clock_gettime", "__vdso_clock_gettime")
    _finishes_normally(process)


def test_a_ctrl_c_to_sfview_at_any_moment_leaves_the_process_running(process: subprocess.Popen[bytes]) -> None:
    """Whenever the Ctrl-C comes (stopping, walking, detaching, printing), sfview ends with its one line or its
    output, and the process is left untraced, running as before."""
    statuses = set()
    for delay in (0.15, 0.25, 0.3, 0.35, 0.45):  # moments spread over a run, not a measurement
        interrupted = subprocess.Popen(
            [sys.executable, "-m", "sfview", "unwind", "--pid", str(process.pid), "--thread", "all"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a shell's foreground job
        )  # fmt: skip
        time.sleep(delay)
        interrupted.send_signal(signal.SIGINT)
        _, stderr = interrupted.communicate(timeout=120)
        statuses.add(interrupted.returncode)
        if interrupted.returncode == -signal.SIGINT:  # still in Python's own start, before sfview's first line
            continue
        said = "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith("note: "))
        assert (interrupted.returncode, said) in ((0, ""), (130, "sfview: interrupted\n")), stderr  # notes: stderr
        _wait_until(lambda: live._status_field(process.pid, "TracerPid") == "0")
    assert 130 in statuses, "some Ctrl-C came while sfview ran"
    _finishes_normally(process)
