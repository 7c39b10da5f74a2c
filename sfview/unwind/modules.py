"""The loaded modules of a process: the program and the shared libraries a core maps.

Each module is one ELF file at one load bias, with its own SFrame section
(addresses already biased, so lookups take run-time PCs) and symbols (at
link-time addresses). A module whose file has no SFrame is still a module:
a frame in it is reported as "no SFrame", not as unknown code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from elftools.elf.elffile import ELFFile

from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.core import AT_ENTRY, AT_PHDR, MACHINES, Core, Memory
from sfview.sframe.section import Section


@dataclass
class Module:
    """One ELF file mapped at `bias` (run-time address = link-time address + bias)."""

    path: str
    bias: int
    start: int
    end: int
    document: Document | None
    """None when the file has no SFrame bytes (or no readable ones): `why` says which."""
    why: str = ""

    @property
    def section(self) -> Section | None:
        return self.document.section if self.document is not None else None

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    def symbol(self, pc: int) -> str:
        """`leaf` or `leaf+0x12` for a run-time PC, "" when no symbol covers it."""
        if self.document is None:
            return ""
        symbol = self.document.symbols.at(pc - self.bias)
        return symbol.name if symbol is not None else ""


class Modules:
    """The modules of a process, found by run-time address."""

    def __init__(self, modules: list[Module]) -> None:
        self.modules = sorted(modules, key=lambda m: m.start)

    def __iter__(self):
        return iter(self.modules)

    def at(self, pc: int) -> Module | None:
        for module in self.modules:
            if module.start <= pc < module.end:
                return module
        return None


def open_module(path: str, bias: int, memory: Memory | None = None) -> Module:
    """`path` loaded at `bias`; its loadable segments' file bytes become readable memory too.

    Raises `InputError` (naming the file) when it is not a readable ELF file.
    """
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
            if memory is not None:
                for seg in loads:
                    memory.add(seg["p_vaddr"] + bias, seg.data())
            start = min((s["p_vaddr"] for s in loads), default=0) + bias
            end = max((s["p_vaddr"] + s["p_memsz"] for s in loads), default=0) + bias
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), path=path) from None
    except Exception as exc:  # pyelftools has no single error type
        raise InputError(f"not a readable ELF file: {exc or type(exc).__name__}", path=path) from None
    try:
        document: Document | None = Document.open(path)
        assert document is not None
        if document.section is None:
            return Module(path, bias, start, end, None, str(document.error))
        address = document.source.address + bias
        document = Document.open(path, address)
    except InputError as exc:
        return Module(path, bias, start, end, None, exc.message)
    return Module(path, bias, start, end, document)


def elf_machine(path: str) -> tuple[str, int, int | None]:
    """(architecture, e_entry, PT_PHDR p_vaddr) of an ELF file, for checking it against a core."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            phdr = next((s["p_vaddr"] for s in elf.iter_segments() if s["p_type"] == "PT_PHDR"), None)
            return MACHINES.get(elf["e_machine"], elf["e_machine"]), elf["e_entry"], phdr
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), path=path) from None
    except Exception as exc:  # pyelftools has no single error type
        raise InputError(f"not a readable ELF file: {exc or type(exc).__name__}", path=path) from None


def _first_load(path: str) -> int:
    """Link-time address of the file's start (the PT_LOAD mapping file offset 0)."""
    with open(path, "rb") as f:
        for seg in ELFFile(f).iter_segments():
            if seg["p_type"] == "PT_LOAD":
                return seg["p_vaddr"] - seg["p_offset"]
    return 0


def find_file(path: str, lib_dirs: list[str], sysroot: str | None) -> str | None:
    """Where a mapped file can be read here: `--sysroot` + path, each `--lib-dir`, then the path itself."""
    candidates = []
    if sysroot:
        candidates.append(os.path.join(sysroot, path.lstrip("/")))
    candidates += [os.path.join(d, os.path.basename(path)) for d in lib_dirs]
    candidates.append(path)
    return next((c for c in candidates if os.path.isfile(c)), None)


def core_modules(program: str, core: Core, lib_dirs: list[str], sysroot: str | None) -> tuple[Modules, list[str]]:
    """The program and the libraries `core` maps, each at its bias; and notes on files not found.

    The program's bias comes from `NT_FILE` (its mapping at file offset 0),
    else from `NT_AUXV` (`AT_ENTRY` - `e_entry`, checked against `AT_PHDR`).
    """
    arch, entry, phdr = elf_machine(program)
    if arch != core.arch:
        raise InputError(f"a {arch} program, but the core {core.path} is of an {core.arch} process", path=program)
    notes: list[str] = []
    bias = _program_bias(program, core, entry, phdr)
    modules = [open_module(program, bias, core.memory)]
    seen = {os.path.realpath(program)}
    by_path: dict[str, int] = {}
    for mapping in core.mappings:
        if mapping.file_offset == 0 and mapping.path not in by_path:
            by_path[mapping.path] = mapping.start
    prog_name = os.path.basename(program)
    for path, start in by_path.items():
        if os.path.basename(path) == prog_name or path.startswith("["):
            continue
        found = find_file(path, lib_dirs, sysroot)
        if found is None:
            notes.append(f"{path}: not found (give --lib-dir or --sysroot)")
            continue
        if os.path.realpath(found) in seen:
            continue
        seen.add(os.path.realpath(found))
        try:
            modules.append(open_module(found, start - _first_load(found), core.memory))
        except InputError as exc:
            notes.append(str(exc))
    return Modules(modules), notes


def _program_bias(program: str, core: Core, entry: int, phdr: int | None) -> int:
    name = os.path.basename(program)
    starts = [m.start for m in core.mappings if m.file_offset == 0 and os.path.basename(m.path) == name]
    if starts:
        return min(starts) - _first_load(program)
    if core.mappings:
        raise InputError(f"the core {core.path} maps no file named {name}: a core of another program?", path=program)
    if AT_ENTRY not in core.auxv:
        return 0
    bias = core.auxv[AT_ENTRY] - entry
    if phdr is not None and AT_PHDR in core.auxv and core.auxv[AT_PHDR] - phdr != bias:
        raise InputError(
            f"the core's entry point ({core.auxv[AT_ENTRY]:#x}) and program headers ({core.auxv[AT_PHDR]:#x}) "
            f"do not fit this program (entry {entry:#x}, PT_PHDR {phdr:#x}): a core of another program?",
            path=program,
        )
    return bias
