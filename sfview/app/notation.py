"""The explorer's words for a section: its notation explained, a row as a picture of the stack.

`notation` and `legend` explain the symbols the FRE table shows (for the
legend under it and for the help); `cfa_words`, `saved_words`, `slot_label`
and `row_change` put a row into sentences and labels for the frame picture
and the field tree. The rules themselves are written by
`sfview.rule_notation`, which JSON shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from sfview.generated.sframe import Sframe
from sfview.rule_notation import formula, rule_formula, rule_text
from sfview.sframe.model.rules import CFA, STACK_SLOT, Kind, Rule
from sfview.sframe.model.terms import register_name

if TYPE_CHECKING:
    from sfview.sframe.model.section import Row, Section


def stored_cfa_offset(section: Section, stored: int) -> str:
    """How a stored CFA offset becomes the offset: `stored 21 → 21 x 8 + 160 = 328` on s390x, "" where
    it is stored as it is."""
    if section.cfa_offset_scale == 1 and not section.cfa_offset_bias:
        return ""
    decoded = section.cfa_offset(stored)
    return f"stored {stored} → {stored} x {section.cfa_offset_scale} + {section.cfa_offset_bias} = {decoded}"


def stored_register(section: Section, stored: int) -> str:
    """Version 2 s390x: `stored 23 → odd: saved in register 23>>1 = r11`."""
    regnum = stored >> 1
    return f"stored {stored} → odd: saved in register {stored}>>1 = {register_name(section.abi, regnum)}"


class Notation(NamedTuple):
    """One symbol of the explorer's notation and what it means."""

    symbol: str
    short: str
    """A few words, for the one-line legend under the FRE table."""
    long: str
    """A sentence, for the help."""


def _padding_notation(section: Section) -> str:
    if section.fixed_ra_offset:
        return (
            f"the RA slot is the padding word: the RA keeps its default rule, at CFA{section.fixed_ra_offset:+d} "
            "(the header's fixed offset)"
        )
    return "the RA slot is the padding word: the FP is saved, the RA is not (still in its register)"


def notation(section: Section) -> list[Notation]:
    """The symbols the FRE table can show for this section (its version, its ABI's fixed offsets), explained."""
    out = [Notation("c-16", "at CFA-16", "saved on the stack at CFA - 16 (CFA: the SP before the call)")]
    out += _fixed_notation(section)
    out.append(Notation("u", "not saved", "not saved by this row: the register still holds the caller's value"))
    if section.version >= 2 and (not section.fixed_ra_offset or section.version >= 3):
        out.append(Notation("U", "RA padding", _padding_notation(section)))
    if section.version >= 3:
        out += [
            Notation("undef", "outermost", "no return address: the outermost frame (the CFA column shows -)"),
            _register_notation(section),
            Notation("(fp+8)", "word at fp+8", "flexible rule: the value is the word stored at FP + 8"),
        ]
    out.append(Notation("[m]", "PCMASK", "PCMASK function: the row applies at that offset of every repeated block"))
    return out


def _register_notation(section: Section) -> Notation:
    """A flexible rule based on a register, with a register of the section's ABI (s390x keeps the RA and
    the FP of leaf functions in floating-point registers)."""
    example = Sframe.S390xReg.f0 if section.is_s390x else Sframe.Amd64Reg.rcx
    name = register_name(section.abi, example)
    return Notation(f"{name}+0", f"in {name}", f"flexible rule: the value is register {name} plus 0")


def _fixed_notation(section: Section) -> list[Notation]:
    """`f`, when the header fixes an offset; version 1's dump (binutils 2.40) prints those `u`."""
    pairs = (("RA", section.fixed_ra_offset), ("FP", section.fixed_fp_offset))
    fixed = [(what, offset) for what, offset in pairs if offset]
    if not fixed:
        return []
    where = ", ".join(f"{what} CFA{offset:+d}" for what, offset in fixed)
    dump = " (the dump: u)" if section.version == 1 else ""
    long = f"at the offset the header fixes for every row ({where})"
    if section.version == 1:
        long += "; binutils 2.40, which wrote version 1, prints it u, as sfview dump does: the explorer writes f"
    return [Notation("f", f"header's {where}{dump}", long)]


def legend(section: Section) -> str:
    """The notation in one line: `c-16 = at CFA-16 · f = header's RA CFA-8 · u = not saved · ...`."""
    return " · ".join(f"{n.symbol} = {n.short}" for n in notation(section))


CALLER_FRAME = "the caller's frame"


CFA_LABEL = "CFA: SP before the call"


def cfa_label(section: Section) -> str:
    """What the CFA is: the SP before the call, or on s390x that plus the register save area (160)."""
    if section.sp_val_offset:
        return f"CFA: SP before the call {-section.sp_val_offset:+d}"
    return CFA_LABEL


def caller_sp_label(section: Section) -> str:
    """`← caller's SP`: where the SP was at the call, when that is not the CFA (s390x: CFA - 160)."""
    return f"← caller's {register_name(section.abi, section.sp_reg)}"


BELOW_SP = "(below SP: popped, stale)"


SP_UNKNOWN = "⋮ SP: somewhere below"


SPARKLINE_TITLE = "CFA offset per row (· from FP or memory)"


NO_ROWS = "This function has no rows: there is no frame to draw."


def cfa_words(section: Section, rule: Rule) -> str:
    """What the CFA is in a row, and what that says of the frame's size."""
    if rule.kind is Kind.UNDEFINED:
        return "no CFA: the outermost frame, there is nothing to unwind to"
    if rule.kind is not Kind.VALUE:
        return "the CFA is not tracked in this row"
    text = f"CFA = {rule_formula(section, rule)}"
    if rule.deref:
        return f"{text}: loaded from memory, so the frame's size is not known statically"
    if rule.base == section.sp_reg and section.sp_val_offset:
        size = rule.offset + section.sp_val_offset
        return (
            f"{text}: the frame is {size} bytes, from SP up to the caller's SP at CFA {section.sp_val_offset:+d} "
            f"(above it, the caller's {-section.sp_val_offset}-byte register save area)"
        )
    if rule.base == section.sp_reg:
        return f"{text}: the frame is {rule.offset} bytes, from SP up to the CFA"
    if rule.base == section.fp_reg:
        return f"{text}: computed from FP, so the frame's size is not known statically (SP moves below)"
    return f"{text}: computed from {register_name(section.abi, rule.base)}; the frame's size is not known statically"


def saved_words(section: Section, what: str, rule: Rule) -> str:
    """Where the caller's `what` (`RA` or `FP`) is in a row, in a sentence."""
    if rule.kind is Kind.UNDEFINED:
        return f"{what} undefined: the outermost frame"
    ra_register = register_name(section.abi, section.ra_reg)
    if rule.padding and rule.kind is Kind.VALUE:
        return f"{what} where a default row keeps it, {formula(section.abi, rule)}: the row holds the padding word"
    if rule.padding:
        still = f"; the RA is still in {ra_register}" if not section.fixed_ra_offset else ""
        return f"{what} not saved in this row (the padding word): the FP is{still}"
    if rule.kind is Kind.SAME:
        register = register_name(section.abi, section.ra_reg if what == "RA" else section.fp_reg)
        if what == "RA" and section.is_aarch64:
            return f"RA still in {register}, the link register: not saved (yet)"
        if what == "RA" and not section.fixed_ra_offset:
            return f"RA still in {register}, where the call put it: not saved (yet)"
        return f"{what} not saved: {register} still holds the caller's"
    if rule.saved_on_stack:
        return f"{what} saved at CFA{rule.offset:+d}" + (" (the header's fixed offset)" if rule.fixed else "")
    if rule.deref:
        return f"{what} loaded from {rule_formula(section, rule)}"
    if rule.base != CFA and rule.offset == 0:
        return f"{what} kept in register {register_name(section.abi, rule.base)}, not on the stack"
    return f"{what} = {rule_formula(section, rule)}, in a register"


def slot_label(section: Section, what: str, mangled: bool = False) -> str:
    """The words in a stack slot that holds the caller's `what` (`RA` or `FP`)."""
    if what == "RA":
        return "return address" + (" (signed)" if mangled else "")
    return f"caller's FP ({register_name(section.abi, section.fp_reg)})"


def pointer_label(section: Section, regnum: int) -> str:
    """`← rsp`: a register that points at a slot."""
    return f"← {register_name(section.abi, regnum)}"


def row_change(section: Section, before: Row | None, after: Row) -> str:
    """How a row's rules differ from the row before it: `CFA offset 8 → 16: push; FP saved at CFA-16`."""
    if before is None:
        return "the first row: the function's entry"
    changes = [_cfa_change(section, before.cfa, after.cfa)]
    for what, old, new in (("FP", before.fp, after.fp), ("RA", before.ra, after.ra)):
        if old != new:
            changes.append(_saved_change(section, what, old, new))
    text = "; ".join(change for change in changes if change)
    return text or "the same rules as the row before"


def _cfa_change(section: Section, old: Rule, new: Rule) -> str:
    """`CFA offset 8 → 16: push`, `CFA now from FP (frame pointer set up)`, or "" when it is the same."""
    if old == new:
        return ""
    plain = old.kind is new.kind is Kind.VALUE and not old.deref and not new.deref
    if not plain:
        return f"CFA {rule_text(section, old)} → {rule_text(section, new)}"
    if old.base != new.base:
        if new.base == section.fp_reg:
            return f"CFA now from FP, {rule_text(section, new)}: the frame pointer is set up"
        if new.base == section.sp_reg:
            return f"CFA from SP again, {rule_text(section, new)}: the frame pointer is given up"
        return f"CFA now from {register_name(section.abi, new.base)}, {rule_text(section, new)}"
    delta = new.offset - old.offset
    text = f"CFA offset {old.offset} → {new.offset}"
    if new.base != section.sp_reg:
        return text
    if delta == STACK_SLOT:
        return f"{text}: push"
    if delta == -STACK_SLOT:
        return f"{text}: pop"
    return f"{text}: {delta} bytes pushed or allocated" if delta > 0 else f"{text}: {-delta} bytes popped or freed"


def _saved_change(section: Section, what: str, old: Rule, new: Rule) -> str:
    """`FP saved at CFA-16`, `FP restored`: a saved register's rule that changed."""
    if new.kind is Kind.SAME and old.kind is Kind.VALUE:
        return f"{what} restored: no longer saved"
    return saved_words(section, what, new)
