"""`sfview dump`: the section as binutils prints it, or as JSON.

The text follows libsframe's dumper (`readelf --sframe`, `objdump --sframe`)
byte for byte. Its wording changed with the format, so the dialect follows the
section's version, that is the binutils that emits it:

- version 1 as binutils 2.40 prints it: no "CFA fixed" lines, an RA that the
  header fixes shown as `u`, and the flag line as 2.40 builds it (its string
  copy keeps only the last flag when both SORTED and FRAME_POINTER are set);
- versions 2 and 3 as binutils 2.45/2.46 print them: one flag per line,
  "CFA fixed FP/RA offset" lines, a fixed RA shown as `f`, `attr = "S"` for
  signal frames, `RA undefined` rows and `U` for a padded RA.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.inputs.source import Source
from sfview.sframe import describe as descriptions
from sfview.sframe.section import Function, Row, Rule, Section

TITLE = "Contents of the SFrame section .sframe:"


def _i32(value: int) -> int:
    """A 32-bit field printed with `%d`, as the C dumper does."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _flags_v1(flags: int) -> str:
    if not flags:
        return "NONE"
    text = ""
    if flags & Sframe.Flag.fde_sorted:
        text = "SFRAME_F_FDE_SORTED"
    if flags & Sframe.Flag.frame_pointer:
        text = "SFRAME_F_FRAME_POINTER"
    return text


def _flag_lines(flags: int) -> list[str]:
    if not flags:
        return ["    Flags: NONE"]
    lines = []
    prefix = "Flags: "
    for bit, name in descriptions.FLAG_NAMES:
        if flags & bit:
            flags &= ~bit
            lines.append(f"{prefix:>11}{name}{',' if flags else ''}")
            prefix = " "
    if flags:
        lines.append(f"{prefix:>11}{flags}")
    return lines


def _header_lines(section: Section) -> list[str]:
    lines = ["  Header :", "", f"    Version: {descriptions.VERSION_NAMES[section.version]}"]
    if section.version == 1:
        lines.append(f"    Flags: {_flags_v1(section.flags)}")
    else:
        lines.extend(_flag_lines(section.flags))
        if section.fixed_fp_offset:
            lines.append(f"    CFA fixed FP offset: {section.fixed_fp_offset}")
        if section.fixed_ra_offset:
            lines.append(f"    CFA fixed RA offset: {section.fixed_ra_offset}")
    lines.append(f"    Num FDEs: {_i32(section.header.num_fdes)}")
    lines.append(f"    Num FREs: {_i32(section.num_fres)}")
    return lines


def _function_title(section: Section, func: Function) -> str:
    title = f"    func idx [{func.index}]: pc = {func.start_address:#x}, size = {_i32(func.size)} bytes"
    if section.version >= 2:
        attrs = ("S" if func.signal else "") + ("F" if func.fde_type == 1 else "")
        if attrs:
            title += f', attr = "{attrs}"'
    if section.is_aarch64 and func.pauth_key == 1:
        title += ", pauth = B key"
    return title


def _ra_text(section: Section, row: Row) -> str:
    if section.version >= 2 and section.fixed_ra_offset:
        return "f"
    if row.ra_padding:
        return "U"
    if row.ra is not None and not row.ra.from_header:
        return row.ra.text()
    return "u"


def _row_line(section: Section, func: Function, row: Row) -> str:
    start = row.start_offset if func.pcmask else row.address
    if row.ra_undefined:
        return f"    {start:016x}  RA undefined"
    cfa = row.cfa.text() if row.cfa else "u"
    fp = row.fp.text() if row.fp else "u"
    ra = _ra_text(section, row) + ("[s]" if row.mangled_ra else "   ")
    return f"    {start:016x}  {cfa:<10}{fp:<10}{ra:<13}"


# Below this many functions a dump takes well under a second: not worth a process.
PARALLEL_MIN_FDES = 4096
_forked_section: Section | None = None


def text(section: Section) -> tuple[str, InputError | None]:
    """The whole dump, as far as the section could be decoded, and the error it stopped at.

    Decoding is pure Python and bound by the CPU, so a big section is split
    into chunks of functions decoded by forked processes, one per CPU; the
    output is the same, in the same order.
    """
    # The dumper prints the title without a newline, then "\n  Header :".
    head = "\n".join([TITLE, *_header_lines(section), "", "  Function Index :"])
    jobs = _jobs(section)
    if jobs == 1:
        body, error = _functions_text(section, 0, section.num_fdes)
        return head + body + "\n", error
    global _forked_section
    _forked_section = section
    step = -(-section.num_fdes // (jobs * 4))
    bounds = [(i, min(i + step, section.num_fdes)) for i in range(0, section.num_fdes, step)]
    parts = []
    error = None
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for body, error in pool.map(_forked_chunk, bounds):
            parts.append(body)
            if error is not None:
                break
    _forked_section = None
    return head + "".join(parts) + "\n", error


def _jobs(section: Section) -> int:
    if section.num_fdes < PARALLEL_MIN_FDES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), 8))


def _forked_chunk(bounds: tuple[int, int]) -> tuple[str, InputError | None]:
    assert _forked_section is not None, "set before the fork"
    return _functions_text(_forked_section, *bounds)


def _functions_text(section: Section, start: int, stop: int) -> tuple[str, InputError | None]:
    """Functions `start` to `stop` of the dump, each line led by its newline."""
    lines: list[str] = []
    for index in range(start, stop):
        func = section.function(index)
        if func.error is not None:
            return _joined(lines), func.error
        lines.append("")
        lines.append(_function_title(section, func))
        marker = "[m]" if func.pcmask else "   "
        lines.append(f"    {'STARTPC':<7}{marker:<8} {'CFA':<10}{'FP':<10}{'RA':<13}")
        lines.extend(_row_line(section, func, row) for row in func.rows)
        if func.rows_error is not None:
            return _joined(lines), func.rows_error
    return _joined(lines), None


def _joined(lines: list[str]) -> str:
    return "".join("\n" + line for line in lines)


def first_error(section: Section) -> InputError | None:
    """The first decoding error the text dump stopped at, if any."""
    for func in section.functions():
        if func.error is not None:
            return func.error
        func.rows  # noqa: B018 - decode, to learn of a row error
        if func.rows_error is not None:
            return func.rows_error
    return None


def _rule_json(rule: Rule | None) -> dict[str, Any] | None:
    if rule is None:
        return None
    return {
        "text": rule.text(),
        "base": rule.base,
        "offset": rule.offset,
        "deref": rule.deref,
        "from_header": rule.from_header,
    }


def _row_json(row: Row) -> dict[str, Any]:
    return {
        "index": row.index,
        "address": row.address,
        "start_offset": row.start_offset,
        "section_offset": row.span.start,
        "size": len(row.span),
        "info": row.info,
        "cfa_base_reg": row.base_reg_name,
        "offset_size": row.offset_size,
        "offsets": list(row.offsets),
        "mangled_ra": row.mangled_ra,
        "ra_undefined": row.ra_undefined,
        "cfa": _rule_json(row.cfa),
        "fp": _rule_json(row.fp),
        "ra": _rule_json(row.ra),
    }


def _function_json(source: Source, func: Function) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": func.index,
        "address": func.start_address,
        "size": func.size,
        "symbol": source.function_name(func) or None,
        "section_offset": func.span.start,
    }
    if func.error is not None:
        out["error"] = str(source.error(func.error))
        return out
    out.update(
        {
            "info": func.info_byte,
            "fre_type": descriptions.FRE_TYPE_NAMES[func.fre_type],
            "pc_type": descriptions.PC_TYPE_NAMES[func.pc_type],
            "fde_type": descriptions.FDE_TYPE_NAMES.get(func.fde_type, str(func.fde_type)),
            "pauth_key": descriptions.PAUTH_KEY_NAMES[func.pauth_key],
            "signal_frame": func.signal,
            "rep_size": func.rep_size,
            "num_fres": func.num_fres,
            "fres": [_row_json(row) for row in func.rows],
        }
    )
    if func.rows_error is not None:
        out["error"] = str(source.error(func.rows_error))
    return out


def json_document(source: Source, section: Section) -> dict[str, Any]:
    """The section as one JSON-ready dict: header, then every function and row."""
    return {
        "file": source.path,
        "origin": source.origin,
        "section_address": source.address,
        "section_size": len(source.data),
        "file_offset": source.file_offset,
        "header": {
            "version": section.version,
            "version_name": descriptions.VERSION_NAMES[section.version],
            "flags": section.flags,
            "flag_names": descriptions.flag_names(section.flags),
            "abi_arch": section.abi,
            "abi_name": descriptions.abi_name(section.abi),
            "endian": section.endian,
            "cfa_fixed_fp_offset": section.fixed_fp_offset,
            "cfa_fixed_ra_offset": section.fixed_ra_offset,
            "auxhdr_len": section.header.auxhdr_len,
            "num_fdes": section.header.num_fdes,
            "num_fres": section.num_fres,
            "fre_len": section.header.fre_len,
            "fdeoff": section.header.fdeoff,
            "freoff": section.header.freoff,
        },
        "functions": [_function_json(source, func) for func in section.functions()],
    }


def json_text(source: Source, section: Section) -> str:
    return json.dumps(json_document(source, section), indent=1)
