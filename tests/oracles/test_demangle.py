"""C++ names demangled wherever people read them, by the C++ runtime's own demangler (cxxfilt).

The oracle is binutils' `c++filt`: on the names of this machine's libstdc++
the demangler must agree with it but for the standard abbreviations the C++
runtime uses (`std::istream` for `std::basic_istream<char, ...>`). Then a C++
program built here must show its functions by their C++ names in the
explorer, in `dump --json` (beside the raw name), in `compare`, and be found
by either form.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA

from sfview.app.app import SfviewApp
from sfview.cli import run
from sfview.document import Document
from sfview.inputs.demangle import demangle, without_parameters

LIBSTDCXX = Path("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
ABBREVIATIONS = {
    f"std::basic_{name}<char, std::char_traits<char> >": f"std::{name}" for name in ("istream", "ostream", "iostream")
} | {"std::basic_string<char, std::char_traits<char>, std::allocator<char> >": "std::string"}
"""What libstdc++'s `__cxa_demangle` abbreviates and `c++filt` spells out."""


def _abbreviated(text: str) -> str:
    """`text` with the runtime's abbreviations, and `> >` closed up as `>>` (c++filt spaces them)."""
    text = text.replace("> >", ">>").replace("> >", ">>")
    for long, short in ABBREVIATIONS.items():
        text = text.replace(long.replace("> >", ">>"), short)
    return text


def test_agrees_with_cxxfilt_on_libstdcxx_names() -> None:
    if not (shutil.which("c++filt") and shutil.which("nm") and LIBSTDCXX.exists()):
        pytest.skip("c++filt, nm or libstdc++ is missing")
    out = subprocess.run(["nm", "-D", str(LIBSTDCXX)], capture_output=True, text=True, check=True).stdout
    names = sorted({line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()[-1].startswith("_Z")})
    truth = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    differ = [
        (n, demangle(n), t)
        for n, t in zip(names, truth.splitlines(), strict=True)
        if _abbreviated(demangle(n)) != _abbreviated(t)
    ]
    assert len(names) > 3000
    assert differ == []


def test_without_parameters_agrees_with_cxxfilt_p_on_libstdcxx_names() -> None:
    """perf's names of C++ functions (libiberty's demangler without `DMGL_PARAMS`) are `c++filt -p`'s: without
    parameters, qualifiers and a template's return type; special names (`typeinfo for …`) whole."""
    if not (shutil.which("c++filt") and shutil.which("nm") and LIBSTDCXX.exists()):
        pytest.skip("c++filt, nm or libstdc++ is missing")
    out = subprocess.run(["nm", "-D", str(LIBSTDCXX)], capture_output=True, text=True, check=True).stdout
    names = sorted({line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()[-1].startswith("_Z")})
    names += ["_ZN6shapes5labelB5cxx11Em", "_ZZ4mainENKUlmE_clEm", "_ZN12_GLOBAL__N_15churnEmi.constprop.0"]
    truth = subprocess.run(["c++filt", "-p"], input="\n".join(names), capture_output=True, text=True, check=True)
    differ = [
        (n, without_parameters(n), t)
        for n, t in zip(names, truth.stdout.splitlines(), strict=True)
        if _abbreviated(without_parameters(n)) != _abbreviated(t)
    ]
    assert len(names) > 3000
    assert differ == []
    assert without_parameters("_ZN6shapes5labelB5cxx11Em") == "shapes::label[abi:cxx11]"
    assert without_parameters("main") == "main"


def test_whatever_follows_a_symbol_is_kept() -> None:
    assert demangle("_ZN2ns7throwerEi+0x12") == "ns::thrower(int)+0x12"
    assert demangle("_ZNSo3putEc@plt") == "std::ostream::put(char)@plt"
    assert demangle("main") == "main"
    assert demangle("_Znot_a_name") == "_Znot_a_name"


def test_a_name_that_is_not_utf8_is_kept_as_it_is() -> None:
    """A `_Z` name whose bytes in `.strtab` are not UTF-8 (read with surrogateescape): not a mangled
    name, kept; `unwind --regs pc=NAME` looking it up among demangled names ended in a traceback."""
    stored = b"_ZN2ns7thr\xff\xfeEv".decode("utf-8", "surrogateescape")
    assert demangle(stored) == stored
    assert demangle(stored + "+0x4") == stored + "+0x4"


@pytest.fixture(scope="module")
def thrower(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    prog = tmp_path_factory.mktemp("cxx") / "thrower"
    subprocess.run(["g++", "-O1", "-Wa,--gsframe", "-o", str(prog), str(DATA / "src" / "thrower.cc")], check=True)
    return prog


def test_dump_json_has_the_demangled_name_beside_the_raw_one(thrower: Path, capsys: pytest.CaptureFixture) -> None:
    assert run_with(["dump", "--json", str(thrower)]) == 0
    functions = json.loads(capsys.readouterr().out)["functions"]
    named = {f["symbol"]: f["demangled"] for f in functions}
    assert named["_ZN2ns7throwerEi"] == "ns::thrower(int)"
    assert named["_ZN2ns7throwerEd"] == "ns::thrower(double)"
    assert named["main"] is None


def test_compare_names_functions_as_cxx(thrower: Path, capsys: pytest.CaptureFixture) -> None:
    run_with(["compare", "--json", str(thrower)])
    found = json.loads(capsys.readouterr().out)
    shown = {o["demangled"] for o in found.get("only", []) if o.get("demangled")}
    shown |= {d["demangled"] for d in found.get("differences", []) if d.get("demangled")}
    run_with(["compare", str(thrower)])
    text = capsys.readouterr().out
    assert "_ZN2ns" not in text
    assert all(name in text for name in shown)


def run_with(argv: list[str]) -> int:
    import sys

    saved = sys.argv
    sys.argv = ["sfview", *argv]
    try:
        return run()
    finally:
        sys.argv = saved


async def test_the_explorer_shows_and_finds_cxx_names(thrower: Path) -> None:
    doc = Document.open(str(thrower))
    app = SfviewApp(doc)
    async with app.run_test(size=(120, 40)) as pilot:
        ex = app.explorer
        names = [ex.fde_table.row_cells(row)[4].strip() for row in range(ex.fde_table.row_count)]
        assert "ns::thrower(int)" in names and not any(n.startswith("_Z") for n in names)
        await pilot.press("s", *"ns::thrower(d", "enter")  # go to symbol, by the C++ name
        await pilot.pause()
        func = doc.section.function(ex.state.selected.fde)
        assert doc.function_name(func) == "_ZN2ns7throwerEd"
        assert "ns::thrower(double)" in str(ex.status_line.render())
        await pilot.press("s", *"_ZN2ns7throwerEi", "enter")  # and by the raw one
        await pilot.pause()
        assert doc.function_name(doc.section.function(ex.state.selected.fde)) == "_ZN2ns7throwerEi"
        await pilot.press("g", *"ns::thrower(int)+0x4", "enter")  # a name in an address, in either form
        await pilot.pause()
        func = doc.section.function(ex.state.selected.fde)
        assert doc.function_name(func) == "_ZN2ns7throwerEi"
