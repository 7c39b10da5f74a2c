"""Each binutils release's own libsframe, run on sections in a child process, beside sfview's model of it.

`libsframe_harness.c` (compiled here with gcc) loads a release's libsframe.so
(under that release's own dynamic linker, `<suite>/run`, for 2.44 and 2.47)
and answers for each section: `sframe_decode`'s error, then for each PC
`sframe_find_fre` and the CFA/FP/RA getters. Every allocation in it ends at an
unreadable page, so a read past any buffer is a SIGSEGV, not a silent read of
the next heap block; a crash is caught here (the child dies: it is restarted
for the next section) and said as `crash` at the step it happened in.

`predict` gives the same answers from `sfview.consumers.libsframe`, so that a
test compares the two step by step.
"""

from __future__ import annotations

import functools
import shutil
import struct
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from toolchains import toolchain

from sfview.consumers import Verdict
from sfview.consumers import libsframe as model
from sfview.consumers.libsframe_lookups import Lookups, find_fre
from sfview.consumers.libsframe_releases import CODES, RELEASES
from sfview.consumers.libsframe_verdict import domains
from sfview.errors import InputError
from sfview.sframe.model.section import Section

HARNESS = Path(__file__).with_name("libsframe_harness.c")
HOST_LIBSFRAME = Path("/usr/lib/x86_64-linux-gnu/libsframe.so.0")
NEW_API = {"2.40": 0, "2.44": 0, "2.47": 1}
"""Whether the getters take the FDE type and sframe_find_fre an int64 PC (2.47)."""
FRE_INFO_AT = {"2.40": 16, "2.44": 16, "2.47": 28}
"""Where fre_info sits in that release's sframe_frame_row_entry."""
CRASH = "crash"


@dataclass(frozen=True)
class Answer:
    """What one release did with one section: decode's error (0, an SFRAME_ERR_ number, `crash`) and,
    when it decoded, each lookup's (found, start, info, (cfa, err), (fp, err), (ra, err)) or `crash`."""

    decode: int | str
    lookups: tuple[object, ...] = ()
    spans: tuple[tuple[tuple[int, object], ...], ...] = ()
    """Every PC of each span asked: (first PC, answer) at the span's start and where the answer changes."""


Spans = Sequence[tuple[int, int, int]]
"""(first PC, end PC, FDE type): section-relative PCs to look up one by one."""


def _found(words: list[bytes]) -> tuple[object, ...]:
    found, start, info, *values = map(int, words)
    if found:
        return (found,)
    return (found, start, info, (values[0], values[1]), (values[2], values[3]), (values[4], values[5]))


@functools.cache
def _harness(folder: str) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: the libsframe harness cannot be built")
    out = Path(folder) / "libsframe_harness"
    subprocess.run(["gcc", "-O1", "-o", str(out), str(HARNESS), "-ldl"], check=True)
    return out


class Library:
    """One release's libsframe in a child process, restarted after each crash."""

    def __init__(self, release: str, command: list[str]) -> None:
        self.release = release
        self.command = command
        self.proc: subprocess.Popen[bytes] | None = None
        self.crashes = 0

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is None:
            self.proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        return self.proc

    def ask(self, data: bytes, queries: list[tuple[int, int]], spans: Spans = ()) -> Answer:
        """`sframe_decode`, then the lookups at `queries`' PCs one by one (a crash ends them), then at
        every PC of each span (`Answer.spans`: each answer from the PC where it starts)."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        request = struct.pack("<I", len(data)) + data + struct.pack("<I", len(queries))
        request += b"".join(struct.pack("<qI", pc, fde_type) for pc, fde_type in queries)
        request += struct.pack("<I", len(spans))
        request += b"".join(struct.pack("<qqI", low, high, fde_type) for low, high, fde_type in spans)
        try:
            proc.stdin.write(request)
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        decode: int | str = CRASH
        lookups: list[object] = []
        changes: list[list[tuple[int, object]]] = []
        while True:
            line = proc.stdout.readline().split()
            if not line:
                break
            if line[0] == b"E":
                return Answer(decode, tuple(lookups), tuple(map(tuple, changes)))
            if line[0] == b"D":
                decode = int(line[1])
            elif line[0] in (b"B", b"S"):
                said = CRASH if line[2] == b"crash" else _found(line[2:])
                if line[0] == b"B":
                    changes.append([])
                changes[-1].append((int(line[1]), said))
            else:
                lookups.append(_found(line[1:]))
        proc.wait()
        if proc.returncode >= 0:
            raise RuntimeError(f"libsframe {self.release} harness stopped with status {proc.returncode}")
        self.proc = None
        self.crashes += 1
        if decode != CRASH and len(lookups) < len(queries):
            lookups.append(CRASH)
        return Answer(decode, tuple(lookups))

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def library(release: str, folder: Path) -> Library:
    """That release's libsframe, or a skip saying what is missing."""
    harness = str(_harness(str(folder)))
    args = [str(NEW_API[release]), str(FRE_INFO_AT[release])]
    if release == "2.40":
        if not HOST_LIBSFRAME.exists():
            pytest.skip("this machine has no libsframe 2.40 (Debian bookworm: libsframe0)")
        return Library(release, [harness, str(HOST_LIBSFRAME), *args])
    chain = toolchain(release, "x86_64")
    assert chain.suite_dir is not None and chain.libsframe is not None
    return Library(release, [str(chain.suite_dir / "run"), harness, str(chain.libsframe), *args])


def predict(release: str, data: bytes, queries: list[tuple[int, int]], spans: Spans = ()) -> Answer:
    """What sfview's model says the release does, in the harness's terms (on this little-endian host): the
    lookups at `queries` one by one, and at every PC of `spans` from the profile's runs."""
    rel = RELEASES[release]
    result = model.outcome(rel, data, "<")
    if isinstance(result, model.Crash):
        return Answer(CRASH)
    if isinstance(result, model.Refusal):
        return Answer(CODES[result.error])
    lookups: list[object] = []
    for pc, fde_type in queries:
        try:
            row = find_fre(result, pc)
        except model.Miss:
            lookups.append((-1,))
            continue
        except model.Crash:
            lookups.append(CRASH)
            break
        lookups.append((0, row.start, row.info, *model.getters(result, row, fde_type)))
    changes: list[tuple[tuple[int, object], ...]] = []
    engine = Lookups(result, 1 << 40, 1 << 40)
    for low, high, fde_type in spans:
        span: list[tuple[int, object]] = []
        for run in engine.runs([(low, high)]):
            found = run.outcome
            if isinstance(found, model.Fre):
                said: object = (0, found.start, found.info, *model.getters(result, found, fde_type))
            else:
                said = CRASH if isinstance(found, model.Crash) else (-1,)
            if not span or span[-1][1] != said:
                span.append((run.start, said))
        changes.append(tuple(span))
    return Answer(0, tuple(lookups), tuple(changes))


def queries(data: bytes, limit: int = 160) -> list[tuple[int, int]]:
    """Section-relative PCs around every function and row, as the format reads them and as 2.47 does,
    each with the FDE type of the format's function there (what a caller passes to 2.47's getters)."""
    pcs: list[int] = []
    try:
        section: Section | None = Section(data, 0)
    except InputError:
        section = None
    for func in section.functions() if section is not None else ():
        if func.error is not None:
            continue
        start = model.relative(func.start_address, 0)
        pcs += [start - 1, start, start + func.size - 1, start + func.size]
        pcs += [start + row.start_offset for row in func.rows]
        if len(pcs) > limit:
            break
    decoded = model.outcome(RELEASES["2.47"], data, "<")
    if isinstance(decoded, model.Decoder):
        for index in range(min(decoded.header.num_fdes, 16)):
            start = decoded.start(index)
            pcs += [start, start + 1, start + decoded.fde(index).size - 1]
    unique = sorted({pc for pc in pcs if -(1 << 31) <= pc < (1 << 31)})[:limit]
    return [(pc, _fde_type_at(section, pc)) for pc in unique]


def _fde_type_at(section: Section | None, pc: int) -> int:
    if section is None or section.version < 3:
        return 0
    try:
        func = section.find_function(pc)
    except InputError:
        return 0
    return func.fde_type if func is not None and func.error is None else 0


SPAN_CAP = 1 << 16
"""The most PCs of one function the tests look up (a damaged size may claim 4 GiB)."""
PAST = 4
"""PCs looked up before each function's start and after its end."""


def every_pc(release: str, data: bytes) -> tuple[list[tuple[int, int]], Spans]:
    """The PCs the release's profile judges (each function's, up to SPAN_CAP of them), and the spans to ask
    the library: the same PCs and a few on either side, each with the format's FDE type."""
    result = model.outcome(RELEASES[release], data, "<")
    if not isinstance(result, model.Decoder):
        return [], []
    try:
        section: Section | None = Section(data, 0)
    except InputError:
        section = None
    judged, asked = [], []
    for index, start, end, _ in domains(result, data, 0):
        low = model.relative(start, 0)
        high = low + min(end - start, SPAN_CAP)
        judged.append((low, high))
        fde_type = 0
        if section is not None and section.version >= 3:
            func = section.function(index)
            fde_type = func.fde_type if func.error is None else 0
        asked.append((low - PAST, high + PAST, fde_type))
    return judged, asked


def outcomes(answer: Answer, spans: Spans) -> list[list[tuple[int, int, object]]]:
    """`answer.spans` as runs (first PC, end PC, answer), a list per span."""
    out = []
    for changes, (_, high, _) in zip(answer.spans, spans, strict=True):
        ends = [pc for pc, _ in changes[1:]] + [high]
        out.append([(pc, end, said) for (pc, said), end in zip(changes, ends, strict=True)])
    return out


def answer_kind(said: object) -> str:
    """A lookup's answer as a verdict tells it: `found`, `fails` or `crash`."""
    if said == CRASH:
        return CRASH
    assert isinstance(said, tuple)
    return "found" if said[0] == 0 else "fails"


def verdict_kinds(verdict: Verdict, low: int, high: int) -> list[tuple[int, int, str]]:
    """What a verdict says of the (section-relative, address 0) PCs in [low, high): runs of kinds."""
    out, pc = [], low
    for failure in sorted(verdict.lookups, key=lambda f: f.start):
        a, b = (
            max(model.relative(failure.start, 0), low),
            min(model.relative(failure.start, 0) + failure.end - failure.start, high),
        )
        if a >= b:
            continue
        if pc < a:
            out.append((pc, a, "found"))
        out.append((a, b, CRASH if failure.error == CRASH else "fails"))
        pc = b
    if pc < high:
        out.append((pc, high, "found"))
    return out


def judge_spans(
    judged: list[tuple[int, int]], truths: list[list[tuple[int, int, str]]], verdict: Verdict, tally: Counter[str]
) -> None:
    """For each span of PCs a verdict judged, and the consumer's own runs of kinds over it (asked a few PCs
    either side): count per kind the PCs where the verdict says the same (`compare`). Every consumer's
    oracle (libsframe's, glibc's) and agreement script tallies this way."""
    for (low, high), truth in zip(judged, truths, strict=True):
        inside = [(max(a, low), min(b, high), k) for a, b, k in truth if a < high and b > low]
        compare(inside, verdict_kinds(verdict, low, high), tally)


def compare(truth: list[tuple[int, int, str]], said: list[tuple[int, int, str]], tally: Counter[str]) -> None:
    """Count, per kind of the library's answer, the PCs where `said` agrees (`kind ok`) and where not."""
    j = 0
    for low, high, real in truth:
        pc = low
        while pc < high:
            while j < len(said) and said[j][1] <= pc:
                j += 1
            if j == len(said) or said[j][0] > pc:
                stop = min(high, said[j][0]) if j < len(said) else high
                tally[f"{real} unjudged"] += stop - pc
                pc = stop
                continue
            stop = min(high, said[j][1])
            tally[f"{real} {'ok' if said[j][2] == real else 'wrong'}"] += stop - pc
            pc = stop
