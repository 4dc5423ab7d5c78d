"""``heka play --server``: a game played to the end against a real server, a bot spec turned
into BotSettings, and what the person sees of the bots' searches and of their own.

The server sends a bot's root statistics only to that bot's seat (docs/security.md, "What a
response reveals"), so the person's ``?`` after a bot's move shows its totals and says why
the rest is not there; ``hint`` asks ``BotMove`` (not applied) for the person's own seat,
which is private to it and comes with the most visited actions.
"""

from __future__ import annotations

import argparse
import io
import re

import pytest
from service_helpers import ServerProcess

from service.remote_play import run_remote


def test_remote_play_plays_a_game_to_the_end(server: ServerProcess) -> None:
    from service.remote_play import run_remote

    args = argparse.Namespace(
        server=server.address, game="aton", players=None, seat=1, bots="greedy", seed=4, teams=False
    )
    out = io.StringIO()
    code = run_remote(args, inp=io.StringIO("help\n" + "1\n" * 400), out=out)
    text = out.getvalue()
    assert code == 0
    assert "=== game over ===" in text
    assert "seat 0 (greedy)" in text


def test_remote_play_bot_settings() -> None:
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.remote_play import bot_settings

    assert bot_settings("mcts:hard").difficulty == pb.DIFFICULTY_HARD
    assert bot_settings("mcts:expert").difficulty == pb.DIFFICULTY_EXPERT
    s = bot_settings("mcts:iterations=50,ms=20,workers=2")
    assert (s.budget.iterations, s.budget.milliseconds, s.workers) == (50, 20.0, 2)
    assert bot_settings("greedy").kind == pb.BOT_KIND_GREEDY
    with pytest.raises(ValueError):
        bot_settings("alphazero")


def _play(server: ServerProcess, lines: list[str], **options: object) -> str:
    settings: dict[str, object] = {"bots": "mcts:iterations=30", "hint_bot": "mcts:iterations=60", "seed": 3}
    args = _remote_args(server=server.address, **{**settings, **options})
    out = io.StringIO()
    assert run_remote(args, inp=io.StringIO("".join(line + "\n" for line in lines)), out=out) == 0
    return out.getvalue()


def test_remote_question_mark_shows_the_bots_totals_and_why_not_its_statistics(
    server: ServerProcess,
) -> None:
    # The person plays their first action each time and asks after every bot move.
    out = _play(server, ["?", "1"] * 12 + ["quit"])
    assert "chosen: (a secret decision)" in out  # the bot's arrangement
    diag = out.split("seat 1 (mcts:iterations=30), decision place:\n", 1)[1].splitlines()
    assert re.fullmatch(r"  30 iterations in \d+\.\d\d s \([\d,]+/s\), 1 worker\(s\)", diag[0])
    assert diag[1].startswith("  chosen: place T")
    assert diag[2].startswith("  its statistics are private to seat 1")
    assert "most visited" not in out  # never an empty list


def test_remote_hint_lists_the_most_visited_of_the_persons_actions(server: ServerProcess) -> None:
    out = _play(server, ["1", "1", "hint", "quit"])
    legal = set(re.findall(r"\d+\. (place T\d\.\d+)", out.split("your decision: place", 1)[1]))
    hint = out.split("hint for seat 0 (mcts:iterations=60):\n", 1)[1].splitlines()
    assert re.fullmatch(r"  60 iterations in .*", hint[0])
    assert hint[1].startswith("  chosen: place T") and "(value " in hint[1]
    assert hint[2] == "  most visited:"
    visited = []
    for line in hint[3:]:
        m = re.fullmatch(r" +\d+ visits  [+-]\d\.\d{3}  (place T\d\.\d+)", line)
        if m is None:
            break
        visited.append(m.group(1))
    assert visited and set(visited) <= legal


def test_remote_help_explains_every_action_form(server: ServerProcess) -> None:
    out = _play(server, ["help", "quit"], game="osirium", bots="random", seed=2)
    forms = out.split("actions (* = a form you may play now", 1)[1]
    for word in ("pass", "place", "draw", "cast", "break", "refill", "end", "clear", "isis", "seth"):
        assert re.search(rf"^  [* ] {word}\b", forms, re.M), word
    assert "* place " in forms and "(row, column)" in " ".join(forms.split())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mcts:iterations=abc", "--bots: iterations must be an integer, got 'abc'"),
        ("mcts:iterations=0", "--bots: iterations must be 1..2147483647, got 0"),
        ("mcts:it=99999999999", "--bots: it must be 1..2147483647, got 99999999999"),
        ("mcts:workers=-1", "--bots: workers must be 1..2147483647, got -1"),
        ("mcts:workers=two", "--bots: workers must be an integer, got 'two'"),
        ("mcts:ms=nan", "--bots: ms must be a finite number of milliseconds, at least 1, got 'nan'"),
        ("mcts:ms=inf", "got 'inf'"),
        ("mcts:ms=0.5", "got '0.5'"),
        ("mcts:ms=soon", "got 'soon'"),
        ("mcts:medium,ms=none", "--bots: ms=none lifts a limit in local play only"),
        ("mcts:ms=5,ms=6", "--bots: 'mcts:ms=5,ms=6' gives the ms twice"),
        ("mcts:c=0.7", "--bots: unsupported mcts parameter 'c=0.7' over the server"),
        ("random:fast", "--bots: the random bot takes no parameters over the server"),
        ("alphazero", "--bots: unknown bot 'alphazero'"),
    ],
)
def test_remote_bot_settings_refuse_a_bad_spec_naming_the_flag(spec: str, message: str) -> None:
    from service.remote_play import bot_settings

    with pytest.raises(ValueError) as info:
        bot_settings(spec)
    assert message in str(info.value)
    with pytest.raises(ValueError) as info:
        bot_settings(spec, "--hint-bot")
    assert str(info.value).startswith("--hint-bot: ")


def test_remote_bot_settings_read_the_local_names_of_the_budget() -> None:
    from service.remote_play import bot_settings

    s = bot_settings("MCTS:it=7,ms=1.5,workers=2")
    assert (s.budget.iterations, s.budget.milliseconds, s.workers) == (7, 1.5, 2)
    assert bot_settings("mcts:n=9").budget.iterations == 9


def _remote_args(**options: object) -> argparse.Namespace:
    args = argparse.Namespace(
        server="127.0.0.1:1",
        game="aton",
        players=None,
        seat=0,
        bots="random",
        hint_bot="mcts:iterations=10",
        seed=1,
        teams=False,
    )
    for key, value in options.items():
        setattr(args, key, value)
    return args


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bots": "mcts:iterations=abc"}, "heka play: --bots: iterations must be an integer, got 'abc'"),
        ({"bots": "greedy,mcts:ms=nan"}, "heka play: --bots: ms must be a finite number"),
        ({"hint_bot": "mcts:workers=0"}, "heka play: --hint-bot: workers must be 1..2147483647, got 0"),
        ({"seed": -1}, "heka play: --seed must be 0..2^64-1 (a server's seed is a uint64), got -1"),
        ({"seed": 2**64}, f"--seed must be 0..2^64-1 (a server's seed is a uint64), got {2**64}"),
        ({"players": 99999999999}, "heka play: --players must be a player count, 1..2147483647, got"),
        ({"players": 0}, "heka play: --players must be a player count"),
        ({"server": ""}, "heka play: --server needs an address (HOST:PORT), not an empty string"),
        ({"server": "  "}, "heka play: --server needs an address"),
        ({"teams": True}, "heka play: --teams is Osirium's team variant (4 players), not an option of aton"),
    ],
)
def test_remote_play_refuses_bad_flags_before_any_call(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: dict[str, object],
    message: str,
) -> None:
    def no_stub(*_: object) -> None:
        raise AssertionError("no call is made with a bad flag")

    monkeypatch.setattr("service.remote_play.pb_grpc.GameServiceStub", no_stub)
    args = _remote_args(**options)
    assert run_remote(args, inp=io.StringIO("quit\n"), out=io.StringIO()) == 2
    assert message in capsys.readouterr().err


def test_remote_play_splits_bot_specs_as_local_play_does(server: ServerProcess) -> None:
    # "mcts:iterations=20,ms=2000" is one spec with two settings, not two specs.
    out = _play(server, ["1"] * 4 + ["quit"], bots="mcts:iterations=20,ms=2000", seat=1)
    assert "seat 0: mcts:iterations=20,ms=2000, seat 1: you" in out
    assert "seat 0 (mcts:iterations=20,ms=2000): " in out  # the bot played with them
    out = _play(server, ["quit"], game="osirium", players=3, bots="mcts:it=5,ms=100,random", seed=2)
    assert "seat 1: mcts:it=5,ms=100, seat 2: random" in out


def test_remote_play_ends_with_exit_2_naming_the_flag_when_the_server_refuses_a_bot(
    server: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shared server caps a search at 10,000 ms: a cap the client cannot know.
    args = _remote_args(server=server.address, bots="mcts:ms=20000", seat=1)
    out = io.StringIO()
    assert run_remote(args, inp=io.StringIO("1\n" * 4), out=out) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "heka play: --bots: the server refused seat 0's bot 'mcts:ms=20000': INVALID_ARGUMENT: "
    )
    assert "milliseconds must be in [1, 10000]" in err and "Traceback" not in err
    assert "seat 1: you" in out.getvalue()  # the game had started
    # A refused hint is said, and the game goes on.
    out_text = _play(server, ["hint", "quit"], hint_bot="mcts:iterations=9999999")
    assert "no hint: the server refused --hint-bot 'mcts:iterations=9999999': INVALID_ARGUMENT" in out_text
    assert out_text.rstrip().endswith("leaving the game")


def test_remote_play_refused_game_settings_exit_2(
    server: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        run_remote(_remote_args(server=server.address, game="chess"), inp=io.StringIO(""), out=io.StringIO())
        == 2
    )
    assert "INVALID_ARGUMENT: unknown game 'chess'" in capsys.readouterr().err


def test_play_refuses_an_empty_server_instead_of_playing_locally(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    with pytest.raises(SystemExit) as info:  # argparse's usage error
        main(["play", "--server", "", "--bots", "random"])
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert "argument --server: expected HOST:PORT" in captured.err and "===" not in captured.out


def test_a_server_that_does_not_answer_is_reported_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens on 127.0.0.1:9 (discard): exit 1, gRPC's reason and how to start one."""
    args = _remote_args(server="127.0.0.1:9")
    assert run_remote(args, inp=io.StringIO("quit\n"), out=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert err.startswith("heka play: server 127.0.0.1:9: UNAVAILABLE") and "is a heka server running" in err
