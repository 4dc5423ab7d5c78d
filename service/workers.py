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

:class:`SearchPool.admit` caps the bot calls in flight: the excess is refused at once with
``RESOURCE_EXHAUSTED``, never queued without bound. Each admitted call owns a cancel flag in
shared memory that its search polls (the bot's ``should_stop``): when the client cancels or
disconnects, the flag is set and the search ends early.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ai.procpool import WorkerPool, get_context

log = logging.getLogger("heka.workers")

PRELOAD = [
    "engine.core",
    "engine.registry",
    "engine.aton",
    "engine.osirium",
    "ai.api",
    "ai.mcts",
    "ai.greedy",
    "ai.presets",
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
    should_stop = None
    flags, index = _SHARED.get("cancel_flags"), job.cancel_index
    if flags is not None and index is not None:

        def should_stop() -> bool:
            return bool(flags[index])

    decision = bot.choose(state, seed=job.seed, budget=budget, deadline=job.deadline, should_stop=should_stop)
    seconds = time.monotonic() - start
    metrics.record_search(job.game, job.label, decision.diagnostics.iterations, seconds)
    return SearchResult(decision.action, decision.diagnostics, seconds)


# ---------------------------------------------------------------------------------------
# Server side
# ---------------------------------------------------------------------------------------


class CapacityFull(Exception):
    """Every search slot is taken."""


class Ticket:
    """One admitted bot call: its cancel-flag index while it holds the slot."""

    __slots__ = ("active", "index")

    def __init__(self, index: int) -> None:
        self.index = index
        self.active = True


class SearchPool:
    """The worker processes and the admission counter."""

    def __init__(
        self, workers: int, capacity: int, metrics_dir: str, nice: int = 10, slots: Any = None
    ) -> None:
        """``slots``: a ``multiprocessing`` semaphore shared by several gRPC processes, so that
        ``capacity`` is global; ``None``: a counter of this process."""
        self.workers = workers
        self.capacity = capacity
        self._slots = slots
        self._metrics_dir = metrics_dir
        self._nice = nice
        self._lock = threading.Lock()
        self._in_flight = 0
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
        return self._in_flight

    @contextlib.contextmanager
    def admit(self) -> Iterator[Ticket]:
        """Hold one search slot for the ``with`` block; :class:`CapacityFull` at once when
        none is free."""
        full = CapacityFull(
            f"all {self.capacity} search slots are busy; retry shortly or ask another replica"
        )
        if self._slots is not None and not self._slots.acquire(False):
            raise full
        with self._lock:
            if (self._slots is None and self._in_flight >= self.capacity) or not self._free:
                if self._slots is not None:
                    self._slots.release()
                raise full
            self._in_flight += 1
            ticket = Ticket(self._free.pop())
            self._flags[ticket.index] = 0
        try:
            yield ticket
        finally:
            with self._lock:
                ticket.active = False
                self._free.append(ticket.index)
                self._in_flight -= 1
            if self._slots is not None:
                self._slots.release()

    def cancel(self, ticket: Ticket) -> None:
        """Ask the search of ``ticket`` to stop (no-op once the ticket's call is done)."""
        with self._lock:
            if ticket.active:
                self._flags[ticket.index] = 1

    def submit(self, job: SearchJob) -> Future[SearchResult]:
        try:
            return self._pool.submit(run_search, job)
        except BrokenProcessPool:
            self._restart()
            raise
        except RuntimeError as exc:  # "cannot submit to a worker pool that is shut down"
            raise BrokenProcessPool(str(exc)) from exc

    def run(self, job: SearchJob, timeout: float | None) -> SearchResult:
        """Run one search; ``BrokenProcessPool`` when its worker died (the pool replaces
        the worker), ``TimeoutError`` after ``timeout`` seconds."""
        return self.submit(job).result(timeout=timeout)

    def _restart(self) -> None:
        """Replace a broken pool (a worker died while starting)."""
        with self._lock:
            old = self._pool
            if old.broken:
                log.error("search worker pool broken; starting a new one")
                self._pool = self._new_pool()
                old.shutdown(cancel=True)

    def shutdown(self) -> None:
        """Let running searches finish (up to 5 s, then terminate them); join the workers."""
        self._pool.shutdown()
