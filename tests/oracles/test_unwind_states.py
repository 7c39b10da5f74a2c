"""Unwinding wherever gdb goes: states gdb stops a program in, each written to a core and unwound by
sfview, frame for frame and PC for PC against gdb's own frames of that state.

The program (`tests/data/src/states.c`) is built once per build of the module; one gdb session per
build runs it to each state (a breakpoint, then `stepi`s) and writes a core there with gdb's frames
beside it (its physical frames: the inlined frames gdb adds from libc's debug information are no
frames on the stack). The states: ld.so's lazy-binding resolver (its CFA based on rbx), the vDSO,
the sigreturn trampoline at each of its instructions, a 1,000-frame recursion, a DRAP function
(CFA `DW_OP_breg6 -8; DW_OP_deref`) at several instructions, built with this machine's binutils 2.40
(no SFrame FDE for it) and with 2.47 (a flexible FDE), and a core taken during ld.so's start-up;
the same program linked `-z now`, in its PLT entry, in `puts` and in `write` under `exit`.
AArch64: a fault inside a PLT stub, against gdb-multiarch.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, run_process
from test_unwind import SYSROOT, _qemu_core, gdb_frames, need, our_frames
from toolchains import toolchain

SOURCE = DATA / "src" / "states.c"
GDB_DRIVER = r"""
import gdb, json, os
plan = json.load(open(os.environ["SFVIEW_PLAN"]))
for setting in ("pagination off", "confirm off", "breakpoint pending on"):
    gdb.execute("set " + setting)
results = []

def frames():
    out, frame = [], gdb.newest_frame()
    while frame is not None:
        if frame.type() == gdb.SIGTRAMP_FRAME:
            out.append([frame.pc(), "<signal handler called>"])
        elif frame.type() == gdb.NORMAL_FRAME:
            out.append([frame.pc(), frame.name() or "??"])
        frame = frame.older()
    return out

for action in plan["actions"]:
    kind, _, arg = action.partition(" ")
    if kind == "SNAP":
        core = os.path.join(plan["dir"], arg + ".core")
        gdb.execute("generate-core-file " + core, to_string=True)
        results.append({"tag": arg, "core": core, "frames": frames()})
    elif kind == "STEPTO":
        for _ in range(500):
            if gdb.newest_frame().name() == arg:
                break
            gdb.execute("stepi", to_string=True)
    else:
        gdb.execute(action, to_string=True)
json.dump(results, open(plan["out"], "w"))
"""
RESOLVERS = ["_dl_runtime_resolve_xsavec", "_dl_runtime_resolve_xsave", "_dl_runtime_resolve_fxsave"]
LAZY = [
    "break main", "run 1", "break 'puts@plt'", "continue", "SNAP plt-0", "stepi", "SNAP plt-1", "stepi",
    "SNAP plt-2", "delete", *(f"break {name}" for name in RESOLVERS), "continue",
    "SNAP lazy-0", "stepi 7", "SNAP lazy-7", "stepi 14", "SNAP lazy-21",
    "delete", "break _dl_fixup", "continue", "SNAP lazy-fixup",
    "delete", "break _dl_lookup_symbol_x", "continue", "SNAP lazy-lookup", "delete",
]  # fmt: skip
VDSO = [
    "break main",
    "run 2",
    "break __vdso_clock_gettime",
    "continue",
    "SNAP vdso-0",
    "stepi 4",
    "SNAP vdso-4",
    "delete",
]
SIGNAL = [
    "handle SIGUSR1 nostop noprint pass", "break handler", "run 3", "SNAP signal-handler",
    "STEPTO __restore_rt", "SNAP trampoline-0", "stepi", "SNAP trampoline-7", "delete",
]  # fmt: skip
DEEP = ["break stop_here", "run 4", "SNAP deep", "delete"]
DRAP = [
    "break drap", "run 5", "SNAP drap-0", "stepi 2", "SNAP drap-2", "stepi 5", "SNAP drap-7", "stepi 3", "SNAP drap-10",
    "stepi 2", "SNAP drap-12", "delete", "break stop_here", "continue", "SNAP drap-call",
    "finish", "stepi 3", "SNAP drap-return-3", "stepi 3", "SNAP drap-return-6", "delete",
]  # fmt: skip
STARTUP = ["break _dl_map_object_from_fd", "run", "SNAP startup", "delete"]
Z_NOW = [
    "break main", "run 1", "break 'puts@plt'", "continue", "SNAP znow-plt-0", "stepi", "SNAP znow-puts-0",
    "stepi 3", "SNAP znow-puts-3", "delete", "break write", "continue", "SNAP znow-write", "delete",
]  # fmt: skip
"""`-z now`: the first call to `puts` jumps through a GOT entry already filled (no resolver), and
the buffered line is written at `exit`, under libc's exit handlers."""
HOST_PLAN = LAZY + VDSO + SIGNAL + DEEP + DRAP + STARTUP
"""Every state, on the build with this machine's binutils at -O2; the other builds are stopped in `drap` only."""
DRAP_BUILDS = ["2.40-O2", "2.40-O0", "2.47-O2", "2.47-O0"]
LD_SO_FUNCTIONS = {*RESOLVERS, "_dl_fixup", "_dl_lookup_symbol_x", "_dl_map_object_from_fd", "dl_main", "_start"}
PROGRAM_FUNCTIONS = {"stop_here", "recurse", "drap", "handler", "main"}
MATCHED: dict[str, set[str]] = {}
"""States whose every frame matched gdb's, by build (printed at the end of the module, for the report)."""


def _build(release: str, opt: str, folder: Path, binding: str = "lazy") -> Path:
    program = folder / "states"
    toolchain(release, "x86_64").compile(opt, "-g", f"-Wl,-z,{binding}", SOURCE, "-o", program)
    return program


def _gdb_states(program: Path, actions: list[str], folder: Path) -> list[dict[str, Any]]:
    """Run gdb through `actions`; each `SNAP tag` writes a core and records gdb's frames there."""
    driver, plan, out = folder / "driver.py", folder / "plan.json", folder / "states.json"
    driver.write_text(GDB_DRIVER)
    plan.write_text(json.dumps({"dir": str(folder), "out": str(out), "actions": actions}))
    result = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", f"source {driver}", str(program)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "SFVIEW_PLAN": str(plan)},
    )  # fmt: skip
    assert out.exists(), result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(out.read_text())


Build = tuple[str, Path, list[dict[str, Any]]]
"""A build's name, the program, and the states gdb stopped it in (each with its core and gdb's frames)."""


def _stopped(name: str, actions: list[str], factory: pytest.TempPathFactory, binding: str = "lazy") -> Build:
    need("gcc", "gdb")
    release, opt = name.split("-")[:2]
    folder = factory.mktemp(f"states-{name}")
    program = _build(release, f"-{opt}", folder, binding)
    return name, program, _gdb_states(program, actions, folder)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """This machine's binutils at -O2, stopped in every state, once for the module."""
    return _stopped("2.40-O2", HOST_PLAN, tmp_path_factory)


@pytest.fixture(scope="module", params=DRAP_BUILDS)
def drap_build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Build:
    """Each build stopped in `drap` (the host's -O2 build is `host`'s)."""
    if request.param == "2.40-O2":
        return request.getfixturevalue("host")
    return _stopped(request.param, DRAP, tmp_path_factory)


@pytest.fixture(scope="module")
def z_now(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """This machine's binutils at -O2, linked `-z now`."""
    return _stopped("2.40-O2-znow", Z_NOW, tmp_path_factory, binding="now")


def _ours(program: Path, core: str, *args: str) -> dict[str, Any]:
    result = run_process("unwind", str(program), "--core", core, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _frames(walk: dict[str, Any]) -> list[tuple[int, str]]:
    return [
        (f["pc"], "<signal handler called>" if f["signal"] else (f["function"] or "??").split("+")[0])
        for f in walk["frames"]
    ]


def _assert_gdbs(state: dict[str, Any], walk: dict[str, Any]) -> None:
    """Every physical frame gdb shows, PC for PC (sfview goes on past `main`, to `_start`, as gdb does
    not); the program's, ld.so's and the trampoline's names as gdb gives them; no `??` where gdb names one."""
    theirs = [(pc, name) for pc, name in state["frames"]]
    ours = _frames(walk)[: len(theirs)]
    assert [pc for pc, _ in ours] == [pc for pc, _ in theirs], (state["tag"], ours, theirs, walk["stop"])
    for (_, our_name), (_, their_name) in zip(ours, theirs, strict=True):
        if their_name in PROGRAM_FUNCTIONS | LD_SO_FUNCTIONS | {"<signal handler called>", "clock_gettime"}:
            assert our_name == their_name, (state["tag"], ours, theirs)
        if their_name != "??":
            assert our_name != "??", (state["tag"], ours, theirs)


def _states(build: Build, prefix: str) -> list[dict[str, Any]]:
    found = [state for state in build[2] if state["tag"].startswith(prefix)]
    assert found, f"gdb stopped the {build[0]} build in no {prefix} state"
    return found


def _count(build: Build, states: list[dict[str, Any]]) -> None:
    MATCHED.setdefault(build[0], set()).update(state["tag"] for state in states)


@pytest.mark.parametrize("cfi", [[], ["--cfi", "dwarf"]], ids=["default", "dwarf"])
def test_the_plt_unwinds_as_gdb_does(host: Build, cfi: list[str]) -> None:
    """`puts@plt` and the PLT's first entry: SFrame's PCMASK rows, or the linker's DWARF expression
    `rsp + 8 + ((rip & 15) >= 11) * 8`, evaluated."""
    states = _states(host, "plt-")
    for state in states:
        walk = _ours(host[1], state["core"], *cfi)
        _assert_gdbs(state, walk)
        if cfi:
            (cfa,) = [c for c in walk["frames"][0]["computations"] if c["what"] == "CFA"]
            assert "DW_OP_breg16 (rip) 0" in cfa["formula"], cfa
    _count(host, states)


@pytest.mark.parametrize("cfi", [[], ["--cfi", "dwarf"]], ids=["default", "dwarf"])
def test_the_lazy_binding_resolver_unwinds_as_gdb_does(host: Build, cfi: list[str]) -> None:
    """ld.so's `_dl_runtime_resolve_xsavec` keeps its CFA in rbx (`DW_CFA_def_cfa_register: rbx`):
    the callee `_dl_fixup` saves rbx, and the register file carries it back to the resolver's frame."""
    states = _states(host, "lazy-")
    for state in states:
        walk = _ours(host[1], state["core"], *cfi)
        _assert_gdbs(state, walk)
        assert any(name in RESOLVERS for _, name in _frames(walk)), state["tag"]
    _count(host, states)


@pytest.mark.parametrize("cfi", [[], ["--cfi", "dwarf"]], ids=["default", "dwarf"])
def test_a_z_now_program_unwinds_as_gdb_does(z_now: Build, cfi: list[str]) -> None:
    """In the PLT entry (its SFrame PCMASK rows, or the linker's expression), in `puts` entered
    straight from it, and in `write` under `exit`'s handlers: every frame gdb shows."""
    states = _states(z_now, "znow-")
    assert {state["tag"] for state in states} == {"znow-plt-0", "znow-puts-0", "znow-puts-3", "znow-write"}
    for state in states:
        walk = _ours(z_now[1], state["core"], *cfi)
        _assert_gdbs(state, walk)
        assert not any(name in RESOLVERS for _, name in state["frames"]), "no lazy binding: no resolver"
    assert [name for _, name in _states(z_now, "znow-plt-0")[0]["frames"][:2]] == ["puts@plt", "main"]
    _count(z_now, states)


NO_CFI = [
    "break *frameless", "break *pushed", "break *framed", "run",
    "SNAP frameless-0", "stepi", "SNAP frameless-callee", "STEPTO frameless", "SNAP frameless-ret", "continue",
    "SNAP pushed-0", "stepi", "SNAP pushed-1", "stepi", "SNAP pushed-callee", "STEPTO pushed", "SNAP pushed-pop",
    "continue", "SNAP framed-0", "stepi", "SNAP framed-1", "stepi", "SNAP framed-4", "stepi", "SNAP framed-callee",
    "delete",
]  # fmt: skip


def test_code_without_cfi_unwinds_by_its_prologue_as_gdb_does(tmp_path: Path) -> None:
    """Functions no CFI covers (`tests/data/src/nocfi.c`, as glibc's `clone3` after its `cfi_endproc`):
    as gdb, their prologue says where the return address is: at SP before `push %rbp` runs and in a
    function that pushes nothing, at SP + 8 after it, through rbp once `mov %rsp,%rbp` has run."""
    need("gcc", "gdb")
    program = tmp_path / "nocfi"
    toolchain("2.40", "x86_64").compile("-O2", DATA / "src" / "nocfi.c", "-o", program)
    states = _gdb_states(program, NO_CFI, tmp_path)
    assert len(states) == 11
    heuristics = set()
    for state in states:
        walk = _ours(program, state["core"])
        names = [name for _, name in state["frames"]]
        assert "main" in names, state
        _assert_gdbs({**state, "frames": state["frames"][: names.index("main") + 1]}, walk)
        heuristics.update(f["heuristic"] for f in walk["frames"] if f["heuristic"])
        if state["tag"] in ("pushed-1", "pushed-pop"):  # after `push %rbp`: the RA above the saved rbp
            explained = run_process("unwind", str(program), "--core", state["core"], "--explain").stdout
            assert "RA = *(rsp + 8 = 0x" in explained, explained
    assert heuristics == {"prologue analysis", "frame-pointer chain"}, "framed's set-up rbp is a frame pointer"
    sframe_alone = _ours(program, _states(("nocfi", program, states), "frameless-0")[0]["core"], "--cfi", "sframe")
    assert sframe_alone["frames"][0]["heuristic"] != "prologue analysis", "SFrame alone: the kernel's fallbacks"


def test_the_vdso_is_a_module_named_and_unwound_by_its_own_cfi(host: Build) -> None:
    states = _states(host, "vdso-")
    for state in states:
        walk = _ours(host[1], state["core"])
        _assert_gdbs(state, walk)
        assert walk["frames"][0]["module"] == "[vdso]" and state["frames"][0][1] == "clock_gettime"
        assert walk["frames"][0]["dwarf"], "unwound with the vDSO's .eh_frame"
    _count(host, states)


@pytest.mark.parametrize("cfi", [[], ["--cfi", "dwarf"], ["--cfi", "sframe"]], ids=["default", "dwarf", "sframe"])
def test_the_sigreturn_trampoline_at_each_instruction(host: Build, cfi: list[str]) -> None:
    """`__restore_rt` at its `mov` and at its `syscall`: by its DWARF expressions (default, dwarf),
    by the kernel's signal-frame layout (sframe, as the kernel's unwinder would)."""
    states = _states(host, "trampoline-") + _states(host, "signal-")
    for state in states:
        walk = _ours(host[1], state["core"], *cfi)
        if cfi == ["--cfi", "sframe"]:
            # libc has no SFrame: the walk stops in it, but every frame it gives is gdb's
            theirs = state["frames"][: len(walk["frames"])]
            assert [f["pc"] for f in walk["frames"]] == [pc for pc, _ in theirs]
            assert len(walk["frames"]) >= 2 or not state["tag"].startswith("trampoline")
        else:
            _assert_gdbs(state, walk)
        if state["tag"].startswith("trampoline"):
            assert walk["frames"][0]["signal"] and state["frames"][0][1] == "<signal handler called>"
            expressions = [c for c in walk["frames"][0]["computations"] if c["formula"].startswith("*[DW_OP_breg7")]
            assert bool(expressions) == (cfi != ["--cfi", "sframe"]), "the trampoline's own CFI, evaluated"
    _count(host, states)


def test_a_1000_frame_recursion_unwinds_whole(host: Build) -> None:
    (state,) = _states(host, "deep")
    walk = _ours(host[1], state["core"])
    assert len(state["frames"]) > 1000
    _assert_gdbs(state, walk)
    _count(host, [state])
    limited = _ours(host[1], state["core"], "--limit", "10")
    assert len(limited["frames"]) == 10 and limited["stop"] == "stopped after 10 frames (the limit asked for)"


def test_drap_functions_unwind_as_gdb_does(drap_build: Build) -> None:
    """With 2.40, gas writes no SFrame FDE for `drap`: its DWARF CFA expression is evaluated. With
    2.47, a flexible FDE (`CFA = *(fp - 8)`, RA padding): SFrame alone unwinds it as gdb does."""
    states = _states(drap_build, "drap-")
    release = drap_build[0].split("-")[0]
    for state in states:
        for cfi in ([], ["--cfi", "dwarf"], ["--cfi", "sframe"]):
            if cfi == ["--cfi", "sframe"] and release == "2.40":
                continue  # no FDE for drap: SFrame alone can only guess (see the `both` test)
            walk = _ours(drap_build[1], state["core"], *cfi)
            if cfi == ["--cfi", "sframe"]:  # libc has no SFrame: as far as the program goes
                ours = [f["pc"] for f in walk["frames"]][: len(state["frames"])]
                assert ours == [pc for pc, _ in state["frames"]], (state["tag"], walk["stop"])
            else:
                _assert_gdbs(state, walk)
    _count(drap_build, states)
    call = next(state for state in states if state["tag"] == "drap-call")
    explained = run_process("unwind", str(drap_build[1]), "--core", call["core"], "--explain").stdout
    drap_step = explained.split("in drap ()")[1].split("#2")[0]
    if release == "2.40":
        assert "CFA [DW_OP_breg6 (rbp) -8; DW_OP_deref]: DW_OP_breg6 (rbp) -8 → 0x" in drap_step
    else:
        assert "CFA = *(rbp - 8 = 0x" in drap_step and "fdes[" in drap_step


def _drap_call(host: Build) -> dict[str, Any]:
    return next(state for state in host[2] if state["tag"] == "drap-call")


def test_cfi_both_does_not_call_a_shared_fallback_agreement(host: Build) -> None:
    """2.40 gives `drap` no SFrame FDE: SFrame alone falls back on the frame-pointer chain and gets
    the caller's SP wrong where DWARF CFI evaluates the expression; `--cfi both` says so."""
    result = run_process("unwind", str(host[1]), "--core", _drap_call(host)["core"], "--cfi", "both")
    assert result.returncode == 0, result.stderr
    assert "note: DWARF CFI parts from SFrame at frame #2" in result.stdout, result.stdout


def test_a_core_taken_during_start_up_unwinds_without_notes_on_data_files(host: Build) -> None:
    (state,) = _states(host, "startup")
    result = run_process("unwind", str(host[1]), "--core", state["core"])
    assert result.returncode == 0, result.stderr
    assert "ld.so.cache" not in result.stdout + result.stderr
    walk = _ours(host[1], state["core"])
    names = [name for _, name in state["frames"]]
    # gdb goes on past ld.so's `_start` with words of the initial stack (argc, argv) as PCs; sfview stops there
    state = {**state, "frames": state["frames"][: names.index("_start") + 1]}
    _assert_gdbs(state, walk)
    assert _frames(walk)[0][1] == "_dl_map_object_from_fd"
    # `_start` has no CFI and pushes nothing: the word its prologue leaves at SP is argc, no return address
    assert _frames(walk)[-1][1] == "_start" and walk["stop"].endswith(", in no module"), walk["stop"]
    _count(host, [state])


def test_a_stripped_copy_of_the_program_that_ran_is_accepted(host: Build, tmp_path: Path) -> None:
    """strip 2.40 drops the section headers and shrinks `.sframe` (its padding): the first page differs,
    the build-id note in memory is the file's."""
    need("strip")
    stripped = tmp_path / "states"
    subprocess.run(["strip", "-s", "-o", str(stripped), str(host[1])], check=True)
    state = _drap_call(host)
    walk = _ours(stripped, state["core"])
    assert [f["pc"] for f in walk["frames"]][: len(state["frames"])] == [pc for pc, _ in state["frames"]]


def test_registers_of_a_pie_without_bias_get_a_hint(host: Build) -> None:
    pc, sp = _drap_call(host)["frames"][0][0], 0x7FFFFFFFE000
    result = run_process("unwind", str(host[1]), "--regs", f"pc={pc:#x},sp={sp:#x}")
    assert result.returncode == 0, result.stderr
    assert "is position-independent (ET_DYN)" in result.stderr and "give --bias" in result.stderr, "a note: on stderr"


def test_the_states_matched() -> None:
    """Runs after the others: how many states matched gdb in each build (the report's figure)."""
    for name, tags in sorted(MATCHED.items()):
        print(f"\n{name}: {len(tags)} states matched gdb frame for frame")
    assert sum(map(len, MATCHED.values())) >= 20 or not MATCHED


# AArch64: a PLT stub as frame 0 -----------------------------------------------------------


def test_an_aarch64_plt_stub_returns_through_lr_as_gdb_multiarch_finds(tmp_path: Path) -> None:
    need("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch")
    program = tmp_path / "plt-stub"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-no-pie", "-Wa,--gsframe", "-Wl,-z,now",
         "-o", str(program), str(DATA / "src" / "plt_stub.c")],
        check=True,
    )  # fmt: skip

    core = _qemu_core_in(program, tmp_path / "run", "max")
    bt = subprocess.run(
        ["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {SYSROOT}", "-ex", "bt", str(program), str(core)],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    theirs = gdb_frames(bt)[:3]
    assert [name for _, name in theirs] == ["puts@plt", "call_puts", "outer"], bt
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout)[:3] == theirs
    assert result.stdout.startswith(f"#0  {theirs[0][0]:#018x} in puts@plt ()  [LR (PLT stub)]")


def _qemu_core_in(program: Path, folder: Path, cpu: str) -> Path:
    """`test_unwind._qemu_core` in a folder of its own (one core a folder)."""
    folder.mkdir()
    return _qemu_core(program, folder, cpu=cpu)


def test_a_pac_ret_library_is_unwound_by_its_dwarf_cfi_as_gdb_multiarch_does(tmp_path: Path) -> None:
    """The library has no SFrame: its DWARF CFI unwinds it, `DW_CFA_AARCH64_negate_ra_state` replayed
    and the signed return addresses stripped. gdb-multiarch stops at signed addresses, so it unwinds
    the same program run with pointer authentication off (the same code and stack, unsigned)."""
    need("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch")
    src = DATA / "src"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-fPIC", "-shared", "-mbranch-protection=pac-ret",
         str(src / "libpac.c"), "-o", str(tmp_path / "libpac.so")],
        check=True,
    )  # fmt: skip
    program = tmp_path / "pac"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-no-pie", "-Wa,--gsframe", "-mbranch-protection=pac-ret",
         str(src / "pac_main.c"), "-o", str(program), f"-L{tmp_path}", "-lpac", f"-Wl,-rpath,{tmp_path}"],
        check=True,
    )  # fmt: skip
    signed = _qemu_core_in(program, tmp_path / "signed", "max")
    unsigned = _qemu_core_in(program, tmp_path / "unsigned", "max,pauth=off")
    bt = subprocess.run(
        ["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {SYSROOT}", "-ex", f"set solib-search-path {tmp_path}",
         "-ex", "bt", str(program), str(unsigned)],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    theirs = gdb_frames(bt)
    assert [name for _, name in theirs] == ["crash", "lib_inner", "lib_outer", "main"], bt
    result = run_process("unwind", str(program), "--core", str(signed), "--sysroot", SYSROOT, "--explain")
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == theirs
    library_steps = result.stdout.split("in lib_inner ()")[1].split("in main ()")[0]
    assert library_steps.count("DWARF CFI: the FDE at .eh_frame") == 2
    stripped = re.findall(
        r"RA signed: strip the PAC bits: (0x[0-9a-f]+) & (0x[0-9a-f]+) = (0x[0-9a-f]+)", library_steps
    )
    assert len(stripped) == 2 and all(int(a, 16) & int(m, 16) == int(b, 16) for a, m, b in stripped)
