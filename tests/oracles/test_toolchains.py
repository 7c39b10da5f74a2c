"""`sfview dump` is what each binutils release's own `readelf --sframe` prints for what it wrote.

Programs are built here with three releases: this machine's 2.40 (SFrame version 1), trixie's 2.44
(version 2) and sid's newest, 2.47 (version 3, flexible FDEs), fetched and unpacked by
`tools/toolchains.sh` (tests/toolchains.py). Each is built with that release's assembler and linker
(`gcc -B`), and compared byte for byte with that release's readelf. s390x has its own module
(test_s390x.py). Real code too: C files of Debian's source packages (zlib, bzip2, Lua), built as
objects and as shared libraries. `check` must find no error in any of it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process
from toolchains import RELEASES, SFRAME_VERSION, Toolchain, cache_dir, toolchain

SOURCES = DATA / "src"
ALL_TARGETS = {
    "O0": ["-O0"],
    "O1": ["-O1"],
    "O2": ["-O2"],
    "O3": ["-O3", "-funroll-loops"],
    "Os": ["-Os"],
    "frame-pointer": ["-O2", "-fno-omit-frame-pointer"],
    "pie": ["-O2", "-fPIE", "-pie"],
    "no-pie": ["-O2", "-fno-pie", "-no-pie"],
    "shared": ["-O2", "-fPIC", "-shared"],
    "object": ["-O2", "-c"],
    "z-now": ["-O2", "-Wl,-z,now"],
    "z-lazy": ["-O2", "-fno-pie", "-no-pie", "-Wl,-z,lazy"],
}
ONLY = {
    "x86_64": {
        "cf-protection": ["-O2", "-fcf-protection"],
        "cf-protection-z-now": ["-O2", "-fcf-protection", "-Wl,-z,now"],
    },
    "aarch64": {
        "pac-ret": ["-O2", "-mbranch-protection=pac-ret"],
        "pac-ret-b-key": ["-O2", "-mbranch-protection=pac-ret+leaf+b-key"],
    },
}
PROGRAMS = {
    "deep.c": ["O0", "O2", "object"],
    "signal.c": ["O0", "O2", "Os"],
    "drap.c": ["O0", "O2", "O3"],
    "exceptions.cc": ["O0", "O2", "shared"],
    "threads.c": ["O2"],
    "qsort.c": ["O2", "frame-pointer"],
}
"""shapes.c is built with every variant; these with a few."""


def _cases() -> list[tuple[str, str, str, str]]:
    cases = []
    for release in RELEASES:
        for target in ("x86_64", "aarch64"):
            for variant in [*ALL_TARGETS, *ONLY[target]]:
                cases.append((release, target, "shapes.c", variant))
            for source, variants in PROGRAMS.items():
                cases += [(release, target, source, v) for v in variants]
    return cases


def _flags(target: str, variant: str) -> list[str]:
    return ALL_TARGETS.get(variant) or ONLY[target][variant]


def build(tc: Toolchain, source: Path, flags: list[str], out: Path) -> Path:
    """`source` built by `tc` with `flags` (C++ with the target's g++, threads with -pthread)."""
    extra = ["-pthread"] if source.name == "threads.c" else []
    if source.suffix == ".cc":
        cxx = tc.gcc.removesuffix("gcc") + "g++"
        tc = Toolchain(tc.release, tc.target, tc.bin, cxx, tc.suite_dir)
    tc.compile(*flags, *extra, source, "-o", out)
    return out


def assert_dump_is_readelfs(cli, tc: Toolchain, path: Path) -> str:
    expected = tc.readelf_sframe(path)
    result = cli("dump", str(path))
    assert (result.code, result.err) == (0, "")
    assert result.out == expected
    return result.out


def assert_no_error_found(cli, path: Path) -> None:
    """What a toolchain wrote is clean: no error, and no warning either (a dereferenced CFA such as DRAP's
    `(fp-8)` has a negative offset by design, say)."""
    result = cli("check", str(path))
    problems = [line for line in result.out.splitlines() if ": error " in line or ": warning " in line]
    assert not problems, "\n".join(problems[:10])
    assert result.code == 0, result.err


@pytest.mark.parametrize(("release", "target", "source", "variant"), _cases())
def test_dump_is_that_releases_readelf(cli, tmp_path: Path, release: str, target: str, source: str, variant: str):
    tc = toolchain(release, target)
    if source.endswith(".cc") and subprocess.run(["which", tc.gcc.removesuffix("gcc") + "g++"]).returncode:
        pytest.skip(f"no C++ compiler for {target} (Debian: g++-{target.replace('_', '-')}-linux-gnu)")
    path = build(tc, SOURCES / source, _flags(target, variant), tmp_path / f"{source}-{variant}")
    out = assert_dump_is_readelfs(cli, tc, path)
    assert f"SFRAME_VERSION_{SFRAME_VERSION[release]}" in out
    assert_no_error_found(cli, path)


@pytest.mark.parametrize("release", RELEASES)
def test_each_release_writes_what_the_tests_say_it_writes(cli, tmp_path: Path, release: str) -> None:
    """The features the tests above rely on are really there: flexible FDEs for DRAP in version 3,
    PCREL starts from 2.45 on, B-key signing, PLT entries under PCMASK."""
    x86 = toolchain(release, "x86_64")
    drap = assert_dump_is_readelfs(cli, x86, build(x86, SOURCES / "drap.c", ["-O2"], tmp_path / "drap"))
    cet = assert_dump_is_readelfs(
        cli, x86, build(x86, SOURCES / "shapes.c", ["-O2", "-fcf-protection"], tmp_path / "c")
    )
    arm = toolchain(release, "aarch64")
    pac = assert_dump_is_readelfs(
        cli, arm, build(arm, SOURCES / "shapes.c", ["-O2", "-mbranch-protection=pac-ret+b-key"], tmp_path / "pac")
    )
    assert "pauth = B key" in pac and "[s]" in pac
    assert "STARTPC[m]" in cet
    if release == "2.47":
        assert 'attr = "F"' in drap and "r10+0" in drap and "(fp-8)" in drap
        assert "SFRAME_F_FDE_FUNC_START_PCREL" in drap
    if release == "2.40":
        assert 'attr = "F"' not in drap


# Real code: C files of Debian's source packages ------------------------------------------

REAL = {
    "zlib": ("*.c", ["gzlib.c", "gzread.c", "gzwrite.c", "gzclose.c"], []),
    "bzip2": ("*.c", ["bzip2.c", "bzip2recover.c", "dlltest.c", "mk251.c", "spewG.c", "unzcrash.c"], []),
    "lua5.4": ("src/*.c", ["lua.c", "luac.c"], ["-DLUA_USE_LINUX"]),
}
"""Each package's library: its C files (a glob), less its programs and what needs a configure step."""


@pytest.mark.parametrize("package", REAL)
@pytest.mark.parametrize("target", ["x86_64", "aarch64"])
@pytest.mark.parametrize("release", RELEASES)
def test_real_code_from_debian_source_packages(cli, tmp_path: Path, release: str, target: str, package: str) -> None:
    tc = toolchain(release, target)
    cache = cache_dir()
    folder = cache / "src" / package if cache else None
    if folder is None or not (folder / ".done").exists():
        pytest.skip(f"Debian's {package} source could not be fetched (tools/toolchains.sh)")
    pattern, programs, defines = REAL[package]
    files = sorted(f for f in folder.glob(pattern) if f.name not in programs)
    library = tmp_path / f"lib{package}.so"
    tc.compile("-O2", "-fPIC", "-shared", *defines, *files, "-o", library)
    out = assert_dump_is_readelfs(cli, tc, library)
    assert out.count("func idx") >= 20
    assert_no_error_found(cli, library)
    obj = tmp_path / "one.o"
    tc.compile("-O2", "-c", *defines, max(files, key=lambda f: f.stat().st_size), "-o", obj)
    assert_dump_is_readelfs(cli, tc, obj)


# Version 3 flexible FDEs in a walk -------------------------------------------------------


@pytest.mark.parametrize("flags", [["-O0"], ["-O2"], ["-O2", "-fno-omit-frame-pointer"]])
def test_drap_functions_unwind_with_sframe_alone_as_gdb_does(tmp_path: Path, flags: list[str]) -> None:
    """binutils 2.47 describes gcc's stack-realigning functions with flexible FDEs: CFA from r10, then
    `(fp-8)`, and the RA as the padding word, which keeps the default rule (CFA - 8). SFrame alone
    (`--cfi sframe`, what the kernel has) walks through them to main, frame for frame as gdb."""
    from test_unwind import _gdb_core, gdb_frames, need, our_frames

    need("gdb")
    tc = toolchain("2.47", "x86_64")
    program = build(tc, SOURCES / "drap.c", flags, tmp_path / "drap")
    core, bt = _gdb_core(program, tmp_path, where="consume")
    expected = gdb_frames(bt, pc=None)
    assert [name for _, name in expected][-2:] == ["realigned", "main"], bt
    result = run_process("unwind", str(program), "--core", str(core), "--cfi", "sframe", "--explain")
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout)[1:] == expected[1:]
    assert "padding" in result.stdout, "the realigned frame's RA came through the padding word"


# Cores of what each release builds, against gdb ------------------------------------------

X86_UNWIND = {"O0-fp": ["-O0", "-fno-omit-frame-pointer"], "O2": ["-O2"], "O2-pie": ["-O2", "-fPIE", "-pie"]}


@pytest.mark.parametrize("release", ["2.44", "2.47"])
@pytest.mark.parametrize("variant", X86_UNWIND)
def test_x86_64_cores_unwind_as_gdb_does(tmp_path: Path, release: str, variant: str) -> None:
    """deep.c stopped in `stop_here`, built by binutils 2.44 (SFrame v2) and 2.47 (v3): with SFrame
    alone (`--cfi sframe`) and by default, every frame gdb shows, PC for PC, up to main."""
    from test_unwind import _gdb_core, gdb_frames, need, our_frames

    need("gdb")
    tc = toolchain(release, "x86_64")
    program = build(tc, SOURCES / "deep.c", X86_UNWIND[variant], tmp_path / "deep")
    core, bt = _gdb_core(program, tmp_path)
    expected = gdb_frames(bt)
    assert [name for _, name in expected][:2] == ["stop_here", "leaf"] and expected[-1][1] == "main", bt
    for cfi in ("sframe", "both"):
        result = run_process("unwind", str(program), "--core", str(core), "--cfi", cfi)
        assert result.returncode == 0, result.stderr
        assert our_frames(result.stdout) == expected, cfi


@pytest.mark.parametrize("release", ["2.44", "2.47"])
@pytest.mark.parametrize("flags", [["-O2"], ["-O0"], ["-O2", "-mbranch-protection=pac-ret+b-key"]])
def test_aarch64_cores_unwind_as_gdb_multiarch_does(tmp_path: Path, release: str, flags: list[str]) -> None:
    """The same program for AArch64 under qemu-user, faulting in `stop_here` (a leaf: its RA still in x30).
    With pac-ret the core comes from a run with pointer authentication off, which gdb-multiarch unwinds
    (test_unwind_truth.py covers signed return addresses)."""
    from test_unwind import _gdb_multiarch, _qemu_core, gdb_frames, need, our_frames

    need("qemu-aarch64", "gdb-multiarch")
    tc = toolchain(release, "aarch64")
    program = build(tc, SOURCES / "deep.c", [*flags, "-no-pie", "-DCRASH_AT_STOP"], tmp_path / "deep-aarch64")
    core = _qemu_core(program, tmp_path, cpu="max,pauth=off")
    expected = gdb_frames(_gdb_multiarch(program, core))
    assert [name for _, name in expected][:2] == ["stop_here", "leaf"] and expected[-1][1] == "main"
    result = run_process("unwind", str(program), "--core", str(core), "--cfi", "sframe")
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
