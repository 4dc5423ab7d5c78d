"""How often a call encodes, decodes and checks a state: a bot move encodes once and its
worker decodes without checking again; only tokens of an earlier envelope version are
checked in full (docs/security.md, "What opening a token checks")."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from service.envelope import KeyRing


def test_a_bot_move_encodes_once_and_its_worker_decodes_without_checking_again(monkeypatch: Any) -> None:
    """One BotMove with apply opens its token once, hands the worker the token's own text
    (no encoding for the job) which the worker parses without checking again, and encodes
    once, for the new token. The server does not check it either: the token is of the
    current envelope version, so its tag proves a server of this release sealed it (the
    next test: earlier envelopes are checked)."""
    from engine.aton.game import AtonGame
    from engine.registry import get_game
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService
    from service.workers import SearchResult, run_search

    counts = {"encode": 0, "decode": 0, "checked": 0}
    real_serialize, real_deserialize = AtonGame.serialize_state, AtonGame.deserialize_state

    def serialize(self: Any, state: Any, *, version: int | None = None) -> str:
        counts["encode"] += 1
        return real_serialize(self, state, version=version)

    def deserialize(self: Any, data: str, *, validate: bool = True) -> Any:
        counts["decode"] += 1
        counts["checked"] += validate
        return real_deserialize(self, data, validate=validate)

    monkeypatch.setattr(AtonGame, "serialize_state", serialize)
    monkeypatch.setattr(AtonGame, "deserialize_state", deserialize)

    class InlinePool:  # the worker's own function, in this process
        def run(self, job: Any, timeout: float, ticket: Any = None) -> SearchResult:
            return run_search(job)

    class Context:
        def time_remaining(self) -> None:
            return None

    keys = KeyRing.ephemeral_ring()
    service = GameService(Config(state_cache_size=0), keys, InlinePool())  # type: ignore[arg-type]
    token = keys.seal(real_serialize(get_game("aton"), get_game("aton").new_initial_state(2, seed=6)))
    counts.update(encode=0, decode=0, checked=0)
    bot = pb.BotSettings(kind=pb.BOT_KIND_GREEDY, seed=1)
    service._slot = lambda *_: contextlib.nullcontext()  # type: ignore[method-assign]
    resp = service.BotMove(pb.BotMoveRequest(state=token, bot=bot, apply=True), Context())
    assert resp.state and resp.action.text
    assert counts == {"encode": 1, "decode": 2, "checked": 0}


def _decode_counts(monkeypatch: Any) -> dict[str, int]:
    """Count the decodings of Aton and Osirium states, and those that check the invariants."""
    from engine.aton.game import AtonGame
    from engine.osirium.game import OsiriumGame

    counts = {"decode": 0, "checked": 0}
    for cls in (AtonGame, OsiriumGame):
        real = cls.deserialize_state

        def deserialize(self: Any, data: str, *, validate: bool = True, real: Any = real) -> Any:
            counts["decode"] += 1
            counts["checked"] += validate
            return real(self, data, validate=validate)

        monkeypatch.setattr(cls, "deserialize_state", deserialize)
    return counts


@pytest.mark.parametrize(("game", "players"), [("aton", 2), ("osirium", 3)])
def test_only_tokens_of_an_earlier_envelope_version_are_checked_again(
    monkeypatch: Any, game: str, players: int
) -> None:
    """A token of this envelope version holds a state this release wrote (no one without
    the key can seal one), so opening it parses the text strictly and skips the invariant
    checks; a token of the previous envelope version (a server of the previous release, or
    one in compatibility mode) is checked in full, and so is a state of an earlier state
    version in any token (the codecs: tests/engine)."""
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService

    keys = KeyRing.ephemeral_ring()
    service = GameService(Config(state_cache_size=0), keys, None)  # type: ignore[arg-type]
    created = service.CreateGame(pb.CreateGameRequest(game=game, num_players=players, seed=3), None)
    current_token = created.state
    previous_token = KeyRing(keys.keys, version=1).seal(keys.open(current_token).serialized)
    counts = _decode_counts(monkeypatch)
    seat = created.status.current_player
    for token, checked in ((current_token, 0), (previous_token, 1)):
        counts.update(decode=0, checked=0)
        legal = service.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=seat), None)
        assert counts == {"decode": 1, "checked": checked}
        counts.update(decode=0, checked=0)
        service.ApplyAction(
            pb.ApplyActionRequest(state=token, action_id=legal.actions[0].id, player=seat), None
        )
        assert counts == {"decode": 1, "checked": checked}
