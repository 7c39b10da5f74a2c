"""Setting up an unwind: the modules and their load biases, the registers, the memory.

From a core: the program and every shared library the core maps (found at
the same path, under `--sysroot`, or by name in a `--lib-dir`), each with
its own SFrame section and load bias (from `NT_FILE`, or for a core without
one, as qemu-user writes them, from `AT_ENTRY` in `NT_AUXV`); the registers of
the chosen thread; the core's memory. From typed registers: the program
alone, at its link addresses, and the memory words given.

`Session` is a plain class, not a dataclass, for the unwind's start-up (see `sfview.unwind`).
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs import limits
from sfview.inputs.core import AT_ENTRY, AT_PHDR, AT_SYSINFO_EHDR, Core, Memory, Thread
from sfview.inputs.elf.image import PT_DYNAMIC, PT_LOAD, PT_NOTE, PT_PHDR, ElfImage
from sfview.inputs.elf.names import MinimalSymbols, debug_file, function_symbols, image_symbols, unwinding_symbols
from sfview.inputs.linkmap import loaded_objects
from sfview.sframe.model import terms
from sfview.unwind.engine import Machine, Module, Unwinder

if TYPE_CHECKING:
    from sfview.dwarf.source import DebugInfo
    from sfview.dwarf.tables import CfiTable, EhFrameIndex
    from sfview.inputs.symbols import Symbol, SymbolTable
    from sfview.sframe.model.section import Section

NT_GNU_BUILD_ID = 3
PAGE_SIZE = 4096
"""The smallest page a Linux process maps (x86-64, AArch64): every load bias is a multiple of it."""
ELF_MACHINES = {"EM_X86_64": "x86-64", "EM_AARCH64": "AArch64", "EM_S390": "s390x"}


class Session:
    """Everything an unwind needs, and what was noticed while gathering it."""

    unwinder: Unwinder
    pc: int | None
    """None until a person gives it."""
    registers: dict[int, int]
    memory: Memory
    notes: list[str]
    origin: str | None
    """Where the state came from, when a person must be told (a snapshot of a process that runs on)."""
    memory_from: str | None
    """Where the memory's words come from, in a few words (`the core`, `sample #7's stack copy`); None:
    only from the words a person gave."""

    def __init__(
        self,
        unwinder: Unwinder,
        pc: int | None,
        registers: dict[int, int],
        memory: Memory,
        notes: list[str] | None = None,
        memory_from: str | None = None,
    ) -> None:
        self.unwinder = unwinder
        self.pc = pc
        self.registers = registers
        self.memory = memory
        self.notes = [] if notes is None else notes
        self.origin = None
        self.memory_from = memory_from


def register_numbers(machine: Machine) -> dict[str, int]:
    """Register names a person or a core uses → DWARF numbers (`rsp`, `x29`, and `sp`/`fp`/`lr`)."""
    names = {reg.name: int(reg) for reg in terms.registers(machine.abi)}
    names.update({"sp": machine.sp, "fp": machine.fp})
    if machine.aarch64:
        names["lr"] = machine.ra
    return names


def _load_bias(elf: ElfImage, mapped_at: int) -> int:
    """The bias of a file whose offset 0 is mapped at `mapped_at`: that minus its first segment's address."""
    first = min((seg.vaddr - seg.offset for seg in elf.segments if seg.type == PT_LOAD), default=0)
    return mapped_at - first


def _is_the_mapped_file(elf: ElfImage, machine: str, memory: Memory, bias: int, found: str, notes: list[str]) -> bool:
    """Whether a library found here can stand for the one the process mapped: the program's machine
    (a guest's `/lib/libc.so.6` may be the host's), and the core's bytes of it, where it has them."""
    if elf.machine != machine:
        notes.append(f"{found}: a library for {elf.machine}, not {machine}: not used (give --sysroot)")
        return False
    if _same_file(elf, memory, bias) is False:  # another build than the process had: it would mislead
        notes.append(f"{found}: not the file the process had mapped (its first page differs): not used")
        return False
    return True


def _module_without_sframe(
    found: str, bias_of: Callable[[ElfImage], int], path: str, memory: Memory, notes: list[str], machine: str
) -> tuple[Module, ElfImage] | None:
    """A library with no SFrame: no steps through it, but its frames are named and said to be in it."""
    try:
        data = _whole_file(found)
    except InputError as exc:
        notes.append(f"{found}: {exc.message}: not read")
        return None
    except OSError:  # the note already says why (`Document.open` read it first)
        return None
    try:
        elf = ElfImage.of(io.BytesIO(data))  # a file: its build-id finds its debug file
        bias = bias_of(elf)
        if not _is_the_mapped_file(elf, machine, memory, bias, found, notes):
            return None
        _add_read_only_segments(memory, elf, bias)
    except Exception:  # not a readable ELF file, whatever the reader raised: the note already says why
        return None
    return _plain_module(found, elf, data, bias, path), elf


def _whole_file(path: str) -> bytes:
    """The bytes of a file read whole (a library without SFrame: its names and DWARF CFI are read from
    them), refused past `--max-size` before reading: a sparse file may say it is gigabytes, and the
    readers after this hold copies of it."""
    with open(path, "rb") as f:
        try:
            limits.check_size(os.fstat(f.fileno()).st_size, "bytes")
        except InputError as exc:
            raise exc.located(path) from None
        return f.read()


def _plain_module(found: str, elf: ElfImage, data: bytes, bias: int, library: str | None) -> Module:
    """A file with no SFrame section, read into `elf` from `data`: names and DWARF CFI, read when first asked."""
    symbols = functools.cache(lambda: unwinding_symbols(elf, found, function_symbols(io.BytesIO(data))))
    cfi = functools.cache(lambda: _cfi(elf))
    debug = functools.cache(lambda: _debug_info(elf, found))
    names, functions = _lazy_names(symbols), _lazy_functions(symbols)
    module = Module(os.path.basename(found), None, bias, names, library, cfi, functions, debug)
    module.symbol_named = MinimalSymbols(elf, found).named
    return module


def mapped_module(path: str, bias: int, library: str | None = None) -> tuple[Module, InputError | None]:
    """A file a debugger has mapped `bias` past its link addresses, as a module: with its SFrame section,
    or without one and why not (no `.sframe`, a section that cannot be read at all: its frames are named
    and said to be in it). Raises `InputError` when the file is not a readable ELF file."""
    try:
        doc = Document.open(path)
    except InputError as exc:
        try:
            data = _whole_file(path)
            elf = ElfImage.of(io.BytesIO(data))
        except OSError as error:
            raise InputError(f"cannot read it: {error.strerror or error}", path=path) from None
        return _plain_module(path, elf, data, bias, library), exc
    if doc.section is None:
        assert doc.error is not None and doc.image is not None
        return _plain_module(path, doc.image, _whole_file(path), bias, library), doc.error
    return _module(doc, bias, library), doc.error


class FilesRead:
    """The library files a walk has read, each once: a path that names a file read before (the same
    device and inode, or a file of the same bytes) gets that file's module and image, not a copy.

    A core may name one library under hundreds of paths (600 aliases of a 1.5 MB file held 1.76 GB), a
    profile map one file thousands of times. `each_mapping`: every mapping gets a module, also one at the
    place of a module already made (a profile's mappings each hold theirs); else that one is enough (a
    core's list of modules).
    """

    def __init__(self, each_mapping: bool = False) -> None:
        self.each_mapping = each_mapping
        self._by_inode: dict[tuple[int, int], tuple[Module, ElfImage]] = {}
        self._by_size: dict[int, list[tuple[str, tuple[Module, ElfImage]]]] = {}
        self._digests: dict[str, bytes] = {}

    def known(self, path: str) -> tuple[Module, ElfImage] | None:
        """What was read of the file `path` names, under this or another name; None if nothing was."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        found = self._by_inode.get((st.st_dev, st.st_ino))
        if found is not None:
            return found
        for other, read in self._by_size.get(st.st_size, []):
            if self._digest(other) == self._digest(path):
                return read
        return None

    def add(self, path: str, read: tuple[Module, ElfImage]) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        self._by_inode[st.st_dev, st.st_ino] = read
        self._by_size.setdefault(st.st_size, []).append((path, read))

    def _digest(self, path: str) -> bytes:
        """The file's SHA-256, read in pieces (computed once, and only for files of a size seen twice)."""
        if path not in self._digests:
            with open(path, "rb") as f:
                self._digests[path] = hashlib.file_digest(f, "sha256").digest()
        return self._digests[path]


def _alias(read: tuple[Module, ElfImage], bias: int, path: str, each_mapping: bool) -> Module | None:
    """The module of a file read before, for another path or place that maps it; at the same place, None
    (one module is enough there) unless `each_mapping`."""
    module, _ = read
    if bias == module.bias:
        return module if each_mapping else None
    return Module(module.name, module.section, bias, module.name_at, path, module.cfi, module.function_at)


def _lazy_names(table: Callable[[], SymbolTable]) -> Callable[[int, int], str]:
    """`name_at` of a table read when a frame is first named (a library's debug file is big)."""
    return lambda address, lookup: table().name_at(address, lookup)


def _lazy_functions(table: Callable[[], SymbolTable]) -> Callable[[int], Symbol | None]:
    """`at` (the function symbol holding an address) of a table read when first asked."""
    return lambda address: table().at(address)


def _cfi(elf: ElfImage) -> CfiTable | EhFrameIndex | None:
    """A library's DWARF CFI, for unwinding with it (`--cfi dwarf`, or where it has no SFrame data);
    None when it has none. Through `.eh_frame_hdr`, an FDE at a time, when the library has one."""
    from sfview.dwarf.cfi import DECODE_ERRORS
    from sfview.dwarf.tables import EhFrameIndex, read_cfi

    try:
        index = EhFrameIndex(elf)
        return index if index.usable else read_cfi(elf)
    except (InputError, *DECODE_ERRORS):
        return None


def _auxv_bias(doc: Document, core: Core) -> int:
    """The program's load bias from where the core's process had its entry point (`AT_ENTRY`).

    Checked against where it had its program headers (`AT_PHDR`, for a
    program with `PT_PHDR`) and against the page size: a core of another
    program fits neither, and is refused rather than unwound into nonsense.
    """
    elf = doc.image
    assert elf is not None
    bias = core.auxv[AT_ENTRY] - elf.entry
    phdr = next((seg.vaddr for seg in elf.segments if seg.type == PT_PHDR), None)
    fits = bias % PAGE_SIZE == 0
    if fits and phdr is not None and AT_PHDR in core.auxv:
        fits = core.auxv[AT_PHDR] - phdr == bias
    if not fits:
        where = f"entry point at {core.auxv[AT_ENTRY]:#x}"
        if AT_PHDR in core.auxv:
            where += f", program headers at {core.auxv[AT_PHDR]:#x}"
        raise InputError(
            f"not {core.kind} {os.path.basename(doc.path)}: the process had its {where}, "
            f"which fit no load address of this program (entry {elf.entry:#x}"
            + (f", PT_PHDR {phdr:#x})" if phdr is not None else ")"),
            path=core.path,
        )
    return bias


def _same_file(elf: ElfImage, memory: Memory, bias: int) -> bool | None:
    """Whether the process had this very file mapped at `bias`: its first page (ELF header, program
    headers, build-id note) as the core holds it is the file's. None when the core holds no such
    bytes (qemu-user's cores)."""
    first = next((seg for seg in elf.segments if seg.type == PT_LOAD and seg.offset == 0), None)
    if first is None or not first.filesz:
        return None
    expected = bytes(elf.segment_view(first, 0, PAGE_SIZE))
    held = memory.bytes_at(first.vaddr + bias, len(expected))
    if held is None:
        return None
    return held == expected or _same_build_id(elf, memory, bias)


def _same_build_id(elf: ElfImage, memory: Memory, bias: int) -> bool:
    """Whether the process holds this file's GNU build-id note where the file puts it: a `strip`ped
    copy of the file that ran (strip drops section headers and may shrink `.sframe`'s padding, so its
    first page differs) is the same build."""
    for seg in elf.segments:
        if seg.type != PT_NOTE:
            continue
        notes = elf.segment_view(seg)
        for note in elf.notes(notes):
            if note.type != NT_GNU_BUILD_ID:
                continue
            expected = bytes(notes[note.offset : note.offset + note.size])
            address = seg.vaddr + note.offset + bias
            return len(expected) == note.size and memory.bytes_at(address, len(expected)) == expected
    return False


def _check_program_bytes(doc: Document, core: Core, bias: int) -> None:
    """Refuse a core of another program where the core shows it (`_same_file`).

    Two small programs can share an entry point and program header address, so
    `AT_ENTRY` alone lets a core of one be unwound with the other's names.
    """
    elf = doc.image
    assert elf is not None
    if _same_file(elf, core.memory, bias) is False:
        raise InputError(
            f"not {core.kind} {os.path.basename(doc.path)}: the process's bytes at {bias + _first_address(elf):#x},"
            " where the core places the program's ELF header, are not this program's (another program, or"
            " another build of it)",
            path=core.path,
        )


def _first_address(elf: ElfImage) -> int:
    return min((seg.vaddr for seg in elf.segments if seg.type == PT_LOAD), default=0)


def _add_read_only_segments(memory: Memory, elf: ElfImage, bias: int) -> None:
    """The file's read-only loadable bytes as memory, where the core holds none.

    A core often leaves out what the files hold (qemu-user writes text
    segments with no bytes); read-only segments hold in the process what they
    hold in the file, so they fill that gap. Writable ones may have changed.
    """
    for seg, view in elf.read_only_loads:
        start = seg.vaddr + bias
        if memory.read(start, 1) is None and memory.read(start + seg.filesz - 1, 1) is None:
            memory.add(start, view)


def _module(doc: Document, bias: int, library: str | None = None) -> Module:
    elf = doc.image
    cfi = functools.cache(lambda: _cfi(elf) if elf is not None else None)  # a raw section has none
    name = os.path.basename(doc.path)
    if elf is None:
        return Module(name, doc.section, bias, doc.symbols.name_at, library, cfi, doc.symbols.at)
    symbols = functools.cache(lambda: unwinding_symbols(elf, doc.path, doc.symbols))
    debug = functools.cache(lambda: _debug_info(elf, doc.path))
    module = Module(name, doc.section, bias, _lazy_names(symbols), library, cfi, _lazy_functions(symbols), debug)
    module.symbol_named = MinimalSymbols(elf, doc.path).named
    return module


def _debug_info(elf: ElfImage, path: str) -> DebugInfo | None:
    """The DWARF debugging information of the file at `path` (read into `elf`): its own `.debug_info`, else
    its separate debug file's (by build-id, as gdb finds it); None when there is none (pyelftools' DWARF
    reader is imported only when there is some)."""
    candidates = [path] if elf.section(".debug_info") is not None else []
    separate = debug_file(elf, path)
    if separate is not None:
        candidates.append(separate)
    if not candidates:
        return None
    from sfview.dwarf.source import open_debug_info

    return open_debug_info(candidates)


def file_debug_info(path: str) -> DebugInfo | None:
    """The DWARF debugging information of the ELF file at `path`, as its module has it (`_debug_info`); None
    when there is none, or the file cannot be read as ELF."""
    try:
        with open(path, "rb") as f:
            elf = ElfImage.of(f)
    except (OSError, InputError):
        return None
    return _debug_info(elf, path)


def _vdso(core: Core, machine: str) -> Module | None:
    """The vDSO, read from the core's memory where `AT_SYSINFO_EHDR` says the kernel put it: its
    symbols name its frames (`clock_gettime`), its `.eh_frame` unwinds them, as gdb does."""
    start = core.auxv.get(AT_SYSINFO_EHDR)
    image = core.memory.bytes_from(start) if start else None
    if image is None or image[:4] != b"\x7fELF":
        return None
    try:
        elf = ElfImage(image)
        if elf.machine != machine:
            return None
        bias = _load_bias(elf, start)
        symbols = image_symbols(elf)
    except Exception:  # a vDSO image the core holds damaged or in part: its frames go unnamed
        return None
    return Module("[vdso]", None, bias, symbols.name_at, None, functools.cache(lambda: _cfi(elf)), symbols.at)


def from_core(program: str, core: Core, thread: int | None, lib_dirs: list[str], sysroot: str | None) -> Session:
    """The program and its libraries as the core maps them, and one thread's registers."""
    doc = Document.open(program)
    section = doc.require_section()
    machine = Machine.of(section)
    elf = doc.image
    if elf is None:
        raise InputError("needs the program's ELF file, not a raw section", path=program)
    if elf.machine != core.machine:
        raise InputError(
            f"{core.described} is of a {ELF_MACHINES.get(core.machine, core.machine)} process, the program is "
            f"{ELF_MACHINES.get(elf.machine, elf.machine)}",
            path=core.path,
        )
    notes = [f"{core.path}: {damage}" for damage in core.damaged]
    without_files = core.without_files
    mapped = core.mapped_files()
    name = os.path.basename(program)
    program_path = next((path for path in mapped if os.path.basename(path) == name), None)
    if program_path is not None:
        bias = _load_bias(elf, mapped[program_path])
    elif AT_ENTRY in core.auxv:
        bias = _auxv_bias(doc, core)
        if mapped:
            notes.append(f"the core maps no file named {name}; the program's load bias {bias:#x} comes from AT_ENTRY")
        else:
            notes.append(f"{without_files}: the program's load bias {bias:#x} comes from AT_ENTRY")
    else:
        raise InputError(
            f"the core maps no file named {name} and has no AT_ENTRY: is it a core of {name}?", path=core.path
        )
    _check_program_bytes(doc, core, bias)
    modules = [_module(doc, bias)]
    _add_read_only_segments(core.memory, elf, bias)
    libraries: list[tuple[str, Callable[[ElfImage], int]]] = [
        (path, functools.partial(_load_bias, mapped_at=start)) for path, start in mapped.items() if path != program_path
    ]
    if not mapped:
        linked = _linked_libraries(elf, bias, core.memory)
        libraries = [(path, lambda _elf, lib_bias=lib_bias: lib_bias) for path, lib_bias in linked]
        if linked:
            notes.append(f"{without_files}: {len(linked)} libraries from the dynamic linker's list in memory")
    files = FilesRead()
    for path, bias_of in libraries:
        found = _find_library(path, lib_dirs, sysroot)
        if found is None:
            notes.append(f"{path}: not found here (give --lib-dir or --sysroot)")
            continue
        module = process_module(path, found, bias_of, core.memory, notes, elf.machine, files)
        if module is not None:
            modules.append(module)
    if mapped:  # named as the dynamic linker named them, where its list says (gdb's names for them)
        linked = {lib_bias: path for path, lib_bias in _linked_libraries(elf, bias, core.memory)}
        for module in modules[1:]:
            module.library = linked.get(module.bias, module.library)
    vdso = _vdso(core, elf.machine)
    if vdso is not None:
        modules.append(vdso)
    unwinder = Unwinder(modules, machine, core.memory.read, core.pac_mask)
    return for_thread(Session(unwinder, None, {}, core.memory, notes, core.described), core, thread)


def with_program_section(started: Session, section: Section | None) -> Session:
    """The same state, the program (the first module) unwound with `section`: its section as edited in the app
    (None: one that no longer reads, which leaves the program to its DWARF CFI, as a consumer would)."""
    program, *libraries = started.unwinder.modules
    edited = Module(
        program.name, section, program.bias, program.name_at, program.library, program.cfi, program.function_at
    )
    old = started.unwinder
    unwinder = Unwinder([edited, *libraries], old.machine, old.read, old.pac_mask, old.rule_source, old.record)
    edited_session = Session(
        unwinder, started.pc, dict(started.registers), started.memory, started.notes, started.memory_from
    )
    edited_session.origin = started.origin
    return edited_session


def process_module(
    path: str,
    found: str,
    bias_of: Callable[[ElfImage], int],
    memory: Memory,
    notes: list[str],
    machine: str,
    files: FilesRead | None = None,
) -> Module | None:
    """The file a process mapped at `path`, read from `found`, as a module at the bias `bias_of` gives
    for it, its read-only segments added to `memory`; None (and why in `notes`) when it is not an ELF
    file for `machine`, or not the one the memory shows. A file without SFrame is a module without a
    section: its frames are named and unwound with its DWARF CFI. With `files`, a file read before
    under another name is not read again (None where that module already stands)."""
    if not _is_elf(found):  # a mapped data file (ld.so.cache during start-up, locale archives)
        return None
    read = files.known(found) if files is not None else None
    if read is not None:  # another name of a file read before: read once
        lib_bias = bias_of(read[1])
        alias = _alias(read, lib_bias, path, files.each_mapping)
        if alias is None or not _is_the_mapped_file(read[1], machine, memory, lib_bias, found, notes):
            return None
        _add_read_only_segments(memory, read[1], lib_bias)
        return alias
    try:
        lib = Document.open(found)
    except InputError as exc:
        notes.append(f"{found}: {exc.message}")
        without = _module_without_sframe(found, bias_of, path, memory, notes, machine)
        if without is not None and files is not None:
            files.add(found, without)
        return without[0] if without is not None else None
    assert lib.image is not None
    lib_bias = bias_of(lib.image)
    if not _is_the_mapped_file(lib.image, machine, memory, lib_bias, found, notes):
        return None
    _add_read_only_segments(memory, lib.image, lib_bias)
    module = _module(lib, lib_bias, path)
    if files is not None:
        files.add(found, (module, lib.image))
    return module


def for_thread(started: Session, core: Core, thread: int | None) -> Session:
    """The same program, libraries and memory, with one thread's registers: every thread of a core
    walked without reading the files again (reading them for each thread takes minutes on a core of
    thousands of threads). `thread` as a person gives it: gdb's number, else an LWP (`of_thread` for a
    thread already found)."""
    return of_thread(started, core, _thread(core, thread))


def of_thread(started: Session, core: Core, state: Thread) -> Session:
    """`for_thread` for one of `core.threads`: a thread's LWP at most its count is also a gdb number (a
    process in a container numbers its threads from 1), and names another thread as one."""
    numbers = register_numbers(started.unwinder.machine)
    registers = {numbers[n]: v for n, v in state.registers.items() if n in numbers}
    pc = state.registers[core.pc_name]
    return Session(started.unwinder, pc, registers, started.memory, started.notes, started.memory_from)


def _thread(core: Core, thread: int | None):
    """The thread `thread` names: gdb's number for it (1 to the count, in the core's order, as
    `thread apply all bt` prints `Thread 3 (… LWP 26800)`), else its id (the LWP); if none, the one that
    stopped the process where it is known, else the first."""
    if thread is None:
        return next((t for t in core.threads if t.tid == core.stopped_thread), core.threads[0])
    if 1 <= thread <= len(core.threads):
        return core.threads[thread - 1]
    for state in core.threads:
        if state.tid == thread:
            return state
    tids = ", ".join(str(t.tid) for t in core.threads)
    numbers = "1" if len(core.threads) == 1 else f"1 to {len(core.threads)}"
    raise InputError(
        f"no thread {thread} in {core.described} (gdb's numbers {numbers}, or LWPs {tids})", path=core.path
    )


def _linked_libraries(elf: ElfImage, bias: int, memory: Memory) -> list[tuple[str, int]]:
    """For a core without `NT_FILE` (qemu-user's): the libraries the dynamic linker had loaded, with
    their load biases, from its list in the process's memory."""
    dynamic = next((seg for seg in elf.segments if seg.type == PT_DYNAMIC), None)
    if dynamic is None:  # a static program
        return []
    return loaded_objects(memory.read, memory.little_endian, dynamic.vaddr + bias, dynamic.memsz)


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _find_library(path: str, lib_dirs: list[str], sysroot: str | None) -> str | None:
    candidates = [os.path.join(d, os.path.basename(path)) for d in lib_dirs]
    if sysroot:
        candidates.append(os.path.join(sysroot, path.lstrip("/")))
    candidates.append(path)
    return next((c for c in candidates if os.path.isfile(c)), None)


def typed(doc: Document, bias: int = 0) -> Session:
    """Nothing known yet: the program (loaded `bias` past its link addresses), no registers, no memory."""
    machine = Machine.of(doc.require_section())
    memory = Memory()
    return Session(Unwinder([_module(doc, bias)], machine, memory.read), None, {}, memory)


def from_registers(program: str, typed: dict[str, int], words: dict[int, int], bias: int = 0) -> Session:
    """The program (loaded `bias` past its link addresses), registers and memory words as a person typed them."""
    doc = Document.open(program)
    machine = Machine.of(doc.require_section())
    numbers = register_numbers(machine)
    pc = typed.pop("pc", None)
    if pc is None:
        pc = typed.pop("rip", None)
    if pc is None:
        raise InputError("--regs needs pc=ADDRESS")
    unknown = sorted(set(typed) - set(numbers))
    if unknown:
        raise InputError(
            f"--regs: no register named {', '.join(unknown)} here (known: sp, fp, {'lr, ' if machine.aarch64 else ''}…)"
        )
    registers = {numbers[n]: v for n, v in typed.items()}
    memory = Memory()
    memory.words.update(words)
    module = _module(doc, bias)
    unwinder = Unwinder([module], machine, memory.read)
    return Session(unwinder, pc, registers, memory, _bias_hint(doc, module, pc, bias))


def _bias_hint(doc: Document, module: Module, pc: int, bias: int) -> list[str]:
    """A note when a PIE's PC was given without `--bias` and falls outside the file's addresses: no
    FDE covers it, SFrame's or DWARF's."""
    elf = doc.image
    if elf is None or elf.type != "ET_DYN" or bias or doc.require_section().find_function(pc) is not None:
        return []
    table = module.cfi() if module.cfi is not None else None
    if table is not None and table.find(pc) is not None:
        return []
    return [
        f"{os.path.basename(doc.path)} is position-independent (ET_DYN) and no FDE covers pc {pc:#x} at its link"
        " addresses: give --bias with its load address (the start of its first mapping, as /proc/PID/maps"
        " or gdb's `info proc mappings` show it)"
    ]
