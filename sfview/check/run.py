"""Running the checks of `catalogue.py` over a section: every problem, named at its bytes.

Functions and rows come from the bulk reader (`sframe/bulk.py`), so that a
40,000-function section is checked in a fraction of a second; a function
the bulk reader finds unusual, or one a check has something to say about,
is read through the model, whose spans name the exact bytes. Work is bounded
by the section's size: counts in the header only bound loops that also stop
at the section's end.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from sfview.check.catalogue import CHECKS, Check, Severity
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe import describe
from sfview.sframe.bulk import Bulk, info_bits
from sfview.sframe.rules import Kind, Rule
from sfview.sframe.section import Section

HEADER_AT = layout.PREAMBLE.size
"""Where the header's fields start (after the preamble)."""


@dataclass(frozen=True)
class Diagnostic:
    """One problem: which check, what is wrong and what was expected, and where."""

    check: Check
    message: str
    start: int
    """Section offset of the first byte concerned."""
    end: int
    path: str
    """The field, as the structure tree names it (`fdes[2].func_num_fres`)."""

    @property
    def severity(self) -> Severity:
        return self.check.severity


def _header_field(name: str) -> tuple[int, int, str]:
    """Where a header field is (from the generated layout), and its path."""
    offset, char = layout.HEADER.fields[name]
    start = HEADER_AT + offset
    return start, start + struct.calcsize(char), f"header.{name}"


def check(section: Section, *, relocatable: bool = False) -> list[Diagnostic]:
    """Every problem found in `section`: the header's, then each function's and its rows'.

    `relocatable`: the section comes from an object file, whose function starts
    are not relocated yet (all 0): their order and overlaps are not checked.
    """
    return [*_header(section), *_functions(section, relocatable)]


def _diag(check_id: str, message: str, start: int, end: int, path: str) -> Diagnostic:
    return Diagnostic(CHECKS[check_id], message, start, end, path)


# The header ------------------------------------------------------------------------


def _header(section: Section) -> Iterator[Diagnostic]:
    flags_at = layout.PREAMBLE.fields["flags"][0]
    known = describe.KNOWN_FLAGS & ~(Sframe.Flag.frame_pointer if section.version >= 3 else 0)
    if section.flags & ~known:
        yield _diag(
            "flags-unknown",
            f"flags {section.flags:#04x} set bits {section.flags & ~known:#04x}, which version {section.version} "
            f"does not define (it defines {', '.join(describe.flag_names(known))})",
            flags_at,
            flags_at + 1,
            "preamble.flags",
        )
    if section.abi not in {int(a) for a in Sframe.AbiArch}:
        start, end, path = _header_field("abi_arch")
        yield _diag("abi-unknown", f"ABI/arch {section.abi} is not one of 1 to 4", start, end, path)
    if section.error is not None:
        start, end, path = _header_field("num_fdes")
        yield _diag("fde-array-out-of-bounds", section.error.message, start, end, path)
    size = len(section.data)
    if section.fre_end > size:
        start, end, path = _header_field("fre_len")
        yield _diag(
            "fre-subsection-out-of-bounds",
            f"the FRE sub-section would end at {section.fre_end:#x} (from {section.fre_start:#x}, "
            f"{section.header.fre_len} bytes), past the section's end ({size:#x})",
            start,
            end,
            path,
        )
    fde_end = section.fde_start + section.header.num_fdes * section.fde_size
    overlap = section.fde_start < section.fre_end and section.fre_start < fde_end and section.header.num_fdes
    if overlap and section.error is None:  # an FDE array past the section's end is said so once, above
        start, end, path = _header_field("freoff")
        yield _diag(
            "subsections-overlap",
            f"the FDE array [{section.fde_start:#x}, {fde_end:#x}) and the FRE sub-section "
            f"[{section.fre_start:#x}, {section.fre_end:#x}) overlap",
            start,
            end,
            path,
        )
    tail = section.data[section.fre_end :] if section.fre_end <= size else b""
    if any(tail):
        first = section.fre_end + next(i for i, b in enumerate(tail) if b)
        yield _diag(
            "trailing-bytes",
            f"{len(tail)} bytes follow the FRE sub-section, not all zero (the first non-zero at {first:#x})",
            section.fre_end,
            size,
            "section",
        )


# Functions and rows --------------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    start: int
    info: int
    cfa: Rule


def _functions(section: Section, relocatable: bool) -> Iterator[Diagnostic]:
    reader = Bulk(section)
    total_fres = 0
    counted_all = True  # an FDE that cannot be read has no FRE count to add
    previous: tuple[int, int, int] | None = None  # index, start, end of the last decodable function
    for walked in reader.functions():
        if isinstance(walked, int):
            func = section.function(walked)
            if func.error is not None:
                counted_all = False
                yield _diag("fde-undecodable", func.error.message, *_offset_span(func.error.offset), f"fdes[{walked}]")
                continue
            index, start, size, pcmask = func.index, func.start_address, func.size, func.pcmask
            info = (func.pauth_key == Sframe.PauthKey.key_b, func.rep_size, func.flexible)
            rows = [_Row(r.start_offset, r.info, r.cfa) for r in func.rows]
            total_fres += func.num_fres
            if func.rows_error is not None:
                yield _diag(
                    "fre-undecodable", func.rows_error.message, *_offset_span(func.rows_error.offset), f"fdes[{index}]"
                )
        else:
            fast, fast_rows = walked
            index, start, size, pcmask = fast.index, fast.start_address, fast.size, fast.info.pcmask
            info = (fast.info.pauth_key_b, fast.rep_size, False)
            rows = [_Row(s, key[0], reader.pattern(key).cfa) for s, key in fast_rows]
            total_fres += fast.num_fres
        yield from _function(section, index, start, size, pcmask, info, rows, previous)
        if not relocatable:
            previous = (index, start, start + size)
    if total_fres != section.num_fres and section.error is None and counted_all:
        start, end, path = _header_field("num_fres")
        yield _diag(
            "num-fres-mismatch",
            f"num_fres = {section.num_fres}, but the FDEs count {total_fres} FREs",
            start,
            end,
            path,
        )


def _offset_span(offset: int | None) -> tuple[int, int]:
    return (offset or 0, (offset or 0) + 1)


def _function(
    section: Section,
    index: int,
    start: int,
    size: int,
    pcmask: bool,
    info: tuple[bool, int, bool],
    rows: list[_Row],
    previous: tuple[int, int, int] | None,
) -> Iterator[Diagnostic]:
    """The checks of one function and its rows (`info`: pauth key B, rep_size, flexible)."""
    pauth_b, rep_size, flexible = info
    fde = section.fde_start + index * section.fde_size
    here = (fde, fde + section.fde_size, f"fdes[{index}]")
    if previous is not None:
        p_index, p_start, p_end = previous
        if section.fdes_sorted and start <= p_start:
            yield _diag(
                "fdes-unsorted",
                f"starts at {start:#x}, not after fdes[{p_index}] ({p_start:#x}), though SFRAME_F_FDE_SORTED is set",
                *here,
            )
        elif start < p_end and start >= p_start:
            yield _diag("functions-overlap", f"starts at {start:#x}, inside fdes[{p_index}] (ends {p_end:#x})", *here)
    if size == 0:
        yield _diag("function-size-zero", f"func_size is 0: the function at {start:#x} covers no byte", *here)
    if pcmask and section.version >= 2 and rep_size == 0:
        yield _diag("pcmask-rep-size-zero", "a PCMASK function with func_rep_size 0: no block to match PCs in", *here)
    if pauth_b and not section.is_aarch64:
        yield _diag("pauth-key-not-aarch64", f"pointer-authentication key B on {describe.abi_name(section.abi)}", *here)
    yield from _rows(section, index, size, pcmask, flexible, rows, here)


def _rows(
    section: Section,
    index: int,
    size: int,
    pcmask: bool,
    flexible: bool,
    rows: list[_Row],
    here: tuple[int, int, str],
) -> Iterator[Diagnostic]:
    if rows and rows[0].start != 0 and not pcmask:
        yield _diag("first-row-not-at-zero", f"the first row starts at +{rows[0].start:#x}: nothing covers +0", *here)
    allowed = _offset_counts(section)
    for j, row in enumerate(rows):
        where = (*here[:2], f"{here[2]}.fres[{j}]")
        if j and row.start <= rows[j - 1].start:
            yield _diag("rows-not-increasing", f"row {j} starts at +{row.start:#x}, not after row {j - 1}", *where)
        if not pcmask and size and row.start >= size:
            yield _diag(
                "row-past-function", f"row {j} starts at +{row.start:#x}, past the function's {size} bytes", *where
            )
        if info_bits(row.info, "fre_info", "mangled_ra") and not section.is_aarch64:
            signed = f"row {j} marks its RA signed on {describe.abi_name(section.abi)}"
            yield _diag("mangled-ra-not-aarch64", signed, *where)
        count = info_bits(row.info, "fre_info", "offset_count")
        if not flexible and count not in allowed:
            yield _diag(
                "offset-count-impossible",
                f"row {j} has {count} offsets; on {describe.abi_name(section.abi)} a row has "
                f"{' or '.join(map(str, sorted(allowed)))}",
                *where,
            )
        if row.cfa.kind is Kind.VALUE and (row.cfa.offset < 0 or row.cfa.offset % 8):
            yield _diag(
                "cfa-offset-implausible",
                f"row {j}: CFA offset {row.cfa.offset} (negative or not a multiple of 8)",
                *where,
            )


def _offset_counts(section: Section) -> set[int]:
    """How many offsets a default row may have: the CFA's, then the RA's and FP's unless the header fixes them."""
    tracked = 1 + (0 if section.fixed_ra_offset else 1) + (0 if section.fixed_fp_offset else 1)
    allowed = set(range(1, tracked + 1))  # AArch64 writes CFA and RA alone, before the FP is saved
    if section.version >= 3:
        allowed.add(0)  # no offsets: the return address is undefined (the outermost frame)
    return allowed
