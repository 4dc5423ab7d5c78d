"""The rating ladder (ai/ladder.py): its schedule, its tables, and the level a target rating
picks; the shipped tables (ai/ladders/)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from ai.api import make_bot
from ai.arena import (
    NEAREST,
    PILOT,
    ArenaConfig,
    ArenaError,
    GameRecord,
    Pairing,
    check_resumable,
    costly_candidates,
    make_pairings,
    make_schedule,
    nearest_anchors,
    pairwise_results,
    run_arena,
    scheduled_games,
    search_iterations,
)
from ai.ladder import (
    DEFAULT_ANCHORS,
    TABLE_DIR,
    UNCHECKED,
    LadderError,
    Level,
    RatedBot,
    RatingTable,
    TableCheck,
    TargetRatingError,
    checked_table,
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
    table_path,
)
from ai.mcts_params import parse_params
from ai.ratings import fit_elo

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
        {**good, "players": 0},
        {**good, "players": 2.7},
        {**good, "players": True},
        {**good, "provisional": "false"},
        {**good, "teams": "no"},
        {**good, "seed": "1"},
        {**good, "bots": [{**b, "rating": 1e300} for b in good["bots"]]},
        {**good, "bots": [{**b, "ci95": -1} for b in good["bots"]]},
        {**good, "bots": [{**b, "spec": 5} for b in good["bots"]]},
        {**good, "bots": [*good["bots"], good["bots"][0]]},
        {**good, "bots": [*good["bots"], {**good["bots"][0], "spec": "zzz"}]},
        {**good, "bots": [*good["bots"], {**good["bots"][0], "spec": "mcts:iterations=-1"}]},
        {**good, "players": 5},  # the game is played by 2
        {**good, "teams": True},  # Aton has no team variant
        {**good, "game": "chess"},
    ):
        path = tmp_path / "t.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(LadderError, match=r"t\.json"):
            read_table(path)
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(LadderError, match=r"t\.json: not a rating table \(not a text"):
        read_table(path)
    with pytest.raises(LadderError, match=r"gone\.json: cannot read the rating table: No such file"):
        read_table(tmp_path / "gone.json")


SHIPPED = sorted(TABLE_DIR.glob("*.json"))


def test_tables_are_shipped_for_each_game_and_player_count() -> None:
    names = {p.name for p in SHIPPED}
    assert {"aton-2p.json", "osirium-2p.json"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_tables_parse_and_rate_the_presets(path: Path) -> None:
    name = re.fullmatch(r"(?P<game>[a-z]+)-(?P<players>\d+)p(?P<teams>-teams)?", path.stem)
    assert name is not None, path.name
    game, players, teams = name["game"], int(name["players"]), bool(name["teams"])
    t = load_table(game, players, teams=teams)
    assert t is not None and (t.game, t.players, t.teams) == (game, players, teams)
    assert t.command.startswith("heka arena --ladder")
    names = {b.name for b in t.bots}
    assert {"random", "greedy", "mcts:easy", "mcts:medium"} <= names
    assert t.max_target > 0
    for b in t.bots:
        assert RatedBot(b.name, b.spec, b.rating, b.ci95, b.games).is_level == (b.spec != "greedy")
    if t.provisional:
        assert "provisional" in t.note


# ---------------------------------------------------------------------------------------
# The nearest design (ai/arena.py, "Designs")
# ---------------------------------------------------------------------------------------

NEAR_ANCHORS = ("random", "greedy", "mcts:iterations=10,ms=none")
NEAR_CANDIDATES = ("mcts:iterations=3,ms=none", "mcts:iterations=6,ms=none,temp=2")


def _near(**kw: object) -> ArenaConfig:
    config = ladder_config(
        "aton",
        2,
        games_per_pair=10,
        seed=3,
        candidates=NEAR_CANDIDATES,
        anchors=NEAR_ANCHORS,
        design="nearest",
    )
    return dataclasses.replace(config, **kw)  # type: ignore[arg-type]


def _games_against(records: list[GameRecord], pairings: list[Pairing]) -> Counter[tuple[str, str]]:
    by_index = {p.index: (p.a, p.b) for p in pairings}
    return Counter(by_index[r.pairing] for r in records)


def test_the_nearest_design_pilots_then_plays_each_candidates_nearest_anchors() -> None:
    config = _near()
    pilot = min(PILOT, config.games)
    after = -(-len(NEAR_ANCHORS) * (config.games - pilot) // NEAREST)
    # Before the pilot is played, only the first phase is known: the anchors' round robin
    # in full, every candidate against every anchor for the pilot.
    _, first = make_schedule(config, 2)
    assert len(first) == 3 * config.games + len(NEAR_CANDIDATES) * len(NEAR_ANCHORS) * pilot
    total = scheduled_games(config, 2)
    assert total == len(first) + len(NEAR_CANDIDATES) * NEAREST * after
    result = run_arena(config)
    assert len(result.records) == total and not result.interrupted
    assert [r.index for r in result.records] == list(range(total))
    # The anchors after the pilot are the two nearest each candidate's rating in the pilot's
    # games, and each candidate plays as many games in all as in the fixed design.
    pilot_games = [r for r in result.records if r.index < len(first)]
    fitted = {r.name: r.elo for r in fit_elo(pairwise_results(pilot_games, 2), names=list(config.bots))}
    chosen = nearest_anchors(config, fitted)
    counts = _games_against(result.records, result.pairings)
    for c in NEAR_CANDIDATES:
        assert len(chosen[c]) == NEAREST
        for a in NEAR_ANCHORS:
            assert counts[(c, a)] == pilot + (after if a in chosen[c] else 0)
            far = [b for b in NEAR_ANCHORS if b not in chosen[c]]
            assert all(
                abs(fitted[c] - fitted[b]) >= abs(fitted[c] - fitted[a]) for b in far for a in chosen[c]
            )
        assert sum(counts[(c, a)] for a in NEAR_ANCHORS) == len(NEAR_ANCHORS) * config.games
    for a, b in itertools.combinations(NEAR_ANCHORS, 2):  # the anchors' round robin in full
        assert counts[(a, b)] == config.games
    data = result.to_json()
    assert data["design"] == "nearest" and data["games_scheduled"] == total


def test_a_nearest_ladder_resumed_in_its_second_phase_equals_the_uninterrupted_one() -> None:
    full = run_arena(_near())
    _, first = make_schedule(_near(), 2)
    finished: list[int] = []
    stop_at = len(first) + 3  # inside the second phase
    short = run_arena(
        _near(workers=2),
        on_result=lambda r, _d, _t: finished.append(r.index),
        should_stop=lambda: len(finished) >= stop_at,
    )
    assert short.interrupted and len(short.records) >= stop_at
    data = json.loads(json.dumps(short.to_json()))
    kept = check_resumable(data, _near(), 2)
    assert len(kept) == len(short.records)
    resumed = run_arena(_near(workers=2), previous=kept)
    strip = [(r.index, r.pairing, r.seats, r.deal_seed, r.bot_seed, r.winners, r.plies) for r in full.records]
    assert [
        (r.index, r.pairing, r.seats, r.deal_seed, r.bot_seed, r.winners, r.plies) for r in resumed.records
    ] == strip
    # Another design is another schedule: refused. So is another number of games per pair:
    # the anchors' games fill the first phase, so the second phase's games would move.
    with pytest.raises(ArenaError, match="design"):
        check_resumable(data, dataclasses.replace(_near(), design="fixed"), 2)
    with pytest.raises(
        ArenaError, match="played 10 games per pair and this one 12; a nearest-design run keeps"
    ):
        check_resumable(data, _near(games=12), 2)


def test_a_check_in_the_nearest_design_plays_the_anchors_nearest_each_target() -> None:
    predicted = {"random": 0.0, "greedy": 800.0, "mcts:iterations=10,ms=none": 500.0}
    predicted |= {NEAR_CANDIDATES[0]: 100.0, NEAR_CANDIDATES[1]: 700.0}
    config = _near(predicted=tuple(sorted(predicted.items())), games=4)
    _, tasks = make_schedule(config, 2)  # no pilot: every game is known at once
    assert len(tasks) == scheduled_games(config, 2) == 3 * 4 + 2 * NEAREST * 6
    pairings = make_pairings(config.bots, 2, lineup="ladder", anchors=config.anchors)
    by_index = {p.index: (p.a, p.b) for p in pairings}
    played = Counter(by_index[t.pairing] for t in tasks)
    assert {a for (c, a) in played if c == NEAR_CANDIDATES[0]} == {"random", "mcts:iterations=10,ms=none"}
    assert {a for (c, a) in played if c == NEAR_CANDIDATES[1]} == {"greedy", "mcts:iterations=10,ms=none"}
    with pytest.raises(ArenaError, match="needs a rating"):
        nearest_anchors(config, {"random": 0.0})
    with pytest.raises(ArenaError, match="ladder lineup"):
        make_schedule(ArenaConfig("aton", ("random", "greedy"), games=2, design="nearest"), 2)


# ---------------------------------------------------------------------------------------
# The fixed design with fewer games for the costly candidates (ai/arena.py, "Designs")
# ---------------------------------------------------------------------------------------

COSTLY = "mcts:iterations=30,ms=none"


@pytest.mark.parametrize(
    ("spec", "iterations"),
    [
        ("random", 0.0),
        ("greedy", 0.0),
        ("mcts:iterations=5,ms=none", 5.0),
        ("mcts:easy", 200.0),  # the preset's budget: iterations, capped by time
        ("mcts:iterations=none,ms=50", math.inf),  # time alone: no bound on iterations
        ("pure:mcts:it=7,ms=none", 7.0),
        ("checkout:/elsewhere:mcts:iterations=5", math.inf),  # another build: not read here
        ("mcts:iterations=-1", math.inf),  # no bot (make_bot says why): never cheap
    ],
)
def test_a_specs_search_iterations_measure_its_cost(spec: str, iterations: float) -> None:
    assert search_iterations(spec) == iterations


def _costly(games: int, costly_games: int | None) -> ArenaConfig:
    return ladder_config(
        "aton",
        2,
        games_per_pair=games,
        seed=5,
        candidates=("mcts:iterations=3,ms=none", COSTLY),
        anchors=TINY,
        costly_games=costly_games,
    )


def test_costly_candidates_play_fewer_games_and_their_first_rounds_are_the_fixed_runs() -> None:
    config = _costly(6, 2)
    # Costly: a candidate that searches more a move than every anchor (the top one: 10).
    assert costly_candidates(config) == {COSTLY}
    pairings, tasks = make_schedule(config, 2)
    counts = _games_against(run_arena(config).records, pairings)
    for a, b in itertools.combinations(TINY, 2):
        assert counts[(a, b)] == 6  # the anchors' round robin in full
    for a in TINY:
        assert counts[("mcts:iterations=3,ms=none", a)] == 6 and counts[(COSTLY, a)] == 2
    assert len(tasks) == scheduled_games(config, 2) == 3 * 6 + 3 * 6 + 3 * 2
    # Its first rounds are a fixed run at 2 games per pair, game for game, and a run at 4
    # extends its first 4 rounds: each resumes from the other in both directions.
    _, fixed = make_schedule(_costly(2, None), 2)
    assert tasks[: len(fixed)] == fixed
    _, four = make_schedule(_costly(4, 2), 2)
    assert tasks[: len(four)] == four
    short = run_arena(_costly(2, None))
    data = json.loads(json.dumps(short.to_json()))
    assert "costly_games" not in data
    kept = check_resumable(data, config, 2)
    assert len(kept) == len(fixed)
    resumed = run_arena(config, previous=kept)
    full = run_arena(config)
    assert [(r.index, r.seats, r.deal_seed, r.bot_seed, r.winners, r.plies) for r in resumed.records] == [
        (r.index, r.seats, r.deal_seed, r.bot_seed, r.winners, r.plies) for r in full.records
    ]
    out = json.loads(json.dumps(full.to_json()))
    assert (out["costly_games"], out["costly"], out["games_scheduled"]) == (2, [COSTLY], len(tasks))
    # Another split of the same games is another schedule after its shared rounds: refused.
    with pytest.raises(ArenaError, match="is not this schedule's game"):
        check_resumable(out, _costly(6, 3), 2)
    # The table says how its costly candidates were measured, and reads back.
    table = table_from_result(full, "heka arena --ladder --costly-games 2")
    assert table.costly_games == 2 and json.loads(table_json(table))["costly_games"] == 2
    assert parse_table(json.loads(table_json(table)), "round trip").costly_games == 2
    # ListGames reports one games_per_pair (the most): the note says what the costly played,
    # whether the table ships measured or, its check failed, provisional.
    games = "6 games per pair, 2 for the levels that search more a move than every anchor"
    assert table.games_text == games
    measured = dataclasses.replace(table, provisional=False)
    for within, mae in ((3, 10.0), (2, 40.0)):
        check = TableCheck(seed=6, targets=3, within=within, mean_absolute_error=mae, scale="anchors")
        shipped = checked_table(measured, check, provisional=True)
        assert shipped.note.endswith(f"; {games}") and shipped.provisional == (not check.passed)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"costly_games": 7}, "must be 1..6"),
        ({"costly_games": 0}, "must be 1..6"),
        ({"costly_games": 2, "design": "nearest"}, "belong to the fixed design of a ladder"),
        ({"costly_games": 2, "lineup": "round-robin", "anchors": ()}, "belong to the fixed design"),
    ],
)
def test_games_per_costly_candidate_out_of_their_design_are_refused(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(ArenaError, match=message):
        make_schedule(dataclasses.replace(_costly(6, None), **change), 2)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0, 9, True, "2"])
def test_a_table_whose_costly_games_are_out_of_range_is_refused(value: object) -> None:
    data = json.loads(table_json(table_from_result(run_arena(_costly(2, None)), "heka arena --ladder")))
    data["costly_games"] = value
    with pytest.raises(LadderError, match="costly_games"):
        parse_table(data, "t.json")


def test_a_team_table_is_its_own_file_and_says_so() -> None:
    config = ladder_config(
        "osirium",
        4,
        games_per_pair=2,
        candidates=("mcts:iterations=3,ms=none",),
        anchors=("random", "greedy"),
        teams=True,
    )
    table = table_from_result(run_arena(config), "heka arena --ladder --teams")
    assert table.teams
    data = json.loads(table_json(table))
    assert data["teams"] is True and parse_table(data, "x").teams
    free = dataclasses.replace(table, teams=False)
    assert "teams" not in json.loads(table_json(free))  # the free-for-all tables stay as they are
    assert table_path("osirium", 4, teams=True).name == "osirium-4p-teams.json"
    assert table_path("osirium", 4).name == "osirium-4p.json"


@pytest.mark.parametrize(
    ("within", "mae", "verdict"),
    [
        (8, 30.0, "the check passes"),
        (8, 30.4, "the check fails: mean absolute error 30.4 over 30"),
        (7, 12.0, "the check fails: 1 target(s) outside ±75 Elo"),
        (6, 31.1, "the check fails: 2 target(s) outside ±75 Elo; mean absolute error 31.1 over 30"),
    ],
)
def test_a_checks_verdict_names_what_failed_to_the_decimal(within: int, mae: float, verdict: str) -> None:
    """A mean absolute error just over the bound fails, and says so with the figure that fails
    (rounded to whole Elo, 30.4 would read as the bound itself)."""
    check = TableCheck(seed=2, targets=8, within=within, mean_absolute_error=mae, scale="anchors")
    assert check.verdict() == verdict
    assert check.passed == (verdict == "the check passes")
    assert f"mean absolute error {mae:.1f}" in check.summary()


def test_a_check_just_past_the_limit_fails_and_reads_back_failed() -> None:
    """The mean absolute error was stored to one decimal and the verdict recomputed from it:
    30.04 failed, printed "30.0 over 30", and read back as passed. It is stored unrounded
    and printed rounded up."""
    check = TableCheck(seed=3, targets=12, within=12, mean_absolute_error=30.04, scale="anchors")
    assert not check.passed
    assert "mean absolute error 30.1 over 30" in check.verdict() and "30.1" in check.summary()
    assert TableCheck(seed=3, targets=12, within=12, mean_absolute_error=30.0).passed
    table = RatingTable(
        game="aton",
        players=2,
        bots=(RatedBot("random", "random", 0.0, 0.0, 10.0), RatedBot("easy", "mcts:easy", 500.0, 40.0, 10.0)),
        games_per_pair=200,
        seed=1,
        command="heka arena --ladder",
        provisional=True,
        note="provisional: its check failed",
        check=check,
    )
    read = parse_table(json.loads(table_json(table)), "round trip")
    assert read.check is not None and not read.check.passed


def test_a_table_provisional_for_want_of_its_check_is_measured_once_it_passes() -> None:
    """`heka arena --ladder --ship` ships a table measured in full as provisional, "not
    checked"; its passing check left it provisional. A table provisional for its few games
    stays provisional, checked."""
    bots = (RatedBot("random", "random", 0.0, 0.0, 10.0), RatedBot("easy", "mcts:easy", 500.0, 40.0, 10.0))
    passing = TableCheck(seed=2, targets=5, within=5, mean_absolute_error=12.0, scale="anchors")
    unchecked = RatingTable(
        "aton", 2, bots, 128, 1, "heka arena --ladder", True, f"{UNCHECKED} (128 games per pair)"
    )
    shipped = checked_table(unchecked, passing)
    assert not shipped.provisional and shipped.note == passing.summary()
    few = dataclasses.replace(unchecked, note="provisional: 8 games per pair, 32 per candidate")
    shipped = checked_table(few, passing)
    assert shipped.provisional and shipped.note.endswith(passing.summary())
