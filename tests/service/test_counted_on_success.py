"""A call's game counters (games created and finished, actions applied) count only when the
call succeeds: a refused or failed call leaves the client with its old token, so the game, the
actions and the outcome it did not receive are not counted (service.metrics.committed), and
every field is checked before the call changes anything."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from service_helpers import KEY1, ServerProcess, call_error, error_details, scrape, total

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


@pytest.fixture(scope="module")
def small_messages(start_server: Any) -> ServerProcess:
    """A server whose responses may be at most 10,000 bytes (HEKA_MAX_MESSAGE_BYTES)."""
    return start_server("--search-workers", "1", "--max-message-bytes", "10000", HEKA_STATE_KEYS=KEY1)


def test_a_response_over_the_cap_is_refused_by_name_and_counts_nothing(small_messages: ServerProcess) -> None:
    """gRPC itself failed such a response after the handler returned: no details, the call
    logged and counted as OK, its games and actions counted. The server refuses it first."""
    stub = small_messages.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=4, seed=2)).state
    # Osirium's opening legal-action list is about 15 KB.
    err = call_error(stub.ListLegalActions, pb.ListLegalActionsRequest(state=token, viewer=0))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error_details(err)[1] == "RESPONSE_TOO_LARGE"
    assert "over this server's HEKA_MAX_MESSAGE_BYTES (10,000)" in err.details()
    compact = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0, compact_actions=True))
    assert compact.ByteSize() <= 10000 and len(compact.actions) > 100  # asking for less works
    before = scrape(small_messages)
    rnd = pb.BotSettings(kind=pb.BOT_KIND_RANDOM, diagnostics_top_k=100)
    bots = [pb.BotSeat(seat=s, bot=rnd) for s in range(4)]
    request = pb.AdvanceBotsRequest(state=token, bots=bots, max_bot_moves=200, trusted_backend=True)
    err = call_error(stub.AdvanceBots, request)
    assert error_details(err)[1] == "RESPONSE_TOO_LARGE", err.details()
    after = scrape(small_messages)
    for name in GAME_COUNTERS:
        assert total(after, name) == total(before, name), name
    assert total(after, "heka_grpc_server_handled_total", grpc_method="AdvanceBots", grpc_code="OK") == total(
        before, "heka_grpc_server_handled_total", grpc_method="AdvanceBots", grpc_code="OK"
    )
