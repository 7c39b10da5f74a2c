#!/usr/bin/env python3
"""How often the glibc-2.43 profile agrees with glibc's own SFrame reader and backtrace() step, PC by PC.

Why: issue 29's closing note reports agreement per profile and per kind of
answer. The corpus: the tests' fixtures (SFrame versions 1 to 3), the
programs of `tests/data/src/*.c` built by binutils 2.40 (version 1), 2.44
(version 2) and 2.47 (version 3) for x86_64 and AArch64, and seeded mutants of
the version 2 ones (`tests/handmade.mutate`, one to three times each). For
each, glibc's code (tests/glibc_harness.c, as tests/oracles/test_glibc.py
builds it) says whether it takes the section and, at every PC of every
function (up to 65,536 a function), what its step does; the profile must say
the same. Printed: sections whose acceptance agrees; PCs whose whole answer
(the frame, the row, the getters, the fallback or the read past the section)
agrees; PCs where the verdict's failing ranges tell the kind right (a frame /
falls back / crash); and sections right at every PC.

With --write DIR, it also writes what glibc said of the real sections and of
the first RECORDED mutants (`DIR/corpus.json`: each section, `__sframe_decode`'s
answer and, per span of PCs, the answer where it changes), which
tests/oracles/test_glibc.py holds the profile to where glibc's source is not at
hand; tests/data/consumers/glibc/ was written with the defaults.

Usage: python bench/glibc_agreement.py [--mutants N] [--seed S] [--write DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _common import BUILD_DIR, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT))
import pytest
from conftest import DATA, ELF_FIXTURES, SECTIONS, load_section_fixture
from glibc_oracle import Glibc, every_pc, harness, kind, predict
from handmade import mutate
from libsframe_oracle import judge_spans
from toolchains import toolchain

from sfview.consumers.verdicts import profiles
from sfview.document import Document

TARGETS = [(release, target) for release in ("2.40", "2.44", "2.47") for target in ("x86_64", "aarch64")]
RECORDED = 120
"""Mutants kept in the written corpus (the real sections are all kept)."""
PROGRAMS = ("shapes.c", "deep.c", "callback.c", "leaves.c", "noreturn.c", "qsort.c", "states.c", "plt_stub.c")


def _corpus(mutants: int, seed: int) -> list[tuple[str, bytes]]:
    """(kind, section): the real sections, then the mutants of the version 2 ones."""
    real = [load_section_fixture(p)[0] for p in SECTIONS]
    real += [Document.open(str(p)).data for p in ELF_FIXTURES if "no-sframe" not in p.name]
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="glibc-agreement-", dir=BUILD_DIR))
    for release, target in TARGETS:
        for program in PROGRAMS:
            out = folder / f"{program}-{release}-{target}"
            try:
                toolchain(release, target).compile("-O2", "-o", out, DATA / "src" / program)
                real.append(Document.open(str(out)).data)
            except (Exception, pytest.skip.Exception) as exc:  # left out, and said
                print(f"left out {out.name}: {str(exc).splitlines()[0][:100]}")
    version_2 = [data for data in real if data[:3] == b"\xe2\xde\x02"]
    rng = random.Random(seed)
    out = [("real", data) for data in real]
    for _ in range(mutants):
        data = rng.choice(version_2)
        for _ in range(rng.randint(1, 3)):
            if len(data) > 8:
                data = mutate(rng, data)
        out.append(("mutant", data))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=43, help="the mutants' seed")
    parser.add_argument("--write", type=Path, help="write the corpus with glibc's answers into this folder")
    args = parser.parse_args(argv)
    recorded: list[dict] = []
    corpus = _corpus(args.mutants, args.seed)
    glibc = Glibc([str(harness(str(BUILD_DIR)))])
    profile = profiles()["glibc-2.43"]
    tally: Counter[str] = Counter()
    for group, data in corpus:
        judged, spans = every_pc(data)
        real, said = glibc.ask(data, spans), predict(data, spans)
        verdict = profile.judge(data, 0)
        taken = real.decode == 0
        if group == "real" or tally["mutant sections"] < RECORDED:
            recorded.append({"group": group, "section": data.hex(), "decode": real.decode, "spans": spans})
            recorded[-1]["glibc"] = [list(map(list, changes)) for changes in real.spans]
        tally[f"{group} sections"] += 1
        tally[f"{group} taken"] += taken
        tally[f"{group} acceptance ok"] += verdict.accepted == taken and real.decode == said.decode
        if not taken:
            continue
        one: Counter[str] = Counter()
        truths = []
        for (low, high), (_, end), changes, model in zip(judged, spans, real.spans, said.spans, strict=True):
            ends = [pc for pc, _ in changes[1:]] + [end]
            truth = [(a, b, w) for (a, w), b in zip(changes, ends, strict=True)]
            model_ends = [pc for pc, _ in model[1:]] + [end]
            guess = [(a, b, w) for (a, w), b in zip(model, model_ends, strict=True)]
            for a, b, w in truth:  # the whole answer, PC by PC within the judged PCs
                for c, d, v in guess:
                    lo, hi = max(a, c, low), min(b, d, high)
                    if lo < hi:
                        one[f"answers {'ok' if v == w else 'wrong'}"] += hi - lo
            truths.append([(a, b, kind(w)) for a, b, w in truth])
        judge_spans(judged, truths, verdict, one)
        tally.update({f"{group} {k}": n for k, n in one.items()})
        tally[f"{group} right at every PC"] += all(k.endswith(" ok") for k in one)
    glibc.close()
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        about = (
            "Sections judged by glibc 2.43's own sframe-read.c and sframe.c (Debian glibc-source 2.43-7) around "
            "tests/glibc_harness.c, written by bench/glibc_agreement.py --write: decode is __sframe_decode's "
            "return (0 taken, 5 refused, or crash), spans the PCs asked (section-relative, [first, end)), glibc "
            "per span the harness's answer at the first PC and wherever it changes."
        )
        text = json.dumps({"about": about, "sections": recorded}, separators=(",", ":"))
        (args.write / "corpus.json").write_text(text + "\n")
    print(f"glibc-2.43: {len(corpus)} sections")
    for group in ("real", "mutant"):
        t = {k.removeprefix(group + " "): n for k, n in tally.items() if k.startswith(group + " ")}
        kinds = ", ".join(
            f"{what} {t.get(what + ' ok', 0)}/{t.get(what + ' ok', 0) + t.get(what + ' wrong', 0)}"
            for what in ("found", "fails", "crash")
        )
        answers = t.get("answers ok", 0), t.get("answers ok", 0) + t.get("answers wrong", 0)
        print(
            f"{group}: acceptance {t.get('acceptance ok', 0)}/{t['sections']} ({t.get('taken', 0)} taken); "
            f"whole answers {answers[0]}/{answers[1]} PCs; kinds {kinds}; "
            f"taken sections right at every PC {t.get('right at every PC', 0)}/{t.get('taken', 0)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
