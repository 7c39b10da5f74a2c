"""A profile read through: every sample unwound in each mode, in its process's address space, and counted.

The records come in file order; a process's mappings are those its `MMAP`
records gave before the sample (`perf record` writes a process's mappings
before the samples that run in them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
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

SENT_WAIT = 0.5
"""Seconds the process that merges waits for what a process it forked sends, before it looks whether one died."""
WARM_SAMPLES = 500
"""The samples the process that merges unwinds itself before it forks the others (`coverage`)."""
WARM_PART = 10
"""... or those of this part of the data section (a `WARM_PART`-th), if fewer: a small profile is shared too."""
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
        self, wanted: Callable[[Sample], bool] = lambda _: True, walk: bool = True, owned: Sequence[int] | None = None
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

    def coverage(self, owned: Sequence[int] | None = None, inline: bool = True) -> Coverage:
        """Every sample unwound and counted, its frames named (`counted`, then `Coverage.named`)."""
        counts = self.counted(owned, inline)
        counts.named(DebugNames(file_debug_info))
        return counts

    def counted(self, owned: Sequence[int] | None = None, inline: bool = True) -> Coverage:
        """Every sample unwound and counted; `owned`: only the samples whose records start in this range
        of file offsets; `inline`: frames named with the functions inlined at their PCs (`FrameNames`, each
        counted as `Unnamed`), once the counts are `named`."""
        counts = Coverage(inline, self.files.found)
        self.count(self.walks(owned=owned), counts)
        return self.finished(counts)

    def count(
        self,
        walks: Iterator[tuple[Sample, dict[Mode, Walked] | None]],
        counts: Coverage,
        enough: Callable[[Sample], bool] | None = None,
    ) -> bool:
        """Count the samples `walks` gives (`Profile.walks`) into `counts`, until `enough` says so of one;
        whether every sample was counted (else `walks` goes on from the next)."""
        # Walks and counts make no reference cycles (what they let go, counting frees): the cyclic
        # collector's passes over the ends and lookups kept would be a fifth of the time, for nothing.
        with uncollected():
            for sample, walked in walks:
                if walked is None:
                    counts.skip()
                else:
                    counts.add(sample.number, walked, sample.registers[SP_NAMES[self.arch]], sample.stack_asked)
                if enough is not None and enough(sample):
                    return False
        return True

    def finished(self, counts: Coverage) -> Coverage:
        """`counts` once every sample they take is counted: flushed, each file's kernel verdict added."""
        counts.flush()
        for path in counts.libraries:
            view = self.files.kernel(path)
            counts.kernel[path] = view.words if view is not None else ""
        counts.reader = self.reader
        return counts


def coverage(
    path: str,
    limit: int = MAX_STACK,
    jobs: int = 1,
    kernel_rules: bool = True,
    kernel: str = KERNEL,
    inline: bool = True,
) -> tuple[Coverage, list[str]]:
    """The profile at `path` counted, and what was noticed; the frames named from debug information once,
    here (`Coverage.named`). With `jobs` processes, this one unwinds the first samples (`WARM_SAMPLES`, at
    most a `WARM_PART`-th of the data section), then forks the others (`_forked`): they start with what it
    read, looked up and walked (the files, the PCs, the ends of walks), none of which a process then
    finds again, and share the samples left (the walks are independent)."""
    names = DebugNames(file_debug_info)
    with PerfData(path) as perf:
        profile = Profile(perf, limit, kernel_rules=kernel_rules, kernel=kernel)
        bounds = [0, perf.data_offset + perf.data_size + 1]
        met: list[Unnamed] = []
        counts = Coverage(inline, profile.files.found, met.append if jobs > 1 else None)
        walks = profile.walks(owned=bounds)
        warm = perf.data_offset + perf.data_size // WARM_PART
        if jobs > 1 and not profile.count(walks, counts, lambda s: s.number + 1 >= WARM_SAMPLES or s.offset >= warm):
            counts, notes = _forked(profile, walks, counts, bounds, jobs, names, met)
        else:
            profile.count(walks, counts)
            counts, notes = profile.finished(counts), profile.notes
    counts.named(names)
    return counts, notes


def _forked(
    profile: Profile,
    walks: Iterator[tuple[Sample, dict[Mode, Walked] | None]],
    counts: Coverage,
    bounds: list[int],
    jobs: int,
    names: DebugNames,
    met: list[Unnamed],
) -> tuple[Coverage, list[str]]:
    """The samples left of `walks` counted in `jobs` processes forked from this one, each taking the
    samples of a `jobs`-th of the records not read yet (the first also those read and not given: perf's
    rounds hold them), every mapping and task event from here on; the first goes on with `counts`, the
    others with counts of their own. This process names the frames they send as they count them (`met`
    before them), then merges their counts; the last, which reads every record, says what the file and the
    files it names lacked."""
    import multiprocessing  # only for more than one process
    import queue

    at = profile.perf.file.tell()
    cuts = [0, *(at + (bounds[1] - at) * part // jobs for part in range(1, jobs)), bounds[1]]
    context = multiprocessing.get_context("fork")
    sent = context.Queue()
    shares = list(enumerate(pairwise(cuts)))
    processes = [
        context.Process(target=_share, args=(profile, walks, counts, bounds, share, part, sent, at), daemon=True)
        for part, share in shares
    ]
    for process in processes:
        process.start()
    results: dict[int, tuple[Coverage, list[str]] | Exception] = {}
    with uncollected():
        for frame in met:
            names.chain(frame)
        while len(results) < jobs:
            try:
                got = sent.get(timeout=SENT_WAIT)
            except queue.Empty:
                lost = [p.exitcode for i, p in enumerate(processes) if p.exitcode not in (None, 0) and i not in results]
                if lost:
                    raise RuntimeError(f"a process unwinding the profile ended with status {lost[0]}") from None
                continue
            if isinstance(got, Unnamed):
                names.chain(got)
            else:
                results[got[0]] = got[1]
    for process in processes:
        process.join()
    sent.close()
    done: list[tuple[Coverage, list[str]]] = []
    for part in range(jobs):
        result = results[part]
        if isinstance(result, Exception):
            raise result
        done.append(result)
    merged, _ = done[0]
    for other, _ in done[1:]:
        merged.merge(other)
    return merged, done[-1][1]


def _share(
    profile: Profile,
    walks: Iterator[tuple[Sample, dict[Mode, Walked] | None]],
    counts: Coverage,
    bounds: list[int],
    share: tuple[int, int],
    part: int,
    sent: Any,
    at: int,
) -> None:
    """In a forked process: the samples of `share` (file offsets) counted, going on from where the process
    that forked it stopped (the file read on from `at`); each frame counted as `Unnamed` sent, then the
    counts and notes (or what went wrong) as (`part`, result)."""
    try:
        profile.perf.reopen(at)
        bounds[:] = share
        if part:
            counts = counts.emptied()
        counts.names.announce = sent.put
        profile.count(walks, counts)
        result: tuple[Coverage, list[str]] | Exception = (profile.finished(counts), profile.notes)
    except Exception as exc:  # said by the process that merges
        result = exc
    sent.put((part, result))
