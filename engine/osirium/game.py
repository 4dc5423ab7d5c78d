"""The Osirium game descriptor and factory (O1, O2, O9)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from engine.core import (
    ActionInfo,
    Game,
    GameDescriptor,
    GameOptionsError,
    OptionSpec,
    State,
    check_num_players,
    check_seed,
    resolve_options,
)
from engine.osirium import actions as A
from engine.osirium.cards import DEITIES, MAX_ROUNDS
from engine.osirium.codec import decode, encode, encode_v1
from engine.osirium.state import OsiriumState
from engine.rng import SerialRng, game_rng

_DEITY_IDS: Final = tuple(d.name.lower() for d in DEITIES)


class OsiriumGame(Game):
    """Osirium for 2–4 players, optionally in two teams with 4 (O9.3)."""

    descriptor = GameDescriptor(
        name="osirium",
        title="Osirium",
        min_players=2,
        max_players=4,
        options=(
            OptionSpec(
                "teams",
                "bool",
                False,
                "4 players only: seats 0 and 2 play against seats 1 and 3 (O9.3)",
            ),
            OptionSpec(
                "deities",
                "str_list",
                (),
                "one distinct deity per seat, in seat order (O2.1); default: seat i takes the i-th of "
                "Isis, Anubis, Bastet, Seth",
                choices=_DEITY_IDS,
            ),
        ),
        hidden_information=True,
        num_distinct_actions=A.NUM_ACTIONS,
        max_rounds=MAX_ROUNDS,
        description="Place amulets on a shared 4×4 board, link them by their arrows and cast "
        "rituals by Order or Chaos; the 5th ritual ends the game.",
        team_player_counts=(4,),
    )

    def __init__(self) -> None:
        OsiriumState.game = self

    def new_initial_state(
        self,
        num_players: int | None = None,
        seed: int = 0,
        options: Mapping[str, Any] | None = None,
        *,
        rng: SerialRng | None = None,
    ) -> OsiriumState:
        n = check_num_players(self.descriptor, num_players)
        check_seed(self.descriptor, seed)
        opts = dict(options or {})
        deities_in = opts.get("deities")
        if isinstance(deities_in, str):
            opts["deities"] = deities_in.lower()
        elif isinstance(deities_in, (list, tuple)):
            opts["deities"] = tuple(d.strip().lower() if isinstance(d, str) else d for d in deities_in)
        o = resolve_options(self.descriptor, opts)
        teams = o["teams"]
        if teams and n != 4:
            raise GameOptionsError(f"osirium: teams need 4 players, not {n}")
        names: tuple[str, ...] = o["deities"] or _DEITY_IDS[:n]
        if len(names) != n:
            raise GameOptionsError(
                f"osirium: option deities needs one deity per seat ({n}), got {len(names)}"
            )
        if len(set(names)) != n:
            raise GameOptionsError(f"osirium: each deity at most once (O9.2), got {', '.join(names)}")
        chance = rng if rng is not None else game_rng("osirium", seed)
        return OsiriumState.new(n, chance, [_DEITY_IDS.index(d) for d in names], teams)

    def serialize_state(self, state: State, *, version: int | None = None) -> str:
        if not isinstance(state, OsiriumState):
            raise TypeError(f"osirium: cannot serialise a {type(state).__name__}")
        if version == 1:
            return encode_v1(state)
        return encode(state) if version is None else encode(state, version)

    def deserialize_state(self, data: object, *, validate: bool = True) -> OsiriumState:
        """A state from its text (``osirium:3:``, or an earlier release's ``osirium:2:`` or
        ``osirium:1:``), validated unless ``validate`` is false (version 3 only);
        :class:`~engine.core.StateFormatError` otherwise."""
        return decode(data, validate=validate)

    def action_info(self, action: object) -> ActionInfo:
        return A.action_info(action)

    def string_to_action(self, text: str) -> int:
        return A.string_to_action(text)
