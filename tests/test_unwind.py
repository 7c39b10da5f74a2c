"""`sfview unwind` against gdb: every frame gdb shows, up to `main`, with the same PC and function.

The fixture cores come with gdb's backtraces; more cores are made here, now:
programs built with `gcc -Wa,--gsframe` at several optimisation levels (and a
callback through a shared library) are stopped under `gdb -batch`, which
writes a core and prints its backtrace. AArch64 programs run under
qemu-user until they crash, and gdb-multiarch reads the core qemu writes.
Each test skips, saying why, when a tool is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA

from sfview.inputs.core import read_core
from sfview.unwind import unwind_core

SOURCES = DATA / "src"
GDB_FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) \(")
OUR_FRAME = re.compile(r"^#(\d+)\s+(0x[0-9a-f]+) in (\S+) \(")


def gdb_frames(text: str, pc0: int) -> list[tuple[int, str]]:
    """(PC, function) of each frame gdb printed, up to `main`; frame 0's PC (gdb omits it) is `pc0`."""
    frames = []
    for line in text.splitlines():
        m = GDB_FRAME.match(line)
        if m:
            if m.group(1) == "0":
                frames = []  # gdb prints where the core stopped before `bt` prints frame 0 again
            pc = int(m.group(2), 16) if m.group(2) else pc0
            frames.append((pc, m.group(3)))
            if m.group(3) == "main":
                break
    return frames


def our_frames(out: str) -> list[tuple[int, str]]:
    frames = []
    for line in out.splitlines():
        m = OUR_FRAME.match(line)
        if m:
            frames.append((int(m.group(2), 16), m.group(3)))
    return frames


def assert_same_as_gdb(cli, program: Path, core: Path, gdb_text: str, *extra: str) -> list[tuple[int, str]]:
    expected = gdb_frames(gdb_text, read_core(str(core)).threads[0].pc)
    assert expected and expected[-1][1] == "main", gdb_text
    result = cli("unwind", str(program), "--core", str(core), *extra)
    assert (result.code, result.err) == (0, ""), result.err
    ours = our_frames(result.out)
    assert ours[: len(expected)] == expected, result.out
    return expected


# The fixtures ---------------------------------------------------------------


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_fixture_cores_match_gdb(cli, arch: str) -> None:
    program, core = DATA / f"deep-{arch}", DATA / f"deep-{arch}.core"
    frames = assert_same_as_gdb(cli, program, core, (DATA / f"deep-{arch}.core.gdb-bt.txt").read_text())
    assert [name for _, name in frames] == ["stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main"]


def test_aarch64_leaf_return_address_is_in_the_link_register(cli) -> None:
    result = cli("unwind", str(DATA / "deep-aarch64"), "--core", str(DATA / "deep-aarch64.core"), "--explain")
    first = result.out.split("\n#1")[0]
    assert "RA = x30 = 0x400718" in first
    assert "not saved yet: still in the link register" in first


def test_explain_shows_fde_fre_rules_and_arithmetic(cli) -> None:
    result = cli("unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64.core"), "--explain")
    assert result.code == 0
    block = result.out.split("\n#2")[0].split("\n#1")[1]
    assert "lookup 0x555555555180: FDE 4 at section offset 0x60" in block  # PC - 1 for a return address
    assert "FRE 1 at section offset 0xaa; PCINC" in block
    assert "CFA = rsp + 48 = 0x7fffffffec30 + 0x30 = 0x7fffffffec60" in block
    assert "RA = *(CFA - 8) = *(0x7fffffffec60 - 0x8) = *0x7fffffffec58 = 0x5555555551c5" in block


def test_json_carries_every_step(cli) -> None:
    result = cli("unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64.core"), "--json")
    trace = json.loads(result.out)
    assert [f["function"] for f in trace["frames"][:6]] == [
        "stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main",
    ]  # fmt: skip
    step = trace["frames"][1]["step"]
    assert step["fde_index"] == 4 and step["fre_index"] == 1
    assert [v["name"] for v in step["values"]] == ["CFA", "RA", "FP", "SP"]
    assert step["values"][1]["address"] == 0x7FFFFFFFEC58
    assert trace["stop"]


def test_stops_with_a_reason_where_libc_has_no_sframe(cli) -> None:
    result = cli("unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64.core"))
    assert "stopped: no SFrame in libc.so.6" in result.out


# Registers typed by a person -------------------------------------------------

AARCH64_REGS = "pc=0x4006f4,sp=0x5500800630,fp=0x5500800630,lr=0x400718"


def test_regs_without_memory_stop_where_memory_is_needed(cli) -> None:
    result = cli("unwind", str(DATA / "deep-aarch64"), "--regs", AARCH64_REGS)
    assert result.code == 0
    assert our_frames(result.out) == [(0x4006F4, "stop_here"), (0x400718, "leaf")]
    assert "memory at 0x5500800638 is not available" in result.out


def test_regs_with_memory_words_go_further(cli) -> None:
    mem = ["--mem", "0x5500800638=0x400750", "--mem", "0x5500800630=0x5500800680"]
    result = cli("unwind", str(DATA / "deep-aarch64"), "--regs", AARCH64_REGS, *mem)
    assert our_frames(result.out)[:3] == [(0x4006F4, "stop_here"), (0x400718, "leaf"), (0x400750, "with_alloca")]
    assert "memory at 0x5500800688 is not available" in result.out


# Bad input ------------------------------------------------------------------


def test_core_of_another_arch(cli) -> None:
    result = cli("unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-aarch64.core"))
    assert result.code == 2 and result.out == ""
    assert result.err.startswith(f"sfview: {DATA / 'deep-x86_64'}: a x86-64 program, but the core")


def test_core_of_another_program(cli) -> None:
    result = cli("unwind", str(DATA / "shapes-x86_64-O2"), "--core", str(DATA / "deep-x86_64.core"))
    assert result.code == 2
    assert "maps no file named shapes-x86_64-O2: a core of another program?" in result.err


def test_truncated_core(cli, tmp_path: Path) -> None:
    cut = tmp_path / "cut.core"
    cut.write_bytes((DATA / "deep-x86_64.core").read_bytes()[:100_000])
    result = cli("unwind", str(DATA / "deep-x86_64"), "--core", str(cut))
    assert result.code == 2 and len(result.err.splitlines()) == 1
    assert result.err.startswith(f"sfview: {cut}: ")


def test_not_a_core(cli) -> None:
    result = cli("unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64"))
    assert (result.code, result.err.strip()) == (
        2,
        f"sfview: {DATA / 'deep-x86_64'}: not a core file (ELF type ET_DYN)",
    )


@pytest.mark.parametrize(
    ("regs", "message"),
    [("pc=0x4006f4", "needs at least pc and sp"), ("pc=0x4006f4,sp=zz", "not a number: 'zz'"), ("ip=1", "NAME=VALUE")],
)
def test_bad_registers(cli, regs: str, message: str) -> None:
    result = cli("unwind", str(DATA / "deep-aarch64"), "--regs", regs)
    assert result.code == 2 and message in result.err and len(result.err.splitlines()) == 1


def test_missing_thread(cli) -> None:
    result = cli("unwind", str(DATA / "deep-x86_64"), "--core", str(DATA / "deep-x86_64.core"), "--thread", "3")
    assert result.code == 2 and "no thread 3: the core holds 1" in result.err


# Built here, now: x86-64 under gdb --------------------------------------------


def _need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")


def _gsframe(gcc: str) -> None:
    probe = subprocess.run(
        [gcc, "-Wa,--gsframe", "-c", "-x", "c", "-", "-o", os.devnull], input="int f(void){return 0;}", text=True,
        capture_output=True,
    )  # fmt: skip
    if probe.returncode:
        pytest.skip(f"{gcc}'s assembler does not emit SFrame: {probe.stderr.strip()}")


X86_VARIANTS = {
    "O0-fp": ["-O0", "-fno-omit-frame-pointer"],
    "O1-no-fp": ["-O1", "-fomit-frame-pointer"],
    "O2": ["-O2"],
    "Os": ["-Os"],
}


@pytest.fixture(scope="session")
def x86_cores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, str, list[str]]]:
    """name → (program, core, gdb's backtrace, extra sfview arguments), built once per session."""
    _need("gcc", "gdb")
    _gsframe("gcc")
    out = tmp_path_factory.mktemp("x86-cores")
    builds: dict[str, tuple[list[str], list[str]]] = {}
    for name, flags in X86_VARIANTS.items():
        builds[name] = (["gcc", "-g", "-Wa,--gsframe", *flags, str(SOURCES / "deep.c"), "-o", str(out / name)], [])
    lib = out / "libunwind_cb.so"
    subprocess.run(
        ["gcc", "-O2", "-g", "-Wa,--gsframe", "-fPIC", "-shared", str(SOURCES / "libunwind_cb.c"), "-o", str(lib)],
        check=True,
    )
    builds["callback-lib"] = (
        ["gcc", "-O2", "-g", "-Wa,--gsframe", str(SOURCES / "unwind_cb_main.c"), "-o", str(out / "callback-lib"),
         f"-L{out}", "-lunwind_cb", f"-Wl,-rpath,{out}"],
        ["--lib-dir", str(out)],
    )  # fmt: skip
    cores = {}
    for name, (command, extra) in builds.items():
        subprocess.run(command, check=True)
        core = out / f"{name}.core"
        gdb = subprocess.run(
            ["gdb", "-batch", "-nx", "-ex", "break stop_here", "-ex", "run", "-ex", f"generate-core-file {core}",
             "-ex", "bt", str(out / name)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if not core.exists():
            pytest.skip(f"gdb could not run the program and write a core here: {gdb.stderr.strip()[-300:]}")
        cores[name] = (out / name, core, gdb.stdout, extra)
    return cores


@pytest.mark.parametrize("name", [*X86_VARIANTS, "callback-lib"])
def test_x86_64_builds_match_gdb(cli, x86_cores, name: str) -> None:
    program, core, gdb_text, extra = x86_cores[name]
    frames = assert_same_as_gdb(cli, program, core, gdb_text, *extra)
    names = [n for _, n in frames]
    if name == "callback-lib":
        assert names == ["stop_here", "callback", "lib_apply", "main"]
    else:
        # How many `recurse` frames remain depends on the optimisation (tail calls): gdb's count is the answer.
        assert names[:3] == ["stop_here", "leaf", "with_alloca"] and names[-2:] == ["fp_func", "main"]


def test_engine_api_names_the_library_frame(x86_cores) -> None:
    program, core, _, extra = x86_cores["callback-lib"]
    trace = unwind_core(str(program), str(core), lib_dirs=[extra[1]])
    assert [f.module for f in trace.frames[:4]] == ["callback-lib", "callback-lib", "libunwind_cb.so", "callback-lib"]


# Built here, now: AArch64 under qemu-user, read by gdb-multiarch ----------------------

AARCH64_VARIANTS = {
    "O0-fp": ["-O0", "-fno-omit-frame-pointer"],
    "O2": ["-O2"],
    "Os": ["-Os"],
    "O2-pac-ret": ["-O2", "-mbranch-protection=pac-ret"],
}
QEMU_SYSROOT = "/usr/aarch64-linux-gnu"


def _qemu_core(program: Path, folder: Path, cpu: str) -> Path:
    """Run `program` under qemu-aarch64 until it crashes; the core qemu writes in `folder`."""
    folder.mkdir()
    subprocess.run(
        f"ulimit -c unlimited; exec qemu-aarch64 -cpu {cpu} -L {QEMU_SYSROOT} {program}",
        shell=True, cwd=folder, capture_output=True, timeout=60,
    )  # fmt: skip
    cores = list(folder.glob("qemu_*.core"))
    if not cores:
        pytest.skip(f"qemu-aarch64 wrote no core for {program.name} (core dumps disabled here?)")
    return cores[0]


@pytest.fixture(scope="session")
def aarch64_cores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, str]]:
    """name → (program, core, gdb-multiarch's backtrace), built once per session.

    Non-PIE, as gdb-multiarch cannot place a PIE in a qemu core (no NT_FILE).
    For pac-ret, gdb cannot strip signed return addresses from a qemu core
    (no pointer-authentication mask in it), so its backtrace comes from a core
    of the same binary run with pointer authentication off (`-cpu
    max,pauth=off`: the same code and call chain, unsigned return addresses);
    sfview reads the core of the run with signed ones.
    """
    _need("aarch64-linux-gnu-gcc", "qemu-aarch64", "gdb-multiarch")
    _gsframe("aarch64-linux-gnu-gcc")
    out = tmp_path_factory.mktemp("aarch64-cores")
    cores = {}
    for name, flags in AARCH64_VARIANTS.items():
        program = out / name
        subprocess.run(
            ["aarch64-linux-gnu-gcc", "-g", "-no-pie", "-Wa,--gsframe", "-DCRASH_AT_STOP", *flags,
             str(SOURCES / "deep.c"), "-o", str(program)],
            check=True,
        )  # fmt: skip
        core = _qemu_core(program, out / f"{name}.run", "max")
        truth = _qemu_core(program, out / f"{name}.nopac", "max,pauth=off") if "pac" in name else core
        gdb = subprocess.run(
            ["gdb-multiarch", "-batch", "-nx", "-ex", f"set sysroot {QEMU_SYSROOT}", "-ex", "bt", str(program),
             str(truth)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        cores[name] = (program, core, gdb.stdout)
    return cores


@pytest.mark.parametrize("name", AARCH64_VARIANTS)
def test_aarch64_builds_match_gdb(cli, aarch64_cores, name: str) -> None:
    program, core, gdb_text = aarch64_cores[name]
    names = [n for _, n in assert_same_as_gdb(cli, program, core, gdb_text)]
    assert names[:3] == ["stop_here", "leaf", "with_alloca"] and names[-2:] == ["fp_func", "main"]


def test_aarch64_signed_return_addresses_are_stripped(cli, aarch64_cores) -> None:
    program, core, _ = aarch64_cores["O2-pac-ret"]
    result = cli("unwind", str(program), "--core", str(core), "--explain")
    signed = re.findall(r"signed (0x[0-9a-f]+), signature stripped with mask (0x[0-9a-f]+)", result.out)
    assert signed, result.out
    # qemu's signatures live above bit 48: the raw words are not addresses, the stripped ones are.
    assert all(int(raw, 16) >> 48 for raw, _ in signed)


def test_aarch64_pie_placed_through_auxv(cli, aarch64_cores, tmp_path: Path) -> None:
    """A PIE in a qemu core (no NT_FILE) is placed by AT_ENTRY; same functions as the non-PIE build."""
    program = tmp_path / "pie"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-g", "-O2", "-pie", "-fPIE", "-Wa,--gsframe", "-DCRASH_AT_STOP",
         str(SOURCES / "deep.c"), "-o", str(program)],
        check=True,
    )  # fmt: skip
    core = _qemu_core(program, tmp_path / "run", "max")
    pie = our_frames(cli("unwind", str(program), "--core", str(core)).out)
    fixed = our_frames(cli("unwind", str(aarch64_cores["O2"][0]), "--core", str(aarch64_cores["O2"][1])).out)
    assert [n for _, n in pie[:6]] == [n for _, n in fixed[:6]]
    assert all(pc > 0x5500000000 for pc, _ in pie[:6])  # where qemu loads a PIE: run-time, not link-time, PCs
