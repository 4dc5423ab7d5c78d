"""Typed per-game views (``View.aton`` / ``View.osirium``): they hold what the engine view
holds, the viewer's secrets only (A10.2, O6), and travel over a real server via GetView."""

from __future__ import annotations

import random
from typing import Any

import pytest
from service_helpers import KEY1

from engine.aton.board import EXCHANGE, KEEP, KINDS
from engine.core import State
from engine.osirium.board import TYPE_ARROWS, TYPE_NAME
from engine.osirium.cards import DEITIES, HIDDEN_SLOT
from engine.osirium.view import EMPTY_SLOT
from engine.registry import get_game
from engine.rng import game_rng
from service import convert
from service.envelope import parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb

KIND_LETTER = {
    pb.SQUARE_KIND_YELLOW: "Y",
    pb.SQUARE_KIND_GREY: "K",
    pb.SQUARE_KIND_BLUE: "B",
    pb.SQUARE_KIND_GREEN: "G",
    pb.SQUARE_KIND_BONUS1: "1",
    pb.SQUARE_KIND_BONUS2: "2",
}
DIRECTION_BIT = {pb.DIRECTION_NORTH: 1, pb.DIRECTION_EAST: 2, pb.DIRECTION_SOUTH: 4, pb.DIRECTION_WEST: 8}

#: (game, players, options) of the cases.
CASES = [
    ("aton", 2, {}),
    ("osirium", 2, {}),
    ("osirium", 4, {"teams": True}),
]
CASE_IDS = ["aton", "osirium-2p", "osirium-4p-teams"]


def random_states(game: str, players: int, options: dict[str, Any], seed: int, every: int = 7) -> list[State]:
    """Every ``every``-th state of one seeded random game, and its last one."""
    state = get_game(game).new_initial_state(players, seed=seed, options=options)
    rng = random.Random(seed)
    out = [state.clone()]
    steps = 0
    while not state.is_terminal() and steps < 3000:
        state.apply_action(rng.choice(state.legal_actions()))
        steps += 1
        if steps % every == 0:
            out.append(state.clone())
    out.append(state)
    return out


# ---------------------------------------------------------------------------------------
# Aton
# ---------------------------------------------------------------------------------------


def expected_reason(state: State) -> int:
    """The OutcomeReason a typed view must carry: the engine's reason once over."""
    outcome = state.outcome()
    if outcome is None:
        return pb.OUTCOME_REASON_UNSPECIFIED
    return pb.OutcomeReason.Value("OUTCOME_REASON_" + outcome.reason.upper())


def check_aton(state: State, viewer: int | None) -> None:
    v: Any = state.view(viewer)
    msg = convert.view_message(state, viewer)
    assert msg.WhichOneof("game_view") == "aton"
    t = msg.aton
    assert t.round == v.round
    assert pb.Decision.Name(t.decision) == "DECISION_" + v.decision.upper()
    assert t.reason == expected_reason(state)
    assert t.HasField("current_player") == (v.decision != "over")
    # Board (A1.6): 4 temples x 12 squares, kinds as printed, owners as in the engine view.
    assert [tp.number for tp in t.temples] == [1, 2, 3, 4]
    squares = [sq for tp in t.temples for sq in tp.squares]
    assert [sq.index for sq in squares] == list(range(48))
    assert [KIND_LETTER[sq.kind] for sq in squares] == list(KINDS)
    assert [sq.owner if sq.HasField("owner") else -1 for sq in squares] == list(v.board)
    assert [s.score for s in t.seats] == list(v.scores) == list(state.scores())
    assert [s.kingdom for s in t.seats] == list(v.kingdom)
    assert t.kingdom_total == sum(v.kingdom)
    assert [s.stock for s in t.seats] == list(v.stocks)
    assert [s.hand_size for s in t.seats] == list(v.hand_sizes)
    assert [tuple(s.discard_counts) for s in t.seats] == list(v.discards)
    assert [s.has_token for s in t.seats] == list(v.tokens)
    assert [(w.seat0_card, w.seat1_card) for w in t.war] == list(v.war)
    for q, seat in enumerate(t.seats):
        shown = {c.position: c.value for c in seat.cartouches}
        assert shown == {k + 1: c for k, c in enumerate(v.cartouches[q]) if c}
        if q != viewer:  # A3.4: another seat's cartouches only once revealed
            assert all(pos <= v.revealed[q] for pos in shown)
    # A10.2: the viewer's own hand only; none in the public view.
    assert list(t.hand) == list(v.hand)
    if v.exchange_decision is None:  # none pending, or not the viewer's (A3.2)
        assert t.exchange_decision == pb.ATON_EXCHANGE_CHOICE_UNSPECIFIED
    else:
        choice = pb.AtonExchangeChoice.Name(t.exchange_decision)
        assert choice == "ATON_EXCHANGE_CHOICE_" + v.exchange_decision.upper()
    if viewer is None:
        assert not t.hand
        assert v.exchange_decision is None


@pytest.mark.parametrize("seed", [1, 2])
def test_aton_typed_view_matches_engine_view(seed: int) -> None:
    """A10.1/A10.2: every field of the typed view agrees with the engine view, all along a game."""
    states = random_states("aton", 2, {}, seed)
    assert states[-1].is_terminal()
    for state in states:
        for viewer in (0, 1, None):
            check_aton(state, viewer)


def test_aton_typed_view_hides_the_opponent_hand() -> None:
    """A10.2: seat 1's hand and cartouches appear in seat 1's view only."""
    state = get_game("aton").new_initial_state(2, seed=4)
    rng = random.Random(4)
    seen_hidden_cartouche = False
    for _ in range(60):
        if state.is_terminal():
            break
        own: Any = state.view(1)
        v0 = convert.view_message(state, 0).aton
        pub = convert.view_message(state, None).aton
        v1 = convert.view_message(state, 1).aton
        assert list(v1.hand) == list(own.hand)
        theirs_view: Any = state.view(0)
        assert list(v0.hand) == list(theirs_view.hand)
        assert not pub.hand
        mine = {c.position for c in v1.seats[1].cartouches}
        theirs = {c.position for c in v0.seats[1].cartouches}
        assert theirs <= mine
        assert {c.position for c in pub.seats[1].cartouches} == theirs
        seen_hidden_cartouche |= len(theirs) < len(mine)
        state.apply_action(rng.choice(state.legal_actions()))
    assert seen_hidden_cartouche, "some committed cartouche of seat 1 must be hidden from seat 0"


@pytest.mark.parametrize(("action", "choice"), [(KEEP, "KEEP"), (EXCHANGE, "EXCHANGE")])
def test_aton_typed_view_shows_the_own_exchange_decision_only(action: int, choice: str) -> None:
    """A3.2: a seat's pending exchange decision is in its own typed view, in no other."""
    state = get_game("aton").new_initial_state(2, seed=3)
    rng = random.Random(3)
    while not (state.decision() == "exchange" and action in state.legal_actions()):
        state.apply_action(rng.choice(state.legal_actions()))
    seat = state.current_player()
    state.apply_action(action)
    assert state.decision() == "exchange" and state.current_player() == 1 - seat  # still secret
    mine = convert.view_message(state, seat).aton
    assert pb.AtonExchangeChoice.Name(mine.exchange_decision) == "ATON_EXCHANGE_CHOICE_" + choice
    for viewer in (1 - seat, None):
        other = convert.view_message(state, viewer).aton
        assert other.exchange_decision == pb.ATON_EXCHANGE_CHOICE_UNSPECIFIED
    for viewer in (seat, 1 - seat, None):
        check_aton(state, viewer)


# ---------------------------------------------------------------------------------------
# Osirium
# ---------------------------------------------------------------------------------------


def names(types: Any) -> list[str]:
    """Amulet types by name, sorted by name: the order of the wire's piles and hands."""
    return sorted(TYPE_NAME[k] for k in types)


def check_osirium(state: State, viewer: int | None) -> None:
    v: Any = state.view(viewer)
    msg = convert.view_message(state, viewer)
    assert msg.WhichOneof("game_view") == "osirium"
    t = msg.osirium
    assert t.num_players == v.num_players
    assert pb.Decision.Name(t.decision) == "DECISION_" + v.decision.upper()
    assert t.reason == expected_reason(state)
    assert t.round == v.round
    # Board (O1.2): 16 cells, row-major, amulet type, rotation and rotated arrows.
    assert [(c.cell, c.row, c.column) for c in t.board] == [(i, i // 4, i % 4) for i in range(16)]
    for cell, kind, rot in zip(t.board, v.cell_types, v.cell_rotations, strict=True):
        if kind < 0:
            assert not cell.HasField("amulet") and not cell.arrows and rot == 0
            continue
        name = TYPE_NAME[kind]
        assert cell.amulet.name == name
        assert pb.AmuletColour.Name(cell.amulet.colour) == "AMULET_COLOUR_" + name.split("-")[0].upper()
        assert pb.AmuletPattern.Name(cell.amulet.pattern) == "AMULET_PATTERN_" + name.split("-")[1].upper()
        assert cell.rotation_degrees == rot * 90
        bits = sum(DIRECTION_BIT[d] for d in cell.arrows)
        assert bits == TYPE_ARROWS[kind][rot]
    assert [m.amulet.name if m.HasField("amulet") else "" for m in t.market] == [
        TYPE_NAME[k] if k >= 0 else "" for k in v.market
    ]
    # Piles and hands: the engine view sorts them by type, the wire by name (proto comments).
    assert list(v.discard) == sorted(v.discard)
    assert [a.name for a in t.discard] == names(v.discard)
    assert t.draw_pile_size == v.draw_pile_size
    assert [s.score for s in t.seats] == list(v.scores) == list(state.scores())
    assert [s.team for s in t.seats] == list(v.teams) == list(state.teams())
    assert [s.deity.id for s in t.seats] == list(v.deities)
    deities = [DEITIES[d].name for d in v.deities]
    assert [s.deity.name for s in t.seats] == deities
    assert [pb.Deity.Name(s.deity.deity) for s in t.seats] == ["DEITY_" + d.upper() for d in deities]
    assert [s.hand_size for s in t.seats] == list(v.hand_sizes)
    assert [s.ritual_ankhs for s in t.seats] == list(v.ritual_ankhs)
    for q, seat in enumerate(t.seats):
        assert list(v.broken[q]) == sorted(v.broken[q])
        assert [a.name for a in seat.broken] == names(v.broken[q])
        assert [(c.ritual.id, pb.Principle.Name(c.principle)) for c in seat.completed] == [
            (r, "PRINCIPLE_" + p.name) for r, p in v.completed[q]
        ]
        for k, (slot, rid) in enumerate(zip(seat.rituals, v.rituals[q], strict=True)):
            assert slot.slot == k and slot.empty == (rid == EMPTY_SLOT)
            assert (slot.ritual.id if slot.HasField("ritual") else None) == (rid if rid >= 0 else None)
            if k == HIDDEN_SLOT and q != viewer and rid != EMPTY_SLOT:
                # O6: another seat's face-down ritual is hidden; only its deck is public.
                assert not slot.HasField("ritual")
                assert slot.hidden_deck != pb.RITUAL_DECK_UNSPECIFIED
        # O6: exaltations are secret until the end.
        if q == viewer or v.decision == "over":
            assert seat.exaltation.id == v.exaltations[q] >= 0
        else:
            assert not seat.HasField("exaltation")
    # The viewer's own hand only; none in the public view.
    assert [a.name for a in t.hand] == names(v.hand or ())
    if viewer is None:
        assert not t.hand and v.hand is None
    else:
        assert v.hand is not None and list(v.hand) == sorted(v.hand)


@pytest.mark.parametrize(("players", "options"), [(2, {}), (4, {"teams": True})], ids=["2p", "4p-teams"])
def test_osirium_typed_view_matches_engine_view(players: int, options: dict[str, Any]) -> None:
    """O6: every field of the typed view agrees with the engine view, all along a game."""
    states = random_states("osirium", players, options, seed=players, every=9)
    assert states[-1].is_terminal()
    for state in states:
        for viewer in (*range(players), None):
            check_osirium(state, viewer)


def test_osirium_typed_view_hides_other_seats_secrets() -> None:
    """O6: seat 1's hand, face-down ritual and exaltation are in seat 1's view only."""
    state = get_game("osirium").new_initial_state(4, seed=11, options={"teams": True})
    own = convert.view_message(state, 1).osirium
    assert own.hand and own.seats[1].rituals[HIDDEN_SLOT].HasField("ritual")
    assert own.seats[1].HasField("exaltation")
    for viewer in (0, 2, 3, None):  # team-mate 3 included: no secret is shared (O9.3)
        other = convert.view_message(state, viewer).osirium
        assert not other.seats[1].rituals[HIDDEN_SLOT].HasField("ritual")
        assert not other.seats[1].HasField("exaltation")
        mine: Any = state.view(viewer)
        assert [a.name for a in other.hand] == names(mine.hand or ())  # the viewer's own only
        if viewer is None:
            assert not other.hand
    assert own.seats[1].hand_size == len(own.hand)


# ---------------------------------------------------------------------------------------
# Over a real server
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "players", "options"), CASES, ids=CASE_IDS)
def test_typed_view_round_trips_over_get_view(
    stub: Any, game: str, players: int, options: dict[str, Any]
) -> None:
    """GetView over gRPC returns the same typed view as the engine state replayed locally."""
    seed = 31
    req = pb.CreateGameRequest(game=game, num_players=players, seed=seed)
    if options.get("teams"):
        req.options.osirium.teams = True
    token = stub.CreateGame(req).state
    # The server's deal: the seed keyed with its key's chance secret (docs/security.md, replays).
    chance = game_rng(game, seed, parse_keys(KEY1)[0].chance_secret)
    local = get_game(game).new_initial_state(players, seed=seed, options=options, rng=chance)
    rng = random.Random(seed)
    for step in range(40):
        if step % 10 == 0 or local.is_terminal():
            for viewer in (*range(players), None):
                got = stub.GetView(
                    pb.GetViewRequest(state=token)
                    if viewer is None
                    else pb.GetViewRequest(state=token, viewer=viewer)
                ).view
                want = convert.view_message(local, viewer)
                assert got.WhichOneof("game_view") == game
                assert getattr(got, game) == getattr(want, game)
        if local.is_terminal():
            break
        action = rng.choice(local.legal_actions())
        token = stub.ApplyAction(
            pb.ApplyActionRequest(state=token, action_id=action, player=local.current_player())
        ).state
        local.apply_action(action)
