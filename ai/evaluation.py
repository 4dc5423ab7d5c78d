"""Leaf evaluation for the search: rollout policies and per-game heuristic evaluators.

The search evaluates a new leaf by a *rollout*: it plays the (determinised) state forward
with a rollout policy, either to the end of the game (the true returns) or for at most
``cutoff`` actions, after which a *heuristic evaluator* estimates every seat's return in
[-1, 1]. Both are looked up by game name, so adding a game means adding an entry here
(the fallback uses ``state.scores()`` only).

Heuristics read the *determinised* state the search hands them — never the real one — so
they may look at any attribute of it: the search only ever evaluates sampled states. The
attributes each heuristic reads are listed in its docstring.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from engine.core import State

#: An evaluator: per-seat estimated returns in [-1, 1] of a non-terminal state.
Evaluator = Callable[[State], Sequence[float]]
#: A rollout policy: picks one of ``legal`` (the state's legal actions) using ``rng``.
RolloutPolicy = Callable[[State, list[int], random.Random], int]

#: ``cutoff`` value meaning "roll out to the end of the game".
FULL_ROLLOUT = -1


# ---------------------------------------------------------------------------------------
# Generic pieces
# ---------------------------------------------------------------------------------------


def squash(x: float) -> float:
    """Map an unbounded advantage to (-1, 1) (``tanh``)."""
    return math.tanh(x)


def score_evaluator(scale: float) -> Evaluator:
    """Each seat's return is ``tanh((own score - best other score) / scale)``."""

    def evaluate(state: State) -> tuple[float, ...]:
        s = state.scores()
        out = []
        for i, mine in enumerate(s):
            best_other = max(v for j, v in enumerate(s) if j != i)
            out.append(math.tanh((mine - best_other) / scale))
        return tuple(out)

    return evaluate


def team_average(values: Sequence[float], teams: Sequence[int]) -> tuple[float, ...]:
    """Give both members of a team the mean of their values (O9.3: shared return)."""
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    for v, t in zip(values, teams, strict=True):
        sums[t] = sums.get(t, 0.0) + v
        counts[t] = counts.get(t, 0) + 1
    return tuple(sums[t] / counts[t] for t in teams)


def random_policy(_state: State, legal: list[int], rng: random.Random) -> int:
    """Uniformly random legal action."""
    return legal[int(rng.random() * len(legal))]


# ---------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------

_EVALUATORS: dict[str, Evaluator] = {}
_POLICIES: dict[tuple[str, str], RolloutPolicy] = {}
#: Default cut-off per game (actions after the leaf); games not listed roll out to the end.
_DEFAULT_CUTOFF: dict[str, int] = {}

ROLLOUTS: tuple[str, ...] = ("random",)


def register_evaluator(game: str, evaluator: Evaluator, default_cutoff: int | None = None) -> None:
    _EVALUATORS[game] = evaluator
    if default_cutoff is not None:
        _DEFAULT_CUTOFF[game] = default_cutoff


def register_policy(game: str, name: str, policy: RolloutPolicy) -> None:
    _POLICIES[(game, name)] = policy


def evaluator_for(game: str) -> Evaluator:
    """The game's heuristic evaluator (fallback: score difference, scale 10)."""
    _load_game_heuristics()
    return _EVALUATORS.get(game) or score_evaluator(10.0)


def default_cutoff(game: str) -> int:
    """The game's default cut-off (``FULL_ROLLOUT`` unless measured otherwise)."""
    _load_game_heuristics()
    return _DEFAULT_CUTOFF.get(game, FULL_ROLLOUT)


def policy_for(game: str, name: str) -> RolloutPolicy | None:
    """The rollout policy ``name`` for ``game``; ``None`` for the built-in random policy
    (the search inlines it); raises ``KeyError`` for an unknown name."""
    _load_game_heuristics()
    if name == "random":
        return None
    if (game, name) in _POLICIES:
        return _POLICIES[(game, name)]
    raise KeyError(name)


def _load_game_heuristics() -> None:
    """Per-game heuristics are defined below and registered at import; kept as a hook."""
