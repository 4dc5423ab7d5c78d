"""``ReviewGame``: the review of a played game, as a stream (docs/review.md).

The request is checked and the game replayed before anything is sent, so that a bad
request, an action that is not legal (``INVALID_ARGUMENT`` naming its move number) or a
review another viewer may not see is refused with a status and no message. Then:

1. **The header**, at once: the decisions to review and the forced ones skipped.
2. **The searches**, one per decision of the reviewed seats (:func:`ai.review.review_decision`,
   in the search workers). Each search takes a search slot under the same admission control
   as a bot call: one always waits its turn in the search queue; more run at once only on
   slots that are free while no other call waits (``SearchQueue.take_free``), up to the
   request's ``workers``. A search's seed is keyed with the server's secret and the seat's
   view at that decision (:func:`service.bots.search_seed`), as a bot's: the review of a
   decision depends on what the seat could see, and the published seed replays nothing
   without the keys.
3. **A MoveReview per decision**, in move order, as the searches end.
4. **The summary**, with each seat's accuracy and why the stream ended: complete, out of
   time (the call's deadline, ``max_seconds``, ``HEKA_MAX_REVIEW_SECONDS``), or the server
   draining; then ``next_move`` continues it.

A client that cancels (or disconnects) stops the searches running and the ones to come.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any

import grpc

from ai.presets import PRESETS
from ai.review import (
    DEFAULT_ALTERNATIVES,
    GRADES,
    MAX_ALTERNATIVES,
    HistoryError,
    MoveReview,
    Reviewer,
    ReviewPoint,
    replay,
    resolve_history,
    reviewer,
    summarize,
)
from engine.core import Game, State
from service import bots, convert, metrics
from service.config import Config
from service.envelope import KeyRing
from service.errors import ServiceError, invalid
from service.gen.heka.v1 import game_service_pb2 as pb
from service.workers import Cancelled, Entry, Refused, ReviewJob, SearchPool

_GRADES = {g: convert.enum_value(pb.MoveGrade.DESCRIPTOR, g) for g in GRADES}
_DIFFICULTIES = {
    pb.DIFFICULTY_UNSPECIFIED: "medium",
    pb.DIFFICULTY_EASY: "easy",
    pb.DIFFICULTY_MEDIUM: "medium",
    pb.DIFFICULTY_HARD: "hard",
    pb.DIFFICULTY_EXPERT: "expert",
}
COMPLETE, DEADLINE, SHUTTING_DOWN = "complete", "deadline", "shutting_down"
_ENDS = {e: convert.enum_value(pb.ReviewEnd.DESCRIPTOR, e) for e in (COMPLETE, DEADLINE, SHUTTING_DOWN)}
#: How often the review's thread looks at its call (cancelled?) and the time while searches run.
POLL_SECONDS = 0.25
#: Seconds before the call's deadline at which the review stops, to send its last messages.
END_MARGIN_SECONDS = 0.25
_MASK = 0xFFFFFFFFFFFFFFFF


@dataclasses.dataclass(frozen=True, slots=True)
class ReviewPlan:
    """A checked request: the decisions to review (move order), the reviewed seats and
    their forced moves, the reviewer, the seed, the game at the end, and the limits."""

    game: Game
    points: list[ReviewPoint]
    seats: list[int]
    forced: dict[int, int]
    reviewer: Reviewer
    seed: int
    end: State
    actions: int
    workers: int
    #: When the review stops (``time.monotonic()``): the earliest of its time caps.
    stop_at: float
    compact: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Server:
    """What a review uses of the server: its settings, keys, search pool and action messages."""

    config: Config
    keys: KeyRing
    searches: SearchPool
    actions: convert.ActionCache


def plan_review(
    server: Server,
    start: State,
    request: pb.ReviewGameRequest,
    context: Any,
    *,
    viewer: int | None,
    seats: list[int],
    started: float,
    open_token: Callable[[str], State],
) -> ReviewPlan:
    """Check ``request`` (its token opened: ``start``; its viewer and reviewed seats checked)
    and replay its game: the plan, or a :class:`ServiceError`. ``open_token`` opens a
    checkpoint's token (the same game as ``start``, else ``WRONG_GAME``)."""
    config = server.config
    if len(request.actions) > config.max_review_actions:
        raise invalid(
            "actions",
            f"a review replays at most {config.max_review_actions} actions on this server, got "
            f"{len(request.actions)}",
            "bad_request",
        )
    if not request.trusted_backend:
        # A review of seat X names X's hand at each decision (the actions played and the
        # alternatives): it goes to X alone, as X's legal actions do.
        if len(seats) > 1:
            raise invalid(
                "all_seats",
                "a review of every seat shows every seat's private cards: only a trusted backend "
                "that does not forward it may ask for it (trusted_backend=true); a seat may review "
                "its own moves (seat=S, viewer=S)",
                "private_review",
            )
        if viewer != seats[0]:
            raise invalid(
                "viewer",
                f"a review of seat {seats[0]} shows its private cards of each moment: pass "
                f"viewer={seats[0]} (or trusted_backend=true from a backend that does not forward it)",
                "private_review",
            )
    the_reviewer = _reviewer(request, config.max_iterations)
    workers = request.workers or config.max_workers_per_search
    if not 1 <= workers <= config.max_workers_per_search:
        raise invalid(
            "workers",
            f"workers must be 0..{config.max_workers_per_search} on this server, got {request.workers}",
            "bad_budget",
        )
    if request.from_move < 0:
        raise invalid("from_move", f"from_move must be >= 0, got {request.from_move}", "bad_request")
    if not (request.max_seconds >= 0 and request.max_seconds < float("inf")):
        raise invalid(
            "max_seconds", f"max_seconds must be >= 0, got {bots.exact(request.max_seconds)}", "bad_budget"
        )
    first = start.move_number()
    if len(request.checkpoints) > len(request.actions):
        raise invalid(
            "checkpoints",
            f"{len(request.checkpoints)} checkpoints for {len(request.actions)} actions: "
            "at most one after each",
            "bad_request",
        )
    checkpoints = [open_token(token) for token in request.checkpoints]
    try:
        actions = resolve_history(
            start,
            list(request.actions),
            checkpoints,
            viewer=viewer,
            pinned=not request.trusted_backend,
        )
        points, end = replay(start, actions, seats)
    except HistoryError as exc:
        field = f"actions[{exc.index}]" if exc.index is not None else "checkpoints"
        metadata = {"move": str(exc.move)}
        if exc.index is not None:
            metadata["index"] = str(exc.index)
        raise invalid(field, f"move {exc.move}: {exc}", "illegal_action", metadata) from None
    last = first + len(actions)  # the last action's move number (the first's is first + 1)
    if request.from_move > last:
        raise invalid(
            "from_move",
            f"from_move must be 0..{last}, the move number of the last of the {len(actions)} "
            f"actions, got {request.from_move}",
            "bad_request",
        )
    forced = dict.fromkeys(seats, 0)
    todo: list[ReviewPoint] = []
    for p in points:
        move = first + p.move
        if move < request.from_move:
            continue
        if p.forced:
            forced[p.seat] += 1
        else:
            todo.append(dataclasses.replace(p, move=move))
    stop_at = started + config.max_review_seconds
    if request.max_seconds > 0:
        stop_at = min(stop_at, started + request.max_seconds)
    remaining = context.time_remaining()
    if remaining is not None and remaining < 1e8:
        stop_at = min(stop_at, time.monotonic() + remaining - END_MARGIN_SECONDS)
    return ReviewPlan(
        game=start.game,
        points=todo,
        seats=seats,
        forced=forced,
        reviewer=the_reviewer,
        seed=request.seed if request.HasField("seed") else secrets.randbits(64),
        end=end,
        actions=len(request.actions),
        workers=workers,
        stop_at=stop_at,
        compact=request.compact_actions,
    )


def _reviewer(request: pb.ReviewGameRequest, max_iterations: int) -> Reviewer:
    preset = _DIFFICULTIES.get(request.difficulty)
    if preset is None:
        raise invalid("difficulty", f"unknown difficulty {request.difficulty}", "bad_bot")
    if not 0 <= request.iterations <= max_iterations:
        raise invalid(
            "iterations",
            f"iterations must be 0..{max_iterations} on this server, got {request.iterations}",
            "bad_budget",
        )
    alternatives = request.alternatives or DEFAULT_ALTERNATIVES
    if not 1 <= alternatives <= MAX_ALTERNATIVES:
        raise invalid(
            "alternatives",
            f"alternatives must be 0..{MAX_ALTERNATIVES}, got {request.alternatives}",
            "bad_request",
        )
    iterations = request.iterations or None
    default = PRESETS[preset].iterations
    if iterations is None and default is not None and default > max_iterations:
        iterations = max_iterations  # the preset's budget obeys the cap, as a bot's does
    return reviewer(preset, iterations, alternatives)


# ---------------------------------------------------------------------------------------
# The messages
# ---------------------------------------------------------------------------------------


def header_message(plan: ReviewPlan) -> pb.ReviewGameResponse:
    msg = pb.ReviewGameResponse()
    h = msg.header
    h.moves = len(plan.points)
    h.actions = plan.actions
    h.seats.extend(plan.seats)
    h.forced_moves = sum(plan.forced.values())
    h.reviewer = plan.reviewer.name
    h.iterations = plan.reviewer.iterations
    h.seed = plan.seed
    convert.fill_status(h.status, plan.end)
    return msg


def move_message(
    plan: ReviewPlan, actions: convert.ActionCache, point: ReviewPoint, r: MoveReview
) -> pb.ReviewGameResponse:
    game = plan.game
    compact = plan.compact
    msg = pb.ReviewGameResponse()
    m = msg.move
    m.move = point.move
    m.seat = r.seat
    m.decision = convert.decision_value(point.state.decision())
    m.played.CopyFrom(actions.get(game, r.played, compact=compact))
    m.best.CopyFrom(actions.get(game, r.best, compact=compact))
    m.played_score = r.played_score
    m.best_score = r.best_score
    m.loss = r.loss
    m.grade = _GRADES[r.grade]
    m.accuracy = r.accuracy
    for alt in r.alternatives:
        a = m.alternatives.add(visits=alt.visits, expected_score=alt.score)
        a.action.CopyFrom(actions.get(game, alt.action, compact=compact))
    m.iterations = r.iterations
    m.elapsed_seconds = r.seconds
    return msg


def summary_message(
    plan: ReviewPlan, reviews: list[MoveReview], end: str, started: float
) -> pb.ReviewGameResponse:
    msg = pb.ReviewGameResponse()
    s = msg.summary
    s.end = _ENDS[end]
    for seat in summarize(plan.seats, reviews, plan.forced):
        out = s.seats.add(
            seat=seat.seat,
            moves=seat.moves,
            forced_moves=seat.forced,
            accuracy=seat.accuracy,
            mean_loss=seat.mean_loss,
        )
        for name in GRADES:
            out.grades.add(grade=_GRADES[name], moves=seat.grades[name])
    s.moves_reviewed = len(reviews)
    left = plan.points[len(reviews) :]
    s.moves_left = len(left)
    s.next_move = left[0].move if left else 0
    s.elapsed_seconds = time.monotonic() - started
    return msg


# ---------------------------------------------------------------------------------------
# The call
# ---------------------------------------------------------------------------------------


def review_game(
    server: Server,
    start: State,
    request: pb.ReviewGameRequest,
    context: Any,
    *,
    viewer: int | None,
    seats: list[int],
    open_token: Callable[[str], State],
) -> Iterator[pb.ReviewGameResponse]:
    """The ``ReviewGame`` stream (the module docstring) from ``start``, the state in the
    request's token, for ``viewer``, reviewing ``seats`` (both checked); ``context`` is the
    call's (``time_remaining``, ``is_active``, ``add_callback``, and ``search_entry``: the
    place in the search queue the call took on arrival, if any)."""
    started = time.monotonic()
    plan = plan_review(
        server, start, request, context, viewer=viewer, seats=seats, started=started, open_token=open_token
    )
    game_name = plan.game.descriptor.name
    yield header_message(plan)
    reviews: list[MoveReview] = []
    searches = _Searches(server, plan, context)
    metrics.REVIEWS_IN_FLIGHT.inc()
    try:
        for point, r in searches.run():
            reviews.append(r)
            metrics.child(metrics.REVIEW_MOVES, game_name, r.grade).inc()
            yield move_message(plan, server.actions, point, r)
        yield summary_message(plan, reviews, searches.end, started)
        metrics.child(metrics.REVIEW_SECONDS, game_name).observe(time.monotonic() - started)
    finally:
        metrics.REVIEWS_IN_FLIGHT.dec()


class _Searches:
    """The searches of one review, each in a search slot (the module docstring): reviews in
    move order, and why they stopped (:attr:`end`)."""

    def __init__(self, server: Server, plan: ReviewPlan, context: Any) -> None:
        self.server = server
        self.pool = server.searches
        self.plan = plan
        self.context = context
        self.end = COMPLETE
        #: The call's place in the queue, taken on arrival (used for the first search).
        self.entry: Entry | None = getattr(context, "search_entry", None)
        context.search_entry = None  # this class finishes it
        self._running: dict[Future[Any], tuple[ReviewPoint, Entry]] = {}
        #: Every entry in the queue or holding a slot, cancelled when the call ends.
        self._live: set[Entry] = set()
        self._lock = threading.Lock()
        self._ended = False
        #: Set when the call ends: a review waiting to try the queue again wakes and stops.
        self._end_event = threading.Event()

    # -- the call's end -------------------------------------------------------------------

    def _on_call_end(self) -> None:
        with self._lock:
            self._ended = True
            live = list(self._live)
        self._end_event.set()
        for entry in live:
            self.pool.cancel_call(entry)

    def _track(self, entry: Entry) -> None:
        with self._lock:
            self._live.add(entry)
            ended = self._ended
        if ended:
            self.pool.cancel_call(entry)

    def _untrack(self, entry: Entry) -> None:
        with self._lock:
            self._live.discard(entry)

    def _cancelled(self) -> ServiceError:
        return ServiceError(grpc.StatusCode.CANCELLED, "the call was cancelled", reason="cancelled")

    # -- slots ----------------------------------------------------------------------------

    def _wait_for_slot(self) -> tuple[Entry, Any] | None:
        """A slot through the queue, waiting its turn like any bot call; None when the
        review must stop (:attr:`end` says why)."""
        while True:
            if self._end_event.is_set():  # the client went away: no more searches
                raise self._cancelled()
            now = time.monotonic()
            if now >= self.plan.stop_at:
                self.end = DEADLINE
                return None
            entry = self.entry
            self.entry = None
            if entry is None:
                try:
                    entry = self.pool.enter(self.plan.stop_at)
                except Refused as exc:
                    if exc.reason == "draining":
                        self.end = SHUTTING_DOWN
                        return None
                    if exc.reason == "queue_deadline":
                        self.end = DEADLINE
                        return None
                    # A full queue: the review, admitted already, tries again after the hint,
                    # unless its call ends meanwhile.
                    self._end_event.wait(min(max(exc.retry_after, 0.01), max(0.0, self.plan.stop_at - now)))
                    continue
            self._track(entry)
            try:
                ticket = self.pool.acquire(entry)
            except Refused as exc:
                self._untrack(entry)
                if exc.reason == "draining":
                    self.end = SHUTTING_DOWN
                    return None
                if exc.reason == "queue_deadline":
                    self.end = DEADLINE
                    return None
                continue  # waited the longest a call may: in line again
            except Cancelled:
                self._untrack(entry)
                raise self._cancelled() from None
            return entry, ticket

    def _submit(self, point: ReviewPoint, entry: Entry, ticket: Any) -> None:
        plan = self.plan
        seed = bots.search_seed(self.server.keys.signing, point.state, (plan.seed + point.move) & _MASK)
        job = ReviewJob(
            game=plan.game.descriptor.name,
            serialized=point.state.serialize(),
            played=point.played,
            move=point.move,
            reviewer=plan.reviewer,
            seed=seed,
            deadline=plan.stop_at,
            cancel_index=ticket.index,
        )
        try:
            future = self.pool.submit_review(job)
        except BaseException:
            self._untrack(entry)
            self.pool.release(entry)
            raise
        self._running[future] = (point, entry)

    # -- the loop -------------------------------------------------------------------------

    def run(self) -> Iterator[tuple[ReviewPoint, MoveReview]]:
        """Each decision's review, in move order, as the searches end."""
        plan = self.plan
        pending = deque(plan.points)
        order = deque(p.move for p in plan.points)
        ready: dict[int, tuple[ReviewPoint, MoveReview]] = {}
        if not self.context.add_callback(self._on_call_end):
            self._on_call_end()
        try:
            while order:
                if not self.context.is_active():
                    raise self._cancelled()
                if time.monotonic() >= plan.stop_at:
                    self.end = DEADLINE
                    break
                if pending and not self._running:
                    slot = self._wait_for_slot()
                    if slot is None:
                        break
                    self._submit(pending.popleft(), *slot)
                while pending and len(self._running) < plan.workers:
                    free = self.pool.take_free()
                    if free is None:
                        break
                    self._track(free[0])
                    self._submit(pending.popleft(), *free)
                timeout = max(0.0, min(POLL_SECONDS, plan.stop_at - time.monotonic()))
                done, _ = wait(list(self._running), timeout=timeout, return_when=FIRST_COMPLETED)
                stop = False
                for future in done:
                    point, entry = self._running.pop(future)
                    self._untrack(entry)
                    self.pool.release(entry)
                    r: MoveReview = future.result()
                    if r.interrupted:  # cut by the time or a cancel: not a review of the budget
                        if not self.context.is_active():
                            raise self._cancelled()
                        self.end = DEADLINE
                        stop = True
                    else:
                        ready[point.move] = (point, r)
                while order and order[0] in ready:
                    yield ready.pop(order.popleft())
                if stop:
                    break
        finally:
            self._stop()

    def _stop(self) -> None:
        """Stop what still runs (its searches end at their next cancel check) and give every
        slot back once its worker is free; leave the queue."""
        if self.entry is not None:
            self.pool.queue.finish(self.entry)
            self.entry = None
        if not self._running:
            return
        for _point, entry in self._running.values():
            self.pool.cancel_call(entry)
        wait(list(self._running), timeout=10.0)
        for _point, entry in self._running.values():
            self._untrack(entry)
            self.pool.release(entry)
        self._running.clear()
