"""Shed load: the load tool and the Locust user back off from refusals that carry a retry
hint (RetryInfo), count them apart from errors, and report goodput (bot moves)."""

from __future__ import annotations

import asyncio
import json
import random

import grpc
import grpc.aio
import pytest
from fake_server import LENGTH, PLAYERS, FakeServer

from service import cli
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.retry import Backoff
from service.loadtest.runner import run_task
from service.loadtest.scenarios import PlayScenario, ScenarioConfig
from service.loadtest.stats import Recorder, build_report, format_report

EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
#: Bot moves in one game of the fake (every other seat is a bot's).
BOT_MOVES = LENGTH * (PLAYERS - 1) // PLAYERS


def play_one(
    server: FakeServer, backoff: Backoff | None, seed: int = 7
) -> tuple[bool, Recorder, list[float]]:
    """One ``play`` task against the fake; the backoff's sleeps are recorded, not slept."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def main() -> tuple[bool, Recorder]:
        recorder = Recorder()
        async with grpc.aio.insecure_channel(server.target) as channel:
            gen = PlayScenario(ScenarioConfig()).task(random.Random(1))
            ok = await run_task(
                pb_grpc.GameServiceStub(channel),
                gen,
                recorder,
                10.0,
                None,
                backoff=backoff,
                rng=random.Random(seed),
                sleep=sleep,
            )
        return ok, recorder

    ok, recorder = asyncio.run(main())
    return ok, recorder, slept


def test_refusals_with_a_retry_hint_are_shed_and_sent_again_after_the_hint():
    with FakeServer() as server:
        server.service.shed["ApplyAction"] = [(EXHAUSTED, 0.2)] * 3 + [(UNAVAILABLE, 0.5)]
        ok, recorder, slept = play_one(server, Backoff(max_retries=10, max_seconds=60.0))
        calls = list(server.service.calls)
    assert ok and recorder.tasks_completed == 1
    assert recorder.error_count == 0 and recorder.tasks_failed == 0
    assert recorder.shed_count == 4
    assert recorder.methods["ApplyAction"].shed_codes == {"RESOURCE_EXHAUSTED": 3, "UNAVAILABLE": 1}
    # The refused call went out again each time: 4 refusals + the answered calls.
    assert calls.count("ApplyAction") == recorder.methods["ApplyAction"].latency.count + 4
    # Never sooner than the hint, doubled for each refusal in a row, with jitter on top.
    hints = [0.2, 0.2, 0.2, 0.5]
    assert len(slept) == 4
    for attempt, (hint, delay) in enumerate(zip(hints, slept, strict=True), start=1):
        base = hint * 2 ** (attempt - 1)
        assert base <= delay <= 2 * base, (attempt, delay)
    assert len(set(slept[:3])) == 3  # jittered, not one fixed delay
    assert recorder.bot_moves == BOT_MOVES  # goodput: the bot moves of the completed game


def test_the_jitter_is_seeded():
    delays = []
    for _ in range(2):
        with FakeServer() as server:
            server.service.shed["CreateGame"] = [(EXHAUSTED, 0.1)] * 3
            delays.append(play_one(server, Backoff(), seed=3)[2])
    assert delays[0] == delays[1] and len(delays[0]) == 3


def test_a_refusal_without_a_retry_hint_is_an_error():
    with FakeServer() as server:
        server.service.shed["ApplyAction"] = [(EXHAUSTED, None)]
        ok, recorder, slept = play_one(server, Backoff())
    assert not ok and slept == []
    assert recorder.shed_count == 0 and recorder.error_count == 1 and recorder.tasks_failed == 1


def test_without_backoff_a_refusal_is_an_error():
    with FakeServer() as server:
        server.service.shed["ApplyAction"] = [(EXHAUSTED, 0.1)]
        ok, recorder, slept = play_one(server, None)
    assert not ok and slept == []
    assert recorder.error_count == 1 and recorder.shed_count == 0


def test_a_task_gives_up_after_its_retries_and_that_is_not_an_error():
    with FakeServer() as server:
        server.service.shed["ApplyAction"] = [(EXHAUSTED, 0.1)] * 5
        ok, recorder, slept = play_one(server, Backoff(max_retries=2))
    assert not ok and len(slept) == 2
    assert recorder.tasks_gave_up == 1 and recorder.shed_count == 3
    assert recorder.error_count == 0 and recorder.tasks_failed == 0


def test_report_gives_shed_calls_and_goodput_apart_from_errors():
    with FakeServer() as server:
        server.service.shed["ApplyAction"] = [(EXHAUSTED, 0.05)] * 2
        _ok, recorder, _slept = play_one(server, Backoff())
    report = build_report(recorder, 2.0, {"scenario": "play"})
    assert report["errors"] == 0 and report["shed"] == 2
    assert report["goodput"] == BOT_MOVES / 2.0
    assert "RESOURCE_EXHAUSTED" not in report["status_codes"]
    assert report["shed_distribution"] == {"RESOURCE_EXHAUSTED: ApplyAction shed on purpose": 2}
    text = format_report(report)
    assert f"Goodput:       {BOT_MOVES / 2.0:.2f} bot moves/s" in text
    assert "Shed:          2 calls refused with a retry hint" in text


@pytest.mark.parametrize("no_retry", [False, True])
def test_cli_exit_status_counts_shed_calls_apart(capsys, no_retry):
    with FakeServer() as server:
        server.service.shed["ApplyAction"] = [(EXHAUSTED, 0.01)] * 3
        argv = ["loadtest", "--target", server.target, "--scenario", "play", "--concurrency", "1"]
        argv += ["--duration", "0.5", "--json", "--no-progress"]
        code = cli.main(argv + (["--no-retry"] if no_retry else []))
    report = json.loads(capsys.readouterr().out)
    if no_retry:
        assert code == 1 and report["errors"] >= 1 and report["shed"] == 0
    else:
        assert code == 0 and report["errors"] == 0 and report["shed"] == 3
        assert report["goodput"] > 0 and report["bot_moves"] >= BOT_MOVES // 2


def test_the_delay_stays_at_its_cap_however_many_attempts() -> None:
    """The doubling would overflow a float at attempt 1,025 (2.0 ** 1024): the delay is the
    cap from there on, not an OverflowError."""
    backoff = Backoff(max_retries=5000, max_seconds=30.0, jitter=0.0)
    for attempt, delay in ((1, 0.5), (3, 2.0), (12, 30.0), (1025, 30.0), (5000, 30.0)):
        assert backoff.delay(0.5, attempt, random.Random(1)) == delay
