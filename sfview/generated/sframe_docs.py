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
        "doc": "The section proper, in the byte order its magic number gives: the\npreamble and header, then (at offsets the header gives) the FDE array\nand the FRE sub-section.",
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
            "fre_end": {
                "doc": "Section offset just past the FRE sub-section, as the header gives its length."
            },
            "attr_size": {
                "doc": "Size in bytes of a version 3 attribute block, which stands in the FRE\nsub-section in front of each function's FREs."
            },
            "info_offset": {
                "doc": "Where a function's info byte sits: from the start of its FDE before\nversion 3 (after start, size, FRE offset and FRE count), from the start\nof its attribute block in version 3 (after the FRE count)."
            },
            "sp_reg": {
                "doc": "The DWARF register number of the stack pointer for this ABI (AMD64: 7,\nRSP; AArch64: 31, SP; s390x: 15, r15). A row whose CFA base register is\nSP means this register."
            },
            "fp_reg": {
                "doc": "The DWARF register number of the frame pointer for this ABI (AMD64: 6,\nRBP; AArch64: 29, x29; s390x: 11, r11)."
            },
            "ra_reg": {
                "doc": "The DWARF register number of the return address column (AMD64: 16, RIP;\nAArch64: 30, the link register x30; s390x: 14, r14)."
            },
            "fre_start": {
                "doc": "Section offset of the FRE sub-section."
            },
            "is_s390x": {
                "doc": "The section is for s390x, whose CFA offsets are stored scaled and\nbiased, and whose stack pointer is not the CFA minus zero."
            },
            "cfa_offset_scale": {
                "doc": "What a stored CFA offset is multiplied by (s390x: 8, the ABI keeps\nCFA offsets 8-byte aligned; elsewhere 1). The CFA offset is\n`stored * cfa_offset_scale + cfa_offset_bias`\n(SFRAME_V3_S390X_CFA_OFFSET_DECODE), in default and flexible FDEs."
            },
            "cfa_offset_bias": {
                "doc": "What is added to a scaled CFA offset (s390x: 160, the register save\narea every frame reserves, so a CFA of SP+160 is stored as 0 and\nfits a 1-byte offset; elsewhere 0)."
            },
            "sp_val_offset": {
                "doc": "The caller's stack pointer is the CFA plus this (SFRAME_S390X_SP_VAL_OFFSET:\n-160 on s390x, where the CFA is the caller's SP + 160; 0 on AMD64 and\nAArch64, where the CFA is the caller's SP)."
            },
            "offset_regnum": {
                "doc": "Version 2 on s390x (binutils 2.45): a default FDE's FP or RA offset whose\nlowest bit is 1 is not an offset but a DWARF register, `stored >> 1`\n(SFRAME_V2_S390X_OFFSET_IS_REGNUM), in which the value was saved\n(leaf functions save r11 and r14 in floating-point registers).\nVersion 3 writes such rules as flexible FDEs instead."
            },
            "fdes": {
                "doc": "The function descriptor entries, one per function, sorted by start\naddress when the FDE_SORTED flag is set.",
                "type": "fde"
            }
        }
    },
    "preamble": {
        "doc": "The first four bytes, laid out the same in every version: they say\nhow to read everything after them.",
        "seq": [
            "magic",
            "version",
            "flags"
        ],
        "fields": {
            "magic": {
                "doc": "The SFrame magic number, 0xdee2, in the section's byte order. Reading\nit backwards (0xe2de) means the section was written for a machine of\nthe other byte order.",
                "type": "u2",
                "valid": 57058
            },
            "version": {
                "doc": "The version of the format this section follows.",
                "type": "u1",
                "enum": "version"
            },
            "flags": {
                "doc": "Section-wide flags.",
                "type": "flags"
            }
        }
    },
    "flags": {
        "doc": "The preamble's flag byte, bit by bit (the `flag` enum names each\nbit's value). Bits not defined below are reserved and must be zero.",
        "seq": [
            "reserved",
            "fde_func_start_pcrel",
            "frame_pointer",
            "fde_sorted"
        ],
        "fields": {
            "reserved": {
                "doc": "Bits 7..3, reserved; libsframe rejects a section that sets any.",
                "type": "b5",
                "bits": 5
            },
            "fde_func_start_pcrel": {
                "doc": "Bit 2, SFRAME_F_FDE_FUNC_START_PCREL (0x4): each function start\naddress is relative to the start-address field itself rather than to\nthe start of the section. Set by binutils 2.45 and later.",
                "type": "b1",
                "bits": 1
            },
            "frame_pointer": {
                "doc": "Bit 1, SFRAME_F_FRAME_POINTER (0x2): every function in the object\nkeeps a frame pointer, so a stack walker may fall back on the frame\npointer chain where SFrame says nothing.",
                "type": "b1",
                "bits": 1
            },
            "fde_sorted": {
                "doc": "Bit 0, SFRAME_F_FDE_SORTED (0x1): the FDEs are sorted by function\nstart address, so an unwinder can binary-search them.",
                "type": "b1",
                "bits": 1
            },
            "value": {
                "doc": "The whole flag byte as a number."
            }
        }
    },
    "header": {
        "doc": "The fixed part of the header after the preamble (24 bytes).",
        "seq": [
            "abi_arch",
            "cfa_fixed_fp_offset",
            "cfa_fixed_ra_offset",
            "auxhdr_len",
            "num_fdes",
            "num_fres",
            "fre_len",
            "fdeoff",
            "freoff"
        ],
        "fields": {
            "abi_arch": {
                "doc": "Which ABI and processor the section is for; this decides the byte\norder and what each FRE stack offset means.",
                "type": "u1",
                "enum": "abi_arch"
            },
            "cfa_fixed_fp_offset": {
                "doc": "Where the caller's frame pointer is saved, as a fixed offset from the\nCFA, for ABIs that always save it at the same place; 0 when it is\ntracked per FRE instead (the case on AMD64 and AArch64).",
                "type": "s1"
            },
            "cfa_fixed_ra_offset": {
                "doc": "Where the return address is saved, as a fixed offset from the CFA,\nfor ABIs that always save it at the same place (-8 on AMD64, where\nthe call instruction pushes it); 0 when it is tracked per FRE (as on\nAArch64, where it lives in the link register until saved).",
                "type": "s1"
            },
            "auxhdr_len": {
                "doc": "Length in bytes of the auxiliary header that follows this one.",
                "type": "u1"
            },
            "num_fdes": {
                "doc": "Number of function descriptor entries.",
                "type": "u4"
            },
            "num_fres": {
                "doc": "Number of frame row entries, over all functions.",
                "type": "u4"
            },
            "fre_len": {
                "doc": "Length in bytes of the FRE sub-section (in version 3 it also covers\nthe per-function attribute blocks stored there).",
                "type": "u4"
            },
            "fdeoff": {
                "doc": "Offset of the FDE array, counted from the end of the header.",
                "type": "u4"
            },
            "freoff": {
                "doc": "Offset of the FRE sub-section, counted from the end of the header.",
                "type": "u4"
            }
        }
    },
    "fde": {
        "doc": "A function descriptor entry: where a function is, how long it is and\nwhere its frame row entries are. In version 3 this is the 16-byte index\nentry and the rest of the description is in `attr`.",
        "seq": [
            "func_start",
            "func_size",
            "func_start_fre_off",
            "func_num_fres",
            "func_info",
            "func_rep_size",
            "padding2"
        ],
        "fields": {
            "func_start": {
                "doc": "The function's start address, as a signed offset: from the start of\nthe section, or, with the FDE_FUNC_START_PCREL flag, from this field\nitself. 32 bits wide before version 3, 64 bits in version 3.",
                "cases": [
                    "s8",
                    "s4"
                ]
            },
            "func_size": {
                "doc": "Size of the function in bytes.",
                "type": "u4"
            },
            "func_start_fre_off": {
                "doc": "Offset of the function's first FRE (in version 3: of its attribute\nblock), counted from the start of the FRE sub-section.",
                "type": "u4"
            },
            "func_num_fres": {
                "doc": "Number of FREs describing this function.",
                "type": "u4"
            },
            "func_info": {
                "doc": "The function's info byte.",
                "type": "fde_info"
            },
            "func_rep_size": {
                "doc": "For a PCMASK function, the size in bytes of the repeated block of\ncode (16 for an AMD64 PLT entry). Added in version 2.",
                "type": "u1"
            },
            "padding2": {
                "doc": "Two unused bytes that keep the entry 4-byte aligned.",
                "type": "u2"
            },
            "attr_pos": {
                "doc": "Section offset of what `func_start_fre_off` points at: the first FRE,\nor in version 3 the attribute block in front of it."
            },
            "attr": {
                "doc": "The version-3 attribute block in front of this function's FREs.",
                "type": "fde_attr"
            },
            "num_fres": {
                "doc": "Number of FREs, wherever this version keeps it."
            },
            "info": {
                "doc": "The info byte, wherever this version keeps it."
            },
            "fde_type": {
                "doc": "How this function's FRE offsets are read (always DEFAULT before version 3)."
            },
            "block_size": {
                "doc": "For a PCMASK function, how many bytes its rows repeat every: the PC\nis matched modulo this size (0 for a PCINC function). Versions 2 and 3 store it\n(`func_rep_size`); version 1 has no field, and its one PCMASK user is\nthe AMD64 PLT, whose entries are 16 bytes (libsframe 2.40 matches\nsuch rows against the PC's low bits: \"For AMD64, the pltN entry stub\nis 16 bytes\")."
            },
            "fres_start": {
                "doc": "Section offset of this function's first FRE."
            },
            "fres": {
                "doc": "The function's frame row entries, in increasing start address. Read\nonly when asked for, so that a section with many functions opens fast.",
                "type": "fre(info.fre_type, fde_type)"
            }
        }
    },
    "fde_attr": {
        "doc": "Version 3 only: the attributes of a function, stored in the FRE\nsub-section right before the function's first FRE.",
        "seq": [
            "func_num_fres",
            "func_info",
            "func_info2",
            "func_rep_size"
        ],
        "fields": {
            "func_num_fres": {
                "doc": "Number of FREs describing this function.",
                "type": "u2"
            },
            "func_info": {
                "doc": "The function's info byte.",
                "type": "fde_info"
            },
            "func_info2": {
                "doc": "The function's second info byte.",
                "type": "fde_info2"
            },
            "func_rep_size": {
                "doc": "For a PCMASK function, the size in bytes of the repeated block.",
                "type": "u1"
            }
        }
    },
    "fde_info": {
        "doc": "The FDE info byte, from its most significant bit down.",
        "seq": [
            "signal_frame",
            "unused",
            "pauth_key",
            "pc_type",
            "fre_type"
        ],
        "fields": {
            "signal_frame": {
                "doc": "Bit 7: the function is a signal trampoline, whose caller's registers\nwere saved by the kernel (version 3; unused before).",
                "type": "b1",
                "bits": 1
            },
            "unused": {
                "doc": "Bit 6, unused.",
                "type": "b1",
                "bits": 1
            },
            "pauth_key": {
                "doc": "Bit 5, AArch64 only: the pointer-authentication key that signs the\nreturn addresses in this function (0 = key A, 1 = key B).",
                "type": "b1",
                "bits": 1,
                "enum": "pauth_key"
            },
            "pc_type": {
                "doc": "Bit 4: how the FRE start addresses are read. PCINC: as offsets into\nthe function, the row for a PC being the last one starting at or\nbefore it. PCMASK: as offsets into a block of code repeated every\n`rep_size` bytes (PLT entries), matched against PC modulo that size.",
                "type": "b1",
                "bits": 1,
                "enum": "pc_type"
            },
            "fre_type": {
                "doc": "Bits 3..0: the width of every FRE start address in this function\n(1, 2 or 4 bytes), chosen by the assembler from the function's size.",
                "type": "b4",
                "bits": 4,
                "enum": "fre_type"
            }
        }
    },
    "fde_info2": {
        "doc": "Version 3 only, the second FDE info byte.",
        "seq": [
            "unused",
            "fde_type"
        ],
        "fields": {
            "unused": {
                "doc": "Bits 7..5, unused.",
                "type": "b3",
                "bits": 3
            },
            "fde_type": {
                "doc": "Bits 4..0: how to read this function's FRE stack offsets. DEFAULT:\nas in version 2 (CFA, then FP on AMD64, or CFA, RA, FP on AArch64).\nFLEXIBLE: each tracked value (CFA, RA, FP) is a control word and an\noffset, so a rule may use any register or load through memory.",
                "type": "b5",
                "bits": 5,
                "enum": "fde_type"
            }
        }
    },
    "fre": {
        "doc": "A frame row entry: from its start address on (up to the next row's),\nhow to find the CFA and where the caller's FP and RA were saved.",
        "seq": [
            "start_addr",
            "info",
            "offsets",
            "flex"
        ],
        "fields": {
            "start_addr": {
                "doc": "Where this row starts, as an offset in bytes from the start of the\nfunction (for a PCMASK function, from the start of the repeated\nblock).",
                "cases": [
                    "u1",
                    "u2",
                    "u4"
                ]
            },
            "info": {
                "doc": "The FRE info byte.",
                "type": "fre_info"
            },
            "offsets": {
                "doc": "The row's signed stack offsets. The first locates the CFA from the\nbase register; what the next ones mean depends on the ABI (AMD64:\nFP; AArch64: RA, then FP), each an offset from the CFA.",
                "cases": [
                    "s1",
                    "s2",
                    "s4"
                ]
            },
            "flex": {
                "doc": "Version 3 flexible FDE: the row's data words, read as a control word\nand an offset for each of the CFA, the RA and the FP.",
                "type": "fre_flex(info.offset_size, info.offset_count)"
            }
        }
    },
    "fre_flex": {
        "doc": "The data words of a version 3 flexible FRE, as libsframe reads them:\nwords 0 and 1 are the CFA's control word and offset; word 2 is the\nRA's control word, or 0, the padding word, when the row says nothing\nof the RA (then no RA offset follows); the FP's control word and\noffset come next. A row may stop after any entity.",
        "seq": [
            "cfa_control",
            "cfa_offset",
            "ra_control",
            "ra_offset",
            "fp_control",
            "fp_offset",
            "extra"
        ],
        "fields": {
            "cfa_control": {
                "doc": "The CFA's control word; its base must be a register.",
                "type": "control_word(offset_size)"
            },
            "cfa_offset": {
                "doc": "The offset added to the CFA's base register.",
                "type": "flex_offset(offset_size)"
            },
            "ra_control": {
                "doc": "The RA's control word, or 0 (the padding word) when the row gives no RA rule.",
                "type": "control_word(offset_size)"
            },
            "ra_offset": {
                "doc": "The offset of the RA rule.",
                "type": "flex_offset(offset_size)"
            },
            "fp_control": {
                "doc": "The FP's control word.",
                "type": "control_word(offset_size)"
            },
            "fp_offset": {
                "doc": "The offset of the FP rule.",
                "type": "flex_offset(offset_size)"
            },
            "extra": {
                "doc": "Words past the FP's, which no version defines.",
                "type": "flex_offset(offset_size)"
            },
            "ra_padding": {
                "doc": "Word 2 is the padding word (0), so the RA takes no offset word."
            }
        }
    },
    "control_word": {
        "doc": "A version 3 control word: what a flexible rule is based on, and whether\nthe value is loaded from memory. Bits 7..3 give a DWARF register number,\nbit 2 is reserved, bit 1 is `deref_p`, bit 0 is `reg_p`.",
        "seq": [
            "value"
        ],
        "fields": {
            "value": {
                "doc": "The control word as a number.",
                "cases": [
                    "u1",
                    "u2",
                    "u4"
                ]
            },
            "reg_p": {
                "doc": "Bit 0, reg_p: the base is the DWARF register `regnum` (1) or the CFA\n(0). A CFA rule must have a register base.",
                "at": [
                    0,
                    0
                ]
            },
            "deref_p": {
                "doc": "Bit 1, deref_p: the value is the word loaded from base + offset (1),\nor base + offset itself (0).",
                "at": [
                    1,
                    1
                ]
            },
            "reserved": {
                "doc": "Bit 2, reserved; must be 0.",
                "at": [
                    2,
                    2
                ]
            },
            "regnum": {
                "doc": "Bits 7..3, the DWARF register number of the base when reg_p is set.",
                "at": [
                    7,
                    3
                ]
            },
            "regnum_read": {
                "doc": "The register number as libsframe and readelf take it: every bit above\nbit 2, so `regnum` when the word is well formed. binutils 2.47's\nassembler writes 0xfffffffb (register -1) for an s390x FP rule it\ncannot express (`DW_CFA_expression`), which readelf prints as r536870911."
            },
            "high": {
                "doc": "Bits above 7 of a wider word, which no version defines; 0."
            }
        }
    },
    "flex_offset": {
        "doc": "A signed data word of a flexible FRE, as wide as the row's offset size.",
        "seq": [
            "value"
        ],
        "fields": {
            "value": {
                "doc": "The offset.",
                "cases": [
                    "s1",
                    "s2",
                    "s4"
                ]
            }
        }
    },
    "fre_info": {
        "doc": "The FRE info byte, from its most significant bit down.",
        "seq": [
            "mangled_ra",
            "offset_size",
            "offset_count",
            "cfa_base_reg"
        ],
        "fields": {
            "mangled_ra": {
                "doc": "Bit 7: the return address was signed (AArch64 pointer\nauthentication) and has to be stripped before use.",
                "type": "b1",
                "bits": 1
            },
            "offset_size": {
                "doc": "Bits 6..5, the width of every stack offset in this row.",
                "type": "b2",
                "bits": 2,
                "enum": "offset_size"
            },
            "offset_count": {
                "doc": "Bits 4..1, how many stack offsets follow (at most 15).",
                "type": "b4",
                "bits": 4
            },
            "cfa_base_reg": {
                "doc": "Bit 0: the register the CFA is computed from, the frame pointer (0)\nor the stack pointer (1).",
                "type": "b1",
                "bits": 1,
                "enum": "base_reg"
            }
        }
    }
}

ENUMS = {
    "magic": {
        "57058": {
            "id": "sframe",
            "doc": "SFRAME_MAGIC, the first two bytes of every SFrame section, in the section's byte order."
        }
    },
    "flag": {
        "1": {
            "id": "fde_sorted",
            "doc": "SFRAME_F_FDE_SORTED, the FDEs are sorted by start address."
        },
        "2": {
            "id": "frame_pointer",
            "doc": "SFRAME_F_FRAME_POINTER, all functions keep a frame pointer."
        },
        "4": {
            "id": "fde_func_start_pcrel",
            "doc": "SFRAME_F_FDE_FUNC_START_PCREL, start addresses are relative to their own field."
        }
    },
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
    },
    "s390x_abi": {
        "1": {
            "id": "offset_regnum_bit",
            "doc": "Version 2: an FP or RA offset with this bit set names a DWARF register\n(`stored >> 1`), not a stack slot."
        },
        "8": {
            "id": "cfa_offset_alignment",
            "doc": "SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR: CFA offsets are multiples of 8,\nstored divided by 8."
        },
        "160": {
            "id": "cfa_offset_adjustment",
            "doc": "SFRAME_S390X_CFA_OFFSET_ADJUSTMENT: the CFA is at least the SP + 160\n(the register save area), subtracted from CFA offsets before they are stored."
        },
        "-160": {
            "id": "sp_val_offset",
            "doc": "SFRAME_S390X_SP_VAL_OFFSET, the caller's SP is the CFA - 160."
        }
    },
    "amd64_reg": {
        "0": {
            "id": "rax",
            "doc": "RAX."
        },
        "1": {
            "id": "rdx",
            "doc": "RDX."
        },
        "2": {
            "id": "rcx",
            "doc": "RCX."
        },
        "3": {
            "id": "rbx",
            "doc": "RBX."
        },
        "4": {
            "id": "rsi",
            "doc": "RSI."
        },
        "5": {
            "id": "rdi",
            "doc": "RDI."
        },
        "6": {
            "id": "rbp",
            "doc": "RBP, the frame pointer."
        },
        "7": {
            "id": "rsp",
            "doc": "RSP, the stack pointer."
        },
        "8": {
            "id": "r8",
            "doc": "R8."
        },
        "9": {
            "id": "r9",
            "doc": "R9."
        },
        "10": {
            "id": "r10",
            "doc": "R10."
        },
        "11": {
            "id": "r11",
            "doc": "R11."
        },
        "12": {
            "id": "r12",
            "doc": "R12."
        },
        "13": {
            "id": "r13",
            "doc": "R13."
        },
        "14": {
            "id": "r14",
            "doc": "R14."
        },
        "15": {
            "id": "r15",
            "doc": "R15."
        },
        "16": {
            "id": "rip",
            "doc": "The return address column (RIP)."
        }
    },
    "aarch64_reg": {
        "0": {
            "id": "x0",
            "doc": "x0."
        },
        "1": {
            "id": "x1",
            "doc": "x1."
        },
        "2": {
            "id": "x2",
            "doc": "x2."
        },
        "3": {
            "id": "x3",
            "doc": "x3."
        },
        "4": {
            "id": "x4",
            "doc": "x4."
        },
        "5": {
            "id": "x5",
            "doc": "x5."
        },
        "6": {
            "id": "x6",
            "doc": "x6."
        },
        "7": {
            "id": "x7",
            "doc": "x7."
        },
        "8": {
            "id": "x8",
            "doc": "x8."
        },
        "9": {
            "id": "x9",
            "doc": "x9."
        },
        "10": {
            "id": "x10",
            "doc": "x10."
        },
        "11": {
            "id": "x11",
            "doc": "x11."
        },
        "12": {
            "id": "x12",
            "doc": "x12."
        },
        "13": {
            "id": "x13",
            "doc": "x13."
        },
        "14": {
            "id": "x14",
            "doc": "x14."
        },
        "15": {
            "id": "x15",
            "doc": "x15."
        },
        "16": {
            "id": "x16",
            "doc": "x16."
        },
        "17": {
            "id": "x17",
            "doc": "x17."
        },
        "18": {
            "id": "x18",
            "doc": "x18."
        },
        "19": {
            "id": "x19",
            "doc": "x19."
        },
        "20": {
            "id": "x20",
            "doc": "x20."
        },
        "21": {
            "id": "x21",
            "doc": "x21."
        },
        "22": {
            "id": "x22",
            "doc": "x22."
        },
        "23": {
            "id": "x23",
            "doc": "x23."
        },
        "24": {
            "id": "x24",
            "doc": "x24."
        },
        "25": {
            "id": "x25",
            "doc": "x25."
        },
        "26": {
            "id": "x26",
            "doc": "x26."
        },
        "27": {
            "id": "x27",
            "doc": "x27."
        },
        "28": {
            "id": "x28",
            "doc": "x28."
        },
        "29": {
            "id": "x29",
            "doc": "x29, the frame pointer."
        },
        "30": {
            "id": "x30",
            "doc": "x30, the link register, which holds the return address until it is saved."
        },
        "31": {
            "id": "sp",
            "doc": "SP, the stack pointer."
        }
    },
    "s390x_reg": {
        "0": {
            "id": "r0",
            "doc": "r0."
        },
        "1": {
            "id": "r1",
            "doc": "r1."
        },
        "2": {
            "id": "r2",
            "doc": "r2."
        },
        "3": {
            "id": "r3",
            "doc": "r3."
        },
        "4": {
            "id": "r4",
            "doc": "r4."
        },
        "5": {
            "id": "r5",
            "doc": "r5."
        },
        "6": {
            "id": "r6",
            "doc": "r6."
        },
        "7": {
            "id": "r7",
            "doc": "r7."
        },
        "8": {
            "id": "r8",
            "doc": "r8."
        },
        "9": {
            "id": "r9",
            "doc": "r9."
        },
        "10": {
            "id": "r10",
            "doc": "r10."
        },
        "11": {
            "id": "r11",
            "doc": "r11, the frame pointer."
        },
        "12": {
            "id": "r12",
            "doc": "r12."
        },
        "13": {
            "id": "r13",
            "doc": "r13."
        },
        "14": {
            "id": "r14",
            "doc": "r14, the return address register."
        },
        "15": {
            "id": "r15",
            "doc": "r15, the stack pointer."
        },
        "16": {
            "id": "f0",
            "doc": "f0, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "17": {
            "id": "f2",
            "doc": "f2, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "18": {
            "id": "f4",
            "doc": "f4, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "19": {
            "id": "f6",
            "doc": "f6, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "20": {
            "id": "f1",
            "doc": "f1, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "21": {
            "id": "f3",
            "doc": "f3, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "22": {
            "id": "f5",
            "doc": "f5, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "23": {
            "id": "f7",
            "doc": "f7, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "24": {
            "id": "f8",
            "doc": "f8, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "25": {
            "id": "f10",
            "doc": "f10, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "26": {
            "id": "f12",
            "doc": "f12, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "27": {
            "id": "f14",
            "doc": "f14, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "28": {
            "id": "f9",
            "doc": "f9, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "29": {
            "id": "f11",
            "doc": "f11, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "30": {
            "id": "f13",
            "doc": "f13, a floating-point register (leaf functions may keep r11 or r14 in one)."
        },
        "31": {
            "id": "f15",
            "doc": "f15, a floating-point register (leaf functions may keep r11 or r14 in one)."
        }
    }
}
