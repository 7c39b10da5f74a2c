# GENERATED from sframe.ksy by tools/kaitai/compile.js with kaitai-struct-compiler 0.11.0.
# Do not edit: change sframe.ksy and run `node tools/kaitai/compile.js`.
"""The documentation written in sframe.ksy, by type, field and enum value."""

TYPES = {
    "sframe": {
        "doc": "SFrame (\"Simple Frame\") is the compact stack-trace format that GNU binutils\nemits next to .eh_frame, in a section named .sframe and a segment of type\nPT_GNU_SFRAME. For every function it records, row by row, how to find the\nCanonical Frame Address (CFA), the frame pointer (FP) and the return\naddress (RA): enough for a profiler or a kernel to walk the stack fast.\n\nA section is a header (which starts with a 4-byte preamble), an array of\nfunction descriptor entries (FDEs) and a sub-section of variable-length\nframe row entries (FREs). All multi-byte fields are in the byte order of the\ntarget; the magic number tells which one.\n\nThis description covers versions 1 and 2 of the format and version 3, which\nsplits each FDE into a fixed-size index entry and a small attribute block\nstored in front of the function's FREs.",
        "seq": [
            "section"
        ],
        "fields": {
            "section": {
                "doc": "The whole section, read in the byte order its magic number gives.",
                "type": "section"
            },
            "magic_be": {
                "doc": "The first two bytes read as big-endian, only to choose the byte order:\n0xdee2 means a big-endian section, 0xe2de a little-endian one.",
                "type": "u2be"
            }
        }
    },
    "section": {
        "doc": "",
        "seq": [
            "preamble",
            "header",
            "auxhdr"
        ],
        "fields": {
            "preamble": {
                "doc": "The part of the header that every version shares.",
                "type": "preamble"
            },
            "header": {
                "doc": "Section-wide parameters and where the sub-sections are.",
                "type": "header"
            },
            "auxhdr": {
                "doc": "The auxiliary header: ABI-specific bytes that follow the fixed header.\nNo ABI defines any yet; its length still moves the sub-sections,\nsince their offsets count from its end."
            },
            "version": {
                "doc": "The format version as a number, for the version-dependent layouts."
            },
            "header_end": {
                "doc": "Offset just past the header and the auxiliary header: both\nsub-section offsets in the header count from here."
            },
            "fde_size": {
                "doc": "Size in bytes of one entry of the FDE array: 17 in version 1, 20 in\nversion 2 (repetition size and padding added), 16 in version 3 (the\nindex entry only; the attributes moved next to the FREs)."
            },
            "fde_start": {
                "doc": "Section offset of the FDE array."
            },
            "fre_start": {
                "doc": "Section offset of the FRE sub-section."
            },
            "fdes": {
                "doc": "The function descriptor entries, one per function, sorted by start\naddress when the FDE_SORTED flag is set.",
                "type": "fde"
            }
        }
    }
}

ENUMS = {
    "version": {
        "1": {
            "id": "v1",
            "doc": "SFRAME_VERSION_1, from binutils 2.40; 17-byte FDEs."
        },
        "2": {
            "id": "v2",
            "doc": "SFRAME_VERSION_2, binutils 2.41 to 2.45; 20-byte FDEs."
        },
        "3": {
            "id": "v3",
            "doc": "SFRAME_VERSION_3, binutils 2.46; FDE index plus attribute blocks."
        }
    },
    "abi_arch": {
        "1": {
            "id": "aarch64_endian_big",
            "doc": "SFRAME_ABI_AARCH64_ENDIAN_BIG, AArch64 big-endian."
        },
        "2": {
            "id": "aarch64_endian_little",
            "doc": "SFRAME_ABI_AARCH64_ENDIAN_LITTLE, AArch64 little-endian."
        },
        "3": {
            "id": "amd64_endian_little",
            "doc": "SFRAME_ABI_AMD64_ENDIAN_LITTLE, x86-64 little-endian."
        },
        "4": {
            "id": "s390x_endian_big",
            "doc": "SFRAME_ABI_S390X_ENDIAN_BIG, s390x big-endian (binutils 2.45+)."
        }
    },
    "pauth_key": {
        "0": {
            "id": "key_a",
            "doc": "SFRAME_AARCH64_PAUTH_KEY_A, return addresses signed with key A."
        },
        "1": {
            "id": "key_b",
            "doc": "SFRAME_AARCH64_PAUTH_KEY_B, return addresses signed with key B."
        }
    },
    "pc_type": {
        "0": {
            "id": "pcinc",
            "doc": "SFRAME_FDE_TYPE_PCINC, FRE start addresses are offsets into the function."
        },
        "1": {
            "id": "pcmask",
            "doc": "SFRAME_FDE_TYPE_PCMASK, FRE start addresses are matched modulo the block size."
        }
    },
    "fre_type": {
        "0": {
            "id": "addr1",
            "doc": "SFRAME_FRE_TYPE_ADDR1, 1-byte FRE start addresses."
        },
        "1": {
            "id": "addr2",
            "doc": "SFRAME_FRE_TYPE_ADDR2, 2-byte FRE start addresses."
        },
        "2": {
            "id": "addr4",
            "doc": "SFRAME_FRE_TYPE_ADDR4, 4-byte FRE start addresses."
        }
    },
    "fde_type": {
        "0": {
            "id": "default",
            "doc": "SFRAME_FDE_TYPE_DEFAULT, stack offsets as in version 2."
        },
        "1": {
            "id": "flexible",
            "doc": "SFRAME_FDE_TYPE_FLEX, a control word and an offset per tracked value."
        }
    },
    "offset_size": {
        "0": {
            "id": "b1",
            "doc": "SFRAME_FRE_OFFSET_1B, 1-byte stack offsets."
        },
        "1": {
            "id": "b2",
            "doc": "SFRAME_FRE_OFFSET_2B, 2-byte stack offsets."
        },
        "2": {
            "id": "b4",
            "doc": "SFRAME_FRE_OFFSET_4B, 4-byte stack offsets."
        }
    },
    "base_reg": {
        "0": {
            "id": "fp",
            "doc": "SFRAME_BASE_REG_FP, the CFA is computed from the frame pointer."
        },
        "1": {
            "id": "sp",
            "doc": "SFRAME_BASE_REG_SP, the CFA is computed from the stack pointer."
        }
    }
}
