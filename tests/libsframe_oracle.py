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
from dataclasses import dataclass
from pathlib import Path

import pytest
from toolchains import toolchain

from sfview.consumers import libsframe as model
from sfview.consumers.libsframe_releases import CODES, RELEASES
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

    def ask(self, data: bytes, queries: list[tuple[int, int]]) -> Answer:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        request = struct.pack("<I", len(data)) + data + struct.pack("<I", len(queries))
        request += b"".join(struct.pack("<qI", pc, fde_type) for pc, fde_type in queries)
        try:
            proc.stdin.write(request)
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        decode: int | str = CRASH
        lookups: list[object] = []
        while True:
            line = proc.stdout.readline().split()
            if not line:
                break
            if line[0] == b"E":
                return Answer(decode, tuple(lookups))
            if line[0] == b"D":
                decode = int(line[1])
            else:
                found, start, info, *values = map(int, line[1:])
                pairs = ((values[0], values[1]), (values[2], values[3]), (values[4], values[5]))
                lookups.append((found, start, info, *pairs) if found == 0 else (found,))
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


def predict(release: str, data: bytes, queries: list[tuple[int, int]]) -> Answer:
    """What sfview's model says the release does, in the harness's terms (on this little-endian host)."""
    rel = RELEASES[release]
    result = model.outcome(rel, data, "<")
    if isinstance(result, model.Crash):
        return Answer(CRASH)
    if isinstance(result, model.Refusal):
        return Answer(CODES[result.error])
    lookups: list[object] = []
    for pc, fde_type in queries:
        try:
            row = model.find_fre(result, pc)
        except model.Miss:
            lookups.append((-1,))
            continue
        except model.Crash:
            lookups.append(CRASH)
            break
        lookups.append((0, row.start, row.info, *model.getters(result, row, fde_type)))
    return Answer(0, tuple(lookups))


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
