"""Words for the numbers a section holds: value names, register names, rules as text.

Kept apart from the model, as pyelftools keeps `dwarf/descriptions.py` apart
from `dwarf/callframe.py`: the model holds numbers (`rules.Rule`), and every
view that prints one asks here. The constants themselves are the enums of
`sframe.ksy` (in the generated parser); this module only spells them the way
binutils and its users do.

Rules are written for two audiences:

- `binutils_columns`: the CFA/FP/RA columns exactly as `readelf --sframe` or
  `objdump --sframe` of the binutils that emits that version prints them
  (version 1 as 2.40: `sp+16`, an RA the header fixes shown as `u`; versions
  2 and 3 as 2.45/2.46: `%+d` offsets, `f` for a fixed RA, `U` for the RA
  padding word, flexible rules as `r<N>+0`, `(fp-48)`, `c-16`);
- `app_columns`: the explorer's notation, the same in every version (`f`
  always means "fixed by the header", `-` and `undef` for the outermost row).

`register_name` gives the ABI's real names (`rsp`, `x29`) where a person
computes with registers, as in the unwinding debugger.

The explorer's notation is explained here too (`notation`, for the legend
under the FRE table and for the help), and so is a row as a picture of the
stack (`cfa_words`, `saved_words`, `slot_label`, `row_change`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from sfview.generated.sframe import Sframe
from sfview.sframe.rules import CFA, STACK_SLOT, Kind, Rule

if TYPE_CHECKING:
    from sfview.sframe.section import Row, Section

FLAG_NAMES: tuple[tuple[int, str], ...] = tuple((int(f), f"SFRAME_F_{f.name.upper()}") for f in Sframe.Flag)
"""Each flag bit with its binutils name, in bit order (the order binutils prints them)."""
KNOWN_FLAGS = sum(bit for bit, _ in FLAG_NAMES)

VERSION_NAMES = {int(v): f"SFRAME_VERSION_{int(v)}" for v in Sframe.Version}

ABI_NAMES = {
    Sframe.AbiArch.aarch64_endian_big: "AArch64 big-endian",
    Sframe.AbiArch.aarch64_endian_little: "AArch64 little-endian",
    Sframe.AbiArch.amd64_endian_little: "AMD64 little-endian",
    Sframe.AbiArch.s390x_endian_big: "s390x big-endian",
}

FRE_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.FreType}
PC_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.PcType}
FDE_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.FdeType}
PAUTH_KEY_NAMES = {int(k): k.name.removeprefix("key_").upper() for k in Sframe.PauthKey}
BASE_REG_NAMES = {int(r): r.name for r in Sframe.BaseReg}

_REGISTERS = {
    Sframe.AbiArch.amd64_endian_little: Sframe.Amd64Reg,
    Sframe.AbiArch.aarch64_endian_big: Sframe.Aarch64Reg,
    Sframe.AbiArch.aarch64_endian_little: Sframe.Aarch64Reg,
    Sframe.AbiArch.s390x_endian_big: Sframe.S390xReg,
}


def flag_names(flags: int) -> list[str]:
    """The names of the flags set in `flags`, then any unknown bits as a number."""
    names = [name for bit, name in FLAG_NAMES if flags & bit]
    if flags & ~KNOWN_FLAGS:
        names.append(f"{flags & ~KNOWN_FLAGS:#x}")
    return names


def abi_name(abi: int) -> str:
    """`AMD64 little-endian`, or the bare number for an unknown ABI id."""
    return ABI_NAMES.get(abi, f"unknown ABI {abi}")


def registers(abi: int) -> list[enum.IntEnum]:
    """The ABI's DWARF registers, as `sframe.ksy`'s register enum for it lists them (none for an unknown ABI)."""
    names = _REGISTERS.get(abi)
    return list(names) if names is not None else []


def has_register(abi: int, regnum: int) -> bool:
    """Whether the ABI's DWARF register numbering has `regnum` (as `sframe.ksy`'s register enums list them)."""
    names = _REGISTERS.get(abi)
    return names is not None and regnum in {int(r) for r in names}


def register_name(abi: int, regnum: int) -> str:
    """The ABI's name for a DWARF register (`rsp`, `x29`, `sp`), `r<N>` when it has none."""
    if regnum == CFA:
        return "CFA"
    names = _REGISTERS.get(abi)
    try:
        return names(regnum).name if names is not None else f"r{regnum}"
    except ValueError:
        return f"r{regnum}"


def short_register(section: Section, regnum: int) -> str:
    """A register as objdump writes it in rules: `sp`, `fp`, else `r<N>`."""
    if regnum == section.sp_reg:
        return "sp"
    if regnum == section.fp_reg:
        return "fp"
    return f"r{regnum}"


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


# Rules as binutils writes them ----------------------------------------------


def app_register(section: Section, regnum: int) -> str:
    """A register in the explorer's notation: `sp`, `fp`, else the ABI's name (`rbx`, `f0`), where
    objdump writes `r<N>` (its DWARF number)."""
    if regnum in (section.sp_reg, section.fp_reg):
        return short_register(section, regnum)
    return register_name(section.abi, regnum)


def _value_text(section: Section, rule: Rule, name: Callable[[Section, int], str] = short_register) -> str:
    """`sp+16`, `(fp-48)`, `r10+0` for a register base (`name` spells it); `c-16` for the CFA (saved there)."""
    if rule.base == CFA:
        return f"c{rule.offset:+d}"
    text = f"{name(section, rule.base)}{rule.offset:+d}"
    return f"({text})" if rule.deref else text


def binutils_cfa(section: Section, rule: Rule) -> str:
    """The CFA column; binutils 2.40 (version 1) wrote it `%s+%d`, so `sp+-8`."""
    if rule.kind is not Kind.VALUE:
        return "u"
    if section.version == 1:
        return f"{short_register(section, rule.base)}+{rule.offset}"
    return _value_text(section, rule)


def binutils_saved(section: Section, rule: Rule) -> str:
    """An FP column: `c-16`, `(fp+0)`, or `u` when the row does not track it."""
    return _value_text(section, rule) if rule.kind is Kind.VALUE else "u"


def binutils_ra(section: Section, rule: Rule) -> str:
    """The RA column without its `[s]`.

    Version 1 (binutils 2.40) shows an RA the header fixes as `u` and has no
    padding word (`c+0`); later versions show `f` and `U`.
    """
    if rule.padding:
        return "U" if section.version >= 2 else "c+0"
    if rule.kind is not Kind.VALUE:
        return "u"
    if rule.fixed:
        return "f" if section.version >= 2 else "u"
    return binutils_saved(section, rule)


def binutils_columns(section: Section, cfa: Rule, fp: Rule, ra: Rule, mangled_ra: bool) -> tuple[str, str, str]:
    """(CFA, FP, RA) exactly as the binutils of the section's version prints a row's rules."""
    ra_text = binutils_ra(section, ra) + ("[s]" if mangled_ra else "   ")
    return binutils_cfa(section, cfa), binutils_saved(section, fp), ra_text


# Rules in the explorer's notation --------------------------------------------


def app_cfa(section: Section, cfa: Rule) -> str:
    """The CFA rule; `-` for a row without one (outermost frame)."""
    if cfa.kind is Kind.UNDEFINED:
        return "-"
    return _value_text(section, cfa, app_register) if cfa.kind is Kind.VALUE else "u"


def app_saved(section: Section, rule: Rule) -> str:
    """An FP or RA rule: `c-16`, `f` when the header fixes it, `U` padding, `u` untracked, `undef`."""
    if rule.kind is Kind.UNDEFINED:
        return "undef"
    if rule.padding:
        return "U"
    if rule.kind is Kind.SAME:
        return "u"
    return "f" if rule.fixed else _value_text(section, rule, app_register)


def app_rule(section: Section, rule: Rule) -> str:
    """Any rule in the explorer's notation (the CFA's or a saved register's): `sp+16`, `c-8`, `u`."""
    if rule.kind is Kind.VALUE and not rule.fixed:
        return _value_text(section, rule, app_register)
    return app_saved(section, rule)


def app_rules(section: Section, row: Row) -> str:
    """`CFA sp+16 FP u RA f`: a row at a glance."""
    return f"CFA {app_cfa(section, row.cfa)} FP {app_saved(section, row.fp)} RA {app_saved(section, row.ra)}"


def rule_formula(section: Section, rule: Rule) -> str:
    """A rule with the ABI's register names, as a formula: `rsp + 16`, `*(CFA - 8)`, `unchanged`."""
    return formula(section.abi, rule)


def formula(abi: int, rule: Rule) -> str:
    """`rule_formula` for an ABI id, for rules that come from elsewhere (DWARF CFI)."""
    if rule.kind is Kind.SAME:
        return "unchanged"
    if rule.padding and rule.kind is Kind.SAME:
        return "not saved (padding)"
    if rule.kind is Kind.UNDEFINED:
        return "undefined (outermost frame)"
    sign = "-" if rule.offset < 0 else "+"
    text = f"{register_name(abi, rule.base)} {sign} {abs(rule.offset)}"
    return f"*({text})" if rule.deref else text


def rule_json(section: Section, rule: Rule, text: str) -> dict[str, object]:
    """A rule as numbers for JSON, with its register named, its `text` and its formula beside."""
    out: dict[str, object] = {"text": text, "kind": rule.kind.value}
    if rule.padding:
        out["padding"] = True
    if rule.kind is Kind.VALUE:
        out.update(
            base="cfa" if rule.base == CFA else rule.base,
            base_name=register_name(section.abi, rule.base),
            offset=rule.offset,
            deref=rule.deref,
            fixed=rule.fixed,
        )
    out["formula"] = rule_formula(section, rule)
    return out


# The explorer's notation, explained -----------------------------------------


class Notation(NamedTuple):
    """One symbol of the explorer's notation and what it means (a named tuple, not a dataclass: see
    `sfview.sframe.rules`, the unwind's start)."""

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


# A row as a picture of the stack ----------------------------------------------

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


def rule_delta(section: Section, before: Row | None, after: Row) -> str:
    """`CFA sp+8 → sp+16, FP u → c-16`: what a row changed, in the table's notation (the first row: its rules)."""
    if before is None:
        return app_rules(section, after)
    changes = [
        f"{what} {shown(section, old)} → {shown(section, new)}"
        for what, old, new, shown in (
            ("CFA", before.cfa, after.cfa, app_cfa),
            ("FP", before.fp, after.fp, app_saved),
            ("RA", before.ra, after.ra, app_saved),
        )
        if shown(section, old) != shown(section, new)
    ]
    return ", ".join(changes) or "the same rules"


def _cfa_change(section: Section, old: Rule, new: Rule) -> str:
    """`CFA offset 8 → 16: push`, `CFA now from FP (frame pointer set up)`, or "" when it is the same."""
    if old == new:
        return ""
    plain = old.kind is new.kind is Kind.VALUE and not old.deref and not new.deref
    if not plain:
        return f"CFA {app_rule(section, old)} → {app_rule(section, new)}"
    if old.base != new.base:
        if new.base == section.fp_reg:
            return f"CFA now from FP, {app_rule(section, new)}: the frame pointer is set up"
        if new.base == section.sp_reg:
            return f"CFA from SP again, {app_rule(section, new)}: the frame pointer is given up"
        return f"CFA now from {register_name(section.abi, new.base)}, {app_rule(section, new)}"
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
