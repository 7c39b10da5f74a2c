meta:
  id: sframe
  title: SFrame stack trace information (.sframe section)
  file-extension: sframe
  license: MIT
  ks-version: "0.11"
doc: |
  SFrame ("Simple Frame") is the compact stack-trace format that GNU binutils
  emits next to .eh_frame, in a section named .sframe and a segment of type
  PT_GNU_SFRAME. For every function it records, row by row, how to find the
  Canonical Frame Address (CFA), the frame pointer (FP) and the return
  address (RA): enough for a profiler or a kernel to walk the stack fast.

  A section is a header (which starts with a 4-byte preamble), an array of
  function descriptor entries (FDEs) and a sub-section of variable-length
  frame row entries (FREs). All multi-byte fields are in the byte order of the
  target; the magic number tells which one.

  This description covers versions 1 and 2 of the format and version 3, which
  splits each FDE into a fixed-size index entry and a small attribute block
  stored in front of the function's FREs.
doc-ref:
  - https://sourceware.org/binutils/docs/sframe-spec.html
seq:
  - id: section
    type: section
    doc: The whole section, read in the byte order its magic number gives.
instances:
  magic_be:
    pos: 0
    type: u2be
    doc: |
      The first two bytes read as big-endian, only to choose the byte order:
      0xdee2 means a big-endian section, 0xe2de a little-endian one.
types:
  section:
    doc: |
      The section proper, in the byte order its magic number gives: the
      preamble and header, then (at offsets the header gives) the FDE array
      and the FRE sub-section.
    meta:
      endian:
        switch-on: _root.magic_be
        cases:
          0xe2de: le
          0xdee2: be
    seq:
      - id: preamble
        type: preamble
        doc: The part of the header that every version shares.
      - id: header
        type: header
        doc: Section-wide parameters and where the sub-sections are.
      - id: auxhdr
        size: header.auxhdr_len
        doc: |
          The auxiliary header: ABI-specific bytes that follow the fixed header.
          No ABI defines any yet; its length still moves the sub-sections,
          since their offsets count from its end.
    instances:
      version:
        value: preamble.version.to_i
        doc: The format version as a number, for the version-dependent layouts.
      header_end:
        value: sizeof<preamble> + sizeof<header> + header.auxhdr_len
        doc: |
          Offset just past the header and the auxiliary header: both
          sub-section offsets in the header count from here.
      fde_size:
        value: 'version == 1 ? 17 : version == 2 ? 20 : 16'
        doc: |
          Size in bytes of one entry of the FDE array: 17 in version 1, 20 in
          version 2 (repetition size and padding added), 16 in version 3 (the
          index entry only; the attributes moved next to the FREs).
      fde_start:
        value: header_end + header.fdeoff
        doc: Section offset of the FDE array.
      fre_end:
        value: fre_start + header.fre_len
        doc: Section offset just past the FRE sub-section, as the header gives its length.
      attr_size:
        value: sizeof<fde_attr>
        doc: |
          Size in bytes of a version 3 attribute block, which stands in the FRE
          sub-section in front of each function's FREs.
      info_offset:
        value: 'version >= 3 ? 2 : 16'
        doc: |
          Where a function's info byte sits: from the start of its FDE before
          version 3 (after start, size, FRE offset and FRE count), from the start
          of its attribute block in version 3 (after the FRE count).
      sp_reg:
        value: 'header.abi_arch == abi_arch::amd64_endian_little ? amd64_reg::rsp.to_i : header.abi_arch == abi_arch::s390x_endian_big ? s390x_reg::r15.to_i : aarch64_reg::sp.to_i'
        doc: |
          The DWARF register number of the stack pointer for this ABI (AMD64: 7,
          RSP; AArch64: 31, SP; s390x: 15, r15). A row whose CFA base register is
          SP means this register.
      fp_reg:
        value: 'header.abi_arch == abi_arch::amd64_endian_little ? amd64_reg::rbp.to_i : header.abi_arch == abi_arch::s390x_endian_big ? s390x_reg::r11.to_i : aarch64_reg::x29.to_i'
        doc: |
          The DWARF register number of the frame pointer for this ABI (AMD64: 6,
          RBP; AArch64: 29, x29; s390x: 11, r11).
      ra_reg:
        value: 'header.abi_arch == abi_arch::amd64_endian_little ? amd64_reg::rip.to_i : header.abi_arch == abi_arch::s390x_endian_big ? s390x_reg::r14.to_i : aarch64_reg::x30.to_i'
        doc: |
          The DWARF register number of the return address column (AMD64: 16, RIP;
          AArch64: 30, the link register x30; s390x: 14, r14).
      fre_start:
        value: header_end + header.freoff
        doc: Section offset of the FRE sub-section.
      is_s390x:
        value: header.abi_arch == abi_arch::s390x_endian_big
        doc: |
          The section is for s390x, whose CFA offsets are stored scaled and
          biased, and whose stack pointer is not the CFA minus zero.
      cfa_offset_scale:
        value: 'is_s390x ? s390x_abi::cfa_offset_alignment.to_i : 1'
        doc: |
          What a stored CFA offset is multiplied by (s390x: 8, the ABI keeps
          CFA offsets 8-byte aligned; elsewhere 1). The CFA offset is
          `stored * cfa_offset_scale + cfa_offset_bias`
          (SFRAME_V3_S390X_CFA_OFFSET_DECODE), in default and flexible FDEs.
      cfa_offset_bias:
        value: 'is_s390x ? s390x_abi::cfa_offset_adjustment.to_i : 0'
        doc: |
          What is added to a scaled CFA offset (s390x: 160, the register save
          area every frame reserves, so a CFA of SP+160 is stored as 0 and
          fits a 1-byte offset; elsewhere 0).
      sp_val_offset:
        value: 'is_s390x ? s390x_abi::sp_val_offset.to_i : 0'
        doc: |
          The caller's stack pointer is the CFA plus this (SFRAME_S390X_SP_VAL_OFFSET:
          -160 on s390x, where the CFA is the caller's SP + 160; 0 on AMD64 and
          AArch64, where the CFA is the caller's SP).
      offset_regnum:
        value: 'is_s390x and version == 2'
        doc: |
          Version 2 on s390x (binutils 2.45): a default FDE's FP or RA offset whose
          lowest bit is 1 is not an offset but a DWARF register, `stored >> 1`
          (SFRAME_V2_S390X_OFFSET_IS_REGNUM), in which the value was saved
          (leaf functions save r11 and r14 in floating-point registers).
          Version 3 writes such rules as flexible FDEs instead.
      fdes:
        pos: fde_start
        type: fde
        repeat: expr
        repeat-expr: header.num_fdes
        doc: |
          The function descriptor entries, one per function, sorted by start
          address when the FDE_SORTED flag is set.
    types:
      preamble:
        doc: |
          The first four bytes, laid out the same in every version: they say
          how to read everything after them.
        seq:
          - id: magic
            type: u2
            valid: 0xdee2
            doc: |
              The SFrame magic number, 0xdee2, in the section's byte order. Reading
              it backwards (0xe2de) means the section was written for a machine of
              the other byte order.
          - id: version
            type: u1
            enum: version
            doc: The version of the format this section follows.
          - id: flags
            type: flags
            doc: Section-wide flags.
      flags:
        doc: |
          The preamble's flag byte, bit by bit (the `flag` enum names each
          bit's value). Bits not defined below are reserved and must be zero.
        seq:
          - id: reserved
            type: b5
            doc: Bits 7..3, reserved; libsframe rejects a section that sets any.
          - id: fde_func_start_pcrel
            type: b1
            doc: |
              Bit 2, SFRAME_F_FDE_FUNC_START_PCREL (0x4): each function start
              address is relative to the start-address field itself rather than to
              the start of the section. Set by binutils 2.45 and later.
          - id: frame_pointer
            type: b1
            doc: |
              Bit 1, SFRAME_F_FRAME_POINTER (0x2): every function in the object
              keeps a frame pointer, so a stack walker may fall back on the frame
              pointer chain where SFrame says nothing.
          - id: fde_sorted
            type: b1
            doc: |
              Bit 0, SFRAME_F_FDE_SORTED (0x1): the FDEs are sorted by function
              start address, so an unwinder can binary-search them.
        instances:
          value:
            value: >-
              (reserved.as<u1> << 3) | (fde_func_start_pcrel ? 4 : 0)
              | (frame_pointer ? 2 : 0) | (fde_sorted ? 1 : 0)
            doc: The whole flag byte as a number.
      header:
        doc: The fixed part of the header after the preamble (24 bytes).
        seq:
          - id: abi_arch
            type: u1
            enum: abi_arch
            doc: |
              Which ABI and processor the section is for; this decides the byte
              order and what each FRE stack offset means.
          - id: cfa_fixed_fp_offset
            type: s1
            doc: |
              Where the caller's frame pointer is saved, as a fixed offset from the
              CFA, for ABIs that always save it at the same place; 0 when it is
              tracked per FRE instead (the case on AMD64 and AArch64).
          - id: cfa_fixed_ra_offset
            type: s1
            doc: |
              Where the return address is saved, as a fixed offset from the CFA,
              for ABIs that always save it at the same place (-8 on AMD64, where
              the call instruction pushes it); 0 when it is tracked per FRE (as on
              AArch64, where it lives in the link register until saved).
          - id: auxhdr_len
            type: u1
            doc: Length in bytes of the auxiliary header that follows this one.
          - id: num_fdes
            type: u4
            doc: Number of function descriptor entries.
          - id: num_fres
            type: u4
            doc: Number of frame row entries, over all functions.
          - id: fre_len
            type: u4
            doc: |
              Length in bytes of the FRE sub-section (in version 3 it also covers
              the per-function attribute blocks stored there).
          - id: fdeoff
            type: u4
            doc: Offset of the FDE array, counted from the end of the header.
          - id: freoff
            type: u4
            doc: Offset of the FRE sub-section, counted from the end of the header.
      fde:
        doc: |
          A function descriptor entry: where a function is, how long it is and
          where its frame row entries are. In version 3 this is the 16-byte index
          entry and the rest of the description is in `attr`.
        seq:
          - id: func_start
            type:
              switch-on: _parent.version
              cases:
                3: s8
                _: s4
            doc: |
              The function's start address, as a signed offset: from the start of
              the section, or, with the FDE_FUNC_START_PCREL flag, from this field
              itself. 32 bits wide before version 3, 64 bits in version 3.
          - id: func_size
            type: u4
            doc: Size of the function in bytes.
          - id: func_start_fre_off
            type: u4
            doc: |
              Offset of the function's first FRE (in version 3: of its attribute
              block), counted from the start of the FRE sub-section.
          - id: func_num_fres
            type: u4
            if: _parent.version < 3
            doc: Number of FREs describing this function.
          - id: func_info
            type: fde_info
            if: _parent.version < 3
            doc: The function's info byte.
          - id: func_rep_size
            type: u1
            if: _parent.version == 2
            doc: |
              For a PCMASK function, the size in bytes of the repeated block of
              code (16 for an AMD64 PLT entry). Added in version 2.
          - id: padding2
            type: u2
            if: _parent.version == 2
            doc: Two unused bytes that keep the entry 4-byte aligned.
        instances:
          attr_pos:
            value: _parent.fre_start + func_start_fre_off
            doc: |
              Section offset of what `func_start_fre_off` points at: the first FRE,
              or in version 3 the attribute block in front of it.
          attr:
            pos: attr_pos
            type: fde_attr
            if: _parent.version >= 3
            doc: The version-3 attribute block in front of this function's FREs.
          num_fres:
            value: '_parent.version >= 3 ? attr.func_num_fres : func_num_fres'
            doc: Number of FREs, wherever this version keeps it.
          info:
            value: '_parent.version >= 3 ? attr.func_info : func_info'
            doc: The info byte, wherever this version keeps it.
          fde_type:
            value: '_parent.version >= 3 ? attr.func_info2.fde_type : fde_type::default'
            doc: How this function's FRE offsets are read (always DEFAULT before version 3).
          block_size:
            value: 'info.pc_type != pc_type::pcmask ? 0 : _parent.version >= 3 ? attr.func_rep_size : _parent.version == 2 ? func_rep_size : 16'
            doc: |
              For a PCMASK function, how many bytes its rows repeat every: the PC
              is matched modulo this size (0 for a PCINC function). Versions 2 and 3 store it
              (`func_rep_size`); version 1 has no field, and its one PCMASK user is
              the AMD64 PLT, whose entries are 16 bytes (libsframe 2.40 matches
              such rows against the PC's low bits: "For AMD64, the pltN entry stub
              is 16 bytes").
          fres_start:
            value: 'attr_pos + (_parent.version >= 3 ? _parent.attr_size : 0)'
            doc: Section offset of this function's first FRE.
          fres:
            pos: fres_start
            type: fre(info.fre_type, fde_type)
            repeat: expr
            repeat-expr: num_fres
            doc: |
              The function's frame row entries, in increasing start address. Read
              only when asked for, so that a section with many functions opens fast.
      fde_attr:
        doc: |
          Version 3 only: the attributes of a function, stored in the FRE
          sub-section right before the function's first FRE.
        seq:
          - id: func_num_fres
            type: u2
            doc: Number of FREs describing this function.
          - id: func_info
            type: fde_info
            doc: The function's info byte.
          - id: func_info2
            type: fde_info2
            doc: The function's second info byte.
          - id: func_rep_size
            type: u1
            doc: For a PCMASK function, the size in bytes of the repeated block.
      fde_info:
        doc: The FDE info byte, from its most significant bit down.
        seq:
          - id: signal_frame
            type: b1
            doc: |
              Bit 7: the function is a signal trampoline, whose caller's registers
              were saved by the kernel (version 3; unused before).
          - id: unused
            type: b1
            doc: Bit 6, unused.
          - id: pauth_key
            type: b1
            enum: pauth_key
            doc: |
              Bit 5, AArch64 only: the pointer-authentication key that signs the
              return addresses in this function (0 = key A, 1 = key B).
          - id: pc_type
            type: b1
            enum: pc_type
            doc: |
              Bit 4: how the FRE start addresses are read. PCINC: as offsets into
              the function, the row for a PC being the last one starting at or
              before it. PCMASK: as offsets into a block of code repeated every
              `rep_size` bytes (PLT entries), matched against PC modulo that size.
          - id: fre_type
            type: b4
            enum: fre_type
            valid:
              in-enum: true
            doc: |
              Bits 3..0: the width of every FRE start address in this function
              (1, 2 or 4 bytes), chosen by the assembler from the function's size.
      fde_info2:
        doc: Version 3 only, the second FDE info byte.
        seq:
          - id: unused
            type: b3
            doc: Bits 7..5, unused.
          - id: fde_type
            type: b5
            enum: fde_type
            doc: |
              Bits 4..0: how to read this function's FRE stack offsets. DEFAULT:
              as in version 2 (CFA, then FP on AMD64, or CFA, RA, FP on AArch64).
              FLEXIBLE: each tracked value (CFA, RA, FP) is a control word and an
              offset, so a rule may use any register or load through memory.
      fre:
        doc: |
          A frame row entry: from its start address on (up to the next row's),
          how to find the CFA and where the caller's FP and RA were saved.
        params:
          - id: fre_type
            type: u1
            enum: fre_type
            doc: The width of the start address, from the function's info byte.
          - id: fde_type
            type: u1
            enum: fde_type
            doc: How the stack offsets are read, from the function's second info byte (version 3).
        seq:
          - id: start_addr
            type:
              switch-on: fre_type
              cases:
                fre_type::addr1: u1
                fre_type::addr2: u2
                fre_type::addr4: u4
            doc: |
              Where this row starts, as an offset in bytes from the start of the
              function (for a PCMASK function, from the start of the repeated
              block).
          - id: info
            type: fre_info
            doc: The FRE info byte.
          - id: offsets
            type:
              switch-on: info.offset_size
              cases:
                offset_size::b1: s1
                offset_size::b2: s2
                offset_size::b4: s4
            repeat: expr
            repeat-expr: info.offset_count
            if: fde_type != fde_type::flexible
            doc: |
              The row's signed stack offsets. The first locates the CFA from the
              base register; what the next ones mean depends on the ABI (AMD64:
              FP; AArch64: RA, then FP), each an offset from the CFA.
          - id: flex
            type: fre_flex(info.offset_size, info.offset_count)
            if: fde_type == fde_type::flexible
            doc: |
              Version 3 flexible FDE: the row's data words, read as a control word
              and an offset for each of the CFA, the RA and the FP.
      fre_flex:
        doc: |
          The data words of a version 3 flexible FRE, as libsframe reads them:
          words 0 and 1 are the CFA's control word and offset; word 2 is the
          RA's control word, or 0, the padding word, when the row says nothing
          of the RA (then no RA offset follows); the FP's control word and
          offset come next. A row may stop after any entity.
        params:
          - id: offset_size
            type: u1
            enum: offset_size
            doc: The width of every data word, from the FRE info byte.
          - id: count
            type: u1
            doc: How many data words the row has, from the FRE info byte.
        seq:
          - id: cfa_control
            type: control_word(offset_size)
            if: count >= 1
            doc: The CFA's control word; its base must be a register.
          - id: cfa_offset
            type: flex_offset(offset_size)
            if: count >= 2
            doc: The offset added to the CFA's base register.
          - id: ra_control
            type: control_word(offset_size)
            if: count >= 3
            doc: The RA's control word, or 0 (the padding word) when the row gives no RA rule.
          - id: ra_offset
            type: flex_offset(offset_size)
            if: 'count >= 4 and not ra_padding'
            doc: The offset of the RA rule.
          - id: fp_control
            type: control_word(offset_size)
            if: 'count >= (ra_padding ? 4 : 5)'
            doc: The FP's control word.
          - id: fp_offset
            type: flex_offset(offset_size)
            if: 'count >= (ra_padding ? 5 : 6)'
            doc: The offset of the FP rule.
          - id: extra
            type: flex_offset(offset_size)
            repeat: expr
            repeat-expr: 'count - (ra_padding ? 5 : 6)'
            if: 'count > (ra_padding ? 5 : 6)'
            doc: Words past the FP's, which no version defines.
        instances:
          ra_padding:
            value: 'count >= 3 and ra_control.value == 0'
            doc: Word 2 is the padding word (0), so the RA takes no offset word.
      control_word:
        doc: |
          A version 3 control word: what a flexible rule is based on, and whether
          the value is loaded from memory. Bits 7..3 give a DWARF register number,
          bit 2 is reserved, bit 1 is `deref_p`, bit 0 is `reg_p`.
        params:
          - id: size
            type: u1
            enum: offset_size
            doc: The word's width, the row's offset size.
        seq:
          - id: value
            type:
              switch-on: size
              cases:
                offset_size::b1: u1
                offset_size::b2: u2
                offset_size::b4: u4
            doc: The control word as a number.
        instances:
          reg_p:
            -bits: [0, 0]
            value: '(value & 1) == 1'
            doc: |
              Bit 0, reg_p: the base is the DWARF register `regnum` (1) or the CFA
              (0). A CFA rule must have a register base.
          deref_p:
            -bits: [1, 1]
            value: '(value >> 1 & 1) == 1'
            doc: |
              Bit 1, deref_p: the value is the word loaded from base + offset (1),
              or base + offset itself (0).
          reserved:
            -bits: [2, 2]
            value: value >> 2 & 1
            doc: Bit 2, reserved; must be 0.
          regnum:
            -bits: [7, 3]
            value: value >> 3 & 31
            doc: Bits 7..3, the DWARF register number of the base when reg_p is set.
          regnum_read:
            value: value >> 3
            doc: |
              The register number as libsframe and readelf take it: every bit above
              bit 2, so `regnum` when the word is well formed. binutils 2.47's
              assembler writes 0xfffffffb (register -1) for an s390x FP rule it
              cannot express (`DW_CFA_expression`), which readelf prints as r536870911.
          high:
            value: value >> 8
            doc: Bits above 7 of a wider word, which no version defines; 0.
      flex_offset:
        doc: A signed data word of a flexible FRE, as wide as the row's offset size.
        params:
          - id: size
            type: u1
            enum: offset_size
            doc: The word's width, the row's offset size.
        seq:
          - id: value
            type:
              switch-on: size
              cases:
                offset_size::b1: s1
                offset_size::b2: s2
                offset_size::b4: s4
            doc: The offset.
      fre_info:
        doc: The FRE info byte, from its most significant bit down.
        seq:
          - id: mangled_ra
            type: b1
            doc: |
              Bit 7: the return address was signed (AArch64 pointer
              authentication) and has to be stripped before use.
          - id: offset_size
            type: b2
            enum: offset_size
            valid:
              in-enum: true
            doc: Bits 6..5, the width of every stack offset in this row.
          - id: offset_count
            type: b4
            doc: Bits 4..1, how many stack offsets follow (at most 15).
          - id: cfa_base_reg
            type: b1
            enum: base_reg
            doc: |
              Bit 0: the register the CFA is computed from, the frame pointer (0)
              or the stack pointer (1).
enums:
  magic:
    0xdee2:
      id: sframe
      doc: SFRAME_MAGIC, the first two bytes of every SFrame section, in the section's byte order.
  flag:
    1:
      id: fde_sorted
      doc: SFRAME_F_FDE_SORTED, the FDEs are sorted by start address.
    2:
      id: frame_pointer
      doc: SFRAME_F_FRAME_POINTER, all functions keep a frame pointer.
    4:
      id: fde_func_start_pcrel
      doc: SFRAME_F_FDE_FUNC_START_PCREL, start addresses are relative to their own field.
  version:
    1:
      id: v1
      doc: SFRAME_VERSION_1, from binutils 2.40; 17-byte FDEs.
    2:
      id: v2
      doc: SFRAME_VERSION_2, binutils 2.41 to 2.45; 20-byte FDEs.
    3:
      id: v3
      doc: SFRAME_VERSION_3, binutils 2.46; FDE index plus attribute blocks.
  abi_arch:
    1:
      id: aarch64_endian_big
      doc: SFRAME_ABI_AARCH64_ENDIAN_BIG, AArch64 big-endian.
    2:
      id: aarch64_endian_little
      doc: SFRAME_ABI_AARCH64_ENDIAN_LITTLE, AArch64 little-endian.
    3:
      id: amd64_endian_little
      doc: SFRAME_ABI_AMD64_ENDIAN_LITTLE, x86-64 little-endian.
    4:
      id: s390x_endian_big
      doc: SFRAME_ABI_S390X_ENDIAN_BIG, s390x big-endian (binutils 2.45+).
  pauth_key:
    0:
      id: key_a
      doc: SFRAME_AARCH64_PAUTH_KEY_A, return addresses signed with key A.
    1:
      id: key_b
      doc: SFRAME_AARCH64_PAUTH_KEY_B, return addresses signed with key B.
  pc_type:
    0:
      id: pcinc
      doc: SFRAME_FDE_TYPE_PCINC, FRE start addresses are offsets into the function.
    1:
      id: pcmask
      doc: SFRAME_FDE_TYPE_PCMASK, FRE start addresses are matched modulo the block size.
  fre_type:
    0:
      id: addr1
      doc: SFRAME_FRE_TYPE_ADDR1, 1-byte FRE start addresses.
    1:
      id: addr2
      doc: SFRAME_FRE_TYPE_ADDR2, 2-byte FRE start addresses.
    2:
      id: addr4
      doc: SFRAME_FRE_TYPE_ADDR4, 4-byte FRE start addresses.
  fde_type:
    0:
      id: default
      doc: SFRAME_FDE_TYPE_DEFAULT, stack offsets as in version 2.
    1:
      id: flexible
      doc: SFRAME_FDE_TYPE_FLEX, a control word and an offset per tracked value.
  offset_size:
    0:
      id: b1
      doc: SFRAME_FRE_OFFSET_1B, 1-byte stack offsets.
    1:
      id: b2
      doc: SFRAME_FRE_OFFSET_2B, 2-byte stack offsets.
    2:
      id: b4
      doc: SFRAME_FRE_OFFSET_4B, 4-byte stack offsets.
  base_reg:
    0:
      id: fp
      doc: SFRAME_BASE_REG_FP, the CFA is computed from the frame pointer.
    1:
      id: sp
      doc: SFRAME_BASE_REG_SP, the CFA is computed from the stack pointer.
  s390x_abi:
    160:
      id: cfa_offset_adjustment
      doc: |
        SFRAME_S390X_CFA_OFFSET_ADJUSTMENT: the CFA is at least the SP + 160
        (the register save area), subtracted from CFA offsets before they are stored.
    8:
      id: cfa_offset_alignment
      doc: |
        SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR: CFA offsets are multiples of 8,
        stored divided by 8.
    -160:
      id: sp_val_offset
      doc: SFRAME_S390X_SP_VAL_OFFSET, the caller's SP is the CFA - 160.
    1:
      id: offset_regnum_bit
      doc: |
        Version 2: an FP or RA offset with this bit set names a DWARF register
        (`stored >> 1`), not a stack slot.
  # DWARF register numbers, as version 3 flexible rules name them (and as
  # sp_reg, fp_reg and ra_reg give them for the default rules).
  amd64_reg:
    0:
      id: rax
      doc: RAX.
    1:
      id: rdx
      doc: RDX.
    2:
      id: rcx
      doc: RCX.
    3:
      id: rbx
      doc: RBX.
    4:
      id: rsi
      doc: RSI.
    5:
      id: rdi
      doc: RDI.
    6:
      id: rbp
      doc: RBP, the frame pointer.
    7:
      id: rsp
      doc: RSP, the stack pointer.
    8:
      id: r8
      doc: R8.
    9:
      id: r9
      doc: R9.
    10:
      id: r10
      doc: R10.
    11:
      id: r11
      doc: R11.
    12:
      id: r12
      doc: R12.
    13:
      id: r13
      doc: R13.
    14:
      id: r14
      doc: R14.
    15:
      id: r15
      doc: R15.
    16:
      id: rip
      doc: The return address column (RIP).
  aarch64_reg:
    0:
      id: x0
      doc: x0.
    1:
      id: x1
      doc: x1.
    2:
      id: x2
      doc: x2.
    3:
      id: x3
      doc: x3.
    4:
      id: x4
      doc: x4.
    5:
      id: x5
      doc: x5.
    6:
      id: x6
      doc: x6.
    7:
      id: x7
      doc: x7.
    8:
      id: x8
      doc: x8.
    9:
      id: x9
      doc: x9.
    10:
      id: x10
      doc: x10.
    11:
      id: x11
      doc: x11.
    12:
      id: x12
      doc: x12.
    13:
      id: x13
      doc: x13.
    14:
      id: x14
      doc: x14.
    15:
      id: x15
      doc: x15.
    16:
      id: x16
      doc: x16.
    17:
      id: x17
      doc: x17.
    18:
      id: x18
      doc: x18.
    19:
      id: x19
      doc: x19.
    20:
      id: x20
      doc: x20.
    21:
      id: x21
      doc: x21.
    22:
      id: x22
      doc: x22.
    23:
      id: x23
      doc: x23.
    24:
      id: x24
      doc: x24.
    25:
      id: x25
      doc: x25.
    26:
      id: x26
      doc: x26.
    27:
      id: x27
      doc: x27.
    28:
      id: x28
      doc: x28.
    29:
      id: x29
      doc: x29, the frame pointer.
    30:
      id: x30
      doc: x30, the link register, which holds the return address until it is saved.
    31:
      id: sp
      doc: SP, the stack pointer.
  s390x_reg:
    0:
      id: r0
      doc: r0.
    1:
      id: r1
      doc: r1.
    2:
      id: r2
      doc: r2.
    3:
      id: r3
      doc: r3.
    4:
      id: r4
      doc: r4.
    5:
      id: r5
      doc: r5.
    6:
      id: r6
      doc: r6.
    7:
      id: r7
      doc: r7.
    8:
      id: r8
      doc: r8.
    9:
      id: r9
      doc: r9.
    10:
      id: r10
      doc: r10.
    11:
      id: r11
      doc: r11, the frame pointer.
    12:
      id: r12
      doc: r12.
    13:
      id: r13
      doc: r13.
    14:
      id: r14
      doc: r14, the return address register.
    15:
      id: r15
      doc: r15, the stack pointer.
    16:
      id: f0
      doc: f0, a floating-point register (leaf functions may keep r11 or r14 in one).
    17:
      id: f2
      doc: f2, a floating-point register (leaf functions may keep r11 or r14 in one).
    18:
      id: f4
      doc: f4, a floating-point register (leaf functions may keep r11 or r14 in one).
    19:
      id: f6
      doc: f6, a floating-point register (leaf functions may keep r11 or r14 in one).
    20:
      id: f1
      doc: f1, a floating-point register (leaf functions may keep r11 or r14 in one).
    21:
      id: f3
      doc: f3, a floating-point register (leaf functions may keep r11 or r14 in one).
    22:
      id: f5
      doc: f5, a floating-point register (leaf functions may keep r11 or r14 in one).
    23:
      id: f7
      doc: f7, a floating-point register (leaf functions may keep r11 or r14 in one).
    24:
      id: f8
      doc: f8, a floating-point register (leaf functions may keep r11 or r14 in one).
    25:
      id: f10
      doc: f10, a floating-point register (leaf functions may keep r11 or r14 in one).
    26:
      id: f12
      doc: f12, a floating-point register (leaf functions may keep r11 or r14 in one).
    27:
      id: f14
      doc: f14, a floating-point register (leaf functions may keep r11 or r14 in one).
    28:
      id: f9
      doc: f9, a floating-point register (leaf functions may keep r11 or r14 in one).
    29:
      id: f11
      doc: f11, a floating-point register (leaf functions may keep r11 or r14 in one).
    30:
      id: f13
      doc: f13, a floating-point register (leaf functions may keep r11 or r14 in one).
    31:
      id: f15
      doc: f15, a floating-point register (leaf functions may keep r11 or r14 in one).
