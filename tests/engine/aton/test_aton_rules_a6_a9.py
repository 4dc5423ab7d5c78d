"""Scenario tests for Aton rules A6–A9 (actions, clean-up, scoring round, end)."""

from __future__ import annotations

from typing import Any

from aton_helpers import act, arrange_both, find, kinds, make_state, texts

from engine.aton.state import AtonState
from engine.core import Event

# Seat 0 holds 27 counters (stock 2) without any win condition.
BOARD_27 = "0000 0000 0... | 0000 0000 .... | 000. 0000 .... | 0... 00.. ...."
# Comprehensive scoring board (A8.2); seat 1 then places on T4.8.
BOARD_LINES = "0001 0.1. 00.. | 1111 .1.1 .... | 0.00 000. 1..0 | 1... 1..1 ...."
# Every majority equal once seat 1 places on T4.8; bonus 2 each.
BOARD_EQUAL = "01.. 01.. .... | 0011 .... .... | 01.. .... .... | 0..0 .... ...1"


def last_place(
    board: str,
    *,
    scores: tuple[int, int] = (10, 10),
    kingdom: tuple[int, int] = (4, 4),
    first: int = 0,
    rnd: int = 2,
) -> AtonState:
    """The second actor (``1 - first``) has one placement left (all temples allowed)."""
    carts = ["", ""]
    carts[first] = "1134"
    carts[1 - first] = "2241"
    return make_state(
        phase="place",
        current=1 - first,
        first_player=first,
        acting_second=1,
        revealed=(4, 4),
        cartouches=(carts[0], carts[1]),
        board=board,
        kingdom=kingdom,
        scores=scores,
        round=rnd,
        remaining=1,
    )


def lines(events: list[Event]) -> dict[str, Any]:
    return {e.data["line"]: e.data["points"] for e in find(events, "scoring_line")}


# --- A6.1 ---------------------------------------------------------------------------


def test_A6_1_cartouche_3_limits_temples() -> None:
    s = make_state(hands=("1234", "1234"))
    arrange_both(s, "3124", "1234")  # seat 0: cartouche 3 = 2 -> temples 1-2
    assert s.decision() == "place" and s.current_player() == 0
    acts = texts(s)
    assert len(acts) == 24 and all(a.startswith(("place T1.", "place T2.")) for a in acts)


# --- A6.2 ---------------------------------------------------------------------------


def test_A6_2_partial_and_impossible_removal() -> None:
    # Cartouche 2 = 4 asks for 2, but only one opponent counter stands in temple 1 (c3 = 1).
    board = {"T1.5": 1, "T2.0": 1, "T2.1": 1}
    s = make_state(hands=("1234", "1234"), board=board)
    ev = arrange_both(s, "2413", "3412")
    assert s.decision() == "remove" and s.current_player() == 0
    assert find(ev, "removal")[0].data == {"required": 2, "count": 1, "target": 1}
    assert texts(s) == ["remove T1.5"]
    ev = act(s, "remove T1.5")
    assert s.kingdom == [0, 1] and s.board[5] == -1
    assert s.decision() == "place" and s.current_player() == 0
    # Impossible: no opponent counter in the allowed temple -> nothing happens.
    s = make_state(hands=("1234", "1234"), board={"T2.0": 1})
    ev = arrange_both(s, "2413", "3412")
    assert find(ev, "removal")[0].data["count"] == 0
    assert s.decision() == "place" and s.kingdom == [0, 0]


def test_A6_2_one_choice_per_counter_and_mandatory() -> None:
    s = make_state(hands=("1234", "1234"), board={"T1.0": 1, "T1.1": 1, "T3.4": 1, "T4.0": 1})
    arrange_both(s, "2431", "3412")  # cartouche 2 = 4: two removals, temples 1-3
    assert texts(s) == ["remove T1.0", "remove T1.1", "remove T3.4"]
    assert "keep" not in texts(s)  # no way to decline
    act(s, "remove T3.4")
    assert s.decision() == "remove" and texts(s) == ["remove T1.0", "remove T1.1"]
    act(s, "remove T1.0")
    assert s.decision() == "place" and s.kingdom == [0, 2]


def test_A6_2_remove_own_counter_with_a_1() -> None:
    s = make_state(hands=("1234", "1234"), board={"T1.0": 0, "T4.0": 0, "T1.1": 1})
    ev = arrange_both(s, "2134", "1234")  # seat 0: cartouche 2 = 1, temples 1-3
    assert find(ev, "removal")[0].data == {"required": 1, "count": 1, "target": 0}
    assert texts(s) == ["remove T1.0"]  # own counter, allowed temples only
    act(s, "remove T1.0")
    assert s.kingdom == [1, 0]


def test_A6_2_no_removal_in_the_first_round() -> None:
    s = make_state(hands=("1234", "1234"), board={"T1.5": 1}, round=1)
    ev = arrange_both(s, "2413", "3412")
    assert find(ev, "removal")[0].data["count"] == 0
    assert s.decision() == "place" and s.board[5] == 1


def test_A6_2_kingdom_full_removed_counter_returns_to_stock() -> None:
    s = make_state(hands=("1234", "1234"), board={"T1.5": 1}, kingdom=(4, 4))
    stock1 = s.stock[1]
    ev = arrange_both(s, "2413", "3412")
    act(s, "remove T1.5")
    assert s.kingdom == [4, 4] and s.stock[1] == stock1 + 1
    assert ev  # events were produced
    s.validate()


# --- A6.3 ---------------------------------------------------------------------------


def test_A6_3_shortfall_and_overflow() -> None:
    # Shortfall: cartouche 4 = 4 but only 2 counters in stock -> 2 placed, no effect for the rest.
    s = make_state(hands=("1234", "1234"), board=BOARD_27)
    assert s.stock == [2, 29]
    ev = arrange_both(s, "1234", "2314")
    assert find(ev, "placement")[0].data["count"] == 2 and find(ev, "placement")[0].data["overflow"] == 0
    ev = act(s, "place T3.8", "place T3.9")
    assert s.stock[0] == 0 and s.kingdom == [0, 0] and s.current_player() == 1
    assert not find(ev, "overflow")
    # Overflow: 4 to place, only 2 empty squares in temple 1 -> 2 go to the Kingdom after the last.
    board = "1111 1111 11.. | " + "." * 36
    s = make_state(hands=("1234", "1234"), board=board)
    ev = arrange_both(s, "3214", "1342")
    assert find(ev, "placement")[0].data == {
        "count": 2,
        "overflow": 2,
        "stock": 29,
        "empty": 2,
        "cartouche": 4,
    }
    act(s, "place T1.10")
    assert s.kingdom == [0, 0]  # only after the last placement
    ev = act(s, "place T1.11")
    assert s.kingdom == [2, 0] and s.stock[0] == 25
    assert find(ev, "overflow")[0].data == {"overflow": 2, "to_kingdom": 2}


def test_A6_3_overflow_into_a_nearly_full_kingdom() -> None:
    board = "1111 1111 11.. | " + "." * 36
    s = make_state(hands=("1234", "1234"), board=board, kingdom=(0, 7))
    arrange_both(s, "3214", "1342")
    act(s, "place T1.10", "place T1.11")
    assert s.kingdom == [1, 7] and s.stock[0] == 29 - 2 - 1  # [house] the rest stays in stock


def test_A6_3_no_empty_square_everything_overflows() -> None:
    board = "1111 1111 0000 | " + "." * 36
    s = make_state(hands=("1234", "1234"), board=board)
    ev = arrange_both(s, "3214", "1342")
    assert find(ev, "placement")[0].data["count"] == 0
    assert s.kingdom == [4, 0] and s.current_player() == 1


# --- A6.4 ---------------------------------------------------------------------------


def test_A6_4_yellow_win_before_second_player_acts() -> None:
    board = ".000 .... .... | 0000 .... .... | 000. .... .... | 000. .... ...."
    s = make_state(hands=("1234", "1234"), board=board)
    arrange_both(s, "4213", "1324")
    assert s.current_player() == 0
    ev = act(s, "place T1.0", "place T1.4")
    assert not s.is_terminal()  # checked after the whole placement
    ev = act(s, "place T1.5")
    o = s.outcome()
    assert o is not None and o.winners == (0,) and o.reason == "yellow"
    assert s.returns() == (1.0, -1.0)
    assert s.view(0).revealed == (4, 2)  # seat 1 never acted
    assert kinds(ev)[-1] == "win"


def test_A6_4_temple_win_and_reason_priority() -> None:
    board = ".... .... .... | 0000 0000 000. | " + "." * 24
    s = make_state(hands=("1234", "1234"), board=board)
    arrange_both(s, "4321", "2413")
    act(s, "place T2.11")
    assert s.outcome() is not None and s.outcome().reason == "temple"
    # Temple 1 and all yellow at once: reported as temple.
    board = ".000 0000 0000 | 0000 .... .... | 000. .... .... | 000. .... ...."
    s = make_state(hands=("1234", "1234"), board=board)
    arrange_both(s, "4321", "2413")
    act(s, "place T1.0")
    assert s.outcome() is not None and s.outcome().reason == "temple"


def test_A6_4_green_only_the_acting_player_is_checked() -> None:
    # Seat 1 already holds all 14 green squares (and no stock); seat 0 acts first.
    board = "1111 11.. 1111 | 1111 11.. 1111 | .... 111. 111. | .... .... 111."
    s = make_state(hands=("1234", "1234"), board=board)
    assert s.stock == [29, 0]
    arrange_both(s, "2143", "1234")
    assert s.current_player() == 0 and not s.is_terminal()
    act(s, "place T1.6", "place T1.7")
    assert not s.is_terminal()  # seat 1's green is not checked during seat 0's turn
    ev = act(s, "place T2.6")
    o = s.outcome()
    assert o is not None and o.winners == (1,) and o.reason == "green"
    # Seat 1 placed nothing and is still checked, after revealing its cartouches.
    assert kinds(ev).index("reveal_cartouches_3_4") < kinds(ev).index("win")
    assert find(ev, "placement")[-1].data["count"] == 0


# --- A7 -------------------------------------------------------------------------------


def test_A7_1_exact_discard_counts() -> None:
    s = last_place(BOARD_EQUAL, kingdom=(0, 0))
    assert len(s.decks[0]) >= 4 and len(s.decks[1]) >= 4  # no reshuffle at the next draw
    before = [d[:] for d in s.discards]
    act(s, "place T4.8")
    assert s.round == 3 and s.cartouches == [[0, 0, 0, 0], [0, 0, 0, 0]] and s.revealed == [0, 0]
    assert s.discards[0] == [before[0][0] + 2, before[0][1], before[0][2] + 1, before[0][3] + 1]  # 1134
    assert s.discards[1] == [before[1][0] + 1, before[1][1] + 2, before[1][2], before[1][3] + 1]  # 2241


# --- A8 -------------------------------------------------------------------------------


def test_A8_1_scoring_round_only_with_a_full_kingdom() -> None:
    s = last_place(BOARD_LINES, kingdom=(4, 3))
    ev = act(s, "place T4.8")
    assert "scoring_round" not in kinds(ev) and s.round == 3 and s.kingdom == [4, 3]
    s = last_place(BOARD_LINES, kingdom=(4, 4))
    ev = act(s, "place T4.8")
    assert "scoring_round" in kinds(ev)


def test_A8_1_kingdom_filled_during_the_round_triggers_scoring() -> None:
    s = make_state(hands=("1234", "1234"), board={"T1.5": 1}, kingdom=(4, 3))
    arrange_both(s, "2413", "3412")  # seat 0 removes one of seat 1's counters: Kingdom 8
    act(s, "remove T1.5", "place T1.0", "place T1.1", "place T1.2")
    assert s.kingdom == [4, 4]
    act(s, "remove T1.0", "remove T1.1")  # seat 1 (cartouche 2 = 4); Kingdom full: back to stock
    assert s.kingdom == [4, 4] and s.stock[0] == 29 - 1 - 4
    ev = act(s, "place T1.3", "place T1.4")
    assert "scoring_round" in kinds(ev)


def test_A8_2_every_scoring_line() -> None:
    s = last_place(BOARD_LINES, scores=(10, 10))
    ev = act(s, "place T4.8")
    assert lines(ev) == {
        "temple 1": (4, 0),  # majority 6-2: the difference
        "temple 2": (0, 5),  # majority: 5
        "temple 3": (7, 0),  # 1 per own counter in temple 3
        "temple 4": (0, 6),  # 3 per own blue square (T2.7 and T4.7)
        "grey squares": (8, 0),  # 4 grey squares against 2
        "bonus squares": (2, 1),  # T3.3 + T3.11 against T1.6
    }
    assert list(lines(ev)) == [
        "temple 1",
        "temple 2",
        "temple 3",
        "temple 4",
        "grey squares",
        "bonus squares",
    ]
    assert s.scores() == (31, 22)


def test_A6_4_A8_2_counts_in_the_seats_masks_match_the_board() -> None:
    """The scoring round, the instant-win check and the search count in each seat's square
    mask (``owned``); the counts are the board's, at every step of seeded random games."""
    import random

    from engine.aton import GAME
    from engine.aton.state import instant_win, tally

    for seed in range(12):
        s = GAME.new_initial_state(2, seed)
        rng = random.Random(seed)
        while not s.is_terminal():
            assert s.tally() == tally(s.board)
            assert [s._instant_win(p) for p in (0, 1)] == [instant_win(s.board, p) for p in (0, 1)]
            s.apply(rng.choice(s.legal_actions()))
        assert s.tally() == tally(s.board)
        assert [s._instant_win(p) for p in (0, 1)] == [instant_win(s.board, p) for p in (0, 1)]


def test_A8_2_equal_majorities_score_nothing() -> None:
    s = last_place(BOARD_EQUAL, scores=(10, 10))
    ev = act(s, "place T4.8")
    assert lines(ev) == {
        "temple 1": (0, 0),
        "temple 2": (0, 0),
        "temple 3": (0, 0),
        "temple 4": (0, 0),
        "grey squares": (0, 0),
        "bonus squares": (2, 2),
    }
    assert s.scores() == (12, 12)


def test_A8_3_end_check_after_scoring_and_unbounded_scores() -> None:
    s = last_place(BOARD_LINES, scores=(30, 35))
    act(s, "place T4.8")
    o = s.outcome()
    assert o is not None and o.reason == "scoring" and o.winners == (0,) and o.scores == (51, 47)
    assert s.returns() == (1.0, -1.0)


def test_A8_3_equal_scores_at_40_are_a_draw() -> None:
    s = last_place(BOARD_EQUAL, scores=(38, 38))
    ev = act(s, "place T4.8")
    o = s.outcome()
    assert o is not None and o.reason == "scoring" and o.winners == () and o.is_draw
    assert s.returns() == (0.0, 0.0) and kinds(ev)[-1] == "draw"


def test_A8_4_reset_order_equal_scores_first_actor_and_each_temple() -> None:
    s = last_place(BOARD_EQUAL, scores=(10, 10))
    act(s, "place T4.8")
    # Kingdom emptied back to the stocks.
    assert s.kingdom == [0, 0] and s.stock == [22, 22]
    assert s.decision() == "reset" and s.current_player() == 0  # equal scores: seat 0 acted first
    assert texts(s) == ["reset T1.0", "reset T1.4"]
    seq = []
    for choice in ("reset T1.4", "reset T2.1", "reset T3.0", "reset T4.3"):
        seq.append((s.current_player(), s.view(None).reset_temple))
        act(s, choice)
    assert seq == [(0, 1), (0, 2), (0, 3), (0, 4)]
    assert s.current_player() == 1 and texts(s) == ["reset T1.1", "reset T1.5"]
    act(s, "reset T1.1", "reset T2.2", "reset T3.1", "reset T4.11")
    assert s.round == 3 and s.stock == [26, 26] and s.kingdom == [0, 0]  # counters back to stock
    assert s.board[0] == 0 and s.board[4] == -1 and s.board[5] == 1 and s.board[44] == 1


def test_A8_4_equal_scores_first_actor_seat_1() -> None:
    s = last_place(BOARD_EQUAL, scores=(10, 10), first=1)
    act(s, "place T4.8")
    assert s.decision() == "reset" and s.current_player() == 1


def test_A8_4_higher_score_resets_first_and_empty_temples_are_skipped() -> None:
    s = last_place(BOARD_LINES, scores=(0, 20))  # seat 0 acted first, but seat 1 ends higher
    act(s, "place T4.8")
    assert s.scores() == (21, 32)
    order = []
    while s.decision() == "reset":
        order.append((s.current_player(), s.view(None).reset_temple))
        act(s, texts(s)[0])
    # seat 1 has counters in all four temples; seat 0 has none in temples 2 and 4: skipped.
    assert order == [(1, 1), (1, 2), (1, 3), (1, 4), (0, 1), (0, 3)]
    assert s.round == 3


# --- A9 -------------------------------------------------------------------------------


def test_A9_3_round_limit_after_round_100() -> None:
    s = last_place(BOARD_EQUAL, kingdom=(0, 0), rnd=99, scores=(5, 3))
    act(s, "place T4.8")
    assert s.round == 100 and not s.is_terminal()
    s = last_place(BOARD_EQUAL, kingdom=(0, 0), rnd=100, scores=(5, 3))
    ev = act(s, "place T4.8")
    o = s.outcome()
    assert o is not None and o.reason == "round_limit" and o.winners == (0,)
    assert s.returns() == (1.0, -1.0) and kinds(ev)[-1] == "win"


def test_A9_3_round_100_scoring_and_reset_played_before_the_limit() -> None:
    s = last_place(BOARD_EQUAL, kingdom=(4, 4), rnd=100, scores=(5, 5))
    act(s, "place T4.8")
    assert s.decision() == "reset"
    while not s.is_terminal():
        act(s, texts(s)[0])
    o = s.outcome()
    assert o is not None and o.reason == "round_limit" and o.is_draw and s.scores() == (7, 7)
    assert s.returns() == (0.0, 0.0)


def test_A9_4_returns_before_the_end_are_zero() -> None:
    s = make_state()
    assert s.returns() == (0.0, 0.0) and s.outcome() is None


def test_round_number_reports_the_round() -> None:
    s = last_place(BOARD_EQUAL, kingdom=(0, 0), rnd=7)
    assert s.round_number() == 7
    act(s, "place T4.8")
    assert s.round_number() == 8


def test_A9_1_immediate_win_ends_mid_round() -> None:
    board = ".... .... .... | 0000 0000 000. | " + "." * 24
    s = make_state(hands=("1234", "1234"), board=board)
    arrange_both(s, "4321", "2413")
    act(s, "place T2.11")  # A6.4: no clean-up, no scoring, no further round
    assert s.decision() == "over" and s.current_player() == -1 and s.legal_actions() == []
    assert s.round == 2 and s.cartouches[0] == [4, 3, 2, 1] and s.view(None).revealed == (4, 2)
    s.validate()


def test_A9_2_both_past_40_higher_score_wins() -> None:
    s = last_place(BOARD_LINES, scores=(20, 36))
    act(s, "place T4.8")
    o = s.outcome()
    assert o is not None and o.scores == (41, 48) and o.winners == (1,) and o.reason == "scoring"
    assert s.returns() == (-1.0, 1.0)
