"""A machine state from an ELF core file: registers per thread, memory, what was mapped where.

`elf.image.ElfImage` reads the core's program headers and splits its notes;
the notes are unpacked here: `NT_PRSTATUS`, whose register block is the
kernel's `user_regs_struct` of each architecture (the order below), `NT_FILE`
(the mapped files), `NT_AUXV` (pairs of words) and `NT_ARM_PAC_MASK`. Registers are
given by name (`rip`, `rsp`, `x29`, `pc`, s390x's `pswa` and `r15`); the unwinder maps names to DWARF
numbers. Inputs know nothing of the SFrame model.

No dataclasses here (a named tuple, and plain classes): `sfview unwind` reads cores here (see `sfview.unwind`).
"""

from __future__ import annotations

import bisect
import os
import struct
from collections.abc import Callable
from typing import NamedTuple

from sfview import ADDRESS_MASK
from sfview.errors import InputError
from sfview.inputs.boundary import open_regular_file
from sfview.inputs.elf.image import NOTE_HEADER, PT_LOAD, PT_NOTE, ElfImage, Note

# The kernel's `user_regs_struct`, in order, as NT_PRSTATUS holds it after the 112-byte `elf_prstatus` head.
PRSTATUS_REGS = {
    "EM_X86_64": [
        "r15",
        "r14",
        "r13",
        "r12",
        "rbp",
        "rbx",
        "r11",
        "r10",
        "r9",
        "r8",
        "rax",
        "rcx",
        "rdx",
        "rsi",
        "rdi",
        "orig_rax",
        "rip",
        "cs",
        "eflags",
        "rsp",
        "ss",
        "fs_base",
        "gs_base",
        "ds",
        "es",
        "fs",
        "gs",
    ],
    "EM_AARCH64": [f"x{i}" for i in range(31)] + ["sp", "pc", "pstate"],
    # s390x's `s390_regs`: the PSW (mask, then the instruction address), then the 16 general registers
    # (the access registers and orig_gpr2 follow; the floating-point registers are another note).
    "EM_S390": ["pswm", "pswa"] + [f"r{i}" for i in range(16)],
}
PRSTATUS_REG_OFFSET = 112
PRSTATUS_PID_OFFSET = 32
PC_NAMES = {"EM_X86_64": "rip", "EM_AARCH64": "pc", "EM_S390": "pswa"}
AT_PHDR, AT_ENTRY, AT_SYSINFO_EHDR = 3, 9, 33
NT_PRSTATUS, NT_AUXV, NT_FILE, NT_ARM_PAC_MASK = 1, 6, 0x46494C45, 0x406


class Thread:
    """One thread's registers as the core saved them."""

    tid: int
    registers: dict[str, int]
    name: str | None
    """Its name, where the state has one (a live process's, as gdb shows it in a thread's title)."""

    __slots__ = ("name", "registers", "tid")

    def __init__(self, tid: int, registers: dict[str, int], name: str | None = None) -> None:
        self.tid = tid
        self.registers = registers
        self.name = name


class Mapping(NamedTuple):
    """A file mapped into the process (`NT_FILE`): where, and from which offset of the file."""

    start: int
    end: int
    file_offset: int
    path: str


SETTLED_ONE_BY_ONE = 16
"""Ranges added between two reads that are inserted one by one, not sorted in with all the others: a
sort each time a range is added and a word read (a profile's mappings between its samples) grows with the
square of the ranges."""


class Memory:
    """Readable memory: the core's `PT_LOAD` contents, then words and ranges added by hand.

    `read` answers None for an address nothing covers, so that an unwinder
    can say which address it needed instead of failing.
    """

    little_endian: bool
    words: dict[int, int]
    """Words a person typed: address → 8-byte value; they take precedence."""

    _pending: list[tuple[int, bytes | memoryview]]
    """Ranges added since the last read, sorted in at the next one: one sort, not an insertion each
    (list inserts grow with the square of a core's many `PT_LOAD`s)."""

    def __init__(self, little_endian: bool = True) -> None:
        self.little_endian = little_endian
        self._starts: list[int] = []
        self._ranges: list[tuple[int, bytes | memoryview]] = []
        self.words = {}
        self._pending = []

    def add(self, start: int, data: bytes | memoryview) -> None:
        """Make `data` readable at `start`; a view is kept as it is, not copied. Of ranges that start at
        the same address, the first added is read. Bytes that would lie past the top of the address space
        are not memory: a perf sample whose stack pointer is all ones carries a copy "at" it, and the debugger
        decoded the instruction at such a PC from bytes past 2**64."""
        if start + len(data) > ADDRESS_MASK + 1:  # cut only then: a view sliced is another object kept
            data = data[: max(0, ADDRESS_MASK + 1 - start)]
        if data:
            self._pending.append((start, data))

    def _settle(self) -> None:
        """Sort the ranges added since the last read in among the others (a stable sort: the ones added
        first end up last of those with the same start, where a lookup finds them)."""
        if len(self._pending) <= SETTLED_ONE_BY_ONE:  # a few between reads (a profile's mappings): inserted
            for start, data in self._pending:  # before those of the same start, as the sort below places them
                i = bisect.bisect_left(self._starts, start)
                self._starts.insert(i, start)
                self._ranges.insert(i, (start, data))
        else:
            self._ranges = sorted([*reversed(self._pending), *self._ranges], key=lambda item: item[0])
            self._starts = [start for start, _ in self._ranges]
        self._pending.clear()

    def bytes_at(self, address: int, size: int) -> bytes | None:
        """The `size` bytes at `address` as the memory holds them (code, for the disassembly), or None when one
        range does not hold them all."""
        self._settle()
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0:
            return None
        start, data = self._ranges[i]
        if address + size > start + len(data):
            return None
        return bytes(data[address - start : address - start + size])

    def bytes_from(self, address: int) -> memoryview | None:
        """The bytes from `address` to the end of the range holding it (a whole mapping of the core), as
        a view, not a copy: a small sparse core may map far more than it holds."""
        self._settle()
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0 or address >= self._starts[i] + len(self._ranges[i][1]):
            return None
        start, data = self._ranges[i]
        return memoryview(data)[address - start :]

    def read(self, address: int, size: int = 8) -> int | None:
        """The unsigned `size`-byte word at `address`, or None when nothing covers it."""
        if size == 8 and address in self.words:
            return self.words[address]
        held = self.bytes_at(address, size)
        return None if held is None else int.from_bytes(held, "little" if self.little_endian else "big")


class Core:
    """What an ELF core file says about the process it was taken of."""

    path: str
    machine: str
    threads: list[Thread]
    memory: Memory
    mappings: list[Mapping]
    auxv: dict[int, int]
    pac_mask: int | None
    """The mask of pointer-authentication bits (`NT_ARM_PAC_MASK`, instruction key), when the core has one."""
    damaged: list[str]
    """What the core's damaged notes cost (an `NT_FILE` that cannot be read: the mapped files), one line
    each, without the core's name."""
    described = "the core"
    """What the state was read from, in a message (`no thread 7 in the core`)."""
    kind = "a core of"
    """What the state is of a program, in a message (`not a core of deep`)."""
    without_files = "no NT_FILE note"
    """Why the mapped files are not known, where they are not, in a note."""
    stopped_thread: int | None = None
    """The thread whose stop stopped the process (a guest's breakpoint), by id: the one a walk starts from
    when none is named, as gdb selects it; None: the first."""

    def __init__(
        self,
        path: str,
        machine: str,
        threads: list[Thread],
        memory: Memory,
        mappings: list[Mapping],
        auxv: dict[int, int],
        pac_mask: int | None,
    ) -> None:
        self.path = path
        self.machine = machine
        self.threads = threads
        self.memory = memory
        self.mappings = mappings
        self.auxv = auxv
        self.pac_mask = pac_mask
        self.damaged = []

    @property
    def pc_name(self) -> str:
        return PC_NAMES[self.machine]

    def mapped_files(self) -> dict[str, int]:
        """Each mapped file's path → the address its offset 0 is mapped at (its load base)."""
        out: dict[str, int] = {}
        for m in self.mappings:
            if m.file_offset == 0 and m.path not in out:
                out[m.path] = m.start
        return out


def read_core(path: str) -> Core:
    """Read a core file; an `InputError` names what is missing or broken."""
    stream = open_regular_file(path)  # mapped: its memory is read as the walk asks for it
    try:
        elf = ElfImage.of(stream)
        if elf.type != "ET_CORE":
            raise InputError(f"not a core file (ELF type {elf.type})", path=path)
        machine = elf.machine
        if machine not in PRSTATUS_REGS:
            raise InputError(f"a core of a {machine} process: sfview unwinds x86-64, AArch64 and s390x", path=path)
        _check_not_cut(elf, path)
        core = Core(path, machine, [], Memory(elf.little_endian), [], {}, None)
        read: list[tuple[int, int]] = []  # the notes' file ranges read, sorted
        passed = 0
        for segment in elf.segments:
            if segment.type == PT_LOAD and segment.filesz:
                # a view of the file mapped once: shared by headers that point at the same bytes
                core.memory.add(segment.vaddr, elf.segment_view(segment))
            elif segment.type == PT_NOTE and segment.filesz:
                span = (segment.offset, segment.offset + segment.filesz)
                at = bisect.bisect_left(read, span)
                if (at and read[at - 1][1] > span[0]) or (at < len(read) and read[at][0] < span[1]):
                    passed += 1  # notes read again would be threads and files again, for every such header
                    continue
                read.insert(at, span)
                _notes(core, elf, elf.segment_view(segment), segment.offset)
        if passed:
            core.damaged.append(f"{passed} PT_NOTE segments over notes read before: passed over")
    except InputError as exc:
        raise (
            exc if exc.path is not None else InputError(f"not a readable core file: {exc.message}", path=path)
        ) from None
    if not core.threads:
        why = "".join(f" ({damage})" for damage in core.damaged)  # why the notes gave none
        readable = " readable" if core.damaged else ""
        raise InputError(f"the core has no{readable} NT_PRSTATUS note: no thread's registers{why}", path=path)
    return core


def _notes(core: Core, elf: ElfImage, notes: memoryview, file_offset: int) -> None:
    """Read the notes of one `PT_NOTE` segment; where one runs past the segment, the rest are lost, and
    `core.damaged` says where (a core with no thread's registers then says why)."""
    end = 0
    for note in elf.notes(notes):
        _note(core, note, elf, file_offset + note.offset)
        end = note.offset + note.size
    if len(notes) - end > NOTE_HEADER:  # as `notes` (and pyelftools), a bare header at the end is no note
        namesz, descsz = struct.unpack_from(elf.order + "II", notes, end)
        core.damaged.append(
            f"its notes stop at file offset {file_offset + end:#x}: a note of namesz {namesz}, "
            f"descsz {descsz} runs past the end of its segment ({len(notes)} bytes)"
        )


def _check_not_cut(elf: ElfImage, path: str) -> None:
    """Refuse a truncated core at once: a segment whose bytes the file does not hold.

    Without this, a core cut short reads as a process with less memory (the
    walk then stops for a word "nobody has given"), or fails deep in the
    notes for a short read.
    """
    headers_end = elf.phoff + elf.e_phnum * elf.phentsize
    if headers_end > elf.size:
        raise InputError(
            f"the core is cut short: its program headers end at {headers_end:#x}, the file has {elf.size:#x} bytes",
            path=path,
        )
    for index, segment in enumerate(elf.segments):
        end = segment.offset + segment.filesz
        if end > elf.size:
            what = "notes" if segment.type == PT_NOTE else f"memory at {segment.vaddr:#x}"
            raise InputError(
                f"the core is cut short: its segment {index} ({what}) needs file bytes up to {end:#x}, "
                f"the file has {elf.size:#x} bytes",
                path=path,
            )


def _note(core: Core, note: Note, elf: ElfImage, at: int) -> None:
    """Read one note (at file offset `at`). A damaged one costs what it holds, not the core: a thread's
    registers cut short leave that thread out, and `core.damaged` says where."""
    kind, desc, order = note.type, note.desc, elf.order
    if kind == NT_PRSTATUS:
        names = PRSTATUS_REGS[core.machine]
        end = PRSTATUS_REG_OFFSET + 8 * len(names)
        if len(desc) < end:
            core.damaged.append(
                f"the NT_PRSTATUS note at file offset {at:#x} has {len(desc)} bytes, too short for a thread's "
                f"registers ({end}): that thread is left out"
            )
            return
        (tid,) = struct.unpack_from(order + "i", desc, PRSTATUS_PID_OFFSET)
        values = struct.unpack_from(f"{order}{len(names)}Q", desc, PRSTATUS_REG_OFFSET)
        core.threads.append(Thread(tid, dict(zip(names, values, strict=True))))
    elif kind == NT_AUXV:
        words = struct.unpack_from(f"{order}{len(desc) // 8}Q", desc)
        core.auxv = {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}
    elif kind == NT_FILE:
        try:
            core.mappings.extend(_mappings(desc, order + ("Q" if elf.elfclass == 64 else "I")))
        except InputError as exc:  # costs the mapped files (the load bias then comes from AT_ENTRY), not the core
            core.damaged.append(f"{exc.message}: the mapped files are not known")
            core.without_files = "no readable NT_FILE note"
    elif kind == NT_ARM_PAC_MASK and len(desc) >= 16:
        data_mask, insn_mask = struct.unpack_from(order + "QQ", desc)
        core.pac_mask = insn_mask or data_mask


def _mappings(desc: memoryview, word: str) -> list[Mapping]:
    """`NT_FILE`'s mappings: a count and the page size, then (start, end, page offset) of each, then
    their file names, NUL-terminated (as the kernel's `fill_files_note` writes them)."""
    size = struct.calcsize(word)
    if len(desc) < 2 * size:
        raise InputError(f"an NT_FILE note of {len(desc)} bytes, too short for its header")
    (count,) = struct.unpack_from(word, desc)
    names_at = (2 + 3 * count) * size
    if names_at > len(desc):
        raise InputError(f"an NT_FILE note of {len(desc)} bytes, too short for its {count} mappings")
    ranges = struct.unpack_from(f"{word[0]}{3 * count}{word[1]}", desc, 2 * size)
    names = bytes(desc[names_at:]).split(b"\0")[:count]
    return [
        Mapping(ranges[3 * i], ranges[3 * i + 1], ranges[3 * i + 2], os.fsdecode(name)) for i, name in enumerate(names)
    ]


def parse_registers(text: str, names: Callable[[str], int | None] | None = None) -> dict[str, int]:
    """`pc=0x1000,sp=0x7ff0,fp=0x7ff8` → {"pc": 0x1000, ...}, each value by the one number rule
    (`main+0x34`, with `names` giving a name's address); an `InputError` says what is wrong."""
    from sfview.inputs.numbers import evaluate, quoted  # only for typed registers, not a core's

    out: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, text_value = item.partition("=")
        value = evaluate(text_value, names) if sep else None
        if not isinstance(value, int):
            why = f": {value}" if isinstance(value, str) else ""
            raise InputError(f"--regs: {quoted(item)} is not NAME=VALUE (pc=0x401000, pc=main+0x34){why}")
        out[name.strip().lower()] = value
    return out
