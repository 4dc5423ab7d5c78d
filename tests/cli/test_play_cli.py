"""`heka play` driven through stdin: a whole game against bots, commands, end of input."""

from __future__ import annotations

import io
import re

import pytest

from service.cli import main


def play(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], lines: list[str]
) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(line + "\n" for line in lines)))
    code = main(["play", *args])
    return code, capsys.readouterr().out


def test_play_aton_to_the_end_against_a_random_bot(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["help", "?", "zzz", "999", "b", "l"] + ["1"] * 2000
    code, out = play(monkeypatch, capsys, ["--game", "aton", "--bots", "random", "--seed", "3"], lines)
    assert code == 0
    assert "=== Aton (seed 3): seat 0: you, seat 1: random ===" in out
    assert "commands:" in out  # help
    assert "no bot has played yet" in out  # ? before any bot move
    assert "unknown action 'zzz'" in out
    assert "no action number 999" in out
    assert "=== game over ===" in out
    assert re.search(r"You (win|lose)|A draw", out)
    # The board is drawn from seat 0's view; the opponent's hand and arrangement never show.
    assert "view: seat 0" in out and "view: public" not in out
    assert "seat 1's hand" not in out and "seat 1 arranges" not in out
    assert "seat 1 (random): (secret arrange decision)" in out
    # The person's own private events are shown.
    assert "seat 0's hand" in out or "seat 0 arranges" in out


def test_play_accepts_action_texts_and_unique_prefixes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Aton round 1 starts with the exchange decision: "keep" by text, then "arr" is ambiguous.
    code, out = play(
        monkeypatch, capsys, ["--game", "aton", "--bots", "random", "--seed", "1"], ["KEEP", "arr", "quit"]
    )
    assert code == 0
    assert "you: keep" in out
    assert "'arr' matches" in out
    assert out.rstrip().endswith("leaving the game")


def test_play_ends_cleanly_at_end_of_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = play(
        monkeypatch,
        capsys,
        ["--game", "osirium", "--players", "3", "--seat", "1", "--bots", "random,greedy", "--seed", "4"],
        ["help"],
    )
    assert code == 0
    assert "seat 0: random, seat 1: you, seat 2: greedy" in out
    assert "seat 0 (random):" in out  # seat 0 played before the person's first turn
    assert "end of input" in out


def test_play_osirium_to_the_end(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--game", "osirium", "--bots", "random", "--seed", "2"]
    code, out = play(monkeypatch, capsys, args, ["1"] * 3000)
    assert code == 0
    assert "Osirium — view of seat 0" in out
    assert "=== game over ===" in out and "scores: seat 0:" in out


def test_play_shows_a_searching_bot_diagnostics(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = []
    for _ in range(30):
        lines += ["?", "1"]
    code, out = play(
        monkeypatch,
        capsys,
        ["--game", "aton", "--bots", "mcts:iterations=10", "--seed", "2"],
        [*lines, "quit"],
    )
    assert code == 0
    assert re.search(r"seat 1 \(mcts:iterations=10\), decision place: \d+ iterations", out)
    assert "most visited:" in out and "chosen: place T" in out


def test_play_hides_the_statistics_of_a_secret_bot_decision(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Seat 1 plays; seat 0 (the bot) commits its exchange and arrangement secretly first.
    code, out = play(
        monkeypatch,
        capsys,
        ["--game", "aton", "--seat", "1", "--bots", "mcts:iterations=20", "--seed", "5"],
        ["?", "quit"],
    )
    assert code == 0
    assert "a secret decision: its action statistics stay hidden" in out
    assert "most visited" not in out


def test_play_rejects_bad_settings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "--game", "aton", "--seat", "2", "--bots", "random"]) == 2
    assert "--seat" in capsys.readouterr().err
    assert main(["play", "--game", "osirium", "--players", "3", "--bots", "random,random,random"]) == 2
    assert "one per other seat" in capsys.readouterr().err
    assert main(["play", "--game", "chess"]) == 2
    assert "unknown game" in capsys.readouterr().err
    assert main(["play", "--game", "aton", "--bots", "genius"]) == 2
    assert "unknown bot kind" in capsys.readouterr().err


def test_play_registers_the_server_flag() -> None:
    from service.cli import build_parser

    args = build_parser().parse_args(["play", "--server", "localhost:50051"])
    assert args.server == "localhost:50051"
