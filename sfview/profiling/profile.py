"""A profile read through: every sample unwound in each mode, in its process's address space, and counted.

The records come in file order; a process's mappings are those its `MMAP`
records gave before the sample (`perf record` writes a process's mappings
before the samples that run in them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

from sfview import uncollected
from sfview.errors import InputError
from sfview.inputs.core import Memory
from sfview.inputs.perf_data import PC_NAMES, SP_NAMES, Mmap, PerfData, Record, Sample, Task
from sfview.profiling.address_space import KERNEL, MACHINES, AddressSpace, Files, kernel_reader, machine_of
from sfview.profiling.coverage import Coverage, DebugNames, Unnamed
from sfview.profiling.walks import MAX_STACK, Mode, Walked, Walker
from sfview.unwind.engine import RuleSource, Unwinder
from sfview.unwind.session import Session, file_debug_info

ANNOUNCED_WAIT = 0.01
"""Seconds the process that merges waits for a frame to name before it looks whether the others are done."""
EXITED_KEPT = 1024
"""The processes that exited whose mappings a profile keeps at most, the last ones, where the file's
rounds do not let them go first (a PID taken again meanwhile is taken as the process that exited)."""


class Profile:
    """A profile's processes as its records describe them, and its samples unwound."""

    def __init__(
        self,
        perf: PerfData,
        limit: int = MAX_STACK,
        record: bool = False,
        kernel_rules: bool = True,
        kernel: str = KERNEL,
    ) -> None:
        perf.check_unwindable()
        self.perf = perf
        self.arch = perf.arch
        self.reader = kernel_reader(kernel) if kernel_rules else None
        """The revision of the kernel's reader SFrame's walks follow (its profile's name and title); None:
        every section as the format reads it."""
        self.files = Files(perf.build_ids, MACHINES[perf.arch][1], kernel)
        self.walker = Walker(machine_of(perf.arch), limit, record, self.files.kernel if kernel_rules else None)
        self.spaces: dict[int, AddressSpace] = {}
        self.exited: dict[int, AddressSpace | None] = {}
        """The processes that exited (`EXIT`) whose records may still come, oldest first, and their mappings
        (None: no record gave one yet)."""
        self.exit_rounds: dict[int, int] = {}
        """When each of them exited: the `FINISHED_ROUND` records before its `EXIT`."""
        self.rounds = 0
        self.names: dict[int, str] = {}
        """PID → the process's command name (`COMM`)."""

    @property
    def notes(self) -> list[str]:
        """What the file and the files it names lacked, one line each (complete once the samples are read)."""
        return [*self.perf.notes, *self.files.notes]

    def space(self, pid: int) -> AddressSpace:
        """The process's mappings (an exited process's while it is kept: its last records can follow its
        `EXIT`)."""
        space = self.spaces.get(pid)
        if space is None:
            if pid in self.exited:
                space = self.exited[pid]
                if space is None:
                    space = self.exited[pid] = AddressSpace(self.files)
            else:
                space = self.spaces[pid] = AddressSpace(self.files)
        return space

    def walks(
        self, wanted: Callable[[Sample], bool] = lambda _: True, walk: bool = True, owned: tuple[int, int] | None = None
    ) -> Iterator[tuple[Sample, dict[Mode, Walked] | None]]:
        """Each sample `wanted` with its walks (None for a sample without user registers, or when not
        `walk`ed), in file order, its process's mappings as they were; `owned`: of the samples whose
        records start in this range of file offsets (`PerfData.records`)."""
        for record in self.perf.records(owned):
            if isinstance(record, Mmap):
                try:
                    self.space(record.pid).add(record)
                except InputError as exc:
                    raise exc.located(self.perf.path) from None
            elif isinstance(record, Task):
                self._task(record)
            elif wanted(record):
                yield record, self.walker.walk(record, self.space(record.pid), self.arch) if walk else None

    def _task(self, task: Task) -> None:
        """A fork copies the parent's mappings, unless the child's own records came first: perf writes each
        CPU's buffer in turn, so a child that ran (and exec'd) on another CPU can precede its `FORK`, and
        a process's records can follow its `EXIT` (its `FORK` too), but none comes after the second
        `FINISHED_ROUND` that follows it (perf's own order of events relies on it). A process whose main
        thread exits is kept until then (`EXITED_KEPT` at most), its records after the `EXIT` its own,
        then let go: the mappings held are those of the processes running, whatever the processes a
        profile saw."""
        pid = task.pid
        if task.kind is Record.FORK and pid != task.parent and pid not in self.spaces:
            parent = self.spaces.get(task.parent) or self.exited.get(task.parent)
            if parent is not None and self.exited.get(pid, False) is None:  # after its EXIT, none of its own
                self.exited[pid] = parent.fork()
            elif parent is not None and pid not in self.exited:
                self.spaces[pid] = parent.fork()
        elif task.kind is Record.COMM:
            self.names[pid] = task.name
            if task.exec and pid in self.exited:
                self.exited[pid] = AddressSpace(self.files)
            elif task.exec:
                self.spaces[pid] = AddressSpace(self.files)
        elif task.kind is Record.EXIT and pid == task.tid:
            space = self.spaces.pop(pid, None)
            if space is not None:
                self.walker.forget(space)
            self.exited.pop(pid, None)
            self.exited[pid] = space
            self.exit_rounds[pid] = self.rounds
            if len(self.exited) > EXITED_KEPT:
                self._let_go(next(iter(self.exited)))
        elif task.kind is Record.FINISHED_ROUND:
            self.rounds += 1
            while self.exited and self.exit_rounds[next(iter(self.exited))] <= self.rounds - 2:
                self._let_go(next(iter(self.exited)))

    def _let_go(self, pid: int) -> None:
        del self.exited[pid], self.exit_rounds[pid]

    def session(self, number: int) -> tuple[Session, str] | None:
        """Sample #`number` as a machine state to step through (the debugger's): its registers, its stack
        copy and its process's files as memory, their modules, walked with SFrame; and the file holding
        its PC (else the first with SFrame) to explore. None when there is no such sample."""
        for sample, _ in self.walks(lambda s: s.number == number, walk=False):
            pc, sp = sample.registers.get(PC_NAMES[self.arch]), sample.registers.get(SP_NAMES[self.arch])
            if pc is None or sp is None:
                raise InputError(f"sample #{number} holds no user registers: nothing to step through")
            memory = Memory()
            memory.add(sp, sample.stack)
            space = AddressSpace(self.files, memory=memory)
            for mapped in self.space(sample.pid).mapped:
                length = mapped.end - mapped.start
                space.add(Mmap(0, sample.pid, sample.tid, mapped.start, length, mapped.pgoff, mapped.path, True, None))
            machine = self.walker.machine
            unwinder = Unwinder(space.modules, machine, memory.read, None, RuleSource.SFRAME)
            numbers = self.walker.numbers
            registers = {numbers[n]: v for n, v in sample.registers.items() if n in numbers}
            held = space.at(pc)
            owner = held.module if held is not None and held.module is not None else None
            if owner is None or owner.section is None:
                owner = next((m for m in space.modules if m.section is not None), None)
            found = self.files.found(owner.library or "") if owner is not None else None
            if found is None:
                raise InputError(f"sample #{number}: no file it ran has SFrame to step with")
            return Session(unwinder, pc, registers, memory, list(self.notes)), found
        return None

    def coverage(self, owned: tuple[int, int] | None = None, inline: bool = True) -> Coverage:
        """Every sample unwound and counted, its frames named (`counted`, then `Coverage.named`)."""
        counts = self.counted(owned, inline)
        counts.named(DebugNames(file_debug_info))
        return counts

    def counted(
        self,
        owned: tuple[int, int] | None = None,
        inline: bool = True,
        announce: Callable[[Unnamed], None] | None = None,
    ) -> Coverage:
        """Every sample unwound and counted; `owned`: only the samples whose records start in this range
        of file offsets; `inline`: frames named with the functions inlined at their PCs (`FrameNames`, each
        counted as `Unnamed` given to `announce`), once the counts are `named`."""
        counts = Coverage(inline, self.files.found, announce)
        # Walks and counts make no reference cycles (what they let go, counting frees): the cyclic
        # collector's passes over the ends and lookups kept would be a fifth of the time, for nothing.
        with uncollected():
            for sample, walked in self.walks(owned=owned):
                if walked is None:
                    counts.skip()
                else:
                    counts.add(sample.number, walked, sample.registers[SP_NAMES[self.arch]], sample.stack_asked)
        counts.flush()
        for path in counts.libraries:
            view = self.files.kernel(path)
            counts.kernel[path] = view.words if view is not None else ""
        counts.reader = self.reader
        return counts


def _share(
    path: str, limit: int, kernel_rules: bool, kernel: str, owned: tuple[int, int] | None, inline: bool
) -> tuple[Coverage, list[str]]:
    with PerfData(path) as perf:
        profile = Profile(perf, limit, kernel_rules=kernel_rules, kernel=kernel)
        return profile.counted(owned, inline, _announce), profile.notes


_announce: Callable[[Unnamed], None] | None = None
"""In a process unwinding a share of the samples: how it tells the process that merges of each frame it
counted as `Unnamed`, for that one to name it meanwhile (`_announcing`)."""


def _announcing(frames: Any) -> None:
    """A process unwinding a share of the samples sends each `Unnamed` frame to `frames` (a queue the process
    that merges reads), what is not sent when it is done let go: the process that merges names what it did
    not get after the counts are merged."""
    global _announce
    frames.cancel_join_thread()
    _announce = frames.put


def coverage(
    path: str,
    limit: int = MAX_STACK,
    jobs: int = 1,
    kernel_rules: bool = True,
    kernel: str = KERNEL,
    inline: bool = True,
) -> tuple[Coverage, list[str]]:
    """The profile at `path` counted, and what was noticed; with `jobs` processes, each unwinding the
    samples of a `jobs`-th of the data section (the walks are independent): each reads the mappings and
    task events from the start, passes over the samples before its part by their size, and stops at its
    part's end. The last reads every record, and says what the file and the files it names lacked. The
    frames are named from debug information once, here (`Coverage.named`): with more than one process, the
    frames the processes send as they count them are named while they unwind (`_announcing`), the rest
    after their counts are merged."""
    names = DebugNames(file_debug_info)
    if jobs <= 1:
        counts, notes = _share(path, limit, kernel_rules, kernel, None, inline)
        counts.named(names)
        return counts, notes
    import contextlib
    import multiprocessing  # only for more than one process
    import queue
    from concurrent.futures import ProcessPoolExecutor

    with PerfData(path) as perf:
        start, size = perf.data_offset, perf.data_size
    cuts = [start + size * part // jobs for part in range(jobs)] + [start + size + 1]
    cuts[0] = 0
    context = multiprocessing.get_context("fork")
    frames = context.Queue()
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_announcing, initargs=(frames,)) as pool:
        futures = [pool.submit(_share, path, limit, kernel_rules, kernel, (a, b), inline) for a, b in pairwise(cuts)]
        with uncollected():
            while not all(future.done() for future in futures):
                with contextlib.suppress(queue.Empty):
                    names.chain(frames.get(timeout=ANNOUNCED_WAIT))
            with contextlib.suppress(queue.Empty):  # what was sent before the last was done
                while True:
                    names.chain(frames.get_nowait())
        results = [future.result() for future in futures]
    frames.close()
    counts, _ = results[0]
    for other, _ in results[1:]:
        counts.merge(other)
    counts.named(names)
    return counts, results[-1][1]
