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
    args = argparse.Namespace(
        server=server.address,
        game="aton",
        players=None,
        seat=0,
        bots="mcts:iterations=30",
        hint_bot="mcts:iterations=60",
        seed=3,
        teams=False,
    )
    for key, value in options.items():
        setattr(args, key, value)
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
