"""What the bots know about Aton: the heuristic evaluator, the guided rollout policy and the
defaults measured for them (``bench/mcts_tune.py``, ``docs/search.md``), and the greedy
baseline (:mod:`ai.aton.greedy`)."""

from __future__ import annotations

import math
import random
from typing import Final

from ai.aton.greedy import AtonGreedy
from ai.knowledge import GameKnowledge, RolloutPolicy
from engine.aton.board import (
    BONUS,
    GREEN,
    KINDS,
    KINGDOM_SIZE,
    NUM_ACTIONS,
    NUM_SQUARES,
    PLACE_BASE,
    REMOVE_BASE,
    RESET_BASE,
    SLOTS,
    YELLOW,
)
from engine.aton.state import AtonState, scoring_lines

#: Scale of the Aton advantage (in points) mapped through tanh.
SCALE: Final = 12.0
_YELLOW_SQUARES: Final = len(YELLOW)
_GREEN_SQUARES: Final = len(GREEN)


def counters_to_win(
    temples: tuple[tuple[int, int], ...], yellow: tuple[int, int], green: tuple[int, int], p: int
) -> int:
    """The fewest counters seat ``p`` still needs for an instant win (A6.4): a temple, the
    yellow or the green squares where the opponent has none; 99 when none is open."""
    o = 1 - p
    d = 99
    for temple in temples:
        if temple[o] == 0:
            d = min(d, SLOTS - temple[p])
    if yellow[o] == 0:
        d = min(d, _YELLOW_SQUARES - yellow[p])
    if green[o] == 0:
        d = min(d, _GREEN_SQUARES - green[p])
    return d


def evaluate(state: AtonState) -> tuple[float, float]:
    """Aton heuristic (returns for seats 0 and 1, zero-sum, in (-1, 1)).

    The advantage of seat 0, in points, is

    * the score difference;
    * plus the next scoring round as it stands (A8.2), weighted by how full the Kingdom of
      the Dead is (0.4 + 0.6 × fill);
    * plus a threat term per player for the instant wins (A6.4): with ``d`` the fewest
      counters still missing for a temple, the yellow or the green squares (only where the
      opponent has none), ``0.5 × max(0, 8 − d)²``.

    Seat 0's value is ``tanh(advantage / 12)``, seat 1's its negation.
    """
    t = state.tally()
    projected = 0
    for _, p0, p1 in scoring_lines(t):
        projected += p0 - p1
    kingdom = state.kingdom
    fill = (kingdom[0] + kingdom[1]) / KINGDOM_SIZE
    score = state.score
    adv = score[0] - score[1] + (0.4 + 0.6 * fill) * projected
    temples, yellow, green = t.temples, t.yellow, t.green
    for p in (0, 1):
        d = counters_to_win(temples, yellow, green, p)
        if d < 8:
            threat = 0.5 * (8 - d) ** 2
            adv += threat if p == 0 else -threat
    v = math.tanh(adv / SCALE)
    return (v, -v)


def _static_square_values() -> tuple[float, ...]:
    """A square's static worth for rollouts: higher temples, blue, grey and bonus squares."""
    bonus = dict(BONUS)
    out = []
    for sq in range(NUM_SQUARES):
        v = 1.0 + 0.3 * (sq // SLOTS) + 1.5 * bonus.get(sq, 0)
        if KINDS[sq] == "B":
            v += 1.5
        elif KINDS[sq] == "K":
            v += 1.0
        out.append(v)
    return tuple(out)


_SQUARE_VALUE: Final = _static_square_values()
#: Static value of the square of each remove/place action id.
_ACTION_VALUE: Final[tuple[float, ...]] = tuple(
    _SQUARE_VALUE[(a - REMOVE_BASE) % NUM_SQUARES] if REMOVE_BASE <= a < RESET_BASE else 0.0
    for a in range(NUM_ACTIONS)
)


def guided_action(state: AtonState, rng: random.Random) -> int:
    """Light guidance for Aton rollouts: for a placement or a removal of the opponent's
    counter, the better (by a static square value: blue, grey, bonus, higher temples) of
    two random legal squares; for a removal of one's own counter the worse; anything else
    uniformly at random."""
    n = state.num_legal_actions()
    a = state.legal_action_at(int(rng.random() * n))
    if n == 1 or a < REMOVE_BASE or a >= RESET_BASE:
        return a
    b = state.legal_action_at(int(rng.random() * n))
    va = _ACTION_VALUE[a]
    vb = _ACTION_VALUE[b]
    if a < PLACE_BASE and state.removal_target == state.current:  # A6.2, cartouche 2 = 1
        return a if va <= vb else b
    return a if va >= vb else b


class AtonKnowledge(GameKnowledge[AtonState]):
    """Aton for the search and the greedy baseline. Defaults measured with
    ``bench/mcts_tune.py`` (``bench/results/notes/2026-11-29-search-defaults.md``): guided
    rollouts, cut-off 20."""

    game: str | None = "aton"
    default_rollout = "guided"

    def __init__(self) -> None:
        self._greedy = AtonGreedy()

    def default_cutoff(self, players: int) -> int:
        return 20

    def evaluate(self, state: AtonState) -> tuple[float, float]:
        return evaluate(state)

    def guided_policy(self) -> RolloutPolicy[AtonState]:
        return guided_action

    def greedy_action(self, state: AtonState, rng: random.Random) -> int:
        return self._greedy.choose(state, rng)
