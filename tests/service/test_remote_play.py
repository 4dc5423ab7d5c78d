"""``heka play --server``: a game played to the end against a real server, and a bot spec
turned into BotSettings."""

from __future__ import annotations

import argparse
import io

import pytest
from service_helpers import ServerProcess


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
