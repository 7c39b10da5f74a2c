"""What a consumer of SFrame does with a section: the Linux kernel's reader, each libsframe release.

`check` says what is wrong by the format; a consumer profile says what one
real reader does with the same bytes, rule for rule after that reader's own
code: whether it takes the section at all (registration, `sframe_decode`), and
where its lookups then fail, give a different row, or crash. Each profile is a
module here (`kernel.py`, `libsframe.py`) that registers itself in `PROFILES`;
`check --profile NAME`, `check --json` and the app's Problems tab read the
`Verdict` it returns.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LookupFailure:
    """PCs in [start, end) whose lookup by the consumer fails (or crashes), and why."""

    start: int
    end: int
    error: str
    """The consumer's error: `-EINVAL`, `SFRAME_ERR_FRE_INVAL`, or `crash`."""
    rule: str
    """The consumer's check that fails, by its name in the consumer's code (`__read_fre: ip_off > func_size`)."""
    function: int | None = None
    """The index of the function (FDE) the PCs belong to."""


BYTES_PER_FAILURE = 8
"""The section bytes a failing range listed costs at least, past `FAILURES_FREE` ranges: a range listed holds
28 bytes (`LookupFailures`), so the listing stays within ten times the section. A real section's rows take 3
bytes or more each; a PCMASK function of gigabytes whose lookups fail every few bytes would list a range per
byte or two."""
FAILURES_FREE = 16384
"""The failing ranges any section may list, however small (a PCMASK function's first 4,096 repeats failing
four ways each)."""


class FailuresBound(Exception):
    """A verdict's failing ranges met their bound (`LookupFailures.add`): the lookups at `pc` and past are not
    judged, `note` says so for people (a verdict adds it to its notes)."""

    def __init__(self, pc: int, note: str) -> None:
        super().__init__(pc, note)
        self.pc, self.note = pc, note


class LookupFailures(Sequence[LookupFailure]):
    """Failing lookups held as columns of numbers, each `LookupFailure` made when asked for: a verdict on
    a million functions that all fail costs bytes per failure, not objects (an error and rule pair is
    held once). At most `bound` are held: one per `BYTES_PER_FAILURE` bytes of the section judged, past
    `FAILURES_FREE`, whichever consumer's verdict it is."""

    def __init__(self, section_size: int) -> None:
        self.bound = section_size // BYTES_PER_FAILURE + FAILURES_FREE
        self._starts, self._lasts, self._functions = array("Q"), array("Q"), array("q")
        """Each failure's first and last PC (its end can be 2^64), and its function (-1: None)."""
        self._kinds = array("I")
        self._kind_of: dict[tuple[str, str], int] = {}
        self._pairs: list[tuple[str, str]] = []

    def add(self, failure: LookupFailure) -> None:
        """Hold `failure`, one range with the last one held when it goes on from it for the same reason in the
        same function (rows alike failing one after another); `FailuresBound` at its start, holding nothing,
        when `bound` are held already."""
        function = -1 if failure.function is None else failure.function
        pair = (failure.error, failure.rule)
        if (
            self._starts
            and self._lasts[-1] + 1 == failure.start
            and self._functions[-1] == function
            and self._pairs[self._kinds[-1]] == pair
        ):
            self._lasts[-1] = failure.end - 1
            return
        if len(self._starts) >= self.bound:
            reason = f"more than {self.bound} failing ranges (one per {BYTES_PER_FAILURE} bytes)"
            raise FailuresBound(failure.start, f"lookups at {failure.start:#x} and past not judged: {reason}")
        kind = self._kind_of.setdefault(pair, len(self._pairs))
        if kind == len(self._pairs):
            self._pairs.append(pair)
        self._starts.append(failure.start)
        self._lasts.append(failure.end - 1)
        self._functions.append(function)
        self._kinds.append(kind)

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, index: int) -> LookupFailure:  # type: ignore[override]
        function = self._functions[index]
        error, rule = self._pairs[self._kinds[index]]
        return LookupFailure(
            self._starts[index], self._lasts[index] + 1, error, rule, None if function < 0 else function
        )

    def __iter__(self) -> Iterator[LookupFailure]:
        return map(self.__getitem__, range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)


@dataclass(frozen=True)
class Verdict:
    """One consumer's answer for one section."""

    consumer: str
    """The profile's name (`kernel`, `libsframe-2.40`, ...)."""
    accepted: bool
    error: str | None = None
    """When refused: the consumer's error (`-EINVAL`, `SFRAME_ERR_VERSION_INVAL (2001)`, `crash`)."""
    rule: str | None = None
    """When refused: the check that refused, named as in the consumer's code."""
    offset: int | None = None
    """When refused: the section offset of the bytes the refusing check read."""
    lookups: Sequence[LookupFailure] = field(default_factory=list)
    """Accepted, yet these lookups fail."""
    notes: list[str] = field(default_factory=list)
    """Anything else the consumer's behaviour shows (a different row than the format's, say)."""


@dataclass(frozen=True)
class Profile:
    """A consumer profile: its name for `--profile`, who it is for people, and how it judges a section."""

    name: str
    title: str
    """Who the consumer is, for people: `the Linux kernel's SFrame reader (v14 series)`."""
    judge: Callable[[bytes, int], Verdict]
    """The verdict on a section's bytes at a load address."""
    judge_document: Callable[[Any, str | None], Verdict] | None = None
    """The verdict on an opened file (`sfview.document.Document`) read by a machine (`check --arch`; None: the
    one the section says), where the file tells the consumer more than the section's bytes (the kernel: the
    executable segment registered as the text, and the machine's byte order and registers); None: `judge`."""


PROFILES: dict[str, Profile] = {}


def register(profile: Profile) -> Profile:
    """Add `profile` to `PROFILES` under its name (each consumer module does so when imported)."""
    PROFILES[profile.name] = profile
    return profile
