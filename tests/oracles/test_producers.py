"""Other producers than GNU as and ld: clang (its own code, and gcc's assembly through clang's
assembler), lld and mold (`tools/toolchains.sh` unpacks them from sid; tests/toolchains.py finds them).

Each file is held to the real tools: `dump` to the newest binutils' readelf, `check` to no false
problem (and the real one lld makes named), `compare` to the DWARF CFI the same compiler wrote,
`check --profile libsframe-*` to each release's own libsframe, `unwind` to gdb on a core, the
explorer's tables to readelf's rows, `stats` to readelf -S's sizes, and `diff` between producers to
what the producers say themselves (clang's warnings for the functions it leaves out, readelf's FDE
lists for those a linker leaves out) and, where code moved, to each file's DWARF CFI at the PCs it
names.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, run_process
from elftools.elf.elffile import ELFFile
from libsframe_oracle import Library, library, predict, queries
from test_releases_compared import FDE_LINE, readelf_fde_starts, readelf_section_sizes
from test_unwind import _gdb_core, gdb_frames, need, our_frames
from toolchains import Linker, cache_dir, llvm, toolchain

from sfview.app.app import SfviewApp
from sfview.consumers.libsframe_releases import RELEASES
from sfview.document import Document

SOURCES = DATA / "src"
PROGRAMS = ("shapes.c", "leaves.c", "states.c", "signal.c")


class Builds:
    """Every file of the module, built once."""

    def __init__(self, folder: Path) -> None:
        self.llvm = llvm()
        self.gas44 = toolchain("2.44", "x86_64")
        self.gas47 = toolchain("2.47", "x86_64")
        self.files: dict[str, Path] = {}
        self.clang_said: dict[str, str] = {}
        for program in PROGRAMS:
            name = Path(program).stem
            source = SOURCES / program
            clang_o = folder / f"{name}-clang.o"
            self.llvm.compile("-O2", "-c", source, "-o", clang_o)
            self.files[f"{name}: clang .o"] = clang_o
            exe = folder / f"{name}-clang-lld"
            self.llvm.link(Linker.LLD, clang_o, "-o", exe)
            self.files[f"{name}: clang + lld"] = exe
            assembly = folder / f"{name}.s"
            subprocess.run(["gcc", "-O2", "-S", str(source), "-o", str(assembly)], check=True)
            self.clang_said[name] = self.llvm.compile("-c", assembly, "-o", folder / f"{name}-s-clang.o")
            self.files[f"{name}: gcc -S, clang's assembler"] = folder / f"{name}-s-clang.o"
            self.gas44.compile("-c", assembly, "-o", folder / f"{name}-s-gas44.o")
            self.files[f"{name}: gcc -S, gas 2.44"] = folder / f"{name}-s-gas44.o"
            self.gas47.compile("-c", assembly, "-o", folder / f"{name}-s-gas47.o")
            self.files[f"{name}: gcc -S, gas 2.47"] = folder / f"{name}-s-gas47.o"
            gas_o = folder / f"{name}-gas47.o"
            self.gas47.compile("-O2", "-c", source, "-o", gas_o)
            self.gas47.compile(gas_o, "-o", folder / f"{name}-gas47-ld")
            self.files[f"{name}: gas 2.47 + ld 2.47"] = folder / f"{name}-gas47-ld"
            self.llvm.link(Linker.MOLD, gas_o, "-o", folder / f"{name}-gas47-mold")
            self.files[f"{name}: gas 2.47 + mold"] = folder / f"{name}-gas47-mold"
        # two objects with SFrame in one link: lld puts their sections one after the other
        lib = folder / "libcallback-clang.o"
        self.llvm.compile("-O2", "-c", SOURCES / "libcallback.c", "-o", lib)
        self.two = folder / "two-clang-lld"
        self.llvm.link(Linker.LLD, folder / "shapes-clang.o", lib, "-o", self.two)
        self.lib = lib


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> Builds:
    return Builds(tmp_path_factory.mktemp("producers"))


READ_BY_EVERY_COMMAND = ("clang .o", "clang + lld", "gcc -S, clang's assembler", "gas 2.47 + mold")
CASES = [f"{Path(p).stem}: {kind}" for p in PROGRAMS for kind in READ_BY_EVERY_COMMAND]


@pytest.mark.parametrize("case", CASES)
def test_dump_is_the_newest_readelfs(cli, builds, case):
    path = builds.files[case]
    result = cli("dump", str(path))
    assert (result.code, result.err) == (0, "")
    assert result.out == builds.gas47.readelf_sframe(path)


@pytest.mark.parametrize("case", CASES)
def test_check_finds_no_false_problem(cli, builds, case):
    result = cli("check", str(builds.files[case]))
    problems = [line for line in result.out.splitlines() if ": error " in line or ": warning " in line]
    assert not problems and result.code == 0, result.out + result.err


@pytest.mark.parametrize("case", CASES)
def test_compare_agrees_with_the_same_compilers_dwarf(cli, builds, case):
    result = cli("compare", "--json", str(builds.files[case]))
    doc = json.loads(result.out)
    assert result.code == 0 and doc["agree"], [d for d in doc["differences"] if not d["explained"]]
    assert doc["summary"]["bytes_disagreeing"] == 0 and doc["summary"]["bytes_compared"] > 0


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> Iterator[dict[str, Library]]:
    folder = tmp_path_factory.mktemp("libsframe")
    libs = {release: library(release, folder) for release in RELEASES}
    yield libs
    for lib in libs.values():
        lib.close()


@pytest.mark.parametrize("case", [*CASES, "two objects, clang + lld"])
def test_each_libsframe_release_does_what_the_profile_says(builds, libraries, case):
    """Each binutils release's own libsframe (decode, then a lookup around every function and row) on
    each producer's section answers as sfview's profile of that release predicts (`check --profile`).

    What they answer: 2.40 and 2.44 refuse every one (version 2 with the PCREL flag, clang's; version 3);
    2.47 decodes every one, but finds no row for any PC in what clang wrote, linked or not: clang does
    not set SFRAME_F_FDE_SORTED, and lld passes its section through as it is."""
    path = builds.two if case.startswith("two") else builds.files[case]
    data = Document.open(str(path)).data
    asked = queries(data)
    for release, lib in libraries.items():
        real, said = lib.ask(data, asked), predict(release, data, asked)
        assert real == said, (release, real.decode, said.decode)
        assert (real.decode == 0) == (release == "2.47"), (release, real.decode)
        if release == "2.47":
            found = sum(1 for lookup in real.lookups if lookup[0] == 0)
            assert (found == 0) == ("clang" in case), (case, found)


@pytest.mark.parametrize("case", CASES)
def test_stats_accounts_for_every_byte(cli, builds, case):
    path = builds.files[case]
    (doc,) = json.loads(cli("stats", "--json", str(path)).out)
    size = readelf_section_sizes(builds.gas47, path)[".sframe"]
    assert doc["bytes"] == sum(doc["parts"].values()) == size
    assert doc["parts"]["unused"] == doc["parts"]["outside the sub-sections"] == 0


@pytest.mark.parametrize("program", PROGRAMS)
def test_clangs_assembler_writes_what_gas_244_writes(cli, builds, program):
    """The same assembly (gcc's) through clang's assembler and gas 2.44: the same functions, the same
    rules (2.44 leaves out the DRAP functions clang leaves out)."""
    name = Path(program).stem
    a, b = builds.files[f"{name}: gcc -S, gas 2.44"], builds.files[f"{name}: gcc -S, clang's assembler"]
    doc = json.loads(cli("diff", "--json", str(a), str(b)).out)
    assert doc["same_meaning"] and doc["different_meaning"] == []
    paired = doc["summary"]["same"] + doc["summary"]["encoded_differently"]
    assert paired == len(FDE_LINE.findall(builds.gas44.readelf_sframe(a)))


@pytest.mark.parametrize("program", PROGRAMS)
def test_clangs_assembler_against_gas_247(cli, builds, program):
    """Against gas 2.47 (version 3): the same rules; the functions only gas describes are the DRAP ones
    2.47 writes as flexible FDEs, each one clang warns it omits (its warnings name the CFA register)."""
    name = Path(program).stem
    a, b = builds.files[f"{name}: gcc -S, gas 2.47"], builds.files[f"{name}: gcc -S, clang's assembler"]
    doc = json.loads(cli("diff", "--json", str(a), str(b)).out)
    assert doc["different_meaning"] == [] and doc["only_in_b"] == []
    warned = warned_functions(builds.clang_said[name], builds.files[f"{name}: gcc -S, gas 2.47"].parent / f"{name}.s")
    assert {entry["name"] for entry in doc["only_in_a"]} == warned
    gas_dump = builds.gas47.readelf_sframe(a)
    for entry in doc["only_in_a"]:
        assert re.search(rf"pc = {entry['start']:#x}, size = {entry['size']} bytes", gas_dump)


def warned_functions(said: str, assembly: Path) -> set[str]:
    """The functions of `assembly` clang's warnings say it writes no SFrame for (a CFA in neither SP nor
    FP): each warning's line, in the function whose label comes last before it."""
    lines = assembly.read_text().splitlines()
    functions = {m.group(1) for line in lines if (m := re.match(r"\s*\.type\s+([\w.]+),\s*@function", line))}
    warned = set()
    for warning in re.finditer(rf"{re.escape(assembly.name)}:(\d+):\d+: warning: canonical Frame Address", said):
        at = int(warning.group(1)) - 1
        labels = (re.match(r"([\w.]+):", line) for line in reversed(lines[:at]))
        label = next((m.group(1) for m in labels if m and m.group(1) in functions), None)
        warned.add(label)
    return warned


@pytest.mark.parametrize("program", PROGRAMS)
def test_mold_merges_what_ld_merges(cli, builds, program):
    """The same objects linked by ld 2.47 and mold 3.0: every function the same; what only ld describes
    is its PLT, for which mold writes no FDE (readelf lists none at the PLT's address in mold's file)."""
    name = Path(program).stem
    a, b = builds.files[f"{name}: gas 2.47 + ld 2.47"], builds.files[f"{name}: gas 2.47 + mold"]
    doc = json.loads(cli("diff", "--json", str(a), str(b)).out)
    assert doc["different_meaning"] == [] and doc["only_in_b"] == []
    assert doc["summary"]["same"] > 0
    mold_fdes = readelf_fde_starts(builds.gas47, b)
    with b.open("rb") as f:
        plts = {s.name: s["sh_addr"] for s in ELFFile(f).iter_sections() if s.name.startswith(".plt")}
    for entry in doc["only_in_a"]:
        assert entry["name"].startswith(".plt"), entry
        assert entry["start"] in readelf_fde_starts(builds.gas47, a)
        assert plts.get(entry["name"]) not in mold_fdes


def test_lld_puts_two_sections_one_after_the_other(cli, builds):
    """lld 23 links SFrame by concatenation: the second object's section follows the first, where no
    consumer reads it. readelf lists the first object's FDEs alone; `check` names the bytes after it."""
    first = len(readelf_fde_starts(builds.gas47, builds.files["shapes: clang .o"]))
    listed = readelf_fde_starts(builds.gas47, builds.two)
    assert len(listed) == first
    result = cli("check", str(builds.two))
    assert result.code == 1
    assert "warning trailing-bytes" in result.out
    second = builds.gas47.readelf_sframe(builds.lib)
    assert "Num FDEs" in second  # the object lld appended has a section of its own


def dwarf_cfa_at(path: Path, pc: int) -> tuple[int, int]:
    """The CFA rule (register, offset) the file's `.eh_frame` gives at `pc`, as pyelftools decodes it."""
    with path.open("rb") as f:
        for entry in ELFFile(f).get_dwarf_info().EH_CFI_entries():
            header = getattr(entry, "header", {})
            start = header.get("initial_location") if hasattr(header, "get") else None
            if start is None or not start <= pc < start + header["address_range"]:
                continue
            rows = [row for row in entry.get_decoded().table if row["pc"] <= pc]
            cfa = rows[-1]["cfa"]
            return cfa.reg, cfa.offset
    raise AssertionError(f"no FDE of {path}'s .eh_frame covers {pc:#x}")


@pytest.fixture(scope="module")
def lua_library(builds, tmp_path_factory) -> tuple[Path, Path]:
    """Lua's loadlib.c (Debian's source), gcc -O2 -S, assembled by gas 2.44 and linked by ld 2.44, and
    assembled by clang and linked by lld: one object each, so that lld's output is one section."""
    cache = cache_dir()
    source = cache / "src" / "lua5.4" / "src" / "loadlib.c" if cache else None
    if source is None or not source.exists():
        pytest.skip("Lua's source could not be fetched from Debian's archive (tools/toolchains.sh)")
    folder = tmp_path_factory.mktemp("lua")
    assembly = folder / "loadlib.s"
    flags = ["-O2", "-fPIC", "-DLUA_USE_LINUX"]
    subprocess.run(["gcc", *flags, "-S", str(source), "-o", str(assembly)], check=True)
    builds.gas44.compile("-c", assembly, "-o", folder / "gas.o")
    builds.gas44.compile("-shared", folder / "gas.o", "-o", folder / "gas.so")
    builds.llvm.compile("-c", assembly, "-o", folder / "clang.o")
    builds.llvm.link(Linker.LLD, "-shared", folder / "clang.o", "-o", folder / "clang.so")
    return folder / "gas.so", folder / "clang.so"


def test_every_meaning_difference_is_dwarfs_too(cli, lua_library):
    """gcc's assembly of real code through gas and through clang's assembler: where the two assemblers
    encode an instruction differently (a jump gas makes short), the code after it moves and the rows
    with it. Each difference `diff` reports is one in DWARF too: at that PC each file's `.eh_frame`
    (decoded by pyelftools) gives the CFA that file's SFrame gives."""
    a, b = lua_library
    doc = json.loads(cli("diff", "--json", str(a), str(b)).out)
    changes = [(pair, c) for pair in doc["different_meaning"] for c in pair.get("changes", []) if c["column"] == "CFA"]
    assert changes, "the two assemblers were expected to lay some code out differently"
    for pair, change in changes:
        for side, path in (("a", a), ("b", b)):
            rule = change[side]
            if rule is None:
                continue
            pc = pair[side]["start"] + change["start"]
            assert dwarf_cfa_at(path, pc) == (rule["base"], rule["offset"]), (side, hex(pc), rule)


@pytest.mark.parametrize("linker", [Linker.LLD, Linker.MOLD])
def test_unwind_with_sframe_alone_finds_what_gdb_finds(builds, tmp_path, linker):
    """deep.c, by clang and linked by lld, or by gas 2.47 and linked by mold: stopped in gdb at
    `stop_here`, its core walked with SFrame alone (`--cfi sframe`) gives gdb's frames up to `main`."""
    need("gdb")
    program = tmp_path / f"deep-{linker.value}"
    obj = tmp_path / "deep.o"
    if linker is Linker.LLD:
        builds.llvm.compile("-O2", "-c", SOURCES / "deep.c", "-o", obj)
    else:
        builds.gas47.compile("-O2", "-c", SOURCES / "deep.c", "-o", obj)
    builds.llvm.link(linker, obj, "-o", program)
    core, bt = _gdb_core(program, tmp_path)
    expected = gdb_frames(bt)
    assert [name for _, name in expected][:2] == ["stop_here", "leaf"] and expected[-1][1] == "main", bt
    result = run_process("unwind", str(program), "--core", str(core), "--cfi", "sframe")
    assert our_frames(result.stdout) == expected, result.stdout + bt


def readelf_cfas(text: str) -> list[list[str]]:
    """Each function's rows as readelf prints them: the CFA column of each row, function by function."""
    functions: list[list[str]] = []
    for line in text.splitlines():
        words = line.split()
        if line.strip().startswith("func idx ["):
            functions.append([])
        elif functions and len(words) >= 2 and re.fullmatch(r"[0-9a-f]{16}", words[0]):
            functions[-1].append(words[1])
    return functions


@pytest.mark.parametrize("case", ["shapes: clang .o", "shapes: clang + lld", "shapes: gas 2.47 + mold", "two"])
async def test_the_explorer_shows_what_readelf_shows(builds, case):
    """The explorer on each producer's file: a function a line, and for each, chosen with `down`, the
    rows readelf prints for it (their count and CFA)."""
    path = builds.two if case == "two" else builds.files[case]
    expected = readelf_cfas(builds.gas47.readelf_sframe(path))
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.explorer.fde_table
        assert table.row_count == len(expected)
        for index, cfas in enumerate(expected):
            if index:
                await pilot.press("down")
            await pilot.pause()
            assert table.cursor == index
            rows = app.explorer.fre_table
            assert [rows.row_cells(i)[2] for i in range(rows.row_count)] == cfas, index


def test_neither_ld_nor_mold_keeps_what_clang_writes(cli, builds, tmp_path):
    """clang's version 2 sections with the PCREL flag, linked by ld 2.47 (which reads version 3 only) and
    by mold 3.0: ld says it ignores each and keeps only its own PLT's FDEs; mold writes no .sframe at all,
    which `diff` says in one line, naming the side."""
    obj = builds.files["shapes: clang .o"]
    ld_out = tmp_path / "clang-ld"
    said = subprocess.run(
        ["gcc", "-B", f"{builds.gas47.bin}/", str(obj), "-o", str(ld_out)], capture_output=True, text=True, check=True
    ).stderr
    assert "SFrame section ignored" in said
    with ld_out.open("rb") as f:
        plts = [
            (s["sh_addr"], s["sh_addr"] + s["sh_size"]) for s in ELFFile(f).iter_sections() if s.name.startswith(".plt")
        ]
    starts = readelf_fde_starts(builds.gas47, ld_out)
    assert starts and all(any(lo <= start < hi for lo, hi in plts) for start in starts)
    mold_out = tmp_path / "clang-mold"
    builds.llvm.link(Linker.MOLD, obj, "-o", mold_out)
    result = cli("diff", str(builds.files["shapes: clang + lld"]), str(mold_out))
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("sfview: ") and "B: no .sframe section" in result.err
