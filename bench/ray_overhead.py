"""Ray's overhead per game against the process pool, in the same run (needs the ray extra).

    .venv/bin/python bench/ray_overhead.py [--games 20] [--runs 3] [--workers 2]

A 2-player Aton arena of fast bots (greedy against random: 2 x --games games) is played
alternately on a WorkerPool of --workers processes and as Ray tasks on a local Ray instance of
--workers CPUs (started once; its start time is printed apart), --runs times each. Prints the
wall time of each run, the medians, and the difference per game. Checks that both give the
same games. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import ray

from ai.arena import ArenaConfig, run_arena
from service.ray_runner import arena_runner


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    bots = ("greedy", "random")
    config = ArenaConfig(game="aton", bots=bots, games=args.games, seed=1, workers=args.workers)
    t = time.perf_counter()
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    print(f"ray.init (local, {args.workers} CPUs): {time.perf_counter() - t:.2f} s")
    runner = arena_runner()
    pool_s: list[float] = []
    ray_s: list[float] = []
    for i in range(args.runs):
        a = run_arena(config)
        b = run_arena(config, runner=runner)
        same = [(r.index, r.winners, r.plies) for r in a.records]
        assert same == [(r.index, r.winners, r.plies) for r in b.records]
        pool_s.append(a.seconds)
        ray_s.append(b.seconds)
        print(f"run {i + 1}: pool {a.seconds:.2f} s, ray {b.seconds:.2f} s ({len(a.records)} games each)")
    n = len(a.records)
    mp, mr = statistics.median(pool_s), statistics.median(ray_s)
    per_game = sum(r.seconds for r in a.records) / n
    print(f"median: pool {mp:.2f} s, ray {mr:.2f} s; mean game {per_game * 1000:.1f} ms of play")
    print(f"ray overhead per game: {(mr - mp) / n * 1000:+.1f} ms (wall, {args.workers} workers)")
    ray.shutdown()


if __name__ == "__main__":
    main()
