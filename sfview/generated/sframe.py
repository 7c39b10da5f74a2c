# GENERATED from sframe.ksy by tools/kaitai/compile.js with kaitai-struct-compiler 0.11.0.
# Do not edit: change sframe.ksy and run `node tools/kaitai/compile.js`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class Sframe(KaitaiStruct):
    """SFrame ("Simple Frame") is the compact stack-trace format that GNU binutils
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
    
    .. seealso::
       Source - https://sourceware.org/binutils/docs/sframe-spec.html
    """

    class Aarch64Reg(IntEnum):
        x0 = 0
        x1 = 1
        x2 = 2
        x3 = 3
        x4 = 4
        x5 = 5
        x6 = 6
        x7 = 7
        x8 = 8
        x9 = 9
        x10 = 10
        x11 = 11
        x12 = 12
        x13 = 13
        x14 = 14
        x15 = 15
        x16 = 16
        x17 = 17
        x18 = 18
        x19 = 19
        x20 = 20
        x21 = 21
        x22 = 22
        x23 = 23
        x24 = 24
        x25 = 25
        x26 = 26
        x27 = 27
        x28 = 28
        x29 = 29
        x30 = 30
        sp = 31

    class AbiArch(IntEnum):
        aarch64_endian_big = 1
        aarch64_endian_little = 2
        amd64_endian_little = 3
        s390x_endian_big = 4

    class Amd64Reg(IntEnum):
        rax = 0
        rdx = 1
        rcx = 2
        rbx = 3
        rsi = 4
        rdi = 5
        rbp = 6
        rsp = 7
        r8 = 8
        r9 = 9
        r10 = 10
        r11 = 11
        r12 = 12
        r13 = 13
        r14 = 14
        r15 = 15
        rip = 16

    class BaseReg(IntEnum):
        fp = 0
        sp = 1

    class FdeType(IntEnum):
        default = 0
        flexible = 1

    class Flag(IntEnum):
        fde_sorted = 1
        frame_pointer = 2
        fde_func_start_pcrel = 4

    class FreType(IntEnum):
        addr1 = 0
        addr2 = 1
        addr4 = 2

    class Magic(IntEnum):
        sframe = 57058

    class OffsetSize(IntEnum):
        b1 = 0
        b2 = 1
        b4 = 2

    class PauthKey(IntEnum):
        key_a = 0
        key_b = 1

    class PcType(IntEnum):
        pcinc = 0
        pcmask = 1

    class S390xAbi(IntEnum):
        sp_val_offset = -160
        offset_regnum_bit = 1
        cfa_offset_alignment = 8
        cfa_offset_adjustment = 160

    class S390xReg(IntEnum):
        r0 = 0
        r1 = 1
        r2 = 2
        r3 = 3
        r4 = 4
        r5 = 5
        r6 = 6
        r7 = 7
        r8 = 8
        r9 = 9
        r10 = 10
        r11 = 11
        r12 = 12
        r13 = 13
        r14 = 14
        r15 = 15
        f0 = 16
        f2 = 17
        f4 = 18
        f6 = 19
        f1 = 20
        f3 = 21
        f5 = 22
        f7 = 23
        f8 = 24
        f10 = 25
        f12 = 26
        f14 = 27
        f9 = 28
        f11 = 29
        f13 = 30
        f15 = 31

    class Version(IntEnum):
        v1 = 1
        v2 = 2
        v3 = 3
    def __init__(self, _io, _parent=None, _root=None):
        super(Sframe, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.section = Sframe.Section(self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.section._fetch_instances()
        _ = self.magic_be
        if hasattr(self, '_m_magic_be'):
            pass


    class Section(KaitaiStruct):
        """The section proper, in the byte order its magic number gives: the
        preamble and header, then (at offsets the header gives) the FDE array
        and the FRE sub-section.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(Sframe.Section, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            _on = self._root.magic_be
            if _on == 57058:
                pass
                self._is_le = False
            elif _on == 58078:
                pass
                self._is_le = True
            if not hasattr(self, '_is_le'):
                raise kaitaistruct.UndecidedEndiannessError("/types/section")
            elif self._is_le == True:
                self._read_le()
            elif self._is_le == False:
                self._read_be()

        def _read_le(self):
            self.preamble = Sframe.Section.Preamble(self._io, self, self._root, self._is_le)
            self.header = Sframe.Section.Header(self._io, self, self._root, self._is_le)
            self.auxhdr = self._io.read_bytes(self.header.auxhdr_len)

        def _read_be(self):
            self.preamble = Sframe.Section.Preamble(self._io, self, self._root, self._is_le)
            self.header = Sframe.Section.Header(self._io, self, self._root, self._is_le)
            self.auxhdr = self._io.read_bytes(self.header.auxhdr_len)


        def _fetch_instances(self):
            pass
            self.preamble._fetch_instances()
            self.header._fetch_instances()
            _ = self.fdes
            if hasattr(self, '_m_fdes'):
                pass
                for i in range(len(self._m_fdes)):
                    pass
                    self._m_fdes[i]._fetch_instances()



        class ControlWord(KaitaiStruct):
            """A version 3 control word: what a flexible rule is based on, and whether
            the value is loaded from memory. Bits 7..3 give a DWARF register number,
            bit 2 is reserved, bit 1 is `deref_p`, bit 0 is `reg_p`.
            """
            def __init__(self, size, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.ControlWord, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.size = size
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/control_word")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                _on = self.size
                if _on == Sframe.OffsetSize.b1:
                    pass
                    self.value = self._io.read_u1()
                elif _on == Sframe.OffsetSize.b2:
                    pass
                    self.value = self._io.read_u2le()
                elif _on == Sframe.OffsetSize.b4:
                    pass
                    self.value = self._io.read_u4le()

            def _read_be(self):
                _on = self.size
                if _on == Sframe.OffsetSize.b1:
                    pass
                    self.value = self._io.read_u1()
                elif _on == Sframe.OffsetSize.b2:
                    pass
                    self.value = self._io.read_u2be()
                elif _on == Sframe.OffsetSize.b4:
                    pass
                    self.value = self._io.read_u4be()


            def _fetch_instances(self):
                pass
                _on = self.size
                if _on == Sframe.OffsetSize.b1:
                    pass
                elif _on == Sframe.OffsetSize.b2:
                    pass
                elif _on == Sframe.OffsetSize.b4:
                    pass

            @property
            def deref_p(self):
                """Bit 1, deref_p: the value is the word loaded from base + offset (1),
                or base + offset itself (0).
                """
                if hasattr(self, '_m_deref_p'):
                    return self._m_deref_p

                self._m_deref_p = self.value >> 1 & 1 == 1
                return getattr(self, '_m_deref_p', None)

            @property
            def high(self):
                """Bits above 7 of a wider word, which no version defines; 0."""
                if hasattr(self, '_m_high'):
                    return self._m_high

                self._m_high = self.value >> 8
                return getattr(self, '_m_high', None)

            @property
            def reg_p(self):
                """Bit 0, reg_p: the base is the DWARF register `regnum` (1) or the CFA
                (0). A CFA rule must have a register base.
                """
                if hasattr(self, '_m_reg_p'):
                    return self._m_reg_p

                self._m_reg_p = self.value & 1 == 1
                return getattr(self, '_m_reg_p', None)

            @property
            def regnum(self):
                """Bits 7..3, the DWARF register number of the base when reg_p is set."""
                if hasattr(self, '_m_regnum'):
                    return self._m_regnum

                self._m_regnum = self.value >> 3 & 31
                return getattr(self, '_m_regnum', None)

            @property
            def regnum_read(self):
                """The register number as libsframe and readelf take it: every bit above
                bit 2, so `regnum` when the word is well formed. binutils 2.47's
                assembler writes 0xfffffffb (register -1) for an s390x FP rule it
                cannot express (`DW_CFA_expression`), which readelf prints as r536870911.
                """
                if hasattr(self, '_m_regnum_read'):
                    return self._m_regnum_read

                self._m_regnum_read = self.value >> 3
                return getattr(self, '_m_regnum_read', None)

            @property
            def reserved(self):
                """Bit 2, reserved; must be 0."""
                if hasattr(self, '_m_reserved'):
                    return self._m_reserved

                self._m_reserved = self.value >> 2 & 1
                return getattr(self, '_m_reserved', None)


        class Fde(KaitaiStruct):
            """A function descriptor entry: where a function is, how long it is and
            where its frame row entries are. In version 3 this is the 16-byte index
            entry and the rest of the description is in `attr`.
            """
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.Fde, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/fde")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                _on = self._parent.version
                if _on == 3:
                    pass
                    self.func_start = self._io.read_s8le()
                else:
                    pass
                    self.func_start = self._io.read_s4le()
                self.func_size = self._io.read_u4le()
                self.func_start_fre_off = self._io.read_u4le()
                if self._parent.version < 3:
                    pass
                    self.func_num_fres = self._io.read_u4le()

                if self._parent.version < 3:
                    pass
                    self.func_info = Sframe.Section.FdeInfo(self._io, self, self._root, self._is_le)

                if self._parent.version == 2:
                    pass
                    self.func_rep_size = self._io.read_u1()

                if self._parent.version == 2:
                    pass
                    self.padding2 = self._io.read_u2le()


            def _read_be(self):
                _on = self._parent.version
                if _on == 3:
                    pass
                    self.func_start = self._io.read_s8be()
                else:
                    pass
                    self.func_start = self._io.read_s4be()
                self.func_size = self._io.read_u4be()
                self.func_start_fre_off = self._io.read_u4be()
                if self._parent.version < 3:
                    pass
                    self.func_num_fres = self._io.read_u4be()

                if self._parent.version < 3:
                    pass
                    self.func_info = Sframe.Section.FdeInfo(self._io, self, self._root, self._is_le)

                if self._parent.version == 2:
                    pass
                    self.func_rep_size = self._io.read_u1()

                if self._parent.version == 2:
                    pass
                    self.padding2 = self._io.read_u2be()



            def _fetch_instances(self):
                pass
                _on = self._parent.version
                if _on == 3:
                    pass
                else:
                    pass
                if self._parent.version < 3:
                    pass

                if self._parent.version < 3:
                    pass
                    self.func_info._fetch_instances()

                if self._parent.version == 2:
                    pass

                if self._parent.version == 2:
                    pass

                _ = self.attr
                if hasattr(self, '_m_attr'):
                    pass
                    self._m_attr._fetch_instances()

                _ = self.fres
                if hasattr(self, '_m_fres'):
                    pass
                    for i in range(len(self._m_fres)):
                        pass
                        self._m_fres[i]._fetch_instances()



            @property
            def attr(self):
                """The version-3 attribute block in front of this function's FREs."""
                if hasattr(self, '_m_attr'):
                    return self._m_attr

                if self._parent.version >= 3:
                    pass
                    _pos = self._io.pos()
                    self._io.seek(self.attr_pos)
                    if self._is_le:
                        self._m_attr = Sframe.Section.FdeAttr(self._io, self, self._root, self._is_le)
                    else:
                        self._m_attr = Sframe.Section.FdeAttr(self._io, self, self._root, self._is_le)
                    self._io.seek(_pos)

                return getattr(self, '_m_attr', None)

            @property
            def attr_pos(self):
                """Section offset of what `func_start_fre_off` points at: the first FRE,
                or in version 3 the attribute block in front of it.
                """
                if hasattr(self, '_m_attr_pos'):
                    return self._m_attr_pos

                self._m_attr_pos = self._parent.fre_start + self.func_start_fre_off
                return getattr(self, '_m_attr_pos', None)

            @property
            def block_size(self):
                """For a PCMASK function, how many bytes its rows repeat every: the PC
                is matched modulo this size (0 for a PCINC function). Versions 2 and 3 store it
                (`func_rep_size`); version 1 has no field, and its one PCMASK user is
                the AMD64 PLT, whose entries are 16 bytes (libsframe 2.40 matches
                such rows against the PC's low bits: "For AMD64, the pltN entry stub
                is 16 bytes").
                """
                if hasattr(self, '_m_block_size'):
                    return self._m_block_size

                self._m_block_size = (0 if self.info.pc_type != Sframe.PcType.pcmask else (self.attr.func_rep_size if self._parent.version >= 3 else (self.func_rep_size if self._parent.version == 2 else 16)))
                return getattr(self, '_m_block_size', None)

            @property
            def fde_type(self):
                """How this function's FRE offsets are read (always DEFAULT before version 3)."""
                if hasattr(self, '_m_fde_type'):
                    return self._m_fde_type

                self._m_fde_type = (self.attr.func_info2.fde_type if self._parent.version >= 3 else Sframe.FdeType.default)
                return getattr(self, '_m_fde_type', None)

            @property
            def fres(self):
                """The function's frame row entries, in increasing start address. Read
                only when asked for, so that a section with many functions opens fast.
                """
                if hasattr(self, '_m_fres'):
                    return self._m_fres

                _pos = self._io.pos()
                self._io.seek(self.fres_start)
                if self._is_le:
                    self._m_fres = []
                    for i in range(self.num_fres):
                        self._m_fres.append(Sframe.Section.Fre(self.info.fre_type, self.fde_type, self._io, self, self._root, self._is_le))

                else:
                    self._m_fres = []
                    for i in range(self.num_fres):
                        self._m_fres.append(Sframe.Section.Fre(self.info.fre_type, self.fde_type, self._io, self, self._root, self._is_le))

                self._io.seek(_pos)
                return getattr(self, '_m_fres', None)

            @property
            def fres_start(self):
                """Section offset of this function's first FRE."""
                if hasattr(self, '_m_fres_start'):
                    return self._m_fres_start

                self._m_fres_start = self.attr_pos + (self._parent.attr_size if self._parent.version >= 3 else 0)
                return getattr(self, '_m_fres_start', None)

            @property
            def info(self):
                """The info byte, wherever this version keeps it."""
                if hasattr(self, '_m_info'):
                    return self._m_info

                self._m_info = (self.attr.func_info if self._parent.version >= 3 else self.func_info)
                return getattr(self, '_m_info', None)

            @property
            def num_fres(self):
                """Number of FREs, wherever this version keeps it."""
                if hasattr(self, '_m_num_fres'):
                    return self._m_num_fres

                self._m_num_fres = (self.attr.func_num_fres if self._parent.version >= 3 else self.func_num_fres)
                return getattr(self, '_m_num_fres', None)


        class FdeAttr(KaitaiStruct):
            """Version 3 only: the attributes of a function, stored in the FRE
            sub-section right before the function's first FRE.
            """
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.FdeAttr, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/fde_attr")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.func_num_fres = self._io.read_u2le()
                self.func_info = Sframe.Section.FdeInfo(self._io, self, self._root, self._is_le)
                self.func_info2 = Sframe.Section.FdeInfo2(self._io, self, self._root, self._is_le)
                self.func_rep_size = self._io.read_u1()

            def _read_be(self):
                self.func_num_fres = self._io.read_u2be()
                self.func_info = Sframe.Section.FdeInfo(self._io, self, self._root, self._is_le)
                self.func_info2 = Sframe.Section.FdeInfo2(self._io, self, self._root, self._is_le)
                self.func_rep_size = self._io.read_u1()


            def _fetch_instances(self):
                pass
                self.func_info._fetch_instances()
                self.func_info2._fetch_instances()


        class FdeInfo(KaitaiStruct):
            """The FDE info byte, from its most significant bit down."""
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.FdeInfo, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/fde_info")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.signal_frame = self._io.read_bits_int_be(1) != 0
                self.unused = self._io.read_bits_int_be(1) != 0
                self.pauth_key = KaitaiStream.resolve_enum(Sframe.PauthKey, self._io.read_bits_int_be(1))
                self.pc_type = KaitaiStream.resolve_enum(Sframe.PcType, self._io.read_bits_int_be(1))
                self.fre_type = KaitaiStream.resolve_enum(Sframe.FreType, self._io.read_bits_int_be(4))
                if not isinstance(self.fre_type, Sframe.FreType):
                    raise kaitaistruct.ValidationNotInEnumError(self.fre_type, self._io, u"/types/section/types/fde_info/seq/4")

            def _read_be(self):
                self.signal_frame = self._io.read_bits_int_be(1) != 0
                self.unused = self._io.read_bits_int_be(1) != 0
                self.pauth_key = KaitaiStream.resolve_enum(Sframe.PauthKey, self._io.read_bits_int_be(1))
                self.pc_type = KaitaiStream.resolve_enum(Sframe.PcType, self._io.read_bits_int_be(1))
                self.fre_type = KaitaiStream.resolve_enum(Sframe.FreType, self._io.read_bits_int_be(4))
                if not isinstance(self.fre_type, Sframe.FreType):
                    raise kaitaistruct.ValidationNotInEnumError(self.fre_type, self._io, u"/types/section/types/fde_info/seq/4")


            def _fetch_instances(self):
                pass


        class FdeInfo2(KaitaiStruct):
            """Version 3 only, the second FDE info byte."""
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.FdeInfo2, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/fde_info2")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.unused = self._io.read_bits_int_be(3)
                self.fde_type = KaitaiStream.resolve_enum(Sframe.FdeType, self._io.read_bits_int_be(5))

            def _read_be(self):
                self.unused = self._io.read_bits_int_be(3)
                self.fde_type = KaitaiStream.resolve_enum(Sframe.FdeType, self._io.read_bits_int_be(5))


            def _fetch_instances(self):
                pass


        class Flags(KaitaiStruct):
            """The preamble's flag byte, bit by bit (the `flag` enum names each
            bit's value). Bits not defined below are reserved and must be zero.
            """
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.Flags, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/flags")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.reserved = self._io.read_bits_int_be(5)
                self.fde_func_start_pcrel = self._io.read_bits_int_be(1) != 0
                self.frame_pointer = self._io.read_bits_int_be(1) != 0
                self.fde_sorted = self._io.read_bits_int_be(1) != 0

            def _read_be(self):
                self.reserved = self._io.read_bits_int_be(5)
                self.fde_func_start_pcrel = self._io.read_bits_int_be(1) != 0
                self.frame_pointer = self._io.read_bits_int_be(1) != 0
                self.fde_sorted = self._io.read_bits_int_be(1) != 0


            def _fetch_instances(self):
                pass

            @property
            def value(self):
                """The whole flag byte as a number."""
                if hasattr(self, '_m_value'):
                    return self._m_value

                self._m_value = ((self.reserved << 3 | (4 if self.fde_func_start_pcrel else 0)) | (2 if self.frame_pointer else 0)) | (1 if self.fde_sorted else 0)
                return getattr(self, '_m_value', None)


        class FlexOffset(KaitaiStruct):
            """A signed data word of a flexible FRE, as wide as the row's offset size."""
            def __init__(self, size, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.FlexOffset, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.size = size
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/flex_offset")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                _on = self.size
                if _on == Sframe.OffsetSize.b1:
                    pass
                    self.value = self._io.read_s1()
                elif _on == Sframe.OffsetSize.b2:
                    pass
                    self.value = self._io.read_s2le()
                elif _on == Sframe.OffsetSize.b4:
                    pass
                    self.value = self._io.read_s4le()

            def _read_be(self):
                _on = self.size
                if _on == Sframe.OffsetSize.b1:
                    pass
                    self.value = self._io.read_s1()
                elif _on == Sframe.OffsetSize.b2:
                    pass
                    self.value = self._io.read_s2be()
                elif _on == Sframe.OffsetSize.b4:
                    pass
                    self.value = self._io.read_s4be()


            def _fetch_instances(self):
                pass
                _on = self.size
                if _on == Sframe.OffsetSize.b1:
                    pass
                elif _on == Sframe.OffsetSize.b2:
                    pass
                elif _on == Sframe.OffsetSize.b4:
                    pass


        class Fre(KaitaiStruct):
            """A frame row entry: from its start address on (up to the next row's),
            how to find the CFA and where the caller's FP and RA were saved.
            """
            def __init__(self, fre_type, fde_type, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.Fre, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.fre_type = fre_type
                self.fde_type = fde_type
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/fre")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                _on = self.fre_type
                if _on == Sframe.FreType.addr1:
                    pass
                    self.start_addr = self._io.read_u1()
                elif _on == Sframe.FreType.addr2:
                    pass
                    self.start_addr = self._io.read_u2le()
                elif _on == Sframe.FreType.addr4:
                    pass
                    self.start_addr = self._io.read_u4le()
                self.info = Sframe.Section.FreInfo(self._io, self, self._root, self._is_le)
                if self.fde_type != Sframe.FdeType.flexible:
                    pass
                    self.offsets = []
                    for i in range(self.info.offset_count):
                        _on = self.info.offset_size
                        if _on == Sframe.OffsetSize.b1:
                            pass
                            self.offsets.append(self._io.read_s1())
                        elif _on == Sframe.OffsetSize.b2:
                            pass
                            self.offsets.append(self._io.read_s2le())
                        elif _on == Sframe.OffsetSize.b4:
                            pass
                            self.offsets.append(self._io.read_s4le())


                if self.fde_type == Sframe.FdeType.flexible:
                    pass
                    self.flex = Sframe.Section.FreFlex(self.info.offset_size, self.info.offset_count, self._io, self, self._root, self._is_le)


            def _read_be(self):
                _on = self.fre_type
                if _on == Sframe.FreType.addr1:
                    pass
                    self.start_addr = self._io.read_u1()
                elif _on == Sframe.FreType.addr2:
                    pass
                    self.start_addr = self._io.read_u2be()
                elif _on == Sframe.FreType.addr4:
                    pass
                    self.start_addr = self._io.read_u4be()
                self.info = Sframe.Section.FreInfo(self._io, self, self._root, self._is_le)
                if self.fde_type != Sframe.FdeType.flexible:
                    pass
                    self.offsets = []
                    for i in range(self.info.offset_count):
                        _on = self.info.offset_size
                        if _on == Sframe.OffsetSize.b1:
                            pass
                            self.offsets.append(self._io.read_s1())
                        elif _on == Sframe.OffsetSize.b2:
                            pass
                            self.offsets.append(self._io.read_s2be())
                        elif _on == Sframe.OffsetSize.b4:
                            pass
                            self.offsets.append(self._io.read_s4be())


                if self.fde_type == Sframe.FdeType.flexible:
                    pass
                    self.flex = Sframe.Section.FreFlex(self.info.offset_size, self.info.offset_count, self._io, self, self._root, self._is_le)



            def _fetch_instances(self):
                pass
                _on = self.fre_type
                if _on == Sframe.FreType.addr1:
                    pass
                elif _on == Sframe.FreType.addr2:
                    pass
                elif _on == Sframe.FreType.addr4:
                    pass
                self.info._fetch_instances()
                if self.fde_type != Sframe.FdeType.flexible:
                    pass
                    for i in range(len(self.offsets)):
                        pass
                        _on = self.info.offset_size
                        if _on == Sframe.OffsetSize.b1:
                            pass
                        elif _on == Sframe.OffsetSize.b2:
                            pass
                        elif _on == Sframe.OffsetSize.b4:
                            pass


                if self.fde_type == Sframe.FdeType.flexible:
                    pass
                    self.flex._fetch_instances()



        class FreFlex(KaitaiStruct):
            """The data words of a version 3 flexible FRE, as libsframe reads them:
            words 0 and 1 are the CFA's control word and offset; word 2 is the
            RA's control word, or 0, the padding word, when the row says nothing
            of the RA (then no RA offset follows); the FP's control word and
            offset come next. A row may stop after any entity.
            """
            def __init__(self, offset_size, count, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.FreFlex, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.offset_size = offset_size
                self.count = count
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/fre_flex")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                if self.count >= 1:
                    pass
                    self.cfa_control = Sframe.Section.ControlWord(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= 2:
                    pass
                    self.cfa_offset = Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= 3:
                    pass
                    self.ra_control = Sframe.Section.ControlWord(self.offset_size, self._io, self, self._root, self._is_le)

                if  ((self.count >= 4) and ((not (self.ra_padding)))) :
                    pass
                    self.ra_offset = Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= (4 if self.ra_padding else 5):
                    pass
                    self.fp_control = Sframe.Section.ControlWord(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= (5 if self.ra_padding else 6):
                    pass
                    self.fp_offset = Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count > (5 if self.ra_padding else 6):
                    pass
                    self.extra = []
                    for i in range(self.count - (5 if self.ra_padding else 6)):
                        self.extra.append(Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le))



            def _read_be(self):
                if self.count >= 1:
                    pass
                    self.cfa_control = Sframe.Section.ControlWord(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= 2:
                    pass
                    self.cfa_offset = Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= 3:
                    pass
                    self.ra_control = Sframe.Section.ControlWord(self.offset_size, self._io, self, self._root, self._is_le)

                if  ((self.count >= 4) and ((not (self.ra_padding)))) :
                    pass
                    self.ra_offset = Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= (4 if self.ra_padding else 5):
                    pass
                    self.fp_control = Sframe.Section.ControlWord(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count >= (5 if self.ra_padding else 6):
                    pass
                    self.fp_offset = Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le)

                if self.count > (5 if self.ra_padding else 6):
                    pass
                    self.extra = []
                    for i in range(self.count - (5 if self.ra_padding else 6)):
                        self.extra.append(Sframe.Section.FlexOffset(self.offset_size, self._io, self, self._root, self._is_le))




            def _fetch_instances(self):
                pass
                if self.count >= 1:
                    pass
                    self.cfa_control._fetch_instances()

                if self.count >= 2:
                    pass
                    self.cfa_offset._fetch_instances()

                if self.count >= 3:
                    pass
                    self.ra_control._fetch_instances()

                if  ((self.count >= 4) and ((not (self.ra_padding)))) :
                    pass
                    self.ra_offset._fetch_instances()

                if self.count >= (4 if self.ra_padding else 5):
                    pass
                    self.fp_control._fetch_instances()

                if self.count >= (5 if self.ra_padding else 6):
                    pass
                    self.fp_offset._fetch_instances()

                if self.count > (5 if self.ra_padding else 6):
                    pass
                    for i in range(len(self.extra)):
                        pass
                        self.extra[i]._fetch_instances()



            @property
            def ra_padding(self):
                """Word 2 is the padding word (0), so the RA takes no offset word."""
                if hasattr(self, '_m_ra_padding'):
                    return self._m_ra_padding

                self._m_ra_padding =  ((self.count >= 3) and (self.ra_control.value == 0)) 
                return getattr(self, '_m_ra_padding', None)


        class FreInfo(KaitaiStruct):
            """The FRE info byte, from its most significant bit down."""
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.FreInfo, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/fre_info")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.mangled_ra = self._io.read_bits_int_be(1) != 0
                self.offset_size = KaitaiStream.resolve_enum(Sframe.OffsetSize, self._io.read_bits_int_be(2))
                if not isinstance(self.offset_size, Sframe.OffsetSize):
                    raise kaitaistruct.ValidationNotInEnumError(self.offset_size, self._io, u"/types/section/types/fre_info/seq/1")
                self.offset_count = self._io.read_bits_int_be(4)
                self.cfa_base_reg = KaitaiStream.resolve_enum(Sframe.BaseReg, self._io.read_bits_int_be(1))

            def _read_be(self):
                self.mangled_ra = self._io.read_bits_int_be(1) != 0
                self.offset_size = KaitaiStream.resolve_enum(Sframe.OffsetSize, self._io.read_bits_int_be(2))
                if not isinstance(self.offset_size, Sframe.OffsetSize):
                    raise kaitaistruct.ValidationNotInEnumError(self.offset_size, self._io, u"/types/section/types/fre_info/seq/1")
                self.offset_count = self._io.read_bits_int_be(4)
                self.cfa_base_reg = KaitaiStream.resolve_enum(Sframe.BaseReg, self._io.read_bits_int_be(1))


            def _fetch_instances(self):
                pass


        class Header(KaitaiStruct):
            """The fixed part of the header after the preamble (24 bytes)."""
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.Header, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/header")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.abi_arch = KaitaiStream.resolve_enum(Sframe.AbiArch, self._io.read_u1())
                self.cfa_fixed_fp_offset = self._io.read_s1()
                self.cfa_fixed_ra_offset = self._io.read_s1()
                self.auxhdr_len = self._io.read_u1()
                self.num_fdes = self._io.read_u4le()
                self.num_fres = self._io.read_u4le()
                self.fre_len = self._io.read_u4le()
                self.fdeoff = self._io.read_u4le()
                self.freoff = self._io.read_u4le()

            def _read_be(self):
                self.abi_arch = KaitaiStream.resolve_enum(Sframe.AbiArch, self._io.read_u1())
                self.cfa_fixed_fp_offset = self._io.read_s1()
                self.cfa_fixed_ra_offset = self._io.read_s1()
                self.auxhdr_len = self._io.read_u1()
                self.num_fdes = self._io.read_u4be()
                self.num_fres = self._io.read_u4be()
                self.fre_len = self._io.read_u4be()
                self.fdeoff = self._io.read_u4be()
                self.freoff = self._io.read_u4be()


            def _fetch_instances(self):
                pass


        class Preamble(KaitaiStruct):
            """The first four bytes, laid out the same in every version: they say
            how to read everything after them.
            """
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(Sframe.Section.Preamble, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/section/types/preamble")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.magic = self._io.read_u2le()
                if not self.magic == 57058:
                    raise kaitaistruct.ValidationNotEqualError(57058, self.magic, self._io, u"/types/section/types/preamble/seq/0")
                self.version = KaitaiStream.resolve_enum(Sframe.Version, self._io.read_u1())
                self.flags = Sframe.Section.Flags(self._io, self, self._root, self._is_le)

            def _read_be(self):
                self.magic = self._io.read_u2be()
                if not self.magic == 57058:
                    raise kaitaistruct.ValidationNotEqualError(57058, self.magic, self._io, u"/types/section/types/preamble/seq/0")
                self.version = KaitaiStream.resolve_enum(Sframe.Version, self._io.read_u1())
                self.flags = Sframe.Section.Flags(self._io, self, self._root, self._is_le)


            def _fetch_instances(self):
                pass
                self.flags._fetch_instances()


        @property
        def attr_size(self):
            """Size in bytes of a version 3 attribute block, which stands in the FRE
            sub-section in front of each function's FREs.
            """
            if hasattr(self, '_m_attr_size'):
                return self._m_attr_size

            self._m_attr_size = 5
            return getattr(self, '_m_attr_size', None)

        @property
        def cfa_offset_bias(self):
            """What is added to a scaled CFA offset (s390x: 160, the register save
            area every frame reserves, so a CFA of SP+160 is stored as 0 and
            fits a 1-byte offset; elsewhere 0).
            """
            if hasattr(self, '_m_cfa_offset_bias'):
                return self._m_cfa_offset_bias

            self._m_cfa_offset_bias = (int(Sframe.S390xAbi.cfa_offset_adjustment) if self.is_s390x else 0)
            return getattr(self, '_m_cfa_offset_bias', None)

        @property
        def cfa_offset_scale(self):
            """What a stored CFA offset is multiplied by (s390x: 8, the ABI keeps
            CFA offsets 8-byte aligned; elsewhere 1). The CFA offset is
            `stored * cfa_offset_scale + cfa_offset_bias`
            (SFRAME_V3_S390X_CFA_OFFSET_DECODE), in default and flexible FDEs.
            """
            if hasattr(self, '_m_cfa_offset_scale'):
                return self._m_cfa_offset_scale

            self._m_cfa_offset_scale = (int(Sframe.S390xAbi.cfa_offset_alignment) if self.is_s390x else 1)
            return getattr(self, '_m_cfa_offset_scale', None)

        @property
        def fde_size(self):
            """Size in bytes of one entry of the FDE array: 17 in version 1, 20 in
            version 2 (repetition size and padding added), 16 in version 3 (the
            index entry only; the attributes moved next to the FREs).
            """
            if hasattr(self, '_m_fde_size'):
                return self._m_fde_size

            self._m_fde_size = (17 if self.version == 1 else (20 if self.version == 2 else 16))
            return getattr(self, '_m_fde_size', None)

        @property
        def fde_start(self):
            """Section offset of the FDE array."""
            if hasattr(self, '_m_fde_start'):
                return self._m_fde_start

            self._m_fde_start = self.header_end + self.header.fdeoff
            return getattr(self, '_m_fde_start', None)

        @property
        def fdes(self):
            """The function descriptor entries, one per function, sorted by start
            address when the FDE_SORTED flag is set.
            """
            if hasattr(self, '_m_fdes'):
                return self._m_fdes

            _pos = self._io.pos()
            self._io.seek(self.fde_start)
            if self._is_le:
                self._m_fdes = []
                for i in range(self.header.num_fdes):
                    self._m_fdes.append(Sframe.Section.Fde(self._io, self, self._root, self._is_le))

            else:
                self._m_fdes = []
                for i in range(self.header.num_fdes):
                    self._m_fdes.append(Sframe.Section.Fde(self._io, self, self._root, self._is_le))

            self._io.seek(_pos)
            return getattr(self, '_m_fdes', None)

        @property
        def fp_reg(self):
            """The DWARF register number of the frame pointer for this ABI (AMD64: 6,
            RBP; AArch64: 29, x29; s390x: 11, r11).
            """
            if hasattr(self, '_m_fp_reg'):
                return self._m_fp_reg

            self._m_fp_reg = (int(Sframe.Amd64Reg.rbp) if self.header.abi_arch == Sframe.AbiArch.amd64_endian_little else (int(Sframe.S390xReg.r11) if self.header.abi_arch == Sframe.AbiArch.s390x_endian_big else int(Sframe.Aarch64Reg.x29)))
            return getattr(self, '_m_fp_reg', None)

        @property
        def fre_end(self):
            """Section offset just past the FRE sub-section, as the header gives its length."""
            if hasattr(self, '_m_fre_end'):
                return self._m_fre_end

            self._m_fre_end = self.fre_start + self.header.fre_len
            return getattr(self, '_m_fre_end', None)

        @property
        def fre_start(self):
            """Section offset of the FRE sub-section."""
            if hasattr(self, '_m_fre_start'):
                return self._m_fre_start

            self._m_fre_start = self.header_end + self.header.freoff
            return getattr(self, '_m_fre_start', None)

        @property
        def header_end(self):
            """Offset just past the header and the auxiliary header: both
            sub-section offsets in the header count from here.
            """
            if hasattr(self, '_m_header_end'):
                return self._m_header_end

            self._m_header_end = (4 + 24) + self.header.auxhdr_len
            return getattr(self, '_m_header_end', None)

        @property
        def info_offset(self):
            """Where a function's info byte sits: from the start of its FDE before
            version 3 (after start, size, FRE offset and FRE count), from the start
            of its attribute block in version 3 (after the FRE count).
            """
            if hasattr(self, '_m_info_offset'):
                return self._m_info_offset

            self._m_info_offset = (2 if self.version >= 3 else 16)
            return getattr(self, '_m_info_offset', None)

        @property
        def is_s390x(self):
            """The section is for s390x, whose CFA offsets are stored scaled and
            biased, and whose stack pointer is not the CFA minus zero.
            """
            if hasattr(self, '_m_is_s390x'):
                return self._m_is_s390x

            self._m_is_s390x = self.header.abi_arch == Sframe.AbiArch.s390x_endian_big
            return getattr(self, '_m_is_s390x', None)

        @property
        def offset_regnum(self):
            """Version 2 on s390x (binutils 2.45): a default FDE's FP or RA offset whose
            lowest bit is 1 is not an offset but a DWARF register, `stored >> 1`
            (SFRAME_V2_S390X_OFFSET_IS_REGNUM), in which the value was saved
            (leaf functions save r11 and r14 in floating-point registers).
            Version 3 writes such rules as flexible FDEs instead.
            """
            if hasattr(self, '_m_offset_regnum'):
                return self._m_offset_regnum

            self._m_offset_regnum =  ((self.is_s390x) and (self.version == 2)) 
            return getattr(self, '_m_offset_regnum', None)

        @property
        def ra_reg(self):
            """The DWARF register number of the return address column (AMD64: 16, RIP;
            AArch64: 30, the link register x30; s390x: 14, r14).
            """
            if hasattr(self, '_m_ra_reg'):
                return self._m_ra_reg

            self._m_ra_reg = (int(Sframe.Amd64Reg.rip) if self.header.abi_arch == Sframe.AbiArch.amd64_endian_little else (int(Sframe.S390xReg.r14) if self.header.abi_arch == Sframe.AbiArch.s390x_endian_big else int(Sframe.Aarch64Reg.x30)))
            return getattr(self, '_m_ra_reg', None)

        @property
        def sp_reg(self):
            """The DWARF register number of the stack pointer for this ABI (AMD64: 7,
            RSP; AArch64: 31, SP; s390x: 15, r15). A row whose CFA base register is
            SP means this register.
            """
            if hasattr(self, '_m_sp_reg'):
                return self._m_sp_reg

            self._m_sp_reg = (int(Sframe.Amd64Reg.rsp) if self.header.abi_arch == Sframe.AbiArch.amd64_endian_little else (int(Sframe.S390xReg.r15) if self.header.abi_arch == Sframe.AbiArch.s390x_endian_big else int(Sframe.Aarch64Reg.sp)))
            return getattr(self, '_m_sp_reg', None)

        @property
        def sp_val_offset(self):
            """The caller's stack pointer is the CFA plus this (SFRAME_S390X_SP_VAL_OFFSET:
            -160 on s390x, where the CFA is the caller's SP + 160; 0 on AMD64 and
            AArch64, where the CFA is the caller's SP).
            """
            if hasattr(self, '_m_sp_val_offset'):
                return self._m_sp_val_offset

            self._m_sp_val_offset = (int(Sframe.S390xAbi.sp_val_offset) if self.is_s390x else 0)
            return getattr(self, '_m_sp_val_offset', None)

        @property
        def version(self):
            """The format version as a number, for the version-dependent layouts."""
            if hasattr(self, '_m_version'):
                return self._m_version

            self._m_version = int(self.preamble.version)
            return getattr(self, '_m_version', None)


    @property
    def magic_be(self):
        """The first two bytes read as big-endian, only to choose the byte order:
        0xdee2 means a big-endian section, 0xe2de a little-endian one.
        """
        if hasattr(self, '_m_magic_be'):
            return self._m_magic_be

        _pos = self._io.pos()
        self._io.seek(0)
        self._m_magic_be = self._io.read_u2be()
        self._io.seek(_pos)
        return getattr(self, '_m_magic_be', None)


