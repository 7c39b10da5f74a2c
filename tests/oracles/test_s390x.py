"""s390x, as binutils 2.47 (Debian sid) writes it: programs built here, now, with the s390x cross compiler.

- `sfview dump` prints what that release's `readelf --sframe` prints, byte for byte (CFA offsets stored
  as `(cfa - 160) / 8`, FP and RA kept in floating-point registers as flexible FDEs);
- `sfview check` finds nothing wrong in what the toolchain wrote, and still flags what is wrong;
- `sfview compare` agrees with the same file's `.eh_frame` (the CFA is r15 + 160 in both);
- `sfview export --breakpad` writes rules Breakpad's s390x register names can hold;
- `sfview unwind` on a core qemu-s390x writes gives gdb-multiarch's frames, PC for PC.

Each skips, saying why, when the cross compiler, binutils 2.47, qemu-s390x or gdb-multiarch is missing.
"""

from __future__ import annotations

import io
import json
import os
import re
import resource
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_process
from rich.console import Console
from test_gcc import VARIANTS
from test_unwind import _gdb_multiarch, gdb_frames, need, our_frames
from textual.widgets import Static
from toolchains import Toolchain, toolchain

from sfview import rule_notation
from sfview.app import notation
from sfview.app.app import SfviewApp
from sfview.app.fields import FieldTree
from sfview.document import Document
from sfview.dwarf.cfi import Unexpressible
from sfview.dwarf.compare import table_differences
from sfview.dwarf.tables import read_cfi
from sfview.inputs.opening import raw_section
from sfview.output.breakpad import load_address, read_stack_cfi, symbol_file
from sfview.sframe.model.records import START_ADDR_SIZES
from sfview.sframe.model.rules import Kind

SOURCES = DATA / "src"
SYSROOT = "/usr/s390x-linux-gnu"
EVERY_VARIANT = ["shapes.c", "deep.c", "leaves.c"]
"""Built with every variant of `test_gcc.VARIANTS` (-O0 to -O3, -Os, frame pointer, PIE or not, shared, `.o`:
readelf 2.45+ starts each function of a `.o` where its start field's relocation points)."""
ONCE = {
    "signal.c": "O2",
    "noreturn.c": "O2",
    "qsort.c": "O2",
    "threads.c": "O2",
    "libcallback.c": "O2-shared",
    "s390x-cfi.s": "O2-shared",
    "s390x-cfi-expression.s": "O2-shared",
}
"""Built once (a signal handler, noreturn calls, callbacks, threads, a library, hand-written CFI)."""


@pytest.fixture(scope="module")
def sid() -> Toolchain:
    return toolchain("2.47", "s390x")


def _build(tc: Toolchain, source: str, variant: str, folder: Path) -> Path:
    out = folder / f"{source}-{variant}"
    extra = ["-lpthread"] if source == "threads.c" else []
    tc.compile(*VARIANTS[variant], SOURCES / source, *extra, "-o", out)
    return out


@pytest.fixture(scope="module")
def programs(sid: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every program of the dump matrix, built once for the module's tests."""
    folder = tmp_path_factory.mktemp("s390x")
    built = [_build(sid, source, variant, folder) for source in EVERY_VARIANT for variant in VARIANTS]
    built += [_build(sid, source, variant, folder) for source, variant in ONCE.items()]
    return built


def test_dump_is_readelf_2_47(cli, sid: Toolchain, programs: list[Path]) -> None:
    """Every program: `sfview dump` is binutils 2.47's `readelf --sframe`, byte for byte."""
    differ = []
    for program in programs:
        expected = sid.readelf_sframe(program)
        result = cli("dump", str(program))
        assert (result.code, result.err) == (0, ""), program.name
        if result.out != expected:
            differ.append(program.name)
    assert not differ, f"dump differs from readelf 2.47 on {differ}"
    assert len(programs) == len(EVERY_VARIANT) * len(VARIANTS) + len(ONCE)


def test_the_dump_shows_the_decoded_offsets(cli, sid: Toolchain, programs: list[Path]) -> None:
    """What the byte-for-byte test covers holds what it should: CFA offsets from 160 up, FP/RA in f-registers."""
    text = "".join(cli("dump", str(p)).out for p in programs)
    assert "sp+160 " in text and "sp+100160" in text and "fp+160 " in text and "r10+320 " in text
    assert "r16+0 " in text and "r17+0 " in text and "RA undefined" in text and "(r536870911-8)U" in text
    assert "sp+0 " not in text


def test_the_model_decodes_s390x_rules(sid: Toolchain, tmp_path: Path) -> None:
    """The rules are numbers an unwinder uses: CFA = r15 + 160, RA in f0 (DWARF 16), RA padding."""
    program = _build(sid, "s390x-cfi.s", "O2-object", tmp_path)
    section = Document.open(str(program)).require_section()
    assert (section.sp_reg, section.fp_reg, section.ra_reg, section.sp_val_offset) == (15, 11, 14, -160)
    first = section.function(0)
    rows = list(first.rows)
    assert (rows[0].cfa.base, rows[0].cfa.offset, rows[0].offsets[1]) == (15, 160, 0)
    ra = rows[2].ra
    assert (ra.base, ra.offset, ra.deref) == (16, 0, False)
    assert (rows[2].fp.base, rows[2].fp.deref) == (17, False)
    fp_only = list(section.function(1).rows)[1]
    assert fp_only.ra_padding and fp_only.fp.base == 17


# words -------------------------------------------------------------------------------------------------

ROW = re.compile(r"^    ([0-9a-f]{16})  (sp|fp|r\d+)\+(\d+) ", re.M)


def test_the_field_tree_teaches_the_stored_cfa_offset(sid: Toolchain, programs: list[Path]) -> None:
    """Each default row's CFA offset field says `stored N → N x 8 + 160 = M`, M being what readelf prints."""
    program = next(p for p in programs if p.name == "shapes.c-O2")
    printed = {int(address, 16): int(offset) for address, _, offset in ROW.findall(sid.readelf_sframe(program))}
    tree = FieldTree(Document.open(str(program)).require_section())
    checked = 0
    for func in tree.section.functions():
        for row in func.rows:
            field = tree.field_at(row.span.start + START_ADDR_SIZES[func.fre_type] + 1)  # after the info byte
            stored = field.value
            expected = f"stored {stored} → {stored} x 8 + 160 = {printed[row.address]}: CFA = SP + "
            assert field.meaning.startswith(expected), (field.path, field.meaning)
            checked += 1
    assert checked == len(printed) > 20


def test_the_explorer_names_s390x_registers(sid: Toolchain, tmp_path: Path) -> None:
    program = _build(sid, "s390x-cfi.s", "O2-object", tmp_path)
    section = Document.open(str(program)).require_section()
    both = list(section.function(0).rows)[2]
    assert rule_notation.rules_text(section, both) == "CFA sp+160 FP f2+0 RA f0+0"
    assert notation.saved_words(section, "RA", both.ra) == "RA kept in register f0, not on the stack"
    first = next(iter(section.function(0).rows))
    assert notation.saved_words(section, "RA", first.ra) == "RA still in r14, where the call put it: not saved (yet)"
    assert notation.cfa_words(section, list(section.function(5).rows)[2].cfa) == (
        "CFA = r15 + 100160: the frame is 100000 bytes, from SP up to the caller's SP at CFA -160 "
        "(above it, the caller's 160-byte register save area)"
    )


async def test_the_detail_panel_shows_the_arithmetic(sid: Toolchain, tmp_path: Path) -> None:
    """In the explorer, the byte of a row's CFA offset explains itself with the numbers."""
    program = _build(sid, "s390x-cfi.s", "O2-object", tmp_path)
    app = SfviewApp(Document.open(str(program)))
    row = list(app.section.function(5).rows)[2]  # big_frame after `agfi %r15,-100000`: a 2-byte offset
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("2")
        app.explorer.goto_offset(row.span.start + 2)
        await pilot.pause()
        console = Console(width=100, file=io.StringIO(), record=True)
        console.print(app.explorer.detail.query_one("#detail-text", Static).content)
        text = " ".join(console.export_text().split())
    assert "stored 12500 → 12500 x 8 + 160 = 100160: CFA = SP + 100160" in text


def v2_s390x_section(rows: list[tuple[int, list[int]]]) -> bytes:
    """A version 2 s390x section (big-endian, as binutils 2.45 writes it) with one function at 0x1000:
    `rows` are (start, stored data words), each row's CFA based on SP, 1-byte words."""
    block = b"".join(
        struct.pack(">BB", start, len(words) << 1 | 1) + bytes(w & 0xFF for w in words) for start, words in rows
    )
    header = struct.pack(">HBBBbbBIIIII", 0xDEE2, 2, 1, 4, 0, 0, 0, 1, len(rows), len(block), 0, 20)
    return header + struct.pack(">iIIIBBH", 0x1000, 64, 0, len(rows), 0, 0, 0) + block


def test_version_2_keeps_fp_and_ra_in_registers_by_the_low_bit() -> None:
    """The notes' SFRAME_V2_S390X_OFFSET_IS_REGNUM: an odd FP/RA word is DWARF register `stored >> 1`
    (33 → 16, f0; 35 → 17, f2); an even one a CFA offset; an RA of 0 the padding word. binutils 2.45,
    which wrote these, is not at hand to compare with: this follows its header's macros."""
    data = v2_s390x_section([(0, [0]), (4, [20, -48, -72]), (8, [0, 33, 35]), (12, [0, 0, 35])])
    doc = Document("v2", raw_section(data, 0))
    section = doc.require_section()
    stack, registers, padding = list(section.function(0).rows)[1:]
    assert (stack.cfa.offset, stack.ra.offset, stack.ra.deref, stack.fp.offset) == (320, -48, True, -72)
    assert (registers.ra.base, registers.ra.deref, registers.fp.base, registers.fp.deref) == (16, False, 17, False)
    assert padding.ra_padding and padding.fp.base == 17
    assert rule_notation.rules_text(section, registers) == "CFA sp+160 FP f2+0 RA f0+0"
    meanings = [FieldTree(section).field_at(registers.span.start + 2 + k).meaning for k in range(3)]
    assert meanings == [
        "stored 0 → 0 x 8 + 160 = 160: CFA = SP + 160",
        "stored 33 → odd: saved in register 33>>1 = f0: the caller's return address is there",
        "stored 35 → odd: saved in register 35>>1 = f2: the caller's frame pointer is there",
    ]


def test_json_gives_the_decoded_rules_and_how(cli, sid: Toolchain, programs: list[Path]) -> None:
    program = next(p for p in programs if p.name == "shapes.c-O2")
    doc = json.loads(cli("dump", "--json", str(program)).out)
    header = doc["header"]
    assert (header["cfa_offset_scale"], header["cfa_offset_bias"], header["sp_val_offset"]) == (8, 160, -160)
    assert header["registers"] == {"sp": "r15", "fp": "r11", "ra": "r14"}
    rows = [row for func in doc["functions"] for row in func["fres"]]
    assert all(row["cfa"]["offset"] == row["offsets"][0] * 8 + 160 for row in rows)
    assert {row["cfa"]["text"] for row in rows} >= {"sp+160", "sp+70320"}


# check ----------------------------------------------------------------------------------------------


def test_check_finds_nothing_wrong_in_what_binutils_wrote(sid: Toolchain, programs: list[Path]) -> None:
    for program in programs:
        if program.name.startswith("s390x-cfi-expression"):
            continue  # what the assembler got wrong: the next test
        result = run_process("check", str(program))
        assert result.returncode == 0, result.stdout + result.stderr


def test_check_flags_the_control_word_the_assembler_got_wrong(sid: Toolchain, programs: list[Path]) -> None:
    program = next(p for p in programs if p.name.startswith("s390x-cfi-expression"))
    result = run_process("check", str(program))
    assert result.returncode == 1
    assert "flex-reserved-bits: fdes[0].fres[1]: row 1: fp_control = 0xfffffffb sets reserved bits" in result.stdout


def test_an_implausible_cfa_offset_is_still_flagged(sid: Toolchain, tmp_path: Path) -> None:
    """A stored CFA offset of -21 means 160 - 168 = -8: below the register save area, flagged."""
    program = _build(sid, "deep.c", "O2", tmp_path)
    doc = Document.open(str(program))
    section = doc.require_section()
    row = next(iter(section.function(0).rows))
    assert row.offsets[0] == 0 and row.cfa.offset == 160
    cfa_at = doc.file_offset + row.span.start + 2  # 1-byte start address, info byte, then the CFA's
    data = bytearray(program.read_bytes())
    assert data[cfa_at] == 0
    data[cfa_at] = 256 - 21
    bad = tmp_path / "bad"
    bad.write_bytes(bytes(data))
    result = run_process("check", str(bad))
    assert result.returncode == 1
    assert "cfa-offset-implausible" in result.stdout and "CFA offset -8 (below 160" in result.stdout


# compare and export --------------------------------------------------------------------------------


def test_compare_agrees_with_eh_frame(sid: Toolchain, programs: list[Path]) -> None:
    """SFrame against the same file's DWARF CFI (`r15+160` there too): no disagreement."""
    for program in programs:
        result = run_process("compare", str(program))
        assert result.returncode == 0, f"{program.name}:\n{result.stdout}{result.stderr}"


def test_breakpad_export_agrees_with_eh_frame(sid: Toolchain, programs: list[Path]) -> None:
    """The export read back holds DWARF's rules wherever DWARF has a numeric one, in s390x's register
    names, with the caller's SP as `r15: .cfa -160 +`; that Breakpad has no s390x is said."""
    for program in programs:
        if program.name.endswith("-O2-object"):
            continue  # addresses in a `.o` are per code section: compare pairs its FDEs by relocation instead
        doc = Document.open(str(program))
        text, problems = symbol_file(doc)
        assert text.startswith("MODULE Linux s390x ") and problems[0].startswith("Breakpad knows no s390x")
        assert ".cfa: r15 160 + .ra: r14 r15: .cfa -160 +" in text
        exported = read_stack_cfi(text, "s390x", load_address(doc.elf))
        for diff in table_differences(exported, read_cfi(doc.image)):
            # DWARF's expressions, and the outermost frame, where SFrame's row has no CFA rule to export
            assert isinstance(diff.right, Unexpressible) or diff.left.kind is Kind.UNDEFINED, (program.name, diff)


def test_export_says_breakpad_has_no_s390x(sid: Toolchain, programs: list[Path], tmp_path: Path) -> None:
    result = run_process("export", "--breakpad", str(programs[0]), "-o", str(tmp_path / "out.sym"))
    assert result.returncode == 0 and "Breakpad knows no s390x" in result.stderr, result.stderr


# unwind ----------------------------------------------------------------------------------------------


def _qemu_core(program: Path, workdir: Path, *args: str) -> Path:
    """Run `program` under qemu-s390x until it aborts or faults; the core qemu writes."""

    def allow_cores() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    subprocess.run(
        ["qemu-s390x", "-L", SYSROOT, str(program), *args],
        cwd=workdir, preexec_fn=allow_cores, capture_output=True, timeout=120,
    )  # fmt: skip
    cores = sorted(workdir.glob("qemu_*.core"), key=os.path.getmtime)
    assert cores, "qemu wrote no core"
    return cores[-1]


CORE_BUILDS = {
    "O2-static": ["-O2", "-static"],
    "O2": ["-O2", "-no-pie"],
    "O0": ["-O0", "-no-pie"],
    "O2-frame-pointer": ["-O2", "-fno-omit-frame-pointer", "-no-pie"],
    "Os": ["-Os", "-no-pie"],
}
"""Not PIE: a qemu core has no NT_FILE note, and gdb-multiarch cannot place a PIE program without it."""


def _same_frames(ours: list[tuple[int, str]], gdb: list[tuple[int, str]]) -> bool:
    """Frame for frame, PC for PC, and the same name wherever gdb has one (it writes `??` for an address
    of a stripped libc.so.6 that no dynamic symbol covers, where sfview names the section)."""
    return [pc for pc, _ in ours] == [pc for pc, _ in gdb] and all(
        name == theirs for (_, name), (_, theirs) in zip(ours, gdb, strict=True) if theirs != "??"
    )


@pytest.mark.parametrize("build", CORE_BUILDS)
def test_a_core_unwinds_as_gdb_multiarch_does(sid: Toolchain, tmp_path: Path, build: str) -> None:
    """leaves.c aborts in stop_here, called through chain from main: through libc's raise and abort
    (DWARF CFI: Debian's libc has no SFrame), then the program's SFrame, as gdb-multiarch has them."""
    need("qemu-s390x", "gdb-multiarch")
    program = tmp_path / f"leaves-{build}"
    sid.compile(*CORE_BUILDS[build], SOURCES / "leaves.c", "-o", program)
    core = _qemu_core(program, tmp_path)
    expected = gdb_frames(_gdb_multiarch(program, core, SYSROOT))
    names = [name for _, name in expected]
    assert names[-1] == "main" and "stop_here" in names and "chain" in names and "abort" in names, names
    result = run_process("unwind", str(program), "--core", str(core), "--sysroot", SYSROOT)
    assert result.returncode == 0, result.stderr
    ours = our_frames(result.stdout)
    assert _same_frames(ours, expected), (ours, expected)
    alone = run_process("unwind", str(program), "--core", str(core), "--sysroot", SYSROOT, "--cfi", "sframe")
    assert len(our_frames(alone.stdout)) == 1, "frame 0 is in libc, which has no SFrame: as the kernel, no further"
    assert "s390x big-endian code keeps no frame-pointer chain" in alone.stdout


SOURCE_LINE = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*\) at (\S+:\d+)$", re.M)
"""A frame line with its place: the function, `FILE:LINE`."""


def test_frames_of_a_big_endian_program_have_gdbs_source_lines(sid: Toolchain, tmp_path: Path) -> None:
    """`-g`: s390x's DWARF is big-endian, its line tables too; each frame of the program says `at FILE:LINE`
    as gdb-multiarch does (a header read in the wrong byte order was refused, the lines lost)."""
    need("qemu-s390x", "gdb-multiarch")
    program = tmp_path / "leaves-g"
    sid.compile("-O0", "-g", "-no-pie", SOURCES / "leaves.c", "-o", program)
    core = _qemu_core(program, tmp_path)
    expected = SOURCE_LINE.findall(_gdb_multiarch(program, core, SYSROOT))
    assert [name for name, _ in expected][-1:] == ["main"] and len(expected) >= 3, expected
    result = run_process("unwind", str(program), "--core", str(core), "--sysroot", SYSROOT)
    assert result.returncode == 0, result.stderr
    assert SOURCE_LINE.findall(result.stdout) == expected, result.stdout


@pytest.mark.parametrize("build", ["O2", "Os"])
def test_an_fp_kept_in_a_register_qemu_does_not_save(sid: Toolchain, tmp_path: Path, build: str) -> None:
    """busy_leaf faults while it keeps r11 in a floating-point register (a flexible FDE: `r17+0`), and
    a qemu core has no floating-point registers: its caller's FP is unknown. gdb-multiarch walks to
    with_vla, whose CFA is r11-based, and stops there; so does sfview, saying which register it lacks."""
    need("qemu-s390x", "gdb-multiarch")
    program = tmp_path / f"leaves-{build}"
    sid.compile(*CORE_BUILDS[build], SOURCES / "leaves.c", "-o", program)
    core = _qemu_core(program, tmp_path, "leaf")
    expected = gdb_frames(_gdb_multiarch(program, core, SYSROOT))
    assert [name for _, name in expected] == ["busy_leaf", "with_vla"]
    result = run_process("unwind", str(program), "--core", str(core), "--explain")
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
    assert "FP = f" in result.stdout and "is not known" in result.stdout
    assert "stopped: the CFA cannot be computed: r11 is not known" in result.stdout


def test_a_signal_frame_unwinds_as_gdb_multiarch_does(sid: Toolchain, tmp_path: Path) -> None:
    """A SIGSEGV handler faults again: through qemu's `svc 119` trampoline (a plain handler: the kernel's
    `sigframe`) to the faulting `fault`, whose RA is still in r14 (restored from the signal frame), and
    on to main, frame for frame as gdb-multiarch."""
    need("qemu-s390x", "gdb-multiarch")
    program = tmp_path / "signal"
    sid.compile("-O2", "-no-pie", "-DCRASH_AT_STOP", SOURCES / "signal.c", "-o", program)
    core = _qemu_core(program, tmp_path)
    gdb = _gdb_multiarch(program, core, SYSROOT)
    expected = gdb_frames(gdb)
    assert [name for _, name in expected] == ["stop_here", "handler", "fault", "middle", "main"], gdb
    result = run_process("unwind", str(program), "--core", str(core), "--sysroot", SYSROOT)
    assert result.returncode == 0, result.stderr
    assert our_frames(result.stdout) == expected
    assert "#2  <signal handler called>" in gdb and "#2  <signal handler called>" in result.stdout


def test_an_rt_signal_frame_is_unwound(sid: Toolchain, tmp_path: Path) -> None:
    """SA_SIGINFO: qemu's `svc 173` trampoline and `rt_sigframe`. gdb-multiarch stops at the trampoline
    on these cores (it reads the registers from elsewhere: "Cannot access memory"), so its frames are
    checked as far as it goes, then the source's, and the interrupted PC is `fault`'s faulting store."""
    need("qemu-s390x", "gdb-multiarch")
    program = tmp_path / "signal"
    sid.compile("-O2", "-no-pie", "-DCRASH_AT_STOP", "-DSIGINFO", SOURCES / "signal.c", "-o", program)
    core = _qemu_core(program, tmp_path)
    gdb = gdb_frames(_gdb_multiarch(program, core, SYSROOT))
    result = run_process("unwind", str(program), "--core", str(core), "--sysroot", SYSROOT)
    assert result.returncode == 0, result.stderr
    ours = our_frames(result.stdout)
    assert ours[: len(gdb)] == gdb and len(gdb) >= 3
    assert [name for _, name in ours] == ["stop_here", "handler", "handler_info", "fault", "middle", "main"]
    assert "#3  <signal handler called>" in result.stdout
    disassembly = subprocess.run([sid.tool("objdump"), "-d", str(program)], capture_output=True, text=True).stdout
    faulting = re.search(rf"^\s+{ours[3][0]:x}:\s+(?:[0-9a-f]{{2}} )+\s*(\S+)", disassembly, re.M)
    assert faulting is not None and faulting.group(1) == "st", "the interrupted PC is the store that faulted"
