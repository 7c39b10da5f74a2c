"""`--profile kernel-5ce6138798d7` (and `kernel`, the newest) against that revision's own SFrame reader.

tests/data/consumers/kernel-5ce6138798d7/corpus.json holds sections (binutils 2.47 programs for x86-64,
AArch64 and s390x, 2.44 ones for x86-64 and AArch64, the fixtures of every release, sections crafted one per
rule, mutants of them and tests/handmade.py's) with what linux-mm 5ce6138798d7's `kernel/unwind/sframe.c`
said of each, compiled in user space by scripts/kernel_linux_mm_corpus.py: registration's return and the
outcome of every lookup over each function's first bytes. The profile must say the same of every one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_process
from kernel_oracle import load_script, says_what_was_recorded

from sfview.consumers.kernel_linux_mm import ENOENT, NAME, judge, lookups, register_section
from sfview.consumers.verdicts import profiles

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "tests" / "data" / "consumers" / "kernel-5ce6138798d7"
CORPUS = json.loads((FOLDER / "corpus.json").read_text())["sections"]


corpus_script = load_script("kernel_linux_mm_corpus")


@pytest.mark.parametrize("entry", CORPUS, ids=[f"{i}-{e['name']}" for i, e in enumerate(CORPUS)])
def test_profile_says_what_the_revision_said(entry: dict) -> None:
    """Registration's errno, and at every scanned PC the same errno or the same frame."""
    says_what_was_recorded(corpus_script, corpus_script.base, judge, entry)


def test_corpus_covers_every_outcome() -> None:
    """Refusals of both errors, acceptances, lookups failing with -EINVAL and -ENOENT, outermost frames,
    real programs of both versions binutils writes (the 2.44 ones refused: version 2)."""
    assert {e["kernel"]["register"] for e in CORPUS} == {0, -22, -14}
    outcomes = {r[2] for e in CORPUS for r in e["kernel"]["lookups"]}
    assert {-22, -2} <= outcomes
    assert any(isinstance(o, str) and o.endswith(" outermost") for o in outcomes)
    real = {e["name"]: e["kernel"]["register"] for e in CORPUS if e["name"].endswith(("-sid", "-trixie"))}
    assert {n for n, r in real.items() if r == 0} == {n for n in real if n.endswith("-sid")}
    assert {n for n in real if n.endswith("-trixie")}


def _named(name: str) -> dict:
    return next(e for e in CORPUS if e["name"] == f"crafted/{name}")


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("pcmask-rep-size-0", "__read_fde: PCMASK with rep_size 0"),
        ("zero-size-function-rows", "__read_fde: fres_num > func_size"),
        ("row-at-function-end", "__read_fre: ip_off >= func_size"),
        ("pcmask-row-at-rep-size", "__read_fre: ip_off >= rep_size (PCMASK)"),
        ("unsorted-fdes", "sframe_validate_section: FDE not sorted (ip <= prev_ip)"),
        ("flex-3-words-padding", "__read_flex_fde_fre_datawords: data words left over"),
        ("default-leftover-word", "__read_default_fre_datawords: data words left over"),
        ("end-past-text", "__read_fde: func_start < text_start || func_end > text_end"),
    ],
)
def test_what_the_revision_refuses(name: str, rule: str) -> None:
    """Rules this revision adds or makes -EINVAL (v14 took these sections, or refused them with -EFAULT)."""
    entry = _named(name)
    verdict = judge(bytes.fromhex(entry["section"]), entry["address"], tuple(entry["text"]))
    assert (verdict.accepted, verdict.rule) == (False, rule)
    assert corpus_script.ERRNO[verdict.error] == entry["kernel"]["register"] != 0


@pytest.mark.parametrize(
    ("name", "error", "rule"),
    [
        ("flex-ra-reserved-bit", "-EINVAL", "sframe_init_rule_data: RA control word reserved bit set"),
        ("flex-fp-reserved-bit", "-EINVAL", "sframe_init_rule_data: FP control word reserved bit set"),
        ("flex-reserved-bits", "-EINVAL", "sframe_init_cfa_rule_data: CFA control word reserved bit set"),
        ("overlapping-functions", ENOENT, "__find_fde: ip >= func_addr + func_size (a gap)"),
        ("end-at-2^64", ENOENT, "__find_fde: ip >= func_addr + func_size (a gap)"),
    ],
)
def test_accepted_but_lookups_fail(name: str, error: str, rule: str) -> None:
    """Registered, and then lookups fail: a set reserved bit (-EINVAL, the section removed), a PC past its
    function's end (-ENOENT, frame pointers for that frame)."""
    entry = _named(name)
    assert entry["kernel"]["register"] == 0
    assert corpus_script.ERRNO[error] in {r[2] for r in entry["kernel"]["lookups"]}
    verdict = judge(bytes.fromhex(entry["section"]), entry["address"], tuple(entry["text"]))
    assert verdict.accepted and (error, rule) in {(f.error, f.rule) for f in verdict.lookups}


def test_a_row_without_words_is_an_outermost_frame() -> None:
    entry = _named("row-without-words")
    assert entry["kernel"]["lookups"][-1][2] == "cfa=sp+0 ra=retain fp=retain outermost"
    registered = register_section(bytes.fromhex(entry["section"]))
    assert [f.error for f in lookups(registered)] == [None, None]


def test_kernel_is_the_newest_revision(tmp_path: Path) -> None:
    """`kernel` names this revision, `kernel-v14` the one before; the same section, two verdicts."""
    assert "linux-mm/linux-mm 5ce6138798d7" in profiles()["kernel"].title
    assert profiles()["kernel"].title == profiles()[NAME].title
    path = tmp_path / "pcmask.sframe"
    path.write_bytes(bytes.fromhex(_named("pcmask-rep-size-0")["section"]))
    out = run_process("check", "--json", "--profile", "kernel-v14", "--profile", NAME, "--profile", "kernel", str(path))
    verdicts = json.loads(out.stdout)[0]["profiles"]
    assert (verdicts["kernel-v14"]["accepted"], verdicts["kernel-v14"]["error"]) == (True, "crash")
    assert (verdicts[NAME]["accepted"], verdicts[NAME]["error"]) == (False, "-EINVAL")
    assert {k: v for k, v in verdicts["kernel"].items() if k != "consumer"} == {
        k: v for k, v in verdicts[NAME].items() if k != "consumer"
    }


def test_check_says_fallback_and_removal(tmp_path: Path) -> None:
    """-ENOENT: frame pointers for that frame; any other lookup error: the section removed."""
    path = tmp_path / "overlap.sframe"
    path.write_bytes(bytes.fromhex(_named("overlapping-functions")["section"]))
    lines = run_process("check", "--profile", "kernel", str(path)).stdout.splitlines()
    assert any("fail with -ENOENT" in line for line in lines)
    assert lines[-1].endswith("the unwinder falls back to frame pointers for that frame")
    reserved = tmp_path / "reserved.sframe"
    reserved.write_bytes(bytes.fromhex(_named("flex-ra-reserved-bit")["section"]))
    lines = run_process("check", "--profile", "kernel", str(reserved)).stdout.splitlines()
    assert "removes the section (sframe_remove_section)" in lines[-1]
