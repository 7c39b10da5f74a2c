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
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from sfview import ADDRESS_MASK
from sfview.consumers import FailuresBound, LookupFailure, LookupFailures, Profile, Verdict, register
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
NEITHER = FLEX + 1
"""The FDE types past flexible: every revision reads their rows alike (a row with data words refused the
same way), so their rows are read once for all of them."""


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


class _Refusal(NamedTuple):
    """A refusal a row's reading ends in, held once for every row it ends: `late` when the row's start was
    read (it comes after the function's bound on the start), `delta` the offset it names past the row's."""

    late: bool
    error: str
    rule: str
    delta: int


GRANULE = 4
"""The offsets `_Rows` keeps one chain of nodes for: a row takes 2 bytes or more, so a chain holds a node or
two of each table reading there (4 bytes held for every 4 bytes of rows, not for every byte)."""


class _Rows:
    """The rows read, by FRE type and FDE type (a table), then section offset: one node a row, held as columns.

    A node is a row as read for one table: its offset alone (and the node of another table at the same
    offset); its start and its answer (its failure and frame, or the refusal its reading ends in) are
    read again from the section's bytes when asked for (`read`: the reader's, which keeps the answers of
    rows alike). The nodes one reading makes are a **batch**, consecutive in node number and offset; a
    batch's last node links to the row read next (`after`: a node already made, when it starts higher),
    so that each node begins a run of rows the validation would let pass, `depth` of them following.
    What a run needs beyond a node's offset is held a batch, not a row: the link, the depth of its last
    node, skip pointers (Myers' skew-binary jumps over batches: any row of a run reached in O(log)
    steps), the first failing row and the first row of another answer past the batch; within a batch,
    the nodes whose answer differs from the one before (`changes`) and those of them that fail (`fails`)
    are sorted lists, found as the rows are read. The row after a run's last (it does not read, or does
    not start higher) is not kept: read again if a function's rows start there."""

    def __init__(self, low: int, high: int, read: Callable[[int, int], tuple[int, int, object]]) -> None:
        self.low = low
        self.read = read
        """(start, size, answer) of the row at an offset, read for a table."""
        self.slot = array("i", [0]) * ((high - low) // GRANULE + 1)
        """The last node made at each `GRANULE` bytes of offsets from `low` to `high`, plus one (0: none)."""
        offsets = "I" if high < 1 << 32 else "Q"
        self.other, self.at = array("i"), array(offsets)
        """The node made before each in the same granule, plus one; each node's offset."""
        self.fails, self.changes = array("i"), array("i")
        self.first, self.table, self.after, self.end = array("i"), array("B"), array("i"), array(offsets)
        """Each batch's first node, table, the node its last links to (-1: none), the offset past its last."""
        self.low_depth, self.up, self.jump, self.level = array("i"), array("i"), array("i"), array("i")
        """Each batch's last node's depth, the batch it links to, its skip pointer, and how many batches
        its run goes through after it."""
        self.fail_after, self.differs_after = array("i"), array("i")
        """The first failing node, and the first of another answer than the batch's last, past the batch."""
        self._batch_first = 0
        self._last: object = None
        """The answer of the node made last."""

    def batch(self, node: int) -> int:
        """The batch `node` was made in."""
        return bisect_right(self.first, node) - 1

    def last(self, batch: int) -> int:
        """The last node of `batch`."""
        return self.first[batch + 1] - 1 if batch + 1 < len(self.first) else len(self.at) - 1

    def find(self, table: int, at: int) -> int:
        """The node at `at` in `table`, or -1 (among the batches closed)."""
        node = self.slot[(at - self.low) // GRANULE] - 1
        while node >= 0 and (self.at[node] != at or self.table[self.batch(node)] != table):
            node = self.other[node] - 1
        return node

    def add(self, at: int, answer: object) -> int:
        """A new node at `at`, whose row gives `answer`, in the batch being read (`close` ends it)."""
        node = len(self.at)
        if node > self._batch_first and answer != self._last:
            self.changes.append(node)
        if (node == self._batch_first or answer != self._last) and _fails(answer):
            self.fails.append(node)
        self._last = answer
        granule = (at - self.low) // GRANULE
        self.other.append(self.slot[granule])
        self.slot[granule] = node + 1
        self.at.append(at)
        return node

    def close(self, table: int, end: int, after: int) -> None:
        """The nodes made since the last `close` are a batch of `table` whose last ends at offset `end`;
        `after` (a node, or -1) continues its run if it is a row starting higher than the last."""
        first, last, batch = self._batch_first, len(self.at) - 1, len(self.first)
        self.first.append(first)
        self.table.append(table)
        self.end.append(end)
        self._batch_first = last + 1
        if after >= 0:
            ip, _, answer = self.entry(after)
            if isinstance(answer, _Refusal) or ip <= self.entry(last)[0]:
                after = -1
        self.after.append(after)
        if after < 0:
            self.low_depth.append(0)
            self.up.append(-1)
            self.jump.append(batch)
            self.level.append(0)
            self.fail_after.append(-1)
            self.differs_after.append(-1)
            return
        up = self.batch(after)
        jump, level = self.jump, self.level
        skip = jump[up]
        self.low_depth.append(self.depth(after) + 1)
        self.up.append(up)
        self.jump.append(jump[skip] if level[up] - level[skip] == level[skip] - level[jump[skip]] else up)
        self.level.append(level[up] + 1)
        self.fail_after.append(self.nextfail(after))
        self.differs_after.append(after if self.entry(after)[2] != self._last else self.differs(after))

    def entry(self, node: int) -> tuple[int, int, object]:
        """(start, size, answer) of `node`'s row, read again."""
        return self.read(self.table[self.batch(node)], self.at[node])

    def ip(self, node: int) -> int:
        """The start of `node`'s row."""
        return self.entry(node)[0]

    def refusal(self, node: int) -> _Refusal | None:
        """The refusal `node`'s reading ends in (None: it is a row)."""
        answer = self.entry(node)[2]
        return answer if isinstance(answer, _Refusal) else None

    def refused(self, node: int) -> Refused:
        """The refusal `node`'s reading ends in, at its offset."""
        answer = self.refusal(node)
        assert answer is not None
        return Refused(answer.error, answer.rule, self.at[node] + answer.delta)

    def row(self, node: int) -> KernelRow:
        """The row as its reader's `row` made it."""
        ip, _, answer = self.entry(node)
        assert not isinstance(answer, _Refusal)
        kind, rest = answer  # type: ignore[misc]
        return kind(ip, self.at[node], *rest)  # type: ignore[no-any-return]

    def depth(self, node: int) -> int:
        """How many rows of `node`'s run follow it."""
        batch = self.batch(node)
        return self.low_depth[batch] + self.last(batch) - node

    def parent(self, node: int) -> int:
        """The next row of `node`'s run, or -1."""
        batch = self.batch(node)
        return node + 1 if node < self.last(batch) else self.after[batch]

    def nextfail(self, node: int) -> int:
        """The first row from `node` to its run's end whose lookups fail, or -1 (past a row that does not
        fail, the first that does gives another answer: one of `fails`)."""
        if _fails(self.entry(node)[2]):
            return node
        batch, fails = self.batch(node), self.fails
        k = bisect_right(fails, node)
        return fails[k] if k < len(fails) and fails[k] <= self.last(batch) else self.fail_after[batch]

    def differs(self, node: int) -> int:
        """The first row of `node`'s run giving another answer than `node`, or -1."""
        batch, changes = self.batch(node), self.changes
        k = bisect_right(changes, node)
        return changes[k] if k < len(changes) and changes[k] <= self.last(batch) else self.differs_after[batch]

    def ancestor(self, node: int, steps: int) -> int:
        """The row `steps` rows further along `node`'s run (at most its depth)."""
        target = self.depth(node) - steps
        batch, low, jump = self.batch(node), self.low_depth, self.jump
        while low[batch] > target:  # the first batch of the run holding a row of depth `target`
            skip = jump[batch]
            batch = skip if low[skip] > target else self.up[batch]
        return self.last(batch) - (target - low[batch])


def _fails(answer: object) -> bool:
    """Whether a row giving `answer` (not a refusal) fails at lookup."""
    return not isinstance(answer, _Refusal) and answer[1][0] is not None  # type: ignore[index]


class RowRun:
    """A function's `count` rows, the first at node `first`: the validation let each pass, so they are the
    first `count` rows of `first`'s run, shared with every function whose rows are a part of the same run
    (read once however many functions read them)."""

    def __init__(self, rows: _Rows | None, first: int, count: int) -> None:
        self._rows = rows
        self._first = first
        self._count = count if rows is not None and first >= 0 else 0

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> KernelRow:
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        assert self._rows is not None
        return self._rows.row(self._rows.ancestor(self._first, index))

    def __iter__(self) -> Iterator[KernelRow]:
        rows, node = self._rows, self._first
        for _ in range(self._count):
            assert rows is not None
            yield rows.row(node)
            node = rows.parent(node)

    def failing(self) -> bool:
        """Whether any of the rows fails at lookup."""
        rows = self._rows
        if rows is None or not self._count:
            return False
        failing = rows.nextfail(self._first)
        return failing >= 0 and rows.depth(failing) > rows.depth(self._first) - self._count

    def below(self, limit: int, failing: bool) -> Iterator[tuple[KernelRow, int | None]]:
        """(row, the start of the next row giving another answer, or None) for the rows starting below
        `limit`, in order, rows alike after one skipped; with `failing` only those whose lookups fail
        (found by skipping the others)."""
        rows = self._rows
        if rows is None or not self._count:
            return
        depth, ip = rows.depth, rows.ip
        last_depth = depth(self._first) - self._count  # rows of a depth above it are this function's
        node = rows.nextfail(self._first) if failing else self._first
        while node >= 0 and depth(node) > last_depth and ip(node) < limit:
            after = rows.differs(node)
            inside = after >= 0 and depth(after) > last_depth
            yield rows.row(node), (ip(after) if inside else None)
            node = (rows.nextfail(after) if failing else after) if inside else -1


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
    rows: RowRun = field(default_factory=lambda: RowRun(None, -1, 0))

    @property
    def pcmask(self) -> bool:
        return (self.info >> PC_TYPE[0]) & PC_TYPE[1] == PCMASK

    @property
    def clean(self) -> bool:
        """Every PC of it finds a row that succeeds (PCINC: a row at 0, none failing)."""
        rows = self.rows
        return not self.pcmask and bool(rows) and rows[0].ip_off == 0 and not rows.failing()


class Functions(Sequence[KernelFunction]):
    """The functions the validation read, in the FDE index's order, held as columns (each
    `KernelFunction` made when asked for): a section of many functions costs bytes a function."""

    def __init__(self, rows: _Rows | None) -> None:
        self.rows = rows
        self.addresses, self.sizes, self.rows_at = array("Q"), array("I"), array(rows.at.typecode if rows else "Q")
        self.info, self.num_fres, self.first = array("H"), array("H"), array("i")
        """info | info2 << 8; count of rows; the first row's node (-1: none)."""
        self.reps = array("B")

    def append(self, function: KernelFunction) -> None:
        self.addresses.append(function.address)
        self.sizes.append(function.size)
        self.rows_at.append(function.rows_at)
        self.info.append(function.info | function.info2 << 8)
        self.reps.append(function.rep_size)
        self.num_fres.append(len(function.rows))
        self.first.append(function.rows._first)

    def __len__(self) -> int:
        return len(self.addresses)

    def __getitem__(self, index: int) -> KernelFunction:  # type: ignore[override]
        if index < 0:
            index += len(self)
        info, count = self.info[index], self.num_fres[index]
        function = KernelFunction(
            index,
            self.addresses[index],
            self.sizes[index],
            info & 0xFF,
            info >> 8,
            self.reps[index],
            count,
            self.rows_at[index],
        )
        function.rows = RowRun(self.rows, self.first[index], count)
        return function

    def __iter__(self) -> Iterator[KernelFunction]:
        return map(self.__getitem__, range(len(self)))


@dataclass
class Registered:
    """A section the kernel took: its functions in the FDE index's order, as the validation read them."""

    functions: Functions
    byte_order: str
    regs: tuple[int, int]
    """The kernel's SFRAME_REG_SP and SFRAME_REG_FP."""
    size: int
    """The section's size in bytes (what bounds the answers listed)."""
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


ALIKE_KEPT = 4096
"""The most distinct rows whose answers `_Reader._read` keeps (rows alike share one)."""


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
        self.store: _Rows | None = None
        """The rows read (once the header has passed)."""
        self._alike: dict[tuple[int, bytes], tuple[int, object]] = {}
        """What rows read give, by table and the bytes after the start (`_read`)."""

    SORTED_REQUIRED = True
    """Whether `sframe_read_header` refuses a section without `SFRAME_F_FDE_SORTED` (every revision but the
    arm64 module variant, which sorts the FDEs itself)."""
    MACHINE_SAID = "as --arch says"
    """Why the machine given reads the section (the note after `read by ...`)."""

    def field(self, fmt: str, offset: int) -> int:
        return struct.unpack_from(self.order + fmt, self.data, offset)[0]

    def header(self) -> Refused | None:
        """`sframe_read_header`: None when it passes (and then the section's bounds are set)."""
        # copy_from_user reads a whole header; past a short section's end it reads what follows (taken as
        # zeros), and then header_end >= sframe_end refuses it if nothing before did.
        if len(self.data) < HEADER_END:
            self.data = self.data + bytes(HEADER_END - len(self.data))
        data = self.data
        # The kernel reads in its own byte order: the machine's given, else the one the magic reads right in.
        given = MACHINES[self.arch] if self.arch is not None else None
        self.order = given.order if given else "<" if struct.unpack_from("<H", data)[0] == MAGIC else ">"
        pre = layout.PREAMBLE.fields
        if self.field("H", pre["magic"][0]) != MAGIC:
            return Refused(EINVAL, "sframe_read_header: preamble.magic != SFRAME_MAGIC", pre["magic"][0])
        if self.field("B", pre["version"][0]) != V3:
            return Refused(EINVAL, "sframe_read_header: preamble.version != SFRAME_VERSION_3", pre["version"][0])
        flags = self.field("B", pre["flags"][0])
        if self.SORTED_REQUIRED and not flags & SORTED:
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
        self.store = _Rows(self.fres_start, self.fres_end, self._read)
        self.ra_off = hdr["cfa_fixed_ra_offset"]
        self.fp_off = hdr["cfa_fixed_fp_offset"]
        # The kernel's SFRAME_REG_SP/FP are its machine's: the one given, else assumed from the ABI byte.
        machine = given or MACHINES[BY_ABI.get(hdr["abi_arch"], Arch.ARM64)]
        self.sp_reg, self.fp_reg = machine.sp, machine.fp
        said = (
            self.MACHINE_SAID
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

    FDE_UNSORTED = (EFAULT, "sframe_validate_section: FDE not sorted (func_addr <= prev_ip)")
    FRE_UNSORTED = (EFAULT, "sframe_validate_section: FRE not sorted (ip_off <= prev ip_off)")
    """`sframe_validate_section`'s own refusals: this revision's error, and the check's name."""

    BAD_ROW = EFAULT
    """`__read_fre`'s error for an FRE type or a data word size past 2 (a bound past the rows: `-EFAULT`
    in every revision)."""

    def head(self, fre_type: int, at: int) -> tuple[int, int]:
        """`__read_fre` up to the row's start: (the start address's size, the start); raises Refused."""
        if fre_type not in START_ADDR_SIZES:
            raise Refused(self.BAD_ROW, "__read_fre: FRE type > 2 (no address size)", at)
        addr_size = START_ADDR_SIZES[fre_type]
        if at + addr_size + 1 > self.fres_end:
            raise Refused(EFAULT, "__read_fre: fre_addr + addr_size + 1 > fres_end", at)
        return addr_size, self.field(layout.FRE_START_ADDR[fre_type], at)

    def bound(self, function: KernelFunction, ip_off: int, at: int) -> Refused | None:
        """`__read_fre`'s check of the row's start against its function."""
        if not function.pcmask and ip_off > function.size:
            return Refused(EFAULT, "__read_fre: ip_off > func_size", at)
        return None

    def extent(self, at: int, addr_size: int) -> tuple[int, int, int]:
        """`__read_fre` after the start: (info byte, data word size kind, count) of a row whose words lie
        before `fres_end`; raises Refused."""
        info = self.data[at + addr_size]
        count = (info >> WORD_COUNT[0]) & WORD_COUNT[1]
        size_kind = (info >> WORD_SIZE[0]) & WORD_SIZE[1]
        if size_kind not in WORD_SIZES:
            raise Refused(self.BAD_ROW, "__read_fre: data word size > 2", at + addr_size)
        if at + addr_size + 1 + count * WORD_SIZES[size_kind] > self.fres_end:
            raise Refused(EFAULT, "__read_fre: data words past fres_end", at + addr_size)
        return info, size_kind, count

    def tail(self, fde_type: int, at: int, addr_size: int, ip_off: int, extent: tuple[int, int, int]) -> KernelRow:
        """The data words read (`extent`'s), then `__read_fre_datawords`: the row (what it reads of the
        function: its FDE type)."""
        info, size_kind, count = extent
        words_at = at + addr_size + 1
        words = struct.unpack_from(f"{self.order}{count}{layout.FRE_OFFSET[size_kind]}", self.data, words_at)
        return self.row(fde_type, ip_off, at, info, words, words_at, WORD_SIZES[size_kind])

    def row(
        self,
        fde_type: int,
        ip_off: int,
        at: int,
        info: int,
        words: tuple[int, ...],
        words_at: int,
        word: int,
    ) -> KernelRow:
        """`__read_fre_datawords` on a row read whole: the frame, or the lookup's failure."""
        failure, frame = self._datawords(fde_type, info, words, words_at, word)
        return KernelRow(ip_off, at, failure, frame)

    def rows(self, function: KernelFunction) -> RowRun:
        """`sframe_validate_section`'s loop over a function's rows: each read (`head`, `bound`, `tail`) and
        its start above the one before; raises the first refusal. Each row is read once for all functions
        (`_Rows`): functions whose rows overlap cost no more than one reading."""
        count = function.num_fres
        if not count:
            return RowRun(None, -1, 0)
        store = self.store
        assert store is not None
        first = self._node(function, function.rows_at)
        refusal = store.refusal(first)
        if refusal is not None:
            late = self.bound(function, store.ip(first), store.at[first]) if refusal.late else None
            raise late or store.refused(first)
        inside = min(count, store.depth(first) + 1)  # rows that read well, in increasing order
        last = store.ancestor(first, inside - 1)
        if self.bound(function, store.ip(last), store.at[last]) is not None:  # starts increase: the first out
            low, high = 0, inside - 1
            while low < high:
                mid = (low + high) // 2
                node = store.ancestor(first, mid)
                inbound = self.bound(function, store.ip(node), store.at[node]) is None
                low, high = (mid + 1, high) if inbound else (low, mid)
            node = store.ancestor(first, low)
            raise self.bound(function, store.ip(node), store.at[node])  # type: ignore[misc]
        if count > inside:  # the row ending the run
            node = self._node(function, store.end[store.batch(last)])  # (a run's last is its batch's)
            refusal = store.refusal(node)
            if refusal is not None and not refusal.late:
                raise store.refused(node)
            refused = self.bound(function, store.ip(node), store.at[node]) or (refusal and store.refused(node))
            if refused is not None:
                raise refused
            raise Refused(*self.FRE_UNSORTED, store.at[node])
        return RowRun(store, first, count)

    def _node(self, function: KernelFunction, at: int) -> int:
        """The row at `at` as `function`'s FRE type and FDE type read it, with its run (`_Rows`)."""
        fre_type = (function.info >> FRE_TYPE[0]) & FRE_TYPE[1]
        table = fre_type << 4 | min(function.info2 & FDE_TYPE_MASK, NEITHER)
        store = self.store
        assert store is not None
        known = store.find(table, at)
        if known >= 0:
            return known
        first = len(store.at)  # the nodes read here are made one after another
        pos, after, end, last_ip = at, -1, at, -1
        while True:  # read forward while the run goes on, to a row known
            ip, length, answer = self._read(table, pos)
            if pos > at and (isinstance(answer, _Refusal) or ip <= last_ip):
                break  # the run's end: that row is not kept
            store.add(pos, answer)
            end, last_ip = pos + length, ip
            if isinstance(answer, _Refusal):
                break
            pos = end
            after = store.find(table, pos)
            if after >= 0:
                break
        store.close(table, end, after)
        return first

    def _read(self, table: int, at: int) -> tuple[int, int, object]:
        """(start, size, what it gives) of the row at `at` read for `table` (FRE type << 4 | FDE type):
        what it gives is the row's class and its fields after the start, or the refusal its reading ends
        in (`_Refusal`). Rows alike (the same bytes after the start, read for the same table) give one
        answer: the first `ALIKE_KEPT` answers are kept by those bytes, not worked out again for each
        row (the store reads its rows again when asked for them)."""
        fre_type, fde_type = table >> 4, table & FDE_TYPE_MASK
        try:
            addr_size, ip = self.head(fre_type, at)
        except Refused as refused:
            return 0, 0, _Refusal(False, refused.error, refused.rule, refused.offset - at)
        try:
            extent = self.extent(at, addr_size)
        except Refused as refused:
            return ip, 0, _Refusal(True, refused.error, refused.rule, refused.offset - at)
        length = addr_size + 1 + extent[2] * WORD_SIZES[extent[1]]
        key = (table, self.data[at + addr_size : at + length])
        known = self._alike.get(key)
        if known is None:
            try:
                row = self.tail(fde_type, at, addr_size, ip, extent)
                known = length, (type(row), tuple(row[2:]))
            except Refused as refused:
                known = 0, _Refusal(True, refused.error, refused.rule, refused.offset - at)
            if len(self._alike) < ALIKE_KEPT:
                self._alike[key] = known
        return ip, *known

    def _datawords(
        self, fde_type: int, info: int, words: tuple[int, ...], words_at: int, word: int
    ) -> tuple[tuple[str, str] | None, tuple[int, int, int, int, int, int] | None]:
        """`__read_fre_datawords`: the frame, or the lookup's failure for a row the validation lets pass
        (`fde_type`: the function's, `info2 & SFRAME_V3_FDE_TYPE_MASK`)."""
        if not words:
            # cfa_ctl = 0: sframe_init_cfa_rule_data finds reg_p clear.
            return (EINVAL, "__read_fre_datawords: no data words (outermost), CFA reg_p clear"), None
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
    functions = validate(reader)
    if isinstance(functions, Refused):
        return functions
    return Registered(functions, reader.order, (reader.sp_reg, reader.fp_reg), reader.size, reader.notes)


def validate(reader: _Reader) -> Functions | Refused:
    """`sframe_read_header`, then `sframe_validate_section`: every FDE read in order, each starting above
    the one before, and each one's rows (`_Reader.rows`); the first refusal, with the reader's revision's
    error (a header field past a short section's end said so, at the end)."""
    refused = reader.header()
    if refused is not None and refused.offset >= reader.size:
        return Refused(refused.error, f"{refused.rule} (a header field past the section's end)", reader.size)
    if refused is not None:
        return refused
    functions = Functions(reader.store)
    prev_ip = 0
    try:
        for i in range(reader.num_fdes):
            function = reader.fde(i)
            if function.address <= prev_ip:
                return Refused(*reader.FDE_UNSORTED, reader.fdes_start + i * FDE.size)
            prev_ip = function.address
            function.rows = reader.rows(function)
            functions.append(function)
    except Refused as refused:
        return refused
    return functions


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


SPANS_PER_BYTE = 1
"""The most ranges a verdict looks at per byte of the section, past `8 * MAX_TILES` (functions sharing
rows, PCMASK functions of gigabytes: each repeats answers the bytes hold once)."""


class _Bound(Exception):
    """The answers' bound is met: no lookup at `pc` or after is judged."""

    def __init__(self, pc: int, reason: str) -> None:
        super().__init__(reason)
        self.pc, self.reason = pc, reason


def lookups(registered: Registered, successes: bool = True) -> list[Lookup]:
    """What `sframe_find_user` gives at every PC of every function, as ranges, in address order (with
    `successes` False, only where it fails); past the bound on ranges (`SPANS_PER_BYTE`), a note in
    `registered.notes` says where the judging stopped."""
    return list(each_lookup(registered, successes))


def each_lookup(registered: Registered, successes: bool = True) -> Iterator[Lookup]:
    """`lookups`, one range at a time (touching ranges of one outcome made one)."""
    pending: Lookup | None = None
    spans_bound = SPANS_PER_BYTE * registered.size + 8 * MAX_TILES
    try:
        for spans, found in enumerate(_ranges(registered, successes)):
            if spans >= spans_bound:
                raise _Bound(found.start, f"more than {spans_bound} ranges looked at ({SPANS_PER_BYTE} a byte)")
            last = pending
            if last is not None and last.end >= found.start and (last.error, last.rule) == (found.error, found.rule):
                pending = Lookup(last.start, max(last.end, found.end), last.function, last.error, last.rule)
                continue
            if pending is not None:
                yield pending
            pending = found
    except _Bound as stop:
        registered.notes.append(f"lookups at {stop.pc:#x} and past not judged: {stop.reason}")
    if pending is not None:
        yield pending


def _ranges(registered: Registered, successes: bool) -> Iterator[Lookup]:
    """The ranges `lookups` merges, in address order: each function's own PCs (its starts increase)."""
    rules = registered.rules if successes else None
    functions = registered.functions
    starts = functions.addresses
    reach = 0
    """How far the functions before the one at hand cover."""
    for k, function in enumerate(functions):
        # __find_fde takes the last function starting at or before the PC (validation made their starts
        # increase): this one owns the PCs up to the next one's start, and fails those past its own end.
        owned_end = starts[k + 1] if k + 1 < len(starts) else ADDRESS_MASK + 1
        end = function.address + function.size
        if end >= ADDRESS_MASK + 1:  # `func_addr + func_size` wraps (to 0 at 2^64): every PC is past it
            gap = "__find_fde: ip >= func_addr + func_size (the sum wraps past 2^64)"
            yield Lookup(function.address, owned_end, function.index, EINVAL, gap)
            reach = ADDRESS_MASK + 1
            continue
        if rules is not None or not function.clean:
            yield from _find_fre(function, min(end, owned_end), rules, registered.notes)
        if reach > end and end < owned_end:  # an earlier, overlapping function's PCs land in this one's gap
            gap = "__find_fde: ip >= func_addr + func_size (a gap)"
            yield Lookup(end, min(reach, owned_end), function.index, EINVAL, gap)
        reach = max(reach, end)


def lookup_failures(
    registered: Registered, each: Callable[[Registered, bool], Iterator[Lookup]] = each_lookup
) -> LookupFailures:
    """The PCs whose lookup fails (or divides by zero), and why, as `each` revision's search gives them; past
    their bound (`LookupFailures`), a note in `registered.notes` says where the judging stopped."""
    failures = LookupFailures(registered.size)
    try:
        for f in each(registered, False):
            failures.add(LookupFailure(f.start, f.end, f.error, f.rule, f.function))  # type: ignore[arg-type]
    except FailuresBound as full:
        registered.notes.append(full.note)
    return failures


MAX_TILES = 4096
"""A PCMASK function's rows repeat every rep_size bytes: this many repeats are listed at most."""


def _find_fre(
    function: KernelFunction, end: int, rules: Callable[[KernelRow], str] | None, notes: list[str]
) -> Iterator[Lookup]:
    """`__find_fre` over [function.address, end): by row, before the first row, or dividing by zero."""
    start, index = function.address, function.index
    if end <= start:
        return
    if not function.pcmask:
        for lo, hi, error, rule in _row_spans(function, min(function.size, end - start), rules):
            if start + lo >= end:  # (rows past the PCs judged: never looked at, however many the function has)
                break
            yield Lookup(start + lo, min(start + hi, end), index, error, rule)
        return
    rep = function.rep_size
    if rep == 0:
        yield Lookup(start, end, index, CRASH, "__find_fre: ip_off %= rep_size divides by zero")
        return
    spans: list[tuple[int, int, str | None, str]] = []
    for span in _row_spans(function, rep, rules):  # touching spans of one outcome made one: tiled below
        if spans and spans[-1][1] == span[0] and spans[-1][2:] == span[2:]:
            spans[-1] = (spans[-1][0], *span[1:])
        else:
            spans.append(span)
    if not spans:
        return
    if len(spans) == 1 and spans[0][:2] == (0, rep):
        yield Lookup(start, end, index, spans[0][2], spans[0][3])
        return
    for n, base in enumerate(range(start, end, rep)):
        if n == MAX_TILES:
            notes.append(f"fdes[{index}]: its PCMASK rows repeat every {rep} bytes; the first {n} blocks listed")
            break
        for lo, hi, error, rule in spans:
            if base + lo >= end:
                break
            yield Lookup(base + lo, min(base + hi, end), index, error, rule)


def _row_spans(
    function: KernelFunction, limit: int, rules: Callable[[KernelRow], str] | None
) -> Iterator[tuple[int, int, str | None, str]]:
    """[lo, hi) of ip_off in [0, limit) by the row the search stops at: none before the first row, else the
    row's failure or (with `rules`) the frame it gives."""
    rows = function.rows
    first = rows[0].ip_off if rows else limit
    if first > 0:
        yield 0, min(first, limit), EINVAL, "__find_fre: no FRE at or before ip_off"
    for row, after in rows.below(limit, failing=rules is None):
        hi = min(after if after is not None else limit, limit)
        yield (row.ip_off, hi, *(row.failure or (None, rules(row))))  # type: ignore[misc]


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
