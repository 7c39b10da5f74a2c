"""`--profile kernel-arm64-module` against the arm64 series' own module path (Dylan Hatch's v6).

tests/data/consumers/kernel-arm64-module/corpus.json holds sections (binutils 2.47 AArch64 programs as
written, with the sorted flag cleared, and cleared with their FDEs shuffled; the v14 crafted sections and
ones for the sort; sections whose functions share starts; random sections and mutants) with what
`sframe_module_init` and `sframe_find_kernel` (dylanbhatch/linux 3231d5c5 with the v6 patches 5-8, lib/sort.c's
`sort()`) said of each, compiled in user space by scripts/kernel_arm64_module_corpus.py, each section mapped
at its recorded address. The profile must say the same of every one, at every scanned PC.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_process
from kernel_oracle import load_script, says_what_was_recorded
from toolchains import toolchain

from sfview.consumers.kernel_arm64_module import (
    IN_MODULE,
    NAME,
    NOT_LOADED,
    UNRELOCATED,
    judge,
    judge_document,
)
from sfview.consumers.verdicts import profiles
from sfview.document import Document

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "tests" / "data" / "consumers" / NAME
CORPUS = json.loads((FOLDER / "corpus.json").read_text())["sections"]
BY_NAME = {e["name"]: e for e in CORPUS}

corpus_script = load_script("kernel_arm64_module_corpus")


@pytest.mark.parametrize("entry", CORPUS, ids=[f"{i}-{e['name']}" for i, e in enumerate(CORPUS)])
def test_profile_says_what_the_module_path_said(entry: dict) -> None:
    """Registration's errno, and at every scanned PC the same errno, crash or frame."""
    says_what_was_recorded(corpus_script, corpus_script.base, judge, entry)


def test_corpus_covers_every_outcome() -> None:
    """Refusals of both errors, acceptances, failing lookups; every program taken however its FDEs lie,
    with the same lookups; sections whose verdict the order of equal starts decides."""
    assert {e["kernel"]["register"] for e in CORPUS} == {0, -22, -14}
    assert {-22, "crash"} <= {r[2] for e in CORPUS for r in e["kernel"]["lookups"]}
    programs = [n for n in BY_NAME if n.endswith("-aarch64-sid")]
    assert len(programs) == 4
    for name in programs:
        recorded = [BY_NAME[name + suffix]["kernel"] for suffix in ("", "+flag-clear", "+unsorted")]
        assert recorded[0]["register"] == 0 and recorded[0]["lookups"]
        assert recorded[1] == recorded[0] == recorded[2], name
        assert BY_NAME[name + "+unsorted"]["section"] != BY_NAME[name + "+flag-clear"]["section"]
    assert sum(n.startswith("ties/order-") for n in BY_NAME) >= 10


@pytest.mark.parametrize(
    ("name", "register"),
    [
        ("crafted/unsorted-flag-clear", 0),
        ("crafted/overlapping-unsorted", 0),
        ("crafted/unsigned-order-past-2^63", 0),
        ("crafted/unsorted-flag-set", -14),
        ("crafted/equal-starts-flag-clear", -14),
    ],
)
def test_the_sort_and_the_flag(name: str, register: int) -> None:
    """A clear flag: sorted, then validated (equal starts still refused); a set flag on an unsorted table:
    believed, and refused by the validation, as in v14."""
    entry = BY_NAME[name]
    assert entry["kernel"]["register"] == register
    verdict = judge(bytes.fromhex(entry["section"]), entry["address"], tuple(entry["text"]))
    assert verdict.accepted == (register == 0)
    if register:
        assert verdict.rule == "sframe_validate_section: FDE not sorted (func_addr <= prev_ip)"
    else:
        assert any(n.startswith("SFRAME_F_FDE_SORTED is clear: sframe_sort_fdes sorted") for n in verdict.notes)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """shapes.c built for AArch64 by binutils 2.47."""
    path = tmp_path_factory.mktemp("arm64") / "shapes-aarch64"
    toolchain("2.47", "aarch64").compile("-O2", "-o", path, ROOT / "tests" / "data" / "src" / "shapes.c")
    return path


def test_check_on_a_real_aarch64_program(program: Path) -> None:
    """`check --profile kernel-arm64-module`: a 2.47 AArch64 program's section taken whole, read as arm64
    reads it; its section refused when its text range says the functions lie elsewhere."""
    out = json.loads(run_process("check", "--json", "--profile", NAME, str(program)).stdout)[0]["profiles"][NAME]
    assert (out["accepted"], out["lookups"]) == (True, [])
    assert IN_MODULE in out["notes"]
    assert any(n.startswith("read by an arm64 kernel (little-endian, SFRAME_REG_SP = 31") for n in out["notes"])
    doc = Document.open(str(program), None)
    assert judge_document(doc).accepted
    outside = judge(doc.data, doc.address, (0, 1))
    assert (outside.accepted, outside.error, outside.notes) == (False, "-EINVAL", [NOT_LOADED])


def test_an_object_file_is_said_to_be_judged_before_its_relocations(tmp_path: Path) -> None:
    """A module is a relocatable object: the loader applies its start fields' relocations before
    `sframe_module_init` reads them, which sfview does not; the verdict says so."""
    path = tmp_path / "shapes.o"
    toolchain("2.47", "aarch64").compile("-O2", "-c", "-o", path, ROOT / "tests" / "data" / "src" / "shapes.c")
    assert UNRELOCATED in judge_document(Document.open(str(path), None)).notes


def test_a_shuffled_section_checked_as_a_raw_file(tmp_path: Path) -> None:
    """A raw section whose flag is clear and FDEs shuffled: taken, and the sort said."""
    entry = BY_NAME["shapes-aarch64-sid+unsorted"]
    path = tmp_path / "module.sframe"
    path.write_bytes(bytes.fromhex(entry["section"]))
    lines = run_process("check", "--profile", NAME, "--profile", "kernel-v14", str(path)).stdout.splitlines()
    assert any(f"{NAME}: accepted" in line for line in lines), lines
    assert any("sframe_sort_fdes sorted the 7 FDEs in place" in line for line in lines), lines
    assert any("kernel-v14: refused: -EINVAL" in line and "SFRAME_F_FDE_SORTED" in line for line in lines), lines


def test_the_title_names_the_series() -> None:
    title = profiles()[NAME].title
    assert "v6" in title and "20260519064950.493949-7-dylanbhatch@google.com" in title and "3231d5c5" in title
    assert profiles()["kernel"].title != title
