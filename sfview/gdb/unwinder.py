"""An SFrame unwinder for gdb (`gdb.unwinder.Unwinder`): the caller of every frame an SFrame FDE covers.

gdb asks a Python unwinder first, before its DWARF and prologue-analysis unwinders, for every frame.
This one answers for a frame whose PC an FDE of a loaded file's `.sframe` covers, with the CFA, the
return address and the frame pointer the row gives (sfview's `Unwinder.step`), and every other
register carried over as it is (as gdb's DWARF unwinder takes the registers a row leaves unspecified:
the ABI's callee-saved ones the callee kept). Any other frame, and any frame where anything goes
wrong (a memory word gdb cannot read, a damaged section, a bug of ours), it declines (returns None):
gdb's own unwinders then take it as if this one were not there.
"""

from __future__ import annotations

import gdb
import gdb.unwinder

from sfview import ADDRESS_MASK
from sfview.gdb import inferior
from sfview.unwind.engine import Frame, Lookups, RuleSource, Unwinder

NAME = "sframe"
PC_NAMES = {"i386:x86-64": "rip"}
"""The PC register's name in gdb, by gdb's architecture name (AArch64's is `pc`)."""


class FrameId:
    """A frame's identity as gdb wants it: the CFA and the start of its function."""

    def __init__(self, sp: gdb.Value, pc: gdb.Value) -> None:
        self.sp = sp
        self.pc = pc


class SframeUnwinder(gdb.unwinder.Unwinder):
    """Unwinds the frames an SFrame FDE covers; declines every other frame."""

    def __init__(self) -> None:
        super().__init__(NAME)

    def __call__(self, pending: gdb.PendingFrame) -> gdb.UnwindInfo | None:
        try:
            return _unwind(pending)
        except Exception:  # whatever it is, gdb's own unwinders take the frame
            return None


def _unwind(pending: gdb.PendingFrame) -> gdb.UnwindInfo | None:
    walker, _ = inferior.unwinder(RuleSource.SFRAME)
    m = walker.machine
    if _SEEN.walker is not walker:  # gdb loaded or dropped files: what was looked up is stale
        _SEEN.walker, _SEEN.lookups = walker, Lookups()
    pc_name = PC_NAMES.get(pending.architecture().name(), "pc")
    values = inferior.register_values(pending.read_register, m)
    registers = {number: value for number, (value, _) in values.items()}
    pc_value = pending.read_register(pc_name)
    pc = int(pc_value) & ADDRESS_MASK
    interrupted = (pc, registers.get(m.sp)) in _SEEN.interrupted
    frame = Frame(pending.level(), pc, registers, interrupted=interrupted)
    caller, _, _ = walker.step(frame, _SEEN.lookups)
    if frame.signal and caller is not None:
        # a sigreturn trampoline, which gdb's own unwinder takes: its caller is the frame the signal
        # interrupted, whose PC is the instruction it stopped, to be looked up as it is (not less one,
        # as a return address is); gdb asks for that frame next
        _SEEN.interrupt(caller.pc, caller.registers.get(m.sp))
        return None
    if caller is None or frame.function is None or frame.module is None or frame.cfa is None:
        return None  # no FDE here (a heuristic is gdb's business), or the row gave no caller
    pointer = pc_value.type
    start = frame.function.start_address + frame.module.bias
    info = pending.create_unwind_info(FrameId(gdb.Value(frame.cfa).cast(pointer), gdb.Value(start).cast(pointer)))
    info.add_saved_register(pc_name, gdb.Value(caller.pc).cast(pointer))
    names = inferior.register_names(m.abi)
    for number, value in caller.registers.items():
        name = names.get(number) or m.name(number)
        if name == pc_name:
            continue
        held = values.get(number)
        if held is not None and held[0] == value:  # kept: gdb's own value of it, as read
            info.add_saved_register(name, held[1])
            continue
        kind = held[1].type if held is not None else pending.read_register(name).type  # gdb wants its size
        info.add_saved_register(name, gdb.Value(value).cast(kind))
    # the registers the row leaves unsaid keep their values, as gdb's DWARF unwinder takes the registers
    # a CFI row leaves unspecified (a callee-saved one, which the ABI says the callee kept, or one gdb then
    # shows a variable's entry value from)
    for number, (_, held) in values.items():
        if number not in caller.registers:
            info.add_saved_register(names[number], held)
    return info


class _Seen:
    """What the unwinder found at the PCs it met, kept from frame to frame (and stop to stop) while the
    files gdb has loaded stay the same (`inferior.unwinder` gives the same unwinder)."""

    KEPT = 1024
    """Interrupted frames remembered at most (the oldest forgotten first)."""

    def __init__(self) -> None:
        self.walker: Unwinder | None = None
        self.lookups = Lookups()
        self.interrupted: dict[tuple[int, int | None], None] = {}
        """The PC and SP of each frame a signal interrupted, seen as the caller of a sigreturn trampoline."""

    def interrupt(self, pc: int, sp: int | None) -> None:
        """Remember the frame at `pc` and `sp` as one a signal interrupted."""
        if len(self.interrupted) >= self.KEPT:
            del self.interrupted[next(iter(self.interrupted))]
        self.interrupted[pc, sp] = None


_SEEN = _Seen()
_REGISTERED: list[SframeUnwinder] = []


def enable(on: bool) -> None:
    """Register the unwinder (first, before gdb's own) or remove it; gdb forgets the frames it has unwound."""
    if on and not _REGISTERED:
        unwinder = SframeUnwinder()
        gdb.unwinder.register_unwinder(None, unwinder, replace=True)
        _REGISTERED.append(unwinder)
    elif not on and _REGISTERED:
        gdb.frame_unwinders.remove(_REGISTERED.pop())
    gdb.invalidate_cached_frames()


def enabled() -> bool:
    """Whether gdb asks the SFrame unwinder."""
    return bool(_REGISTERED)
