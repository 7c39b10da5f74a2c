"""One sample unwound three ways: SFrame as the kernel would, frame pointers alone, DWARF CFI.

The memory of a walk is what perf recorded and what the files hold: the copy
of the user stack from the sample's SP (as far as the kernel copied it), and
the mapped files' read-only bytes (`AddressSpace.memory`); the registers are
the sample's user registers. Each mode is an `Unwinder` over the same modules:

- `SFRAME`: the files' SFrame sections alone (`RuleSource.SFRAME`), and where
  no FDE covers a PC the frame-pointer chain, as the kernel's user unwinder
  falls back to it;
- `FP`: the frame-pointer chain alone (modules without SFrame or CFI), as
  `perf record --call-graph fp` walks;
- `DWARF`: the files' DWARF CFI (`RuleSource.DWARF`), the reference, as
  `perf script` unwinds a `--call-graph dwarf` profile.

A walk stops at `limit` frames (perf's `--max-stack`, 127 by default).
"""

from __future__ import annotations

import struct
import weakref
from collections.abc import Callable
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from sfview.inputs.perf_data import PC_NAMES, SP_NAMES, Sample
from sfview.profiling.address_space import AddressSpace, KernelView
from sfview.unwind.engine import Ends, Found, Frame, Lookups, Machine, Module, Read, Recall, RuleSource, Unwinder, Walk
from sfview.unwind.session import register_numbers

if TYPE_CHECKING:
    from sfview.sframe.model.section import Function, Section

MAX_STACK = 127
"""perf's default `--max-stack`: the frames of a callchain at most."""

SPACES_KEPT = 256
"""The address spaces whose modes, lookups and walks' ends a walker keeps at most, the last walked: a
profile whose samples each name another process would otherwise hold three unwinders a process, some
kilobytes for a sample of a few hundred bytes."""


class Mode(Enum):
    """How a sample's stack is walked (`--folded MODE`)."""

    SFRAME = "sframe"
    FP = "fp"
    DWARF = "dwarf"

    __hash__ = object.__hash__
    """Hashed as the object it is (a member is one object): `Enum`'s own hash, written in Python, was a
    twentieth of a profile's counting, the modes keying a sample's walks and counts."""


class Walked(NamedTuple):
    """One mode's stack of a sample: its frames (innermost first), why it stopped, the word it wanted."""

    frames: list[Frame]
    stop: str
    missing_address: int | None
    pcs: tuple[int, ...]
    """The frames' PCs (what walks are compared by)."""
    key: tuple | None = None
    """The same for walks of the same frames in the same files (the modules a walker had and the PCs),
    so that what is worked out of a walk's frames is worked out once (None: a walk through a signal
    frame, named otherwise)."""


class KernelModule(Module):
    """A module as the kernel's SFrame reader has it (`KernelView`): no section where the reader refuses
    it, no function at the PCs where its lookup fails; the walk falls back to the frame pointer there."""

    def __init__(self, module: Module, view: KernelView) -> None:
        section = None if view.refused or module.section is None else _KernelSection(module.section, view)
        rest = (module.library, None, module.function_at, module.debug_info)
        super().__init__(module.name, section, module.bias, module.name_at, *rest)
        self.view = view


class _KernelSection:
    """A section's `find_function`, none where the kernel's lookup fails (all the unwinder asks of it)."""

    def __init__(self, section: Section, view: KernelView) -> None:
        self.section, self.view = section, view

    def find_function(self, address: int) -> Function | None:
        return None if self.view.fails_at(address) else self.section.find_function(address)


class Known(NamedTuple):
    """What a walker keeps of one mode in an address space: its modules, what it looked up at a PC
    (`Lookups`), the ends of walks it made (`Ends`)."""

    modules: list[Module]
    lookups: Lookups
    ends: Ends
    serial: int
    """Numbers the modules a walker had (`Walked.key`)."""
    unwinder: Unwinder
    """The unwinder of these modules, given each sample's memory (its `read`)."""


def _without_rules(module: Module) -> Module:
    """The module with no SFrame and no CFI: the frame-pointer chain is all a walk has in it."""
    return Module(
        module.name, None, module.bias, module.name_at, module.library, None, module.function_at, module.debug_info
    )


class Walker:
    """Unwinds samples of one address space; what it looked up at a PC is kept for the next sample
    (it depends on the code alone), and rebuilt when the space maps another file."""

    def __init__(
        self,
        machine: Machine,
        limit: int = MAX_STACK,
        record: bool = False,
        kernel: Callable[[str], KernelView | None] | None = None,
    ) -> None:
        self.machine = machine
        self.kernel = kernel
        """What the kernel's reader makes of the file mapped at a path; None: every section as the format
        reads it (`--no-kernel-rules`)."""
        self.limit = limit
        self.record = record
        """Whether frames keep their computations (to show a sample's walks), not only their callers."""
        self.numbers = register_numbers(machine)
        self._spaces: weakref.WeakKeyDictionary[AddressSpace, tuple[int, dict[Mode, Known], bool]]
        self._spaces = weakref.WeakKeyDictionary()
        self._serial = 0
        """Each space's modules per mode, lookups and walks' ends, as long as the space lives (an `exec`
        replaces it); and whether its frame-pointer walks are its SFrame walks (`_modes`)."""

    def _modes(self, space: AddressSpace) -> tuple[dict[Mode, Known], bool]:
        """The space's modes, and whether the frame pointers' walk is SFrame's there. Where the kernel's
        reader takes no module's section (none has SFrame, or it refuses each), SFrame's walk falls back
        to the frame-pointer chain at every PC, as `Mode.FP`'s does (the SFrame unwinder reads a module's
        section alone, never its CFI): both modes then walk SFrame's modules (`KernelModule`s, which
        SFrame's places are told by), and a walk that records nothing is made once for both."""
        known = self._spaces.pop(space, None)
        if known is not None:  # the last walked, put back last
            self._spaces[space] = known
        if known is None or known[0] != space.version:
            modules = space.modules
            sframe = [self._as_kernel(m) for m in modules]
            same = all(m.section is None for m in sframe)
            by_mode = {
                Mode.SFRAME: sframe,
                Mode.FP: sframe if same else [_without_rules(m) for m in modules],
                Mode.DWARF: modules,
            }
            slots = {id(m): i for i, m in enumerate(m for m in space.mapped if m.module is not None)}
            modes = {}
            for mode, held in by_mode.items():
                self._serial += 1
                source = RuleSource.DWARF if mode is Mode.DWARF else RuleSource.SFRAME
                holding = partial(_holding, space, slots, held)
                unwinder = Unwinder(held, self.machine, _nothing, None, source, self.record, holding)
                modes[mode] = Known(held, Lookups(), Ends(), self._serial, unwinder)
            known = (space.version, modes, same and not self.record)
            self._spaces[space] = known
            if len(self._spaces) > SPACES_KEPT:  # the least lately walked let go
                del self._spaces[next(iter(self._spaces))]
        return known[1], known[2]

    def forget(self, space: AddressSpace) -> None:
        """Let go of what was kept for a space's walks (its process exited)."""
        self._spaces.pop(space, None)

    def _as_kernel(self, module: Module) -> Module:
        """The module as SFrame's walk has it: as the kernel's reader does, unless told otherwise."""
        view = self.kernel(module.library or "") if self.kernel is not None and module.section is not None else None
        return module if view is None else KernelModule(module, view)

    def walk(self, sample: Sample, space: AddressSpace, arch: str) -> dict[Mode, Walked] | None:
        """The sample's stack in each mode; None when it holds no user registers."""
        pc, sp = sample.registers.get(PC_NAMES[arch]), sample.registers.get(SP_NAMES[arch])
        if pc is None or sp is None:
            return None
        registers = {self.numbers[n]: v for n, v in sample.registers.items() if n in self.numbers}
        walked = {}
        modes, same = self._modes(space)
        for mode, (_, lookups, ends, serial, unwinder) in modes.items():
            if same and mode is Mode.FP:
                walked[mode] = walked[Mode.SFRAME]
                continue
            # a walk whose frames record their computations is shown, not counted: it takes no end known
            reads: list[Read] | None = None if self.record else []
            unwinder.read = _reader(sample.stack, sp, space.memory.read, reads)
            recall = None if reads is None else Recall(ends, reads, (sp, sample.stack))
            walk = Walk(unwinder, Frame(0, pc, dict(registers)), self.limit, recall=recall, lookups=lookups)
            frames = list(walk)
            named = True
            for frame in frames:
                if frame.module is None:  # code no symbol names (a PLT without symbols): still in its file
                    mapped = space.at(frame.pc)
                    frame.module = mapped.module if mapped is not None else None
                if frame.interrupted or frame.found is Found.SIGNAL_FRAME:  # its PC looked up as it is
                    named = False
            pcs = tuple([frame.pc for frame in frames])
            walked[mode] = Walked(frames, walk.stop, walk.missing_address, pcs, (serial, pcs) if named else None)
        return walked


WORD = struct.Struct("<Q")


def _holding(space: AddressSpace, slots: dict[int, int], held: list[Module], pc: int) -> list[Module]:
    """The module of the mapping holding `pc` (as `perf script` finds a sample's file): none outside
    every mapping, none where the file mapped there is not read. `slots`: each mapping's place in `held`."""
    mapped = space.at(pc)
    slot = None if mapped is None else slots.get(id(mapped))
    return [] if slot is None else [held[slot]]


def _nothing(_: int) -> int | None:
    """No memory: an unwinder's `read` until a sample gives it one."""
    return None


def _reader(
    stack: bytes, sp: int, files: Callable[[int, int], int | None], reads: list[Read] | None
) -> Callable[[int], int | None]:
    """Reads a little-endian word: from the stack copy where it holds it, else from the files' bytes;
    each noted in `reads` (address, value), if given."""
    last, word = len(stack) - WORD.size, WORD.unpack_from
    if reads is None:

        def read(address: int) -> int | None:
            offset = address - sp
            return word(stack, offset)[0] if 0 <= offset <= last else files(address, WORD.size)

        return read
    note = reads.append

    def noted(address: int) -> int | None:
        offset = address - sp
        value = word(stack, offset)[0] if 0 <= offset <= last else files(address, WORD.size)
        note((address, value))
        return value

    return noted
