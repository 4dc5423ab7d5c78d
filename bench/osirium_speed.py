"""Osirium engine speed: complete random games (legal_actions + random.choice + apply).

Prints games/s and actions/s for 2 and 4 players (median of 5 runs), the speed of a trivial
Python loop measured in the same process (so figures from different machines or loads can be
compared as a ratio), and with ``--profile`` a cProfile summary of where the time goes.

    .venv/bin/python bench/osirium_speed.py [--games 100] [--runs 5] [--profile]

A benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import statistics
import sys
import time
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.osirium import GAME


def play(n: int, games: int, first_seed: int, options: Mapping[str, object]) -> tuple[int, float]:
    """Play ``games`` random games; return (actions, seconds)."""
    actions = 0
    t0 = time.perf_counter()
    for g in range(games):
        seed = first_seed + g
        state = GAME.new_initial_state(n, seed, options)
        rng = random.Random(seed)
        choice = rng.choice
        while not state.is_terminal():
            state.apply(choice(state.legal_actions()))
            actions += 1
    return actions, time.perf_counter() - t0


def baseline(loops: int = 1_000_000) -> float:
    """Iterations per second of a trivial loop (build a small list, random.choice from it)."""
    rng = random.Random(1)
    choice = rng.choice
    t0 = time.perf_counter()
    for i in range(loops):
        choice([i, i + 1, i + 2])
    return loops / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100, help="games per run (default 100)")
    ap.add_argument("--runs", type=int, default=5, help="runs per configuration; the median is shown")
    ap.add_argument("--profile", action="store_true", help="print a cProfile summary (2 and 4 players)")
    args = ap.parse_args()

    base = statistics.median(baseline() for _ in range(args.runs))
    print(f"baseline trivial loop: {base:,.0f} iterations/s (median of {args.runs})")
    for n, options in ((2, {}), (4, {}), (4, {"teams": True})):
        label = f"{n} players" + (" teams" if options else "")
        gps, aps, apg = [], [], []
        for run in range(args.runs):
            acts, secs = play(n, args.games, 1000 * run, options)
            gps.append(args.games / secs)
            aps.append(acts / secs)
            apg.append(acts / args.games)
        a = statistics.median(aps)
        print(
            f"{label:<16} {statistics.median(gps):8.1f} games/s  {a:10,.0f} actions/s  "
            f"({statistics.median(apg):.0f} actions/game; {a / base:.3f} × baseline)"
        )
    if args.profile:
        for n in (2, 4):
            prof = cProfile.Profile()
            prof.enable()
            play(n, max(10, args.games // 4), 77, {})
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(14)
            print(f"\n--- cProfile, {n} players, by own time ---")
            print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:4000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
