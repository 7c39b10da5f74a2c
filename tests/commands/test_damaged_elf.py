"""Whole ELF files damaged around a sound section: what is damaged costs what depends on it, not the section.

Each file is a gcc-built fixture with a few bytes changed (`elf_edit`); the
oracle for the section is binutils' own dump of the undamaged file (readelf
prints the section of each of these damaged files too).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from conftest import DATA, run_process
from elf_edit import PT_GNU_SFRAME, PT_LOAD, PT_NOTE, Elf

PROGRAM = DATA / "shapes-x86_64-O2"
OBJECT = DATA / "shapes-x86_64-O2.o"
DEEP = DATA / "deep-x86_64"
READELF = (DATA / "shapes-x86_64-O2.readelf-sframe.txt").read_text()

COMMANDS = (
    ("dump",),
    ("dump", "--json"),
    ("check",),
    ("check", "--json"),
    ("compare",),
    ("compare", "--json"),
    ("export", "--breakpad"),
    ("stats",),
)


def write(tmp_path: Path, elf: Elf, name: str = "damaged") -> str:
    path = tmp_path / name
    path.write_bytes(elf.bytes())
    return str(path)


def every_command(cli, path: str) -> dict[tuple[str, ...], object]:
    """Each command on `path`, in this process: an exception other than sfview's own fails the test here."""
    results = {command: cli(*command, path) for command in COMMANDS}
    results[("unwind",)] = cli("unwind", path, "--regs", "pc=0x1139,sp=0x7ffc0000,fp=0")
    results[("diff", "A")] = cli("diff", path, str(PROGRAM))  # damaged on either side
    results[("diff", "B")] = cli("diff", str(PROGRAM), path)
    for command, result in results.items():
        assert result.code in (0, 1, 2), (command, result)
        assert "Traceback" not in result.err
    return results


@pytest.mark.parametrize(
    "fields",
    [{"e_phoff": 1 << 40}, {"e_phentsize": 0}, {"e_phentsize": 39}, {"e_phnum": 0xFFFF}, {"e_phnum": 0xFFFE}],
    ids=["phoff-past-end", "phentsize-0", "phentsize-39", "phnum-xnum", "phnum-overflowing"],
)
def test_unreadable_program_headers_cost_the_placement_not_the_section(cli, tmp_path: Path, fields) -> None:
    path = write(tmp_path, Elf.of(PROGRAM.read_bytes()).set_header(**fields))
    results = every_command(cli, path)
    dump = results[("dump",)]
    assert dump.code == 0 and dump.out == READELF
    check = results[("check",)]
    if fields != {"e_phnum": 0xFFFF}:  # PN_XNUM: section 0 says how many: none (no code: not damage seen here)
        assert check.code == 0 and "the program headers" in check.err and path in check.err
    export = results[("export", "--breakpad")]
    assert export.code == 0 and "STACK CFI INIT" in export.out
    if fields != {"e_phnum": 0xFFFF}:
        assert "addresses written from 0" in export.err


@pytest.mark.parametrize(
    "command", [("unwind",), ("unwind", "--thread", "all"), ()], ids=["one-thread", "all-threads", "app"]
)
def test_a_program_whose_program_headers_cannot_be_read_is_named_by_unwind(cli, tmp_path: Path, command) -> None:
    """`--thread all` and the app named no file for what the program's headers cost (one thread's walk did)."""
    path = write(tmp_path, Elf.of(DEEP.read_bytes()).set_header(e_phoff=1 << 40))
    result = cli(*command[:1], path, *command[1:], "--core", str(DATA / "deep-x86_64.core"))
    assert result.code == 2 and result.err.startswith(f"sfview: {path}: the program headers")


@pytest.mark.parametrize("fields", [{"sh_entsize": 0x17}, {"sh_link": 0}, {"sh_offset": 1 << 40}, {"sh_size": 1 << 40}])
def test_a_damaged_symbol_table_costs_the_names(cli, tmp_path: Path, fields) -> None:
    path = write(tmp_path, Elf.of(PROGRAM.read_bytes()).set_section(".symtab", **fields))
    results = every_command(cli, path)
    assert results[("dump",)].out == READELF and results[("dump",)].code == 0
    export = results[("export", "--breakpad")]
    assert export.code == 0 and "no function names" not in export.out
    assert "small_leaf" not in export.out and "printf@plt" in export.out  # the PLT names its entries still
    assert f"sfview: {path}: no names from .symtab: " in export.err


@pytest.mark.parametrize(
    ("section", "fields"),
    [
        (".rela.eh_frame", {"sh_link": 0}),
        (".rela.eh_frame", {"sh_entsize": 0x17}),
        (".rela.eh_frame", {"sh_size": 1 << 62}),
        (".rela.sframe", {"sh_info": 999}),
        (".symtab", {"sh_entsize": 0x17}),
        (".symtab", {"sh_flags": 0x800}),
    ],
)
def test_an_object_with_bad_relocation_or_symbol_headers_is_still_compared(cli, tmp_path, section, fields) -> None:
    path = write(tmp_path, Elf.of(OBJECT.read_bytes()).set_section(section, **fields))
    results = every_command(cli, path)
    compare = results[("compare",)]
    assert compare.code in (0, 1) and compare.out.startswith(f"{path}: .sframe")
    assert not compare.err or compare.err.startswith(f"sfview: {path}: ")


def test_a_file_cut_before_its_section_headers_dumps_through_pt_gnu_sframe(cli, tmp_path: Path) -> None:
    elf = Elf.of(PROGRAM.read_bytes())
    (_, seg), *_ = [(at, s) for at, s in elf.segments() if s["p_type"] == PT_GNU_SFRAME]
    cut = tmp_path / "cut"
    cut.write_bytes(elf.bytes()[: seg["p_offset"] + seg["p_filesz"] + 16])
    result = cli("dump", str(cut))
    assert result.code == 0, result.err
    assert result.out == READELF


def test_a_section_size_past_the_end_shows_the_bytes_there(cli, tmp_path: Path) -> None:
    """`sh_size = 1 << 40`: the section's own bytes are there; what is missing is said, with its reason."""
    path = write(tmp_path, Elf.of(PROGRAM.read_bytes()).set_section(".sframe", sh_size=1 << 40))
    result = cli("dump", path)
    assert result.out == READELF
    assert result.code == 2 and "is cut short: 1099511627776 bytes from file offset 0x141a8" in result.err


def test_a_section_offset_past_the_end_is_refused_with_a_reason(cli, tmp_path: Path) -> None:
    path = write(tmp_path, Elf.of(PROGRAM.read_bytes()).set_section(".sframe", sh_offset=1 << 40))
    result = cli("dump", path)
    assert result.code == 2 and result.err.startswith(f"sfview: {path}: ") and "file holds only 0" in result.err


def test_a_zstd_compressed_section_is_read(cli, tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    elf = Elf.of(PROGRAM.read_bytes())
    for name in (".sframe", ".eh_frame"):
        elf.compress(name, ch_type=2, stream=zstandard.ZstdCompressor().compress(elf.contents(name)))
    path = write(tmp_path, elf)
    assert cli("dump", path).out == READELF
    assert cli("compare", path).out.split("\n", 1)[1] == cli("compare", str(PROGRAM)).out.split("\n", 1)[1]


def _cie_and_fde(elf: Elf) -> tuple[int, int]:
    """File offsets of `.eh_frame`'s first CIE and first FDE."""
    sec = elf.section(".eh_frame")
    start = sec["sh_offset"]
    pos = start
    cie = fde = None
    while fde is None:
        length, pointer = struct.unpack_from("<II", elf.data, pos)
        if pointer == 0 and cie is None:
            cie = pos
        elif pointer:
            fde = pos
        pos += 4 + length
    assert cie is not None
    return cie, fde


@pytest.mark.parametrize("damage", ["corrupt-zlib", "restore-in-cie", "cie-pointer-to-itself"])
def test_damaged_dwarf_costs_the_cfi(cli, tmp_path: Path, damage: str) -> None:
    elf = Elf.of(PROGRAM.read_bytes())
    if damage == "corrupt-zlib":
        elf.compress(".eh_frame", stream=b"\x78\x9c" + b"\xff" * 40)
    elif damage == "restore-in-cie":
        cie, _ = _cie_and_fde(elf)
        at = elf.data.index(b"\x90\x01", cie)  # DW_CFA_offset r16 (the RA at CFA-8), in the CIE's instructions
        elf.poke(at, b"\xd0\x00")  # DW_CFA_restore r16, DW_CFA_nop: a restore with no initial rule to restore
    else:
        _, fde = _cie_and_fde(elf)
        elf.poke(fde + 4, struct.pack("<I", 4))  # the CIE pointer: back to the FDE itself
    path = write(tmp_path, elf)
    results = every_command(cli, path)
    compare = results[("compare",)]
    assert compare.code == 2 and "DWARF CFI cannot be decoded" in compare.err and path in compare.err
    unwind = cli("unwind", path, "--regs", "pc=0x1139,sp=0x7ffc0000,fp=0", "--cfi", "dwarf")
    assert unwind.code == 0 and "stopped" in unwind.out


def test_a_cfa_register_set_after_a_cfa_expression_costs_that_fde(cli, tmp_path: Path) -> None:
    """`DW_CFA_def_cfa_expression` then `DW_CFA_def_cfa_register`: the second is valid only for a CFA of a
    register and an offset (DWARF 5, 6.4.2.2), and there is no offset to keep: `compare` ended in a
    TypeError formatting the rule `rsp + None`."""
    elf = Elf.of(PROGRAM.read_bytes())
    sec = elf.section(".eh_frame")
    pos, damaged = sec["sh_offset"], 0
    while pos < sec["sh_offset"] + sec["sh_size"]:
        length, pointer = struct.unpack_from("<II", elf.data, pos)
        if pointer and length >= 13 + 6:  # every FDE with room for them (after its 1-byte augmentation)
            program = b"\x0f\x02\x77\x08\x0d\x07"  # CFA = rsp + 8 as an expression; CFA register rsp
            elf.poke(pos + 17, program.ljust(length - 13, b"\0"))  # the rest: DW_CFA_nop
            damaged += 1
        pos += 4 + length
    assert damaged > 3
    path = write(tmp_path, elf)
    results = every_command(cli, path)
    compare = results[("compare",)]
    assert compare.code == 2 and "def_cfa_register" in compare.err
    assert compare.err.count("DWARF CFI cannot be decoded") == 1, compare.err  # said once, not twice


@pytest.mark.parametrize("desc", [b"\xff" * 4, b"\x10\x00\x00\x00\xff\xff\xff\x7f", b"\x04\x00\x00\x00" * 2])
def test_damaged_build_id_notes_cost_the_module_id(cli, tmp_path: Path, desc: bytes) -> None:
    elf = Elf.of(PROGRAM.read_bytes())
    note = elf.section(".note.gnu.build-id")
    elf.poke(note["sh_offset"], desc)
    result = cli("export", "--breakpad", write(tmp_path, elf))
    assert result.code == 0 and result.out.startswith("MODULE Linux x86_64 ")


def test_names_running_into_one_long_string_cost_the_names_not_memory(tmp_path: Path) -> None:
    """`.symtab`'s string table moved onto 2 MB with no NUL: every symbol's name ran on to its end, one
    copy each (an 8 MB run: 380 MB for `check`, a 109 MB Breakpad file). Now the names are what is lost."""
    elf = Elf.of(DEEP.read_bytes())
    run = len(elf.data)
    elf.data += b"A" * (2 << 20) + b"\0"
    elf.set_section(".strtab", sh_offset=run, sh_size=(2 << 20) + 1)
    path = write(tmp_path, elf)
    peak, proc = _peak_kb("export", "--breakpad", path)
    assert proc.returncode == 0 and "STACK CFI INIT" in proc.stdout and len(proc.stdout) < 100_000
    assert f"sfview: {path}: no names from .symtab: .symtab: its names run to more than" in proc.stderr, proc.stderr
    assert peak < 120_000, f"{peak} KB"


def test_section_names_running_into_one_long_string_cost_the_names(tmp_path: Path) -> None:
    """`.shstrtab` moved onto 8 MB with no NUL: pyelftools read every section's name to the end, twice
    (420 MB, 7 to 12 s). The names past twice the table are lost; the section is found by its segment."""
    elf = Elf.of(DEEP.read_bytes())
    run = len(elf.data)
    elf.data += b"A" * (8 << 20) + b"\0"
    elf.set_section(elf.header()["e_shstrndx"], sh_offset=run, sh_size=(8 << 20) + 1)
    path = write(tmp_path, elf)
    peak, proc = _peak_kb("dump", path)
    assert proc.returncode == 0 and proc.stdout == (DATA / "deep-x86_64.readelf-sframe.txt").read_text()
    assert peak < 120_000, f"{peak} KB"


@pytest.mark.parametrize("fields", [{"sh_offset": 1 << 40}, {"sh_flags": 0x806}, {"sh_type": 8}])
def test_a_damaged_text_costs_the_module_id(cli, tmp_path: Path, fields) -> None:
    elf = Elf.of(PROGRAM.read_bytes()).set_section(".note.gnu.build-id", sh_type=1)  # no build-id: .text hashed
    result = cli("export", "--breakpad", write(tmp_path, elf.set_section(".text", **fields)))
    assert result.code == 0 and result.out.startswith("MODULE Linux x86_64 00000000000000000000000000000000")
    assert "MODULE id left as zeros: the .text section" in result.err


def test_names_from_the_file_cannot_forge_lines(cli, tmp_path: Path) -> None:
    """A symbol named with an escape sequence and a newline: escaped in every text output."""
    elf = Elf.of(PROGRAM.read_bytes())
    strtab = elf.section(".strtab")
    at = elf.data.index(b"small_leaf\0", strtab["sh_offset"])
    elf.poke(at, b"sm\x1b[2J\nlea")  # as long as "small_leaf": its NUL kept
    path = write(tmp_path, elf)
    export = cli("export", "--breakpad", path)
    assert "PUBLIC" in export.out and "\x1b" not in export.out
    assert r" sm\x1b[2J\x0alea" + "\n" in export.out
    assert all(line.split(" ", 1)[0] in ("MODULE", "PUBLIC", "STACK") for line in export.out.splitlines())
    compare = cli("compare", path)
    assert "\x1b" not in compare.out


@pytest.mark.oracle
def test_a_non_ascii_function_name_is_exported_to_a_file(cli, tmp_path: Path) -> None:
    source = tmp_path / "cafe.c"
    source.write_text("int café(void) { return 1; }\nint main(void) { return café(); }\n", encoding="utf-8")
    program = tmp_path / "cafe"
    built = subprocess.run(["gcc", "-O1", "-Wa,--gsframe", "-o", str(program), str(source)], capture_output=True)
    if built.returncode:
        pytest.skip(f"gcc -Wa,--gsframe cannot build it here: {built.stderr.decode()[:200]}")
    out = tmp_path / "cafe.sym"
    result = cli("export", "--breakpad", str(program), "-o", str(out))
    assert result.code == 0, result.err
    assert " café\n" in out.read_text(encoding="utf-8")


def test_invalid_utf8_in_names_is_written_back_as_escapes(cli, tmp_path: Path) -> None:
    elf = Elf.of(PROGRAM.read_bytes())
    at = elf.data.index(b"small_leaf\0", elf.section(".strtab")["sh_offset"])
    elf.poke(at, b"small\xff\xfe_af")  # as long as "small_leaf"
    out = tmp_path / "out.sym"
    result = cli("export", "--breakpad", write(tmp_path, elf), "-o", str(out))
    assert result.code == 0 and r" small\xff\xfe_af" + "\n" in out.read_text(encoding="utf-8")


def _pipestatus(*args: str) -> int:
    """`sfview ARGS | true` in bash: sfview's own exit status (PIPESTATUS), the reader gone at once."""
    line = " ".join(f"'{a}'" for a in (sys.executable, "-m", "sfview", *args))
    done = subprocess.run(["bash", "-c", f"{line} | true; exit ${{PIPESTATUS[0]}}"], capture_output=True, text=True)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode


def test_the_exit_status_survives_a_closed_pipe(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sframe"
    data = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    data[3] |= 0x80  # an undefined flag: check calls it an error
    bad.write_bytes(bytes(data) * 1 + b"")
    big = [str(bad)] * 400  # enough lines to fill the pipe after the reader has gone
    assert _pipestatus("check", *big) == 1
    assert _pipestatus("check", *big, "/nonexistent") == 2
    assert _pipestatus("compare", str(OBJECT)) in (0, 1)
    cut_short = tmp_path / "cut-short.sframe"  # FDE 6 of an undefined FRE type: the dump ends in its error
    data = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    data[28 + 17 * 6 + 16] = 0x0F
    cut_short.write_bytes(bytes(data))
    assert _pipestatus("dump", str(cut_short)) == 2, "the dump writes bytes to the stream's buffer: dropped the same"
    unreadable = tmp_path / "cut"
    unreadable.write_bytes(b"\x7fELF")
    assert _pipestatus("compare", str(unreadable)) == 2


def test_ctrl_c_while_importing_ends_in_one_line() -> None:
    """A KeyboardInterrupt from the imports of the command line (the first ~60 ms) is caught by the entry point."""
    script = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def interrupted(name, *args, **kwargs):\n"
        "    if name == 'sfview.cli':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupted\n"
        "from sfview.entry import run\n"
        "sys.exit(run())\n"
    )
    done = subprocess.run([sys.executable, "-c", script, "dump", str(PROGRAM)], capture_output=True, text=True)
    assert done.returncode == 130 and done.stderr == "sfview: interrupted\n"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--regs", "pc=-0x1000,sp=0x10"], "--regs pc: -0x1000"),
        (["--regs", f"pc={1 << 64:#x},sp=0x10"], "--regs pc: 0x10000000000000000"),
        (["--regs", "pc=0x1139,sp=0x10", "--mem=-8=1"], "--mem '-8=1'"),
        (["--regs", "pc=0x1139,sp=0x10", "--mem", f"8={1 << 65}"], "--mem '8="),
        (["--regs", "pc=0x1139,sp=0x10", "--bias", "-4096"], "'-4096'"),
        (["--core", ""], "'': an empty file name"),  # as the program's own path says it
    ],
)
def test_bad_values_on_the_command_line_are_named(args: list[str], named: str) -> None:
    done = run_process("unwind", str(DEEP), *args)
    assert done.returncode == 2 and named in done.stderr and "Traceback" not in done.stderr


def test_an_empty_path_is_named() -> None:
    done = run_process("dump", "")
    assert done.returncode == 2 and done.stderr == "sfview: '': an empty file name\n"


def test_check_json_lists_an_unreadable_file(cli, tmp_path: Path) -> None:
    import json

    result = cli("check", "--json", str(PROGRAM), str(tmp_path / "missing"))
    reports = json.loads(result.out)
    assert result.code == 2 and [r["file"] for r in reports] == [str(PROGRAM), str(tmp_path / "missing")]
    assert reports[1]["unreadable"] == "No such file or directory"


def test_a_raw_section_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse.sframe"
    with sparse.open("wb") as f:
        f.write((DATA / "shapes-x86_64-O2.sframe").read_bytes())
        f.truncate(1 << 30)
    done = run_process("dump", str(sparse))
    assert done.returncode == 2 and "a raw section of 1073741824 bytes, more than sfview reads" in done.stderr
    assert run_process("dump", "--max-size", str(2 << 30), str(DATA / "shapes-x86_64-O2.sframe")).returncode == 0


def _peak_kb(*args: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Peak resident memory (VmHWM, KB) of `sfview ARGS` in a process of its own."""
    from conftest import PEAK

    script = PEAK.replace("\nrun()\n", "\nsys.exit(run())\n")  # with its exit status
    assert script != PEAK
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    return int(done.stderr.rsplit("VmHWM ", 1)[1].split()[0]), done


def test_a_core_whose_load_headers_all_point_at_the_same_bytes_costs_them_once(tmp_path: Path) -> None:
    """4000 more PT_LOAD headers over the core's biggest segment (152 KB: 608 MB if each were copied, as they
    were): each a view of the mapped file, not a copy."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    header = core.header()
    table = bytes(core.data[header["e_phoff"] : header["e_phoff"] + header["e_phnum"] * header["e_phentsize"]])
    (biggest, _), *_ = sorted(
        ((at, seg) for at, seg in core.segments() if seg["p_type"] == PT_LOAD), key=lambda s: -s[1]["p_filesz"]
    )
    copy = bytes(core.data[biggest : biggest + header["e_phentsize"]])
    extra = 4000
    offset = (len(core.data) + 7) & ~7
    core.data += bytes(offset - len(core.data)) + table + copy * extra
    core.set_header(e_phoff=offset, e_phnum=header["e_phnum"] + extra)
    path = write(tmp_path, core, "many.core")
    kb, done = _peak_kb("unwind", str(DEEP), "--core", path)
    assert done.returncode == 0, done.stderr
    assert "stop_here" in done.stdout
    assert kb < 150 * 1024, f"{kb} KB"
    assert os.path.getsize(path) < 4 << 20


def test_note_headers_over_the_same_notes_are_read_once(cli, tmp_path: Path) -> None:
    """4000 more PT_NOTE headers over the core's notes: each was read again, its thread a thread more
    (`--thread all` listed 4,001; 60,000 headers in a 4 MB core: 387 MB, 12.7 s). Notes over notes read
    before are passed over, and said once."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    header = core.header()
    table = bytes(core.data[header["e_phoff"] : header["e_phoff"] + header["e_phnum"] * header["e_phentsize"]])
    ((notes, _),) = [(at, seg) for at, seg in core.segments() if seg["p_type"] == PT_NOTE]
    extra = 4000
    offset = (len(core.data) + 7) & ~7
    core.data += (
        bytes(offset - len(core.data)) + table + bytes(core.data[notes : notes + header["e_phentsize"]]) * extra
    )
    core.set_header(e_phoff=offset, e_phnum=header["e_phnum"] + extra)
    path = write(tmp_path, core, "notes.core")
    result = cli("unwind", str(DEEP), "--core", path, "--thread", "all")
    assert result.code == 0, result.err
    assert result.out.count("\nThread ") + result.out.startswith("Thread ") == 1
    assert f"{path}: {extra} PT_NOTE segments over notes read before: passed over" in result.err
    # the same core without its NT_FILE note: none is missing for damage, and the note says so
    _, pos = _note_in(core, 0x46494C45)
    core.poke(pos + 8, struct.pack("<I", 0x46494C46))
    result = cli("unwind", str(DEEP), "--core", write(tmp_path, core, "no-files.core"))
    assert result.code == 0, result.err
    assert "note: no NT_FILE note: the program's load bias" in result.err, result.err


def test_every_thread_of_a_core_of_many_threads_is_walked_without_reading_the_files_again(cli, tmp_path) -> None:
    """300 copies of the core's NT_PRSTATUS note, each a thread: `--thread all` opened the program and its
    libraries again for each (2,000 threads of a 1.3 MB core: 5 minutes); now once."""
    import time

    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    notes = next(seg for _, seg in core.segments() if seg["p_type"] == PT_NOTE)
    held = bytes(core.data[notes["p_offset"] : notes["p_offset"] + notes["p_filesz"]])
    pos = _note_in(core, 1)[1] - notes["p_offset"]  # NT_PRSTATUS: the thread's registers
    namesz, descsz = struct.unpack_from("<II", held, pos)
    thread = held[pos : pos + 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4]
    offset = (len(core.data) + 3) & ~3
    core.data += bytes(offset - len(core.data)) + held + thread * 300
    core.set_segment(PT_NOTE, p_offset=offset, p_filesz=len(held) + 300 * len(thread))
    path = write(tmp_path, core, "threads.core")
    started = time.monotonic()
    result = cli("unwind", str(DEEP), "--core", path, "--thread", "all")
    assert result.code == 0 and result.out.count("#0  stop_here () at ") == 301, result.err
    assert time.monotonic() - started < 20, "one reading of the files, then 301 walks"


def test_threads_in_functions_of_many_rows_decode_each_function_once(
    cli, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """120 threads whose PCs fall in 40 functions of 5,000 rows (more than the bulk reader lists), all starting
    at +0: each thread's walk looked its PC up afresh, and past the functions a section keeps (32) each
    lookup decoded the function's rows again and walked them all (their starts do not increase): 1,000
    threads of 10,000-row functions, 8.7 s. The threads' walks now share their lookups, and a lookup among
    starts that do not increase is by halves."""
    from sfview.sframe.model.section import Rows

    functions, rows, threads = 40, 5000, 120
    program = Elf.of(DEEP.read_bytes())
    address = program.section(".sframe")["sh_addr"]
    block = struct.pack("<BBb", 0, 0x03, 8) * rows  # each row: start +0, CFA = SP + 8 (1-byte offset)
    fdes = b"".join(
        struct.pack("<iIIIBBH", 0x1160 + k - address, 1, k * len(block), rows, 0, 0, 0) for k in range(functions)
    )
    header = struct.pack(
        "<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, functions, functions * rows, functions * len(block), 0, len(fdes)
    )
    section = header + fdes + block * functions
    at = (len(program.data) + 7) & ~7
    program.data += bytes(at - len(program.data)) + section
    program.set_section(".sframe", sh_offset=at, sh_size=len(section))
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    notes = next(seg for _, seg in core.segments() if seg["p_type"] == PT_NOTE)
    held = bytes(core.data[notes["p_offset"] : notes["p_offset"] + notes["p_filesz"]])
    pos = _note_in(core, 1)[1] - notes["p_offset"]  # NT_PRSTATUS: the thread's registers
    namesz, descsz = struct.unpack_from("<II", held, pos)
    thread = bytearray(held[pos : pos + 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4])
    rip = 12 + (namesz + 3) // 4 * 4 + 112 + 16 * 8  # pr_reg's rip
    bias = struct.unpack_from("<Q", thread, rip)[0] - 0x1160  # the core stopped in stop_here, at 0x1160
    added = b""
    for i in range(threads):
        struct.pack_into("<I", thread, 12 + (namesz + 3) // 4 * 4 + 32, 100_000 + i)  # pr_pid: a thread of its own
        struct.pack_into("<Q", thread, rip, bias + 0x1160 + i % functions)
        added += thread
    offset = (len(core.data) + 3) & ~3
    core.data += bytes(offset - len(core.data)) + held + added
    core.set_segment(PT_NOTE, p_offset=offset, p_filesz=len(held) + len(added))
    decoded = 0
    find = Rows._find

    def counted(self, func) -> None:
        nonlocal decoded
        decoded += 1
        find(self, func)

    monkeypatch.setattr(Rows, "_find", counted)
    result = cli("unwind", write(tmp_path, program, "rows"), "--core", write(tmp_path, core, "threads.core"),
                 "--thread", "all")  # fmt: skip
    assert result.code == 0 and result.out.count("\nThread ") == threads + 1, result.err
    assert decoded <= functions + 8  # each function once (before: 116 for these 120 threads)


def test_threads_whose_lwps_are_small_numbers_are_each_walked_from_their_own_registers(cli, tmp_path) -> None:
    """A process in a container numbers its threads from 1: `--thread all` found each thread again by its
    LWP, which at most the count of threads is also gdb's number of another one: LWP 3 was walked from the
    third thread's registers. Threads LWP 3, 2 and 1 added in that order, each stopped in its own function
    (gdb's `thread apply all bt` says the same)."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    notes = next(seg for _, seg in core.segments() if seg["p_type"] == PT_NOTE)
    held = bytes(core.data[notes["p_offset"] : notes["p_offset"] + notes["p_filesz"]])
    pos = _note_in(core, 1)[1] - notes["p_offset"]  # NT_PRSTATUS
    namesz, descsz = struct.unpack_from("<II", held, pos)
    thread = bytearray(held[pos : pos + 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4])
    desc = 12 + (namesz + 3) // 4 * 4
    bias = struct.unpack_from("<Q", thread, desc + 112 + 16 * 8)[0] - 0x1160  # pr_reg's rip, in stop_here
    added = b""
    for lwp, pc in ((3, 0x1170), (2, 0x1190), (1, 0x1160)):  # leaf, with_alloca, stop_here
        struct.pack_into("<I", thread, desc + 32, lwp)  # pr_pid
        struct.pack_into("<Q", thread, desc + 112 + 16 * 8, bias + pc)
        added += thread
    offset = (len(core.data) + 3) & ~3
    core.data += bytes(offset - len(core.data)) + held + added
    core.set_segment(PT_NOTE, p_offset=offset, p_filesz=len(held) + len(added))
    path = write(tmp_path, core, "lwps.core")
    result = cli("unwind", str(DEEP), "--core", path, "--thread", "all")
    firsts = [block.split("\n")[:2] for block in result.out.split("\nThread ")[1:]]
    assert [(title.split("(LWP ")[1], top.split(" (")[0]) for title, top in firsts] == [
        ("1)):", "#0  stop_here"),
        ("2)):", "#0  with_alloca"),
        ("3)):", "#0  leaf"),
        ("4496)):", "#0  stop_here"),
    ], result.out
    from sfview.cli.state import debugger_threads  # the app's list of threads (`t`) loads each by its LWP
    from sfview.inputs.core import read_core

    threads = debugger_threads(str(DEEP), read_core(path), [], None)
    assert threads is not None
    assert [(tid, threads.load(tid).pc == pc) for _, tid, pc in threads.listed] == [
        (4496, True),
        (3, True),
        (2, True),
        (1, True),
    ]


def _plt_claims(size: int, dwarf_range: int | None = None) -> Elf:
    """The PLT's PCMASK FDE (fdes[1], version 1: 28-byte header, 17-byte FDEs, `func_size` at +4) claiming
    `size` bytes; with `dwarf_range`, the `.eh_frame` FDE over the PLT (at +0x48; its range after the
    length, the CIE pointer and the start) claiming as much from 0x1020."""
    elf = Elf.of(PROGRAM.read_bytes())
    sframe = elf.section(".sframe")["sh_offset"]
    fde = sframe + 28 + 17
    assert struct.unpack_from("<iI", elf.data, fde) == (0x1030 - 0x141A8, 16)  # from the section: pc 0x1030, 16 bytes
    elf.poke(fde + 4, struct.pack("<I", size))
    if dwarf_range is not None:
        fde = elf.section(".eh_frame")["sh_offset"] + 0x48
        assert struct.unpack_from("<I", elf.data, fde + 12) == (0x20,)  # the PLT's 32 bytes, as readelf says
        elf.poke(fde + 12, struct.pack("<I", dwarf_range))
    return elf


def test_export_of_a_pcmask_function_claiming_4_gb_is_bounded(tmp_path: Path) -> None:
    kb, done = _peak_kb("export", "--breakpad", write(tmp_path, _plt_claims(0xFFFFFFFF)))
    assert done.returncode == 0, done.stderr
    assert "fdes[1] left out: a PCMASK function of 268435456 blocks of 16 bytes" in done.stderr
    assert "STACK CFI INIT 1020 10" in done.stdout and "STACK CFI INIT 1030" not in done.stdout
    assert kb < 150 * 1024


def test_a_real_plt_is_still_exported_block_by_block(cli) -> None:
    out = cli("export", "--breakpad", str(PROGRAM)).out
    assert "STACK CFI INIT 1030 10 " in out


def test_compare_of_a_pcmask_function_over_a_2_gb_dwarf_fde_says_each_difference_once(tmp_path: Path) -> None:
    kb, done = _peak_kb("compare", write(tmp_path, _plt_claims(0x7FFFFFF0, 0x7FFFFFE0)))
    assert done.returncode == 1, done.stderr  # the PLT's DWARF expression and the claimed rows over real code
    # [0x1030, 0x80001000): 134217725 blocks, the first and the last apart, the rest said once
    assert "(and the same place of the next 134217722 blocks of 16 bytes)" in done.stdout
    assert len(done.stdout.splitlines()) < 60
    assert kb < 150 * 1024


def test_dump_notes_what_check_calls_an_error(cli, tmp_path: Path) -> None:
    """Undefined flag bits print as the defined ones would; a row with no offsets prints `u`: both noted."""
    from handmade import v2_section

    data = bytearray(v2_section([[(0, 8)], [(0, 8), (4, 16)]]))
    data[3] |= 0x80
    row = data.index(bytes([4, 0x03, 16]))
    data[row + 1] = 0x01  # offset count 0: a row with no CFA rule, which versions 1 and 2 do not have
    path = tmp_path / "noted.sframe"
    path.write_bytes(bytes(data))
    result = cli("dump", str(path))
    assert result.code == 0 and "Flags: SFRAME_F_FDE_SORTED" in result.out
    notes = result.err.splitlines()
    assert notes[0].startswith(f"sfview: {path}: note: preamble.flags: flags 0x81 set bits 0x80")
    assert notes[1].startswith(f"sfview: {path}: note: fdes[1].fres[1]: row 1 has 0 offsets")
    assert "(offset-count-impossible)" in notes[1]
    assert cli("dump", str(DATA / "shapes-x86_64-O2.sframe")).err == ""


def test_dump_prints_the_header_when_only_the_rest_is_unreadable(cli, tmp_path: Path) -> None:
    """`auxhdr_len` 0xff: the preamble and header are whole; binutils 2.40 prints them (then garbage)."""
    elf = Elf.of(PROGRAM.read_bytes())
    elf.poke(elf.section(".sframe")["sh_offset"] + 7, b"\xff")
    result = cli("dump", write(tmp_path, elf))
    header = READELF.split("\n\n  Function Index")[0] + "\n"
    assert result.out == header and result.code == 2 and "auxhdr_len = 255" in result.err


def test_check_on_a_last_row_that_crosses_the_fre_subsection_end(cli, tmp_path: Path) -> None:
    """Two rows of a start and an info byte, the header's `fre_len` one byte short: the second row starts
    inside the sub-section and ends past it. The model reads both; check used to count the room for whole
    rows only and stop on an assertion (found as a 199-byte big-endian version 3 section)."""
    from conftest import v3_section

    data = bytearray(v3_section(0, [(0, 1, []), (4, 1, [])]))
    (fre_len,) = struct.unpack_from("<I", data, 16)  # the header's fre_len (spec: after num_fdes, num_fres)
    struct.pack_into("<I", data, 16, fre_len - 1)
    path = tmp_path / "crossing.sframe"
    path.write_bytes(bytes(data))
    result = cli("check", str(path))
    assert result.code == 1 and "trailing-bytes" in result.out and not result.err


def test_a_path_that_is_not_utf8_and_holds_escapes_is_printed_escaped(tmp_path: Path) -> None:
    """Under an ASCII locale too: output is UTF-8 whatever the locale, what the terminal would obey escaped."""
    data = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    data[3] |= 0x80  # a problem for check to report, on a line that starts with the path
    name = os.fsencode(tmp_path) + b"/bad\xff\x1b[31m.sframe"
    with open(name, "wb") as f:
        f.write(bytes(data))
    env = dict(os.environ, LC_ALL="C", PYTHONIOENCODING="ascii:strict")
    done = subprocess.run([sys.executable, "-m", "sfview", "check", name], capture_output=True, env=env)
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    assert done.stdout.startswith(os.fsencode(tmp_path) + rb"/bad\xff\x1b[31m.sframe: section offset 0x3: error")


def test_printable_escapes_what_a_terminal_obeys_and_keeps_the_rest() -> None:
    from sfview.output.safe_text import printable

    assert printable("café_main") == "café_main"
    assert printable("a\x1b[31mb\nc\td\x7f\x9b") == r"a\x1b[31mb\x0ac\x09d\x7f\x9b"
    assert printable("x\udcff\u2028y\\z") == r"x\xff\u2028y\\z"  # a byte not UTF-8, a line separator, a backslash


def test_json_keeps_a_forged_name_as_it_is(cli, tmp_path: Path) -> None:
    import json

    elf = Elf.of(PROGRAM.read_bytes())
    at = elf.data.index(b"small_leaf\0", elf.section(".strtab")["sh_offset"])
    elf.poke(at, b"sm\x1b[2J\nlea")  # as long as "small_leaf": its NUL kept
    out = json.loads(cli("unwind", write(tmp_path, elf), "--json", "--regs", "pc=0x1180,sp=0x7ffc0000,fp=0").out)
    assert out["frames"][0]["function"] == "sm\x1b[2J\nlea"


def test_an_eh_frame_that_inflates_to_megabytes_of_zero_terminators_is_walked_at_once(cli, tmp_path: Path) -> None:
    """Zero terminators after the entries were walked a word at a time: 16 MB of them took 20 s."""
    elf = Elf.of(PROGRAM.read_bytes())
    raw = elf.contents(".eh_frame") + bytes(16 << 20)
    elf.compress(".eh_frame", stream=zlib.compress(raw))
    elf.poke(elf.section(".eh_frame")["sh_offset"] + 8, struct.pack("<Q", len(raw)))  # Elf64_Chdr's ch_size
    started = time.perf_counter()
    path = write(tmp_path, elf)
    result = cli("compare", path)
    assert time.perf_counter() - started < 5
    assert (result.code, result.out.replace(path, "PROGRAM")) == (
        0,
        cli("compare", str(PROGRAM)).out.replace(str(PROGRAM), "PROGRAM"),
    )


def test_a_machine_without_cfi_registers_is_refused_by_export_with_the_file_s_name(cli, tmp_path: Path) -> None:
    path = write(tmp_path, Elf.of(PROGRAM.read_bytes()).set_header(e_machine=0xFFFF))
    result = cli("export", "--breakpad", path)
    assert result.code == 2 and result.err.startswith(f"sfview: {path}: machine 65535 is not one")


@pytest.mark.parametrize("field, value", [("count", 1 << 60), ("descsz", 8)], ids=["count-huge", "note-8-bytes"])
def test_a_damaged_nt_file_note_costs_the_mapped_files_not_the_core(cli, tmp_path, field, value) -> None:
    """The whole core was refused for its `NT_FILE` note; the walk finds the program by AT_ENTRY and the
    libraries through the dynamic linker's list, as for a core without one."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    _, pos = _note_in(core, 0x46494C45)  # NT_FILE
    desc = pos + 12 + (struct.unpack_from("<I", core.data, pos)[0] + 3) // 4 * 4
    core.poke(*((desc, struct.pack("<Q", value)) if field == "count" else (pos + 4, struct.pack("<I", value))))
    path = write(tmp_path, core, "damaged.core")
    result = cli("unwind", str(DEEP), "--core", path)
    good = cli("unwind", str(DEEP), "--core", str(DATA / "deep-x86_64.core"))
    frames = [line.split(" from ")[0] for line in result.out.splitlines() if line.startswith("#")]
    assert result.code == 0 and frames == [
        line.split(" from ")[0] for line in good.out.splitlines() if line.startswith("#")
    ]
    assert f"note: {path}: an NT_FILE note of" in result.err
    assert "note: no readable NT_FILE note: the program's load bias" in result.err


@pytest.mark.parametrize("field", [0, 4], ids=["namesz", "descsz"])
def test_a_core_whose_notes_stop_at_a_note_running_past_its_segment_says_where(cli, tmp_path, field) -> None:
    """A first note claiming 4 GB left no thread's registers, and the refusal did not say why."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    at = next(seg for _, seg in core.segments() if seg["p_type"] == PT_NOTE)["p_offset"]
    path = write(tmp_path, core.poke(at + field, struct.pack("<I", 0xFFFFFFF0)), "damaged.core")
    result = cli("unwind", str(DEEP), "--core", path)
    assert result.code == 2 and result.err.startswith(f"sfview: {path}: the core has no readable NT_PRSTATUS note")
    assert f"its notes stop at file offset {at:#x}: a note of namesz" in result.err


def _note_in(core: Elf, kind: int) -> tuple[int, int]:
    """Where the core's notes start in the file, and where its first note of type `kind` starts."""
    at = next(seg for _, seg in core.segments() if seg["p_type"] == PT_NOTE)["p_offset"]
    pos = at
    while struct.unpack_from("<I", core.data, pos + 8)[0] != kind:
        namesz, descsz = struct.unpack_from("<II", core.data, pos)
        pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return at, pos


def test_a_thread_whose_registers_are_cut_short_is_left_out_not_the_core(cli, tmp_path) -> None:
    """A core of two threads whose first NT_PRSTATUS note is too short for its registers: the whole core was
    refused; now that thread is left out, the note says where, and the other thread is walked as gdb did."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    at, pos = _note_in(core, 1)  # NT_PRSTATUS: the thread's registers
    namesz, descsz = struct.unpack_from("<II", core.data, pos)
    thread = bytes(core.data[pos : pos + 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4])
    desc_at = 12 + (namesz + 3) // 4 * 4
    short = bytearray(thread[: desc_at + 200])  # 200 bytes: the registers begin at 112 and need 216 more
    struct.pack_into("<I", short, 4, 200)
    notes = bytes(core.data[at : at + next(s for _, s in core.segments() if s["p_type"] == PT_NOTE)["p_filesz"]])
    moved = (len(core.data) + 3) & ~3
    held = notes[: pos - at] + bytes(short) + notes[pos - at :]
    core.data += bytes(moved - len(core.data)) + held
    core.set_segment(PT_NOTE, p_offset=moved, p_filesz=len(held))
    path = write(tmp_path, core, "short-thread.core")
    result = cli("unwind", str(DEEP), "--core", path)
    good = cli("unwind", str(DEEP), "--core", str(DATA / "deep-x86_64.core"))
    frames = [line.split(" from ")[0] for line in result.out.splitlines() if line.startswith("#")]
    assert result.code == 0, result.err
    assert frames == [line.split(" from ")[0] for line in good.out.splitlines() if line.startswith("#")]
    assert (
        f"note: {path}: the NT_PRSTATUS note at file offset {moved + pos - at:#x} has 200 bytes, too short for a "
        "thread's registers (328): that thread is left out" in result.err
    )


def test_a_core_whose_only_thread_is_cut_short_is_refused_saying_where(cli, tmp_path) -> None:
    """Its one NT_PRSTATUS note too short for the registers: no thread to walk, and the refusal says why."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    _, pos = _note_in(core, 1)  # NT_PRSTATUS
    path = write(tmp_path, core.poke(pos + 4, struct.pack("<I", 200)), "short.core")
    result = cli("unwind", str(DEEP), "--core", path)
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith(f"sfview: {path}: the core has no readable NT_PRSTATUS note: no thread's registers")
    assert f"(the NT_PRSTATUS note at file offset {pos:#x} has 200 bytes, too short" in result.err


def test_a_vdso_address_pointing_at_a_big_mapping_does_not_copy_it(cli, tmp_path: Path) -> None:
    """`AT_SYSINFO_EHDR` pointing at a 128 MB mapping that starts as an ELF header: the mapping was copied
    whole to read the vDSO from it (600 MB of a 600 KB sparse core took 1.9 GB)."""
    import tracemalloc

    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    _, pos = _note_in(core, 6)  # NT_AUXV
    namesz, descsz = struct.unpack_from("<II", core.data, pos)
    auxv = pos + 12 + (namesz + 3) // 4 * 4
    for at in range(auxv, auxv + descsz, 16):
        if struct.unpack_from("<Q", core.data, at)[0] == 33:  # AT_SYSINFO_EHDR
            core.poke(at + 8, struct.pack("<Q", 1 << 44))
    size, load_at = 128 << 20, (len(core.data) + 4095) & ~4095
    header = core.header()
    rows = bytes(core.data[header["e_phoff"] : header["e_phoff"] + header["e_phnum"] * 56])
    rows += struct.pack("<IIQQQQQQ", PT_LOAD, 5, load_at, 1 << 44, 0, size, size, 4096)
    path = tmp_path / "vdso.core"
    with path.open("wb") as f:
        f.write(core.bytes())
        f.seek(load_at)
        f.write(b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 3, 62))
        f.seek(load_at + size)
        f.write(rows)
        f.seek(32)
        f.write(struct.pack("<Q", load_at + size))
        f.seek(56)
        f.write(struct.pack("<H", header["e_phnum"] + 1))
    tracemalloc.start()
    try:
        result = cli("unwind", str(DEEP), "--core", str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.code == 0 and "#0  stop_here () at " in result.out
    assert peak < 64 << 20


def test_ctrl_c_as_python_m_sfview_starts_ends_in_one_line() -> None:
    """`python -m sfview`: a SIGINT while the entry point is being found and imported (once `sfview.__main__`
    runs) ends in the one line and status (it was Python's KeyboardInterrupt traceback: the handler was
    set by the entry point, after its own imports). Earlier, in the interpreter's `site` and `runpy`, a
    Ctrl-C is still Python's (see `sfview.entry`)."""
    script = (
        "import os, runpy, signal, sys\n"
        "class Interrupting:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'sfview.entry':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Interrupting())\n"
        "runpy.run_module('sfview', run_name='__main__', alter_sys=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, "dump", str(PROGRAM)], capture_output=True, text=True)
    assert done.returncode == 130 and done.stderr == "sfview: interrupted\n", done.stderr


@pytest.mark.parametrize("when", ["before-run", "after-run"])
def test_ctrl_c_outside_the_command_line_ends_in_one_line(when: str) -> None:
    """A SIGINT once the entry point is imported but before `run` is under way, or as the interpreter ends
    after it: the same one line and status, no KeyboardInterrupt traceback."""
    interrupt = "os.kill(os.getpid(), signal.SIGINT)\n"
    script = (
        "import os, signal, sys\n"
        "from sfview.entry import run\n"
        + (interrupt if when == "before-run" else "")
        + "status = run()\n"
        + (interrupt if when == "after-run" else "")
        + "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, "dump", str(PROGRAM)], capture_output=True, text=True)
    assert done.returncode == 130 and done.stderr == "sfview: interrupted\n", done.stderr
