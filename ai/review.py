"""The game review: every decision of a seat, searched from what that seat knew then.

A game is replayed from its start (a state and the actions in order). For each decision of
a reviewed seat, the reviewer (the MCTS bot with an iteration budget, :class:`Reviewer`)
searches the position *as that seat saw it*: its search determinises from the seat's view
(A10.4 / O6.4), so a review never uses another seat's hidden cards, and the same public
history with other hidden cards for the other seats gives the same review.

One decision, :func:`review_decision`:

1. **The search.** The reviewer's search from the decision, with its whole budget
   (``early_stop=off``: the most visited action is the one an early stop would keep, and the
   alternatives get their share): its most visited root action is the **best** action, the
   one the bot would have played with that seed; the root's statistics give the top
   alternatives.
2. **The action played**, when it is not the best, is valued by a second search of as many
   iterations as the best action received, whose root may take only that action
   (:func:`ai.mcts.search_one_action`): both values then come from subtrees of the same size,
   searched by the same rules.
3. **Expected score** of an action for the seat: ``(1 + v) / 2`` where ``v`` is the search's
   mean return after it (A9.4 / O8.5: a win +1, a shared win 0, a loss -1, discounted by the
   search's ``0.995`` per ply), a win-probability-like figure from 0 to 1 (a shared win counts
   half). **Loss** = expected score of the best action minus that of the action played, at
   least 0.
4. **Grade**, by loss (:data:`GRADES`, :data:`LOSS_BOUNDS`): ``best`` when the action played
   is the search's best, else ``excellent`` below 0.02, ``good`` below 0.05, ``inaccuracy``
   below 0.10, ``mistake`` below 0.20, ``blunder`` from 0.20: the bands of chess sites'
   expected-points reviews, on the same 0-1 scale.

**Accuracy** (:func:`move_accuracy`, :func:`game_accuracy`): each reviewed move scores
``103.1668 * exp(-0.04354 * L) - 3.1669`` (clamped to 0-100) for a loss of ``L`` percentage
points, the curve Lichess fitted so that a best move scores 100, a loss of 2 points about 91,
of 10 points about 64 and of 30 points about 25; a seat's accuracy over a game is the mean of
its moves' scores. The curve is steep for small losses and flat for large ones, so a single
lost position (where every move loses a lot) cannot outweigh many well-played moves, and the
mean of scores orders players by strength where the mean loss is dominated by a few moves.
docs/review.md gives the validation: the accuracy of the rated ladder levels rises with their
ratings (bench/review_validation.py).

Skipped: decisions with one legal action (forced), counted per seat; chance is never a
decision in heka's games (engine/core.py), so there is none to skip.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import as_completed

from ai.arena import derive_seed
from ai.bot import Budget
from ai.mcts import MctsBot, search_one_action
from ai.mcts_params import Limits, MctsParams, parse_params
from ai.presets import PRESETS
from ai.procpool import WorkerPool
from engine.core import SECRET_ACTION, State
from engine.registry import get_game

#: The grades of a reviewed move, best first.
GRADES: tuple[str, ...] = ("best", "excellent", "good", "inaccuracy", "mistake", "blunder")
#: Each grade after ``best`` and the loss it stays below (the last grade has no bound).
LOSS_BOUNDS: tuple[tuple[str, float], ...] = (
    ("excellent", 0.02),
    ("good", 0.05),
    ("inaccuracy", 0.10),
    ("mistake", 0.20),
)
#: The reviewer's default preset.
DEFAULT_PRESET = "medium"
#: Root alternatives reported by default, and at most.
DEFAULT_ALTERNATIVES = 3
MAX_ALTERNATIVES = 10
#: The fewest iterations of the second search that values the action played.
MIN_PLAYED_ITERATIONS = 50
#: What the second search's seed differs by from the first's (any fixed odd number).
_PLAYED_SEED = 0x9E3779B97F4A7C15


class ReplayError(ValueError):
    """An action of the list cannot be applied: ``move`` is its number (1 = the first)."""

    def __init__(self, move: int, message: str) -> None:
        super().__init__(f"move {move}: {message}")
        self.move = move
        self.detail = message


@dataclasses.dataclass(frozen=True, slots=True)
class Reviewer:
    """The search that reviews: an MCTS spec (``ai.api.make_bot`` grammar) with an iteration
    budget and no time limit, so that a review is reproducible; ``alternatives``: root
    actions reported per move."""

    name: str
    spec: str
    iterations: int
    alternatives: int = DEFAULT_ALTERNATIVES

    @property
    def params(self) -> MctsParams:
        return parse_params(self.spec.partition(":")[2])[1]


def reviewer(
    preset: str = DEFAULT_PRESET, iterations: int | None = None, alternatives: int = DEFAULT_ALTERNATIVES
) -> Reviewer:
    """The reviewer of a preset (its evaluation and constants), on the preset's iteration
    budget or ``iterations``; ``ValueError`` for an unknown preset or a bad number."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    n = iterations if iterations is not None else PRESETS[preset].iterations
    if n is None or n < 1:
        raise ValueError(f"a review needs a positive iteration budget, got {n}")
    if not 1 <= alternatives <= MAX_ALTERNATIVES:
        raise ValueError(f"alternatives must be 1..{MAX_ALTERNATIVES}, got {alternatives}")
    spec = f"mcts:{preset},iterations={n},ms=none,early_stop=off"
    name = f"mcts:{preset}" + (f",iterations={n}" if iterations is not None else "")
    parse_params(spec.partition(":")[2])  # checks the spec once, here
    return Reviewer(name, spec, n, alternatives)


# ---------------------------------------------------------------------------------------
# Scales
# ---------------------------------------------------------------------------------------


def expected_score(value: float) -> float:
    """A search value (a mean return in [-1, 1]) as an expected score in [0, 1]."""
    return min(1.0, max(0.0, (1.0 + value) / 2.0))


def grade(loss: float, is_best: bool) -> str:
    """The grade of a move (:data:`GRADES`) from its loss."""
    if is_best:
        return GRADES[0]
    for name, bound in LOSS_BOUNDS:
        if loss < bound:
            return name
    return GRADES[-1]


def move_accuracy(loss: float) -> float:
    """A move's accuracy, 0-100, from its loss (0-1): the curve of the module docstring."""
    points = 100.0 * max(0.0, loss)
    return min(100.0, max(0.0, 103.1668 * math.exp(-0.04354 * points) - 3.1669))


def game_accuracy(accuracies: Iterable[float]) -> float:
    """A seat's accuracy over its reviewed moves: the mean of their accuracies (0 moves: 0)."""
    values = list(accuracies)
    return sum(values) / len(values) if values else 0.0


# ---------------------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class ReviewPoint:
    """A decision of a reviewed seat: its move number (1 = the list's first action), the
    seat, the state before it (the seat to act is ``seat``), the action played, and whether
    it was forced (one legal action)."""

    move: int
    seat: int
    state: State
    played: int
    forced: bool


def replay(
    start: State, actions: Sequence[int], seats: Iterable[int] | None = None
) -> tuple[list[ReviewPoint], State]:
    """Replay ``actions`` from ``start`` (left unchanged): the decisions of ``seats`` (every
    seat when ``None``), and the state at the end. :class:`ReplayError` names the first
    action that cannot be applied (the game is over, or it is not legal)."""
    wanted = None if seats is None else frozenset(seats)
    state = start.clone()
    points: list[ReviewPoint] = []
    game = state.game
    for i, action in enumerate(actions):
        move = i + 1
        seat = state.current_player()
        if seat < 0:
            raise ReplayError(move, f"the game is already over after {i} actions")
        if not 0 <= action < game.descriptor.num_distinct_actions or not state.is_legal(action):
            text = (
                game.action_to_string(action)
                if 0 <= action < game.descriptor.num_distinct_actions
                else str(action)
            )
            raise ReplayError(
                move, f"action {action} ({text}) is not legal for seat {seat} ({state.decision()})"
            )
        if wanted is None or seat in wanted:
            forced = len(state.legal_actions()) == 1
            points.append(ReviewPoint(move, seat, state.clone(), action, forced))
        state.apply(action)
    return points, state


class HistoryError(ValueError):
    """The actions and the checkpoints do not make one game: ``move`` is the move number of
    the action or the checkpoint named, ``index`` the action's index in the list (or None)."""

    def __init__(self, move: int, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.move = move
        self.index = index


#: The most replays one segment between two checkpoints may take to resolve its secret
#: decisions (each a legal secret action of its seat, tried in id order).
MAX_RESOLVE_REPLAYS = 20_000


def resolve_history(
    start: State,
    actions: Sequence[int],
    checkpoints: Iterable[State] = (),
    *,
    viewer: int | None = None,
    pinned: bool = False,
) -> list[int]:
    """The actions played from ``start``, checked against ``checkpoints`` (states of the same
    game after some of the actions, placed by their move numbers): the list with each
    ``SECRET_ACTION`` (-1: another seat's secret decision, as a viewer saw it) replaced by
    the secret action of that seat that leads to the next checkpoint.

    Every checkpoint must be reached exactly (the replayed state equal to it). With
    ``pinned`` (a review for ``viewer`` that is not a trusted backend) the list must end at a
    checkpoint and another seat's secret decision must be -1, and an error names a move of the
    viewer's own that comes before any move of another seat since the last checkpoint, or a
    checkpoint: never what made another seat's move fail, nor that it did not (a move after it
    was reached), which would tell the viewer about that seat's cards (the game of the
    checkpoints is the truth; the viewer learns only whether the actions it saw are that
    game's). :class:`HistoryError` otherwise.
    """
    first = start.move_number()
    n = len(actions)
    at: dict[int, State] = {}
    for c in checkpoints:
        if c.game.descriptor.name != start.game.descriptor.name:
            raise HistoryError(c.move_number(), f"a checkpoint holds a game of {c.game.descriptor.name}")
        i = c.move_number() - first
        if not 0 < i <= n:
            raise HistoryError(
                c.move_number(),
                f"a checkpoint of move {c.move_number()} is not after one of the actions "
                f"(moves {first + 1} to {first + n})",
            )
        at[i] = c
    if pinned and n and n not in at:
        raise HistoryError(
            first + n,
            f"the token of the game after the last action (move {first + n}) must be a checkpoint: "
            "it shows that the actions are the game's",
        )
    out: list[int] = []
    state = start.clone()
    a = 0
    for b in [*sorted(at), n]:
        if b == a:
            continue
        segment = list(actions[a:b])
        target = at.get(b)
        if target is None and SECRET_ACTION in segment:
            k = a + segment.index(SECRET_ACTION)
            raise HistoryError(
                first + k + 1,
                f"move {first + k + 1} (actions[{k}]) is a secret decision (-1) with no checkpoint after "
                "it to find it by",
                k,
            )
        found = _resolve_segment(
            state, segment, offset=a, first=first, target=target, viewer=viewer, pinned=pinned
        )
        out.extend(found)
        for action in found:
            state.apply(action)
        a = b
    return out


def _resolve_segment(
    state: State,
    segment: list[int],
    *,
    offset: int,
    first: int,
    target: State | None,
    viewer: int | None,
    pinned: bool,
) -> list[int]:
    """The actions of one segment (from ``state``, ending at ``target`` when given), each -1
    replaced, by depth-first search in id order; see :func:`resolve_history`. Once a -1 has
    been tried, what fails depends on the candidates, that is on the hidden cards of the seat
    that decided; once a move of another seat has been applied, it depends on that move having
    been legal, that is on that seat's cards too: a pinned review then says only that the
    checkpoint is not reached.

    In a pinned review, the time taken must not tell the viewer which secret action was
    played either (the first candidate that fits would end the search early), nor how far the
    list went before another seat's move failed: every candidate is tried, and the work is
    padded to that of a full tree in which each -1 has as many candidates as any decision of
    the game may have and every move applies (:class:`_Blind`), a figure of what the viewer
    knows. A segment whose full tree is too large is refused before any search."""
    game = state.game
    space = game.descriptor.num_distinct_actions
    want = target.serialize() if target is not None else None
    blind = _Blind(state, segment, offset=offset, first=first) if pinned else None
    replays = 0  # secret actions tried
    work = 0  # transitions: a state and an action applied
    #: The first failure, and whether it may be named: found before any -1 was tried and, in a
    #: pinned review, before any move of another seat was applied (that move was legal, which
    #: depends on that seat's cards), and about the viewer's own move or the list's form.
    failure: list[tuple[HistoryError, bool]] = []

    def fail(k: int, message: str, *, branched: bool, public: bool = True) -> None:
        if not failure:
            nameable = not branched and (public or not pinned)
            failure.append((HistoryError(first + offset + k + 1, message, offset + k), nameable))

    def search(s: State, k: int, chosen: list[int], branched: bool) -> list[int] | None:
        nonlocal replays, work
        while k < len(segment):
            seat = s.current_player()
            where = f"move {first + offset + k + 1} (actions[{offset + k}])"
            if seat < 0:
                fail(k, f"{where}: the game is already over", branched=branched)
                return None
            action = segment[k]
            if action == SECRET_ACTION:
                if seat == viewer:
                    fail(k, f"{where}: give the viewer's own decision, not -1", branched=branched)
                    return None
                candidates = [c for c in s.legal_actions() if s.public_action(c) == SECRET_ACTION]
                if not candidates:
                    fail(
                        k,
                        f"{where}: -1 stands for a secret decision; seat {seat} has none here",
                        branched=branched,
                    )
                    return None
                result = None
                for c in candidates:
                    replays += 1
                    work += 1
                    if blind is None and replays > MAX_RESOLVE_REPLAYS:
                        fail(
                            k,
                            f"{where}: too many secret decisions to find before the next checkpoint",
                            branched=True,
                        )
                        return None
                    found = search(s.child(c), k + 1, [*chosen, c], True)
                    if found is not None and result is None:
                        result = found
                        if blind is None:
                            break
                return result
            if not 0 <= action < space:
                fail(k, f"{where}: unknown action id {action} (ids 0..{space - 1})", branched=branched)
                return None
            own = seat == viewer
            if pinned and not own and s.public_action(action) == SECRET_ACTION:
                fail(
                    k,
                    f"{where}: give another seat's secret decision as -1, as the viewer saw it",
                    branched=branched,
                )
                return None
            if not s.is_legal(action):
                text = game.action_to_string(action)
                fail(
                    k,
                    f"{where}: {text} is not legal for seat {seat} ({s.decision()})",
                    branched=branched,
                    public=own,
                )
                return None
            if not chosen and not branched:
                s = s.clone()  # the caller's state stays as it is
            s.apply(action)
            work += 1
            chosen = [*chosen, action]
            k += 1
            if pinned and not own:
                branched = True  # from here, what fails depends on that seat's cards
        if blind is not None:
            blind.compares += 1
        if want is not None and s.serialize() != want:
            return None
        return chosen

    found = search(state, 0, [], False)
    if blind is not None:
        blind.pad(work)
    if found is not None:
        return found
    if failure and failure[0][1]:
        raise failure[0][0]
    end = first + offset + len(segment)
    raise HistoryError(
        end,
        f"the actions of moves {first + offset + 1} to {end} do not lead to the checkpoint of move {end}: "
        "each must be the action played (another seat's secret decision as -1)",
    )


class _Blind:
    """The work of resolving a pinned segment, made independent of the secret actions: the
    transitions (a state and an action applied) and state comparisons of the full tree in
    which each -1 has :attr:`hidden` candidates, the most any decision of the game may have
    (``GameDescriptor.max_secret_choices``): a figure of the list and the game alone.
    :meth:`pad` does what the search did not, on the start state. Refuses
    (:class:`HistoryError`, naming the segment) a segment whose full tree is over
    :data:`MAX_RESOLVE_REPLAYS` transitions."""

    def __init__(self, start: State, segment: list[int], *, offset: int, first: int) -> None:
        self.hidden = start.game.descriptor.max_secret_choices
        transitions, leaves = 0, 1
        for action in reversed(segment):
            if action == SECRET_ACTION:
                transitions, leaves = self.hidden * (1 + transitions), self.hidden * leaves
            else:
                transitions += 1
            if transitions > MAX_RESOLVE_REPLAYS:
                end = first + offset + len(segment)
                raise HistoryError(
                    end,
                    f"moves {first + offset + 1} to {end} hold {segment.count(SECRET_ACTION)} secret "
                    "decisions (-1) with no checkpoint between them: too many to find; give the "
                    "state after each move as a checkpoint",
                )
        #: The full tree's transitions and comparisons (leaves).
        self.transitions, self.leaves = transitions, leaves
        #: Comparisons the search made.
        self.compares = 0
        legal = start.legal_actions()
        self._start, self._action = start, (legal[0] if legal else -1)
        #: The transitions and comparisons done in all, once padded.
        self.done = (0, 0)

    def pad(self, transitions: int) -> None:
        """Do the transitions and comparisons of the full tree the search (``transitions``,
        :attr:`compares`) did not."""
        more_t = max(self.transitions - transitions, 0) if self._action >= 0 else 0
        more_c = max(self.leaves - self.compares, 0)
        for _ in range(more_t):
            self._start.child(self._action)
        for _ in range(more_c):
            self._start.serialize()
        self.done = (transitions + more_t, self.compares + more_c)


# ---------------------------------------------------------------------------------------
# One decision
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Alternative:
    """A root action of the review's search: visits and expected score for the seat."""

    action: int
    visits: int
    score: float


@dataclasses.dataclass(frozen=True, slots=True)
class MoveReview:
    """The review of one decision (the module docstring defines every figure)."""

    move: int
    seat: int
    played: int
    best: int
    played_score: float
    best_score: float
    loss: float
    grade: str
    accuracy: float
    alternatives: tuple[Alternative, ...]
    #: Iterations of both searches, their wall time, and whether a deadline or a stop cut one.
    iterations: int
    seconds: float
    interrupted: bool


def review_decision(
    state: State,
    played: int,
    reviewer: Reviewer,
    seed: int,
    *,
    move: int = 0,
    deadline: float | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> MoveReview:
    """Review ``played``, the action the seat to act chose in ``state`` (the module
    docstring). ``seed`` makes it reproducible; ``deadline`` (``time.monotonic()``) and
    ``should_stop`` cut the searches short (``interrupted``)."""
    seat = state.current_player()
    if seat < 0:
        raise ValueError("the game is over: there is no decision to review")
    if not state.is_legal(played):
        raise ValueError(f"{state.game.action_to_string(played)} is not legal for seat {seat}")
    start = time.monotonic()
    params = reviewer.params
    bot = MctsBot(params)
    decision = bot.choose(
        state,
        seed=seed,
        budget=Budget(iterations=reviewer.iterations),
        deadline=deadline,
        should_stop=should_stop,
    )
    diag = decision.diagnostics
    best = decision.action
    stats = {s.action: s for s in diag.actions}
    best_stat = stats.get(best)
    best_value = best_stat.mean_value if best_stat is not None else 0.0
    iterations = diag.iterations
    interrupted = diag.interrupted
    if played == best:
        played_value = best_value
    else:
        n = max(MIN_PLAYED_ITERATIONS, best_stat.visits if best_stat is not None else 0)
        result = search_one_action(
            state,
            seat,
            played,
            params=params,
            seed=seed ^ _PLAYED_SEED,
            limits=Limits(n, deadline, deadline is not None),
            should_stop=should_stop,
        )
        visits, total = next(((v, t) for a, v, t in result.root if a == played), (0, 0.0))
        played_value = total / visits if visits else 0.0
        iterations += result.iterations
        interrupted = interrupted or result.interrupted
    best_score = expected_score(best_value)
    played_score = expected_score(played_value)
    loss = max(0.0, best_score - played_score) if played != best else 0.0
    alternatives = tuple(
        Alternative(s.action, s.visits, expected_score(s.mean_value))
        for s in diag.actions[: reviewer.alternatives]
    )
    return MoveReview(
        move=move,
        seat=seat,
        played=played,
        best=best,
        played_score=played_score,
        best_score=best_score,
        loss=loss,
        grade=grade(loss, played == best),
        accuracy=move_accuracy(loss),
        alternatives=alternatives,
        iterations=iterations,
        seconds=time.monotonic() - start,
        interrupted=interrupted,
    )


# ---------------------------------------------------------------------------------------
# A seat's summary
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SeatSummary:
    """A reviewed seat over the game: moves reviewed, forced moves skipped, accuracy (0-100),
    mean loss, and how many moves of each grade (every grade of :data:`GRADES`)."""

    seat: int
    moves: int
    forced: int
    accuracy: float
    mean_loss: float
    grades: dict[str, int]


def summarize(
    seats: Iterable[int], reviews: Sequence[MoveReview], forced: dict[int, int]
) -> list[SeatSummary]:
    """The summary of each seat of ``seats`` from its reviewed moves and forced counts."""
    out: list[SeatSummary] = []
    for seat in seats:
        mine = [r for r in reviews if r.seat == seat]
        grades = dict.fromkeys(GRADES, 0)
        for r in mine:
            grades[r.grade] += 1
        out.append(
            SeatSummary(
                seat=seat,
                moves=len(mine),
                forced=forced.get(seat, 0),
                accuracy=game_accuracy(r.accuracy for r in mine),
                mean_loss=sum(r.loss for r in mine) / len(mine) if mine else 0.0,
                grades=grades,
            )
        )
    return out


# ---------------------------------------------------------------------------------------
# A whole game, in this process or in worker processes (``heka review``)
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class GameReview:
    """The review of a game: the reviewed seats, each decision's review in move order, the
    forced moves skipped per seat, and each seat's summary."""

    seats: tuple[int, ...]
    moves: tuple[MoveReview, ...]
    forced: dict[int, int]
    summaries: tuple[SeatSummary, ...]


def move_seed(seed: int, move: int) -> int:
    """The seed of the review of move ``move`` (without a server's key: ``heka review``)."""
    return derive_seed(seed, "review", move)


def _review_task(task: tuple[str, str, int, Reviewer, int, int]) -> MoveReview:
    game, text, played, who, seed, move = task
    state = get_game(game).deserialize_state(text, validate=False)
    return review_decision(state, played, who, seed, move=move)


def review_game(
    start: State,
    actions: Sequence[int],
    *,
    seats: Iterable[int] | None = None,
    who: Reviewer | None = None,
    seed: int = 0,
    workers: int = 1,
    from_move: int = 0,
    on_move: Callable[[MoveReview, int, int], None] | None = None,
) -> GameReview:
    """Review ``seats`` (every seat when ``None``) of the game that ``actions`` play from
    ``start`` (:class:`ReplayError` for one that cannot be applied), from move ``from_move`` on,
    with ``who`` (the default reviewer) and a seed per move from ``seed``
    (:func:`move_seed`), on ``workers`` processes: the same review whatever their number.
    ``on_move(review, done, total)`` as each decision is reviewed (in completion order)."""
    who = who or reviewer()
    chosen = tuple(range(start.num_players)) if seats is None else tuple(sorted(set(seats)))
    first = start.move_number()
    points, _ = replay(start, actions, chosen)
    forced = dict.fromkeys(chosen, 0)
    todo: list[ReviewPoint] = []
    for p in points:
        move = first + p.move
        if move < from_move:
            continue
        if p.forced:
            forced[p.seat] += 1
        else:
            todo.append(dataclasses.replace(p, move=move))
    name = start.game.descriptor.name
    tasks = [(name, p.state.serialize(), p.played, who, move_seed(seed, p.move), p.move) for p in todo]
    done: dict[int, MoveReview] = {}

    def finished(r: MoveReview) -> None:
        done[r.move] = r
        if on_move is not None:
            on_move(r, len(done), len(tasks))

    if workers <= 1 or len(tasks) <= 1:
        for task in tasks:
            finished(_review_task(task))
    else:
        with WorkerPool(min(workers, len(tasks)), name="heka-review") as pool:
            futures = [pool.submit(_review_task, task) for task in tasks]
            for future in as_completed(futures):
                finished(future.result())
    moves = tuple(done[p.move] for p in todo)
    return GameReview(chosen, moves, forced, tuple(summarize(chosen, moves, forced)))
