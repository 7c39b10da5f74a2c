"""Compressed sections that inflate to far more than they hold: walked within what they describe, inflated once.

Each file is a fixture with one section replaced by a zstd stream built here
(`elf_edit.Elf.compress`): a `.plt` of a quarter of a million entries, a build-id
section of empty notes, a `.dynsym` read by two readers. Real files compress
no allocated section; these are what an adversary writes.
"""

from __future__ import annotations

import io
import mmap
import shutil
import struct
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pytest
import zstandard
from conftest import DATA, PEAK
from elf_edit import Elf

from sfview.errors import InputError
from sfview.inputs.elf.image import ELFCOMPRESS_ZLIB, NOTES_SEARCHED, SPILL_CHUNK, SPILL_SIZE, ElfImage, inflate
from sfview.inputs.elf.pyelftools_view import open_view, section_bytes
from sfview.inputs.plt import plt_symbols

PROGRAM = DATA / "shapes-x86_64-O2"
ZSTD = 2


def compressed(section: str, inflated: bytes, raw: bytes | None = None) -> bytes:
    """The program with `section` a zstd stream of `inflated`."""
    elf = Elf.of(raw if raw is not None else PROGRAM.read_bytes())
    stream = zstandard.ZstdCompressor(level=3).compress(inflated)
    out = elf.compress(section, ZSTD, stream)
    header = out.section(section)
    # `compress` writes the section's own size as the inflated size: this stream's is given instead
    struct.pack_into("<Q", out.data, header["sh_offset"] + 8, len(inflated))
    return out.bytes()


def test_a_plt_is_walked_within_the_code_the_file_maps() -> None:
    """A `.plt` inflating to 262,144 entries that each jump through `printf`'s GOT slot: named only where
    the executable segment maps code (it named every one)."""
    image = ElfImage.of(PROGRAM.open("rb"))
    plt = image.section(".plt")
    slot = 0x16000  # `.rela.plt`'s JUMP_SLOT (readelf -r): printf
    entries = b"".join(
        b"\xff\x25" + struct.pack("<i", slot - (plt.addr + 16 * i + 6)) + bytes(10) for i in range(1 << 18)
    )
    elf = ElfImage.of(io.BytesIO(compressed(".plt", entries)))
    text = next(s for s in elf.segments if s.type == 1 and s.flags & 1 and s.vaddr <= plt.addr < s.vaddr + s.filesz)
    names = [symbol for symbol in plt_symbols(elf) if symbol.name == "printf@plt"]
    assert len(names) > 1000  # the inflated entries are read
    assert len(names) <= (text.vaddr + text.filesz - plt.addr) // 16


def test_a_build_id_section_of_empty_notes_is_searched_so_far() -> None:
    """4 MiB of zeros: 350,000 empty notes, then 50 section headers that share the stream. The search reads
    the first 4,096 of the one stretch and names where it stopped (it read every note of every header)."""
    raw = compressed(".note.gnu.build-id", bytes(4 << 20))
    elf = Elf.of(raw)
    notes = elf.section(".note.gnu.build-id")
    for name in (".note.gnu.property", ".note.ABI-tag"):
        elf.set_section(name, sh_offset=notes["sh_offset"], sh_size=notes["sh_size"], sh_flags=notes["sh_flags"])
    image = ElfImage.of(io.BytesIO(elf.bytes()))
    with pytest.raises(
        InputError, match=r"^no build-id in the first 4096 notes: the search stops in \.note\.gnu\.property$"
    ):
        image.build_id()


def test_note_sections_over_one_run_of_empty_notes_are_searched_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 note sections each starting 12 bytes after the last, over 48 KB of zeros: each was searched for
    4,096 empty notes (60,000 of them made `export` and `unwind` run past a minute). The notes read in all
    are bounded, and where the search stopped is named."""
    elf = Elf.of((DATA / "shapes-x86_64-O2").read_bytes())
    header = elf.header()
    table = bytes(elf.data[header["e_shoff"] : header["e_shoff"] + header["e_shnum"] * header["e_shentsize"]])
    zeros = (len(elf.data) + 15) & ~15
    extra = 2000
    elf.data += bytes(zeros - len(elf.data)) + bytes(4096 * 12 + extra * 12)
    notes = b"".join(
        struct.pack("<IIQQQQIIQQ", 0, 7, 0, 0, zeros + 12 * i, 4096 * 12, 0, 0, 4, 0) for i in range(extra)
    )
    offset = (len(elf.data) + 7) & ~7
    elf.data += bytes(offset - len(elf.data)) + table + notes
    elf.set_header(e_shoff=offset, e_shnum=header["e_shnum"] + extra)
    elf.set_section(".note.gnu.build-id", sh_type=1)  # no build-id to find
    read = 0
    every = ElfImage.notes

    def counted(image: ElfImage, data: bytes):
        nonlocal read
        for note in every(image, data):
            read += 1
            assert read <= 2 * NOTES_SEARCHED, "the search went on"
            yield note

    monkeypatch.setattr(ElfImage, "notes", counted)
    with pytest.raises(
        InputError, match=r"no build-id in the first 4096 notes: the search stops (in|before) an unnamed section"
    ):
        ElfImage.of(io.BytesIO(elf.bytes())).build_id()


def test_one_stream_is_inflated_once() -> None:
    """The image's reader and pyelftools' view of one compressed section get the same bytes, not a copy each."""
    raw = compressed(".comment", bytes(1 << 20))
    image = ElfImage.of(io.BytesIO(raw))
    ours = image.section_bytes(image.section(".comment"))
    theirs = section_bytes(open_view(image).get_section_by_name(".comment"))
    assert len(ours) == 1 << 20 and theirs is ours


@pytest.mark.parametrize(
    ("section", "command"),
    [(".dynsym", ["check"]), (".sframe", ["unwind", "--regs", "pc=0x1000,sp=0x7000"]), (".eh_frame", ["compare"])],
    ids=["check-dynsym", "unwind-sframe", "compare-eh_frame"],
)
def test_a_large_inflation_is_not_held_in_memory(tmp_path: Path, section: str, command: list[str]) -> None:
    """`check` on a `.dynsym`, `unwind` on an `.sframe`, `compare` on an `.eh_frame` (64 MiB of zero
    terminators, each looked through), inflating to 64 MiB from a few kilobytes: their peak resident
    memory grows by less than ten times the file and a constant, not by the inflation (the inflation
    went to memory, once: 275 MB for 256 MiB; twice before that). What each says is what it says of the
    stream held in memory (the same bytes, read through a temporary file's mapping)."""
    size = 64 << 20
    plain, inflated = tmp_path / "plain", tmp_path / "inflated"
    plain.write_bytes(PROGRAM.read_bytes())
    inflated.write_bytes(compressed(section, bytes(size)))
    peaks, said = [], []
    for path in (plain, inflated):
        argv = [command[0], str(path), *command[1:]]
        done = subprocess.run([sys.executable, "-c", PEAK, *argv], capture_output=True, text=True)
        assert "Traceback" not in done.stderr
        peaks.append(int(done.stderr.rsplit("VmHWM ", 1)[1].split()[0]) * 1024)
        said.append(done.stdout + done.stderr.rsplit("VmHWM ", 1)[0])
    assert peaks[1] - peaks[0] < 10 * inflated.stat().st_size + (16 << 20), f"peaks {peaks}"
    if section == ".sframe":  # zeros: no SFrame magic, found where the section starts
        assert "section offset 0x0 (file offset" in said[1] and "bad magic 00 00" in said[1]


def test_a_large_inflation_is_inflated_a_chunk_at_a_time() -> None:
    """A stream past `SPILL_SIZE` is inflated into a temporary file a chunk at a time, and read through its
    mapping as bytes are; what the heap holds meanwhile is a chunk or two, not the inflation. A stream
    that gives more or less than its header says is refused as before."""
    size = SPILL_SIZE + (4 << 20)
    data = bytes(range(256)) * (size // 256)
    stream = zstandard.ZstdCompressor(level=3).compress(data)
    tracemalloc.start()
    try:
        out = inflate(ZSTD, size, stream)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(out, mmap.mmap) and len(out) == size
    assert out[:256] == data[:256] and out[size - 3 :] == data[size - 3 :] and out.find(b"\xff\x00", 1000) == 1023
    assert peak < 3 * SPILL_CHUNK + len(stream) + 100_000, f"{peak} bytes on the heap while inflating {size}"
    deflated = zlib.compress(data)
    assert inflate(ELFCOMPRESS_ZLIB, size, deflated)[size - 256 :] == data[:256]
    with pytest.raises(InputError, match=rf"^it inflates to {size} bytes, but its compression header says {size + 1}$"):
        inflate(ELFCOMPRESS_ZLIB, size + 1, deflated)
    with pytest.raises(InputError, match=rf"^it inflates to {size} bytes, but its compression header says {size - 1}$"):
        inflate(ELFCOMPRESS_ZLIB, size - 1, deflated)


def test_a_compressed_relocation_section_is_read_inflated(cli, tmp_path: Path) -> None:
    """An object whose `.rela.eh_frame` is zlib-compressed: its relocations are read from the inflated
    bytes, the offsets readelf gives for the plain object's (they were read from the compressed bytes:
    "Unsupported relocation type: 67108848"), and `compare` pairs as it does on the plain object."""
    plain = DATA / "shapes-x86_64-O2.o"
    packed = tmp_path / "packed.o"
    packed.write_bytes(Elf.of(plain.read_bytes()).compress(".rela.eh_frame").bytes())
    view = open_view(ElfImage.of(packed.open("rb")))
    ours = [r["r_offset"] for r in view.get_section_by_name(".rela.eh_frame").iter_relocations()]
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed: it is the reference for the relocations")
    dump = subprocess.run(["readelf", "-rW", str(plain)], capture_output=True, text=True, check=True).stdout
    section = dump.split("'.rela.eh_frame'", 1)[1].split("\n\n", 1)[0]
    theirs = [int(line.split()[0], 16) for line in section.splitlines()[2:] if line.strip()]
    assert ours == theirs and ours
    assert cli("compare", str(packed)).out.splitlines()[-1] == cli("compare", str(plain)).out.splitlines()[-1]
