"""The Linux kernel's SFrame reader, rule for rule: would it register a section, and where do its lookups fail.

Written from `kernel/unwind/sframe.c` of the unwind_user/sframe **v14 series**
(the version with `__read_default_fre_datawords` and flexible FDEs, as carried
in dylanbhatch/linux at 3231d5c571fa6e6b8f78d8039a3429eb0d953caa), with
`CONFIG_SFRAME_VALIDATION=y`. Nothing here is the format's rule: it is what that
code does, which is looser in places (it never looks at unknown flag bits, the
ABI byte, reserved control-word bits, overlapping functions, a row at the
function's very end) and stricter or fragile in others (a flexible CFA rule
without a register fails every lookup; a PCMASK function with `rep_size` 0
divides by zero in the kernel). `check` reports the format's problems apart.

Two parts, in the kernel's order:

- **registration** (`sframe_add_section`): `sframe_read_header`, then
  `sframe_validate_section`, which reads every FDE and every row as a lookup
  would: the first failure refuses the section (`-EINVAL` or `-EFAULT`), named
  after the check in the kernel's code, at the section offset it read;
- **lookup** (`sframe_find_user` → `__find_fde`, `__find_fre`, `__read_fre`,
  `__read_fre_datawords`, `sframe_init_cfa_rule_data`): for every PC of every
  function of an accepted section, whether the lookup fails, and with what; a
  lookup returning `-EFAULT` also makes the kernel drop the section.

`tests/data/consumers/kernel/` holds sections with the verdicts the kernel's own
code gave (compiled in user space by `scripts/kernel_corpus.py`); the tests hold
this module to every one of them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from sfview import ADDRESS_MASK
from sfview.consumers import LookupFailure, Profile, Verdict, register
from sfview.document import Document
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.inputs.elf.image import PF_X, PT_LOAD
from sfview.sframe.model.terms import register_name

SERIES = "v14 series (unwind_user/sframe, flexible FDEs; dylanbhatch/linux 3231d5c5)"

EINVAL = "-EINVAL"
EFAULT = "-EFAULT"
CRASH = "crash"

"""`unsigned long` arithmetic wraps at 64 bits."""

PREAMBLE_SIZE = layout.PREAMBLE.size
HEADER_END = layout.PREAMBLE.size + layout.HEADER.size
FDE = layout.FDE[3]
FDA = layout.FDE_ATTR
SORTED = int(Sframe.Flag.fde_sorted)
PCREL = int(Sframe.Flag.fde_func_start_pcrel)
PCMASK = int(Sframe.PcType.pcmask)
MAGIC = int(Sframe.Magic.sframe)
V3 = int(Sframe.Version.v3)
FDE_TYPE_MASK = 0x0F
"""The kernel's own `SFRAME_V3_FDE_TYPE_MASK`: four bits of info2 (the format's FDE type has five)."""
DEFAULT, FLEX = int(Sframe.FdeType.default), int(Sframe.FdeType.flexible)


class Arch(Enum):
    """A machine whose kernel reads the section (`check --arch`): the kernel never reads the ABI byte."""

    X86_64 = "x86_64"
    ARM64 = "arm64"
    S390X = "s390x"


class Machine(NamedTuple):
    """What of a machine the kernel's reader uses: its byte order, and SFRAME_REG_SP and SFRAME_REG_FP
    (asm/unwind_sframe.h) as DWARF numbers, named by the ABI of that machine."""

    arch: Arch
    order: str
    abi: int
    sp: int
    fp: int

    def describe(self) -> str:
        """`an x86_64 kernel (little-endian, SFRAME_REG_SP = 7 rsp, SFRAME_REG_FP = 6 rbp)`."""
        order = "little" if self.order == "<" else "big"
        sp, fp = register_name(self.abi, self.sp), register_name(self.abi, self.fp)
        article = "an" if self.arch.value[0] in "aeiosx" else "a"
        return (
            f"{article} {self.arch.value} kernel ({order}-endian, SFRAME_REG_SP = {self.sp} {sp}, "
            f"SFRAME_REG_FP = {self.fp} {fp})"
        )


AMD64_ABI = int(Sframe.AbiArch.amd64_endian_little)
S390X_ABI = int(Sframe.AbiArch.s390x_endian_big)
AARCH64_ABI = int(Sframe.AbiArch.aarch64_endian_little)
MACHINES = {
    Arch.X86_64: Machine(Arch.X86_64, "<", AMD64_ABI, int(Sframe.Amd64Reg.rsp), int(Sframe.Amd64Reg.rbp)),
    Arch.ARM64: Machine(Arch.ARM64, "<", AARCH64_ABI, int(Sframe.Aarch64Reg.sp), int(Sframe.Aarch64Reg.x29)),
    Arch.S390X: Machine(Arch.S390X, ">", S390X_ABI, int(Sframe.S390xReg.r15), int(Sframe.S390xReg.r11)),
}
BY_ABI = {AMD64_ABI: Arch.X86_64, S390X_ABI: Arch.S390X}
"""The machine assumed from a section's ABI byte when none is given (any other ABI: arm64's, as the
format's own fallback)."""


START_ADDR_SIZES = {kind: struct.calcsize(char) for kind, char in layout.FRE_START_ADDR.items()}
WORD_SIZES = {kind: struct.calcsize(char) for kind, char in layout.FRE_OFFSET.items()}


def _bits(byte: int, record: str, name: str) -> int:
    low, width = layout.BITS[record][name]
    return (byte >> low) & ((1 << width) - 1)


def _field(record: str, name: str) -> tuple[int, int]:
    """(shift, mask) of a bit field, for the per-row reads."""
    low, width = layout.BITS[record][name]
    return low, (1 << width) - 1


FRE_TYPE = _field("fde_info", "fre_type")
PC_TYPE = _field("fde_info", "pc_type")
WORD_COUNT = _field("fre_info", "offset_count")
WORD_SIZE = _field("fre_info", "offset_size")
CFA_BASE = _field("fre_info", "cfa_base_reg")


class Refused(Exception):
    """A check of the kernel's failed: its error, its name, the section offset it read."""

    def __init__(self, error: str, rule: str, offset: int) -> None:
        super().__init__(rule)
        self.error, self.rule, self.offset = error, rule, offset


class KernelRow(NamedTuple):
    """One row as the kernel decodes it: its start, and either the frame a lookup there gives or the failure."""

    ip_off: int
    start: int
    """Section offset of the row."""
    failure: tuple[str, str] | None
    """(error, rule) when a lookup landing on this row fails."""
    frame: tuple[int, int, int, int, int, int] | None
    """(cfa_ctl, cfa_off, ra_ctl, ra_off, fp_ctl, fp_off) as `__find_fre` hands them to the rule makers."""


@dataclass
class KernelFunction:
    """One FDE as the kernel's validation reads it: its fields, where its rows start, the rows read."""

    index: int
    address: int
    size: int
    info: int
    info2: int
    rep_size: int
    num_fres: int
    rows_at: int
    """Section offset of the first row (right after the attributes)."""
    rows: list[KernelRow] = field(default_factory=list)

    @property
    def pcmask(self) -> bool:
        return (self.info >> PC_TYPE[0]) & PC_TYPE[1] == PCMASK

    @property
    def clean(self) -> bool:
        """Every PC of it finds a row that succeeds (PCINC: a row at 0, none failing)."""
        rows = self.rows
        return not self.pcmask and bool(rows) and rows[0].ip_off == 0 and all(r.failure is None for r in rows)


@dataclass
class Registered:
    """A section the kernel took: its functions in the FDE index's order, as the validation read them."""

    functions: list[KernelFunction]
    byte_order: str
    regs: tuple[int, int]
    """The kernel's SFRAME_REG_SP and SFRAME_REG_FP."""
    notes: list[str] = field(default_factory=list)

    def rules(self, row: KernelRow) -> str:
        """What a lookup landing on `row` gives (`sframe_init_cfa_rule_data`, `sframe_init_rule_data`):
        `cfa=sp+16 ra=*(cfa-8) fp=retain`."""
        assert row.frame is not None
        cfa_ctl, cfa_off, ra_ctl, ra_off, fp_ctl, fp_off = row.frame
        regnum = cfa_ctl >> 3
        sp, fp = self.regs
        base = "sp" if regnum == sp else "fp" if regnum == fp else f"r{regnum}"
        cfa = _deref(cfa_ctl, f"{base}{cfa_off:+d}")
        return f"cfa={cfa} ra={_entity(ra_ctl, ra_off)} fp={_entity(fp_ctl, fp_off)}"


class _Reader:
    """The section's bytes in the kernel's view: addresses are load address + offset."""

    def __init__(self, data: bytes, address: int, text: tuple[int, int] | None, arch: Arch | None) -> None:
        self.data = data
        self.size = len(data)
        self.base = address
        self.text = text if text is not None else (0, ADDRESS_MASK)
        self.order = "<"
        self.arch = arch
        self.notes: list[str] = []

    def field(self, fmt: str, offset: int) -> int:
        return struct.unpack_from(self.order + fmt, self.data, offset)[0]

    def header(self) -> Refused | None:
        """`sframe_read_header`: None when it passes (and then the section's bounds are set)."""
        # copy_from_user reads a whole header; past a short section's end it reads what follows (taken as
        # zeros), and then header_end >= sframe_end refuses it if nothing before did.
        data = self.data = self.data + bytes(max(0, HEADER_END - len(self.data)))
        # The kernel reads in its own byte order: the machine's given, else the one the magic reads right in.
        given = MACHINES[self.arch] if self.arch is not None else None
        self.order = given.order if given else "<" if struct.unpack_from("<H", data)[0] == MAGIC else ">"
        pre = layout.PREAMBLE.fields
        if self.field("H", pre["magic"][0]) != MAGIC:
            return Refused(EINVAL, "sframe_read_header: preamble.magic != SFRAME_MAGIC", pre["magic"][0])
        if self.field("B", pre["version"][0]) != V3:
            return Refused(EINVAL, "sframe_read_header: preamble.version != SFRAME_VERSION_3", pre["version"][0])
        flags = self.field("B", pre["flags"][0])
        if not flags & SORTED:
            return Refused(EINVAL, "sframe_read_header: !(flags & SFRAME_F_FDE_SORTED)", pre["flags"][0])
        if not flags & PCREL:
            return Refused(EINVAL, "sframe_read_header: !(flags & SFRAME_F_FDE_FUNC_START_PCREL)", pre["flags"][0])
        hdr = {name: self.field(char, PREAMBLE_SIZE + at) for name, (at, char) in layout.HEADER.fields.items()}
        where = {name: PREAMBLE_SIZE + at for name, (at, _) in layout.HEADER.fields.items()}
        if hdr["auxhdr_len"]:
            return Refused(EINVAL, "sframe_read_header: auxhdr_len != 0", where["auxhdr_len"])
        if not hdr["num_fdes"] or not hdr["num_fres"]:
            at = where["num_fdes"] if not hdr["num_fdes"] else where["num_fres"]
            return Refused(EINVAL, "sframe_read_header: !num_fdes || !num_fres", at)
        header_end = HEADER_END
        if header_end >= self.size:
            return Refused(EINVAL, "sframe_read_header: header_end >= sframe_end", 0)
        self.num_fdes = hdr["num_fdes"]
        self.fdes_start = header_end + hdr["fdeoff"]
        fdes_end = self.fdes_start + self.num_fdes * FDE.size
        self.fres_start = header_end + hdr["freoff"]
        self.fres_end = self.fres_start + hdr["fre_len"]
        if self.fres_start < fdes_end:
            return Refused(EINVAL, "sframe_read_header: fres_start < fdes_end", where["freoff"])
        if self.fres_end > self.size:
            return Refused(EINVAL, "sframe_read_header: fres_end > sframe_end", where["fre_len"])
        self.ra_off = hdr["cfa_fixed_ra_offset"]
        self.fp_off = hdr["cfa_fixed_fp_offset"]
        # The kernel's SFRAME_REG_SP/FP are its machine's: the one given, else assumed from the ABI byte.
        machine = given or MACHINES[BY_ABI.get(hdr["abi_arch"], Arch.ARM64)]
        self.sp_reg, self.fp_reg = machine.sp, machine.fp
        said = (
            "as --arch says"
            if given
            else f"the machine assumed from the ABI byte ({hdr['abi_arch']}); --arch names another"
        )
        self.notes.append(f"read by {machine.describe()}: {said}")
        return None

    def fde(self, index: int) -> KernelFunction:
        """`__read_fde`: the function's start must lie in the text, its attributes in the FRE sub-section."""
        at = self.fdes_start + index * FDE.size
        start_off, size, fres_off = struct.unpack_from(self.order + FDE.format, self.data, at)
        func_addr = (self.base + at + start_off) & ADDRESS_MASK
        if not self.text[0] <= func_addr < self.text[1]:
            raise Refused(EINVAL, "__read_fde: func_addr outside the text", at + FDE.fields["func_start"][0])
        fda_at = self.fres_start + fres_off
        if fda_at + FDA.size > self.fres_end:
            raise Refused(
                EINVAL, "__read_fde: fda_addr + sizeof(fda) > fres_end", at + FDE.fields["func_start_fre_off"][0]
            )
        num, info, info2, rep = struct.unpack_from(self.order + FDA.format, self.data, fda_at)
        return KernelFunction(index, func_addr, size, info, info2, rep, num, fda_at + FDA.size)

    def fre(self, function: KernelFunction, at: int, pcmask: bool) -> tuple[KernelRow, int]:
        """`__read_fre` then `__read_fre_datawords`: the row at `at` and the size it takes."""
        fre_type = (function.info >> FRE_TYPE[0]) & FRE_TYPE[1]
        if fre_type not in START_ADDR_SIZES:
            raise Refused(EFAULT, "__read_fre: FRE type > 2 (no address size)", at)
        addr_size = START_ADDR_SIZES[fre_type]
        if at + addr_size + 1 > self.fres_end:
            raise Refused(EFAULT, "__read_fre: fre_addr + addr_size + 1 > fres_end", at)
        ip_off = self.field(layout.FRE_START_ADDR[fre_type], at)
        if not pcmask and ip_off > function.size:
            raise Refused(EFAULT, "__read_fre: ip_off > func_size", at)
        info = self.data[at + addr_size]
        count = (info >> WORD_COUNT[0]) & WORD_COUNT[1]
        size_kind = (info >> WORD_SIZE[0]) & WORD_SIZE[1]
        if size_kind not in WORD_SIZES:
            raise Refused(EFAULT, "__read_fre: data word size > 2", at + addr_size)
        word = WORD_SIZES[size_kind]
        words_at = at + addr_size + 1
        if words_at + count * word > self.fres_end:
            raise Refused(EFAULT, "__read_fre: data words past fres_end", at + addr_size)
        words = struct.unpack_from(f"{self.order}{count}{layout.FRE_OFFSET[size_kind]}", self.data, words_at)
        failure, frame = self._datawords(function, info, words, words_at, word)
        return KernelRow(ip_off, at, failure, frame), addr_size + 1 + count * word

    def _datawords(
        self, function: KernelFunction, info: int, words: tuple[int, ...], words_at: int, word: int
    ) -> tuple[tuple[str, str] | None, tuple[int, int, int, int, int, int] | None]:
        """`__read_fre_datawords`: the frame, or the lookup's failure for a row the validation lets pass."""
        if not words:
            # cfa_ctl = 0: sframe_init_cfa_rule_data finds reg_p clear.
            return (EINVAL, "__read_fre_datawords: no data words (outermost), CFA reg_p clear"), None
        fde_type = function.info2 & FDE_TYPE_MASK
        if fde_type == DEFAULT:
            return None, self._default(info, words, words_at)
        if fde_type == FLEX:
            return self._flex(words, words_at, word)
        raise Refused(EFAULT, "__read_fre_datawords: FDE type neither default nor flexible", words_at - 1)

    def _default(self, info: int, words: tuple[int, ...], words_at: int) -> tuple[int, int, int, int, int, int]:
        """`__read_default_fre_datawords`: CFA, then RA unless fixed, then FP unless fixed, while words last."""
        cfa, left = words[0], len(words) - 1
        ra = self.ra_off
        if not ra and left:
            ra, left = words[len(words) - left], left - 1
        fp = self.fp_off
        if not fp and left:
            fp, left = words[len(words) - left], left - 1
        if left:
            raise Refused(EFAULT, "__read_default_fre_datawords: data words left over", words_at)
        reg = self.fp_reg if (info >> CFA_BASE[0]) & CFA_BASE[1] == Sframe.BaseReg.fp else self.sp_reg
        return reg << 3 | 1, cfa, 2 if ra else 0, ra, 2 if fp else 0, fp

    def _flex(
        self, words: tuple[int, ...], words_at: int, word: int
    ) -> tuple[tuple[str, str] | None, tuple[int, int, int, int, int, int] | None]:
        """`__read_flex_fde_fre_datawords`: (control, offset) for the CFA, then RA and FP pairs or padding."""
        count = len(words)
        if count < 2:
            raise Refused(EFAULT, "__read_flex_fde_fre_datawords: dataword_count < 2", words_at)
        mask = (1 << (8 * word)) - 1
        unsigned = [w & mask for w in words]
        cfa_ctl, cfa_off = unsigned[0], words[1]
        i, left = 2, count - 2
        ra_off = self.ra_off
        ra_ctl = 2 if ra_off else 0
        if left >= 2:
            ctl = unsigned[i]
            i, left = i + 1, left - 1
            if ctl:
                ra_ctl, ra_off = ctl, words[i]
                i, left = i + 1, left - 1
        fp_off = self.fp_off
        fp_ctl = 2 if fp_off else 0
        if left >= 2:
            ctl = unsigned[i]
            i, left = i + 1, left - 1
            if ctl:
                fp_ctl, fp_off = ctl, words[i]
                i, left = i + 1, left - 1
        if left:
            raise Refused(EFAULT, "__read_flex_fde_fre_datawords: data words left over", words_at)
        if not cfa_ctl & 1:
            return (EINVAL, "sframe_init_cfa_rule_data: CFA control word reg_p clear"), None
        return None, (cfa_ctl, cfa_off, ra_ctl, ra_off, fp_ctl, fp_off)


def _deref(ctl: int, text: str) -> str:
    return f"*({text})" if ctl & 2 else text


def _entity(ctl: int, offset: int) -> str:
    """`sframe_init_rule_data`: retained, or CFA (or a register) + offset, dereferenced or not."""
    if not ctl and not offset:
        return "retain"
    base = f"r{ctl >> 3}" if ctl & 1 else "cfa"
    return _deref(ctl, f"{base}{offset:+d}")


def register_section(
    data: bytes, address: int = 0, text: tuple[int, int] | None = None, arch: Arch | None = None
) -> Registered | Refused:
    """`sframe_read_header` and `sframe_validate_section`: the section as registered, or why not (`arch`: the
    machine whose kernel reads it; None: its ABI byte's, or where the header cannot tell, its magic's order)."""
    reader = _Reader(data, address, text, arch)
    refused = reader.header()
    if refused is not None and refused.offset >= len(data):
        # The field lies past a short section's end: say so, at the end.
        return Refused(refused.error, f"{refused.rule} (a header field past the section's end)", len(data))
    if refused is not None:
        return refused
    functions = []
    prev_ip = 0
    try:
        for i in range(reader.num_fdes):
            function = reader.fde(i)
            if function.address <= prev_ip:
                at = reader.fdes_start + i * FDE.size
                return Refused(EFAULT, "sframe_validate_section: FDE not sorted (func_addr <= prev_ip)", at)
            prev_ip = function.address
            at = function.rows_at
            pcmask = function.pcmask
            for _ in range(function.num_fres):
                row, size = reader.fre(function, at, pcmask)
                if function.rows and row.ip_off <= function.rows[-1].ip_off:
                    return Refused(EFAULT, "sframe_validate_section: FRE not sorted (ip_off <= prev ip_off)", at)
                function.rows.append(row)
                at += size
            functions.append(function)
    except Refused as refused:
        return refused
    return Registered(functions, reader.order, (reader.sp_reg, reader.fp_reg), reader.notes)


@dataclass(frozen=True)
class Lookup:
    """PCs in [start, end) whose `sframe_find_user` gives one outcome: a failure, or the same frame rules."""

    start: int
    end: int
    function: int
    error: str | None
    """None: the lookup succeeds."""
    rule: str
    """The failing check, named as in the kernel's code; or, for a success, the rules (`KernelRow.rules`)."""


def lookups(registered: Registered, successes: bool = True) -> list[Lookup]:
    """What `sframe_find_user` gives at every PC of every function, as ranges, in address order (with
    `successes` False, only where it fails)."""
    rules = registered.rules if successes else None
    out: list[Lookup] = []
    functions = registered.functions
    reach = 0
    """How far the functions before the one at hand cover."""
    for k, function in enumerate(functions):
        # __find_fde takes the last function starting at or before the PC (validation made their starts
        # increase): this one owns the PCs up to the next one's start, and fails those past its own end.
        owned_end = functions[k + 1].address if k + 1 < len(functions) else ADDRESS_MASK + 1
        end = function.address + function.size
        if end >= ADDRESS_MASK + 1:  # `func_addr + func_size` wraps (to 0 at 2^64): every PC is past it
            gap = "__find_fde: ip >= func_addr + func_size (the sum wraps past 2^64)"
            out.append(Lookup(function.address, owned_end, function.index, EINVAL, gap))
            reach = ADDRESS_MASK + 1
            continue
        if rules is not None or not function.clean:
            out += _find_fre(function, min(end, owned_end), rules, registered.notes)
        if reach > end and end < owned_end:  # an earlier, overlapping function's PCs land in this one's gap
            gap = "__find_fde: ip >= func_addr + func_size (a gap)"
            out.append(Lookup(end, min(reach, owned_end), function.index, EINVAL, gap))
        reach = max(reach, end)
    return _merge(out)


def lookup_failures(registered: Registered) -> list[LookupFailure]:
    """The PCs whose lookup fails (or divides by zero), and why."""
    return [
        LookupFailure(f.start, f.end, f.error, f.rule, f.function)
        for f in lookups(registered, successes=False)
        if f.error is not None
    ]


MAX_TILES = 4096
"""A PCMASK function's rows repeat every rep_size bytes: this many repeats are listed at most."""


def _find_fre(
    function: KernelFunction, end: int, rules: Callable[[KernelRow], str] | None, notes: list[str]
) -> list[Lookup]:
    """`__find_fre` over [function.address, end): by row, before the first row, or dividing by zero."""
    start, index = function.address, function.index
    if end <= start:
        return []
    if not function.pcmask:
        return [
            Lookup(start + lo, min(start + hi, end), index, error, rule)
            for lo, hi, error, rule in _row_spans(function, function.size, rules)
            if start + lo < end
        ]
    rep = function.rep_size
    if rep == 0:
        return [Lookup(start, end, index, CRASH, "__find_fre: ip_off %= rep_size divides by zero")]
    spans = _row_spans(function, rep, rules)
    if not spans:
        return []
    if len(spans) == 1 and spans[0][:2] == (0, rep):
        return [Lookup(start, end, index, spans[0][2], spans[0][3])]
    out = []
    for n, base in enumerate(range(start, end, rep)):
        if n == MAX_TILES:
            notes.append(f"fdes[{index}]: its PCMASK rows repeat every {rep} bytes; the first {n} blocks listed")
            break
        out += [
            Lookup(base + lo, min(base + hi, end), index, error, rule)
            for lo, hi, error, rule in spans
            if base + lo < end
        ]
    return out


def _row_spans(
    function: KernelFunction, limit: int, rules: Callable[[KernelRow], str] | None
) -> list[tuple[int, int, str | None, str]]:
    """[lo, hi) of ip_off in [0, limit) by the row the search stops at: none before the first row, else the
    row's failure or (with `rules`) the frame it gives."""
    rows = function.rows
    out: list[tuple[int, int, str | None, str]] = []
    first = rows[0].ip_off if rows else limit
    if first > 0:
        out.append((0, min(first, limit), EINVAL, "__find_fre: no FRE at or before ip_off"))
    for j, row in enumerate(rows):
        if row.ip_off >= limit or (row.failure is None and rules is None):
            continue
        hi = min(rows[j + 1].ip_off if j + 1 < len(rows) else limit, limit)
        out.append((row.ip_off, hi, *(row.failure or (None, rules(row)))))  # type: ignore[misc]
    return out


def _merge(found: list[Lookup]) -> list[Lookup]:
    """Sorted, and touching ranges with the same outcome made one."""
    out: list[Lookup] = []
    for f in sorted(found, key=lambda f: (f.start, f.end)):
        if out and out[-1].end >= f.start and (out[-1].error, out[-1].rule) == (f.error, f.rule):
            last = out[-1]
            out[-1] = Lookup(last.start, max(last.end, f.end), last.function, last.error, last.rule)
        else:
            out.append(f)
    return out


def judge(
    data: bytes, address: int = 0, text: tuple[int, int] | None = None, arch: Arch | None = None, name: str = "kernel"
) -> Verdict:
    """The kernel's verdict on a section at `address`; `text` is the executable range the loader registers
    with it (unknown: any address); `arch` the machine (None: the section's ABI byte's, said in a note)."""
    registered = register_section(data, address, text, arch)
    if isinstance(registered, Refused):
        return Verdict(name, False, registered.error, registered.rule, registered.offset, notes=[UNREGISTERED])
    failures = lookup_failures(registered)
    errors = {f.error for f in failures}
    after = [FALLBACK + (REMOVED if EFAULT in errors else "")] if errors - {CRASH} else []
    return Verdict(name, True, lookups=failures, notes=registered.notes + after)


UNREGISTERED = "the section is not registered: the kernel unwinds its text with frame pointers (as perf shows)"
FALLBACK = (
    "where a lookup fails, unwind_user_next_sframe returns -ENOENT and the unwinder falls back to frame "
    "pointers for that frame"
)
REMOVED = "; a lookup's -EFAULT also removes the section (sframe_remove_section): frame pointers from then on"


def text_range(doc: Document) -> tuple[int, int] | None:
    """The text the ELF loader registers with the section (binfmt_elf's executable PT_LOAD); None when the
    file says none (a raw section, an object file). Read from the program headers alone (no pyelftools:
    `sfview perf` asks it of every file a profile ran)."""
    if doc.image is None:
        return None
    segments = doc.image.segments
    return next(((s.vaddr, s.vaddr + s.memsz) for s in segments if s.type == PT_LOAD and s.flags & PF_X), None)


def judge_document(doc: Document, arch: str | None = None, name: str = "kernel") -> Verdict:
    """The verdict on an opened file's section, its executable segment as the text (`arch`: `Arch`'s value)."""
    return judge(doc.data, doc.address, text_range(doc), Arch(arch) if arch else None, name)


TITLE = f"the Linux kernel's SFrame reader ({SERIES})"
V14 = register(
    Profile(
        "kernel-v14",
        TITLE,
        lambda data, address: judge(data, address, name="kernel-v14"),
        lambda doc, arch: judge_document(doc, arch, "kernel-v14"),
    )
)
