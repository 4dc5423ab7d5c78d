"""Aton engine speed: complete random games per second and actions per second.

Usage::

    .venv/bin/python bench/aton_speed.py [--games 300] [--runs 5] [--seed 0] [--profile]

Each run plays ``--games`` complete random games on one process (``legal_actions()``,
``random.choice`` and the fast-path ``apply()``, all included); the figures printed are the
median of ``--runs`` runs. To compare machines, the same process also times a trivial
baseline loop (``random.choice`` over a fixed list plus one list update per step) and prints
the ratio "Aton actions per baseline step"; actions per CPU-second are less sensitive to other
processes on a busy machine than the wall-clock figures. ``--profile`` prints a cProfile of one run.
Benchmarks assert nothing: they print figures.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.aton import GAME


def play(games: int, seed: int) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, actions and rounds for ``games`` random games."""
    rng = random.Random(seed)
    choice = rng.choice
    actions = 0
    rounds = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    for g in range(games):
        s = GAME.new_initial_state(seed=seed * 1_000_003 + g)
        while not s.is_terminal():
            s.apply(choice(s.legal_actions()))
            actions += 1
        rounds += s.round
    return time.perf_counter() - t0, time.process_time() - c0, actions, rounds


def baseline(steps: int, seed: int) -> float:
    """Seconds for ``steps`` steps of a trivial random walk over a fixed list."""
    rng = random.Random(seed)
    choice = rng.choice
    moves = list(range(-3, 4))
    pos = [0] * 64
    i = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        i = (i + choice(moves)) & 63
        pos[i] += 1
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(play, args.games, args.seed)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return 0
    play(max(10, args.games // 10), args.seed + 999)  # warm-up
    games_s, actions_s, cpu_s, base_s, per_game, per_round = [], [], [], [], [], []
    for r in range(args.runs):
        secs, cpu, actions, rounds = play(args.games, args.seed + r)
        games_s.append(args.games / secs)
        actions_s.append(actions / secs)
        cpu_s.append(actions / cpu)
        per_game.append(actions / args.games)
        per_round.append(rounds / args.games)
        base_s.append(actions / baseline(actions, args.seed + r))
    aps = statistics.median(actions_s)
    bps = statistics.median(base_s)
    py = sys.version.split()[0]
    print(f"aton random games, {args.games} games x {args.runs} runs (median), Python {py}")
    print(f"  games/s           {statistics.median(games_s):12,.1f}")
    print(f"  actions/s         {aps:12,.0f}   (runs: {', '.join(f'{a:,.0f}' for a in actions_s)})")
    print(f"  actions/CPU-s     {statistics.median(cpu_s):12,.0f}   (per second of this process's CPU time)")
    print(
        f"  actions/game      {statistics.mean(per_game):12,.1f}   "
        f"rounds/game {statistics.mean(per_round):.1f}"
    )
    print(f"  baseline steps/s  {bps:12,.0f}   (random.choice over a fixed list + one list update)")
    print(f"  ratio             {aps / bps:12.3f}   Aton actions per baseline step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
