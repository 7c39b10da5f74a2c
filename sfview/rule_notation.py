"""Rules as text in sfview's notation, which JSON, the explorer, the disassembly and the unwinder share.

`sp+16`, `c-8`, `(fp-48)`, `f` (the header's fixed offset), `U` (the RA
padding word), `u` (not saved), `undef` and `-` (the outermost row): the same
in every version, unlike readelf's (`sfview.output.readelf`), which follows
the binutils of each version. `formula` writes a rule with the ABI's register
names (`rsp + 16`, `*(CFA - 8)`) where a person computes with registers.

Beside the model, below the engines and the views, because the outputs, the
unwinder, the disassembly and the app all write rules so; what only the app
says of rules (the legend, a row as a picture of the stack) is
`sfview.app.notation`, and readelf's notation is `sfview.output.readelf`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sfview.sframe.model.rules import CFA, Kind, Rule
from sfview.sframe.model.terms import register_name

if TYPE_CHECKING:
    from sfview.sframe.model.section import Row, Section


def short_register(section: Section, regnum: int) -> str:
    """A register as objdump writes it in rules: `sp`, `fp`, else `r<N>`."""
    if regnum == section.sp_reg:
        return "sp"
    if regnum == section.fp_reg:
        return "fp"
    return f"r{regnum}"


def register_text(section: Section, regnum: int) -> str:
    """A register in sfview's notation: `sp`, `fp`, else the ABI's name (`rbx`, `f0`), where
    objdump writes `r<N>` (its DWARF number)."""
    if regnum in (section.sp_reg, section.fp_reg):
        return short_register(section, regnum)
    return register_name(section.abi, regnum)


def value_text(section: Section, rule: Rule, name: Callable[[Section, int], str] = short_register) -> str:
    """`sp+16`, `(fp-48)`, `r10+0` for a register base (`name` spells it); `c-16` for the CFA (saved there)."""
    if rule.base == CFA:
        return f"c{rule.offset:+d}"
    text = f"{name(section, rule.base)}{rule.offset:+d}"
    return f"({text})" if rule.deref else text


def cfa_text(section: Section, cfa: Rule) -> str:
    """The CFA rule; `-` for a row without one (outermost frame)."""
    if cfa.kind is Kind.UNDEFINED:
        return "-"
    return value_text(section, cfa, register_text) if cfa.kind is Kind.VALUE else "u"


def saved_text(section: Section, rule: Rule) -> str:
    """An FP or RA rule: `c-16`, `f` when the header fixes it, `U` padding, `u` untracked, `undef`."""
    if rule.kind is Kind.UNDEFINED:
        return "undef"
    if rule.padding:
        return "U"
    if rule.kind is Kind.SAME:
        return "u"
    return "f" if rule.fixed else value_text(section, rule, register_text)


def rule_text(section: Section, rule: Rule) -> str:
    """Any rule in sfview's notation (the CFA's or a saved register's): `sp+16`, `c-8`, `u`."""
    if rule.kind is Kind.VALUE and not rule.fixed:
        return value_text(section, rule, register_text)
    return saved_text(section, rule)


def rules_text(section: Section, row: Row) -> str:
    """`CFA sp+16 FP u RA f`: a row at a glance."""
    return f"CFA {cfa_text(section, row.cfa)} FP {saved_text(section, row.fp)} RA {saved_text(section, row.ra)}"


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


def rule_delta(section: Section, before: Row | None, after: Row) -> str:
    """`CFA sp+8 → sp+16, FP u → c-16`: what a row changed, in the table's notation (the first row: its rules)."""
    if before is None:
        return rules_text(section, after)
    changes = [
        f"{what} {shown(section, old)} → {shown(section, new)}"
        for what, old, new, shown in (
            ("CFA", before.cfa, after.cfa, cfa_text),
            ("FP", before.fp, after.fp, saved_text),
            ("RA", before.ra, after.ra, saved_text),
        )
        if shown(section, old) != shown(section, new)
    ]
    return ", ".join(changes) or "the same rules"
