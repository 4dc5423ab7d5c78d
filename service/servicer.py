"""``heka.v1.GameService``: validate, convert, call the engine or a bot, convert back.

Methods raise :class:`service.errors.ServiceError` or let engine errors propagate; the
interceptor (:mod:`service.interceptors`) maps them to statuses in one place. The server
keeps no game: every state comes from the request's token and leaves in a new one.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import grpc

from engine.aton.codec import encode as encode_aton
from engine.core import SECRET_ACTION, ActionParseError, Game, IllegalActionError, State
from engine.osirium.codec import encode as encode_osirium
from engine.registry import get_game, list_games
from service import convert, metrics
from service.config import Config
from service.envelope import KeyRing
from service.errors import ServiceError, failed_precondition, invalid, resource_exhausted
from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.statecache import StateCache
from service.workers import CapacityFull, SearchJob, SearchPool, Ticket

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GameService"].full_name
_APPLY_ACTION_FIELD = pb.ApplyActionResponse.DESCRIPTOR.fields_by_name["action"].number
_SECRET_ACTION_BYTES = convert.field_bytes(_APPLY_ACTION_FIELD, convert.SECRET.SerializeToString())
_APPLY_EVENTS_FIELD = pb.ApplyActionResponse.DESCRIPTOR.fields_by_name["events"].number
_LEGAL_ACTIONS_FIELD = pb.ListLegalActionsResponse.DESCRIPTOR.fields_by_name["actions"].number

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
}
#: Writers of the previous release's state versions, by game (``previous_state_versions``):
#: that release reads these, so tokens stay readable across a rolling upgrade or a rollback.
#: They need the previous release's generator (SplitMix64), which games created in that
#: mode get (:meth:`GameService._chance`).
PREVIOUS_STATE_WRITERS: dict[str, Callable[[Any], str]] = {
    "aton": lambda s: encode_aton(s, version=1),
    "osirium": lambda s: encode_osirium(s, version=2),
}


def _preset(name: str) -> tuple[int | None, float | None]:
    from ai.presets import PRESETS

    b = PRESETS[name]
    return b.iterations, b.milliseconds


def _legal_hint(state: State, viewer: int | None) -> str:
    """How to find the legal actions; their number only for the seat to act itself (it
    depends on that seat's private cards)."""
    current = state.current_player()
    if viewer != current:
        return f"seat {current} must decide; ListLegalActions with player={current} lists its actions"
    n = len(state.legal_actions())
    plural = "s" if n != 1 else ""
    return f"{n} legal action{plural} for seat {current}; ListLegalActions lists them"


@dataclasses.dataclass(frozen=True, slots=True)
class BotPlan:
    """A validated bot request: spec for make_bot, metric label, budget, seed."""

    spec: str
    label: str
    iterations: int | None
    milliseconds: float | None
    seed: int
    inline: bool


class GameService(pb_grpc.GameServiceServicer):
    def __init__(self, config: Config, keys: KeyRing, searches: SearchPool) -> None:
        self.config = config
        self.keys = keys
        self.searches = searches
        self.actions = convert.ActionCache()
        self.states = StateCache(config.state_cache_size)
        self._previous_writers = PREVIOUS_STATE_WRITERS if config.previous_state_versions else {}
        self._games_response = pb.ListGamesResponse(games=[convert.game_info(g) for g in list_games()])

    # ------------------------------------------------------------------------------------
    # Helpers
    # ------------------------------------------------------------------------------------

    def _open(self, token: str, expected_game: str = "", *, mutable: bool = False) -> State:
        """The state in ``token`` (verified). Shared with the state cache unless ``mutable``:
        callers that change the state get their own copy. A token decoded here is cached
        either way, so that the next call with it (from any client reaching this process)
        skips the decoding."""
        state = self.states.get(token)
        shared = state is not None
        if state is None:
            opened = self.keys.open(token)
            state = self._game_of(opened.serialized).deserialize_state(opened.serialized)
            self.states.put(token, state)  # a no-op when the cache is off
            shared = self.states.size > 0
        if mutable and shared:
            state = state.clone()
        if expected_game:
            self._check_game(state, expected_game)
        return state

    @staticmethod
    def _game_of(serialized: str) -> Game:
        try:
            return get_game(serialized.split(":", 1)[0])
        except ValueError as exc:
            raise invalid("state", f"the token holds an unknown game: {exc}", "bad_state") from None

    @staticmethod
    def _check_game(state: State, expected_game: str) -> None:
        try:
            wanted = get_game(expected_game).descriptor.name
        except ValueError as exc:
            raise invalid("game", str(exc), "unknown_game") from None
        have = state.game.descriptor.name
        if wanted != have:
            raise invalid("state", f"the token holds a game of {have}, not {wanted}", "wrong_game")

    def _seal(self, state: State) -> str:
        """A token for ``state``, which the caller must not change afterwards (it is cached)."""
        writer = self._previous_writers.get(state.game.descriptor.name)
        token = self.keys.seal(writer(state) if writer is not None else state.serialize())
        self.states.put(token, state)
        return token

    @staticmethod
    def _seat(state: State, seat: int, field: str) -> int:
        n = state.num_players
        if not 0 <= seat < n:
            raise invalid(
                field,
                f"{field} {seat} is out of range: this game has {n} players (seats 0-{n - 1})",
                "bad_player",
            )
        return seat

    def _viewer(self, state: State, request: Any, field: str = "viewer") -> int | None:
        if not request.HasField(field):
            return None
        return self._seat(state, getattr(request, field), field)

    @staticmethod
    def _to_act(state: State, player: int | None) -> int:
        """The seat to act; FAILED_PRECONDITION when over or when ``player`` is not it."""
        current = state.current_player()
        if current < 0:
            outcome = state.outcome()
            result = f": {outcome.text}" if outcome is not None else ""
            raise failed_precondition(f"the game is over{result}", "game_over")
        if player is not None and player != current:
            raise failed_precondition(
                f"seat {player} is not to act: seat {current} must decide ({state.decision()})", "not_to_act"
            )
        return current

    def _player_arg(self, state: State, request: Any) -> int | None:
        if not request.HasField("player"):
            return None
        return self._seat(state, request.player, "player")

    @staticmethod
    def _count_finished(state: State) -> None:
        """heka_games_finished_total, for a state that an action just ended."""
        if state.is_terminal():
            outcome = state.outcome()
            metrics.GAMES_FINISHED.labels(
                state.game.descriptor.name, convert.outcome_label(outcome) if outcome else "unknown"
            ).inc()

    def _apply(self, state: State, action: int, viewer: int | None = None) -> list[Any]:
        """Apply ``action`` of the seat to act. An illegal action's error is addressed to
        ``viewer``: the engine's explanation (which names the legal actions) only when that
        is the seat to act."""
        try:
            events = state.apply_action(action)
        except IllegalActionError as exc:
            if state.is_terminal():
                raise
            # apply_action left the state unchanged
            current = state.current_player()
            if viewer == current:
                raise IllegalActionError(f"{exc} ({_legal_hint(state, viewer)})") from exc
            text = state.game.action_to_string(action)
            raise IllegalActionError(
                f"{state.game.descriptor.name}: {text} is not legal now ({_legal_hint(state, viewer)})"
            ) from exc
        metrics.child(metrics.ACTIONS_APPLIED, state.game.descriptor.name).inc()
        self._count_finished(state)
        return events

    # ---- bots ----------------------------------------------------------------------------

    def _bot_plan(self, settings: pb.BotSettings, field: str) -> BotPlan:
        cfg = self.config
        kind = _KINDS.get(settings.kind)
        if kind is None:
            raise invalid(f"{field}.kind", f"unknown bot kind {settings.kind}", "bad_bot")
        workers = settings.workers or 1
        if workers < 1 or workers > cfg.max_workers_per_search:
            raise invalid(
                f"{field}.workers",
                f"workers must be 1..{cfg.max_workers_per_search} on this server, got {settings.workers}",
                "bad_budget",
            )
        seed = settings.seed if settings.HasField("seed") else secrets.randbits(32)
        if kind != "mcts":  # random and greedy do not search: difficulty and budget are ignored
            return BotPlan(kind, kind, None, None, seed, inline=kind == "random")
        difficulty = _DIFFICULTIES.get(settings.difficulty)
        if difficulty is None:
            raise invalid(f"{field}.difficulty", f"unknown difficulty {settings.difficulty}", "bad_bot")
        iterations, milliseconds = _preset(difficulty)
        label = f"mcts:{difficulty}"
        if settings.HasField("budget"):
            b = settings.budget
            if not b.HasField("iterations") and not b.HasField("milliseconds"):
                raise invalid(
                    f"{field}.budget", "an explicit budget needs iterations and/or milliseconds", "bad_budget"
                )
            iterations = milliseconds = None
            if b.HasField("iterations"):
                if not 1 <= b.iterations <= cfg.max_iterations:
                    raise invalid(
                        f"{field}.budget.iterations",
                        f"iterations must be 1..{cfg.max_iterations} on this server, got {b.iterations}",
                        "bad_budget",
                    )
                iterations = int(b.iterations)
            if b.HasField("milliseconds"):
                ms = b.milliseconds
                if not math.isfinite(ms) or not 0 < ms <= cfg.max_milliseconds:
                    raise invalid(
                        f"{field}.budget.milliseconds",
                        f"milliseconds must be in (0, {cfg.max_milliseconds:g}] on this server, got {ms:g}",
                        "bad_budget",
                    )
                milliseconds = float(ms)
            label = "mcts:custom"
        # The presets obey the caps too.
        if iterations is not None:
            iterations = min(iterations, cfg.max_iterations)
        milliseconds = (
            min(milliseconds, cfg.max_milliseconds) if milliseconds is not None else cfg.max_milliseconds
        )
        spec = f"mcts:{difficulty}" + (f",workers={workers}" if workers > 1 else "")
        return BotPlan(spec, label, iterations, milliseconds, seed, inline=False)

    def _search_deadline(
        self, context: grpc.ServicerContext, limit: float | None = None
    ) -> tuple[float, float | None]:
        """(deadline for the search, absolute call deadline or None), both monotonic. ``limit``
        is the server's own end for the whole call (AdvanceBots' total time cap)."""
        now = time.monotonic()
        remaining = context.time_remaining()
        cap = now + self.config.max_milliseconds / 1000.0
        if limit is not None:
            cap = min(cap, limit)
        if remaining is None or remaining > 1e8:
            return cap, None
        margin = self.config.deadline_margin_ms / 1000.0 + 0.05 * max(remaining, 0.0)
        return min(cap, now + remaining - margin), now + remaining

    def _search(
        self,
        state: State,
        plan: BotPlan,
        context: grpc.ServicerContext,
        seed: int,
        ticket: Ticket | None,
        *,
        limit: float | None = None,
    ) -> Any:
        """Run one search; returns (action, diagnostics)."""
        game_name = state.game.descriptor.name
        deadline, call_deadline = self._search_deadline(context, limit)
        if plan.inline:
            from ai.api import make_bot

            start = time.monotonic()
            decision = make_bot(plan.spec).choose(state, seed=seed, deadline=deadline)
            metrics.record_search(
                game_name, plan.label, decision.diagnostics.iterations, time.monotonic() - start
            )
            return decision.action, decision.diagnostics
        job = SearchJob(
            game=game_name,
            serialized=state.serialize(),
            spec=plan.spec,
            label=plan.label,
            seed=seed,
            iterations=plan.iterations,
            milliseconds=plan.milliseconds,
            deadline=deadline,
            cancel_index=ticket.index if ticket is not None else None,
        )
        # Wait a little past the search deadline for the result to travel back; a search
        # that overruns its deadline beyond that is reported as DEADLINE_EXCEEDED.
        wait = max(0.0, deadline - time.monotonic()) + 5.0
        if call_deadline is not None:
            wait = max(0.0, call_deadline - time.monotonic()) + 0.05
        try:
            result = self.searches.run(job, timeout=wait)
        except FutureTimeout:
            raise ServiceError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                "the search did not finish before the call's deadline",
                reason="deadline",
            ) from None
        return result.action, result.diagnostics

    # ------------------------------------------------------------------------------------
    # RPCs
    # ------------------------------------------------------------------------------------

    def ListGames(self, request: pb.ListGamesRequest, context: grpc.ServicerContext) -> pb.ListGamesResponse:
        return self._games_response

    def CreateGame(
        self, request: pb.CreateGameRequest, context: grpc.ServicerContext
    ) -> pb.CreateGameResponse:
        if not request.game:
            raise invalid("game", "game is required (see ListGames)", "unknown_game")
        game: Game = get_game(request.game)
        if request.num_players < 0:
            raise invalid(
                "num_players", f"num_players must be positive, got {request.num_players}", "bad_player_count"
            )
        num_players = request.num_players or None
        seed = request.seed if request.HasField("seed") else secrets.randbits(64)
        options = convert.options_from_struct(request.options, game.descriptor)
        chance = self.keys.signing.game_rng(
            game.descriptor.name, seed, previous_versions=bool(self._previous_writers)
        )
        state = game.new_initial_state(num_players, seed=seed, options=options, rng=chance)
        viewer = self._viewer(state, request)
        metrics.GAMES_CREATED.labels(game.descriptor.name).inc()
        resp = pb.CreateGameResponse(state=self._seal(state), seed=seed)
        convert.fill_status(resp.status, state)
        if viewer is not None or request.include_public_view:
            resp.view.CopyFrom(convert.view_message(state, viewer))
        return resp

    def GetView(self, request: pb.GetViewRequest, context: grpc.ServicerContext) -> pb.GetViewResponse:
        state = self._open(request.state, request.game)
        player = self._player_arg(state, request)
        return pb.GetViewResponse(view=convert.view_message(state, player))

    def ListLegalActions(
        self, request: pb.ListLegalActionsRequest, context: grpc.ServicerContext
    ) -> pb.ListLegalActionsResponse:
        state = self._open(request.state, request.game)
        player = self._player_arg(state, request)
        current = self._to_act(state, player)
        if player is None:
            # The legal actions name the seat's private cards (its hand, its arrangements):
            # a response that may be forwarded to anyone never carries them.
            raise invalid(
                "player",
                f"player is required: the legal actions are private to the seat to act (seat {current}); "
                f"pass player={current}",
                "player_required",
            )
        resp = pb.ListLegalActionsResponse(player=current, decision=state.decision())
        resp.MergeFromString(
            self.actions.encoded_list(state.game, state.legal_actions(), _LEGAL_ACTIONS_FIELD)
        )
        return resp

    def ApplyAction(
        self, request: pb.ApplyActionRequest, context: grpc.ServicerContext
    ) -> pb.ApplyActionResponse:
        state = self._open(request.state, request.game, mutable=True)
        viewer = self._viewer(state, request)
        actor = self._to_act(state, self._player_arg(state, request))
        which = request.WhichOneof("action")
        game = state.game
        if which == "action_id":
            action = request.action_id
            if not 0 <= action < game.descriptor.num_distinct_actions:
                raise invalid(
                    "action_id",
                    f"unknown action id {action}: {game.descriptor.name} action ids are "
                    f"0..{game.descriptor.num_distinct_actions - 1} ({_legal_hint(state, viewer)})",
                    "unknown_action",
                )
        elif which == "action_text":
            try:
                action = game.string_to_action(request.action_text)
            except ActionParseError as exc:
                raise ActionParseError(f"{exc} ({_legal_hint(state, viewer)})") from exc
        else:
            raise invalid("action", "give the action as action_id or action_text", "bad_request")
        secret = viewer != actor and state.public_action(action) == SECRET_ACTION
        events = self._apply(state, action, viewer)
        resp = pb.ApplyActionResponse(state=self._seal(state))
        resp.MergeFromString(
            (_SECRET_ACTION_BYTES if secret else self.actions.encoded(game, action, _APPLY_ACTION_FIELD))
            + convert.encoded_events(events, viewer, _APPLY_EVENTS_FIELD)
        )
        convert.fill_status(resp.status, state)
        if request.include_view:
            resp.view.CopyFrom(convert.view_message(state, viewer))
        return resp

    def BotMove(self, request: pb.BotMoveRequest, context: grpc.ServicerContext) -> pb.BotMoveResponse:
        state = self._open(request.state, request.game, mutable=request.apply)
        viewer = self._viewer(state, request)
        actor = self._to_act(state, self._player_arg(state, request))
        private = request.trusted_backend or viewer == actor
        if not request.apply and not private:
            # A move that is not played is a suggestion for the seat to act: it names that
            # seat's private cards (an amulet it holds, its arrangement) before anyone sees them.
            raise invalid(
                "viewer",
                f"a bot move that is not applied is private to the seat to act: pass viewer={actor} "
                "(or apply=true, or trusted_backend=true from a backend that does not forward it)",
                "private_move",
            )
        plan = self._bot_plan(request.bot, "bot")
        with self._slot(plan, context) as ticket:
            action, diag = self._search(state, plan, context, plan.seed, ticket)
        game = state.game
        resp = pb.BotMoveResponse(
            action=self.actions.get(game, action)
            if private or state.public_action(action) != SECRET_ACTION
            else convert.SECRET,
            diagnostics=convert.diagnostics_message(
                game, self.actions, diag, plan.label, plan.seed, private=private
            ),
        )
        if request.apply:
            events = self._apply(state, action)
            resp.state = self._seal(state)
            convert.add_events(resp.events, events, viewer)
            if request.include_view:
                resp.view.CopyFrom(convert.view_message(state, viewer))
        convert.fill_status(resp.status, state)
        return resp

    def _slot(self, plan: BotPlan, context: grpc.ServicerContext) -> _Slot | _NullSlot:
        return _NullSlot() if plan.inline else _Slot(self.searches, context)

    def AdvanceBots(
        self, request: pb.AdvanceBotsRequest, context: grpc.ServicerContext
    ) -> pb.AdvanceBotsResponse:
        state = self._open(request.state, request.game, mutable=True)
        viewer = self._viewer(state, request)
        plans: dict[int, BotPlan] = {}
        for i, bot_seat in enumerate(request.bots):
            seat = self._seat(state, bot_seat.seat, f"bots[{i}].seat")
            if seat in plans:
                raise invalid(f"bots[{i}].seat", f"seat {seat} is named twice", "bad_request")
            plans[seat] = self._bot_plan(bot_seat.bot, f"bots[{i}].bot")
        if not plans:
            raise invalid("bots", "name at least one bot seat", "bad_request")
        cap = self.config.max_advance_moves
        if not 0 <= request.max_moves <= cap:
            raise invalid(
                "max_moves",
                f"max_moves must be 0..{cap} on this server, got {request.max_moves}",
                "bad_budget",
            )
        max_moves = request.max_moves or cap
        self._to_act(state, None)
        # The server's cap on the whole call, deadline or not: a call with no deadline
        # never holds a search slot for a whole game.
        limit = time.monotonic() + self.config.max_advance_seconds
        game = state.game
        resp = pb.AdvanceBotsResponse()
        stop = pb.STOP_REASON_UNSPECIFIED
        all_inline = all(p.inline for p in plans.values())
        slot = _NullSlot() if all_inline else _Slot(self.searches, context)
        margin = self.config.deadline_margin_ms / 1000.0
        with slot as ticket:
            moves = 0
            while True:
                current = state.current_player()
                if current < 0:
                    stop = pb.STOP_REASON_GAME_OVER
                    break
                plan = plans.get(current)
                if plan is None:
                    stop = pb.STOP_REASON_SEAT_NOT_NAMED
                    break
                if moves >= max_moves:
                    stop = pb.STOP_REASON_MOVE_LIMIT
                    break
                if not context.is_active():
                    raise ServiceError(
                        grpc.StatusCode.CANCELLED, "the call was cancelled", reason="cancelled"
                    )
                remaining = context.time_remaining()
                if remaining is not None and moves > 0 and remaining < 2 * margin + 0.05:
                    stop = pb.STOP_REASON_DEADLINE
                    break
                if moves > 0 and limit - time.monotonic() < 2 * margin + 0.05:
                    stop = pb.STOP_REASON_TIME_LIMIT
                    break
                seed = (plan.seed + moves) & 0xFFFFFFFFFFFFFFFF
                try:
                    action, diag = self._search(state, plan, context, seed, ticket, limit=limit)
                except ServiceError as exc:
                    if exc.code != grpc.StatusCode.DEADLINE_EXCEEDED or moves == 0:
                        raise
                    stop = pb.STOP_REASON_DEADLINE  # keep the moves already made
                    break
                private = request.trusted_backend or viewer == current
                hidden = not private and state.public_action(action) == SECRET_ACTION
                events = self._apply(state, action)
                turn = resp.turns.add(player=current)
                turn.action.CopyFrom(convert.SECRET if hidden else self.actions.get(game, action))
                turn.diagnostics.CopyFrom(
                    convert.diagnostics_message(game, self.actions, diag, plan.label, seed, private=private)
                )
                convert.add_events(turn.events, events, viewer)
                moves += 1
        resp.state = self._seal(state)
        convert.fill_status(resp.status, state)
        resp.stop_reason = stop
        if request.include_view:
            resp.view.CopyFrom(convert.view_message(state, viewer))
        return resp

    def DecodeState(
        self, request: pb.DecodeStateRequest, context: grpc.ServicerContext
    ) -> pb.DecodeStateResponse:
        if not self.config.trusted_decode:
            raise ServiceError(
                grpc.StatusCode.PERMISSION_DENIED,
                "DecodeState is disabled on this server "
                "(start it with --trusted-decode / HEKA_TRUSTED_DECODE=1)",
                reason="decode_disabled",
            )
        opened = self.keys.open(request.state)
        state = self._game_of(opened.serialized).deserialize_state(opened.serialized)
        return pb.DecodeStateResponse(
            game=state.game.descriptor.name,
            serialized=opened.serialized,
            text=state.to_text(),
            key_id=opened.key_id,
            encrypted=opened.encrypted,
            token_version=opened.version,
        )


class _NullSlot:
    """No slot (random bots run inline)."""

    def __enter__(self) -> Ticket | None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class _Slot:
    """One admitted search slot, or RESOURCE_EXHAUSTED at once. While held, the call's end
    (a client that cancels or disconnects) cancels its search."""

    def __init__(self, pool: SearchPool, context: grpc.ServicerContext) -> None:
        self._pool = pool
        self._context = context
        self._cm = pool.admit()

    def __enter__(self) -> Ticket | None:
        try:
            ticket = self._cm.__enter__()
        except CapacityFull as exc:
            metrics.SEARCHES_REJECTED.labels("capacity").inc()
            raise resource_exhausted(str(exc), "capacity") from None
        metrics.SEARCHES_IN_FLIGHT.inc()
        if not self._context.add_callback(lambda: self._pool.cancel(ticket)):
            self._pool.cancel(ticket)  # the call has already ended
        return ticket

    def __exit__(self, *exc: Any) -> None:
        metrics.SEARCHES_IN_FLIGHT.dec()
        self._cm.__exit__(*exc)
