#!/usr/bin/env python3
"""Generate and build a large PIE executable with a varied .sframe section.

Why: sfview has to stay fast and correct on real-world sized inputs.  A
binary with ~40,000 functions of many frame shapes exercises every FRE
encoding binutils 2.40 emits (SFrame v1): start addresses of 1, 2 and 4
bytes, stack offsets of 1, 2 and 4 bytes, frameless leaves, push/pop
sequences, and frame-pointer based CFAs.

The C source is generated from a seeded RNG, so the same arguments always
give the same program.  Sources are split into several files which are
compiled in parallel and then linked.

Usage: python bench/make_big.py [--functions N] [--out PATH] [--force] [--stats]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
BUILD_DIR = BENCH_DIR / "build"
DEFAULT_FUNCTIONS = 40_000
DEFAULT_SEED = 20_240_501
DEFAULT_PARTS = 8

CC = os.environ.get("CC", "gcc")
CFLAGS = ["-O2", "-Wa,--gsframe", "-fPIE"]
LDFLAGS = ["-O2", "-pie"]

NOINLINE = "__attribute__((noinline, noclone))"
WITH_FP = '__attribute__((noinline, noclone, optimize("no-omit-frame-pointer")))'

# Relative weights of the ordinary function shapes.  Tuned so that 40,000
# functions give roughly 90,000 FREs (see --stats).
SHAPE_WEIGHTS: dict[str, int] = {
    "leaf": 34,  # no frame at all: 1 FRE
    "leaf_redzone": 6,  # small locals in the red zone: still 1 FRE
    "tail": 10,  # tail call (jmp): 1 FRE
    "call": 20,  # push/pop around a call: 3 FREs
    "multi_call": 5,  # several callee-saved registers: ~6.5 FREs
    "early_return": 5,  # several epilogues: extra FREs
    "locals_small": 6,  # sub rsp, 1-byte CFA offsets
    "locals_medium": 5,  # a few hundred bytes of locals: 2-byte offsets
    "frame_pointer": 6,  # CFA tracked via rbp: 4 FREs
    "unrolled": 5,  # 256..~8000 bytes of code: 2-byte start addresses
    "switch": 2,  # jump table, calls in the cases: ~8 FREs
}


def _callee(rng: random.Random, index: int) -> str:
    """Name of a random, already defined function (a DAG: no recursion)."""
    return f"f{rng.randrange(index)}" if index else "bench_base"


def _const(rng: random.Random) -> int:
    """A distinct-looking constant, so that no two functions are identical."""
    return rng.randrange(3, 1 << 20)


def _statements(rng: random.Random, count: int) -> str:
    """Straight-line volatile updates: about 20 bytes of code each."""
    lines = [f"  bench_sink[{rng.randrange(64)}] += {_const(rng)};" for _ in range(count)]
    return "\n".join(lines)


def gen_function(rng: random.Random, index: int, shape: str) -> str:
    """C source of function number `index` with the given frame shape."""
    name = f"f{index}"
    k1, k2, k3 = _const(rng), _const(rng), _const(rng)
    if index == 0 and shape not in ("leaf", "leaf_redzone", "giant"):
        shape = "leaf"
    c1, c2, c3, c4 = (_callee(rng, index) for _ in range(4))
    if shape == "leaf":
        return f"{NOINLINE} long {name}(long x)\n{{\n  return x * {k1} + ({k2} ^ x);\n}}\n"
    if shape == "leaf_redzone":
        n = rng.randrange(2, 12)
        return (
            f"{NOINLINE} long {name}(long x)\n{{\n"
            f"  volatile long a[{n}];\n"
            f"  a[x & {n - 1 if n & (n - 1) == 0 else 1}] = x + {k1};\n"
            f"  a[{n - 1}] = {k2};\n"
            f"  return a[0] + a[{n - 1}];\n}}\n"
        )
    if shape == "tail":
        return f"{NOINLINE} long {name}(long x)\n{{\n  return {c1}(x + {k1});\n}}\n"
    if shape == "call":
        return f"{NOINLINE} long {name}(long x)\n{{\n  long a = {c1}(x ^ {k1});\n  return a * {k2} + x;\n}}\n"
    if shape == "multi_call":
        return (
            f"{NOINLINE} long {name}(long x)\n{{\n"
            f"  long a = {c1}(x + {k1});\n"
            f"  long b = {c2}(a ^ {k2});\n"
            f"  long c = {c3}(b + x);\n"
            f"  return a * {k3} + b * x + c;\n}}\n"
        )
    if shape == "early_return":
        return (
            f"{NOINLINE} long {name}(long x)\n{{\n"
            f"  if (x & {k1})\n    return x * {k2};\n"
            f"  long a = {c1}(x);\n"
            f"  return a + {k3};\n}}\n"
        )
    if shape == "locals_small":
        n = rng.randrange(4, 12)
        return (
            f"{NOINLINE} long {name}(long x)\n{{\n"
            f"  volatile long a[{n}];\n"
            f"  a[0] = x; a[{n - 1}] = {k1};\n"
            f"  return {c1}(a[0]) + a[{n - 1}];\n}}\n"
        )
    if shape in ("locals_medium", "locals_huge"):
        n = rng.randrange(150, 3500) if shape == "locals_medium" else rng.randrange(33_000, 140_000)
        return (
            f"{NOINLINE} long {name}(long x)\n{{\n"
            f"  volatile char buf[{n}];\n"
            f"  buf[x & 63] = (char) x; buf[{n - 1}] = {k1 & 127};\n"
            f"  return {c1}(buf[x & 63]) + buf[{n - 1}];\n}}\n"
        )
    if shape == "frame_pointer":
        n = rng.choice([0, 0, 4, 16, 64])
        local = f"  volatile long a[{n}];\n  a[x & {n - 1}] = x;\n" if n else ""
        extra = f" + a[{n - 1}]" if n else ""
        return (
            f"{WITH_FP} long {name}(long x)\n{{\n{local}"
            f"  long r = {c1}(x + {k1});\n"
            f"  return r * {k2} + {c2}(r){extra};\n}}\n"
        )
    if shape == "unrolled":
        body = _statements(rng, rng.randrange(20, 400))
        return f"{NOINLINE} long {name}(long x)\n{{\n  long a = {c1}(x);\n{body}\n  return a + {c2}(a ^ {k1});\n}}\n"
    if shape == "switch":
        cases = "\n".join(
            f"  case {i}: return {_callee(rng, index)}(x + {_const(rng)}) * {_const(rng)};"
            for i in range(rng.randrange(6, 20))
        )
        return (
            f"{NOINLINE} long {name}(long x)\n{{\n"
            f"  switch (x & 31) {{\n{cases}\n  default: return {c4}(x) + {k1};\n  }}\n}}\n"
        )
    if shape == "giant":
        # > 65535 bytes of code, with a frame: FRE start addresses need 4 bytes.
        body = _statements(rng, rng.randrange(3_300, 4_000))
        return (
            f"{NOINLINE} long {name}(long x)\n{{\n"
            f"  volatile long a[8];\n  a[x & 7] = {c1}(x);\n{body}\n"
            f"  return a[0] + {c2}(a[1]);\n}}\n"
        )
    raise ValueError(f"unknown shape {shape!r}")


def choose_shapes(rng: random.Random, functions: int) -> list[str]:
    """Pick a shape per function; giants and huge frames are placed evenly."""
    names = list(SHAPE_WEIGHTS)
    weights = list(SHAPE_WEIGHTS.values())
    shapes = rng.choices(names, weights, k=functions)
    giants = max(1, functions // 8_000)
    huge = max(2, functions // 1_000)
    for i in range(giants):
        shapes[(2 * i + 1) * functions // (2 * giants)] = "giant"
    for i in range(huge):
        idx = (2 * i + 1) * functions // (2 * huge) + 1
        if idx < functions and shapes[idx] != "giant":
            shapes[idx] = "locals_huge"
    return shapes


def generate_sources(src_dir: Path, functions: int, parts: int, seed: int) -> list[Path]:
    """Write big.h, main.c and `parts` part files; return the .c files."""
    rng = random.Random(seed)
    shapes = choose_shapes(rng, functions)
    src_dir.mkdir(parents=True, exist_ok=True)
    header = [
        "/* Generated by bench/make_big.py -- do not edit. */",
        "extern volatile long bench_sink[64];",
        "long bench_base(long x);",
    ]
    header += [f"long f{i}(long x);" for i in range(functions)]
    (src_dir / "big.h").write_text("\n".join(header) + "\n")

    table = ",\n".join(f"  f{i}" for i in range(functions))
    main = (
        '#include "big.h"\n'
        "volatile long bench_sink[64];\n"
        f"{NOINLINE} long bench_base(long x)\n{{\n  return x + bench_sink[x & 63];\n}}\n"
        f"long (*const bench_table[{functions}])(long) = {{\n{table}\n}};\n"
        "int main(int argc, char **argv)\n{\n"
        "  (void) argv;\n"
        "  /* Reference every function; never actually call the (deep) call DAG. */\n"
        f"  return bench_table[argc % {functions}] == 0;\n}}\n"
    )
    files = [src_dir / "main.c"]
    files[0].write_text(main)

    per_part = -(-functions // parts)
    for part in range(parts):
        lo, hi = part * per_part, min(functions, (part + 1) * per_part)
        if lo >= hi:
            break
        body = "\n".join(gen_function(rng, i, shapes[i]) for i in range(lo, hi))
        path = src_dir / f"part{part}.c"
        path.write_text('#include "big.h"\n\n' + body)
        files.append(path)
    return files


def compile_and_link(sources: list[Path], out: Path, jobs: int) -> None:
    """Compile the sources concurrently, then link them into a PIE."""

    def compile_one(src: Path) -> Path:
        obj = src.with_suffix(".o")
        subprocess.run([CC, *CFLAGS, "-c", str(src), "-o", str(obj)], check=True)
        return obj

    # Largest files first so the slowest compile does not start last.
    ordered = sorted(sources, key=lambda p: p.stat().st_size, reverse=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        objects = list(pool.map(compile_one, ordered))
    tmp = out.with_name(out.name + ".tmp")
    subprocess.run([CC, *LDFLAGS, "-o", str(tmp), *map(str, objects)], check=True)
    tmp.replace(out)


def parse_header_counts(readelf_text: str) -> tuple[int, int]:
    """(Num FDEs, Num FREs) from the header of `readelf --sframe` output."""
    fdes = re.search(r"Num FDEs:\s*(\d+)", readelf_text)
    fres = re.search(r"Num FREs:\s*(\d+)", readelf_text)
    if not fdes or not fres:
        raise ValueError("no SFrame header in readelf output")
    return int(fdes.group(1)), int(fres.group(1))


def readelf_sframe(binary: Path) -> str:
    """Text of `readelf --sframe binary` (C locale)."""
    return subprocess.run(
        ["readelf", "--sframe", str(binary)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
    ).stdout


def sframe_header_counts(binary: Path) -> tuple[int, int]:
    """(Num FDEs, Num FREs) as printed in the `readelf --sframe` header."""
    return parse_header_counts(readelf_sframe(binary))


def _offset_bytes(value: int) -> int:
    """Bytes gas needs for a signed stack offset (1, 2 or 4)."""
    if -128 <= value <= 127:
        return 1
    return 2 if -32768 <= value <= 32767 else 4


def sframe_stats(binary: Path) -> dict[str, object]:
    """Distribution of FRE encodings, derived from `readelf --sframe`.

    The FRE start-address size is chosen per FDE from the function size
    (<256 -> ADDR1, <65536 -> ADDR2, else ADDR4); the offset size is chosen
    per FRE from its largest signed offset.
    """
    text = readelf_sframe(binary)
    addr_types: Counter[str] = Counter()
    offset_sizes: Counter[int] = Counter()
    fres_per_fde: Counter[int] = Counter()
    fp_cfa_fdes = fp_tracked_fdes = 0
    max_cfa = 0
    current: list[str] | None = None
    fdes: list[list[str]] = []
    for line in text.splitlines():
        m = re.match(r"\s+func idx \[\d+\]: pc = 0x[0-9a-f]+, size = (\d+) bytes", line)
        if m:
            size = int(m.group(1))
            addr_types["ADDR1" if size < 256 else "ADDR2" if size < 65536 else "ADDR4"] += 1
            current = []
            fdes.append(current)
        elif current is not None and re.match(r"\s+[0-9a-f]{16}\s", line):
            current.append(line)
    for rows in fdes:
        fres_per_fde[len(rows)] += 1
        uses_fp_cfa = tracks_fp = False
        for row in rows:
            cols = row.split()
            cfa, fp = cols[1], cols[2]
            offsets = [int(v) for v in re.findall(r"[-+]\d+", " ".join(cols[1:]))]
            offset_sizes[max(map(_offset_bytes, offsets), default=1)] += 1
            cfa_off = re.search(r"[-+]\d+", cfa)
            if cfa_off:
                max_cfa = max(max_cfa, int(cfa_off.group()))
            uses_fp_cfa |= cfa.startswith("fp")
            tracks_fp |= fp != "u"
        fp_cfa_fdes += uses_fp_cfa
        fp_tracked_fdes += tracks_fp
    return {
        "fdes": len(fdes),
        "fres": sum(len(rows) for rows in fdes),
        "fre_start_addr_types": dict(sorted(addr_types.items())),
        "fre_offset_sizes": {f"{k}B": v for k, v in sorted(offset_sizes.items())},
        "fres_per_fde": dict(sorted(fres_per_fde.items())),
        "fdes_with_fp_cfa": fp_cfa_fdes,
        "fdes_tracking_fp": fp_tracked_fdes,
        "max_cfa_offset": max_cfa,
    }


def default_output(functions: int) -> Path:
    """bench/build/big-<functions>."""
    return BUILD_DIR / f"big-{functions}"


def is_up_to_date(out: Path) -> bool:
    """True when `out` exists and is newer than this generator script."""
    return out.exists() and out.stat().st_mtime > Path(__file__).stat().st_mtime


def build(
    functions: int = DEFAULT_FUNCTIONS,
    out: Path | None = None,
    *,
    force: bool = False,
    seed: int = DEFAULT_SEED,
    parts: int = DEFAULT_PARTS,
    jobs: int | None = None,
    verbose: bool = True,
) -> Path:
    """Build (or reuse) the big binary and return its path."""
    out = (out or default_output(functions)).resolve()
    if not force and is_up_to_date(out):
        if verbose:
            print(f"up to date: {out} (use --force to rebuild)", file=sys.stderr)
        return out
    if shutil.which(CC) is None:
        raise SystemExit(f"compiler {CC!r} not found")
    out.parent.mkdir(parents=True, exist_ok=True)
    src_dir = out.with_name(out.name + ".src")
    if src_dir.exists():
        shutil.rmtree(src_dir)
    start = time.perf_counter()
    sources = generate_sources(src_dir, functions, parts, seed)
    generated = time.perf_counter()
    compile_and_link(sources, out, jobs or os.cpu_count() or 2)
    done = time.perf_counter()
    if verbose:
        print(
            f"built {out}: generate {generated - start:.1f}s, compile+link {done - generated:.1f}s",
            file=sys.stderr,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=DEFAULT_FUNCTIONS)
    parser.add_argument("--out", type=Path, help="default: bench/build/big-<functions>")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--parts", type=int, default=DEFAULT_PARTS, help="number of .c files")
    parser.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: nproc)")
    parser.add_argument("--stats", action="store_true", help="print FRE encoding distribution")
    args = parser.parse_args(argv)
    if args.functions < 1:
        parser.error("--functions must be positive")

    out = build(args.functions, args.out, force=args.force, seed=args.seed, parts=args.parts, jobs=args.jobs)
    fdes, fres = sframe_header_counts(out)
    print(f"{out}\n  functions generated: {args.functions}\n  FDEs: {fdes}\n  FREs: {fres}")
    if args.stats:
        for key, value in sframe_stats(out).items():
            print(f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
