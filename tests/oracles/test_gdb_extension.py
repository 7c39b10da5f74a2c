"""The `sframe` commands inside the real gdb (batch mode), loaded by the line `sfview gdb` prints.

One program (deep.c, `gcc -O2 -Wa,--gsframe`), built once for the module, stopped at `stop_here` six
frames deep. The oracles: `sframe bt` against `sfview unwind --cfi sframe` on the core gdb writes at
the same stop, and gdb's own frames; `sframe info` against gdb's registers and readelf's rows; the
unwinder against gdb's `bt` of the unstripped program, on a copy whose DWARF unwind tables objcopy
removed (gdb alone loses the stack there). Then the same with zlib's minigzip (Debian's source, which
nobody here wrote), and on AArch64 with gdb-multiarch attached to qemu-user's gdbstub.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import DATA, run_process

GDB_FRAME = re.compile(r"^#(\d+)\s+(0x[0-9a-f]+) in (\S+) \(", re.M)
STOP = ("break stop_here", "run")


def _need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: it builds or runs the program the commands are tried on")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """deep.c built with SFrame; a copy without .eh_frame, .eh_frame_hdr and .debug_frame; one built
    without SFrame; one whose .sframe has a damaged magic."""
    _need("gcc", "gdb", "objcopy", "readelf")
    folder = tmp_path_factory.mktemp("gdb")
    source = str(DATA / "src" / "deep.c")
    program = folder / "deep"
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", "-o", str(program), source], check=True)
    stripped = folder / "deep-stripped"
    subprocess.run(["objcopy", *(f"--remove-section={s}" for s in (".eh_frame", ".eh_frame_hdr", ".debug_frame")),
                    str(program), str(stripped)], check=True)  # fmt: skip
    plain = folder / "deep-plain"
    subprocess.run(["gcc", "-O2", "-o", str(plain), source], check=True)
    damaged = folder / "deep-damaged"
    data = bytearray(program.read_bytes())
    data[_sframe_offset(program) : _sframe_offset(program) + 2] = b"\0\0"
    damaged.write_bytes(data)
    damaged.chmod(0o755)
    signal = folder / "signal"
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", "-o", str(signal), str(DATA / "src" / "signal.c")], check=True)
    return {"program": program, "stripped": stripped, "plain": plain, "damaged": damaged, "signal": signal}


def _sframe_offset(program: Path) -> int:
    """Where `.sframe` starts in the file, as readelf says."""
    sections = subprocess.run(["readelf", "-SW", str(program)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"\.sframe\s+\S+\s+\S+\s+([0-9a-f]+)", sections).group(1), 16)


@pytest.fixture(scope="module")
def load() -> str:
    """The line `sfview gdb` prints."""
    result = run_process("gdb")
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert "\n" not in line and line.startswith("python "), line
    return line


def gdb(load: str, program: Path, *commands: str) -> str:
    """gdb's output (stdout and stderr) for `commands`, run in batch mode after loading the extension."""
    args = ["gdb", "-batch", "-nx", "-ex", load]
    for command in commands:
        args += ["-ex", command]
    result = subprocess.run([*args, str(program)], capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "Python Exception" not in output, output
    assert "Undefined command" not in output, output
    return output


def frames(text: str) -> list[tuple[int, int, str]]:
    """(number, PC, function) of every `#N  0x… in f ()` line."""
    return [(int(n), int(pc, 16), name) for n, pc, name in GDB_FRAME.findall(text)]


def test_the_line_loads_the_commands_into_gdb(load: str) -> None:
    _need("gdb")
    commands = ["-ex", load, "-ex", "help sframe", "-ex", "complete sframe unwinder o"]
    output = subprocess.run(["gdb", "-batch", "-nx", *commands], capture_output=True, text=True, timeout=60).stdout
    for command in ("sframe info", "sframe bt", "sframe check", "sframe unwinder"):
        assert command in output, output
    assert "sframe unwinder off\nsframe unwinder on\n" in output


def test_sframe_bt_is_sfview_unwind_on_a_core_of_the_same_stop(built: dict[str, Path], load: str) -> None:
    program = built["program"]
    core = program.with_name("deep.core")
    output = gdb(load, program, *STOP, "bt", "sframe bt", f"generate-core-file {core}")
    gdb_frames, ours = frames(output)[:6], frames(output)[6:]
    unwind = run_process("unwind", "--cfi", "sframe", str(program), "--core", str(core))
    assert unwind.returncode == 0, unwind.stderr
    expected = frames(unwind.stdout)
    assert ours == expected and len(expected) > 6, output + unwind.stdout
    stopped = next(line for line in unwind.stdout.splitlines() if line.startswith("stopped: "))
    assert stopped in output
    # beside gdb's own: the six frames up to main are gdb's, and the line says so
    assert [name for *_, name in gdb_frames] == ["stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main"]
    assert expected[:6] == gdb_frames
    assert "gdb: the same 6 frames; gdb's backtrace ends at #5" in output


def test_sframe_bt_from_a_frame_up_the_stack(built: dict[str, Path], load: str) -> None:
    output = gdb(load, built["program"], *STOP, "bt", "up 2", "sframe bt 3")
    found = frames(output)
    assert found[7:] == found[2:5], output
    assert "stopped: stopped after 3 frames" in output and "gdb: the same 3 frames" in output


def test_sframe_bt_of_one_frame_says_one_frame(built: dict[str, Path], load: str) -> None:
    """`sframe bt 1` said "stopped after 1 frames"."""
    output = gdb(load, built["program"], *STOP, "sframe bt 1")
    assert "stopped: stopped after 1 frame (the limit asked for)" in output and "gdb: the same 1 frame" in output


def test_sframe_info_does_gdbs_arithmetic_with_readelfs_row(built: dict[str, Path], load: str) -> None:
    """In with_alloca (frame #2, which keeps rbp as its frame pointer): the FDE and row readelf lists for the
    call's address, the CFA from gdb's rbp, and gdb's own frame #3 as the caller."""
    program = built["program"]
    output = gdb(load, program, *STOP, "bt", "info address with_alloca", "up 2", "info registers rbp rip",
                 "sframe info")  # fmt: skip
    rbp = int(re.search(r"^rbp\s+(0x[0-9a-f]+)", output, re.M).group(1), 16)
    pc = int(re.search(r"^rip\s+(0x[0-9a-f]+)", output, re.M).group(1), 16)
    start = int(re.search(r'"with_alloca" is at (0x[0-9a-f]+)', output).group(1), 16)
    caller = next(address for n, address, _ in frames(output) if n == 3)
    assert f"looked up at {pc - 1:#x}" in output  # a return address: its call's byte
    fde = re.search(r"fdes\[(\d+)\]", output).group(1)
    rows = subprocess.run(["readelf", "--sframe", str(program)], capture_output=True, text=True).stdout
    block = rows.split(f"func idx [{fde}]:")[1].split("func idx")[0]
    link_start = int(re.search(r"pc = (0x[0-9a-f]+)", block).group(1), 16)
    at = pc - 1 - start + link_start
    table = [line.split() for line in block.splitlines() if re.match(r"\s+[0-9a-f]{16}\s", line)]
    fre = [row for row in table if int(row[0], 16) <= at][-1]
    assert f"FRE {table.index(fre)} " in output, output
    assert f"rules: CFA {fre[1]}, FP {fre[2]}, " in output, (fre, output)
    cfa = re.search(r"CFA = (\w+) \+ (\d+) = (0x[0-9a-f]+)", output)
    assert fre[1] == f"fp+{cfa.group(2)}" and cfa.group(1) == "rbp" and int(cfa.group(3), 16) == rbp, output
    assert f"caller: {caller:#x} in recurse" in output


def test_the_unwinder_gives_gdb_back_the_stack_it_lost(built: dict[str, Path], load: str) -> None:
    reference = frames(gdb(load, built["program"], *STOP, "bt"))
    assert [name for *_, name in reference][-1] == "main" and len(reference) == 6
    alone = frames(gdb(load, built["stripped"], *STOP, "bt"))
    assert alone != reference, "gdb loses the stack without .eh_frame"
    output = gdb(load, built["stripped"], *STOP, "sframe unwinder on", "bt")
    assert frames(output) == reference, output
    # where it has DWARF CFI too, gdb with SFrame first finds the same frames
    assert frames(gdb(load, built["program"], *STOP, "sframe unwinder on", "bt")) == reference
    # off: gdb's own unwinders alone again
    assert frames(gdb(load, built["stripped"], *STOP, "sframe unwinder on", "sframe unwinder off", "bt")) == alone


def test_through_a_signal_handler(built: dict[str, Path], load: str) -> None:
    """stop_here called by a SIGSEGV handler: `sframe bt` walks through the sigreturn trampoline to main with
    gdb's frames, and gdb with the SFrame unwinder prints its own backtrace (the trampoline is gdb's)."""
    signal = ("handle SIGSEGV nostop noprint pass", *STOP)
    reference = gdb(load, built["signal"], *signal, "bt")
    assert "#2  <signal handler called>" in reference
    output = gdb(load, built["signal"], *signal, "sframe bt", "sframe unwinder on", "bt")
    assert "gdb: the same 6 frames" in output and output.count("#2  <signal handler called>") == 2, output
    expected = [line for line in reference.splitlines() if line.startswith("#")]
    assert [line for line in output.splitlines() if line.startswith("#")][-len(expected) :] == expected


INTERRUPTED = """
#include <signal.h>
volatile int sink;
__attribute__((noinline)) void stop_here(void) { sink++; }
void handler(int sig) { sink += sig; stop_here(); }
__attribute__((noipa)) int work(int x) { sink += x; return sink; }
__attribute__((noinline)) int pushes(int x) { int r = work(x); r += work(r); return r * x; }
int main(int argc, char **argv) { signal(SIGUSR1, handler); return pushes(argc); }
"""


def test_a_frame_a_signal_interrupted_is_looked_up_at_its_pc(load: str, tmp_path: Path) -> None:
    """A signal delivered (gdb's `signal SIGUSR1`) at the first instruction of one of `pushes`'s rows, its
    handler stopped in stop_here: the interrupted frame's PC is no return address, and its row is the
    one starting there, not the one before (which a return address's PC - 1 would find). gdb with the
    SFrame unwinder prints the backtrace gdb prints with the DWARF CFI, with or without the CFI."""
    _need("gcc", "gdb", "objcopy", "readelf")
    source, program = tmp_path / "interrupted.c", tmp_path / "interrupted"
    source.write_text(INTERRUPTED)
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", "-o", str(program), str(source)], check=True)
    stripped = tmp_path / "interrupted-stripped"
    subprocess.run(["objcopy", "--remove-section=.eh_frame", "--remove-section=.eh_frame_hdr", str(program),
                    str(stripped)], check=True)  # fmt: skip
    symbols = subprocess.run(["nm", str(program)], capture_output=True, text=True, check=True).stdout
    start = int(re.search(r"^([0-9a-f]+) T pushes$", symbols, re.M).group(1), 16)
    rows = subprocess.run(["readelf", "--sframe", str(program)], capture_output=True, text=True).stdout
    block = rows.split(f"pc = {start:#x},")[1].split("func idx")[0]
    starts = [int(line.split()[0], 16) for line in block.splitlines() if re.match(r"\s+[0-9a-f]{16}\s", line)]
    assert len(starts) >= 3, block  # rows that change after the function's first byte
    delivered = (f"break *pushes+{starts[-1] - start}", "run", "break stop_here", "signal SIGUSR1")
    reference = frames(gdb(load, program, *delivered, "bt"))
    assert [name for *_, name in reference[1:2]] == ["pushes"] and len(reference) >= 3, reference
    for copy in (program, stripped):
        assert frames(gdb(load, copy, *delivered, "sframe unwinder on", "bt")) == reference, copy
    output = gdb(load, stripped, *delivered, "sframe bt")
    assert frames(output)[:3] == reference[:3], output


def test_sframe_bt_says_why_gdb_parts_from_it(built: dict[str, Path], load: str) -> None:
    output = gdb(load, built["stripped"], *STOP, "sframe bt")
    assert "gdb: the same 2 frames; they part at #2" in output
    assert "no DWARF CFI of deep-stripped covers leaf" in output, output


INLINED = """
volatile int sink;
__attribute__((noinline)) void stop_here(void) { sink++; }
static inline __attribute__((always_inline)) void middle(int x) { sink += x; stop_here(); sink -= x; }
__attribute__((noinline)) void outer(int x) { middle(x); sink++; }
int main(int argc, char **argv) { outer(argc); return 0; }
"""


def test_gdbs_frames_of_inlined_functions_are_no_parting(load: str, tmp_path: Path) -> None:
    """With -g, gdb shows `middle`, inlined into `outer`, as a frame of its own at outer's PC and SP: no
    stack walk has it, and `sframe bt` compares with the frame that holds it."""
    _need("gcc", "gdb")
    source, program = tmp_path / "inlined.c", tmp_path / "inlined"
    source.write_text(INLINED)
    subprocess.run(["gcc", "-g", "-O2", "-Wa,--gsframe", "-o", str(program), str(source)], check=True)
    output = gdb(load, program, *STOP, "bt", "sframe bt")
    assert re.search(r"^#1 .* in middle \(", output, re.M), output
    assert [name for *_, name in frames("#0 " + output.rsplit("\n#0 ", 1)[1])][:3] == ["stop_here", "outer", "main"]
    assert "gdb: the same 3 frames; gdb's backtrace ends at #3 " in output, output
    # and gdb with the SFrame unwinder prints its backtrace as it does with the DWARF CFI: the inlined
    # frame, each argument, each entry value (the registers a row leaves unsaid kept, as gdb keeps them)
    with_dwarf = [line for line in gdb(load, program, *STOP, "bt").splitlines() if line.startswith("#")]
    with_sframe = gdb(load, program, *STOP, "sframe unwinder on", "bt")
    assert [line for line in with_sframe.splitlines() if line.startswith("#")] == with_dwarf, with_sframe
    assert "x=x@entry=1" in with_sframe


def test_sframe_bt_names_a_row_that_differs_from_dwarf(built: dict[str, Path], load: str, tmp_path: Path) -> None:
    """stop_here's one row changed from `sp+8` to `sp+16` in a copy (its DWARF CFI left alone): the SFrame
    walk parts from gdb's at #1, and says the row differs from the DWARF CFI gdb follows."""
    program = built["program"]
    info = gdb(load, program, *STOP, "sframe info")
    assert "rules: CFA sp+8, FP u, RA f" in info, info
    fre = int(re.search(r"FRE 0 \(section offset (0x[0-9a-f]+)\)", info).group(1), 16)
    data = bytearray(program.read_bytes())
    cfa_offset = _sframe_offset(program) + fre + 2  # a one-byte start address, the info byte, then the CFA offset
    assert data[cfa_offset] == 8
    data[cfa_offset] = 16
    changed = tmp_path / "deep"
    changed.write_bytes(data)
    changed.chmod(0o755)
    output = gdb(load, changed, *STOP, "sframe info", "sframe bt 3")
    assert "rules: CFA sp+16, FP u, RA f" in output, output
    assert "gdb: the same 1 frame; gdb goes on to #1  0x" in output, output
    assert "SFrame's row for stop_here (fdes[3] FRE 0) differs from its DWARF CFI, which gdb follows" in output


def test_an_exception_in_the_unwinder_leaves_the_frame_to_gdb(built: dict[str, Path], load: str) -> None:
    broken = "python import sfview.gdb.inferior as i; i.unwinder = lambda *args: 1 / 0"
    output = gdb(load, built["program"], *STOP, broken, "sframe unwinder on", "bt")
    assert frames(output) == frames(gdb(load, built["program"], *STOP, "bt"))


def test_sframe_check_says_each_file_in_one_line(built: dict[str, Path], load: str) -> None:
    program = built["program"]
    output = gdb(load, program, *STOP, "sframe check")
    count = re.search(r"Num FDEs: (\d+)", subprocess.run(["readelf", "--sframe", str(program)],
                      capture_output=True, text=True).stdout).group(1)  # fmt: skip
    assert f"{program}: clean ({count} FDEs)" in output
    libc = next(line for line in output.splitlines() if "libc.so" in line)
    assert libc.endswith("no .sframe section and no PT_GNU_SFRAME segment (built without -Wa,--gsframe?)")


BAD = ["sframe info", "sframe bt", "sframe check", "sframe unwinder", "sframe bt -1"]


def test_without_a_process_each_command_is_one_line_and_gdb_goes_on(built: dict[str, Path], load: str) -> None:
    output = gdb(load, built["program"], "sframe info", "sframe bt", "print 6 * 7")
    assert output.count("sframe: no process and no core") == 2 and "$1 = 42" in output, output


def test_a_count_of_5000_digits_is_quoted_cut(built: dict[str, Path], load: str) -> None:
    """`sframe bt 999…` (5,000 digits): refused in one line that quotes the start of it, not 5,000 characters."""
    output = gdb(load, built["program"], "sframe bt " + "9" * 5000, "print 6 * 7")
    refusal = next(line for line in output.splitlines() if line.startswith("sframe bt:"))
    assert refusal == f"sframe bt: '{'9' * 32}'… (5,000 characters) is not a number of frames", output
    assert "$1 = 42" in output


def test_sframe_info_at_an_address_needs_no_process(built: dict[str, Path], load: str) -> None:
    """The rules at a function's first byte, from the file alone: readelf's first row of its FDE."""
    program = built["program"]
    output = gdb(load, program, "sframe info stop_here")
    start = re.search(r"^(0x[0-9a-f]+) in stop_here \(deep\)$", output, re.M).group(1)
    rows = subprocess.run(["readelf", "--sframe", str(program)], capture_output=True, text=True).stdout
    block = rows.split(f"pc = {start},")[1].split("func idx")[0]
    first = next(line.split() for line in block.splitlines() if re.match(r"\s+[0-9a-f]{16}\s", line))
    assert f"rules: CFA {first[1]}, FP {first[2]}, " in output and "FRE 0 " in output, output


@pytest.mark.parametrize("which", ["plain", "damaged"])
def test_bad_sframe_is_one_line_and_gdb_goes_on(built: dict[str, Path], load: str, which: str) -> None:
    output = gdb(load, built[which], *STOP, *BAD, "sframe unwinder on", "bt", "print 6 * 7")
    lines = [line for line in output.splitlines() if line.startswith("sframe")]
    assert len([line for line in lines if "no file gdb has loaded has a usable .sframe" in line]) == 2, output
    if which == "damaged":
        assert "bad magic 00 00" in output
    assert "sframe unwinder: say on or off" in output and "sframe bt: needs at least 1 frame" in output
    assert frames(output)[-1][2] == "main" and "$1 = 42" in output


@pytest.mark.parametrize("which", ["plain", "program"])
def test_a_negative_address_is_refused_before_the_section_is_looked_for(
    built: dict[str, Path], load: str, which: str
) -> None:
    """`sframe info -1` on a program without SFrame said there was no section, not that -1 is no address;
    with one, it looked for 0xffffffffffffffff. Refused first now, as the command line refuses it."""
    output = gdb(load, built[which], *STOP, "sframe info -1", "sframe info (long)$sp - (long)$sp - 8", "print 6 * 7")
    lines = [line for line in output.splitlines() if line.startswith("sframe")]
    assert lines == [
        "sframe info: '-1': address: -0x1 does not fit a 64-bit machine word (0 to 0xffffffffffffffff)",
        "sframe info: '(long)$sp - (long)$sp - 8': address: -0x8 does not fit a 64-bit machine word"
        " (0 to 0xffffffffffffffff)",
    ], output
    assert "$1 = 42" in output


# A program nobody here wrote: zlib's minigzip, the library built into it -------------------------

STEPS = 150
"""Instructions stepped from deflate_slow's entry (into its callees too), `sframe bt` and gdb's `bt`
compared at each stop in the program (not in the C library, which has no SFrame data on Debian 12)."""

STEPPING = f"""
import gdb
for step in range({STEPS}):
    gdb.execute("stepi", to_string=True)
    if gdb.solib_name(gdb.selected_frame().pc()) is None:
        gdb.write("STOP\\n" + gdb.execute("bt", to_string=True) + "OURS\\n" + gdb.execute("sframe bt", to_string=True))
"""


@pytest.fixture(scope="module")
def minigzip(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Debian's zlib source (tools/toolchains.sh fetches it): minigzip and the whole library, built with
    `-O2 -Wa,--gsframe`; a copy without its DWARF unwind tables; an input for it to compress."""
    from toolchains import cache_dir

    _need("gcc", "gdb", "objcopy")
    cache = cache_dir()
    zlib = cache / "src" / "zlib" if cache else None
    if zlib is None or not (zlib / ".done").exists():
        pytest.skip("Debian's zlib source could not be fetched (tools/toolchains.sh)")
    folder = tmp_path_factory.mktemp("zlib")
    program = folder / "minigzip"
    sources = [str(zlib / "test" / "minigzip.c"), *sorted(str(f) for f in zlib.glob("*.c"))]
    subprocess.run(["gcc", "-O2", "-Wa,--gsframe", "-w", f"-I{zlib}", "-o", str(program), *sources], check=True)
    stripped = folder / "minigzip-stripped"
    subprocess.run(["objcopy", *(f"--remove-section={s}" for s in (".eh_frame", ".eh_frame_hdr", ".debug_frame")),
                    str(program), str(stripped)], check=True)  # fmt: skip
    text = folder / "input.txt"
    text.write_bytes(b"".join(path.read_bytes() for path in sorted(zlib.glob("*.[ch]"))))
    return {"program": program, "stripped": stripped, "input": text}


def _compressing(files: dict[str, Path], where: str) -> tuple[str, str]:
    return (f"break {where}", f"run < {files['input']} > /dev/null")


def test_minigzip_stripped_of_dwarf_unwinds_with_sframe_as_gdb_did(minigzip: dict[str, Path], load: str) -> None:
    stop = _compressing(minigzip, "longest_match")
    reference = frames(gdb(load, minigzip["program"], *stop, "bt"))
    names = [name for *_, name in reference]
    assert names[:3] == ["longest_match", "deflate_slow", "deflate"] and names[-1] == "main", reference
    assert frames(gdb(load, minigzip["stripped"], *stop, "bt")) != reference
    assert frames(gdb(load, minigzip["stripped"], *stop, "sframe unwinder on", "bt")) == reference


def test_minigzip_sframe_bt_is_sfview_unwind_on_its_core(minigzip: dict[str, Path], load: str) -> None:
    program = minigzip["program"]
    core = program.with_name("minigzip.core")
    output = gdb(load, program, *_compressing(minigzip, "longest_match"), "sframe bt", f"generate-core-file {core}")
    unwind = run_process("unwind", "--cfi", "sframe", str(program), "--core", str(core))
    assert unwind.returncode == 0, unwind.stderr
    assert frames(output) == frames(unwind.stdout) and len(frames(output)) == 9, output + unwind.stdout


def test_minigzip_sframe_bt_at_every_instruction_is_gdbs_bt(minigzip: dict[str, Path], load: str) -> None:
    """Stepping through deflate_slow's prologue and on, instruction by instruction: at each stop the frames
    SFrame alone finds up to main are those gdb finds with the DWARF CFI."""
    script = minigzip["program"].with_name("stepping.py")
    script.write_text(STEPPING)
    output = gdb(load, minigzip["program"], *_compressing(minigzip, "deflate_slow"), f"source {script}")
    stops = output.split("STOP\n")[1:]
    assert len(stops) >= STEPS // 3, output[-2000:]
    for stop in stops:
        theirs, ours = stop.split("OURS\n")
        expected = frames(theirs)
        assert expected[-1][2] == "main", theirs
        assert frames(ours)[: len(expected)] == expected, stop
        assert f"gdb: the same {len(expected)} frames" in ours, stop


# AArch64: the program run by qemu-user, gdb-multiarch attached to its gdbstub ---------------------

SYSROOT = "/usr/aarch64-linux-gnu"


@pytest.fixture(scope="module")
def aarch64(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """deep.c for AArch64 (`-O2 -Wa,--gsframe`), and a copy without its DWARF unwind tables."""
    _need("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-objcopy", "qemu-aarch64", "gdb-multiarch")
    folder = tmp_path_factory.mktemp("aarch64")
    program = folder / "deep"
    compile_ = ["aarch64-linux-gnu-gcc", "-O2", "-Wa,--gsframe", "-o", str(program), str(DATA / "src" / "deep.c")]
    subprocess.run(compile_, check=True)
    stripped = folder / "deep-stripped"
    subprocess.run(["aarch64-linux-gnu-objcopy", *(f"--remove-section={s}" for s in (".eh_frame", ".eh_frame_hdr",
                    ".debug_frame")), str(program), str(stripped)], check=True)  # fmt: skip
    return {"program": program, "stripped": stripped}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def gdb_on_qemu(load: str, program: Path, *commands: str) -> str:
    """gdb-multiarch's output for `commands`, attached to qemu-aarch64's gdbstub running `program`, stopped
    at `stop_here`."""
    port = _free_port()
    qemu = subprocess.Popen(["qemu-aarch64", "-g", str(port), "-L", SYSROOT, str(program)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        args = ["gdb-multiarch", "-batch", "-nx", "-ex", load, "-ex", f"set sysroot {SYSROOT}"]
        for command in ("target remote :" + str(port), "break stop_here", "continue", *commands, "kill"):
            args += ["-ex", command]
        for _ in range(50):  # qemu listening
            result = subprocess.run([*args, str(program)], capture_output=True, text=True, timeout=120)
            if "Connection refused" not in result.stdout + result.stderr:
                break
            time.sleep(0.1)
    finally:
        qemu.kill()
        qemu.wait()
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "Python Exception" not in output, output
    return output


def test_aarch64_sframe_bt_beside_gdb_multiarch(aarch64: dict[str, Path], load: str) -> None:
    output = gdb_on_qemu(load, aarch64["program"], "bt", "sframe bt")
    found = frames(output)
    assert [name for *_, name in found[:6]] == ["stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main"]
    assert found[6:12] == found[:6], output
    assert "gdb: the same 6 frames" in output


def test_aarch64_the_unwinder_gives_gdb_back_the_stack_it_lost(aarch64: dict[str, Path], load: str) -> None:
    reference = frames(gdb_on_qemu(load, aarch64["program"], "bt"))
    assert len(reference) == 6, reference
    assert frames(gdb_on_qemu(load, aarch64["stripped"], "bt")) != reference
    assert frames(gdb_on_qemu(load, aarch64["stripped"], "sframe unwinder on", "bt")) == reference
