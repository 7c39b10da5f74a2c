"""What gdb knows of the process, as sfview's unwinder takes it: the objfiles and their load biases, the
registers of a frame, the memory.

Everything is read through gdb's Python API (`gdb.objfiles`, `info files` for where each file's
sections are mapped, `Frame.read_register`, `Inferior.read_memory`), so the same code serves a live
process, a core and a remote target; nothing here writes to the inferior. The files are opened once
a gdb session (`Objfiles` keeps each module by path, load bias and modification time).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import NamedTuple

import gdb

from sfview import ADDRESS_MASK
from sfview.errors import InputError
from sfview.sframe.model import terms
from sfview.unwind.engine import Machine, Module, RuleSource, Unwinder
from sfview.unwind.session import mapped_module

SECTION_LINE = re.compile(r"^\s*0x([0-9a-f]+) - 0x[0-9a-f]+ is (\S+)(?: in (.+))?$")
"""A line of `info files`: `0x0000555555555050 - 0x0000555555555207 is .text in /lib/…/libc.so.6`."""


class Mapped(NamedTuple):
    """One file gdb has loaded, where it is, and what sfview makes of it."""

    path: str
    bias: int
    module: Module
    problem: InputError | None
    """Why its SFrame data cannot be used (none in the file, a section that cannot be read), or None."""


class NoSframe(Exception):
    """Nothing to walk with: no objfile gdb has loaded has a usable `.sframe` (the message says which it looked at)."""


def mapped_sections() -> dict[str | None, dict[str, int]]:
    """Where gdb has each file's sections: file path (None for the program) → section name → address."""
    found: dict[str | None, dict[str, int]] = {}
    for line in gdb.execute("info files", to_string=True).splitlines():
        match = SECTION_LINE.match(line)
        if match:
            start, name, path = match.groups()
            found.setdefault(path, {}).setdefault(name, int(start, 16))
    return found


class Objfiles:
    """The files gdb has loaded, opened once each (by path, load bias and modification time) for the whole
    gdb session."""

    def __init__(self) -> None:
        self.opened: dict[tuple[str, int, int], tuple[Module, InputError | None]] = {}
        self.current: list[Mapped] | None = None
        self.walkers: dict[RuleSource, Unwinder] = {}
        """The unwinder over `current`, by the rules it follows."""
        self.unreadable: dict[str, str] = {}
        """Files that are not readable ELF files, and why (said once, by `sframe check`)."""

    def mapped(self) -> list[Mapped]:
        """Every file gdb has loaded (not separate debug files, not the vDSO, which is no file here), in
        gdb's order, with its load bias from where gdb has its sections; found again after gdb loads or
        drops a file (`forget`), else the list found last (the unwinder asks for every frame)."""
        if self.current is None:
            self.current = self._find()
        return self.current

    def forget(self, *_event: object) -> None:
        """gdb loaded or dropped files, or a process started or ended: find them again when next asked."""
        self.current = None
        self.walkers = {}

    def _find(self) -> list[Mapped]:
        sections = mapped_sections()
        program = gdb.current_progspace().filename
        result = []
        for objfile in gdb.objfiles():
            path = objfile.filename
            if objfile.owner is not None or not path or not os.path.isfile(path):
                continue
            where = sections.get(None if path == program else path, {})
            if path in self.unreadable:
                continue
            bias = self._bias(path, where)
            if bias is None:
                continue
            key = (path, bias, os.stat(path).st_mtime_ns)  # a program rebuilt since is read again
            if key not in self.opened:
                try:
                    self.opened[key] = mapped_module(path, bias, None if path == program else path)
                except InputError as exc:
                    self.unreadable[path] = str(exc)
                    continue
            module, problem = self.opened[key]
            result.append(Mapped(path, bias, module, problem))
        return result

    def _bias(self, path: str, where: dict[str, int]) -> int | None:
        """The file's load bias: where gdb has one of its sections, less the section's own address."""
        from sfview.inputs.elf.image import ElfImage

        if not where:
            return None
        try:
            with open(path, "rb") as f:
                elf = ElfImage.of(f)
                for header in elf.sections:
                    if header.addr and header.name in where:
                        return (where[header.name] - header.addr) & ADDRESS_MASK
        except (OSError, InputError) as exc:
            self.unreadable[path] = str(exc)
        return None


OBJFILES = Objfiles()
"""The files of this gdb session."""
for _event in (gdb.events.new_objfile, gdb.events.clear_objfiles, gdb.events.exited, gdb.events.new_inferior):
    _event.connect(OBJFILES.forget)


def memory_reader(machine: Machine) -> Callable[[int], int | None]:
    """Reads an 8-byte word of the selected inferior's memory (None where gdb has none)."""
    inferior = gdb.selected_inferior()
    order = "big" if machine.big_endian else "little"

    def read(address: int) -> int | None:
        try:
            return int.from_bytes(inferior.read_memory(address, 8).tobytes(), order)
        except (gdb.MemoryError, gdb.error, OverflowError, ValueError):
            return None

    return read


def unwinder(rule_source: RuleSource = RuleSource.SFRAME) -> tuple[Unwinder, list[Mapped]]:
    """An unwinder over every file gdb has loaded, reading gdb's memory (made once until gdb loads or drops
    a file); raises `NoSframe` when no file has SFrame data to walk with."""
    mapped = OBJFILES.mapped()
    made = OBJFILES.walkers.get(rule_source)
    if made is not None:
        return made, mapped
    first = next((m.module.section for m in mapped if m.module.section is not None), None)
    if first is None:
        looked = ", ".join(os.path.basename(m.path) for m in mapped) or "none"
        damaged = next((m.problem for m in mapped if m.problem is not None and m.problem.offset is not None), None)
        why = f"; {damaged}" if damaged is not None else ""
        raise NoSframe(f"no file gdb has loaded has a usable .sframe section (looked at: {looked}){why}")
    machine = Machine.of(first)
    made = Unwinder([m.module for m in mapped], machine, memory_reader(machine), rule_source=rule_source)
    OBJFILES.walkers[rule_source] = made
    return made, mapped


def register_values(read: Callable[[str], gdb.Value], machine: Machine) -> dict[int, tuple[int, gdb.Value]]:
    """The registers `read` (a frame's or a pending frame's `read_register`) gives, by DWARF number: each
    as a number and as gdb's value; those gdb does not have (`<not saved>`, `<unavailable>`) left out."""
    found = {}
    for number, name in register_names(machine.abi).items():
        try:
            value = read(name)
            if not value.is_optimized_out:
                found[number] = (int(value) & ADDRESS_MASK, value)
        except (gdb.error, ValueError):
            continue
    return found


@functools.cache
def register_names(abi: int) -> dict[int, str]:
    """The ABI's registers by DWARF number → their names, which gdb's are (`rsp`, `x29`): worked out once,
    not at each of the frames the unwinder is asked for."""
    return {int(reg): reg.name for reg in terms.registers(abi)}


def registers(read: Callable[[str], gdb.Value], machine: Machine) -> dict[int, int]:
    """The registers `read` gives, by DWARF number, as numbers (`register_values`)."""
    return {number: value for number, (value, _) in register_values(read, machine).items()}


def require_inferior() -> None:
    """Raise `gdb.GdbError` when there are no registers to start from (no process, no core)."""
    if not gdb.selected_inferior().pid and not has_frames():
        raise gdb.GdbError("sframe: no process and no core: run the program, attach, or load a core first")


def has_frames() -> bool:
    """Whether gdb has a selected frame (a process, or a core)."""
    try:
        gdb.selected_frame()
    except gdb.error:
        return False
    return True
