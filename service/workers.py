"""Bot searches in worker processes, with admission control.

Python threads do not run Python code in parallel, so a search on a gRPC thread would
stall every cheap call. Searches run in an :class:`ai.procpool.WorkerPool` (the one process
pool of heka) whose processes come from a *forkserver*: a clean interpreter started before
any gRPC object exists (gRPC's fork-safety rule), with the engines and bots preloaded, so
workers start fast and never inherit gRPC's threads. Workers are warmed at start and run at
a higher niceness than the gRPC process, so RPC threads and health checks keep the CPU
while every worker searches. A worker that dies fails its search (``BrokenProcessPool``:
UNAVAILABLE) and the pool replaces it.

A search gets the state's plain serialisation (never the signing keys), the bot spec,
the budget and an absolute ``time.monotonic()`` deadline (CLOCK_MONOTONIC is shared by
all processes on Linux); it records its own metrics (multiprocess mode).

Bot calls wait for a search slot in a bounded FIFO queue (:class:`SearchQueue`), in front
of the workers: a call that finds every slot busy waits its turn, up to a maximum queue length
and a maximum wait; one that would wait past either, or past its own deadline (estimated from
its place in the queue and the recent time a call holds a slot), is refused up front with
``RESOURCE_EXHAUSTED`` and a retry hint, before its token is opened. The queue is per gRPC
process; with several processes the slots themselves are shared (a semaphore), and each
process's queue head takes the next free one. Each admitted call owns a cancel flag in shared
memory that its search polls (the bot's ``should_stop``): when the client cancels or
disconnects, the flag is set and the search ends early; a call cancelled while it waits
leaves the queue.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ai.procpool import WorkerPool, get_context

log = logging.getLogger("heka.workers")

T = TypeVar("T")

PRELOAD = [
    "engine.core",
    "engine.registry",
    "engine.aton",
    "engine.osirium",
    "ai.api",
    "ai.mcts",
    "ai.greedy",
    "ai.presets",
    "ai.review",
]


@dataclasses.dataclass(frozen=True, slots=True)
class SearchJob:
    game: str
    serialized: str
    spec: str
    #: The ``bot`` label of the search metrics (service.bots.BotPlan.metric_label).
    label: str
    seed: int
    iterations: int | None
    milliseconds: float | None
    deadline: float | None
    #: Index of this call's cancel flag (set when the client goes away), if any.
    cancel_index: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class SearchResult:
    action: int
    diagnostics: Any  # ai.api.Diagnostics
    seconds: float


@dataclasses.dataclass(frozen=True, slots=True)
class ReviewJob:
    """One decision of a game review (:func:`ai.review.review_decision`): the state before
    it, the action played, its move number, the reviewer, the search's seed and deadline."""

    game: str
    serialized: str
    played: int
    move: int
    reviewer: Any  # ai.review.Reviewer
    seed: int
    deadline: float | None
    #: Index of this search's cancel flag (set when the client goes away), if any.
    cancel_index: int | None = None


# ---------------------------------------------------------------------------------------
# Worker side
# ---------------------------------------------------------------------------------------

_BOTS: dict[str, Any] = {}
#: This worker's shared objects (set by the initializer): "cancel_flags".
_SHARED: dict[str, Any] = {}


def _init_worker(
    metrics_dir: str, nice: int, cancel_flags: Any = None, server_pid: int | None = None
) -> None:
    _SHARED["cancel_flags"] = cancel_flags
    if server_pid is not None:
        threading.Thread(target=_exit_with, args=(server_pid,), name="watch-server", daemon=True).start()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    import service.metrics  # noqa: F401  (creates this process's metric files lazily)


def _exit_with(server_pid: int) -> None:
    """End this worker when its gRPC process is gone (e.g. killed with SIGKILL): workers
    are children of the forkserver, which they keep alive, so nothing else would end them."""
    while True:
        time.sleep(1.0)
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # pragma: no cover - pid reused by another user's process
            os._exit(0)


def _warm() -> int:
    from engine.registry import list_games

    list_games()
    time.sleep(0.05)  # keep this worker busy so that the next warm task starts another one
    return os.getpid()


def run_search(job: SearchJob) -> SearchResult:
    """Run one bot search (in a worker process)."""
    from ai.api import Budget, make_bot
    from engine.registry import get_game
    from service import metrics

    start = time.monotonic()
    bot = _BOTS.get(job.spec)
    if bot is None:
        bot = _BOTS[job.spec] = make_bot(job.spec)
    # The server opened and checked this state (or wrote it): parse it, skip the checks.
    state = get_game(job.game).deserialize_state(job.serialized, validate=False)
    budget = None
    if job.iterations is not None or job.milliseconds is not None:
        budget = Budget(iterations=job.iterations, milliseconds=job.milliseconds)
    should_stop = _should_stop(job.cancel_index)
    decision = bot.choose(state, seed=job.seed, budget=budget, deadline=job.deadline, should_stop=should_stop)
    seconds = time.monotonic() - start
    d = decision.diagnostics
    metrics.record_search(job.game, job.label, d.iterations, seconds, d.belief_fallbacks)
    return SearchResult(decision.action, decision.diagnostics, seconds)


def _should_stop(index: int | None) -> Any:
    """The cancel check of a search (polled by the search), or None without a flag."""
    flags = _SHARED.get("cancel_flags")
    if flags is None or index is None:
        return None

    def should_stop() -> bool:
        return bool(flags[index])

    return should_stop


def run_review(job: ReviewJob) -> Any:
    """Review one decision (in a worker process): an :class:`ai.review.MoveReview`."""
    from ai.review import review_decision
    from engine.registry import get_game

    state = get_game(job.game).deserialize_state(job.serialized, validate=False)
    return review_decision(
        state,
        job.played,
        job.reviewer,
        job.seed,
        move=job.move,
        deadline=job.deadline,
        should_stop=_should_stop(job.cancel_index),
    )


# ---------------------------------------------------------------------------------------
# Server side
# ---------------------------------------------------------------------------------------


#: Why :class:`SearchQueue` refuses a call (the ``reason`` label of
#: ``heka_searches_rejected_total``, and ErrorInfo's reason in upper case): the queue holds
#: its maximum; the expected (or actual) wait exceeds the maximum wait; the expected wait
#: leaves no time before the call's deadline; the server is draining.
REFUSAL_REASONS = ("queue_full", "queue_wait", "queue_deadline", "draining")


class Refused(Exception):
    """The queue does not take (or no longer keeps) a bot call: ``reason`` (one of
    :data:`REFUSAL_REASONS`) and when a retry may succeed (seconds)."""

    def __init__(self, reason: str, message: str, retry_after: float) -> None:
        if reason not in REFUSAL_REASONS:  # a metric label: from the fixed set only
            raise ValueError(f"unknown refusal reason {reason!r}")
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after


#: The name of earlier releases for a refusal at admission.
CapacityFull = Refused


class Cancelled(Exception):
    """The call's client went away while the call waited in the queue."""


_ENTERED, _WAITING, _HOLDING, _DONE = range(4)


class Entry:
    """One bot call from its arrival (:meth:`SearchQueue.enter`) to its end: waiting, then
    holding a slot. ``deadline``: the call's, ``time.monotonic()`` based (None: none)."""

    __slots__ = ("cancelled", "deadline", "entered", "held_from", "state", "ticket", "wake")

    def __init__(self, entered: float, deadline: float | None, lock: Any) -> None:
        #: Wakes this call's thread alone (it shares the queue's lock): a freed slot wakes the
        #: first in line, not every waiter (bench/overload.py: with every waiter woken at each
        #: release, a full queue slowed the searches themselves).
        self.wake = threading.Condition(lock)
        self.entered = entered
        self.deadline = deadline
        self.state = _ENTERED
        self.cancelled = False
        self.held_from = 0.0
        self.ticket: Ticket | None = None


def _no_hook(*_args: Any) -> None:
    pass


class SearchQueue:
    """Search slots and the bounded, deadline-aware FIFO queue in front of them.

    ``capacity`` slots, counted here, or taken from ``slots`` (a ``multiprocessing``
    semaphore shared by several gRPC processes, holding the global capacity); ``share``: the
    slots this process can expect to use (for the wait estimate). At most ``max_length``
    calls wait (those that entered and hold no slot yet); none waits longer than
    ``max_wait`` seconds (0: no queue, a call finding no free slot is refused at once), nor
    past its deadline less the time its search needs and ``margin`` seconds.

    A call enters on arrival (:meth:`enter`) (cheap: refused there when the queue is full or its
    expected wait is too long), then waits in :meth:`acquire` until it is the first in line
    and a slot is free. The expected wait of the call at position *p* (1 = next) is
    *p* x (the recent time a call holds a slot) / ``share``: an exponential moving average
    over the calls that released a slot. ``on_length(delta)`` and ``on_wait(seconds,
    outcome)`` report the queue's length and each call's wait (metrics)."""

    #: Weight of the latest hold time in the moving average.
    ALPHA = 0.2
    #: How often the first waiter looks for a slot that another process released.
    POLL_SECONDS = 0.005

    def __init__(
        self,
        capacity: int,
        max_length: int,
        max_wait: float,
        *,
        slots: Any = None,
        share: int | None = None,
        margin: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        on_length: Callable[[int], None] = _no_hook,
        on_wait: Callable[[float, str], None] = _no_hook,
    ) -> None:
        self.capacity = capacity
        self.margin = margin
        self.max_length = max_length
        self.max_wait = max_wait
        self.share = max(1, share or capacity)
        self._slots = slots
        self._clock = clock
        self._on_length = on_length
        self._on_wait = on_wait
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._waiters: deque[Entry] = deque()
        self._pending = 0  # entered, no slot held yet, not done
        self._holding = 0
        self._hold: float | None = None
        self._closed = False

    # -- state ----------------------------------------------------------------------------

    @property
    def length(self) -> int:
        """Calls that entered and hold no slot yet."""
        return self._pending

    @property
    def holding(self) -> int:
        return self._holding

    @property
    def waiting(self) -> int:
        """Calls inside :meth:`acquire`, waiting their turn."""
        return len(self._waiters)

    @property
    def hold_seconds(self) -> float:
        """The recent time a call holds a slot (0 before any call released one)."""
        return self._hold or 0.0

    def _free(self) -> int:
        if self._slots is None:
            return self.capacity - self._holding
        try:
            return max(0, int(self._slots.get_value()))
        except NotImplementedError:  # pragma: no cover - not Linux
            return 0

    def _wake_first(self) -> None:
        """Wake the first call in line (the only one that may take a slot); the lock held."""
        if self._waiters:
            self._waiters[0].wake.notify()

    def _take(self) -> bool:
        if self._slots is None:
            return self._holding < self.capacity
        return bool(self._slots.acquire(False))

    def expected_wait(self, position: int) -> float:
        """Seconds until the call at ``position`` (1 = next in line) gets a slot."""
        return max(0, position) * self.hold_seconds / self.share

    # -- a call's life --------------------------------------------------------------------

    def enter(self, deadline: float | None = None) -> Entry:
        """Take a call in (it then waits in :meth:`admit`), or :class:`Refused` up front."""
        now = self._clock()
        with self._cond:
            if self._closed:
                raise Refused("draining", "the server is shutting down; retry on another replica", 0.1)
            position = self._pending - self._free() + 1  # <= 0: a slot is free for it
            if position > 0:
                wait = self.expected_wait(position)
                retry = min(max(self.expected_wait(position - 1), 0.05), max(self.max_wait, 0.05))
                if position > self.max_length or self.max_wait <= 0:
                    raise Refused(
                        "queue_full",
                        f"all {self.capacity} search slots are busy and {self._pending} bot calls wait "
                        f"(at most {self.max_length}); retry shortly or ask another replica",
                        retry,
                    )
                if wait > self.max_wait:
                    raise Refused(
                        "queue_wait",
                        f"all {self.capacity} search slots are busy: the expected wait of {wait:.2f} s "
                        f"exceeds {self.max_wait:g} s; retry shortly or ask another replica",
                        retry,
                    )
                if deadline is not None and now + wait + self.hold_seconds + self.margin > deadline:
                    raise Refused(
                        "queue_deadline",
                        f"all {self.capacity} search slots are busy: the expected wait of {wait:.2f} s "
                        f"and search of {self.hold_seconds:.2f} s do not fit in the call's "
                        f"{max(0.0, deadline - now):.2f} s; retry with a longer deadline or later",
                        retry,
                    )
            entry = Entry(now, deadline, self._lock)
            self._pending += 1
        self._on_length(1)
        return entry

    def acquire(self, entry: Entry) -> None:
        """Wait until ``entry`` is first in line and a slot is free, and take the slot;
        :class:`Refused` when the wait ends (the maximum wait, the call's deadline, a drain),
        :class:`Cancelled` when the call is cancelled (:meth:`cancel`)."""
        with self._cond:
            if entry.state == _DONE and entry.cancelled:  # cancelled before it asked
                raise Cancelled("the call was cancelled while it waited for a search slot")
            if entry.state != _ENTERED:
                raise RuntimeError("a queue entry is admitted once")
            entry.state = _WAITING
            self._waiters.append(entry)
            end = entry.entered + self.max_wait
            reason = "queue_wait"
            # A call still waiting when its deadline leaves no time for its search is
            # refused then, with a retry hint, rather than cut by the deadline.
            last = None if entry.deadline is None else entry.deadline - self.hold_seconds - self.margin
            if last is not None and last < end:
                end, reason = last, "queue_deadline"
            try:
                while True:
                    if entry.cancelled:
                        raise Cancelled("the call was cancelled while it waited for a search slot")
                    if self._closed:
                        raise Refused(
                            "draining", "the server is shutting down; retry on another replica", 0.1
                        )
                    first = self._waiters[0] is entry
                    if first and self._take():
                        break
                    left = end - self._clock()
                    if left <= 0:
                        waited = self._clock() - entry.entered
                        why = "its deadline" if reason == "queue_deadline" else f"at most {self.max_wait:g} s"
                        raise Refused(
                            reason,
                            f"no search slot came free in {waited:.2f} s ({why}); retry shortly or ask "
                            "another replica",
                            max(0.05, self.expected_wait(len(self._waiters))),
                        )
                    shared_head = first and self._slots is not None
                    entry.wake.wait(min(left, self.POLL_SECONDS) if shared_head else left)
            except (Refused, Cancelled) as exc:
                self._waiters.remove(entry)
                entry.state = _DONE
                self._pending -= 1
                self._wake_first()  # a new first in line
                outcome = "cancelled" if isinstance(exc, Cancelled) else "refused"
                waited = self._clock() - entry.entered
                self._on_length(-1)
                self._on_wait(waited, outcome)
                raise
            self._waiters.popleft()
            self._pending -= 1
            self._holding += 1
            entry.state = _HOLDING
            entry.held_from = self._clock()
            self._wake_first()  # the next in line may find a slot too
        self._on_length(-1)
        self._on_wait(entry.held_from - entry.entered, "admitted")

    def take_free(self) -> Entry | None:
        """A slot now, for another search of a call that already holds one (a review's
        parallel moves): only when a slot is free and no call waits for one, so that it
        never goes before a waiting call; None otherwise. Released as any (:meth:`release`)."""
        with self._cond:
            if self._closed or self._pending > 0 or not self._take():
                return None
            now = self._clock()
            entry = Entry(now, None, self._lock)
            self._holding += 1
            entry.state = _HOLDING
            entry.held_from = now
        self._on_wait(0.0, "admitted")
        return entry

    @property
    def closed(self) -> bool:
        """Whether the queue is draining (:meth:`close`)."""
        return self._closed

    def release(self, entry: Entry) -> None:
        """The call of ``entry`` is done with its slot (the next in line takes it)."""
        with self._cond:
            if entry.state != _HOLDING:
                return
            entry.state = _DONE
            self._holding -= 1
            held = self._clock() - entry.held_from
            self._hold = held if self._hold is None else self._hold + self.ALPHA * (held - self._hold)
            if self._slots is not None:
                self._slots.release()
            self._wake_first()

    def finish(self, entry: Entry) -> None:
        """The call of ``entry`` ended: a call that entered and never asked for its slot (a
        bad request, or one whose bots did not search) leaves the count; idempotent."""
        with self._cond:
            if entry.state != _ENTERED:
                return
            entry.state = _DONE
            self._pending -= 1
            self._wake_first()
        self._on_length(-1)

    def cancel(self, entry: Entry) -> None:
        """The client of ``entry`` went away: a waiting call leaves the queue."""
        with self._cond:
            entry.cancelled = True
            entry.wake.notify()

    def close(self) -> None:
        """Draining: refuse every call that waits and every call that comes."""
        with self._cond:
            self._closed = True
            for waiter in self._waiters:
                waiter.wake.notify()


class Ticket:
    """One admitted bot call: its cancel-flag index while it holds the slot; ``running``: a
    search its call stopped waiting for (:meth:`SearchPool.run`), which keeps the slot and
    the flag until its worker is done with it."""

    __slots__ = ("active", "index", "running")

    def __init__(self, index: int) -> None:
        self.index = index
        self.active = True
        self.running: Future[Any] | None = None


class SearchPool:
    """The worker processes and the queue of bot calls in front of them."""

    def __init__(
        self,
        workers: int,
        capacity: int,
        metrics_dir: str,
        nice: int = 10,
        slots: Any = None,
        *,
        max_queue: int = 0,
        max_wait: float = 0.0,
        share: int | None = None,
        margin: float = 0.0,
        on_length: Callable[[int], None] = _no_hook,
        on_wait: Callable[[float, str], None] = _no_hook,
    ) -> None:
        """``slots``: a ``multiprocessing`` semaphore shared by several gRPC processes, so that
        ``capacity`` is global; ``None``: a counter of this process. ``max_queue``,
        ``max_wait``, ``share``, ``margin``: :class:`SearchQueue`'s (the default: no queue)."""
        self.workers = workers
        self.capacity = capacity
        self._metrics_dir = metrics_dir
        self._nice = nice
        self._lock = threading.Lock()
        self.queue = SearchQueue(
            capacity,
            max_queue,
            max_wait,
            slots=slots,
            share=share,
            margin=margin,
            on_length=on_length,
            on_wait=on_wait,
        )
        # One cancel flag per slot this process can admit, shared with the workers: a search
        # polls its flag (``should_stop``) and ends early when its client has gone away.
        self._flags = get_context("forkserver").Array("b", max(1, capacity), lock=False)
        self._free = list(range(max(1, capacity)))
        self._pool = self._new_pool()

    def _new_pool(self) -> WorkerPool:
        return WorkerPool(
            self.workers,
            start_method="forkserver",
            preload=PRELOAD,
            initializer=_init_worker,
            initargs=(self._metrics_dir, self._nice, self._flags, os.getpid()),
            name="heka-search",
        )

    def warm(self, timeout: float = 60.0) -> list[int]:
        """Wait until every worker (started with the pool, before gRPC objects exist) has
        loaded the engines; their process ids."""
        futures = [self._pool.submit(_warm) for _ in range(self.workers)]
        for f in futures:
            f.result(timeout=timeout)
        return sorted(self._pool.pids())

    @property
    def in_flight(self) -> int:
        return self.queue.holding

    def enter(self, deadline: float | None = None) -> Entry:
        """:meth:`SearchQueue.enter`: a call's place in line, or :class:`Refused`."""
        return self.queue.enter(deadline)

    @contextlib.contextmanager
    def admit(self, entry: Entry | None = None, deadline: float | None = None) -> Iterator[Ticket]:
        """Hold one search slot for the ``with`` block, after waiting in line for it
        (``entry``: the call's, from :meth:`enter`; else it enters now, with ``deadline``);
        :class:`Refused` or :class:`Cancelled` when it does not get one."""
        if entry is None:
            entry = self.queue.enter(deadline)
        ticket = self.acquire(entry)
        try:
            yield ticket
        finally:
            self.release(entry)

    def acquire(self, entry: Entry) -> Ticket:
        """Wait in line for a slot with ``entry`` (:meth:`SearchQueue.acquire`) and take it,
        with its cancel flag; :class:`Refused` or :class:`Cancelled` when it does not get
        one (the entry then leaves the queue). :meth:`release` gives it back."""
        try:
            self.queue.acquire(entry)
        except BaseException:
            self.queue.finish(entry)
            raise
        return self._ticket(entry)

    def take_free(self) -> tuple[Entry, Ticket] | None:
        """A free slot now, if no call waits for one (:meth:`SearchQueue.take_free`), with its
        cancel flag; None otherwise. :meth:`release` gives it back."""
        entry = self.queue.take_free()
        return None if entry is None else (entry, self._ticket(entry))

    def _ticket(self, entry: Entry) -> Ticket:
        with self._lock:
            ticket = Ticket(self._free.pop())
            self._flags[ticket.index] = 0
            entry.ticket = ticket
            if entry.cancelled:  # cancelled just as it got the slot
                self._flags[ticket.index] = 1
        return ticket

    def release(self, entry: Entry) -> None:
        """The search of ``entry`` is done: its cancel flag and its slot go back. A search
        still running in a worker (its call stopped waiting for it) keeps them until it ends:
        the next call's search would wait behind it in that worker, and its flag, reset for
        the next call, would no longer stop it."""
        running = entry.ticket.running if entry.ticket is not None else None
        if running is not None and not running.done():
            running.add_done_callback(lambda _done: self.release(entry))
            return
        with self._lock:
            ticket = entry.ticket
            if ticket is not None:
                ticket.active = False
                entry.ticket = None
                self._free.append(ticket.index)
        self.queue.release(entry)

    def cancel_call(self, entry: Entry) -> None:
        """The client of ``entry`` went away: it leaves the queue, or its search stops."""
        self.queue.cancel(entry)
        with self._lock:
            ticket = entry.ticket
            if ticket is not None and ticket.active:
                self._flags[ticket.index] = 1

    def close(self) -> None:
        """Draining: the calls that wait, and those that come, are refused."""
        self.queue.close()

    def cancel(self, ticket: Ticket) -> None:
        """Ask the search of ``ticket`` to stop (no-op once the ticket's call is done)."""
        with self._lock:
            if ticket.active:
                self._flags[ticket.index] = 1

    def submit(self, job: SearchJob) -> Future[SearchResult]:
        return self._submit(run_search, job)

    def submit_review(self, job: ReviewJob) -> Future[Any]:
        """Review one decision in a worker (:func:`run_review`)."""
        return self._submit(run_review, job)

    def _submit(self, fn: Callable[[Any], T], job: object) -> Future[T]:
        try:
            return self._pool.submit(fn, job)
        except BrokenProcessPool:
            self._restart()
            raise
        except RuntimeError as exc:  # "cannot submit to a worker pool that is shut down"
            raise BrokenProcessPool(str(exc)) from exc

    def run(self, job: SearchJob, timeout: float | None, ticket: Ticket | None = None) -> SearchResult:
        """Run one search; ``BrokenProcessPool`` when its worker died (the pool replaces
        the worker), ``TimeoutError`` after ``timeout`` seconds: then the search is asked to
        stop (``ticket``'s flag), and the ticket's slot stays taken until it has
        (:meth:`release`)."""
        future = self.submit(job)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            if ticket is not None:
                ticket.running = future
                self.cancel(ticket)
            raise

    def _restart(self) -> None:
        """Replace a broken pool (a worker died while starting)."""
        with self._lock:
            old = self._pool
            if old.broken:
                log.error("search worker pool broken; starting a new one")
                self._pool = self._new_pool()
                old.shutdown(cancel=True)

    def shutdown(self, *, cancel: bool = False, timeout: float = 5.0) -> None:
        """Let running searches finish (up to ``timeout`` seconds, then terminate them); join
        the workers, within ``timeout`` + ``ai.procpool.SHUTDOWN_MARGIN_SECONDS``.
        ``cancel``: terminate them at once (a start that failed)."""
        self._pool.shutdown(cancel=cancel, timeout=timeout)
