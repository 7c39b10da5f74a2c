#!/usr/bin/env python3
"""How often each libsframe profile's verdict agrees with the release's own library, PC by PC.

Why: the closing note of issue 29 reports agreement per profile and per kind
of answer, before and after a change. For each section of a corpus -- the
tests' fixtures and their byte-swapped twins, `tests/data/src/*.c` built by
each release for x86_64, AArch64 and s390x, and seeded mutants of the
fixtures (`tests/handmade.mutate`) -- each release's library (the tests'
harness) looks up every PC of every function (up to 65,536 a function), and
the profile's verdict, from the checkout given with `--sfview` (default:
this one), says which of those PCs fail and which crash. Printed: per
release, per kind of the library's answer (found / fails / crash), the PCs
where the verdict says the same, for real sections and for mutants, and
how many accepted sections agree at every PC. Big-endian sections (the
swapped twins and their mutants) are left out: a verdict's main answer is a
big-endian host's, the harness runs on this little-endian one.

Usage: python bench/profile_agreement.py [--sfview DIR] [--mutants N] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT))
import pytest
from conftest import DATA, ELF_FIXTURES, SECTIONS, load_section_fixture
from handmade import mutate, to_big_endian
from libsframe_oracle import answer_kind, every_pc, judge_spans, library, outcomes
from toolchains import toolchain

from sfview.consumers import LookupFailure, Verdict
from sfview.consumers.libsframe import own_order
from sfview.document import Document

RELEASES = ("2.40", "2.44", "2.47")
TARGETS = [("2.40", "x86_64"), ("2.40", "aarch64"), ("2.44", "x86_64"), ("2.44", "aarch64")]
TARGETS += [("2.47", "x86_64"), ("2.47", "aarch64"), ("2.47", "s390x")]
PROGRAMS = ("shapes.c", "deep.c", "callback.c", "leaves.c", "noreturn.c", "qsort.c", "states.c", "plt_stub.c")

JUDGE = """
import json, sys
from sfview.consumers.verdicts import profiles
out = []
for line in open(sys.argv[1]):
    data = bytes.fromhex(line.strip())
    verdicts = {}
    for release in ("2.40", "2.44", "2.47"):
        v = profiles()["libsframe-" + release].judge(data, 0)
        verdicts[release] = [v.accepted, [[f.start, f.end, f.error, f.rule] for f in v.lookups]]
    out.append(verdicts)
json.dump(out, sys.stdout)
"""


def _corpus(mutants: int, seed: int) -> list[tuple[str, str, bytes]]:
    """(kind, name, section): the real sections, then the mutants."""
    real = [(p.stem, load_section_fixture(p)[0]) for p in SECTIONS]
    real += [(p.name, Document.open(str(p)).data) for p in ELF_FIXTURES if "no-sframe" not in p.name]
    real += [(name + "-swapped", to_big_endian(data)) for name, data in real]
    folder = Path(tempfile.mkdtemp(prefix="agreement-", dir=BUILD_DIR))
    for release, target in TARGETS:
        for program in PROGRAMS:
            out = folder / f"{program}-{release}-{target}"
            try:
                toolchain(release, target).compile("-O2", "-o", out, DATA / "src" / program)
                real.append((out.name, Document.open(str(out)).data))
            except (Exception, pytest.skip.Exception) as exc:  # left out, and said
                print(f"left out {out.name}: {str(exc).splitlines()[0][:100]}")
    rng = random.Random(seed)
    out = [("real", name, data) for name, data in real]
    for _ in range(mutants):
        name, data = rng.choice(real)
        for _ in range(rng.randint(1, 3)):
            if len(data) > 8:  # (a mutant cut short is left as it is)
                data = mutate(rng, data)
        out.append(("mutant", name, data))
    return out


def _verdicts(checkout: Path, corpus: list[tuple[str, str, bytes]]) -> list[dict[str, list]]:
    with tempfile.NamedTemporaryFile("w", suffix=".hex", dir=BUILD_DIR, delete=False) as f:
        f.write("".join(data.hex() + "\n" for _, _, data in corpus))
    env = {"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", JUDGE, f.name], cwd=checkout, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sfview", type=Path, default=REPO_ROOT, help="the checkout whose profiles are judged")
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=29, help="the mutants' seed")
    args = parser.parse_args(argv)
    corpus = _corpus(args.mutants, args.seed)
    verdicts = _verdicts(args.sfview.resolve(), corpus)
    libs = {release: library(release, BUILD_DIR) for release in RELEASES}
    tally: Counter[str] = Counter()
    for (kind, name, data), said in zip(corpus, verdicts, strict=True):
        if own_order(data) == ">":
            continue
        for release, lib in libs.items():
            judged, spans = every_pc(release, data)
            real = lib.ask(data, [], spans)
            accepted, failures = said[release]
            if real.decode != 0 or not accepted:
                if (real.decode == 0) != accepted:
                    tally[f"{release} {kind} acceptance differs"] += 1
                    print(f"libsframe {release}: acceptance differs on {name} {data[:32].hex()}")
                continue
            verdict = Verdict(f"libsframe-{release}", True, lookups=[LookupFailure(*f) for f in failures])
            one: Counter[str] = Counter()
            truths = [[(a, b, answer_kind(x)) for a, b, x in runs] for runs in outcomes(real, spans)]
            judge_spans(judged, truths, verdict, one)
            tally.update({f"{release} {kind} {k}": n for k, n in one.items()})
            tally[f"{release} {kind} accepted sections"] += 1
            tally[f"{release} {kind} sections right at every PC"] += all(k.endswith(" ok") for k in one)
    for lib in libs.values():
        lib.close()
    print(f"profiles of {args.sfview.resolve()}; {len(corpus)} sections")
    for release in RELEASES:
        for kind in ("real", "mutant"):
            line = []
            total_ok = total = 0
            for what in ("found", "fails", "crash"):
                ok = tally[f"{release} {kind} {what} ok"]
                n = sum(v for k, v in tally.items() if k.startswith(f"{release} {kind} {what} "))
                total_ok, total = total_ok + ok, total + n
                line.append(f"{what} {ok}/{n}" + (f" ({100 * ok / n:.1f} %)" if n else ""))
            whole = tally[f"{release} {kind} sections right at every PC"]
            sections = tally[f"{release} {kind} accepted sections"]
            share = f"{100 * total_ok / total:.1f} %" if total else "-"
            print(f"libsframe-{release} {kind}: all PCs {total_ok}/{total} ({share}); " + ", ".join(line))
            differ = tally[f"{release} {kind} acceptance differs"]
            print(f"    accepted sections right at every PC: {whole}/{sections}; acceptance differs on {differ}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
