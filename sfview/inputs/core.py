"""Machine state for an unwinder: registers and memory, from an ELF core file or typed by a person.

pyelftools reads the core: its program headers (`PT_LOAD` segments are the
memory), its notes (`NT_FILE` names the mapped files, `NT_AUXV` locates the
program when there is no `NT_FILE`, as in qemu-user cores). pyelftools leaves
`NT_PRSTATUS` and `NT_ARM_PAC_MASK` as bytes; their register layouts (the
kernel's `struct elf_prstatus` and `user_regs_struct`/`user_pt_regs`) are
unpacked here with `struct`.

Registers are keyed by DWARF register number, the numbering SFrame rules use,
plus the PC under its own name. This module knows nothing of the SFrame model.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from elftools.elf.elffile import ELFFile

from sfview.errors import InputError

# `struct elf_prstatus`: siginfo (12), cursig (2+2), sigpend, sighold (8+8),
# pid, ppid, pgrp, sid (4 each), four timevals (16 each); then the registers.
PRSTATUS_PID_OFFSET = 32
PRSTATUS_REGS_OFFSET = 112

# x86-64 `user_regs_struct` order, and each slot's DWARF number (None: no DWARF number used here).
X86_64_USER_REGS = [
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
]
X86_64_DWARF = {
    "rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5, "rbp": 6, "rsp": 7,
    "r8": 8, "r9": 9, "r10": 10, "r11": 11, "r12": 12, "r13": 13, "r14": 14, "r15": 15,
}  # fmt: skip
# AArch64 `user_pt_regs`: x0..x30, sp, pc, pstate; DWARF numbers x0..x30 = 0..30, sp = 31.
AARCH64_USER_REGS = [f"x{i}" for i in range(31)] + ["sp", "pc", "pstate"]
AARCH64_DWARF = {**{f"x{i}": i for i in range(31)}, "sp": 31}

NT_ARM_PAC_MASK = 0x406
AT_PHDR, AT_ENTRY = 3, 9
AARCH64_USER_VA_BITS = 48

MACHINES = {"EM_X86_64": "x86-64", "EM_AARCH64": "aarch64"}
"""The architectures whose register layouts this module knows, by ELF machine."""


@dataclass(frozen=True, slots=True)
class Thread:
    """One thread's registers: `pc`, and the rest by DWARF number."""

    pid: int
    pc: int
    regs: dict[int, int]


@dataclass(frozen=True, slots=True)
class Mapping:
    """A file mapped into the process (`NT_FILE`): [start, end) from `file_offset` of `path`."""

    start: int
    end: int
    file_offset: int
    path: str


class Memory:
    """Bytes at addresses, from several sources; `read` gives None where nothing is known.

    Sources are consulted in the order they were added: a core's own bytes
    come before those of the binaries (which only fill what the core left
    out, such as read-only text a qemu core does not dump).
    """

    def __init__(self) -> None:
        self._ranges: list[tuple[int, int, bytes | memoryview]] = []

    def add(self, address: int, data: bytes | memoryview) -> None:
        """Make `data` readable at `address` (where no earlier source already covers it)."""
        if data:
            self._ranges.append((address, address + len(data), data))

    def __bool__(self) -> bool:
        return bool(self._ranges)

    def read(self, address: int, size: int) -> bytes | None:
        """`size` bytes at `address`, or None if any of them is unknown.

        A linear scan: a process has tens of mappings, and an unwind reads a few words per frame.
        """
        for start, end, data in self._ranges:
            if start <= address and address + size <= end:
                return bytes(data[address - start : address - start + size])
        return None

    def read_word(self, address: int, size: int = 8, little_endian: bool = True) -> int | None:
        raw = self.read(address, size)
        return int.from_bytes(raw, "little" if little_endian else "big") if raw is not None else None


@dataclass
class Core:
    """What a core file tells about the process it was taken from."""

    path: str
    arch: str
    little_endian: bool
    threads: list[Thread]
    memory: Memory
    mappings: list[Mapping]
    auxv: dict[int, int] = field(default_factory=dict)
    pac_mask: int | None = None
    """AArch64 `NT_ARM_PAC_MASK` (instruction mask): the bits a return-address signature occupies."""

    def thread(self, number: int) -> Thread:
        """Thread `number`, counting from 1 as gdb does."""
        if not 1 <= number <= len(self.threads):
            raise InputError(f"no thread {number}: the core holds {len(self.threads)}", path=self.path)
        return self.threads[number - 1]


def read_core(path: str) -> Core:
    """Read the ELF core file at `path`; any problem becomes an `InputError` naming it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), path=path) from None
    try:
        return _parse_core(path, data)
    except InputError as exc:
        raise exc.located(path) from None
    except Exception as exc:  # pyelftools has no single error type (ELFError, struct, construct errors)
        raise InputError(f"not a readable ELF core file: {exc or type(exc).__name__}", path=path) from None


def _parse_core(path: str, data: bytes) -> Core:
    if data[:4] != b"\x7fELF":
        raise InputError("not an ELF file")
    elf = ELFFile(io.BytesIO(data))
    if elf["e_type"] != "ET_CORE":
        raise InputError(f"not a core file (ELF type {elf['e_type']})")
    arch = MACHINES.get(elf["e_machine"])
    if arch is None or elf.elfclass != 64:
        raise InputError(f"a core of a machine sfview cannot unwind ({elf['e_machine']}, {elf.elfclass}-bit)")
    memory = Memory()
    threads: list[Thread] = []
    mappings: list[Mapping] = []
    auxv: dict[int, int] = {}
    pac_mask = None
    order = "<" if elf.little_endian else ">"
    for segment in elf.iter_segments():
        if segment["p_type"] == "PT_LOAD":
            size = segment["p_filesz"]
            offset = segment["p_offset"]
            if offset + size > len(data):
                raise InputError(
                    f"truncated: a PT_LOAD segment ends at file offset {offset + size:#x}, "
                    f"past the file's end ({len(data):#x})"
                )
            memory.add(segment["p_vaddr"], memoryview(data)[offset : offset + size])
        elif segment["p_type"] == "PT_NOTE":
            for note in segment.iter_notes():
                kind, desc = note["n_type"], note["n_desc"]
                if kind == "NT_PRSTATUS":
                    threads.append(_thread(arch, order, desc))
                elif kind == "NT_FILE":
                    mappings.extend(_mappings(desc))
                elif kind == "NT_AUXV":
                    auxv = _auxv(desc, order)
                elif kind == NT_ARM_PAC_MASK and isinstance(desc, bytes) and len(desc) >= 16:
                    pac_mask = struct.unpack_from(order + "QQ", desc)[1]
    if not threads:
        raise InputError("no NT_PRSTATUS note: the core holds no registers")
    return Core(path, arch, elf.little_endian, threads, memory, mappings, auxv, pac_mask)


def _thread(arch: str, order: str, desc: bytes) -> Thread:
    names, dwarf, pc_name = (
        (X86_64_USER_REGS, X86_64_DWARF, "rip") if arch == "x86-64" else (AARCH64_USER_REGS, AARCH64_DWARF, "pc")
    )
    if not isinstance(desc, bytes) or len(desc) < PRSTATUS_REGS_OFFSET + 8 * len(names):
        raise InputError("an NT_PRSTATUS note is too short for its registers")
    pid = struct.unpack_from(order + "i", desc, PRSTATUS_PID_OFFSET)[0]
    values = dict(zip(names, struct.unpack_from(order + f"{len(names)}Q", desc, PRSTATUS_REGS_OFFSET), strict=True))
    return Thread(pid, values[pc_name], {number: values[name] for name, number in dwarf.items()})


def _mappings(desc: object) -> Iterable[Mapping]:
    """`NT_FILE` as pyelftools decodes it: entries, page size, and the file names in order."""
    entries = desc["Elf_Nt_File_Entry"]  # type: ignore[index]
    names = desc["filename"]  # type: ignore[index]
    page = desc["page_size"]  # type: ignore[index]
    for entry, name in zip(entries, names, strict=False):
        path = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
        yield Mapping(entry["vm_start"], entry["vm_end"], entry["page_offset"] * page, path)


def _auxv(desc: object, order: str) -> dict[int, int]:
    """The auxiliary vector, as raw bytes (pairs of words) or as pyelftools' decoded entries."""
    out: dict[int, int] = {}
    if isinstance(desc, bytes):
        for i in range(0, len(desc) - 15, 16):
            key, value = struct.unpack_from(order + "QQ", desc, i)
            out[key] = value
        return out
    for entry in desc["entries"]:  # type: ignore[index]
        key = entry["a_type"]
        out[key if isinstance(key, int) else {"AT_PHDR": AT_PHDR, "AT_ENTRY": AT_ENTRY}.get(key, -1)] = entry["a_val"]
    return out


def user_address_mask(bits: int = AARCH64_USER_VA_BITS) -> int:
    """The bits a PAC signature occupies in a user address when the VA size is `bits`."""
    return ((1 << 64) - 1) & ~((1 << bits) - 1)


# Registers and memory a person types ---------------------------------------


def parse_regs(text: str, arch: str, path: str = "--regs") -> Thread:
    """`pc=0x…,sp=0x…,fp=0x…[,lr=0x…]` (or the ABI's names: rip, rsp, rbp, x29, x30)."""
    aliases = (
        {"pc": "pc", "rip": "pc", "sp": 7, "rsp": 7, "fp": 6, "rbp": 6}
        if arch == "x86-64"
        else {"pc": "pc", "sp": 31, "fp": 29, "x29": 29, "lr": 30, "x30": 30}
    )
    regs: dict[int, int] = {}
    pc = None
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        key = aliases.get(name.strip().lower())
        if not sep or key is None:
            known = ", ".join(sorted({k for k in aliases}))
            raise InputError(f"cannot read {item!r}: write NAME=VALUE with NAME one of {known}", path=path)
        number = _number(value, path)
        if key == "pc":
            pc = number
        else:
            regs[int(key)] = number
    sp = 7 if arch == "x86-64" else 31
    if pc is None or sp not in regs:
        raise InputError("needs at least pc and sp (pc=0x…,sp=0x…)", path=path)
    return Thread(0, pc, regs)


def parse_mem(items: list[str], little_endian: bool, memory: Memory, path: str = "--mem") -> None:
    """`ADDR=VALUE` words (8 bytes each) added to `memory`."""
    for item in items:
        address, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"cannot read {item!r}: write ADDR=VALUE", path=path)
        memory.add(_number(address, path), _number(value, path).to_bytes(8, "little" if little_endian else "big"))


def _number(text: str, path: str) -> int:
    try:
        value = int(text.strip(), 0)
    except ValueError:
        raise InputError(f"not a number: {text!r} (write 0x7ffc1000 or 4096)", path=path) from None
    if not 0 <= value < 1 << 64:
        raise InputError(f"not a 64-bit value: {text!r}", path=path)
    return value
