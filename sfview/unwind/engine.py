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
word nobody has, a CFA that does not grow, the depth limit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from sfview.sframe import describe
from sfview.sframe.rules import CFA, SAME, Kind, Rule
from sfview.sframe.section import Function, Row, Section
from sfview.unwind import sigframe

if TYPE_CHECKING:
    from sfview.dwarf.cfi import CfiTable, EhFrameIndex

ADDRESS_MASK = (1 << 64) - 1
USER_VA_BITS = 48
"""Without a PAC mask from the core, signed return addresses keep the low 48 bits (user space on Linux)."""
DEPTH_LIMIT = 256
SIGNED = "signed: strip the PAC bits"


@dataclass
class Module:
    """A program or shared library mapped into the process, with its SFrame section."""

    name: str
    section: Section | None
    bias: int
    """What to add to the file's addresses to get the process's (0 for a non-PIE program)."""
    name_at: Callable[[int, int], str]
    """The file's name for an address of its own (`leaf`, `leaf+0x12`, `printf@plt`), its symbol
    found at a second address (for a return address, its call's: `SymbolTable.name_at`)."""
    library: str | None = None
    """For a shared library, its path as the process mapped it (gdb names it after such a frame)."""
    cfi: Callable[[], CfiTable | EhFrameIndex | None] | None = None
    """The file's DWARF CFI, read when first asked for (to unwind with it instead of SFrame)."""


class Rules(NamedTuple):
    """What a row says: the CFA, FP and RA rules, and whether the saved RA is signed."""

    cfa: Rule
    fp: Rule
    ra: Rule
    mangled_ra: bool


@dataclass(frozen=True)
class Computation:
    """One value worked out for a frame: `CFA = rsp + 16 = 0x7ffc…c0 + 0x10 = 0x7ffc…d0`."""

    what: str
    """`CFA`, `RA`, `FP`, or `SP` (the caller's, on the frame-pointer chain)."""
    rule: Rule
    formula: str
    """The rule with register names: `rsp + 16`, `*(CFA - 8)`, `unchanged`."""
    arithmetic: str
    """The same with the numbers put in."""
    value: int | None
    address: int | None = None
    """The memory word read, when the rule loads one."""

    @property
    def text(self) -> str:
        """One line: `CFA = rsp + 16 = 0x… + 0x10 = 0x…`, `FP unchanged: rbp = 0x…`."""
        if self.rule.kind is Kind.VALUE and self.formula != SIGNED:
            padding = " (the row's padding word: the default rule)" if self.rule.padding else ""
            return f"{self.what} = {self.arithmetic}{padding}"
        return f"{self.what} {self.formula}: {self.arithmetic}"


@dataclass
class Frame:
    """One frame of the backtrace, and how its caller was found from it."""

    number: int
    pc: int
    registers: dict[int, int]
    """The frame's known registers, by DWARF number."""
    module: Module | None = None
    function: Function | None = None
    row: Row | None = None
    lookup: str = ""
    """How the row was chosen (PCINC, or the PCMASK offset in its block)."""
    computations: list[Computation] = field(default_factory=list)
    fallback: bool = False
    """Found by following the frame-pointer chain: no FDE covered its PC."""
    signal: bool = False
    """A sigreturn trampoline (gdb's `<signal handler called>`): its caller's registers were saved
    by the kernel in the signal frame."""
    dwarf: bool = False
    """Unwound with DWARF CFI in an SFrame walk: its code has no SFrame data."""
    interrupted: bool = False
    """The caller of a signal frame: its PC is the instruction the signal stopped, looked up as it is."""

    @property
    def lookup_pc(self) -> int:
        """The PC looked up, and named: `pc - 1` for a frame that made a call (its return address can
        point just past the function, after a call that never returns); `pc` itself for the innermost
        frame, a frame a signal interrupted and a sigreturn trampoline, none of which was called."""
        if self.number == 0 or self.interrupted or self.signal:
            return self.pc
        return (self.pc - 1) & ADDRESS_MASK

    def name(self) -> str:
        """`leaf`, `leaf+0x12`, or "" when nothing names the PC."""
        if self.module is None:
            return ""
        bias = self.module.bias
        return self.module.name_at((self.pc - bias) & ADDRESS_MASK, (self.lookup_pc - bias) & ADDRESS_MASK)


@dataclass
class Backtrace:
    frames: list[Frame]
    stop: str
    """Why the walk ended, in words."""
    missing_address: int | None = None
    """When it ended for want of a memory word: that word's address (the debugger asks for it)."""


@dataclass
class Machine:
    """The architecture's register numbering (from the section's ABI)."""

    abi: int
    sp: int
    fp: int
    ra: int
    aarch64: bool
    sp_val_offset: int = 0
    """The caller's SP is the CFA plus this (s390x: -160, the register save area; elsewhere 0)."""
    big_endian: bool = False
    """The machine's byte order (s390x): how memory words hold code."""
    fp_chain: bool = True
    """Frames keep a record of the caller's FP and RA where the FP points (x86-64's `push rbp; mov rbp,
    rsp`, AArch64's frame record); s390x code keeps none (its back chain is an option, off by default)."""

    @classmethod
    def of(cls, section: Section) -> Machine:
        abi = section.abi, section.sp_reg, section.fp_reg, section.ra_reg, section.is_aarch64
        return cls(*abi, section.sp_val_offset, not section.little_endian, not section.is_s390x)

    def name(self, regnum: int) -> str:
        return describe.register_name(self.abi, regnum)


class Unwinder:
    """Walks a stack through the modules' SFrame sections."""

    def __init__(
        self,
        modules: list[Module],
        machine: Machine,
        read: Callable[[int], int | None],
        pac_mask: int | None = None,
        cfi: str = "sframe+dwarf",
    ) -> None:
        self.modules = modules
        self.cfi = cfi
        """Whose rules the walk follows: `sframe+dwarf` (SFrame, and DWARF CFI for code that has no
        SFrame data), `sframe` (SFrame alone, as the kernel's unwinder would), or `dwarf` (the files'
        `.eh_frame` and `.debug_frame`). Where neither has a rule, the frame-pointer chain."""
        self.machine = machine
        self.read = read
        """Reads the 8-byte word at an address; None where no memory is known."""
        self.pac_mask = pac_mask if pac_mask is not None else ADDRESS_MASK & ~((1 << USER_VA_BITS) - 1)

    # The walk ---------------------------------------------------------------

    def backtrace(self, pc: int, registers: dict[int, int], limit: int = DEPTH_LIMIT) -> Backtrace:
        """Every frame from `pc` and `registers` (DWARF numbers) up to where the walk stops."""
        frames: list[Frame] = []
        frame = Frame(0, pc, dict(registers))
        while True:
            frames.append(frame)
            caller, stop, missing = self.step(frame)
            if caller is None:
                return Backtrace(frames, stop, missing)
            if len(frames) >= limit:
                return Backtrace(frames, f"stopped after {limit} frames (the depth limit)")
            frame = caller

    def step(self, frame: Frame) -> tuple[Frame | None, str, int | None]:
        """The caller of `frame` (filling in how it was found), or None and why not."""
        trampoline = self._at_trampoline(frame.pc)
        if trampoline is not None:
            return self._signal_frame(frame, trampoline)
        found = self._dwarf_rules(frame) if self.cfi == "dwarf" else self._sframe_rules(frame)
        if not isinstance(found, Rules):
            return found  # a stop, or a caller found by the frame-pointer chain
        return self._apply(frame, found)

    def _at_trampoline(self, pc: int) -> sigframe.Trampoline | None:
        """The sigreturn trampoline whose first instruction is at `pc`, if one is."""
        order = "big" if self.machine.big_endian else "little"
        for trampoline in sigframe.trampolines(self.machine.abi):
            code = trampoline.code
            words = [self.read(pc + offset) for offset in range(0, len(code), 8)]
            if None in words:
                continue
            held = b"".join(word.to_bytes(8, order) for word in words if word is not None)
            if held.startswith(code):
                return trampoline
        return None

    def _signal_frame(self, frame: Frame, trampoline: sigframe.Trampoline) -> tuple[Frame | None, str, int | None]:
        """The interrupted frame, from the registers the kernel saved in the signal frame at SP."""
        m = self.machine
        frame.signal = True
        frame.module, _ = self._function_for(frame.pc)
        frame.lookup = "the sigreturn trampoline: the interrupted registers are in the signal frame at SP"
        sp = frame.registers.get(m.sp)
        if sp is None:
            return None, "a signal frame, but SP is not known", None
        caller: dict[int, int] = {}
        pc = None
        for reg, offset in trampoline.saved.items():
            address = (sp + offset) & ADDRESS_MASK
            value = self.read(address)
            what = "PC" if reg == sigframe.PC else m.name(reg)
            if value is None:
                return None, f"the signal frame's saved {what} needs the memory word at {address:#x}", address
            rule = Rule(Kind.VALUE, m.sp, offset, True)
            arithmetic = f"*({m.name(m.sp)} + {offset} = {sp:#x} + {offset:#x} = {address:#x}) = {value:#x}"
            frame.computations.append(Computation(what, rule, f"*(sp + {offset})", arithmetic, value, address))
            if reg == sigframe.PC:
                pc = value
            else:
                caller[reg] = value
        assert pc is not None
        return Frame(frame.number + 1, pc, caller, interrupted=True), "", None

    def _sframe_rules(self, frame: Frame) -> Rules | tuple[Frame | None, str, int | None]:
        """The rules of the SFrame row for the frame's PC."""
        module, func = self._function_for(frame.lookup_pc)
        frame.module = module
        if func is None:
            if self.cfi != "sframe" and module is not None and module.cfi is not None and module.cfi() is not None:
                # Code without SFrame data (a library built without --gsframe, as glibc is; crt files'
                # `_start`): its DWARF CFI, as gdb would, before the frame-pointer guess.
                frame.dwarf = True
                return self._dwarf_rules(frame, [module])
            return self._frame_pointer_chain(frame, module)
        frame.function = func
        assert module is not None
        row = func.row_for((frame.lookup_pc - module.bias) & ADDRESS_MASK)
        if row is None:
            return None, f"fdes[{func.index}] covers {frame.lookup_pc:#x} but none of its rows does", None
        frame.row = row
        frame.lookup = self._lookup_text(func, frame.lookup_pc - module.bias)
        if row.ra_undefined:
            return None, "the outermost frame: its row says the return address is undefined", None
        return Rules(row.cfa, row.fp, row.ra, row.mangled_ra)

    def _dwarf_rules(
        self, frame: Frame, modules: list[Module] | None = None
    ) -> Rules | tuple[Frame | None, str, int | None]:
        """The rules of the DWARF CFI row for the frame's PC (`.eh_frame`, `.debug_frame`), in
        `modules` (all of them by default)."""
        owner = None
        for module in self.modules if modules is None else modules:
            address = (frame.lookup_pc - module.bias) & ADDRESS_MASK
            table = module.cfi() if module.cfi is not None else None
            fde = table.find(address) if table is not None else None
            if fde is not None:
                break
            if owner is None and module.name_at(address, address):
                owner = module
        else:
            frame.module = owner
            return self._frame_pointer_chain(frame, owner, "DWARF CFI")
        frame.module = module
        row = fde.row_for(address)
        frame.lookup = f"DWARF CFI: the FDE at {fde.section}+{fde.fde_offset:#x} ({fde.size} bytes)"
        if row is None:
            return None, f"the {fde.section} FDE at +{fde.fde_offset:#x} has no row for {frame.lookup_pc:#x}", None
        for what, rule in (("CFA", row.cfa), ("RA", row.ra)):
            if not isinstance(rule, Rule):
                return None, f"DWARF gives the {what} here as a {rule.what}, which sfview does not evaluate", None
        if row.ra.kind is Kind.UNDEFINED:
            return None, "the outermost frame: DWARF says the return address is undefined", None
        fp = row.fp if isinstance(row.fp, Rule) else SAME
        return Rules(row.cfa, fp, row.ra, False)

    def _apply(self, frame: Frame, rules: Rules) -> tuple[Frame | None, str, int | None]:
        """Work out the CFA, RA and FP from `rules`; the caller's frame, or why there is none."""
        m = self.machine
        cfa = self._value("CFA", rules.cfa, frame, None)
        if cfa.value is None:
            return None, self._unknown(cfa), cfa.address
        ra = self._value("RA", rules.ra, frame, cfa.value, same=m.ra)
        if ra.value is None:
            return None, self._unknown(ra), ra.address
        fp = self._value("FP", rules.fp, frame, cfa.value, same=m.fp)
        if fp.value is None and rules.fp.kind is Kind.VALUE and fp.address is not None:
            return None, self._unknown(fp), fp.address
        # An FP kept in a register the state lacks (s390x leaf functions keep r11 in a floating-point
        # register, which a qemu core does not hold): the caller's FP is not known, as gdb has it
        # "<unavailable>", and the walk goes on until a rule needs it.
        return_address = ra.value
        if rules.mangled_ra and return_address is not None:
            return_address = self._strip(frame, rules.ra, return_address)
        if return_address == 0:
            return None, "the return address is 0: the outermost frame", None
        sp = frame.registers.get(m.sp)
        if frame.number > 0 and not frame.interrupted and sp is not None and cfa.value <= sp:
            return None, f"the CFA {cfa.value:#x} does not grow past SP {sp:#x}: a loop, the walk stops", None
        caller = {m.sp: (cfa.value + m.sp_val_offset) & ADDRESS_MASK}
        if m.sp_val_offset:
            text = f"CFA {m.sp_val_offset:+d} = {cfa.value:#x} - {-m.sp_val_offset:#x} = {caller[m.sp]:#x}"
            sp_rule = Rule(Kind.VALUE, CFA, m.sp_val_offset)
            frame.computations.append(Computation("SP", sp_rule, f"CFA {m.sp_val_offset:+d}", text, caller[m.sp]))
        if fp.value is not None:
            caller[m.fp] = fp.value
        return Frame(frame.number + 1, return_address, caller), "", None

    # Rules with numbers ---------------------------------------------------------

    def _value(self, what: str, rule: Rule, frame: Frame, cfa: int | None, same: int | None = None) -> Computation:
        """Work out one rule for `frame`, and record how."""
        m = self.machine
        formula = describe.formula(m.abi, rule)
        if rule.kind is not Kind.VALUE:
            # Not tracked (or the RA padding word): the register still holds the caller's value.
            reg = same if same is not None else -2
            value = frame.registers.get(reg)
            text = f"{m.name(reg)} = {value:#x}" if value is not None else f"{m.name(reg)}, which is not known"
            comp = Computation(what, rule, formula, text, value)
        else:
            base = cfa if rule.base == CFA else frame.registers.get(rule.base)
            base_name = "CFA" if rule.base == CFA else m.name(rule.base)
            if base is None:
                comp = Computation(what, rule, formula, f"{base_name} is not known", None)
            else:
                address = (base + rule.offset) & ADDRESS_MASK
                sign = "-" if rule.offset < 0 else "+"
                sum_text = (
                    f"{base_name} {sign} {abs(rule.offset)} = {base:#x} {sign} {abs(rule.offset):#x} = {address:#x}"
                )
                if rule.deref:
                    value = self.read(address)
                    loaded = f"{value:#x}" if value is not None else "not in memory"
                    comp = Computation(what, rule, formula, f"*({sum_text}) = {loaded}", value, address)
                else:
                    comp = Computation(what, rule, formula, sum_text, address)
        frame.computations.append(comp)
        return comp

    def _strip(self, frame: Frame, rule: Rule, signed: int) -> int:
        """A signed return address without its authentication code, the masking recorded."""
        keep = ~self.pac_mask & ADDRESS_MASK
        stripped = signed & keep
        frame.computations.append(Computation("RA", rule, SIGNED, f"{signed:#x} & {keep:#x} = {stripped:#x}", stripped))
        return stripped

    @staticmethod
    def _unknown(comp: Computation) -> str:
        if comp.address is not None:
            return f"the {comp.what} needs the memory word at {comp.address:#x}, which nobody has given"
        return f"the {comp.what} cannot be computed: {comp.arithmetic}"

    # Finding the function ---------------------------------------------------------

    def name_at(self, pc: int, lookup: int | None = None) -> str:
        """What the modules call `pc` (`leaf+0x11`), "" when none does; `lookup`: where to find its
        symbol (a return address's is its call's, `pc - 1`)."""
        for module in self.modules:
            address = (pc - module.bias) & ADDRESS_MASK
            name = module.name_at(address, ((pc if lookup is None else lookup) - module.bias) & ADDRESS_MASK)
            if name:
                return name
        return ""

    def _function_for(self, pc: int) -> tuple[Module | None, Function | None]:
        """The module and FDE for `pc`: the first module whose section has a function there."""
        owner = None
        for module in self.modules:
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

    def _frame_pointer_chain(
        self, frame: Frame, module: Module | None, data: str = "SFrame"
    ) -> tuple[Frame | None, str, int | None]:
        """No FDE for the PC: follow the frame pointer, if it looks like one (saved FP, then RA, above it)."""
        m = self.machine
        where = f"{frame.lookup_pc:#x}"
        if module is not None:
            lacking = module.section is None if data == "SFrame" else module.cfi is None or module.cfi() is None
            where += f" (in {module.name}{f', which has no {data} data' if lacking else ''})"
        if not m.fp_chain:
            return (
                None,
                f"no FDE covers {where}, and {describe.abi_name(m.abi)} code keeps no frame-pointer chain",
                None,
            )
        fp, sp = frame.registers.get(m.fp), frame.registers.get(m.sp)
        if not fp or sp is None or fp < sp or fp % 8:
            return None, f"no FDE covers {where}, and the frame pointer does not point into the stack", None
        saved_fp, ra = self.read(fp), self.read(fp + 8)
        if ra is None or saved_fp is None:
            return None, f"no FDE covers {where}; the frame-pointer chain needs the words at {fp:#x}", fp
        if not ra:
            return None, f"no FDE covers {where}; the frame-pointer chain ends (RA 0)", None
        frame.fallback = True
        frame.lookup = f"no FDE covers {where}: frame-pointer chain"
        frame.computations.append(
            Computation("FP", Rule(Kind.VALUE, m.fp, 0, True), "*(fp)", f"*({fp:#x}) = {saved_fp:#x}", saved_fp, fp)
        )
        frame.computations.append(
            Computation("RA", Rule(Kind.VALUE, m.fp, 8, True), "*(fp + 8)", f"*({fp + 8:#x}) = {ra:#x}", ra, fp + 8)
        )
        if m.aarch64:
            # A saved LR may be signed (pac-ret): the chain has no row to say so, and stripping an
            # unsigned user address changes nothing.
            if ra & self.pac_mask:
                ra = self._strip(frame, Rule(Kind.VALUE, m.fp, 8, True), ra)
            # The frame record {FP, LR} sits at the bottom of a frame (`stp x29, x30, [sp, -N]!;
            # mov x29, sp`), so the caller's SP at the call is where the caller's record is: the
            # saved FP. (FP + 16 is x86-64's: `push rbp; mov rbp, rsp` puts the record at the top.)
            sp_rule, sp_formula, caller_sp = Rule(Kind.VALUE, m.fp, 0, True), "*(fp)", saved_fp
        else:
            sp_rule, sp_formula, caller_sp = Rule(Kind.VALUE, m.fp, 16), "fp + 16", fp + 16
        frame.computations.append(Computation("SP", sp_rule, sp_formula, f"{sp_formula} = {caller_sp:#x}", caller_sp))
        return Frame(frame.number + 1, ra, {m.sp: caller_sp, m.fp: saved_fp}), "", None
