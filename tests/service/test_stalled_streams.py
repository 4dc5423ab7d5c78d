"""A ReviewGame client that stops reading: the server keeps serving, counts the call by how
it ended, and frees its review slot at the review's time cap (docs/review.md, "Time").

Such a client leaves a message waiting on HTTP/2 flow control. When it then cancels, or its
deadline passes, gRPC drops the stream's generator, which is closed later; the call must
not be touched then (reading its peer crashed the process)."""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest
from service_helpers import KEY1, ServerProcess, call_error, scrape, total, wait_metric

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

#: A channel that reads ahead at most 1 KiB: a stream it does not read stalls at once.
SLOW_READER = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]
REVIEW_CAP = 2.0  # HEKA_MAX_REVIEW_SECONDS of the server under test
HANDLED = "heka_grpc_server_handled_total"


@pytest.fixture(scope="module")
def server(start_server: Any) -> ServerProcess:
    """One review at a time, capped at REVIEW_CAP seconds; access log on (it reads the peer)."""
    return start_server(  # type: ignore[no-any-return]
        "--search-workers",
        "1",
        HEKA_STATE_KEYS=KEY1,
        HEKA_MAX_REVIEW_SECONDS=str(REVIEW_CAP),
        HEKA_MAX_CONCURRENT_REVIEWS="1",
        HEKA_ACCESS_LOG="true",
    )


@pytest.fixture(scope="module")
def long_review(server: ServerProcess) -> pb.ReviewGameRequest:
    """A whole 4-player game of random bots, reviewed cheaply: hundreds of messages."""
    stub = server.stub
    start = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=4, seed=3)).state
    bots = [pb.BotSeat(seat=s, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM, seed=3 + s)) for s in range(4)]
    state, actions = start, []
    while True:
        r = stub.AdvanceBots(
            pb.AdvanceBotsRequest(state=state, bots=bots, trusted_backend=True, compact_actions=True)
        )
        actions += [t.action.id for t in r.bot_turns]
        state = r.state
        if r.stop_reason != pb.STOP_REASON_MOVE_LIMIT:
            break
    assert len(actions) > 300
    return pb.ReviewGameRequest(
        state=start, actions=actions, checkpoints=[state], all_seats=True, trusted_backend=True, iterations=1
    )


def stalled(server: ServerProcess, request: pb.ReviewGameRequest, **kwargs: Any) -> tuple[grpc.Channel, Any]:
    """A review stream nobody reads, once the server has messages waiting to be sent."""
    channel = grpc.insecure_channel(server.address, options=SLOW_READER)
    stream = pb_grpc.GameServiceStub(channel).ReviewGame(request, **kwargs)
    time.sleep(1.0)
    return channel, stream


def alive(server: ServerProcess) -> None:
    assert server.proc.poll() is None, "the server process died"
    assert server.stub.ListGames(pb.ListGamesRequest(), timeout=10).games


def handled(server: ServerProcess, code: str) -> float:
    return total(scrape(server), HANDLED, grpc_method="ReviewGame", grpc_code=code)


@pytest.mark.parametrize("end", ["cancel", "deadline"])
def test_a_stalled_stream_that_ends_leaves_the_server_serving(
    server: ServerProcess, long_review: pb.ReviewGameRequest, end: str
) -> None:
    code = "CANCELLED" if end == "cancel" else "DEADLINE_EXCEEDED"
    before = handled(server, code)
    ok_before = handled(server, "OK")
    channel, stream = stalled(server, long_review, **({"timeout": 1.5} if end == "deadline" else {}))
    if end == "cancel":
        stream.cancel()
    else:
        time.sleep(1.0)  # past the deadline
    wait_metric(server, HANDLED, before + 1, grpc_method="ReviewGame", grpc_code=code)
    alive(server)
    assert handled(server, "OK") == ok_before  # an abandoned stream is not a success
    # The slot is free again: the next review runs.
    assert list(server.stub.ReviewGame(long_review_head(long_review), timeout=30))
    log = server.log_path.read_text()
    assert "ExecuteBatchError" not in log  # a client gone away is not an error
    channel.close()


def long_review_head(request: pb.ReviewGameRequest) -> pb.ReviewGameRequest:
    """The first ten moves of ``request``'s game."""
    return pb.ReviewGameRequest(
        state=request.state, actions=request.actions[:10], all_seats=True, trusted_backend=True, iterations=1
    )


def test_a_stream_nobody_reads_ends_at_the_reviews_time_cap(
    server: ServerProcess, long_review: pb.ReviewGameRequest
) -> None:
    """Without a deadline, a client that never reads held the review slot for good."""
    before = handled(server, "DEADLINE_EXCEEDED")
    channel, stream = stalled(server, long_review)
    head = long_review_head(long_review)
    err = call_error(lambda r: list(server.stub.ReviewGame(r, timeout=10)), head)
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # the one slot is held
    # The cap and its grace (at most the cap again) end the call on the server.
    wait_metric(server, HANDLED, before + 1, grpc_method="ReviewGame", grpc_code="DEADLINE_EXCEEDED")
    assert list(server.stub.ReviewGame(long_review_head(long_review), timeout=30))
    # Read at last, the stalled stream gives what was queued, then says why it ended.
    with pytest.raises(grpc.RpcError) as info:
        for _ in stream:
            pass
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "HEKA_MAX_REVIEW_SECONDS" in info.value.details()
    alive(server)
    channel.close()
