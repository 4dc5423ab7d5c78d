"""`heka simulate` end to end (through the CLI entry point)."""

from __future__ import annotations

import re

import pytest

from service.cli import main


def test_simulate_aton_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--game", "aton", "--games", "5", "--seed", "3", "--no-progress"]) == 0
    out = capsys.readouterr().out
    wins = [int(m) for m in re.findall(r"seat \d wins\s+(\d+)", out)]
    draws = int(re.search(r"draws\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    assert len(wins) == 2 and sum(wins) + draws == 5
    ended = sum(int(c) for c in re.findall(r"^\s{4}\w+\s+(\d+)\s+\(", out, re.M))
    assert ended == 5
    assert float(re.search(r"mean rounds\s+([\d.]+)", out).group(1)) >= 1  # type: ignore[union-attr]


def test_simulate_is_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    def summary() -> str:
        main(["simulate", "--game", "aton", "--games", "3", "--seed", "9", "--no-progress"])
        return capsys.readouterr().out.rsplit("\n", 2)[0]  # drop the timing line

    assert summary() == summary()


def test_simulate_verbose_prints_events_and_board(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--game", "aton", "--games", "1", "--seed", "4", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "seat 0 (arrange)" in out or "seat 0 (exchange)" in out
    assert "===" in out


def test_simulate_rejects_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:  # refused by the flag's own type
        main(["simulate", "--game", "chess"])
    assert info.value.code == 2
    assert "unknown game" in capsys.readouterr().err
    assert main(["simulate", "--game", "aton", "--players", "3"]) == 2
    assert "players" in capsys.readouterr().err
    assert main(["simulate", "--game", "aton", "--option", "x"]) == 2
    assert "heka simulate: --option needs NAME=VALUE" in capsys.readouterr().err
    args = ["simulate", "--game", "osirium", "--players", "4", "--games", "1"]
    assert main([*args, "--option", "teams=false", "--teams"]) == 2
    assert "--teams and --option teams=False disagree" in capsys.readouterr().err
    assert main([*args, "--option", "teams=true", "--option", "teams=false"]) == 2
    assert "--option teams given twice" in capsys.readouterr().err
    # A number Python will not read (past 4,300 digits) is refused naming the option, in every
    # command that takes --option.
    long = "x=" + "9" * 5000
    for command in (
        ["simulate", "--game", "aton"],
        ["render", "--game", "aton"],
        ["arena", "--bots", "random;greedy"],
    ):
        assert main([*command, "--option", long]) == 2
        assert "--option x: a number of at most 100 digits" in capsys.readouterr().err
