"""More references for the unwinder: binutils' own libsframe, gdb on more cores, and cores of other programs.

- The row the unwinder uses at every PC of every function is the one
  binutils 2.40's libsframe (`sframe_find_fre`, loaded from this machine's
  `libsframe.so.0` with ctypes) returns, wherever libsframe returns one, at
  the same place of the first 16-byte block for a PLT.
- PCMASK (PLT) functions are the exception, and gdb is the reference there:
  version 1 has no block size, and libsframe 2.40 matches rows against the
  address's low byte (`bitmask = 0xff`, "for AMD64, the pltN entry stub is 16
  bytes"), so at the first byte of the second PLT entry it returns the row at
  offset 0xb (CFA sp+16) where the stack holds only the return address (gdb:
  CFA sp+8). The format's rule, which the unwinder follows, is the PC's
  offset modulo the 16-byte entry (version 2 writes that size down as
  `rep_size`); cores stopped at the first instruction of the 2nd, 3rd and last
  PLT entries unwind as gdb unwinds them. What libsframe 2.40 does instead is
  its profile's business (`check --profile libsframe-2.40`).
- The AArch64 fixture core against the gdb-multiarch backtrace shipped with it.
- pac-ret past where gdb-multiarch stops: the same binary run again with
  pointer authentication off (`-cpu max,pauth=off`: the same code, the same
  call chain, unsigned return addresses) gives gdb a core it unwinds to
  `main`; sfview unwinds the signed one, and every frame must agree.
- A core of another program is refused, one line, exit 2.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process
from test_unwind import _aarch64_program, _gdb_core, _gdb_multiarch, _qemu_core, gdb_frames, need, our_frames

from sfview.document import Document
from sfview.inputs.core import read_core
from sfview.unwind.engine import Frame, Machine, Module, Unwinder

V1_BINARIES = ["deep-x86_64", "shapes-x86_64-O2", "shapes-x86_64-O0-fp", "libshapes-x86_64.so", "shapes-aarch64-O2"]
PLT_PROGRAM = """
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int c, char **v) {
    char b[64]; snprintf(b, sizeof b, "%d", c); puts(b); printf("%zu\\n", strlen(v[0])); write(1, "x\\n", 2);
    return atoi(b);
}
"""


class LibSframe:
    """binutils' decoder, as far as the test needs it: decode a section, find the FRE for a PC."""

    def __init__(self) -> None:
        path = ctypes.util.find_library("sframe") or "libsframe.so.0"
        try:
            self.lib = ctypes.CDLL(path)
        except OSError:
            pytest.skip("libsframe.so.0 (binutils' SFrame decoder) is not installed")
        lib = self.lib
        lib.sframe_decode.restype = ctypes.c_void_p
        lib.sframe_decode.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]
        lib.sframe_find_fre.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p]
        lib.sframe_fre_get_cfa_offset.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        lib.sframe_fre_get_cfa_offset.restype = ctypes.c_int32
        lib.sframe_decoder_free.argtypes = [ctypes.POINTER(ctypes.c_void_p)]

    def rows(self, data: bytes, pcs: range) -> dict[int, tuple[int, int] | None]:
        """pc (relative to the section, as libsframe takes it) → (FRE start offset, CFA offset), None if no FRE."""
        err = ctypes.c_int()
        ctx = ctypes.c_void_p(self.lib.sframe_decode(data, len(data), ctypes.byref(err)))
        assert ctx.value, f"libsframe cannot decode the section (error {err.value})"
        out: dict[int, tuple[int, int] | None] = {}
        fre = ctypes.create_string_buffer(64)  # sframe_frame_row_entry is 20 bytes in 2.40
        for pc in pcs:
            if self.lib.sframe_find_fre(ctx, pc, fre) != 0:
                out[pc] = None
                continue
            cfa = self.lib.sframe_fre_get_cfa_offset(ctx, fre, ctypes.byref(err))
            out[pc] = (int.from_bytes(fre.raw[:4], "little"), cfa)
        self.lib.sframe_decoder_free(ctypes.byref(ctx))
        return out


@pytest.fixture(scope="module")
def libsframe() -> LibSframe:
    return LibSframe()


def _unwinder_rows(path: Path, pcs: range) -> dict[int, tuple[int, int] | None]:
    """pc (relative to the section) → (FRE start offset, CFA offset) the unwinder uses for a first frame there."""
    doc = Document.open(str(path))
    section = doc.require_section()
    machine = Machine.of(section)
    unwinder = Unwinder([Module(path.name, section, 0, doc.symbols.name_at)], machine, lambda _: None)
    out: dict[int, tuple[int, int] | None] = {}
    for pc in pcs:
        frame = Frame(0, section.address + pc, {machine.sp: 0x7FF000, machine.fp: 0x7FF100})
        unwinder.step(frame)
        out[pc] = (frame.row.start_offset, frame.row.cfa.offset) if frame.row is not None else None
    return out


def _compare(libsframe: LibSframe, path: Path) -> int:
    """Compare at every PC inside a function; returns how many PCs libsframe answered for."""
    doc = Document.open(str(path))
    section = doc.require_section()
    assert section.version == 1, "libsframe 2.40 reads version 1 only"
    functions = list(section.functions())
    pcs = [pc - section.address for f in functions for pc in range(f.start_address, f.start_address + f.size)]
    span = range(min(pcs), max(pcs) + 1)
    theirs, ours = libsframe.rows(doc.data, span), _unwinder_rows(path, span)
    # PCMASK (PLT) bytes: libsframe's row at the same place of the first 16-byte entry (see the doc)
    first_block = {
        pc - section.address: f.start_address + (pc - f.start_address) % 16 - section.address
        for f in functions
        if f.pcmask
        for pc in range(f.start_address, f.end_address)
    }
    differ = {
        hex(pc + section.address): (theirs[first_block.get(pc, pc)], ours[pc])
        for pc in pcs
        if theirs[first_block.get(pc, pc)] != ours[pc]
    }
    assert not differ, f"(libsframe, sfview) differ at {len(differ)} PCs: {dict(list(differ.items())[:8])}"
    return sum(1 for pc in pcs if theirs[pc] is not None)


@pytest.mark.parametrize("name", V1_BINARIES)
def test_rows_are_the_ones_libsframe_finds(libsframe: LibSframe, name: str) -> None:
    assert _compare(libsframe, DATA / name) > 100


@pytest.fixture(scope="module")
def lazy_plt_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A non-PIE program with lazy binding whose main calls through five PLT entries."""
    need("gcc", "gdb")
    program = tmp_path_factory.mktemp("plt") / "plt"
    subprocess.run(
        ["gcc", "-O2", "-Wa,--gsframe", "-fno-pie", "-no-pie", "-Wl,-z,lazy", "-x", "c", "-", "-o", str(program)],
        input=PLT_PROGRAM,
        text=True,
        check=True,
    )
    return program


@pytest.mark.parametrize("entry", [2, 3, -1])
def test_a_core_stopped_in_a_version_1_plt_entry_unwinds_as_gdb_does(
    lazy_plt_program: Path, tmp_path: Path, entry: int
) -> None:
    """Stopped at the first instruction of the 2nd, 3rd and last PLT entry (the PLT's own first 16 bytes
    are PLT0, with an FDE of its own): the row is the block's first, CFA sp+8, and the caller is main."""
    doc = Document.open(str(lazy_plt_program))
    section = doc.require_section()
    plt = next(f for f in section.functions() if f.pcmask)
    assert section.version == 1 and plt.rep_size == 0 and plt.block_size == 16
    entries = list(range(plt.start_address, plt.end_address, 16))
    assert len(entries) >= 5, "several PLT entries under one PCMASK FDE"
    address = entries[entry - 1 if entry > 0 else entry]
    core, bt = _gdb_core(lazy_plt_program, tmp_path, where=f"*{address:#x}")
    expected = gdb_frames(bt, pc=address)
    assert expected[0][0] == address and expected[-1][1] == "main", bt
    result = run_process("unwind", str(lazy_plt_program), "--core", str(core), "--explain")
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
    assert "% 16 (version 1: no rep_size, the AMD64 PLT entry's) = 0x0" in result.stdout


def test_version_1_plt_rows_repeat_every_16_bytes(libsframe: LibSframe, lazy_plt_program: Path) -> None:
    """Several PLT entries under one PCMASK FDE, version 1 (no block size): libsframe 2.40 does no
    modulo; the unwinder takes the x86-64 PLT's 16 bytes."""
    program = lazy_plt_program
    doc = Document.open(str(program))
    plt = next(f for f in doc.require_section().functions() if f.pcmask)
    assert plt.size >= 48, "several PLT entries"
    _compare(libsframe, program)
    second_entry = _unwinder_rows(
        program, range(plt.start_address + 16 - doc.section.address, plt.start_address + 17 - doc.section.address)
    )
    assert list(second_entry.values()) == [(0, 8)], "the second entry's first byte: the first entry's first row"
    section_pc = plt.start_address + 16 - doc.section.address
    assert libsframe.rows(doc.data, range(section_pc, section_pc + 1)) == {section_pc: (0xB, 16)}, "libsframe 2.40's"


# gdb on more cores -------------------------------------------------------------------


def test_the_aarch64_fixture_core_unwinds_as_gdb_multiarch_did() -> None:
    result = run_process("unwind", str(DATA / "deep-aarch64"), "--core", str(DATA / "deep-aarch64.core"))
    assert result.returncode == 0, result.stderr
    bt = (DATA / "deep-aarch64.core.gdb-bt.txt").read_text()
    expected = gdb_frames(bt)
    assert [name for _, name in expected] == ["stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main"]
    assert our_frames(result.stdout) == expected


@pytest.mark.parametrize("flags", [["-O2"], ["-O0", "-fno-omit-frame-pointer"], ["-Os"]])
def test_pac_ret_unwinds_to_main_as_gdb_does_without_signatures(tmp_path: Path, flags: list[str]) -> None:
    program = _aarch64_program(tmp_path, *flags, "-mbranch-protection=pac-ret")
    (tmp_path / "signed").mkdir()
    (tmp_path / "unsigned").mkdir()
    signed = _qemu_core(program, tmp_path / "signed", cpu="max")
    unsigned = _qemu_core(program, tmp_path / "unsigned", cpu="max,pauth=off")
    expected = gdb_frames(_gdb_multiarch(program, unsigned))
    assert [name for _, name in expected][-1] == "main" and len(expected) >= 5
    result = run_process("unwind", str(program), "--core", str(signed), "--explain")
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
    stripped = re.findall(r"(0x[0-9a-f]+) & (0x[0-9a-f]+) = (0x[0-9a-f]+)", result.stdout)
    assert stripped and all(int(raw, 16) & int(mask, 16) == int(plain, 16) for raw, mask, plain in stripped)
    # A pointer authentication code here is 7 bits (48..54) with a key qemu draws at random for each run,
    # so any one signed return address has a 1-in-128 chance of a code of zero (CI met one). Signed
    # pointers must show, but not necessarily every one of them.
    assert any(raw != plain for raw, _, plain in stripped), "the core's return addresses were signed"
    # DWARF CFI alone: `DW_CFA_AARCH64_negate_ra_state` replayed (cfi.py, shared with compare), the RA stripped
    dwarf = run_process("unwind", str(program), "--core", str(signed), "--cfi", "dwarf", "--explain")
    assert dwarf.returncode == 0, dwarf.stderr
    assert our_frames(dwarf.stdout) == expected
    assert "DWARF CFI: the FDE at .eh_frame" in dwarf.stdout and "RA signed: strip the PAC bits" in dwarf.stdout


# Cores of other programs ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("program", "core"),
    [
        ("shapes-x86_64-O2", "deep-x86_64.core"),  # NT_FILE names deep-x86_64 only
        ("libshapes-x86_64.so", "deep-x86_64.core"),
        ("shapes-aarch64-O2", "deep-aarch64.core"),  # qemu: no NT_FILE, AT_ENTRY and AT_PHDR do not fit
    ],
)
def test_a_core_of_another_program_is_refused(program: str, core: str) -> None:
    result = run_process("unwind", str(DATA / program), "--core", str(DATA / core))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        f"sfview: {DATA / core}: not a core of {program}: the process had its entry point at "
        + result.stderr.split("entry point at ")[1].strip()
    )
    assert "which fit no load address of this program" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# Memory from the files -----------------------------------------------------------------


def test_read_only_bytes_of_the_program_fill_what_the_core_left_out() -> None:
    """qemu's core has no bytes for the program's text; the program file has them: `str w2, [x0]` at the fault."""
    from sfview.inputs.core import read_core
    from sfview.unwind import session

    core = read_core(str(DATA / "deep-aarch64.core"))
    assert core.memory.read(0x4006F4, 4) is None
    started = session.from_core(str(DATA / "deep-aarch64"), core, None, [], None)
    assert started.memory.read(0x4006F4, 4) == 0xB9000002  # as aarch64-linux-gnu-objdump -d shows it
    stack = started.registers[started.unwinder.machine.sp]
    assert started.memory.read(stack) == read_core(str(DATA / "deep-aarch64.core")).memory.read(stack)


# Every thread of a core --------------------------------------------------------------------

OURS_ALL = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) \(", re.M)
"""sfview's frame lines; with `--no-inline`, one a physical frame (frame 0's address left out where a line
starts there, as gdb does)."""
GDB_THREAD = re.compile(r"^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)", re.M)


GDB_PHYSICAL = """
import gdb
for thread in gdb.selected_inferior().threads():
    thread.switch()
    frame = gdb.newest_frame()
    while frame is not None:
        if frame.type() in (gdb.NORMAL_FRAME, gdb.SIGTRAMP_FRAME):
            print("frame", thread.ptid[1], hex(frame.pc()), frame.name())
        frame = frame.older()
"""


def _gdb_physical_frames(program: Path, core: Path) -> dict[int, list[tuple[int, str]]]:
    """gdb's frames of each thread that are frames on the stack, (PC, name): not the inlined and tail-call
    frames it adds from debug info (libc's, when its debug symbols are installed), which no CFI describes."""
    script = core.with_suffix(".py")
    script.write_text(GDB_PHYSICAL)
    out = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", f"source {script}", str(program), str(core)],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    frames: dict[int, list[tuple[int, str]]] = {}
    for line in out.splitlines():
        if line.startswith("frame "):
            _, tid, pc, name = line.split()
            frames.setdefault(int(tid), []).append((int(pc, 16), name))
    return frames


def _ours_physical(text: str, pc: int) -> list[tuple[int, str]]:
    """(PC, name) of each frame of `sfview unwind --no-inline`; frame 0's PC, where it is left out, `pc`."""
    return [(int(address, 16) if address else pc, name) for _, address, name in OURS_ALL.findall(text)]


def test_every_thread_unwinds_as_gdb_does_as_far_as_sframe_goes(tmp_path: Path) -> None:
    """With SFrame alone (`--cfi sframe`), each thread's frames agree with gdb's until the walk reaches
    libc, which has no SFrame here (nor frame pointers): the walk then stops saying so, the frame in libc
    named from libc's symbols. By default libc's frames are unwound with its DWARF CFI, and every frame
    of every thread is gdb's."""
    need("gcc", "gdb")
    program = tmp_path / "threads"
    subprocess.run(
        ["gcc", "-O2", "-g", "-Wa,--gsframe", "-pthread", str(DATA / "src" / "threads.c"), "-o", str(program)],
        check=True,
    )
    core = tmp_path / "threads.core"
    gdb = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "break stop_here", "-ex", "run", "-ex", f"generate-core-file {core}",
         "-ex", "thread apply all bt", str(program)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert core.exists(), gdb.stderr
    physical = _gdb_physical_frames(program, core)
    parts = GDB_THREAD.split(gdb.stdout)
    per_thread = {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}
    pcs = {thread.tid: thread.registers["rip"] for thread in read_core(str(core)).threads}
    assert sorted(per_thread) == sorted(pcs)
    program_functions = {"stop_here", "worker_a", "park", "worker_b", "main"}
    seen: set[str] = set()
    for tid, bt in per_thread.items():
        gdb_physical = physical[tid]
        whole = run_process("unwind", str(program), "--core", str(core), "--thread", str(tid), "--no-inline")
        assert whole.returncode == 0, whole.stderr
        everything = _ours_physical(whole.stdout, pcs[tid])
        # (gdb stops at main; past it, sfview goes on to _start)
        assert [pc for pc, _ in everything[: len(gdb_physical)]] == [pc for pc, _ in gdb_physical], (whole.stdout, bt)
        assert "[DWARF CFI]" in whole.stdout
        result = run_process(
            "unwind", str(program), "--core", str(core), "--thread", str(tid), "--cfi", "sframe", "--no-inline"
        )
        assert result.returncode == 0, result.stderr
        ours = _ours_physical(result.stdout, pcs[tid])
        # Every frame sfview prints is gdb's physical frame of that place (same PC); in the program, the same name.
        assert [pc for pc, _ in ours] == [pc for pc, _ in gdb_physical[: len(ours)]], (result.stdout, bt)
        for (_, our_name), (_, their_name) in zip(ours, gdb_physical, strict=False):
            if their_name in program_functions:
                assert our_name == their_name
        # A thread stopped in the program gets through all of the program's frames; one stopped inside
        # libc (pause, pthread_join) cannot leave it. Either way the walk ends in libc, saying why.
        if gdb_physical[0][1] in program_functions:
            assert {name for _, name in gdb_physical if name in program_functions} <= {name for _, name in ours}
        else:
            assert len(ours) == 1 and ours[0][1] != "??"
        assert "(in libc.so.6, which has no SFrame data)" in result.stdout
        seen.update(name for _, name in ours if name in program_functions)
    assert seen == {"stop_here", "worker_a"}
