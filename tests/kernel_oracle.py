"""The kernel profiles held to verdicts recorded from each revision's own code (tests/data/consumers/kernel*/).

The scripts that record them (`scripts/kernel_corpus.py`, `scripts/kernel_linux_mm_corpus.py`) hold the
harness's terms (errnos, the PCs scanned, touching ranges merged); the tests of every revision compare
an entry the same way, here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from sfview.consumers import Verdict
from sfview.consumers.kernel import CRASH

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """`scripts/NAME.py`, imported as a module."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def says_what_was_recorded(script: ModuleType, base: ModuleType, judge: Callable[..., Verdict], entry: dict) -> None:
    """Registration's errno, and at every scanned PC the same errno, crash or frame (`script`'s
    `profile_result`); and the verdict's failing lookups, worked out without the successes, exactly the
    recorded failures (`base`: the module with `scanned` and `merge`, `script.ERRNO` the revision's)."""
    case = {"hex": entry["section"], "address": entry["address"], "text": entry["text"]}
    ours = script.profile_result(case)
    kernel = entry["kernel"]
    assert ours["register"] == kernel["register"], ours.get("rule")
    assert [r[:3] for r in ours["lookups"]] == kernel["lookups"]
    data = bytes.fromhex(entry["section"])
    verdict = judge(data, entry["address"], tuple(entry["text"]))
    assert verdict.accepted == (kernel["register"] == 0)
    domain = base.scanned(data, entry["address"]) if verdict.accepted else []
    clipped = [
        [max(lo, f.start), min(hi, f.end), f.error if f.error == CRASH else script.ERRNO[f.error]]
        for f in verdict.lookups
        for lo, hi in domain
        if max(lo, f.start) < min(hi, f.end)
    ]
    assert base.merge(clipped) == [r for r in kernel["lookups"] if r[2] == CRASH or isinstance(r[2], int)]
