"""``heka.v1.GameService``: open the token, validate, call the engine or a bot, convert back.

Methods raise :class:`service.errors.ServiceError` or let engine errors propagate; the
interceptor (:mod:`service.interceptors`) maps them to statuses in one place. The server
keeps no game: every state comes from the request's token (opened once per call) and leaves
in a new one. The bot loop and bot settings are plain functions in :mod:`service.bots`.

Every response that carries game content is addressed to the request's ``viewer`` and holds
nothing that seat may not see (docs/security.md).
"""

from __future__ import annotations

import contextlib
import functools
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import grpc

import engine
from engine.core import SECRET_ACTION, ActionParseError, Game, IllegalActionError, State
from engine.registry import get_game, list_games
from service import bots, convert, metrics, review
from service.bots import BotPlan, PlayedTurn
from service.config import Config
from service.envelope import VERSION as ENVELOPE_VERSION
from service.envelope import KeyRing
from service.errors import (
    ServiceError,
    failed_precondition,
    invalid,
    resource_exhausted,
    response_too_large,
    to_service_error,
)
from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.statecache import StateCache
from service.workers import Cancelled, Entry, Refused, SearchJob, SearchPool, Ticket

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GameService"].full_name


def _field(message: Any, name: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[name].number)


_APPLY_ACTION_FIELD = _field(pb.ApplyActionResponse, "action")
_SECRET_ACTION_BYTES = convert.field_bytes(_APPLY_ACTION_FIELD, convert.SECRET.SerializeToString())


def _secret_decision(state: State) -> bool:
    """Whether the seat to act decides in secret (Aton's exchange and arrangement, A3.2-A3.3):
    the other seats see its action as SECRET_ACTION."""
    legal = state.legal_actions()
    return bool(legal) and state.public_action(legal[0]) == SECRET_ACTION


_APPLY_EVENTS_FIELD = _field(pb.ApplyActionResponse, "events")
_LISTED_ACTIONS_FIELD = _field(pb.ListLegalActionsResponse, "actions")
_STOP_REASON = pb.StopReason.DESCRIPTOR

#: The previous release's state versions, by game (``previous_state_versions``): that
#: release reads these, so tokens stay readable across a rolling upgrade or a rollback. They
#: need the previous release's generator (SplitMix64), which games created in that mode get
#: (``StateKey.game_rng``).
PREVIOUS_STATE_VERSIONS: dict[str, int] = {"aton": 1, "osirium": 2}


_R = TypeVar("_R")
GameServiceT = TypeVar("GameServiceT", bound="GameService")
_Q = TypeVar("_Q")


def _unary(
    method: Callable[[GameServiceT, _Q, Any], _R],
) -> Callable[[GameServiceT, _Q, Any], _R]:
    """A unary RPC whose response is checked against ``HEKA_MAX_MESSAGE_BYTES`` before it is
    sent (:func:`service.errors.response_too_large`), and whose game counters count only when
    it answers (:func:`service.metrics.committed`)."""

    @functools.wraps(method)
    def call(self: GameServiceT, request: _Q, context: Any) -> _R:
        with metrics.committed():
            response = method(self, request, context)
            _check_size(response, self.config.max_message_bytes)
            return response

    return call


def _sized(stream: Iterator[_R], limit: int) -> Iterator[_R]:
    """``stream``'s messages, each checked against ``limit`` as it is sent: one over it ends
    the stream with :func:`service.errors.response_too_large`."""
    try:
        for message in stream:
            _check_size(message, limit)
            yield message
    finally:  # closed early (cancelled, or a message too large): the review stops its searches
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def _check_size(message: Any, limit: int) -> None:
    size = message.ByteSize()
    if size > limit:
        raise response_too_large(size, limit)


def _legal_hint(state: State, viewer: int | None) -> str:
    """How to find the legal actions; their number only for the seat to act itself (it
    depends on that seat's private cards)."""
    current = state.current_player()
    if viewer != current:
        return f"seat {current} must decide; ListLegalActions with viewer={current} lists its actions"
    n = len(state.legal_actions())
    plural = "s" if n != 1 else ""
    return f"{n} legal action{plural} for seat {current}; ListLegalActions lists them"


class GameService(pb_grpc.GameServiceServicer):
    def __init__(self, config: Config, keys: KeyRing, searches: SearchPool) -> None:
        self.config = config
        self.keys = keys
        self.searches = searches
        self.actions = convert.ActionCache()
        self.states = StateCache(config.state_cache_size)
        self._previous_versions = PREVIOUS_STATE_VERSIONS if config.previous_state_versions else {}
        self._games_response = pb.ListGamesResponse(
            games=[convert.game_info(g) for g in list_games()], build=engine.build()
        )

    # ------------------------------------------------------------------------------------
    # Tokens
    # ------------------------------------------------------------------------------------

    def _open(self, token: str, expected_game: str = "", *, mutable: bool = False) -> State:
        """The state in ``token`` (verified). Shared with the state cache unless ``mutable``:
        callers that change the state get their own copy."""
        return self._open_with_text(token, expected_game, mutable=mutable)[0]

    def _open_with_text(
        self, token: str, expected_game: str = "", *, mutable: bool = False
    ) -> tuple[State, str]:
        """The state in ``token`` (verified, decoded once per call) and its text, which a
        search worker can take as it is. A token decoded here is cached either way, so that
        the next call with it (from any client reaching this process) skips the decoding."""
        entry = self.states.get(token)
        shared = entry is not None
        if entry is None:
            opened = self.keys.open(token)
            # A token of this envelope version sealed with the signing key was sealed by a
            # server holding it (its tag proves it), so a state text of the current version in
            # it is one this release wrote: parsed strictly, its invariants not checked again
            # (the per-call budget). Earlier envelope or state versions, and tokens of any
            # other key of the ring, are checked in full: a key on its way out may be one that
            # leaked, and a state forged with it must not be re-sealed with the new key
            # (docs/operations.md, "Key rotation").
            current = opened.version == ENVELOPE_VERSION and opened.key_id == self.keys.signing.key_id
            game = self._game_of(opened.serialized)
            state = game.deserialize_state(opened.serialized, validate=not current)
            entry = (state, opened.serialized)
            self.states.put(token, state, opened.serialized)  # a no-op when the cache is off
            shared = self.states.size > 0
        state, text = entry
        if mutable and shared:
            state = state.clone()
        if expected_game:
            self._check_game(state, expected_game)
        return state, text

    @staticmethod
    def _game_of(serialized: str) -> Game:
        try:
            return get_game(serialized.partition(":")[0])
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
        version = self._previous_versions.get(state.game.descriptor.name)
        try:
            text = state.game.serialize_state(state, version=version)
        except ValueError:
            # A game created without HEKA_PREVIOUS_STATE_VERSIONS carries this release's
            # generator, which the previous state version cannot hold. Such a token exists
            # only once no pod of the previous release creates games (the upgrade's second
            # step, or its rollback): every pod left reads this release's version.
            if version is None:
                raise
            text = state.game.serialize_state(state)
        token = self.keys.seal(text)
        self.states.put(token, state, text)
        return token

    # ------------------------------------------------------------------------------------
    # Seats
    # ------------------------------------------------------------------------------------

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

    def _optional_seat(self, state: State, request: Any, field: str) -> int | None:
        if not request.HasField(field):
            return None
        return self._seat(state, getattr(request, field), field)

    @staticmethod
    def _to_act(state: State, player: int | None, field: str = "player") -> int:
        """The seat to act; FAILED_PRECONDITION when over or when ``player`` is not it."""
        current = state.current_player()
        if current < 0:
            outcome = state.outcome()
            result = f": {outcome.text}" if outcome is not None else ""
            raise failed_precondition(f"the game is over{result}", "game_over")
        if player is not None and player != current:
            raise failed_precondition(
                f"{field} {player} is not to act: seat {current} must decide ({state.decision()})",
                "not_to_act",
                {"current_player": str(current), "decision": state.decision()},
            )
        return current

    # ------------------------------------------------------------------------------------
    # Responses
    # ------------------------------------------------------------------------------------

    def _finish(
        self, resp: Any, state: State, request: Any, viewer: int | None, *, seal: bool = True
    ) -> None:
        """The common tail of a response: the new token, the status, and what the request
        asked for: the viewer's view, and its legal actions when it is to act."""
        if seal:
            resp.state = self._seal(state)
        convert.fill_status(resp.status, state)
        if request.include_view:
            resp.view.CopyFrom(convert.view_message(state, viewer))
        self._add_legal_actions(resp, state, request, viewer)

    def _add_legal_actions(self, resp: Any, state: State, request: Any, viewer: int | None) -> None:
        if request.include_legal_actions and viewer is not None and viewer == state.current_player():
            resp.MergeFromString(
                self.actions.encoded_list(
                    state.game,
                    state.legal_actions(),
                    _field(resp, "legal_actions"),
                    compact=request.compact_actions,
                )
            )

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
            if viewer == state.current_player():
                raise IllegalActionError(f"{exc} ({_legal_hint(state, viewer)})") from exc
            text = state.game.action_to_string(action)
            raise IllegalActionError(
                f"{state.game.descriptor.name}: {text} is not legal now ({_legal_hint(state, viewer)})"
            ) from exc
        name = state.game.descriptor.name
        metrics.count(metrics.ACTIONS_APPLIED, name)
        if state.is_terminal():
            outcome = state.outcome()
            metrics.count(
                metrics.GAMES_FINISHED, name, convert.outcome_label(outcome) if outcome else "unknown"
            )
        return events

    # ------------------------------------------------------------------------------------
    # Bots
    # ------------------------------------------------------------------------------------

    def _search_deadline(self, context: Any, limit: float | None = None) -> tuple[float, float | None]:
        """(deadline for the search, absolute call deadline or None), both monotonic. ``limit``
        is the server's own end for the whole call (the bot loop's total time cap)."""
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
        context: Any,
        seed: int,
        ticket: Ticket | None,
        *,
        limit: float | None = None,
        text: str | None = None,
    ) -> tuple[int, Any]:
        """Run one search; returns (action, diagnostics). A worker job carries the state's
        text: ``text`` when the caller has it (the token's, already verified here), else
        the state is encoded once; the worker decodes it without checking it again."""
        game_name = state.game.descriptor.name
        deadline, call_deadline = self._search_deadline(context, limit)
        # The published seed is not what the search runs with: that is keyed with the
        # server's secret and the bot's own view (bots.search_seed), so that a viewer
        # cannot re-run the decision offline on the worlds its own view allows.
        seed = bots.search_seed(self.keys.signing, state, seed)
        spec = plan.spec
        if spec.startswith("mcts:") and _secret_decision(state):
            # Its iterations and time reach the other seats: the whole budget, whatever the
            # hand (ai.mcts_params.MctsParams.conceal).
            spec += ",conceal=on"
        if plan.inline:
            from ai.api import make_bot

            start = time.monotonic()
            decision = make_bot(spec).choose(state, seed=seed, deadline=deadline)
            d = decision.diagnostics
            metrics.record_search(
                game_name, plan.metric_label, d.iterations, time.monotonic() - start, d.belief_fallbacks
            )
            return decision.action, decision.diagnostics
        job = SearchJob(
            game=game_name,
            serialized=text if text is not None else state.serialize(),
            spec=spec,
            label=plan.metric_label,
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
            result = self.searches.run(job, timeout=wait, ticket=ticket)
        except FutureTimeout:
            raise ServiceError(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                "the search did not finish before the call's deadline",
                reason="deadline",
            ) from None
        return result.action, result.diagnostics

    def _call_deadline(self, context: Any) -> float | None:
        """The call's deadline, ``time.monotonic()`` based (None: none)."""
        remaining = context.time_remaining()
        if remaining is None or remaining > 1e8:
            return None
        return time.monotonic() + float(remaining)

    def enter_queue(self, context: Any, *, review: bool = False) -> Entry:
        """The call's place in the search queue, taken on arrival, before its token is
        opened: a call the queue cannot serve in time is refused here, at the cost of a few
        comparisons (RESOURCE_EXHAUSTED with a retry hint; UNAVAILABLE when draining).
        ``review``: a ReviewGame call's first search (counted as a refused review)."""
        try:
            return self.searches.enter(self._call_deadline(context))
        except Refused as exc:
            raise self._refusal(exc, review=review) from None

    @staticmethod
    def _refusal(exc: Refused, *, review: bool = False) -> ServiceError:
        counter = metrics.REVIEWS_REFUSED if review else metrics.SEARCHES_REJECTED
        metrics.child(counter, exc.reason).inc()
        if exc.reason == "draining":
            return ServiceError(
                grpc.StatusCode.UNAVAILABLE, str(exc), reason="draining", retry_after=exc.retry_after
            )
        return resource_exhausted(str(exc), exc.reason, retry_after=exc.retry_after)

    @contextlib.contextmanager
    def _slot(self, plans: Mapping[int, BotPlan] | list[BotPlan], context: Any) -> Iterator[Ticket | None]:
        """One search slot for the call (none when every bot runs inline), after its wait in
        the queue (the place it took on arrival, ``context.search_entry``, else one taken
        now); refused when the wait ends without one. The call's end (a client that cancels
        or disconnects) takes a waiting call out of the queue and cancels a running search."""
        values = plans.values() if isinstance(plans, Mapping) else plans
        entry: Entry | None = getattr(context, "search_entry", None)
        pool = self.searches
        if all(p.inline for p in values):
            if entry is not None:
                pool.queue.finish(entry)
            yield None
            return
        if entry is None:
            entry = self.enter_queue(context)
        if not context.add_callback(lambda: pool.cancel_call(entry)):
            pool.cancel_call(entry)  # the call has already ended
        try:
            with pool.admit(entry) as ticket:
                metrics.SEARCHES_IN_FLIGHT.inc()
                try:
                    yield ticket
                finally:
                    metrics.SEARCHES_IN_FLIGHT.dec()
        except Refused as exc:
            raise self._refusal(exc) from None
        except Cancelled as exc:
            raise ServiceError(grpc.StatusCode.CANCELLED, str(exc), reason="cancelled") from None

    def _play_bots(
        self, state: State, plans: Mapping[int, BotPlan], moves: int, context: Any, text: str | None = None
    ) -> tuple[list[PlayedTurn], Any]:
        """The bot seats of ``plans`` play (``service.bots.play_bots``), holding one search
        slot for the whole call, within the server's cap on its total time. ``text``: the
        state's text as it is now (the token's), for the first search."""
        limit = time.monotonic() + self.config.max_advance_seconds
        first = state.move_number()
        # A slot only when a bot is to act: a player's move after which that player (or
        # another person) acts again waits for no search (the call leaves the queue at once).
        acts = moves > 0 and not state.is_terminal() and state.current_player() in plans
        with self._slot(plans if acts else [], context) as ticket:

            def choose(s: State, plan: BotPlan, seed: int, end: float) -> tuple[int, Any]:
                current_text = text if s.move_number() == first else None
                return self._search(s, plan, context, seed, ticket, limit=end, text=current_text)

            turns, stop = bots.play_bots(
                state,
                plans,
                moves=moves,
                choose=choose,
                apply=self._apply,
                limit=limit,
                margin=self.config.deadline_margin_ms / 1000.0,
                time_left=context.time_remaining,
                # The asyncio context of an inline call (random bots only) has no is_active:
                # such a loop runs to its end at once.
                is_active=getattr(context, "is_active", lambda: True),
            )
        return turns, convert.enum_value(_STOP_REASON, stop)

    def _bot_turns(
        self, target: Any, game: Game, turns: list[PlayedTurn], viewer: int | None, request: Any
    ) -> None:
        """``BotTurn`` messages for ``viewer``: another seat's secret decision as id -1, and
        another seat's diagnostics as their totals, unless ``request.trusted_backend``; their
        actions with id and text only with ``request.compact_actions``."""
        name = game.descriptor.name
        trusted, compact = request.trusted_backend, request.compact_actions
        for t in turns:
            private = trusted or viewer == t.player
            msg = target.add(player=t.player)
            msg.action.CopyFrom(
                convert.SECRET
                if t.secret and not private
                else self.actions.get(game, t.action, compact=compact)
            )
            msg.diagnostics.CopyFrom(
                convert.diagnostics_message(
                    game,
                    self.actions,
                    t.diagnostics,
                    t.plan.label,
                    t.seed,
                    private=private,
                    top_k=t.plan.top_k,
                    compact=compact,
                )
            )
            convert.add_events(msg.events, name, t.events, viewer)

    def _checked_bots(self, state: State, request: Any) -> tuple[dict[int, BotPlan], int]:
        """The bots of a CreateGame or ApplyAction request and their move cap, checked before
        the call changes anything (``max_bot_moves`` even without bots: a bad value is
        refused, never passed over)."""
        moves = bots.max_moves(request.max_bot_moves, self.config)
        plans = bots.bot_plans(request.bots, state, self.config) if request.bots else {}
        return plans, moves

    def _with_bots(
        self,
        resp: Any,
        state: State,
        request: Any,
        viewer: int | None,
        context: Any,
        *,
        checked: tuple[dict[int, BotPlan], int],
    ) -> None:
        """The bots of a CreateGame or ApplyAction request (``checked``: :meth:`_checked_bots`)
        play after it (nothing without ``bots``); their turns and stop reason go into ``resp``."""
        plans, moves = checked
        if not plans:
            return
        turns, stop = self._play_bots(state, plans, moves, context)
        self._bot_turns(resp.bot_turns, state.game, turns, viewer, request)
        resp.stop_reason = stop

    # ------------------------------------------------------------------------------------
    # RPCs
    # ------------------------------------------------------------------------------------

    @_unary
    def ListGames(self, request: pb.ListGamesRequest, context: grpc.ServicerContext) -> pb.ListGamesResponse:
        return self._games_response

    @_unary
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
        try:
            options = convert.options_from_message(request.options, game.descriptor)
        except convert.OptionsError as exc:
            raise invalid("options", str(exc), "bad_options") from None
        seed = request.seed if request.HasField("seed") else secrets.randbits(64)
        chance = self.keys.signing.game_rng(
            game.descriptor.name, seed, previous_versions=bool(self._previous_versions)
        )
        state = game.new_initial_state(request.num_players or None, seed=seed, options=options, rng=chance)
        viewer = self._optional_seat(state, request, "viewer")
        checked = self._checked_bots(state, request)
        metrics.count(metrics.GAMES_CREATED, game.descriptor.name)
        # The seed deals the same hands again on any server with these keys: it goes only
        # to a trusted backend, which does not forward the response to players.
        resp = pb.CreateGameResponse(seed=seed if request.trusted_backend else 0)
        self._with_bots(resp, state, request, viewer, context, checked=checked)
        self._finish(resp, state, request, viewer)
        return resp

    @_unary
    def GetView(self, request: pb.GetViewRequest, context: grpc.ServicerContext) -> pb.GetViewResponse:
        state = self._open(request.state, request.game)
        viewer = self._optional_seat(state, request, "viewer")
        resp = pb.GetViewResponse(view=convert.view_message(state, viewer))
        self._add_legal_actions(resp, state, request, viewer)
        return resp

    @_unary
    def ListLegalActions(
        self, request: pb.ListLegalActionsRequest, context: grpc.ServicerContext
    ) -> pb.ListLegalActionsResponse:
        state = self._open(request.state, request.game)
        viewer = self._optional_seat(state, request, "viewer")
        current = self._to_act(state, viewer, "viewer")
        if viewer is None:
            # The legal actions name the seat's private cards (its hand, its arrangements):
            # a response that may be forwarded to anyone never carries them.
            raise invalid(
                "viewer",
                f"viewer is required: the legal actions are private to the seat to act (seat {current}); "
                f"pass viewer={current}",
                "viewer_required",
                {"current_player": str(current)},
            )
        resp = pb.ListLegalActionsResponse(
            current_player=current, decision=convert.decision_value(state.decision())
        )
        resp.MergeFromString(
            self.actions.encoded_list(
                state.game, state.legal_actions(), _LISTED_ACTIONS_FIELD, compact=request.compact_actions
            )
        )
        return resp

    @_unary
    def ApplyAction(
        self, request: pb.ApplyActionRequest, context: grpc.ServicerContext
    ) -> pb.ApplyActionResponse:
        state = self._open(request.state, request.game, mutable=True)
        viewer = self._optional_seat(state, request, "viewer")
        player = self._optional_seat(state, request, "player")
        actor = self._to_act(state, player)
        if player is None:
            # The backend's safeguard: it sets the seat of whoever sent the move, so that a
            # player cannot move for another seat (nor probe another seat's hand by trying
            # actions and reading which are legal). Required, as ListLegalActions' viewer.
            raise invalid(
                "player",
                f"player is required: the seat making this move (seat {actor} is to act); set it "
                "to the seat of whoever sent the move, never to a seat the player chose",
                "player_required",
                {"current_player": str(actor)},
            )
        game = state.game
        which = request.WhichOneof("action")
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
        checked = self._checked_bots(state, request)  # before anything is applied
        secret = viewer != actor and state.public_action(action) == SECRET_ACTION
        events = self._apply(state, action, viewer)
        resp = pb.ApplyActionResponse()
        resp.MergeFromString(
            (
                _SECRET_ACTION_BYTES
                if secret
                else self.actions.encoded(game, action, _APPLY_ACTION_FIELD, compact=request.compact_actions)
            )
            + convert.encoded_events(game.descriptor.name, events, viewer, _APPLY_EVENTS_FIELD)
        )
        self._with_bots(resp, state, request, viewer, context, checked=checked)
        self._finish(resp, state, request, viewer)
        return resp

    @_unary
    def BotMove(self, request: pb.BotMoveRequest, context: grpc.ServicerContext) -> pb.BotMoveResponse:
        state, text = self._open_with_text(request.state, request.game, mutable=request.apply)
        viewer = self._optional_seat(state, request, "viewer")
        actor = self._to_act(state, self._optional_seat(state, request, "player"))
        private = request.trusted_backend or viewer == actor
        if not request.apply and not private:
            # A move that is not played is a suggestion for the seat to act: it names that
            # seat's private cards (an amulet it holds, its arrangement) before anyone sees them.
            raise invalid(
                "viewer",
                f"a bot move that is not applied is private to the seat to act: pass viewer={actor} "
                "(or apply=true, or trusted_backend=true from a backend that does not forward it)",
                "private_move",
                {"current_player": str(actor)},
            )
        plan = bots.state_bot_plan(request.bot, "bot", self.config, state)
        with self._slot([plan], context) as ticket:
            action, diag = self._search(state, plan, context, plan.seed, ticket, text=text)
        game = state.game
        secret = not private and state.public_action(action) == SECRET_ACTION
        resp = pb.BotMoveResponse(
            action=convert.SECRET
            if secret
            else self.actions.get(game, action, compact=request.compact_actions),
            diagnostics=convert.diagnostics_message(
                game,
                self.actions,
                diag,
                plan.label,
                plan.seed,
                private=private,
                top_k=plan.top_k,
                compact=request.compact_actions,
            ),
        )
        if request.apply:
            events = self._apply(state, action)
            convert.add_events(resp.events, game.descriptor.name, events, viewer)
        self._finish(resp, state, request, viewer, seal=request.apply)
        return resp

    @_unary
    def AdvanceBots(
        self, request: pb.AdvanceBotsRequest, context: grpc.ServicerContext
    ) -> pb.AdvanceBotsResponse:
        state, text = self._open_with_text(request.state, request.game, mutable=True)
        viewer = self._optional_seat(state, request, "viewer")
        plans = bots.bot_plans(request.bots, state, self.config)
        if not plans:
            raise invalid("bots", "name at least one bot seat", "bad_request")
        moves = bots.max_moves(request.max_bot_moves, self.config)
        self._to_act(state, None)
        turns, stop = self._play_bots(state, plans, moves, context, text)
        resp = pb.AdvanceBotsResponse(stop_reason=stop)
        self._bot_turns(resp.bot_turns, state.game, turns, viewer, request)
        self._finish(resp, state, request, viewer)
        return resp

    @_unary
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

    def ReviewGame(self, request: pb.ReviewGameRequest, context: Any) -> Iterator[pb.ReviewGameResponse]:
        """The review's stream (:mod:`service.review`): a generator, run on a thread of its
        own by the asyncio server (:mod:`service.asyncio_bridge`)."""
        start = self._open(request.state, request.game)
        viewer = self._optional_seat(start, request, "viewer")
        which = request.WhichOneof("seats")
        if which == "seat":
            seats = [self._seat(start, request.seat, "seat")]
        elif which == "all_seats" and request.all_seats:
            seats = list(range(start.num_players))
        else:
            raise invalid(
                "seat", "name the seat to review (seat) or every seat (all_seats=true)", "bad_request"
            )
        server = review.Server(self.config, self.keys, self.searches, self.actions)
        game = start.game.descriptor.name

        def checkpoint(token: str) -> State:
            try:
                return self._open(token, game)
            except Exception as error:
                exc = to_service_error(error)
                if exc.code != grpc.StatusCode.INVALID_ARGUMENT:
                    raise exc from None
                raise invalid("checkpoints", f"a checkpoint: {exc.message}", exc.reason) from None

        stream = review.review_game(
            server, start, request, context, viewer=viewer, seats=seats, open_token=checkpoint
        )
        return _sized(stream, self.config.max_message_bytes)
