"""Binutils releases for the tests: this machine's own, and the newer ones `tools/toolchains.sh` unpacks.

A `Toolchain` is one binutils release for one target: the folder to give gcc with `-B`, its
`readelf` (the reference for what that release wrote), and the gcc that drives it. Tests take
them from `toolchain(release, target)`, which skips, saying why, only when the release cannot be
had: on CI `.ci/run` fetches them first, so none skips there.
"""

from __future__ import annotations

import enum
import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "toolchains.sh"
GCC = {"x86_64": "gcc", "aarch64": "aarch64-linux-gnu-gcc", "s390x": "s390x-linux-gnu-gcc"}
"""The C compiler for each target (Debian's gcc and its cross compilers)."""
SUITES = {"2.44": "trixie", "2.47": "sid"}
"""Which Debian suite the tools script takes each newer release from."""
RELEASES = ["2.40", "2.44", "2.47"]
"""2.40 (this machine's own: SFrame version 1), 2.44 (version 2), 2.47 (version 3, s390x)."""
SFRAME_VERSION = {"2.40": 1, "2.44": 2, "2.47": 3}


@dataclass(frozen=True)
class Toolchain:
    release: str
    target: str
    bin: Path | None
    """The folder of wrappers for `gcc -B`; None for this machine's own binutils."""
    gcc: str
    suite_dir: Path | None

    def compile(self, *args: str | Path, cwd: Path | None = None) -> None:
        """Run gcc with this release's assembler and linker and `--gsframe`."""
        prefix = ["-B", f"{self.bin}/"] if self.bin else []
        subprocess.run([self.gcc, *prefix, "-Wa,--gsframe", *map(str, args)], check=True, cwd=cwd)

    def tool(self, name: str) -> str:
        """This release's `readelf`, `objdump`, `objcopy`... for this target."""
        if self.bin:
            return str(self.bin / name)
        prefix = "" if self.target == "x86_64" else f"{self.target}-linux-gnu-"
        return shutil.which(prefix + name) or shutil.which(name) or name

    def readelf_sframe(self, path: Path) -> str:
        return subprocess.run(
            [self.tool("readelf"), "--sframe", str(path)], capture_output=True, text=True, check=True
        ).stdout

    @property
    def libsframe(self) -> Path | None:
        return self.suite_dir / "libsframe.so" if self.suite_dir else None


@functools.cache
def cache_dir() -> Path | None:
    """The unpacked releases: fetched by the tools script if they are not there yet; None if it failed."""
    try:
        out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        if os.environ.get("CI"):
            raise RuntimeError(f"tools/toolchains.sh failed on CI:\n{out.stderr}")
        return None
    return Path(out.stdout.strip().splitlines()[-1])


def toolchain(release: str, target: str) -> Toolchain:
    """One release for one target, or a skip that says what is missing."""
    gcc = shutil.which(GCC[target])
    if gcc is None:
        pytest.skip(f"{GCC[target]} is not installed (Debian: gcc-{target.replace('_', '-')}-linux-gnu)")
    if release == "2.40":
        if target == "s390x":
            pytest.skip("binutils 2.40 writes no SFrame for s390x")
        tc = Toolchain(release, target, None, gcc, None)
        if shutil.which(tc.tool("readelf")) is None:
            pytest.skip(f"this machine's binutils for {target} is not installed")
        return tc
    cache = cache_dir()
    if cache is None:
        pytest.skip(f"binutils {release} could not be fetched from Debian's archive (tools/toolchains.sh)")
    suite = cache / SUITES[release]
    if target == "s390x" and release == "2.44":
        pytest.skip("binutils 2.44 writes no SFrame for s390x")
    return Toolchain(release, target, suite / "bin" / target, gcc, suite)


CLANG_SFRAME = "-Wa,--gsframe,--allow-experimental-sframe"
"""How clang is asked for SFrame: 22 and 23 refuse `--gsframe` without the second flag (21 has neither)."""


class Linker(enum.Enum):
    """A linker other than GNU ld, by the name `gcc -fuse-ld=` takes."""

    LLD = "lld"
    MOLD = "mold"


@dataclass(frozen=True)
class Llvm:
    """The other producers `tools/toolchains.sh` unpacks from sid: clang, and lld and mold as `gcc -B` folders."""

    clang: Path
    lld: Path
    """The folder with `ld.lld`, for `gcc -B LLD/ -fuse-ld=lld`."""
    mold: Path
    """The folder with `ld.mold`, for `gcc -B MOLD/ -fuse-ld=mold`."""
    version: str

    def compile(self, *args: str | Path) -> str:
        """Run clang with SFrame asked for; what it says on stderr (its warnings)."""
        done = subprocess.run(
            [str(self.clang), CLANG_SFRAME, *map(str, args)], check=True, capture_output=True, text=True
        )
        return done.stderr

    def link(self, linker: Linker, *args: str | Path) -> None:
        """Link with this machine's gcc driver and `linker`."""
        folder = {Linker.LLD: self.lld, Linker.MOLD: self.mold}[linker]
        subprocess.run(["gcc", "-B", f"{folder}/", f"-fuse-ld={linker.value}", *map(str, args)], check=True)


def llvm() -> Llvm:
    """clang, lld and mold, or a skip that says why they cannot be had."""
    cache = cache_dir()
    if cache is None or not (cache / "llvm" / "VERSION").exists():
        pytest.skip("clang, lld and mold could not be fetched from Debian's archive (tools/toolchains.sh)")
    folder = cache / "llvm"
    version = (folder / "VERSION").read_text().strip()
    return Llvm(folder / "bin" / "clang", folder / "bin" / "lld", folder / "bin" / "mold", version)
