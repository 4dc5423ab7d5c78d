"""bench/ladder_cost.py, which docs/ray.md's "Cost on N cores" (scripts/gen_figures.py) and
bench/results/ladder_cost.txt take their figures from: the model of the wall time on N cores,
the cost by level, and the record current with the results it reads."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("heka_ladder_cost_test", ROOT / "bench" / "ladder_cost.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


lc = load()


def game(seats: list[str], seconds: float) -> dict[str, object]:
    return {"seats": seats, "seconds": seconds}


def test_the_time_on_n_cores_is_cpu_over_n_no_less_than_the_longest_game_plus_ray() -> None:
    run = lc.RunCost.of({"games": [game(["a", "b"], s) for s in (1.0, 1.0, 1.0, 5.0)]})
    assert (run.games, run.seconds, run.longest) == (4, 8.0, 5.0)
    assert run.wall(1, 0.0) == 8.0  # one core: every game in turn
    assert run.wall(2, 0.0) == 5.0  # 8 / 2 = 4, but the 5 s game takes 5
    assert run.wall(2, 0.5) == 5.0 + 4 * 0.5  # Ray's overhead for every game, not shared out
    assert run.bound(2, 0.0) == 4.0 + 5.0  # the 5 s game started last
    check = lc.RunCost.of({"games": [game(["a", "c"], 2.0)] * 6})
    assert lc.sequence([run, check], 4, 0.0) == (5.0 + 3.0, (2.0 + 5.0) + (3.0 + 2.0))


def test_a_level_costs_the_mean_of_its_games_against_the_anchors() -> None:
    run = {
        "anchors": ["random", "greedy"],
        "games": [game(["random", "greedy"], 0.5), game(["greedy", "random"], 1.5),
                  game(["hard", "random"], 10.0), game(["greedy", "hard"], 20.0),
                  game(["easy", "greedy"], 1.0)],
    }  # fmt: skip
    assert lc.level_costs(run) == {lc.ANCHOR_GAMES: (2, 1.0), "hard": (2, 15.0), "easy": (1, 1.0)}


def test_a_game_costs_its_cpu_time_where_recorded_and_a_level_its_cpu_timed_games() -> None:
    paused = {**game(["hard", "random"], 3600.0), "cpu_seconds": None}  # wall only, paused
    timed = [{**game(["hard", "random"], 12.0 + i), "cpu_seconds": 10.0 + i} for i in range(2)]
    run = {"anchors": ["random"], "games": [paused, *timed, game(["easy", "random"], 2.0)]}
    cost = lc.RunCost.of(run)
    # The paused game costs its level's timed games' mean, not its wall time; a level without
    # any timed game reads wall time.
    assert (cost.games, cost.cpu_games, cost.estimated) == (4, 2, 1)
    assert (cost.seconds, cost.longest) == (10.5 + 21.0 + 2.0, 11.0)
    assert lc.level_costs(run) == {"hard": (3, 10.5), "easy": (1, 2.0)}


def test_an_untimed_game_costs_its_pairings_timed_games_before_its_levels() -> None:
    def g(pairing: int, seats: list[str], seconds: float, cpu: float | None) -> dict[str, object]:
        return {**game(seats, seconds), "pairing": pairing, "cpu_seconds": cpu}

    run = {
        "anchors": ["random", "medium"],
        "games": [g(0, ["hard", "random"], 900.0, None), g(0, ["hard", "random"], 9.0, 8.0),
                  g(1, ["hard", "medium"], 900.0, None), g(1, ["hard", "medium"], 31.0, 30.0)],
    }  # fmt: skip
    costs, estimated = lc.game_costs(run)
    assert (costs, estimated) == ([8.0, 8.0, 30.0, 30.0], 2)


def test_ray_s_overhead_is_read_from_its_record(tmp_path: Path) -> None:
    assert lc.ray_overhead() > 0
    record = tmp_path / "ray_overhead.txt"
    record.write_text("command: ...\nray overhead per game: +2.7 ms (wall, 2 workers)\n")
    assert lc.ray_overhead(record) == pytest.approx(0.0027)
    record.write_text("command: ...\n")
    with pytest.raises(SystemExit, match="no 'ray overhead per game' line"):
        lc.ray_overhead(record)


def test_the_record_is_what_the_script_prints_from_the_results(capsys: pytest.CaptureFixture[str]) -> None:
    record = (ROOT / "bench" / "results" / "ladder_cost.txt").read_text(encoding="utf-8")
    command, _, printed = record.partition("\n")
    assert command == "command: python3 bench/ladder_cost.py"
    lc.main([])
    assert capsys.readouterr().out == printed, "run the command of bench/results/ladder_cost.txt again"
