"""`sfview diff` as text and as JSON: the view of a `diff.engine.Diff`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from sfview import quantity
from sfview.diff.engine import Change, Column, Diff, Entry, Pair
from sfview.inputs.demangle import demangle
from sfview.output.safe_text import printable_lines
from sfview.rule_notation import rule_formula, rule_text
from sfview.sframe.model.rules import Rule
from sfview.sframe.model.terms import FRE_TYPE_NAMES, abi_name

if TYPE_CHECKING:
    from sfview.sframe.model.section import Section


class Labelled:
    """One side as the output names it: its path, where its bytes came from, its section."""

    def __init__(self, path: str, origin: str, section: Section) -> None:
        self.path = path
        self.origin = origin
        self.section = section

    def line(self, letter: str, functions: int) -> str:
        s = self.section
        return (
            f"{letter}: {self.path} ({self.origin}, version {s.version}, {abi_name(s.abi)}, "
            f"{quantity(functions, 'function')}, {len(s.data)} bytes)"
        )


def _value(section: Section, column: Column, value: object) -> str:
    """A change's value in sfview's rule notation, or as the column words it."""
    if value is None:
        return "no row"
    if isinstance(value, Rule):
        return rule_text(section, value)
    if column is Column.RA_SIGNING or column is Column.SIGNAL:
        return "yes" if value else "no"
    if column is Column.SIZE:
        return f"{value:#x}"
    if column is Column.PC_TYPE:
        return f"{value}-byte blocks" if value else "not PCMASK"
    return str(value)


def _name(entry: Entry) -> str:
    return demangle(entry.name) if entry.name else "(no name)"


def _change_line(pair: Pair, change: Change, a: Section, b: Section) -> str:
    sa, sb = pair.a.start, pair.b.start
    every = f", every {change.every:#x} bytes" if change.every else ""
    return (
        f"    +{change.start:#x}..+{change.end:#x} (A {sa + change.start:#x}..{sa + change.end:#x},"
        f" B {sb + change.start:#x}..{sb + change.end:#x}{every}) {change.column.value}:"
        f" A {_value(a, change.column, change.a)}, B {_value(b, change.column, change.b)}"
    )


def _counts(result: Diff) -> str:
    if result.paired_only:
        return (
            f"functions: {result.paired_only} in both (rules not compared), {len(result.only_a)} only in A, "
            f"{len(result.only_b)} only in B"
        )
    return (
        f"functions: {result.same} same, {len(result.encoding)} encoded differently, "
        f"{len(result.meaning)} different in meaning, {len(result.only_a)} only in A, {len(result.only_b)} only in B"
    )


def _encoding_line(pair: Pair) -> str:
    sa, sb = pair.a.shape, pair.b.shape
    parts = []
    if sa.rows != sb.rows:
        parts.append(f"rows {sa.rows} → {sb.rows}")
    if sa.fre_type != sb.fre_type:
        parts.append(
            f"FRE type {FRE_TYPE_NAMES.get(sa.fre_type, sa.fre_type)} → {FRE_TYPE_NAMES.get(sb.fre_type, sb.fre_type)}"
        )
    parts.append(f"{sa.length} → {sb.length} bytes of rows")
    ea, eb = sa.encoding, sb.encoding
    if ea[0] != eb[0] or ea[1] != eb[1] or ea[2] != eb[2]:
        parts.append(f"FDE info {ea[0]:#04x}/{ea[1]}/{ea[2]} → {eb[0]:#04x}/{eb[1]}/{eb[2]} (info, rep size, type)")
    return f"  {_name(pair.a)} A {pair.a.start:#x} B {pair.b.start:#x}: " + ", ".join(parts)


def text(result: Diff, a: Labelled, b: Labelled) -> Iterator[str]:
    """The difference for a person, a line at a time (each made printable, with its newline): the two sides,
    the summary, every meaning difference with the PC ranges it covers and both rules, the functions one
    side alone has, then those encoded differently."""
    head = [
        a.line("A", _functions(result, result.only_a)),
        b.line("B", _functions(result, result.only_b)),
        _counts(result),
        f"bytes: {len(a.section.data)} → {len(b.section.data)} ({len(b.section.data) - len(a.section.data):+d})",
        f"meaning: {_meaning(result)}",
        f"different in meaning: {len(result.meaning) or 'none'}",
    ]
    yield printable_lines(head)
    for pair in result.meaning:
        lines = [
            f"  {_name(pair.a)} A {pair.a.start:#x} (size {pair.a.size:#x}) B {pair.b.start:#x} (size {pair.b.size:#x})"
        ]
        lines += [_change_line(pair, change, a.section, b.section) for change in pair.changes]
        for letter, names in zip("AB", pair.entries_only, strict=True):
            if names:
                lines.append(f"    PLT entries only in {letter}: {', '.join(names)}")
        yield printable_lines(lines)
    for title, only in (("only in A", result.only_a), ("only in B", result.only_b)):
        yield printable_lines([f"{title}: {len(only) or 'none'}"])
        yield from (printable_lines([f"  {e.start:#x}..{e.start + e.size:#x} {_name(e)}"]) for e in only)
    if result.not_compared:
        yield printable_lines([f"not compared, rows unreadable on one side: {len(result.not_compared)}"])
        yield from (printable_lines([f"  {e.start:#x}..{e.start + e.size:#x} {_name(e)}"]) for e in result.not_compared)
    yield printable_lines([f"encoded differently: {len(result.encoding) or 'none'}"])
    yield from (printable_lines([_encoding_line(pair)]) for pair in result.encoding)


def _meaning(result: Diff) -> str:
    if result.paired_only:
        return "not compared (the two ABIs name registers differently)"
    return "the same" if result.same_meaning else "different"


def _functions(result: Diff, only: Sequence[Entry]) -> int:
    """How many functions a side has that were compared: those paired, and `only`, its own."""
    return result.same + len(result.encoding) + len(result.meaning) + result.paired_only + len(only)


def _value_json(section: Section, column: Column, value: object) -> object:
    if isinstance(value, Rule):
        out: dict[str, object] = {"kind": value.kind.value, "text": rule_text(section, value)}
        out["formula"] = rule_formula(section, value)
        if value.is_value:
            out.update(base="cfa" if value.base < 0 else value.base, offset=value.offset, deref=value.deref)
        return out
    return value


def _entry_json(entry: Entry) -> dict[str, object]:
    out: dict[str, object] = {"name": entry.name, "start": entry.start, "size": entry.size, "fde_index": entry.index}
    shape = entry.shape
    if shape is not None:
        out.update(rows=shape.rows, fre_type=shape.fre_type, row_bytes=shape.length)
    return out


def json_chunks(result: Diff, a: Labelled, b: Labelled) -> Iterator[str]:
    """The difference as JSON (`json.dumps(…, indent=2)`'s text), in pieces: the summary, then every pair that
    is not the same, with its changes, each pair's objects made as it is written (two sections that differ
    at every function made 70 MB of JSON, and held 737 MB as objects before the first byte was written)."""

    def pair_json(pair: Pair) -> dict[str, object]:
        out: dict[str, object] = {"a": _entry_json(pair.a), "b": _entry_json(pair.b), "verdict": pair.verdict.value}
        if any(pair.entries_only):
            out["plt_entries_only_in_a"], out["plt_entries_only_in_b"] = pair.entries_only
        if pair.changes:
            out["changes"] = [
                {
                    "start": c.start,
                    "end": c.end,
                    "column": c.column.value,
                    "a": _value_json(a.section, c.column, c.a),
                    "b": _value_json(b.section, c.column, c.b),
                    **({"every": c.every} if c.every else {}),
                }
                for c in pair.changes
            ]
        return out

    def side(labelled: Labelled, only: Sequence[Entry]) -> dict[str, object]:
        s = labelled.section
        return {
            "file": labelled.path,
            "origin": labelled.origin,
            "version": s.version,
            "abi": abi_name(s.abi),
            "bytes": len(s.data),
            "functions": _functions(result, only),
        }

    head = {
        "a": side(a, result.only_a),
        "b": side(b, result.only_b),
        "same_meaning": result.same_meaning,
        "summary": {
            "same": result.same,
            "encoded_differently": len(result.encoding),
            "different_meaning": len(result.meaning),
            "only_in_a": len(result.only_a),
            "only_in_b": len(result.only_b),
            "unreadable_in_a": len(result.unreadable_a),
            "unreadable_in_b": len(result.unreadable_b),
            "not_compared": len(result.not_compared),
            "paired_rules_not_compared": result.paired_only,
        },
    }
    lists: dict[str, Iterator[dict[str, object]]] = {
        "different_meaning": (pair_json(p) for p in result.meaning),
        "only_in_a": (_entry_json(e) for e in result.only_a),
        "only_in_b": (_entry_json(e) for e in result.only_b),
        "encoded_differently": (pair_json(p) for p in result.encoding),
        "not_compared": (_entry_json(e) for e in result.not_compared),
    }
    yield json.dumps(head, indent=2)[: -len("\n}")]
    for key, items in lists.items():
        yield f",\n  {json.dumps(key)}: ["
        empty = True
        for item in items:  # an element of a list in the top object: indented twice, its lines too
            yield ("\n    " if empty else ",\n    ") + json.dumps(item, indent=2).replace("\n", "\n    ")
            empty = False
        yield "]" if empty else "\n  ]"
    yield "\n}"
