"""`--profile kernel` against the Linux kernel's own SFrame reader.

tests/data/consumers/kernel/corpus.json holds sections (real ones from binutils 2.40 to 2.47 on
x86-64, AArch64 and s390x, one for each class the kernel's code treats apart, and mutants) with
what the kernel's `kernel/unwind/sframe.c` (v14 series, validation on) said of each, compiled in
user space by scripts/kernel_corpus.py: registration's return and every failing lookup range.
The profile must say the same of every one.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from sfview.consumers import PROFILES
from sfview.consumers.kernel import CRASH, EFAULT, EINVAL, judge

ROOT = Path(__file__).resolve().parent.parent
CORPUS = json.loads((ROOT / "tests" / "data" / "consumers" / "kernel" / "corpus.json").read_text())["sections"]
ERRNO = {-22: EINVAL, -14: EFAULT}


def _script():
    spec = importlib.util.spec_from_file_location("kernel_corpus", ROOT / "scripts" / "kernel_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus_script = _script()


@pytest.mark.parametrize("entry", CORPUS, ids=[f"{i}-{e['name']}" for i, e in enumerate(CORPUS)])
def test_profile_says_what_the_kernel_said(entry: dict) -> None:
    case = {"hex": entry["section"], "address": entry["address"], "text": entry["text"]}
    ours = corpus_script.profile_result(case)
    kernel = entry["kernel"]
    assert ours["register"] == kernel["register"], ours.get("rule")
    assert [r[:3] for r in ours["lookups"]] == kernel["lookups"]


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


def test_registered_as_a_profile() -> None:
    profile = PROFILES["kernel"]
    assert "v14" in profile.title
    assert profile.judge is judge
