"""Hold `sfview check --profile kernel-5ce6138798d7` to that revision's own SFrame reader, and keep what it said.

The reader is `kernel/unwind/sframe.c` of linux-mm/linux-mm at 5ce6138798d7b44fa0dd00e4dd00d8a59f0ecb27
(the newest revision of the unwind_user/sframe series). It is not in this repository: put its lines from
`struct sframe_fde_internal` to the end of `sframe_read_header()`, without `sframe_find()` (it needs the
mm's maple tree; the harness re-enacts it), in a file, and give that file as --kernel-source.

As stored, that revision does not compile: `__find_fre()` assigns `ret` after its loop, but declares it
only inside the loop. The build step here makes the one fix, on a copy outside the repository: it declares
`int ret;` at the top of `__find_fre()` (after `u32 ip_off;`), changing nothing else. Then it compiles the
copy inside `scripts/kernel_harness/harness.c` with -DSFRAME_NEWEST, and judges, writes and reports as
scripts/kernel_corpus.py does (the same real sections, crafted ones and mutants), with this revision's
profile, `sfview.consumers.kernel_linux_mm`:

    python scripts/kernel_linux_mm_corpus.py --kernel-source /tmp/kernel-sframe/newest-core.c \\
        --elf PROGRAMS... --mutants 3000 [--write tests/data/consumers/kernel-5ce6138798d7]

The corpus in tests/data was written with tests/data/src/{shapes,deep,signal,qsort}.c built with
`gcc -B <toolchain>/bin/TARGET/ -Wa,--gsframe -O2` by binutils 2.47 (sid: x86_64, aarch64, s390x; version 3)
and 2.44 (trixie: x86_64, aarch64; version 2, refused), seed 15, `--mutants 4000 --handmade 2000 --also
shapes-x86_64 shapes-x86_64~fde`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sfview.consumers.kernel_linux_mm import ENOENT, REVISION, lookups, register_section  # noqa: E402


def _v14_script():
    spec = importlib.util.spec_from_file_location("kernel_corpus", ROOT / "scripts" / "kernel_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


base = _v14_script()
ERRNO = {**base.ERRNO, ENOENT: -2}
FIX = (re.compile(r"(__find_fre\([^{]*\{[^}]*?u32\s+ip_off;\n)"), r"\1\tint ret;\n")


def fixed_source(source: Path, folder: Path) -> Path:
    """A copy of the revision's code with `int ret;` declared in `__find_fre()` (as stored it is undeclared)."""
    text = source.read_text()
    fixed, n = FIX[0].subn(FIX[1], text, count=1)
    if n != 1:
        raise SystemExit(f"{source}: no `u32 ip_off;` at the top of __find_fre() to declare `ret` after")
    out = folder / "sframe-5ce6138798d7-fixed.c"
    out.write_text(fixed)
    return out


class Harnesses(base.Harnesses):
    """The v14 script's harnesses, built with -DSFRAME_NEWEST around the fixed copy."""

    def _build(self, order: str, name: str, sp: int, fp: int) -> list[str] | None:
        saved = base.HARNESS
        exe = self.folder / f"harness-newest-{'be' if order == '>' else 'le'}-{name}"
        flags = ["-O1", "-DSFRAME_NEWEST", f'-DKERNEL_SFRAME_CORE="{self.source}"']
        flags += [f"-DSFRAME_REG_SP={sp}", f"-DSFRAME_REG_FP={fp}"]
        if order == "<":
            subprocess.run(["cc", *flags, str(saved), "-o", str(exe)], check=True)
            return [str(exe)]
        if not (base.shutil.which("s390x-linux-gnu-gcc") and base.shutil.which("qemu-s390x")):
            return None
        subprocess.run(["s390x-linux-gnu-gcc", "-static", *flags, str(saved), "-o", str(exe)], check=True)
        return ["qemu-s390x", str(exe)]


def profile_result(case: dict) -> dict:
    """The profile's verdict in the harness's terms (`kernel_corpus.profile_result`, this one's lookups)."""
    return base.judged(case, register_section, lookups, ERRNO)


def crafted() -> list[dict]:
    """The v14 script's crafted sections, and one for each rule this revision adds."""
    fn = lambda start, rows, size=0x20, **kw: {"start": start, "size": size, "rows": rows, **kw}  # noqa: E731
    flex = {"info2": 1}
    ctl, rsp = base.ctl, base.RSP
    out = {
        "flex-ra-reserved-bit": base.v3([fn(0x1000, [(0, 1, [ctl(rsp), 8, 2 | 4, -8])], **flex)]),
        "flex-fp-reserved-bit": base.v3([fn(0x1000, [(0, 1, [ctl(rsp), 16, 2, -8, 2 | 4, -16])], **flex)]),
        "flex-ra-reserved-bit-only": base.v3([fn(0x1000, [(0, 1, [ctl(rsp), 8, 4, 0])], **flex)]),
        "flex-cfa-deref": base.v3([fn(0x1000, [(0, 1, [ctl(rsp, deref=True), 8])], **flex)]),
        "outermost-then-frame": base.v3([fn(0x1000, [(0, 1, []), (4, 1, [16])])]),
        "fres-num-equals-size": base.v3([fn(0x1000, [(0, 1, [8]), (1, 1, [16])], 2)]),
        "fres-num-past-size": base.v3([fn(0x1000, [(0, 1, [8]), (1, 1, [16])], 1)]),
        "pcmask-row-at-rep-size": base.v3([fn(0x1000, [(0, 1, [8]), (16, 1, [16])], 0x40, pcmask=True, rep=16)]),
        "pcmask-rep-size-1": base.v3([fn(0x1000, [(0, 1, [8])], 0x10, pcmask=True, rep=1)]),
        "default-leftover-word": base.v3([fn(0x1000, [(0, 1, [8, -16, 4])])]),
        "end-at-2^64": base.v3([fn(-0x20, [(0, 1, [8]), (4, 1, [16])])]),
        "gap-between-functions": base.v3(
            [fn(0x1000, [(0, 1, [8]), (4, 1, [16])], 0x10), fn(0x1040, [(0, 1, [8])], 0x10)]
        ),
    }
    end_past = base.case("crafted/end-past-text", base.v3([fn(0x1000, [(0, 1, [8])], 0x20)]), 0, (0x1000, 0x101F))
    return base.crafted() + [base.case(f"crafted/{name}", data, 0) for name, data in out.items()] + [end_past]


def v14_entries(names: list[str]) -> list[dict]:
    """Sections of tests/data/consumers/kernel/corpus.json (the tests that edit them name them), renamed
    `v14/NAME` (`~` made `+`): kept whatever their class."""
    held = json.loads((ROOT / "tests" / "data" / "consumers" / "kernel" / "corpus.json").read_text())["sections"]
    by_name = {e["name"]: e for e in held}
    return [
        base.case(
            f"v14/{n.replace('~', '+')}",
            bytes.fromhex(by_name[n]["section"]),
            by_name[n]["address"],
            by_name[n]["text"],
        )
        for n in names
    ]


def handmade(count: int, seed: int) -> list[dict]:
    """tests/handmade.py's mutants (bytes flipped, fields overwritten, cut short) of every fixture's section."""
    sys.path.insert(0, str(ROOT / "tests"))
    import handmade as made  # the tests' helpers, there only when asked for

    return [base.case("fixture~handmade", data, 0) for data in made.mutants(seed, count)]


ABOUT = (
    f"Sections judged by the Linux kernel's SFrame reader itself (kernel/unwind/sframe.c, linux-mm/linux-mm "
    f"{REVISION}, CONFIG_SFRAME_VALIDATION=y, `int ret;` declared in __find_fre so that it compiles) in user "
    "space by scripts/kernel_linux_mm_corpus.py: register is sframe_add_section's first check, "
    "sframe_read_header and sframe_validate_section's return; lookups what sframe_find gave over each "
    "function's first scan_limit bytes, as PC ranges [start, end, -errno or the frame found: "
    "'cfa=sp+16 ra=*(cfa-8) fp=retain', ' outermost' for a row without data words]."
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel-source", type=Path, required=True, help="the revision's sframe.c functions")
    parser.add_argument("--elf", type=Path, nargs="*", default=[], help="ELF files whose sections to add")
    parser.add_argument("--mutants", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--handmade", type=int, default=1000, help="how many of tests/handmade.py's mutants")
    parser.add_argument("--write", type=Path, help="write the corpus to this folder")
    parser.add_argument(
        "--add-crafted", type=Path, help="add to this corpus.json the crafted sections it does not hold yet, and stop"
    )
    parser.add_argument(
        "--also", nargs="*", default=[], help="sections of the v14 corpus to judge and keep too, by name"
    )
    args = parser.parse_args()
    base.profile_result = profile_result  # the v14 script's report and sampling, with this profile
    with tempfile.TemporaryDirectory() as tmp:
        harnesses = Harnesses(fixed_source(args.kernel_source.resolve(), Path(tmp)), Path(tmp))
        if args.add_crafted:
            base.add_crafted(args.add_crafted, harnesses, crafted())  # type: ignore[arg-type]
            return 0
        real = base.real_sections(args.elf) + crafted() + v14_entries(args.also)
        seeds = [c for c in real if len(c["hex"]) >= 2 * base.HEADER and bytes.fromhex(c["hex"])[2] == 3]
        mutator = base.Mutator(args.seed)
        mutants = [mutator.mutate(mutator.rng.choice(seeds)) for _ in range(args.mutants)] if seeds else []
        mutants += [base.random_section(mutator.rng) for _ in range(args.mutants // 2)]
        mutants += handmade(args.handmade, args.seed)
        cases = real + mutants
        kernel = base.run_kernel(harnesses, cases)
    base.report(cases, kernel, len(real))
    if args.write:
        base.write_corpus(args.write, cases, kernel, random.Random(args.seed))
        path = args.write / "corpus.json"
        corpus = json.loads(path.read_text())
        path.write_text(json.dumps({**corpus, "about": ABOUT}, indent=0) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
