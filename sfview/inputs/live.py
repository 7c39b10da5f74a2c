"""A running process read as a core: its threads stopped with ptrace, its memory through `/proc/PID/mem`.

`stopped(pid)` stops every thread (`PTRACE_SEIZE`, then `PTRACE_INTERRUPT`:
no signal is sent, so nothing the process sees changes), reads each thread's
registers (`PTRACE_GETREGSET` with `NT_PRSTATUS`, the kernel's
`user_regs_struct`, the block a core's `NT_PRSTATUS` note holds), the mapped
files from `/proc/PID/maps` and the auxiliary vector from `/proc/PID/auxv`,
and gives them as a `Core`, so that an unwind sets itself up as it does from a
core file. Memory is read a page at a time as the walk asks for it, each page
once, never the whole address space. When the block ends (normally, on an
error or on Ctrl-C) every thread is detached: a running process runs on, one
that was stopped (`SIGSTOP`) stays stopped (the kernel puts a thread back
into its group stop on detach), and a signal that arrived while it was held
is handed back. After that the memory holds what was read, nothing more.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import signal
import struct
import threading
import time
from collections.abc import Iterator
from typing import NamedTuple

from sfview.errors import InputError
from sfview.inputs.core import PRSTATUS_REGS, Core, Mapping, Memory, Thread

__all__ = ["LiveProcess", "PagedMemory", "ProcessMemory", "Region", "signals_held", "stopped"]

PTRACE_DETACH = 17
PTRACE_GETREGSET = 0x4204
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_EVENT_STOP = 128
NT_PRSTATUS = 1
WALL = 0x40000000
"""`__WALL`: wait for a traced thread as for a child, whatever its kind."""
PF_KTHREAD = 0x00200000
PF_EXITING = 0x00000004
"""In a thread's `stat` flags: it is on its way out (ended, killed, or replaced by another thread's exec);
ptrace refuses to attach to it with `EPERM`, not `ESRCH`."""
PAGE = 4096
MOST_PAGES_AT_ONCE = 256
"""The most pages one read asks for (1 MiB: the vDSO is two pages, a word one or two)."""
HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}
"""Signals held while the threads are let go, so that none is left stopped by a Ctrl-C in the middle."""
STOP_WAIT = 2.0
"""Seconds the threads seized together are given to stop. One in an uninterruptible wait (`D`: a vfork
parent waiting for its child, a read from a hung disk) stops only when it leaves it; gdb -p waits for ever."""

SEIZE_TRIES = 20
"""How often `PTRACE_SEIZE` is tried, 10 ms apart, where it says `EPERM` (a thread in the middle of exec)."""

MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64", "s390x": "EM_S390"}
"""This machine (`uname -m`) → the ELF machine of the processes ptrace reads here (a 64-bit one)."""


class Region(NamedTuple):
    """One line of `/proc/PID/maps`: an address range, whether it is readable, and its file."""

    start: int
    end: int
    readable: bool
    file_offset: int
    path: str


class PagedMemory(Memory):
    """Memory read a page at a time as it is asked for, each page kept: a running process's, whose pages
    come from `read_page` (`/proc/PID/mem`, a gdbstub's `m` packets).

    Ranges added by hand (a file's read-only segments) answer only where the
    process has no readable page. After `let_go` nothing more is read: what a
    walk read while the process was stopped is a snapshot of it.
    """

    regions: list[Region]
    """The readable mappings where they are known (`/proc/PID/maps`), for `bytes_from`."""

    def __init__(self, regions: list[Region], little_endian: bool = True) -> None:
        super().__init__(little_endian=little_endian)
        self.regions = regions
        self._pages: dict[int, bytes | None] = {}
        self.reading = True

    def read_page(self, number: int) -> bytes | None:
        """Page `number`'s bytes from the process, None where it has none readable."""
        raise NotImplementedError

    def _page(self, number: int) -> bytes | None:
        if number in self._pages or not self.reading:
            return self._pages.get(number)
        data = self.read_page(number)
        self._pages[number] = data if data is not None and len(data) == PAGE else None
        return self._pages[number]

    def forget(self) -> None:
        """Drop the pages read: the process ran meanwhile."""
        self._pages.clear()

    def bytes_at(self, address: int, size: int) -> bytes | None:
        first, last = address // PAGE, (address + size - 1) // PAGE
        if size > 0 and address >= 0 and last - first < MOST_PAGES_AT_ONCE:
            pages = [self._page(n) for n in range(first, last + 1)]
            if all(page is not None for page in pages):
                held = b"".join(pages)  # type: ignore[arg-type]
                return held[address - first * PAGE : address - first * PAGE + size]
        return super().bytes_at(address, size)

    def bytes_from(self, address: int) -> memoryview | None:
        """The bytes from `address` to the end of its mapping (at most `MOST_PAGES_AT_ONCE` pages)."""
        region = next((r for r in self.regions if r.start <= address < r.end and r.readable), None)
        if region is not None:
            held = self.bytes_at(address, min(region.end - address, MOST_PAGES_AT_ONCE * PAGE - address % PAGE))
            if held is not None:
                return memoryview(held)
        return super().bytes_from(address)

    def let_go(self) -> None:
        """Read nothing more from the process: it runs again."""
        self.reading = False


class ProcessMemory(PagedMemory):
    """A process's memory through `/proc/PID/mem`."""

    def __init__(self, pid: int, regions: list[Region]) -> None:
        super().__init__(regions)
        self._fd: int | None = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)

    def read_page(self, number: int) -> bytes | None:
        try:
            return os.pread(self._fd, PAGE, number * PAGE)  # type: ignore[arg-type]
        except (OSError, OverflowError):  # not mapped, not readable, or past what an offset can say
            return None

    def let_go(self) -> None:
        super().let_go()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class LiveProcess(Core):
    """A stopped process as a `Core`: its threads (the leader first, then by thread id, as gdb numbers
    them), each with its name (`/proc/PID/task/TID/comm`), and its memory read as it is asked for."""

    pid: int
    program: str
    """The program it runs (`/proc/PID/exe`), or that link itself when the file is gone."""
    memory: ProcessMemory

    described = "the process"

    def runs(self, path: str) -> bool:
        """Whether the process runs the file at `path` (the same file, not one with the same name)."""
        try:
            mine, theirs = os.stat(path), os.stat(f"/proc/{self.pid}/exe")
        except OSError:
            return False
        return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def _libc_ptrace() -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    call = ctypes.CDLL(None, use_errno=True).ptrace
    call.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    call.restype = ctypes.c_long
    return call


_ptrace_call = _libc_ptrace()


def _ptrace(request: int, tid: int, address: int | None = None, data: int | None = None) -> None:
    if _ptrace_call(request, tid, address, data) == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _status_field(pid: int, name: str) -> str | None:
    """A field of `/proc/PID/status` (`TracerPid`, `Uid`), None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                key, _, value = line.decode(errors="replace").partition(":")
                if key == name:
                    return value.strip()
    except OSError:
        return None
    return None


def _stat(pid: int, tid: int | None = None) -> tuple[str, int] | None:
    """A thread's state letter and flags from its `stat`, None when it is gone."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    try:
        with open(path, "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the name, in parentheses, may hold anything
    return fields[0], int(fields[6])


def _tasks(pid: int) -> list[int]:
    try:
        return [int(name) for name in os.listdir(f"/proc/{pid}/task") if name.isdigit()]
    except OSError:
        return []


def _check_traceable(pid: int) -> None:
    """Refuse at once what cannot be unwound: no such process, a zombie, a kernel thread, sfview itself."""
    stat = _stat(pid)
    if stat is None or pid <= 0:
        raise InputError(f"no process {pid}")
    if stat[1] & PF_KTHREAD:
        raise InputError(f"process {pid} is a kernel thread: it has no user stack to unwind")
    if stat[0] in "ZX" and all(t == pid for t in _tasks(pid)):
        raise InputError(f"process {pid} is a zombie: it has exited (its parent has not reaped it), no stack is left")
    if pid == os.getpid():
        raise InputError(f"process {pid} is sfview itself: it cannot stop itself to read its stack")


def _refused(pid: int, exc: OSError) -> InputError:
    """Why ptrace refused to attach, in words a person can act on."""
    tracer = _status_field(pid, "TracerPid")
    if tracer and tracer != "0":
        try:
            with open(f"/proc/{tracer}/comm") as f:
                name = f" ({f.read().strip()})"
        except OSError:
            name = ""
        return InputError(
            f"process {pid} is already traced by process {tracer}{name}: a process has one tracer at a time"
            " (detach the other first)"
        )
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            scope = f.read().strip()
    except OSError:
        scope = "0"
    if scope != "0":
        return InputError(
            f"not allowed to trace process {pid}: /proc/sys/kernel/yama/ptrace_scope is {scope}"
            " (run sfview as root, or set it to 0)"
        )
    owner = (_status_field(pid, "Uid") or "?").split()[0]
    if owner == str(os.getuid()):
        return InputError(
            f"not allowed to trace process {pid} ({exc.strerror}): it runs as this user but may not be traced"
            " (a set-user-ID program, or one that made itself undumpable); run sfview as root"
        )
    return InputError(
        f"not allowed to trace process {pid} ({exc.strerror}): it belongs to user {owner}, sfview runs as user"
        f" {os.getuid()} (run it as that user or as root)"
    )


def _exited(pid: int) -> InputError:
    """The threads sfview stopped are gone: the process exited, or (still there) a thread called exec,
    which ends every other thread and gives the leader's id to the one that called it."""
    state = _stat(pid)
    if state is not None and state[0] not in "ZX" and not state[1] & PF_EXITING:
        return InputError(
            f"process {pid} changed while sfview was reading it: the threads it stopped are gone (a thread called"
            " exec, or they ended) and the process runs on; run sfview again"
        )
    return InputError(f"process {pid} exited while sfview was reading it")


class _Threads:
    """The threads sfview stops: each one's id → the signal to hand back when it is let go."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.held: dict[int, int] = {}
        self.stopped: set[int] = set()
        """Threads seen stopped (`waitpid`)."""
        self.dying: list[int] = []
        """Threads killed while held: no longer in a stop to detach from."""

    def stop_all(self) -> None:
        """Seize and stop every thread, again for threads started meanwhile, until none is new; meanwhile a
        helper thread waits for the held threads that end (`_reap_ended`)."""
        done = threading.Event()
        helper = threading.Thread(target=self._reap_ended, args=(done,), daemon=True)
        helper.start()
        try:
            self._stop_all()
        finally:
            done.set()
            helper.join()

    def _reap_ended(self, done: threading.Event) -> None:
        """Wait for each held thread that has ended (state Z), until `done`. A thread calling exec holds the
        process's `cred_guard_mutex` until every other thread is gone, and a traced thread is gone only once
        its tracer has waited for it: `PTRACE_SEIZE` of a next thread waits for that mutex, so sfview waited
        for itself for ever. A thread in a stop is never waited for here (its stop is `_wait`'s to see)."""
        while not done.wait(0.02):
            for tid in list(self.held):
                if (_stat(self.pid, tid) or ("Z", 0))[0] in "ZX":
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(tid, WALL | os.WNOHANG)

    def _stop_all(self) -> None:
        tried: set[int] = set()
        while new := [t for t in sorted(_tasks(self.pid), key=lambda t: (t != self.pid, t)) if t not in tried]:
            tried.update(new)
            seized = []
            for tid in new:
                state = _stat(self.pid, tid)
                if state is None or state[0] in "ZX":  # gone, or a thread that has exited (a leader after pthread_exit)
                    continue
                try:
                    self._seize(tid)
                except OSError as exc:
                    state = _stat(self.pid, tid) or ("X", PF_EXITING)
                    if exc.errno == errno.ESRCH or state[0] in "ZX" or state[1] & PF_EXITING:  # it exited meanwhile
                        continue
                    raise _refused(self.pid, exc) from None
                self.held[tid] = 0
                seized.append(tid)
                with contextlib.suppress(ProcessLookupError):
                    _ptrace(PTRACE_INTERRUPT, tid)
            deadline = time.monotonic() + STOP_WAIT
            for tid in seized:
                self._wait(tid, deadline)
        if not self.held:
            raise _exited(self.pid)
        if not self.stopped:
            tid = min(self.held)
            raise InputError(f"process {self.pid}: no thread stopped within {STOP_WAIT:g} s: {self.unstopped(tid)}")

    def _seize(self, tid: int) -> None:
        """`PTRACE_SEIZE`, tried again for a moment where it says `EPERM`: while a thread calls exec the new
        memory is not yet marked dumpable, and ptrace refuses it as it refuses a process that made itself
        undumpable."""
        for _ in range(SEIZE_TRIES - 1):
            try:
                _ptrace(PTRACE_SEIZE, tid)
                return
            except PermissionError:
                time.sleep(0.01)
        _ptrace(PTRACE_SEIZE, tid)

    def unstopped(self, tid: int) -> str:
        """Why thread `tid`, seized, is not stopped: its state (`/proc/PID/task/TID/stat`), in words."""
        state = (_stat(self.pid, tid) or ("?", 0))[0]
        if state != "D":
            return f"thread {tid} did not stop (state {state})"
        return (
            f"thread {tid} is in an uninterruptible wait (state D: a vfork parent waiting for its child, a hung"
            " disk): its registers cannot be read until it leaves it"
        )

    def _wait(self, tid: int, deadline: float) -> None:
        """Wait for a seized thread to stop, until `deadline` (`time.monotonic`); one that exits instead is
        forgotten, one still running then is left held but not stopped (the kernel detaches it when
        sfview ends). A thread stopped for a signal before the interrupt reached it keeps that signal, to
        have it when it is let go."""
        while True:
            try:
                waited, status = os.waitpid(tid, WALL | os.WNOHANG)
            except ChildProcessError:
                del self.held[tid]
                return
            if waited:
                break
            if time.monotonic() > deadline:
                return
            time.sleep(0.001)
        if not os.WIFSTOPPED(status):
            del self.held[tid]
            return
        self.stopped.add(tid)
        if status >> 16 != PTRACE_EVENT_STOP:
            self.held[tid] = os.WSTOPSIG(status)

    def let_go(self) -> None:
        """Detach every thread, handing back its signal. A thread seen stopped that cannot be detached was
        killed meanwhile: it is waited for (`reap`), so that its parent can reap the process. One never seen
        stopped (a Ctrl-C while it was awaited, a thread in an uninterruptible wait) that cannot be detached
        yet is the kernel's to detach when sfview ends."""
        for tid, pending in self.held.items():
            try:
                _ptrace(PTRACE_DETACH, tid, None, pending)
            except ProcessLookupError:
                if tid in self.stopped:
                    self.dying.append(tid)
        self.held.clear()

    def reap(self) -> None:
        """Wait for the threads killed while held (their tracer must), the leader after the others."""
        for tid in sorted(self.dying, key=lambda t: t == self.pid):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(tid, WALL)
        self.dying.clear()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C (and the other signals that end sfview) held back while the block runs: a process or guest
    being let go is let go whole."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _machine() -> str:
    machine = MACHINES.get(platform.machine())
    if machine is None:
        raise InputError(f"reading a live process needs an x86-64, AArch64 or s390x machine, not {platform.machine()}")
    return machine


def _registers(pid: int, tid: int, machine: str) -> dict[str, int]:
    names = PRSTATUS_REGS[machine]
    block = ctypes.create_string_buffer(8 * len(names) + 256)
    vector = (ctypes.c_void_p * 2)(ctypes.addressof(block), ctypes.sizeof(block))
    try:
        _ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, ctypes.addressof(vector))
    except ProcessLookupError:
        raise _exited(pid) from None
    if vector[1] < 8 * len(names):  # a 32-bit process's registers are 32-bit words
        raise InputError(f"process {pid} is a 32-bit process: sfview unwinds 64-bit x86-64, AArch64 and s390x")
    return dict(zip(names, struct.unpack_from(f"{len(names)}Q", block.raw), strict=True))


def _regions(pid: int) -> list[Region]:
    """`/proc/PID/maps`, each line a `Region` (a deleted file keeps its name, with ` (deleted)`)."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as f:
            lines = f.read().decode(errors="surrogateescape").splitlines()
    except OSError as exc:
        raise _exited(pid) if exc.errno == errno.ESRCH else InputError(f"process {pid}: {exc.strerror}") from None
    regions = []
    for line in lines:
        fields = line.split(maxsplit=5)
        start, _, end = fields[0].partition("-")
        path = fields[5] if len(fields) > 5 else ""
        regions.append(Region(int(start, 16), int(end, 16), fields[1][0] == "r", int(fields[2], 16), path))
    return regions


def _auxv(pid: int) -> dict[int, int]:
    try:
        with open(f"/proc/{pid}/auxv", "rb") as f:
            data = f.read()
    except OSError:
        return {}
    words = struct.unpack(f"{len(data) // 8}Q", data[: len(data) // 8 * 8])
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


def _name(pid: int, tid: int) -> str:
    try:
        with open(f"/proc/{pid}/task/{tid}/comm", "rb") as f:
            name = f.read().decode(errors="replace").rstrip("\n")
    except OSError:
        return ""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in name)  # a name is anyone's to set


def _mapped_files(pid: int, regions: list[Region], program: str) -> list[Mapping]:
    """The mapped files; one deleted or replaced since it was mapped (`… (deleted)`) is read where the
    process still holds it: the program through `/proc/PID/exe`, a library through its first mapping's
    `/proc/PID/map_files/START-END` (root only; else it stays unfound, and said so)."""
    held = {r.path: f"/proc/{pid}/map_files/{r.start:x}-{r.end:x}" for r in reversed(regions) if r.file_offset == 0}
    held[program] = f"/proc/{pid}/exe"
    mappings = []
    for r in regions:
        path = held.get(r.path, r.path) if r.path.endswith(" (deleted)") else r.path
        if path.startswith("/"):
            mappings.append(Mapping(r.start, r.end, r.file_offset, path))
    return mappings


def _program(pid: int) -> str:
    """The program the process runs, as `/proc/PID/exe` names it (`… (deleted)` when it is gone)."""
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        raise _exited(pid) from None


def _read(pid: int, threads: _Threads) -> LiveProcess:
    machine = _machine()
    regions = _regions(pid)
    program = _program(pid)
    mappings = _mapped_files(pid, regions, program)
    stopped = [tid for tid in threads.held if tid in threads.stopped]
    listed = [Thread(tid, _registers(pid, tid, machine), _name(pid, tid)) for tid in stopped]
    try:
        memory = ProcessMemory(pid, regions)
    except OSError:
        raise _exited(pid) from None
    process = LiveProcess(f"process {pid}", machine, listed, memory, mappings, _auxv(pid), None)
    process.pid = pid
    process.damaged = [f"{threads.unstopped(tid)}: left out" for tid in threads.held if tid not in threads.stopped]
    process.program = f"/proc/{pid}/exe" if program.endswith(" (deleted)") else program
    return process


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[LiveProcess]:
    """Process `pid` stopped, every thread, while the block runs, and let go as it was when it ends."""
    _check_traceable(pid)
    threads = _Threads(pid)
    process = None
    try:
        threads.stop_all()  # a Ctrl-C here too lets go what was stopped: a thread may never stop (`D` state)
        process = _read(pid, threads)
        yield process
        if (_stat(pid) or "X")[0] in "ZX":  # killed while held (SIGKILL wakes a traced thread): the read may be cut
            raise _exited(pid)
    finally:
        with signals_held():
            threads.let_go()
            if process is not None:
                process.memory.let_go()
        threads.reap()
