"""BotSettings to the bot a call runs (service/bots.py)."""

from __future__ import annotations


def test_the_expert_difficulty_is_the_expert_preset() -> None:
    """DIFFICULTY_EXPERT: the mcts:expert spec (learned evaluation) with its preset budget."""
    from ai.mcts_params import parse_params
    from ai.presets import PRESETS
    from service.bots import bot_plan
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb

    config = Config()
    plan = bot_plan(pb.BotSettings(difficulty=pb.DIFFICULTY_EXPERT, seed=1), "bot", config)
    assert (plan.spec, plan.label) == ("mcts:expert", "mcts:expert")
    assert plan.iterations == PRESETS["expert"].iterations
    assert parse_params(plan.spec.partition(":")[2])[1].evaluation == "learned"
