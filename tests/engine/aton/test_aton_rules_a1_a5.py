"""Scenario tests for Aton rules A1–A5 (components, round structure, cards, cartouches 1-2)."""

from __future__ import annotations

from aton_helpers import act, arrange_both, find, kinds, make_state, texts

from engine.aton import GAME
from engine.aton.board import BLUE, BONUS, GREEN, GREY, KINDS, YELLOW


def test_A1_1_two_players_only() -> None:
    import pytest

    from engine.core import GameOptionsError

    assert GAME.new_initial_state().num_players == 2
    for n in (1, 3):
        with pytest.raises(GameOptionsError):
            GAME.new_initial_state(n)


def test_A1_2_decks_nine_of_each_value_shuffled_per_player() -> None:
    s = GAME.new_initial_state(seed=7)
    for p in (0, 1):
        cards = s.decks[p] + s.hands[p]
        assert len(cards) == 36
        assert [cards.count(v) for v in (1, 2, 3, 4)] == [9, 9, 9, 9]
        assert s.discards[p] == [0, 0, 0, 0]
    assert s.decks[0] != s.decks[1]
    assert GAME.new_initial_state(seed=8).decks[0] != s.decks[0]
    assert GAME.new_initial_state(seed=7).serialize() == s.serialize()


def test_A1_3_A1_4_A1_5_A1_7_setup() -> None:
    s = GAME.new_initial_state(seed=1)
    assert s.stock == [29, 29] and s.board == [-1] * 48  # A1.3
    assert s.tokens == [1, 1]  # A1.4
    assert s.scores() == (0, 0)  # A1.5
    assert s.kingdom == [0, 0]  # A1.7
    assert s.round == 1 and s.decision() == "exchange" and s.current_player() == 0


def test_A1_6_board_layout() -> None:
    rows = ["".join(KINDS[12 * t + 4 * r : 12 * t + 4 * r + 4]) for t in range(4) for r in range(3)]
    assert rows == [
        "YYYY",
        "KK1B",
        "GGGG",
        "YYYY",
        "KK1B",
        "GGGG",
        "YYY1",
        "KKKB",
        "GGG1",
        "YYY2",
        "KKKB",
        "GGG2",
    ]
    assert (len(YELLOW), len(GREEN), len(GREY), len(BLUE)) == (14, 14, 10, 4)
    assert sorted(BONUS) == [(6, 1), (18, 1), (27, 1), (35, 1), (39, 2), (47, 2)]
    assert sum(v for _, v in BONUS) == 8
    text = GAME.new_initial_state().view(None).to_text()
    assert "11 +2[ ]" in text and "T4: seat 0 has 0" in text


def test_A2_round_structure_event_order() -> None:
    s = make_state(phase="exchange", tokens=(1, 1), hands=("1234", "1234"))
    ev = act(s, "keep", "keep")
    ev += arrange_both(s, "2134", "1234")  # seat 0 acts first (cartouche 2: 1 < 2)
    ev += act(s, *texts(s)[:4])  # seat 0 places 4 (nothing to remove: no own counter)
    ev += act(s, *texts(s)[:4])  # seat 1 places 4
    order = [
        k
        for k in kinds(ev)
        if k
        in (
            "exchange",
            "arranged",
            "reveal_cartouche_1",
            "cartouche_1_points",
            "reveal_cartouche_2",
            "order",
            "reveal_cartouches_3_4",
            "removal",
            "place",
            "cleanup",
            "round",
            "draw_cards",
        )
    ]
    firsts = [
        order.index(k)
        for k in (
            "exchange",
            "arranged",
            "reveal_cartouche_1",
            "cartouche_1_points",
            "reveal_cartouche_2",
            "order",
            "reveal_cartouches_3_4",
            "place",
            "cleanup",
            "round",
            "draw_cards",
        )
    ]
    assert firsts == sorted(firsts)
    assert s.round == 3 and s.decision() == "exchange"  # both kept their token


def test_A3_1_draw_reshuffles_discard_when_deck_runs_out() -> None:
    s = make_state(
        phase="place",
        current=1,
        first_player=0,
        acting_second=1,
        revealed=(4, 4),
        cartouches=("1134", "2241"),
        decks=("12", None),
        remaining=1,
    )
    assert len(s.decks[0]) == 2 and sum(s.discards[0]) == 30
    ev = act(s, "place T1.0")  # last action of the round: clean-up, next round's draw
    assert s.round == 3
    assert 1 in s.hands[0] and 2 in s.hands[0]  # the two deck cards were drawn first
    assert len(s.decks[0]) == 32 and s.discards[0] == [0, 0, 0, 0]
    assert [e.player for e in find(ev, "reshuffle")] == [0]
    hand_ev = [e for e in find(ev, "hand") if e.player == 0]
    assert hand_ev and hand_ev[0].visible_to == (0,)


def test_A3_2_exchange_secret_then_carried_out_together() -> None:
    s = make_state(phase="exchange", tokens=(1, 1), hands=("1111", "2222"))
    before = s.view(1)
    keep = s.clone()
    ev0 = act(s, "exchange")
    act(keep, "keep")
    # Seat 1 learns nothing of seat 0's pending decision.
    assert s.view(1) == keep.view(1)
    assert s.view(1).tokens == before.tokens == (True, True)
    assert s.view(0).exchange_decision == "exchange" and s.view(1).exchange_decision is None
    assert [(e.kind, dict(e.data)) for e in ev0 if e.is_visible_to(1)] == [("exchange_decided", {})]
    assert s.public_action(1) < 0
    assert s.hands[0] == [1, 1, 1, 1]  # not carried out yet
    ev = act(s, "keep")
    assert s.tokens == [0, 1] and s.exchanged == [1, 0]
    assert s.discards[0] == [4, 0, 0, 0] and len(s.hands[0]) == 4
    assert s.hands[1] == [2, 2, 2, 2]
    public = find(ev, "exchange")[0]
    assert public.visible_to is None and public.data["exchanged"] == (True, False)
    new_hand = next(e for e in find(ev, "hand") if e.player == 0)
    assert new_hand.visible_to == (0,)
    assert s.view(1).exchanged == (True, False) and s.view(1).hand == (2, 2, 2, 2)
    assert s.decision() == "arrange" and s.current_player() == 0


def test_A3_2_exchange_reshuffle_may_include_discarded_hand() -> None:
    s = make_state(phase="exchange", tokens=(1, 0), hands=("4444", "1234"), decks=("", None))
    assert s.current_player() == 0
    act(s, "exchange")  # seat 1 holds no token: carried out at once
    assert s.decision() == "arrange"
    assert len(s.decks[0]) == 32 and s.discards[0] == [0, 0, 0, 0]
    assert s.tokens == [0, 0]


def test_A3_2_only_token_holders_decide_and_token_used_once() -> None:
    s = make_state(phase="exchange", tokens=(0, 1), current=1)
    assert s.legal_actions() == [0, 1]
    act(s, "exchange")
    assert s.tokens == [0, 0] and s.decision() == "arrange"
    s2 = make_state(phase="arrange", tokens=(0, 0))
    assert s2.decision() == "arrange"


def test_A3_3_only_distinct_arrangements_are_actions() -> None:
    expected = {"1234": 24, "1123": 12, "1122": 6, "1112": 4, "3333": 1}
    for hand, n in expected.items():
        s = make_state(hands=(hand, "1234"))
        acts = texts(s)
        assert len(acts) == n == len(set(acts))
        assert all(sorted(a.split()[1]) == sorted(hand) for a in acts)


def test_A3_3_arrangement_secret_until_revealed() -> None:
    s = make_state(hands=("1234", "1234"))
    ev = act(s, "arrange 4321")
    assert s.current_player() == 1
    assert s.view(1).cartouches[0] == (0, 0, 0, 0) and s.view(1).committed == (True, False)
    assert s.view(None).cartouches[0] == (0, 0, 0, 0)
    assert s.view(0).cartouches[0] == (4, 3, 2, 1)
    assert all(e.visible_to == (0,) for e in ev if "values" in e.data)
    assert s.public_action(GAME.string_to_action("arrange 4321")) < 0


def test_A3_4_cartouches_3_and_4_revealed_when_player_starts() -> None:
    s = make_state(hands=("1234", "1234"))
    arrange_both(s, "2134", "3412")  # seat 0 first (cartouche 2: 1 < 4)
    assert s.current_player() == 0 and s.decision() == "place"
    assert s.view(0).cartouches[1] == (3, 4, 0, 0)  # the second player's 3 and 4 hidden
    assert s.view(None).cartouches[1] == (3, 4, 0, 0)
    assert s.view(1).cartouches[0] == (2, 1, 3, 4)
    act(s, *texts(s)[:4])
    assert s.current_player() == 1
    assert s.view(0).cartouches[1] == (3, 4, 1, 2)


def test_A4_1_cartouche_1_scores_twice_the_difference() -> None:
    s = make_state(hands=("1234", "1234"), scores=(3, 5))
    ev = arrange_both(s, "4123", "1234")
    assert s.scores() == (3 + 6, 5)
    assert find(ev, "cartouche_1_points")[0].data["points"] == (6, 0)
    s = make_state(hands=("1234", "1234"))
    ev = arrange_both(s, "3124", "3214")
    assert s.scores() == (0, 0)
    assert find(ev, "cartouche_1_points")[0].data["points"] == (0, 0)


def test_A4_2_forty_on_cartouche_1_ends_at_once() -> None:
    s = make_state(hands=("1234", "1234"), scores=(10, 36))
    ev = arrange_both(s, "1234", "4123")
    assert s.is_terminal() and s.scores() == (10, 42)
    o = s.outcome()
    assert o is not None and o.winners == (1,) and o.reason == "points"
    assert s.returns() == (-1.0, 1.0)
    assert s.view(0).cartouches[1] == (4, 0, 0, 0)  # cartouche 2 never revealed
    assert "reveal_cartouche_2" not in kinds(ev) and kinds(ev)[-1] == "win"


def test_A5_1_lower_cartouche_2_acts_first() -> None:
    s = make_state(hands=("1234", "1234"))
    ev = arrange_both(s, "1423", "4321")
    assert s.first_player == 1 and s.current_player() == 1
    assert find(ev, "order")[0].data == {"first": 1, "reason": "cartouche2"}


def test_A5_2_equal_cartouche_2_lower_cartouche_1_acts_first() -> None:
    s = make_state(hands=("1234", "1234"))
    ev = arrange_both(s, "2314", "1324")
    assert s.first_player == 1 and find(ev, "order")[0].data["reason"] == "cartouche1"
    assert s.scores() == (2, 0)


def test_A5_3_war_repeated_ties() -> None:
    s = make_state(hands=("1234", "1234"), decks=("3214", "3241"))
    disc_before = [d[:] for d in s.discards]
    ev = arrange_both(s, "1234", "1234")
    assert s.war_cards == [(3, 3), (2, 2), (1, 4)]
    assert s.first_player == 0 and find(ev, "order")[0].data["reason"] == "war"
    assert len(find(ev, "war")) == 3
    # [house] war cards go to their owner's discard pile.
    assert s.decks[0] == [4] and s.decks[1] == [1]
    assert [s.discards[0][v - 1] - disc_before[0][v - 1] for v in (1, 2, 3, 4)] == [1, 1, 1, 0]
    assert [s.discards[1][v - 1] - disc_before[1][v - 1] for v in (1, 2, 3, 4)] == [0, 1, 1, 1]
    assert s.view(1).war == ((3, 3), (2, 2), (1, 4))


def test_A5_3_war_reshuffles_an_empty_deck() -> None:
    s = make_state(hands=("1234", "1234"), decks=("", "4"))
    ev = arrange_both(s, "1234", "1234")
    assert s.war_cards[0][1] == 4 and s.first_player in (0, 1)
    assert find(ev, "reshuffle")[0].player == 0
    assert len(s.decks[0]) == 32 - len(s.war_cards)
    s.validate()


def test_A5_3_war_cannot_reveal_seat_0_first() -> None:
    same = "1234" * 8  # both decks identical: 32 ties, then nobody can reveal
    s = make_state(hands=("1234", "1234"), decks=(same, same))
    arrange_both(s, "4321", "4321")
    assert len(s.war_cards) == 33 and s.war_cards[-1] == (0, 0)
    assert s.first_player == 0 and s.current_player() == 0
    assert s.discards[0] == [8, 8, 8, 8] and s.decks[0] == []
    s.validate()
