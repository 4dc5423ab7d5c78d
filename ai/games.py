"""The built-in games' knowledge (:mod:`ai.knowledge`), by game name.

A plain table, filled here and nowhere else: the bots built from a spec string
(``mcts:medium``, ``greedy``) look up the knowledge of the game they are asked to play; code
that builds a bot itself may pass any :class:`~ai.knowledge.GameKnowledge` instead.
"""

from __future__ import annotations

from typing import cast

from ai.aton import AtonKnowledge
from ai.knowledge import GameKnowledge
from ai.osirium import OsiriumKnowledge
from engine.core import Game, State

_KNOWLEDGE: dict[str, GameKnowledge[State]] = {
    # Each entry is only ever used with states of its own game (knowledge_for checks the
    # name), which is what the casts from GameKnowledge[AtonState] etc. stand for.
    "aton": cast(GameKnowledge[State], AtonKnowledge()),
    "osirium": cast(GameKnowledge[State], OsiriumKnowledge()),
}
_GENERIC: GameKnowledge[State] = GameKnowledge()


def knowledge_for(game: Game) -> GameKnowledge[State]:
    """The bots' knowledge of ``game``: its own for a built-in game, else the generic
    knowledge (scores only, random rollouts to the end)."""
    knowledge = _KNOWLEDGE.get(game.name)
    if knowledge is None or knowledge.game != game.name:
        return _GENERIC
    return knowledge
