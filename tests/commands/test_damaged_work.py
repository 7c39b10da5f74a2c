"""`check`, `dump` and `diff` on sections of damaged functions: why each function's rows stop is said from where the
bulk reader stopped, without decoding the FDE again through the model, and the debug parser that locates an
undecodable row runs once for rows of the same bytes, not once per function.

Counted, not timed: 200,000 such functions took `check` 5.7 s and 21 s (the debug parser's share), `dump`
6 s and 18 s, where a sound section of as many functions takes 1.9 s and 0.5 s (`bench/bench_bounded.py`).
The sections are written here from the specification (version 2, AMD64).
"""

from __future__ import annotations

import contextlib
import io
import struct
import tracemalloc
from pathlib import Path

import pytest
from conftest import run_cli

from sfview.cli import main
from sfview.sframe.model.section import FRE_MOST, Section

FUNCTIONS = 2000


def _past_the_pool(count: int) -> bytes:
    """`count` functions 16 bytes apart, each pointing at the one row there is and claiming 1,000."""
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 + 16 * i, 16, 0, 1000, 0, 0, 0) for i in range(count))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, count, 1, 3, 0, len(fdes))
    return header + fdes + bytes([0, 0x03, 8])


def _undefined_offset_size(count: int) -> bytes:
    """`count` functions, each two rows of its own whose first has offset size 3, which no version defines."""
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 + 16 * i, 16, 3 * i, 2, 0, 0, 0) for i in range(count))
    rows = bytes([0, 0x63, 8]) * count
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, count, 2 * count, len(rows), 0, len(fdes))
    return header + fdes + rows


@pytest.mark.parametrize("command", ["check", "dump"])
@pytest.mark.parametrize(
    "shape, said",
    [
        (_past_the_pool, "fdes[1999].func_num_fres = 1000: more FREs than the FRE sub-section can hold"),
        (_undefined_offset_size, "function 1999: FRE 0: info: value 3 is not a defined value"),
    ],
    ids=["count-past-the-pool", "offset-size-undefined"],
)
def test_damaged_functions_are_not_decoded_again(
    command: str, shape, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    path = tmp_path / "damaged.sframe"
    path.write_bytes(shape(FUNCTIONS))
    decoded, explained = [], []
    decode, explain = Section._decode_function, Section._explain
    monkeypatch.setattr(Section, "_decode_function", lambda self, i: decoded.append(i) or decode(self, i))
    monkeypatch.setattr(Section, "_explain", lambda self, *a, **k: explained.append(a[0]) or explain(self, *a, **k))
    args = [command, "--max-problems", "0", str(path)] if command == "check" else [command, str(path)]
    result = run_cli(*args, capsys=capsys)
    assert said in result.out  # the last function's problem is said, worded as ever
    # At most: the rows within an FRE's length of the section's end are read with fewer bytes after them
    assert not decoded and len(explained) <= FRE_MOST


@pytest.mark.parametrize(
    "shape, said",
    [
        (_past_the_pool, "fdes[0].func_num_fres = 1000: more FREs than the FRE sub-section can hold"),
        (_undefined_offset_size, "function 0: FRE 0: info: value 3 is not a defined value"),
    ],
    ids=["count-past-the-pool", "offset-size-undefined"],
)
def test_diff_of_damaged_functions_decodes_none_and_words_what_it_says(
    shape, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """`diff` decoded each damaged function's FDE through the model to learn why its rows stop (200,000 with
    themselves: 16.5 s), and worded every function's problem to say the first. The bulk reader's facts say
    it, worded for the problem said alone; the rest are counted."""
    path = tmp_path / "damaged.sframe"
    path.write_bytes(shape(FUNCTIONS))
    decoded, worded = [], []
    decode, stop = Section._decode_function, Section.rows_stop
    monkeypatch.setattr(Section, "_decode_function", lambda self, i: decoded.append(i) or decode(self, i))
    monkeypatch.setattr(Section, "rows_stop", lambda self, *a: worded.append(a[1]) or stop(self, *a))
    result = run_cli("diff", str(path), str(path), capsys=capsys)
    assert result.code == 2
    assert said in result.err and f"(and {FUNCTIONS - 1} more problems, left out of the diff)" in result.err
    assert not decoded and len(worded) <= 2  # the first of each side


def test_stats_of_damaged_functions_holds_no_error_per_function(tmp_path: Path) -> None:
    """`stats` says why each function could not be counted, after the counts: it held every error, worded
    twice, and (with the cyclic collector paused) each function's debug parse, 10 KB a function. Now the
    functions' numbers are held and each error is worded as it is said."""
    small, big = tmp_path / "small.sframe", tmp_path / "big.sframe"
    small.write_bytes(_undefined_offset_size(10))
    big.write_bytes(_undefined_offset_size(FUNCTIONS))

    def peak(path: Path) -> tuple[int, int]:
        said = _Lines()
        with contextlib.redirect_stdout(_Lines()), contextlib.redirect_stderr(said):
            tracemalloc.start()
            try:
                main(["stats", str(path)])
                return said.undefined, tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()

    peak(small)  # the modules imported
    _, constant = peak(small)
    said, most = peak(big)
    assert said == FUNCTIONS
    assert most - constant < 10 * big.stat().st_size, (most - constant) / big.stat().st_size


class _Lines(io.TextIOBase):
    """A text stream that keeps nothing written to it but how many rows it was told have an undefined offset
    size (what is written is not the command's to hold)."""

    undefined = 0

    def write(self, text: str) -> int:
        self.undefined += text.count("FRE 0: info: value 3 is not a defined value")
        return len(text)
