"""How the explorer writes an FRE's rules, in the notation of `readelf --sframe`.

`sp+16` (CFA = SP + 16), `c-16` (saved at CFA - 16), `f` (saved where the
header's fixed offset says), `u` (not tracked: still in its register). The
FRE table and the structure tree both label rows with it.
"""

from __future__ import annotations

from sfview.sframe.section import Row, Rule


def saved_rule_text(rule: Rule | None) -> str:
    """An FP or RA rule: `c-16`, `f` when the header fixes it, `u` when untracked."""
    if rule is None:
        return "u"
    return "f" if rule.from_header else rule.text()


def cfa_text(row: Row) -> str:
    """The CFA rule; a version 3 row without offsets has none (outermost frame)."""
    return row.cfa.text() if row.cfa is not None else "-"


def ra_text(row: Row) -> str:
    """The RA rule, `undef` where the return address is undefined (outermost frame)."""
    return "undef" if row.ra_undefined else saved_rule_text(row.ra)


def rules_text(row: Row) -> str:
    """`CFA sp+16 FP u RA f`: a row at a glance."""
    return f"CFA {cfa_text(row)} FP {saved_rule_text(row.fp)} RA {ra_text(row)}"
