"""Version 3 flexible FDEs (the bulk reader leaves them to the model): a row through Kaitai is decoded, judged
and written once per distinct bytes past its start, not once per row.

Counted, not timed: 3,000 AArch64 flexible functions of 101 signed-RA rows (4.3 MB) took `dump` 16 s,
`check` 21 s, `dump --json` 24 s and `stats` 10 s, every row a Kaitai FRE, its rules, its check and its
JSON made afresh (`bench/README.md`, round eleven). The section is written here from the v3 notes of the
specification: the FDE index, then each function's attributes and rows.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from conftest import run_cli

from sfview.check.run import _Pass
from sfview.generated.sframe import Sframe
from sfview.output import jsondoc

FUNCTIONS, ROWS = 300, 40
AARCH64_LE, PCREL_SORTED, FLEXIBLE, KEY_B, MANGLED = 2, 0x5, 1, 0x20, 0x80
SP, LR, FP = 31, 30, 29


def _control(reg: int, deref: bool = False) -> int:
    return (reg << 3) | 1 | (2 if deref else 0)


def _flexible_section() -> bytes:
    """`FUNCTIONS` flexible functions 0x100 apart, each `ROWS` rows of two patterns (CFA sp+16, RA in the LR
    signed; then the FP saved too), 2-byte words, every row's RA marked mangled, pointer-authentication key B."""
    words = (
        [_control(SP), 16, _control(LR), 0],
        [_control(SP), 32, _control(LR), 0, _control(FP, deref=True), -32],
    )
    block = b""
    for j in range(ROWS):
        row = words[j % 2]
        info = 1 | len(row) << 1 | 1 << 5 | MANGLED  # CFA from SP, 2-byte words
        block += bytes([j, info]) + struct.pack(f"<{len(row)}h", *row)
    attr = struct.pack("<HBBB", ROWS, KEY_B, FLEXIBLE, 0)  # ADDR1 starts, PCINC
    blocks = (attr + block) * FUNCTIONS
    fdes = b"".join(
        struct.pack("<qII", 0x1000 + 0x100 * i - (28 + 16 * i), 0x100, i * len(attr + block)) for i in range(FUNCTIONS)
    )
    header = struct.pack(
        "<HBBBbbBIIIII", 0xDEE2, 3, PCREL_SORTED, AARCH64_LE, 0, 0, 0, FUNCTIONS, FUNCTIONS * ROWS, len(blocks), 0,
        len(fdes),
    )  # fmt: skip
    return header + fdes + blocks


@pytest.fixture(scope="module")
def section(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flexible") / "flexible.sframe"
    path.write_bytes(_flexible_section())
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
