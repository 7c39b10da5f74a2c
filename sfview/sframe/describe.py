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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sfview.generated.sframe import Sframe
from sfview.sframe.rules import CFA, Kind, Rule

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


# Rules as binutils writes them ----------------------------------------------


def _value_text(section: Section, rule: Rule) -> str:
    """`sp+16`, `(fp-48)`, `r10+0` for a register base; `c-16` for the CFA (saved there)."""
    if rule.base == CFA:
        return f"c{rule.offset:+d}"
    text = f"{short_register(section, rule.base)}{rule.offset:+d}"
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
    if rule.kind is Kind.PADDING:
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


def app_cfa(section: Section, row: Row) -> str:
    """The CFA rule; `-` for a row without one (outermost frame)."""
    return app_cfa_rule(section, row.cfa)


def app_cfa_rule(section: Section, cfa: Rule) -> str:
    """`app_cfa` of a CFA rule, whatever row holds it (to size a column to every rule of a section)."""
    if cfa.kind is Kind.UNDEFINED:
        return "-"
    return _value_text(section, cfa) if cfa.kind is Kind.VALUE else "u"


def app_saved(section: Section, rule: Rule) -> str:
    """An FP or RA rule: `c-16`, `f` when the header fixes it, `U` padding, `u` untracked, `undef`."""
    if rule.kind is Kind.UNDEFINED:
        return "undef"
    if rule.kind is Kind.PADDING:
        return "U"
    if rule.kind is Kind.SAME:
        return "u"
    return "f" if rule.fixed else _value_text(section, rule)


def app_rule(section: Section, rule: Rule) -> str:
    """Any rule in the explorer's notation (the CFA's or a saved register's): `sp+16`, `c-8`, `u`."""
    if rule.kind is Kind.VALUE and not rule.fixed:
        return _value_text(section, rule)
    return app_saved(section, rule)


def app_rules(section: Section, row: Row) -> str:
    """`CFA sp+16 FP u RA f`: a row at a glance."""
    return f"CFA {app_cfa(section, row)} FP {app_saved(section, row.fp)} RA {app_saved(section, row.ra)}"


def rule_formula(section: Section, rule: Rule) -> str:
    """A rule with the ABI's register names, as a formula: `rsp + 16`, `*(CFA - 8)`, `unchanged`."""
    return formula(section.abi, rule)


def formula(abi: int, rule: Rule) -> str:
    """`rule_formula` for an ABI id, for rules that come from elsewhere (DWARF CFI)."""
    if rule.kind is Kind.SAME:
        return "unchanged"
    if rule.kind is Kind.PADDING:
        return "not saved (padding)"
    if rule.kind is Kind.UNDEFINED:
        return "undefined (outermost frame)"
    sign = "-" if rule.offset < 0 else "+"
    text = f"{register_name(abi, rule.base)} {sign} {abs(rule.offset)}"
    return f"*({text})" if rule.deref else text


def rule_json(section: Section, rule: Rule, text: str) -> dict[str, object]:
    """A rule as numbers for JSON, with its register named, its `text` and its formula beside."""
    out: dict[str, object] = {"text": text, "kind": rule.kind.value}
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
