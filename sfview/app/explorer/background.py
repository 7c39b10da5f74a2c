"""The work after the first screen, in a worker thread, and how the app shares the interpreter with it.

What the first screen did without is done in one worker, one part after the
other: every function gone through (the overview), the names, the FDE table's
orders, the checks (and the orders of the notes they change). Each part hands
its result to the keys' thread (`Deliveries`), and gives way while keys come
(`Background.give_way`): the worker holds the interpreter less often
(`keys_first`) and no automatic collection walks what it builds
(`uncollected`). A consumer's verdict (`v`) is judged in a worker of its own.

`Heap` is the app's garbage-collection policy: the heap built for the first
screen frozen, full collections rare while keys come and done while nobody
types.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from itertools import islice
from typing import TYPE_CHECKING, NamedTuple

from textual.screen import Screen
from textual.timer import Timer
from textual.worker import active_worker

from sfview import uncollected
from sfview.app.explorer.state import ExplorerState
from sfview.app.names import ExplorerNames
from sfview.app.widgets.fde_table import FdeTable
from sfview.app.widgets.header import HeaderSummary
from sfview.app.widgets.row_table import cells
from sfview.document import Document
from sfview.sframe.bulk.overview import SAMPLED, Overview
from sfview.sframe.model.section import Section

if TYPE_CHECKING:
    from sfview.app.consumer_marks import ConsumerMarks
    from sfview.check.run import Diagnostic

__all__ = ["Background", "Deliveries", "Heap", "first_overview", "keys_first", "uncollected"]

PROBLEMS_SHOWN = 2000
"""Problems listed in the app at most (`sfview check` lists them all): a broken section may have a million."""

NAMES_IN_THE_BACKGROUND = 5000
"""Above this many functions, the symbol table is read in a thread, after the first screen."""

OVERVIEW_IN_THE_BACKGROUND = 5000
"""Above this many functions, the overview (every function gone through: what sorting, filtering and the
columns' widths need) is made in a thread, after the first screen; until then the header says "working…"."""

FIRST_FRAMES_S = 0.1
"""How long after the first frame the overview's pass starts: the frames that finish the first screen come first."""

PROGRESS_EVERY_S = 0.25
"""How often the header's progress indicator is drawn again while the overview is made."""

SWITCH_INTERVAL_S = 0.001
"""How long a thread holds the interpreter when another asks for it, while the work after the first screen runs
beside the keys (shorter than Python's default). The keys' thread gives it up each time it waits (for the
terminal, for its next message), a dozen times a key, and each time waits a whole default interval to have it back
from the worker, which makes a move several times slower while the checks run. With a short interval it takes it
back sooner, and the worker, which never waits, loses little."""

KEYS_BUSY_S = 0.1
"""How long after a key the checks' thread waits before it takes its share of the interpreter again: a key's
handling and its frame take tens of milliseconds, and people press the next one a tenth of a second later."""

IDLE_COLLECTION_CHECK_S = 0.5
IDLE_BEFORE_COLLECTING_S = 1.0
SETTLE_EVERY_S = 60.0
LET_GO_WITHIN_S = 5.0
"""How long the checks collect the whole heap for a replaced document (`Heap.let_go`) before leaving it to the
next settling: each such collection walks the frozen heap."""
FULL_COLLECTION_AFTER = 500
"""Middle-generation collections between two automatic full ones (Python's default: 10)."""


def first_overview(section: Section) -> Overview:
    """The overview as the first screen has it: whole for a small section; for a big one, the first
    screenful of functions and the last read alone, the rest left to the worker (`Background`)."""
    if section.num_fdes <= OVERVIEW_IN_THE_BACKGROUND:
        return Overview.of(section)
    overview = Overview(section)
    overview.sample(sorted({*range(min(SAMPLED, section.num_fdes)), section.num_fdes - 1}))
    return overview


class Deliveries(NamedTuple):
    """What the worker hands to the keys' thread (each called there, through `App.call_from_thread`)."""

    say: Callable[[str], None]
    """A line for the status line (the overview could not be made)."""
    overview_ready: Callable[[], None]
    """Every function has been gone through."""
    names_loaded: Callable[[list[str], bool, int | None], None]
    """The functions' names (whether they are new, not only listed now), and the widest's width."""
    order_made: Callable[[], None]
    """A column's order for the FDE table was made."""
    validated: Callable[[list[Diagnostic], int], None]
    """The problems found (the first `PROBLEMS_SHOWN`), and how many more."""
    check_failed: Callable[[str], None]
    """The checks failed: why."""
    judged: Callable[[ConsumerMarks], None]
    """A consumer's verdict, laid over the rows."""


class Replaced(Exception):
    """The explorer was replaced (an edit opened another): its worker stops where it gives way (`give_way`)."""


class Background:
    """The explorer's workers: started by `start` once the first screen is shown, on a model of their own."""

    def __init__(
        self,
        screen: Screen[None],
        *,
        doc: Document,
        section: Section,
        overview: Overview,
        names: ExplorerNames,
        state: ExplorerState,
        fde_table: FdeTable,
        summary: HeaderSummary,
        deliver: Deliveries,
        last_input: Callable[[], float],
    ) -> None:
        self.screen = screen
        self.doc = doc
        self.section = section
        self.overview = overview
        self.names = names
        self.state = state
        self.fde_table = fde_table
        self.summary = summary
        self.deliver = deliver
        self.last_input = last_input
        """When a key was last pressed (`SfviewApp.last_input`): the worker waits for the keys to stop."""
        self.progress: Timer | None = None
        """Draws the header's progress indicator again while the overview is made."""

    def start(self) -> None:
        """The worker, after the first frame: a thread started now would share the interpreter with painting it.
        The overview's pass holds the interpreter for seconds: it waits for the frames after the first too (the
        status line, the tab's underline), which would otherwise come only once a share of the pass is done."""
        screen = self.screen
        start = lambda: screen.run_worker(self.prepare, thread=True, exit_on_error=False)  # noqa: E731
        self.fde_table.expect_orders(True)
        if self.overview.ready:
            screen.call_after_refresh(start)
        else:
            self.progress = screen.set_interval(PROGRESS_EVERY_S, self.summary.counts_changed)
            screen.call_after_refresh(screen.set_timer, FIRST_FRAMES_S, start)

    def prepare(self) -> None:
        """In a worker thread, after the first frame: what the first screen did without, one after the other
        (each shares the interpreter with the keys): every function gone through, the names, the FDE table's
        orders, the checks (and the order of the notes they change)."""
        with forgotten_by_the_thread():
            try:
                self._prepare_all()
            except Replaced:
                return  # its document let go: the new explorer's worker does the work again on the edited bytes
            finally:  # a sort still waiting for its order makes it now
                self.screen.app.call_from_thread(self.fde_table.expect_orders, False)

    def _prepare_all(self) -> None:
        call = self.screen.app.call_from_thread
        with keys_first():
            listed = self.overview.ready and self.names.ready  # the names are listed by the overview's starts
            if not self.overview.ready:
                try:
                    self.overview.build(self.doc.with_own_model().require_section())  # a model of the thread's own
                except Exception as exc:  # a damaged file the model did not foresee: said, not "working…" forever
                    call(self.deliver.say, f"The functions could not all be read: {exc}")
                    return
                self.fde_table.measure_overview()
                call(self._overview_ready)
            self.give_way()
            if not listed:
                self._load_names()
            with uncollected():
                self.fde_table.prepare_orders(self.give_way, self._order_made)
            self.validate()
            with uncollected():
                self.fde_table.prepare_orders(self.give_way, self._order_made)

    def _order_made(self) -> None:
        self.screen.app.call_from_thread(self.deliver.order_made)

    def _overview_ready(self) -> None:
        if self.progress is not None:
            self.progress.stop()
        self.deliver.overview_ready()

    def _load_names(self) -> None:
        """In a worker thread: read the symbol table and name every function, then show the names."""
        new = not self.names.ready  # else read before the first screen, only listed now (by the overview's starts)
        self.names.load()
        names = self.names.listing(self.section, self.overview.column("start"))
        self.screen.app.call_from_thread(self.deliver.names_loaded, names, new, max(map(cells, names), default=0))

    def validate(self) -> None:
        """In a worker thread: run every check, on a model of its own (the panes' is not shared between threads).
        A check that fails says so in the Problems tab, rather than leaving it blank."""
        try:
            from sfview.check.run import check_document  # after the first screen, in the worker

            found = check_document(self.doc.with_own_model(), pace=self.give_way)
            shown = list(islice(found, PROBLEMS_SHOWN))
            more = sum(1 for _ in found)
        except Replaced:
            raise
        except Exception as exc:  # a damaged file the checks did not foresee: said, not a blank tab
            self.screen.app.call_from_thread(self.deliver.check_failed, f"{type(exc).__name__}: {exc}")
            return
        self.screen.app.call_from_thread(self.deliver.validated, shown, more)

    def give_way(self) -> None:
        """In the worker's thread, every few hundred functions checked or every piece of a column's order
        (`SortOrders`): while keys are being pressed (one within `KEYS_BUSY_S`), wait, so that the keys' thread
        has the interpreter to itself; the work goes on when the keys stop. Shared, a move on a big section takes
        several times as long while the checks run or the orders are made.

        Once the explorer is replaced (its workers cancelled), `Replaced` ends the work: it would hold the
        replaced document, and share the interpreter with the new explorer's worker, until done."""
        worker = active_worker.get(None)  # None outside a worker, or once its thread forgot it
        if worker is not None and worker.is_cancelled:
            raise Replaced
        while time.monotonic() - self.last_input() < KEYS_BUSY_S:
            time.sleep(KEYS_BUSY_S / 4)

    def judge(self, name: str) -> None:
        """Consumer `name`'s verdict, in a worker thread of its own (once at a time for each consumer)."""
        if name in self.state.judging:
            return
        self.state.judging.add(name)
        self.screen.run_worker(lambda: self._judge(name), thread=True, exit_on_error=False)

    def _judge(self, name: str) -> None:
        """In a worker thread: the consumer's verdict, on a document of its own, and its failures indexed by
        function (a pass over them all, kept off the keys' thread)."""
        from sfview.app.consumer_marks import ConsumerMarks
        from sfview.consumers.verdicts import judge_document

        with forgotten_by_the_thread():
            try:
                marks = ConsumerMarks(judge_document(self.doc.with_own_model(), name))
            finally:
                self.screen.app.call_from_thread(lambda: self.state.judging.discard(name))
            self.screen.app.call_from_thread(self.deliver.judged, marks)


def _return_to_the_system() -> None:
    """The C heap's free memory given back to the system (glibc's `malloc_trim`), where there is one.

    A section's model is mostly large buffers; freed, glibc keeps them for later (past its first frees it
    stops mapping large blocks on their own), so each edit's new model would grow the process by what the
    old one left behind.
    """
    with suppress(OSError, AttributeError):  # not glibc: its allocator returns memory as it does
        ctypes.CDLL(None).malloc_trim(0)


@contextmanager
def forgotten_by_the_thread() -> Iterator[None]:
    """A thread worker's work, after which its thread no longer names it as its worker.

    Textual sets `active_worker` in the pool thread's own context (not a copy) and leaves it there: the idle
    thread would hold the worker, its screen and that screen's document until it next runs a worker, which
    keeps a replaced explorer's whole section alive after an edit.
    """
    try:
        yield
    finally:
        active_worker.set(None)  # type: ignore[arg-type]  # Textual's own `get_current_worker` refuses None


@contextmanager
def keys_first() -> Iterator[None]:
    """The interpreter handed back to the keys' thread sooner while a worker runs beside it (`SWITCH_INTERVAL_S`).

    The switch interval is the process's; it is set back when the worker is done.
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


class Heap:
    """The app's garbage-collection policy: what the app built frozen, full collections while nobody types."""

    def __init__(self) -> None:
        self.collections_seen = 0
        """Young-generation collections counted at the last freeze: a measure of allocation since."""
        self.settled_at = time.monotonic()
        """When the whole heap, frozen part included, was last collected."""
        self.dying: tuple[weakref.ref[object], float] | None = None
        """What was let go (`let_go`) and until when to try to free it."""

    @staticmethod
    def collect_less_often() -> None:
        """Full collections while keys come: only after `FULL_COLLECTION_AFTER` young ones (Python's default
        makes one every few moves, each walking Textual's line caches); the idle collections
        (`collect_when_idle`) do that work between keys."""
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_AFTER)

    def freeze(self) -> None:
        """After the first screen, move everything built so far out of the cyclic GC's sight.

        The section's model, the widgets and Textual itself live as long as the
        app; left in the collected generations, every full collection walks them
        again, and a key press that triggers one takes several times as long.
        """
        gc.collect()
        gc.freeze()
        self.collections_seen = gc.get_stats()[0]["collections"]

    def collect_when_idle(self, last_input: float) -> None:
        """While nobody types (no input since `last_input`), the full collections spared the keys, done
        between them.

        What the app builds after its first screen (the structure tab, names,
        the check's findings, the tree's nodes, Textual's line caches) lives
        long too, and the full collections that walk it are the slowest moves in
        the tree. So after `IDLE_BEFORE_COLLECTING_S` of no input and some
        allocation, what was built since is collected and frozen; every
        `SETTLE_EVERY_S`, the frozen heap too, so that cycles that died after
        they were frozen (closed dialogs) are freed.
        """
        if self.dying is not None:
            self.settle()
            dying, until = self.dying
            if dying() is None or time.monotonic() > until:
                self.dying = None
            return
        if time.monotonic() - last_input < IDLE_BEFORE_COLLECTING_S:
            return
        if gc.get_stats()[0]["collections"] == self.collections_seen:
            return  # nothing much allocated since
        if time.monotonic() - self.settled_at > SETTLE_EVERY_S:
            self.settle()
        else:
            self.freeze()

    def let_go(self, dying: object) -> None:
        """`dying` (a replaced explorer's document, with its section's model) is no longer the app's: the checks
        (`collect_when_idle`) collect the whole heap, frozen part too, until it is freed, whether or not keys
        come. Frozen with the rest, it would be held until the next settling; and it is freed only once the
        key that replaced it has been handled, which holds it until then. Not freed within `LET_GO_WITHIN_S`,
        it is left to the next settling."""
        self.dying = (weakref.ref(dying), time.monotonic() + LET_GO_WITHIN_S)

    def settle(self) -> None:
        """Collect everything, the frozen part too, freeze what is left, and give what was freed back."""
        gc.unfreeze()
        self.freeze()
        self.settled_at = time.monotonic()
        _return_to_the_system()
