"""The SFrame unwinder, after the spec's appendix "Generating Stack Traces using SFrame".

From a thread's registers and the process's memory, frame by frame:

1. find the FDE for the PC by the section's lookup (for every frame but the
   first, for PC - 1: a return address may point just past a call that ends
   its function) and the FRE that applies (PCINC: the last row starting at or
   before the offset; PCMASK: the offset modulo the block size);
2. CFA = base register + offset (or, version 3, any register, dereferenced);
3. RA and FP from their rules: the word saved at CFA + offset, a register,
   or unchanged; on AArch64 an RA the row does not track is still in the link
   register, in the topmost frame; a signed RA has its signature stripped;
4. the caller's SP is the CFA, its PC the RA.

Where there is no SFrame for the code, the frame-pointer chain is tried if
the FP looks like one (those frames are marked). The walk ends with a reason
in words, never an exception. Register numbers are the section's (`sp_reg`,
`fp_reg`, `ra_reg`); nothing here knows an ABI's numbers of its own, except
the frame-pointer chain's layout, which is no part of SFrame.
"""

from __future__ import annotations

from dataclasses import dataclass

from sfview.inputs.core import Memory, Thread, user_address_mask
from sfview.sframe.describe import register_name, rule_formula
from sfview.sframe.rules import CFA, Kind, Rule
from sfview.sframe.section import Function, Row, Section
from sfview.unwind.modules import Module, Modules
from sfview.unwind.state import Backtrace, Frame, Step, Value

ADDRESS_MASK = (1 << 64) - 1
WORD = 8
DEFAULT_DEPTH = 256
V1_PCMASK_BLOCK = 16
"""Version 1 FDEs carry no block size. binutils 2.40 emitted PCMASK only for the
16-byte entries of the x86-64 PLT, and its libsframe looked rows up with the
PC's low bits: the offset modulo 16, as here."""


@dataclass(frozen=True, slots=True)
class Abi:
    """Register numbers of the architecture being unwound (from a Section when there is one)."""

    name: str
    sp: int
    fp: int
    ra: int
    little_endian: bool = True

    @property
    def aarch64(self) -> bool:
        return self.name == "aarch64"


def abi_of(section: Section) -> Abi:
    return Abi(
        "aarch64" if section.is_aarch64 else "x86-64",
        section.sp_reg,
        section.fp_reg,
        section.ra_reg,
        section.little_endian,
    )


class Unwinder:
    """Walks one thread's stack through `modules`, reading `memory`."""

    def __init__(
        self, modules: Modules, memory: Memory, abi: Abi, pac_mask: int | None = None, depth: int = DEFAULT_DEPTH
    ) -> None:
        self.modules = modules
        self.memory = memory
        self.abi = abi
        self.pac_mask = pac_mask if pac_mask is not None else user_address_mask()
        self.depth = depth

    def read(self, address: int) -> int | None:
        return self.memory.read_word(address & ADDRESS_MASK, WORD, self.abi.little_endian)

    def backtrace(self, thread: Thread) -> Backtrace:
        regs = dict(thread.regs)
        pc = thread.pc
        frames: list[Frame] = []
        fallback = False
        for index in range(self.depth):
            module = self.modules.at(pc)
            frame = Frame(
                index,
                pc,
                regs.get(self.abi.sp),
                regs.get(self.abi.fp),
                module.name if module else "",
                module.symbol(pc) if module else "",
                fallback=fallback,
            )
            frames.append(frame)
            if pc == 0:
                return Backtrace(frames, "the PC is 0: no code there")
            result = self._step(frame, module, regs, first=index == 0)
            if isinstance(result, str):
                return Backtrace(frames, result)
            caller_pc, caller_regs = result
            if caller_pc == 0:
                return Backtrace(frames, "the return address is 0: the outermost frame")
            sp, caller_sp = regs.get(self.abi.sp), caller_regs.get(self.abi.sp)
            if index > 0 and sp is not None and caller_sp is not None and caller_sp <= sp:
                return Backtrace(frames, f"the CFA does not grow ({caller_sp:#x} <= SP {sp:#x}): a loop")
            pc, regs = caller_pc, caller_regs
            fallback = frame.step is not None and frame.step.method != "sframe"
        return Backtrace(frames, f"depth limit of {self.depth} frames reached")

    # One step ---------------------------------------------------------------

    def _step(self, frame: Frame, module: Module | None, regs: dict[int, int], first: bool) -> tuple | str:
        """The caller's (PC, registers), or why there is none. Records the step on `frame`."""
        lookup = frame.pc if first else (frame.pc - 1) & ADDRESS_MASK
        section = module.section if module is not None else None
        func = section.find_function(lookup) if section is not None else None
        if func is None:
            if module is None:
                frame.note = "no module maps this address"
            elif section is None:
                frame.note = f"no SFrame in {module.name} ({module.why})"
            else:
                frame.note = f"no SFrame FDE covers {lookup:#x}"
            return self._frame_pointer_step(frame, regs, lookup)
        assert section is not None
        row, choice = select_row(func, lookup)
        step = Step(
            "sframe",
            lookup,
            fde_index=func.index,
            fde_offset=func.span.start,
            function_start=func.start_address,
            row_choice=choice,
        )
        frame.step = step
        if row is None:
            return f"FDE {func.index} has no FRE for {lookup:#x} ({choice})"
        step.fre_index, step.fre_offset, step.mangled_ra = row.index, row.span.start, row.mangled_ra
        step.rules = {
            name: rule_formula(section, rule) for name, rule in (("cfa", row.cfa), ("fp", row.fp), ("ra", row.ra))
        }
        if row.ra.kind is Kind.UNDEFINED:
            return "the return address is undefined here: the outermost frame"
        return self._apply(section, row, step, regs, first)

    def _apply(self, section: Section, row: Row, step: Step, regs: dict[int, int], first: bool) -> tuple | str:
        cfa_value = self._compute(section, "CFA", row.cfa, regs, None)
        step.values.append(cfa_value)
        if cfa_value.value is None:
            return f"cannot compute the CFA: {cfa_value.problem}"
        cfa = cfa_value.value
        ra_value = self._return_address(section, row, regs, cfa, first)
        step.values.append(ra_value)
        if ra_value.value is None:
            return f"cannot find the return address: {ra_value.problem}"
        fp_value = self._compute(section, "FP", row.fp, regs, cfa)
        step.values.append(fp_value)
        if fp_value.value is None:
            return f"cannot restore the FP: {fp_value.problem}"
        step.values.append(Value("SP", "CFA", "", cfa, note="the caller's SP is the CFA"))
        caller = dict(regs)
        caller[self.abi.sp] = cfa
        caller[self.abi.fp] = fp_value.value
        return ra_value.value, caller

    def _return_address(self, section: Section, row: Row, regs: dict[int, int], cfa: int, first: bool) -> Value:
        rule = row.ra
        if rule.kind in (Kind.SAME, Kind.PADDING):
            name = register_name(section.abi, self.abi.ra)
            if self.abi.aarch64 and first and self.abi.ra in regs:
                value = Value("RA", name, name, regs[self.abi.ra], note="not saved yet: still in the link register")
            else:
                why = "beyond the topmost frame the link register no longer holds it" if self.abi.aarch64 else ""
                return Value(
                    "RA", rule_formula(section, rule), "", None, problem=f"the row does not save it {why}".strip()
                )
        else:
            value = self._compute(section, "RA", rule, regs, cfa)
            if value.value is None:
                return value
        if row.mangled_ra:
            signed = value.value
            assert signed is not None
            value.value = signed & ~self.pac_mask & ADDRESS_MASK
            value.note = (value.note + "; " if value.note else "") + (
                f"signed {signed:#x}, signature stripped with mask {self.pac_mask:#x}"
            )
        return value

    def _compute(self, section: Section, name: str, rule: Rule, regs: dict[int, int], cfa: int | None) -> Value:
        """`base + offset`, or the word stored there, recording the numbers used."""
        formula = rule_formula(section, rule)
        if rule.kind is Kind.SAME:
            reg = self.abi.fp if name == "FP" else self.abi.ra
            return Value(name, formula, "", regs.get(reg), note="the register keeps its value")
        if rule.kind is not Kind.VALUE:
            return Value(name, formula, "", None, problem=formula)
        base = cfa if rule.base == CFA else regs.get(rule.base)
        if base is None:
            return Value(name, formula, "", None, problem=f"{register_name(section.abi, rule.base)} is not known")
        sign = "-" if rule.offset < 0 else "+"
        inputs = f"{base:#x} {sign} {abs(rule.offset):#x}"
        address = (base + rule.offset) & ADDRESS_MASK
        if not rule.deref:
            return Value(name, formula, inputs, address)
        word = self.read(address)
        problem = "" if word is not None else f"memory at {address:#x} is not available"
        return Value(name, formula, f"*({inputs})", word, address=address, problem=problem)

    # Without SFrame ---------------------------------------------------------

    def _frame_pointer_step(self, frame: Frame, regs: dict[int, int], lookup: int) -> tuple | str:
        """The frame-pointer chain: saved FP at [FP], RA at [FP + 8], caller's SP = FP + 16."""
        fp, sp = regs.get(self.abi.fp), regs.get(self.abi.sp)
        if not fp or sp is None or fp % WORD or not sp <= fp < sp + (1 << 24):
            return f"{frame.note}, and the FP ({fp or 0:#x}) does not look like a frame pointer"
        saved_fp, ra = self.read(fp), self.read(fp + WORD)
        step = Step("frame pointer", lookup, row_choice="no SFrame: the frame-pointer chain")
        names = register_name_pair(self.abi)
        step.values = [
            Value("CFA", f"{names[0]} + 16", f"{fp:#x} + 0x10", fp + 2 * WORD),
            Value("RA", f"*({names[0]} + 8)", f"*({fp:#x} + 0x8)", ra, address=fp + WORD),
            Value("FP", f"*({names[0]})", f"*({fp:#x})", saved_fp, address=fp),
        ]
        frame.step = step
        if saved_fp is None or ra is None:
            return f"{frame.note}, and memory at the frame pointer {fp:#x} is not available"
        if self.abi.aarch64:
            ra &= ~self.pac_mask & ADDRESS_MASK
        caller = dict(regs)
        caller[self.abi.sp] = fp + 2 * WORD
        caller[self.abi.fp] = saved_fp
        return ra, caller


def register_name_pair(abi: Abi) -> tuple[str, str]:
    return ("x29", "x30") if abi.aarch64 else ("rbp", "rip")


def select_row(func: Function, pc: int) -> tuple[Row | None, str]:
    """The FRE for `pc` in `func`, and which rule chose it, in words."""
    offset = (pc - func.start_address) & ADDRESS_MASK
    if func.pcmask:
        block = func.rep_size if func.section.version >= 2 else V1_PCMASK_BLOCK
        if not block:
            return None, "PCMASK with a block size of 0"
        masked = offset % block
        how = "rep_size" if func.section.version >= 2 else "16 (version 1: no rep_size; binutils 2.40's PLT block)"
        choice = f"PCMASK: ({pc:#x} - {func.start_address:#x}) % {how} = {masked:#x}"
        offset = masked
    else:
        choice = f"PCINC: last row at or before offset {offset:#x}"
    found = None
    for row in func.rows:
        if row.start_offset > offset:
            break
        found = row
    return found, choice
