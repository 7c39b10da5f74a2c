# GENERATED from sframe.ksy by tools/kaitai/compile.js with kaitai-struct-compiler 0.11.0.
# Do not edit: change sframe.ksy and run `node tools/kaitai/compile.js`.
"""The fixed-size records of sframe.ksy as struct formats, for decoding whole sections fast."""

from typing import NamedTuple


class Record(NamedTuple):
    """A fixed-size record: its size, struct format (no byte order) and each field's (offset, char)."""

    size: int
    format: str
    fields: dict[str, tuple[int, str]]


VERSIONS = (1, 2, 3,)
PREAMBLE = Record(4, "HBB", {"magic": (0, "H"), "version": (2, "B"), "flags": (3, "B")})
HEADER = Record(24, "BbbBIIIII", {"abi_arch": (0, "B"), "cfa_fixed_fp_offset": (1, "b"), "cfa_fixed_ra_offset": (2, "b"), "auxhdr_len": (3, "B"), "num_fdes": (4, "I"), "num_fres": (8, "I"), "fre_len": (12, "I"), "fdeoff": (16, "I"), "freoff": (20, "I")})
FDE = {
    1: Record(17, "iIIIB", {"func_start": (0, "i"), "func_size": (4, "I"), "func_start_fre_off": (8, "I"), "func_num_fres": (12, "I"), "func_info": (16, "B")}),
    2: Record(20, "iIIIBBH", {"func_start": (0, "i"), "func_size": (4, "I"), "func_start_fre_off": (8, "I"), "func_num_fres": (12, "I"), "func_info": (16, "B"), "func_rep_size": (17, "B"), "padding2": (18, "H")}),
    3: Record(16, "qII", {"func_start": (0, "q"), "func_size": (8, "I"), "func_start_fre_off": (12, "I")}),
}
FDE_ATTR = Record(5, "HBBB", {"func_num_fres": (0, "H"), "func_info": (2, "B"), "func_info2": (3, "B"), "func_rep_size": (4, "B")})

# The bit fields of each bit byte: name -> (lowest bit, width).
BITS = {
    "flags": {"reserved": (3, 5), "fde_func_start_pcrel": (2, 1), "frame_pointer": (1, 1), "fde_sorted": (0, 1)},
    "fde_info": {"signal_frame": (7, 1), "unused": (6, 1), "pauth_key": (5, 1), "pc_type": (4, 1), "fre_type": (0, 4)},
    "fde_info2": {"unused": (5, 3), "fde_type": (0, 5)},
    "fre_info": {"mangled_ra": (7, 1), "offset_size": (5, 2), "offset_count": (1, 4), "cfa_base_reg": (0, 1)},
}

# FRE type (FDE info byte) -> struct char of each FRE's start address.
FRE_START_ADDR = {0: "B", 1: "H", 2: "I"}
# Offset size (FRE info byte) -> struct char of each stack offset.
FRE_OFFSET = {0: "b", 1: "h", 2: "i"}
