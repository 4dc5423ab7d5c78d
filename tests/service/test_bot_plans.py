"""BotSettings to the bot a call runs (service/bots.py)."""

from __future__ import annotations

import pytest


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


_BAD_FIELDS = [
    ({"budget": {"iterations": -5}}, "bot.budget.iterations", "bad_budget"),
    ({"budget": {"iterations": 0}}, "bot.budget.iterations", "bad_budget"),
    ({"budget": {"iterations": 10**9}}, "bot.budget.iterations", "bad_budget"),
    ({"budget": {"milliseconds": float("nan")}}, "bot.budget.milliseconds", "bad_budget"),
    ({"budget": {"milliseconds": float("inf")}}, "bot.budget.milliseconds", "bad_budget"),
    ({"budget": {"milliseconds": -1.0}}, "bot.budget.milliseconds", "bad_budget"),
    ({"budget": {}}, "bot.budget", "bad_budget"),
    ({"workers": -7}, "bot.workers", "bad_budget"),
    ({"workers": 10**6}, "bot.workers", "bad_budget"),
    ({"difficulty": 99}, "bot.difficulty", "bad_bot"),
    ({"diagnostics_top_k": -1}, "bot.diagnostics_top_k", "bad_bot"),
]


@pytest.mark.parametrize(
    "kind", ["BOT_KIND_RANDOM", "BOT_KIND_GREEDY", "BOT_KIND_MCTS", "BOT_KIND_UNSPECIFIED"]
)
@pytest.mark.parametrize(("fields", "field", "reason"), _BAD_FIELDS)
def test_a_bad_field_is_refused_for_every_kind_of_bot(
    kind: str, fields: dict[str, object], field: str, reason: str
) -> None:
    """random and greedy ignore a difficulty and a budget, but a bad one is still refused,
    naming the field, as it is for MCTS: no value is passed over unchecked."""
    from service.bots import bot_plan
    from service.config import Config
    from service.errors import ServiceError
    from service.gen.heka.v1 import game_service_pb2 as pb

    settings = pb.BotSettings(kind=getattr(pb, kind), seed=1, **fields)  # type: ignore[arg-type]
    with pytest.raises(ServiceError) as info:
        bot_plan(settings, "bot", Config())
    assert (info.value.field, info.value.reason) == (field, reason)


@pytest.mark.parametrize("workers", [-7, -1, 10**6])
def test_workers_out_of_range_are_refused_with_a_target_rating_too(workers: int) -> None:
    from service.bots import bot_plan
    from service.config import Config
    from service.errors import ServiceError
    from service.gen.heka.v1 import game_service_pb2 as pb

    settings = pb.BotSettings(target_rating=300, workers=workers, seed=1)
    with pytest.raises(ServiceError) as info:
        bot_plan(settings, "bot", Config(), "aton", 2)
    assert (info.value.field, info.value.reason) == ("bot.workers", "bad_budget")


def test_random_and_greedy_still_ignore_a_valid_difficulty_and_budget() -> None:
    from service.bots import bot_plan
    from service.config import Config
    from service.gen.heka.v1 import game_service_pb2 as pb

    for kind, name in ((pb.BOT_KIND_RANDOM, "random"), (pb.BOT_KIND_GREEDY, "greedy")):
        settings = pb.BotSettings(
            kind=kind, difficulty=pb.DIFFICULTY_HARD, budget=pb.SearchBudget(iterations=50), seed=1
        )
        plan = bot_plan(settings, "bot", Config())
        assert (plan.spec, plan.iterations, plan.milliseconds) == (name, None, None)
