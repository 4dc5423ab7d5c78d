"""The contract between bots and their callers (arena, CLI, service): the :class:`Bot`
protocol and its small value types.

A bot is made from a spec string (``"random"``, ``"greedy"``, ``"mcts:medium"``,
``"mcts:iterations=2000"``...) by :func:`ai.api.make_bot` and asked for a :class:`Decision`
for the player to act in a state. A bot must decide from that player's information only
(A10.4 / O6.4): it may read ``state.view(player)`` or search
``state.sample_consistent_state(player, rng)``, never the hidden parts of ``state``.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Protocol

from engine.core import State


class BotSpecError(ValueError):
    """A bot spec string names an unknown bot, preset or parameter."""


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """How much a search may spend: iterations and/or wall-clock milliseconds (whichever
    runs out first). ``None`` means no limit of that kind; at least one should be set."""

    iterations: int | None = None
    milliseconds: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ActionStat:
    action: int
    visits: int
    mean_value: float


@dataclasses.dataclass(frozen=True, slots=True)
class Diagnostics:
    iterations: int = 0
    elapsed_seconds: float = 0.0
    iterations_per_second: float = 0.0
    #: Root statistics, most visited first.
    actions: tuple[ActionStat, ...] = ()
    chosen_value: float = 0.0
    #: The most-visited line from the root (action ids).
    principal_variation: tuple[int, ...] = ()
    #: Whether the search stopped because of the deadline / cancel check.
    interrupted: bool = False
    workers: int = 1
    #: Sampled worlds drawn uniformly because their belief weights were unusable
    #: (``MctsParams.belief``; counted by the server's ``heka_belief_fallbacks_total``).
    belief_fallbacks: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    action: int
    diagnostics: Diagnostics


class Bot(Protocol):
    """Something that picks an action for the player to act."""

    @property
    def name(self) -> str: ...

    def choose(
        self,
        state: State,
        *,
        seed: int = 0,
        budget: Budget | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Decision:
        """Pick an action for ``state.current_player()``.

        ``seed`` makes the choice reproducible; ``budget`` overrides the bot's own budget;
        ``deadline`` is a ``time.monotonic()`` instant after which the bot must return the
        best action found so far; ``should_stop`` is polled for cancellation.
        """
        ...


class RandomBot:
    """Uniformly random legal action (seeded)."""

    name = "random"

    def choose(
        self,
        state: State,
        *,
        seed: int = 0,
        budget: Budget | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Decision:
        actions = state.legal_actions()
        if not actions:
            raise ValueError("the game is over: there is no action to choose")
        action = random.Random(seed).choice(actions)
        return Decision(action, Diagnostics())
