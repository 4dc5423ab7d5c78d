"""The rating ladder (ai/ladder.py): its schedule, its tables, and the level a target rating
picks; the shipped tables (ai/ladders/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai.api import make_bot
from ai.arena import ArenaError, make_pairings, make_schedule, run_arena
from ai.ladder import (
    DEFAULT_ANCHORS,
    TABLE_DIR,
    LadderError,
    Level,
    RatedBot,
    RatingTable,
    TargetRatingError,
    curve,
    curve_rating,
    display_name,
    ladder_config,
    load_table,
    monotone,
    parse_table,
    read_table,
    table_from_result,
    table_json,
)
from ai.mcts_params import parse_params

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


def table(*ratings: tuple[str, float], ci95: float = 50.0) -> RatingTable:
    bots = tuple(
        RatedBot(display_name(n), n, r, 0.0 if n == "random" else ci95, 10.0)
        for n, r in sorted(ratings, key=lambda x: x[1])
    )
    return RatingTable("aton", 2, bots, 2, 1, "cmd", provisional=True)


EASY = "mcts:easy,ms=none"
LADDER = table(
    ("random", 0.0),
    (EASY + ",temp=2", 140.0),
    ("greedy", 700.0),  # rated, not a level
    (EASY + ",temp=1", 420.0),
    (EASY, 800.0),
    ("mcts:iterations=800,ms=none", 1000.0),
    ("mcts:hard,ms=none", 1100.0),
    ("mcts:expert,ms=none", 1212.7),
)


def test_monotone_pools_adjacent_violators_by_weight() -> None:
    assert monotone([0, 3, 1, 4], [1, 1, 1, 1]) == [0, 2, 2, 4]
    assert monotone([0, 3, 1, 4], [1, 3, 1, 1]) == [0, 2.5, 2.5, 4]
    assert monotone([5, 4, 3], [1, 1, 1]) == [4, 4, 4]
    assert monotone([1, 2, 3], [1, 1, 1]) == [1, 2, 3]


def test_the_curve_orders_levels_by_what_they_spend_and_how_they_choose() -> None:
    shuffled = table(
        ("mcts:expert,ms=none", 900.0),
        (EASY + ",temp=0.5", 500.0),
        ("mcts:hard,ms=none", 1000.0),
        (EASY + ",temp=4", 100.0),
        (EASY, 700.0),
        ("random", 0.0),
        (EASY + ",temp=1", 300.0),
        ("mcts:medium,ms=none", 800.0),
        ("greedy", 650.0),
    )
    points = curve(shuffled)
    assert [p.name for p in points] == [
        "random",
        "mcts:easy,temp=4",
        "mcts:easy,temp=1",
        "mcts:easy,temp=0.5",
        "mcts:easy",
        "mcts:medium",
        "mcts:hard",
        "mcts:expert",  # the learned evaluation last: measured below hard, so pooled with it
    ]
    assert [p.rating for p in points] == [0, 100, 300, 500, 700, 800, 950, 950]
    assert shuffled.max_target == 950
    assert shuffled.level_for(950).name == "mcts:hard"  # a tie goes to the weaker


def test_a_target_between_two_levels_interpolates_their_knob() -> None:
    # random -> temp=2: the inverse temperature in proportion (half way: 1/t = 1/4).
    assert LADDER.level_for(70) == Level("mcts:easy,temp=4", EASY + ",temp=4", 70.0, interpolated=True)
    # temp=2 -> temp=1: log t (half way: sqrt(2)).
    assert LADDER.level_for(280).spec == EASY + ",temp=1.41"
    # temp=1 -> temp=0: t linearly.
    assert LADDER.level_for(610).spec == EASY + ",temp=0.5"
    # easy (200 iterations) -> 800 iterations: log iterations (half way: 400).
    level = LADDER.level_for(900)
    assert (level.name, level.spec) == ("mcts:iterations=400", "mcts:iterations=400,ms=none")
    assert level.rating == 900 and level.interpolated
    # iterations=800 -> hard (10,000): the preset with its iterations set.
    assert LADDER.level_for(1050).spec == "mcts:hard,ms=none,iterations=2828"
    # hard -> expert: another evaluation, not interpolated: the nearer (a tie: the weaker).
    assert LADDER.level_for(1156).name == "mcts:hard"
    assert LADDER.level_for(1157).name == "mcts:expert"
    for target in (70, 280, 610, 900, 1050):  # every interpolated spec is a bot the arena can make
        make_bot(LADDER.level_for(target).spec)


def test_a_levels_own_rating_picks_it_and_the_mapping_is_monotone() -> None:
    assert LADDER.max_target == 1212
    assert LADDER.level_for(0).name == "random"
    for level in curve(LADDER):
        picked = LADDER.level_for(min(round(level.rating), LADDER.max_target))
        assert picked.name == level.name and not picked.interpolated
    temps = []
    for target in range(1, 800):
        p = parse_params(LADDER.level_for(target).spec.partition(":")[2])[1]
        assert p.iterations == 200
        temps.append(p.temp)
    assert temps == sorted(temps, reverse=True) and temps[-1] > 0
    ratings = [LADDER.level_for(t).rating for t in range(LADDER.max_target + 1)]
    assert ratings == sorted(ratings)
    assert "greedy" not in {LADDER.level_for(t).name for t in range(650, 750)}  # not a level


def test_curve_rating_inverts_level_for() -> None:
    # Each interpolated bot gets back its target (up to the knob's 3 significant digits);
    # a level, and a bot that level_for answers with a level, its fitted rating.
    for target in range(LADDER.max_target + 1):
        level = LADDER.level_for(target)
        rating = curve_rating(LADDER, level.spec)
        if level.interpolated:
            assert rating == pytest.approx(target, abs=2.0)
        else:
            assert rating == level.rating
    assert curve_rating(LADDER, EASY + ",temp=4") == pytest.approx(70.0)  # 1/t in proportion
    assert curve_rating(LADDER, "mcts:iterations=400,ms=none") == pytest.approx(900.0)
    for off in ("greedy", "mcts:expert,ms=none,iterations=50", "mcts:hard,ms=none,iterations=20000"):
        with pytest.raises(LadderError):
            curve_rating(LADDER, off)


@pytest.mark.parametrize("target", [-1, 1213, 5000])
def test_a_target_out_of_range_names_the_range(target: int) -> None:
    with pytest.raises(TargetRatingError, match=r"aton with 2 players accepts 0\.\.1212 .*mcts:expert"):
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
