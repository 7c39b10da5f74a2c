"""A `perf.data` file as `perf record` writes it: the header, the attributes, and its records streamed.

The layout is the kernel's `tools/perf/Documentation/perf.data-file-format.txt`
and `include/uapi/linux/perf_event.h`: a file header (magic `PERFILE2`, the
attribute, data and feature sections, the feature bitmap), an array of
`perf_file_attr` (a `perf_event_attr` and the section of its sample ids), the
data section of records (`perf_event_header`: type, misc, size), then a
section per feature bit set (the build-ids, the architecture).

What sfview reads of a record is what a user-stack unwind needs:
`PERF_RECORD_SAMPLE` (its PID, TID, time, IP, the user registers and the copy
of the user stack), `MMAP`/`MMAP2` (what file was mapped where), `COMM`, `FORK`,
`EXIT`, and perf's `FINISHED_ROUND`; the rest are passed over by their size. Records are read one at a time
from the file: memory holds one record, whatever the file's size. Every read is
bounded by the file's bytes; a record that runs past its section, a size that
cannot be, a field that does not fit its record, is an `InputError` naming the
file offset. Files in `perf record`'s pipe mode, big-endian files and
compressed records (`perf record -z`) are refused with a message that says so.
"""

from __future__ import annotations

import bisect
import os
import platform
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from enum import IntEnum, IntFlag
from operator import itemgetter
from typing import BinaryIO, NamedTuple

from sfview.errors import InputError
from sfview.inputs.boundary import open_regular_file

MAGIC = b"PERFILE2"
FILE_HEADER = struct.Struct("<8sQQQQQQQQ32s")
"""`perf_file_header`: magic, size, attr_size, then the attrs, data and event_types sections
(offset, size), then the 256-bit feature bitmap."""
EVENT_HEADER = struct.Struct("<IHH")
"""`perf_event_header`: type, misc, size (the size counts the header)."""
ATTR_MIN_SIZE = 96
"""The smallest `perf_event_attr` that has `sample_regs_user` and `sample_stack_user` (ABI version 3)."""
READ_BUFFER = 1 << 20
"""The bytes read from the file at a time: a record of a `--call-graph dwarf` profile is some 8 KB, and
read one by one they would each be a system call."""
NO_CALL_GRAPH = "record with `perf record --call-graph dwarf -- PROGRAM` for the registers and the stack copy"


class Record(IntEnum):
    """`perf_event_type`, and perf's own record types (64 and up), as far as sfview tells them apart."""

    MMAP = 1
    LOST = 2
    COMM = 3
    EXIT = 4
    FORK = 7
    SAMPLE = 9
    MMAP2 = 10
    FINISHED_ROUND = 68
    """perf's own: every CPU's buffer written once more; no record after the next such one is older than
    the records before this one."""
    AUXTRACE = 71
    """Followed by its trace data, which its `size` field counts and the header's size does not."""
    COMPRESSED = 81
    COMPRESSED2 = 83


class SampleType(IntFlag):
    """`perf_event_sample_format`: which fields a sample holds, in the order they come."""

    IP = 1 << 0
    TID = 1 << 1
    TIME = 1 << 2
    ADDR = 1 << 3
    READ = 1 << 4
    CALLCHAIN = 1 << 5
    ID = 1 << 6
    CPU = 1 << 7
    PERIOD = 1 << 8
    STREAM_ID = 1 << 9
    RAW = 1 << 10
    BRANCH_STACK = 1 << 11
    REGS_USER = 1 << 12
    STACK_USER = 1 << 13
    IDENTIFIER = 1 << 16


class ReadFormat(IntFlag):
    """`perf_event_read_format`: what a `PERF_SAMPLE_READ` value holds."""

    TOTAL_TIME_ENABLED = 1
    TOTAL_TIME_RUNNING = 2
    ID = 4
    GROUP = 8
    LOST = 16


class Feature(IntEnum):
    """The feature sections sfview reads (bit numbers of the header's bitmap)."""

    BUILD_ID = 2
    ARCH = 6


BRANCH_HW_INDEX = 1 << 17
"""`PERF_SAMPLE_BRANCH_HW_INDEX` in `branch_sample_type`: each branch stack starts with an index word."""
MISC_MMAP_BUILD_ID = 1 << 14
"""In an `MMAP2` record's misc: the record holds the file's build-id, not its device and inode."""
MISC_COMM_EXEC = 1 << 13
"""In a `COMM` record's misc: the name changed with an `exec`."""
MISC_BUILD_ID_SIZE = 1 << 15
"""In a build-id feature record's misc: the byte after the 20 of the id gives its length."""
SAMPLE_ID_ALL_BIT = 18
"""`sample_id_all` in `perf_event_attr`'s flags (after `disabled` … `precise_ip`, `mmap_data`)."""
QUEUED = (Record.SAMPLE, Record.MMAP, Record.MMAP2, Record.COMM, Record.FORK, Record.EXIT)
"""The kernel's records sfview reads, which come in time order (`PerfData.records`)."""
BUILD_ID_BYTES = 20
"""The bytes perf keeps of a build-id (`BUILD_ID_SIZE`): a longer one is cut, a shorter padded."""
QUEUE_BYTES = 64 << 20
"""The record bytes held to be put in time order at most: past them, the earlier half is given (as perf's
own queue does when it is full), whatever a file's rounds."""

PERF_REGISTERS = {
    "x86_64": [
        "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs",
        *(f"r{n}" for n in range(8, 16)),
    ],
    "aarch64": [*(f"x{n}" for n in range(31)), "sp", "pc"],
}  # fmt: skip
"""Each architecture's perf register numbers (`arch/*/include/uapi/asm/perf_regs.h`) → the names a core
uses for them (`sfview.inputs.core`)."""
PC_NAMES = {"x86_64": "rip", "aarch64": "pc"}
SP_NAMES = {"x86_64": "rsp", "aarch64": "sp"}
ELF_ARCHES = {"EM_X86_64": "x86_64", "EM_AARCH64": "aarch64"}


class Attr(NamedTuple):
    """What sfview needs of a `perf_event_attr`."""

    sample_type: SampleType
    read_format: ReadFormat
    branch_sample_type: int
    sample_regs_user: int
    sample_id_all: bool = False
    """The records other than samples end with the sample's id fields (`struct sample_id`): their time."""


class Sample(NamedTuple):
    """One `PERF_RECORD_SAMPLE`: `number` counts samples in file order from 0 (`#N` in the report)."""

    number: int
    offset: int
    """The file offset of its record."""
    pid: int
    tid: int
    time: int
    ip: int
    registers: dict[str, int]
    """The user registers, by name (`rip`, `rsp`); empty when the sample has none (in the kernel, a
    kernel thread)."""
    stack: bytes
    """The copy of the user stack from SP on, as far as the kernel could copy it (`dyn_size`)."""
    stack_asked: int
    """The bytes the copy was asked to hold (`--call-graph dwarf,SIZE`)."""


class Mmap(NamedTuple):
    """An `MMAP` or `MMAP2` record: `path` mapped at `start` for `length` bytes from file offset `pgoff`."""

    offset: int
    pid: int
    tid: int
    start: int
    length: int
    pgoff: int
    path: str
    executable: bool
    """`PROT_EXEC` (an `MMAP` record, which perf writes for code, is taken as executable)."""
    build_id: bytes | None


class Task(NamedTuple):
    """A `COMM`, `FORK` or `EXIT` record: what happened to which process; or a `FINISHED_ROUND`."""

    offset: int
    kind: Record
    pid: int
    tid: int
    name: str
    """The command name (`COMM`), else ""."""
    parent: int
    """The parent's PID (`FORK`, `EXIT`), else 0."""
    exec: bool
    """A `COMM` record written by an `exec`: the process's mappings start anew."""


class BuildId(NamedTuple):
    """A file's build-id as the profile saw it (the build-id feature section)."""

    pid: int
    build_id: bytes
    path: str


HEAD_FIELDS = (
    (SampleType.IDENTIFIER, "Q"),
    (SampleType.IP, "Q"),
    (SampleType.TID, "II"),
    (SampleType.TIME, "Q"),
    (SampleType.ADDR, "Q"),
    (SampleType.ID, "Q"),
    (SampleType.STREAM_ID, "Q"),
    (SampleType.CPU, "Q"),
    (SampleType.PERIOD, "Q"),
)
"""A sample's fields of fixed size that come first, in their order, and their `struct` formats."""


class SampleLayout(NamedTuple):
    """How a profile's samples are laid out (one attribute's `sample_type`), worked out once for all its
    samples: the fixed fields that come first as one `struct` (and where the IP, PID and TID, and time
    are in it), the fields of varying size after them, the user registers as one `struct`."""

    read: bool
    read_format: ReadFormat
    callchain: bool
    raw: bool
    branch_stack: bool
    branch_hw_index: bool
    head: struct.Struct
    ip: int | None
    tid: int | None
    time: int | None
    names: list[str]
    registers: struct.Struct | None
    """The user registers' values (None: the samples hold none)."""
    stack: bool

    @classmethod
    def of(cls, attr: Attr, names: list[str]) -> SampleLayout:
        st = int(attr.sample_type)
        head, where = "<", {}
        for flag, fmt in HEAD_FIELDS:
            if st & flag:
                where[flag] = len(head) - 1
                head += fmt
        registers = struct.Struct(f"<{len(names)}Q") if st & SampleType.REGS_USER else None
        return cls(
            bool(st & SampleType.READ), attr.read_format, bool(st & SampleType.CALLCHAIN), bool(st & SampleType.RAW),
            bool(st & SampleType.BRANCH_STACK), bool(attr.branch_sample_type & BRANCH_HW_INDEX), struct.Struct(head),
            where.get(SampleType.IP), where.get(SampleType.TID), where.get(SampleType.TIME), names, registers,
            bool(st & SampleType.STACK_USER),
        )  # fmt: skip


class PerfData:
    """An open `perf.data`: its attributes and features read, its records streamed by `records`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file: BinaryIO = open_regular_file(path, READ_BUFFER)
        try:
            self._read_header()
        except BaseException:
            self.file.close()
            raise

    def close(self) -> None:
        self.file.close()

    def reopen(self, at: int) -> None:
        """Read on from file offset `at` through a file of this process's own: a process forked while the
        records are read shares the file's offset with the process it was forked from."""
        self.file.close()
        self.file = open_regular_file(self.path, READ_BUFFER)
        self.file.seek(at)

    def __enter__(self) -> PerfData:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _error(self, message: str, offset: int | None) -> InputError:
        where = f"file offset {offset:#x}" if offset is not None else None
        return InputError(message, path=self.path, where=where)

    def _read(self, offset: int, size: int, what: str) -> bytes:
        """`size` bytes at `offset`, all of them or an error naming `what`."""
        if offset < 0 or size < 0 or offset + size > self.size:
            raise self._error(f"{what} runs past the end of the file ({self.size} bytes): it is cut short", offset)
        self.file.seek(offset)
        data = self.file.read(size)
        if len(data) != size:
            raise self._error(f"{what}: the file ends early", offset)
        return data

    def _read_header(self) -> None:
        self.size = os.fstat(self.file.fileno()).st_size
        head = self.file.read(FILE_HEADER.size)
        if head[:8] == MAGIC[::-1]:
            raise self._error("a big-endian perf.data: sfview reads little-endian profiles only", 0)
        if head[:8] != MAGIC:
            found = "an empty file" if not head else f"its first bytes are {head[:8]!r}"
            raise self._error(f"not a perf.data file (no PERFILE2 magic: {found})", 0)
        if len(head) >= 16 and struct.unpack_from("<Q", head, 8)[0] == 16:
            raise self._error("a perf.data in pipe mode (`perf record -o -`): record to a file", 8)
        if len(head) < FILE_HEADER.size:
            raise self._error(f"the file header is cut short ({len(head)} of {FILE_HEADER.size} bytes)", 0)
        _, header_size, attr_size, a_off, a_size, d_off, d_size, _, _, bitmap = FILE_HEADER.unpack(head)
        if header_size < FILE_HEADER.size:
            raise self._error(f"the file header says it is {header_size} bytes, less than {FILE_HEADER.size}", 8)
        if d_off > self.size:
            raise self._error(
                f"the data section starts at {d_off:#x}, past the end of the file ({self.size} bytes)", 0x28
            )
        self.data_offset, self.data_size = d_off, d_size
        self.notes: list[str] = []
        """What could not be read and what was assumed instead, one line each."""
        self.cut = d_off + d_size > self.size or (not d_size and self.size > d_off)
        """The data section runs to the end of the file, not to where the header says: the records are
        read until the file ends."""
        if self.cut:
            self.notes.append(
                f"the data section ({d_size} bytes at {d_off:#x}) is cut short or was never finished (was"
                f" `perf record` stopped before it ended?): its records are read up to the end of the file"
            )
            self.data_size = max(self.size - d_off, 0)
        self.attrs = self._read_attrs(attr_size, a_off, a_size)
        self.features = int.from_bytes(bitmap, "little")
        if self.cut:
            self.arch, self.build_ids = platform.machine(), []
            self.notes.append(
                f"its features (the architecture, the files' build-ids) are lost with its end: taken as"
                f" {self.arch}, this machine's, and the files here as the ones that ran"
            )
        else:
            self.arch, self.build_ids = self._read_features()

    def _read_attrs(self, attr_size: int, offset: int, size: int) -> list[Attr]:
        """Every attribute; the attribute's own `size` says how much of the entry is the attribute."""
        if attr_size < ATTR_MIN_SIZE + 16 or size % attr_size or not size:
            raise self._error(f"attributes of {attr_size} bytes in a section of {size}: not perf's layout", 16)
        data = self._read(offset, size, "the attributes section")
        attrs = []
        for at in range(0, size, attr_size):
            (own_size,) = struct.unpack_from("<I", data, at + 4)
            if own_size < ATTR_MIN_SIZE or own_size + 16 > attr_size:
                raise self._error(f"an attribute says it is {own_size} bytes in an entry of {attr_size}", offset + at)
            sample_type, read_format, flags = struct.unpack_from("<QQQ", data, at + 24)
            branch, regs_user = struct.unpack_from("<QQ", data, at + 72)
            id_all = bool(flags >> SAMPLE_ID_ALL_BIT & 1)
            attrs.append(Attr(SampleType(sample_type), ReadFormat(read_format), branch, regs_user, id_all))
        first = attrs[0]
        if any(a.sample_type != first.sample_type or a.sample_regs_user != first.sample_regs_user for a in attrs):
            raise self._error("events of different sample layouts in one profile: record one event", offset)
        return attrs

    def _feature_sections(self) -> dict[int, tuple[int, int]]:
        """Feature bit → (offset, size) of its section; the section table follows the data section."""
        bits = [bit for bit in range(256) if self.features >> bit & 1]
        at = self.data_offset + self.data_size
        table = self._read(at, 16 * len(bits), "the feature sections' table") if bits else b""
        return {bit: struct.unpack_from("<QQ", table, 16 * i) for i, bit in enumerate(bits)}

    def _read_features(self) -> tuple[str, list[BuildId]]:
        sections = self._feature_sections()
        arch = ""
        if Feature.ARCH in sections:
            offset, size = sections[Feature.ARCH]
            data = self._read(offset, size, "the architecture feature")
            arch = self._string(data, 0, offset, "the architecture feature")[0]
        build_ids = []
        if Feature.BUILD_ID in sections:
            offset, size = sections[Feature.BUILD_ID]
            build_ids = self._build_ids(self._read(offset, size, "the build-id feature"), offset)
        return arch, build_ids

    def _string(self, data: bytes, at: int, offset: int, what: str) -> tuple[str, int]:
        """A `perf_header_string` (a u32 length, then that many bytes, NUL padded) and where it ends."""
        if at + 4 > len(data):
            raise self._error(f"{what}: its string is cut short", offset + at)
        (length,) = struct.unpack_from("<I", data, at)
        if at + 4 + length > len(data):
            raise self._error(f"{what}: a string of {length} bytes in {len(data) - at - 4}", offset + at)
        text = data[at + 4 : at + 4 + length].split(b"\0", 1)[0]
        return text.decode(errors="replace"), at + 4 + length

    def _build_ids(self, data: bytes, offset: int) -> list[BuildId]:
        """The build-id feature: `build_id_event` records (header, pid, 24 bytes of id, the file name)."""
        found, at = [], 0
        while at + 8 <= len(data):
            _, misc, size = EVENT_HEADER.unpack_from(data, at)
            if size < 36 or at + size > len(data):
                raise self._error(f"a build-id record of {size} bytes, in {len(data) - at} left", offset + at)
            (pid,) = struct.unpack_from("<i", data, at + 8)
            length = data[at + 32] if misc & MISC_BUILD_ID_SIZE else BUILD_ID_BYTES
            build_id = data[at + 12 : at + 12 + min(length, BUILD_ID_BYTES)]
            name = data[at + 36 : at + size].split(b"\0", 1)[0].decode(errors="replace")
            found.append(BuildId(pid, build_id, name))
            at += size
        return found

    # The records ------------------------------------------------------------------

    def check_unwindable(self) -> None:
        """Refuse a profile whose samples hold no user registers or no stack copy: nothing to unwind."""
        sample_type = self.attrs[0].sample_type
        lacking = [
            what
            for flag, what in ((SampleType.REGS_USER, "user registers"), (SampleType.STACK_USER, "user stack copy"))
            if not sample_type & flag
        ]
        if lacking:
            raise self._error(f"the samples hold no {' and no '.join(lacking)}: {NO_CALL_GRAPH}", None)
        if self.arch not in PERF_REGISTERS:
            raise self._error(f"a profile of a {self.arch or 'unnamed'} machine: sfview reads x86_64 and aarch64", None)

    def records(self, owned: Sequence[int] | None = None) -> Iterator[Sample | Mmap | Task]:
        """The samples, mappings and task events in the order perf's own tools take them: by time, within
        the window perf's rounds allow. perf writes each CPU's buffer in turn, so that a sample can come in
        the file before the `MMAP` of the code it ran (written from another CPU); `perf script` queues the
        records and, at each `FINISHED_ROUND`, takes in time order those no later than the newest before
        the round before (no record after a round is older), the rest at the end. So here, holding the
        records of two rounds at most (`QUEUE_BYTES` in all); records without a time (perf's own, those
        it made of what ran before it started, a file without `sample_id_all`) are given at once, in
        file order, as perf gives them. `owned`: only the samples whose records start in this range of
        file offsets are read and given (the others are passed over by their size, still counted), with
        every mapping and task event until they are all given: a share of the samples. The range is read
        as the records go (a process forked while they are read takes another share of those to come)."""
        attr = self.attrs[0]
        layout = SampleLayout.of(attr, self._register_names(attr.sample_regs_user))
        bounds = owned if owned is not None else (0, self.data_offset + self.data_size)
        timed = _timing(attr, layout)
        queue: list[tuple[int, int, int, int, bytes, int]] = []
        """(time, file offset, type, misc, body, sample number): the records held, put in order by sorting."""
        held = mine = newest = limit = 0
        for at, kind, misc, body, number in self._scan(bounds, stop=timed is None):
            if at >= bounds[1] and not mine:
                break  # every sample of the share given
            if timed is not None and kind == Record.FINISHED_ROUND:
                yield from self._given(queue, limit, layout, bounds)
                held, mine, limit = _held(queue), _samples(queue), newest
                yield self._record(at, kind, misc, body, number, layout)
                continue
            time = timed(kind, body) if timed is not None else 0
            if not time or time == ADDRESS_ALL_ONES:
                yield self._record(at, kind, misc, body, number, layout)
                continue
            queue.append((time, at, kind, misc, body, number))
            newest, held, mine = max(newest, time), held + len(body), mine + (kind == Record.SAMPLE)
            if held > QUEUE_BYTES:
                queue.sort()
                yield from self._given(queue, queue[len(queue) // 2][0], layout, bounds)
                held, mine = _held(queue), _samples(queue)
        yield from self._given(queue, ADDRESS_ALL_ONES, layout, bounds)

    def _given(
        self, queue: list, limit: int, layout: SampleLayout, bounds: Sequence[int]
    ) -> Iterator[Sample | Mmap | Task]:
        """The queued records no later than `limit`, in time order (in file order at the same time), taken
        out of `queue`; a sample queued outside `bounds` (before a forked process took another share) is
        passed over."""
        queue.sort()
        cut = bisect.bisect_right(queue, limit, key=itemgetter(0))
        given = queue[:cut]
        del queue[:cut]
        for _, at, kind, misc, body, number in given:
            if kind != Record.SAMPLE or bounds[0] <= at < bounds[1]:
                yield self._record(at, kind, misc, body, number, layout)

    def _record(
        self, at: int, kind: int, misc: int, body: bytes, number: int, layout: SampleLayout
    ) -> Sample | Mmap | Task:
        """A record read (`_scan`) as sfview holds it."""
        if kind == Record.SAMPLE:
            return self._sample(body, at, number, layout)
        if kind in (Record.MMAP, Record.MMAP2):
            return self._mmap(body, at, kind, misc, self.attrs[0])
        if kind == Record.FINISHED_ROUND:
            return Task(at, Record.FINISHED_ROUND, 0, 0, "", 0, False)
        return self._task(body, at, kind, misc)

    def _scan(self, bounds: Sequence[int], stop: bool) -> Iterator[tuple[int, int, int, bytes, int]]:
        """The records sfview reads, in file order, one read at a time: each one's file offset, type, misc,
        body (without its header) and, for a sample, its number (counted in file order); samples outside
        `bounds` (first, last) passed over by their size, and nothing from `last` on if `stop`. The bounds
        and the file (`reopen`) are read as the records go."""
        end = self.data_offset + self.data_size
        at, number = self.data_offset, 0
        self.file.seek(at)
        while at < (min(end, bounds[1]) if stop else end):
            f = self.file
            head = f.read(EVENT_HEADER.size) if at + EVENT_HEADER.size <= end else b""
            kind, misc, size = EVENT_HEADER.unpack(head) if head else (0, 0, end - at + 1)
            if size < EVENT_HEADER.size:
                raise self._error(f"a record of {size} bytes: no record is shorter than its header", at)
            if kind == Record.SAMPLE and not bounds[0] <= at < bounds[1] and at + size <= end:  # another share's
                f.seek(size - EVENT_HEADER.size, os.SEEK_CUR)
                at += size
                number += 1
                continue
            body = f.read(size - EVENT_HEADER.size) if at + size <= end else b""
            if at + size > end or len(body) != size - EVENT_HEADER.size:
                if self.cut:
                    self.notes.append(f"the file ends inside a record at {at:#x}: the records before it are read")
                    return
                raise self._error(f"a record of {size} bytes, with {end - at} left in the data section", at)
            following = 0
            if kind == Record.SAMPLE:
                yield at, kind, misc, body, number
                number += 1
            elif kind in QUEUED or kind == Record.FINISHED_ROUND:
                yield at, kind, misc, body, 0
            elif kind in (Record.COMPRESSED, Record.COMPRESSED2):
                raise self._error("compressed records (`perf record -z`): record without -z", at)
            elif kind == Record.AUXTRACE:
                following = self._field(body, 0, "<Q", at, "an AUXTRACE record")[0]
                if at + size + following > end:  # else the records after it would be passed over unsaid
                    left = end - at - size
                    if self.cut:
                        self.notes.append(f"the file ends inside the trace data of the AUXTRACE record at {at:#x}")
                        return
                    raise self._error(f"an AUXTRACE record's {following} bytes of trace data, with {left} left", at)
            at += size + following
            if following:
                f.seek(at)

    def _register_names(self, mask: int) -> list[str]:
        names = PERF_REGISTERS.get(self.arch, [])
        return [names[bit] if bit < len(names) else f"perf{bit}" for bit in range(64) if mask >> bit & 1]

    def _field(self, body: bytes, at: int, fmt: str, offset: int, what: str) -> tuple:
        size = struct.calcsize(fmt)
        if at + size > len(body):
            raise self._error(f"{what} is cut short: its fields run past its {len(body) + 8} bytes", offset)
        return struct.unpack_from(fmt, body, at)

    def _sample(self, body: bytes, offset: int, number: int, layout: SampleLayout) -> Sample:
        """Walk a sample's fields in `sample_type`'s order up to the stack copy (what follows is not read)."""
        what = f"sample #{number}"
        head = layout.head
        if head.size > len(body):
            self._field(body, 0, f"<{head.size}s", offset, what)  # the error: it is cut short
        fields = head.unpack_from(body)
        ip = fields[layout.ip] if layout.ip is not None else 0
        pid, tid = (fields[layout.tid], fields[layout.tid + 1]) if layout.tid is not None else (0, 0)
        time = fields[layout.time] if layout.time is not None else 0
        at = head.size
        if layout.read:
            at += self._read_size(body, at, layout.read_format, offset, what)
        if layout.callchain:
            (nr,) = self._field(body, at, "<Q", offset, what)
            at += 8 + 8 * nr
        if layout.raw:
            (raw,) = self._field(body, at, "<I", offset, what)
            at += 4 + raw
        if layout.branch_stack:
            (nr,) = self._field(body, at, "<Q", offset, what)
            at += 8 + 24 * nr + (8 if layout.branch_hw_index else 0)
        registers: dict[str, int] = {}
        if layout.registers is not None:
            (abi,) = self._field(body, at, "<Q", offset, what)
            at += 8
            if abi:
                values = layout.registers
                if at + values.size > len(body):
                    self._field(body, at, f"<{values.size}s", offset, what)  # the error: it is cut short
                registers = dict(zip(layout.names, values.unpack_from(body, at), strict=True))
                at += values.size
        stack, asked = b"", 0
        if layout.stack:
            (asked,) = self._field(body, at, "<Q", offset, what)
            at += 8
            if asked:
                if at + asked + 8 > len(body):
                    raise self._error(f"{what}: its stack copy of {asked} bytes runs past its record", offset)
                (dynamic,) = struct.unpack_from("<Q", body, at + asked)
                stack = body[at : at + min(dynamic, asked)]
        return Sample(number, offset, pid, tid, time, ip, registers, stack, asked)

    def _read_size(self, body: bytes, at: int, fmt: ReadFormat, offset: int, what: str) -> int:
        """The bytes of a `PERF_SAMPLE_READ` value (`read_format` says its shape)."""
        per_value = 8 + 8 * bool(fmt & ReadFormat.ID) + 8 * bool(fmt & ReadFormat.LOST)
        times = 8 * bool(fmt & ReadFormat.TOTAL_TIME_ENABLED) + 8 * bool(fmt & ReadFormat.TOTAL_TIME_RUNNING)
        if not fmt & ReadFormat.GROUP:
            return per_value + times
        (nr,) = self._field(body, at, "<Q", offset, what)
        return 8 + times + nr * per_value

    def _mmap(self, body: bytes, offset: int, kind: int, misc: int, attr: Attr) -> Mmap:
        what = "an MMAP2 record" if kind == Record.MMAP2 else "an MMAP record"
        pid, tid, start, length, pgoff = self._field(body, 0, "<IIQQQ", offset, what)
        build_id, executable, at = None, True, 32
        if kind == Record.MMAP2:
            if misc & MISC_MMAP_BUILD_ID:
                size = self._field(body, at, "<B", offset, what)[0]
                build_id = body[at + 4 : at + 4 + min(size, BUILD_ID_BYTES)]
            prot, _flags = self._field(body, at + 24, "<II", offset, what)
            executable = bool(prot & 4)  # PROT_EXEC
            at += 32
        path = self._name(body, at, offset, what)
        return Mmap(offset, pid, tid, start, length, pgoff, path, executable, build_id)

    def _task(self, body: bytes, offset: int, kind: int, misc: int) -> Task:
        record = Record(kind)
        if record == Record.COMM:
            pid, tid = self._field(body, 0, "<II", offset, "a COMM record")
            name = self._name(body, 8, offset, "a COMM record")
            return Task(offset, record, pid, tid, name, 0, bool(misc & MISC_COMM_EXEC))
        pid, ppid, tid, _ptid = self._field(body, 0, "<IIII", offset, f"a {record.name} record")
        return Task(offset, record, pid, tid, "", ppid, False)

    def _name(self, body: bytes, at: int, offset: int, what: str) -> str:
        end = body.find(b"\0", at)
        if end < 0:
            raise self._error(f"{what}: its name has no terminating NUL", offset)
        # one string a name, however many records give it (a process maps a file many times)
        return sys.intern(body[at:end].decode(errors="surrogateescape"))


ADDRESS_ALL_ONES = (1 << 64) - 1
"""perf's "no time" (`-1ULL`), as 0 is."""


def _timing(attr: Attr, layout: SampleLayout) -> Callable[[int, bytes], int] | None:
    """How a record's time is read (its type and body → the time): a sample's from its fields, another
    record's from the `struct sample_id` it ends with, read from its end as perf reads it; None when the
    records hold no time (no `PERF_SAMPLE_TIME`, or no `sample_id_all`)."""
    if layout.time is None or not attr.sample_id_all:
        return None
    st = attr.sample_type
    trailing = (SampleType.IDENTIFIER, SampleType.CPU, SampleType.STREAM_ID, SampleType.ID)
    after = 8 * sum(1 for flag in trailing if st & flag)
    head, where = layout.head, layout.time

    def time(kind: int, body: bytes) -> int:
        if kind == Record.SAMPLE:
            return head.unpack_from(body)[where] if len(body) >= head.size else 0
        at = len(body) - after - 8
        return struct.unpack_from("<Q", body, at)[0] if at >= 0 else 0

    return time


def _held(queue: list[tuple[int, int, int, int, bytes, int]]) -> int:
    """The record bytes a queue holds."""
    return sum(len(entry[4]) for entry in queue)


def _samples(queue: list[tuple[int, int, int, int, bytes, int]]) -> int:
    """The samples a queue holds."""
    return sum(1 for entry in queue if entry[2] == Record.SAMPLE)
