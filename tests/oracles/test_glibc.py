"""The glibc-2.43 profile says what glibc's own backtrace() SFrame path does, proven against glibc's code.

glibc 2.43's sframe-read.c and sframe.c (Debian's glibc-source) compiled around
tests/glibc_harness.c (`glibc_oracle.py`) run on every fixture section (SFrame
versions 1 to 3 from binutils 2.40 to 2.46), on programs built here by binutils
2.44 (version 2) and 2.47 (version 3), on handmade version 2 sections and on
mutants of the version 2 ones; for each, whether `__sframe_decode` takes it and,
at every PC of every function and a few on either side, what the step does (the
frame it computes, the row and getters it read, the fallback, or a read past the
section) must be the model's, and the verdict's failing ranges must say exactly
which PCs fall back and which crash.
"""

from __future__ import annotations

import json
import random
import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, ELF_FIXTURES, SECTIONS, Built, load_section_fixture, run_process
from glibc_oracle import Answer, Glibc, harness, kind, predict
from glibc_oracle import every_pc as pcs_of
from handmade import (
    at_one_start,
    long_function,
    mutate,
    overlapping,
    past_the_pool,
    pcmask_gigabytes,
    row_heavy,
    to_big_endian,
    v2_section,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from libsframe_oracle import judge_spans

from sfview.consumers import glibc as model
from sfview.consumers.verdicts import profiles
from sfview.document import Document

PROFILE = profiles()["glibc-2.43"]
CORPUS = json.loads((DATA / "consumers" / "glibc" / "corpus.json").read_text())["sections"]
"""Sections with what glibc's own code said of them (bench/glibc_agreement.py --write): real programs built
by binutils 2.40, 2.44 and 2.47, the fixtures, and mutants of the version 2 ones."""
AGREE: Counter[str] = Counter()
"""Sections and PCs compared, by what glibc did (printed by test_tally with -s)."""


def _pcmask_v2() -> bytes:
    """A version 2 PCMASK function (a PLT's shape: rep_size 16, rows at 0 and 6) beside a plain one, PCREL."""
    rows = bytes([0, 0x03, 8, 6, 0x03, 16]) + bytes([0, 0x03, 8, 4, 0x05, 16, 0xF0])
    header_size, fde_size = 28, 20
    fdes = struct.pack("<iIIIBBH", 0x1000 - header_size, 64, 0, 2, 0x10, 16, 0)
    fdes += struct.pack("<iIIIBBH", 0x2000 - header_size - fde_size, 32, 6, 2, 0, 0, 0)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 5, 3, 0, -8, 0, 2, 4, len(rows), 0, len(fdes))
    return header + fdes + rows


def _fixed_fp_aarch64() -> bytes:
    """Version 2, AArch64 (no fixed RA): 2-byte offsets, the first row a CFA alone (no RA), then CFA and RA,
    then CFA, RA and FP."""
    rows = bytes([0, 0x03 | 0x20]) + struct.pack("<h", 16)
    rows += bytes([4, 0x05 | 0x20]) + struct.pack("<hh", 32, -8)
    rows += bytes([8, 0x06 | 0x20]) + struct.pack("<hhh", 32, -8, -16)
    fdes = struct.pack("<iIIIBBH", 0x400, 16, 0, 3, 0, 0, 0)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 2, 0, 0, 0, 1, 3, len(rows), 0, len(fdes))
    return header + fdes + rows


CUT_AT_REP_SIZE = (
    "e2de02010300f800070000000d00000027000000000000008c000000c0eeffff10000000180000000200000000100000d0eeffff2000"
    "00001e0000000200020010100000f0eeffff0800000024000000010000a5000fa46ddb9f5abb5f645d4d261d00a7354df5997a"
)


def _fixture_sections() -> list[tuple[str, bytes]]:
    out = [(path.stem, load_section_fixture(path)[0]) for path in SECTIONS]
    for path in ELF_FIXTURES:
        if "no-sframe" not in path.name:
            out.append((path.name, Document.open(str(path)).data))
    return out


BASES = [
    *_fixture_sections(),
    ("v2-two-functions", v2_section([[(0, 8), (4, 16)], [(0, 8), (9, 24)]])),
    ("v2-unsorted", v2_section([[(0, 8), (4, 16)], [(0, 8)]], reverse=True)),
    ("v2-pcmask-pcrel", _pcmask_v2()),
    ("v2-aarch64-offsets", _fixed_fp_aarch64()),
    ("v2-long-function", long_function(2, rows=300)),
    # a mutant: 7 FDEs claimed, the section ends inside the fourth, at its rep_size, whose FRE type (10) has
    # no start address: glibc gives up before it reads rep_size, so it falls back and does not crash
    ("v2-cut-at-rep-size", bytes.fromhex(CUT_AT_REP_SIZE)),
]
BASES += [("v2-two-functions-swapped", to_big_endian(BASES[-6][1]))]
VERSION_2 = [(name, data) for name, data in BASES if data[:3] == b"\xe2\xde\x02"]


@pytest.fixture(scope="module")
def glibc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Glibc]:
    lib = Glibc([str(harness(str(tmp_path_factory.mktemp("glibc"))))])
    yield lib
    lib.close()


def _agree(lib: Glibc, name: str, data: bytes) -> int | str:
    """glibc and the profile on `data`: the same decode, the same answer at every PC asked, and the
    verdict's failures exactly the PCs that fall back or crash. Returns what `__sframe_decode` did."""
    judged, spans = pcs_of(data)
    real, said = lib.ask(data, spans), predict(data, spans)
    assert real.decode == said.decode, f"glibc on {name} ({data.hex()}): decode {real.decode} vs {said.decode}"
    if real.spans != said.spans:
        i = next(i for i, (a, b) in enumerate(zip(real.spans, said.spans, strict=True)) if a != b)
        pytest.fail(
            f"glibc on {name} ({data.hex()}): span {spans[i]}: glibc {real.spans[i][:6]} vs {said.spans[i][:6]}"
        )
    verdict = PROFILE.judge(data, 0)
    assert verdict.accepted == (real.decode == 0), name
    AGREE[f"sections {'taken' if real.decode == 0 else 'refused'}"] += 1
    tally: Counter[str] = Counter()
    truths = []
    for (_, asked_high), changes in zip(spans, real.spans, strict=True):
        ends = [pc for pc, _ in changes[1:]] + [asked_high]
        truths.append([(a, b, kind(w)) for (a, w), b in zip(changes, ends, strict=True)])
    judge_spans(judged, truths, verdict, tally)
    AGREE.update(tally)
    wrong = {k: n for k, n in tally.items() if not k.endswith(" ok")}
    assert not wrong, f"glibc on {name}: the verdict is wrong at {wrong} PCs"
    return real.decode


@pytest.mark.parametrize("index", range(len(CORPUS)), ids=[f"{i}-{e['group']}" for i, e in enumerate(CORPUS)])
def test_profile_says_what_glibc_said(index: int) -> None:
    """Without glibc's source at hand: the recorded answers of glibc's code, at every PC asked."""
    entry = CORPUS[index]
    spans = [tuple(span) for span in entry["spans"]]
    recorded = Answer(entry["decode"], tuple(tuple((pc, words) for pc, words in c) for c in entry["glibc"]))
    assert predict(bytes.fromhex(entry["section"]), spans) == recorded


def test_corpus_covers_every_outcome() -> None:
    """The recorded corpus has sections taken, refused and crashing glibc's decode, and PCs of each kind."""
    assert {e["decode"] for e in CORPUS} == {0, 5, "crash"}
    kinds = {kind(words) for e in CORPUS for changes in e["glibc"] for _, words in changes}
    assert kinds == {"found", "fails", "crash"}


@pytest.mark.parametrize("index", range(len(BASES)), ids=[name for name, _ in BASES])
def test_fixture_sections(glibc: Glibc, index: int) -> None:
    name, data = BASES[index]
    decoded = _agree(glibc, name, data)
    version = data[2] if data[:2] == b"\xe2\xde" else None
    assert (decoded == 0) == (version == 2), f"glibc 2.43 takes version 2 only: {name} (version {version})"


@pytest.mark.parametrize(("release", "target"), [("2.44", "x86_64"), ("2.44", "aarch64"), ("2.47", "x86_64")])
def test_built_sections(glibc: Glibc, built: Built, release: str, target: str) -> None:
    """binutils 2.44's sections (version 2, PLT rows included) are taken; 2.47's (version 3) refused."""
    decoded = _agree(glibc, f"shapes {release} {target}", built(release, target))
    assert (decoded == 0) == (release == "2.44")


def _nudge(rng: random.Random, data: bytes) -> bytes:
    """What generic mutations rarely hit: a flag, an FDE's info byte or rep_size, a row's info byte."""
    out = bytearray(data)
    spot = rng.randrange(4)
    if spot == 0:
        out[3] = rng.randrange(8)
    elif spot in (1, 2) and len(out) >= 48:
        fdes = (len(out) - 28) // 20
        at = 28 + 20 * rng.randrange(max(min(fdes, struct.unpack_from("<I", out, 8)[0]), 1)) + 15 + spot
        if at < len(out):
            out[at] = rng.randrange(256) if spot == 2 else rng.choice((0x00, 0x01, 0x02, 0x03, 0x10, 0x11, 0x12))
    elif len(out) > 29:
        out[rng.randrange(28, len(out))] = rng.randrange(256)
    return bytes(out)


@settings(
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(index=st.integers(0, len(VERSION_2) - 1), seed=st.integers(0, 1 << 32), times=st.integers(1, 3))
def test_mutants(glibc: Glibc, index: int, seed: int, times: int) -> None:
    name, data = VERSION_2[index]
    rng = random.Random(seed)
    for _ in range(times):
        data = mutate(rng, data) if rng.randrange(2) else _nudge(rng, data)
    decoded = _agree(glibc, f"a mutant of {name}", data)
    AGREE[f"mutants {'crash' if decoded == 'crash' else 'refused' if decoded else 'taken'}"] += 1


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(body=st.binary(max_size=300), header=st.binary(min_size=24, max_size=24), flags=st.integers(0, 7))
def test_any_bytes_get_a_verdict(body: bytes, header: bytes, flags: int) -> None:
    """Whatever follows a version 2 preamble, the profile answers (a verdict, never an exception)."""
    verdict = PROFILE.judge(bytes([0xE2, 0xDE, 2, flags]) + header + body, 0x1000)
    assert verdict.accepted or verdict.error


def test_a_long_function_is_linear(glibc: Glibc) -> None:
    """6,000 rows, one out of order: glibc's answer at every PC, from runs built in one pass over the rows."""
    _agree(glibc, "a 6,000-row function", long_function(2))


@pytest.mark.parametrize("slide", [True, False], ids=["sliding", "one-start"])
def test_overlapping_row_blocks(glibc: Glibc, slide: bool) -> None:
    """Functions reading overlapping blocks of one pool of rows (each block starting a row later, or all at
    the first row with fewer rows each): glibc's answer at every PC, each row read once."""
    _agree(glibc, "overlapping row blocks", overlapping(2, 60, 60, slide))


def test_functions_at_one_start(glibc: Glibc) -> None:
    """60 functions all at one start, each its own rows: every function judges the same PCs (the profile
    answers them once and gives the answers again): glibc's answer at every PC, the verdict's for each."""
    _agree(glibc, "60 functions at one start", at_one_start(2, 60))


@pytest.mark.parametrize("pcmask", [False, True])
def test_functions_claiming_rows_past_a_pool(glibc: Glibc, pcmask: bool) -> None:
    """Functions each claiming 65,535 rows of one pool of 30, every walk running into the pool's end."""
    _agree(glibc, "40 functions claiming rows past a pool", past_the_pool(2, 40, 30, size=0x40, pcmask=pcmask))


def test_pcmask_functions_past_a_pool_and_of_gigabytes(glibc: Glibc) -> None:
    """PCMASK functions longer than the pool's rows reach (a row's start test cuts the blocks below the last
    row's start), and PCMASK functions of 4 GB each (their rows' pattern painted once and repeated)."""
    _agree(glibc, "40 PCMASK functions past a pool", past_the_pool(2, 40, 30, size=0x100, pcmask=True))
    _agree(glibc, "12 PCMASK functions of 4 GB", pcmask_gigabytes(12, apart=0x400))


@pytest.mark.parametrize("abi", ["aarch64", "s390x"])
def test_functions_of_many_rows(glibc: Glibc, abi: str) -> None:
    """Ordinary functions of many rows, each its own block (`handmade.row_heavy`: AArch64 rows whose RA is
    signed; big-endian s390x), each row read again once the rows kept are let go: glibc's answer at every PC."""
    _agree(glibc, f"{abi} functions of many rows", row_heavy(2, abi, 30, 200))


def test_pcmask_functions_repeating_their_rows(glibc: Glibc) -> None:
    """PCMASK functions of 2,000 rows whose starts repeat every 256 (rep_size 255): the rows past the first
    256 test offsets the earlier ones hold already, and the walk does not keep them: glibc's answer at every
    PC."""
    _agree(glibc, "PCMASK functions repeating their rows", row_heavy(2, "aarch64", 3, 2000, size=0x800, rep=255))


def test_verdict_words() -> None:
    """A refusal names the check and says the fallback; a taken section says how many PCs get a frame."""
    refused = PROFILE.judge(long_function(3), 0)
    assert not refused.accepted and refused.error == model.END_OF_STACK
    assert "version 3 (glibc 2.43 reads 2 only)" in (refused.rule or "")
    assert any("falls back to DWARF" in note for note in refused.notes)
    swapped = PROFILE.judge(to_big_endian(long_function(2)), 0)
    assert not swapped.accepted and "magic" in (swapped.rule or "")
    taken = PROFILE.judge(_fixed_fp_aarch64(), 0)
    assert taken.accepted
    (failure,) = taken.lookups  # the first row has a CFA offset but no RA offset
    assert (failure.start, failure.end, failure.error) == (0x400, 0x404, model.END_OF_STACK)
    assert "no RA offset" in failure.rule
    assert taken.notes[0].endswith("at 12 PCs")
    assert "falls back to DWARF" in taken.notes[1]


def test_the_command_line(tmp_path: Path) -> None:
    """`check --profile glibc-2.43` alone and beside the kernel's in one run."""
    raw = tmp_path / "v2.sframe"
    raw.write_bytes(_fixed_fp_aarch64())
    out = run_process("check", "--profile", "glibc-2.43", "--base", "0", str(raw))
    assert "glibc-2.43: accepted" in out.stdout, out.stderr
    assert "0x400" in out.stdout and "falls back to DWARF" in out.stdout
    both = run_process("check", "--profile", "kernel", "--profile", "glibc-2.43", str(DATA / "shapes-x86_64-O2"))
    assert both.returncode == 1, both.stderr
    assert "kernel: refused" in both.stdout
    assert "glibc-2.43: refused: _URC_END_OF_STACK (5)" in both.stdout and "reads 2 only" in both.stdout


def test_tally() -> None:
    """The corpus reached every kind of answer (else it proves little); the figures, with -s."""
    if not AGREE:
        pytest.skip("the comparisons did not run")
    print(dict(sorted(AGREE.items())))
    for key in ("sections taken", "sections refused", "found ok", "fails ok", "crash ok", "mutants taken"):
        assert AGREE[key], key
