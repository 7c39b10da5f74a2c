"""`sfview unwind` writes each frame as the walk finds it: memory bounded by the core, whatever the depth.

The input is the attack that found it: a real core (gdb's, of `deep-x86_64`)
whose stack is rewritten into one long frame-pointer chain of 16-byte frames
that never loops, their return addresses in turn a return address of the
program's text whose SFrame row follows rbp (`with_alloca`'s, from gdb's own
backtrace of the core) and an address no module has (the frame-pointer
heuristic). Every frame is a real one to the unwinder: the output is as long
as the stack, the memory is not (the whole trace was built before printing,
~2.4 KB a frame: 320 MB for a 2.7 MB core).
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA
from elf_edit import PHDR, PHDR_FIELDS, PT_LOAD, PT_NOTE, Elf

PROGRAM = DATA / "deep-x86_64"
CORE = DATA / "deep-x86_64.core"
NT_PRSTATUS = 1
PR_REG = 112
"""Where `pr_reg` (x86-64's `user_regs_struct`) starts in `NT_PRSTATUS`'s `elf_prstatus`."""
RBP, RIP, RSP = 4, 16, 19
"""Their places in `user_regs_struct`, in words."""
NOWHERE = 0x1000
"""A return address in no module: the frame-pointer chain's guess finds its caller."""


def _with_alloca_return() -> int:
    """gdb's PC of the frame of `with_alloca` in this core: a return address after a call, in code whose
    SFrame row says CFA = rbp + 16, RA at CFA - 8, FP at CFA - 16 (a frame-pointer frame)."""
    bt = (DATA / "deep-x86_64.core.gdb-bt.txt").read_text()
    return int(re.search(r"#\d+\s+(0x[0-9a-f]+) in with_alloca ", bt).group(1), 16)


def chain_core(folder: Path, stack_bytes: int, returns: tuple[int, ...] | None = None) -> tuple[Path, int]:
    """The core with its stack `stack_bytes` long, one chain of frames `{next FP, RA}` from its bottom
    to its top, the thread's rsp and rbp at the first and its PC the first RA; and how many frames. The
    RAs are `returns` in turn (by default `with_alloca`'s and `NOWHERE`)."""
    core = Elf.of(CORE.read_bytes())
    notes = next(seg for _, seg in core.segments() if seg["p_type"] == PT_NOTE)
    pos = notes["p_offset"]
    while True:
        namesz, descsz, kind = struct.unpack_from("<III", core.data, pos)
        desc = pos + 12 + (namesz + 3) // 4 * 4
        if kind == NT_PRSTATUS:
            break
        pos = desc + (descsz + 3) // 4 * 4
    regs = desc + PR_REG
    rsp = struct.unpack_from("<Q", core.data, regs + RSP * 8)[0]
    at, stack = next(
        (at, seg)
        for at, seg in core.segments()
        if seg["p_type"] == PT_LOAD and seg["p_vaddr"] <= rsp < seg["p_vaddr"] + seg["p_memsz"]
    )
    top = stack["p_vaddr"] + stack["p_memsz"]
    bottom, offset = top - stack_bytes, (len(core.data) + 4095) & ~4095
    returns = returns or (_with_alloca_return(), NOWHERE)
    chain = b"".join(
        struct.pack("<QQ", va + 16, returns[n % len(returns)]) for n, va in enumerate(range(bottom, top - 16, 16))
    )
    core.data += bytes(offset - len(core.data)) + chain + bytes(16)
    values = stack | {"p_offset": offset, "p_vaddr": bottom, "p_filesz": stack_bytes, "p_memsz": stack_bytes}
    PHDR.pack_into(core.data, at, *(values[name] for name in PHDR_FIELDS))
    for reg, value in ((RSP, bottom), (RBP, bottom), (RIP, returns[0])):
        struct.pack_into("<Q", core.data, regs + reg * 8, value)
    path = folder / "chain.core"
    path.write_bytes(core.bytes())
    return path, len(chain) // 16


def peak(core: Path, *options: str, out: Path) -> int:
    """`sfview unwind` of the program on `core` in a process of its own, its output to `out`: its peak
    resident memory (VmHWM, KB)."""
    from conftest import PEAK

    with out.open("wb") as sink:
        done = subprocess.run([sys.executable, "-c", PEAK, "unwind", str(PROGRAM), "--core", str(core), *options],
                              stdout=sink, stderr=subprocess.PIPE, text=True, timeout=300, check=False)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return int(done.stderr.rsplit("VmHWM ", 1)[1].split()[0])


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    return chain_core(tmp_path_factory.mktemp("chain"), 1 << 20)


@pytest.mark.parametrize("options", [(), ("--json",), ("--explain",), ("--cfi", "both")], ids=" ".join)
def test_a_long_chain_costs_memory_in_step_with_the_core(chain: tuple[Path, int], tmp_path: Path, options) -> None:
    """65,535 frames of a 1.6 MB core: memory within 10x the core more than the real core's walk (it was
    ~150 MB more: 2.4 KB a frame), and every frame written. What is kept is each frame's CFA and PC, to tell
    a loop (24 bytes a 16-byte frame); `--cfi both` walks SFrame and DWARF side by side, each keeping its
    own, and names every frame both found by the heuristic."""
    core, frames = chain
    base = peak(CORE, *options, out=tmp_path / "base")
    used = peak(core, *options, out=tmp_path / "out")
    size_kb = core.stat().st_size // 1024
    assert used - base < 10 * size_kb, f"{used} KB against {base} KB for the real core, a {size_kb} KB core"
    written = (tmp_path / "out").read_text()
    if "--json" in options:
        doc = json.loads(written)
        numbers = [frame["number"] for frame in doc["frames"]]
        assert numbers == list(range(frames + 1)) and doc["stop"]
        assert {frame["heuristic"] for frame in doc["frames"][2::2]} == {"frame-pointer chain"}
        return
    lines = [line for line in written.splitlines() if line.startswith("#")]
    assert [int(line[1:].split()[0]) for line in lines] == list(range(frames + 1))
    assert lines[1].endswith(" in with_alloca () at shared/fixtures/src/deep.c:7") and lines[2].endswith(
        " in ?? ()  [frame-pointer chain]"
    )
    assert "\nstopped: the return address is 0: the outermost frame\n" in written
    if options == ("--cfi", "both"):
        # both walks go the whole chain; the frames the heuristic found in both are named, every other one
        assert f"note: DWARF CFI finds the same {frames + 1} frames, with the same PC, SP and FP;" in written
        assert f", #{frames} (frame-pointer chain)\n" in written or f", #{frames - 1} (frame-pointer chain)" in written


def test_the_engine_gives_the_frames_of_a_walk_one_at_a_time(chain: tuple[Path, int]) -> None:
    """`Unwinder.frames` gives the same frames as `backtrace`, each stepped (its lookup and arithmetic
    filled in) before it is given, and the reason it stopped once the last is given."""
    from sfview.inputs.core import read_core
    from sfview.unwind import session

    core, frames = chain
    started = session.from_core(str(PROGRAM), read_core(str(core)), None, [], None)
    walk = started.unwinder.frames(started.pc, started.registers, 1000)
    assert walk.stop == ""
    given = []
    for frame in walk:
        assert bool(frame.computations) == (frame.number < 999), f"#{frame.number}: the last is not stepped"
        given.append((frame.number, frame.pc, frame.heuristic, [c.text for c in frame.computations]))
        assert walk.stop == "" or frame.number == 999
    whole = started.unwinder.backtrace(started.pc, started.registers, 1000)
    assert given == [(f.number, f.pc, f.heuristic, [c.text for c in f.computations]) for f in whole.frames]
    assert walk.stop == whole.stop == "stopped after 1000 frames (the limit asked for)" and frames > 1000


def test_a_chain_in_the_programs_text_is_walked_to_its_end_without_writing_its_arithmetic(tmp_path: Path) -> None:
    """A legitimate deep stack: every RA `with_alloca`'s, in the program's text (a recursion through a function
    that keeps a frame pointer), each frame found by its SFrame row. Printed one line a frame, the walk writes
    none of the arithmetic it did (`--explain`, `--json` and the debugger read it, written then), and it looks
    its PC up once, however deep the stack."""
    import io

    from sfview.inputs.core import read_core
    from sfview.output.backtrace import write_text
    from sfview.unwind import session

    core, frames = chain_core(tmp_path, 1 << 16, (_with_alloca_return(),))
    started = session.from_core(str(PROGRAM), read_core(str(core)), None, [], None)
    walk = started.unwinder.frames(started.pc, started.registers)
    trace = started.unwinder.backtrace(started.pc, started.registers)
    out = io.StringIO()
    write_text(out, trace)
    lines = out.getvalue().splitlines()
    assert len(lines) == frames + 2 and all(
        line.endswith(" in with_alloca () at shared/fixtures/src/deep.c:7") for line in lines[:-1]
    )
    assert lines[-1] == "stopped: the return address is 0: the outermost frame"
    stepped = [c for frame in trace.frames for c in frame.computations]
    assert len(stepped) == 3 * (frames + 1) and not any(isinstance(c._arithmetic, str) for c in stepped)
    assert trace.frames[1].computations[0].text.startswith("CFA = rbp + 16 = ")
    assert sum(1 for _ in walk) == frames + 1 and walk.stop == trace.stop
    # one PC: its trampoline asked once, its row twice (frame 0 is looked up at its PC, the others at PC - 1)
    assert len(walk.lookups.trampolines) == 1 and len(walk.lookups.sframe) == 2


def test_sframe_and_dwarf_are_walked_side_by_side_no_further_than_needed() -> None:
    """`--cfi both` on a walk that never ends on one side: the agreement reads one frame past the other's last."""
    import itertools

    from sfview.generated.sframe import Sframe
    from sfview.output.backtrace import agreement
    from sfview.unwind.engine import Backtrace, Frame, Machine

    class Endless:
        """Frames without end, counted as they are taken."""

        stop = "never"

        def __init__(self) -> None:
            self.taken = 0

        def __iter__(self):
            for number in itertools.count():
                self.taken += 1
                yield Frame(number, 0x1000 + number, {7: 0x10 * number})

    x86 = Machine(Sframe.AbiArch.amd64_endian_little, 7, 6, 16, False)
    short = Backtrace([Frame(n, 0x1000 + n, {7: 0x10 * n}) for n in range(3)], "no FDE")
    endless = Endless()
    assert agreement(short, endless, x86) == (
        "DWARF CFI agrees on the 3 frames both find; DWARF CFI goes further (SFrame stopped: no FDE)"
    )
    assert endless.taken == 4
    endless = Endless()
    assert agreement(endless, short, x86).endswith("SFrame goes further (DWARF CFI stopped: no FDE)")
    assert endless.taken == 4


def _frame_json(frame) -> dict:
    """A frame's document, as `sfview unwind --json` writes it (from its own template)."""
    from sfview.inputs.demangle import demangle

    name = frame.name()
    symbol, offset = [*name.split("+0x"), "0"][:2] if name else (None, None)
    return {
        "number": frame.number,
        "pc": frame.pc,
        "function": name or None,
        "name": symbol,
        "offset": None if offset is None else int(offset, 16),
        "demangled": demangle(name) if name.startswith("_Z") else None,
        "module": frame.module.name if frame.module else None,
        "fde": frame.function.index if frame.function else None,
        "fre": frame.row.index if frame.row else None,
        "lookup": frame.lookup,
        "fallback": frame.fallback,
        "heuristic": frame.heuristic or None,
        "signal": frame.signal,
        "dwarf": frame.dwarf,
        "computations": [
            {"what": c.what, "formula": c.formula, "arithmetic": c.arithmetic, "value": c.value, "address": c.address}
            for c in frame.computations
        ],
        "source": [place._asdict() for place in ([] if frame.signal else frame.source()[0])],
        "tail_calls": [],
    }


def _json_of(trace, notes: list[str]) -> str:
    import io

    from sfview.output.backtrace import write_json

    out = io.StringIO()
    write_json(out, trace, notes)
    return out.getvalue()


@pytest.mark.parametrize("notes", [[], ["libc: no .sframe", "é\u2028\x1b[31m\udcff"]], ids=["no-notes", "notes"])
def test_json_is_written_as_json_dumps_writes_it(chain: tuple[Path, int], notes: list[str]) -> None:
    """The hand-made indented JSON against the library's, `json.dumps(doc, indent=1)`: a real core's walk, the
    chain's first 300 frames, and a frame with names JSON must escape."""
    from sfview.inputs.core import read_core
    from sfview.sframe.model.rules import Kind, Rule
    from sfview.unwind import session
    from sfview.unwind.engine import Backtrace, Computation, Frame, Module

    traces = []
    for core, limit in ((CORE, None), (chain[0], 300)):
        started = session.from_core(str(PROGRAM), read_core(str(core)), None, [], None)
        traces.append(started.unwinder.backtrace(started.pc, started.registers, limit))
    odd = Module('lib"\\\n\x00\u00e9\U0001f600\udc80', None, 0, lambda *_: "_Zodd\t\x7f")
    comp = Computation("RA", Rule(Kind.SAME), "f\u2029", "a\u0085", 1 << 63, 0)
    traces.append(Backtrace([Frame(0, 0, {}, module=odd, computations=[comp]), Frame(1, 5, {})], "", 1 << 64 - 1))
    for trace in traces:
        doc = {"frames": [_frame_json(f) for f in trace.frames], "stop": trace.stop,
               "missing_address": trace.missing_address, "notes": notes}  # fmt: skip
        assert _json_of(trace, notes) == json.dumps(doc, indent=1) + "\n"


def test_places_answer_as_a_dict_of_every_frame_would() -> None:
    """`Places` (growing CFAs in arrays, the rest in a dict) against `dict.setdefault` on every frame, as the walk
    kept them: walks that grow, go back, repeat, and hold values past 64 bits."""
    import random

    from sfview.unwind.engine import Places

    rng = random.Random(17)
    for _ in range(200):
        places, reference = Places(), {}
        cfa = rng.choice((0, 1 << 63, (1 << 64) - 40))
        for number in range(rng.randint(1, 300)):
            cfa += rng.choice((16, 16, 32, 0, -16, -160, 1 << 10))
            pc = rng.choice((0x1000, 0x2000, (1 << 64) - 1, 1 << 64))
            key = (cfa, pc)
            assert places.first(cfa, pc, number) == reference.setdefault(key, number), (number, key)
