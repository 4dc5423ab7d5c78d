"""The arena: schedule and seat rotation, scoring, reproducibility across worker counts."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import Counter
from typing import Any, Self

import pytest

from ai.api import BotSpecError, Decision, Diagnostics, make_bot, split_bot_specs
from ai.arena import (
    ArenaConfig,
    ArenaError,
    ArenaResult,
    GameRecord,
    check_resumable,
    derive_seed,
    expected_block_note,
    game_side_result,
    make_pairings,
    make_schedule,
    pairwise_results,
    play_game,
    records_from_json,
    run_arena,
    seconds_per_decision,
    timed_records,
)
from engine.core import (
    ActionInfo,
    ActionParseError,
    Game,
    GameDescriptor,
    OptionSpec,
    Outcome,
    State,
    View,
    check_num_players,
    resolve_options,
)
from engine.registry import get_game

# ---------------------------------------------------------------------------------------
# A tiny game so that bookkeeping tests are fast and independent of the real engines:
# players in turn add 1, 2 or 3 to a shared total; whoever brings it to 10 or more wins;
# landing exactly on 7 ends the game in a draw. Seat 0 has a real edge against random play.
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class RaceView(View):
    player: int | None
    total: int
    turn: int

    def to_text(self) -> str:
        return f"total {self.total}, seat {self.turn} to play"


class RaceState(State):
    def __init__(self, game: Game, n: int, teams: bool) -> None:
        self.game = game
        self.n = n
        self.team_play = teams
        self.total = 0
        self.turn = 0
        self.over = False
        self.winners: tuple[int, ...] = ()
        self.moves = 0

    @property
    def num_players(self) -> int:
        return self.n

    def current_player(self) -> int:
        return -1 if self.over else self.turn

    def decision(self) -> str:
        return "over" if self.over else "add"

    def move_number(self) -> int:
        return self.moves

    def teams(self) -> tuple[int, ...]:
        return tuple(i % 2 for i in range(self.n)) if self.team_play else tuple(range(self.n))

    def legal_actions(self) -> list[int]:
        return [] if self.over else [0, 1, 2]

    def apply(self, action: int) -> None:
        self.moves += 1
        self.total += action + 1
        if self.total >= 10:
            self.over = True
            team = self.teams()[self.turn]
            self.winners = tuple(i for i in range(self.n) if self.teams()[i] == team)
        elif self.total == 7:
            self.over = True
        else:
            self.turn = (self.turn + 1) % self.n

    def apply_action(self, action: int) -> list[Any]:
        self.apply(action)
        return []

    def scores(self) -> tuple[int, ...]:
        return tuple(1 if i in self.winners else 0 for i in range(self.n))

    def returns(self) -> tuple[float, ...]:
        if not self.winners:
            return (0.0,) * self.n
        return tuple(1.0 if i in self.winners else -1.0 for i in range(self.n))

    def outcome(self) -> Outcome | None:
        if not self.over:
            return None
        return Outcome(self.winners, "race" if self.winners else "seven", "", self.scores(), self.returns())

    def view(self, player: int | None) -> View:
        return RaceView(player, self.total, self.turn)

    def sample_consistent_state(self, player: int, rng: random.Random) -> Self:
        return self.clone()

    def clone(self) -> Self:
        s = type(self).__new__(type(self))
        s.game, s.n, s.team_play, s.total, s.turn, s.over, s.winners = (
            self.game,
            self.n,
            self.team_play,
            self.total,
            self.turn,
            self.over,
            self.winners,
        )
        s.moves = self.moves
        return s

    def to_text(self) -> str:
        return f"total {self.total}"

    def serialize(self) -> str:
        return f"race:1:{self.n}:{self.total}:{self.turn}"

    def validate(self) -> None:
        pass


class RaceGame(Game):
    descriptor = GameDescriptor(
        name="race-test",
        title="Race (test)",
        min_players=2,
        max_players=4,
        options=(OptionSpec("teams", "bool", False, "teams"),),
        hidden_information=False,
        num_distinct_actions=3,
        max_rounds=10,
        team_player_counts=(4,),
    )

    def new_initial_state(self, num_players: int | None = None, seed: int = 0, options: Any = None) -> State:
        n = check_num_players(self.descriptor, num_players)
        opts = resolve_options(self.descriptor, options)
        return RaceState(self, n, opts["teams"])

    def serialize_state(self, state: State, *, version: int | None = None) -> str:
        return state.serialize()

    def deserialize_state(self, data: str, *, validate: bool = True) -> State:
        raise NotImplementedError

    def action_info(self, action: int) -> ActionInfo:
        if action not in (0, 1, 2):
            raise ActionParseError(f"no action {action}")
        return ActionInfo(action, f"add {action + 1}", "add")

    def string_to_action(self, text: str) -> int:
        return int(text.rsplit(maxsplit=1)[-1]) - 1


RACE = RaceGame()


@pytest.fixture(autouse=True)
def _test_game_and_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the race game and the test bots for one test only (not at import: the
    conformance suite lists every registered game when it is collected)."""
    import ai.api
    import engine.registry

    engine.registry.list_games()  # load the built-in games first
    monkeypatch.setitem(engine.registry._GAMES, RACE.descriptor.name, RACE)
    monkeypatch.setitem(ai.api._FACTORIES, "smart", make_smart)
    monkeypatch.setitem(ai.api._FACTORIES, "broken", make_broken)


# ---------------------------------------------------------------------------------------
# Schedule
# ---------------------------------------------------------------------------------------


def seat_counts(blocks: Any, spec: str) -> Counter[int]:
    return Counter(s for arrangement in blocks for s, x in enumerate(arrangement) if x == spec)


@pytest.mark.parametrize(
    ("text", "specs"),
    [
        ("mcts:medium,greedy,random", ["mcts:medium", "greedy", "random"]),
        ("mcts:medium,ms=none,greedy", ["mcts:medium,ms=none", "greedy"]),
        (
            "mcts:iterations=50,c=0.3,cutoff=end,mcts:hard",
            ["mcts:iterations=50,c=0.3,cutoff=end", "mcts:hard"],
        ),
        ("mcts:hard;mcts:medium", ["mcts:hard", "mcts:medium"]),
        (" greedy , random ", ["greedy", "random"]),
    ],
)
def test_bot_spec_lists_keep_each_specs_parameters(text: str, specs: list[str]) -> None:
    assert split_bot_specs(text) == specs
    for spec in specs:
        make_bot(spec)  # each piece is a valid spec


@pytest.mark.parametrize(
    "text", ["random,,greedy", "random,", ",random", "random;;greedy", "random;", "mcts:"]
)
def test_a_bot_spec_list_with_an_empty_item_is_refused(text: str) -> None:
    """A list that lost a spec (a stray separator) is refused, not played as a shorter list."""
    with pytest.raises(BotSpecError, match=r"an empty bot spec|has nothing after its ':'"):
        split_bot_specs(text)


def test_two_player_pairings_swap_seats() -> None:
    ps = make_pairings(["x", "y", "z"], 2)
    assert [(p.a, p.b) for p in ps] == [("x", "y"), ("x", "z"), ("y", "z")]
    assert ps[0].block == (("x", "y"), ("y", "x"))


@pytest.mark.parametrize("players", [3, 4])
def test_multiplayer_round_robin_balances_every_seat(players: int) -> None:
    (p,) = make_pairings(["x", "y"], players)
    assert len(p.block) == {3: 6, 4: 14}[players]
    assert len(set(p.block)) == len(p.block)  # every arrangement once
    # Each spec sits in each seat equally often over the block.
    for spec in ("x", "y"):
        counts = seat_counts(p.block, spec)
        assert len(set(counts.values())) == 1 and len(counts) == players
    # Every mixture appears: 1..K-1 copies of x.
    assert {a.count("x") for a in p.block} == set(range(1, players))


def test_one_vs_rest_rotates_the_one_through_every_seat() -> None:
    ps = make_pairings(["m", "g", "r"], 4, lineup="one-vs-rest")
    assert [(p.a, p.b) for p in ps] == [("m", "g"), ("m", "r")]
    block = ps[0].block
    assert len(block) == 4
    assert all(a.count("m") == 1 and a.count("g") == 3 for a in block)
    assert [a.index("m") for a in block] == [0, 1, 2, 3]


def test_teams_lineup_puts_partners_in_seats_0_2_and_1_3() -> None:
    (p,) = make_pairings(["x", "y"], 4, teams=True)
    assert p.block == (("x", "y", "x", "y"), ("y", "x", "y", "x"))


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ArenaError, match="two different"):
        make_pairings(["x"], 2)
    with pytest.raises(ArenaError, match="distinct"):
        make_pairings(["x", "x"], 2)
    with pytest.raises(ArenaError, match="lineup"):
        make_pairings(["x", "y"], 2, lineup="swiss")
    with pytest.raises(ArenaError, match="4 players"):
        make_pairings(["x", "y"], 3, teams=True)


def test_schedule_interleaves_pairings_and_shares_deals_within_a_block() -> None:
    config = ArenaConfig("race-test", ("x", "y", "z"), games=4, seed=5)
    pairings, tasks = make_schedule(config, 2)
    assert [t.index for t in tasks] == list(range(12))
    assert [t.pairing for t in tasks[:6]] == [0, 1, 2, 0, 1, 2]
    first = [t for t in tasks if t.pairing == 0]
    assert [t.seats for t in first] == [("x", "y"), ("y", "x")] * 2
    # The two arrangements of a block share the deal; blocks differ; bot seeds all differ.
    assert first[0].deal_seed == first[1].deal_seed != first[2].deal_seed == first[3].deal_seed
    assert len({t.bot_seed for t in tasks}) == 12
    assert first[0].deal_seed == derive_seed(5, "deal", 0)
    assert expected_block_note(pairings, 4) is None
    assert "multiple of 2" in (expected_block_note(pairings, 3) or "")


# ---------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------


def record(seats: tuple[str, ...], winners: tuple[int, ...], returns: tuple[float, ...]) -> GameRecord:
    n = len(seats)
    return GameRecord(0, 0, seats, 0, 0, winners, returns, (0,) * n, "x", 1, 1, 0.0, (0.0,) * n, (1,) * n)


def test_side_results_count_a_win_for_the_winners() -> None:
    assert game_side_result(record(("a", "b"), (1,), (-1, 1)), "a", "b") == "b"
    assert game_side_result(record(("a", "b"), (), (0, 0)), "a", "b") == "draw"
    four = ("b", "a", "b", "b")
    assert game_side_result(record(four, (1,), (-1, 1, -1, -1)), "a", "b") == "a"
    assert game_side_result(record(four, (2,), (-1, -1, 1, -1)), "a", "b") == "b"
    assert game_side_result(record(four, (1, 2), (-1, 0, 0, -1)), "a", "b") == "draw"


def test_pairwise_decomposition_of_a_four_player_game() -> None:
    # a wins alone among three b: three comparisons, each 1/3 of a game, all won by a.
    res = pairwise_results([record(("b", "a", "b", "b"), (1,), (-1, 1, -1, -1))], 4)
    assert len(res) == 3
    assert all(r.games == pytest.approx(1 / 3) for r in res)
    assert sum(r.score_a if r.a == "a" else r.games - r.score_a for r in res) == pytest.approx(1.0)
    # Same-spec seats are not compared; losers draw among themselves.
    res = pairwise_results([record(("a", "b", "a", "b"), (0,), (1, -1, -1, -1))], 4)
    scores = sorted((r.a, r.b, round(r.score_a * 3, 6)) for r in res)
    # (0,1) and (0,3): a wins; (1,2) and (2,3): two losers with equal scores draw.
    assert scores == [("a", "b", 0.5), ("a", "b", 1.0), ("a", "b", 1.0), ("b", "a", 0.5)]
    # Losers are ranked by their final scores in a free-for-all game...
    ranked = dataclasses.replace(record(("a", "b", "a", "b"), (0,), (1, -1, -1, -1)), scores=(30, 12, 20, 20))
    scores = sorted((r.a, r.b, round(r.score_a * 3, 6)) for r in pairwise_results([ranked], 4))
    # (1,2): b 12 < a 20, a wins; (2,3): 20 = 20, a draw.
    assert scores == [("a", "b", 0.5), ("a", "b", 1.0), ("a", "b", 1.0), ("b", "a", 0.0)]
    # ...but in team games only the (shared) returns count.
    res = pairwise_results([ranked], 4, teams=True)
    assert sorted(round(r.score_a * 3, 6) for r in res) == [0.5, 0.5, 1.0, 1.0]


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------


class SmartBot:
    """Wins at once when it can, else avoids handing the next player a win (seeded ties)."""

    name = "smart"

    def choose(self, state: State, *, seed: int = 0, **_: Any) -> Decision:
        assert isinstance(state, RaceState)
        legal = state.legal_actions()
        wins = [a for a in legal if state.total + a + 1 >= 10]
        safe = [a for a in legal if state.total + a + 1 <= 6 or state.total + a + 1 == 7]
        pool = wins or safe or legal
        return Decision(random.Random(seed).choice(pool), Diagnostics())


def make_smart(_params: str) -> SmartBot:
    return SmartBot()


def test_arena_counts_every_game_and_scores_the_stronger_bot_higher() -> None:
    config = ArenaConfig("race-test", ("smart", "random"), games=60, seed=3)
    progress: list[tuple[int, int]] = []
    result = run_arena(config, on_result=lambda _r, done, total: progress.append((done, total)))
    assert progress[-1] == (60, 60) and len(progress) == 60
    assert [r.index for r in result.records] == list(range(60))
    (stats,) = result.pairing_stats()
    assert stats.games == 60
    assert stats.a_wins.successes + stats.draws.successes + stats.b_wins.successes == 60
    assert stats.a_wins.rate > stats.b_wins.rate
    ratings = {r.name: r for r in result.ratings()}
    assert ratings["random"].elo == 0.0 and ratings["random"].ci95 == 0.0
    assert ratings["smart"].elo > 0
    # Each bot sat in each seat 30 times.
    assert Counter(r.seats[0] for r in result.records) == {"smart": 30, "random": 30}
    table = result.format_table()
    assert "smart vs random" in table and "Elo" in table
    data = json.loads(json.dumps(result.to_json()))
    assert data["games_played"] == 60 and len(data["games"]) == 60
    assert data["games"][0]["deal_seed"] == result.records[0].deal_seed
    assert data["ratings"]["anchor"] == "random"


@pytest.mark.parametrize(
    "players,teams,lineup",
    [
        (2, False, "round-robin"),
        (4, False, "round-robin"),
        (4, True, "round-robin"),
        (3, False, "one-vs-rest"),
    ],
)
def test_results_do_not_depend_on_the_number_of_workers(players: int, teams: bool, lineup: str) -> None:
    config = ArenaConfig(
        "race-test", ("smart", "random"), games=14, seed=11, players=players, teams=teams, lineup=lineup
    )
    one = run_arena(config)
    two = run_arena(dataclasses.replace(config, workers=2))
    strip = [(r.index, r.seats, r.deal_seed, r.bot_seed, r.winners, r.returns, r.plies) for r in one.records]
    assert strip == [
        (r.index, r.seats, r.deal_seed, r.bot_seed, r.winners, r.returns, r.plies) for r in two.records
    ]
    assert len(strip) == 14
    # And a different arena seed gives different games.
    other = run_arena(dataclasses.replace(config, seed=12))
    assert [r.bot_seed for r in other.records] != [r.bot_seed for r in one.records]


def test_a_bot_error_names_the_game() -> None:
    config = ArenaConfig("race-test", ("broken", "random"), games=2, seed=1, workers=2)
    with pytest.raises(ArenaError, match=r"game \d+ .*deal seed"):
        run_arena(config)
    with pytest.raises(ArenaError, match="illegal action"):
        run_arena(dataclasses.replace(config, workers=1))


class BrokenBot:
    name = "broken"

    def choose(self, state: State, **_: Any) -> Decision:
        return Decision(99, Diagnostics())


def make_broken(_params: str) -> BrokenBot:
    return BrokenBot()


def test_partial_results_whose_bots_never_met_still_serialise() -> None:
    config = ArenaConfig("race-test", ("smart", "random", "broken"), games=2, seed=1)
    pairings, tasks = make_schedule(config, 2)
    game = RACE
    # Only the games of pairing 0 (smart vs random) finished: "broken" never played.
    records = [play_game(game, t, 2, {}) for t in tasks if t.pairing == 0]
    result = ArenaResult(config, 2, pairings, records, len(tasks), 0.1, interrupted=True)
    data = result.to_json()
    assert [r["name"] for r in data["ratings"]["bots"]] == ["smart", "random"]
    assert data["interrupted"] is True and data["games_played"] == 2
    assert "INTERRUPTED" in result.format_table()


@pytest.mark.parametrize("workers", [1, 2])
def test_should_stop_ends_the_arena_with_the_games_finished(workers: int) -> None:
    finished: list[int] = []
    config = ArenaConfig("race-test", ("smart", "random"), games=400, seed=2, workers=workers)
    result = run_arena(
        config, on_result=lambda r, _d, _t: finished.append(r.index), should_stop=lambda: len(finished) >= 5
    )
    assert result.interrupted
    assert 5 <= len(result.records) < 400
    assert sorted(finished) == [r.index for r in result.records]


@pytest.mark.parametrize("game,players", [("aton", 2), ("osirium", 3)])
def test_real_games_are_reproducible_across_worker_counts(game: str, players: int) -> None:
    config = ArenaConfig(game, ("greedy", "random"), games=6, seed=21, players=players)
    one = run_arena(config)
    two = run_arena(dataclasses.replace(config, workers=2))

    def strip(r: GameRecord) -> tuple[Any, ...]:
        return (r.index, r.seats, r.deal_seed, r.winners, r.scores, r.reason, r.plies, r.rounds)

    assert [strip(r) for r in one.records] == [strip(r) for r in two.records]
    # Seat rotation with 3 players: every arrangement of the 6-game block once.
    assert len({r.seats for r in one.records}) == (6 if players == 3 else 2)
    assert len({r.deal_seed for r in one.records}) == (1 if players == 3 else 3)


def _strip(r: GameRecord) -> tuple[Any, ...]:
    return (r.index, r.pairing, r.seats, r.deal_seed, r.bot_seed, r.winners, r.returns, r.plies)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_resumed_arena_equals_the_uninterrupted_one(workers: int) -> None:
    full_config = ArenaConfig("race-test", ("smart", "random"), games=10, seed=4, workers=workers)
    full = run_arena(full_config)
    # An earlier run of 6 games per pairing, stopped after 4 of them, written to JSON.
    finished: list[int] = []
    short = run_arena(
        dataclasses.replace(full_config, games=6),
        on_result=lambda r, _d, _t: finished.append(r.index),
        should_stop=lambda: len(finished) >= 4,
    )
    data = json.loads(json.dumps(short.to_json()))
    kept = check_resumable(data, full_config, 2)
    assert [r.index for r in kept] == [r.index for r in short.records]
    played: list[int] = []
    resumed = run_arena(
        full_config,
        previous=kept,
        previous_seconds=100.0,
        on_result=lambda _r, done, _t: played.append(done),
    )
    assert [_strip(r) for r in resumed.records] == [_strip(r) for r in full.records]
    # Only the missing games were played, and the count continues from the kept ones.
    assert played == list(range(len(kept) + 1, 11))
    assert resumed.seconds >= 100.0 and not resumed.interrupted


def test_records_survive_the_json_round_trip() -> None:
    result = run_arena(ArenaConfig("race-test", ("smart", "random"), games=4, seed=9))
    back = records_from_json(json.loads(json.dumps(result.to_json())))
    assert [_strip(r) for r in back] == [_strip(r) for r in result.records]
    assert [r.scores for r in back] == [r.scores for r in result.records]
    with pytest.raises(ArenaError, match="not an arena results file"):
        records_from_json({"games": [{"index": 0}]})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"actions": [999999, -5]}, "'actions' must be a list of action ids (integers >= 0)"),
        ({"actions": [3, 1]}, "'actions' must hold the game's"),
        ({"winners": [1, 1]}, "'winners' must name each seat once"),
    ],
)
def test_a_record_whose_fields_disagree_is_refused(change: dict[str, object], message: str) -> None:
    """A kept record must be a game: its actions as many as its plies, each seat a winner
    once (an edited file's record was kept, and a review of the result then failed)."""
    result = run_arena(ArenaConfig("aton", ("greedy", "random"), games=2, seed=3))
    data = json.loads(json.dumps(result.to_json()))
    assert records_from_json(data)  # as written: fine
    data["games"][0].update(change)
    with pytest.raises(ArenaError, match=re.escape(message)):
        records_from_json(data)


def test_games_record_their_cpu_time_and_earlier_files_still_load() -> None:
    result = run_arena(ArenaConfig("aton", ("mcts:iterations=20,ms=none", "random"), games=2, seed=3))
    for r in result.records:
        assert r.cpu_seconds is not None and len(r.think_cpu) == len(r.seats)
        assert all(t >= 0 for t in r.think_cpu) and r.cpu_seconds >= sum(r.think_cpu) - 1e-6
        assert r.cost == r.cpu_seconds
    data = json.loads(json.dumps(result.to_json()))
    back = records_from_json(data)
    assert [(r.think_cpu, r.cpu_seconds) for r in back] == [
        (tuple(round(t, 4) for t in r.think_cpu), round(r.cpu_seconds or 0, 4)) for r in result.records
    ]
    for g in data["games"]:  # a file of an earlier release: wall time only
        del g["think_cpu"], g["cpu_seconds"]
    old = records_from_json(data)
    assert [(r.think_cpu, r.cpu_seconds) for r in old] == [((), None)] * 2
    assert [r.cost for r in old] == [r.seconds for r in old]


def test_the_time_per_decision_reads_cpu_time_where_games_record_it() -> None:
    wall_only = dataclasses.replace(record(("a", "b"), (0,), (1, -1)), think_seconds=(900.0, 1.0))
    timed = dataclasses.replace(
        record(("b", "a"), (0,), (1, -1)), think_seconds=(5.0, 5.0), think_cpu=(2.0, 4.0), cpu_seconds=6.5
    )
    # Any record with CPU time: the cost is read from those only (a paused run's wall time
    # would count 900 s); without any, from the wall time.
    assert seconds_per_decision([wall_only, timed]) == {"b": 2.0, "a": 4.0}
    assert seconds_per_decision([wall_only]) == {"a": 900.0, "b": 1.0}
    assert timed_records([wall_only, timed]) == ([timed], True)
    assert timed_records([wall_only]) == ([wall_only], False)


def test_resuming_refuses_results_of_another_schedule() -> None:
    config = ArenaConfig("race-test", ("smart", "random"), games=4, seed=9)
    data = json.loads(json.dumps(run_arena(config).to_json()))
    # A larger --games keeps every game; a smaller one keeps the schedule's prefix.
    assert len(check_resumable(data, dataclasses.replace(config, games=8), 2)) == 4
    assert [r.index for r in check_resumable(data, dataclasses.replace(config, games=2), 2)] == [0, 1]
    for changed, field in [
        (dataclasses.replace(config, seed=10), "seed"),
        (dataclasses.replace(config, bots=("random", "smart")), "bots"),
        (dataclasses.replace(config, lineup="one-vs-rest"), "lineup"),
        (dataclasses.replace(config, game="aton"), "game"),
    ]:
        with pytest.raises(ArenaError, match=f"cannot resume: the earlier run's {field}"):
            check_resumable(data, changed, 2)
    with pytest.raises(ArenaError, match="earlier run's players"):
        check_resumable(data, config, 3)
    tampered = json.loads(json.dumps(data))
    tampered["games"][1]["bot_seed"] += 1
    with pytest.raises(ArenaError, match="game 1 of the earlier results is not this schedule's game 1"):
        check_resumable(tampered, config, 2)
    tampered = json.loads(json.dumps(data))
    tampered["games"].append(tampered["games"][0])
    with pytest.raises(ArenaError, match="game 0 appears twice"):
        check_resumable(tampered, config, 2)
    tampered = json.loads(json.dumps(data))
    limit = get_game("race-test").descriptor.num_distinct_actions
    tampered["games"][2]["actions"] = [limit] * len(tampered["games"][2]["actions"])
    with pytest.raises(ArenaError, match=f"game 2 of the earlier results records action {limit}, which"):
        check_resumable(tampered, config, 2)
