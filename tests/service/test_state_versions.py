"""State versions across releases: a server reads the previous release's tokens, and with
``previous_state_versions`` writes tokens that release can read (rolling upgrades, rollbacks).

The servicer is called in-process (cheap calls only, which need no call context): two
servers share one key ring, one of them in compatibility mode, and a game moves between
them call by call, as it does between the pods of a rolling upgrade.
"""

from __future__ import annotations

import json
import random
from typing import Any

from service.config import Config
from service.envelope import KeyRing
from service.gen.heka.v1 import game_service_pb2 as pb
from service.servicer import GameService


def _servers() -> tuple[KeyRing, GameService, GameService]:
    keys = KeyRing.ephemeral_ring()
    current = GameService(Config(), keys, None)  # type: ignore[arg-type]
    compat = GameService(Config(previous_state_versions=True), keys, None)  # type: ignore[arg-type]
    # No memo: every call decodes the token it is given, as a pod that never saw it does.
    current.states.size = compat.states.size = 0
    return keys, current, compat


def _body(keys: KeyRing, token: str) -> str:
    return keys.open(token).serialized


def _play_across(game: str, players: int, seed: int) -> list[str]:
    """Play a game to the end, each call on the other server; the serialised bodies."""
    keys, current, compat = _servers()
    ctx: Any = None  # the cheap calls do not use their context
    rng = random.Random(seed)
    servers = [current, compat]  # the creating server is compat: they alternate from there
    token = compat.CreateGame(pb.CreateGameRequest(game=game, num_players=players, seed=seed), ctx).state
    bodies = [_body(keys, token)]
    for turn in range(10_000):
        server = servers[turn % 2]
        legal = server.ListLegalActions(pb.ListLegalActionsRequest(state=token), ctx)
        action = rng.choice(list(legal.actions)).id
        resp = server.ApplyAction(pb.ApplyActionRequest(state=token, action_id=action), ctx)
        token = resp.state
        bodies.append(_body(keys, token))
        if resp.status.is_over:
            break
    else:  # pragma: no cover - a game that never ends is a bug
        raise AssertionError("the game did not end")
    return bodies


def test_osirium_game_moves_between_a_compatible_and_a_current_server() -> None:
    bodies = _play_across("osirium", 3, 5)
    # The compatible server writes what the previous release reads (osirium:1, JSON);
    # the current one writes osirium:2; each reads the other's tokens.
    old = bodies[0::2]
    new = bodies[1::2]
    assert old and new
    assert all(b.startswith("osirium:1:") for b in old)
    assert all(isinstance(json.loads(b[len("osirium:1:") :]), dict) for b in old)
    assert all(b.startswith("osirium:2:") for b in new)


def test_aton_tokens_are_the_same_in_both_modes() -> None:
    bodies = _play_across("aton", 2, 3)
    assert all(b.startswith("aton:1:") for b in bodies)


def test_compatibility_mode_changes_only_the_text_not_the_game() -> None:
    keys, current, compat = _servers()
    ctx: Any = None  # the cheap calls do not use their context
    request = pb.CreateGameRequest(game="osirium", num_players=4, seed=11)
    a = current.CreateGame(request, ctx).state
    b = compat.CreateGame(request, ctx).state
    assert _body(keys, a) != _body(keys, b)
    view_a = current.GetView(pb.GetViewRequest(state=a, player=2), ctx)
    view_b = current.GetView(pb.GetViewRequest(state=b, player=2), ctx)
    assert view_a == view_b
    legal_a = current.ListLegalActions(pb.ListLegalActionsRequest(state=a), ctx)
    legal_b = compat.ListLegalActions(pb.ListLegalActionsRequest(state=b), ctx)
    assert legal_a == legal_b
