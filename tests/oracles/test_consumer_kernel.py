"""`--profile kernel` against the Linux kernel's own SFrame reader.

tests/data/consumers/kernel/corpus.json holds sections (real ones from binutils 2.40 to 2.47 on
x86-64, AArch64 and s390x, one for each class the kernel's code treats apart, and mutants) with
what the kernel's `kernel/unwind/sframe.c` (v14 series, validation on) said of each, compiled in
user space by scripts/kernel_corpus.py: registration's return and every failing lookup range.
The profile must say the same of every one.
"""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import pytest
from conftest import run_process
from kernel_oracle import load_script, says_what_was_recorded
from rich.console import Console
from textual.widgets import Static
from toolchains import toolchain

from sfview.consumers import PROFILES
from sfview.consumers.kernel import (
    CRASH,
    EFAULT,
    EINVAL,
    FALLBACK,
    HEADER_END,
    UNREGISTERED,
    Arch,
    Refused,
    judge,
    judge_document,
    lookups,
    register_section,
    text_range,
)
from sfview.consumers.verdicts import profiles
from sfview.document import Document

ROOT = Path(__file__).resolve().parents[2]
CORPUS = json.loads((ROOT / "tests" / "data" / "consumers" / "kernel" / "corpus.json").read_text())["sections"]
ERRNO = {-22: EINVAL, -14: EFAULT}


corpus_script = load_script("kernel_corpus")


@pytest.mark.parametrize("entry", CORPUS, ids=[f"{i}-{e['name']}" for i, e in enumerate(CORPUS)])
def test_profile_says_what_the_kernel_said(entry: dict) -> None:
    says_what_was_recorded(corpus_script, corpus_script, judge, entry)


def test_corpus_covers_every_outcome() -> None:
    """The corpus has refusals of both kinds, clean acceptances, and accepted sections whose lookups fail
    with -EINVAL, -EFAULT-free, and by a division by zero."""
    registers = {e["kernel"]["register"] for e in CORPUS}
    lookups = {r[2] for e in CORPUS for r in e["kernel"]["lookups"]}
    assert registers == {0, -22, -14}
    assert {-22, "crash"} <= lookups


def _named(name: str) -> dict:
    return next(e for e in CORPUS if e["name"] == f"crafted/{name}")


def _verdict(name: str):
    entry = _named(name)
    return judge(bytes.fromhex(entry["section"]), entry["address"], tuple(entry["text"]))


@pytest.mark.parametrize(
    "name",
    [
        "aarch64-cfa-only-no-fixed-ra",
        "overlapping-functions",
        "unknown-flag-bits",
        "unknown-abi",
        "mangled-ra-on-amd64",
        "flex-reserved-bits",
        "flex-unknown-register",
        "row-at-function-end",
        "flex-5-words-padding",
    ],
)
def test_what_the_kernel_lets_pass(name: str) -> None:
    """Format errors or oddities the kernel's code never looks at: it registers the section."""
    assert _named(name)["kernel"]["register"] == 0
    assert _verdict(name).accepted


@pytest.mark.parametrize(
    ("name", "error", "rule"),
    [
        ("row-past-function-end", EFAULT, "__read_fre: ip_off > func_size"),
        ("flex-1-word", EFAULT, "__read_flex_fde_fre_datawords: dataword_count < 2"),
        ("flex-3-words-ra-ctl", EFAULT, "__read_flex_fde_fre_datawords: data words left over"),
        # A lone RA padding word is never read (a pair is wanted): left over too.
        ("flex-3-words-padding", EFAULT, "__read_flex_fde_fre_datawords: data words left over"),
        ("flex-5-words-ra-ctl", EFAULT, "__read_flex_fde_fre_datawords: data words left over"),
        ("zero-size-function-rows", EFAULT, "__read_fre: ip_off > func_size"),
        ("row-past-fre-len-inside-section", EFAULT, "__read_fre: data words past fres_end"),
        ("unsorted-fdes", EFAULT, "sframe_validate_section: FDE not sorted (func_addr <= prev_ip)"),
        ("aux-header", EINVAL, "sframe_read_header: auxhdr_len != 0"),
    ],
)
def test_what_the_kernel_refuses(name: str, error: str, rule: str) -> None:
    assert ERRNO[_named(name)["kernel"]["register"]] == error
    verdict = _verdict(name)
    assert (verdict.accepted, verdict.error, verdict.rule) == (False, error, rule)


@pytest.mark.parametrize(
    ("name", "error", "rule"),
    [
        ("flex-cfa-reg-p-clear", EINVAL, "sframe_init_cfa_rule_data: CFA control word reg_p clear"),
        ("pcmask-rep-size-0", CRASH, "__find_fre: ip_off %= rep_size divides by zero"),
        ("row-without-words", EINVAL, "__read_fre_datawords: no data words (outermost), CFA reg_p clear"),
        ("zero-size-in-bigger", EINVAL, "__find_fde: ip >= func_addr + func_size (a gap)"),
    ],
)
def test_accepted_but_lookups_fail(name: str, error: str, rule: str) -> None:
    """Registered, and then some lookups fail (or divide by zero): the ranges are the kernel's."""
    entry = _named(name)
    assert entry["kernel"]["register"] == 0
    kernel_errors = {ERRNO.get(r[2], r[2]) for r in entry["kernel"]["lookups"]}
    assert error in kernel_errors
    verdict = _verdict(name)
    assert verdict.accepted
    assert (error, rule) in {(f.error, f.rule) for f in verdict.lookups}


def test_fde_types_past_flexible_read_shared_rows_as_one_table() -> None:
    """`crafted/fde-types-mixed`: FDE types 1 and 18 (the kernel's four bits: 2) each alone, and four pairs
    (2 and 5, 15 and 3, 7 and 9, 0 and 11) whose second reads the first's rows from its third on. The
    kernel's own code took the section and said where each lookup fails (the corpus entry, held at every PC
    by `test_profile_says_what_the_kernel_said`): the pairs fail everywhere, as rows without data words;
    and the profile reads the shared rows of each pair past flexible once, the second's first row the node
    of the first's third (one table for types 2 to 15), those of the pair of types 0 and 11 twice."""
    entry = _named("fde-types-mixed")
    data = bytes.fromhex(entry["section"])
    registered = register_section(data, entry["address"], tuple(entry["text"]))
    assert not isinstance(registered, Refused)
    functions = registered.functions
    count = len(functions)
    attributes = [
        HEADER_END + 16 * count + struct.unpack_from("<I", data, HEADER_END + 16 * i + 12)[0] for i in range(count)
    ]
    assert [data[at + 3] for at in attributes] == [0, 1, 2, 5, 15, 3, 7, 9, 0, 11, 0x12]
    failing = {(start, end) for start, end, error in entry["kernel"]["lookups"] if error == -22}
    assert {(functions[i].address, functions[i].address + functions[i].size) for i in range(2, count)} == failing
    for first, second in ((2, 3), (4, 5), (6, 7), (8, 9)):
        shared = functions[first].rows._rows
        assert functions[second].rows._rows is shared
        third = shared.ancestor(functions[first].rows._first, 2)
        assert (functions[second].rows._first == third) == (first != 8)


def test_registered_as_a_profile() -> None:
    profile = PROFILES["kernel-v14"]
    assert "v14" in profile.title
    assert profile.judge(bytes.fromhex(_named("aux-header")["section"]), 0) == judge(
        bytes.fromhex(_named("aux-header")["section"]), 0, name="kernel-v14"
    )


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.sframe"
    path.write_bytes(bytes.fromhex(_named(name)["section"]))
    return path


def test_check_prints_the_verdict(tmp_path: Path) -> None:
    """`check --profile kernel`: the format's problems with their own severities, then the kernel's verdict."""
    crash = _write(tmp_path, "pcmask-rep-size-0")
    result = run_process("check", "--profile", "kernel-v14", str(crash))
    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert ": error pcmask-rep-size-zero: " in out[0], "the format's own problem, apart"
    assert out[-1] == f"{crash}: kernel-v14:   {MACHINE_NOTE}"
    assert out[-2] == (
        f"{crash}: kernel-v14: accepted, but lookups at 0x1000-0x1020 crash the consumer "
        "(__find_fre: ip_off %= rep_size divides by zero)"
    )
    gap = _write(tmp_path, "zero-size-in-bigger")
    assert run_process("check", "--profile", "kernel-v14", str(gap)).stdout.splitlines()[-3:] == [
        f"{gap}: kernel-v14: accepted, but lookups at 0x1010-0x1040 fail with -EINVAL "
        "(__find_fde: ip >= func_addr + func_size (a gap))",
        f"{gap}: kernel-v14:   {MACHINE_NOTE}",
        f"{gap}: kernel-v14:   {FALLBACK}",
    ]
    past = _write(tmp_path, "row-past-function-end")
    assert run_process("check", "--profile", "kernel-v14", str(past)).stdout.splitlines()[-2:] == [
        f"{past}: kernel-v14: refused: -EFAULT at section offset 0x34: __read_fre: ip_off > func_size",
        f"{past}: kernel-v14:   {UNREGISTERED}",
    ]
    end = _write(tmp_path, "row-at-function-end")
    result = run_process("check", "--profile", "kernel-v14", str(end))
    assert result.stdout.splitlines()[-2] == f"{end}: kernel-v14: accepted"


MACHINE_NOTE = (
    "read by an x86_64 kernel (little-endian, SFRAME_REG_SP = 7 rsp, SFRAME_REG_FP = 6 rbp): the machine "
    "assumed from the ABI byte (3); --arch names another"
)


def test_arch_names_the_machine(tmp_path: Path) -> None:
    """The kernel never reads the ABI byte: `--arch` says whose kernel reads the section, in its byte order
    and with its SP/FP numbers; without it, the ABI byte's machine, said as an assumption."""
    path = _write(tmp_path, "aarch64-cfa-only-no-fixed-ra")
    default = run_process("check", "--profile", "kernel-v14", str(path)).stdout.splitlines()
    assert (
        f"{path}: kernel-v14:   read by an arm64 kernel (little-endian, SFRAME_REG_SP = 31 sp, SFRAME_REG_FP = 29 x29)"
        ": the machine assumed from the ABI byte (2); --arch names another" in default
    )
    x86 = run_process("check", "--profile", "kernel-v14", "--arch", "x86_64", str(path)).stdout.splitlines()
    assert (
        f"{path}: kernel-v14:   read by an x86_64 kernel (little-endian, SFRAME_REG_SP = 7 rsp, SFRAME_REG_FP = 6 "
        "rbp): as --arch says" in x86
    )
    # The section's rows give the CFA from the SP or the FP: the x86 kernel's numbers, whatever the ABI byte.
    data = bytes.fromhex(_named("aarch64-cfa-only-no-fixed-ra")["section"])
    for arch, (sp, fp) in ((Arch.X86_64, (7, 6)), (Arch.ARM64, (31, 29))):
        registered = register_section(data, 0, None, arch)
        assert registered.regs == (sp, fp)
        frames = {f.rule for f in lookups(registered) if f.error is None}
        assert frames and all(rule.startswith(("cfa=sp", "cfa=fp")) for rule in frames)
    big = run_process("check", "--profile", "kernel-v14", "--arch", "s390x", str(path)).stdout.splitlines()
    assert (
        f"{path}: kernel-v14: refused: -EINVAL at section offset 0x0: "
        "sframe_read_header: preamble.magic != SFRAME_MAGIC" in big
    ), "a big-endian kernel reads the magic swapped"


def test_check_json_gives_each_profile(tmp_path: Path) -> None:
    """`check --json`: each profile's accepted, error (or `crash`) and failing lookups, for CI to gate on."""
    crash, refused, fine = (_write(tmp_path, n) for n in ("pcmask-rep-size-0", "aux-header", "row-at-function-end"))
    profiles_asked = ("--profile", "kernel-v14", "--profile", "libsframe")
    result = run_process("check", "--json", *profiles_asked, str(crash), str(refused))
    reports = json.loads(result.stdout)
    first = reports[0]["profiles"]["kernel-v14"]
    assert (first["accepted"], first["error"]) == (True, "crash")
    assert first["lookups"] == [
        {
            "start": 0x1000,
            "end": 0x1020,
            "error": "crash",
            "rule": "__find_fre: ip_off %= rep_size divides by zero",
            "function": 0,
        }
    ]
    second = reports[1]["profiles"]["kernel-v14"]
    assert (second["accepted"], second["error"], second["lookups"]) == (False, "-EINVAL", [])
    assert second["rule"] == "sframe_read_header: auxhdr_len != 0"
    libsframe = reports[0]["profiles"]["libsframe-2.47"]
    assert (libsframe["accepted"], libsframe["error"]) == (True, "crash"), "libsframe 2.47 divides by rep_size too"
    clean = json.loads(run_process("check", "--json", "--profile", "kernel-v14", str(fine)).stdout)[0]["profiles"]
    assert clean["kernel-v14"] == {
        "consumer": "kernel-v14",
        "accepted": True,
        "error": None,
        "rule": None,
        "section_offset": None,
        "lookups": [],
        "notes": [MACHINE_NOTE],
    }


def test_an_elf_file_registers_its_executable_segment(tmp_path: Path) -> None:
    """From an ELF file the text is the executable PT_LOAD, as the ELF loader registers it: binutils 2.47's
    AArch64 and x86-64 programs are taken whole."""
    for target in ("x86_64", "aarch64"):
        tc = toolchain("2.47", target)
        program = tmp_path / f"shapes-{target}"
        tc.compile("-O2", "-o", program, ROOT / "tests" / "data" / "src" / "shapes.c")
        doc = Document.open(str(program), None)
        text = text_range(doc)
        assert text is not None
        verdict = judge_document(doc)
        assert (verdict.accepted, verdict.lookups) == (True, []), verdict
        outside = judge(doc.data, doc.address, (text[1], text[1] + 1))
        assert (outside.error, outside.rule) == (EINVAL, "__read_fde: func_addr outside the text")


async def test_the_problems_tab_cycles_through_consumers(tmp_path: Path) -> None:
    """`v`: the format's checks, then the kernel's verdict on top of the Problems tab, its failing rows
    marked in the FRE table, its rule in the field detail; `v` again back to the format."""
    from sfview.app.app import SfviewApp

    path = tmp_path / "gap.sframe"
    data = bytes.fromhex(_named("flex-cfa-reg-p-clear")["section"])
    path.write_bytes(data)
    app = SfviewApp(Document.open(str(path), 0))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.explorer
        await pilot.pause()  # the consumers are named once the first screen is on
        assert str(screen.consumer_line.render()).startswith("format: the format's own checks  (v: kernel")
        await pilot.press("v")
        assert screen.tabs.active == "problems-tab"
        for _ in range(600):  # the verdict is worked out in a thread (slower on a busy machine)
            if "kernel" in screen.state.verdicts:
                break
            await pilot.pause(0.05)
        assert "kernel" in screen.state.verdicts, "no kernel verdict after 30 s"
        line = str(screen.consumer_line.render())
        assert line.startswith("kernel: accepted, but lookups at 0x1004-0x1020 fail with -EINVAL")
        assert "sframe_init_cfa_rule_data: CFA control word reg_p clear" in line
        assert screen.consumer_line.has_class("-bad")
        table = screen.fre_table
        assert "kernel" in [c.title for c in table.columns]
        at = [c.title for c in table.columns].index("kernel")
        assert [table.row_cells(i)[at] for i in range(table.row_count)] == ["ok", "fails all"]
        await pilot.press("1")
        table.focus()
        await pilot.press("down")
        await pilot.press("2")
        await pilot.pause()
        assert screen.state.selected is not None and screen.state.selected.fre == 1
        console = Console(width=120, file=io.StringIO(), record=True)
        console.print(screen.detail.query_one("#detail-text", Static).content)
        text = console.export_text()
        rule = "sframe_init_cfa_rule_data: CFA control word reg_p clear (-EINVAL)"
        assert f"kernel: fails at 0x1004..0x101f: {rule}" in text
        cycle = []
        for _ in range(len(profiles()) + 1):
            await pilot.press("v")
            cycle.append(screen.state.consumer)
            if screen.state.consumer == "format":
                break
        assert cycle == [
            "kernel-arm64-module",
            "kernel-v14",
            "libsframe-2.40",
            "libsframe-2.44",
            "libsframe-2.47",
            "glibc-2.43",
            "format",
        ]
        assert "kernel" not in [c.title for c in table.columns]
        assert str(screen.consumer_line.render()).startswith("format:")


def test_v_is_bound_once_and_in_the_help() -> None:
    from sfview.app.explorer.screen import ExplorerScreen
    from sfview.app.screens.help import KEYS

    keys = [b.key for b in ExplorerScreen.BINDINGS]
    assert keys.count("v") == 1
    assert any(key == "`v`" and "Problems" in what for key, what in KEYS)


@pytest.mark.parametrize(
    ("name", "frame"),
    [
        # AArch64, no RA offset fixed, a row with the CFA alone: the RA is left where it is (in x30).
        ("aarch64-cfa-only-no-fixed-ra", "cfa=sp+16 ra=retain fp=retain"),
        # AMD64 flexible row with the RA padding word: the header's fixed offset, CFA - 8.
        ("flex-5-words-padding", "cfa=sp+16 ra=*(cfa-8) fp=*(cfa-16)"),
        ("fixed-fp-and-ra", "cfa=sp+8 ra=*(cfa-8) fp=*(cfa-16)"),
    ],
)
def test_the_frame_a_lookup_gives(name: str, frame: str) -> None:
    """What a successful lookup gives (CFA, RA, FP rules), as the kernel's code gave it at the first PC."""
    entry = _named(name)
    first = entry["kernel"]["lookups"][0]
    assert first[2] == frame
    case = {"hex": entry["section"], "address": entry["address"], "text": entry["text"]}
    assert corpus_script.profile_result(case)["lookups"][0][2] == frame


def test_kernel_v14_is_named_by_its_revision(tmp_path: Path) -> None:
    """`kernel-v14` is the revision this corpus was judged by; `kernel` is the newest revision, which refuses
    this section (a function of size 0 with a row: `fres_num > func_size`, as that revision's code said)."""
    path = _write(tmp_path, "zero-size-in-bigger")
    out = run_process("check", "--json", "--profile", "kernel-v14", "--profile", "kernel", str(path))
    both = json.loads(out.stdout)[0]["profiles"]
    assert both["kernel-v14"]["consumer"] == "kernel-v14"
    assert both["kernel-v14"]["accepted"]
    assert {f["error"] for f in both["kernel-v14"]["lookups"]} == {"-EINVAL"}
    assert (both["kernel"]["accepted"], both["kernel"]["rule"]) == (False, "__read_fde: fres_num > func_size")
    assert "3231d5c5" in profiles()["kernel-v14"].title
