"""The greedy baselines: never peek, deterministic, take obvious wins, beat random clearly."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ai.api import BotSpecError, make_bot
from ai.arena import ArenaConfig, run_arena
from ai.greedy import GreedyBot
from engine.core import State
from engine.registry import get_game


def playout_positions(game: str, players: int, seeds: range, every: int, options: Any = None) -> list[State]:
    """Positions met along random games (a copy every ``every`` actions)."""
    out: list[State] = []
    for seed in seeds:
        state = get_game(game).new_initial_state(players, seed, options or {})
        rng = random.Random(seed)
        ply = 0
        while not state.is_terminal():
            if ply % every == 0:
                out.append(state.clone())
            state.apply(rng.choice(state.legal_actions()))
            ply += 1
    return out


# ---------------------------------------------------------------------------------------
# No peeking (A10.4 / O6.4) and determinism
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game,players,options",
    [("aton", 2, None), ("osirium", 2, None), ("osirium", 3, None), ("osirium", 4, {"teams": True})],
)
def test_greedy_choice_is_the_same_in_every_state_its_player_cannot_tell_apart(
    game: str, players: int, options: Any
) -> None:
    bot = GreedyBot()
    positions = playout_positions(game, players, range(6), every=3, options=options)
    assert len(positions) > 100
    rng = random.Random(99)
    decisions: set[str] = set()
    for i, state in enumerate(positions):
        player = state.current_player()
        decisions.add(state.decision())
        chosen = bot.choose(state, seed=i).action
        assert chosen in state.legal_actions()
        for _ in range(2):
            other = state.sample_consistent_state(player, rng)
            assert other.view(player) == state.view(player)
            assert bot.choose(other, seed=i).action == chosen, (game, i, state.decision())
    # The positions cover the game's decision kinds, not only one of them.
    assert len(decisions) >= 4


def test_greedy_is_deterministic_given_the_seed() -> None:
    positions = playout_positions("aton", 2, range(2), every=5)
    positions += playout_positions("osirium", 2, range(2), every=7)
    bot = GreedyBot()
    for i, state in enumerate(positions):
        assert bot.choose(state, seed=i).action == bot.choose(state.clone(), seed=i).action


def test_greedy_spec() -> None:
    assert make_bot("greedy").name == "greedy"
    with pytest.raises(BotSpecError):
        make_bot("greedy:fast")


# ---------------------------------------------------------------------------------------
# Aton: obvious moves
# ---------------------------------------------------------------------------------------


def aton_place_position(board: list[int], c3: int, c4: int, player: int = 0) -> Any:
    """An Aton state where ``player`` places ``c4`` counters in temples 1..c3 (A6.3)."""
    from engine.aton.state import Phase

    s: Any = get_game("aton").new_initial_state(seed=5)
    s.board = list(board)
    s.derive_board()
    for p in (0, 1):
        s.stock[p] = 29 - board.count(p)
    s.round = 3
    s.phase = Phase.PLACE
    s.current = player
    s.first_player = player
    s.acting_second = 0
    s.cartouches[player] = [1, 2, c3, c4]
    s.cartouches[1 - player] = [1, 2, 1, 1]
    s.revealed = [4, 2] if player == 0 else [2, 4]
    s.hands = [[], []]
    s.remaining = c4
    return s


def test_aton_greedy_completes_a_temple_for_the_instant_win() -> None:
    """A6.4: 11 of temple 1's squares are ours; the last one wins at once, although blue
    and +2 squares in temple 4 look attractive otherwise."""
    board = [-1] * 48
    for i in range(11):
        board[i] = 0
    board[30] = 1  # a few opponent counters elsewhere
    board[40] = 1
    state = aton_place_position(board, c3=4, c4=1)
    action = GreedyBot().choose(state, seed=1).action
    assert state.action_to_string(action) == "place T1.11"
    state.apply(action)
    assert state.is_terminal() and state.outcome().winners == (0,)


def test_aton_greedy_completes_the_yellow_squares_over_two_placements() -> None:
    """A6.4 (b): 12 of 14 yellow squares; two placements left reach the last two (one in
    temple 4, allowed by cartouche 3 = 4)."""
    from engine.aton.board import YELLOW

    board = [-1] * 48
    missing = [YELLOW[5], YELLOW[-1]]
    for i in YELLOW:
        if i not in missing:
            board[i] = 0
    state = aton_place_position(board, c3=4, c4=2)
    bot = GreedyBot()
    for k in range(2):
        action = bot.choose(state, seed=k).action
        assert action - 306 in missing
        state.apply(action)
    assert state.is_terminal() and state.outcome().reason == "yellow"


def test_aton_greedy_exchanges_a_weak_hand_and_keeps_a_strong_one() -> None:
    state: Any = get_game("aton").new_initial_state(seed=3)
    assert state.decision() == "exchange" and state.current_player() == 0
    bot = GreedyBot()
    state.hands[0] = [1, 1, 1, 2]
    state.decks[0] = [v for v in (1, 2, 3, 4) for _ in range(9)][:32]
    assert state.action_to_string(bot.choose(state, seed=0).action) == "exchange"
    state.hands[0] = [2, 3, 4, 4]
    assert state.action_to_string(bot.choose(state, seed=0).action) == "keep"


def test_aton_greedy_arranges_for_placements_in_high_temples() -> None:
    """With 1, 2, 3, 4 on an empty board in round 1, the greedy puts the high cards on
    cartouches 3 and 4 (temples and placements)."""
    from engine.aton.state import Phase

    state: Any = get_game("aton").new_initial_state(seed=3)
    state.phase = Phase.ARRANGE
    state.hands[0] = [1, 2, 3, 4]
    text = state.action_to_string(GreedyBot().choose(state, seed=0).action)
    values = [int(x) for x in text.split()[1]]
    assert {values[2], values[3]} == {3, 4}


# ---------------------------------------------------------------------------------------
# Osirium: obvious moves
# ---------------------------------------------------------------------------------------


def osirium_with_blue_triad(seed: int = 2) -> Any:
    """A 2-player Osirium state, seat 0 to play, with three linked blue amulets on row 0 and
    the Triad of blue (ritual 0) in seat 0's slot 0."""
    from engine.osirium.board import TYPE_BY_NAME

    s: Any = get_game("osirium").new_initial_state(2, seed)
    single, straight = TYPE_BY_NAME["blue-single"], TYPE_BY_NAME["blue-straight"]
    for cell, t, rot in ((0, single, 1), (1, straight, 1), (2, single, 3)):  # E, E+W, W
        for pile in (s.draw_pile, s.market, s.hands[1]):
            if t in pile:
                pile[pile.index(t)] = -2
                break
        s.draw_pile = [x for x in s.draw_pile if x != -2]
        s._put(cell, t, rot)
    s.simple_rituals.append(s.ritual_slots[0][0])
    if 0 in s.simple_rituals:
        s.simple_rituals.remove(0)
    for q in range(2):
        if 0 in s.ritual_slots[q]:
            s.ritual_slots[q][s.ritual_slots[q].index(0)] = s.simple_rituals.pop(0)
    s.ritual_slots[0][0] = 0
    return s


def test_osirium_greedy_casts_an_available_ritual() -> None:
    state = osirium_with_blue_triad()
    action = GreedyBot().choose(state, seed=0).action
    info = state.game.action_info(action)
    assert info.kind == "cast" and info.fields["slot"] == 0
    assert state.legal_actions().count(action) == 1


def test_osirium_greedy_ends_the_game_with_a_winning_fifth_ritual_but_not_a_losing_one() -> None:
    """O5.6 / O8.1: a 5th cast ends the game at once; the greedy takes it when ahead."""
    state = osirium_with_blue_triad()
    state.completed[0] = [4 * 2, 5 * 2, 6 * 2, 7 * 2]  # four rituals done, by Order
    state.ankhs[0] = 12
    state.ankhs[1] = 6
    bot = GreedyBot()
    action = bot.choose(state, seed=0).action
    assert state.game.action_info(action).kind == "cast"
    while not state.is_terminal():
        state.apply(bot.choose(state, seed=1).action)
        assert state.current_player() in (0, -1)
    outcome = state.outcome()
    assert outcome is not None and outcome.reason == "fifth_ritual" and outcome.winners == (0,)
    # Far behind, the same cast would lose the game: the greedy does not end it.
    behind = osirium_with_blue_triad()
    behind.completed[0] = [4 * 2, 5 * 2, 6 * 2, 7 * 2]
    behind.ankhs[0] = 2
    behind.ankhs[1] = 30
    action = bot.choose(behind, seed=0).action
    assert behind.game.action_info(action).kind != "cast"


def test_osirium_greedy_draws_the_market_card_that_completes_a_ritual() -> None:
    """Two linked blues and the Triad of blue: the market's blue single (which can link to
    them) beats yellow cards, although yellow is a colour its other rituals need too."""
    from engine.osirium.board import TYPE_BY_NAME
    from engine.osirium.state import Phase

    bot = GreedyBot()
    for seed in range(8):
        state = osirium_with_blue_triad()
        t2 = state._take(2)  # leave two linked blues (cells 0 and 1; cell 1 still points east)
        state.draw_pile.append(t2)
        state.ritual_slots[0][1] = 13  # Offering of yellow and blue: 2 yellow + 1 blue
        state.ritual_slots[0][2] = 3  # Triad of yellow
        yellow = TYPE_BY_NAME["yellow-single"]
        state.market = [yellow, yellow, TYPE_BY_NAME["blue-single"], yellow]
        state.phase = Phase.DRAW  # the draw step, right after a placement (O3.2)
        state.placed = state.started = True
        state.hands[0] = state.hands[0][:3]
        assert state.decision() == "draw"
        action = bot.choose(state, seed=seed).action
        assert state.action_to_string(action) == "draw market2"


# ---------------------------------------------------------------------------------------
# Strength against random (a generous threshold; the measured figures are in docs/arena.md)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game,players,games,minimum", [("aton", 2, 20, 17), ("osirium", 2, 20, 17), ("osirium", 4, 14, 9)]
)
def test_greedy_beats_random_clearly(game: str, players: int, games: int, minimum: int) -> None:
    config = ArenaConfig(
        game, ("greedy", "random"), games=games, seed=7, players=players, lineup="one-vs-rest"
    )
    (stats,) = run_arena(config).pairing_stats()
    assert stats.a_wins.successes >= minimum, stats


def test_aton_greedy_keeps_placing_after_completing_a_temple_mid_step() -> None:
    """A6.4 is checked when the placement step ends: with temple 4 already full of our
    counters and placements left, any square still wins."""
    board = [-1] * 48
    for i in range(36, 48):
        board[i] = 0
    state = aton_place_position(board, c3=4, c4=2)
    action = GreedyBot().choose(state, seed=0).action
    assert action in state.legal_actions()
    state.apply(action)
    state.apply(GreedyBot().choose(state, seed=1).action)
    assert state.is_terminal() and state.outcome().reason == "temple"
