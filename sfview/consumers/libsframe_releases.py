"""What differs from one libsframe release to the next, as data: each field names the code it stands for.

Read from binutils' `libsframe/sframe.c` and `include/sframe*.h` of the 2.40,
2.44 and 2.47 releases (Debian's source packages 2.40-2, 2.44-3 and the 2.47
tarball). The decoder and lookup in `libsframe.py` are one piece of code
driven by these fields; the tests run each release's own library beside it
(Debian's libsframe0 2.40-2, libsframe1 2.44-3, and sid's libsframe3
2.47.50.20261021, a snapshot after 2.47 that behaves the same on everything
the tests give it).
"""

from __future__ import annotations

from dataclasses import dataclass

from sfview.generated.sframe import Sframe

SORTED = int(Sframe.Flag.fde_sorted)
FRAME_POINTER = int(Sframe.Flag.frame_pointer)
PCREL = int(Sframe.Flag.fde_func_start_pcrel)

ERRORS = (
    ("SFRAME_ERR_VERSION_INVAL", "SFrame version not supported."),
    ("SFRAME_ERR_NOMEM", "Out of Memory."),
    ("SFRAME_ERR_INVAL", "Corrupt SFrame."),
    ("SFRAME_ERR_BUF_INVAL", "Buffer does not contain SFrame data."),
    ("SFRAME_ERR_DCTX_INVAL", "Corrupt SFrame decoder."),
    ("SFRAME_ERR_ECTX_INVAL", "Corrupt SFrame encoder."),
    ("SFRAME_ERR_FDE_INVAL", "Corrput FDE."),
    ("SFRAME_ERR_FRE_INVAL", "Corrupt FRE."),
    ("SFRAME_ERR_FDE_NOTFOUND", "FDE not found."),
    ("SFRAME_ERR_FDE_NOTSORTED", "FDEs not sorted."),
    ("SFRAME_ERR_FRE_NOTFOUND", "FRE not found."),
    ("SFRAME_ERR_FREOFFSET_NOPRESENT", "FRE offset not present."),
)
"""`_SFRAME_ERRORS` of sframe-api.h, numbered from SFRAME_ERR_BASE (2000); the same in every release."""
ERROR_BASE = 2000
CODES = {name: ERROR_BASE + i for i, (name, _) in enumerate(ERRORS)}


def error_text(name: str) -> str:
    """`SFRAME_ERR_NOMEM (2001): Out of Memory.` -- the name, the number a caller gets, `sframe_errmsg`'s text."""
    code = CODES[name]
    return f"{name} ({code}): {ERRORS[code - ERROR_BASE][1]}"


@dataclass(frozen=True)
class Release:
    """One libsframe release, in the terms of its own code."""

    name: str
    """`2.40`: the binutils release."""
    versions: frozenset[int]
    """`sframe_header_sanity_check_p`: the format versions it lets through."""
    flags: dict[int, int]
    """The same check: the flag bits it allows, by the section's version (`all_flags`, `SFRAME_V3_F_ALL_FLAGS`)."""
    header_error: str
    """What `sframe_decode` sets when that check fails on a section in the host's byte order (2.40 and
    2.44 say SFRAME_ERR_NOMEM there, 2.47 SFRAME_ERR_BUF_INVAL)."""
    fde_layouts: dict[int, int]
    """Section version -> the version whose FDE layout the release reads it with (2.44 has only the
    20-byte `sframe_func_desc_entry` and reads version 1 sections with it); a version missing here
    is refused by `sframe_fde_tbl_init` (2.47 reads no version 1)."""
    uses_offsets: bool
    """Whether `sframe_decode` places the FDE array at `sfh_fdeoff` and the FREs at `sfh_freoff` (2.47),
    or right after the header and right after the FDE array, whatever the header says (2.40, 2.44)."""
    field_relative_starts: bool
    """`sframe_decoder_get_secrel_func_start_addr` (2.47): a start is taken relative to its own field
    (`sfde_func_start_address` + the field's offset in the section), whatever the PCREL flag says;
    before, the raw field is compared with the PC."""
    lookup: str
    """The shape of `sframe_find_fre`: `bitmask` (2.40: `& 0xff` for PCMASK, 32-bit wrapping
    compares), `range32` (2.44: `sframe_fre_check_range_p` on int32, `pc % rep_size`), `range64`
    (2.47: int64 PC, uint32 offsets into the function)."""
    exact_search: bool
    """`sframe_get_funcdesc_with_addr_internal` checks that the PC is inside the FDE it returns (2.47);
    before, it returns the last FDE starting at or before the PC."""
    max_datawords: int
    """`sframe_fre_sanity_check_p`: the most data words a row may have (`MAX_NUM_STACK_OFFSETS`)."""
    dataword_bytes: int
    """`MAX_OFFSET_BYTES` / `MAX_DATAWORD_BYTES`: the room for a row's data words in
    `sframe_frame_row_entry`, into which `sframe_decode_fre` copies them unchecked."""
    getters: str
    """`sframe_fre_get_fp_offset` / `_ra_offset` with a fixed offset in the header: `absent`
    (2.40: SFRAME_ERR_FREOFFSET_NOPRESENT), `fixed` (2.44: the header's value), `flex` (2.47: the
    same, plus the FDE type: flexible rows' control words and RA padding)."""
    checked_walk: bool
    """The byte-swapping walk of 2.47 (`flip_sframe_fdes_with_fres_v2/v3`) checks each record against
    the buffer's end, compares byte counts with `sfh_freoff - sfh_fdeoff` and `sfh_fre_len` and wants
    zeros after the rows; 2.40's and 2.44's `flip_sframe` only check each FDE's start and that the
    records add up to the section's size."""


RELEASES = {
    "2.40": Release(
        name="2.40",
        versions=frozenset({1}),
        flags={1: SORTED | FRAME_POINTER},
        header_error="SFRAME_ERR_NOMEM",
        fde_layouts={1: 1},
        uses_offsets=False,
        field_relative_starts=False,
        lookup="bitmask",
        exact_search=False,
        max_datawords=3,
        dataword_bytes=12,
        getters="absent",
        checked_walk=False,
    ),
    "2.44": Release(
        name="2.44",
        versions=frozenset({1, 2}),
        flags={1: SORTED | FRAME_POINTER, 2: SORTED | FRAME_POINTER},
        header_error="SFRAME_ERR_NOMEM",
        fde_layouts={1: 2, 2: 2},
        uses_offsets=False,
        field_relative_starts=False,
        lookup="range32",
        exact_search=False,
        max_datawords=3,
        dataword_bytes=12,
        getters="fixed",
        checked_walk=False,
    ),
    "2.47": Release(
        name="2.47",
        versions=frozenset({1, 2, 3}),
        flags={1: SORTED | FRAME_POINTER | PCREL, 2: SORTED | FRAME_POINTER | PCREL, 3: SORTED | PCREL},
        header_error="SFRAME_ERR_BUF_INVAL",
        fde_layouts={2: 2, 3: 3},
        uses_offsets=True,
        field_relative_starts=True,
        lookup="range64",
        exact_search=True,
        max_datawords=6,
        dataword_bytes=24,
        getters="flex",
        checked_walk=True,
    ),
}
NEWEST = "2.47"
