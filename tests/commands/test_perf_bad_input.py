"""`sfview perf` on damaged and foreign files: one line naming the file and the byte, exit 2, no traceback.

The files are written here by a small writer of perf's layout (the file
header, one `perf_file_attr`, the data section, the architecture feature), so
that each damage is exactly one field; profiles recorded by perf itself are in
tests/oracles/test_perf.py.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

ATTR_SIZE = 128
"""`PERF_ATTR_SIZE_VER7`: the attribute perf 6.1 writes."""
REGS_X86 = (1 << 9) - 1 | 0xFF << 16
"""ax…flags and r8…r15, without the segment registers (a mask as perf's default is)."""
USER_STACK = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 12) | (1 << 13)
"""IP, TID, TIME, REGS_USER, STACK_USER."""


def _attr(sample_type: int = USER_STACK, regs: int = REGS_X86, size: int = ATTR_SIZE) -> bytes:
    attr = bytearray(ATTR_SIZE)
    struct.pack_into("<II", attr, 0, 1, size)  # PERF_TYPE_SOFTWARE
    struct.pack_into("<Q", attr, 24, sample_type)
    struct.pack_into("<QI", attr, 80, regs, 64)
    return bytes(attr) + struct.pack("<QQ", 0, 0)  # no ids


def _sample(stack: int = 64, dyn: int = 64, regs: int = REGS_X86, claimed: int | None = None) -> bytes:
    body = struct.pack("<QIIQ", 0x401000, 7, 7, 1000)
    body += struct.pack("<Q", 2) + struct.pack(f"<{bin(regs).count('1')}Q", *range(bin(regs).count("1")))
    body += struct.pack("<Q", stack if claimed is None else claimed) + bytes(stack) + struct.pack("<Q", dyn)
    return struct.pack("<IHH", 9, 2, 8 + len(body)) + body


def _perf_data(records: bytes, attr: bytes | None = None, magic: bytes = b"PERFILE2") -> bytes:
    attr = _attr() if attr is None else attr
    header_size = 104
    attrs_at, data_at = header_size, header_size + len(attr)
    size = len(records)
    features = 1 << 6  # HEADER_ARCH
    arch = b"x86_64\0\0"
    table_at = data_at + len(records)
    feature = struct.pack("<QQ", table_at + 16, 4 + len(arch)) + struct.pack("<I", len(arch)) + arch
    header = struct.pack("<8sQQQQQQQQ", magic, header_size, len(attr), attrs_at, len(attr), data_at, size, 0, 0)
    header += features.to_bytes(32, "little")
    return header + attr + records + feature


def _run(tmp_path: Path, cli, content: bytes) -> str:
    path = tmp_path / "perf.data"
    path.write_bytes(content)
    result = cli("perf", str(path))
    assert result.code == 2, result.out
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert str(path) in result.err
    return result.err


def test_a_well_formed_file_reads(tmp_path: Path, cli) -> None:
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(_sample()))
    result = cli("perf", str(path), "--json")
    assert result.code == 0, result.err
    assert '"samples": 1' in result.out


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "not a perf.data file (no PERFILE2 magic: an empty file)"),
        (b"\x7fELF" + bytes(200), "not a perf.data file"),
        (b"2ELIFREP" + bytes(200), "a big-endian perf.data"),
        (b"PERFILE2" + struct.pack("<Q", 16) + bytes(8), "pipe mode"),
        (b"PERFILE2" + bytes(20), "the file header is cut short (28 of 104 bytes)"),
    ],
    ids=["empty", "elf", "big-endian", "pipe", "short-header"],
)
def test_foreign_files(tmp_path: Path, cli, content: bytes, said: str) -> None:
    assert said in _run(tmp_path, cli, content)


def test_an_attribute_of_another_size(tmp_path: Path, cli) -> None:
    err = _run(tmp_path, cli, _perf_data(_sample(), attr=_attr(size=300)))
    assert "file offset 0x68: an attribute says it is 300 bytes" in err


def test_samples_without_user_state(tmp_path: Path, cli) -> None:
    err = _run(tmp_path, cli, _perf_data(b"", attr=_attr(sample_type=USER_STACK & ~(1 << 13))))
    assert "no user stack copy" in err and "--call-graph dwarf" in err


def test_a_record_shorter_than_its_header(tmp_path: Path, cli) -> None:
    err = _run(tmp_path, cli, _perf_data(_sample() + struct.pack("<IHH", 9, 0, 4)))
    assert "a record of 4 bytes" in err


def test_a_record_past_its_section(tmp_path: Path, cli) -> None:
    record = bytearray(_sample())
    struct.pack_into("<H", record, 6, len(record) + 16)  # says 16 bytes more than the section holds
    err = _run(tmp_path, cli, _perf_data(bytes(record)))
    assert f"file offset 0xf8: a record of {len(record) + 16} bytes, with {len(record)} left" in err


def test_a_stack_copy_larger_than_its_record(tmp_path: Path, cli) -> None:
    err = _run(tmp_path, cli, _perf_data(_sample(claimed=1 << 40)))
    assert "sample #0: its stack copy of 1099511627776 bytes runs past its record" in err


def test_a_sample_cut_in_its_registers(tmp_path: Path, cli) -> None:
    record = bytearray(_sample())
    struct.pack_into("<H", record, 6, 40)  # the record ends inside the registers
    err = _run(tmp_path, cli, _perf_data(bytes(record[:40])))
    assert "sample #0 is cut short" in err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--sample", "5"], "no sample #5: the profile has fewer samples"),
        (["--open", "5"], "no sample #5: the profile has fewer samples"),
        (["--jobs", "0"], "--jobs 0: at least one process unwinds"),
        (["--max-stack", "0"], "--max-stack 0: a walk has at least one frame"),
        # The pool forks every process at once: 100,000 were forked for the asking.
        (["--jobs", "100000"], "--jobs 100000: more processes than this machine's"),
    ],
)
def test_options_out_of_range(tmp_path: Path, cli, args: list[str], said: str) -> None:
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(_sample()))
    result = cli("perf", str(path), *args)
    assert result.code == 2 and said in result.err and result.err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--sample", "9" * 5000], "argument --sample: not a number: '99999999999999999999999"),
        (["--open", "-1"], "argument --open: not a number: '-1'"),
        (["--max-stack", "1" * 30], "argument --max-stack: not a number: '111111111111111111111111111111'"),
    ],
)
def test_numbers_past_a_count_are_refused_in_one_short_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    """`int` took 4,300 digits and argparse echoed every one of them."""
    from sfview.cli import main

    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(_sample()))
    with pytest.raises(SystemExit) as exited:
        main(["perf", str(path), *args])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and said in err and len(err.splitlines()[-1]) < 200, err


def test_a_sample_in_no_file_is_unwound_as_far_as_it_goes(tmp_path: Path, cli) -> None:
    """The sample's PC is in no mapping the profile recorded: one frame, in no file, and said where."""
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(_sample()))
    result = cli("perf", str(path), "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["samples"] == 1 and report["by_depth"] == [
        {"depth": 1, "or_deeper": False, "samples": 1, "sframe_equal": 1}
    ]
    assert report["files"] == [
        {"file": "[unknown]", "has_sframe": False, "kernel": None, "samples": 1, "sframe_equal": 1}
    ]
