"""State versions across releases: a server reads the previous release's tokens, and with
``previous_state_versions`` writes tokens that release can read (rolling upgrades, rollbacks).

The servicer is called in-process (cheap calls only, which need no call context): two
servers share one key ring, one of them in compatibility mode, and a game moves between
them call by call, as it does between the pods of a rolling upgrade.
"""

from __future__ import annotations

import random
import re
from typing import Any

from service.config import Config
from service.envelope import KeyRing
from service.gen.heka.v1 import game_service_pb2 as pb
from service.servicer import GameService


def _servers() -> tuple[KeyRing, GameService, GameService]:
    keys = KeyRing.ephemeral_ring()
    # The compatible server seals envelope version 1, which the previous release opens.
    old_envelopes = KeyRing(keys.keys, version=1)
    current = GameService(Config(), keys, None)  # type: ignore[arg-type]
    compat = GameService(Config(previous_state_versions=True), old_envelopes, None)  # type: ignore[arg-type]
    # No memo: every call decodes the token it is given, as a pod that never saw it does.
    current.states.size = compat.states.size = 0
    return keys, current, compat


def _body(keys: KeyRing, token: str) -> str:
    return keys.open(token).serialized


def _opened(keys: KeyRing, token: str) -> tuple[int, str]:
    opened = keys.open(token)
    return opened.version, opened.serialized


def _play_across(
    game: str, players: int, seed: int, *, created_by_current: bool = False
) -> list[tuple[int, str]]:
    """Play a game to the end, each call on the other server; the envelope versions and
    serialised bodies."""
    keys, current, compat = _servers()
    ctx: Any = None  # the cheap calls do not use their context
    rng = random.Random(seed)
    # The creating server makes the first token; the next call goes to the other one.
    servers = [compat, current] if created_by_current else [current, compat]
    creator = current if created_by_current else compat
    token = creator.CreateGame(pb.CreateGameRequest(game=game, num_players=players, seed=seed), ctx).state
    bodies = [_opened(keys, token)]
    player = 0
    for turn in range(10_000):
        server = servers[turn % 2]
        legal = server.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=player), ctx)
        action = rng.choice(list(legal.actions)).id
        resp = server.ApplyAction(pb.ApplyActionRequest(state=token, action_id=action, player=player), ctx)
        token, player = resp.state, resp.status.current_player
        bodies.append(_opened(keys, token))
        if resp.status.is_over:
            break
    else:  # pragma: no cover - a game that never ends is a bug
        raise AssertionError("the game did not end")
    return bodies


def test_osirium_game_moves_between_a_compatible_and_a_current_server() -> None:
    bodies = _play_across("osirium", 3, 5)
    # The compatible server writes what the previous release reads (envelope 1, osirium:2
    # with its SplitMix64 generator); the current one writes envelope 2 and osirium:3; each
    # reads the other's tokens.
    old = bodies[0::2]
    new = bodies[1::2]
    assert old and new
    assert all(v == 1 and b.startswith("osirium:2:") for v, b in old)
    assert all(v == 2 and b.startswith("osirium:3:") for v, b in new)


def test_aton_game_moves_between_a_compatible_and_a_current_server() -> None:
    bodies = _play_across("aton", 2, 3)
    assert all(v == 1 and b.startswith("aton:1:") for v, b in bodies[0::2])
    assert all(v == 2 and b.startswith("aton:2:") for v, b in bodies[1::2])


def test_a_current_game_moves_through_a_compatible_server_in_the_current_version() -> None:
    """In the upgrade's second step (or its rollback), a game created by a pod without
    HEKA_PREVIOUS_STATE_VERSIONS carries this release's generator, which the previous state
    versions cannot hold: a pod still in compatibility mode answers it in the current version
    (every pod left reads it), never INTERNAL."""
    for game, players, seed, prefix in (("osirium", 4, 7, "osirium:3:"), ("aton", 2, 9, "aton:2:")):
        bodies = _play_across(game, players, seed, created_by_current=True)
        assert len(bodies) > 2
        assert all(b.startswith(prefix) and ";rng=k" in b for _, b in bodies), game


def test_compatibility_mode_games_use_the_previous_generator_keyed_by_the_server() -> None:
    """A game created in compatibility mode carries the previous release's generator
    (SplitMix64), seeded from the same keyed derivation of the seed: the same seed and key
    give the same game in each mode, and another key another game."""
    keys, current, compat = _servers()
    ctx: Any = None  # the cheap calls do not use their context
    request = pb.CreateGameRequest(game="osirium", num_players=4, seed=11)
    a, a2 = (current.CreateGame(request, ctx).state for _ in range(2))
    b, b2 = (compat.CreateGame(request, ctx).state for _ in range(2))
    assert ";rng=k" in _body(keys, a) and ";rng=k" not in _body(keys, b)
    assert _body(keys, a) == _body(keys, a2) and _body(keys, b) == _body(keys, b2)
    other = GameService(Config(previous_state_versions=True), KeyRing.ephemeral_ring(), None)  # type: ignore[arg-type]
    c = other.CreateGame(request, ctx).state
    assert other.keys.open(c).serialized.split(";h=")[1] != _body(keys, b).split(";h=")[1]


def test_the_setting_names_the_versions_it_writes() -> None:
    """``HEKA_PREVIOUS_STATE_VERSIONS``'s help (``heka serve --help``, docs/reference/settings.md)
    names every game's previous state version, the one before the version it writes now."""
    from engine.registry import get_game, list_games
    from service.config import SETTINGS
    from service.servicer import PREVIOUS_STATE_VERSIONS

    (setting,) = (s for s in SETTINGS if s.env == "HEKA_PREVIOUS_STATE_VERSIONS")
    assert set(PREVIOUS_STATE_VERSIONS) == {g.name for g in list_games()}
    for game, version in PREVIOUS_STATE_VERSIONS.items():
        state = get_game(game).new_initial_state(2, 1)
        assert state.serialize().startswith(f"{game}:{version + 1}:")
        assert f"{game}:{version}" in setting.help
    named = re.findall(r"\b([a-z]+):(\d+)\b", setting.help)
    assert {(g, int(v)) for g, v in named} == set(PREVIOUS_STATE_VERSIONS.items())
