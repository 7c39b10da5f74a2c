"""Binutils releases for the tests: this machine's own, and the newer ones `tools/toolchains.sh` unpacks.

A `Toolchain` is one binutils release for one target: the folder to give gcc with `-B`, its
`readelf` (the reference for what that release wrote), and the gcc that drives it. Tests take
them from `toolchain(release, target)`, which skips, saying why, only when the release cannot be
had: on CI `.ci/run` fetches them first, so none skips there.
"""

from __future__ import annotations

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
