"""Shared test helpers: where the fixtures are, and running sfview as a user does."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from sfview.cli import main

DATA = Path(__file__).parent / "data"
SECTIONS = sorted((DATA / "sections").glob("*.json"))
ELF_FIXTURES = sorted(
    p.with_name(p.name.removesuffix(".readelf-sframe.txt")) for p in DATA.glob("*.readelf-sframe.txt")
)


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str, capsys: pytest.CaptureFixture[str]) -> Result:
    """Run `sfview ARGS` in this process (fast), capturing what it prints."""
    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def run_process(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m sfview ARGS` as a separate process, as a shell would."""
    return subprocess.run([sys.executable, "-m", "sfview", *args], capture_output=True, text=True, timeout=120)


def load_section_fixture(path: Path) -> tuple[bytes, int, str]:
    """A binutils section fixture: its bytes, load address, and objdump's dump from the title on."""
    fixture = json.loads(path.read_text())
    text = fixture["groundtruth"]
    return bytes(fixture["content"]), fixture["section_base"], text[text.index("Contents of the SFrame section") :]


def fuzzed_section(seed: int, folder: Path) -> Path:
    """A binutils section with a few random bytes changed (the magic kept), written to `folder`."""
    rng = random.Random(seed)
    content = bytearray(load_section_fixture(SECTIONS[seed % len(SECTIONS)])[0])
    for _ in range(rng.randint(1, 6)):
        content[rng.randrange(len(content))] = rng.randrange(256)
    path = folder / "fuzzed.sframe"
    path.write_bytes(b"\xe2\xde" + bytes(content[2:]))
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    return lambda *args: run_cli(*args, capsys=capsys)
