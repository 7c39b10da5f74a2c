"""DWARF CFI as a second source: reading it, `sfview compare`, and `sfview export --breakpad` checked against it.

The Breakpad export is read back (`read_stack_cfi`) and compared, address by
address, with the same binary's `.eh_frame` as pyelftools decodes it, and
with the output of an independent converter, Sentry's `symbolic` (its CFI
cache is Breakpad `STACK CFI` text written from DWARF by the Rust `gimli`
crate); tests using it skip when it is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import DATA
from test_gcc import _compiler as gcc_with_sframe

from sfview.document import Document
from sfview.dwarf.cfi import ABIS, CfiFunction, Unexpressible
from sfview.dwarf.compare import compare, compare_outline, same_rule, table_differences
from sfview.dwarf.tables import CfiTable, read_cfi
from sfview.output import comparison
from sfview.output.breakpad import debug_identifier, load_address, read_stack_cfi, stack_cfi, symbol_file
from sfview.sframe.bulk.shapes import Shapes
from sfview.sframe.model.rules import CFA, SAME, UNDEFINED, Kind, rule

ELF_FIXTURES = [
    "shapes-x86_64-O2",
    "shapes-x86_64-O0-fp",
    "shapes-x86_64-O2-stripped",
    "libshapes-x86_64.so",
    "deep-x86_64",
    "shapes-aarch64-O2",
    "shapes-aarch64-O0-fp",
]
KNOWN = (
    "PLT stub: SFrame writes it as a PCMASK FDE, DWARF as a CFA expression",
    "outermost frame: DWARF marks the RA undefined, SFrame before version 3 cannot",
)


def _compare(path: Path):
    """The comparison (`compare`, every pair kept); and for a linked file, `compare_outline`'s (what the
    command makes: FDEs by their headers, pairs of a shape seen before counted) says the same."""
    doc = Document.open(str(path))
    table = read_cfi(doc.image)
    section = doc.require_section()
    result = compare(section, table, doc.function_name, doc.symbols.name_at, doc.placement)
    if doc.placement is None:
        outline = compare_outline(Shapes(section), table, doc.function_name, doc.symbols.name_at)
        assert comparison.text(section, table, outline, "f") == comparison.text(section, table, result, "f")
        assert comparison.json_text(section, outline, "f") == comparison.json_text(section, result, "f")
    return doc, table, result


def test_cfi_rows_as_numeric_rules() -> None:
    """Rows as objdump --dwarf=frames-interp shows them for this FDE (at .eh_frame+0x9c)."""
    table = read_cfi(Document.open(str(DATA / "shapes-x86_64-O2")).image)
    func = table.find(0x1197)
    assert (func.start_address, func.size, func.fde_offset, func.cie_offset) == (0x1190, 0x24, 0x9C, 0x30)
    assert [(r.address, r.cfa) for r in func.rows] == [
        (0x1190, rule(Kind.VALUE, 7, 8)),
        (0x1197, rule(Kind.VALUE, 7, 320)),
        (0x11B0, rule(Kind.VALUE, 7, 8)),
    ]
    assert {r.ra for r in func.rows} == {rule(Kind.VALUE, CFA, -8, True)}
    plt = table.find(0x1030)
    assert isinstance(plt.row_for(0x1030).cfa, Unexpressible)
    assert table.find(0x1090).rows[0].ra.kind is Kind.UNDEFINED  # _start: .cfi_undefined rip
    assert table.find(0x1051).row_for(0x1051).others == {3: rule(Kind.VALUE, CFA, -16, True)}  # rbx


@pytest.mark.parametrize("name", [*ELF_FIXTURES, "shapes-x86_64-O2.o"])
def test_fixtures_agree_with_their_eh_frame(name: str) -> None:
    _, _, result = _compare(DATA / name)
    assert result.differences(explained=False) == []
    assert result.compared > 0 and result.agreeing + result.explained == result.compared
    assert {d.reason for _, d in result.differences(True)} <= set(KNOWN)


def test_plt_and_start_are_explained() -> None:
    _, _, result = _compare(DATA / "shapes-x86_64-O2")
    assert result.explained == 16  # one PLT entry: SFrame PCMASK, DWARF expression
    only = {(o.side, o.name): o.reason for o in result.only}
    assert only[("dwarf", "_start")].startswith("outermost frame")
    assert only[("dwarf", "__cxa_finalize@plt")].startswith("linker stub"), "the .plt.got entry, named as objdump"


def test_a_changed_rule_is_a_disagreement() -> None:
    """The comparison can fail: one DWARF row changed by hand is reported, with both sources' offsets."""
    doc, table, _ = _compare(DATA / "shapes-x86_64-O2")
    _altered(table, 0x1190, lambda func: setattr(func.row_for(0x1197), "cfa", rule(Kind.VALUE, 7, 328)))
    result = compare(doc.require_section(), table, doc.function_name, doc.symbols.name_at)
    (pair, diff), *rest = result.differences(explained=False)
    assert rest == []
    assert (diff.start, diff.end, diff.column, diff.sframe.offset, diff.dwarf.offset) == (
        0x1197,
        0x11B0,
        "cfa",
        320,
        328,
    )
    assert pair.dwarf.fde_offset == 0x9C and diff.sframe_row.span.start > 0
    assert not result.agrees and result.disagreeing == 0x11B0 - 0x1197


def _altered(table: CfiTable, start: int, change: Callable[[CfiFunction], None]) -> None:
    """`table`'s FDE at `start`, changed by `change` each time it is made (its function is made when asked
    for), its rows made as objects first."""
    function = table.function

    def altered(i: int) -> CfiFunction:
        func = function(i)
        if func.start_address == start:
            func.rows = list(func.rows)
            change(func)
        return func

    table.function = altered  # type: ignore[method-assign]


def _ra_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    """The DWARF reader `compare` looks up, changed: the FDE at 0x1190 (its instructions its own: no other
    FDE's outcome stands for it) saves the RA elsewhere."""
    import sfview.cli.compare as command  # where the command looks the reader up

    real = command.read_cfi

    def changed(elf):
        table = real(elf)
        _altered(table, 0x1190, lambda func: setattr(func.row_for(0x1197), "ra", rule(Kind.VALUE, CFA, -16, True)))
        return table

    monkeypatch.setattr(command, "read_cfi", changed)


def test_compare_cli_exits_1_on_a_disagreement(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    _ra_moved(monkeypatch)
    result = cli("compare", str(DATA / "shapes-x86_64-O2"))
    assert result.code == 1
    assert "disagreements: 1\n  0x1197..0x11b0 medium_frame: RA: SFrame *(CFA - 8) (FDE 4 at .sframe+0x60" in result.out
    assert "DWARF *(CFA - 16) (FDE at .eh_frame+0x9c, CIE at .eh_frame+0x30)" in result.out


def test_check_dwarf_counts_what_compare_fails_as_problems(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` passed (exit 0) what `compare` failed (exit 1): a CI gate had to run both. `check --dwarf`
    runs compare's engine and counts each disagreement as a problem; without it, nothing changes."""
    path = str(DATA / "shapes-x86_64-O2")
    assert (cli("check", "--dwarf", path).code, cli("check", "--dwarf", path).out) == (0, "")
    _ra_moved(monkeypatch)
    assert cli("compare", path).code == 1
    assert cli("check", path).code == 0
    result = cli("check", "--dwarf", path)
    assert result.code == 1
    assert result.out.startswith(
        f"{path}: error sframe-dwarf-disagreement: 0x1197..0x11b0 medium_frame: RA: SFrame *(CFA - 8) (FDE 4 at"
    )
    (report,) = json.loads(cli("check", "--dwarf", "--json", path).out)
    assert report["dwarf"]["agree"] is False and len(report["dwarf"]["differences"]) >= 1
    raw = cli("check", "--dwarf", str(DATA / "shapes-x86_64-O2.sframe"))
    assert raw.code == 2 and "--dwarf needs the ELF file around it" in raw.err


def test_compare_cli(cli) -> None:
    result = cli("compare", str(DATA / "shapes-x86_64-O2"))
    assert result.code == 0 and "disagreements: none" in result.out
    assert "74269 agree, 16 differ for known reasons, 0 disagree" in result.out
    data = json.loads(cli("compare", "--json", str(DATA / "shapes-aarch64-O2")).out)
    assert data["agree"] is True and data["summary"]["bytes_disagreeing"] == 0
    for bad in ("shapes-x86_64-O2.sframe", "README.md", "shapes-x86_64-no-sframe"):
        result = cli("compare", str(DATA / bad))
        assert result.code == 2 and result.err.startswith(f"sfview: {DATA / bad}") and "Traceback" not in result.err
        assert result.err.count("\n") == 1


# Breakpad -------------------------------------------------------------------------


def test_debug_identifier_swaps_the_guid_fields() -> None:
    build_id = bytes.fromhex("e8c570f1aa25e1b7a0d1e65a10f78383a2c5184a")
    assert debug_identifier(build_id) == "F170C5E825AAB7E1A0D1E65A10F783830"


def _exported(path: Path) -> tuple[str, list[str], CfiTable]:
    """The export, and its STACK CFI read back at the file's own addresses."""
    doc = Document.open(str(path))
    text, problems = symbol_file(doc)
    return text, problems, read_stack_cfi(text, read_cfi(doc.image).abi.name, load_address(doc.elf))


@pytest.mark.parametrize("name", ELF_FIXTURES)
def test_breakpad_export_agrees_with_eh_frame(name: str) -> None:
    """At every address both describe, the exported rules are DWARF's, but where DWARF has an expression."""
    text, problems, exported = _exported(DATA / name)
    assert text.startswith("MODULE Linux ") and problems == []
    dwarf = read_cfi(Document.open(str(DATA / name)).image)
    assert len(exported)
    for diff in table_differences(exported, dwarf):
        assert isinstance(diff.right, Unexpressible), diff  # the PLT's CFA expression; SFrame's PCMASK rule


def test_breakpad_records() -> None:
    text, _, _ = _exported(DATA / "shapes-x86_64-O0-fp")
    lines = text.splitlines()
    assert "STACK CFI INIT 1030 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^" in lines  # PCMASK, block 1
    assert "STACK CFI INIT 1040 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^" in lines  # PCMASK, block 2
    assert any(line.endswith(".cfa: $rsp 16 + $rbp: .cfa -16 + ^") for line in lines)
    assert any(line.endswith(".cfa: $rbp 16 +") for line in lines)
    arm, _, _ = _exported(DATA / "shapes-aarch64-O0-fp")
    assert "STACK CFI INIT 814 24 .cfa: sp 0 + .ra: x30" in arm.splitlines()
    assert "STACK CFI 88c .cfa: sp 0 + .ra: x30 x29: x29" in arm.splitlines()
    assert any(line.startswith("PUBLIC ") and line.endswith(" main") for line in lines)


def test_rules_breakpad_cannot_hold_are_left_out() -> None:
    """A row without a CFA (version 3's outermost frame) is reported and its CFA left out; an undefined
    RA or FP is `.undef`. A signed RA (pointer authentication) is written where it is saved, as dump_syms
    writes it from DWARF (left out, the `.ra: x30` of the row before would stay in force), and said once."""
    signed = SimpleNamespace(
        start_offset=4,
        address=0x1004,
        cfa=rule(Kind.VALUE, 31, 16),
        ra=rule(Kind.VALUE, CFA, -8, True),
        fp=rule(Kind.VALUE, CFA, -16, True),
        mangled_ra=True,
    )
    first = SimpleNamespace(
        start_offset=0, address=0x1000, cfa=rule(Kind.VALUE, 31, 0), ra=SAME, fp=SAME, mangled_ra=False
    )
    last = SimpleNamespace(start_offset=8, address=0x1008, cfa=UNDEFINED, ra=UNDEFINED, fp=UNDEFINED, mangled_ra=False)
    func = SimpleNamespace(index=0, start_address=0x1000, size=12, pcmask=False, error=None, rows=[first, signed, last])
    lines, problems = stack_cfi([func], ABIS["EM_AARCH64"], 0)
    assert lines == [
        "STACK CFI INIT 1000 c .cfa: sp 0 + .ra: x30",
        "STACK CFI 1004 .cfa: sp 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^",
        "STACK CFI 1008 .ra: .undef x29: .undef",
    ]
    assert problems == [
        "0x1008: .cfa left out: no Breakpad rule for undefined",
        "1 function saves a signed RA (pointer authentication): `.ra` says where it is saved;"
        " a stack walker must strip the authentication code from the value it loads",
    ]


def test_relocatable_object_id_and_warning() -> None:
    """Without a build-id, the id hashes the first page of .text, as dump_syms (and symbolic) do."""
    text, problems, _ = _exported(DATA / "shapes-x86_64-O2.o")
    assert problems[0].startswith("a relocatable object")
    _, debug_id = _symbolic(DATA / "shapes-x86_64-O2.o")
    assert text.split()[3] == debug_id.replace("-", "").upper() + "0"


def test_export_cli(cli, tmp_path: Path) -> None:
    out = tmp_path / "shapes.sym"
    result = cli("export", "--breakpad", str(DATA / "shapes-x86_64-O2"), "-o", str(out))
    assert (result.code, result.err) == (0, "")
    assert out.read_text().splitlines()[0] == "MODULE Linux x86_64 F170C5E825AAB7E1A0D1E65A10F783830 shapes-x86_64-O2"
    plain = cli("export", str(DATA / "shapes-x86_64-O2"))  # Breakpad is the one format: --breakpad is optional
    assert (plain.code, plain.err, plain.out) == (0, "", out.read_text())


def _symbolic(path: Path) -> tuple[str, str]:
    """symbolic's STACK CFI text and debug id for `path`."""
    symbolic = pytest.importorskip("symbolic", reason="symbolic (the independent DWARF→Breakpad converter) missing")
    import io

    obj = next(symbolic.Archive.open(str(path)).iter_objects())
    out = io.BytesIO()
    symbolic.CfiCache.from_object(obj).write_to(out)
    return out.getvalue().decode(), str(obj.debug_id)


def _agrees_with_symbolic(path: Path) -> None:
    ours_text, _, ours = _exported(path)
    theirs_text, debug_id = _symbolic(path)
    assert ours_text.split()[3] == debug_id.replace("-", "").upper() + "0"
    dwarf = read_cfi(Document.open(str(path)).image)
    theirs = read_stack_cfi(theirs_text, dwarf.abi.name, load_address(Document.open(str(path)).elf))
    assert len(theirs)
    for diff in table_differences(ours, theirs):
        dwarf_row = dwarf.find(diff.start).row_for(diff.start)
        if isinstance(dwarf_row.cfa, Unexpressible):
            continue  # symbolic drops a CFA expression row, leaving the previous rule over the PLT entries
        # symbolic writes nothing for DW_CFA_restore of a register the CIE has no rule for (x29, x30 after
        # an AArch64 epilogue), so its previous rule stays in force; ours is DWARF's: unchanged.
        assert getattr(dwarf_row, diff.column).kind is Kind.SAME, diff
        assert same_rule(diff.left, getattr(dwarf_row, diff.column)), diff
        assert diff.right.saved_on_stack, diff


@pytest.mark.parametrize("name", ELF_FIXTURES)
def test_breakpad_export_agrees_with_symbolic(name: str) -> None:
    _agrees_with_symbolic(DATA / name)


# Programs built now ------------------------------------------------------------------

BUILDS = {
    "O0": ["-O0"],
    "O0-fp": ["-O0", "-fno-omit-frame-pointer"],
    "O1": ["-O1"],
    "O2": ["-O2", "-fomit-frame-pointer"],
    "O2-fp": ["-O2", "-fno-omit-frame-pointer"],
    "O3": ["-O3", "-funroll-loops"],
    "shared": ["-O2", "-fPIC", "-shared"],
    "no-pie": ["-O2", "-fno-pie", "-no-pie"],
}
PAC_RET = ["-O2", "-mbranch-protection=pac-ret+leaf"]
"""AArch64 only (gcc for x86-64 has no such option): built by the pac-ret tests, not `test_gcc_builds`."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """Build a source once per compiler and flags, for the tests that look at it."""
    cache: dict[tuple[str, str, str], Path] = {}

    def build(compiler: str, name: str, source: str) -> Path:
        key = (compiler, name, source)
        if key not in cache:
            gcc = gcc_with_sframe(compiler)
            out = tmp_path_factory.mktemp("dwarf") / f"{source}-{compiler}-{name}"
            flags = PAC_RET if name == "pac-ret" else BUILDS[name]
            subprocess.run([gcc, "-Wa,--gsframe", *flags, str(DATA / "src" / source), "-o", str(out)], check=True)
            cache[key] = out
        return cache[key]

    return build


@pytest.mark.parametrize("source", ["deep.c", "shapes.c"])
@pytest.mark.parametrize("compiler", ["gcc", "aarch64-linux-gnu-gcc"])
@pytest.mark.parametrize("build", BUILDS)
def test_gcc_builds(built, compiler: str, build: str, source: str) -> None:
    """SFrame agrees with .eh_frame, and so does its Breakpad export, but where the formats force a difference."""
    out = built(compiler, build, source)
    _, _, result = _compare(out)
    assert result.differences(explained=False) == [] and result.compared > 0
    _, problems, exported = _exported(out)
    assert problems == []
    for diff in table_differences(exported, read_cfi(Document.open(str(out)).image)):
        assert isinstance(diff.right, Unexpressible), diff


@pytest.mark.parametrize("source", ["deep.c", "shapes.c"])
@pytest.mark.parametrize("compiler", ["gcc", "aarch64-linux-gnu-gcc"])
@pytest.mark.parametrize("build", BUILDS)
def test_gcc_builds_against_symbolic(built, compiler: str, build: str, source: str) -> None:
    _agrees_with_symbolic(built(compiler, build, source))


def test_debug_frame_is_read(tmp_path: Path) -> None:
    """Without asynchronous unwind tables, gcc -g puts the CFI in .debug_frame: compared from there."""
    gcc = gcc_with_sframe("gcc")
    out = tmp_path / "deep-debug-frame"
    flags = ["-O2", "-g", "-fno-asynchronous-unwind-tables"]
    subprocess.run([gcc, "-Wa,--gsframe", *flags, str(DATA / "src" / "deep.c"), "-o", str(out)], check=True)
    _, _, result = _compare(out)
    assert {p.dwarf.section for p in result.pairs if p.name == "main"} == {".debug_frame"}
    assert result.differences(explained=False) == [] and result.compared > 0


def test_pac_ret_signing_agrees_and_exports_where_the_ra_is_saved(built) -> None:
    """pac-ret: SFrame's mangled-RA bit and DWARF's `DW_CFA_AARCH64_negate_ra_state` (which pyelftools
    passes over; sfview replays it) say the same rows are signed. The export writes the signed RA's
    place, as dump_syms does from DWARF, and says once that its value is signed. (symbolic is not
    compared here: for these functions it writes their INIT line alone.)"""
    out = built("aarch64-linux-gnu-gcc", "pac-ret", "shapes.c")
    doc, table, result = _compare(out)
    assert result.differences(explained=False) == [] and result.compared > 0
    signed = [row for func in table for row in func.rows if row.ra_signed]
    assert signed and all(row.ra.saved_on_stack for row in signed if row.ra.kind is Kind.VALUE)
    assert any(row.mangled_ra for func in doc.require_section().functions() for row in func.rows)
    _, problems, exported = _exported(out)
    assert len(problems) == 1 and "save a signed RA" in problems[0]
    for diff in table_differences(exported, read_cfi(Document.open(str(out)).image)):
        assert isinstance(diff.right, Unexpressible), diff


def test_a_row_signed_on_one_side_only_is_a_disagreement(built) -> None:
    out = built("aarch64-linux-gnu-gcc", "pac-ret", "shapes.c")
    doc, table, _ = _compare(out)
    func = next(func for func in table if any(row.ra_signed for row in func.rows))
    address = next(row.address for row in func.rows if row.ra_signed)
    _altered(table, func.start_address, lambda func: setattr(func.row_for(address), "ra_signed", False))
    result = compare(doc.require_section(), table, doc.function_name, doc.symbols.name_at)
    (_, diff), *rest = result.differences(explained=False)
    assert rest == [] and diff.column == "ra signing" and diff.start == address
    assert diff.sframe_row.mangled_ra and not diff.dwarf_row.ra_signed


def test_damaged_eh_frame_is_one_line(cli, tmp_path: Path) -> None:
    """pyelftools raises OverflowError on a huge CIE length: one line, exit 2, no traceback."""
    doc = Document.open(str(DATA / "shapes-x86_64-O2"))
    eh = doc.elf.get_section_by_name(".eh_frame")
    data = bytearray((DATA / "shapes-x86_64-O2").read_bytes())
    data[eh["sh_offset"] + 0x30 : eh["sh_offset"] + 0x58] = b"\xff" * 0x28
    damaged = tmp_path / "ehgarbage"
    damaged.write_bytes(bytes(data))
    result = cli("compare", str(damaged))
    assert result.code == 2 and "DWARF CFI cannot be decoded" in result.err and "Traceback" not in result.err


def test_compare_and_export_say_what_they_left_out(cli, tmp_path: Path) -> None:
    """An FDE that cannot be decoded is not silently dropped: both commands exit 2 and name it."""
    path = DATA / "shapes-x86_64-O2"
    doc = Document.open(str(path))
    section = doc.require_section()
    data = bytearray(path.read_bytes())
    data[doc.file_offset + section.function(1).info_offset] = 0xFF  # an undefined FRE type
    damaged = tmp_path / "sfgarbage"
    damaged.write_bytes(bytes(data))
    compared = cli("compare", str(damaged))
    assert compared.code == 2 and "function 1" in compared.err and "Traceback" not in compared.err
    exported = cli("export", "--breakpad", str(damaged))
    assert exported.code == 2
    assert "fdes[1] left out: its FDE cannot be decoded" in exported.err


def test_object_functions_are_paired_by_their_relocations(tmp_path: Path) -> None:
    """In a `.o`, a function with DWARF CFI alone (gas writes no SFrame FDE for `.cfi_escape`)
    between two others: each SFrame FDE is still compared with its own function's DWARF FDE
    (paired in order, every later pair was wrong and reported as a disagreement)."""
    gcc = gcc_with_sframe("gcc")
    source = tmp_path / "escape.c"
    source.write_text(
        "extern void use(void *);\n"
        "int first(int x) { char b[64]; use(b); return x + b[3]; }\n"
        '__asm__(".text\\n.globl esc\\n.type esc,@function\\nesc:\\n.cfi_startproc\\npushq %rbx\\n"\n'
        '        ".cfi_adjust_cfa_offset 8\\n.cfi_escape 0x10,0x03,0x02,0x77,0x00\\npopq %rbx\\n"\n'
        '        ".cfi_adjust_cfa_offset -8\\nret\\n.cfi_endproc\\n.size esc,.-esc\\n");\n'
        "int third(int x) { char b[128]; use(b); use(b + 1); return x - b[5]; }\n"
        "int fourth(int x) { return third(x) + 1; }\n"
    )
    out = tmp_path / "escape.o"
    subprocess.run(
        [gcc, "-Wa,--gsframe", "-O2", "-fno-toplevel-reorder", "-c", str(source), "-o", str(out)], check=True
    )
    _, _, result = _compare(out)
    assert result.differences(explained=False) == []
    assert sorted(pair.name for pair in result.pairs) == ["first", "fourth", "third"]
    (only,) = result.only
    assert only.side == "dwarf" and only.reason == "DWARF expression: SFrame cannot hold expressions"


def test_an_address_with_several_symbols_is_one_public_line_marked_m(monkeypatch: pytest.MonkeyPatch) -> None:
    from sfview.inputs.symbols import Symbol, SymbolTable

    doc = Document.open(str(DATA / "shapes-x86_64-O2"))
    main = next(sym for sym in doc.symbols.symbols if sym.name == "main")
    aliased = SymbolTable([*doc.symbols.symbols, Symbol("main_alias", main.address, main.size)], ".symtab")
    monkeypatch.setattr(type(doc), "symbols", property(lambda _: aliased))
    text, _ = symbol_file(doc)
    publics = [line for line in text.splitlines() if line.startswith("PUBLIC ")]
    assert f"PUBLIC m {main.address:x} 0 main" in publics
    assert not any("main_alias" in line for line in publics)
    assert sum(1 for line in publics if line.startswith("PUBLIC m ")) == 1


@pytest.mark.parametrize(
    "path",
    [DATA / name for name in ELF_FIXTURES if name != "shapes-x86_64-O2-stripped"]
    + [Path("/usr/lib/x86_64-linux-gnu/libc.so.6")],
    ids=lambda p: p.name,
)
def test_the_eh_frame_hdr_index_finds_what_the_whole_read_finds(path: Path) -> None:
    """An unwinder's FDE lookups through `.eh_frame_hdr` (one FDE parsed at a time) give, at the start,
    middle and last byte of every function, the very FDE and rows that reading `.eh_frame` whole gives."""
    from sfview.dwarf.tables import EhFrameIndex
    from sfview.inputs.elf.image import ElfImage

    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    with path.open("rb") as f:
        elf = ElfImage.of(f)
        index, whole = EhFrameIndex(elf), read_cfi(elf)
        assert index.usable
        checked = 0
        for func in whole:
            if func.section != ".eh_frame" or not func.size:
                continue
            for pc in (func.start_address, func.start_address + func.size // 2, func.end_address - 1):
                found = index.find(pc)
                assert found is not None and (found.start_address, found.fde_offset) == (
                    func.start_address,
                    func.fde_offset,
                )
                assert found.rows == func.rows
                checked += 1
        assert checked > 10
        assert index.find(min(f.start_address for f in whole) - 1) is None


def test_compare_by_shapes_on_a_generated_program(tmp_path: Path) -> None:
    """`bench/make_big.py`'s program, 300 functions of its many frame shapes (most shapes repeated, sizes
    all different): `compare_outline`, which compares a pair of shapes once and counts the others from it,
    says what `compare` says pair by pair (`_compare` checks)."""
    spec = importlib.util.spec_from_file_location("make_big", DATA.parent.parent / "bench" / "make_big.py")
    assert spec is not None and spec.loader is not None
    make_big = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_big)
    program = make_big.build(300, tmp_path / "big", verbose=False)
    _, _, result = _compare(program)
    assert len(result.pairs) == 300 + 3 and result.differences(explained=False) == []
