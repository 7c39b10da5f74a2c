"""Bad input is the normal case: one line on stderr naming file and byte, exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, fuzzed_section, run_process

SECTION = (DATA / "shapes-x86_64-O2.sframe").read_bytes()


def _assert_clean_failure(result, path: Path | str, *words: str) -> None:
    assert result.code == 2
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith(f"sfview: {path}: ")
    for word in words:
        assert word in lines[0]


def test_missing_file(cli) -> None:
    _assert_clean_failure(cli("dump", "/nonexistent/a.out"), "/nonexistent/a.out", "No such file")


def test_directory(cli, tmp_path: Path) -> None:
    _assert_clean_failure(cli("dump", str(tmp_path)), tmp_path, "directory")


def test_empty_file(cli, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    _assert_clean_failure(cli("dump", str(empty)), empty, "empty file")


def test_neither_elf_nor_section(cli, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello world\n")
    _assert_clean_failure(cli("dump", str(text)), text, "neither an ELF file nor an SFrame section", "68 65 6c 6c")


def test_elf_without_sframe(cli) -> None:
    path = DATA / "shapes-x86_64-no-sframe"
    _assert_clean_failure(cli("dump", str(path)), path, "no .sframe section")


def test_truncated_elf(cli, tmp_path: Path) -> None:
    cut = tmp_path / "cut"
    cut.write_bytes((DATA / "shapes-x86_64-O2").read_bytes()[:3000])
    result = cli("dump", str(cut))
    _assert_clean_failure(result, cut)


def test_bad_magic_names_the_bytes(cli, tmp_path: Path) -> None:
    raw = tmp_path / "bad.sframe"
    raw.write_bytes(b"\xe2\xde" + SECTION[2:])  # fine
    assert cli("dump", str(raw)).code == 0
    elf = bytearray((DATA / "shapes-x86_64-O2").read_bytes())
    at = elf.find(SECTION[:28])
    elf[at : at + 2] = b"\x12\x34"
    bad = tmp_path / "bad-magic"
    bad.write_bytes(bytes(elf))
    _assert_clean_failure(cli("dump", str(bad)), bad, "bad magic 12 34", f"file offset {at:#x}")


def test_unknown_version(cli, tmp_path: Path) -> None:
    raw = tmp_path / "v9.sframe"
    raw.write_bytes(SECTION[:2] + b"\x09" + SECTION[3:])
    _assert_clean_failure(cli("dump", str(raw)), raw, "section offset 0x2", "version 9")


def test_fde_count_past_the_end(cli, tmp_path: Path) -> None:
    raw = tmp_path / "many.sframe"
    raw.write_bytes(SECTION[:8] + (10_000_000).to_bytes(4, "little") + SECTION[12:])
    result = cli("dump", str(raw))
    _assert_clean_failure(result, raw, "10000000 FDEs", "past the section's end", "only the first 14 fit")
    assert "Num FDEs: 10000000" in result.out
    assert "func idx [8]: pc = 0x" in result.out, "the FDEs that fit are still shown"


def test_invalid_fre_type_names_the_field(cli, tmp_path: Path) -> None:
    raw = bytearray(SECTION)
    raw[28 + 17 * 3 + 16] = 0x03  # FDE 3's info byte: FRE type 3 does not exist
    path = tmp_path / "fretype.sframe"
    path.write_bytes(bytes(raw))
    result = cli("dump", str(path))
    _assert_clean_failure(result, path, "function 3", "fre_type", "section offset 0x5f")
    assert "func idx [2]" in result.out, "what decoded before the error is still printed"


def test_invalid_offset_size_names_the_row(cli, tmp_path: Path) -> None:
    raw = bytearray(SECTION)
    raw[0xC6] = 0x63  # FDE 5, FRE 1 info byte: offset size 3 does not exist
    path = tmp_path / "offsize.sframe"
    path.write_bytes(bytes(raw))
    _assert_clean_failure(cli("dump", str(path)), path, "function 5: FRE 1", "offset_size", "0xc6")


@pytest.mark.parametrize("length", range(len(SECTION)))
def test_every_truncation_fails_cleanly_or_dumps(cli, tmp_path: Path, length: int) -> None:
    path = tmp_path / "cut.sframe"
    path.write_bytes(SECTION[:length])
    result = cli("dump", str(path))
    assert result.code in (0, 2)
    if result.code == 2:
        _assert_clean_failure(result, path)


@pytest.mark.parametrize("seed", range(150))
def test_random_corruption_never_crashes(cli, tmp_path: Path, seed: int) -> None:
    path = fuzzed_section(seed, tmp_path)
    for args in (("dump", str(path)), ("dump", "--json", str(path))):
        result = cli(*args)
        assert result.code in (0, 2)
        if result.code == 2:
            _assert_clean_failure(result, path)


def test_a_real_process_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "garbage"
    path.write_bytes(bytes(range(256)) * 4)
    proc = run_process("dump", str(path))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"sfview: {path}: neither an ELF file nor an SFrame section")


def test_the_dump_goes_on_past_broken_functions(cli, tmp_path: Path) -> None:
    """Two broken FDEs: each replaced in the dump by why; the rest printed; one line on stderr counts them."""
    raw = bytearray(SECTION)
    raw[28 + 17 * 3 + 16] = 0x03  # FDE 3: FRE type 3 does not exist
    raw[0xC6] = 0x63  # FDE 5, FRE 1: offset size 3 does not exist
    path = tmp_path / "two.sframe"
    path.write_bytes(bytes(raw))
    result = cli("dump", str(path))
    _assert_clean_failure(result, path, "function 3", "(and 1 more problem, each in the dump)")
    assert "    func idx [3]:\n    [cannot be decoded at section offset 0x5f: " in result.out
    assert "[cannot be decoded at section offset 0xc6: function 5: FRE 1: " in result.out
    assert all(f"func idx [{i}]: pc = " in result.out for i in (0, 1, 2, 4, 5, 6, 7, 8)), "every other function"


def test_files_that_are_not_what_they_seem(tmp_path: Path) -> None:
    """A FIFO would block for ever, /dev/zero never end; a full disk must not end in a traceback."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        proc = run_process("dump", str(path))
        assert proc.returncode == 2 and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
    with open("/dev/full", "w") as full:
        argv = [sys.executable, "-m", "sfview", "dump", str(DATA / "shapes-x86_64-O2")]
        proc = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == "sfview: writing the output: No space left on device\n"


def test_a_core_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path) -> None:
    """`--core FIFO` blocked for ever in `open` (the program's own path was checked, the core's not)."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    program = str(DATA / "deep-x86_64")
    refused = "not a regular file (a directory, a FIFO or a device): there is nothing to read"
    for core in (fifo, tmp_path, Path("/dev/zero")):
        argv = [sys.executable, "-m", "sfview", "unwind", program, "--core", str(core)]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2 and proc.stderr == f"sfview: {core}: {refused}\n", proc.stderr
    proc = run_process("unwind", program, "--core", "")
    assert proc.returncode == 2 and proc.stderr == "sfview: '': an empty file name\n", proc.stderr


def test_a_big_sparse_elf_file_is_not_read_whole(tmp_path: Path) -> None:
    """An ELF file is read as pyelftools asks: 2 GB of holes after the program cost nothing."""
    sparse = tmp_path / "sparse"
    sparse.write_bytes((DATA / "shapes-x86_64-O2").read_bytes())
    with open(sparse, "r+b") as f:
        f.truncate(2 << 30)
    proc = run_process("dump", str(sparse))
    assert proc.returncode == 0 and proc.stdout == (DATA / "shapes-x86_64-O2.readelf-sframe.txt").read_text()


def _compressed_copy(tmp_path: Path, ch_size: int | None = None) -> Path:
    """shapes-x86_64-O2 with its .sframe compressed in place (SHF_COMPRESSED, an Elf64_Chdr, zlib), as
    `ld --compress-debug-sections` lays out a compressed section; `ch_size` forges the inflated size."""
    import zlib

    from elftools.construct.lib.container import Container
    from elftools.elf.constants import SH_FLAGS
    from elftools.elf.elffile import ELFFile

    source = DATA / "shapes-x86_64-O2"
    data = bytearray(source.read_bytes())
    with source.open("rb") as stream:
        elf = ELFFile(stream)
        index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".sframe")
        section = elf.get_section(index)
        offset, size, flags = section["sh_offset"], section["sh_size"], section["sh_flags"]
        header_at = elf["e_shoff"] + index * elf["e_shentsize"]
        chdr = elf.structs.Elf_Chdr.build(
            Container(ch_type="ELFCOMPRESS_ZLIB", ch_reserved=0, ch_size=ch_size or size, ch_addralign=8)
        )
        shdr = Container(**section.header)
    packed = chdr + zlib.compress(bytes(data[offset : offset + size]), 9)
    assert len(packed) <= size, "the compressed section fits where the section was"
    data[offset : offset + len(packed)] = packed
    shdr.sh_flags, shdr.sh_size = flags | SH_FLAGS.SHF_COMPRESSED, len(packed)
    data[header_at : header_at + elf["e_shentsize"]] = elf.structs.Elf_Shdr.build(shdr)
    path = tmp_path / "compressed"
    path.write_bytes(bytes(data))
    return path


def test_a_compressed_section_is_read_inflated(tmp_path: Path) -> None:
    plain = run_process("dump", str(DATA / "shapes-x86_64-O2"))
    compressed = run_process("dump", str(_compressed_copy(tmp_path)))
    assert (compressed.returncode, compressed.stdout) == (0, plain.stdout)


def test_a_compressed_section_that_claims_a_gigabyte_is_refused_at_once(tmp_path: Path) -> None:
    result = run_process("dump", str(_compressed_copy(tmp_path, ch_size=1 << 30)))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "1073741824 bytes once inflated, more than sfview reads (268435456; --max-size raises it)" in result.stderr


HUGE_DECIMAL = "9" * 5000 + "."
"""More digits than `int()` converts (4,300) and than a 64-bit word holds."""


@pytest.mark.parametrize(
    "state",
    [
        ["--regs", f"pc={HUGE_DECIMAL},sp=0"],
        ["--regs", "pc=0x1140,sp=0x7ff0", "--mem", f"0x7ff0={HUGE_DECIMAL}"],
        ["--regs", "pc=0x1140,sp=0x7ff0", "--mem", f"sp+{HUGE_DECIMAL}=1"],
    ],
)
def test_a_huge_decimal_typed_is_refused_in_one_line(cli, state: list[str]) -> None:
    """A 5,000-digit decimal was a ValueError traceback (`int()` refuses past 4,300 digits): now the number
    rule refuses it, saying which number (cut short) and why."""
    result = cli("unwind", str(DATA / "shapes-x86_64-O2"), *state)
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.count("\n") == 1 and len(result.err) < 500, result.err
    assert "5,000 decimal digits, more than a 64-bit word holds (20 at most)" in result.err


def _refused_by_argparse(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """What argparse says refusing `sfview ARGV`, in this process; its exit status is 2."""
    from sfview.cli import main

    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["dump", str(DATA / "shapes-x86_64-O2.sframe"), "--base"],
        ["check", str(DATA / "shapes-x86_64-O2.sframe"), "--base"],
        [str(DATA / "shapes-x86_64-O2.sframe"), "--base"],
        ["unwind", str(DATA / "shapes-x86_64-O2"), "--regs", "pc=0x1140,sp=0x7ff0", "--bias"],
    ],
)
def test_a_huge_base_or_bias_names_the_argument_and_the_problem(capsys, argv: list[str]) -> None:
    """Not "invalid address value" (argparse's words for a type function that raised ValueError)."""
    said = _refused_by_argparse(capsys, *argv, HUGE_DECIMAL)
    option = argv[-1]
    assert f"error: argument {option}: not an address: '99999" in said, said
    assert "5,000 decimal digits, more than a 64-bit word holds (20 at most)" in said
    assert "invalid" not in said and len(said) < 1000


ESCAPE = "\x1b[2J"
"""Clears the screen, when a terminal is sent it."""


@pytest.mark.parametrize(
    "argv",
    [
        ["dump", str(DATA / "shapes-x86_64-O2"), ESCAPE],  # `sfview dump *` in a folder with such a name
        ["dump", str(DATA / "shapes-x86_64-O2"), f"--{ESCAPE}"],
        ["check", str(DATA / "shapes-x86_64-O2"), f"--{ESCAPE}"],
        ["compare", str(DATA / "shapes-x86_64-O2"), ESCAPE],
        ["export", "--breakpad", str(DATA / "shapes-x86_64-O2"), ESCAPE],
        ["unwind", str(DATA / "shapes-x86_64-O2"), "--regs", "pc=0", ESCAPE],
        ["unwind", str(DATA / "shapes-x86_64-O2"), "--regs", "pc=0", "--cfi", ESCAPE],
        [str(DATA / "shapes-x86_64-O2"), ESCAPE],  # the explorer's parser
        [str(DATA / "shapes-x86_64-O2"), f"--{ESCAPE}"],
    ],
)
def test_argparse_refusals_are_escaped(capsys, argv: list[str]) -> None:
    """Every command's parser and the explorer's: what argparse quotes is escaped, as every message is."""
    said = _refused_by_argparse(capsys, *argv)
    assert "\x1b" not in said and "\\x1b[2J" in said, said
    assert said.splitlines()[-1].startswith("sfview")


@pytest.mark.parametrize(
    "argv",
    [
        ["unwind", str(DATA / "shapes-x86_64-O2"), "--regs", "pc=0x1140,sp=0x7ff0", "--limit"],
        ["check", str(DATA / "shapes-x86_64-O2"), "--max-size"],
        ["serve", str(DATA / "shapes-x86_64-O2"), "--port"],
    ],
)
def test_a_huge_count_size_or_port_is_named_by_its_start(capsys, argv: list[str]) -> None:
    """`--limit`, `--max-size` and `--port` of 5,000 digits repeated them whole in their refusal."""
    said = _refused_by_argparse(capsys, *argv, "9" * 5000)
    assert f"error: argument {argv[-1]}: " in said and "… (5,000 characters)" in said
    assert len(said.splitlines()[-1]) < 300, said


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device every write to fails")
def test_an_export_to_a_full_device_names_the_output() -> None:
    """The last of the symbol file is written as it closes: a full disk refusing it was said as "writing the
    output: No space left on device", not which file."""
    done = run_process("export", str(DATA / "deep-x86_64"), "-o", "/dev/full")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["sfview: /dev/full: cannot write: No space left on device"]


@pytest.mark.parametrize("command", ["dump", "check", "stats"])
def test_a_file_whose_first_read_fails_says_what_was_read(command: str) -> None:
    """`/proc/self/mem` is a regular file whose read at offset 0 fails: it was said as "/proc/self/mem:
    Input/output error", not what was being read."""
    done = run_process(command, "/proc/self/mem")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["sfview: /proc/self/mem: reading its first bytes fails: Input/output error"]
