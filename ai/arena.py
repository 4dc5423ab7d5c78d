"""The arena: matches between bots, in parallel processes, with win rates and Elo ratings.

Schedule
--------
The unit is a *pairing* of two bot specs ``a`` and ``b``. Each pairing owns a *block* of seat
arrangements (one spec per seat), and its ``N`` games cycle through that block, so every
bot sits in every seat equally often whenever ``N`` is a multiple of the block length
(:attr:`Pairing.block`; the CLI warns otherwise):

* **2 players** — ``(a, b)`` then ``(b, a)`` (block 2).
* **K players, ``round-robin``** (the default lineup) — for every unordered pair ``{a, b}``,
  every mixture of ``k`` copies of ``a`` and ``K − k`` copies of ``b`` (``k = 1 .. K−1``) in
  every distinct seat arrangement: for K = 3, ``abb bab bba aab aba baa`` (block 6); for
  K = 4, 4 + 6 + 4 = 14 arrangements. Arrangements, not just rotations, so that who sits
  next to whom is balanced too.
* **K players with ``teams``** (Osirium, 4 players: seats 0 and 2 against 1 and 3) — team
  ``a`` against team ``b``: ``(a, b, a, b)`` then ``(b, a, b, a)`` (block 2).
* **``one-vs-rest``** — the first spec ``X`` is the one; for each other spec ``Y``, a pairing
  of one ``X`` among ``K − 1`` copies of ``Y``, ``X`` rotated through the K seats (block K).
  For 2 players this is ``X`` against each other bot.
* **``ladder``** (:mod:`ai.ladder`) — a fixed pool of *anchors* (``ArenaConfig.anchors``, a
  subset of the bots) plays round-robin among itself, and every other spec (a *candidate*)
  plays each anchor, never another candidate. With 2 players the block is ``ab``, ``ba``;
  with K > 2 it alternates one ``a`` among K − 1 ``b`` and one ``b`` among K − 1 ``a``, each
  rotated through the seats (``abbb baaa babb abaa ...``, block 2K), so that any even number
  of games gives both sides the same number of seats. So every candidate is rated against
  the same opponents, whatever else is rated.

**Designs** of the ``ladder`` lineup. ``fixed`` (the default): every pairing plays ``games``,
or, with ``ArenaConfig.costly_games``, each pairing of a candidate that searches more per move
than every anchor plays that many (:func:`costly_candidates`): its games cost the most, and
it is the best measured already.
``nearest`` (``ArenaConfig.design``): the anchors still play each other ``games`` per pair, but
a candidate plays each anchor a pilot of :data:`PILOT` games only, and then its
:data:`NEAREST` anchors nearest its rating as many more games as make up its ``games`` per
anchor in all. Its rating is the fit of the pilot (every game up to then), or, for a check,
the rating it is expected to have (``ArenaConfig.predicted``, no pilot). Games close in
strength tell the most about a rating (the information of a game is ``p (1 - p)``), so the
same games per candidate measure it more precisely (``bench/ladder_scale.py``, "Designs").
The second phase is scheduled when the first is complete, from its games alone: the same
games, and so the same schedule, on any runner and on resume.

Pairings are interleaved (first game of every pairing, then the second...), and game ``i``
of that global order is seeded from the arena seed and ``i``: the bots' per-move seeds come
from ``derive_seed(seed, "bots", i)``; the deal (``new_initial_state``'s seed) comes from
``derive_seed(seed, "deal", j)`` where ``j`` is the game's block number within its pairing,
so the arrangements of one block are played on the *same* deal (duplicate style: the same
cards go to each bot in turn, which removes much of the luck from a comparison). Each game
builds fresh bots and depends on nothing but its own task, so results are identical for any
number of worker processes.

Scoring
-------
For a pairing, a game is a *win for a* when every winner is an ``a`` seat, a *win for b*
when every winner is a ``b`` seat, and a *draw* when there is no winner or the win is shared
between an ``a`` and a ``b`` seat. (With teams, the winners are a whole team.) Rates come
with 95% Wilson intervals (:mod:`ai.ratings`).

For the Elo ratings every game is decomposed into pairwise results between seats held by
*different* specs: seat ``i`` beats seat ``j`` when it placed higher — a higher return (O8.5:
the sole winner beats everyone), then, between seats with equal returns in a free-for-all
game, a higher final score (the losers are ranked by their scores; equal scores draw). In
team games only the returns count (partners share them). Each comparison
weighs ``1 / (K − 1)`` of a game, so that every seat of a K-player game counts at most one
game in total — a 2-player game is one game. Ratings are then fitted from all pairwise
results at once (:func:`ai.ratings.fit_elo`), anchored at ``random = 0`` when ``random``
plays, else at a mean of 0.

Standard library only; the games run in an :class:`ai.procpool.WorkerPool` (forked where
possible) whose processes do not run as daemons, so a bot may start its own worker processes
(MCTS root parallelism), or in whatever a :data:`GameRunner` given to :func:`run_arena` runs
them on (Ray tasks: ``service/ray_runner.py``, the ``ray`` extra). A game is a function of its
task, so the runner changes where games are played, not which games or their results.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import random
import signal
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from typing import Any

from ai.api import make_bot, same_bot
from ai.procpool import RemoteTraceback, WorkerDied, WorkerPool
from ai.ratings import PairResult, Rate, Rating, fit_elo, rate
from engine.core import Game, Outcome
from engine.registry import get_game

LINEUPS = ("round-robin", "one-vs-rest", "ladder")
#: Designs of the ladder lineup (the module docstring).
DESIGNS = ("fixed", "nearest")
#: The most games one run schedules: its schedule is a list held in memory (a run this long
#: takes months of one core; a larger measurement is several runs on other seeds).
MAX_GAMES = 1_000_000
#: The nearest design's pilot: games of every candidate against every anchor.
PILOT = 8
#: The nearest design's anchors per candidate after the pilot.
NEAREST = 2


class ArenaError(ValueError):
    """Bad arena settings, or a game that failed (the message names its index and seeds)."""


def derive_seed(seed: int, stream: str, index: int) -> int:
    """A 63-bit seed for item ``index`` of ``stream``, derived from the arena ``seed``
    (SHA-256, so nearby seeds and indices give unrelated values on every platform)."""
    digest = hashlib.sha256(f"heka-arena:{seed}:{stream}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


# ---------------------------------------------------------------------------------------
# Settings and schedule
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class ArenaConfig:
    game: str
    bots: tuple[str, ...]
    #: Games per pairing.
    games: int
    seed: int = 1
    players: int | None = None
    teams: bool = False
    lineup: str = "round-robin"
    workers: int = 1
    options: tuple[tuple[str, Any], ...] = ()
    #: The anchor pool of the ``ladder`` lineup (a subset of ``bots``); empty otherwise.
    anchors: tuple[str, ...] = ()
    #: The ladder's design: ``fixed`` or ``nearest`` (the module docstring).
    design: str = "fixed"
    #: With ``nearest``: each bot's expected rating, to pick a candidate's anchors without a
    #: pilot (a check: the table's ratings); empty: a pilot picks them.
    predicted: tuple[tuple[str, float], ...] = ()
    #: With the ``fixed`` design of a ladder: the games per anchor of each *costly* candidate
    #: (:func:`costly_candidates`), instead of ``games``; None: every pairing plays ``games``.
    costly_games: int | None = None

    def game_options(self) -> dict[str, Any]:
        out = dict(self.options)
        if self.teams:
            out["teams"] = True
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class Pairing:
    index: int
    a: str
    b: str
    #: The seat arrangements the pairing's games cycle through.
    block: tuple[tuple[str, ...], ...]

    @property
    def label(self) -> str:
        return f"{self.a} vs {self.b}"


@dataclasses.dataclass(frozen=True, slots=True)
class GameTask:
    index: int
    pairing: int
    #: Bot spec of each seat.
    seats: tuple[str, ...]
    deal_seed: int
    bot_seed: int


@dataclasses.dataclass(frozen=True, slots=True)
class GameRecord:
    index: int
    pairing: int
    seats: tuple[str, ...]
    deal_seed: int
    bot_seed: int
    winners: tuple[int, ...]
    returns: tuple[float, ...]
    scores: tuple[int, ...]
    reason: str
    plies: int
    rounds: int
    seconds: float
    #: Seconds spent in ``choose`` per seat.
    think_seconds: tuple[float, ...]
    #: Decisions taken per seat.
    decisions: tuple[int, ...]
    #: The actions played, in order: the game replays from its deal seed (``heka review``).
    #: Empty in the records of earlier releases.
    actions: tuple[int, ...] = ()
    #: CPU seconds spent in ``choose`` per seat, and the game's CPU seconds in all, in the
    #: process that played it: unlike the wall-clock figures above, unaffected by other work
    #: on the machine or a paused run. A bot that decides in a helper process (``pure:``,
    #: ``checkout:``) is not counted. Empty and None in the records of earlier releases.
    think_cpu: tuple[float, ...] = ()
    cpu_seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["seconds"] = round(self.seconds, 4)
        d["think_seconds"] = [round(t, 4) for t in self.think_seconds]
        d["think_cpu"] = [round(t, 4) for t in self.think_cpu]
        d["cpu_seconds"] = None if self.cpu_seconds is None else round(self.cpu_seconds, 4)
        return d

    @property
    def cost(self) -> float:
        """The game's seconds of one core: its CPU time where recorded, else its wall time."""
        return self.seconds if self.cpu_seconds is None else self.cpu_seconds


def timed_records(records: Sequence[GameRecord]) -> tuple[list[GameRecord], bool]:
    """The records to read a cost from, and whether it is CPU time: those that record CPU
    time when any does (a run resumed across releases mixes both), else all of them."""
    cpu = [r for r in records if r.cpu_seconds is not None]
    return (cpu, True) if cpu else (list(records), False)


def seconds_per_decision(records: Sequence[GameRecord]) -> dict[str, float]:
    """Each bot's mean seconds per decision over ``records`` (:func:`timed_records`: CPU
    time where recorded)."""
    timed, cpu = timed_records(records)
    think: dict[str, float] = {}
    decisions: dict[str, int] = {}
    for r in timed:
        for seat, spec in enumerate(r.seats):
            think[spec] = think.get(spec, 0.0) + (r.think_cpu if cpu else r.think_seconds)[seat]
            decisions[spec] = decisions.get(spec, 0) + r.decisions[seat]
    return {spec: think[spec] / n for spec, n in decisions.items() if n}


def _distinct_arrangements(items: Sequence[str]) -> list[tuple[str, ...]]:
    seen: dict[tuple[str, ...], None] = {}
    for perm in itertools.permutations(items):
        seen.setdefault(perm, None)
    return sorted(seen, key=lambda p: [items.index(x) for x in p])


def make_pairings(
    bots: Sequence[str],
    players: int,
    *,
    teams: bool = False,
    lineup: str = "round-robin",
    anchors: Sequence[str] = (),
) -> list[Pairing]:
    """The pairings and their seat blocks (see the module docstring)."""
    if lineup not in LINEUPS:
        raise ArenaError(f"unknown lineup {lineup!r} (known: {', '.join(LINEUPS)})")
    if len(bots) < 2:
        raise ArenaError("an arena needs at least two different bot specs")
    if len(set(bots)) != len(bots):
        raise ArenaError(f"bot specs must be distinct, got {', '.join(bots)}")
    seen: dict[tuple[str, ...], str] = {}
    for b in bots:
        other = seen.setdefault(same_bot(b), b)
        if other != b:
            raise ArenaError(f"bot specs must be distinct: {b!r} is the same bot as {other!r}")
    if players < 2:
        raise ArenaError("an arena needs games of at least two players")
    if teams and players != 4:
        raise ArenaError("teams are played by 4 players (seats 0 and 2 against 1 and 3)")
    if teams and lineup == "one-vs-rest":
        raise ArenaError("the one-vs-rest lineup seats one bot among others: not in team games")
    pairs: list[tuple[str, str]]
    if lineup == "ladder":
        if len(anchors) < 1 or any(a not in bots for a in anchors):
            raise ArenaError("a ladder needs at least one anchor, each one of the bots")
        pool = [b for b in bots if b in anchors]
        pairs = list(itertools.combinations(pool, 2))
        pairs += [(c, a) for c in bots if c not in anchors for a in pool]
    elif anchors:
        raise ArenaError("anchors belong to the ladder lineup")
    elif lineup == "one-vs-rest":
        pairs = [(bots[0], y) for y in bots[1:]]
    else:
        pairs = list(itertools.combinations(bots, 2))
    out: list[Pairing] = []
    for i, (a, b) in enumerate(pairs):
        block: list[tuple[str, ...]]
        if lineup == "one-vs-rest":
            base = (a,) + (b,) * (players - 1)
            block = [base[-r:] + base[:-r] if r else base for r in range(players)]
        elif lineup == "ladder" and players > 2 and not teams:
            one_a = (a,) + (b,) * (players - 1)
            one_b = (b,) + (a,) * (players - 1)
            block = []
            for r in range(players):
                block.append(one_a[-r:] + one_a[:-r] if r else one_a)
                block.append(one_b[-r:] + one_b[:-r] if r else one_b)
        elif teams:
            block = [(a, b, a, b), (b, a, b, a)]
        else:
            block = []
            for k in range(players - 1, 0, -1):  # k copies of a, players - k of b
                block.extend(_distinct_arrangements((a,) * k + (b,) * (players - k)))
        out.append(Pairing(i, a, b, tuple(block)))
    return out


def make_schedule(
    config: ArenaConfig, players: int, played: Sequence[GameRecord] = ()
) -> tuple[list[Pairing], list[GameTask]]:
    """Pairings and every game task, in the interleaved global order (index = position).

    With the ``nearest`` design and a pilot, the tasks after the pilot depend on its games:
    they are listed only once ``played`` holds every game of the pilot, and the schedule is
    then complete."""
    if config.games < 1:
        raise ArenaError("the number of games per pairing must be at least 1")
    if config.design not in DESIGNS:
        raise ArenaError(f"unknown design {config.design!r} (known: {', '.join(DESIGNS)})")
    if config.design != "fixed" and config.lineup != "ladder":
        raise ArenaError(f"the {config.design} design belongs to the ladder lineup")
    if config.costly_games is not None:
        if config.lineup != "ladder" or config.design != "fixed":
            raise ArenaError("games per costly candidate belong to the fixed design of a ladder")
        if not 1 <= config.costly_games <= config.games:
            raise ArenaError(
                f"games per costly candidate must be 1..{config.games} (the games per pairing), "
                f"not {config.costly_games}"
            )
    total = scheduled_games(config, players)
    if total > MAX_GAMES:
        raise ArenaError(
            f"{config.games} games per pairing schedule {total:,} games; a run plays at most {MAX_GAMES:,}"
        )
    pairings = make_pairings(
        config.bots, players, teams=config.teams, lineup=config.lineup, anchors=config.anchors
    )
    tasks: list[GameTask] = []

    def add(g: int, p: Pairing) -> None:
        i = len(tasks)
        block_number, slot = divmod(g, len(p.block))
        tasks.append(
            GameTask(
                index=i,
                pairing=p.index,
                seats=p.block[slot],
                deal_seed=derive_seed(config.seed, "deal", block_number),
                bot_seed=derive_seed(config.seed, "bots", i),
            )
        )

    if config.design == "fixed":
        counts = pairing_games(config, pairings)
        for g in range(config.games):
            for p in pairings:
                if g < counts[p.index]:
                    add(g, p)
        return pairings, tasks
    anchors = set(config.anchors)
    pilot = _pilot(config)
    for g in range(config.games):
        for p in pairings:
            if (p.a in anchors and p.b in anchors) or g < pilot:
                add(g, p)
    first = len(tasks)
    ratings = dict(config.predicted)
    if pilot:
        done = [r for r in played if r.index < first]
        if len({r.index for r in done}) < first:
            return pairings, tasks  # the pilot is not over: the rest is not known yet
        fitted = fit_elo(pairwise_results(done, players, teams=config.teams), names=list(config.bots))
        ratings = {r.name: r.elo for r in fitted}
    chosen = nearest_anchors(config, ratings)
    for g in range(pilot, pilot + _after_pilot(config)):
        for p in pairings:
            if p.b in chosen.get(p.a, ()):
                add(g, p)
    return pairings, tasks


def _pilot(config: ArenaConfig) -> int:
    return 0 if config.predicted else min(PILOT, config.games)


def _after_pilot(config: ArenaConfig) -> int:
    """Games of a candidate against each of its nearest anchors after the pilot, so that it
    plays ``games`` per anchor in all, as in the fixed design (rounded up)."""
    k = min(NEAREST, len(config.anchors))
    return -(-len(config.anchors) * (config.games - _pilot(config)) // k)


def scheduled_games(config: ArenaConfig, players: int) -> int:
    """The number of games of the whole schedule (known before any game is played)."""
    pairings = make_pairings(
        config.bots, players, teams=config.teams, lineup=config.lineup, anchors=config.anchors
    )
    if config.design == "fixed":
        return sum(pairing_games(config, pairings))
    anchors = set(config.anchors)
    anchor_pairs = sum(1 for p in pairings if p.a in anchors and p.b in anchors)
    candidates = len({p.a for p in pairings} - anchors)
    per_candidate = len(config.anchors) * _pilot(config) + min(NEAREST, len(anchors)) * _after_pilot(config)
    return anchor_pairs * config.games + candidates * per_candidate


def search_iterations(spec: str) -> float:
    """How many search iterations ``spec`` spends on a move, the measure of what its games
    cost: 0 for ``random`` and ``greedy``, an ``mcts`` spec's iteration budget, and infinity
    for a search bounded by time alone or a bot this module cannot read (``checkout:``);
    ``pure:SPEC`` is ``SPEC``'s."""
    from ai.mcts_params import parse_params

    kind, _, params = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind in ("random", "greedy"):
        return 0.0
    if kind == "pure":
        return search_iterations(params)
    if kind == "mcts":
        try:
            iterations = parse_params(params)[1].iterations
        except ValueError:  # BotSpecError: make_bot says it
            return math.inf
        return math.inf if iterations is None else float(iterations)
    return math.inf


def costly_candidates(config: ArenaConfig) -> frozenset[str]:
    """The candidates of a ladder that search more iterations a move than every anchor
    (:func:`search_iterations`): those whose games cost the most. With ``costly_games`` they
    play that many games per anchor: a level above the anchors is measured mostly by the
    strongest anchor, whose games with it are the closest and so tell the most, while the
    weak levels, cheap to play, are measured by fewer informative pairs and need the games
    (docs/ladder.md, "Designs")."""
    return frozenset(c for c in config.bots if c not in config.anchors and is_costly(c, config.anchors))


def is_costly(spec: str, anchors: Sequence[str]) -> bool:
    """Whether ``spec`` searches more iterations a move than every one of ``anchors``
    (:func:`search_iterations`; no anchors: nothing is costly)."""
    return bool(anchors) and search_iterations(spec) > max(search_iterations(a) for a in anchors)


def pairing_games(config: ArenaConfig, pairings: Sequence[Pairing]) -> list[int]:
    """The games of each pairing in the ``fixed`` design: ``games``, or ``costly_games`` for
    a pairing of a costly candidate (:func:`costly_candidates`). The games a pairing plays
    come first in every round of the schedule, so a run's first ``costly_games`` rounds are
    those of a run at that many games per pairing: one resumes from the other."""
    if config.costly_games is None:
        return [config.games] * len(pairings)
    costly = costly_candidates(config)
    return [config.costly_games if (p.a in costly or p.b in costly) else config.games for p in pairings]


def nearest_anchors(config: ArenaConfig, ratings: Mapping[str, float]) -> dict[str, tuple[str, ...]]:
    """Each candidate's :data:`NEAREST` anchors nearest its rating in ``ratings`` (ties: the
    anchor listed first)."""
    out: dict[str, tuple[str, ...]] = {}
    missing = [b for b in config.bots if b not in ratings]
    if missing:
        raise ArenaError(f"the nearest design needs a rating of {', '.join(missing)}")
    for c in config.bots:
        if c in config.anchors:
            continue
        order = sorted(config.anchors, key=lambda a: (abs(ratings[c] - ratings[a]), config.anchors.index(a)))
        out[c] = tuple(sorted(order[:NEAREST], key=config.anchors.index))
    return out


# ---------------------------------------------------------------------------------------
# Playing
# ---------------------------------------------------------------------------------------


def play_game(game: Game, task: GameTask, players: int, options: Mapping[str, Any]) -> GameRecord:
    """Play one arena game to the end with fresh bots (a bot's illegal action raises
    :class:`ArenaError`)."""
    t0, c0 = time.perf_counter(), time.process_time()
    state = game.new_initial_state(players, task.deal_seed, dict(options))
    bots = {spec: make_bot(spec) for spec in dict.fromkeys(task.seats)}
    rng = random.Random(task.bot_seed)
    think = [0.0] * players
    think_cpu = [0.0] * players
    decisions = [0] * players
    plies = 0
    played: list[int] = []
    while not state.is_terminal():
        player = state.current_player()
        spec = task.seats[player]
        t, c = time.perf_counter(), time.process_time()
        decision = bots[spec].choose(state, seed=rng.getrandbits(63))
        think[player] += time.perf_counter() - t
        think_cpu[player] += time.process_time() - c
        decisions[player] += 1
        if decision.action not in state.legal_actions():
            raise ArenaError(
                f"game {task.index} (deal seed {task.deal_seed}): bot {spec!r} in seat {player} "
                f"chose illegal action {decision.action} at ply {plies}"
            )
        state.apply(decision.action)
        played.append(decision.action)
        plies += 1
    outcome: Outcome | None = state.outcome()
    assert outcome is not None
    return GameRecord(
        index=task.index,
        pairing=task.pairing,
        seats=task.seats,
        deal_seed=task.deal_seed,
        bot_seed=task.bot_seed,
        winners=tuple(outcome.winners),
        returns=tuple(outcome.returns),
        scores=tuple(outcome.scores),
        reason=outcome.reason,
        plies=plies,
        rounds=state.round_number(),
        seconds=time.perf_counter() - t0,
        think_seconds=tuple(think),
        decisions=tuple(decisions),
        actions=tuple(played),
        think_cpu=tuple(think_cpu),
        cpu_seconds=time.process_time() - c0,
    )


#: An arena worker's game, player count and options (set when the worker starts).
_WORKER_GAME: list[tuple[Game, int, dict[str, Any]]] = []


def _init_worker(game_name: str, players: int, options: dict[str, Any]) -> None:
    """An arena worker ignores interrupts (the parent handles them, then terminates it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler is not ours
    _WORKER_GAME[:] = [(get_game(game_name), players, options)]


def _play_in_worker(task: GameTask) -> GameRecord:  # pragma: no cover - runs in a worker process
    game, players, options = _WORKER_GAME[0]
    return play_game(game, task, players, options)


def play_task(game_name: str, players: int, options: Mapping[str, Any], task: GameTask) -> GameRecord:
    """Play one scheduled game by game name (the call a :data:`GameRunner` ships elsewhere)."""
    return play_game(get_game(game_name), task, players, options)


#: Plays ``tasks`` (of ``config``, with ``players`` and the game ``options``) elsewhere than in
#: this process's worker pool, calling ``record`` as each game finishes (in completion order);
#: polls ``stop`` while games play and returns whether it ended the run early. A failing game
#: raises :class:`ArenaError` naming the game's index and seeds.
GameRunner = Callable[
    [ArenaConfig, int, dict[str, Any], list[GameTask], Callable[[GameRecord], None], Callable[[], bool]],
    bool,
]


@dataclasses.dataclass
class ArenaResult:
    config: ArenaConfig
    players: int
    pairings: list[Pairing]
    records: list[GameRecord]
    total_games: int
    seconds: float
    interrupted: bool = False

    # --- summaries -------------------------------------------------------------------

    def pairing_stats(self) -> list[PairingStats]:
        return [pairing_stats(p, [r for r in self.records if r.pairing == p.index]) for p in self.pairings]

    def pair_results(self) -> list[PairResult]:
        return pairwise_results(self.records, self.players, teams=self.config.teams)

    def ratings(self, fixed: Mapping[str, float] | None = None) -> list[Rating]:
        """Every bot's rating: ``random`` at 0 (else the mean at 0), or, with ``fixed``, the
        bots it names held at its ratings (:func:`ai.ratings.fit_elo`)."""
        played = [b for b in self.config.bots if any(b in r.seats for r in self.records)]
        if len(played) < 2:
            return []
        if fixed:
            return fit_elo(self.pair_results(), names=played, fixed=fixed)
        anchor = "random" if "random" in played else None
        return fit_elo(self.pair_results(), names=played, anchor=anchor)

    def to_json(self) -> dict[str, Any]:
        try:
            ratings = self.ratings()
            rating_error = ""
        except ValueError as exc:  # e.g. an interrupted run whose bots never met
            ratings, rating_error = [], str(exc)
        anchor = "random" if any(r.name == "random" for r in ratings) else "mean"
        return {
            "game": self.config.game,
            "players": self.players,
            "teams": self.config.teams,
            "lineup": self.config.lineup,
            "options": dict(self.config.options),
            "seed": self.config.seed,
            "bots": list(self.config.bots),
            **({"anchors": list(self.config.anchors)} if self.config.anchors else {}),
            **(
                {"design": self.config.design, "predicted": dict(self.config.predicted)}
                if self.config.design != "fixed"
                else {}
            ),
            "games_per_pairing": self.config.games,
            **(
                {
                    "costly_games": self.config.costly_games,
                    "costly": sorted(costly_candidates(self.config)),
                }
                if self.config.costly_games is not None
                else {}
            ),
            "workers": self.config.workers,
            "games_played": len(self.records),
            "games_scheduled": self.total_games,
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
            "pairings": [s.to_dict() for s in self.pairing_stats()],
            "ratings": {
                "model": "Bradley-Terry on the Elo scale, maximum likelihood, draws = 1/2, "
                "1 virtual draw per pair, 95% CI from the Fisher information; multi-player "
                "games decomposed into pairwise results (return, then final score in free-for-all "
                "games) weighted 1/(K-1)",
                "anchor": anchor,
                "bots": [r.to_dict() for r in ratings],
                **({"error": rating_error} if rating_error else {}),
            },
            "games": [r.to_dict() for r in self.records],
        }

    def format_table(self) -> str:
        return format_result(self)


@dataclasses.dataclass(frozen=True, slots=True)
class PairingStats:
    pairing: Pairing
    games: int
    a_wins: Rate
    draws: Rate
    b_wins: Rate
    #: a's score rate (wins + draws / 2).
    a_score: Rate
    mean_plies: float
    reasons: tuple[tuple[str, int], ...]
    #: Mean thinking time per decision of each side, in milliseconds.
    a_ms_per_decision: float
    b_ms_per_decision: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.pairing.a,
            "b": self.pairing.b,
            "block": [list(s) for s in self.pairing.block],
            "games": self.games,
            "a_wins": self.a_wins.to_dict(),
            "draws": self.draws.to_dict(),
            "b_wins": self.b_wins.to_dict(),
            "a_score": self.a_score.to_dict(),
            "mean_plies": round(self.mean_plies, 2),
            "reasons": dict(self.reasons),
            "a_ms_per_decision": round(self.a_ms_per_decision, 3),
            "b_ms_per_decision": round(self.b_ms_per_decision, 3),
        }


def game_side_result(record: GameRecord, a: str, b: str) -> str:
    """``"a"``, ``"b"`` or ``"draw"``: which side of a pairing won a game (module docstring)."""
    sides = {record.seats[w] for w in record.winners}
    if sides == {a}:
        return "a"
    if sides == {b}:
        return "b"
    return "draw"


def pairing_stats(pairing: Pairing, records: Sequence[GameRecord]) -> PairingStats:
    n = len(records)
    tally = Counter(game_side_result(r, pairing.a, pairing.b) for r in records)
    reasons = Counter(r.reason for r in records)

    per_decision = seconds_per_decision(records)

    def ms(spec: str) -> float:
        return 1000.0 * per_decision.get(spec, 0.0)

    return PairingStats(
        pairing=pairing,
        games=n,
        a_wins=rate(tally["a"], n),
        draws=rate(tally["draw"], n),
        b_wins=rate(tally["b"], n),
        a_score=rate(tally["a"] + tally["draw"] / 2.0, n),
        mean_plies=sum(r.plies for r in records) / n if n else 0.0,
        reasons=tuple(reasons.most_common()),
        a_ms_per_decision=ms(pairing.a),
        b_ms_per_decision=ms(pairing.b),
    )


def pairwise_results(records: Sequence[GameRecord], players: int, *, teams: bool = False) -> list[PairResult]:
    """Every game as weighted pairwise results between seats of different specs, ranked by
    return, then (free-for-all games with 3+ players) by final score."""
    weight = 1.0 / (players - 1)
    by_score = players > 2 and not teams
    out: list[PairResult] = []
    for r in records:
        for i, j in itertools.combinations(range(len(r.seats)), 2):
            if r.seats[i] == r.seats[j]:
                continue
            ri: tuple[float, ...] = (r.returns[i], r.scores[i]) if by_score else (r.returns[i],)
            rj: tuple[float, ...] = (r.returns[j], r.scores[j]) if by_score else (r.returns[j],)
            s = 1.0 if ri > rj else 0.5 if ri == rj else 0.0
            out.append(PairResult(r.seats[i], r.seats[j], weight, s * weight))
    return out


def records_from_json(data: Mapping[str, Any]) -> list[GameRecord]:
    """The game records of an arena ``--json`` file (the inverse of ``GameRecord.to_dict``).
    Every field is checked (types, one entry per seat, winners among the seats, finite
    numbers): a bad record is an :class:`ArenaError` naming the game and the field, never a
    game silently altered."""
    games = data.get("games")
    if not isinstance(games, list):
        raise ArenaError("not an arena results file: no list of games")
    return [_record_from_json(g, n) for n, g in enumerate(games)]


def _record_from_json(g: object, n: int) -> GameRecord:
    if not isinstance(g, dict):
        raise ArenaError(f"not an arena results file: game {n} is not an object")

    def bad(field: str, why: str) -> ArenaError:
        return ArenaError(f"not an arena results file: game {n}: {field!r} {why}")

    def integer(field: str, low: int | None = 0) -> int:
        v = g.get(field)
        if isinstance(v, bool) or not isinstance(v, int) or (low is not None and v < low):
            raise bad(field, f"must be an integer{'' if low is None else f' >= {low}'}, not {v!r}")
        return v

    def whole(v: object, field: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise bad(field, f"must hold integers >= 0, not {v!r}")
        return v

    def number(v: object, field: str, low: float | None = None) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise bad(field, f"must hold finite numbers, not {v!r}")
        if low is not None and v < low:
            raise bad(field, f"must hold numbers >= {low:g}, not {v!r}")
        return float(v)

    def items(field: str, default: list[Any] | None = None) -> list[Any]:
        v = g.get(field, default)
        if not isinstance(v, list):
            raise bad(field, f"must be a list, not {v!r}")
        return v

    seats = items("seats")
    if not seats or not all(isinstance(x, str) and x for x in seats):
        raise bad("seats", "must be a list of bot specs")
    k = len(seats)

    def per_seat(field: str, optional: bool = False) -> list[Any]:
        v = items(field, [] if optional else None)
        if len(v) != k and not (optional and not v):
            raise bad(field, f"must have one entry per seat ({k}), not {len(v)}")
        return v

    winners = items("winners")
    if any(isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < k for w in winners):
        raise bad("winners", f"must be seats 0..{k - 1}, not {winners!r}")
    if len(set(winners)) != len(winners):
        raise bad("winners", f"must name each seat once, not {winners!r}")
    actions = items("actions", [])
    if any(isinstance(a, bool) or not isinstance(a, int) or a < 0 for a in actions):
        raise bad("actions", "must be a list of action ids (integers >= 0)")
    plies = integer("plies")
    if actions and len(actions) != plies:
        raise bad("actions", f"must hold the game's {plies} plies, not {len(actions)} actions")
    returns = tuple(number(r, "returns", -1.0) for r in per_seat("returns"))
    if any(r > 1 for r in returns):
        raise bad("returns", f"must lie in [-1, 1], not {list(returns)}")
    top = max(returns)
    if (
        winners
        and any(returns[i] != top or i not in winners for i in range(k) if returns[i] == top or i in winners)
    ) or (not winners and len(set(returns)) > 1):
        raise bad("winners", f"{winners} disagree with 'returns' {list(returns)}")
    reason = g.get("reason")
    if not isinstance(reason, str):
        raise bad("reason", f"must be a string, not {reason!r}")
    cpu = g.get("cpu_seconds")
    return GameRecord(
        index=integer("index"),
        pairing=integer("pairing"),
        seats=tuple(seats),
        deal_seed=integer("deal_seed", None),
        bot_seed=integer("bot_seed", None),
        winners=tuple(winners),
        returns=returns,
        scores=tuple(whole(x, "scores") for x in per_seat("scores")),
        reason=reason,
        plies=plies,
        rounds=integer("rounds"),
        seconds=number(g.get("seconds"), "seconds", 0.0),
        think_seconds=tuple(number(t, "think_seconds", 0.0) for t in per_seat("think_seconds")),
        decisions=tuple(whole(d, "decisions") for d in per_seat("decisions")),
        actions=tuple(actions),
        think_cpu=tuple(number(t, "think_cpu", 0.0) for t in per_seat("think_cpu", optional=True)),
        cpu_seconds=None if cpu is None else number(cpu, "cpu_seconds", 0.0),
    )


def check_resumable(data: Mapping[str, Any], config: ArenaConfig, players: int) -> list[GameRecord]:
    """The finished games of an earlier run's ``--json`` (``data``) that belong to the
    schedule of ``config``, to be kept instead of replayed.

    The earlier run must have had the same game, bots (in order), seed, players, teams,
    lineup and options; its number of games per pairing may be smaller or larger (the
    ``fixed`` design's schedule is a prefix-stable sequence, so game *i* is the same game in
    both; the ``nearest`` design's is not, and keeps its number). Every kept
    game must match its scheduled seats and seeds, or the file is refused. Games beyond the
    new schedule are dropped. Because a game is a function of its task's seeds, replaying a
    kept game with budgets that do not depend on time would give the same record.
    """
    if not isinstance(data.get("games"), list) or not isinstance(data.get("game"), str):
        raise ArenaError("not an arena results file (it has no game and list of games)")
    expected = {
        "game": config.game,
        "bots": list(config.bots),
        "seed": config.seed,
        "players": players,
        "teams": config.teams,
        "lineup": config.lineup,
        "options": dict(config.options),
    }
    if config.anchors:
        expected["anchors"] = list(config.anchors)
    expected["design"] = config.design
    if config.design != "fixed":
        expected["predicted"] = dict(config.predicted)
    for key, want in expected.items():
        got = data.get(key, "fixed" if key == "design" else None)
        if got != want:
            raise ArenaError(f"cannot resume: the earlier run's {key} was {got!r}, this run's is {want!r}")
    if config.design != "fixed" and data.get("games_per_pairing") != config.games:
        raise ArenaError(
            f"cannot resume: the earlier run played {data.get('games_per_pairing')!r} games per pair "
            f"and this one {config.games}; a {config.design}-design run keeps its number (its games "
            "after the pilot, and their order, follow from it)"
        )
    records = records_from_json(data)
    _, tasks = make_schedule(config, players, records)
    limit = get_game(config.game).descriptor.num_distinct_actions
    kept: list[GameRecord] = []
    seen: set[int] = set()
    for rec in records:
        wrong = next((a for a in rec.actions if a >= limit), None)
        if wrong is not None:
            raise ArenaError(
                f"cannot resume: game {rec.index} of the earlier results records action {wrong}, "
                f"which is no action of {config.game} (ids 0..{limit - 1})"
            )
        if rec.index in seen:
            raise ArenaError(f"cannot resume: game {rec.index} appears twice in the earlier results")
        seen.add(rec.index)
        if rec.index >= len(tasks):
            continue
        task = tasks[rec.index]
        if (rec.pairing, rec.seats, rec.deal_seed, rec.bot_seed) != (
            task.pairing,
            task.seats,
            task.deal_seed,
            task.bot_seed,
        ):
            raise ArenaError(
                f"cannot resume: game {rec.index} of the earlier results is not "
                f"this schedule's game {rec.index}"
            )
        kept.append(rec)
    return kept


def run_arena(
    config: ArenaConfig,
    *,
    on_result: Callable[[GameRecord, int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    previous: Sequence[GameRecord] = (),
    previous_seconds: float = 0.0,
    runner: GameRunner | None = None,
) -> ArenaResult:
    """Play the whole schedule (``config.workers`` processes; 1 = in this process; or on
    ``runner``, when given).

    ``on_result(record, done, total)`` is called as each game finishes (in completion
    order). When ``should_stop()`` becomes true (polled between games, and twice a second
    while workers play) or a ``KeyboardInterrupt`` arrives, the arena stops and returns the
    games finished so far with ``interrupted=True`` (games in progress are dropped). A
    failing game raises :class:`ArenaError`.

    ``previous`` are games of this schedule already played (see :func:`check_resumable`):
    they are kept, not replayed, and count in ``done``; ``previous_seconds`` is added to the
    result's wall time.
    """
    game = get_game(config.game)
    options = config.game_options()
    if config.workers < 1:
        raise ArenaError("--workers must be at least 1")
    # Validate players/options once, and learn the player count.
    try:
        probe = game.new_initial_state(config.players, 0, dict(options))
    except ValueError as exc:
        raise ArenaError(str(exc)) from exc
    players = probe.num_players
    for spec in config.bots:
        make_bot(spec)  # raise BotSpecError early, in this process
    pairings = make_pairings(
        config.bots, players, teams=config.teams, lineup=config.lineup, anchors=config.anchors
    )
    total = scheduled_games(config, players)
    done: list[GameRecord] = list(previous)
    skip = {r.index for r in previous}
    t0 = time.perf_counter() - previous_seconds
    interrupted = False
    stop = should_stop or (lambda: False)

    def record(rec: GameRecord) -> None:
        done.append(rec)
        if on_result is not None:
            on_result(rec, len(done), total)

    try:
        # One pass per phase: the nearest design's second phase is known once its first is
        # played (make_schedule); the fixed design has one.
        while not interrupted:
            pairings, tasks = make_schedule(config, players, done)
            tasks = [t for t in tasks if t.index not in skip]
            if not tasks:
                break
            skip.update(t.index for t in tasks)
            if runner is not None:
                interrupted = runner(config, players, options, tasks, record, stop)
            elif config.workers == 1 or len(tasks) <= 1:
                for task in tasks:
                    if stop():
                        interrupted = True
                        break
                    record(play_game(game, task, players, options))
            else:
                interrupted = _run_parallel(config, players, options, tasks, record, stop=stop)
    except KeyboardInterrupt:
        interrupted = True
    done.sort(key=lambda r: r.index)
    return ArenaResult(config, players, pairings, done, total, time.perf_counter() - t0, interrupted)


def _run_parallel(
    config: ArenaConfig,
    players: int,
    options: dict[str, Any],
    tasks: list[GameTask],
    record: Callable[[GameRecord], None],
    *,
    stop: Callable[[], bool],
) -> bool:
    """Play ``tasks`` in a :class:`~ai.procpool.WorkerPool` of ``config.workers`` processes
    (not daemonic, so that a bot may use root parallelism), recording games as they finish;
    returns whether ``stop()`` ended it early. Leaving (a stop, an error, a
    ``KeyboardInterrupt``) terminates the games in progress."""
    workers = min(config.workers, len(tasks))
    with WorkerPool(
        workers, daemon=False, initializer=_init_worker, initargs=(config.game, players, options),
        name="heka-arena",
    ) as pool:  # fmt: skip
        futures = {pool.submit(_play_in_worker, task): task for task in tasks}
        pending = set(futures)
        while pending:
            if stop():
                pool.shutdown(cancel=True)
                return True
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: futures[f].index):
                exc = future.exception()
                if isinstance(exc, WorkerDied):
                    raise ArenaError(f"an arena worker died ({exc})") from exc
                if exc is not None:
                    task = futures[future]
                    text = str(exc.__cause__) if isinstance(exc.__cause__, RemoteTraceback) else repr(exc)
                    raise ArenaError(
                        f"game {task.index} ({' / '.join(task.seats)}, deal seed {task.deal_seed}, "
                        f"bot seed {task.bot_seed}) failed:\n{text}"
                    )
                record(future.result())
    return False


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def _pct(r: Rate) -> str:
    return f"{100 * r.rate:5.1f}% [{100 * r.low:4.1f}, {100 * r.high:5.1f}]"


def format_result(result: ArenaResult) -> str:
    c = result.config
    lines = []
    title = f"{c.game}, {result.players} players" + (" (teams)" if c.teams else "")
    lines.append(
        f"{title}: {len(result.records)}/{result.total_games} games, lineup {c.lineup}, "
        f"seed {c.seed}, {c.workers} worker(s), {result.seconds:.1f} s"
        + ("  [INTERRUPTED: partial results]" if result.interrupted else "")
    )
    lines.append("")
    stats = result.pairing_stats()
    width = max([len(s.pairing.label) for s in stats] + [7])
    head = (
        f"{'pairing':<{width}}  {'games':>5}  {'A wins (95% CI)':<22}  {'draws':<22}  "
        f"{'B wins':<22}  ms/move A|B"
    )
    lines.append(head)
    lines.append("-" * len(head))
    for s in stats:
        lines.append(
            f"{s.pairing.label:<{width}}  {s.games:>5}  {_pct(s.a_wins):<22}  {_pct(s.draws):<22}  "
            f"{_pct(s.b_wins):<22}  {s.a_ms_per_decision:.1f}|{s.b_ms_per_decision:.1f}"
        )
    lines.append("")
    for s in stats:
        if s.games:
            reasons = ", ".join(f"{k} {v}" for k, v in s.reasons)
            lines.append(f"  {s.pairing.label}: mean {s.mean_plies:.0f} actions/game; ended by {reasons}")
    try:
        ratings = result.ratings()
    except ValueError as exc:
        lines.append(f"\nno ratings: {exc}")
        ratings = []
    if ratings:
        anchor = "random = 0" if "random" in c.bots else "mean = 0"
        lines.append("")
        lines.append(f"Elo (Bradley–Terry maximum likelihood over all games, draws = ½, {anchor}, 95% CI):")
        for r in sorted(ratings, key=lambda r: -r.elo):
            ci = "anchor" if r.ci95 == 0 and r.name == "random" else f"± {r.ci95:.0f}"
            lines.append(
                f"  {r.name:<{width}}  {r.elo:+7.0f}  {ci:<8}  (score {r.score:.1f} / {r.games:.1f})"
            )
    return "\n".join(lines)


def expected_block_note(pairings: Sequence[Pairing], games: int) -> str | None:
    """A warning when ``games`` is not a multiple of every block length (seats unbalanced)."""
    lengths = sorted({len(p.block) for p in pairings})
    bad = [n for n in lengths if games % n]
    if not bad:
        return None
    lcm = math.lcm(*lengths)
    return (
        f"note: {games} games per pairing is not a multiple of the seat block length "
        f"({', '.join(map(str, lengths))}), so seats are not exactly balanced; "
        f"use a multiple of {lcm}"
    )
