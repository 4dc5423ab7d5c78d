"""Seeded random-play positions for the search tests of every game."""

from __future__ import annotations

import random
from collections.abc import Callable

from engine.core import State


def random_positions(
    new: Callable[[int], State], count: int, seed: int, min_plies: int, max_plies: int
) -> list[State]:
    """``count`` positions with a real choice (> 1 legal action), each reached by playing
    ``randrange(min_plies, max_plies)`` random actions from ``new(game_seed)``."""
    rng = random.Random(seed)
    out: list[State] = []
    game = 0
    while len(out) < count:
        s = new(seed * 1000 + game)
        game += 1
        for _ in range(rng.randrange(min_plies, max_plies)):
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        if not s.is_terminal() and len(s.legal_actions()) > 1:
            out.append(s)
    return out
