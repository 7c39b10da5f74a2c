"""`sfview perf` on profiles built to cost: work and memory bounded by the profile's bytes, never a traceback.

The profiles are written by the writer of tests/commands/test_perf_bad_input.py
(one field damaged there; here, records repeated, truncated and lying): one
file mapped under thousands of places, forks that copy a parent of many
mappings, a profile cut at every record boundary, sizes that lie.
"""

from __future__ import annotations

import bisect
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, PEAK
from hypothesis import given, settings
from hypothesis import strategies as st
from test_perf_bad_input import REGS_X86, _attr, _perf_data, _sample

from sfview.errors import InputError
from sfview.inputs.core import Memory
from sfview.inputs.perf_data import PerfData
from sfview.profiling import address_space
from sfview.profiling.profile import Profile

PROGRAM = str((DATA / "shapes-x86_64-O2").resolve())


def _record(kind: int, body: bytes, misc: int = 0) -> bytes:
    return struct.pack("<IHH", kind, misc, 8 + len(body)) + body


def _mmap2(pid: int, start: int, path: str, length: int = 0x1000, prot: int = 5) -> bytes:
    name = path.encode() + b"\0"
    name += bytes(-len(name) % 8)
    return _record(10, struct.pack("<IIQQQIIQQII", pid, pid, start, length, 0, 0, 0, 0, 0, prot, 2) + name)


def _fork(pid: int, parent: int) -> bytes:
    return _record(7, struct.pack("<IIIIQ", pid, parent, pid, parent, 0))


def _comm(pid: int, name: bytes) -> bytes:
    name += b"\0" + bytes(-(len(name) + 1) % 8)
    return _record(3, struct.pack("<II", pid, pid) + name)


def _walk_all(path: Path) -> int:
    """Every record of the profile read and every sample unwound, in this process; the samples."""
    with PerfData(str(path)) as perf:
        return sum(1 for _ in Profile(perf).walks())


def test_one_file_mapped_at_many_places_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 mappings of one program (each at its own place, in descending order) opened it 2,000 times:
    277 MB and 3.4 s from a 240 KB profile. One file is read once, each mapping a module of it."""
    from sfview.document import Document

    opened: list[str] = []
    real_open = Document.open.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        Document, "open", classmethod(lambda cls, p, *a, **k: (opened.append(p), real_open(cls, p, *a, **k))[1])
    )
    n = 300
    path = tmp_path / "perf.data"
    path.write_bytes(
        _perf_data(b"".join(_mmap2(7, 0x10000000 + (n - i) * 0x10000, PROGRAM) for i in range(n)) + _sample())
    )
    with PerfData(str(path)) as perf:
        profile = Profile(perf)
        assert sum(1 for _ in profile.walks()) == 1
        space = profile.spaces[7]
    assert opened == [PROGRAM, PROGRAM]  # its module, and the kernel's reader's view of its section
    assert len(space.mapped) == n and all(m.module is not None for m in space.mapped)
    assert sorted({m.module.bias for m in space.mapped}) == [m.start for m in space.mapped]  # type: ignore[union-attr]


def test_one_file_mapped_many_times_keeps_its_memory(tmp_path: Path) -> None:
    """The same shape measured in a process of its own: its peak stays within ten times the profile."""
    n = 2000
    path = tmp_path / "perf.data"
    path.write_bytes(
        _perf_data(b"".join(_mmap2(7, 0x10000000 + (n - i) * 0x10000, PROGRAM) for i in range(n)) + _sample())
    )
    small = tmp_path / "small.data"
    small.write_bytes(_perf_data(_mmap2(7, 0x10000000, PROGRAM) + _sample()))

    def peak(profile: Path) -> int:
        done = subprocess.run(
            [sys.executable, "-c", PEAK, "perf", "--jobs", "1", str(profile)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return int(done.stderr.split("VmHWM")[-1].split()[0]) << 10

    assert peak(path) - peak(small) < 10 * path.stat().st_size


@pytest.mark.parametrize("order", ["ascending", "descending", "overlapping"])
def test_mappings_replace_what_they_overlap(tmp_path: Path, order: str) -> None:
    """The mappings as bisection keeps them are the mappings a list filtered at every record keeps."""
    starts = {
        "ascending": [0x1000 * i for i in range(50)],
        "descending": [0x1000 * (50 - i) for i in range(50)],
        "overlapping": [(i * 0x2700) % 0x30000 for i in range(80)],
    }[order]
    lengths = [0x1000 if order != "overlapping" else 0x1800 + (i % 3) * 0x1000 for i in range(len(starts))]
    records = b"".join(_mmap2(7, s, f"/nowhere/{i}", n) for i, (s, n) in enumerate(zip(starts, lengths, strict=True)))
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(records + _sample()))
    expected: list[tuple[int, int, str]] = []
    for i, (start, length) in enumerate(zip(starts, lengths, strict=True)):
        expected = [m for m in expected if m[1] <= start or m[0] >= start + length]
        bisect.insort(expected, (start, start + length, f"/nowhere/{i}"))
    with PerfData(str(path)) as perf:
        profile = Profile(perf)
        list(profile.walks())
        assert [(m.start, m.end, m.path) for m in profile.spaces[7].mapped] == expected


def test_forks_share_their_parents_mappings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """20,000 forks of a process of 2,000 mappings, each mapping one more file, held 737 MB (a copy each)
    from 2.5 MB. A fork shares its parent's list until one of them maps a file; the copies are bounded
    in all, and past the bound the profile is refused at the record, not held."""
    parent = b"".join(_mmap2(1, 0x10000000 + i * 0x10000, f"/nowhere/{i}") for i in range(200))
    forks = b"".join(_fork(100 + i, 1) for i in range(300))
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(parent + forks + _sample()))
    with PerfData(str(path)) as perf:
        profile = Profile(perf)
        list(profile.walks())
        assert profile.files.copied == 0
        assert all(profile.spaces[100 + i].mapped is profile.spaces[1].mapped for i in range(300))

    monkeypatch.setattr(address_space, "MAX_COPIED", 200 * 10)
    mapping = b"".join(_fork(100 + i, 1) + _mmap2(100 + i, 0x1000, "/nowhere/x") for i in range(20))
    path.write_bytes(_perf_data(parent + mapping + _sample()))
    with pytest.raises(InputError) as refused:
        _walk_all(path)
    stated = str(refused.value)
    assert stated.startswith(f"{path}: file offset 0x")
    assert "forks copy more than 2000 mappings from their parents" in stated and "its parent's 200" in stated


def test_a_child_that_maps_leaves_its_parent_alone(tmp_path: Path) -> None:
    parent = b"".join(_mmap2(1, 0x10000000 + i * 0x10000, f"/nowhere/{i}") for i in range(5))
    child = _fork(2, 1) + _mmap2(2, 0x10000000, "/nowhere/child", length=0x20000)
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(parent + child + _mmap2(1, 0x20000000, "/nowhere/late") + _sample()))
    with PerfData(str(path)) as perf:
        profile = Profile(perf)
        list(profile.walks())
        assert [m.path for m in profile.spaces[1].mapped] == [*(f"/nowhere/{i}" for i in range(5)), "/nowhere/late"]
        assert [m.path for m in profile.spaces[2].mapped] == ["/nowhere/child", *(f"/nowhere/{i}" for i in range(2, 5))]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(1, 4)), max_size=60))
def test_memory_added_between_reads_reads_as_sorted_in(steps: list[tuple[bool, int, int]]) -> None:
    """Ranges inserted one by one between reads are found as the sort of them all finds them (of ranges
    that start at one address, the first added)."""
    memory, added = Memory(), []
    for read, address, length in steps:
        if not read:
            memory.add(address, bytes([len(added)]) * length)
            added.append((address, length))
            continue
        below = [start for start, _ in added if start <= address]
        first = next((i for i, (start, _) in enumerate(added) if below and start == max(below)), None)
        expect = first if first is not None and address < added[first][0] + added[first][1] else None
        assert memory.read(address, 1) == expect


def _profile_with_every_record() -> bytes:
    records = _comm(7, b"prog") + _mmap2(7, 0x400000, PROGRAM) + _fork(8, 7) + _sample()
    records += _record(4, struct.pack("<IIIIQ", 8, 7, 8, 7, 0)) + _record(2, struct.pack("<QQ", 1, 1))
    return records + _sample()


def test_a_profile_cut_anywhere_is_read_or_refused(tmp_path: Path) -> None:
    """Cut at every byte (the data section's size left as written, or made to match): each reads the
    records before the cut, or is refused with the file and the byte, never anything else."""
    whole = _perf_data(_profile_with_every_record())
    path = tmp_path / "perf.data"
    for end in range(len(whole)):
        path.write_bytes(whole[:end])
        try:
            _walk_all(path)
        except InputError as exc:
            assert str(exc).startswith(str(path)), (end, str(exc))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_profile_with_lying_fields_is_read_or_refused(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Any 64-bit word of the header, the attribute or a record changed to a value that lies (huge,
    zero, just past the end, all ones): the profile reads, or is refused naming the file."""
    whole = bytearray(
        _perf_data(
            _profile_with_every_record(),
            attr=_attr(
                sample_type=data.draw(
                    st.sampled_from(
                        [
                            0x3007,
                            0x3007 | 1 << 4 | 1 << 5 | 1 << 10 | 1 << 11,
                            0x3007 | 1 << 16 | 1 << 6 | 1 << 9 | 1 << 7 | 1 << 8,
                        ]
                    )
                )
            ),
        )
    )
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(whole) - 4))
        value = data.draw(st.sampled_from([0, 1, 7, 8, 0xFFFF, 0xFFFFFFFF, len(whole), len(whole) + 1, 1 << 40]))
        width = data.draw(st.sampled_from([2, 4]))
        whole[at : at + width] = (value & ((1 << 8 * width) - 1)).to_bytes(width, "little")
    path = tmp_path_factory.mktemp("lying") / "perf.data"
    path.write_bytes(bytes(whole))
    try:
        _walk_all(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)), str(exc)


def test_names_with_escape_sequences_reach_no_terminal(tmp_path: Path, cli) -> None:
    """A mapped path and a command name holding ESC[2J: the text report writes them escaped."""
    path = tmp_path / "perf.data"
    path.write_bytes(
        _perf_data(_comm(7, b"\x1b[2Jcomm") + _mmap2(7, 0x401000 & ~0xFFF, "/x\x1b[2J/lib.so") + _sample())
    )
    result = cli("perf", str(path))
    assert result.code == 0, result.err
    assert "\x1b" not in result.out and "\x1b" not in result.err


def test_trace_data_past_the_section_is_refused_not_passed_over(tmp_path: Path, cli) -> None:
    """An AUXTRACE record whose trace data claims a terabyte: the two samples after it were passed over and
    the profile reported one sample, unsaid. Now refused at the record."""
    aux = _record(71, struct.pack("<QQQIIII", 1 << 40, 0, 0, 0, 0, 0, 0))
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(_sample() + aux + _sample() + _sample()))
    result = cli("perf", str(path))
    assert result.code == 2 and "Traceback" not in result.err
    at = 104 + 144 + len(_sample())
    assert f"{path}: file offset {at:#x}: an AUXTRACE record's {1 << 40} bytes of trace data, with" in result.err


def test_every_field_of_the_file_header_lying(tmp_path: Path) -> None:
    """Each 16- and 32-bit piece of the file header and the attribute set to a lying value, one at a time
    (a data section starting at 0xffffffff0000…, past any file, was an `OSError` from `seek`)."""
    whole = _perf_data(_profile_with_every_record())
    path = tmp_path / "perf.data"
    for at in range(0, 104 + 128, 2):
        for width in (2, 4):
            for value in (0, 1, 0xFFFF, 0xFFFFFFFF, len(whole) + 1):
                lying = bytearray(whole)
                lying[at : at + width] = (value & ((1 << 8 * width) - 1)).to_bytes(width, "little")
                path.write_bytes(bytes(lying))
                try:
                    _walk_all(path)
                except InputError as exc:
                    assert str(exc).startswith(str(path)), (at, width, value, str(exc))


def test_a_pc_finds_its_module_by_its_mapping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One program mapped at N places and a sample in each: every walk asked each module in turn for the PC
    (1,500 of each, 560 KB: 5.6 s, growing with the square). A PC's module is the mapping's that holds it,
    found by bisection, as `perf script` finds a sample's file: the modules are asked about N PCs, not N²."""
    from sfview.inputs.symbols import SymbolTable

    asked: list[int] = []
    real_name_at = SymbolTable.name_at
    monkeypatch.setattr(SymbolTable, "name_at", lambda self, *a: (asked.append(a[0]), real_name_at(self, *a))[1])
    n, apart, text = 200, 0x100000, 0x1190  # `medium_frame` of shapes-x86_64-O2
    mappings = b"".join(_mmap2(7, 0x10000000 + i * apart, PROGRAM, length=0x20000) for i in range(n))
    samples = b""
    for i in range(n):
        registers = [0] * 17
        registers[7], registers[8] = 0x7FF000, 0x10000000 + i * apart + text  # SP, IP
        body = struct.pack("<QIIQ", registers[8], 7, 7, 1000) + struct.pack("<Q", 2)
        body += struct.pack("<17Q", *registers) + struct.pack("<Q", 64) + bytes(64) + struct.pack("<Q", 64)
        samples += struct.pack("<IHH", 9, 2, 8 + len(body)) + body
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(mappings + samples))
    assert _walk_all(path) == n
    assert set(asked) == {text}  # every PC the same address of the program, each mapping at its own bias
    assert n <= len(asked) <= 4 * n  # each module asked about its own samples' PCs alone (before: n * n)


def _sample_of(pid: int) -> bytes:
    """`_sample`'s sample (64 bytes of stack), of process `pid`."""
    sample = bytearray(_sample())
    struct.pack_into("<II", sample, 16, pid, pid)
    return bytes(sample)


def test_samples_of_many_processes_keep_little_each(tmp_path: Path) -> None:
    """Each sample of another process (no mapping, no task record, 256 bytes each) made the walker keep three
    unwinders, their lookups and walks' ends for that process as long as it lived: 7 KB a sample, 730 MB
    from a 25 MB profile. The walker keeps what it worked out for the processes walked last, a bounded few."""
    import tracemalloc

    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(b"".join(_sample_of(pid) for pid in range(1, 3001))))
    tracemalloc.start()
    try:
        with PerfData(str(path)) as perf:
            profile = Profile(perf)
            assert sum(1 for _ in profile.walks()) == 3000
            held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 10 * path.stat().st_size + (2 << 20), held


def test_perfs_configuration_is_read_once_a_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where perf's build-id cache is was found again for every file the profile names that is not here
    (its configuration files parsed twice each time): 20,000 such files took 4.8 s and 100 MB of parsers
    the paused collector kept. It is found once a profile."""
    asked: list[None] = []
    real = address_space.perf_buildid_dir
    monkeypatch.setattr(address_space, "perf_buildid_dir", lambda: (asked.append(None), real())[1])
    files = address_space.Files([], "EM_X86_64")
    for i in range(50):
        assert files.find(f"/nonexistent/lib{i}.so", bytes(range(20))) is None
    assert len(asked) == 1
    assert len(files.notes) == 50


def test_a_mapped_name_longer_than_any_path_is_noted_cut(tmp_path: Path, cli) -> None:
    """A 60 KB MMAP2 file name made its "not found here" note a 60 KB line. Quoted cut now, past PATH_MAX;
    a name a file could have is named whole."""
    long_name, whole = "/" + "d" * 60_000, "/nowhere/" + "e" * 4000
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(_mmap2(7, 0x401000 & ~0xFFF, long_name) + _mmap2(7, 0x7F0000000000, whole) + _sample()))
    result = cli("perf", str(path))
    assert result.code == 0, result.err
    notes = [line for line in (result.out + result.err).splitlines() if "not found here" in line]
    assert len(notes) == 2 and all(len(line) < 4300 for line in notes), [len(line) for line in notes]
    assert any("'/ddd" in line and "(60,001 characters)" in line for line in notes), notes
    assert any(f"{whole}: not found here" in line for line in notes), notes


def test_a_stack_copy_at_the_top_of_the_address_space_ends_there(tmp_path: Path) -> None:
    """A sample whose registers are all ones (the kernel copies no stack at or past the top of user space,
    so only a forged profile has one): its stack copy sits "at" 0xffffffffffffffff, and the debugger
    (`perf --open`, `perf --app`) decoded the instruction at that PC from 16 bytes of which 15 lie past
    2**64. Only the byte at the last address is memory."""
    regs = bin(REGS_X86).count("1")
    stack = bytes(range(1, 65))
    body = struct.pack("<QIIQ", 0x401000, 7, 7, 1000)
    body += struct.pack(f"<Q{regs}Q", 2, *[(1 << 64) - 1] * regs)
    body += struct.pack("<Q", len(stack)) + stack + struct.pack("<Q", len(stack))
    path = tmp_path / "perf.data"
    path.write_bytes(_perf_data(_mmap2(7, 0x400000, PROGRAM) + _record(9, body, misc=2)))
    with PerfData(str(path)) as perf:
        found = Profile(perf, record=True).session(0)
    assert found is not None
    session = found[0]
    assert session.pc == (1 << 64) - 1
    assert session.memory.bytes_at((1 << 64) - 1, 1) == b"\x01"
    assert session.memory.bytes_at((1 << 64) - 1, 2) is None
    assert session.memory.bytes_at((1 << 64) - 8, 8) is None  # below the copy: nothing
