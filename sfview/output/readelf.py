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

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.sframe import describe
from sfview.sframe.section import Function, Row, Section

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


def _flag_lines(flags: int, version: int) -> list[str]:
    """One flag per line, as binutils 2.45 on; version 3 has no SFRAME_F_FRAME_POINTER (a bare number then)."""
    if not flags:
        return ["    Flags: NONE"]
    lines = []
    prefix = "Flags: "
    for bit, name in describe.FLAG_NAMES:
        if flags & bit and not (version >= 3 and bit == Sframe.Flag.frame_pointer):
            flags &= ~bit
            lines.append(f"{prefix:>11}{name}{',' if flags else ''}")
            prefix = " "
    if flags:
        lines.append(f"{prefix:>11}{flags}")
    return lines


def _header_lines(section: Section) -> list[str]:
    lines = ["  Header :", "", f"    Version: {describe.VERSION_NAMES[section.version]}"]
    if section.version == 1:
        lines.append(f"    Flags: {_flags_v1(section.flags)}")
    else:
        lines.extend(_flag_lines(section.flags, section.version))
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
        attrs = ("S" if func.signal else "") + ("F" if func.flexible else "")
        if attrs:
            title += f', attr = "{attrs}"'
    if section.is_aarch64 and func.pauth_key == 1:
        title += ", pauth = B key"
    return title


def _row_line(section: Section, func: Function, row: Row) -> str:
    start = row.start_offset if func.pcmask else row.address
    if row.ra_undefined:
        return f"    {start:016x}  RA undefined"
    cfa, fp, ra = describe.binutils_columns(section, row)
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
