"""`sfview compare` as text and as JSON: the view of a `dwarf.compare.Comparison`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sfview import quantity
from sfview.dwarf.cfi import CfiRule, Unexpressible
from sfview.dwarf.compare import RA_SIGNING
from sfview.dwarf.tables import CfiTable
from sfview.inputs.demangle import demangle
from sfview.output.safe_text import printable_lines
from sfview.rule_notation import rule_formula
from sfview.sframe.model.terms import register_name

if TYPE_CHECKING:
    from sfview.dwarf.compare import Comparison, Difference, Pair
    from sfview.sframe.model.section import Section


def dwarf_formula(section: Section, value: CfiRule) -> str:
    """A DWARF rule as a formula, as `rule_notation.rule_formula` writes SFrame's."""
    if isinstance(value, Unexpressible):
        return value.what
    return rule_formula(section, value)


def _signed(signed: bool) -> str:
    return "signed" if signed else "not signed"


def _where(pair: Pair, diff: Difference, section: Section) -> str:
    cfi = pair.dwarf
    if diff.column == RA_SIGNING:
        sframe = f"{_signed(diff.sframe_row.mangled_ra)} (mangled-RA bit)"
        dwarf = f"{_signed(diff.dwarf_row.ra_signed)} (DW_CFA_AARCH64_negate_ra_state)"
    else:
        sframe, dwarf = rule_formula(section, diff.sframe), dwarf_formula(section, diff.dwarf)
    return (
        f"SFrame {sframe} (FDE {pair.sframe.index} at .sframe+{pair.sframe.span.start:#x},"
        f" FRE at .sframe+{diff.sframe_row.span.start:#x}); DWARF {dwarf}"
        f" (FDE at {cfi.section}+{cfi.fde_offset:#x}, CIE at {cfi.section}+{cfi.cie_offset:#x})"
    )


def _repeats(pair: Pair, diff: Difference) -> str:
    """For a PCMASK function's difference that recurs block after block: how often, said once."""
    if diff.repeats == 1:
        return ""
    return f" (and the same place of the next {diff.repeats - 1} blocks of {pair.sframe.block_size} bytes)"


def difference_text(section: Section, pair: Pair, diff: Difference) -> str:
    """`0x1197..0x11b0 medium_frame: RA: SFrame … (FDE 4 at .sframe+0x60, …); DWARF … (FDE at …)`."""
    shown = diff.name or pair.name
    name = f" {demangle(shown)}" if shown else ""
    where = _where(pair, diff, section)
    return f"{diff.start:#x}..{diff.end:#x}{_repeats(pair, diff)}{name}: {diff.column.upper()}: {where}"


def text(section: Section, table: CfiTable, result: Comparison, path: str) -> str:
    """The comparison for a person: disagreements first, then what is explained, then the summary."""
    lines = [f"{path}: .sframe (version {section.version}) against {' and '.join(table.sections)}"]
    for title, explained in (("disagreements", False), ("differences the formats force", True)):
        found = result.differences(explained)
        lines.append(f"{title}: {len(found) or 'none'}")
        for pair, diff in found:
            lines.append(f"  {difference_text(section, pair, diff)}")
            if diff.reason:
                lines.append(f"    why: {diff.reason}")
    for side, label in (("sframe", "only SFrame describes"), ("dwarf", "only DWARF describes")):
        only = [o for o in result.only if o.side == side]
        lines.append(f"{label}: {len(only) or 'none'}")
        for o in only:
            name = f" {demangle(o.name)}" if o.name else ""
            why = o.reason or "no reason known (an object assembled without --gsframe, such as a crt file?)"
            lines.append(f"  {o.start:#x}..{o.start + o.size:#x}{name} (FDE at {o.section}+{o.offset:#x}): {why}")
    untracked = sorted(result.untracked)
    if untracked:
        names = ", ".join(register_name(section.abi, reg) for reg in untracked)
        count = result.functions_untracked
        lines.append(
            f"registers only DWARF tracks (SFrame holds CFA, FP and RA alone): {names} in {quantity(count, 'function')}"
        )
    lines.append(
        f"summary: {quantity(result.functions_compared, 'function')} compared; "
        f"of {result.compared} code bytes both describe, "
        f"{result.agreeing} agree, {result.explained} differ for known reasons, "
        f"{result.disagreeing} disagree"
    )
    return printable_lines(lines)


def _rule_json(section: Section, value: CfiRule) -> dict[str, object]:
    if isinstance(value, Unexpressible):
        return {"kind": "expression", "what": value.what, "expr": value.expr.hex(), "formula": f"DWARF {value.what}"}
    out: dict[str, object] = {"kind": value.kind.value, "formula": rule_formula(section, value)}
    if value.is_value:
        out.update(base="cfa" if value.base < 0 else value.base, offset=value.offset, deref=value.deref)
    return out


def json_text(section: Section, result: Comparison, path: str) -> str:
    """The comparison as JSON: every difference with both rules and both sources' offsets."""
    return json.dumps(json_document(section, result, path), indent=2)


def json_document(section: Section, result: Comparison, path: str) -> dict[str, object]:
    """The comparison's JSON document (`compare --json`, and `check --dwarf --json`'s `dwarf`)."""
    differences = [
        {
            "start": diff.start,
            "end": diff.end,
            "function": diff.name or pair.name,
            "demangled": demangle(diff.name or pair.name) if diff.name or pair.name else None,
            "column": diff.column,
            "explained": diff.reason is not None,
            "reason": diff.reason,
            **({"repeats": diff.repeats, "every": pair.sframe.block_size} if diff.repeats > 1 else {}),
            "sframe": {
                "rule": _rule_json(section, diff.sframe),
                "fde_offset": pair.sframe.span.start,
                "fre_offset": diff.sframe_row.span.start,
                "ra_signed": diff.sframe_row.mangled_ra,
            },
            "dwarf": {
                "rule": _rule_json(section, diff.dwarf),
                "section": pair.dwarf.section,
                "fde_offset": pair.dwarf.fde_offset,
                "cie_offset": pair.dwarf.cie_offset,
                "ra_signed": diff.dwarf_row.ra_signed,
            },
        }
        for pair in result.pairs
        for diff in pair.differences
    ]
    return {
        "file": path,
        "agree": result.agrees,
        "summary": {
            "functions_compared": result.functions_compared,
            "bytes_compared": result.compared,
            "bytes_agreeing": result.agreeing,
            "bytes_explained": result.explained,
            "bytes_disagreeing": result.disagreeing,
        },
        "differences": differences,
        "only": [
            {
                "side": o.side,
                "start": o.start,
                "size": o.size,
                "section": o.section,
                "fde_offset": o.offset,
                "name": o.name,
                "demangled": demangle(o.name) if o.name else None,
                "reason": o.reason,
            }
            for o in result.only
        ],
        "untracked_registers": sorted(result.untracked),
    }
