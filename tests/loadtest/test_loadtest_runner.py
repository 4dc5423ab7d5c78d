"""The load tool's scenarios and runner against a fake in-process GameService: what is
sent, how open and closed loops count tasks, many connections, errors and the CLI."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import random
import re

import grpc
import pytest
from fake_server import LENGTH, FakeGameService, FakeServer, call_directly

from service import cli
from service.gen.heka.v1 import game_service_pb2 as pb
from service.loadtest.runner import LoadSettings, SetupError, raw_stubs, run_load
from service.loadtest.scenarios import (
    BotScenario,
    CallScenario,
    CheapScenario,
    PlayScenario,
    ScenarioConfig,
    drive,
    make_scenario,
)
from service.loadtest.stats import build_report


def run(scenario, make_stub=None, meters=None, **kw):
    settings = LoadSettings(**kw)
    return asyncio.run(run_load(scenario, settings, progress_stream=None, make_stub=make_stub, meters=meters))


# -- scenarios, driven without gRPC -----------------------------------------------------------


def test_play_scenario_plays_a_whole_game_in_order():
    service = FakeGameService()
    calls = drive(PlayScenario(ScenarioConfig()).task(random.Random(1)), lambda c: call_directly(service, c))
    assert service.calls[0] == "CreateGame"
    assert calls == len(service.calls)
    # One call per move of seat 0 (the person): the bots play inside each ApplyAction, and
    # the legal actions come with every response.
    assert service.calls[1:] == ["ApplyAction"] * (LENGTH // 2)


def test_play_scenario_with_advance_bots_makes_two_calls_per_move():
    service = FakeGameService()
    drive(
        PlayScenario(ScenarioConfig(bot_rpc="AdvanceBots")).task(random.Random(1)),
        lambda c: call_directly(service, c),
    )
    assert service.calls[1:] == ["ApplyAction", "AdvanceBots"] * (LENGTH // 2)


def test_play_scenario_with_botmove_calls_one_per_bot_turn():
    service = FakeGameService()
    drive(
        PlayScenario(ScenarioConfig(bot_rpc="BotMove")).task(random.Random(1)),
        lambda c: call_directly(service, c),
    )
    assert service.calls.count("BotMove") == LENGTH // 2
    assert "AdvanceBots" not in service.calls


def test_bot_scenario_needs_setup_then_sends_botmove_at_the_difficulty():
    service = FakeGameService()
    scenario = BotScenario(ScenarioConfig(difficulty="hard", pool_size=3, pool_moves=2))
    drive(scenario.setup(random.Random(1)), lambda c: call_directly(service, c))
    assert 1 <= len(scenario.pool) <= 3
    sent = []
    drive(scenario.task(random.Random(2)), lambda c: sent.append(c) or call_directly(service, c))
    assert [c.method for c in sent] == ["BotMove"]
    assert sent[0].request.bot.difficulty == 3  # DIFFICULTY_HARD
    assert not sent[0].request.apply


def test_cheap_scenario_uses_only_cheap_methods_one_per_task():
    service = FakeGameService()
    scenario = CheapScenario(ScenarioConfig(pool_size=2))
    drive(scenario.setup(random.Random(1)), lambda c: call_directly(service, c))
    service.calls.clear()
    for i in range(200):
        assert drive(scenario.task(random.Random(i)), lambda c: call_directly(service, c)) == 1
    assert set(service.calls) == {"ListGames", "CreateGame", "GetView", "ListLegalActions", "ApplyAction"}


def test_tasks_are_reproducible_from_the_seed():
    def requests(seed):
        sent = []
        service = FakeGameService()
        drive(
            PlayScenario(ScenarioConfig()).task(random.Random(seed)),
            lambda c: sent.append(c) or call_directly(service, c),
        )
        return [c.request.SerializeToString() for c in sent]

    assert requests(5) == requests(5)
    assert requests(5) != requests(6)


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="unknown bot"):
        ScenarioConfig(bot="alphazero")
    with pytest.raises(ValueError, match="unknown scenario"):
        make_scenario("soak", ScenarioConfig())
    with pytest.raises(ValueError, match="exactly one"):
        LoadSettings(rate=1.0, concurrency=2)
    with pytest.raises(ValueError, match="exactly one"):
        LoadSettings()
    with pytest.raises(ValueError, match="warmup"):
        LoadSettings(concurrency=1, warmup=-1.0)
    with pytest.raises(ValueError, match="must be finite"):
        LoadSettings(rate=math.inf)
    with pytest.raises(ValueError, match="must be finite"):
        LoadSettings(rate=math.nan)
    with pytest.raises(ValueError, match="must be finite"):
        LoadSettings(concurrency=1, timeout=math.inf)
    with pytest.raises(ValueError, match="must be finite"):
        LoadSettings(concurrency=1, duration=math.nan)
    with pytest.raises(ValueError, match="must be finite"):
        LoadSettings(rate=1.0, end_grace=math.inf)
    with pytest.raises(ValueError, match="at least one request"):
        CallScenario("ListGames", [])


def test_call_scenario_sends_its_requests_in_turn():
    requests = [pb.GetViewRequest(state=f"aton:{i}") for i in range(3)]
    scenario = CallScenario("GetView", requests)
    sent = []
    for index in range(7):
        assert drive(scenario.task_for(1, index), lambda c: sent.append(c) or "reply") == 1
    assert [c.method for c in sent] == ["GetView"] * 7
    assert [c.request.state for c in sent] == [f"aton:{i % 3}" for i in range(7)]
    drive(scenario.task(random.Random(1)), sent.append)
    assert sent[-1].request in requests


# -- the runner over real gRPC channels --------------------------------------------------------


def test_open_loop_starts_exactly_rate_times_duration_tasks():
    with FakeServer() as server:
        recorder, elapsed, setup = run(
            CheapScenario(ScenarioConfig(pool_size=2)), target=server.target, rate=80.0, duration=0.5
        )
    assert recorder.tasks_started == 40  # the schedule, not the timing, decides the count
    assert recorder.tasks_completed == 40
    assert recorder.error_count == 0
    assert recorder.rpc_count == 40
    assert setup.rpc_count >= 2  # pool creation is measured apart
    assert elapsed >= 0.45


def test_closed_loop_plays_complete_games_over_many_connections():
    with FakeServer() as server:
        recorder, _, _ = run(
            PlayScenario(ScenarioConfig()), target=server.target, concurrency=3, duration=0.5, connections=3
        )
        peers = server.service.peers
    assert recorder.error_count == 0
    assert recorder.tasks_completed >= 3
    created = recorder.methods["CreateGame"].latency.count
    assert created == recorder.tasks_started
    assert recorder.methods["ApplyAction"].latency.count >= recorder.tasks_completed * LENGTH // 2
    assert len(peers) == 3, peers  # three channels -> three TCP connections


def test_rpc_errors_are_counted_by_code_and_message():
    with FakeServer() as server:
        server.service.fail["ApplyAction"] = grpc.StatusCode.UNAVAILABLE
        recorder, elapsed, _ = run(
            PlayScenario(ScenarioConfig()), target=server.target, concurrency=2, duration=0.3
        )
    report = build_report(recorder, elapsed, {})
    assert report["errors"] == recorder.tasks_failed > 0
    assert report["status_codes"]["UNAVAILABLE"] == report["errors"]
    assert report["error_distribution"] == {"UNAVAILABLE: ApplyAction fails on purpose": report["errors"]}
    assert recorder.tasks_completed == 0


def test_scenario_errors_are_counted():
    with FakeServer() as server:
        server.service.illegal_bot_action = True
        recorder, _, _ = run(
            BotScenario(ScenarioConfig(pool_size=2)), target=server.target, rate=20.0, duration=0.2
        )
    assert recorder.task_errors and recorder.error_count == recorder.tasks_started == 4


def test_setup_failure_and_unreachable_server_raise_setup_error():
    with FakeServer() as server:
        server.service.fail["CreateGame"] = grpc.StatusCode.INTERNAL
        with pytest.raises(SetupError, match="INTERNAL"):
            run(CheapScenario(ScenarioConfig()), target=server.target, rate=1.0, duration=0.1)
        port = server.port
    with pytest.raises(SetupError, match="could not connect"):
        asyncio.run(
            run_load(
                CheapScenario(ScenarioConfig()),
                LoadSettings(target=f"127.0.0.1:{port}", rate=1.0, duration=0.1, connect_timeout=0.5),
                progress_stream=None,
            )
        )


def test_cli_json_report_and_exit_codes(capsys):
    with FakeServer() as server:
        code = cli.main(
            [
                "loadtest",
                "--target",
                server.target,
                "--scenario",
                "cheap",
                "--rate",
                "50",
                "--duration",
                "300ms",
                "--connections",
                "2",
                "--json",
                "--no-progress",
            ]
        )
        out = capsys.readouterr().out
        assert code == 0
        report = json.loads(out)
        assert report["rpcs"] == 15 and report["errors"] == 0
        assert report["settings"]["connections"] == 2 and report["settings"]["rate"] == 50.0
        assert report["status_codes"] == {"OK": 15}

        server.service.fail["GetView"] = grpc.StatusCode.RESOURCE_EXHAUSTED
        code = cli.main(
            [
                "loadtest",
                "--target",
                server.target,
                "--scenario",
                "cheap",
                "--concurrency",
                "2",
                "--duration",
                "0.3",
                "--no-progress",
            ]
        )
        text = capsys.readouterr().out
        assert code == 1
        assert "Status code distribution:" in text and "[RESOURCE_EXHAUSTED]" in text


def test_cli_progress_line_goes_to_stderr(capsys):
    with FakeServer() as server:
        code = cli.main(
            [
                "loadtest",
                "--target",
                server.target,
                "--scenario",
                "cheap",
                "--rate",
                "20",
                "--duration",
                "0.2",
            ]
        )
    captured = capsys.readouterr()
    assert code == 0
    assert "rpcs" in captured.err and "errors 0" in captured.err
    assert "Summary:" in captured.out and "rpcs," not in captured.out


def test_durations_parse_with_units():
    import argparse

    from service.commands.loadtest import parse_duration

    assert parse_duration("10") == 10.0
    assert parse_duration("1.5m") == 90.0
    assert parse_duration("500ms") == 0.5
    assert parse_duration("1h") == 3600.0
    assert parse_duration("24h") == parse_duration("1440m") == parse_duration("86400000ms") == 86400.0
    for bad, message in [
        ("0", "must be positive, not '0'"),
        ("-1s", "must be positive, not '-1s'"),
        ("ten", "not a duration: 'ten'"),
        ("5d", "not a duration: '5d'"),
        ("24.001h", "must be at most 24h (86,400 s), not '24.001h'"),
        ("86401", "must be at most 24h (86,400 s), not '86401'"),
        ("9999999999s", "must be at most 24h"),
        ("9" * 400, "must be at most 24h"),  # inf as a float
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)):
            parse_duration(bad)


def test_closed_loop_of_one_call_with_a_warmup_and_a_meter():
    """What the throughput bench does: one call per task from a pool; the warm-up's calls
    are not recorded; a meter read at the edges of the measured window."""
    requests = [pb.ListLegalActionsRequest(state=f"aton:{i}", viewer=i % 2) for i in range(4)]
    with FakeServer() as server:
        recorder, elapsed, setup = run(
            CallScenario("ListLegalActions", requests),
            meters={"served": lambda: len(server.service.calls)},
            target=server.target,
            concurrency=4,
            duration=0.3,
            warmup=0.5,
            connections=2,
        )
        served = len(server.service.calls)
    assert setup.rpc_count == 0
    assert set(recorder.methods) == {"ListLegalActions"}
    assert recorder.error_count == 0 and recorder.rpc_count == recorder.tasks_completed > 0
    assert served > recorder.rpc_count  # the warm-up's calls were made, not recorded
    # The meter moved by the measured calls, give or take the calls in flight at its edges.
    assert recorder.rpc_count - 4 <= recorder.meters["served"] <= recorder.rpc_count + 4
    assert elapsed > 0


def test_a_stop_event_ends_the_run_early():
    async def go(target):
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, stop.set)
        settings = LoadSettings(target=target, concurrency=2, duration=60.0)
        return await run_load(
            CallScenario("ListGames", [pb.ListGamesRequest()]), settings, progress_stream=None, stop=stop
        )

    with FakeServer() as server:
        recorder, elapsed, _ = asyncio.run(go(server.target))
    assert recorder.tasks_completed > 0 and recorder.error_count == 0
    assert elapsed < 60.0


def test_raw_stubs_load_a_server_that_is_not_heka():
    from concurrent import futures

    def echo(request: bytes, _context) -> bytes:
        return request

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("t.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        recorder, _, _ = run(
            CallScenario("Echo", [b"x" * 100, b"y" * 50]),
            make_stub=raw_stubs({"Echo": "/t.Echo/Echo"}),
            target=f"127.0.0.1:{port}",
            concurrency=2,
            duration=0.3,
        )
    finally:
        server.stop(None)
    assert recorder.error_count == 0 and recorder.tasks_completed > 0
    assert set(recorder.methods) == {"Echo"}
    # Raw bodies are counted by their length: each completed call sent what it received.
    assert recorder.completed_bytes_sent == recorder.completed_bytes_received > 0


def test_an_open_loop_run_abandons_the_tasks_still_backing_off_at_its_end():
    """With ``end_grace``, a task still waiting past the window and the grace (here: backing
    off after a refusal with a long retry hint) is abandoned, not awaited: an overloaded run
    does not outlast its duration by the server's hints."""
    with FakeServer() as server:
        # Every ListGames call is refused with a 30 s hint: no task can finish.
        server.service.shed["ListGames"] = [(grpc.StatusCode.RESOURCE_EXHAUSTED, 30.0)] * 100
        recorder, elapsed, _ = run(
            CallScenario("ListGames", [pb.ListGamesRequest()]),
            target=server.target,
            rate=40.0,
            duration=0.25,
            end_grace=0.05,
        )
    assert elapsed < 10.0  # not the 30 s of the hints: the backoffs were not awaited
    assert recorder.tasks_started == 10
    assert recorder.tasks_completed == 0
    assert recorder.tasks_abandoned == 10
    assert recorder.shed_count == 10 and recorder.error_count == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["--max-retries", "-1"], "--max-retries must be from 0 to 1,000, not -1"),
        (["--max-retries", "1001"], "--max-retries must be from 0 to 1,000, not 1001"),
        (["--pool", "0", "--scenario", "bot"], "--pool must be from 1 to 1,000, not 0"),
        (["--pool", "1001", "--scenario", "bot"], "--pool must be from 1 to 1,000, not 1001"),
        (["--connections", "0"], "--connections must be from 1 to 256, not 0"),
        (["--connections", "257"], "--connections must be from 1 to 256, not 257"),
        (["--concurrency", "0"], "--concurrency must be from 1 to 10,000, not 0"),
        (["--concurrency", "10001"], "--concurrency must be from 1 to 10,000, not 10001"),
        (["--rate", "10", "--max-in-flight", "0"], "--max-in-flight must be from 1 to 10,000, not 0"),
        (
            ["--rate", "10", "--max-in-flight", "99999999999999999999"],
            "--max-in-flight must be from 1 to 10,000, not 99999999999999999999",
        ),
        (["--seed", "-1"], "--seed must be from 0 to 18,446,744,073,709,551,615, not -1"),
        (
            ["--seed", str(2**64)],
            f"--seed must be from 0 to 18,446,744,073,709,551,615, not {2**64}",
        ),
        (
            ["--rate", "nan"],
            "--rate must be a number of tasks per second above 0 and at most 1,000,000, not nan",
        ),
        (
            ["--rate", "1e308", "--max-in-flight", "2"],
            "--rate must be a number of tasks per second above 0 and at most 1,000,000, not 1e+308",
        ),
        (["--rate", "1000001"], "--rate must be a number of tasks per second above 0 and at most 1,000,000"),
        (["--rate", "0"], "--rate must be a number of tasks per second above 0 and at most 1,000,000, not 0"),
        (["--players", "-1"], "--players must be at least 0, not -1"),
        (["--players", str(10**30)], f"--players {10**30}: aton is played by 2 players, not {10**30}"),
        (["--end-grace", "1s"], "--end-grace goes with --rate"),
        (["--max-in-flight", "5"], "--max-in-flight goes with --rate (an open loop)"),
        (["--max-in-flight", "5", "--concurrency", "1"], "--max-in-flight goes with --rate"),
        (["--bot-rpc", "BotMove"], "--bot-rpc chooses how the play scenario moves its bots, not cheap's"),
        (["--scenario", "play", "--pool", "5"], "--pool sizes the bot and cheap scenarios' prepared states"),
        (["--max-retries", "3", "--no-retry"], "--max-retries and --no-retry disagree"),
        (
            ["--scenario", "bot", "--bot", "random", "--difficulty", "hard"],
            "--difficulty is a preset of --bot mcts, not of --bot random",
        ),
        (["--difficulty", "hard"], "--bot and --difficulty choose the bots of the bot and play scenarios"),
        (["--scenario", "cheap", "--bot", "random"], "cheap runs none"),
        (["--players", "9"], "--players 9: aton is played by 2 players, not 9"),
        (["--game", "osirium", "--players", "5"], "--players 5: osirium is played by 2 to 4 players, not 5"),
    ],
)
def test_a_bad_flag_is_named_before_any_connection(args, message, capsys):
    from service import cli

    # 127.0.0.1:9 (discard) has no server: a flag refused after connecting would say so instead.
    assert cli.main(["loadtest", "--target", "127.0.0.1:9", "--duration", "1s", "--no-progress", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("heka loadtest: ") and message in err and "could not connect" not in err


def test_an_unknown_game_is_refused_as_it_is_parsed(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["loadtest", "--target", "127.0.0.1:9", "--duration", "1s", "--game", "nosuch"])
    assert exit_info.value.code == 2
    assert "argument --game: unknown game 'nosuch' (known: aton, osirium)" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1", "", "::1:50051"])
def test_a_target_without_a_valid_port_is_refused_as_it_is_parsed(target, capsys):
    """gRPC wraps a port past 65535 around and gives a port-less target 443: refused first."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["loadtest", "--target", target, "--duration", "1s", "--no-progress"])
    assert exit_info.value.code == 2
    assert "argument --target: expected HOST:PORT with a port 1..65535" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--duration", "--warmup", "--timeout", "--end-grace"])
@pytest.mark.parametrize("value", ["9999999999s", "25h", "86400.5", "9" * 400])
def test_a_duration_flag_past_a_day_is_refused_as_it_is_parsed(flag, value, capsys):
    """A deadline of 9999999999 s overflowed into an immediate DEADLINE_EXCEEDED: every
    duration is at most 24 h, refused by argparse (exit 2) naming the flag, before any run."""
    argv = ["loadtest", "--target", "127.0.0.1:9", "--rate", "10", "--duration", "1s", "--no-progress"]
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*argv, flag, value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: a duration must be at most 24h (86,400 s), not {value!r}" in err
    assert "could not connect" not in err


def test_the_largest_value_of_each_flag_is_accepted():
    """Each range includes its upper end."""
    from service.commands.loadtest import _check_flags

    def check(*flags: str) -> None:
        args = cli.build_parser().parse_args(["loadtest", "--target", "127.0.0.1:9", *flags])
        _check_flags(args)  # no ValueError

    check(
        *("--rate", "1000000", "--max-in-flight", "10000", "--connections", "256"),
        *("--pool", "1000", "--max-retries", "1000", "--seed", str(2**64 - 1)),
        *("--duration", "24h", "--warmup", "86400s", "--timeout", "1440m", "--end-grace", "86400000ms"),
    )
    check("--concurrency", "10000", "--seed", "0", "--max-retries", "0")
    args = cli.build_parser().parse_args(["loadtest", "--timeout", "24h"])
    assert args.timeout == 86400.0


def test_an_open_loop_at_a_huge_rate_ends_when_the_clock_passes_the_window():
    """At 1e308 tasks/s, ``start + i / rate`` never reaches the end of the window (``i / rate``
    vanishes next to ``start``): the loop ends when the clock does, not never. A fake clock
    that moves 1 ms at each reading: the window ends after 500 readings."""
    readings = itertools.count()

    def clock() -> float:
        return 100_000.0 + next(readings) * 0.001

    async def go(target):
        settings = LoadSettings(target=target, rate=1e308, duration=0.5, max_in_flight=2)
        scenario = CallScenario("ListGames", [pb.ListGamesRequest()])
        return await asyncio.wait_for(run_load(scenario, settings, progress_stream=None, clock=clock), 10.0)

    with FakeServer() as server:
        recorder, elapsed, _ = asyncio.run(go(server.target))
    assert 0 < recorder.tasks_started < 500  # each task read the clock at least once
    assert recorder.tasks_started == recorder.tasks_completed + recorder.tasks_abandoned
    assert recorder.tasks_completed > 0 and recorder.error_count == 0
    assert 0.5 <= elapsed < 1.0  # the fake clock's end, not later


def test_an_open_loop_at_a_huge_rate_ends_on_time_with_the_real_clock():
    """The audited hang (``--rate 1e308 --max-in-flight 2``), below the flags' cap, through
    the engine: the run ends with its window."""

    async def go(target):
        settings = LoadSettings(target=target, rate=1e308, duration=0.3, max_in_flight=2)
        scenario = CallScenario("ListGames", [pb.ListGamesRequest()])
        return await asyncio.wait_for(run_load(scenario, settings, progress_stream=None), 10.0)

    with FakeServer() as server:
        recorder, elapsed, _ = asyncio.run(go(server.target))
    assert recorder.tasks_completed > 0 and recorder.error_count == 0
    assert elapsed < 5.0
