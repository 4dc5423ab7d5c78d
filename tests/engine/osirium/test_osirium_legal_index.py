"""Counting and indexing Osirium's legal actions without the list (O10; the rollouts' path:
``num_legal_actions``, ``legal_action_at``, ``num_cast_actions``), against the list itself,
with every deity's power (O7) in play and the guided rollouts' preference for casts."""

from __future__ import annotations

import itertools
import random

import pytest

from engine.osirium import GAME, OsiriumState
from engine.osirium import actions as A

DEITY_SEATS = ["anubis,bastet,seth,isis", "isis,seth,bastet,anubis", "seth,isis,anubis,bastet"]


def check_indexing(s: OsiriumState) -> None:
    # Counted first on a copy whose connected sets (O4.2) are not grouped yet, as in a
    # rollout, where the board changes every turn; then with them grouped.
    fresh = s.clone()
    fresh._sets_by_signature = None
    casts = fresh.num_cast_actions()
    count = fresh.num_legal_actions()
    legal = s.legal_actions()
    assert casts == sum(1 for a in legal if a >= A.CAST)
    assert count == len(legal)
    assert s.num_legal_actions() == len(legal)
    assert [s.legal_action_at(k) for k in range(len(legal))] == legal
    assert s.num_cast_actions() == sum(1 for a in legal if a >= A.CAST)
    with pytest.raises(IndexError):
        s.legal_action_at(len(legal))


@pytest.mark.parametrize(("players", "deities"), list(itertools.product((2, 3, 4), DEITY_SEATS)))
def test_index_matches_the_list_with_every_power(players: int, deities: str) -> None:
    """Seeded random games, each seat's power used whenever it is drawn; every decision of
    every phase is checked, and the powers' blocks (O7) come up in each game."""
    seats = ",".join(deities.split(",")[:players])
    powers_seen: set[int] = set()
    for seed in range(6):
        s = GAME.new_initial_state(players, seed, {"deities": seats})
        rng = random.Random(seed)
        while not s.is_terminal():
            check_indexing(s)
            legal = s.legal_actions()
            powers = [a for a in legal if A.ANUBIS <= a < A.PLACE]
            a = rng.choice(powers) if powers and rng.random() < 0.3 else rng.choice(legal)
            if A.ANUBIS <= a < A.PLACE:
                powers_seen.add(a)
            s.apply(a)
        assert s.num_legal_actions() == 0 and s.num_cast_actions() == 0
    assert powers_seen, "no power was used: the power blocks went unchecked"


def test_index_matches_the_list_on_a_full_board() -> None:
    """O3.1a: on a full board the clear actions come before the powers; Isis has no move."""
    checked = 0
    for seed in range(40):
        s = GAME.new_initial_state(2, seed, {"deities": "isis,seth"})
        rng = random.Random(seed)
        while not s.is_terminal():
            if s.occupied == (1 << 16) - 1:
                check_indexing(s)
                checked += 1
            legal = s.legal_actions()
            places = [a for a in legal if A.PLACE <= a < A.CAST]  # fill the board quickly
            s.apply(rng.choice(places) if places else rng.choice(legal))
    assert checked > 0
