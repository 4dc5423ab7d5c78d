"""The Aton game descriptor and factory (rules: ``shared/rules/aton.md``, A1–A11)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.aton import board
from engine.aton.codec import decode, encode
from engine.aton.state import AtonState
from engine.core import (
    ActionInfo,
    Game,
    GameDescriptor,
    State,
    check_num_players,
    check_seed,
    resolve_options,
)
from engine.rng import SerialRng


class AtonGame(Game):
    """Aton for two players (A1.1). No creation options."""

    descriptor = GameDescriptor(
        name="aton",
        title="Aton",
        min_players=2,
        max_players=2,
        options=(),
        hidden_information=True,
        num_distinct_actions=board.NUM_ACTIONS,
        max_rounds=board.MAX_ROUNDS,
        # A3.3: four cards on four cartouches, at most 4! orders (A3.2's decision has two).
        max_secret_choices=24,
        description=(
            "Two priests fight over four temples: secretly arrange four cards on cartouches "
            "(points, turn order and removals, allowed temples, placements), fill a temple or "
            "all yellow/green squares, or reach 40 points."
        ),
    )

    def __init__(self) -> None:
        AtonState.game = self

    def new_initial_state(
        self,
        num_players: int | None = None,
        seed: int = 0,
        options: Mapping[str, Any] | None = None,
        *,
        rng: SerialRng | None = None,
    ) -> AtonState:
        check_num_players(self.descriptor, num_players)
        resolve_options(self.descriptor, options)
        return AtonState.initial(check_seed(self.descriptor, seed), rng)

    def serialize_state(self, state: State, *, version: int | None = None) -> str:
        if not isinstance(state, AtonState):
            raise TypeError(f"aton: cannot serialise a {type(state).__name__}")
        return encode(state) if version is None else encode(state, version)

    def deserialize_state(self, data: object, *, validate: bool = True) -> AtonState:
        return decode(data, validate=validate)

    def action_info(self, action: object) -> ActionInfo:
        return board.action_info(action)

    def action_to_string(self, action: int) -> str:
        if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < board.NUM_ACTIONS:
            return board.ACTION_TEXTS[action]
        return board.action_info(action).text  # raises ActionParseError

    def string_to_action(self, text: str) -> int:
        return board.string_to_action(text)
