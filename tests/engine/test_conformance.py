"""The generic conformance suite, run against every registered game and configuration.

Random playouts to the end from many seeds; after every action:

* ``validate()`` (each game's invariants: counters / cards / amulets / rituals accounted for);
* a legal action exists until the end, ids are unique, ascending and in the action space,
  and every legal action's text parses back to it; counting and indexing them without the
  list (``num_legal_actions``, ``legal_action_at``: the rollouts' path) gives the list;
* clone and serialize round trips are exact and independent of the original;
* the fast path ``apply`` and the validated ``apply_action`` reach the same state;
* an illegal action is refused with ``IllegalActionError`` and changes nothing;
* views of every seat and of the public are JSON-serialisable, and a state sampled by
  ``sample_consistent_state(p)`` shows ``p`` the same view and the same legal actions;
* scores never decrease; events are well formed; the game ends, with consistent returns.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

import pytest

from engine import IllegalActionError, State, get_game, list_games
from engine.core import SECRET_ACTION, TERMINAL, Event, GameOptionsError

SEEDS = 200  # per configuration (issue: at least 200)
MAX_ACTIONS = 20_000  # a game that runs longer than this is a bug (round limits exist)


@dataclass(frozen=True)
class Config:
    game: str
    players: int
    options: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        opts = "".join(f",{k}={v}" for k, v in self.options)
        return f"{self.game}-{self.players}p{opts}"

    def new_state(self, seed: int) -> State:
        return get_game(self.game).new_initial_state(self.players, seed, dict(self.options))


def configurations() -> list[Config]:
    out: list[Config] = []
    for game in list_games():
        d = game.descriptor
        for n in range(d.min_players, d.max_players + 1):
            out.append(Config(d.name, n))
            if n in d.team_player_counts:
                out.append(Config(d.name, n, (("teams", True),)))
    return out


CONFIGS = configurations()


def check_views(state: State, rng: random.Random, render: bool) -> None:
    """Determinisation for the player to act (and one other seat); with ``render``, also
    every seat's and the public view as JSON and text."""
    n = state.num_players
    if render:
        for p in [None, *range(n)]:
            v = state.view(p)
            assert v.player == p
            json.dumps(v.to_dict())  # JSON-ready
            assert isinstance(v.to_text(), str)
    cur = state.current_player()
    observers = range(n) if cur == TERMINAL else sorted({cur, rng.randrange(n)})
    for p in observers:
        sample = state.sample_consistent_state(p, rng)
        sample.validate()
        assert sample.view(p) == state.view(p), f"sampled state shows seat {p} a different view"
        assert sample.current_player() == cur
        if p == cur:
            assert sample.legal_actions() == state.legal_actions(), "determinisation changed legal actions"


def check_events(events: list[Event], n: int) -> None:
    for e in events:
        assert isinstance(e, Event)
        assert e.kind and e.text
        assert e.player is None or 0 <= e.player < n
        if e.visible_to is not None:
            assert all(0 <= p < n for p in e.visible_to)


def play_and_check(cfg: Config, seed: int) -> State:
    game = get_game(cfg.game)
    rng = random.Random(seed)
    state = cfg.new_state(seed)
    n = state.num_players
    space = game.descriptor.num_distinct_actions
    state.validate()
    last_scores = state.scores()
    for step in range(MAX_ACTIONS):
        if state.is_terminal():
            break
        cur = state.current_player()
        assert 0 <= cur < n
        assert state.move_number() == step, "every applied action adds one to the move number"
        legal = state.legal_actions()
        assert legal, f"no legal action at step {step} in a non-terminal state"
        assert legal == sorted(set(legal)), "legal actions must be unique and ascending"
        assert legal[0] >= 0 and legal[-1] < space
        secret = [a for a in legal if state.public_action(a) == SECRET_ACTION]
        assert len(secret) <= game.descriptor.max_secret_choices, "more secret choices than declared"
        for a in legal:
            assert state.string_to_action(state.action_to_string(a)) == a
        assert state.num_legal_actions() == len(legal)
        assert [state.legal_action_at(k) for k in range(len(legal))] == legal
        with pytest.raises(IndexError):
            state.legal_action_at(len(legal))

        # serialize / clone round trips
        data = state.serialize()
        restored = game.deserialize_state(data)
        assert restored.serialize() == data
        assert restored.legal_actions() == legal
        twin = state.clone()
        assert twin.serialize() == data

        # an illegal action is refused and changes nothing
        illegal = next((a for a in rng.sample(range(space), min(space, 8)) if a not in legal), None)
        if illegal is not None:
            with pytest.raises(IllegalActionError):
                state.apply_action(illegal)
            assert state.serialize() == data

        check_views(state, rng, render=step % 10 == 0)

        action = rng.choice(legal)
        events = state.apply_action(action)
        check_events(events, n)
        after = state.serialize()
        twin.apply(action)  # the fast path reaches the same state
        assert twin.serialize() == after, f"apply and apply_action differ after {action}"
        restored.apply(action)  # so does the restored copy: the randomness to come survived
        assert restored.serialize() == after

        state.validate()
        scores = state.scores()
        assert len(scores) == n
        assert all(a >= b for a, b in zip(scores, last_scores, strict=True)), "a score decreased"
        last_scores = scores
    else:
        pytest.fail(f"{cfg} seed {seed}: no end after {MAX_ACTIONS} actions")

    assert state.current_player() == TERMINAL
    assert state.legal_actions() == [] and state.num_legal_actions() == 0
    with pytest.raises(IllegalActionError):
        state.apply_action(0)
    outcome = state.outcome()
    assert outcome is not None
    returns = state.returns()
    assert returns == outcome.returns and len(returns) == n
    assert all(r in (-1.0, 0.0, 1.0) for r in returns)
    teams = state.teams()
    for a in range(n):
        for b in range(n):
            if teams[a] == teams[b]:
                assert returns[a] == returns[b], "team members must share their return"
    if outcome.winners:
        assert all(returns[w] >= 0 for w in outcome.winners)
        assert all(returns[p] == -1.0 for p in range(n) if p not in outcome.winners)
    else:
        assert all(r == 0.0 for r in returns)
    check_views(state, rng, render=True)
    return state


CHUNK = 20


@pytest.mark.slow
@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@pytest.mark.parametrize("chunk", range(SEEDS // CHUNK))
def test_random_playouts_conform(cfg: Config, chunk: int) -> None:
    for seed in range(chunk * CHUNK, (chunk + 1) * CHUNK):
        play_and_check(cfg, seed)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_same_seed_same_game(cfg: Config) -> None:
    a = play_and_check(cfg, 12345)
    b = play_and_check(cfg, 12345)
    assert a.serialize() == b.serialize()


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_seeds_give_different_deals(cfg: Config) -> None:
    deals = {cfg.new_state(seed).serialize() for seed in range(10)}
    assert len(deals) == 10


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_corrupt_serializations_are_refused(cfg: Config) -> None:
    from engine import StateFormatError

    game = get_game(cfg.game)
    data = cfg.new_state(7).serialize()
    name, _version, body = data.split(":", 2)
    bad_inputs = [
        "",
        "garbage",
        data[: len(data) // 2],
        f"{name}:999:{body}",  # an unknown version
        f"{'osirium' if cfg.game == 'aton' else 'aton'}{data[data.index(':') :]}",
    ]
    for bad in bad_inputs:
        with pytest.raises(StateFormatError):
            game.deserialize_state(bad)


def test_bad_player_counts_and_options() -> None:
    for game in list_games():
        d = game.descriptor
        for n in (d.min_players - 1, d.max_players + 1, 0, -3):
            with pytest.raises(GameOptionsError):
                game.new_initial_state(n, 1)
        with pytest.raises(GameOptionsError):
            game.new_initial_state(d.min_players, 1, {"no_such_option": 1})


def test_unknown_action_ids_and_texts_are_refused() -> None:
    from engine import ActionParseError

    for game in list_games():
        d = game.descriptor
        for a in (-1, d.num_distinct_actions, 10**9):
            with pytest.raises(ActionParseError):
                game.action_info(a)
        for text in ("", "fly to the moon", "place T9.99"):
            with pytest.raises(ActionParseError):
                game.string_to_action(text)


def test_registry_lists_both_games() -> None:
    names = [g.name for g in list_games()]
    assert "aton" in names
    assert names == sorted(names)
    assert get_game("ATON ").name == "aton"
