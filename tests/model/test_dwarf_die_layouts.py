"""Where each DIE ends, from its abbreviation's forms alone (`sfview.dwarf.source._Layouts`), held to pyelftools
parsing the same DIE (its size, tag and whether it has children), DIE by DIE, over every unit of files gcc and g++
wrote (DWARF 4 and 5, C and C++: strings, blocks, expressions, implicit constants, section offsets).

A unit's one pass over its DIEs (`_Tree.scan`) steps by `_Layouts` and parses only the functions: a DIE it
misjudged would shift every DIE after it, and the names of the unit with them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA
from elftools.dwarf.die import DIE
from elftools.elf.elffile import ELFFile

from sfview.dwarf.source import _Layouts

CXX = """
#include <map>
#include <string>
namespace shapes {
struct Shape { virtual ~Shape() = default; virtual double area() const = 0; };
struct Square : Shape {
    double side;
    explicit Square(double s) : side(s) {}
    double area() const override { return side * side; }
};
template <class T> T twice(T t) { return t + t; }
}
static const char *label = "squares";
int main(int argc, char **argv) {
    std::map<std::string, double> areas;
    shapes::Square square(argc + 1.5);
    areas[label] = shapes::twice(square.area());
    return static_cast<int>(areas[argv[0] ? label : "none"]);
}
"""


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """deep-x86_64 (gcc, C), and the C++ program above built with -gdwarf-4 and -gdwarf-5."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed: it writes the C++ units the layouts are compared on (g++)")
    folder = tmp_path_factory.mktemp("layouts")
    source = folder / "shapes.cc"
    source.write_text(CXX)
    built = [DATA / "deep-x86_64"]
    for version in ("4", "5"):
        output = folder / f"shapes-dwarf{version}.o"
        subprocess.run(["g++", f"-gdwarf-{version}", "-O2", "-c", "-o", str(output), str(source)], check=True)
        built.append(output)
    return built


def test_each_die_ends_where_pyelftools_says(objects: list[Path]) -> None:
    for path in objects:
        with path.open("rb") as f:
            info = ELFFile(f).get_dwarf_info(relocate_dwarf_sections=False)
            stream = info.debug_info_sec.stream
            data = stream.getvalue()
            dies = 0
            for cu in info.iter_CUs():
                layouts = _Layouts(cu, data)
                position, end = cu.cu_die_offset, cu.cu_offset + cu.size
                while position < end:
                    die = DIE(cu, stream, position)
                    expected = (position + die.size, None if die.is_null() else die.tag, bool(die.has_children))
                    assert layouts.after(position) == expected, (path.name, hex(position))
                    position += die.size
                    dies += 1
            assert dies > 50, path.name  # units of some size were compared
