"""Binaries built here, now: `sfview dump` must print what this machine's readelf prints.

Needs gcc with an assembler that knows `--gsframe` (binutils 2.40+) and readelf;
AArch64 builds need `aarch64-linux-gnu-gcc`. Each skips, saying why, without them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA

SOURCES = DATA / "src"
VARIANTS = {
    "O0": ["-O0"],
    "O1": ["-O1"],
    "O2": ["-O2"],
    "O3-unrolled": ["-O3", "-funroll-loops"],
    "Os": ["-Os"],
    "O2-frame-pointer": ["-O2", "-fno-omit-frame-pointer"],
    "O2-pie": ["-O2", "-fPIE", "-pie"],
    "O2-no-pie": ["-O2", "-fno-pie", "-no-pie"],
    "O2-shared": ["-O2", "-fPIC", "-shared"],
    "O2-object": ["-O2", "-c"],
}


def _compiler(name: str) -> str:
    gcc = shutil.which(name)
    if gcc is None:
        pytest.skip(f"{name} is not installed")
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    probe = subprocess.run(
        [gcc, "-Wa,--gsframe", "-c", "-x", "c", "-", "-o", "/dev/null"],
        input="int f(void){return 0;}",
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"{name}'s assembler does not emit SFrame (-Wa,--gsframe): {probe.stderr.strip()}")
    return gcc


def _build_and_compare(cli, gcc: str, source: str, flags: list[str], out: Path) -> str:
    subprocess.run([gcc, "-Wa,--gsframe", *flags, str(SOURCES / source), "-o", str(out)], check=True)
    expected = subprocess.run(["readelf", "--sframe", str(out)], capture_output=True, text=True, check=True).stdout
    result = cli("dump", str(out))
    assert (result.code, result.err) == (0, "")
    assert result.out == expected
    return result.out


@pytest.mark.parametrize("source", ["shapes.c", "deep.c"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_x86_64_builds(cli, tmp_path: Path, source: str, variant: str) -> None:
    _build_and_compare(cli, _compiler("gcc"), source, VARIANTS[variant], tmp_path / f"{source}-{variant}")


@pytest.mark.parametrize("source", ["shapes.c", "deep.c"])
@pytest.mark.parametrize("variant", ["O0", "O2", "O2-frame-pointer", "O2-shared", "O2-object"])
def test_aarch64_builds(cli, tmp_path: Path, source: str, variant: str) -> None:
    gcc = _compiler("aarch64-linux-gnu-gcc")
    _build_and_compare(cli, gcc, source, VARIANTS[variant], tmp_path / f"{source}-{variant}")


def test_aarch64_signed_return_addresses(cli, tmp_path: Path) -> None:
    """Pointer authentication with key B: `pauth = B key` and `[s]` on signed rows."""
    gcc = _compiler("aarch64-linux-gnu-gcc")
    out = _build_and_compare(cli, gcc, "shapes.c", ["-O2", "-mbranch-protection=pac-ret+leaf+b-key"], tmp_path / "pac")
    assert "pauth = B key" in out
    assert "[s]" in out


@pytest.mark.parametrize("flags", [0x0, 0x2, 0x3])
def test_flag_combinations_print_as_readelf_does(cli, tmp_path: Path, flags: int) -> None:
    """binutils 2.40 prints only the last flag when SORTED and FRAME_POINTER are both set."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    data = bytearray((DATA / "shapes-x86_64-O2").read_bytes())
    at = data.find((DATA / "shapes-x86_64-O2.sframe").read_bytes()[:28])
    data[at + 3] = flags
    patched = tmp_path / f"flags-{flags}"
    patched.write_bytes(bytes(data))
    expected = subprocess.run(["readelf", "--sframe", str(patched)], capture_output=True, text=True, check=True).stdout
    assert cli("dump", str(patched)).out == expected
