"""What glibc 2.43's `backtrace()` does with a section: taken or not, and at every PC the frame or the fallback.

glibc 2.42 and later, built with `--enable-sframe`, try SFrame first in
`backtrace()` (debug/backtrace.c): `__stacktrace_sframe` (sysdeps/generic/
sframe.c) finds the object's SFrame section, decodes it (`__sframe_decode`,
sframe-read.c), looks the PC up (`__sframe_find_fre`) and computes the caller's
frame from the row: CFA = SP or FP (the row's base register) + the CFA
offset, the return address at CFA + the RA offset, the caller's FP at CFA +
the FP offset (kept as it was where the row has none). Wherever a step fails
(the section refused, no row for the PC, a row without a CFA or RA offset)
it returns 0 and `backtrace()` unwinds with DWARF instead.

The reader is binutils' libsframe cut down and read in place: version 2
only (every section binutils 2.46 and later writes, version 3, is refused),
the FDEs right after the header and the rows right after the FDEs whatever
`sfh_fdeoff` and `sfh_freoff` say, an int32 PC, no byte-swapping walk (a
section in the other byte order is refused), and no bound but the section's
own counts: where it reads past the section's end, glibc reads whatever
follows it in memory (the tests' harness stops there with a fault; said here
as `crash`). On x86-64, where the lookup fails, glibc first checks whether
the PC is the signal trampoline's (`MD_DECODE_SIGNAL_FRAME`) or the FP is 0
(the outermost frame: the backtrace ends there): those read the code and
the registers, not the section, and are left to the caller.

glibc 2.44 (Debian's glibc-source 2.44-3) has the same sframe-read.c,
sframe.c, backtrace.c and uw-sigframe.h: this profile answers for it too.

tests/oracles/test_glibc.py compiles glibc's own sframe-read.c and sframe.c
around tests/glibc_harness.c and holds this model to it at every PC.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum

from sfview import ADDRESS_MASK
from sfview.consumers import FailuresBound, LookupFailure, LookupFailures, Profile, Verdict, register
from sfview.consumers.libsframe import (
    COUNTS,
    FIXED_HEADER,
    MAGIC,
    PCMASK,
    ROWS_KEPT,
    SIZES,
    WORDS_BYTES,
    Crash,
    Fde,
    FdeTable,
    Miss,
    _struct,
    bare,
    packed,
    relative,
)
from sfview.consumers.libsframe import FRE_TYPES as FRE_TYPE_OF
from sfview.consumers.libsframe import _int32 as int32
from sfview.consumers.libsframe_lookups import (
    ALL,
    KEPT,
    Budget,
    Periodic,
    Periodics,
    Replays,
    Walk,
    Walks,
    _distinct,
    row_bound,
    row_ref,
)
from sfview.consumers.libsframe_releases import FRAME_POINTER, PCREL, SORTED
from sfview.consumers.libsframe_verdict import RUNS_PER_BYTE, domains
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe.model.records import START_ADDR_SIZES

RELEASE = "2.43"
VERSION = 2
"""`sframe_header_sanity_check_p`: `sfp_version != SFRAME_VERSION_2` refuses."""
ALL_FLAGS = SORTED | FRAME_POINTER | PCREL
"""`SFRAME_V2_F_ALL_FLAGS`."""
END_OF_STACK = "_URC_END_OF_STACK (5)"
"""What every failing step returns (`__sframe_decode`, `__sframe_find_fre`, the getters)."""
FALLS_BACK = "falls back to DWARF"
REFUSED_NOTE = f"backtrace() {FALLS_BACK} for the whole trace whenever a frame's PC is in this object"
FDE_SIZE = layout.FDE[2].size
FDE_FIELDS = layout.FDE[2].fields
FIELD_RECORDS = {name: (offset, _struct("<" + char)) for name, (offset, char) in FDE_FIELDS.items()}
"""Each FDE field's offset and record, made once: `field` is asked millions of times on a large section."""
U32 = 0xFFFFFFFF
WORD = 1 << 32
INT32_WRAP = 1 << 31
SIGNED = {1: "b", 2: "h", 4: "i"}
AMD64 = int(Sframe.AbiArch.amd64_endian_little)


class Base(IntEnum):
    """`SFRAME_BASE_REG_FP` / `SFRAME_BASE_REG_SP`: the register the CFA is computed from."""

    FP = 0
    SP = 1


@dataclass(frozen=True)
class CallerFrame:
    """The caller's frame `__stacktrace_sframe` computes: CFA = base + cfa; RA at CFA + ra; FP at CFA + fp
    (None: the FP is kept)."""

    base: Base
    cfa: int
    ra: int
    fp: int | None


@dataclass(frozen=True)
class RowAnswer:
    """A PC whose lookup found a row: the row, the getters as the step calls them ((value, 0) or
    (0, 5): `_URC_END_OF_STACK`; None where the step stopped before), and the frame (None: falls back)."""

    start: int
    info: int
    cfa: tuple[int, int]
    ra: tuple[int, int] | None
    fp: tuple[int, int] | None
    frame: CallerFrame | None
    rule: str = ""
    """Where the step falls back (empty when it computes a frame)."""


Answer = RowAnswer | Miss | Crash


class Refusal(Exception):
    """`__sframe_decode` returns `_URC_END_OF_STACK`: `backtrace()` unwinds with DWARF."""

    def __init__(self, rule: str, offset: int) -> None:
        super().__init__(rule)
        self.rule = rule
        self.offset = offset


class Reader:
    """The section as `__sframe_decode` set it up: the header copied, the FDEs and rows read in place."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        magic = self._read(0, "H", "__sframe_decode: the magic")
        if magic != MAGIC:
            raise Refusal(f"__sframe_decode: magic {magic:#06x} (a section in the other byte order included)", 0)
        values = self._read(0, layout.PREAMBLE.format + layout.HEADER.format, "__sframe_decode: the header")
        _, self.version, self.flags, self.abi, self.fixed_fp, self.fixed_ra, aux, self.num_fdes, *rest = values
        fdeoff, freoff = rest[-2:]
        if self.version != VERSION:
            raise Refusal(f"sframe_header_sanity_check_p: version {self.version} (glibc 2.43 reads 2 only)", 2)
        if self.flags & ~ALL_FLAGS:
            raise Refusal(f"sframe_header_sanity_check_p: flags {self.flags:#x} outside {ALL_FLAGS:#x}", 3)
        if fdeoff > freoff:
            raise Refusal(f"sframe_header_sanity_check_p: sfh_fdeoff {fdeoff:#x} > sfh_freoff {freoff:#x}", 20)
        self.hdrsz = FIXED_HEADER + aux
        self.fres = self.hdrsz + int32(self.num_fdes * FDE_SIZE)  # `int fidx_size`
        self._rows: dict[tuple[int, int], tuple[int, int, int]] = {}
        self._table = self._whole()
        self._starts: Sequence[int] | None = None

    def _read(self, at: int, fmt: str, rule: str) -> tuple | int:
        record = _struct("<" + fmt)
        if at < 0 or at + record.size > len(self.data):
            raise Crash(f"{rule}: reads {record.size} bytes at {at:#x}, past the section's {len(self.data)} bytes")
        values = record.unpack_from(self.data, at)
        return values if len(values) > 1 else values[0]

    def read(self, at: int, char: str, rule: str) -> int:
        record = _struct("<" + char)
        if at < 0 or at + record.size > len(self.data):  # the crash, said by `_read`
            self._read(at, char, rule)
        return record.unpack_from(self.data, at)[0]  # type: ignore[no-any-return]

    def field(self, index: int, name: str) -> int:
        """One field of FDE `index`, read in place (past the section: a crash)."""
        offset, record = FIELD_RECORDS[name]
        at = self.hdrsz + index * FDE_SIZE + offset
        if at >= 0 and at + record.size <= len(self.data):
            return record.unpack_from(self.data, at)[0]  # type: ignore[no-any-return]
        return self.read(at, FDE_FIELDS[name][1], f"__sframe_find_fre: FDE {index}")  # the crash, said

    def start(self, index: int) -> int:
        """`sframe_decoder_get_secrel_func_start_addr`: the start as an int32, for PCREL from the field's
        offset as if the FDEs followed the header."""
        start = self.field(index, "func_start")
        if self.flags & PCREL:
            start += int32((self.hdrsz + index * FDE_SIZE) & U32)
        return int32(start)

    def _whole(self) -> FdeTable:
        """The FDEs the section holds whole: the functions judged where sfview cannot read the section
        (`_table`, `start` and `fde` are what `libsframe_verdict.domains` asks of a decoder)."""
        count = min(self.num_fdes, max(len(self.data) - self.hdrsz, 0) // FDE_SIZE)
        names = ("func_start", "func_size", "func_start_fre_off", "func_num_fres", "func_info")
        table = FdeTable()
        for i in range(count):
            start, size, fre_off, num_fres, info = (self.field(i, name) for name in names)
            table.append(start, size, fre_off, num_fres, info, 0, self.field(i, "func_rep_size"))
        return table

    def fde(self, index: int) -> Fde:
        return self._table[index]

    def _sorted(self) -> bool:
        """Whether the section holds every FDE whole, their starts strictly increase and none runs into the
        next: then the binary search finds the one FDE holding a PC, as a bisection does (the tests hold the
        shortcut to glibc on sorted and unsorted sections alike)."""
        if self._starts is None:
            whole = len(self._table) == self.num_fdes
            starts = packed(self.start(i) for i in range(len(self._table))) if whole else packed(())
            sizes = self._table._sizes
            ordered = all(
                starts[i] < starts[i + 1] and starts[i] + sizes[i] <= starts[i + 1] for i in range(len(starts) - 1)
            )
            self._starts = starts if ordered else packed(())
        return bool(self._starts)

    def search(self, pc: int) -> int:
        """`sframe_get_funcdesc_with_addr_internal`: the FDE holding the int32 `pc`; raises Miss or Crash."""
        if self.num_fdes == 0:
            raise Miss(END_OF_STACK, "sframe_get_funcdesc_with_addr_internal: no FDE")
        if not self.flags & SORTED:
            raise Miss(END_OF_STACK, "sframe_get_funcdesc_with_addr_internal: SFRAME_F_FDE_SORTED is not set")
        if self._sorted():
            index = bisect.bisect_right(self._starts, pc) - 1
            if index >= 0 and pc - self._starts[index] < self._table._sizes[index]:
                return index
            raise Miss(END_OF_STACK, "sframe_get_funcdesc_with_addr_internal: no FDE holds the PC")
        low, high = 0, int32(self.num_fdes - 1)
        while low <= high:
            mid = low + (high - low) // 2
            start = self.start(mid)
            if start <= pc and (pc - start) & U32 < self.field(mid, "func_size"):
                return mid
            low, high = (mid + 1, high) if start < pc else (low, mid - 1)
        raise Miss(END_OF_STACK, "sframe_get_funcdesc_with_addr_internal: no FDE holds the PC")

    def breaks(self) -> Sequence[int]:
        """PCs modulo 2^32 where the search's comparisons may change: each start, the PC after it, its end
        (packed, without a set: a million FDEs hold one array of them)."""

        def each() -> Iterator[int]:
            for index in range(min(self.num_fdes, max(len(self.data) - self.hdrsz, 0) // FDE_SIZE + 1)):
                try:
                    start = self.start(index)
                    yield start % WORD
                    yield (start + 1) % WORD
                    yield (start + self.field(index, "func_size")) % WORD
                except Crash:
                    return
            yield INT32_WRAP

        return _distinct(each())

    def row(self, at: int, fre_type: int) -> tuple[int, int, int]:
        """(start, info, bytes) of the row at `at`: what `__sframe_find_fre` reads of it."""
        key = (at, fre_type)
        known = self._rows.get(key)
        if known is None:
            if len(self._rows) >= ROWS_KEPT:
                self._rows.clear()  # functions come in address order: those judged before are done with
            size = START_ADDR_SIZES[fre_type]
            start = self.read(at, layout.FRE_START_ADDR[fre_type], "__sframe_find_fre: a row's start")
            info = self.read(at + size, "B", "__sframe_find_fre: a row's info byte")
            known = self._rows[key] = (start, info, size + 1 + WORDS_BYTES[info])
        return known

    def offset(self, info: int, at: int, index: int, what: str) -> tuple[int, int]:
        """`sframe_get_fre_offset`: (value, 0), or (0, 5) where the row fails the sanity check or lacks it."""
        if SIZES[info] not in (0, 1, 2) or COUNTS[info] > 3 or COUNTS[info] < index + 1:
            return 0, 5
        width = 1 << SIZES[info]
        return self.read(at + index * width, SIGNED[width], f"the step: the row's {what} offset"), 0

    def step(self, start: int, info: int, at: int) -> RowAnswer:
        """`__stacktrace_sframe` on a found row whose data words are at `at`: the getters in its order."""
        cfa = self.offset(info, at, 0, "CFA")
        if cfa[1]:
            return RowAnswer(start, info, cfa, None, None, None, "the row has no CFA offset (sframe_get_fre_offset)")
        ra = (self.fixed_ra, 0) if self.fixed_ra else self.offset(info, at, 1, "RA")
        if ra[1]:
            return RowAnswer(start, info, cfa, ra, None, None, "the row has no RA offset (__sframe_fre_get_ra_offset)")
        fp = (self.fixed_fp, 0) if self.fixed_fp else self.offset(info, at, 1 if self.fixed_ra else 2, "FP")
        frame = CallerFrame(Base(info & 1), cfa[0], ra[0], None if fp[1] else fp[0])
        return RowAnswer(start, info, cfa, ra, fp, frame)


Condition = tuple[int, int, Answer | int, bool]
"""As libsframe's walk gives it (`libsframe_lookups.Condition`): a row's answer as its reference (`row_ref`)."""


def _row_answer(reader: Reader, ref: int) -> Answer:
    """The step's answer on the row a `row_ref` names (the walk read it once already: read again)."""
    at, fre_type = ref >> 4, ref & 0xF
    start, row_info, _ = reader.row(at, fre_type)
    try:
        return reader.step(start, row_info, at + START_ADDR_SIZES[fre_type] + 1)
    except Crash as crash:
        return bare(crash)


def _walk(reader: Reader, index: int) -> Iterator[Condition]:
    """`__sframe_find_fre`'s walk over FDE `index`'s rows as intervals of the PC's offset into the function,
    in the order it tests them (a PCMASK row's interval is one block's)."""
    everywhere = -ALL, ALL
    try:
        info = reader.field(index, "func_info")
        fre_type, pcmask = FRE_TYPE_OF[info], PCMASK[info]
        at = reader.fres + reader.field(index, "func_start_fre_off")
        count = reader.field(index, "func_num_fres")
        size = reader.field(index, "func_size")
        rep = None  # sframe_fre_check_range_p reads it: only once a row's start is at or before the PC
        for i in range(count):
            if fre_type not in START_ADDR_SIZES:
                yield *everywhere, Miss(END_OF_STACK, f"__sframe_find_fre: FRE type {fre_type}"), False
                return
            start, _, esz = reader.row(at, fre_type)
            if i < count - 1:
                nxt = reader.read(at + esz, layout.FRE_START_ADDR[fre_type], "sframe_fre_get_end_ip_offset")
                end = (nxt - 1) & U32
            else:
                end = (size - 1) & U32
            yield -ALL, start, AFTER, False
            if pcmask and rep is None:
                rep = reader.field(index, "func_rep_size")
            if pcmask and rep == 0:
                yield *everywhere, Crash("sframe_fre_check_range_p: the offset modulo rep_size 0 (SIGFPE)"), False
                return
            yield start, end + 1, row_ref(at, fre_type), pcmask
            at += esz
    except Crash as crash:
        yield *everywhere, bare(crash), False


NO_ROW = Miss(END_OF_STACK, "__sframe_find_fre: no row of the function covers the PC")
AFTER = Miss(END_OF_STACK, "__sframe_find_fre: a row starts after the PC")
"""The answer of each row's test of its start: one object, not one per row walked."""


class Lookups:
    """The step's answer at every PC of spans of section-relative PCs, as runs, for one decoded section."""

    def __init__(self, reader: Reader, budget: int, rows: int) -> None:
        self.reader = reader
        self.budget = budget
        self.count = 0
        self._breaks = reader.breaks()
        self._walks: Walks[tuple[int, ...], Answer] = Walks(rows, functools.partial(_row_answer, reader))
        self._painted: dict[tuple[tuple[int, ...], int, int, bool], list[tuple[int, int, Answer]]] = {}
        """A function's runs by what its rows are judged by and its span of offsets (functions alike), merged."""
        self._replays: Replays[tuple[int, int, bool], tuple[int, int, Answer]] = Replays()
        self._periodics: Periodics[tuple[tuple[int, ...], bool], Answer] = Periodics()

    def _describe(self, index: int) -> tuple[int, ...]:
        """What FDE `index`'s rows are judged by (functions alike share their painting): its info byte, rows,
        size and rep_size; the index itself where the FDE is cut short."""
        try:
            names = ("func_info", "func_start_fre_off", "func_num_fres", "func_size", "func_rep_size")
            return tuple(self.reader.field(index, name) for name in names)
        except Crash:
            return (-1, index)

    def runs(self, low: int, high: int, frames_alike: bool = False) -> Iterator[tuple[int, int, Answer]]:
        """[low, high) (section-relative, before the int32 cut) as runs (first PC, end PC, answer; with
        `frames_alike`, adjacent answers computing a frame are one run: the caller counts them); a span
        asked for again answered again from `Replays`."""
        kept = self._replays.given((low, high, frames_alike), self.budget - self.count)
        if kept is not None:
            self.count += kept[1]
            yield from kept[0]
            return
        search = self._search_runs(low, high, frames_alike)
        yield from self._replays.replay((low, high, frames_alike), search, lambda: self.count)

    def _search_runs(self, low: int, high: int, frames_alike: bool) -> Iterator[tuple[int, int, Answer]]:
        """`runs`, searched. Each run counts against the bound (with `frames_alike`, each run painted, merged
        or not: the work is the runs painted)."""
        last: tuple[int, int, Answer] | None = None
        for a, b, answer in self._pieces(low, high, frames_alike):
            if last is not None and last[1] == a and _same(last[2], answer, frames_alike):
                if frames_alike:
                    self.count += 1
                    if self.count > self.budget:
                        raise Budget(last[0], f"more than {self.budget} runs")
                last = (last[0], b, last[2])
                continue
            if last is not None:
                yield last
            self.count += 1
            if self.count > self.budget:
                raise Budget(a, f"more than {self.budget} runs")
            last = (a, b, answer)
        if last is not None:
            yield last

    def _pieces(self, low: int, high: int, frames_alike: bool) -> Iterator[tuple[int, int, Answer]]:
        points = [low]
        base = low - low % WORD
        while base < high:
            breaks = self._breaks
            first, last = bisect.bisect_right(breaks, low - base), bisect.bisect_left(breaks, high - base)
            points += [base + r for r in breaks[first:last]]
            base += WORD
        points.append(high)
        for a, b in itertools.pairwise(points):
            pc = int32(a)
            try:
                index = self.reader.search(pc)
            except (Miss, Crash) as exc:
                yield a, b, bare(exc)
                continue
            offset = (pc - self.reader.start(index)) & U32
            yield from self._inside(index, a, b, offset, frames_alike)

    def _inside(self, index: int, a: int, b: int, offset: int, frames_alike: bool) -> Iterator[tuple[int, int, Answer]]:
        """PCs [a, b) the search sends to FDE `index`, the first at `offset` into it."""
        key = self._describe(index)
        high = offset + b - a
        pcmask = key[0] >= 0 and PCMASK[key[0]]  # a PCMASK function's keys repeat: its rows walked to the end
        walk = self._walks.walk(key, lambda: _walk(self.reader, index), ALL if pcmask else high, a)
        rep = self.reader.field(index, "func_rep_size") if pcmask and walk.blocks else 0
        if rep:
            yield from self._periodic(key, walk, rep, a, offset, high, frames_alike)
            return
        painted: Iterable[tuple[int, int, Answer]] | None = self._painted.get((key, offset, high, frames_alike))
        if painted is None:
            painted = _merged(walk.paint(NO_ROW, offset, high), frames_alike)
            if not walk.stepwise(high):  # painted at the cost of the runs given: not kept
                if len(self._painted) >= KEPT:
                    del self._painted[next(iter(self._painted))]
                painted = self._painted[key, offset, high, frames_alike] = list(painted)
        for k_low, k_high, answer in painted:
            yield a + k_low - offset, a + k_high - offset, answer

    def _periodic(
        self, key: tuple[int, ...], walk: Walk[Answer], rep: int, a: int, offset: int, high: int, frames_alike: bool
    ) -> Iterator[tuple[int, int, Answer]]:
        """A PCMASK function's offsets [offset, high) from PC `a` on, by its `Periodic` (kept per walk:
        functions alike share it); the runs painted to make each count against the bound with it."""
        same = functools.partial(_same, frames_alike=frames_alike)
        periodic = self._periodics.get((key, frames_alike), walk.conds, lambda: Periodic(walk.conds, rep, NO_ROW, same))
        steps = periodic.steps
        for k_low, k_high, answer in periodic.span(offset, high):
            self.count += max(periodic.steps - steps - 1, 0)  # merged into this run (itself counted by the caller)
            steps = periodic.steps
            if self.count > self.budget:
                raise Budget(a + k_low - offset, f"more than {self.budget} runs")
            yield a + k_low - offset, a + k_high - offset, answer


def _merged(runs: Iterable[tuple[int, int, Answer]], frames_alike: bool) -> Iterator[tuple[int, int, Answer]]:
    """`runs`, adjacent runs of one answer (`_same`) merged."""
    last: tuple[int, int, Answer] | None = None
    for run in runs:
        if last is not None and _same(last[2], run[2], frames_alike):
            last = (last[0], run[1], last[2])
            continue
        if last is not None:
            yield last
        last = run
    if last is not None:
        yield last


def _same(a: Answer, b: Answer, frames_alike: bool = False) -> bool:
    """Whether two answers are one: equal, or (`frames_alike`) both computing a frame."""
    if isinstance(a, RowAnswer) or isinstance(b, RowAnswer):
        if frames_alike and isinstance(a, RowAnswer) and isinstance(b, RowAnswer):
            return a == b or (a.frame is not None and b.frame is not None)
        return a == b
    return type(a) is type(b) and a.rule == b.rule


def judge(data: bytes, address: int = 0) -> Verdict:
    """glibc 2.43's verdict: refused (DWARF for every PC), or at every PC of every function the frame or
    the fallback; the failures are the PCs that fall back or crash."""
    name = f"glibc-{RELEASE}"
    try:
        reader = Reader(data)
    except Refusal as refusal:
        return Verdict(name, False, END_OF_STACK, refusal.rule, refusal.offset, notes=[REFUSED_NOTE])
    except Crash as crash:
        return Verdict(name, False, "crash", crash.rule, 0)
    engine = Lookups(reader, RUNS_PER_BYTE * len(data) + 4096, row_bound(data))
    failures = LookupFailures(len(data))
    notes: list[str] = []
    frames = 0
    try:
        for index, start, end, _ in domains(reader, data, address):  # type: ignore[arg-type]
            rel = relative(start, address)
            for low, high, answer in engine.runs(rel, rel + end - start, frames_alike=True):
                first, last = start + low - rel, start + high - rel
                if isinstance(answer, RowAnswer) and answer.frame is not None:
                    frames += last - first
                    continue
                error = "crash" if isinstance(answer, Crash) else END_OF_STACK
                failures.add(LookupFailure(first, last, error, answer.rule, index))
    except Budget as stop:
        notes.append(f"steps past {(address + stop.pc) & ADDRESS_MASK:#x} not judged: {stop.reason}")
    except FailuresBound as full:
        notes.append(full.note)
    notes.insert(0, f"backtrace() computes the caller's frame from the section at {frames} PCs")
    if any(f.error == END_OF_STACK for f in failures):
        notes.insert(1, f"where a step fails (_URC_END_OF_STACK), backtrace() {FALLS_BACK} for the whole trace")
    if failures and reader.abi == AMD64:
        notes.append(
            "on x86-64, where the lookup fails glibc first checks for the signal trampoline and for an FP of 0 "
            "(the outermost frame: the backtrace ends there); both read the registers and code, not the section"
        )
    return Verdict(name, True, lookups=failures, notes=notes)


register(
    Profile(
        f"glibc-{RELEASE}",
        f"glibc {RELEASE}'s backtrace(), 2.44 the same (__sframe_decode, __sframe_find_fre, __stacktrace_sframe)",
        judge,
    )
)
