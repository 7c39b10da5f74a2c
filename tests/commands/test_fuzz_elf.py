"""A structure-aware fuzz test of whole ELF files: every command, no exception but sfview's own.

Hypothesis edits the gcc-built fixtures where a reader is most easily led
astray: fields of the ELF header, of section and program headers (offsets,
sizes, entry sizes, links, counts, flags), and bytes inside `.sframe`,
`.eh_frame`, `.symtab`, `.strtab`, the relocations and the notes, with values
at the edges (0, all ones, past the end of the file, sizes near 2^32 and
2^64). Each case runs one command in this process: a traceback fails the
test; an exit status of 0, 1 or 2 with one `sfview:` line per problem is
what sfview owes any input.

`SFVIEW_FUZZ_EXAMPLES` sets the number of cases (CI: a few thousand).
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import tempfile
from pathlib import Path

import pytest
from conftest import DATA
from elf_edit import EHDR_FIELDS, PHDR, PHDR_FIELDS, SHDR_FIELDS, Elf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfview.cli import main
from sfview.inputs import limits

pytestmark = pytest.mark.slow

BASES = {name: (DATA / name).read_bytes() for name in ("shapes-x86_64-O2", "shapes-x86_64-O2.o", "deep-x86_64")}
SECTIONS = (".sframe", ".eh_frame", ".eh_frame_hdr", ".symtab", ".strtab", ".rela.eh_frame", ".rela.sframe",
            ".note.gnu.build-id", ".text", ".dynsym", ".rela.plt", ".plt", ".debug_frame", ".shstrtab")  # fmt: skip
COMMANDS = (
    ("dump",),
    ("dump", "--json"),
    ("check",),
    ("check", "--json", "--profile", "kernel"),
    ("compare",),
    ("compare", "--json"),
    ("export", "--breakpad"),
    ("stats",),
    ("diff", str(DATA / "shapes-x86_64-O2")),  # the damaged file as B
    ("diff", "--json", str(DATA / "deep-x86_64")),
    ("unwind", "--regs", "pc=0x1139,sp=0x7ffc0000,fp=0x7ffc0010", "--mem", "0x7ffc0000=0x1180"),
    ("unwind", "--cfi", "dwarf", "--regs", "pc=0x1185,sp=0x7ffc0000,fp=0"),
)
EXAMPLES = int(os.environ.get("SFVIEW_FUZZ_EXAMPLES", "2000"))

values = st.one_of(
    st.sampled_from(
        [
            0,
            1,
            2,
            3,
            4,
            7,
            8,
            0x17,
            0x18,
            0x40,
            0xFF,
            0xFFFF,
            0xFFFE,
            0x7FFFFFFF,
            0xFFFFFFFF,
            1 << 32,
            1 << 40,
            (1 << 63) - 1,
            (1 << 64) - 1,
        ]
    ),
    st.integers(0, 1 << 20),
)
"""Field values at the edges a reader must not trust."""

FIELD_BITS = {"H": 16, "I": 32, "Q": 64}
EHDR_KINDS = dict(zip(EHDR_FIELDS, "sHHIQQQIHHHHHH", strict=True))
SHDR_KINDS = dict(zip(SHDR_FIELDS, "IIQQQQIIQQ", strict=True))
PHDR_KINDS = dict(zip(PHDR_FIELDS, "IIQQQQQQ", strict=True))


STDERR_STARTS = ("sfview: ", "note: ")
"""What a line on stderr starts with: sfview's one-line errors, and the notes `unwind` writes after the
backtrace; a traceback starts with neither."""


def _fits(value: int, kind: str) -> int:
    return value & ((1 << FIELD_BITS[kind]) - 1)


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, list[tuple], tuple[str, ...]]:
    """A base file, the edits to make to it, and the command to run on the result."""
    base = draw(st.sampled_from(sorted(BASES)))
    kinds = st.sampled_from(["ehdr", "shdr", "phdr", "bytes", "bytes", "truncate"])
    out = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(kinds)
        if kind == "ehdr":
            field = draw(st.sampled_from([f for f in EHDR_FIELDS if f not in ("e_ident",)]))
            out.append(("ehdr", field, draw(values)))
        elif kind == "shdr":
            out.append(("shdr", draw(st.sampled_from(SECTIONS)), draw(st.sampled_from(SHDR_FIELDS)), draw(values)))
        elif kind == "phdr":
            out.append(("phdr", draw(st.integers(0, 15)), draw(st.sampled_from(PHDR_FIELDS)), draw(values)))
        elif kind == "bytes":
            at = draw(st.integers(0, 4096))
            out.append(("bytes", draw(st.sampled_from(SECTIONS)), at, draw(st.binary(min_size=1, max_size=8))))
        else:
            out.append(("truncate", draw(st.integers(0, 100_000))))
    return base, out, draw(st.sampled_from(COMMANDS))


def damaged(base: str, steps: list[tuple]) -> bytes:
    """The base file with the edits made (an edit that names a section the file lacks is skipped)."""
    elf = Elf.of(BASES[base])
    for step in steps:
        with contextlib.suppress(KeyError, IndexError, ValueError, OverflowError, struct.error):  # not in the file
            if step[0] == "ehdr":
                elf.set_header(**{step[1]: _fits(step[2], EHDR_KINDS[step[1]])})
            elif step[0] == "shdr":
                elf.set_section(step[1], **{step[2]: _fits(step[3], SHDR_KINDS[step[2]])})
            elif step[0] == "phdr":
                at, seg = elf.segments()[step[1]]
                seg[step[2]] = _fits(step[3], PHDR_KINDS[step[2]])
                elf.poke(at, PHDR.pack(*(seg[name] for name in PHDR_FIELDS)))
            elif step[0] == "bytes":
                sec = elf.section(step[1])
                at = sec["sh_offset"] + step[2] % max(sec["sh_size"], 1)
                if at + len(step[3]) <= len(elf.data):
                    elf.poke(at, step[3])
            else:
                del elf.data[max(64, step[1] % (len(elf.data) + 1)) :]
    return elf.bytes()


FOLDER = Path(tempfile.mkdtemp(prefix="sfview-fuzz-"))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("SFVIEW_FUZZ_RANDOM") is None,
)
@given(edits())
def test_no_command_ends_in_a_traceback(case: tuple[str, list[tuple], tuple[str, ...]]) -> None:
    base, steps, command = case
    path = FOLDER / "fuzzed"
    path.write_bytes(damaged(base, steps))
    args = [command[0], str(path), *command[1:]] if command[0] == "unwind" else [*command, str(path)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    limits.max_size = limits.DEFAULT_MAX_SIZE
    assert code in (0, 1, 2), (code, err.getvalue())
    for line in err.getvalue().splitlines():
        assert line.startswith(STDERR_STARTS), line


CORES = {name: (DATA / f"{name}.core").read_bytes() for name in ("deep-x86_64", "deep-aarch64")}
UNWINDS = (("--explain",), ("--json",), ("--cfi", "dwarf"), ("--cfi", "both"), ("--cfi", "sframe"), ())
CORE_EXAMPLES = max(EXAMPLES // 8, 50)


@st.composite
def core_edits(draw: st.DrawFn) -> tuple[str, list[tuple], tuple[str, ...]]:
    """A core, edits to its header, program headers, notes (NT_PRSTATUS, NT_FILE, NT_AUXV) or length."""
    base = draw(st.sampled_from(sorted(CORES)))
    out = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["ehdr", "phdr", "notes", "notes", "truncate"]))
        if kind == "ehdr":
            out.append(("ehdr", draw(st.sampled_from(["e_phoff", "e_phnum", "e_phentsize", "e_shoff"])), draw(values)))
        elif kind == "phdr":
            out.append(("phdr", draw(st.integers(0, 40)), draw(st.sampled_from(PHDR_FIELDS)), draw(values)))
        elif kind == "notes":
            out.append(("notes", draw(st.integers(0, 1 << 16)), draw(st.binary(min_size=1, max_size=8))))
        else:
            out.append(("truncate", draw(st.integers(0, 1 << 22))))
    return base, out, draw(st.sampled_from(UNWINDS))


def damaged_core(base: str, steps: list[tuple]) -> bytes:
    elf = Elf.of(CORES[base])
    notes = next(seg for _, seg in elf.segments() if seg["p_type"] == 4)  # PT_NOTE, before any edit
    for step in steps:
        with contextlib.suppress(KeyError, IndexError, ValueError, OverflowError, struct.error):
            if step[0] == "ehdr":
                elf.set_header(**{step[1]: _fits(step[2], EHDR_KINDS[step[1]])})
            elif step[0] == "phdr":
                at, seg = elf.segments()[step[1]]
                seg[step[2]] = _fits(step[3], PHDR_KINDS[step[2]])
                elf.poke(at, PHDR.pack(*(seg[name] for name in PHDR_FIELDS)))
            elif step[0] == "notes":
                elf.poke(notes["p_offset"] + step[1] % notes["p_filesz"], step[2])
            else:
                del elf.data[max(64, step[1] % (len(elf.data) + 1)) :]
    return elf.bytes()


@settings(
    max_examples=CORE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("SFVIEW_FUZZ_RANDOM") is None,
)
@given(core_edits())
def test_no_unwind_of_a_damaged_core_ends_in_a_traceback(case: tuple[str, list[tuple], tuple[str, ...]]) -> None:
    base, steps, options = case
    core = FOLDER / "fuzzed.core"
    core.write_bytes(damaged_core(base, steps))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["unwind", str(DATA / base), "--core", str(core), *options])
    assert code in (0, 2), (code, err.getvalue())
    for line in err.getvalue().splitlines():
        assert line.startswith(STDERR_STARTS), line


PROGRAM_PARTS = (".sframe", ".eh_frame", ".eh_frame_hdr", ".symtab", ".strtab", ".dynsym", ".dynstr")


@st.composite
def program_edits(draw: st.DrawFn) -> tuple[str, list[tuple], tuple[str, ...]]:
    """A program damaged where the unwinder reads it (its SFrame, its CFI and the table that finds it,
    its names) and walked on its own sound core: a CIE's RA column, an `.eh_frame_hdr` entry pointing
    outside `.eh_frame`, a row keeping the RA in its register each ended in a traceback or for ever."""
    base = draw(st.sampled_from(sorted(CORES)))
    part, at, raw = st.sampled_from(PROGRAM_PARTS), st.integers(0, 4096), st.binary(min_size=1, max_size=4)
    steps = [("bytes", draw(part), draw(at), draw(raw)) for _ in range(draw(st.integers(1, 3)))]
    return base, steps, draw(st.sampled_from(UNWINDS))


@settings(
    max_examples=CORE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("SFVIEW_FUZZ_RANDOM") is None,
)
@given(program_edits())
def test_no_unwind_of_a_damaged_program_on_its_core_ends_in_a_traceback(case: tuple[str, list[tuple], tuple]) -> None:
    base, steps, options = case
    program = FOLDER / base
    program.write_bytes(damaged_program(base, steps))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["unwind", str(program), "--core", str(DATA / f"{base}.core"), *options])
    assert code in (0, 2), (code, err.getvalue())
    for line in err.getvalue().splitlines():
        assert line.startswith(STDERR_STARTS), line


def damaged_program(base: str, steps: list[tuple]) -> bytes:
    """The program of a core fixture with bytes of its sections replaced (`damaged`'s byte edits)."""
    elf = Elf.of((DATA / base).read_bytes())
    for _, name, at, raw in steps:
        with contextlib.suppress(KeyError):
            sec = elf.section(name)
            at = sec["sh_offset"] + at % max(sec["sh_size"], 1)
            if at + len(raw) <= len(elf.data):
                elf.poke(at, raw)
    return elf.bytes()
