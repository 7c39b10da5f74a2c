"""PLT entries whose GOT slot has a relocation without a symbol (`IRELATIVE`: an IFUNC's, as libc's own PLT
calls memset, strlen and memcpy) named as each reference names them: objdump and gdb `*ABS*+0x9c840@plt`
(BFD's absolute section and the relocation's addend), perf 6.1 `@plt`.

The program (`tests/data/src/ifunc_plt.c`, built once with `gcc -O2 -g -fno-builtin -fno-plt -Wa,--gsframe`)
calls `explicit_bzero` in a loop, which calls memset through such an entry of libc's PLT. (`-fno-plt`: the
program calls libc through its GOT, without a PLT of its own, whose entries perf 6.1 names after `_init`, the
symbol before them, `_init+0x50`, where sfview says `explicit_bzero@plt`: not what this test is about.)

- `plt_symbols` on the system's libc against objdump's names for its PLT entries;
- `sfview unwind` on a core of the program stopped in that entry (by gdb, which writes the core) against gdb's
  `bt` there, line for line;
- `sfview perf` on a profile of the program (`perf record -e cpu-clock:u --call-graph dwarf`), each sample's
  DWARF stack named as sfview's folded stacks name it, against `perf script`'s, sample by sample.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process
from test_inline import LIBC
from test_live_names import frames
from test_perf_names import Profiled, record_profile

from sfview.inputs.elf.image import ElfImage
from sfview.inputs.plt import plt_symbols

PLT_LINE = re.compile(r"^([0-9a-f]+) <([^>]+@plt)>:$", re.M)
ROUNDS = "20000000"
"""The loop's rounds in the profile: about 0.1 s, some 400 samples, a sixth of them in the PLT entry."""


def _need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: it is the reference here (binutils, gdb, linux-perf, gcc)")
    if not Path(LIBC).exists():
        pytest.skip(f"no {LIBC}: the test stops the program in the C library's PLT")


def _objdump(*args: str) -> str:
    return subprocess.run(["objdump", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need("gcc", "objdump")
    program = tmp_path_factory.mktemp("ifunc_plt") / "ifunc_plt"
    subprocess.run(["gcc", "-O2", "-g", "-fno-builtin", "-fno-plt", "-Wa,--gsframe", "-o", str(program),
                    str(DATA / "src" / "ifunc_plt.c")], check=True)  # fmt: skip
    return program


def test_libcs_plt_is_named_as_objdump_names_it() -> None:
    _need("objdump")
    with open(LIBC, "rb") as f:
        ours = [(s.name, s.address) for s in plt_symbols(ElfImage.of(f))]
    theirs = [(name, int(address, 16)) for address, name in PLT_LINE.findall(_objdump("-d", LIBC))]
    assert ours == theirs
    assert any(name.startswith("*ABS*+0x") for name, _ in ours), "libc's PLT has IRELATIVE entries"


def _slot() -> tuple[int, int, str]:
    """Where libc's `explicit_bzero` and the PLT entry it calls are (in the file) and objdump's name of it."""
    code = _objdump("-d", "--no-show-raw-insn", LIBC)
    found = re.search(r"^([0-9a-f]+) <explicit_bzero@@[^>]*>:\n(?:.+\n)*?.*\scall\s+([0-9a-f]+) <([^>]+)>", code, re.M)
    assert found is not None, "libc's explicit_bzero calls memset through its PLT"
    return int(found[1], 16), int(found[2], 16), found[3]


def test_a_frame_in_the_entry_is_gdbs(program: Path) -> None:
    """gdb stopped in the PLT entry `explicit_bzero` calls (its `*ABS*+0x…@plt`), its `bt` and the core it
    writes there: sfview's backtrace of the core is gdb's, the entry named as gdb names it."""
    _need("gdb")
    function, slot, name = _slot()
    assert name.startswith("*ABS*+0x"), name
    core = program.parent / "core"
    stop = f"break *((char *) explicit_bzero + {slot - function})"
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set backtrace past-main on", "-ex", "break work",
                          "-ex", "run", "-ex", stop, "-ex", "continue", "-ex", "bt", "-ex", f"gcore {core}",
                          str(program)],
                         capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    theirs = frames(gdb[gdb.rfind("\n#0 ") :])
    assert theirs and f" in {name} from " in theirs[0], gdb
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert frames(result.stdout) == theirs, result.stdout + gdb


@pytest.fixture(scope="module")
def profile(program: Path) -> Profiled:
    _need("perf")
    return record_profile(program, ROUNDS)


def test_perf_names_the_entry_as_perf_script(profile: Profiled, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sample by sample, sfview's DWARF stacks named as `perf script` names them, `@plt` in the entry; the
    folded stacks of `sfview perf` have it too."""
    theirs, ours = profile.stacks(monkeypatch)
    in_plt = [time for time, names in theirs.items() if "@plt" in names]
    assert len(in_plt) > 10, f"perf script has {len(in_plt)} samples in the PLT entry"
    differing = [time for time in theirs if ours[time] != theirs[time]]
    assert not differing, [(theirs[time], ours[time]) for time in differing[:3]]
    folded = profile.sfview("--folded", "dwarf")
    assert folded.returncode == 0, folded.stderr
    assert ";explicit_bzero;@plt " in folded.stdout, folded.stdout
