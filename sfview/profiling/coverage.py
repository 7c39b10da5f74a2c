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
the folded stacks. Frames that DWARF debug information may name are counted
by file and address (`Unnamed`) and named once the counts are merged
(`DebugNames`): the processes that share a profile's samples do not each read
the debug information again.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from enum import Enum
from typing import NamedTuple, TypeVar

from sfview import ADDRESS_MASK, uncollected
from sfview.dwarf.source import DebugInfo
from sfview.inputs.demangle import without_parameters
from sfview.inputs.plt import ABSOLUTE
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
    """Where SFrame parts from DWARF: the function and file of the frame to blame, and why (the function as
    counted, a `Name`, until the counts are `named`)."""

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
"""The walks' keys a profile remembers what it worked out of at most (`Coverage._known`), and the sets of walks
it holds tallied before they go into the counts (`Coverage.add`)."""
T = TypeVar("T")

NAMES_KEPT = 1 << 16
"""The frames' names a profile remembers at most (by file and address); past that it starts again."""


def function_name(frame: Frame) -> str:
    """The frame's function from the symbol table as perf names it (`leaf`, without an offset; C++ demangled
    without parameters), `[unknown]` when nothing names it; a PLT entry whose relocation has no symbol (gdb's
    `*ABS*+0x9f1c0@plt`) `@plt`."""
    name = frame.name()
    if name.startswith(ABSOLUTE):
        return "@plt"
    name = name.split("+")[0]
    return without_parameters(name) if name and not name.startswith(".") else UNKNOWN


class Unnamed(NamedTuple):
    """A frame to name from its file's DWARF debug information once a profile's counts are merged
    (`DebugNames`): the file read for it, the address in it, and its symbol table's name (what it is named
    where the debug information says nothing)."""

    file: str
    address: int
    symbol: str


Name = str | Unnamed
"""A frame as counted: its name, or what names it from debug information (`Unnamed`)."""


class FrameNames:
    """The names a profile's frames are counted by, worked out once for each file and address (a profile meets
    the same PCs over and over: never per sample).

    With `inline`, a frame in a file that may have DWARF debug information is counted as `Unnamed`: named
    once, after the counts of every process are merged (`Coverage.named`), rather than by each process
    reading the debug information again; elsewhere, and without `inline` (`--no-inline`), by the symbol
    table's name of the physical frame alone."""

    def __init__(
        self,
        inline: bool = True,
        found: Callable[[str], str | None] | None = None,
        announce: Callable[[Unnamed], None] | None = None,
    ) -> None:
        self.inline = inline
        self.found = found
        """The file read for a file as mapped (`Files.found`); None (or none given): frames named by their
        symbols."""
        self.announce = announce
        """Given each `Unnamed` when first counted (for another process to name it meanwhile)."""
        self.seen: dict[tuple, Name] = {}
        """By module, PC and the PC looked up: what a frame there is counted by (the quick way)."""
        self.known: dict[tuple[str, int, bool], Name] = {}
        """By file, address in it and whether a signal frame: the same for every process mapping the file."""

    def name(self, frame: Frame) -> Name:
        """The frame as counted: its name, or what names it once the counts are merged."""
        quick = (frame.module, frame.pc, frame.lookup_pc)
        found = self.seen.get(quick)
        if found is not None:
            return found
        module = frame.module
        if module is None:
            return UNKNOWN
        path = file_name(frame)
        key = (path, (frame.lookup_pc - module.bias) & ADDRESS_MASK, frame.signal)
        found = self.known.get(key)
        if found is None:
            found = function_name(frame)
            named_later = self.inline and not frame.signal and module.debug_info is not None and not in_plt(frame)
            read = self.found(path) if named_later and self.found is not None else None
            if read is not None:
                found = Unnamed(read, key[1], found)
                if self.announce is not None:
                    self.announce(found)
            if len(self.known) >= NAMES_KEPT:
                self.known.clear()
            self.known[key] = found
        if len(self.seen) >= NAMES_KEPT:
            self.seen.clear()
        self.seen[quick] = found
        return found


class DebugNames:
    """Frames counted as `Unnamed` named as `perf script` names them where a file has DWARF debug information
    (its own or its separate debug file's, read a compilation unit at a time): the function as DWARF names it
    (`__GI___libc_malloc`), and each function inlined at the PC as a frame of its own; the symbol table's
    name where it says nothing. `open_debug` gives a file's debug information by its path; each file's is
    opened once, and each address named once."""

    def __init__(self, open_debug: Callable[[str], DebugInfo | None]) -> None:
        self.open_debug = open_debug
        self.debug: dict[str, DebugInfo | None] = {}
        self.chains: dict[Unnamed, tuple[str, ...]] = {}

    def chain(self, name: Name) -> tuple[str, ...]:
        """The frame's functions, the physical one first, then those inlined in it down to the innermost
        (the order of a folded stack)."""
        if not isinstance(name, Unnamed):
            return (name,)
        found = self.chains.get(name)
        if found is None:
            if name.file not in self.debug:
                self.debug[name.file] = self.open_debug(name.file)
            info = self.debug[name.file]
            functions = info.functions(name.address, name.symbol) if info is not None else []
            found = tuple(f if f != "??" else UNKNOWN for f in functions) or (name.symbol,)
            self.chains[name] = found
        return found

    def function(self, name: Name) -> str:
        """The frame's function as the report groups by it: the innermost function at its PC, and the one it
        was inlined into (`mix (inlined into leaf)`)."""
        chain = self.chain(name)
        return chain[-1] if len(chain) == 1 else f"{chain[-1]} (inlined into {chain[0]})"


def in_plt(frame: Frame) -> bool:
    """Whether the frame is in a PLT stub (by its symbol, `name@plt`, or its section, `.plt+0x150`): code the
    linker made, which no compilation unit's debug information covers."""
    name = frame.name()
    return "@plt" in name or name.split("+")[0] in PLT_SECTIONS


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
    if in_plt(frame):
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


def _place(sframe: Walked, reference: tuple[int, ...], sp: int, names: FrameNames) -> Place:
    """Where and why an SFrame stack parts from the DWARF stack (`reference`, its PCs), the function as
    `names` counts it."""
    pcs = sframe.pcs
    at = next(
        (i for i, (a, b) in enumerate(zip(pcs, reference, strict=False)) if a != b), min(len(pcs), len(reference))
    )
    blamed = sframe.frames[max(at - 1, 0)]
    reason = _reason(blamed, sframe, at, sp)
    if reason is Reason.STOPPED and at == len(reference):
        reason = Reason.FURTHER
    return Place(names.name(blamed), file_name(blamed), reason)


def _merged(one: Seen | None, other: Seen | None) -> Seen | None:
    """Two counts of one thing together, the first sample of either."""
    if one is None or other is None:
        return one or other
    return Seen(one.count + other.count, min(one.sample, other.sample))


class Tally(NamedTuple):
    """What one sample adds to a profile's counts, the same for every sample of the same walks (`Coverage.add`)."""

    copy_short: bool
    """DWARF's walk stopped for want of a word past the stack copy."""
    equal: bool
    """SFrame's stack is DWARF's."""
    fp_equal: bool
    depth: int
    within: bool
    """SFrame's stack is DWARF's as far as files with SFrame go (`within_sframe`)."""
    place: Place | None
    """Where SFrame parts from DWARF (None: it does not)."""
    files: list[tuple[str, bool]]
    folded: tuple[tuple[Mode, tuple[Name, ...]], ...]


class Coverage:
    """The counts of a profile, sample after sample (`add`)."""

    def __init__(
        self,
        inline: bool = True,
        found: Callable[[str], str | None] | None = None,
        announce: Callable[[Unnamed], None] | None = None,
    ) -> None:
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
        self.folded: dict[Mode, Counter] = {mode: Counter() for mode in Mode}
        """By mode, each stack's count: its frames outermost first (`Name`s), until `named` joins them as a
        folded stack's names."""
        self.names = FrameNames(inline, found, announce)
        self.known: dict[tuple, object] = {}
        """What was worked out of walks, by their keys (`_known`)."""
        self.tallies: dict[tuple, list] = {}
        """By the keys of a sample's walks: what such a sample adds (`Tally`), the samples, the first (`add`)."""
        self.kernel: dict[str, str] = {}
        """File → what the kernel's reader makes of its `.sframe` (`KernelView.words`; "" for none)."""
        self.reader: tuple[str, str] | None = None
        """The revision of the kernel's reader the SFrame walks followed (its profile's name and title)."""

    def emptied(self) -> Coverage:
        """Counts of no sample that work out walks and name frames as these do, with what these worked out
        (the same `names` and `known`): another share of the samples, in a process forked from this one."""
        other = Coverage(self.names.inline)
        other.names, other.known = self.names, self.known
        return other

    def skip(self) -> None:
        """A sample with no user registers (perf held none: a kernel thread, a sample in the kernel)."""
        self.samples += 1
        self.without_registers += 1

    def add(self, number: int, walked: dict[Mode, Walked], sp: int, copy_asked: int) -> None:
        """Count a sample's walks: what they add to the counts is worked out once for each distinct set of walks
        (`Tally`: their keys, and whether each stopped for want of a word past the stack copy), and tallied;
        the tallies go into the counts at `flush` (at most `KNOWN_KEPT` held)."""
        self.samples += 1
        if copy_asked > self.copy_asked:
            self.copy_asked = copy_asked
        dwarf, sframe = walked[Mode.DWARF], walked[Mode.SFRAME]
        dwarf_short = dwarf.missing_address is not None and dwarf.missing_address >= sp
        sframe_short = sframe.missing_address is not None and sframe.missing_address >= sp
        keys = (dwarf.key, sframe.key, walked[Mode.FP].key)
        if None in keys:  # a walk through a signal frame: counted as it is
            self._apply(self._tally(walked, sp, dwarf_short, sframe_short), 1, number)
            return
        key = (*keys, dwarf_short, sframe_short)
        tally = self.tallies.get(key)
        if tally is None:
            if len(self.tallies) >= KNOWN_KEPT:
                self.flush()
            tally = self.tallies[key] = [self._tally(walked, sp, dwarf_short, sframe_short), 0, number]
        tally[1] += 1
        if number < tally[2]:
            tally[2] = number

    def flush(self) -> None:
        """Put the samples tallied into the counts (once they are all added: before the counts are read)."""
        for tally, count, first in self.tallies.values():
            self._apply(tally, count, first)
        self.tallies.clear()

    def _tally(self, walked: dict[Mode, Walked], sp: int, dwarf_short: bool, sframe_short: bool) -> Tally:
        """What a sample of these walks adds to the counts."""
        dwarf, sframe = walked[Mode.DWARF], walked[Mode.SFRAME]
        reference = dwarf.pcs
        pcs = sframe.pcs
        equal = pcs == reference
        within, files = self._known(dwarf.key, dwarf, _files_of)
        place = None
        if not equal:
            key = (sframe.key, dwarf.key, sframe_short) if sframe.key is not None and dwarf.key is not None else None
            place = self._known(key, sframe, lambda _: _place(sframe, reference, sp, self.names))
        return Tally(
            dwarf_short,
            equal,
            walked[Mode.FP].pcs == reference,
            len(reference),
            pcs[:within] == reference[:within],
            place,
            files,
            tuple((mode, self._known((mode, walk.key), walk, self._folded)) for mode, walk in walked.items()),
        )

    def _apply(self, tally: Tally, count: int, first: int) -> None:
        """Add `count` samples of one `Tally` to the counts, the first of them sample #`first`."""
        seen = Seen(count, first)
        if tally.copy_short:
            self.copy_short = _merged(self.copy_short, seen)
        equal = tally.equal
        if equal:
            self.equal[Mode.SFRAME] += count
            self.equal_by_depth[tally.depth] += count
        if tally.fp_equal:
            self.equal[Mode.FP] += count
        self.by_depth[tally.depth] += count
        if tally.within:
            self.equal_within += count
        if tally.place is not None:
            self.places[tally.place] = _merged(self.places.get(tally.place), seen)
        for path, has in tally.files:
            entry = self.libraries.get(path)
            if entry is None:
                entry = self.libraries[path] = [has, 0, 0]
            entry[1] += count
            if equal:
                entry[2] += count
        for mode, stack in tally.folded:
            self.folded[mode][stack] += count

    def _folded(self, walk: Walked) -> tuple[Name, ...]:
        name = self.names.name
        return tuple(name(f) for f in reversed(walk.frames))

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

    def named(self, names: DebugNames) -> None:
        """Name the frames counted as `Unnamed` (by `names`), once the counts of every share are merged: the
        folded stacks become their names joined, the places their function's name; stacks and places that
        come out named alike are counted together. No cyclic collection meanwhile: naming makes many objects
        (pyelftools' DIEs) beside the large heap of the counts (in one process, of its walks too)."""
        with uncollected():
            for mode, stacks in self.folded.items():
                joined: Counter[str] = Counter()
                for stack, count in stacks.items():
                    joined[";".join(name for frame in stack for name in names.chain(frame))] += count
                self.folded[mode] = joined
            places: dict[Place, Seen] = {}
            for place, seen in self.places.items():
                named = place._replace(function=names.function(place.function))
                places[named] = _merged(places.get(named), seen)
            self.places = places

    def __getstate__(self) -> dict:
        """What goes from a worker to the process that merges: the counts, not the names remembered."""
        return {**self.__dict__, "names": FrameNames(self.names.inline), "known": {}}

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
