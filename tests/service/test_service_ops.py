"""Operations: deadlines, capacity, health, reflection, metrics, shutdown, keys, decoding."""

from __future__ import annotations

import base64
import os
import signal
import threading
import time
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from service_helpers import KEY1, KEY2, ServerProcess, call_error, retry_info, scrape, total, wait_metric

from service.envelope import KeyRing, parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import children, cmdline
from service.loadtest.local import descendants as process_tree

SERVICE = "heka.v1.GameService"


def slow_mcts(ms: float = 8000) -> pb.BotSettings:
    return pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(milliseconds=ms), seed=1)


def legal_ids(stub: Any, token: str) -> set[int]:
    player = stub.GetView(pb.GetViewRequest(state=token)).view.status.current_player
    listed = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=player))
    return {a.id for a in listed.actions}


def health_status(server: ServerProcess, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(server.channel)
    return int(stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status)


# ---------------------------------------------------------------------------------------
# Deadlines
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [0.25, 0.6, 1.5])
def test_short_deadline_gives_a_legal_move_or_deadline_exceeded_never_late(stub: Any, timeout: float) -> None:
    """A search budget far beyond the call's deadline: the server cuts the search short
    (deadline minus a margin), so the answer is a legal move, or DEADLINE_EXCEEDED."""
    token = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=2, seed=4)).state
    try:
        resp = stub.BotMove(pb.BotMoveRequest(state=token, bot=slow_mcts(), viewer=0), timeout=timeout)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    else:
        assert resp.action.id in legal_ids(stub, token)
        assert resp.diagnostics.interrupted


def test_expired_deadline_is_deadline_exceeded(stub: Any) -> None:
    """A deadline that has (practically) passed: DEADLINE_EXCEEDED, or — if gRPC's timer
    granularity let the call through — a legal move, never anything else."""
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=4)).state
    try:
        resp = stub.BotMove(pb.BotMoveRequest(state=token, bot=slow_mcts(), viewer=0), timeout=0.0001)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    else:
        assert resp.action.id in legal_ids(stub, token)
        assert resp.diagnostics.interrupted  # the 8 s search was cut by the deadline


def test_advance_bots_stops_at_the_deadline(stub: Any) -> None:
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=4)).state
    bots = [pb.BotSeat(seat=s, bot=slow_mcts(300)) for s in (0, 1)]
    try:
        resp = stub.AdvanceBots(pb.AdvanceBotsRequest(state=token, bots=bots), timeout=1.5)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    else:
        assert resp.stop_reason in (pb.STOP_REASON_DEADLINE, pb.STOP_REASON_GAME_OVER)
        assert resp.bot_turns


# ---------------------------------------------------------------------------------------
# Capacity, health under load, graceful shutdown (a dedicated one-worker server)
# ---------------------------------------------------------------------------------------


@pytest.fixture(params=[1, 2], ids=["1-process", "2-processes"])
def tight_server(start_server: Any, request: Any) -> ServerProcess:
    """One search slot in all; one or two gRPC processes (the slot is shared by both). A
    20 s drain, with bot calls capped to 10 s to fit in it (the server checks it)."""
    server: ServerProcess = start_server(
        "--grpc-processes",
        str(request.param),
        "--search-workers",
        "1",
        "--max-concurrent-searches",
        "1",
        "--grace-seconds",
        "20",
        "--max-milliseconds",
        "10000",
        "--max-advance-seconds",
        "10",
        "--shutdown-delay-seconds",
        "1.0",
        "--max-queue-wait-seconds",
        "20",
        HEKA_STATE_KEYS=KEY1,
    )
    return server


def _wait_in_flight(server: ServerProcess, n: int) -> None:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if total(scrape(server), "heka_searches_in_flight") >= n:
            return
        time.sleep(0.05)
    raise AssertionError("search never started")


def test_a_call_whose_bots_do_not_act_waits_for_no_slot(tight_server: ServerProcess) -> None:
    """CreateGame and ApplyAction name their game's bots on every call (one call per move),
    but a bot plays only when its seat is to act: when a person acts next, the call answers
    at once, even with every search slot busy, instead of waiting in the queue."""
    stub = tight_server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=2)).state
    long_call = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(2500), viewer=0), timeout=30)
    _wait_in_flight(tight_server, 1)
    bots = [pb.BotSeat(seat=1, bot=slow_mcts(100))]
    created = stub.CreateGame(pb.CreateGameRequest(game="osirium", seed=3, viewer=0, bots=bots), timeout=30)
    assert created.status.current_player == 0 and not created.bot_turns
    assert not long_call.done()  # answered while the only slot was still busy
    assert long_call.result().action.id in legal_ids(stub, token)


def test_a_bot_call_waits_for_a_busy_slot_and_health_stays_serving(tight_server: ServerProcess) -> None:
    """Every slot busy: further bot calls (on any connection, so on either gRPC process)
    wait in the queue and are served when the slot frees, instead of being refused; cheap
    calls and health answer meanwhile."""
    stub = tight_server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=2)).state
    long_call = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(2500), viewer=0), timeout=30)
    _wait_in_flight(tight_server, 1)
    channels = [grpc.insecure_channel(tight_server.address, options=[("test.queue", i)]) for i in range(3)]
    try:
        queued = [
            pb_grpc.GameServiceStub(ch).BotMove.future(
                pb.BotMoveRequest(state=token, bot=slow_mcts(100), viewer=0), timeout=30
            )
            for ch in channels
        ]
        wait_metric(tight_server, "heka_search_queue_length", 3)
        # Cheap calls and health keep answering while the worker searches.
        assert legal_ids(stub, token)
        assert health_status(tight_server) == health_pb2.HealthCheckResponse.SERVING
        assert health_status(tight_server, SERVICE) == health_pb2.HealthCheckResponse.SERVING
        # Random bots run inline, without a search slot.
        stub.BotMove(pb.BotMoveRequest(state=token, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM), viewer=0))
        assert not any(call.done() for call in queued)  # waiting behind the 2.5 s search
        legal = legal_ids(stub, token)
        assert long_call.result().action.id in legal
        assert all(call.result().action.id in legal for call in queued)
    finally:
        for ch in channels:
            ch.close()
    samples = scrape(tight_server)
    assert total(samples, "heka_searches_rejected_total") == 0
    assert total(samples, "heka_search_queue_wait_seconds_count", outcome="admitted") >= 4
    assert total(samples, "heka_search_queue_length") == 0


def test_the_queue_refuses_up_front_what_it_cannot_serve_in_time(start_server: Any) -> None:
    """One slot, a queue of one: a call whose deadline the expected wait (the recent time a
    call holds the slot) would miss is refused at once, RESOURCE_EXHAUSTED, reason QUEUE_DEADLINE
    with a retry hint; a call beyond the queue's length, reason QUEUE_FULL. Both are decided
    before the token is opened (a token that does not open gets the same refusal). A
    queued call cancelled by its client leaves the queue."""
    server: ServerProcess = start_server(
        "--search-workers", "1", "--max-concurrent-searches", "1", "--max-queued-searches", "1",
        "--max-queue-wait-seconds", "20", HEKA_STATE_KEYS=KEY1,
    )  # fmt: skip
    stub = server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=5)).state
    stub.BotMove(pb.BotMoveRequest(state=token, bot=slow_mcts(1500), viewer=0), timeout=30)  # ~1.5 s held
    long_call = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(4000), viewer=0), timeout=30)
    _wait_in_flight(server, 1)
    for state in (token, "not a token"):
        short = pb.BotMoveRequest(state=state, bot=slow_mcts(100), viewer=0)
        err = call_error(stub.BotMove, short, timeout=2)
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
        reason, delay = retry_info(err)
        assert reason == "QUEUE_DEADLINE" and delay is not None and delay > 0, (reason, delay)
    # Bot calls inside ApplyAction queue like BotMove.
    legal = sorted(legal_ids(stub, token))
    apply = pb.ApplyActionRequest(
        state=token, action_id=legal[0], player=0, bots=[pb.BotSeat(seat=1, bot=slow_mcts(100))]
    )
    first = stub.ApplyAction.future(apply, timeout=30)
    wait_metric(server, "heka_search_queue_length", 1)
    for state in (token, "not a token"):
        late = pb.BotMoveRequest(state=state, bot=slow_mcts(100), viewer=0)
        err = call_error(stub.BotMove, late, timeout=30)
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
        assert retry_info(err)[0] == "QUEUE_FULL"
    first.cancel()
    wait_metric(server, "heka_search_queue_wait_seconds_count", 1, outcome="cancelled")
    assert total(scrape(server), "heka_search_queue_length") == 0
    # The place is free again: the next call waits and is served.
    again = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(100), viewer=0), timeout=30)
    assert long_call.result().action.id in legal
    assert again.result().action.id in legal
    samples = scrape(server)
    assert total(samples, "heka_searches_rejected_total", reason="queue_deadline") == 2
    assert total(samples, "heka_searches_rejected_total", reason="queue_full") == 2
    # The refused calls' tokens were never opened: no bad-token error counted.
    assert total(samples, "heka_invalid_requests_total", reason="bad_token") == 0


def test_draining_refuses_queued_calls_with_a_retry_hint(tight_server: ServerProcess) -> None:
    """SIGTERM with calls waiting for the slot: once draining starts they are refused at
    once, UNAVAILABLE, reason DRAINING, with a retry hint (a stateless retry on another
    replica is safe); the call holding the slot completes; the server exits 0."""
    stub = tight_server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=2)).state
    long_call = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(4000), viewer=0), timeout=30)
    _wait_in_flight(tight_server, 1)
    queued = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(100), viewer=0), timeout=30)
    wait_metric(tight_server, "heka_search_queue_length", 1)
    tight_server.proc.send_signal(15)
    with pytest.raises(grpc.RpcError) as info:
        queued.result()
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE, info.value.details()
    reason, delay = retry_info(info.value)
    assert reason == "DRAINING" and delay is not None and delay > 0
    assert not long_call.done()  # refused while the 4 s search still ran
    assert long_call.result().action.id >= 0
    assert tight_server.proc.wait(timeout=30) == 0


def test_sigterm_drains_in_flight_call_and_exits_zero(tight_server: ServerProcess) -> None:
    stub = tight_server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=2)).state
    call = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(2500), viewer=0), timeout=30)
    _wait_in_flight(tight_server, 1)
    tight_server.proc.send_signal(15)
    # During the shutdown delay health says NOT_SERVING (for the service and overall).
    time.sleep(0.3)
    assert health_status(tight_server) == health_pb2.HealthCheckResponse.NOT_SERVING
    assert health_status(tight_server, SERVICE) == health_pb2.HealthCheckResponse.NOT_SERVING
    # The call in flight completes normally.
    resp = call.result()
    assert resp.action.id >= 0
    assert tight_server.proc.wait(timeout=30) == 0
    events = [line.get("event") for line in tight_server.log_lines()]
    assert "draining" in events and "stopped" in events
    assert events.count("draining") == int(tight_server.info["grpc_processes"])


# ---------------------------------------------------------------------------------------
# Health, reflection, metrics, access logs
# ---------------------------------------------------------------------------------------


def test_health_serving(server: ServerProcess) -> None:
    assert health_status(server) == health_pb2.HealthCheckResponse.SERVING
    assert health_status(server, SERVICE) == health_pb2.HealthCheckResponse.SERVING


def test_health_list_is_unimplemented_not_internal(server: ServerProcess) -> None:
    """grpcio's asyncio health servicer does not implement List: UNIMPLEMENTED, as without
    the interceptor (not INTERNAL with a traceback)."""
    stub = health_pb2_grpc.HealthStub(server.channel)
    with pytest.raises(grpc.RpcError) as info:
        stub.List(health_pb2.HealthListRequest(), timeout=5)
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_health_check_of_an_unknown_service_is_not_found_with_a_message(server: ServerProcess) -> None:
    """grpcio's servicer answers NOT_FOUND with an empty message; this one names the service
    asked for and those the server reports (found by tests/service/test_property_fuzz.py)."""
    stub = health_pb2_grpc.HealthStub(server.channel)
    err = call_error(stub.Check, health_pb2.HealthCheckRequest(service="heka.v1.Nope"), timeout=5)
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert err.details() == (
        "unknown service 'heka.v1.Nope' for health checks: this server reports '', 'heka.v1.GameService'"
    )


def test_reflection_lists_the_service(server: ServerProcess) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(server.channel)
    responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    names = {s.name for r in responses for s in r.list_services_response.service}
    assert SERVICE in names and "grpc.health.v1.Health" in names
    req = reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE)
    (resp,) = list(stub.ServerReflectionInfo(iter([req])))
    assert resp.file_descriptor_response.file_descriptor_proto


def test_reflection_v1_is_served_too(server: ServerProcess) -> None:
    """Current tools ask for grpc.reflection.v1 first (the same messages as v1alpha
    under another package, so v1alpha's classes read and write them)."""
    from google.protobuf import descriptor_pb2

    info = server.channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    requests = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
    ]
    listed, service_file, reflection_file = list(info(iter(requests), timeout=10))
    names = {s.name for s in listed.list_services_response.service}
    assert {
        SERVICE,
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names
    protos = [
        descriptor_pb2.FileDescriptorProto.FromString(b)
        for b in service_file.file_descriptor_response.file_descriptor_proto
    ]
    assert any(p.package == "heka.v1" for p in protos)
    (own,) = [
        descriptor_pb2.FileDescriptorProto.FromString(b)
        for b in reflection_file.file_descriptor_response.file_descriptor_proto
    ]
    assert own.package == "grpc.reflection.v1" and own.service[0].name == "ServerReflection"


def test_metrics_move_with_calls(server: ServerProcess) -> None:
    stub = server.stub
    before = scrape(server)
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=31)).state
    stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0))
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=25), seed=3)
    stub.BotMove(pb.BotMoveRequest(state=token, bot=bot, apply=True))
    with pytest.raises(grpc.RpcError):
        stub.GetView(pb.GetViewRequest(state="bogus!"))
    rnd = pb.BotSettings(kind=pb.BOT_KIND_RANDOM)
    stub.AdvanceBots(
        pb.AdvanceBotsRequest(state=token, bots=[pb.BotSeat(seat=0, bot=rnd), pb.BotSeat(seat=1, bot=rnd)])
    )
    after = scrape(server)

    def delta(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    svc = {"grpc_service": SERVICE}
    assert delta("heka_grpc_server_started_total", grpc_method="CreateGame", **svc) == 1
    assert delta("heka_grpc_server_handled_total", grpc_method="CreateGame", grpc_code="OK", **svc) == 1
    assert (
        delta("heka_grpc_server_handled_total", grpc_method="GetView", grpc_code="INVALID_ARGUMENT", **svc)
        == 1
    )
    assert delta("heka_grpc_server_handling_seconds_count", grpc_method="ListLegalActions", **svc) == 1
    assert delta("heka_invalid_requests_total", reason="bad_token") == 1
    assert delta("heka_games_created_total", game="aton") == 1
    assert delta("heka_games_finished_total", game="aton") == 1
    assert delta("heka_actions_applied_total", game="aton") >= 10
    # The search ran in a worker process: multiprocess mode aggregates its samples.
    assert delta("heka_searches_total", game="aton", bot="mcts:custom") == 1
    assert delta("heka_search_iterations_total", game="aton", bot="mcts:custom") == 25
    assert delta("heka_search_duration_seconds_count", game="aton", bot="mcts:custom") == 1
    assert delta("heka_searches_total", game="aton", bot="random") >= 10
    assert total(after, "heka_searches_in_flight") == 0
    buckets = {dict(lab).get("le") for (n, lab) in after if n == "heka_grpc_server_handling_seconds_bucket"}
    assert "60.0" in buckets


def test_access_log_has_one_json_line_per_rpc(server: ServerProcess) -> None:
    server.stub.ListGames(pb.ListGamesRequest())
    time.sleep(0.2)
    lines = [x for x in server.log_lines() if x.get("method") == f"/{SERVICE}/ListGames"]
    assert lines
    line = lines[-1]
    assert line["code"] == "OK" and line["duration_ms"] >= 0 and "peer" in line
    assert line["level"] == "info" and line["msg"] == "rpc" and line["ts"].endswith("+00:00")
    with pytest.raises(grpc.RpcError):
        server.stub.CreateGame(pb.CreateGameRequest(game='chess "quoted"'))
    time.sleep(0.2)
    (failed,) = [x for x in server.log_lines() if 'chess "quoted"' in x.get("error", "")]
    assert failed["code"] == "INVALID_ARGUMENT" and failed["method"] == f"/{SERVICE}/CreateGame"


# ---------------------------------------------------------------------------------------
# Keys: rotation, encryption, trusted decoding
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rotated_server(start_server: Any) -> ServerProcess:
    """Seals with k2 (new), still opens k1 (old); decodes for trusted callers."""
    server: ServerProcess = start_server(
        "--search-workers",
        "1",
        "--trusted-decode",
        HEKA_STATE_KEYS=f"{KEY2},{KEY1}",
    )
    return server


def test_key_rotation_old_tokens_verify_new_tokens_use_new_key(
    server: ServerProcess, rotated_server: ServerProcess
) -> None:
    old = server.stub.CreateGame(pb.CreateGameRequest(game="aton", seed=12)).state
    # The rotated server accepts the k1 token and answers with a k2 token...
    legal = rotated_server.stub.ListLegalActions(pb.ListLegalActionsRequest(state=old, viewer=0)).actions
    new = rotated_server.stub.ApplyAction(
        pb.ApplyActionRequest(state=old, action_id=legal[0].id, player=0)
    ).state
    decoded = rotated_server.stub.DecodeState(pb.DecodeStateRequest(state=new))
    assert decoded.key_id == "k2" and decoded.encrypted and decoded.token_version == 2
    assert decoded.serialized.startswith("aton:")
    assert decoded.text
    # ...which a server that only knows k1 refuses as foreign.
    with pytest.raises(grpc.RpcError) as info:
        server.stub.GetView(pb.GetViewRequest(state=new))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "signed with key 'k2', unknown to this server" in info.value.details()


def test_a_state_forged_with_a_key_on_its_way_out_is_not_resealed(
    server: ServerProcess, rotated_server: ServerProcess
) -> None:
    """A key being rotated out may be one that leaked. A token of the signing key is trusted
    to hold a state this release wrote (its invariants are not checked again); one of another
    key of the ring was trusted alike, so a state forged with the old key (a hand no deal
    gives) was answered and re-sealed with the new key, outliving the old key's removal.
    Tokens of any other key are checked in full."""
    import re

    old = server.stub.CreateGame(pb.CreateGameRequest(game="aton", seed=12)).state
    text = KeyRing(parse_keys(KEY1)).open(old).serialized

    def four_of_a_kind(match: re.Match[str]) -> str:
        fields = match.group(0).split(",")
        fields[8] = "4444"  # seat 0's hand: more 4s than the deck holds with the rest
        return ",".join(fields)

    forged_text = re.sub(r"p0=[^;]*", four_of_a_kind, text)
    assert forged_text != text
    forged = KeyRing(parse_keys(KEY1)).seal(forged_text)
    with pytest.raises(grpc.RpcError) as info:
        rotated_server.stub.ListLegalActions(pb.ListLegalActionsRequest(state=forged, viewer=0))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert rotated_server.stub.ListLegalActions(pb.ListLegalActionsRequest(state=old, viewer=0)).actions


def test_encrypted_tokens_hide_the_state(rotated_server: ServerProcess) -> None:
    token = rotated_server.stub.CreateGame(pb.CreateGameRequest(game="aton", seed=12)).state
    decoded = rotated_server.stub.DecodeState(pb.DecodeStateRequest(state=token))
    ring = KeyRing(parse_keys(KEY2))
    opened = ring.open(token)
    assert opened.encrypted and opened.serialized == decoded.serialized
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert b"aton:" not in raw and decoded.serialized.encode()[10:40] not in raw


def test_the_deal_needs_the_servers_key(server: ServerProcess, rotated_server: ServerProcess) -> None:
    """docs/security.md, "Chance": with the same seed, two servers sealing with different keys deal different
    games, and one key deals the same game twice (tests and replays); the seed a client
    chooses says nothing about the deal without the key."""

    def deal(srv: ServerProcess, game: str, players: int) -> list[tuple[Any, ...]]:
        """Seat 0's first hand in five seeded games (one hand alone often repeats by chance)."""
        hands = []
        for seed in range(70, 75):
            request = pb.CreateGameRequest(
                game=game, num_players=players, seed=seed, viewer=0, include_view=True
            )
            hands.append(tuple(getattr(srv.stub.CreateGame(request).view, game).hand))
        return hands

    for game, players in (("aton", 2), ("osirium", 4)):
        first = deal(server, game, players)
        assert deal(server, game, players) == first
        assert deal(rotated_server, game, players) != first


def test_ephemeral_key_warns(start_server: Any) -> None:
    server: ServerProcess = start_server(
        "--search-workers", "1", "--no-reflection", "--state-cache-size", "0"
    )
    assert server.info["ephemeral_key"] is True
    assert any(x.get("event") == "ephemeral_key" and x["level"] == "warning" for x in server.log_lines())
    token = server.stub.CreateGame(pb.CreateGameRequest(game="aton")).state
    assert server.stub.GetView(pb.GetViewRequest(state=token)).view.text
    # Defaults seal the token: no readable game text in it (docs/security.md).
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert b"aton" not in raw and b"rng=" not in raw
    # Without the state cache every call decodes its token: a few moves still work.
    player = 0
    for _ in range(5):
        legal = server.stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=player)).actions
        applied = server.stub.ApplyAction(
            pb.ApplyActionRequest(state=token, action_id=legal[-1].id, player=player)
        )
        token, player = applied.state, applied.status.current_player
    stub = reflection_pb2_grpc.ServerReflectionStub(server.channel)
    with pytest.raises(grpc.RpcError) as info:
        list(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert server.stop() == 0


def test_many_concurrent_cheap_calls(stub: Any) -> None:
    token = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=4, seed=2)).state
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(20):
                legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0)).actions
                stub.ApplyAction(pb.ApplyActionRequest(state=token, action_id=legal[0].id, player=0))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_a_killed_search_worker_gives_unavailable_then_the_pool_recovers(start_server: Any) -> None:
    server: ServerProcess = start_server("--search-workers", "1", HEKA_STATE_KEYS=KEY1)
    stub = server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=4)).state
    call = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(3000), viewer=0), timeout=30)
    _wait_in_flight(server, 1)
    forkservers = [p for p in children(server.proc.pid) if "forkserver" in cmdline(p)]
    workers = [w for f in forkservers for w in children(f)]
    assert workers
    for w in workers:
        os.kill(w, signal.SIGKILL)
    with pytest.raises(grpc.RpcError) as info:
        call.result()
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "worker died" in info.value.details()
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=20))
    assert stub.BotMove(pb.BotMoveRequest(state=token, bot=bot, viewer=0), timeout=30).action.id in legal_ids(
        stub, token
    )
    assert server.stop() == 0


def test_health_and_cheap_calls_answer_while_every_worker_searches(server: ServerProcess) -> None:
    """Both gRPC processes' search workers busy (more searches than workers are admitted):
    health checks and cheap calls still answer."""
    stub = server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=4, seed=6)).state
    channels = [grpc.insecure_channel(server.address, options=[("test.channel", i)]) for i in range(4)]
    try:
        calls = [
            pb_grpc.GameServiceStub(ch).BotMove.future(
                pb.BotMoveRequest(state=token, bot=slow_mcts(1500), viewer=0), timeout=30
            )
            for ch in channels
        ]
        _wait_in_flight(server, 2)
        for _ in range(5):
            assert health_status(server) == health_pb2.HealthCheckResponse.SERVING
            assert health_status(server, SERVICE) == health_pb2.HealthCheckResponse.SERVING
            assert legal_ids(stub, token)
        for call in calls:
            assert call.result().action.id in legal_ids(stub, token)
    finally:
        for ch in channels:
            ch.close()


def test_a_cancelled_call_stops_its_search_and_frees_the_slot(start_server: Any) -> None:
    """The client gives up on a 20 s search: the server stops it (should_stop) and the single
    search slot is free again long before the budget would have run out."""
    server: ServerProcess = start_server(
        "--search-workers",
        "1",
        "--max-concurrent-searches",
        "1",
        "--max-milliseconds",
        "30000",
        HEKA_STATE_KEYS=KEY1,
    )
    stub = server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=4)).state
    call = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(20000), viewer=0), timeout=60)
    _wait_in_flight(server, 1)
    call.cancel()
    end = time.monotonic() + 10
    while total(scrape(server), "heka_searches_in_flight") > 0:
        assert time.monotonic() < end, "the cancelled search kept its slot"
        time.sleep(0.1)
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=20))
    assert stub.BotMove(pb.BotMoveRequest(state=token, bot=bot, viewer=0), timeout=30).action.id in legal_ids(
        stub, token
    )
    assert server.stop() == 0


def test_a_dead_grpc_process_stops_the_supervisor_with_exit_1(start_server: Any) -> None:
    server: ServerProcess = start_server(
        "--grpc-processes", "2", "--search-workers", "1", HEKA_STATE_KEYS=KEY1
    )
    grpc_children = [p for p in children(server.proc.pid) if "serve" in cmdline(p)]
    assert len(grpc_children) == 2
    descendants = process_tree(server.proc.pid)[1:]
    assert len(descendants) >= 6  # 2 gRPC processes, their forkservers and search workers
    os.kill(grpc_children[0], signal.SIGKILL)
    assert server.proc.wait(timeout=60) == 1
    assert any(x.get("event") == "child_exit" for x in server.log_lines())
    # Nothing is left behind, not even the killed process's forkserver and search worker.
    end = time.monotonic() + 15
    while left := [p for p in descendants if _running(p)]:
        assert time.monotonic() < end, f"processes left behind: {[cmdline(p)[:80] for p in left]}"
        time.sleep(0.2)


def test_a_killed_supervisor_leaves_no_grpc_process_behind(start_server: Any) -> None:
    """SIGKILL (or an OOM kill) of the supervisor forwards no signal: its gRPC processes
    notice they are orphaned, drain and exit, with their search workers."""
    server: ServerProcess = start_server(
        "--grpc-processes", "2", "--search-workers", "1", HEKA_STATE_KEYS=KEY1
    )
    assert len([p for p in children(server.proc.pid) if "serve" in cmdline(p)]) == 2
    descendants = process_tree(server.proc.pid)[1:]
    server.proc.kill()
    server.proc.wait(timeout=10)
    end = time.monotonic() + 30
    while left := [p for p in descendants if _running(p)]:
        assert time.monotonic() < end, f"processes left behind: {[cmdline(p)[:80] for p in left]}"
        time.sleep(0.2)


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ---------------------------------------------------------------------------------------
# A burst over the cap on concurrent calls; the metrics listener's address
# ---------------------------------------------------------------------------------------


def _served_again(stub: Any) -> None:
    """Wait until the RPC cap lets a call through again (refusals meanwhile are OVERLOADED)."""
    for _ in range(200):
        try:
            assert stub.ListGames(pb.ListGamesRequest(), timeout=10).games
            return
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            time.sleep(0.05)
    raise AssertionError("the cap never let a call through again")


def test_calls_whose_request_never_comes_hold_the_rpc_cap_not_the_memory(start_server: Any) -> None:
    """A call holds a place under HEKA_MAX_CONCURRENT_RPCS from its arrival, before its
    request is read. Counted only from its request, a client that sent headers and never a
    request held ~20 KiB per call without bound (60,000 such calls: 1.2 GiB in one process,
    bench/half_open.py). Cap 3: three such calls hold the cap; every other call of the game
    service, ReviewGame included, is refused at once, OVERLOADED with a retry hint, while
    health checks answer; once they end, calls are served again."""
    server: ServerProcess = start_server("--max-concurrent-rpcs", "3", HEKA_STATE_KEYS=KEY1)
    never = threading.Event()

    def no_request() -> Any:
        never.wait(60)
        return
        yield b""

    channel = grpc.insecure_channel(server.address, options=[("test.half_open", 1)])
    half_open = channel.stream_unary(
        "/heka.v1.GameService/GetView", request_serializer=bytes, response_deserializer=bytes
    )
    try:
        grpc.channel_ready_future(channel).result(timeout=30)
        stalled = [half_open.future(no_request(), timeout=60) for _ in range(3)]
        stub = server.stub
        refused: grpc.RpcError | None = None
        for _ in range(200):  # until the three calls have arrived
            # One that arrived while a probe held a place was refused: open it again.
            stalled = [c if not c.done() else half_open.future(no_request(), timeout=60) for c in stalled]
            try:
                stub.ListGames(pb.ListGamesRequest(), timeout=10)
            except grpc.RpcError as err:
                refused = err
                break
            time.sleep(0.05)
        assert refused is not None and refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert retry_info(refused) == ("OVERLOADED", 0.25)
        review = stub.ReviewGame(pb.ReviewGameRequest(state="x", seat=0), timeout=10)
        with pytest.raises(grpc.RpcError) as info:
            list(review)
        assert retry_info(info.value) == ("OVERLOADED", 0.25)
        assert health_status(server) == health_pb2.HealthCheckResponse.SERVING
        assert not any(call.done() for call in stalled)
    finally:
        never.set()
        channel.close()
    _served_again(stub)  # their places come back when they end


def test_a_burst_over_the_rpc_cap_is_resource_exhausted_never_cancelled(start_server: Any) -> None:
    """Cap 2: two bot calls hold both slots (long searches), then a burst of 120 calls of
    every kind over 3 connections: each is refused at once with RESOURCE_EXHAUSTED, reason
    OVERLOADED and a retry hint; none is CANCELLED; health checks answer throughout; once
    the bot calls end, calls are served again."""
    server: ServerProcess = start_server(
        "--search-workers",
        "1",
        "--max-concurrent-searches",
        "2",
        "--max-concurrent-rpcs",
        "2",
        HEKA_STATE_KEYS=KEY1,
    )
    stub = server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=3)).state
    legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0)).actions
    held = [
        stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow_mcts(20_000), viewer=0), timeout=60)
        for _ in range(2)
    ]
    _wait_in_flight(server, 2)
    requests = [
        ("ListGames", pb.ListGamesRequest()),
        ("GetView", pb.GetViewRequest(state=token)),
        ("ApplyAction", pb.ApplyActionRequest(state=token, action_id=legal[0].id, player=0)),
        ("BotMove", pb.BotMoveRequest(state=token, viewer=0, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM))),
        ("CreateGame", pb.CreateGameRequest(game="osirium", num_players=3)),
    ]
    channels = [grpc.insecure_channel(server.address, options=[("test.burst", i)]) for i in range(3)]
    try:
        stubs = [pb_grpc.GameServiceStub(ch) for ch in channels]
        burst = [
            getattr(stubs[i % 3], name).future(request, timeout=30)
            for i in range(120)
            for name, request in [requests[i % len(requests)]]
        ]
        assert health_status(server) == health_pb2.HealthCheckResponse.SERVING
        codes = []
        for call in burst:
            with pytest.raises(grpc.RpcError) as info:
                call.result()
            codes.append(info.value.code())
            assert retry_info(info.value) == ("OVERLOADED", 0.25)
            assert "HEKA_MAX_CONCURRENT_RPCS" in info.value.details()
        assert set(codes) == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert health_status(server, SERVICE) == health_pb2.HealthCheckResponse.SERVING
    finally:
        for ch in channels:
            ch.close()
    for call in held:
        call.cancel()
    _served_again(stub)  # the cancelled calls' slots come back
    samples = scrape(server)
    assert total(samples, "heka_grpc_server_handled_total", grpc_code="RESOURCE_EXHAUSTED") >= 120
    assert total(samples, "heka_grpc_server_handled_total", grpc_code="CANCELLED") <= 2  # the held calls


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket listening on ``port`` (Linux /proc/net/tcp*)."""
    import ipaddress

    found = set()
    for path, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            with open(path) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local, state = fields[1], fields[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(addr_hex)
            # /proc lists each 32-bit word in host (little-endian) order
            words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.add(str(ipaddress.ip_address(words)) if width == 8 else str(ipaddress.IPv6Address(words)))
    return found


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--host", "127.0.0.1"), "127.0.0.1"),
        (("--host", "127.0.0.1", "--grpc-processes", "2"), "127.0.0.1"),
        (("--metrics-host", "127.0.0.1"), "127.0.0.1"),
        (("--host", "127.0.0.1", "--metrics-host", "0.0.0.0"), "0.0.0.0"),
    ],
    ids=["grpc-host", "grpc-host-2-processes", "metrics-host", "metrics-host-wins"],
)
def test_the_metrics_listener_binds_the_configured_host(
    start_server: Any, args: tuple[str, ...], expected: str
) -> None:
    server: ServerProcess = start_server("--search-workers", "1", *args, HEKA_STATE_KEYS=KEY1)
    assert server.info["metrics_host"] == expected
    assert _listening_addresses(server.metrics_port) == {expected}
    assert total(scrape(server), "heka_grpc_server_started_total") >= 0  # it answers
    assert server.stop() == 0


def _loopback(address: str) -> bool:
    import ipaddress

    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


@pytest.mark.parametrize("args", [(), ("--grpc-processes", "2")], ids=["one-process", "2-processes"])
def test_the_server_alone_listens_on_this_machine_only(start_server: Any, args: tuple[str, ...]) -> None:
    """No --host: gRPC and metrics listen on loopback addresses only (the image and the
    ConfigMap bind every address, for the pod's own)."""
    server: ServerProcess = start_server("--search-workers", "1", *args, HEKA_STATE_KEYS=KEY1)
    grpc_addresses = _listening_addresses(server.port)
    metrics_addresses = _listening_addresses(server.metrics_port)
    assert grpc_addresses and metrics_addresses
    assert all(_loopback(a) for a in grpc_addresses | metrics_addresses), (grpc_addresses, metrics_addresses)
    assert server.stub.ListGames(pb.ListGamesRequest(), timeout=30).games  # it answers
    assert server.stop() == 0


def test_every_address_is_bound_only_on_request(start_server: Any) -> None:
    server: ServerProcess = start_server("--search-workers", "1", "--host", "[::]", HEKA_STATE_KEYS=KEY1)
    assert not all(_loopback(a) for a in _listening_addresses(server.port))
    assert server.stop() == 0
