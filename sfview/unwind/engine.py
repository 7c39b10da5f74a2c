"""The unwinder: from a machine state, frame after frame, as the SFrame spec's appendix does it.

For each frame: find the FDE whose function holds the PC (for every frame
but the first, the PC minus one: a return address can point just past the
function that made the call), the FRE that applies there (PCINC: the last
row starting at or before it; PCMASK: the offset modulo the block size),
then compute the CFA, the return address and the caller's frame pointer
from the row's rules. The caller's SP is the CFA, its PC the return address.

Every step is kept as plain data (`Frame`, `Computation`): which FDE and FRE
were used, at which section offsets, each value with the register or memory
word it came from, so that the command line and the app's debugger can show
the arithmetic with real numbers. The walk never raises: it stops with a
`stop` reason (the outermost frame, an RA of 0, no FDE for a PC, a memory
word nobody has, a CFA that does not grow, a frame seen before, a limit asked for).

The caller's registers are a register file, as gdb keeps one: every register
the core gives is in frame 0; each step applies the row's rule to every
register it names (SFrame's CFA, RA and FP; DWARF's every column, expressions
evaluated by `sfview.dwarf.expression`), the caller's SP is the CFA, and the
callee-saved registers no rule mentions are carried over unchanged (the
ABI says the callee keeps them). A rule "saved in register N" is a `Rule`
based on N, not dereferenced: it reads the frame's N like any other.

`Module`, `Frame`, `Backtrace` and `Machine` are plain classes, not dataclasses, for the unwind's start-up
(see `sfview.unwind`).
"""

from __future__ import annotations

import bisect
import struct
from array import array
from collections.abc import Callable, Iterator
from enum import Enum
from functools import cached_property, lru_cache, partial
from operator import sub
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from sfview import ADDRESS_MASK, quantity, rule_notation
from sfview.dwarf.cfi import Unexpressible
from sfview.dwarf.tables import CfiTable, EhFrameIndex
from sfview.generated.sframe import Sframe
from sfview.sframe.model import terms
from sfview.sframe.model.rules import CFA, Kind, Rule
from sfview.sframe.model.section import Function, Row, Section
from sfview.unwind import sigframe

USER_VA_BITS = 48
"""Without a PAC mask from the core, signed return addresses keep the low 48 bits (user space on Linux)."""
SIGNED = "signed: strip the PAC bits"
LOAD = "*({:#x}) = {:#x}"
"""The arithmetic of a word loaded from a known address: `*(0x7ffc…) = 0x5555…`."""


class Module:
    """A program or shared library mapped into the process, with its SFrame section."""

    name: str
    section: Section | None
    bias: int
    """What to add to the file's addresses to get the process's (0 for a non-PIE program)."""
    name_at: Callable[[int, int], str]
    """The file's name for an address of its own (`leaf`, `leaf+0x12`, `printf@plt`), its symbol
    found at a second address (for a return address, its call's: `SymbolTable.name_at`)."""
    library: str | None
    """For a shared library, its path as the dynamic linker's list names it (`l_name`, as gdb names it after
    such a frame: `/lib/x86_64-linux-gnu/libstdc++.so.6`), else as the process mapped it."""
    cfi: Callable[[], CfiTable | EhFrameIndex | None] | None
    """The file's DWARF CFI, read when first asked for (to unwind with it instead of SFrame)."""
    function_at: Callable[[int], Symbol | None] | None
    """The file's function symbol holding an address of its own (`SymbolTable.at`): where a function
    starts, for reading its prologue."""
    debug_info: Callable[[], DebugInfo | None] | None
    """The file's DWARF debugging information (its own, or its separate debug file's), opened when first
    asked for: the names, lines and inlined calls gdb prints."""
    symbol_named: Callable[[str], tuple[int | None, int | None]] | None
    """Where the file's global symbols of a name are, and its local ones, as gdb's minimal symbols find them
    (`MinimalSymbols.named`): the functions a call site names. None: not known."""

    def __init__(
        self,
        name: str,
        section: Section | None,
        bias: int,
        name_at: Callable[[int, int], str],
        library: str | None = None,
        cfi: Callable[[], CfiTable | EhFrameIndex | None] | None = None,
        function_at: Callable[[int], Symbol | None] | None = None,
        debug_info: Callable[[], DebugInfo | None] | None = None,
    ) -> None:
        self.name = name
        self.section = section
        self.bias = bias
        self.name_at = name_at
        self.library = library
        self.cfi = cfi
        self.function_at = function_at
        self.debug_info = debug_info
        self.symbol_named = None


AnyRule = Rule | Unexpressible
"""A rule as SFrame or DWARF gives it: numbers, or (DWARF only) an expression to evaluate."""


class Rules(NamedTuple):
    """What a row says: the CFA rule, and a rule for each caller's register it mentions, in the order a
    step works them out (the RA column, the FP, then the others by number); whether the saved RA is signed;
    and the same as plain numbers (`Plan`), where they can be."""

    cfa: AnyRule
    registers: dict[int, AnyRule]
    mangled_ra: bool
    plan: Plan | None = None
    planned: Planned | None = None
    """The plan as a function (`compiled`)."""


UNDEFINED_REGISTER, CARRIED, KEPT_IN_REGISTER, COMPUTED = range(4)
"""What a `Plan` does with a caller's register: drop it (its rule is undefined); give it this frame's
value when it has one (a rule that is not a value, for a register other than the RA and the FP); give it
this frame's value, or fail (the RA or FP not a value: still in its register); or compute it."""


class Plan(NamedTuple):
    """A row's rules as the numbers a step computes with, for walks that record nothing (`Unwinder.record`
    false: a profile's thousands of walks): the CFA's base (a register, never the CFA), offset and
    whether it loads a word, then per register (in `Rules.registers`' order) what to do (`COMPUTED`…),
    its base, offset and whether it loads. None for rules a plan cannot hold (a DWARF expression, a
    signed RA, a CFA that is not a value): the step works those out as it records them."""

    cfa_base: int
    cfa_offset: int
    cfa_deref: bool
    registers: tuple[tuple[int, int, int, int, bool], ...]

    @classmethod
    def of(cls, cfa: AnyRule, registers: dict[int, AnyRule], mangled_ra: bool, ra: int, fp: int) -> Plan | None:
        if mangled_ra or not isinstance(cfa, Rule) or cfa.kind is not Kind.VALUE or cfa.base == CFA:
            return None
        planned = []
        for reg, rule in registers.items():
            if not isinstance(rule, Rule):
                return None
            if rule.kind is Kind.UNDEFINED:
                how = UNDEFINED_REGISTER
            elif rule.kind is not Kind.VALUE:
                how = KEPT_IN_REGISTER if reg in (ra, fp) else CARRIED
            else:
                how = COMPUTED
            planned.append((reg, how, rule.base, rule.offset, rule.deref))
        return cls(cfa.base, cfa.offset, cfa.deref, tuple(planned))


Planned = Callable[[dict[int, int], Callable[[int], int | None]], tuple[dict[int, int], int, int] | None]
"""A `Plan` as a function of a frame's registers and the memory's `read`: the caller's registers, the
CFA and the return address, or None where the plan finds no caller (`Unwinder._planned`)."""

COMPILED_KEPT = 4096
"""The plans' functions kept at most (`compiled`), emptied when full."""
_compiled: dict[tuple[Plan, int, int, frozenset[int]], Planned] = {}


def compiled(plan: Plan, machine: Machine) -> Planned:
    """The plan as Python code, made once per distinct plan and machine: a step by it is one call, its
    registers, offsets and loads written in, not the plan's tuples read and tested at each step.

    The caller's registers are made as the plan's loop would make them, in the same order: the frame's
    callee-saved ones, the SP (the CFA), then each register of the plan as it says (set, carried, or
    dropped); a computed RA that cannot be read, or an RA of 0 or none, is no caller."""
    key = (plan, machine.sp, machine.ra, machine.callee_saved)
    found = _compiled.get(key)
    if found is not None:
        return found

    def value_of(at: str, offset: int, deref: bool) -> str:
        return f"_read(({at} + {offset}) & MASK)" if deref else f"({at} + {offset}) & MASK"

    lines = [
        "def planned(registers, _read):",
        f"    cfa = registers.get({plan.cfa_base})",
        "    if cfa is None:",
        "        return None",
        f"    cfa = (cfa + {plan.cfa_offset}) & MASK",
    ]
    if plan.cfa_deref:
        lines += ["    cfa = _read(cfa)", "    if cfa is None:", "        return None"]
    lines += [
        "    caller = {reg: value for reg, value in registers.items() if reg in SAVED}",
        f"    caller[{machine.sp}] = cfa & MASK",
    ]
    for reg, how, base, offset, deref in plan.registers:
        if how == CARRIED:
            lines += [f"    if {reg} in registers:", f"        caller[{reg}] = registers[{reg}]"]
            continue
        if how == UNDEFINED_REGISTER:
            lines.append(f"    caller.pop({reg}, None)")
            continue
        if how == COMPUTED and base != CFA:
            # the base may be unknown: no address to work out, the register is not known
            lines += [f"    value = registers.get({base})", "    if value is not None:"]
            lines.append(f"        value = {value_of('value', offset, deref)}")
        elif how == COMPUTED:
            lines.append(f"    value = {value_of('cfa', offset, deref)}")
        else:  # KEPT_IN_REGISTER
            lines.append(f"    value = registers.get({reg})")
        missing = "return None" if reg == machine.ra else f"caller.pop({reg}, None)"
        lines += ["    if value is not None:", f"        caller[{reg}] = value", "    else:", f"        {missing}"]
    lines += [
        f"    return_address = caller.get({machine.ra})",
        "    if not return_address:",
        "        return None",
        "    return caller, cfa, return_address",
    ]
    scope = {"MASK": ADDRESS_MASK, "SAVED": machine.callee_saved}
    exec(compile("\n".join(lines), f"<plan {plan}>", "exec"), scope)  # our own code, made of numbers
    if len(_compiled) >= COMPILED_KEPT:
        _compiled.clear()
    found = _compiled[key] = scope["planned"]
    return found


def rules_of(cfa: AnyRule, registers: dict[int, AnyRule], mangled_ra: bool, machine: Machine) -> Rules:
    """A row's `Rules`, with their `Plan` where one can hold them."""
    plan = Plan.of(cfa, registers, mangled_ra, machine.ra, machine.fp)
    return Rules(cfa, registers, mangled_ra, plan, None if plan is None else compiled(plan, machine))


Words = str | Callable[[], str]
"""Words of a computation: the text, or what writes it when it is first read."""


class Computation:
    """One value worked out for a frame: `CFA = rsp + 16 = 0x7ffc…c0 + 0x10 = 0x7ffc…d0`.

    `what`: `CFA`, `RA`, `FP`, `SP` (the caller's, on the frame-pointer chain), or another register's
    name; `value`, and `address`, the memory word read when the rule loads one, are worked out with the
    step. The words saying how, `formula` (the rule with register names: `rsp + 16`, `*(CFA - 8)`,
    `unchanged`, an expression's operations) and `arithmetic` (the same with the numbers put in), are
    written when first read (`--explain`, `--json`, the debugger): a backtrace printed one line a frame
    reads none, and writing them for every frame would be a large share of its time."""

    __slots__ = ("_arithmetic", "_formula", "address", "rule", "value", "what")

    def __init__(
        self, what: str, rule: AnyRule, formula: Words, arithmetic: Words, value: int | None, address: int | None = None
    ) -> None:
        self.what, self.rule, self.value, self.address = what, rule, value, address
        self._formula, self._arithmetic = formula, arithmetic

    @property
    def formula(self) -> str:
        if not isinstance(self._formula, str):
            self._formula = self._formula()
        return self._formula

    @property
    def arithmetic(self) -> str:
        if not isinstance(self._arithmetic, str):
            self._arithmetic = self._arithmetic()
        return self._arithmetic

    @property
    def text(self) -> str:
        """One line: `CFA = rsp + 16 = 0x… + 0x10 = 0x…`, `FP unchanged: rbp = 0x…`."""
        if isinstance(self.rule, Rule) and self.rule.kind is Kind.VALUE and self.formula != SIGNED:
            padding = " (the row's padding word: the default rule)" if self.rule.padding else ""
            return f"{self.what} = {self.arithmetic}{padding}"
        return f"{self.what} {self.formula}: {self.arithmetic}"


class Found(Enum):
    """How a frame's caller was found: by the rules of the row for its PC, from the signal frame, or by a
    heuristic where no rule covers the PC (the heuristics' values are their words, as backtraces show them)."""

    RULES = "rules"
    """By the rules of the row for its PC (or not yet: the walk stopped at it, or has not stepped it)."""
    SIGNAL_FRAME = "signal frame"
    """The frame is a sigreturn trampoline (gdb's `<signal handler called>`): its caller's registers
    are the ones the kernel saved in the signal frame."""
    LINK_REGISTER = "LR (PLT stub)"
    PROLOGUE_ANALYSIS = "prologue analysis"
    FRAME_POINTER_CHAIN = "frame-pointer chain"


HEURISTICS = frozenset({Found.LINK_REGISTER, Found.PROLOGUE_ANALYSIS, Found.FRAME_POINTER_CHAIN})
"""The ways of finding a caller that are guesses, where no rule covers the PC."""


class Frame:
    """One frame of the backtrace, and how its caller was found from it."""

    number: int
    pc: int
    registers: dict[int, int]
    """The frame's known registers, by DWARF number (frame 0: all the core gives)."""
    module: Module | None
    function: Function | None
    row: Row | None
    lookup: str
    """How the row was chosen (PCINC, or the PCMASK offset in its block)."""
    computations: list[Computation]
    found: Found
    """How its caller was found."""
    dwarf: bool
    """Unwound with DWARF CFI in an SFrame walk: its code has no SFrame data."""
    interrupted: bool
    """The caller of a signal frame: its PC is the instruction the signal stopped, looked up as it is."""
    cfa: int | None
    """The CFA the step worked out (the caller's SP), for telling a loop."""

    __slots__ = (
        "cfa",
        "computations",
        "dwarf",
        "found",
        "function",
        "interrupted",
        "lookup",
        "module",
        "number",
        "pc",
        "registers",
        "row",
    )

    def __init__(
        self,
        number: int,
        pc: int,
        registers: dict[int, int],
        module: Module | None = None,
        function: Function | None = None,
        row: Row | None = None,
        lookup: str = "",
        computations: list[Computation] | None = None,
        found: Found = Found.RULES,
        dwarf: bool = False,
        interrupted: bool = False,
        cfa: int | None = None,
    ) -> None:
        self.number = number
        self.pc = pc
        self.registers = registers
        self.module = module
        self.function = function
        self.row = row
        self.lookup = lookup
        self.computations = [] if computations is None else computations
        self.found = found
        self.dwarf = dwarf
        self.interrupted = interrupted
        self.cfa = cfa

    @property
    def signal(self) -> bool:
        """A sigreturn trampoline: its caller's registers were saved by the kernel in the signal frame."""
        return self.found is Found.SIGNAL_FRAME

    @property
    def fallback(self) -> bool:
        """Its caller found by a heuristic: no FDE covered its PC (`heuristic` says which)."""
        return self.found in HEURISTICS

    @property
    def heuristic(self) -> str:
        """`frame-pointer chain`, or `LR (PLT stub)`: which guess found the caller, when no rule did; else ""."""
        return self.found.value if self.found in HEURISTICS else ""

    @property
    def lookup_pc(self) -> int:
        """The PC looked up, and named: `pc - 1` for a frame that made a call (its return address can
        point just past the function, after a call that never returns); `pc` itself for the innermost
        frame, a frame a signal interrupted and a sigreturn trampoline, none of which was called."""
        if self.number == 0 or self.interrupted or self.found is Found.SIGNAL_FRAME:
            return self.pc
        return (self.pc - 1) & ADDRESS_MASK

    def name(self) -> str:
        """`leaf`, `leaf+0x12`, or "" when nothing names the PC."""
        if self.module is None:
            return ""
        bias = self.module.bias
        return self.module.name_at((self.pc - bias) & ADDRESS_MASK, (self.lookup_pc - bias) & ADDRESS_MASK)

    def source(self) -> tuple[list[SourceFrame], bool]:
        """The functions the module's debug information says hold the PC looked up, innermost (inlined)
        first, each at its source line, and whether a line starts at it; nothing without debug information."""
        module = self.module
        info = module.debug_info() if module is not None and module.debug_info is not None else None
        if info is None:
            return [], False
        return info.frames((self.lookup_pc - module.bias) & ADDRESS_MASK)

    def changed(self, caller: Frame) -> tuple[dict[int, int], list[int]]:
        """The caller's registers whose values differ from this frame's (or that this frame lacks), and
        the numbers of those carried over unchanged."""
        changed = {n: v for n, v in caller.registers.items() if self.registers.get(n) != v}
        return changed, sorted(n for n in caller.registers if n not in changed)


class Backtrace:
    frames: list[Frame]
    stop: str
    """Why the walk ended, in words."""
    missing_address: int | None
    """When it ended for want of a memory word: that word's address (the debugger asks for it)."""

    def __init__(self, frames: list[Frame], stop: str, missing_address: int | None = None) -> None:
        self.frames = frames
        self.stop = stop
        self.missing_address = missing_address

    def __iter__(self) -> Iterator[Frame]:
        """The frames, as a `Walk` gives them: the printers take either."""
        return iter(self.frames)


class Places:
    """The CFA and PC of every frame walked, to tell a loop: the first frame that had a place, or None.

    A walk's CFAs mostly grow (each caller's frame is above its callee's): those that grow past every
    earlier one are kept in three arrays of machine words, in order, found by bisection (a fifth of a
    dict's memory on a long chain); the others (a signal frame, an AArch64 chain's
    saved FP, a value past 64 bits) in a dict."""

    def __init__(self, earlier: dict[tuple[int, int], int] | None = None) -> None:
        self.cfas, self.pcs, self.numbers = array("Q"), array("Q"), array("Q")
        self.others: dict[tuple[int, int], int] = {} if earlier is None else earlier

    def first(self, cfa: int, pc: int, number: int) -> int:
        """The number of the first frame with this CFA and PC; `number` (kept as that frame's) when none had them."""
        cfas = self.cfas
        growing = not cfas or cfa > cfas[-1]  # as CFAs mostly do: no earlier frame had this one
        if growing and not self.others and min(cfa, pc, number) >= 0 and max(cfa, pc, number) <= ADDRESS_MASK:
            cfas.append(cfa)
            self.pcs.append(pc)
            self.numbers.append(number)
            return number
        before = self.others.get((cfa, pc))
        if before is not None:
            return before
        at = bisect.bisect_left(self.cfas, cfa)
        if at < len(self.cfas) and self.cfas[at] == cfa and self.pcs[at] == pc:
            return self.numbers[at]
        if at == len(self.cfas) and min(cfa, pc, number) >= 0 and max(cfa, pc, number) <= ADDRESS_MASK:
            self.cfas.append(cfa)
            self.pcs.append(pc)
            self.numbers.append(number)
        else:
            self.others[cfa, pc] = number
        return number


if TYPE_CHECKING:
    from sfview.dwarf.cfi import CfiFunction, CfiRow
    from sfview.dwarf.source import DebugInfo, SourceFrame
    from sfview.inputs.symbols import Symbol

    SframeLookup = tuple[Module | None, Function | None, Row | None, str, Rules | None]
    """What covers a PC in SFrame: the module, the FDE and its row, how the row was chosen, and what it says."""
    DwarfLookup = tuple[Module | None, CfiFunction | None, CfiRow | None, Rules | None, str]
    """What covers a PC in DWARF CFI: the module, the FDE and its row, what the row says, and the
    frame's `lookup` words."""
T = TypeVar("T")


class Lookups:
    """What a walk found at a PC, which depends on the PC alone (and on the code the memory holds, which a
    walk does not change): the sigreturn trampoline there, the module, FDE and row that cover it. A deep
    recursion meets a few PCs over and over, and looks each up once; a walk of PCs all different looks up
    every one, and keeps the last `KEPT` of each kind at most."""

    KEPT = 4096

    def __init__(self) -> None:
        self.trampolines: dict[int, sigframe.Trampoline | None] = {}
        self.sframe: dict[int, SframeLookup] = {}
        self.dwarf: dict[tuple[int, bool], DwarfLookup] = {}
        self.rows: dict[tuple[int, str, int, int], tuple[CfiRow, Rules]] = {}
        """By module, FDE (its section and offset) and row: the row and what it says, for the PCs it covers."""

    def keep(self, table: dict, key: object, found: T) -> T:
        """`found` remembered under `key` in `table` (emptied first when it holds `KEPT`)."""
        if len(table) >= self.KEPT:
            table.clear()
        table[key] = found
        return found


class Crossings:
    """The CFA and PC of every frame the walks of a core's threads took (`--thread all`), with the thread
    and frame that took each: a walk that reaches a frame another thread's walk took says so and stops,
    so that threads whose stacks lead into one another cost each frame once, not once per thread."""

    def __init__(self) -> None:
        self.taken: dict[tuple[int, int], tuple[int, int]] = {}

    def take(self, cfa: int, pc: int, thread: int, number: int) -> tuple[int, int] | None:
        """Record frame `number` of `thread`; the (thread, frame) of another thread's walk that took it first."""
        before = self.taken.setdefault((cfa, pc), (thread, number))
        return before if before[0] != thread else None


Read = tuple[int, int | None]
"""A memory word a walk read: its address, and what it held (None: nobody has it)."""


WORDS_SPAN = 1 << 20
"""The bytes a walk's words compared at once lie in at most (`End.words`): a stack copy holds 64 KB at most."""


class End:
    """The end of a walk, from one of its frames on: the walk's frames and the index of that frame, the
    words the walk read and the index of the first read from that frame on, why it stopped and the
    word it wanted."""

    __slots__ = ("_lowest", "_words", "at", "frames", "mark", "missing_address", "reads", "stop")

    def __init__(
        self, frames: list[Frame], at: int, reads: list[Read], mark: int, stop: str, missing: int | None
    ) -> None:
        self.frames, self.at, self.reads, self.mark = frames, at, reads, mark
        self.stop, self.missing_address = stop, missing
        self._words: tuple[int, int, struct.Struct, tuple[int, ...]] | bool | None = False
        self._lowest: int | bool | None = False

    @property
    def lowest(self) -> int | None:
        """The lowest CFA of the frames the walk stepped from that frame on (None: none has one)."""
        if self._lowest is False:
            self._lowest = min((f.cfa for f in self.frames[self.at : -1] if f.cfa is not None), default=None)
        return self._lowest  # type: ignore[return-value]

    @property
    def words(self) -> tuple[int, int, struct.Struct, tuple[int, ...]] | None:
        """The words read from the frame on as one `struct` over the memory they lie in (the lowest
        address, the end, the layout, the values), to compare at once; None where they cannot be (a
        word nobody had, words that overlap, words further apart than a stack copy: the code's and the
        stack's)."""
        if self._words is False:
            found = dict(self.reads[self.mark :])
            self._words = None
            if found and None not in found.values():
                addresses = sorted(found)
                if addresses[-1] - addresses[0] <= WORDS_SPAN:
                    layout = _layout(tuple(map(sub, addresses[1:], addresses)))
                    if layout is not None:
                        values = tuple(map(found.__getitem__, addresses))
                        self._words = (addresses[0], addresses[-1] + 8, layout, values)
        return self._words  # type: ignore[return-value]


LAYOUTS_KEPT = 1024
"""The layouts of words compared at once kept at most (`_layout`), emptied when full."""
_layouts: dict[tuple[int, ...], struct.Struct | None] = {}


def _layout(gaps: tuple[int, ...]) -> struct.Struct | None:
    """The `struct` of 8-byte little-endian words the distances `gaps` apart (from one word's address to the
    next's), made once for the ends that read the same words of their frames; None where two overlap."""
    found = _layouts.get(gaps, False)
    if found is False:
        found = None if min(gaps, default=8) < 8 else struct.Struct("<Q" + "".join([f"{g - 8}xQ" for g in gaps]))
        if len(_layouts) >= LAYOUTS_KEPT:
            _layouts.clear()
        _layouts[gaps] = found
    return found


class Ends:
    """The ends of walks made before, each found again from a frame in the same state (`state`: its
    number, PC, whether a signal interrupted it, every register) whose memory holds the same words
    where that walk read: from there on, a walk is a function of these alone (and of the code, as
    `Lookups` takes it), so its frames are the same frames. A profile's samples meet the same callers
    over and over (a program's outer frames), and walk each stack's end once. Keeps the ends of `KEPT`
    frames at most, emptied when full: bounded whatever the samples. Where they are seldom found again
    (registers no rule restores, carried from the innermost frame: an SFrame walk's), looking for them
    costs more than it saves, and stops (`looking`, for each frame number on its own)."""

    KEPT = 4096
    TRIES = 1024
    """The frames an end is looked for from before asking whether it is found often enough to go on."""

    def __init__(self) -> None:
        self.known: dict[tuple, End] = {}
        self.tries: dict[int, int] = {}
        self.found: dict[int, int] = {}
        """By frame number, the looks for an end from such a frame, and the ends found."""

    def looking(self, number: int) -> bool:
        """Whether ends are looked for (and kept) from frame `number`: for the first `TRIES` frames of that
        number, then while one in eight is found (a walk's second frame, its registers mostly the innermost
        frame's, may seldom find one where its third does)."""
        tries = self.tries.get(number, 0)
        return tries < self.TRIES or self.found.get(number, 0) * 8 >= tries

    @staticmethod
    def state(frame: Frame) -> tuple:
        """What a step from a frame its callee's step made depends on, besides memory and code."""
        return frame.number, frame.pc, frame.interrupted, tuple(frame.registers.items())

    def recall(self, state: tuple, read: Callable[[int], int | None], seen: Places, recall: Recall) -> End | None:
        """The end known from a frame in `state`, if the memory holds the words it read as they were
        (compared at once where the memory `recall` holds in one piece has them all, else by `read`)
        and none of its frames has the CFA and PC of a frame before (`seen`: all below the end's CFAs,
        or each asked). Its frames had no CFA and PC twice in the walk that found them."""
        number = state[0]
        self.tries[number] = self.tries.get(number, 0) + 1
        end = self.known.get(state)
        if end is None:
            return None
        words, held = end.words, recall.held
        if words is not None and held is not None and held[0] <= words[0] and words[1] <= held[0] + len(held[1]):
            if words[2].unpack_from(held[1], words[0] - held[0]) != words[3]:
                return None
            recall.reads.extend(end.reads[end.mark :])
        else:
            reads = end.reads
            for i in range(end.mark, len(reads)):
                address, value = reads[i]
                if read(address) != value:
                    return None
        lowest = end.lowest
        if seen.others or (lowest is not None and seen.cfas and lowest <= seen.cfas[-1]):
            # a frame of the end might have the CFA and PC of one before it: as `Walk` tells a loop
            for frame in end.frames[end.at : -1]:
                if frame.cfa is not None and seen.first(frame.cfa, frame.pc, frame.number) != frame.number:
                    return None
        self.found[number] = self.found.get(number, 0) + 1
        return end

    def keep(self, frames: list[Frame], starts: list[tuple[tuple, int, int]], reads: list[Read], stop: str,
             missing: int | None) -> None:  # fmt: skip
        """A walk's end from each of its frames `starts` names (state, index in `frames`, first read)."""
        if len(self.known) + len(starts) > self.KEPT:
            self.known.clear()
        for state, at, mark in starts:
            self.known[state] = End(frames, at, reads, mark, stop, missing)


class Recall(NamedTuple):
    """What a walk needs to take the ends of walks made before and keep its own (`Ends`): the ends, the
    list where the unwinder's `read` notes each word it reads (address, value), and the memory held in
    one piece (its address and bytes: a profile's stack copy), if one, where words are compared at once:
    8-byte little-endian words, as `read` gives them there."""

    ends: Ends
    reads: list[Read]
    held: tuple[int, bytes] | None


class Walk:
    """The frames of a walk, each given once its caller is found (its lookup, rules and arithmetic filled in),
    so that it can be printed and let go; `stop` and `missing_address` are set when the last has been given.
    What it keeps besides the frame at hand: each frame's CFA and PC (`Places`), to tell a loop, and what it
    found at the PCs it met last (`Lookups`: its own, or `lookups` shared with other walks). With `recall`,
    a walk whose end is known takes it (`Ends`), and its own is kept: its frames are then kept to the end."""

    def __init__(
        self,
        unwinder: Unwinder,
        first: Frame,
        limit: int | None,
        seen: Places | None = None,
        crossings: tuple[Crossings, int] | None = None,
        recall: Recall | None = None,
        lookups: Lookups | None = None,
    ) -> None:
        self.unwinder, self.first, self.limit = unwinder, first, limit
        self.seen = Places() if seen is None else seen
        self.crossings = crossings
        """The frames of the other threads' walks, and this walk's thread (`--thread all`)."""
        self.lookups = Lookups() if lookups is None else lookups
        self.recall = recall
        self.stop = ""
        """Why the walk ended, in words ("" until it has)."""
        self.missing_address: int | None = None

    def __iter__(self) -> Iterator[Frame]:
        """`first`, then its callers, until the walk stops or there are `limit` frames (the last of which is
        given as found, not stepped)."""
        frame, limit, seen, recall = self.first, self.limit, self.seen, self.recall
        given: list[Frame] = []
        starts: list[tuple[tuple, int, int]] = []
        while limit is None or frame.number + 1 < limit:
            if recall is not None and frame.number and recall.ends.looking(frame.number):
                ends, reads = recall.ends, recall.reads
                state, mark = ends.state(frame), len(reads)
                end = ends.recall(state, self.unwinder.read, seen, recall)
                if end is not None:
                    self.stop, self.missing_address = end.stop, end.missing_address
                    ends.keep(given + end.frames[end.at :], starts, reads, end.stop, end.missing_address)
                    yield from end.frames[end.at :]
                    return
                del reads[mark:]
                starts.append((state, len(given), mark))
            caller, stop, missing = self.unwinder.step(frame, self.lookups)
            if caller is None:
                self.stop, self.missing_address = stop, missing
                self._keep(given, frame, starts)
                yield frame
                return
            if frame.cfa is not None:
                before = seen.first(frame.cfa, frame.pc, frame.number)
                if before != frame.number:
                    self.stop = f"frame #{frame.number} has the PC and CFA of frame #{before}: a loop, the walk stops"
                    yield frame
                    return
                met = (
                    self.crossings[0].take(frame.cfa, frame.pc, self.crossings[1], frame.number)
                    if self.crossings
                    else None
                )
                if met is not None:
                    self.stop = (
                        f"frame #{frame.number} has the PC and CFA of thread {met[0]}'s frame #{met[1]}: the walks"
                        " meet, this one stops"
                    )
                    yield frame
                    return
            if recall is not None:
                given.append(frame)
            yield frame
            frame = caller
        self.stop = f"stopped after {quantity(limit, 'frame')} (the limit asked for)"
        if frame.module is None:  # not stepped: its module is looked up here, to name it
            frame.module = self.unwinder.module_of(frame.lookup_pc)
        self._keep(given, frame, starts)
        yield frame

    def _keep(self, given: list[Frame], last: Frame, starts: list[tuple[tuple, int, int]]) -> None:
        if self.recall is not None and starts:
            given.append(last)
            self.recall.ends.keep(given, starts, self.recall.reads, self.stop, self.missing_address)


# The registers a called function must give back as it found them (each psABI's list), which the
# caller therefore still has where no rule says otherwise, by SFrame ABI. SP is the CFA.
_AARCH64_CALLEE_SAVED = frozenset(int(Sframe.Aarch64Reg[f"x{n}"]) for n in range(19, 30))
CALLEE_SAVED = {
    Sframe.AbiArch.amd64_endian_little: frozenset(
        int(Sframe.Amd64Reg[n]) for n in ("rbx", "rbp", "r12", "r13", "r14", "r15")
    ),
    Sframe.AbiArch.aarch64_endian_little: _AARCH64_CALLEE_SAVED,
    Sframe.AbiArch.aarch64_endian_big: _AARCH64_CALLEE_SAVED,
}


class Machine:
    """The architecture's register numbering (from the section's ABI)."""

    abi: int
    sp: int
    fp: int
    ra: int
    aarch64: bool
    sp_val_offset: int
    """The caller's SP is the CFA plus this (s390x: -160, the register save area; elsewhere 0)."""
    big_endian: bool
    """The machine's byte order (s390x): how memory words hold code."""
    fp_chain: bool
    """Frames keep a record of the caller's FP and RA where the FP points (x86-64's `push rbp; mov rbp,
    rsp`, AArch64's frame record); s390x code keeps none (its back chain is an option, off by default)."""

    def __init__(
        self,
        abi: int,
        sp: int,
        fp: int,
        ra: int,
        aarch64: bool,
        sp_val_offset: int = 0,
        big_endian: bool = False,
        fp_chain: bool = True,
    ) -> None:
        self.abi = abi
        self.sp = sp
        self.fp = fp
        self.ra = ra
        self.aarch64 = aarch64
        self.sp_val_offset = sp_val_offset
        self.big_endian = big_endian
        self.fp_chain = fp_chain

    @classmethod
    def of(cls, section: Section) -> Machine:
        abi = section.abi, section.sp_reg, section.fp_reg, section.ra_reg, section.is_aarch64
        return cls(*abi, section.sp_val_offset, not section.little_endian, not section.is_s390x)

    def name(self, regnum: int) -> str:
        return terms.register_name(self.abi, regnum)

    @cached_property
    def callee_saved(self) -> frozenset[int]:
        """Carried to the caller where no rule names them (none for an ABI without a list here)."""
        return CALLEE_SAVED.get(self.abi, frozenset())

    def kept(self, registers: dict[int, int]) -> dict[int, int]:
        """The callee-saved ones of a frame's registers: what its caller still has, where no rule says otherwise."""
        saved = self.callee_saved
        return {reg: value for reg, value in registers.items() if reg in saved}

    def what(self, regnum: int) -> str:
        """A register's part in a step: `RA` for the return-address column, `FP`, else its name."""
        return self._whats.get(regnum) or self._whats.setdefault(
            regnum, "RA" if regnum == self.ra else "FP" if regnum == self.fp else self.name(regnum)
        )

    @cached_property
    def _whats(self) -> dict[int, str]:
        """`what` of each register asked about, worked out once (a profile asks for millions)."""
        return {}

    @cached_property
    def chain_rules(self) -> tuple[Rule, Rule, Rule]:
        """The frame-pointer chain's rules: the caller's FP is the word at FP, the RA the word after it, the
        caller's SP above the record (`fp + 16`, x86-64) or at the saved FP (AArch64: the caller's record)."""
        fp, ra = Rule(Kind.VALUE, self.fp, 0, True), Rule(Kind.VALUE, self.fp, 8, True)
        return fp, ra, fp if self.aarch64 else Rule(Kind.VALUE, self.fp, 16)


class Step(NamedTuple):
    """What one step found: the caller, or None and why not (and the memory word that was wanting, if one)."""

    caller: Frame | None
    stop: str
    missing_address: int | None


class RuleSource(Enum):
    """Whose rules a walk follows (`sfview unwind --cfi`); where none has a rule, the heuristics."""

    SFRAME = "sframe"
    """SFrame alone, as the kernel's unwinder would."""
    DWARF = "dwarf"
    """The files' DWARF CFI (`.eh_frame`, `.debug_frame`) alone."""
    SFRAME_DWARF = "sframe+dwarf"
    """SFrame, and DWARF CFI for code that has no SFrame data."""


class Unwinder:
    """Walks a stack through the modules' SFrame sections (and their DWARF CFI)."""

    def __init__(
        self,
        modules: list[Module],
        machine: Machine,
        read: Callable[[int], int | None],
        pac_mask: int | None = None,
        rule_source: RuleSource = RuleSource.SFRAME_DWARF,
        record: bool = True,
        holding: Callable[[int], list[Module]] | None = None,
    ) -> None:
        self.modules = modules
        self.holding = holding
        """The modules that may hold a PC, in order (an address space's mapping there: a profile of many
        mappings finds its module by bisection, not by asking each); None: every module, in order."""
        self.rule_source = rule_source
        self.record = record
        """Whether each frame keeps its computations (the rules and their arithmetic, for `--explain`, JSON
        and the debugger); without them, a frame's caller alone (a profile's thousands of walks)."""
        """Whose rules the walk follows. Where none has a rule, the heuristics (the frame-pointer chain)."""
        self.machine = machine
        self.read = read
        """Reads the 8-byte word at an address; None where no memory is known."""
        self.pac_mask = pac_mask if pac_mask is not None else ADDRESS_MASK & ~((1 << USER_VA_BITS) - 1)

    def following(self, rule_source: RuleSource) -> Unwinder:
        """The same unwinder (modules, memory) following other rules: walks of two kinds, side by side."""
        return Unwinder(
            self.modules, self.machine, self.read, self.pac_mask, rule_source, self.record, self.holding
        )  # not `copy`: an unwind does not import it (see `sfview.unwind`)

    # The walk ---------------------------------------------------------------

    def backtrace(self, pc: int, registers: dict[int, int], limit: int | None = None) -> Backtrace:
        """Every frame from `pc` and `registers` (DWARF numbers) up to where the walk stops, or `limit` frames."""
        walk = self.frames(pc, registers, limit)
        return Backtrace(list(walk), walk.stop, walk.missing_address)

    def frames(
        self,
        pc: int,
        registers: dict[int, int],
        limit: int | None = None,
        crossings: tuple[Crossings, int] | None = None,
        lookups: Lookups | None = None,
    ) -> Walk:
        """The same frames as `backtrace`, found as they are asked for: a printer that writes each and lets
        it go holds two frames at a time, whatever the depth of the stack. `crossings`: the frames other
        threads' walks took, and this one's thread number (it stops at one of theirs); `lookups`: what
        their walks found at the PCs they met (the same code: a PC is looked up once for all)."""
        return Walk(self, Frame(0, pc, dict(registers)), limit, crossings=crossings, lookups=lookups)

    def walk(self, frames: list[Frame], limit: int | None = None) -> tuple[str, int | None]:
        """Add callers to `frames` until the walk stops (why, and the memory word it wanted), or until
        there are `limit` frames. A frame whose CFA and PC an earlier frame had is a loop: it stops."""
        seen = Places({(f.cfa, f.pc): f.number for f in frames[:-1] if f.cfa is not None})
        found = Walk(self, frames[-1], limit, seen)
        walk = iter(found)
        next(walk)  # the last frame given, which `frames` holds
        frames.extend(walk)
        return found.stop, found.missing_address

    def step(self, frame: Frame, lookups: Lookups | None = None) -> Step:
        """The caller of `frame` (filling in how it was found), or None and why not; `lookups`: what the
        walk found at the PCs it met (a step alone looks up its own)."""
        if frame.pc == 0 and frame.number > 0:
            return Step(None, ZERO_PC, None)
        lookups = Lookups() if lookups is None else lookups
        trampoline = lookups.trampolines.get(frame.pc, False)
        if trampoline is False:
            trampoline = lookups.keep(lookups.trampolines, frame.pc, self._trampoline_at(frame.pc))
        if trampoline is not None:
            frame.found = Found.SIGNAL_FRAME
            if self.rule_source is not RuleSource.SFRAME and not self.machine.aarch64:
                # x86-64: the trampoline's own CFI (glibc's `__restore_rt`, every register an expression
                # on the signal frame), where the file has some; else the kernel's signal-frame layout.
                # AArch64: the layout first, as gdb's prepended sigtramp unwinder: the vDSO's CFI for
                # `__kernel_rt_sigreturn` gives x29, x30 and the PC from the frame record, not the SP.
                found = self._dwarf_rules(frame, lookups, quiet=True)
                if isinstance(found, Rules):
                    return self._apply(frame, found)
            return self._signal_frame(frame, trampoline)
        dwarf = self.rule_source is RuleSource.DWARF
        found = self._dwarf_rules(frame, lookups) if dwarf else self._sframe_rules(frame, lookups)
        if not isinstance(found, Rules):
            return found  # a stop, or a caller found by a heuristic
        return self._apply(frame, found)

    def _trampoline_at(self, pc: int) -> sigframe.Trampoline | None:
        """The sigreturn trampoline `pc` is at one of the instructions of, if any (its bytes compared
        as the memory holds them, in the machine's byte order)."""
        order = "big" if self.machine.big_endian else "little"
        for trampoline in sigframe.trampolines(self.machine.abi):
            code = trampoline.code
            for start in ((pc - offset) & ADDRESS_MASK for offset in trampoline.starts):
                # word by word, the first that differs ends the comparison: every frame is asked this
                for at in range(0, len(code), 8):
                    word = self.read(start + at)
                    if word is None or word.to_bytes(8, order)[: len(code) - at] != code[at : at + 8]:
                        break
                else:
                    return trampoline
        return None

    def _signal_frame(self, frame: Frame, trampoline: sigframe.Trampoline) -> Step:
        """The interrupted frame, from the registers the kernel saved in the signal frame at SP."""
        m = self.machine
        frame.module, _ = self._function_for(frame.pc)
        frame.lookup = "the sigreturn trampoline: the interrupted registers are in the signal frame at SP"
        sp = frame.registers.get(m.sp)
        if sp is None:
            return Step(None, "a signal frame, but SP is not known", None)
        caller: dict[int, int] = {}
        pc = None
        for reg, offset in trampoline.saved.items():
            address = (sp + offset) & ADDRESS_MASK
            value = self.read(address)
            what = "PC" if reg == sigframe.PC else m.name(reg)
            if value is None:
                return Step(None, f"the signal frame's saved {what} needs the memory word at {address:#x}", address)
            rule = Rule(Kind.VALUE, m.sp, offset, True)
            arithmetic = f"*({m.name(m.sp)} + {offset} = {sp:#x} + {offset:#x} = {address:#x}) = {value:#x}"
            frame.computations.append(Computation(what, rule, f"*(sp + {offset})", arithmetic, value, address))
            if reg == sigframe.PC:
                pc = value
            else:
                caller[reg] = value
        assert pc is not None
        frame.cfa = caller.get(m.sp)
        return Step(Frame(frame.number + 1, pc, caller, interrupted=True), "", None)

    def _sframe_rules(self, frame: Frame, lookups: Lookups) -> Rules | Step:
        """The rules of the SFrame row for the frame's PC."""
        found = lookups.sframe.get(frame.lookup_pc)
        if found is None:
            found = lookups.keep(lookups.sframe, frame.lookup_pc, self._sframe_lookup(frame.lookup_pc))
        module, func, row, frame.lookup, rules = found
        frame.module = module
        if func is None:
            if (
                self.rule_source is not RuleSource.SFRAME
                and module is not None
                and module.cfi is not None
                and module.cfi() is not None
            ):
                # Code without SFrame data (a library built without --gsframe, as glibc is; crt files'
                # `_start`): its DWARF CFI, as gdb would, before the frame-pointer guess.
                frame.dwarf = True
                return self._dwarf_rules(frame, lookups, [module])
            return self._no_rules(frame, module)
        frame.function = func
        if row is None:
            return Step(None, f"fdes[{func.index}] covers {frame.lookup_pc:#x} but none of its rows does", None)
        frame.row = row
        if row.ra_undefined:
            return Step(None, "the outermost frame: its row says the return address is undefined", None)
        return rules

    def _sframe_lookup(self, pc: int) -> SframeLookup:
        """The module, FDE and row for `pc`, and how the row was chosen."""
        module, func = self._function_for(pc)
        if func is None:
            return module, None, None, "", None
        assert module is not None
        row = func.row_for((pc - module.bias) & ADDRESS_MASK)
        if row is None:
            return module, func, None, "", None
        m = self.machine
        rules = rules_of(row.cfa, {m.ra: row.ra, m.fp: row.fp}, row.mangled_ra, m)
        return module, func, row, self._lookup_text(func, pc - module.bias), rules

    def _dwarf_rules(
        self, frame: Frame, lookups: Lookups, modules: list[Module] | None = None, quiet: bool = False
    ) -> Rules | Step:
        """The rules of the DWARF CFI row for the frame's PC (`.eh_frame`, `.debug_frame`), in
        `modules` (all of them by default, else the one whose symbols name the PC). `quiet`: only look,
        leave the frame as it was when none."""
        pc = frame.lookup_pc
        key = (pc, modules is None)
        found = lookups.dwarf.get(key)
        if found is None:
            found = lookups.keep(lookups.dwarf, key, self._dwarf_lookup(pc, modules, lookups))
        module, fde, row, rules, frame_lookup = found
        if fde is None:
            if quiet:
                return Step(None, "", None)
            frame.module = module
            return self._no_rules(frame, module, RuleSource.DWARF)
        frame.module = module
        frame.lookup = frame_lookup
        if row is None:
            return Step(None, f"the {fde.section} FDE at +{fde.fde_offset:#x} has no row for {pc:#x}", None)
        if row.ra.kind == Kind.UNDEFINED:
            return Step(None, "the outermost frame: DWARF says the return address is undefined", None)
        return rules

    def _dwarf_lookup(self, pc: int, modules: list[Module] | None, lookups: Lookups) -> DwarfLookup:
        """The module, DWARF FDE and row for `pc`; without an FDE, the module whose symbols name it, if one. A
        row met before (for another PC it covers) is taken with its rules as `lookups` kept them."""
        owner = None
        for module in self._holding(pc) if modules is None else modules:
            address = (pc - module.bias) & ADDRESS_MASK
            table = module.cfi() if module.cfi is not None else None
            fde = table.find(address) if table is not None else None
            if fde is not None:
                text = f"DWARF CFI: the FDE at {fde.section}+{fde.fde_offset:#x} ({fde.size} bytes)"
                index = fde.row_index(address)
                if index is None:
                    return module, fde, None, None, text
                key = (id(module), fde.section, fde.fde_offset, index)
                found = lookups.rows.get(key)
                if found is None:
                    row, m = fde.rows[index], self.machine
                    others = dict(sorted(row.others.items()))
                    rules = rules_of(row.cfa, {m.ra: row.ra, m.fp: row.fp, **others}, row.ra_signed, m)
                    found = lookups.keep(lookups.rows, key, (row, rules))
                return module, fde, found[0], found[1], text
            if owner is None and module.name_at(address, address):
                owner = module
        return owner, None, None, None, ""

    def _apply(self, frame: Frame, rules: Rules) -> Step:
        """Work out the CFA, then every register the rules name; the caller's frame, or why there is none."""
        m = self.machine
        if not self.record and rules.planned is not None and not m.sp_val_offset:
            planned = self._planned(frame, rules.planned)
            if planned is not None:
                return planned
        cfa = self._value("CFA", rules.cfa, frame, None)
        if cfa.value is None:
            return Step(None, self._unknown(cfa), cfa.address)
        frame.cfa = cfa.value
        caller = m.kept(frame.registers)
        caller[m.sp] = (cfa.value + m.sp_val_offset) & ADDRESS_MASK
        if m.sp_val_offset:
            text = partial("CFA {:+d} = {:#x} - {:#x} = {:#x}".format, m.sp_val_offset, cfa.value, -m.sp_val_offset,
                           caller[m.sp])  # fmt: skip
            sp_rule = Rule(Kind.VALUE, CFA, m.sp_val_offset)
            frame.computations.append(Computation("SP", sp_rule, f"CFA {m.sp_val_offset:+d}", text, caller[m.sp]))
        for reg, rule in rules.registers.items():
            if isinstance(rule, Rule) and rule.kind is Kind.UNDEFINED:
                caller.pop(reg, None)
                continue
            if isinstance(rule, Rule) and rule.kind is not Kind.VALUE and reg not in (m.ra, m.fp):
                if reg in frame.registers:  # DW_CFA_same_value: the caller's is this frame's
                    caller[reg] = frame.registers[reg]
                continue
            comp = self._value(m.what(reg), rule, frame, cfa.value, same=reg)
            if comp.value is not None:
                caller[reg] = comp.value
            elif reg == m.ra:
                return Step(None, self._unknown(comp), comp.address)
            else:
                # Only the CFA and the RA make the caller; a register that cannot be worked out (an FP
                # restored after its `pop`, from what the frame no longer holds; an s390x FP kept in a
                # floating-point register a qemu core does not hold) is not known, as gdb says
                # `<not saved>` for it and unwinds on.
                caller.pop(reg, None)
        return_address = caller.get(m.ra)
        if return_address is None:  # a CIE whose return-address column is another register: no rule for it
            return Step(None, f"no rule gives the RA ({m.name(m.ra)}) and it is not a register the caller keeps", None)
        if rules.mangled_ra:
            return_address = self._strip(frame, rules.registers[m.ra], return_address)
        if return_address == 0:
            return Step(None, "the return address is 0: the outermost frame", None)
        sp = frame.registers.get(m.sp)
        signal = frame.found is Found.SIGNAL_FRAME
        called = frame.number > 0 and not (frame.interrupted or signal)  # its PC a return address
        if called and sp is not None and cfa.value <= sp:
            return Step(None, f"the CFA {cfa.value:#x} does not grow past SP {sp:#x}: a loop, the walk stops", None)
        if called and return_address == frame.pc:
            ra_rule = rules.registers.get(m.ra)
            if not isinstance(ra_rule, Unexpressible) and not (ra_rule is not None and ra_rule.deref):
                # the RA still in its register, its value this frame's own PC: every caller the same, the
                # CFA alone moving (a damaged row, walked with no memory to end it)
                kept = f"the RA {return_address:#x}, kept in a register, is this frame's PC"
                return Step(None, f"{kept}: a loop, the walk stops", None)
        caller[m.ra] = return_address
        return Step(Frame(frame.number + 1, return_address, caller, interrupted=signal), "", None)

    def _planned(self, frame: Frame, planned: Planned) -> Step | None:
        """`_apply` by the rules' `Plan` (its function, `compiled`), recording nothing, for the steps that
        find a caller; None (the frame left as it was) where `_apply` would stop, or would look twice (an
        RA that is the frame's PC, a CFA that does not grow): `_apply` works those out and says why."""
        registers, m = frame.registers, self.machine
        found = planned(registers, self.read)
        if found is None:
            return None
        caller, cfa, return_address = found
        signal = frame.found is Found.SIGNAL_FRAME
        if frame.number > 0 and not (frame.interrupted or signal):  # its PC a return address
            sp = registers.get(m.sp)
            if return_address == frame.pc or (sp is not None and cfa <= sp):
                return None
        frame.cfa = cfa
        return Step(Frame(frame.number + 1, return_address, caller, interrupted=signal), "", None)

    # Rules with numbers ---------------------------------------------------------

    def _value(self, what: str, rule: AnyRule, frame: Frame, cfa: int | None, same: int | None = None) -> Computation:
        """Work out one rule for `frame`, and record how (unless the unwinder records nothing)."""
        if not self.record and isinstance(rule, Rule):
            if rule.kind is not Kind.VALUE:
                return Computation(what, rule, "", "", frame.registers.get(same if same is not None else -2))
            base = cfa if rule.base == CFA else frame.registers.get(rule.base)
            if base is None:
                return Computation(what, rule, "", partial(self._unknown_words, rule), None)
            address = (base + rule.offset) & ADDRESS_MASK
            return Computation(what, rule, "", "", self.read(address), address) if rule.deref else \
                Computation(what, rule, "", "", address)  # fmt: skip
        if isinstance(rule, Unexpressible):
            comp = self._expression(what, rule, frame, cfa)
            frame.computations.append(comp)
            return comp
        formula = partial(_formula, self.machine.abi, rule)
        if rule.kind is not Kind.VALUE:
            # Not tracked (or the RA padding word): the register still holds the caller's value.
            reg = same if same is not None else -2
            value = frame.registers.get(reg)
            comp = Computation(what, rule, formula, partial(self._kept_words, reg, value), value)
        else:
            base = cfa if rule.base == CFA else frame.registers.get(rule.base)
            if base is None:
                comp = Computation(what, rule, formula, partial(self._unknown_words, rule), None)
            else:
                address = (base + rule.offset) & ADDRESS_MASK
                if rule.deref:
                    value = self.read(address)
                    comp = Computation(what, rule, formula, partial(self._sum_words, rule, base, address, value),
                                       value, address)  # fmt: skip
                else:
                    comp = Computation(what, rule, formula, partial(self._sum_words, rule, base, address), address)
        frame.computations.append(comp)
        return comp

    def _kept_words(self, reg: int, value: int | None) -> str:
        """`rbp = 0x…`: the arithmetic of a register the rule leaves as it is."""
        name = self.machine.name(reg)
        return f"{name} = {value:#x}" if value is not None else f"{name}, which is not known"

    def _unknown_words(self, rule: Rule) -> str:
        """`rbp is not known`: the arithmetic of a rule whose base register the frame lacks."""
        return f"{self.machine.name(rule.base)} is not known"

    def _sum_words(self, rule: Rule, base: int, address: int, *loaded: int | None) -> str:
        """`rsp + 16 = 0x… + 0x10 = 0x…`; with a `loaded` word, `*(CFA - 8 = …) = 0x…` (or `not in memory`)."""
        name = "CFA" if rule.base == CFA else self.machine.name(rule.base)
        sign, offset = "-" if rule.offset < 0 else "+", abs(rule.offset)
        text = f"{name} {sign} {offset} = {base:#x} {sign} {offset:#x} = {address:#x}"
        if not loaded:
            return text
        return f"*({text}) = {loaded[0]:#x}" if loaded[0] is not None else f"*({text}) = not in memory"

    def _expression(self, what: str, rule: Unexpressible, frame: Frame, cfa: int | None) -> Computation:
        """A DWARF expression rule, evaluated: the CFA's own (`DW_CFA_def_cfa_expression`), or a
        register's, which starts with the CFA on the stack and gives its value (`val_expression`) or
        the address it is saved at (`expression`)."""
        from sfview.dwarf import expression  # the evaluator loads with the first expression met

        m = self.machine
        formula = f"[{expression.describe(rule.expr, m.name)}]"
        if rule.what == "expression":
            formula = f"*{formula}"
        initial = () if rule.what == "CFA expression" or cfa is None else (cfa,)
        result = expression.evaluate(
            rule.expr, frame.registers.get, self._read_sized, initial=initial, register_name=m.name
        )
        steps = "; ".join(result.trace)
        if result.value is None:
            return Computation(what, rule, formula, f"{steps}: {result.stop}" if steps else result.stop, None,
                               result.missing_address)  # fmt: skip
        if rule.what != "expression":
            return Computation(what, rule, formula, f"{steps} = {result.value:#x}", result.value)
        value = self.read(result.value)
        loaded = f"{value:#x}" if value is not None else "not in memory"
        return Computation(what, rule, formula, f"{steps}; *({result.value:#x}) = {loaded}", value, result.value)

    def _read_sized(self, address: int, size: int) -> int | None:
        """`size` bytes at `address` (for `DW_OP_deref_size`), from the 8-byte word there (little-endian)."""
        word = self.read(address)
        return None if word is None else word & ((1 << (8 * min(size, 8))) - 1)

    def _strip(self, frame: Frame, rule: AnyRule, signed: int) -> int:
        """A signed return address without its authentication code, the masking recorded."""
        keep = ~self.pac_mask & ADDRESS_MASK
        stripped = signed & keep
        words = partial("{:#x} & {:#x} = {:#x}".format, signed, keep, stripped)
        frame.computations.append(Computation("RA", rule, SIGNED, words, stripped))
        return stripped

    @staticmethod
    def _unknown(comp: Computation) -> str:
        if comp.address is not None and comp.value is None:
            return f"the {comp.what} needs the memory word at {comp.address:#x}, which nobody has given"
        return f"the {comp.what} cannot be computed: {comp.arithmetic}"

    # Finding the function ---------------------------------------------------------

    def name_at(self, pc: int, lookup: int | None = None) -> str:
        """What the modules call `pc` (`leaf+0x11`), "" when none does; `lookup`: where to find its
        symbol (a return address's is its call's, `pc - 1`)."""
        for module in self._holding(pc):
            address = (pc - module.bias) & ADDRESS_MASK
            name = module.name_at(address, ((pc if lookup is None else lookup) - module.bias) & ADDRESS_MASK)
            if name:
                return name
        return ""

    def _holding(self, pc: int) -> list[Module]:
        return self.modules if self.holding is None else self.holding(pc)

    def module_of(self, pc: int) -> Module | None:
        """The module holding `pc`: its FDE's, else the one whose symbols name it."""
        return self._function_for(pc)[0]

    def _function_for(self, pc: int) -> tuple[Module | None, Function | None]:
        """The module and FDE for `pc`: the first module whose section has a function there."""
        owner = None
        for module in self._holding(pc):
            address = (pc - module.bias) & ADDRESS_MASK
            func = module.section.find_function(address) if module.section is not None else None
            if func is not None:
                return module, func
            if owner is None and module.name_at(address, address):
                owner = module  # no FDE, but a symbol of this module names the PC
        return owner, None

    @staticmethod
    def _lookup_text(func: Function, offset: int) -> str:
        offset = (offset - func.start_address) & ADDRESS_MASK
        if func.pcmask and func.block_size:
            size = func.block_size
            implicit = "" if func.rep_size else " (version 1: no rep_size, the AMD64 PLT entry's)"
            return f"PCMASK: offset {offset:#x} % {size}{implicit} = {offset % size:#x} in the repeated block"
        if func.pcmask:
            return f"PCMASK with rep_size 0: offset {offset:#x}, not reduced"
        return f"PCINC: offset {offset:#x} into the function"

    # Heuristics, where no rule covers the PC ----------------------------------------

    def _no_rules(self, frame: Frame, module: Module | None, looked_in: RuleSource = RuleSource.SFRAME) -> Step:
        """No FDE for the PC in the data `looked_in` (SFrame, or DWARF CFI): on AArch64, frame 0 in a PLT
        stub returns through LR (a stub saves nothing, as gdb's prologue analysis finds); otherwise the
        frame-pointer chain (on x86-64, after DWARF CFI, gdb's prologue analysis first)."""
        sframe = looked_in is RuleSource.SFRAME
        where = f"{frame.lookup_pc:#x}"
        if module is not None:
            lacking = module.section is None if sframe else module.cfi is None or module.cfi() is None
            data = "SFrame" if sframe else "DWARF CFI"
            where += f" (in {module.name}{f', which has no {data} data' if lacking else ''})"
        if self.machine.aarch64 and frame.number == 0 and module is not None and in_stub(frame.name()):
            return self._link_register(frame, where)
        if not sframe and self.machine.abi == Sframe.AbiArch.amd64_endian_little and module is not None:
            analysed = self._amd64_prologue(frame, where)
            if analysed is not None:
                return analysed
        if not self.machine.fp_chain:
            abi = terms.abi_name(self.machine.abi)
            return Step(None, f"no FDE covers {where}, and {abi} code keeps no frame-pointer chain", None)
        return self._frame_pointer_chain(frame, where)

    def _link_register(self, frame: Frame, where: str) -> Step:
        m = self.machine
        lr, sp = frame.registers.get(m.ra), frame.registers.get(m.sp)
        if lr is None or sp is None:
            return Step(None, f"no FDE covers {where}, a PLT stub, and LR or SP is not known", None)
        frame.found = Found.LINK_REGISTER
        frame.lookup = f"no FDE covers {where}: a PLT stub saves nothing, the return address is in LR"
        comp = Computation("RA", Rule(Kind.SAME), "unchanged (in LR)", f"{m.name(m.ra)} = {lr:#x}", lr)
        frame.computations.append(comp)
        frame.cfa = sp
        caller = m.kept(frame.registers)
        caller[m.sp] = sp
        if lr & self.pac_mask:
            lr = self._strip(frame, comp.rule, lr)
        caller[m.ra] = lr
        return Step(Frame(frame.number + 1, lr, caller), "", None)

    def _amd64_prologue_state(self, frame: Frame) -> tuple[int, bool] | None:
        """Where the frame's function starts, and whether its `push %rbp` has run; None when `mov
        %rsp,%rbp` has run too (a frame pointer), or when no function symbol holds the PC (the symbol
        that names it, at its lookup PC) or it is a PLT's."""
        module = frame.module
        if module is None or module.function_at is None:
            return None
        symbol = module.function_at((frame.lookup_pc - module.bias) & ADDRESS_MASK)
        if symbol is None or not symbol.name or symbol.name.startswith(".") or in_stub(symbol.name):
            return None
        start = (symbol.address + module.bias) & ADDRESS_MASK
        word = self.read(start)
        if word is None:
            return None
        code = word.to_bytes(8, "little")
        at = len(ENDBR64) if code.startswith(ENDBR64) else 0
        pushed = code[at] == PUSH_RBP and frame.pc > start + at
        if pushed and code[at + 1 : at + 4] in MOV_RSP_RBP and frame.pc > start + at + 1:
            return None
        return start, pushed

    def _amd64_prologue(self, frame: Frame, where: str) -> Step | None:
        """Code no CFI covers (hand-written assembly, glibc's `clone3` after its `cfi_endproc`), on
        x86-64, as gdb's prologue analysis (`amd64_analyze_prologue`) reads it: from the function's
        first bytes, whether `push %rbp` and `mov %rsp,%rbp` have run at the PC. Both: rbp is the frame
        pointer (None: the frame-pointer chain). Otherwise the function is frameless and its return
        address is at SP, or at SP + 8 above the pushed rbp. None without a symbol for the PC."""
        m = self.machine
        sp = frame.registers.get(m.sp)
        analysed = self._amd64_prologue_state(frame)
        if analysed is None or sp is None:
            return None
        start, pushed = analysed
        done = "push %rbp, no mov %rsp,%rbp" if pushed else "nothing pushed"
        frame.lookup = f"no FDE covers {where}: its prologue from {start:#x} ({done}) leaves the RA at SP" + (
            " + 8" if pushed else ""
        )
        caller = m.kept(frame.registers)
        if pushed:
            saved_fp = self.read(sp)
            frame.computations.append(
                Computation("FP", Rule(Kind.VALUE, m.sp, 0, True), "*(rsp)", f"*(rsp = {sp:#x}) = {saved_fp:#x}"
                            if saved_fp is not None else f"*(rsp = {sp:#x}): not in memory", saved_fp, sp)
            )  # fmt: skip
            if saved_fp is None:
                return Step(None, f"no FDE covers {where}; the prologue analysis needs the word at {sp:#x}", sp)
            caller[m.fp] = saved_fp
        ra_at = sp + (8 if pushed else 0)
        ra = self.read(ra_at)
        if ra is None:
            return Step(None, f"no FDE covers {where}; the prologue analysis needs the word at {ra_at:#x}", ra_at)
        if ra and not self.name_at(ra, ra - 1):
            # ld.so's and crt's `_start` push nothing and have no CFI: the word at SP is argc (gdb
            # prints it, and the stack words after it, as frames). A 0 there (a thread just made, at
            # `clone3`'s first instruction after its syscall: its new stack holds nothing yet) is a frame
            # gdb prints (`0x0000000000000000 in ?? ()`) and ends its walk at (`ZERO_PC`).
            return Step(
                None, f"no FDE covers {where}; the prologue analysis finds {ra:#x} at {ra_at:#x}, in no module", None
            )
        formula, at_text = (
            ("*(rsp + 8)", f"rsp + 8 = {sp:#x} + 0x8 = {ra_at:#x}") if pushed else ("*(rsp)", f"rsp = {sp:#x}")
        )
        frame.computations.append(
            Computation("RA", Rule(Kind.VALUE, m.sp, ra_at - sp, True), formula, f"*({at_text}) = {ra:#x}", ra, ra_at)
        )
        frame.cfa = ra_at + 8
        above = frame.cfa - sp
        frame.computations.append(
            Computation("SP", Rule(Kind.VALUE, m.sp, above), f"rsp + {above}",
                        f"rsp + {above} = {sp:#x} + {above:#x} = {frame.cfa:#x}", frame.cfa)
        )  # fmt: skip
        caller.update({m.sp: frame.cfa, m.ra: ra})
        frame.found = Found.PROLOGUE_ANALYSIS
        return Step(Frame(frame.number + 1, ra, caller), "", None)

    def _frame_pointer_chain(self, frame: Frame, where: str) -> Step:
        """Follow the frame pointer, if it looks like one (saved FP, then RA, above it).

        The chain goes on whatever the PCs it meets: an RA in no module (JIT code keeps frame pointers; perf's
        user-stack walk follows them there too) is a frame like another. gdb is no guide here: at a PC no
        function holds, `amd64_frame_cache_1` takes the frame as frameless (the RA at SP, not the chain), and
        the walk it then prints stops where two frames unwind the PC from one stack slot (`frame.c`,
        `UNWIND_NO_SAVED_PC`: "frame did not save the PC"), after two frames in no module. On x86-64 each
        step takes a record at least 16 bytes above the last (FP >= SP, the caller's SP FP + 16): the walk
        ends within the stack the core holds; a chain that comes back on itself is a loop `Places` ends."""
        m = self.machine
        fp, sp = frame.registers.get(m.fp), frame.registers.get(m.sp)
        if not fp or sp is None or fp < sp or fp % 8:
            return Step(None, f"no FDE covers {where}, and the frame pointer does not point into the stack", None)
        saved_fp, ra = self.read(fp), self.read(fp + 8)
        if ra is None or saved_fp is None:
            return Step(None, f"no FDE covers {where}; the frame-pointer chain needs the words at {fp:#x}", fp)
        if not ra:
            return Step(None, f"no FDE covers {where}; the frame-pointer chain ends (RA 0)", None)
        frame.found = Found.FRAME_POINTER_CHAIN
        frame.lookup = f"no FDE covers {where}: frame-pointer chain"
        fp_rule, ra_rule, sp_rule = m.chain_rules
        frame.computations.append(Computation("FP", fp_rule, "*(fp)", partial(LOAD.format, fp, saved_fp), saved_fp, fp))
        frame.computations.append(Computation("RA", ra_rule, "*(fp + 8)", partial(LOAD.format, fp + 8, ra), ra, fp + 8))
        if m.aarch64:
            # A saved LR may be signed (pac-ret): the chain has no row to say so, and stripping an
            # unsigned user address changes nothing.
            if ra & self.pac_mask:
                ra = self._strip(frame, ra_rule, ra)
            # The frame record {FP, LR} sits at the bottom of a frame (`stp x29, x30, [sp, -N]!;
            # mov x29, sp`), so the caller's SP at the call is where the caller's record is: the
            # saved FP. (FP + 16 is x86-64's: `push rbp; mov rbp, rsp` puts the record at the top.)
            sp_formula, caller_sp = "*(fp)", saved_fp
        else:
            sp_formula, caller_sp = "fp + 16", fp + 16
        frame.computations.append(
            Computation("SP", sp_rule, sp_formula, partial("{} = {:#x}".format, sp_formula, caller_sp), caller_sp)
        )
        frame.cfa = caller_sp
        caller = m.kept(frame.registers)
        caller.update({m.sp: caller_sp, m.fp: saved_fp, m.ra: ra})
        return Step(Frame(frame.number + 1, ra, caller), "", None)


_formula = lru_cache(maxsize=4096)(rule_notation.formula)
"""A rule's formula (`*(CFA - 8)`), written once for the few rules a walk meets over and over."""


ZERO_PC = "the PC is 0: the outermost frame, as gdb ends a walk at a caller whose PC is 0 (after printing it)"
"""Why a walk ends at a frame whose PC is 0 (its callee's prologue analysis read 0 for its return address)."""

PLT_SECTIONS = (".plt", ".iplt", ".plt.sec", ".plt.got")
ENDBR64 = bytes.fromhex("f30f1efa")
PUSH_RBP = 0x55
MOV_RSP_RBP = (bytes.fromhex("4889e5"), bytes.fromhex("488bec"))
"""The x86-64 prologue gdb's `amd64_analyze_prologue` looks for: `endbr64`, `push %rbp`, `mov %rsp,%rbp`
(either encoding)."""


def in_stub(name: str) -> bool:
    """Whether a PC's name puts it in a PLT stub (`puts@plt`, or a PLT section's own bytes): the engine's
    heuristics and `sframe bt`'s reasons ask."""
    return "@plt" in name or name.split("+")[0] in PLT_SECTIONS
