"""A profile read through: every sample unwound in each mode, in its process's address space, and counted.

The records come in file order; a process's mappings are those its `MMAP`
records gave before the sample (`perf record` writes a process's mappings
before the samples that run in them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sfview.inputs.perf_data import SP_NAMES, Mmap, PerfData, Record, Sample, Task
from sfview.profiling.address_space import MACHINES, AddressSpace, Files, machine_of
from sfview.profiling.coverage import Coverage
from sfview.profiling.walks import MAX_STACK, Mode, Walked, Walker


class Profile:
    """A profile's processes as its records describe them, and its samples unwound."""

    def __init__(self, perf: PerfData, limit: int = MAX_STACK) -> None:
        perf.check_unwindable()
        self.perf = perf
        self.arch = perf.arch
        self.files = Files(perf.build_ids, MACHINES[perf.arch][1])
        self.walker = Walker(machine_of(perf.arch), limit)
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
        self, wanted: Callable[[Sample], bool] = lambda _: True
    ) -> Iterator[tuple[Sample, dict[Mode, Walked] | None]]:
        """Each sample `wanted` with its walks (None for a sample without user registers), in file order."""
        for record in self.perf.records():
            if isinstance(record, Mmap):
                self.space(record.pid).add(record)
            elif isinstance(record, Task):
                self._task(record)
            elif wanted(record):
                yield record, self.walker.walk(record, self.space(record.pid), self.arch)

    def _task(self, task: Task) -> None:
        if task.kind is Record.FORK and task.pid != task.parent and task.parent in self.spaces:
            self.spaces[task.pid] = self.spaces[task.parent].fork()
        elif task.kind is Record.COMM:
            self.names[task.pid] = task.name
            if task.exec:
                self.spaces[task.pid] = AddressSpace(self.files)

    def coverage(self) -> Coverage:
        """Every sample unwound and counted."""
        counts = Coverage()
        for sample, walked in self.walks():
            if walked is None:
                counts.skip()
            else:
                counts.add(sample.number, walked, sample.registers[SP_NAMES[self.arch]], sample.stack_asked)
        return counts
