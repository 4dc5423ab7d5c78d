"""Ratings through the real server: ListGames reports each game's rating ladders, and
BotSettings.target_rating picks a rated level (INVALID_ARGUMENT naming the valid range
outside it)."""

from __future__ import annotations

import itertools
from typing import Any

import grpc
import pytest
from service_helpers import call_error, error_details

from ai.ladder import curve, load_table
from service import bots
from service.config import Config
from service.gen.heka.v1 import game_service_pb2 as pb

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def field_and_reason(err: grpc.RpcError) -> tuple[str, str, dict[str, str]]:
    field, reason, metadata, _ = error_details(err)
    return field or "", reason or "", metadata


def test_list_games_carries_the_rating_ladders(stub: Any) -> None:
    games = {g.name: g for g in stub.ListGames(pb.ListGamesRequest()).games}
    listed = {(name, r.num_players) for name, g in games.items() for r in g.ratings}
    assert {("aton", 2), ("osirium", 2)} <= listed
    for name, g in games.items():
        for ladder in g.ratings:
            table = load_table(name, ladder.num_players, teams=ladder.teams)
            assert table is not None and table.teams == ladder.teams
            assert (ladder.min_target_rating, ladder.max_target_rating) == (0, table.max_target)
            assert ladder.provisional == table.provisional and ladder.games_per_pair == table.games_per_pair
            by_name = {b.name: b for b in ladder.bots}
            assert by_name["random"].rating == 0.0 and by_name["random"].kind == pb.BOT_KIND_RANDOM
            assert by_name["greedy"].kind == pb.BOT_KIND_GREEDY and not by_name["greedy"].is_level
            assert by_name["mcts:easy"].difficulty == pb.DIFFICULTY_EASY
            assert by_name["mcts:medium"].difficulty == pb.DIFFICULTY_MEDIUM
            ratings = [b.rating for b in ladder.bots]
            assert ratings == sorted(ratings)
            assert all(b.interval > 0 for b in ladder.bots if b.name != "random")


def rated(target: int, **kw: Any) -> pb.BotSettings:
    return pb.BotSettings(target_rating=target, seed=5, **kw)


@pytest.mark.parametrize("players", [2])
def test_a_target_rating_plays_its_level_or_a_bot_between_two(stub: Any, players: int) -> None:
    table = load_table("aton", players)
    assert table is not None
    state = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=4)).state
    points = [p for p in curve(table) if "hard" not in p.name and "expert" not in p.name]  # short
    targets = {round(p.rating) for p in points}
    targets |= {round((a.rating + b.rating) / 2) for a, b in itertools.pairwise(points)}
    interpolated = 0
    for target in sorted(t for t in targets if 0 < t <= table.max_target):
        level = table.level_for(target)
        moves = [stub.BotMove(pb.BotMoveRequest(state=state, bot=rated(target), viewer=0)) for _ in range(2)]
        assert moves[0].diagnostics.bot == level.name
        assert moves[0].action.id == moves[1].action.id  # seeded
        interpolated += level.interpolated
    assert interpolated > 0
    resp = stub.BotMove(pb.BotMoveRequest(state=state, bot=rated(0), viewer=0))
    assert resp.diagnostics.bot == "random"


@pytest.mark.parametrize("target", [-1, 100_000])
def test_a_target_rating_out_of_range_is_invalid_and_names_the_range(stub: Any, target: int) -> None:
    table = load_table("aton", 2)
    assert table is not None
    state = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=4)).state
    err = call_error(stub.BotMove, pb.BotMoveRequest(state=state, bot=rated(target), viewer=0))
    assert err.code() == INVALID
    assert f"aton with 2 players accepts 0..{table.max_target}" in err.details()
    field, reason, metadata = field_and_reason(err)
    assert (field, reason) == ("bot.target_rating", "BAD_TARGET_RATING")
    assert metadata == {"min_target_rating": "0", "max_target_rating": str(table.max_target)}
    # The same through the bot seats of CreateGame, before anything is played.
    err = call_error(
        stub.CreateGame,
        pb.CreateGameRequest(game="aton", bots=[pb.BotSeat(seat=1, bot=rated(target))]),
    )
    assert err.code() == INVALID and field_and_reason(err)[0] == "bots[0].bot.target_rating"


@pytest.mark.parametrize(
    "settings",
    [
        rated(100, difficulty=pb.DIFFICULTY_HARD),
        rated(100, budget=pb.SearchBudget(iterations=10)),
        rated(100, kind=pb.BOT_KIND_GREEDY),
        rated(100, workers=2),
    ],
    ids=["difficulty", "budget", "kind", "workers"],
)
def test_a_target_rating_is_not_combined_with_other_strength_settings(stub: Any, settings: Any) -> None:
    state = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=4)).state
    err = call_error(stub.BotMove, pb.BotMoveRequest(state=state, bot=settings, viewer=0))
    assert err.code() == INVALID and "cannot be combined" in err.details()


def test_a_player_count_without_a_ladder_says_so() -> None:
    from service.errors import ServiceError

    with pytest.raises(ServiceError, match="has no rating ladder yet") as info:
        bots.bot_plan(rated(100), "bot", Config(), "aton", 3)
    assert info.value.code == INVALID and info.value.field == "bot.target_rating"


def test_a_team_game_plays_target_ratings_by_the_team_table_where_one_is_shipped(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/ladder.md, "Teams": a team table is listed beside the player count's, and a team
    game's target_rating reads it; without one, the player count's table serves."""
    import dataclasses

    from ai import ladder
    from engine.registry import get_game
    from service import convert

    free = load_table("osirium", 4)
    assert free is not None
    monkeypatch.setattr(ladder, "TABLE_DIR", tmp_path)
    ladder.load_table.cache_clear()
    try:
        (tmp_path / "osirium-4p.json").write_text(ladder.table_json(free))
        plans = lambda teams: {  # noqa: E731
            t: bots.bot_plan(rated(t), "bot", Config(), "osirium", 4, teams=teams).spec
            for t in (100, free.max_target)
        }
        assert plans(True) == plans(False)  # no team table: the 4-player one
        stretched = tuple(dataclasses.replace(b, rating=1.5 * b.rating) for b in free.bots)
        team = dataclasses.replace(free, bots=stretched, teams=True)
        (tmp_path / "osirium-4p-teams.json").write_text(ladder.table_json(team))
        ladder.load_table.cache_clear()
        for target in (100, free.max_target):
            want = team.level_for(target).spec
            assert bots.bot_plan(rated(target), "bot", Config(), "osirium", 4, teams=True).spec == want
        assert plans(False)[free.max_target] == free.level_for(free.max_target).spec
        info = convert.game_info(get_game("osirium"))
        four = [(r.num_players, r.teams, r.max_target_rating) for r in info.ratings if r.num_players == 4]
        assert four == [(4, False, free.max_target), (4, True, team.max_target)]
    finally:
        ladder.load_table.cache_clear()


def test_a_team_game_is_told_from_its_seats() -> None:
    from engine.registry import get_game
    from service.bots import team_game

    osirium = get_game("osirium")
    assert team_game(osirium.new_initial_state(4, 1, {"teams": True}))
    assert not team_game(osirium.new_initial_state(4, 1, {}))
    assert not team_game(get_game("aton").new_initial_state(2, 1, {}))
