"""A profile read through: every sample unwound in each mode, in its process's address space, and counted.

The records come in file order; a process's mappings are those its `MMAP`
records gave before the sample (`perf record` writes a process's mappings
before the samples that run in them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sfview.errors import InputError
from sfview.inputs.core import Memory
from sfview.inputs.perf_data import PC_NAMES, SP_NAMES, Mmap, PerfData, Record, Sample, Task
from sfview.profiling.address_space import MACHINES, AddressSpace, Files, machine_of
from sfview.profiling.coverage import Coverage
from sfview.profiling.walks import MAX_STACK, Mode, Walked, Walker
from sfview.unwind.engine import RuleSource, Unwinder
from sfview.unwind.session import Session


class Profile:
    """A profile's processes as its records describe them, and its samples unwound."""

    def __init__(self, perf: PerfData, limit: int = MAX_STACK, record: bool = False, kernel_rules: bool = True) -> None:
        perf.check_unwindable()
        self.perf = perf
        self.arch = perf.arch
        self.files = Files(perf.build_ids, MACHINES[perf.arch][1])
        self.walker = Walker(machine_of(perf.arch), limit, record, self.files.kernel if kernel_rules else None)
        self.spaces: dict[int, AddressSpace] = {}
        self.names: dict[int, str] = {}
        """PID → the process's command name (`COMM`)."""

    @property
    def notes(self) -> list[str]:
        """What the file and the files it names lacked, one line each (complete once the samples are read)."""
        return [*self.perf.notes, *self.files.notes]

    def space(self, pid: int) -> AddressSpace:
        space = self.spaces.get(pid)
        if space is None:
            space = self.spaces[pid] = AddressSpace(self.files)
        return space

    def walks(
        self, wanted: Callable[[Sample], bool] = lambda _: True, walk: bool = True
    ) -> Iterator[tuple[Sample, dict[Mode, Walked] | None]]:
        """Each sample `wanted` with its walks (None for a sample without user registers, or when not
        `walk`ed), in file order, its process's mappings as they were."""
        for record in self.perf.records():
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
        CPU's buffer in turn, so a child that ran (and exec'd) on another CPU can precede its `FORK`."""
        if (
            task.kind is Record.FORK
            and task.pid != task.parent
            and task.parent in self.spaces
            and task.pid not in self.spaces
        ):
            self.spaces[task.pid] = self.spaces[task.parent].fork()
        elif task.kind is Record.COMM:
            self.names[task.pid] = task.name
            if task.exec:
                self.spaces[task.pid] = AddressSpace(self.files)

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

    def coverage(self, share: tuple[int, int] = (0, 1)) -> Coverage:
        """Every sample unwound and counted; `share` (k, n): only the samples whose number is k modulo n."""
        counts = Coverage()
        part, parts = share
        for sample, walked in self.walks(lambda s: s.number % parts == part):
            if walked is None:
                counts.skip()
            else:
                counts.add(sample.number, walked, sample.registers[SP_NAMES[self.arch]], sample.stack_asked)
        for path in counts.libraries:
            view = self.files.kernel(path)
            counts.kernel[path] = view.words if view is not None else ""
        return counts


def _share(path: str, limit: int, kernel_rules: bool, share: tuple[int, int]) -> tuple[Coverage, list[str]]:
    with PerfData(path) as perf:
        profile = Profile(perf, limit, kernel_rules=kernel_rules)
        return profile.coverage(share), profile.notes


def coverage(path: str, limit: int = MAX_STACK, jobs: int = 1, kernel_rules: bool = True) -> tuple[Coverage, list[str]]:
    """The profile at `path` counted, and what was noticed; with `jobs` processes, each reading the whole
    file and unwinding every `jobs`-th sample (the walks are independent; the file's records are not
    the work)."""
    if jobs <= 1:
        return _share(path, limit, kernel_rules, (0, 1))
    import multiprocessing  # only for more than one process
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(_share, path, limit, kernel_rules, (part, jobs)) for part in range(jobs)]
        results = [future.result() for future in futures]
    counts, notes = results[0]
    for other, _ in results[1:]:
        counts.merge(other)
    return counts, notes
