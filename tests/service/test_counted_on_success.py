"""A call's game counters (games created and finished, actions applied) count only when the
call succeeds: a refused or failed call leaves the client with its old token, so the game, the
actions and the outcome it did not receive are not counted (service.metrics.committed), and
every field is checked before the call changes anything."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from service_helpers import ServerProcess, call_error, error_details, scrape, total

from service import metrics
from service.gen.heka.v1 import game_service_pb2 as pb

GAME_COUNTERS = ("heka_games_created_total", "heka_actions_applied_total", "heka_games_finished_total")


def value(game: str) -> float:
    return float(metrics.GAMES_CREATED.labels(game)._value.get())


def test_counts_inside_a_call_wait_for_it_to_succeed() -> None:
    before = value("aton")
    with metrics.committed():
        metrics.count(metrics.GAMES_CREATED, "aton")
        assert value("aton") == before  # not yet: the call may still fail
    assert value("aton") == before + 1
    with pytest.raises(RuntimeError), metrics.committed():
        metrics.count(metrics.GAMES_CREATED, "aton")
        raise RuntimeError("refused after the count")
    assert value("aton") == before + 1  # the failed call counted nothing
    metrics.count(metrics.GAMES_CREATED, "aton")  # outside a call: at once
    assert value("aton") == before + 2


def refused_calls(stub: Any) -> list[tuple[Any, Any, str]]:
    """(method, request, the field the refusal names) of calls refused only by a field checked
    late in the old order: after the game was made or the action applied."""
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=3)).state
    legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0)).actions[0].id
    rnd = [pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM))]
    bad = [
        pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM, budget=pb.SearchBudget(iterations=-5)))
    ]
    create, apply = stub.CreateGame, stub.ApplyAction
    move = {"state": token, "player": 0, "action_id": legal}
    over = 10**6
    return [
        (create, pb.CreateGameRequest(game="aton", bots=bad), "bots[0].bot.budget.iterations"),
        (create, pb.CreateGameRequest(game="aton", bots=rnd, max_bot_moves=over), "max_bot_moves"),
        (create, pb.CreateGameRequest(game="aton", max_bot_moves=-1), "max_bot_moves"),
        (apply, pb.ApplyActionRequest(**move, bots=rnd, max_bot_moves=over), "max_bot_moves"),
        (apply, pb.ApplyActionRequest(**move, max_bot_moves=-1), "max_bot_moves"),
    ]


def test_a_refused_call_counts_no_game_action_or_outcome(server: ServerProcess) -> None:
    calls = refused_calls(server.stub)
    before = scrape(server)
    for method, request, field in calls:
        err = call_error(method, request)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
        assert error_details(err)[0] == field, err.details()
    after = scrape(server)
    for name in GAME_COUNTERS:
        assert total(after, name) == total(before, name), name
