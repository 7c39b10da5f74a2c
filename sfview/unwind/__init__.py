"""The unwinder: a thread's stack, frame by frame, from SFrame sections (no UI here)."""

from __future__ import annotations

import os

from sfview.errors import InputError
from sfview.inputs.core import Memory, Thread, parse_mem, parse_regs, read_core
from sfview.unwind.engine import Abi, Unwinder, abi_of
from sfview.unwind.modules import Modules, core_modules, elf_machine, open_module
from sfview.unwind.state import Backtrace

__all__ = ["Backtrace", "unwind_core", "unwind_regs"]


def _abi(modules: Modules, arch: str) -> Abi:
    for module in modules:
        if module.section is not None:
            return abi_of(module.section)
    raise InputError(f"no SFrame section in {', '.join(m.name for m in modules)}: nothing to unwind with")


def unwind_core(
    program: str,
    core_path: str,
    thread: int = 1,
    lib_dirs: list[str] | None = None,
    sysroot: str | None = None,
    pac_mask: int | None = None,
) -> Backtrace:
    """The backtrace of thread `thread` (from 1) of `core_path`, a core of `program`."""
    core = read_core(core_path)
    modules, notes = core_modules(program, core, lib_dirs or [], sysroot)
    unwinder = Unwinder(modules, core.memory, _abi(modules, core.arch), core.pac_mask or pac_mask)
    trace = unwinder.backtrace(core.thread(thread))
    trace.notes = notes + trace.notes
    return trace


def unwind_regs(program: str, regs: str, mem: list[str], pac_mask: int | None = None) -> Backtrace:
    """The backtrace from registers a person typed, with memory words they typed and the program's own bytes."""
    arch, _, _ = elf_machine(program)
    memory = Memory()
    module = open_module(program, 0)
    if module.section is None:
        raise InputError(module.why, path=program)
    abi = abi_of(module.section)
    parse_mem(mem, abi.little_endian, memory)
    open_module(program, 0, memory)  # the program's bytes after the typed words
    thread: Thread = parse_regs(regs, arch)
    trace = Unwinder(Modules([module]), memory, abi, pac_mask).backtrace(thread)
    if not os.path.isabs(program):
        trace.notes.append("no core: the program is taken to be loaded at its link-time addresses")
    return trace
