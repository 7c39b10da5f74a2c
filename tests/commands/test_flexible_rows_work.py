"""Version 3 flexible FDEs (the bulk reader leaves them to the model): a row through Kaitai is decoded, judged
and written once per distinct bytes past its start, not once per row.

Counted, not timed: 3,000 AArch64 flexible functions of 101 signed-RA rows (4.3 MB) took `dump` 16 s,
`check` 21 s, `dump --json` 24 s and `stats` 10 s, every row a Kaitai FRE, its rules, its check and its
JSON made afresh (`bench/README.md`, round eleven). The section is written by `handmade.flexible_signed`
from the v3 notes of the specification: the FDE index, then each function's attributes and rows.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_cli
from handmade import flexible_signed
from toolchains import toolchain

from sfview.check.run import _Pass
from sfview.generated.sframe import Sframe
from sfview.output import jsondoc

FUNCTIONS, ROWS = 300, 40


@pytest.fixture(scope="module")
def section(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flexible") / "flexible.sframe"
    path.write_bytes(flexible_signed(FUNCTIONS, ROWS))
    return path


class _Counted:
    """Counts the Kaitai FREs read while a command runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made = 0
        read = Sframe.Section.Fre._read

        def counted(fre) -> None:
            self.made += 1
            read(fre)

        monkeypatch.setattr(Sframe.Section.Fre, "_read", counted)


@pytest.mark.parametrize("command", [["dump"], ["dump", "--json"], ["check"], ["stats"]], ids=" ".join)
def test_flexible_rows_decoded_once_per_pattern(
    command: list[str], section: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    counted = _Counted(monkeypatch)
    result = run_cli(*command, str(section), capsys=capsys)
    assert result.err == ""
    assert counted.made <= 2  # two patterns; before: one for each of the 12,000 rows
    if command == ["dump", "--json"]:
        functions = json.loads(result.out)["functions"]
        assert len(functions) == FUNCTIONS
        last = functions[-1]["fres"]
        # each row its own place, whatever row of the same bytes was decoded first
        assert [r["start_offset"] for r in last] == list(range(ROWS))
        assert [r["address"] - last[0]["address"] for r in last] == list(range(ROWS))
        assert {(r["mangled_ra"], r["cfa"]["offset"]) for r in last} == {(True, 16), (True, 32)}
    if command == ["dump"]:
        assert result.out.count("pauth = B key") == FUNCTIONS


def test_flexible_rows_judged_and_written_once_per_pattern(section: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    judged, written = [], []
    judge, write = _Pass.pattern_problems, jsondoc._row_members
    monkeypatch.setattr(_Pass, "pattern_problems", lambda self, *a: judged.append(a) or judge(self, *a))
    monkeypatch.setattr(jsondoc, "_row_members", lambda *a: written.append(a) or write(*a))
    run_cli("check", str(section), capsys=capsys)
    run_cli("dump", "--json", str(section), capsys=capsys)
    assert len(judged) <= 2 and len(written) <= 2


def test_flexible_signed_rows_dump_as_binutils_2_47_prints_them(tmp_path: Path, cli) -> None:
    """The rows decoded once per bytes keep each its own address: the whole dump is readelf's (2.47), which
    prints every row of every function."""
    readelf = toolchain("2.47", "x86_64").tool("readelf")
    raw, elf = tmp_path / "flexible.sframe", tmp_path / "flexible"
    raw.write_bytes(flexible_signed(40, 60))
    subprocess.run(
        ["objcopy", "--add-section", f".sframe={raw}", "--set-section-flags", ".sframe=contents,readonly",
         str(DATA / "shapes-x86_64-no-sframe"), str(elf)],
        check=True,
    )  # fmt: skip
    expected = subprocess.run([readelf, "-W", "--sframe", str(elf)], capture_output=True, text=True, check=True)
    result = cli("dump", str(elf))
    assert (result.code, result.err) == (0, "")
    assert result.out == expected.stdout
    assert expected.stdout.count("[s]") == 40 * 60  # every row's RA signed, as readelf reads it
