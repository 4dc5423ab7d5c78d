"""A10 (information) and A11 (decisions): views, determinisation, secret actions."""

from __future__ import annotations

import json
import random
from collections import Counter

from aton_helpers import act, arrange_both, make_state, texts

from engine.aton import GAME
from engine.aton.board import PLACE_BASE, REMOVE_BASE, RESET_BASE
from engine.aton.state import AtonState, ExchangeChoice, Phase
from engine.core import SECRET_ACTION


def _random_states(n_games: int, seed: int) -> list[AtonState]:
    """Every state met in ``n_games`` random games (seeded)."""
    rng = random.Random(seed)
    out = []
    for g in range(n_games):
        s = GAME.new_initial_state(seed=seed * 1000 + g)
        while not s.is_terminal():
            out.append(s.clone())
            s.apply(rng.choice(s.legal_actions()))
        out.append(s)
    return out


def test_A10_1_public_view_contents() -> None:
    s = make_state(
        hands=("1234", "1234"),
        board={"T1.0": 0, "T2.3": 1},
        kingdom=(1, 2),
        scores=(7, 9),
        tokens=(1, 0),
        discards=("44", "1"),
        decks=("123", None),
    )
    v = s.view(None)
    assert v.player is None and v.round == 2 and v.decision == "arrange" and v.current_player == 0
    assert v.board[0] == 0 and v.board[15] == 1 and v.board.count(-1) == 46
    assert v.kingdom == (1, 2) and v.scores == (7, 9) and v.stocks == (27, 26)
    assert sum(v.discards[0]) == 36 - 4 - 3 and v.discards[1] == (1, 0, 0, 0)
    assert v.deck_sizes == (3, 31) and v.hand_sizes == (4, 4) and v.tokens == (True, False)
    assert v.hand == () and v.exchange_decision is None
    json.dumps(v.to_dict())
    text = v.to_text()
    assert "Kingdom of the Dead: 3/8" in text and "seat 0      7     27" in text
    # T1.0 (seat 0) and T2.3 (seat 1), on the first row of temples 1 and 2.
    assert "   0  Y[0]  1  Y[ ]  2  Y[ ]  3  Y[ ]     0  Y[ ]  1  Y[ ]  2  Y[ ]  3  Y[1]" in text


def test_A10_2_hand_and_pending_decisions_private_to_owner() -> None:
    s = make_state(phase="exchange", tokens=(1, 1), hands=("1134", "2244"))
    assert s.view(0).hand == (1, 1, 3, 4) and s.view(1).hand == (2, 2, 4, 4)
    assert "1134" not in s.view(1).to_text() and "your hand: 2244" in s.view(1).to_text()
    act(s, "exchange")
    assert s.view(0).exchange_decision is ExchangeChoice.EXCHANGE
    assert s.view(1).exchange_decision is None and s.view(None).exchange_decision is None
    assert s.view(0).decision is Phase.EXCHANGE and s.view(0).to_dict()["exchange_decision"] == "exchange"
    assert "your exchange decision: exchange" in s.view(0).to_text()


def test_A10_nothing_hidden_appears_in_a_view() -> None:
    """Changing only what a viewer cannot see never changes their view (or its text)."""
    base = make_state(hands=("1123", "2344"))
    # Opponent's hand: swap seat 1's hand for other unseen cards.
    other = base.clone()
    other.hands[1], other.decks[1][:4] = sorted(other.decks[1][:4]), other.hands[1]
    assert other.hands[1] != base.hands[1]
    other.validate()
    assert other.view(0) == base.view(0) and other.view(0).to_text() == base.view(0).to_text()
    assert other.view(1) != base.view(1)
    # Deck orders (both players) and the engine's randomness.
    other = base.clone()
    other.decks[0].reverse()
    other.decks[1].reverse()
    other.rng.setstate(12345)
    for p in (0, 1, None):
        assert other.view(p) == base.view(p)
    # A committed, unrevealed arrangement.
    a, b = base.clone(), base.clone()
    act(a, "arrange 1123")
    act(b, "arrange 3211")
    assert a.view(1) == b.view(1) and a.view(None) == b.view(None) and a.view(0) != b.view(0)
    # Cartouches 3 and 4 of the second player before they act.
    a, b = base.clone(), base.clone()
    arrange_both(a, "1213", "3424")
    arrange_both(b, "1213", "3442")
    assert a.current_player() == 0
    assert a.view(0) == b.view(0) and a.view(1) != b.view(1)


def test_A10_views_of_sampled_states_match_across_random_games() -> None:
    rng = random.Random(5)
    changed_hands = 0
    for s in _random_states(6, seed=3):
        for p in (0, 1):
            t = s.sample_consistent_state(p, rng)
            t.validate()
            assert t.view(p) == s.view(p)
            assert t.legal_actions() == s.legal_actions() or s.current_player() != p
            changed_hands += t.hands[1 - p] != s.hands[1 - p]
        # The public sees neither hand: re-deal both.
        t = s.sample_consistent_state(0, rng).sample_consistent_state(1, rng)
        assert t.view(None) == s.view(None)
    assert changed_hands > 50  # the samples really re-deal hidden cards


def test_A10_determinisation_follows_unseen_composition() -> None:
    """Across samples, the opponent's hand follows the composition of their unseen cards."""
    # Seat 1 has discarded eight 1s and three 2s: unseen = 1x1, 6x2, 9x3, 9x4 (25 cards).
    s = make_state(hands=("1234", "2334"), discards=("", "11111111222"))
    unseen = Counter(s.decks[1] + s.hands[1])
    assert unseen == Counter({1: 1, 2: 6, 3: 9, 4: 9})
    rng = random.Random(2024)
    n = 3000
    totals: Counter[int] = Counter()
    for _ in range(n):
        t = s.sample_consistent_state(0, rng)
        hand = Counter(t.hands[1])
        assert hand[1] <= 1  # never more than the unseen cards allow
        assert Counter(t.decks[1] + t.hands[1]) == unseen
        totals.update(hand)
    for v in (1, 2, 3, 4):
        expected = 4 * unseen[v] / 25
        assert abs(totals[v] / n - expected) < 0.08, (v, totals[v] / n, expected)
    # The opponent's committed, unrevealed arrangement is re-dealt from the same pool.
    act(s, "arrange 4321")
    carts: Counter[tuple[int, ...]] = Counter()
    firsts: Counter[int] = Counter()
    for _ in range(n):
        t = s.sample_consistent_state(1, rng)
        carts[tuple(t.cartouches[0])] += 1
        firsts[t.cartouches[0][0]] += 1
        assert t.view(1) == s.view(1)
    assert len(carts) > 20
    unseen0 = Counter({1: 9, 2: 9, 3: 9, 4: 9})  # seat 0 has discarded nothing
    for v in (1, 2, 3, 4):
        assert abs(firsts[v] / n - unseen0[v] / 36) < 0.05


def test_A10_3_own_deck_order_is_resampled_too() -> None:
    s = make_state(hands=("1234", "1234"))
    t = s.sample_consistent_state(0, random.Random(1))
    assert sorted(t.decks[0]) == sorted(s.decks[0]) and t.decks[0] != s.decks[0]
    assert t.hands[0] == s.hands[0]
    assert t.rng.state != s.rng.state


def test_A10_pending_exchange_decision_resampled() -> None:
    s = make_state(phase="exchange", tokens=(1, 1))
    act(s, "exchange")
    seen = {s.sample_consistent_state(1, random.Random(i)).exchange_choice[0] for i in range(20)}
    assert seen == {0, 1}
    assert {s.sample_consistent_state(0, random.Random(i)).exchange_choice[0] for i in range(5)} == {1}


def test_A11_secret_decisions_and_public_actions() -> None:
    s = GAME.new_initial_state(seed=3)
    for a in range(REMOVE_BASE):
        assert s.public_action(a) == SECRET_ACTION
    for a in (REMOVE_BASE, PLACE_BASE + 7, RESET_BASE + 47):
        assert s.public_action(a) == a


def test_A11_a_single_square_is_still_a_decision() -> None:
    board = "1111 1111 111. | " + "." * 36
    s = make_state(hands=("1234", "1234"), board=board)
    arrange_both(s, "3214", "1342")  # one empty square in temple 1
    assert s.decision() == "place" and texts(s) == ["place T1.11"]


def test_A11_legal_actions_fresh_ascending_and_phases() -> None:
    s = make_state(hands=("1234", "1234"))
    acts = s.legal_actions()
    assert acts == sorted(acts) and len(acts) == 24
    acts.clear()
    assert len(s.legal_actions()) == 24
    seen = set()
    for st in _random_states(4, seed=9):
        if not st.is_terminal():
            la = st.legal_actions()
            assert la and la == sorted(set(la))
            seen.add(st.decision())
    assert seen >= {"exchange", "arrange", "place"}


def test_unknown_seat_refused() -> None:
    import pytest

    from engine.core import IllegalActionError

    s = make_state()
    for bad in (2, -1, True):
        with pytest.raises(IllegalActionError, match="no seat"):
            s.view(bad)  # type: ignore[arg-type]
        with pytest.raises(IllegalActionError, match="no seat"):
            s.sample_consistent_state(bad, random.Random(0))  # type: ignore[arg-type]


def test_A10_4_sampling_depends_only_on_the_view_and_rng() -> None:
    """Two states with equal views for a player sample to the same state for the same rng
    (the hidden order of the re-dealt cards never leaks into a bot's search)."""
    compared = 0
    for s in _random_states(3, seed=21)[::7]:
        for p in (0, 1):
            other = s.sample_consistent_state(p, random.Random(77))
            assert other.view(p) == s.view(p)
            a = s.sample_consistent_state(p, random.Random(5)).serialize()
            b = other.sample_consistent_state(p, random.Random(5)).serialize()
            assert a == b
            compared += other.serialize() != s.serialize()
    assert compared > 10
