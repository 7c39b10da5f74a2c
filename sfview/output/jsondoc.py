"""`sfview dump --json`: the section as JSON, rules as numbers, written as it is made.

The same content as the text dump, for scripts: the header, then every
function with its address, size, types and rows, each row's CFA/FP/RA rules
given as numbers (kind, base register, offset, deref) with a formula beside.

The document is written out function by function, a few thousand rows at a
time, never held whole: a section may claim millions of rows. Rows come from
the bulk reader, and what a row's pattern says (its info byte, offsets and
rules) is turned into JSON once per distinct pattern; an unusual function
goes through the model, as in the text dump.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from sfview import ADDRESS_MASK, rule_notation
from sfview.document import Document
from sfview.errors import InputError, Problems
from sfview.generated.sframe import Sframe
from sfview.inputs.demangle import demangle
from sfview.sframe.bulk.reader import Bulk, BulkFunction, Pattern
from sfview.sframe.model import terms
from sfview.sframe.model.records import OFFSET_SIZES, START_ADDR_SIZES, info_bits
from sfview.sframe.model.rules import CFA, Kind, Rule
from sfview.sframe.model.section import Function, Row, Section

CHUNK_ROWS = 4096
"""Rows gathered before they are written: few writes, little memory."""


def rule_json(section: Section, rule: Rule, text: str) -> dict[str, object]:
    """A rule as numbers for JSON, with its register named, its `text` and its formula beside."""
    out: dict[str, object] = {"text": text, "kind": rule.kind.value}
    if rule.padding:
        out["padding"] = True
    if rule.kind is Kind.VALUE:
        out.update(
            base="cfa" if rule.base == CFA else rule.base,
            base_name=terms.register_name(section.abi, rule.base),
            offset=rule.offset,
            deref=rule.deref,
            fixed=rule.fixed,
        )
    out["formula"] = rule_notation.rule_formula(section, rule)
    return out


def _rules_json(section: Section, cfa: Rule, fp: Rule, ra: Rule, cfa_text: str) -> dict[str, Any]:
    return {
        "cfa": rule_json(section, cfa, cfa_text),
        "fp": rule_json(section, fp, rule_notation.saved_text(section, fp)),
        "ra": rule_json(section, ra, rule_notation.saved_text(section, ra)),
    }


def _row_members(section: Section, row: Row) -> str:
    """What a model row's info byte, offsets and rules say, as the JSON members that follow its position
    (no braces): the same members, in the same order, as a bulk row's pattern (`_pattern_json`)."""
    members = {
        "info": row.info,
        "cfa_base_reg": terms.BASE_REG_NAMES[row.base_reg],
        "offset_size": row.offset_size,
        "offsets": list(row.offsets),
        "mangled_ra": row.mangled_ra,
        "ra_undefined": row.ra_undefined,
        **_rules_json(section, row.cfa, row.fp, row.ra, rule_notation.cfa_text(section, row.cfa)),
    }
    return json.dumps(members)[1:-1]


def _pattern_json(section: Section, key: bytes, pattern: Pattern) -> str:
    """What a bulk row's pattern says, as the JSON members that follow its position (no braces)."""
    info = key[0]
    base = info_bits(info, "fre_info", "cfa_base_reg")
    cfa_text = rule_notation.cfa_text(section, pattern.cfa)
    members = {
        "info": info,
        "cfa_base_reg": terms.BASE_REG_NAMES[base],
        "offset_size": OFFSET_SIZES[info_bits(info, "fre_info", "offset_size")],
        "offsets": list(pattern.offsets),
        "mangled_ra": pattern.mangled_ra,
        "ra_undefined": pattern.ra.kind is Kind.UNDEFINED,
        **_rules_json(section, pattern.cfa, pattern.fp, pattern.ra, cfa_text),
    }
    return json.dumps(members)[1:-1]


def _header_json(doc: Document, section: Section) -> dict[str, Any]:
    return {
        "file": doc.path,
        "origin": doc.origin,
        "section_address": doc.address,
        "section_size": len(doc.data),
        "file_offset": doc.file_offset,
        "header": {
            "version": section.version,
            "version_name": terms.VERSION_NAMES[section.version],
            "flags": section.flags,
            "flag_names": terms.flag_names(section.flags),
            "abi_arch": section.abi,
            "abi_name": terms.abi_name(section.abi),
            "endian": section.endian,
            "cfa_fixed_fp_offset": section.fixed_fp_offset,
            "cfa_fixed_ra_offset": section.fixed_ra_offset,
            "auxhdr_len": section.header.auxhdr_len,
            "num_fdes": section.header.num_fdes,
            "num_fres": section.num_fres,
            "fre_len": section.header.fre_len,
            "fdeoff": section.header.fdeoff,
            "freoff": section.header.freoff,
            "registers": {
                "sp": terms.register_name(section.abi, section.sp_reg),
                "fp": terms.register_name(section.abi, section.fp_reg),
                "ra": terms.register_name(section.abi, section.ra_reg),
            },
            # How a row's stored CFA offset (`offsets[0]`) becomes its rule's (s390x: x 8 + 160), and
            # where the caller's SP is (the CFA plus this: s390x -160).
            "cfa_offset_scale": section.cfa_offset_scale,
            "cfa_offset_bias": section.cfa_offset_bias,
            "sp_val_offset": section.sp_val_offset,
        },
    }


def write(doc: Document, out: TextIO, *, bulk: bool = True) -> list[InputError]:
    """The JSON document written to `out` as it is made; the problems met (each also in the document).

    `bulk=False` takes every function through the model: the two must agree, and a test makes sure.
    """
    section = doc.require_section()
    head = json.dumps(_header_json(doc, section), indent=1)
    out.write(head[: head.rindex("}")].rstrip() + ',\n "functions": [')
    errors = Problems()
    reader = Bulk(section)
    fragments: dict[bytes, str] = {}
    model_fragments: dict[tuple[Any, ...], str] = {}

    def fragment(key: bytes) -> str:
        found = fragments.get(key)
        if found is None:
            found = fragments[key] = _pattern_json(section, key, reader.pattern(key))
        return found

    if bulk:
        _write_bulk(doc, section, reader, fragment, model_fragments, out, errors)
    else:
        for n in range(section.num_fdes):
            out.write(",\n  " if n else "\n  ")
            func = section.function(n)
            rows = _model_rows(section, func, model_fragments)
            _write_function(out, _model_head(doc, func), rows, _error(doc, func, errors))
    out.write("\n ]\n}\n")
    return errors


WRITE_SIZE = 1 << 16
"""Characters of JSON gathered before they are written (64 KB): a write per function's piece would cost a good
part of a large dump."""


def _write_bulk(
    doc: Document,
    section: Section,
    reader: Bulk,
    fragment: Callable[[bytes], str],
    model_fragments: dict[tuple[Any, ...], str],
    out: TextIO,
    errors: list[InputError],
) -> None:
    """Every function through the bulk reader (an unusual one through the model), each written as one string
    when its rows are a list, 64 KB at a time."""
    pieces: list[str] = []
    size = 0
    infos: dict[int, str] = {}
    for n, walked in enumerate(reader.functions()):
        if isinstance(walked, int) or not isinstance(walked[5].rows, list):  # the model's, or rows read as written
            out.write("".join(pieces) + (",\n  " if n else "\n  "))
            pieces, size = [], 0
            if isinstance(walked, int):
                func = section.function(walked)
                rows = _model_rows(section, func, model_fragments)
                _write_function(out, _model_head(doc, func), rows, _error(doc, func, errors))
            else:
                _write_function(out, _bulk_head(doc, section, walked), _bulk_rows(section, walked, fragment),
                                lambda func=walked: _bulk_error(doc, section, func, errors))  # fmt: skip
            continue
        block = walked[5]
        info = infos.get(block.info.byte) or infos.setdefault(block.info.byte, _info_json(walked))
        text = _bulk_head_text(doc, section, walked, info)
        if block.rows:
            text += "\n   " + ",\n   ".join(_bulk_rows(section, walked, fragment))
        problem = _bulk_error(doc, section, walked, errors)
        text += "]" + (f', "error": {json.dumps(problem)}' if problem else "") + "}"
        pieces.append((",\n  " if n else "\n  ") + text)
        size += len(text)
        if size > WRITE_SIZE:
            out.write("".join(pieces))
            pieces, size = [], 0
    out.write("".join(pieces))


def _write_function(out: TextIO, head: dict[str, Any], rows: Iterable[str], error: Callable[[], str | None]) -> None:
    """One function: its facts, its rows a chunk at a time, then (once they are read) its error if any."""
    text = json.dumps(head)
    out.write(text[:-1] + ', "fres": [')
    chunk: list[str] = []
    first = True
    for row in rows:
        chunk.append(row)
        if len(chunk) >= CHUNK_ROWS:
            out.write(("\n   " if first else ",\n   ") + ",\n   ".join(chunk))
            first, chunk = False, []
    if chunk:
        out.write(("\n   " if first else ",\n   ") + ",\n   ".join(chunk))
    problem = error()
    out.write("]" + (f", {json.dumps('error')}: {json.dumps(problem)}" if problem else "") + "}")


def _model_head(doc: Document, func: Function) -> dict[str, Any]:
    head: dict[str, Any] = {
        "index": func.index,
        "address": func.start_address,
        "size": func.size,
        "symbol": doc.function_name(func) or None,
        "demangled": _demangled(doc.function_name(func)),
        "section_offset": func.span.start,
    }
    if func.error is None:
        head.update(
            {
                "info": func.info_byte,
                "fre_type": terms.FRE_TYPE_NAMES[func.fre_type],
                "pc_type": terms.PC_TYPE_NAMES[func.pc_type],
                "fde_type": terms.FDE_TYPE_NAMES.get(func.fde_type, str(func.fde_type)),
                "pauth_key": terms.PAUTH_KEY_NAMES[func.pauth_key],
                "signal_frame": func.signal,
                "rep_size": func.rep_size,
                "num_fres": func.num_fres,
            }
        )
    return head


def _model_rows(section: Section, func: Function, fragments: dict[tuple[Any, ...], str]) -> Iterator[str]:
    """A model function's rows; what each row's info byte and data words say (`_row_members`) made once per
    distinct pair and kind of FDE, within the section's bound (a flexible function's rows all come here)."""
    flexible = func.flexible
    for row in func.rows:
        key = (flexible, row.info, row.offsets)
        found = fragments.get(key)
        if found is None:
            found = _row_members(section, row)
            if len(fragments) < section.kept_max:
                fragments[key] = found
        yield (
            f'{{"index": {row.index}, "address": {row.address}, "start_offset": {row.start_offset}, '
            f'"section_offset": {row.span.start}, "size": {len(row.span)}, {found}}}'
        )


def _error(doc: Document, func: Function, errors: list[InputError]) -> Callable[[], str | None]:
    def problem() -> str | None:
        found = func.error or func.rows_error
        if found is None:
            return None
        errors.append(found)
        return str(doc.locate(found))

    return problem


def _bulk_head(doc: Document, section: Section, func: BulkFunction) -> dict[str, Any]:
    index, start, size, _, _, _ = func
    fde = section.fde_start + index * section.fde_size
    symbol = doc.name_at(start, fde)
    return {
        "index": index,
        "address": start,
        "size": size,
        "symbol": symbol or None,
        "demangled": _demangled(symbol),
        "section_offset": fde,
        **_bulk_head_members(func),
    }


def _bulk_head_members(func: BulkFunction) -> dict[str, Any]:
    """What a function's JSON says after its place: what its info byte gives, and its counts."""
    _, _, _, _, rep_size, block = func
    info = block.info
    return {
        "info": info.byte,
        "fre_type": terms.FRE_TYPE_NAMES[info.fre_type],
        "pc_type": terms.PC_TYPE_NAMES[info.pc_type],
        "fde_type": terms.FDE_TYPE_NAMES[int(Sframe.FdeType.default)],
        "pauth_key": terms.PAUTH_KEY_NAMES[info.pauth_key],
        "signal_frame": info.signal,
        "rep_size": rep_size,
        "num_fres": block.count,
    }


def _info_json(func: BulkFunction) -> str:
    """The members of a function's JSON its FDE info byte gives, as `_bulk_head` writes them (no braces)."""
    head = _bulk_head_members(func)
    return json.dumps({name: head[name] for name in INFO_MEMBERS})[1:-1]


INFO_MEMBERS = ("info", "fre_type", "pc_type", "fde_type", "pauth_key", "signal_frame")
"""The members of a function's JSON that follow from its FDE info byte alone (the same for many functions)."""


def _bulk_head_text(doc: Document, section: Section, func: BulkFunction, info: str) -> str:
    """`_bulk_head` as JSON, its rows to follow: written out here, since a function is printed a million
    times (json.dumps of a dict for each would weigh on the whole dump); strings still through json.dumps."""
    index, start, size, _, rep_size, block = func
    fde = section.fde_start + index * section.fde_size
    symbol = doc.name_at(start, fde)
    demangled = _demangled(symbol)
    return (
        f'{{"index": {index}, "address": {start}, "size": {size}, '
        f'"symbol": {json.dumps(symbol) if symbol else "null"}, '
        f'"demangled": {"null" if demangled is None else json.dumps(demangled)}, "section_offset": {fde}, '
        f'{info}, "rep_size": {rep_size}, "num_fres": {block.count}, "fres": ['
    )


def _bulk_rows(section: Section, func: BulkFunction, fragment: Callable[[bytes], str]) -> Iterator[str]:
    _, start_address, _, pos, _, block = func
    width = START_ADDR_SIZES[block.info.fre_type]
    for j, (start, key) in enumerate(block.rows):
        size = width + len(key)
        address = (start_address + start) & ADDRESS_MASK
        yield (
            f'{{"index": {j}, "address": {address}, "start_offset": {start}, "section_offset": {pos}, '
            f'"size": {size}, {fragment(key)}}}'
        )
        pos += size


def _bulk_error(doc: Document, section: Section, func: BulkFunction, errors: list[InputError]) -> str | None:
    if func[5].complete:
        return None
    found = section.function(func[0]).rows.error
    assert found is not None, "the bulk reader and the model stop at the same row"
    errors.append(found)
    return str(doc.locate(found))


def _demangled(symbol: str) -> str | None:
    """A C++ symbol as people read it (`ns::thrower()`), beside the raw one; None for any other name."""
    shown = demangle(symbol)
    return shown if shown != symbol else None
