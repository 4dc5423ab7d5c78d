"""Cost per game by level of a ladder's --json file, and the time on 2, 16 and 128 cores.

    python3 bench/ladder_cost.py bench/results/ladder_aton2.json [more.json ...]

A level's cost is the mean of its games' ``seconds`` (every game against an anchor); the time
on N cores is the games' total seconds over N (one game per core at a time, as one Ray task or
one worker process each; Ray's overhead per game: bench/results/ray_overhead.txt).
"""

from __future__ import annotations

import collections
import json
import sys


def main(paths: list[str]) -> None:
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        anchors = set(d.get("anchors", []))
        per: dict[str, list[float]] = collections.defaultdict(list)
        total = 0.0
        for g in d["games"]:
            total += g["seconds"]
            others = set(g["seats"]) - anchors
            per[next(iter(others)) if others else "(the anchors' pairs)"].append(g["seconds"])
        print(
            f"{path}: {len(d['games'])} games, {total:.0f} s of games, "
            f"wall {d['seconds']:.0f} s on {d['workers']} workers"
        )
        for name, secs in sorted(per.items(), key=lambda kv: sum(kv[1]) / len(kv[1])):
            print(f"  {name:40s} {len(secs):5d} games  {sum(secs) / len(secs):7.2f} s/game")
        for n in (2, 16, 128):
            print(f"  on {n:3d} cores: {total / n / 3600:6.2f} h")


if __name__ == "__main__":
    main(sys.argv[1:])
