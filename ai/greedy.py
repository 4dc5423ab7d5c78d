"""The greedy baseline bot: one decision by rules of thumb, from the acting player's view only.

``make_greedy("")`` (spec ``greedy``) returns a :class:`GreedyBot`, which asks the game's
knowledge (:meth:`ai.knowledge.GameKnowledge.greedy_action`) for its choice: Aton's and
Osirium's rules of thumb are in :mod:`ai.aton.greedy` and :mod:`ai.osirium.greedy`; any
other game gets an action that wins at once in a world sampled consistently with the
player's view, else a random one.

Ties between equally scored actions are broken by a ``random.Random(seed)``, so a greedy bot
is deterministic given the seed, and it never reads hidden parts of the state: its choice is
the same in every state that gives its player the same view.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ai.bot import BotSpecError, Budget, Decision, Diagnostics
from ai.games import knowledge_for
from ai.knowledge import GameKnowledge
from engine.core import State


class GreedyBot:
    """The greedy baseline (see the module docstring). ``knowledge``: the game's, by default
    :func:`ai.games.knowledge_for` the state's game."""

    name = "greedy"

    def __init__(self, knowledge: GameKnowledge[State] | None = None) -> None:
        self.knowledge = knowledge

    def choose(
        self,
        state: State,
        *,
        seed: int = 0,
        budget: Budget | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Decision:
        legal = state.legal_actions()
        if not legal:
            raise ValueError("the game is over: there is no action to choose")
        if len(legal) == 1:
            return Decision(legal[0], Diagnostics())
        knowledge = self.knowledge or knowledge_for(state.game)
        action = knowledge.greedy_action(state, random.Random(seed))
        return Decision(action, Diagnostics())


def make_greedy(params: str) -> GreedyBot:
    """Factory for :func:`ai.api.make_bot`: spec ``greedy`` (no parameters)."""
    if params.strip():
        raise BotSpecError(f"the greedy bot takes no parameters, got {params!r}")
    return GreedyBot()
