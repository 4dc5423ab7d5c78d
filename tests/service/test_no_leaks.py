"""No leaks in any response (docs/security.md, "What a response reveals"): complete games
through the real server, every RPC, every bot kind, every viewer; no response tells a viewer
what its own view does not show.

Scripted clients play Aton, Osirium with 2 players and Osirium with 4 players in teams to
the end: seat 0 through ListLegalActions and ApplyAction, the other seats through BotMove
(applied) and AdvanceBots, with random, greedy and MCTS bots. Each response is addressed to a
viewer (every seat and the public, in rotation). The test holds the server's key, so it can
open every token (the omniscient oracle) and seal states of its own. Three checks:

1. **Indistinguishability** (everything about the current state): the same request on a
   *twin* token, a state that the viewer cannot tell from the real one (every card hidden
   from it re-dealt: ``sample_consistent_state``), must get the same answer: GetView, the
   legal actions, a bot's suggestion for its own seat (bots decide from their view), and
   the errors of illegal, unknown and misdirected actions. A response that depends on a
   hidden card differs between the twins.
2. **Projection** (what an action revealed): every ApplyAction (alone, and with the bots
   playing inside it: one call per move), BotMove and AdvanceBots response addressed to a
   viewer equals what the rules let that viewer learn, computed here from the oracle: a
   secret move of another seat as id -1, only the events visible to the viewer, the totals
   of another seat's diagnostics, the viewer's own view after, and legal actions only when
   the viewer is the seat to act.
3. **Unique cards** (Osirium): no ritual or exaltation that the viewer's views before and
   after do not show is named anywhere in a response to it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import text_format
from service_helpers import KEY1

from engine.core import SECRET_ACTION, State
from engine.osirium.cards import EXALTATIONS, RITUALS
from engine.registry import get_game
from service import convert
from service.bots import search_seed
from service.envelope import KeyRing, parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb

ORACLE = KeyRing(parse_keys(KEY1))
ACTIONS = convert.ActionCache()

GAMES = [("aton", 2, {}), ("osirium", 2, {}), ("osirium", 4, {"teams": True})]
GAME_IDS = ["aton", "osirium-2p", "osirium-4p-teams"]

# Every bot is seeded: the same request on twin tokens, or from a viewer and from a trusted
# backend, makes the same choices.
RANDOM = pb.BotSettings(kind=pb.BOT_KIND_RANDOM, seed=3)
GREEDY = pb.BotSettings(kind=pb.BOT_KIND_GREEDY, seed=4)


def mcts(seed: int) -> pb.BotSettings:
    return pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=12), seed=seed)


# ---------------------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------------------


def open_state(token: str) -> State:
    text = ORACLE.open(token).serialized
    return get_game(text.split(":", 1)[0]).deserialize_state(text)


def seal(state: State) -> str:
    return ORACLE.seal(state.serialize())


def twin(state: State, viewer: int | None, rng: random.Random) -> State:
    """A state ``viewer`` cannot tell from ``state``: everything hidden from it re-dealt (for
    the public, every seat's private cards in turn)."""
    seats = range(state.num_players) if viewer is None else (viewer,)
    out = state
    for seat in seats:
        out = out.sample_consistent_state(seat, rng)
    assert out.view(viewer) == state.view(viewer)
    return out


def viewers(n: int) -> list[int | None]:
    return [*range(n), None]


def bare(message: Any) -> Any:
    """A copy without what may differ for reasons other than hidden cards: the token (a
    fresh salt every time) and the search's timing."""
    out = type(message)()
    out.CopyFrom(message)
    if hasattr(out, "state") and isinstance(out.state, str):
        out.ClearField("state")
    for diag in _diagnostics(out):
        diag.ClearField("elapsed_seconds")
        diag.ClearField("iterations_per_second")
    return out


def _diagnostics(message: Any) -> Iterator[Any]:
    if isinstance(message, pb.BotMoveResponse):
        yield message.diagnostics
    if isinstance(message, (pb.AdvanceBotsResponse, pb.ApplyActionResponse, pb.CreateGameResponse)):
        for turn in message.bot_turns:
            yield turn.diagnostics


def error_of(call: Any, request: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call(request, timeout=30)
    return info.value.code(), info.value.details()


# ---------------------------------------------------------------------------------------
# 1. Indistinguishability
# ---------------------------------------------------------------------------------------


def check_twins(stub: Any, state: State, rng: random.Random, step: int) -> None:
    current = state.current_player()
    n = state.num_players
    token = seal(state)
    game = state.game
    for viewer in viewers(n):
        other = seal(twin(state, viewer, rng))
        pair = (token, other)
        views = [
            stub.GetView(pb.GetViewRequest(state=t, viewer=viewer, include_legal_actions=True)) for t in pair
        ]
        assert views[0] == views[1], f"GetView for {viewer} depends on hidden cards"
        assert bool(views[0].legal_actions) == (viewer == current)
        # An action id legal for nobody in either twin, and one legal in neither for the
        # seat to act: the errors must not depend on what the viewer cannot see.
        legal = set(state.legal_actions())
        illegal = next(a for a in range(game.descriptor.num_distinct_actions) if a not in legal)
        bad_requests: list[dict[str, Any]] = [
            {"action_id": 10**6},
            {"action_text": "fly to the moon"},
            {"action_id": 0, "player": (current + 1) % n},
        ]
        if viewer != current and illegal not in open_state(other).legal_actions():
            bad_requests.append({"action_id": illegal})
        for fields in bad_requests:
            requests = [
                pb.ApplyActionRequest(state=t, viewer=viewer, **{"player": current, **fields}) for t in pair
            ]
            errors = [error_of(stub.ApplyAction, r) for r in requests]
            assert errors[0] == errors[1], f"an error to {viewer} depends on hidden cards: {errors}"
        if viewer != current:
            continue
        listed = [stub.ListLegalActions(pb.ListLegalActionsRequest(state=t, viewer=viewer)) for t in pair]
        assert listed[0] == listed[1], "the legal actions depend on another seat's cards"
        # A bot's suggestion for its own seat is a function of that seat's view (no peeking).
        bot = (RANDOM, GREEDY, mcts(step))[step % 3]
        moves = [bare(stub.BotMove(pb.BotMoveRequest(state=t, bot=bot, viewer=viewer))) for t in pair]
        assert moves[0] == moves[1], f"a {bot.kind} bot peeked at cards its seat cannot see"


# ---------------------------------------------------------------------------------------
# 2. Projection
# ---------------------------------------------------------------------------------------


def expected_turn(state: State, action: int, viewer: int | None) -> tuple[pb.Action, list[pb.Event]]:
    """What ``viewer`` may learn of ``action`` (applied to ``state`` here, the oracle)."""
    actor = state.current_player()
    secret = viewer != actor and state.public_action(action) == SECRET_ACTION
    shown = convert.SECRET if secret else ACTIONS.get(state.game, action)
    events = state.apply_action(action)
    out: list[pb.Event] = []
    holder = pb.ApplyActionResponse()
    convert.add_events(holder.events, state.game.descriptor.name, events, viewer)
    out.extend(holder.events)
    return shown, out


def all_bots(players: int, step: int) -> list[pb.BotSeat]:
    """Every seat but 0 a bot, the kinds rotating with the step."""
    return [
        pb.BotSeat(seat=s, bot=(RANDOM, GREEDY, mcts(step + s))[(step + s) % 3]) for s in range(1, players)
    ]


def check_bot_turns(got_turns: Any, real_turns: Any, after: State, viewer: int | None) -> None:
    """The bot turns of a response to ``viewer`` against a trusted backend's run of the same
    request; ``after`` (the oracle) follows the real moves."""
    assert len(got_turns) == len(real_turns)
    for got, real in zip(got_turns, real_turns, strict=True):
        assert got.player == real.player == after.current_player()
        shown, events = expected_turn(after, real.action.id, viewer)
        assert got.action == shown and list(got.events) == events
        check_diagnostics(got.diagnostics, viewer == real.player)


def check_legal_actions(resp: Any, after: State, viewer: int | None) -> None:
    """Legal actions come only to the seat to act, and are its own."""
    if viewer is not None and viewer == after.current_player():
        assert [a.id for a in resp.legal_actions] == after.legal_actions()
    else:
        assert not resp.legal_actions, "legal actions reached a viewer that is not to act"


def check_diagnostics(diag: pb.SearchDiagnostics, private: bool) -> None:
    if private:
        return
    assert not diag.actions and not diag.principal_variation and diag.chosen_value == 0, (
        "another seat's root statistics reached the viewer"
    )
    assert diag.root_actions == 0 and diag.root_visits == 0


# ---------------------------------------------------------------------------------------
# 3. Unique cards (Osirium)
# ---------------------------------------------------------------------------------------


def _name_pattern(name: str) -> re.Pattern[str]:
    # "Four winds I" must not match "Four winds II", nor "Great rite" a ritual "Great rite of ...".
    return re.compile(r"(?<![\w])" + re.escape(name) + r"(?![\w]| of )")


RITUAL_NAMES = [(r.id, _name_pattern(r.name)) for r in RITUALS]
EXALTATION_NAMES = [(e.id, _name_pattern(e.name)) for e in EXALTATIONS]


def shown_cards(state: State, viewer: int | None) -> tuple[set[int], set[int]]:
    view: Any = state.view(viewer)
    rituals = {r for row in view.rituals for r in row if r >= 0}
    rituals |= {r for row in view.completed for r, _ in row}
    return rituals, {x for x in view.exaltations if x >= 0}


def check_unique_cards(response: Any, before: State, after: State, viewer: int | None) -> None:
    if before.game.descriptor.name != "osirium":
        return
    r1, x1 = shown_cards(before, viewer)
    r2, x2 = shown_cards(after, viewer)
    text = text_format.MessageToString(bare(response), as_utf8=True)
    for rid, pattern in RITUAL_NAMES:
        if rid not in r1 | r2:
            assert not pattern.search(text), f"ritual {rid} hidden from {viewer} named in a response"
    for xid, pattern in EXALTATION_NAMES:
        if xid not in x1 | x2:
            assert not pattern.search(text), f"exaltation {xid} hidden from {viewer} named in a response"


# ---------------------------------------------------------------------------------------
# The games
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("game", "players", "options"), GAMES, ids=GAME_IDS)
def test_no_response_tells_a_viewer_what_its_view_does_not_show(
    stub: Any, game: str, players: int, options: dict[str, Any]
) -> None:
    rng = random.Random(12)
    request = pb.CreateGameRequest(game=game, num_players=players, seed=1200 + players)
    if options.get("teams"):
        request.options.osirium.teams = True
    created = stub.CreateGame(request)
    token = created.state
    state = open_state(token)
    audience = viewers(players)
    calls = {"ApplyAction": 0, "ApplyAction with bots": 0, "BotMove": 0, "AdvanceBots": 0}
    step = 0
    while not state.is_terminal():
        step += 1
        viewer = audience[step % len(audience)]
        if step % 7 == 1:
            check_twins(stub, state, rng, step)
        actor = state.current_player()
        if actor == 0:  # a "human" seat: list, then apply, with the response for `viewer`
            legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0))
            action = rng.choice(list(legal.actions)).id
            request = pb.ApplyActionRequest(
                state=token,
                action_id=action,
                player=0,
                viewer=viewer,
                include_view=True,
                include_legal_actions=True,
            )
            riding = step % 3 == 0  # the other seats' bots play inside the call (one call per move)
            if riding:
                request.bots.extend(all_bots(players, step))
                request.max_bot_moves = 6
                trusted_request = pb.ApplyActionRequest()
                trusted_request.CopyFrom(request)
                trusted_request.trusted_backend = True
                trusted = stub.ApplyAction(trusted_request)
            resp: Any = stub.ApplyAction(request)
            calls["ApplyAction with bots" if riding else "ApplyAction"] += 1
            after = state.clone()
            shown, events = expected_turn(after, action, viewer)
            assert resp.action == shown and list(resp.events) == events
            if riding:
                check_bot_turns(resp.bot_turns, trusted.bot_turns, after, viewer)
            assert resp.view == convert.view_message(after, viewer)
            check_legal_actions(resp, after, viewer)
        elif step % 2:  # BotMove, applied, with the response for `viewer`
            bot = (RANDOM, GREEDY, mcts(step))[step % 3]
            trusted = stub.BotMove(pb.BotMoveRequest(state=token, bot=bot, trusted_backend=True))
            resp = stub.BotMove(
                pb.BotMoveRequest(state=token, bot=bot, apply=True, viewer=viewer, include_view=True)
            )
            calls["BotMove"] += 1
            after = state.clone()
            shown, events = expected_turn(after, trusted.action.id, viewer)
            assert resp.action == shown and list(resp.events) == events
            check_diagnostics(resp.diagnostics, viewer == actor)
            assert resp.view == convert.view_message(after, viewer)
        else:  # AdvanceBots over every bot seat, compared with a trusted backend's run
            bots = all_bots(players, step)
            trusted = stub.AdvanceBots(
                pb.AdvanceBotsRequest(state=token, bots=bots, max_bot_moves=6, trusted_backend=True)
            )
            resp = stub.AdvanceBots(
                pb.AdvanceBotsRequest(
                    state=token,
                    bots=bots,
                    max_bot_moves=6,
                    viewer=viewer,
                    include_view=True,
                    include_legal_actions=True,
                )
            )
            calls["AdvanceBots"] += 1
            after = state.clone()
            check_bot_turns(resp.bot_turns, trusted.bot_turns, after, viewer)
            assert resp.view == convert.view_message(after, viewer)
            check_legal_actions(resp, after, viewer)
        assert resp.status == convert.status_message(after)
        check_unique_cards(resp, state, after, viewer)
        token, state = resp.state, open_state(resp.state)
        assert state.serialize() == after.serialize(), "the token is not the game the test followed"
    assert all(calls.values()), calls


# ---------------------------------------------------------------------------------------
# 4. Replays: no response lets a viewer re-run another seat's decision
# ---------------------------------------------------------------------------------------


def _replay(spec: str, state: State, seed: int, iterations: int | None) -> int:
    from ai.api import Budget, make_bot

    budget = None if iterations is None else Budget(iterations=iterations, milliseconds=30_000.0)
    return make_bot(spec).choose(state.clone(), seed=seed, budget=budget).action


def _forced_twin(state: State, seat: int) -> State | None:
    """Aton: ``state`` with ``seat``'s hand made four equal cards, swapped with cards of its own
    deck (the other seat sees the same): its arrangement is forced. None if its deck lacks them."""
    text = state.serialize()
    head, rest = text.split(f";p{seat}=", 1)
    fields, tail = rest.split(";", 1)
    f = fields.split(",")
    hand, deck = f[8], list(f[9])
    card = hand[0]
    for c in hand[1:]:
        if c != card:
            if card not in deck:
                return None
            deck[deck.index(card)] = c
    f[8], f[9] = card * 4, "".join(deck)
    return state.game.deserialize_state(f"{head};p{seat}={','.join(f)};{tail}", validate=True)


def test_a_secret_decision_tells_the_other_seats_nothing_by_its_search(stub: Any) -> None:
    """A bot's secret decision (Aton's exchange and arrangement, A3.2-A3.3) reaches the other
    seats as a secret action with its diagnostics' totals. With early stop, the iterations of
    an iteration budget showed how clear-cut the hidden choice was, and a forced arrangement
    (four equal cards) returned at once with 0 iterations: the same request on twin tokens,
    one with the hand forced, must get the same answer, the whole budget searched."""
    game = get_game("aton")
    rng = random.Random(5)
    budget = 320  # past early stop's first check (every 16 iterations)
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=budget), seed=9)
    forced = checked = 0
    for seed in range(4):
        state = game.new_initial_state(2, seed=seed)
        state.apply_action(0)  # seat 0 keeps: seat 1 decides its exchange, then both arrange
        if state.current_player() != 1:
            continue
        exchange = state.clone()
        state.apply_action(0)
        arrange_0 = state.clone()  # seat 0 arranges, then seat 1 in the same call
        state.apply_action(state.legal_actions()[0])
        for at in (exchange, arrange_0, state):
            twins = [at, *(twin(at, 0, rng) for _ in range(2))]
            hand = _forced_twin(at, 1)
            if hand is not None and at is not exchange:
                assert hand.view(0) == at.view(0)
                twins.append(hand)
                forced += at is state and len(hand.legal_actions()) == 1
            if at is arrange_0:
                turns = [
                    bare(
                        stub.ApplyAction(
                            pb.ApplyActionRequest(
                                state=seal(t),
                                action_id=at.legal_actions()[0],
                                player=0,
                                viewer=0,
                                bots=[pb.BotSeat(seat=1, bot=bot)],
                                max_bot_moves=1,
                            )
                        )
                    ).bot_turns[0]
                    for t in twins
                ]
            else:
                turns = [
                    bare(stub.BotMove(pb.BotMoveRequest(state=seal(t), bot=bot, apply=True, viewer=0)))
                    for t in twins
                ]
            # The decision itself: what follows it is what the rules reveal once it is carried
            # out (the arranged cards when both have arranged), checked by the projections.
            answers = [(turn.action, turn.diagnostics) for turn in turns]
            assert answers[0][0].id == SECRET_ACTION
            diagnostics = answers[0][1]
            for other in answers[1:]:
                assert other == answers[0], f"seed {seed}: a secret decision's answer depends on the hand"
            assert diagnostics.iterations == budget
            checked += 1
    assert checked >= 9 and forced >= 3


@pytest.mark.parametrize(
    ("bot", "spec", "iterations"),
    [
        (pb.BotSettings(kind=pb.BOT_KIND_RANDOM), "random", None),
        (pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=2)), "mcts:medium", 2),
    ],
    ids=["random", "mcts"],
)
def test_the_published_seed_does_not_rerun_the_bots_decision(
    stub: Any, bot: pb.BotSettings, spec: str, iterations: int | None
) -> None:
    """A bot is deterministic for its seed, state and budget, and the seed is public
    (``SearchDiagnostics.seed``). Were the search run with that seed, a viewer could re-run
    it offline on each world its own view allows and keep the worlds that give the move
    played: the bot's hand, bit by bit. The strongest such viewer knows the true world (the
    oracle's): replaying there with the published seed must reproduce the server's choices
    no more often than an unrelated run does, while the operator, holding the key, replays
    every one (``service.bots.search_seed``)."""
    rng = random.Random(17)
    created = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=2, seed=23))
    token, status = created.state, created.status
    decisions = offline = operator = 0
    while not status.is_over and decisions < 24:
        if status.current_player == 0:
            legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0)).actions
            applied = stub.ApplyAction(
                pb.ApplyActionRequest(state=token, action_id=rng.choice(list(legal)).id, player=0)
            )
            token, status = applied.state, applied.status
            continue
        before = open_state(token)
        if len(before.legal_actions()) < 3:  # a forced or near-forced choice tells nothing
            settings = pb.BotSettings(kind=pb.BOT_KIND_RANDOM, seed=decisions)
        else:
            settings = pb.BotSettings()
            settings.CopyFrom(bot)
            settings.seed = 1000 + decisions  # a caller's seed: the viewer may know it
        moved = stub.BotMove(pb.BotMoveRequest(state=token, bot=settings, apply=True, viewer=0))
        shown = stub.BotMove(pb.BotMoveRequest(state=token, bot=settings, apply=True, viewer=1))
        assert moved.diagnostics.seed == settings.seed  # the seed is public, to every viewer
        token, status = moved.state, moved.status
        if settings.kind != bot.kind:
            continue
        decisions += 1
        played = shown.action.id
        offline += _replay(spec, before, moved.diagnostics.seed, iterations) == played
        keyed = search_seed(ORACLE.signing, before, moved.diagnostics.seed)
        operator += _replay(spec, before, keyed, iterations) == played
    assert decisions >= 12
    # Chance agreement of two independent choices among 3 or more actions is at most 1/3.
    assert offline <= decisions // 2, f"{offline} of {decisions} decisions re-run from the published seed"
    assert operator == decisions  # under the server's key, every decision replays


def test_the_game_seed_goes_only_to_a_trusted_backend(stub: Any) -> None:
    """The seed of a game deals the same hands again on any server with the same keys: a
    response that a frontend may forward carries 0, a trusted backend's the seed."""
    forwarded = [
        stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=3, **extra))
        for extra in ({}, {"viewer": 1}, {"viewer": 0, "bots": [pb.BotSeat(seat=1, bot=RANDOM)]})
    ]
    assert [r.seed for r in forwarded] == [0, 0, 0]
    trusted = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=3, trusted_backend=True))
    assert trusted.seed
    again = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=3, seed=trusted.seed))
    assert again.seed == 0
    # With the seed, every hand is dealt again: what makes it a secret.
    for seat in range(3):
        views = [stub.GetView(pb.GetViewRequest(state=r.state, viewer=seat)).view for r in (trusted, again)]
        assert views[0] == views[1]
