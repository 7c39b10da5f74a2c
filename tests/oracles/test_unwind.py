"""`sfview unwind` finds, frame for frame, what gdb finds.

Programs are built here with `-Wa,--gsframe` (x86-64 with gcc and gdb: a core
written at a breakpoint; AArch64 with the cross compiler and qemu-user: the
core of a crash), and gdb's backtrace of the same core is the reference: every
frame it shows up to `main` must come out with the same PC and function.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, run_process

SRC = DATA / "src"
GDB_FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) \(", re.M)


def gdb_frames(text: str, pc: int | None = None) -> list[tuple[int, str]]:
    """(PC, function) of every frame gdb printed, up to `main`; frame 0's PC, if gdb leaves it out, is `pc`."""
    frames: dict[int, tuple[int, str]] = {}
    for number, address, name in GDB_FRAME.findall(text):
        if address or pc is not None:
            frames[int(number)] = (int(address, 16) if address else pc, name)  # a later "#0" line wins
    ordered = [frames[n] for n in sorted(frames)]
    names = [name for _, name in ordered]
    return ordered[: names.index("main") + 1] if "main" in names else ordered


def our_frames(text: str, pc: int | None = None) -> list[tuple[int, str]]:
    """(PC, function) of every frame sfview printed, read as `gdb_frames` reads gdb's (sfview, as gdb, leaves
    out frame 0's PC where debug information says a line starts there, and an inlined call's)."""
    return gdb_frames(text, pc)


def need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: it builds or runs the program gdb is compared on")


def test_the_fixture_core_unwinds_as_gdb_did() -> None:
    result = run_process("unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64.core"))
    assert result.returncode == 0, result.stderr
    bt = (DATA / "deep-x86_64.core.gdb-bt.txt").read_text()
    rip = int(re.search(r"^rip\s+(0x[0-9a-f]+)", bt, re.M).group(1), 16)
    expected = gdb_frames(bt, rip)
    assert len(expected) == 6
    assert our_frames(result.stdout, rip) == expected


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_the_last_frame_of_a_limited_walk_is_named_as_gdb_names_it(limit: int) -> None:
    """`--limit N` printed its last frame as `?? ()` (JSON: `function` and `module` null): the frame is
    given without a step, and nothing had looked up whose code it is in. Its notes go to stderr, the
    backtrace alone to stdout."""
    argv = ["unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64.core"), "--limit", str(limit)]
    bt = (DATA / "deep-x86_64.core.gdb-bt.txt").read_text()
    rip = int(re.search(r"^rip\s+(0x[0-9a-f]+)", bt, re.M).group(1), 16)
    expected = gdb_frames(bt, rip)[:limit]
    text = run_process(*argv)
    assert our_frames(text.stdout, rip) == expected
    assert "note:" not in text.stdout and text.stderr.startswith("note: ")
    frames = "1 frame" if limit == 1 else f"{limit} frames"
    assert text.stdout.splitlines()[-1] == f"stopped: stopped after {frames} (the limit asked for)"
    last = json.loads(run_process(*argv, "--json").stdout)["frames"][-1]
    assert (last["pc"], last["name"], last["module"]) == (*expected[-1], "deep-x86_64")
    need("gdb")  # JSON's `name` and `offset`, apart, as gdb's `info symbol` gives them (`leaf + 17 in …`)
    said = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", f"info symbol {last['pc']:#x}", str(DATA / "deep-x86_64"),
         str(DATA / "deep-x86_64.core")],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout.splitlines()[-1]  # fmt: skip
    assert said.startswith(f"{last['name']} + {last['offset']} in " if last["offset"] else f"{last['name']} in ")
    assert last["function"] == (f"{last['name']}+{last['offset']:#x}" if last["offset"] else last["name"])


# x86-64: gcc builds, gdb stops at stop_here and writes the core ---------------------

X86_BUILDS = {
    "O0-frame-pointer": ["-O0", "-fno-omit-frame-pointer"],
    "O2": ["-O2"],
    "O1-omit-frame-pointer": ["-O1", "-fomit-frame-pointer"],
    "Os": ["-Os"],
}


def _gdb_core(
    program: Path, workdir: Path, env: dict[str, str] | None = None, where: str = "stop_here"
) -> tuple[Path, str]:
    """Run `program` under gdb to `where` (a function, or `*0x…`), write a core there, and return it
    with gdb's backtrace."""
    core = workdir / f"{program.name}.core"
    result = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", f"break {where}", "-ex", "run", "-ex", f"generate-core-file {core}",
         "-ex", "bt", str(program)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert core.exists(), result.stdout + result.stderr
    return core, result.stdout


@pytest.mark.parametrize("flags", X86_BUILDS.values(), ids=X86_BUILDS.keys())
def test_gcc_x86_64_programs_unwind_as_gdb_does(tmp_path: Path, flags: list[str]) -> None:
    need("gcc", "gdb")
    program = tmp_path / "deep"
    subprocess.run(["gcc", *flags, "-Wa,--gsframe", "-o", str(program), str(SRC / "deep.c")], check=True)
    core, bt = _gdb_core(program, tmp_path)
    expected = gdb_frames(bt)
    names = [name for _, name in expected]  # gdb's real backtrace (at -O2 gcc turns the recursion into a loop)
    assert names[:3] == ["stop_here", "leaf", "with_alloca"] and names[-2:] == ["fp_func", "main"], bt
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected


NOT_IMPORTED_BY_AN_UNWIND = {
    "dataclasses": "importing it (and inspect, ast, dis) and building the classes took ~10 ms of a 44 ms start",
    "inspect": "dataclasses' import of it, 4 ms",
    "shutil": "argparse's terminal width (with bz2, lzma, zlib): asked for only to write help or usage",
    "copy": "an unwinder following other rules is made, not copied",
    "elftools.elf": "pyelftools' ELF reader: the unwind reads ELF files with sfview.inputs.elf.image",
    "elftools.dwarf": "pyelftools' DWARF reader: .eh_frame is read by sfview.dwarf.ehframe",
    "elftools.construct": "pyelftools' parser library",
    "textual": "the explorer's UI",
    "sfview.generated.sframe_debug": "the position-recording parser, for locating a damaged record only",
}
"""Modules `sfview unwind` of a static program must not import, and why (issue 16: its start is most of
its time, and gdb's `bt` of the same core takes ~38 ms)."""


def test_a_static_program_unwinds_as_gdb_does_and_imports_only_what_the_unwind_needs(tmp_path: Path) -> None:
    """A static build of the deep program (its libc has DWARF CFI and no `.eh_frame_hdr`): the frames gdb
    finds, and none of the modules `NOT_IMPORTED_BY_AN_UNWIND` names loaded, as the `sfview` command
    runs it (`sfview.entry.run`, what the console script calls)."""
    need("gcc", "gdb")
    program = tmp_path / "deep-static"
    built = subprocess.run(["gcc", "-O2", "-static", "-Wa,--gsframe", "-o", str(program), str(SRC / "deep.c")],
                           capture_output=True, text=True)  # fmt: skip
    if built.returncode != 0:
        pytest.skip(f"gcc cannot link a static program (libc6-dev's libc.a missing?): {built.stderr[-200:]}")
    core, bt = _gdb_core(program, tmp_path)
    code = "import sys\nfrom sfview.entry import run\nstatus = run()\nprint('MODULES', *sys.modules)\nsys.exit(status)"
    result = subprocess.run([sys.executable, "-c", code, "unwind", str(program), "--core", str(core)],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    output, _, modules = result.stdout.partition("MODULES ")
    assert our_frames(output) == gdb_frames(bt) and "[DWARF CFI]" in output, output + bt
    loaded = modules.split()
    assert "sfview.unwind.engine" in loaded, "the list is the unwind's"
    found = {name: why for name, why in NOT_IMPORTED_BY_AN_UNWIND.items() if name in loaded}
    assert not found, f"sfview unwind imported: {found}"


def test_a_call_through_a_shared_library_unwinds_as_gdb_does(tmp_path: Path) -> None:
    need("gcc", "gdb")
    lib = tmp_path / "libcallback.so"
    subprocess.run(
        ["gcc", "-O2", "-fPIC", "-shared", "-Wa,--gsframe", "-o", str(lib), str(SRC / "libcallback.c")], check=True
    )
    program = tmp_path / "callback"
    subprocess.run(
        ["gcc", "-O2", "-Wa,--gsframe", "-o", str(program), str(SRC / "callback.c"),
         f"-L{tmp_path}", "-lcallback", f"-Wl,-rpath,{tmp_path}"],
        check=True,
    )  # fmt: skip
    core, bt = _gdb_core(program, tmp_path)
    expected = gdb_frames(bt)
    assert [name for _, name in expected] == ["stop_here", "on_callback", "through_lib", "main"]
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
    assert f"in through_lib () from {lib}" in result.stdout, "the library's frame, named as gdb names it"


# AArch64: cross-compiled, run under qemu-user until it crashes in stop_here ----------------

SYSROOT = "/usr/aarch64-linux-gnu"


def _qemu_core(program: Path, workdir: Path, cpu: str | None = None) -> Path:
    """Run `program` under qemu-aarch64 until it faults; the core qemu writes (it has no NT_FILE)."""

    def allow_cores() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    cpu_args = ["-cpu", cpu] if cpu else []
    subprocess.run(
        ["qemu-aarch64", *cpu_args, "-L", SYSROOT, str(program)],
        cwd=workdir, preexec_fn=allow_cores, capture_output=True, timeout=120,
    )  # fmt: skip
    cores = sorted(workdir.glob("qemu_*.core"), key=os.path.getmtime)
    assert cores, "qemu wrote no core"
    return cores[-1]


def _aarch64_program(workdir: Path, *flags: str) -> Path:
    need("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch")
    program = workdir / "deep-aarch64"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-no-pie", "-DCRASH_AT_STOP", "-Wa,--gsframe", *flags,
         "-o", str(program), str(SRC / "deep.c")],
        check=True,
    )  # fmt: skip
    return program


def _gdb_multiarch(program: Path, core: Path, sysroot: str = SYSROOT) -> str:
    result = subprocess.run(
        ["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {sysroot}", "-ex", "bt", str(program), str(core)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return result.stdout


def test_an_aarch64_core_unwinds_as_gdb_multiarch_does(tmp_path: Path) -> None:
    program = _aarch64_program(tmp_path)
    core = _qemu_core(program, tmp_path)
    expected = gdb_frames(_gdb_multiarch(program, core))
    assert [name for _, name in expected] == ["stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main"]
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
    assert "program's load bias 0x0 comes from AT_ENTRY" in result.stderr, "qemu's cores have no NT_FILE"


def test_signed_return_addresses_are_stripped(tmp_path: Path) -> None:
    """pac-ret: every saved return address is signed. gdb-multiarch gets past the first frame only
    (it stops after `leaf` on these cores), so the frames it shows are checked, and past them, that each
    return address lands in the function that made the call, as the source says."""
    program = _aarch64_program(tmp_path, "-mbranch-protection=pac-ret")
    core = _qemu_core(program, tmp_path, cpu="max")
    gdb = gdb_frames(_gdb_multiarch(program, core))
    result = run_process("unwind", str(program), "--core", str(core), "--explain")
    assert result.returncode == 0, result.stderr
    ours = our_frames(result.stdout)
    assert ours[: len(gdb)] == gdb and len(gdb) >= 2
    assert [name for _, name in ours] == ["stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main"]
    assert "signed: strip the PAC bits" in result.stdout


def test_the_same_frames_from_typed_registers_and_memory() -> None:
    """The registers and the stack words a walk of the core reads, typed by hand, walk the same frames;
    one word fewer, and the walk stops there, naming the address it needs."""
    import json

    from sfview.inputs.core import read_core

    core_args = ["unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64.core")]
    walked = json.loads(run_process(*core_args, "--json").stdout)
    read = [  # by the program's frames: typed registers come without the libraries the core maps
        c["address"]
        for f in walked["frames"]
        if f["module"] == "deep-x86_64"
        for c in f["computations"]
        if c["address"] is not None
    ]
    core = read_core(str(DATA / "deep-x86_64.core"))
    regs = core.threads[0].registers
    state = f"pc={regs['rip']:#x},sp={regs['rsp']:#x},fp={regs['rbp']:#x}"
    args = ["unwind", str(DATA / "deep-x86_64"), "--regs", state, "--bias", "0x555555554000"]  # the PIE's load bias
    for address in read:
        args += ["--mem", f"{address:#x}={core.memory.read(address):#x}"]
    typed = run_process(*args)
    assert typed.returncode == 0, typed.stderr
    assert our_frames(typed.stdout) == our_frames(run_process(*core_args).stdout)
    short = run_process(*args[:-2])
    assert f"needs the memory word at {read[-1]:#x}, which nobody has given" in short.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--core", str(DATA / "shapes-x86_64-O2")], "not a core file"),
        (["--core", str(DATA / "deep-x86_64.core"), "--thread", "99"], "no thread 99"),
        (["--regs", "sp=0x10"], "--regs needs pc=ADDRESS"),
        (["--regs", "pc=0x1000,zz=1"], "no register named zz"),
        (["--regs", "pc=zz"], "is not NAME=VALUE"),
    ],
)
def test_bad_unwind_input_is_one_line(args: list[str], message: str) -> None:
    result = run_process("unwind", str(DATA / "deep-x86_64"), *args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_core_of_another_architecture_is_refused(tmp_path: Path) -> None:
    result = run_process("unwind", str(DATA / "shapes-aarch64-O2"), "--core", str(DATA / "deep-x86_64.core"))
    assert result.returncode == 2
    assert "x86-64 process, the program is AArch64" in result.stderr


def test_a_truncated_core_is_refused(tmp_path: Path) -> None:
    cut = tmp_path / "cut.core"
    cut.write_bytes((DATA / "deep-x86_64.core").read_bytes()[:3000])
    result = run_process("unwind", str(DATA / "deep-x86_64"), "--core", str(cut))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert str(cut) in result.stderr


@pytest.mark.parametrize("flags", [["-O0", "-fno-omit-frame-pointer"], ["-O2"]], ids=["O0-fp", "O2"])
def test_dwarf_cfi_walks_the_same_stack(tmp_path: Path, flags: list[str]) -> None:
    """`--cfi dwarf` unwinds with .eh_frame instead; `--cfi both` says whether the two part, and where."""
    need("gcc", "gdb")
    program = tmp_path / "deep"
    subprocess.run(["gcc", *flags, "-Wa,--gsframe", "-o", str(program), str(SRC / "deep.c")], check=True)
    core, bt = _gdb_core(program, tmp_path)
    dwarf = run_process("unwind", str(program), "--core", str(core), "--cfi", "dwarf", "--explain")
    assert dwarf.returncode == 0, dwarf.stderr
    assert our_frames(dwarf.stdout) == gdb_frames(bt)
    assert "DWARF CFI: the FDE at .eh_frame+0x" in dwarf.stdout
    both = run_process("unwind", str(program), "--core", str(core), "--cfi", "both")
    assert "note: DWARF CFI finds the same" in both.stdout or "note: DWARF CFI agrees on the" in both.stdout


def test_where_sframe_and_dwarf_part_is_named() -> None:
    from sfview.generated.sframe import Sframe
    from sfview.output.backtrace import agreement
    from sfview.unwind.engine import Backtrace, Found, Frame, Machine

    x86 = Machine(Sframe.AbiArch.amd64_endian_little, 7, 6, 16, False)
    same = [Frame(0, 0x1000, {7: 0x10}), Frame(1, 0x2000, {7: 0x20})]
    other = [Frame(0, 0x1000, {7: 0x10}), Frame(1, 0x2004, {7: 0x28})]
    agree = agreement(Backtrace(same, "end"), Backtrace(list(same), "end"), x86)
    assert agree == "DWARF CFI finds the same 2 frames, with the same PC, SP and FP"
    parted = agreement(Backtrace(same, "end"), Backtrace(other, "end"), x86)
    assert parted.startswith("DWARF CFI parts from SFrame at frame #1: SFrame finds pc 0x2000, DWARF 0x2004")
    assert parted.endswith("(rsp=0x20 against rsp=0x28)")
    shorter = agreement(Backtrace(same[:1], "no FDE"), Backtrace(same, "end"), x86)
    assert shorter == "DWARF CFI agrees on the 1 frame both find; DWARF CFI goes further (SFrame stopped: no FDE)"
    # A caller both walks found by the frame-pointer chain: the same, but not by either's data.
    guessed = [Frame(0, 0x1000, {7: 0x10}, found=Found.FRAME_POINTER_CHAIN), same[1]]
    twice = agreement(Backtrace(guessed, "end"), Backtrace(list(guessed), "end"), x86)
    assert twice.endswith("; found by the same heuristic in both walks, not by either's data: #1 (frame-pointer chain)")
    # Registers SFrame does not describe (a callee-saved rbx DWARF restores) are not compared.
    restored = [same[0], Frame(1, 0x2000, {7: 0x20, 3: 0x5})]
    assert agreement(Backtrace(same, "end"), Backtrace(restored, "end"), x86).startswith("DWARF CFI finds the same 2")


# Signal frames, calls that never return, libc without SFrame --------------------------------


@pytest.mark.parametrize("flags", [["-O2"], ["-O0", "-fno-omit-frame-pointer"]], ids=["O2", "O0-fp"])
def test_a_signal_handler_unwinds_through_its_signal_frame_as_gdb_does(tmp_path: Path, flags: list[str]) -> None:
    """A SIGSEGV handler on the stack: the sigreturn trampoline shows as `<signal handler called>` and
    the interrupted registers come from the signal frame, so the walk reaches the faulting `fault`
    (its PC the faulting instruction itself, not a return address) and on to `main`, as gdb's."""
    need("gcc", "gdb")
    program = tmp_path / "signal"
    subprocess.run(["gcc", *flags, "-Wa,--gsframe", "-o", str(program), str(SRC / "signal.c")], check=True)
    core = tmp_path / "signal.core"
    gdb = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "handle SIGSEGV nostop noprint pass", "-ex", "break stop_here",
         "-ex", "run", "-ex", f"generate-core-file {core}", "-ex", "bt", str(program)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    expected = gdb_frames(gdb.stdout)
    assert [name for _, name in expected] == ["stop_here", "handler", "fault", "middle", "main"], gdb.stdout
    assert "#2  <signal handler called>" in gdb.stdout
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
    assert "#2  <signal handler called>" in result.stdout


@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-mbranch-protection=pac-ret"]], ids=["O2", "pac-ret"])
def test_an_aarch64_signal_frame_is_unwound(tmp_path: Path, flags: list[str]) -> None:
    """qemu-user's trampoline and `struct rt_sigframe`: gdb-multiarch does not get past the trampoline
    on these cores, so the frames are the source's, and the interrupted PC is `fault`'s faulting store."""
    need("aarch64-linux-gnu-gcc", "qemu-aarch64", "aarch64-linux-gnu-objdump")
    program = tmp_path / "signal"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", *flags, "-no-pie", "-DCRASH_AT_STOP", "-Wa,--gsframe",
         "-o", str(program), str(SRC / "signal.c")],
        check=True,
    )  # fmt: skip
    core = _qemu_core(program, tmp_path, cpu="max")
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    ours = our_frames(result.stdout)
    assert [name for _, name in ours] == ["stop_here", "handler", "fault", "middle", "main"]
    assert "#2  <signal handler called>" in result.stdout
    disassembly = subprocess.run(
        ["aarch64-linux-gnu-objdump", "-d", str(program)], capture_output=True, text=True, check=True
    ).stdout
    faulting = re.search(rf"^\s+{ours[2][0]:x}:\s+\S+\s+(\S+)", disassembly, re.M)
    assert faulting is not None and faulting.group(1) == "str", "the interrupted PC is the store that faulted"


@pytest.mark.parametrize("flags", [["-O2"], ["-O1"]])
def test_a_caller_is_named_after_its_call_not_its_return_address(tmp_path: Path, flags: list[str]) -> None:
    """`check` ends in a call that never returns: its return address is the next function's first
    byte. gdb names the frame `check` (the call, at return address - 1), and so must sfview."""
    need("gcc", "gdb")
    program = tmp_path / "noreturn"
    subprocess.run(["gcc", *flags, "-Wa,--gsframe", "-o", str(program), str(SRC / "noreturn.c")], check=True)
    core, bt = _gdb_core(program, tmp_path)
    expected = gdb_frames(bt)
    assert [name for _, name in expected] == ["stop_here", "fatal", "check", "layer", "main"], bt
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected


def test_the_aarch64_frame_pointer_chain_through_a_static_libc_lands_back_in_sframe(tmp_path: Path) -> None:
    """A static AArch64 libc has no SFrame: with SFrame alone (`--cfi sframe`) its frames (qsort's) are
    crossed by the frame-pointer chain.
    The frame record sits at the bottom of an AArch64 frame, so the caller's SP is the saved FP (not
    FP + 16 as on x86-64): the walk lands back in `sorter` and `main` with the PCs gdb-multiarch finds."""
    need("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch")
    program = tmp_path / "qsort"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-static", "-Wa,--gsframe", "-o", str(program), str(SRC / "qsort.c")],
        check=True,
    )
    core = _qemu_core(program, tmp_path)
    expected = gdb_frames(_gdb_multiarch(program, core))
    names = [name for _, name in expected]
    assert names[:2] == ["stop_here", "cmp"] and names[-2:] == ["sorter", "main"] and len(names) > 4
    for cfi, how in (("sframe", "[frame-pointer chain]"), (None, "[DWARF CFI]")):
        result = run_process("unwind", str(program), "--core", str(core), *(["--cfi", cfi] if cfi else []))
        assert result.returncode == 0, result.stderr
        ours = our_frames(result.stdout)
        assert [pc for pc, _ in ours] == [pc for pc, _ in expected]  # libc's local names differ (`.part.0`)
        assert how in result.stdout, "SFrame alone crosses libc by its frame pointers; by default, by its CFI"


def _z_now_qsort(arch: str, workdir: Path) -> tuple[Path, Path, str]:
    """qsort.c linked `-z now`, stopped in `stop_here` under its comparison callback: by gdb on x86-64,
    by the fault qemu-aarch64 dumps on AArch64 (not PIE: gdb-multiarch finds no load bias for a PIE
    in qemu's cores, which have no NT_FILE). The program, the core, and gdb's backtrace of it."""
    program = workdir / "qsort"
    if arch == "x86_64":
        need("gcc", "gdb")
        subprocess.run(["gcc", "-O2", "-Wa,--gsframe", "-Wl,-z,now", "-o", str(program), str(SRC / "qsort.c")],
                       check=True)  # fmt: skip
        return program, *_gdb_core(program, workdir)
    need("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch")
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-no-pie", "-Wa,--gsframe", "-Wl,-z,now",
         "-o", str(program), str(SRC / "qsort.c")],
        check=True,
    )  # fmt: skip
    core = _qemu_core(program, workdir)
    return program, core, _gdb_multiarch(program, core)


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_a_z_now_program_unwinds_through_libc_as_gdb_does(tmp_path: Path, arch: str) -> None:
    """`-z now`: the GOT is filled at start-up, so `qsort` is entered through its PLT entry without
    ld.so's resolver, and calls back into the program. The walk from the callback crosses libc's
    frames (no SFrame: its DWARF CFI) and lands in `sorter` and `main` with gdb's PCs."""
    program, core, bt = _z_now_qsort(arch, tmp_path)
    expected = gdb_frames(bt)
    names = [name for _, name in expected]
    assert names[:2] == ["stop_here", "cmp"] and names[-2:] == ["sorter", "main"] and len(names) > 4, bt
    result = run_process("unwind", str(program), "--core", str(core), "--sysroot", SYSROOT if arch != "x86_64" else "/")
    assert result.returncode == 0, result.stderr
    ours = our_frames(result.stdout)
    assert [pc for pc, _ in ours] == [pc for pc, _ in expected], (result.stdout, bt)
    for (_, our_name), (_, their_name) in zip(ours, expected, strict=True):
        # libc's names: gdb's from its debug information (`msort_with_tmp`), sfview's from `.symtab`
        # (`msort_with_tmp.part.0`); the program's are the same symbols to both
        assert our_name == their_name or their_name not in {"stop_here", "cmp", "sorter", "main"}, result.stdout
    assert "[DWARF CFI]" in result.stdout, "libc has no SFrame here: its frames are walked by its CFI"


def test_a_core_of_another_build_with_the_same_layout_is_refused(tmp_path: Path) -> None:
    """Two builds that differ in their build-id alone share entry point and program headers, so
    `AT_ENTRY` cannot tell them apart; the program's first page, as the core holds it, can."""
    need("gcc", "gdb")
    programs = []
    for build_id in ("0x01", "0x02"):
        program = tmp_path / build_id / "deep"
        program.parent.mkdir()
        subprocess.run(
            ["gcc", "-O2", "-Wa,--gsframe", f"-Wl,--build-id={build_id}", "-o", str(program), str(SRC / "deep.c")],
            check=True,
        )
        programs.append(program)
    core, _ = _gdb_core(programs[0], tmp_path)
    assert run_process("unwind", str(programs[0]), "--core", str(core)).returncode == 0
    result = run_process("unwind", str(programs[1]), "--core", str(core))
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert "not a core of deep: the process's bytes at 0x" in result.stderr
    assert "are not this program's" in result.stderr


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_a_truncated_qemu_core_is_refused(tmp_path: Path, keep: float) -> None:
    """qemu-user writes its notes first, so a cut core still parses: its memory segments are checked
    against the file's size, not read as a process with less memory."""
    data = (DATA / "deep-aarch64.core").read_bytes()
    cut = tmp_path / "cut.core"
    cut.write_bytes(data[: int(len(data) * keep)])
    result = run_process("unwind", str(DATA / "deep-aarch64"), "--core", str(cut))
    assert result.returncode == 2 and result.stdout == ""
    assert "the core is cut short: its segment" in result.stderr and "Traceback" not in result.stderr


def test_a_qemu_core_finds_its_libraries_in_the_dynamic_linkers_list(tmp_path: Path) -> None:
    """qemu-user writes no NT_FILE: libc is found through `DT_DEBUG` → `r_debug` → `link_map` in the
    core's memory, as gdb finds it, so the frames in libc (no SFrame there) are unwound with its DWARF CFI
    and the walk gets back into the program: `sorter`, `main`. (gdb-multiarch cannot unwind these
    cores past libc, so the program's frames are checked against the source.)"""
    need("aarch64-linux-gnu-gcc", "qemu-aarch64")
    program = tmp_path / "qsort"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O1", "-fomit-frame-pointer", "-Wa,--gsframe", "-o", str(program),
         str(SRC / "qsort.c")],
        check=True,
    )  # fmt: skip
    core = _qemu_core(program, tmp_path)
    result = run_process("unwind", str(program), "--core", str(core), "--sysroot", SYSROOT)
    assert result.returncode == 0, result.stderr
    names = [name for _, name in our_frames(result.stdout)]
    assert names[:2] == ["stop_here", "cmp"] and names[-2:] == ["sorter", "main"], result.stdout
    assert "qsort_r" in names and "from /lib/libc.so.6  [DWARF CFI]" in result.stdout
    assert "libraries from the dynamic linker's list in memory" in result.stderr
    host = run_process("unwind", str(program), "--core", str(core), "--lib-dir", "/usr/lib/x86_64-linux-gnu")
    assert "libc.so.6: a library for EM_X86_64, not EM_AARCH64: not used (give --sysroot)" in host.stderr
    assert "[DWARF CFI]" not in host.stdout.split("stopped:")[0].split("main ()")[0], "no host CFI for a guest"


def test_the_dynamic_linkers_list_read_from_memory() -> None:
    """`DT_DEBUG` → `r_debug.r_map` → each `link_map`'s bias and name; the program's own (empty) name
    left out; a list that loops, or memory that is missing, ends the walk instead of hanging it."""
    from sfview.inputs.linkmap import DT_DEBUG, L_ADDR, L_NAME, L_NEXT, R_MAP, loaded_objects

    words: dict[int, int] = {}

    def put_string(address: int, text: bytes) -> None:
        padded = text + b"\0" * (8 - len(text) % 8)
        for i in range(0, len(padded), 8):
            words[address + i] = int.from_bytes(padded[i : i + 8], "little")

    words.update({0x1000: 1, 0x1008: 0, 0x1010: DT_DEBUG, 0x1018: 0x2000, 0x1020: 0})  # .dynamic
    words[0x2000 + R_MAP] = 0x3000
    for node, bias, name, following in ((0x3000, 0, 0x5000, 0x3100), (0x3100, 0x7F00, 0x5100, 0x3200),
                                        (0x3200, 0x8F00, 0x5200, 0x3100)):  # fmt: skip
        words.update({node + L_ADDR: bias, node + L_NAME: name, node + L_NEXT: following})
    put_string(0x5000, b"")
    put_string(0x5100, b"/lib/libc.so.6")
    put_string(0x5200, b"/lib/ld-linux-aarch64.so.1")
    assert loaded_objects(words.get, True, 0x1000, 0x30) == [
        ("/lib/libc.so.6", 0x7F00),
        ("/lib/ld-linux-aarch64.so.1", 0x8F00),
    ]  # and the loop back to 0x3100 ends there
    del words[0x5208]  # a name memory does not hold
    assert loaded_objects(words.get, True, 0x1000, 0x30) == [("/lib/libc.so.6", 0x7F00)]
    assert loaded_objects(words.get, True, 0x9000, 0x30) == []


@pytest.mark.parametrize("damage", ["unsorted", "outside"])
def test_a_damaged_eh_frame_hdr_table_is_passed_over_as_gdb_does(tmp_path: Path, damage: str) -> None:
    """`.eh_frame_hdr`'s search table reversed (or pointing before `.eh_frame`): its binary search missed
    every FDE, and `--cfi dwarf` went on by prologue analysis to a PC of 0 after two frames. gdb reads
    `.eh_frame` itself and never that table: sfview now passes over a table that is not sorted or points
    outside `.eh_frame` (the FDEs' own headers make the table), and walks as gdb walks the same file."""
    import struct

    from elf_edit import Elf

    need("gdb")
    elf = Elf.of((DATA / "deep-x86_64").read_bytes())
    header = elf.section(".eh_frame_hdr")["sh_offset"]
    (count,) = struct.unpack_from("<I", elf.data, header + 8)
    pairs = [struct.unpack_from("<ii", elf.data, header + 12 + 8 * i) for i in range(count)]
    for i, (start, fde) in enumerate(reversed(pairs) if damage == "unsorted" else pairs):
        elf.poke(header + 12 + 8 * i, struct.pack("<ii", start, fde if damage == "unsorted" else -0x100000))
    path = tmp_path / "deep-x86_64"
    path.write_bytes(elf.bytes())
    core = str(DATA / "deep-x86_64.core")
    gdb = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "bt", "-ex", "info registers rip", str(path), core],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    rip = int(re.search(r"^rip\s+(0x[0-9a-f]+)", gdb, re.M).group(1), 16)
    ours = run_process("unwind", str(path), "--core", core, "--cfi", "dwarf")
    assert ours.returncode == 0, ours.stderr
    assert our_frames(ours.stdout, rip) == gdb_frames(gdb, rip)
    assert len(gdb_frames(gdb, rip)) == 6
