"""A short load test of a real ``heka serve`` on loopback (a few seconds per scenario):
zero errors and a sane report. Not a speed test: nothing here asserts on timing."""

from __future__ import annotations

import json

import pytest

from service import cli
from service.loadtest.local import start_heka


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("live")
    env = {
        "HEKA_METRICS_DIR": str(tmp / "metrics"),
        "HEKA_MAX_CONCURRENT_SEARCHES": "2",
        "HEKA_ACCESS_LOG": "false",
        # A short drain, with bot calls capped to fit in it (the server checks it).
        "HEKA_GRACE_SECONDS": "5",
        "HEKA_MAX_MILLISECONDS": "4000",
        "HEKA_MAX_ADVANCE_SECONDS": "4",
    }
    with start_heka(env=env, metrics=True, log=tmp / "server.log") as server:
        yield server.target
    assert server.returncode == 0, (tmp / "server.log").read_text()


def loadtest(capsys, *args: str) -> tuple[int, dict]:
    code = cli.main(["loadtest", *args, "--json", "--no-progress"])
    return code, json.loads(capsys.readouterr().out)


def assert_sane(report: dict, methods: set[str]) -> None:
    assert report["errors"] == 0, report["error_distribution"]
    assert report["rpcs"] > 0
    assert report["status_codes"] == {"OK": report["rpcs"]}
    assert set(report["methods"]) == methods
    assert sum(m["count"] for m in report["methods"].values()) == report["rpcs"]
    for name, m in report["methods"].items():
        assert 0 < m["min"] <= m["p50"] <= m["p90"] <= m["p95"] <= m["p99"] <= m["max"], name
        assert sum(c for _, c in m["histogram"]) == m["count"]
    assert report["rate"] > 0


def test_cheap_calls_at_a_fixed_rate(server, capsys):
    code, report = loadtest(
        capsys,
        "--target",
        server,
        "--scenario",
        "cheap",
        "--rate",
        "40",
        "--duration",
        "2s",
        "--connections",
        "3",
        "--game",
        "aton",
        "--game",
        "osirium",
    )
    assert code == 0
    assert_sane(report, {"ListGames", "CreateGame", "GetView", "ListLegalActions", "ApplyAction"})
    assert report["tasks"]["started"] == 80 == report["tasks"]["completed"] == report["rpcs"]
    assert report["settings"]["bot"] is None and report["settings"]["difficulty"] is None  # none played


def test_frontends_play_complete_games(server, capsys):
    code, report = loadtest(
        capsys,
        "--target",
        server,
        "--scenario",
        "play",
        "--bot",
        "greedy",
        "--concurrency",
        "2",
        "--duration",
        "3s",
        "--game",
        "aton",
    )
    assert code == 0
    # One call per move of the person: the bots play inside CreateGame and ApplyAction.
    assert_sane(report, {"CreateGame", "ApplyAction"})
    tasks = report["tasks"]
    assert tasks["completed"] >= 1  # at least one game played to its end
    assert tasks["failed"] == 0
    # An Aton game is about 40 moves of the person: about as many calls per game.
    assert 10 <= tasks["rpcs_per_completed"] <= 100


def test_bot_moves_at_a_difficulty(server, capsys):
    code, report = loadtest(
        capsys,
        "--target",
        server,
        "--scenario",
        "bot",
        "--difficulty",
        "easy",
        "--concurrency",
        "1",
        "--duration",
        "2s",
        "--pool",
        "4",
    )
    assert code == 0
    assert_sane(report, {"BotMove"})
    assert report["settings"]["difficulty"] == "easy"
    assert report["settings"]["setup_rpcs"] >= 4 * 2  # pool: CreateGame + ListLegalActions at least
