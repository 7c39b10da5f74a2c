"""SFrame's coverage of a profile: sample by sample, whether its SFrame stack is the DWARF stack, and
where and why not.

The DWARF stack is the reference. Where the SFrame stack parts from it, the
frame to blame is the last the two walks share: its caller is missing or
another. Why (`Reason`) is read off that frame as the SFrame walk found it: no
SFrame section in its file (the kernel falls back to the frame pointer), a PLT
stub, no FDE for its function, an FDE without a row for its PC, the stack copy
ending before the word the walk wanted, or a row whose rules give another
caller than DWARF's. Counts are kept as samples go by: a profile's samples
are never held together, only the counts, one sample number per place, and
the folded stacks.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple, TypeVar

from sfview import ADDRESS_MASK
from sfview.profiling.walks import KernelModule, Mode, Walked
from sfview.unwind.engine import PLT_SECTIONS, Frame

UNKNOWN = "[unknown]"
"""The name of a frame no file names, in folded stacks (as perf's)."""


class Reason(Enum):
    """Why the SFrame stack parts from the DWARF stack at a frame."""

    KERNEL_REFUSES = "the kernel's reader refuses that file's .sframe (the frame-pointer fallback)"
    KERNEL_LOOKUP_FAILS = "the kernel's lookup fails at the PC (the frame-pointer fallback)"
    NO_SFRAME = "no .sframe in that file (the frame-pointer fallback)"
    NO_FILE = "in no mapped file (the frame-pointer fallback)"
    PLT = "a PLT stub"
    NO_FDE = "no FDE covers the function (the frame-pointer fallback)"
    MISSING_ROW = "the FDE has no row for the PC"
    STACK_COPY_SHORT = "the stack copy ends before the word the walk needs"
    OTHER_CALLER = "the row gives another caller than DWARF's (a prologue or epilogue row?)"
    STOPPED = "SFrame's walk stops where DWARF's goes on"
    FURTHER = "SFrame's walk goes on where DWARF's stops"


class Place(NamedTuple):
    """Where SFrame parts from DWARF: the function and file of the frame to blame, and why."""

    function: str
    file: str
    reason: Reason


class Seen(NamedTuple):
    """A count, and the first sample (its number) that made it."""

    count: int
    sample: int


class Library(NamedTuple):
    """A file samples ran in: whether it has SFrame, the samples with a frame in it, and how many of
    those SFrame unwinds as DWARF does."""

    path: str
    has_sframe: bool
    samples: int
    equal: int


KNOWN_KEPT = 1 << 14
"""The walks' keys a profile remembers what it worked out of at most (`Coverage._known`)."""
T = TypeVar("T")

NAMES_KEPT = 1 << 16
"""The frames' names a profile remembers at most (by module and PC); past that it starts again."""


def function_name(frame: Frame, names: dict[tuple, str] | None = None) -> str:
    """The frame's function (`leaf`, without an offset), `[unknown]` when nothing names it; `names`: those
    worked out before, by module and PC (a profile meets the same PCs over and over)."""
    key = (frame.module, frame.pc, frame.lookup_pc)
    if names is not None and key in names:
        return names[key]
    name = frame.name().split("+")[0]
    name = name if name and not name.startswith(".") else UNKNOWN
    if names is not None:
        if len(names) >= NAMES_KEPT:
            names.clear()
        names[key] = name
    return name


def file_name(frame: Frame) -> str:
    module = frame.module
    if module is None:
        return UNKNOWN
    return module.library or module.name


def within_sframe(dwarf: Walked) -> int:
    """How many frames of a DWARF stack SFrame can be asked for: up to the first in a file without
    SFrame (or in no file), that one included (its PC comes from its callee's row; its caller would
    not)."""
    for i, frame in enumerate(dwarf.frames):
        if frame.module is None or frame.module.section is None:
            return i + 1
    return len(dwarf.frames)


def _reason(frame: Frame, sframe: Walked, at: int, sp: int) -> Reason:
    """Why SFrame's step from `frame` (the last shared) gave no caller or another one than DWARF's."""
    stopped = at == len(sframe.frames)
    missing = sframe.missing_address
    if stopped and missing is not None and missing >= sp:
        return Reason.STACK_COPY_SHORT
    module = frame.module
    if module is None:
        return Reason.NO_FILE
    if isinstance(module, KernelModule):
        if module.view.refused:
            return Reason.KERNEL_REFUSES
        if frame.function is None and module.view.fails_at((frame.lookup_pc - module.bias) & ADDRESS_MASK):
            return Reason.KERNEL_LOOKUP_FAILS
    if module.section is None:
        return Reason.NO_SFRAME
    name = frame.name()
    if "@plt" in name or name.split("+")[0] in PLT_SECTIONS:
        return Reason.PLT
    if frame.function is None:
        return Reason.NO_FDE
    if frame.row is None:
        return Reason.MISSING_ROW
    return Reason.STOPPED if stopped else Reason.OTHER_CALLER


def _files_of(dwarf: Walked) -> tuple[int, list[tuple[str, bool]]]:
    """A DWARF stack's `within_sframe`, and the files its frames are in, each with whether it has SFrame."""
    files = {}
    for frame in dwarf.frames:
        path = file_name(frame)
        if path not in files:
            module = frame.module
            files[path] = module is not None and module.section is not None
    return within_sframe(dwarf), list(files.items())


def _place(sframe: Walked, reference: tuple[int, ...], sp: int) -> Place:
    """Where and why an SFrame stack parts from the DWARF stack (`reference`, its PCs)."""
    pcs = sframe.pcs
    at = next(
        (i for i, (a, b) in enumerate(zip(pcs, reference, strict=False)) if a != b), min(len(pcs), len(reference))
    )
    blamed = sframe.frames[max(at - 1, 0)]
    reason = _reason(blamed, sframe, at, sp)
    if reason is Reason.STOPPED and at == len(reference):
        reason = Reason.FURTHER
    return Place(function_name(blamed), file_name(blamed), reason)


def _merged(one: Seen | None, other: Seen | None) -> Seen | None:
    """Two counts of one thing together, the first sample of either."""
    if one is None or other is None:
        return one or other
    return Seen(one.count + other.count, min(one.sample, other.sample))


class Coverage:
    """The counts of a profile, sample after sample (`add`)."""

    def __init__(self) -> None:
        self.samples = 0
        self.without_registers = 0
        self.equal = {Mode.SFRAME: 0, Mode.FP: 0}
        self.equal_within = 0
        """Samples whose SFrame stack is DWARF's as far as files with SFrame go (`within_sframe`)."""
        self.copy_short: Seen | None = None
        """The samples whose DWARF stack ends for want of a word past the stack copy, and the first."""
        self.copy_asked = 0
        """The bytes of stack copy the profile asked for (`--call-graph dwarf,SIZE`)."""
        self.by_depth: Counter[int] = Counter()
        self.equal_by_depth: Counter[int] = Counter()
        self.places: dict[Place, Seen] = {}
        self.libraries: dict[str, list] = {}
        self.folded: dict[Mode, Counter[str]] = {mode: Counter() for mode in Mode}
        self.names: dict[tuple, str] = {}
        self.known: dict[tuple, object] = {}
        """What was worked out of walks, by their keys (`_known`)."""
        self.kernel: dict[str, str] = {}
        """File → what the kernel's reader makes of its `.sframe` (`KernelView.words`; "" for none)."""
        self.reader: tuple[str, str] | None = None
        """The revision of the kernel's reader the SFrame walks followed (its profile's name and title)."""

    def skip(self) -> None:
        """A sample with no user registers (perf held none: a kernel thread, a sample in the kernel)."""
        self.samples += 1
        self.without_registers += 1

    def add(self, number: int, walked: dict[Mode, Walked], sp: int, copy_asked: int) -> None:
        self.samples += 1
        self.copy_asked = max(self.copy_asked, copy_asked)
        dwarf = walked[Mode.DWARF]
        if dwarf.missing_address is not None and dwarf.missing_address >= sp:
            seen = self.copy_short
            self.copy_short = Seen(1, number) if seen is None else seen._replace(count=seen.count + 1)
        reference = dwarf.pcs
        for mode in (Mode.SFRAME, Mode.FP):
            if walked[mode].pcs == reference:
                self.equal[mode] += 1
        depth = len(reference)
        self.by_depth[depth] += 1
        sframe = walked[Mode.SFRAME]
        pcs = sframe.pcs
        equal = pcs == reference
        if equal:
            self.equal_by_depth[depth] += 1
        within, files = self._known(dwarf.key, dwarf, _files_of)
        self.equal_within += pcs[:within] == reference[:within]
        if not equal:
            short = sframe.missing_address is not None and sframe.missing_address >= sp
            key = (sframe.key, dwarf.key, short) if sframe.key is not None and dwarf.key is not None else None
            place = self._known(key, sframe, lambda _: _place(sframe, reference, sp))
            seen = self.places.get(place)
            self.places[place] = Seen(1, number) if seen is None else seen._replace(count=seen.count + 1)
        for path, has in files:
            entry = self.libraries.get(path)
            if entry is None:
                entry = self.libraries[path] = [has, 0, 0]
            entry[1] += 1
            entry[2] += equal
        for mode, walk in walked.items():
            self.folded[mode][self._known((mode, walk.key), walk, self._folded)] += 1

    def _folded(self, walk: Walked) -> str:
        return ";".join(function_name(f, self.names) for f in reversed(walk.frames))

    def _known(self, key: tuple | None, walk: Walked, work: Callable[[Walked], T]) -> T:
        """`work` on a walk, done once for walks of one key (`Walked.key`: the same frames in the same
        files): a profile's samples go through the same stacks over and over. At most `KNOWN_KEPT` kept."""
        if key is None or key[-1] is None:
            return work(walk)
        found = self.known.get(key)
        if found is None:
            if len(self.known) >= KNOWN_KEPT:
                self.known.clear()
            found = self.known[key] = work(walk)
        return found

    def merge(self, other: Coverage) -> None:
        """Add the counts of another share of the same profile's samples (`Profile.coverage`'s `share`)."""
        self.samples += other.samples
        self.without_registers += other.without_registers
        for mode in self.equal:
            self.equal[mode] += other.equal[mode]
        self.equal_within += other.equal_within
        self.copy_short = _merged(self.copy_short, other.copy_short)
        self.copy_asked = max(self.copy_asked, other.copy_asked)
        self.by_depth.update(other.by_depth)
        self.equal_by_depth.update(other.equal_by_depth)
        for place, seen in other.places.items():
            self.places[place] = _merged(self.places.get(place), seen)
        for path, (has, samples, equal) in other.libraries.items():
            entry = self.libraries.setdefault(path, [has, 0, 0])
            entry[1] += samples
            entry[2] += equal
        for mode, stacks in other.folded.items():
            self.folded[mode].update(stacks)
        self.kernel.update(other.kernel)
        self.reader = self.reader or other.reader

    def __getstate__(self) -> dict:
        """What goes from a worker to the process that merges: the counts, not the names remembered."""
        return {**self.__dict__, "names": {}, "known": {}}

    def libraries_seen(self) -> list[Library]:
        """Every file a DWARF stack went through, the most sampled first."""
        found = [Library(path, has, samples, equal) for path, (has, samples, equal) in self.libraries.items()]
        return sorted(found, key=lambda lib: (-lib.samples, lib.path))

    def by_function(self) -> list[tuple[Place, Seen]]:
        """Where SFrame parts from DWARF, the most samples first."""
        return sorted(self.places.items(), key=lambda item: (-item[1].count, *item[0][:2], item[0].reason.name))

    def by_file(self) -> list[tuple[tuple[str, Reason], Seen]]:
        """The same places summed by file and reason, the most samples first."""
        files: dict[tuple[str, Reason], Seen] = {}
        for place, seen in self.places.items():
            key = (place.file, place.reason)
            had = files.get(key)
            files[key] = seen if had is None else Seen(had.count + seen.count, min(had.sample, seen.sample))
        return sorted(files.items(), key=lambda item: (-item[1].count, os.path.basename(item[0][0]), item[0][1].name))
