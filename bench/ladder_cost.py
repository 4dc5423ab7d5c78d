"""What a rating ladder and its check cost: seconds per game by level, and the wall time on
2, 16 and 128 cores, with Ray (docs/ray.md, "Cost on N cores").

    python3 bench/ladder_cost.py                                 # the measured 2-player runs
    python3 bench/ladder_cost.py LADDER.json[,CHECK.json] ...    # others: a ladder, its check

A game's cost is one core's time: its ``cpu_seconds`` (the CPU time of the worker process
that played it, one game per core) where recorded; else, in a run where other games of its
pairing (or, failing those, of its level) record it, their mean (a run resumed across
versions records CPU time only in its later games); else its ``seconds`` (wall time in its
worker, which other work on the machine or a paused run inflates: an upper bound). A level's
cost is the mean over its games that record CPU time, or over all its games where none does
(a candidate's games are against the anchors; the games between anchors are counted apart). The
games of a run on N cores take their total over N, but no less than the run's longest game,
plus Ray's overhead per game (bench/results/ray_overhead.txt) counted for every game as if it
were not shared out between the cores: that is the estimate; a longest game that starts last
adds up to its own length (the bound). A check measures its ladder's table, so it runs after the ladder.

Prints figures, asserts nothing. scripts/gen_figures.py reads the same figures from here for
docs/ray.md.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
#: The measured ladders of the shipped 2-player tables, each with its check.
MEASURED = (
    ("Aton, 2 players", RESULTS / "ladder_aton2.json", RESULTS / "check_aton2.json"),
    ("Osirium, 2 players", RESULTS / "ladder_osirium2_measured.json", RESULTS / "check_osirium2.json"),
    # Played at nice 19 beside other work, before games recorded CPU time: upper bounds.
    ("Osirium, 3 players", RESULTS / "ladder_osirium3_50.json", RESULTS / "check_osirium3.json"),
    # The fixed design at 128 games per pair, the shipped table and its check.
    ("Osirium, 4 players", RESULTS / "ladder_osirium4_128.json", RESULTS / "check_osirium4_128.json"),
    # 256 games per pair, 128 for the candidates that search more than every anchor.
    (
        "Osirium, 4 players in teams",
        RESULTS / "ladder_osirium4_teams_256.json",
        RESULTS / "check_osirium4_teams_256.json",
    ),
)
CORES = (2, 16, 128)
ANCHOR_GAMES = "(the anchors' games)"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def game_cost(game: dict[str, Any]) -> float:
    """One core's seconds of a game: its CPU time where recorded, else its wall time."""
    cpu = game.get("cpu_seconds")
    return float(game["seconds"] if cpu is None else cpu)


def _level(game: dict[str, Any], anchors: set[str]) -> str:
    others = set(game["seats"]) - anchors
    return next(iter(others)) if others else ANCHOR_GAMES


def game_costs(run: dict[str, Any]) -> tuple[list[float], int]:
    """Every game's cost in ``run``, and how many of them are estimated: a game without CPU
    time, in a run where other games record it, costs the mean CPU time of its pairing's
    timed games, or where there are none, of its level's (its candidate's, or the anchors'
    games)."""
    anchors = set(run.get("anchors", []))
    by_pairing: dict[int, list[float]] = collections.defaultdict(list)
    by_level: dict[str, list[float]] = collections.defaultdict(list)
    for g in run["games"]:
        if g.get("cpu_seconds") is not None:
            if "pairing" in g:
                by_pairing[g["pairing"]].append(float(g["cpu_seconds"]))
            by_level[_level(g, anchors)].append(float(g["cpu_seconds"]))
    costs, estimated = [], 0
    for g in run["games"]:
        timed = ("pairing" in g and by_pairing.get(g["pairing"])) or by_level.get(_level(g, anchors))
        if g.get("cpu_seconds") is None and timed:
            costs.append(sum(timed) / len(timed))
            estimated += 1
        else:
            costs.append(game_cost(g))
    return costs, estimated


@dataclasses.dataclass(frozen=True)
class RunCost:
    """The games of one run: how many, their seconds in all, the longest, and how many of
    them record CPU time."""

    games: int
    seconds: float
    longest: float
    cpu_games: int = 0
    #: Games without CPU time, costed at their pairing's mean CPU time.
    estimated: int = 0

    @classmethod
    def of(cls, run: dict[str, Any]) -> RunCost:
        secs, estimated = game_costs(run)
        cpu = sum(1 for g in run["games"] if g.get("cpu_seconds") is not None)
        return cls(len(secs), sum(secs), max(secs, default=0.0), cpu, estimated)

    def wall(self, cores: int, overhead: float) -> float:
        """The estimate on ``cores`` cores with Ray's ``overhead`` seconds per game."""
        return max(self.seconds / cores, self.longest) + self.games * overhead

    def bound(self, cores: int, overhead: float) -> float:
        """At most this: the longest game started last."""
        return self.seconds / cores + self.longest + self.games * overhead


def sequence(runs: list[RunCost], cores: int, overhead: float) -> tuple[float, float]:
    """The estimate and the bound of runs played one after the other."""
    return sum(r.wall(cores, overhead) for r in runs), sum(r.bound(cores, overhead) for r in runs)


def level_costs(run: dict[str, Any]) -> dict[str, tuple[int, float]]:
    """Each candidate's games (against the anchors) and their mean seconds (over the games
    that record CPU time, where any does); the games between anchors under
    :data:`ANCHOR_GAMES`."""
    anchors = set(run.get("anchors", []))
    per: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for g in run["games"]:
        per[_level(g, anchors)].append(g)
    out = {}
    for name, games in per.items():
        timed = [g for g in games if g.get("cpu_seconds") is not None] or games
        out[name] = (len(games), sum(game_cost(g) for g in timed) / len(timed))
    return out


def ray_overhead(path: Path = RESULTS / "ray_overhead.txt") -> float:
    """Ray's overhead per game in seconds, as bench/ray_overhead.py measured it."""
    match = re.search(r"^ray overhead per game: ([+-][\d.]+) ms", path.read_text(encoding="utf-8"), re.M)
    if match is None:
        raise SystemExit(f"{path}: no 'ray overhead per game' line")
    return float(match[1]) / 1000


def duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def report(label: str, ladder: Path, check: Path | None, overhead: float) -> list[str]:
    runs = [(ladder, load(ladder))] + ([(check, load(check))] if check else [])
    lines = [f"{label}:"]
    costs: list[RunCost] = []
    for path, data in runs:
        cost = RunCost.of(data)
        costs.append(cost)
        wall = cost.games - cost.cpu_games - cost.estimated
        timing = (
            "CPU time"
            if cost.cpu_games == cost.games
            else "wall time"
            if not cost.cpu_games
            else f"CPU time in {cost.cpu_games}"
            + (f", {cost.estimated} at their pairing's or level's mean CPU time" if cost.estimated else "")
            + (f", wall time in {wall}" if wall else "")
        )
        lines.append(
            f"  {path.name}: {cost.games} games, {cost.seconds:.0f} s of games ({timing}; longest "
            f"{cost.longest:.0f} s), wall {data['seconds']:.0f} s on {data['workers']} workers"
        )
        for name, (games, mean) in sorted(level_costs(data).items(), key=lambda kv: kv[1][1]):
            lines.append(f"    {name:40s} {games:5d} games  {mean:7.2f} s/game")
        lines.append("    with Ray: " + _walls([cost], overhead))
    if check:
        lines.append("  the ladder, then its check, with Ray: " + _walls(costs, overhead))
    return lines


def _walls(costs: list[RunCost], overhead: float) -> str:
    parts = []
    for n in CORES:
        estimate, bound = sequence(costs, n, overhead)
        parts.append(f"{duration(estimate)} ({duration(bound)}) on {n}")
    return ", ".join(parts) + " cores"


def main(argv: list[str]) -> None:
    overhead = ray_overhead()
    print(
        f"Ray's overhead per game: {overhead * 1000:.1f} ms (bench/results/ray_overhead.txt); "
        "wall time with Ray: estimate (bound)"
    )
    if argv:
        pairs: list[tuple[str, Path, Path | None]] = []
        for arg in argv:
            ladder_arg, _, check_arg = arg.partition(",")
            pairs.append((Path(ladder_arg).name, Path(ladder_arg), Path(check_arg) if check_arg else None))
    else:
        pairs = [(label, ladder, check) for label, ladder, check in MEASURED]
    for label, ladder, check in pairs:
        print("\n".join(report(label, ladder, check, overhead)))


if __name__ == "__main__":
    main(sys.argv[1:])
