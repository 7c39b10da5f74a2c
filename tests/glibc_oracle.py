"""glibc's own SFrame reader and backtrace() step, run on sections in a child process, beside sfview's model.

`glibc_harness.c` is compiled here around glibc 2.43's sysdeps/generic/sframe-read.c and sframe.c,
taken from Debian's glibc-source package (tools/toolchains.sh unpacks those files into the
toolchains cache: no glibc code is in the repository). It answers, for each section, what
`__sframe_decode` returned and, at every PC of the spans asked, what `__stacktrace_sframe` did
(a frame, or 0: the fallback to DWARF), `__sframe_find_fre`'s answer and the getters in the
step's order, or `crash` where glibc read past the section. `predict` gives the same words from
`sfview.consumers.glibc`.
"""

from __future__ import annotations

import functools
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from toolchains import cache_dir

from sfview.consumers import glibc as model
from sfview.consumers.libsframe import Crash, Miss

HARNESS = Path(__file__).with_name("glibc_harness.c")
SHIM = Path(__file__).with_name("glibc_shim")
RELEASE = "2.43"
FP_ABOVE_SP = 0x10000
"""The harness's FP less its SP: a CFA computed from FP is this much above one computed from SP."""
CRASH = "crash"
SPAN_CAP = 1 << 16
"""The most PCs of one function asked (a damaged size may claim 4 GiB)."""
PAST = 4
"""PCs asked before each function's start and after its end."""


@dataclass(frozen=True)
class Answer:
    """`__sframe_decode`'s return (0, 5, or `crash`) and, per span, (first PC, words) where the answer changes."""

    decode: int | str
    spans: tuple[tuple[tuple[int, str], ...], ...] = ()


@functools.cache
def harness(folder: str) -> Path:
    """The harness built around glibc's source, or a skip saying what is missing."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed: the glibc harness cannot be built")
    cache = cache_dir()
    source = cache / f"glibc-{RELEASE}" / "sysdeps" / "generic" if cache else None
    if source is None or not (source / "sframe-read.c").exists():
        pytest.skip(f"glibc {RELEASE}'s source (Debian's glibc-source) is not unpacked: run tools/toolchains.sh")
    out = Path(folder) / "glibc_harness"
    subprocess.run(["gcc", "-O2", "-I", str(SHIM), "-I", str(source), "-o", str(out), str(HARNESS)], check=True)
    return out


class Glibc:
    """glibc's reader in a child process."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.proc: subprocess.Popen[bytes] | None = None

    def ask(self, data: bytes, spans: list[tuple[int, int]]) -> Answer:
        if self.proc is None:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        request = struct.pack("<I", len(data)) + data + struct.pack("<I", len(spans))
        request += b"".join(struct.pack("<qq", low, high) for low, high in spans)
        proc.stdin.write(request)
        proc.stdin.flush()
        decode: int | str = CRASH
        changes: list[list[tuple[int, str]]] = []
        while True:
            line = proc.stdout.readline().decode()
            if not line:
                raise RuntimeError(f"the glibc harness stopped with status {proc.wait()}")
            kind, _, rest = line.strip().partition(" ")
            if kind == "E":
                return Answer(decode, tuple(map(tuple, changes)))
            if kind == "D":
                decode = CRASH if rest == CRASH else int(rest)
                continue
            pc, _, words = rest.partition(" ")
            if kind == "B":
                changes.append([])
            changes[-1].append((int(pc), words))

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


def words(answer: model.Answer) -> str:
    """The model's answer at a PC in the harness's words."""
    if isinstance(answer, Crash):
        return CRASH
    if isinstance(answer, Miss):
        return "0 0 0 5"
    frame = answer.frame
    walk = "0 0 0" if frame is None else f"1 {frame.cfa + (0 if frame.base else FP_ABOVE_SP)} {int(frame.fp is None)}"
    said = [walk, "0", str(answer.start), str(answer.info), *map(str, answer.cfa)]
    for getter in (answer.ra, answer.fp):
        if getter is not None:
            said += map(str, getter)
    return " ".join(said)


def every_pc(data: bytes) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The PCs the profile judges (each function's, up to SPAN_CAP of them) and the spans to ask: the same
    and a few on either side; none where glibc refuses the section."""
    try:
        reader = model.Reader(data)
    except (model.Refusal, Crash):
        return [], []
    judged, asked = [], []
    for _, start, end, _ in model.domains(reader, data, 0):  # type: ignore[arg-type]
        low = model.relative(start, 0)
        high = low + min(end - start, SPAN_CAP)
        judged.append((low, high))
        asked.append((low - PAST, high + PAST))
    return judged, asked


def predict(data: bytes, spans: list[tuple[int, int]]) -> Answer:
    """What the model says glibc does with `data`, in the harness's terms."""
    try:
        reader = model.Reader(data)
    except model.Refusal:
        return Answer(5)
    except Crash:
        return Answer(CRASH)
    engine = model.Lookups(reader, 1 << 40, 1 << 40)
    out = []
    for low, high in spans:
        span: list[tuple[int, str]] = []
        for a, _, answer in engine.runs(low, high):
            said = words(answer)
            if not span or span[-1][1] != said:
                span.append((a, said))
        out.append(tuple(span))
    return Answer(0, tuple(out))


def kind(said: str) -> str:
    """A harness answer as a verdict tells it: `found` (a frame), `fails` (falls back) or `crash`."""
    if said == CRASH:
        return CRASH
    return "found" if said.startswith("1 ") else "fails"
