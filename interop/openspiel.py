"""heka's Aton and Osirium as OpenSpiel Python games (the ``openspiel`` extra).

::

    pip install 'heka[openspiel]'

    import pyspiel
    import interop.openspiel                       # registers heka_aton and heka_osirium
    game = pyspiel.load_game("heka_osirium", {"players": 2, "seed": 7})
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    print(state.returns())

Importing this module registers both games with ``pyspiel`` (OpenSpiel's own convention for
Python games; :func:`register` is idempotent). Every OpenSpiel algorithm that works on
sequential imperfect-information games with sampled chance can then run on them — for
example ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` (``bench/openspiel_race.py``).
The rules stay in ``engine/``: a state here only holds a heka state and forwards to the
public game interface of ``engine/core.py``.

How heka maps onto OpenSpiel
----------------------------

* **Games and parameters.** ``heka_aton`` (``players`` = 2, ``seed``) and ``heka_osirium``
  (``players`` 2–4, ``seed``, ``teams``, ``deities`` as a comma-separated string). A game
  loaded with ``seed=s`` deals exactly heka's ``new_initial_state(players, s, options)``:
  the same cards, and the same randomness still to come.
* **Chance: ``SAMPLED_STOCHASTIC``.** heka resolves chance inside ``apply`` from a generator
  stored in the state (``engine/rng.py``), so there are no chance nodes: ``current_player()``
  is never ``CHANCE`` and ``chance_outcomes()`` is never needed. Two states loaded with the
  same seed give the same game; a different deal needs another ``seed``.
* **Actions** are heka's action ids, stable within a game, so ``num_distinct_actions`` is
  the descriptor's (Aton 402, Osirium 395,319: legal actions are a sparse list, which
  OpenSpiel handles). ``action_to_string`` is heka's text. Like OpenSpiel's own games,
  ``apply_action`` trusts its caller (heka's fast path); use
  ``apply_action_with_legality_check`` for untrusted input.
* **Information state = the player's view.** ``information_state_string(p)`` and
  ``observation_string(p)`` both render ``view(p)`` (rules A10 / O6): every field the view
  compares, in order, so two states give equal strings for ``p`` exactly when ``p``'s views
  are equal. heka's views are what a seat may see *now*, not a perfect-recall history; they
  are the partition heka's determinisation respects, which is what an algorithm that
  resamples needs (OpenSpiel's ISMCTS asserts that a resampled state has the root's
  information state). Algorithms that need perfect recall (CFR, sequence-form methods)
  would see an imperfect-recall abstraction — and these games are far too large for them.
  No tensors are provided.
* **Resampling.** ``resample_from_infostate(p, sampler)`` is heka's
  ``sample_consistent_state(p, random.Random(seed))`` with the seed drawn from
  ``sampler()`` (any callable returning a float in [0, 1): OpenSpiel's
  ``UniformProbabilitySampler``, or a seeded generator's ``uniform`` for reproducible
  searches). The resampled state has an empty OpenSpiel history: heka re-deals a state,
  not a history, and the real history would name hidden actions.
* **Returns** are heka's (A9.4 / O8.5): +1 sole winner, −1 loser, 0 for a draw or a shared
  win; zero-sum with two players or two teams, general-sum otherwise. Terminal rewards only.
* **Clone and serialisation.** ``clone()`` is heka's ``clone()``; ``serialize()`` (OpenSpiel
  pickles a Python state's attributes) stores heka's exact state text, and
  ``game.deserialize_state`` reads it back.
"""

from __future__ import annotations

import dataclasses
import operator
import random
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import pyspiel

from engine import TERMINAL, get_game
from engine.core import Game as HekaGame
from engine.core import State as HekaState
from engine.core import View

__all__ = [
    "GAME_NAMES",
    "AtonSpielGame",
    "HekaSpielGame",
    "HekaSpielState",
    "OsiriumSpielGame",
    "info_state_text",
    "max_game_length",
    "register",
]

#: OpenSpiel short name -> heka game name.
GAME_NAMES: dict[str, str] = {"heka_aton": "aton", "heka_osirium": "osirium"}

#: Plies bounding one round (Aton) or one seat's turn without casts (Osirium), for
#: ``max_game_length``. Aton, per round: 2 exchange decisions + 2 arrangements + per seat at
#: most 2 removals and 4 placements + per seat at most 4 reset choices (A3, A6, A8.4) = 24.
#: Osirium, per seat and turn: a power, a clear, a placement, a draw and the end (or a
#: pass) = 5; plus, per seat and game, at most 5 casts of 1 cast + at most 5 breaks + 1
#: refill each (O3, O5; the 5th cast ends the game). Checked on random games by
#: ``tests/interop/test_openspiel.py``.
ATON_PLIES_PER_ROUND = 24
OSIRIUM_PLIES_PER_TURN = 5
OSIRIUM_CAST_PLIES_PER_SEAT = 5 * (1 + 5 + 1)

_SPIEL_TERMINAL = int(pyspiel.PlayerId.TERMINAL)

_PARAMETERS: dict[str, dict[str, Any]] = {
    "heka_aton": {"players": 2, "seed": 0},
    "heka_osirium": {"players": 2, "seed": 0, "teams": False, "deities": ""},
}


def max_game_length(heka_game: HekaGame, players: int) -> int:
    """An upper bound on the plies of a game (from the round limit, A9.3 / O8.4)."""
    rounds = heka_game.descriptor.max_rounds
    if heka_game.name == "aton":
        return rounds * ATON_PLIES_PER_ROUND
    return players * (rounds * OSIRIUM_PLIES_PER_TURN + OSIRIUM_CAST_PLIES_PER_SEAT)


# ---------------------------------------------------------------------------------------
# Information-state strings
# ---------------------------------------------------------------------------------------

_VIEW_FIELDS: dict[type, Callable[[View], tuple[object, ...]]] = {}


def _view_getter(cls: type) -> Callable[[View], tuple[object, ...]]:
    """The fields a view compares (``__eq__``), in order, as one getter returning a tuple."""
    names = [f.name for f in dataclasses.fields(cls) if f.compare]
    getter = operator.attrgetter(*names)
    if len(names) == 1:  # attrgetter of one name returns the value, not a 1-tuple
        return lambda v: (getter(v),)
    return getter


def info_state_text(state: HekaState, player: int | None) -> str:
    """``repr`` of the compared fields of ``state.view(player)``: equal strings exactly when
    the views are equal (their fields are immutable scalars and tuples)."""
    view = state.view(player)
    cls = type(view)
    getter = _VIEW_FIELDS.get(cls)
    if getter is None:
        getter = _VIEW_FIELDS[cls] = _view_getter(cls)
    return repr(getter(view))


# ---------------------------------------------------------------------------------------
# The heka state inside an OpenSpiel state
# ---------------------------------------------------------------------------------------


class _Held:
    """The heka state of an OpenSpiel state (``state``), made on first use.

    OpenSpiel clones a Python state by making a new initial state and deep-copying the old
    one's attributes into it, and serialises it by pickling them. Holding the heka state
    here makes the first cheap (the new initial state is never dealt), the deep copy heka's
    ``clone()`` and the pickle heka's exact state text. ``state`` is a plain slot once set
    (read on every call OpenSpiel makes); ``__getattr__`` runs only while it is unset.
    """

    __slots__ = ("_make", "state")

    state: HekaState

    def __init__(self, state: HekaState | None, make: Callable[[], HekaState] | None = None) -> None:
        if state is not None:
            self.state = state
        self._make = make

    def __getattr__(self, name: str) -> HekaState:
        if name != "state" or self._make is None:
            raise AttributeError(name)
        s = self.state = self._make()
        self._make = None
        return s

    def __deepcopy__(self, memo: dict[int, object]) -> _Held:
        try:
            return _Held(object.__getattribute__(self, "state").clone())
        except AttributeError:  # not made yet: the copy makes its own
            return _Held(None, self._make)

    def __reduce__(self) -> tuple[Callable[[str, str], _Held], tuple[str, str]]:
        s = self.state
        return (_restore, (s.game.name, s.serialize()))


def _restore(game_name: str, text: str) -> _Held:
    return _Held(get_game(game_name).deserialize_state(text))


# ---------------------------------------------------------------------------------------
# Game, state, observer
# ---------------------------------------------------------------------------------------


def _game_type(short_name: str, utility: Any) -> Any:
    heka_game = get_game(GAME_NAMES[short_name])
    d = heka_game.descriptor
    return pyspiel.GameType(
        short_name=short_name,
        long_name=f"heka {d.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=d.max_players,
        min_num_players=d.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification=_PARAMETERS[short_name],
    )


def _registered_utility(short_name: str) -> Any:
    zero_sum = get_game(GAME_NAMES[short_name]).descriptor.max_players == 2
    return pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM


class HekaSpielGame(pyspiel.Game):
    """One of heka's games with its parameters, as an OpenSpiel game (one subclass per game,
    registered as OpenSpiel registers its own Python games: the class is the creator)."""

    short_name: ClassVar[str]

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        short_name = self.short_name
        known = _PARAMETERS[short_name]
        given = dict(params or {})
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ValueError(
                f"{short_name}: unknown parameter(s) {', '.join(unknown)} (known: {', '.join(known)})"
            )
        p = {**known, **given}
        self.heka_game: HekaGame = get_game(GAME_NAMES[short_name])
        self.heka_players: int = p["players"]
        self.heka_seed: int = p["seed"]
        options: dict[str, Any] = {}
        if "teams" in p:
            options["teams"] = p["teams"]
        if p.get("deities"):
            options["deities"] = p["deities"]
        self.heka_options: dict[str, Any] = options
        # Validates players, seed and options the way heka does (GameOptionsError).
        self.heka_game.new_initial_state(self.heka_players, self.heka_seed, options)
        zero_sum = self.heka_players == 2 or bool(options.get("teams"))
        utility = pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        info = pyspiel.GameInfo(
            num_distinct_actions=self.heka_game.descriptor.num_distinct_actions,
            max_chance_outcomes=0,
            num_players=self.heka_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=max_game_length(self.heka_game, self.heka_players),
        )
        super().__init__(_game_type(short_name, utility), info, p)

    def heka_initial_state(self) -> HekaState:
        """heka's initial state for this game's parameters."""
        return self.heka_game.new_initial_state(self.heka_players, self.heka_seed, self.heka_options)

    def new_initial_state(self) -> HekaSpielState:
        return HekaSpielState(self)

    def from_heka_state(self, state: HekaState) -> HekaSpielState:
        """An OpenSpiel state holding ``state`` (not copied), e.g. a position from elsewhere.
        Its OpenSpiel history starts empty."""
        if state.game is not self.heka_game or state.num_players != self.heka_players:
            raise ValueError(
                f"{self.get_type().short_name}: a {state.num_players}-player {state.game.name} state "
                f"does not belong to this {self.heka_players}-player game"
            )
        return HekaSpielState(self, _Held(state))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> HekaObserver:
        return HekaObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class HekaSpielState(pyspiel.State):
    """An OpenSpiel state holding a heka state (``heka_state``)."""

    def __init__(self, game: HekaSpielGame, held: _Held | None = None) -> None:
        super().__init__(game)
        self._held = held if held is not None else _Held(None, game.heka_initial_state)

    @property
    def heka_state(self) -> HekaState:
        """The heka state itself. Changing it directly bypasses OpenSpiel's history."""
        return self._held.state

    # --- the OpenSpiel state API ---------------------------------------------------

    def current_player(self) -> int:
        p = self._held.state.current_player()
        return _SPIEL_TERMINAL if p == TERMINAL else p

    def _legal_actions(self, player: int) -> list[int]:
        return self._held.state.legal_actions()

    def _apply_action(self, action: int) -> None:
        self._held.state.apply(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self._held.state.action_to_string(action)

    def is_terminal(self) -> bool:
        return self._held.state.is_terminal()

    def returns(self) -> list[float]:
        return list(self._held.state.returns())

    def information_state_string(self, player: int | None = None) -> str:
        """The view of ``player`` (default: the player to act) as text; the same as the
        C++ path through the game's information-state observer."""
        return info_state_text(self._held.state, self.current_player() if player is None else player)

    def observation_string(self, player: int | None = None) -> str:
        """The same as :meth:`information_state_string`: heka's views are current
        observations already."""
        return info_state_text(self._held.state, self.current_player() if player is None else player)

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> HekaSpielState:
        """A state ``player_id`` cannot tell from this one, with everything hidden from them
        re-dealt (heka's ``sample_consistent_state``), seeded from ``probability_sampler()``."""
        seed = int(probability_sampler() * 2.0**53)
        sampled = self._held.state.sample_consistent_state(player_id, random.Random(seed))
        return HekaSpielState(self.get_game(), _Held(sampled))

    def __str__(self) -> str:
        return self._held.state.to_text()


class HekaObserver:
    """OpenSpiel's Python observer protocol: strings only (no tensors).

    * public and private information of one player (the information-state and default
      observation types): ``view(player)``;
    * public information only: the public view, ``view(None)``;
    * every player's private information: the whole state, ``to_text()``.
    Private information without the public part has no heka view and is refused.
    """

    def __init__(self, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ValueError(f"heka observers take no parameters, got {params}")
        private = iig_obs_type.private_info
        if not iig_obs_type.public_info and private != pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("heka has no view of private information alone: ask for public_info too")
        self._private = private
        self.tensor = None  # as OpenSpiel's own string-only observers
        self.dict: dict[str, Any] = {}

    def set_from(self, state: HekaSpielState, player: int) -> None:
        """No tensor to fill."""

    def string_from(self, state: HekaSpielState, player: int) -> str:
        heka = state.heka_state
        if self._private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
            return info_state_text(heka, player)
        if self._private == pyspiel.PrivateInfoType.NONE:
            return info_state_text(heka, None)
        return heka.to_text()


# ---------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------


class AtonSpielGame(HekaSpielGame):
    """``heka_aton``: parameters ``players`` (2) and ``seed``."""

    short_name = "heka_aton"


class OsiriumSpielGame(HekaSpielGame):
    """``heka_osirium``: parameters ``players`` (2-4), ``seed``, ``teams``, ``deities``."""

    short_name = "heka_osirium"


def register() -> None:
    """Register ``heka_aton`` and ``heka_osirium`` with pyspiel (once; later calls do nothing).

    The creators are classes, as for OpenSpiel's own Python games: pyspiel keeps them until
    the interpreter has finished, which a class survives and a closure does not (a closure
    is freed without the GIL at exit, and the process aborts)."""
    registered = set(pyspiel.registered_names())
    for cls in (AtonSpielGame, OsiriumSpielGame):
        if cls.short_name not in registered:
            pyspiel.register_game(_game_type(cls.short_name, _registered_utility(cls.short_name)), cls)


register()
