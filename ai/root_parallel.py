"""Root parallelism (``MctsParams.workers``): independent searches of one position, summed.

``workers=N`` runs N independent searches (each with the full budget) with seeds derived
from the seed (:func:`worker_seed`), N−1 of them in a :class:`ai.procpool.WorkerPool`
(``fork`` where available, else ``spawn``; the state travels as its serialisation) and one
in the calling process; the bot (:class:`ai.mcts.MctsBot`) sums their root statistics. The
pool is always shut down (no zombies); a worker that fails or does not answer is replaced by
the same search run in-process, so a result with an iteration budget does not depend on
whether the workers worked.

The search is the caller's: :func:`search_in_parallel` is given the module-level function
that runs one search (``ai.mcts._run_one``), which the workers receive by name (so that
:mod:`ai.mcts` imports this module, not the other way round).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Final, Protocol

from ai.knowledge import GameKnowledge
from ai.mcts_params import Limits, MctsParams, SearchResult
from ai.procpool import WorkerPool, default_start_method, get_context
from engine._mypyc import picklable
from engine.core import Game, State


class EventLike(Protocol):
    """A ``multiprocessing`` event, as far as a worker reads it."""

    def is_set(self) -> bool: ...


class OneSearch(Protocol):
    """One search of ``state`` for ``player`` (``ai.mcts._run_one``): a module-level
    function, so that a worker process receives it by name."""

    def __call__(
        self,
        state: State,
        player: int,
        *,
        params: MctsParams,
        seed: int,
        limits: Limits,
        should_stop: Callable[[], bool] | None,
        knowledge: GameKnowledge[State] | None,
    ) -> SearchResult: ...


_MASK64: Final = (1 << 64) - 1


def worker_seed(seed: int, index: int) -> int:
    """Seed of worker ``index`` (worker 0 uses ``seed`` itself: ``workers=1`` is the plain
    search)."""
    if index == 0:
        return seed
    z = (seed * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9) & _MASK64
    z ^= z >> 31
    return z


#: A root-parallel worker's stop flag (set by the parent when its own search was
#: interrupted), given to the worker process when it starts.
_WORKER_STOP: Final[list[Callable[[], bool]]] = []


def _remember_stop(stop: EventLike) -> None:
    _WORKER_STOP[:] = [stop.is_set]


@dataclasses.dataclass(frozen=True, slots=True)
class _WorkerJob:
    """One root-parallel search for a worker; the state travels as its serialisation."""

    search: OneSearch
    game: Game
    data: str
    player: int
    params: MctsParams
    seed: int
    limits: Limits
    knowledge: GameKnowledge[State] | None


picklable(_WorkerJob)


def _search_in_worker(job: _WorkerJob) -> SearchResult:  # pragma: no cover - in a worker process
    state = job.game.deserialize_state(job.data)
    stop = _WORKER_STOP[0] if _WORKER_STOP else None
    return job.search(
        state, job.player, params=job.params, seed=job.seed, limits=job.limits, should_stop=stop,
        knowledge=job.knowledge,
    )  # fmt: skip


def search_in_parallel(
    search: OneSearch,
    state: State,
    player: int,
    *,
    params: MctsParams,
    seed: int,
    workers: int,
    limits: Limits,
    should_stop: Callable[[], bool] | None,
    knowledge: GameKnowledge[State] | None,
) -> tuple[list[SearchResult], int]:
    """Run ``workers`` searches, ``workers - 1`` of them in a :class:`WorkerPool`; return
    their results (index order) and how many ran in worker processes successfully."""
    pool: WorkerPool | None = None
    futures: dict[int, Future[SearchResult]] = {}
    context = get_context(default_start_method())
    stop = context.Event()
    try:
        pool = WorkerPool(
            workers - 1,
            start_method=context.get_start_method(),
            initializer=_remember_stop,
            initargs=(stop,),
            name="heka-search",
        )
        data = state.serialize()
        for i in range(1, workers):
            job = _WorkerJob(
                search, state.game, data, player, params, worker_seed(seed, i), limits, knowledge
            )
            futures[i] = pool.submit(_search_in_worker, job)
    except Exception:  # e.g. inside a daemonic process: every search runs here
        pass
    results: dict[int, SearchResult] = {}
    ok_children = 0
    try:
        t0 = time.monotonic()
        results[0] = search(
            state,
            player,
            params=params,
            seed=seed,
            limits=limits,
            should_stop=should_stop,
            knowledge=knowledge,
        )
        if results[0].interrupted:
            stop.set()
        own = time.monotonic() - t0
        # The workers run the same budget: give them a generous grace period.
        wait(futures.values(), timeout=max(5.0, 4.0 * own))
        for i, future in futures.items():
            if future.done() and future.exception() is None:
                results[i] = future.result()
                ok_children += 1
    finally:
        if pool is not None:
            pool.shutdown(cancel=True)
    # A worker that failed: run its search here (same seed, so the same result).
    for i in range(1, workers):
        if i not in results:
            if limits.stop_at is not None and time.monotonic() >= limits.stop_at:
                continue
            results[i] = search(
                state, player, params=params, seed=worker_seed(seed, i), limits=limits,
                should_stop=should_stop, knowledge=knowledge,
            )  # fmt: skip
    return [results[i] for i in sorted(results)], ok_children
