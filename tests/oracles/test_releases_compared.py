"""`sfview diff` and `sfview stats` on the same programs built by binutils 2.40 (v1), 2.44 (v2) and 2.47 (v3).

The same gcc writes the same code and CFI directives for each; only the assembler and linker change.
`diff` must find no rule that differs at any PC, only encodings (a PLT's rep size, a v3 record) and
functions one release describes and another does not; and each of those is confirmed without sfview:
that release's readelf lists an FDE at the function's address in one file, the other file's readelf
none at the address of the same function (its symbol, or its PLT section, found by pyelftools), and
that file's `.eh_frame` (pyelftools' decoder) covers the function, so that it is SFrame's coverage
that differs, not the code.

`stats` must account for every byte of each section: its parts add up to the size readelf -S gives,
none unused, and its function and row counts are the header's as that release's readelf prints them.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
from test_toolchains import SOURCES, build
from toolchains import Toolchain, toolchain

PROGRAMS = ("shapes.c", "drap.c", "states.c", "exceptions.cc")
PAIRS = (("2.40", "2.44"), ("2.44", "2.47"), ("2.40", "2.47"))
FDE_LINE = re.compile(r"func idx \[\d+\]: pc = (0x[0-9a-f]+), size = (\d+) bytes")


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[tuple[str, str], tuple[Toolchain, Path]]:
    """Each program built once by each release (-O2) for x86-64; shapes.c also for AArch64 by 2.47."""
    folder = tmp_path_factory.mktemp("diff-builds")
    out = {}
    for release in ("2.40", "2.44", "2.47"):
        tc = toolchain(release, "x86_64")
        for program in PROGRAMS:
            path = build(tc, SOURCES / program, ["-O2"], folder / f"{program}-{release}")
            out[(program, release)] = (tc, path)
    tc = toolchain("2.47", "aarch64")
    out[("shapes.c", "2.47-aarch64")] = (tc, build(tc, SOURCES / "shapes.c", ["-O2"], folder / "shapes-aarch64"))
    return out


def readelf_fde_starts(tc: Toolchain, path: Path) -> set[int]:
    return {int(m.group(1), 16) for m in FDE_LINE.finditer(tc.readelf_sframe(path))}


def address_of(path: Path, name: str) -> int:
    """Where the function (or the section, for a PLT) called `name` starts, from pyelftools."""
    with path.open("rb") as f:
        elf = ELFFile(f)
        section = elf.get_section_by_name(name)
        if section is not None:
            return section["sh_addr"]
        for table in elf.iter_sections():
            if isinstance(table, SymbolTableSection):
                for sym in table.iter_symbols():
                    if sym.name == name and sym["st_info"]["type"] == "STT_FUNC":
                        return sym["st_value"]
    raise AssertionError(f"{name} not in {path}")


def eh_frame_covers(path: Path, address: int) -> bool:
    with path.open("rb") as f:
        elf = ELFFile(f)
        for entry in elf.get_dwarf_info().EH_CFI_entries():
            header = getattr(entry, "header", {})
            if "initial_location" in header:
                start = header["initial_location"]
                if start <= address < start + header["address_range"]:
                    return True
    return False


def confirm_only_in(owner: tuple[Toolchain, Path], other: tuple[Toolchain, Path], entry: dict) -> None:
    """A function `diff` says only `owner` describes: readelf of `owner` lists it, readelf of `other`
    has no FDE where that function is in `other`, and `other`'s DWARF CFI covers it."""
    tc, path = owner
    assert entry["start"] in readelf_fde_starts(tc, path), entry
    if not entry["name"]:
        pytest.fail(f"a function without a name only in {path}: {entry}")
    other_tc, other_path = other
    there = address_of(other_path, entry["name"])
    assert there not in readelf_fde_starts(other_tc, other_path), (entry, there)
    if not entry["name"].startswith(".plt"):  # ld writes no DWARF CFI for .plt.got
        assert eh_frame_covers(other_path, there), (entry, there)


def readelf_section_sizes(tc: Toolchain, path: Path) -> dict[str, int]:
    """Every section's size as that release's `readelf -S -W` prints it."""
    out = subprocess.run([tc.tool("readelf"), "-S", "-W", str(path)], capture_output=True, text=True, check=True)
    sizes = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            sizes[m.group(1)] = int(m.group(2), 16)
    return sizes


@pytest.mark.parametrize(
    ("program", "release"),
    [(p, r) for r in ("2.40", "2.44", "2.47") for p in PROGRAMS] + [("shapes.c", "2.47-aarch64")],
)
def test_stats_accounts_for_every_byte(cli, builds, program, release):
    tc, path = builds[(program, release)]
    result = cli("stats", "--json", str(path))
    assert (result.code, result.err) == (0, "")
    (doc,) = json.loads(result.out)
    sizes = readelf_section_sizes(tc, path)
    assert doc["bytes"] == sizes[".sframe"]
    assert sum(doc["parts"].values()) == sizes[".sframe"], doc["parts"]
    assert doc["parts"]["unused"] == doc["parts"]["outside the sub-sections"] == 0
    for name in (".eh_frame", ".eh_frame_hdr", ".debug_frame"):
        assert doc["unwind_sections"][name] == sizes.get(name)
    dump = tc.readelf_sframe(path)
    assert doc["functions"] == int(re.search(r"Num FDEs: (\d+)", dump).group(1))
    assert doc["rows"] == int(re.search(r"Num FREs: (\d+)", dump).group(1))
    assert sum(doc["rows_per_function"].values()) == doc["functions"]


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize(("older", "newer"), PAIRS)
def test_releases_differ_in_encoding_and_coverage_only(cli, builds, program, older, newer):
    a, b = builds[(program, older)], builds[(program, newer)]
    result = cli("diff", "--json", str(a[1]), str(b[1]))
    assert result.err == ""
    doc = json.loads(result.out)
    assert doc["different_meaning"] == [], json.dumps(doc["different_meaning"], indent=1)
    assert doc["summary"]["same"] > 0
    for entry in doc["only_in_a"]:
        confirm_only_in(a, b, entry)
    for entry in doc["only_in_b"]:
        confirm_only_in(b, a, entry)
    assert result.code == (0 if doc["same_meaning"] else 1)
    assert doc["same_meaning"] == (not doc["only_in_a"] and not doc["only_in_b"])


def readelf_cfa_at(tc: Toolchain, path: Path, address: int) -> str:
    """The CFA column of the row readelf prints starting at `address`."""
    for line in tc.readelf_sframe(path).splitlines():
        words = line.split()
        if len(words) >= 2 and re.fullmatch(r"[0-9a-f]{16}", words[0]) and int(words[0], 16) == address:
            return words[1]
    raise AssertionError(f"no row at {address:#x} in readelf's dump of {path}")


def test_a_changed_row_is_found_where_readelf_shows_it(cli, builds, tmp_path):
    """One row of a 2.44 build changed by hand (its 1-byte CFA offset plus 8): `diff` reports that
    function, from that row's PC on, with the CFA rules that release's readelf prints for both files."""
    tc, path = builds[("shapes.c", "2.44")]
    doc = json.loads(cli("dump", "--json", str(path)).out)
    func = next(
        f
        for f in doc["functions"]
        if f["fre_type"] == "ADDR1"
        and f["pc_type"] == "PCINC"
        and len(f["fres"]) >= 3
        and f["fres"][1]["offset_size"] == 1
    )
    row = func["fres"][1]
    data = bytearray(path.read_bytes())
    at = doc["file_offset"] + row["section_offset"] + 2  # after the 1-byte start address and the info byte
    data[at] = (data[at] + 8) & 0xFF
    changed = tmp_path / "changed"
    changed.write_bytes(data)
    result = cli("diff", "--json", str(path), str(changed))
    assert result.code == 1
    (pair,) = json.loads(result.out)["different_meaning"]
    (change,) = pair["changes"]
    assert pair["a"]["start"] == pair["b"]["start"] == func["address"]
    assert (change["column"], change["start"], change["end"]) == (
        "CFA",
        row["start_offset"],
        func["fres"][2]["start_offset"],
    )
    address = func["address"] + row["start_offset"]
    assert change["a"]["text"] == readelf_cfa_at(tc, path, address)
    assert change["b"]["text"] == readelf_cfa_at(tc, changed, address)
    assert change["a"]["text"] != change["b"]["text"]


PLT_PROGRAMS = {
    "one": "#include <stdio.h>\nint main(int c, char **v) { puts(v[0]); return 0; }\n",
    "more": "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint main(int c, char **v) {\n"
    '  char b[64]; strcpy(b, v[0]); puts(b); printf("%zu", strlen(b)); return atoi(v[1]);\n}\n',
}


def objdump_plt_entries(tc: Toolchain, path: Path) -> set[str]:
    """The PLT entries objdump names (`<puts@plt>:`) in the file's disassembly."""
    out = subprocess.run([tc.tool("objdump"), "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"^[0-9a-f]+ <([^>]+@plt)>:", out, re.M))


def test_plts_are_paired_by_their_entries_symbols(cli, tmp_path):
    """Two programs whose PLTs differ by the functions they call: `diff` pairs the two .plt FDEs and names
    the entries only one has by their symbols, as objdump names them."""
    tc = toolchain("2.47", "x86_64")
    paths = {}
    for name, text in PLT_PROGRAMS.items():
        source = tmp_path / f"{name}.c"
        source.write_text(text)
        paths[name] = tmp_path / name
        tc.compile("-O2", source, "-o", paths[name])
    doc = json.loads(cli("diff", "--json", str(paths["one"]), str(paths["more"])).out)
    (plt,) = [p for p in doc["different_meaning"] if p["a"]["name"] == ".plt" and p["a"]["size"] != p["b"]["size"]]
    expected = objdump_plt_entries(tc, paths["more"]) - objdump_plt_entries(tc, paths["one"])
    assert expected and set(plt["plt_entries_only_in_b"]) == expected
    assert plt.get("plt_entries_only_in_a", []) == []
