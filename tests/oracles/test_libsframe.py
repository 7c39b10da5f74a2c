"""The libsframe profiles say what each release's own library does, proven against that library.

Binutils 2.40's libsframe (this machine's), 2.44's (trixie) and 2.47's (sid)
run in a child process (`libsframe_oracle.py`) on every fixture section, on
sections built here by each release's assembler and linker for x86_64,
AArch64 and s390x, on their byte-swapped twins (which each release reads
through its byte-swapping walk, `flip_sframe`), and on thousands of mutants;
for each, `sframe_decode`'s answer (accepted, its error, or a crash) and each
lookup's (the row `sframe_find_fre` returns and the CFA/FP/RA offsets the
getters give, or a failure, or a crash) must be the model's.
"""

from __future__ import annotations

import json
import random
import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import AARCH64, DATA, ELF_FIXTURES, SECTIONS, Built, load_section_fixture, run_process, v3_section
from handmade import (
    AMD64_ROWS,
    PCREL_SORTED,
    SAVED,
    at_one_start,
    long_function,
    mutate,
    overlapping,
    past_the_pool,
    pcmask_gigabytes,
    reg,
    row_heavy,
    to_big_endian,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from libsframe_oracle import (
    CRASH,
    Library,
    answer_kind,
    every_pc,
    judge_spans,
    library,
    outcomes,
    predict,
    queries,
)

from sfview.consumers import Verdict, libsframe_releases
from sfview.consumers import libsframe as model
from sfview.consumers.libsframe import own_order
from sfview.consumers.libsframe_releases import CODES
from sfview.consumers.libsframe_verdict import domains
from sfview.consumers.verdicts import profiles
from sfview.document import Document

RELEASES = ("2.40", "2.44", "2.47")
TITLE = "sframe_decode, sframe_find_fre"
PROFILES = profiles()
RELEASES_BY = libsframe_releases.RELEASES
TALLY: Counter[str] = Counter()
"""What the mutants did, per release: crashes, refusals, acceptances (asserted on, and printed with -s)."""


def _fixture_sections() -> list[tuple[str, bytes]]:
    out = [(path.stem, load_section_fixture(path)[0]) for path in SECTIONS]
    for path in ELF_FIXTURES:
        if "no-sframe" not in path.name:
            out.append((path.name, Document.open(str(path)).data))
    return out


S390X = 4
FLEXIBLE_ROWS = [(0, 1, [reg(31), 0]), (4, 1, [reg(31), 16, SAVED, -8, SAVED, -16]), (8, 0, [reg(29), 16])]
BASES = [
    *_fixture_sections(),
    ("v3-flexible-amd64", v3_section(1, AMD64_ROWS, fixed_ra=-8, info=0x80, flags=PCREL_SORTED)),
    ("v3-flexible-aarch64", v3_section(1, FLEXIBLE_ROWS, info=0x20, abi=AARCH64, flags=PCREL_SORTED)),
    ("v3-s390x-padding", v3_section(0, [(0, 1, [0]), (2, 1, [1, 0, -10]), (6, 0, [2, -6, -9])], abi=S390X)),
    ("v3-pcmask-rep-0", v3_section(0, [(0, 1, [8]), (6, 1, [16])], fixed_ra=-8, info=0x10)),
]
BASES += [(name + "-swapped", to_big_endian(data)) for name, data in BASES if "2.40" not in name or "-O2" in name]


def _nudge(rng: random.Random, data: bytes) -> bytes:
    """What the generic mutations rarely hit: another version or flag set, shifted sub-sections, a row's
    info byte asking for more (or undefined-size) data words."""
    out = bytearray(data)
    order = "<" if data[0] == 0xE2 else ">"
    kind = rng.randrange(4)
    if kind == 0:
        out[2] = rng.choice((1, 2, 3))
    elif kind == 1:
        out[3] = rng.randrange(8)
    elif kind == 2 and len(out) >= 28:
        at = rng.choice((24, 28 - 4, 16))  # sfh_fdeoff, sfh_freoff, sfh_fre_len
        value = struct.unpack_from(order + "I", out, at)[0] + rng.choice((-5, -1, 1, 3, 17))
        struct.pack_into(order + "I", out, at, value & 0xFFFFFFFF)
    elif len(out) > 29:
        at = rng.randrange(28, len(out))
        out[at] = (rng.randrange(16) << 1) | (rng.randrange(4) << 5) | rng.randrange(2) | (out[at] & 0x80)
    return bytes(out)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Library]]:
    folder = tmp_path_factory.mktemp("libsframe")
    libs = {release: library(release, folder) for release in RELEASES}
    yield libs
    for lib in libs.values():
        lib.close()


def _agree(libs: dict[str, Library], name: str, data: bytes) -> dict[str, object]:
    """Each release's library and model on `data`: the same answers, step by step; the decode answers."""
    asked = queries(data)
    out: dict[str, object] = {}
    for release, lib in libs.items():
        real, said = lib.ask(data, asked), predict(release, data, asked)
        if real != said:
            steps = [
                (i, q, a, b)
                for i, (q, a, b) in enumerate(zip(asked, real.lookups, said.lookups, strict=False))
                if a != b
            ]
            pytest.fail(
                f"libsframe {release} on {name} ({len(data)} bytes {data.hex()}): decode {real.decode} vs "
                f"model {said.decode}; first differing lookup {steps[:1]}; lookups {len(real.lookups)} vs "
                f"{len(said.lookups)}"
            )
        out[release] = real.decode
        TALLY[f"{release} lookups"] += len(real.lookups)
        TALLY[f"{release} lookup crashes"] += CRASH in real.lookups
    return out


@pytest.mark.parametrize("index", range(len(BASES)), ids=[name for name, _ in BASES])
def test_fixture_sections(libraries: dict[str, Library], index: int) -> None:
    name, data = BASES[index]
    decoded = _agree(libraries, name, data)
    if "-swapped" not in name:  # a big-endian host reading `data` is this host reading its swapped twin
        twin = to_big_endian(data)
        for release, lib in libraries.items():
            note = PROFILES[f"libsframe-{release}"].judge(data, 0).notes[-1]
            assert note.startswith("on a big-endian host")
            _says(note, lib.ask(twin, []).decode)
    if "-swapped" not in name and "2.4" in name:
        version_of_name = name.rsplit("-", 1)[-1]
        if version_of_name in ("2.41", "2.42", "2.43", "2.44"):
            assert decoded["2.44"] == 0, "2.44 reads what 2.41 to 2.44 write"


SOURCES = DATA / "src"


TARGETS = [("2.40", "x86_64"), ("2.40", "aarch64"), ("2.44", "x86_64"), ("2.44", "aarch64")]
TARGETS += [("2.47", "x86_64"), ("2.47", "aarch64"), ("2.47", "s390x")]


@pytest.mark.parametrize(("release", "target"), TARGETS)
def test_built_sections(libraries: dict[str, Library], built: Built, release: str, target: str) -> None:
    """A program built by each release for each target: its section, and the section in the other order."""
    data = built(release, target)
    decoded = _agree(libraries, f"shapes {release} {target}", data)
    assert decoded[release] == 0, f"libsframe {release} reads what binutils {release} writes"
    if target != "s390x":
        _agree(libraries, f"shapes {release} {target} swapped", to_big_endian(data))


@settings(
    max_examples=2000,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(index=st.integers(0, len(BASES) - 1), seed=st.integers(0, 1 << 32), times=st.integers(1, 3))
def test_mutants(libraries: dict[str, Library], index: int, seed: int, times: int) -> None:
    name, data = BASES[index]
    rng = random.Random(seed)
    for _ in range(times):
        if len(data) > 8:
            data = mutate(rng, data) if rng.randrange(3) else _nudge(rng, data)
    for release, decoded in _agree(libraries, f"a mutant of {name}", data).items():
        TALLY[f"{release} {'crash' if decoded == CRASH else 'refused' if decoded else 'accepted'}"] += 1
        if seed % 3 == RELEASES.index(release):
            _verdict_says(PROFILES[f"libsframe-{release}"].judge(data, 0), data, decoded)


def _verdict_says(verdict: Verdict, data: bytes, decoded: object) -> None:
    """The verdict says what the library did on this (little-endian) host: as its main answer for a
    little-endian section, in its note on the other byte order for a big-endian one."""
    error = None if decoded == 0 else "crash" if decoded == CRASH else _error(decoded)
    if own_order(data) == "<":
        assert (verdict.accepted, verdict.error) == (decoded == 0, error)
        return
    _says(next(n for n in verdict.notes if n.startswith("on a little-endian host")), decoded)


def _says(note: str, decoded: object) -> None:
    """A verdict's note on the other byte order says what the library did."""
    error = None if decoded == 0 else "crash" if decoded == CRASH else _error(decoded)
    said = note.split(": ", 1)[1]
    expected = "accepted" if error is None else "crashes" if error == "crash" else f"refused with {error}"
    assert said.startswith(expected), (said, expected)


def _error(code: object) -> str:
    name = next(name for name, number in CODES.items() if number == code)
    return f"{name} ({code})"


HEADER = bytes.fromhex("e2de0201") + bytes(24)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(body=st.binary(max_size=300), header=st.binary(min_size=24, max_size=24), version=st.integers(1, 3))
def test_any_bytes_get_a_verdict(body: bytes, header: bytes, version: int) -> None:
    """Whatever follows a real preamble, each profile answers (a verdict, never an exception)."""
    data = HEADER[:2] + bytes([version, header[0] & 0x7]) + header + body
    for name in ("libsframe-2.40", "libsframe-2.44", "libsframe"):
        verdict = PROFILES[name].judge(data, 0x1000)
        assert verdict.accepted or verdict.error


def test_mutants_cover_every_outcome() -> None:
    """The mutants above reached every kind of answer of every release (else they prove little)."""
    if not TALLY:
        pytest.skip("the mutants did not run")
    print(dict(sorted(TALLY.items())))
    for release in RELEASES:
        for kind in ("accepted", "refused", "crash"):
            assert TALLY[f"{release} {kind}"] > 0, f"no mutant was {kind} by libsframe {release}"


def test_the_command_line(tmp_path: Path) -> None:
    """`check --profile libsframe-X` prints the release's verdict; --json gives it to a CI job."""
    elf = str(DATA / "shapes-x86_64-O2")
    ok = run_process("check", "--profile", "libsframe-2.40", elf)
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ok.stdout.splitlines()[0] == f"{elf}: libsframe-2.40: accepted"
    crash = run_process("check", "--profile", "libsframe-2.44", elf)
    assert crash.returncode == 1
    assert crash.stdout.startswith(f"{elf}: libsframe-2.44: crashes"), crash.stdout
    content, base, _ = load_section_fixture(next(p for p in SECTIONS if "x86_64-2.46" in p.name))
    raw = tmp_path / "v3.sframe"
    raw.write_bytes(content)
    refused = run_process("check", "--profile", "libsframe-2.44", "--base", hex(base), str(raw))
    assert ": libsframe-2.44: refused: SFRAME_ERR_NOMEM (2001)" in refused.stdout
    assert "sframe_header_sanity_check_p: version 3" in refused.stdout
    report = json.loads(run_process("check", "--json", "--profile", "libsframe", "--base", hex(base), str(raw)).stdout)
    verdict = report[0]["profiles"]["libsframe-2.47"]
    assert {k: verdict[k] for k in ("consumer", "accepted", "error", "lookups")} == {
        "consumer": "libsframe-2.47",
        "accepted": True,
        "error": None,
        "lookups": [],
    }
    help_text = run_process("check", "--help").stdout
    assert all(name in help_text for name in ("libsframe-2.40", "libsframe-2.44", "libsframe-2.47"))


def test_verdicts() -> None:
    """The registered profiles' verdicts in words: refusals named with their error, crashes said."""
    content, base, _ = load_section_fixture(next(p for p in SECTIONS if "x86_64-2.44" in p.name))
    assert PROFILES["libsframe-2.44"].judge(content, base).accepted
    refused = PROFILES["libsframe-2.40"].judge(content, base)
    assert (refused.accepted, refused.error) == (False, "SFRAME_ERR_NOMEM (2001)")
    assert "version 2" in (refused.rule or "")
    old = load_section_fixture(next(p for p in SECTIONS if "x86_64-2.40" in p.name))[0]
    crash = PROFILES["libsframe-2.44"].judge(old, 0)
    assert (crash.accepted, crash.error) == (False, "crash")
    assert PROFILES["libsframe"].judge(content, base).consumer == "libsframe-2.47"
    unsorted = bytearray(content)
    unsorted[3] &= ~1
    verdict = PROFILES["libsframe-2.47"].judge(bytes(unsorted), base)
    assert verdict.accepted and verdict.lookups
    assert {f.error for f in verdict.lookups} == {"SFRAME_ERR_FDE_NOTSORTED (2009)"}
    assert struct.unpack_from("<H", content)[0] == 0xDEE2


EVERY_PC: Counter[str] = Counter()
"""PCs where each release's verdict agrees with its library, by the library's answer (printed with -s)."""


def _every_pc(libs: dict[str, Library], name: str, data: bytes) -> None:
    """At every PC of every function (and a few on either side), each release's library and the profile's
    runs give the same answer (the row, its getters, a miss or a crash); and the verdict's failing ranges
    say which PCs fail and which crash, exactly."""
    for release, lib in libs.items():
        judged, spans = every_pc(release, data)
        real, said = lib.ask(data, [], spans), predict(release, data, [], spans)
        assert real.decode == said.decode, (release, name)
        if real.spans != said.spans:
            i = next(i for i, (a, b) in enumerate(zip(real.spans, said.spans, strict=True)) if a != b)
            pytest.fail(
                f"libsframe {release} on {name} ({len(data)} bytes {data.hex()}): span {spans[i]}: library "
                f"{real.spans[i][:6]} vs profile {said.spans[i][:6]}"
            )
        if real.decode != 0:
            continue
        verdict = PROFILES[f"libsframe-{release}"].judge(data, 0)
        owned = {
            index: (start, end)
            for index, start, end, _ in domains(model.outcome(RELEASES_BY[release], data, "<"), data, 0)
        }
        for f in verdict.lookups:  # never inverted, each inside the function it names
            assert owned[f.function][0] <= f.start < f.end <= owned[f.function][1], (release, name, f)
        tally: Counter[str] = Counter()
        truths = [[(a, b, answer_kind(x)) for a, b, x in runs] for runs in outcomes(real, spans)]
        judge_spans(judged, truths, verdict, tally)
        EVERY_PC.update({f"{release} {k}": n for k, n in tally.items()})
        wrong = {k: n for k, n in tally.items() if not k.endswith(" ok")}
        assert not wrong, f"libsframe {release} on {name}: the verdict is wrong at {wrong} PCs"


@pytest.mark.parametrize("index", range(len(BASES)), ids=[name for name, _ in BASES])
def test_every_pc_of_fixtures(libraries: dict[str, Library], index: int) -> None:
    name, data = BASES[index]
    _every_pc(libraries, name, data)


@pytest.mark.parametrize(("release", "target"), TARGETS)
def test_every_pc_of_built_sections(libraries: dict[str, Library], built: Built, release: str, target: str) -> None:
    _every_pc(libraries, f"shapes {release} {target}", built(release, target))


@settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(index=st.integers(0, len(BASES) - 1), seed=st.integers(0, 1 << 32), times=st.integers(1, 3))
def test_every_pc_of_mutants(libraries: dict[str, Library], index: int, seed: int, times: int) -> None:
    name, data = BASES[index]
    rng = random.Random(seed ^ 0x5A5A)
    for _ in range(times):
        if len(data) > 8:
            data = mutate(rng, data) if rng.randrange(3) else _nudge(rng, data)
    _every_pc(libraries, f"a mutant of {name}", data)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_pc_of_a_long_function(libraries: dict[str, Library], version: int) -> None:
    """A function of 6,000 rows (one out of order), each release that reads its version judged at every PC:
    the profile's cost is linear in the rows (bench/bench_profiles.py times it), its answer the library's."""
    data = long_function(version)
    _every_pc(libraries, f"a 6,000-row function, version {version}", data)
    readers = {release for release in RELEASES if PROFILES[f"libsframe-{release}"].judge(data, 0).accepted}
    assert readers == {1: {"2.40"}, 2: {"2.44", "2.47"}, 3: {"2.47"}}[version]


@pytest.mark.parametrize(("version", "slide"), [(1, True), (1, False), (2, True), (2, False), (3, True)])
def test_every_pc_of_overlapping_row_blocks(libraries: dict[str, Library], version: int, slide: bool) -> None:
    """Functions reading overlapping blocks of one pool of rows (each a row later, or all from the first
    with fewer rows each; version 3: all the one block): every release that takes them, at every PC."""
    _every_pc(libraries, f"overlapping row blocks, version {version}", overlapping(version, 60, 60, slide))


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_pc_of_functions_at_one_start(libraries: dict[str, Library], version: int) -> None:
    """Functions all starting at one address, each its own rows: every function's PCs are the same ones
    (the profile answers them once and gives the answers again), every release that takes them, at every PC."""
    _every_pc(libraries, f"60 functions at one start, version {version}", at_one_start(version, 60))


@pytest.mark.parametrize(
    ("version", "pcmask", "pool"),
    [(1, False, 30), (1, True, 30), (2, False, 30), (2, True, 30), (3, False, 30), (3, True, 30), (3, False, 1)],
)
def test_every_pc_of_functions_claiming_rows_past_a_pool(
    libraries: dict[str, Library], version: int, pcmask: bool, pool: int
) -> None:
    """Functions each claiming 65,535 rows of a pool of 30 (or 1), every walk running into the pool's end: more
    rows claimed than the verdict compares with the format's, so it asks only where lookups fail (the rows
    found merged into one answer, the functions alike sharing one walk in 2.47), every release at every PC."""
    data = past_the_pool(version, 40, pool, size=0x40, pcmask=pcmask)
    _every_pc(libraries, f"40 functions claiming rows past a pool, version {version}", data)
    verdicts = [PROFILES[f"libsframe-{release}"].judge(data, 0) for release in RELEASES]
    accepted = [verdict for verdict in verdicts if verdict.accepted]
    assert accepted and all(any(note.startswith("rows not compared") for note in v.notes) for v in accepted)


@pytest.mark.parametrize("version", [2, 3])
def test_every_pc_of_pcmask_functions_past_a_pool_and_past_its_rows(
    libraries: dict[str, Library], version: int
) -> None:
    """PCMASK functions longer than the pool's rows reach, each claiming 65,535 rows of a pool of 30: below
    the last row's start a row's start test cuts each block (2.47 paints one block per cut and merges the
    runs from offset 0, shared by the functions alike), past it every block is one; and the same section
    byte-swapped (the byte-swapping walk on this host), every release at every PC."""
    data = past_the_pool(version, 40, 30, size=0x100, pcmask=True)
    _every_pc(libraries, f"40 PCMASK functions past a pool, version {version}", data)
    _every_pc(libraries, f"40 PCMASK functions past a pool, version {version}, swapped", to_big_endian(data))


def test_every_pc_of_pcmask_functions_of_gigabytes(libraries: dict[str, Library]) -> None:
    """PCMASK functions claiming 4 GB each, rep_size 16: their rows' pattern painted once and repeated (2.47:
    a stretch of blocks finding rows is one answer, the section judged whole), at every PC. Not 2.44: there a
    lookup fails every 16 bytes, billions of failures, and the verdict stops at the runs bound
    (tests/commands/test_profile_work.py)."""
    whole = {release: lib for release, lib in libraries.items() if release != "2.44"}
    _every_pc(whole, "12 PCMASK functions of 4 GB", pcmask_gigabytes(12, apart=0x400))
    _every_pc(libraries, "2 PCMASK functions of 4 GB, version 1", pcmask_gigabytes(2, 1, apart=0x400))
    assert not any("not judged" in note for note in PROFILES["libsframe-2.47"].judge(pcmask_gigabytes(12), 0).notes)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("abi", ["aarch64", "s390x"])
def test_every_pc_of_functions_of_many_rows(libraries: dict[str, Library], version: int, abi: str) -> None:
    """Ordinary functions of many rows, each its own block (`handmade.row_heavy`: AArch64 rows whose RA is
    signed, key B; big-endian s390x rows with the FP and RA in registers): the profile keeps a bounded number
    of decoded rows, decoding a row again once let go; every release that takes them, at every PC."""
    _every_pc(libraries, f"{abi} functions of many rows, version {version}", row_heavy(version, abi, 30, 200))


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("abi", ["aarch64", "s390x"])
def test_every_pc_of_pcmask_functions_repeating_their_rows(
    libraries: dict[str, Library], version: int, abi: str
) -> None:
    """PCMASK functions of 2,000 rows whose starts repeat every 256 (rep_size 255): the rows past the first
    256 test keys the earlier ones hold already, and the walk does not keep them; every release that takes
    them, at every PC."""
    data = row_heavy(version, abi, 3, 2000, size=0x800, rep=255)
    _every_pc(libraries, f"{abi} PCMASK functions repeating their rows, version {version}", data)


def test_a_read_past_the_section_faults_or_reads_what_follows(libraries: dict[str, Library]) -> None:
    """Version 1, its rows cut 10 bytes short: 2.40's `sframe_decode` copies sfh_fre_len bytes, 10 past the
    section's end. Followed by a guard page, the library faults; followed by readable bytes (a section
    inside a loaded file), it copies them and takes the section. The profile's words say both."""
    data = long_function(1, 50)[:-10]
    guarded = libraries["2.40"]
    assert guarded.ask(data, []).decode == CRASH
    followed = Library("2.40", [*guarded.command, "64"])  # 64 readable zero bytes, then the guard
    try:
        assert followed.ask(data, []).decode == 0
    finally:
        followed.close()
    verdict = PROFILES["libsframe-2.40"].judge(data, 0)
    assert not verdict.accepted and verdict.error == "crash"
    assert verdict.rule is not None and "sframe_decode: memcpy of sfh_fre_len bytes after the FDEs" in verdict.rule
    assert "10 past the section's end: a fault where nothing readable follows" in verdict.rule
    assert "where memory does (a section inside a loaded file), it reads those bytes and goes on" in verdict.rule


def test_a_function_sfview_cannot_read_is_judged(libraries: dict[str, Library]) -> None:
    """An FRE type no version defines: sfview's reader gives up on the function, the library asserts on every
    lookup that reaches its rows (abort): the verdict says so for every PC of it, as the library does."""
    data = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    info_at = 28 + 17 * 2 + 16  # FDE 2's info byte (version 1: 17-byte FDEs after the 28-byte header)
    data[info_at] = (data[info_at] & 0xF0) | 14
    data = bytes(data)
    _every_pc(libraries, "FRE type 14", data)
    verdict = PROFILES["libsframe-2.40"].judge(data, 0)
    crashes = [f for f in verdict.lookups if f.function == 2]
    assert crashes and all(f.error == "crash" and "sframe_fre_start_addr_size asserts" in f.rule for f in crashes)


def test_every_pc_tally() -> None:
    """The every-PC tests saw found, failing and crashing PCs under each release."""
    if not EVERY_PC:
        pytest.skip("the every-PC tests did not run")
    print(dict(sorted(EVERY_PC.items())))
    for release in RELEASES:
        for what in ("found", "fails"):
            assert EVERY_PC[f"{release} {what} ok"] > 0, f"no PC {what} under libsframe {release}"


@pytest.mark.parametrize("magic", [b"\xe3\xde", b"\x00\x00", b"\xde\xe3"])
def test_damaged_magic_is_judged(libraries: dict[str, Library], tmp_path: Path, magic: bytes) -> None:
    """A raw section whose magic is damaged is still a section to `check`: the format's error, and every
    consumer's refusal as its own code gives it (each library's error proven here)."""
    data = magic + (DATA / "shapes-x86_64-O2.sframe").read_bytes()[2:]
    raw = tmp_path / "damaged.sframe"
    raw.write_bytes(data)
    names = ["kernel", *(f"libsframe-{release}" for release in RELEASES)]
    for base in ((), ("--base", "0x1000")):
        out = run_process("check", *base, *(a for name in names for a in ("--profile", name)), str(raw))
        assert (out.returncode, out.stderr) == (1, "")
        lines = out.stdout.splitlines()
        bad = f"bad magic {magic[0]:02x} {magic[1]:02x}: an SFrame section starts with 0xdee2"
        assert lines[0].startswith(f"{raw}: section offset 0x0: error section-unreadable: header: {bad}")
        assert (
            f"{raw}: kernel: refused: -EINVAL at section offset 0x0: sframe_read_header: preamble.magic != SFRAME_MAGIC"
            in lines
        )
        for release, lib in libraries.items():
            code = lib.ask(data, []).decode
            assert code == CODES["SFRAME_ERR_BUF_INVAL"]
            said = next(line for line in lines if line.startswith(f"{raw}: libsframe-{release}: "))
            assert said.startswith(
                f"{raw}: libsframe-{release}: refused: SFRAME_ERR_BUF_INVAL ({code}) at section offset 0x0"
            )
    other = run_process("dump", str(raw))
    assert other.returncode == 2 and "neither an ELF file nor an SFrame section" in other.stderr


def test_a_pattern_over_gigabytes_is_bounded() -> None:
    """A PCMASK function claiming 4 GiB whose two rows alternate every byte (rep_size 2) has billions of runs:
    the verdict judges them up to a bound set by the section's size, and says where it stopped."""
    rows = bytes([0, 0x03, 8, 1, 0x03, 16])  # two rows, 1-byte starts 0 and 1, one CFA offset each
    fde = struct.pack("<iIIIBBH", 0x1000, 0xFFFFFFFF, 0, 2, 0x10, 2, 0)  # PCMASK, rep_size 2
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 1, 2, len(rows), 0, len(fde))
    verdict = PROFILES["libsframe-2.44"].judge(header + fde + rows, 0)
    assert verdict.accepted
    assert any(note.startswith("lookups past 0x") and "not judged: more than" in note for note in verdict.notes)
