"""Bots in the service, as plain functions testable without gRPC: a request's bot
settings as a validated plan, and the loop in which bot seats play until another seat must
act (AdvanceBots, and the bots of CreateGame and ApplyAction).

The servicer (:mod:`service.servicer`) opens tokens, calls these, and converts the results.
"""

from __future__ import annotations

import dataclasses
import json
import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc

from engine.core import SECRET_ACTION, Event, State
from service.config import Config
from service.convert import DEFAULT_TOP_K, MAX_TOP_K
from service.envelope import StateKey
from service.errors import ServiceError, invalid
from service.gen.heka.v1 import game_service_pb2 as pb

_KINDS = {
    pb.BOT_KIND_UNSPECIFIED: "mcts",
    pb.BOT_KIND_MCTS: "mcts",
    pb.BOT_KIND_GREEDY: "greedy",
    pb.BOT_KIND_RANDOM: "random",
}
_DIFFICULTIES = {
    pb.DIFFICULTY_UNSPECIFIED: "medium",
    pb.DIFFICULTY_EASY: "easy",
    pb.DIFFICULTY_MEDIUM: "medium",
    pb.DIFFICULTY_HARD: "hard",
    pb.DIFFICULTY_EXPERT: "expert",
}


@dataclasses.dataclass(frozen=True, slots=True)
class BotPlan:
    """A validated bot request: spec for ``ai.api.make_bot``, the bot's name
    (``SearchDiagnostics.bot``), budget, seed, whether it runs inline (random: no search
    slot), how many root actions to report, and whether a ``target_rating`` chose it."""

    spec: str
    label: str
    iterations: int | None
    milliseconds: float | None
    seed: int
    inline: bool
    top_k: int = DEFAULT_TOP_K
    rated: bool = False

    @property
    def metric_label(self) -> str:
        """The ``bot`` label of the search metrics: ``rated`` for every ``target_rating``
        (whose bot's name depends on the rating asked), else the name (a preset,
        ``mcts:custom``, ``greedy``, ``random``: service.metrics.bot_labels)."""
        return "rated" if self.rated else self.label


def bot_plan(
    settings: pb.BotSettings,
    field: str,
    config: Config,
    game: str = "",
    players: int = 0,
    *,
    teams: bool = False,
) -> BotPlan:
    """``settings`` checked against the server's caps; ``INVALID_ARGUMENT`` naming the field
    otherwise. ``game``, ``players`` and ``teams`` (a team game): the game's, for a
    ``target_rating``."""
    from ai.presets import PRESETS

    kind = _KINDS.get(settings.kind)
    if kind is None:
        raise invalid(f"{field}.kind", f"unknown bot kind {settings.kind}", "bad_bot")
    # Every field is checked for every kind, before any is ignored: a bad value is refused
    # whatever the bot, never passed over (docs/api.md, "Errors").
    workers = settings.workers or 1
    if workers < 1 or workers > config.max_workers_per_search:
        raise invalid(
            f"{field}.workers",
            f"workers must be 1..{config.max_workers_per_search} on this server, got {settings.workers}",
            "bad_budget",
        )
    if settings.HasField("target_rating"):
        return rated_plan(settings, field, config, game, players, teams=teams)
    difficulty = _DIFFICULTIES.get(settings.difficulty)
    if difficulty is None:
        raise invalid(f"{field}.difficulty", f"unknown difficulty {settings.difficulty}", "bad_bot")
    budget = _budget(settings.budget, f"{field}.budget", config) if settings.HasField("budget") else None
    top_k, seed = _top_k_and_seed(settings, field)
    if kind != "mcts":  # random and greedy do not search: difficulty and budget are ignored
        return BotPlan(kind, kind, None, None, seed, inline=kind == "random", top_k=top_k)
    preset = PRESETS[difficulty]
    iterations, milliseconds = preset.iterations, preset.milliseconds
    label = f"mcts:{difficulty}"
    if budget is not None:
        iterations, milliseconds = budget
        label = "mcts:custom"
    # The presets obey the caps too.
    if iterations is not None:
        iterations = min(iterations, config.max_iterations)
    milliseconds = (
        min(milliseconds, config.max_milliseconds) if milliseconds is not None else config.max_milliseconds
    )
    spec = f"mcts:{difficulty}" + (f",workers={workers}" if workers > 1 else "")
    return BotPlan(spec, label, iterations, milliseconds, seed, inline=False, top_k=top_k)


def _top_k_and_seed(settings: pb.BotSettings, field: str) -> tuple[int, int]:
    """The diagnostics' top-k (checked) and the search's seed (the caller's, else 64 bits
    from ``secrets``) of any bot request."""
    top_k = settings.diagnostics_top_k or DEFAULT_TOP_K
    if not 1 <= top_k <= MAX_TOP_K:
        raise invalid(
            f"{field}.diagnostics_top_k",
            f"diagnostics_top_k must be 0..{MAX_TOP_K}, got {settings.diagnostics_top_k}",
            "bad_bot",
        )
    return top_k, settings.seed if settings.HasField("seed") else secrets.randbits(64)


def rated_plan(
    settings: pb.BotSettings, field: str, config: Config, game: str, players: int, *, teams: bool = False
) -> BotPlan:
    """The plan of a ``target_rating``: the bot at that rating on the strength curve of the
    game's rating ladder for the player count (a measured level, or one interpolated between
    two: :meth:`ai.ladder.RatingTable.level_for`), with the server's caps;
    ``INVALID_ARGUMENT`` naming the valid range outside it. A team game plays by the team
    table where one is shipped, else by the player count's (docs/ladder.md, "Teams")."""
    from ai.ladder import TargetRatingError, load_table
    from ai.mcts_params import parse_params
    from ai.presets import PRESETS

    target = settings.target_rating
    where = f"{field}.target_rating"
    for present, what in (
        (settings.kind not in (pb.BOT_KIND_UNSPECIFIED, pb.BOT_KIND_MCTS), "a kind other than MCTS"),
        (settings.difficulty != pb.DIFFICULTY_UNSPECIFIED, "a difficulty"),
        (settings.HasField("budget"), "a budget"),
        (settings.workers > 1, "workers > 1"),
    ):
        if present:
            raise invalid(
                where,
                f"target_rating picks the bot's strength itself: it cannot be combined with {what}",
                "bad_bot",
            )
    table = (load_table(game, players, teams=True) if teams else None) or load_table(game, players)
    if table is None:
        raise invalid(
            where,
            f"{game} with {players} players has no rating ladder yet: target_rating is not "
            "available there (ListGames lists the ladders)",
            "bad_target_rating",
        )
    try:
        level = table.level_for(target)
    except TargetRatingError as exc:
        raise invalid(
            where,
            str(exc),
            "bad_target_rating",
            {"min_target_rating": "0", "max_target_rating": str(table.max_target)},
        ) from None
    top_k, seed = _top_k_and_seed(settings, field)
    if not level.spec.startswith("mcts:"):  # random, the 0 of the scale
        return BotPlan(
            level.spec, level.name, None, None, seed, inline=level.spec == "random", top_k=top_k, rated=True
        )
    _, params = parse_params(level.spec.partition(":")[2])
    # The ladder rates iteration budgets (ms=none); the server caps a level's time like a
    # preset's: its preset's cap when it names one, else the server's.
    first = level.spec.partition(":")[2].split(",")[0].strip()
    cap = PRESETS[first].milliseconds if first in PRESETS else None
    iterations = min(params.iterations, config.max_iterations) if params.iterations is not None else None
    milliseconds = min(cap, config.max_milliseconds) if cap is not None else config.max_milliseconds
    return BotPlan(
        level.spec, level.name, iterations, milliseconds, seed, inline=False, top_k=top_k, rated=True
    )


#: The shortest time budget of a search: less cannot run one iteration.
MIN_MILLISECONDS = 1.0


def exact(x: float) -> str:
    """A number as received, every digit kept (``30000.001``, ``1e-300``; ``30000``)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _budget(b: pb.SearchBudget, field: str, config: Config) -> tuple[int | None, float | None]:
    if not b.HasField("iterations") and not b.HasField("milliseconds"):
        raise invalid(field, "an explicit budget needs iterations and/or milliseconds", "bad_budget")
    iterations: int | None = None
    milliseconds: float | None = None
    if b.HasField("iterations"):
        if not 1 <= b.iterations <= config.max_iterations:
            raise invalid(
                f"{field}.iterations",
                f"iterations must be 1..{config.max_iterations} on this server, got {b.iterations}",
                "bad_budget",
            )
        iterations = int(b.iterations)
    if b.HasField("milliseconds"):
        ms = b.milliseconds
        if not math.isfinite(ms) or not MIN_MILLISECONDS <= ms <= config.max_milliseconds:
            raise invalid(
                f"{field}.milliseconds",
                f"milliseconds must be in [{MIN_MILLISECONDS:g}, {config.max_milliseconds:g}] on this "
                f"server, got {exact(ms)}",
                "bad_budget",
            )
        milliseconds = float(ms)
    return iterations, milliseconds


def team_game(state: State) -> bool:
    """Whether seats play in teams (Osirium O9): a ``target_rating`` then reads the team table."""
    return len(set(state.teams())) < state.num_players


def state_bot_plan(settings: pb.BotSettings, field: str, config: Config, state: State) -> BotPlan:
    """:func:`bot_plan` for a bot of the game in ``state`` (its name, players and teams)."""
    return bot_plan(
        settings, field, config, state.game.descriptor.name, state.num_players, teams=team_game(state)
    )


def bot_plans(
    seats: Sequence[pb.BotSeat], state: State, config: Config, field: str = "bots"
) -> dict[int, BotPlan]:
    """The plans of a request's bot seats in the game of ``state`` (each seat at most once,
    in range)."""
    num_players = state.num_players
    plans: dict[int, BotPlan] = {}
    for i, bot_seat in enumerate(seats):
        seat = bot_seat.seat
        if not 0 <= seat < num_players:
            raise invalid(
                f"{field}[{i}].seat",
                f"{field}[{i}].seat {seat} is out of range: this game has {num_players} players "
                f"(seats 0-{num_players - 1})",
                "bad_player",
            )
        if seat in plans:
            raise invalid(f"{field}[{i}].seat", f"seat {seat} is named twice", "bad_request")
        plans[seat] = state_bot_plan(bot_seat.bot, f"{field}[{i}].bot", config, state)
    return plans


def max_moves(requested: int, config: Config, field: str = "max_bot_moves") -> int:
    cap = config.max_advance_moves
    if not 0 <= requested <= cap:
        raise invalid(field, f"{field} must be 0..{cap} on this server, got {requested}", "bad_budget")
    return requested or cap


# ---------------------------------------------------------------------------------------
# The bot loop
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class PlayedTurn:
    """One bot move: who, what (and whether it is a secret decision), how it was chosen, and
    the events it caused (unfiltered)."""

    player: int
    action: int
    secret: bool
    diagnostics: Any  # ai.api.Diagnostics
    plan: BotPlan
    seed: int
    events: list[Event]


#: Why the loop stopped: StopReason member names (convert.enum_value).
GAME_OVER, SEAT_NOT_NAMED, MOVE_LIMIT, DEADLINE, TIME_LIMIT = (
    "game_over",
    "seat_not_named",
    "move_limit",
    "deadline",
    "time_limit",
)

Choose = Callable[[State, BotPlan, int, float], tuple[int, Any]]


def play_bots(
    state: State,
    plans: Mapping[int, BotPlan],
    *,
    moves: int,
    choose: Choose,
    apply: Callable[[State, int], list[Event]],
    limit: float,
    margin: float,
    time_left: Callable[[], float | None] = lambda: None,
    is_active: Callable[[], bool] = lambda: True,
) -> tuple[list[PlayedTurn], str]:
    """Let the bot seats of ``plans`` play on ``state`` (changed in place) until a seat that
    is not named must act, the game ends, ``moves`` moves are made, too little of the call's
    deadline (``time_left``) or of the server's time cap (``limit``, monotonic) remains for
    another search, or the call is cancelled (``ServiceError`` CANCELLED). ``choose(state,
    plan, seed, limit)`` picks a move; a deadline it overruns after the first move ends the
    loop with the moves made."""
    turns: list[PlayedTurn] = []
    floor = 2 * margin + 0.05
    while True:
        current = state.current_player()
        if current < 0:
            return turns, GAME_OVER
        plan = plans.get(current)
        if plan is None:
            return turns, SEAT_NOT_NAMED
        if len(turns) >= moves:
            return turns, MOVE_LIMIT
        if not is_active():
            raise ServiceError(grpc.StatusCode.CANCELLED, "the call was cancelled", reason="cancelled")
        if turns:
            remaining = time_left()
            if remaining is not None and remaining < floor:
                return turns, DEADLINE
            if limit - time.monotonic() < floor:
                return turns, TIME_LIMIT
        seed = (plan.seed + len(turns)) & 0xFFFFFFFFFFFFFFFF
        try:
            action, diagnostics = choose(state, plan, seed, limit)
        except ServiceError as exc:
            if exc.reason != "deadline" or not turns:
                raise
            return turns, DEADLINE  # keep the moves already made
        secret = state.public_action(action) == SECRET_ACTION
        events = apply(state, action)
        turns.append(PlayedTurn(current, action, secret, diagnostics, plan, seed, events))


def search_seed(key: StateKey, state: State, seed: int) -> int:
    """The seed the search of the seat to act runs with, from the published ``seed``: keyed
    with ``key``'s search secret and the seat's own view, as canonical JSON (the typed view's
    fields, not its rendering, so that a change of how views are drawn changes no decision).
    docs/security.md, "Bots' seeds"."""
    seat = state.current_player()
    view = json.dumps(state.view(seat).to_dict(), sort_keys=True, separators=(",", ":"))
    return key.search_seed(state.game.descriptor.name, seat, seed, view)
