"""`sfview dump --json`: the section as JSON, rules as numbers.

The same content as the text dump, for scripts: the header, then every
function with its address, size, types and rows, each row's CFA/FP/RA rules
given as numbers (kind, base register, offset, deref) with a formula beside.
"""

from __future__ import annotations

import json
from typing import Any

from sfview.document import Document
from sfview.sframe import describe
from sfview.sframe.section import Function, Row, Section


def _row_json(section: Section, row: Row) -> dict[str, Any]:
    return {
        "index": row.index,
        "address": row.address,
        "start_offset": row.start_offset,
        "section_offset": row.span.start,
        "size": len(row.span),
        "info": row.info,
        "cfa_base_reg": describe.BASE_REG_NAMES[row.base_reg],
        "offset_size": row.offset_size,
        "offsets": list(row.offsets),
        "mangled_ra": row.mangled_ra,
        "ra_undefined": row.ra_undefined,
        "cfa": describe.rule_json(section, row.cfa, describe.app_cfa(section, row)),
        "fp": describe.rule_json(section, row.fp, describe.app_saved(section, row.fp)),
        "ra": describe.rule_json(section, row.ra, describe.app_saved(section, row.ra)),
    }


def _function_json(doc: Document, section: Section, func: Function) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": func.index,
        "address": func.start_address,
        "size": func.size,
        "symbol": doc.function_name(func) or None,
        "section_offset": func.span.start,
    }
    if func.error is not None:
        out["error"] = str(doc.locate(func.error))
        return out
    out.update(
        {
            "info": func.info_byte,
            "fre_type": describe.FRE_TYPE_NAMES[func.fre_type],
            "pc_type": describe.PC_TYPE_NAMES[func.pc_type],
            "fde_type": describe.FDE_TYPE_NAMES.get(func.fde_type, str(func.fde_type)),
            "pauth_key": describe.PAUTH_KEY_NAMES[func.pauth_key],
            "signal_frame": func.signal,
            "rep_size": func.rep_size,
            "num_fres": func.num_fres,
            "fres": [_row_json(section, row) for row in func.rows],
        }
    )
    if func.rows_error is not None:
        out["error"] = str(doc.locate(func.rows_error))
    return out


def json_document(doc: Document) -> dict[str, Any]:
    """The section as one JSON-ready dict: header, then every function and row."""
    section = doc.require_section()
    source = doc.source
    return {
        "file": source.path,
        "origin": source.origin,
        "section_address": source.address,
        "section_size": len(source.data),
        "file_offset": source.file_offset,
        "header": {
            "version": section.version,
            "version_name": describe.VERSION_NAMES[section.version],
            "flags": section.flags,
            "flag_names": describe.flag_names(section.flags),
            "abi_arch": section.abi,
            "abi_name": describe.abi_name(section.abi),
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
                "sp": describe.register_name(section.abi, section.sp_reg),
                "fp": describe.register_name(section.abi, section.fp_reg),
                "ra": describe.register_name(section.abi, section.ra_reg),
            },
        },
        "functions": [_function_json(doc, section, func) for func in section.functions()],
    }


def json_text(doc: Document) -> str:
    return json.dumps(json_document(doc), indent=1)
