"""heka's games inside OpenSpiel (``interop/openspiel.py``), when the ``openspiel`` extra is
installed (``make openspiel-check``); skipped otherwise.

* the registered games declare what heka's descriptors say;
* seeded random playouts through the adapter agree with heka's engine step by step: current
  player, legal actions, terminal, returns; clone and serialize round trips are exact;
  information-state strings are equal for a state and its resample for that player, equal
  for two seats exactly when their views are, and the same through pyspiel's C++ path;
* games stay within ``max_game_length`` (and the per-round / per-turn bounds behind it);
* OpenSpiel's own ISMCTS plays a game to the end.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

pyspiel = pytest.importorskip("pyspiel")

from engine import get_game  # noqa: E402
from engine.core import TERMINAL  # noqa: E402
from interop import openspiel as hos  # noqa: E402

pytestmark = pytest.mark.openspiel

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("heka_aton", {}),
    ("heka_osirium", {"players": 2}),
    ("heka_osirium", {"players": 3}),
    ("heka_osirium", {"players": 4}),
    ("heka_osirium", {"players": 4, "teams": True}),
]
SEEDS = range(4)


def config_id(config: tuple[str, dict[str, Any]]) -> str:
    name, params = config
    return name + "".join(f"-{k}={v}" for k, v in params.items())


def heka_twin(name: str, params: dict[str, Any], seed: int) -> Any:
    """The heka state the adapter should hold, made by the engine directly."""
    options = {"teams": params["teams"]} if "teams" in params else {}
    return get_game(hos.GAME_NAMES[name]).new_initial_state(params.get("players", 2), seed, options)


# ---------------------------------------------------------------------------------------
# What the games declare
# ---------------------------------------------------------------------------------------


def test_both_games_are_registered_and_register_is_idempotent() -> None:
    hos.register()
    names = set(pyspiel.registered_names())
    assert {"heka_aton", "heka_osirium"} <= names


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_the_game_declares_what_heka_describes(config: tuple[str, dict[str, Any]]) -> None:
    name, params = config
    game = pyspiel.load_game(name, params)
    heka = get_game(hos.GAME_NAMES[name])
    t = game.get_type()
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert t.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert t.provides_information_state_string and t.provides_observation_string
    assert not t.provides_information_state_tensor and not t.provides_observation_tensor
    players = params.get("players", 2)
    zero_sum = players == 2 or params.get("teams", False)
    expected = pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
    assert t.utility == expected
    assert game.num_players() == players
    assert game.num_distinct_actions() == heka.descriptor.num_distinct_actions
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    assert game.max_game_length() == hos.max_game_length(heka, players)
    assert game.max_chance_outcomes() == 0


def test_osirium_has_its_large_sparse_action_space() -> None:
    game = pyspiel.load_game("heka_osirium", {"players": 2, "seed": 1})
    state = game.new_initial_state()
    assert game.num_distinct_actions() == 395_319
    legal = state.legal_actions()
    assert 0 < len(legal) < 1000 and legal == sorted(legal)
    assert all(0 <= a < game.num_distinct_actions() for a in legal)
    mask = state.legal_actions_mask()
    assert len(mask) == 395_319 and sum(mask) == len(legal)


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter"):
        pyspiel.load_game("heka_aton", {"teams": True})
    with pytest.raises(ValueError, match="played by 2 players"):
        pyspiel.load_game("heka_aton", {"players": 3})
    with pytest.raises(ValueError, match="teams need 4 players"):
        pyspiel.load_game("heka_osirium", {"players": 2, "teams": True})


def test_parameters_reach_heka() -> None:
    params = {"players": 4, "seed": 9, "teams": True, "deities": "seth,isis,bastet,anubis"}
    game = pyspiel.load_game("heka_osirium", params)
    state = game.new_initial_state().heka_state
    twin = get_game("osirium").new_initial_state(
        4, 9, {"teams": True, "deities": ("seth", "isis", "bastet", "anubis")}
    )
    assert state.serialize() == twin.serialize()
    assert state.teams() == (0, 1, 0, 1)


# ---------------------------------------------------------------------------------------
# Playouts through the adapter agree with the engine
# ---------------------------------------------------------------------------------------


def check_information(state: Any, players: int, rng: random.Random) -> None:
    heka = state.heka_state
    strings = [state.information_state_string(p) for p in range(players)]
    for p in range(players):
        # The C++ path (the game's information-state observer) gives the same string.
        assert pyspiel.State.information_state_string(state, p) == strings[p]
        assert pyspiel.State.observation_string(state, p) == state.observation_string(p) == strings[p]
        # A state re-dealt for p: the same string for p, the same legal actions when p acts.
        sampler = random.Random(rng.getrandbits(32)).random
        resampled = state.resample_from_infostate(p, sampler)
        assert resampled.information_state_string(p) == strings[p]
        assert resampled.history() == []
        if state.current_player() == p:
            assert resampled.legal_actions() == state.legal_actions()
        for q in range(players):
            same_view = heka.view(p) == heka.view(q)
            assert (strings[p] == strings[q]) == same_view
    if not state.is_terminal():
        assert state.information_state_string() == strings[state.current_player()]


def check_copies(game: Any, state: Any) -> None:
    text = state.heka_state.serialize()
    clone = state.clone()
    assert clone.heka_state is not state.heka_state
    assert clone.heka_state.serialize() == text
    assert clone.history() == state.history()
    restored = game.deserialize_state(state.serialize())
    assert restored.heka_state.serialize() == text
    assert restored.history() == state.history()
    assert restored.legal_actions() == state.legal_actions()
    if not clone.is_terminal():  # the clone is independent of the original
        clone.apply_action(clone.legal_actions()[0])
        assert state.heka_state.serialize() == text


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_random_playouts_agree_with_the_engine(config: tuple[str, dict[str, Any]], seed: int) -> None:
    name, params = config
    game = pyspiel.load_game(name, {**params, "seed": seed})
    players = game.num_players()
    state = game.new_initial_state()
    twin = heka_twin(name, params, seed)
    rng = random.Random(1000 + seed)
    plies = 0
    while True:
        p = twin.current_player()
        assert state.current_player() == (pyspiel.PlayerId.TERMINAL if p == TERMINAL else p)
        assert state.is_terminal() == twin.is_terminal()
        assert state.returns() == list(twin.returns())
        assert state.heka_state.serialize() == twin.serialize()
        if plies % 17 == 0 or state.is_terminal():
            check_information(state, players, rng)
            check_copies(game, state)
        if state.is_terminal():
            break
        legal = state.legal_actions()
        assert legal == twin.legal_actions()
        assert all(state.action_to_string(p, a) == twin.action_to_string(a) for a in legal)
        action = rng.choice(legal)
        state.apply_action(action)
        twin.apply(action)
        plies += 1
    assert state.legal_actions() == []
    assert state.returns() == list(twin.outcome().returns)
    assert state.rewards() == state.returns()
    assert len(state.history()) == plies == state.move_number()
    assert str(state) == twin.to_text()


def test_from_heka_state_wraps_a_position() -> None:
    game = pyspiel.load_game("heka_aton", {"seed": 5})
    heka = heka_twin("heka_aton", {}, 5)
    rng = random.Random(5)
    for _ in range(30):
        heka.apply(rng.choice(heka.legal_actions()))
    state = game.from_heka_state(heka)
    assert state.heka_state is heka
    assert state.legal_actions() == heka.legal_actions()
    with pytest.raises(ValueError, match="does not belong"):
        game.from_heka_state(heka_twin("heka_osirium", {"players": 2}, 5))


def test_observers_show_the_public_view_or_the_whole_state() -> None:
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("heka_osirium", {"players": 3, "seed": 2})
    state = game.new_initial_state()
    heka = state.heka_state

    def obs_type(public_info: bool, private_info: Any) -> Any:
        return pyspiel.IIGObservationType(
            perfect_recall=False, public_info=public_info, private_info=private_info
        )

    public = make_observation(game, obs_type(True, pyspiel.PrivateInfoType.NONE))
    assert public.tensor is None
    assert public.string_from(state, 1) == hos.info_state_text(heka, None)
    everything = make_observation(game, obs_type(True, pyspiel.PrivateInfoType.ALL_PLAYERS))
    assert everything.string_from(state, 1) == heka.to_text()
    with pytest.raises(ValueError, match="private information alone"):
        make_observation(game, obs_type(False, pyspiel.PrivateInfoType.SINGLE_PLAYER))


# ---------------------------------------------------------------------------------------
# max_game_length and the bounds behind it
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_random_games_stay_within_the_declared_bounds(config: tuple[str, dict[str, Any]]) -> None:
    name, params = config
    for seed in range(10):
        twin = heka_twin(name, params, 100 + seed)
        game = twin.game
        rng = random.Random(seed)
        per_turn: Counter[tuple[int, int]] = Counter()
        cast_plies: Counter[int] = Counter()
        plies = 0
        while not twin.is_terminal():
            p = twin.current_player()
            action = rng.choice(twin.legal_actions())
            kind = game.action_info(action).kind
            if name == "heka_aton":
                per_turn[(twin.round_number(), 0)] += 1
            elif kind in ("cast", "break", "refill"):
                cast_plies[p] += 1
            else:
                per_turn[(twin.round_number(), p)] += 1
            twin.apply(action)
            plies += 1
        bound = hos.ATON_PLIES_PER_ROUND if name == "heka_aton" else hos.OSIRIUM_PLIES_PER_TURN
        assert max(per_turn.values()) <= bound
        assert max(cast_plies.values(), default=0) <= hos.OSIRIUM_CAST_PLIES_PER_SEAT
        assert plies <= hos.max_game_length(game, twin.num_players)


# ---------------------------------------------------------------------------------------
# OpenSpiel's algorithms run on the games
# ---------------------------------------------------------------------------------------


def test_openspiel_ismcts_plays_an_aton_game_to_the_end() -> None:
    np = pytest.importorskip("numpy")
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("heka_aton", {"seed": 3})
    state = game.new_initial_state()
    rs = np.random.RandomState(3)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, 12, random_state=rs)
    bot.set_resampler(lambda s, p: s.resample_from_infostate(p, rs.uniform))
    rng = random.Random(3)
    while not state.is_terminal():
        if state.current_player() == 0:
            action = bot.step(state)
        else:
            action = rng.choice(state.legal_actions())
        assert action in state.legal_actions()
        state.apply_action(int(action))
    assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])


def test_openspiel_ismcts_searches_osirium_with_the_default_resampler() -> None:
    np = pytest.importorskip("numpy")
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("heka_osirium", {"players": 3, "seed": 4})
    state = game.new_initial_state()
    rs = np.random.RandomState(4)
    # No set_resampler: the bot resamples with OpenSpiel's UniformProbabilitySampler, and
    # asserts that every resampled root has the root's information state.
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs, max_length=30), 2.0, 8, random_state=rs)
    for _ in range(6):
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(int(action))
