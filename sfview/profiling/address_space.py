"""A profiled process's address space: the files it mapped, as the unwinder's modules, and their bytes.

Built from the profile's `MMAP`/`MMAP2` records as they come: each executable
mapping of a file makes a module (`sfview.unwind.session.process_module`) whose
load bias is where the mapping puts the file offset it starts at, and whose
read-only segments become readable memory (the code a walk reads, as the
process had it). A file whose build-id differs from the one the profile
recorded is left out and said so: it is another build than the one that ran.
A `FORK` gives the child a copy of its parent's space; an `exec` (a `COMM`
record that says so) an empty one.
"""

from __future__ import annotations

import bisect
import configparser
import functools
import os
from typing import NamedTuple

from sfview import ADDRESS_MASK, quantity
from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.inputs.core import Memory
from sfview.inputs.elf.image import PT_LOAD, ElfImage
from sfview.inputs.numbers import quoted_path
from sfview.inputs.perf_data import BUILD_ID_BYTES, BuildId, Mmap
from sfview.unwind.engine import Machine, Module
from sfview.unwind.session import FilesRead, process_module

MAX_COPIED = 1 << 20
"""The mappings a profile's forks may copy from their parents in all: each copy is the parent's whole list,
so forks of a process of many mappings that each map one more would hold their square."""

PERF_SYSTEM_CONFIG = "/etc/perfconfig"
"""perf's system-wide configuration (Debian's perf is built with `sysconfdir` /etc)."""


KERNEL = "kernel"
"""The kernel's SFrame reader a profile's SFrame walks follow by default: the newest revision sfview knows."""

MACHINES = {
    "x86_64": (Sframe.AbiArch.amd64_endian_little, "EM_X86_64"),
    "aarch64": (Sframe.AbiArch.aarch64_endian_little, "EM_AARCH64"),
}


def machine_of(arch: str) -> Machine:
    """The unwinder's register numbering for a profile's architecture (x86_64, aarch64)."""
    abi, _ = MACHINES[arch]
    if arch == "aarch64":
        return Machine(abi, int(Sframe.Aarch64Reg.sp), int(Sframe.Aarch64Reg.x29), int(Sframe.Aarch64Reg.x30), True)
    return Machine(abi, int(Sframe.Amd64Reg.rsp), int(Sframe.Amd64Reg.rbp), int(Sframe.Amd64Reg.rip), False)


class Mapped(NamedTuple):
    """An executable mapping: where, the file offset it starts at, the file, and its module if one."""

    start: int
    end: int
    pgoff: int
    path: str
    module: Module | None


class Files:
    """Where each file a profile names is read from, decided once a file: the file at its path when it is
    the build that ran, else perf's copy of that build in its build-id cache (`perf_buildid_dir`), as
    `perf script` reads it; the vDSO from there too."""

    def __init__(self, build_ids: list[BuildId], machine: str, reader: str = KERNEL) -> None:
        self.recorded = {entry.path: entry.build_id for entry in build_ids}
        self.machine = machine
        self.reader = reader
        """The revision of the kernel's SFrame reader `kernel` follows (a consumer profile's name)."""
        self.notes: list[str] = []
        self._found: dict[str, str | None] = {}
        self._kernel: dict[str, KernelView | None] = {}
        self.read = FilesRead(each_mapping=True)
        """The files read, each once however often and under whatever names the profile maps it."""
        self.unusable: set[str] = set()
        """Files read once and found no module (not ELF, not readable): not read again."""
        self.copied = 0
        """The mappings copied from a parent's space so far (a fork's, when either maps a file)."""

    @functools.cached_property
    def cache_root(self) -> str:
        """perf's build-id cache (`perf_buildid_dir`), found once a profile: its configuration files are not
        read again for each file the profile names (20,000 names read them 40,000 times)."""
        return perf_buildid_dir()

    def find(self, path: str, recorded: bytes | None) -> str | None:
        """The file to read for `path` (None, said in `notes`, when there is none of the build that ran)."""
        if path not in self._found:
            self._found[path] = self._find(path, recorded or self.recorded.get(path))
        return self._found[path]

    def _find(self, path: str, recorded: bytes | None) -> str | None:
        on_disk = _build_id(path) if os.path.isfile(path) else None
        if os.path.isfile(path) and (not recorded or not on_disk or _same_build(on_disk, recorded)):
            return path
        cached = _cached(self.cache_root, recorded) if recorded else None
        name = quoted_path(path)
        if on_disk is not None and recorded is not None:
            changed = (
                f"{name}: changed since the profile (build-id {recorded.hex()} in the profile, {on_disk.hex()} here)"
            )
            self.notes.append(f"{changed}: read from perf's build-id cache, {cached}" if cached else
                              f"{changed}, and no copy in perf's build-id cache: its frames are left out")  # fmt: skip
        elif cached is None and path.startswith("/"):
            self.notes.append(f"{name}: not found here, nor in perf's build-id cache: its frames are left out")
        return cached

    def found(self, path: str) -> str | None:
        """The file read for `path`, once `find` has been asked."""
        return self._found.get(path)

    def kernel(self, path: str) -> KernelView | None:
        """What the kernel's SFrame reader makes of the `.sframe` of the file mapped at `path` (None: the
        file has none, or is not read here)."""
        if path not in self._kernel:
            found = self._found.get(path)
            self._kernel[path] = _kernel_view(found, self.reader) if found else None
        return self._kernel[path]


class KernelView(NamedTuple):
    """The kernel's reader on a file's `.sframe` (`sfview.consumers.kernel`): refused (its error and
    check), or accepted with the file-address ranges where its lookup fails."""

    refused: str | None
    failing: list[tuple[int, int, str]]

    @property
    def words(self) -> str:
        if self.refused:
            return f"refused: {self.refused}"
        return f"accepted, lookups fail in {quantity(len(self.failing), 'range')}" if self.failing else "accepted"

    def fails_at(self, address: int) -> bool:
        i = bisect.bisect_right(self.failing, (address, ADDRESS_MASK + 1)) - 1
        return i >= 0 and self.failing[i][0] <= address < self.failing[i][1]


def kernel_reader(name: str) -> tuple[str, str]:
    """The revision of the kernel's SFrame reader a name gives (`kernel`: the newest), as its consumer
    profile's name and title; an `InputError` for a name that is none."""
    from sfview.consumers import PROFILES, kernel_linux_mm  # importing the revisions registers them

    revision = kernel_linux_mm.NAME if name == KERNEL else name
    revisions = sorted(n for n in PROFILES if n.startswith(f"{KERNEL}-"))
    if revision not in revisions:
        raise InputError(f"--kernel {name}: not a revision of the kernel's reader ({', '.join([KERNEL, *revisions])})")
    return revision, PROFILES[revision].title


def _kernel_view(path: str, reader: str) -> KernelView | None:
    from sfview.consumers import PROFILES
    from sfview.document import Document

    judge = PROFILES[kernel_reader(reader)[0]].judge_document
    assert judge is not None
    try:
        verdict = judge(Document.open(path), None)
    except InputError:  # no SFrame: nothing for the kernel to read
        return None
    if not verdict.accepted:
        return KernelView(f"{verdict.error} {verdict.rule}", [])
    return KernelView(None, sorted((f.start, f.end, f"{f.error} {f.rule}") for f in verdict.lookups))


def _same_build(on_disk: bytes, recorded: bytes) -> bool:
    """Whether a file's build-id is the one a profile recorded: byte for byte, as perf compares them. A
    profile written without the id's size (an older perf) holds it in 20 bytes, a shorter one padded
    with zeros; an id's own trailing zeros are never cut (one build in 256 ends in one)."""
    return on_disk == recorded or (len(recorded) == BUILD_ID_BYTES and on_disk.ljust(BUILD_ID_BYTES, b"\0") == recorded)


def perf_buildid_dir() -> str:
    """The folder of perf's build-id cache, found as perf finds it: `$PERF_BUILDID_DIR` (what perf sets for
    the commands it runs, after its `--buildid-dir`), else `buildid.dir` in perf's configuration (the file
    `$PERF_CONFIG` names, else `/etc/perfconfig` and then `~/.perfconfig`, the later winning), else
    `~/.debug`. A configuration file that cannot be read is passed over, as perf passes over a missing one."""
    if os.environ.get("PERF_BUILDID_DIR"):
        return os.environ["PERF_BUILDID_DIR"]
    named = os.environ.get("PERF_CONFIG")
    found = None
    for path in [named] if named is not None else [PERF_SYSTEM_CONFIG, os.path.expanduser("~/.perfconfig")]:
        config = configparser.ConfigParser(strict=False, allow_no_value=True, interpolation=None)
        try:
            config.read(path)
        except (configparser.Error, UnicodeDecodeError):
            continue
        found = config.get("buildid", "dir", fallback=None) or found
    return found or os.path.expanduser("~/.debug")


def _cached(root: str, build_id: bytes) -> str | None:
    """perf's copy of the file of `build_id` (`.build-id/ab/cdef…/elf`, the vDSO's `…/vdso`) in its build-id
    cache at `root`, if it has one."""
    folder = os.path.join(root, ".build-id", build_id.hex()[:2], build_id.hex()[2:])
    return next((os.path.join(folder, n) for n in ("elf", "vdso") if os.path.isfile(os.path.join(folder, n))), None)


def _build_id(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return ElfImage.of(f).build_id()
    except (OSError, InputError, ValueError):
        return None


class AddressSpace:
    """One process's executable mappings, their modules, and the files' read-only bytes.

    The mappings are kept sorted by start, and none overlaps another: a mapping added finds what it
    replaces by bisection. A fork shares its parent's lists until either maps something (copy on write):
    a profile of many forks holds each list once, not once a process."""

    def __init__(self, files: Files, mapped: list[Mapped] | None = None, memory: Memory | None = None) -> None:
        self.files = files
        self.mapped = [] if mapped is None else mapped
        self.starts = [m.start for m in self.mapped]
        self.memory = Memory() if memory is None else memory
        self.version = 0
        """Grows with every mapping added: what was worked out for the modules before is stale."""
        self._shared = False
        """The lists are another space's too (a fork's): copied before they change."""

    def fork(self) -> AddressSpace:
        child = AddressSpace(self.files, memory=self.memory)
        child.mapped, child.starts = self.mapped, self.starts
        child._shared = self._shared = True
        return child

    @property
    def modules(self) -> list[Module]:
        return [m.module for m in self.mapped if m.module is not None]

    def add(self, mmap: Mmap) -> None:
        """An executable mapping of a file: its module, at the bias the mapping gives (none for a file
        not found here, not ELF, or changed since the profile)."""
        if not mmap.executable or not mmap.length:
            return
        module = None
        path = mmap.path
        found = self.files.find(path, mmap.build_id) if path.startswith(("/", "[vdso]")) else None
        if found is not None and found not in self.files.unusable:

            def bias_of(elf: ElfImage, mmap: Mmap = mmap) -> int:
                return mmap.start - _file_address(elf, mmap.pgoff)

            files = self.files
            module = process_module(path, found, bias_of, self.memory, files.notes, files.machine, files.read)
            if module is None and files.read.known(found) is None:
                files.unusable.add(found)
        end = mmap.start + mmap.length
        if self._shared:
            self.files.copied += len(self.mapped)
            if self.files.copied > MAX_COPIED:
                raise InputError(
                    f"its processes' forks copy more than {MAX_COPIED} mappings from their parents in all"
                    f" (each fork that maps a file holds its parent's {len(self.mapped)}): sfview stops here",
                    where=f"file offset {mmap.offset:#x}",
                )
            self.mapped, self.starts, self._shared = list(self.mapped), list(self.starts), False
        # a new mapping replaces what it overlaps: the one before it if it reaches past its start, and
        # those that start before its end
        first = bisect.bisect_right(self.starts, mmap.start) - 1
        if first < 0 or self.mapped[first].end <= mmap.start:
            first += 1
        last = bisect.bisect_left(self.starts, end, lo=first)
        self.mapped[first:last] = [Mapped(mmap.start, end, mmap.pgoff, path, module)]
        self.starts[first:last] = [mmap.start]
        self.version += 1

    def at(self, address: int) -> Mapped | None:
        """The executable mapping holding `address`, if one."""
        i = bisect.bisect_right(self.starts, address) - 1
        if i >= 0 and address < self.mapped[i].end:
            return self.mapped[i]
        return None


def _file_address(elf: ElfImage, offset: int) -> int:
    """The link-time address of a file offset: in the loadable segment holding it (the first segment's
    rule where none does)."""
    loads = [seg for seg in elf.segments if seg.type == PT_LOAD]
    for seg in loads:
        if seg.offset <= offset < seg.offset + max(seg.filesz, 1):
            return seg.vaddr + offset - seg.offset
    first = min(loads, key=lambda seg: seg.offset, default=None)
    return offset if first is None else first.vaddr - first.offset + offset
