"""The rating ladder (ai/ladder.py): its schedule, its tables, and the level a target rating
picks; the shipped tables (ai/ladders/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai.arena import ArenaError, make_pairings, make_schedule, run_arena
from ai.ladder import (
    DEFAULT_ANCHORS,
    TABLE_DIR,
    LadderError,
    RatedBot,
    RatingTable,
    TargetRatingError,
    display_name,
    ladder_config,
    load_table,
    parse_table,
    read_table,
    table_from_result,
    table_json,
)

TINY = ("random", "greedy", "mcts:iterations=10,ms=none")


def test_anchors_meet_each_other_and_candidates_meet_only_anchors() -> None:
    config = ladder_config("aton", 2, games_per_pair=2, candidates=("x", "y"), anchors=("random", "g"))
    assert config.bots == ("random", "g", "x", "y") and config.lineup == "ladder"
    pairs = [(p.a, p.b) for p in make_pairings(config.bots, 2, lineup="ladder", anchors=config.anchors)]
    assert pairs == [("random", "g"), ("x", "random"), ("x", "g"), ("y", "random"), ("y", "g")]
    with pytest.raises(LadderError, match="random"):
        ladder_config("aton", 2, games_per_pair=2, anchors=("greedy",))
    with pytest.raises(ArenaError, match="anchors"):
        make_pairings(["a", "b"], 2, anchors=["a"])


@pytest.mark.parametrize("players", [3, 4])
def test_multiplayer_ladder_blocks_balance_seats_in_every_even_prefix(players: int) -> None:
    (p,) = make_pairings(["random", "c"], players, lineup="ladder", anchors=["random"])
    assert len(p.block) == 2 * players
    for n in range(2, len(p.block) + 1, 2):
        seats = [s for arrangement in p.block[:n] for s in arrangement]
        assert seats.count("c") == seats.count("random")
    for seat in range(players):  # over the block, each side holds each seat equally often
        assert [a[seat] for a in p.block].count("c") == players


def test_default_ladder_rates_every_preset_and_baseline() -> None:
    config = ladder_config("aton", 2, games_per_pair=2)
    for spec in ("random", "greedy", *(f"mcts:{p},ms=none" for p in ("easy", "medium", "hard", "expert"))):
        assert spec in config.bots
    assert config.anchors == DEFAULT_ANCHORS
    assert any("temp=" in b for b in config.bots)
    _, tasks = make_schedule(config, 2)
    assert len(tasks) == 2 * (6 + 4 * (len(config.bots) - 4))


def test_display_names_drop_ms_none() -> None:
    assert display_name("mcts:easy,ms=none,temp=1") == "mcts:easy,temp=1"
    assert display_name("mcts:iterations=500,ms=none") == "mcts:iterations=500"
    assert display_name("random") == "random"


def tiny_table(games: int = 2) -> RatingTable:
    config = ladder_config("aton", 2, games_per_pair=games, seed=3, candidates=TINY[2:], anchors=TINY[:2])
    return table_from_result(run_arena(config), "heka arena --ladder ...")


def test_a_tiny_ladder_gives_a_table_with_random_at_zero() -> None:
    table = tiny_table()
    assert {b.spec for b in table.bots} == set(TINY)
    zero = next(b for b in table.bots if b.spec == "random")
    assert zero.rating == 0.0 and zero.ci95 == 0.0
    assert [b.rating for b in table.bots] == sorted(b.rating for b in table.bots)
    assert all(b.ci95 > 0 for b in table.bots if b.spec != "random")
    assert table.provisional and table.games_per_pair == 2
    again = parse_table(json.loads(table_json(table)), "round trip")
    assert [(b.name, b.spec) for b in again.bots] == [(b.name, b.spec) for b in table.bots]
    assert [b.rating for b in again.bots] == [round(b.rating, 1) for b in table.bots]
    assert [b.spec for b in table.levels] == [b.spec for b in table.bots if b.spec != "greedy"]


def table(*ratings: tuple[str, float]) -> RatingTable:
    bots = tuple(RatedBot(n, n, r, 50.0, 10.0) for n, r in sorted(ratings, key=lambda x: x[1]))
    return RatingTable("aton", 2, bots, 2, 1, "cmd", provisional=True)


LADDER = table(
    ("random", 0.0),
    ("mcts:a,temp=2", 140.0),
    ("greedy", 700.0),  # rated, not a level
    ("mcts:a,temp=1", 420.0),
    ("mcts:a", 800.0),
    ("mcts:b", 1012.7),
)


def test_a_target_picks_the_nearest_level_and_the_mapping_is_monotone() -> None:
    assert LADDER.max_target == 1012
    assert LADDER.level_for(0).name == "random"
    assert LADDER.level_for(69).name == "random"
    assert LADDER.level_for(71).name == "mcts:a,temp=2"
    assert LADDER.level_for(70).name == "random"  # a tie goes to the weaker level
    assert LADDER.level_for(700).name == "mcts:a"  # greedy is not a level
    assert LADDER.level_for(1012).name == "mcts:b"
    picked = [LADDER.level_for(t).rating for t in range(0, LADDER.max_target + 1)]
    assert picked == sorted(picked)
    for level in LADDER.levels:  # a level's own rating picks it
        assert LADDER.level_for(min(round(level.rating), LADDER.max_target)) == level


@pytest.mark.parametrize("target", [-1, 1013, 5000])
def test_a_target_out_of_range_names_the_range(target: int) -> None:
    with pytest.raises(TargetRatingError, match=r"aton with 2 players accepts 0\.\.1012"):
        LADDER.level_for(target)


def test_malformed_tables_are_refused(tmp_path: Path) -> None:
    good = tiny_table().to_json()
    for bad in (
        {**good, "format": "other"},
        {**good, "bots": [b for b in good["bots"] if b["spec"] != "random"]},
        {**good, "bots": [{**b, "rating": "x"} for b in good["bots"]]},
        {k: v for k, v in good.items() if k != "seed"},
    ):
        path = tmp_path / "t.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(LadderError, match=r"t\.json"):
            read_table(path)


SHIPPED = sorted(TABLE_DIR.glob("*.json"))


def test_tables_are_shipped_for_each_game_and_player_count() -> None:
    names = {p.name for p in SHIPPED}
    assert {"aton-2p.json", "osirium-2p.json"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_tables_parse_and_rate_the_presets(path: Path) -> None:
    game, _, players = path.stem.rpartition("-")
    t = load_table(game, int(players[:-1]))
    assert t is not None and (t.game, f"{t.players}p") == (game, players)
    assert t.command.startswith("heka arena --ladder")
    names = {b.name for b in t.bots}
    assert {"random", "greedy", "mcts:easy", "mcts:medium"} <= names
    assert t.max_target > 0
    for b in t.bots:
        assert RatedBot(b.name, b.spec, b.rating, b.ci95, b.games).is_level == (b.spec != "greedy")
    if t.provisional:
        assert "provisional" in t.note
