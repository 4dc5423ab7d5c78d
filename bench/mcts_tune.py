"""Head-to-head self-play of two bot specs (commas allowed inside a spec), to choose the
search defaults by measured strength. Seats alternate; ``--procs`` games run in parallel.

    .venv/bin/python bench/mcts_tune.py --game aton --a "mcts:ms=100,cutoff=30" \
        --b "mcts:ms=100,cutoff=end" --games 40 --seed 1

Prints A's wins/draws/losses, its score rate ((W + D/2) / N) with a 95% normal interval.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.api import make_bot
from engine import get_game


def play(job: tuple[str, int, tuple[str, ...], int]) -> tuple[float, ...]:
    game_name, players, seats, seed = job
    state = get_game(game_name).new_initial_state(players, seed)
    bots = [make_bot(s) for s in seats]
    rng = random.Random(seed * 7 + 1)
    while not state.is_terminal():
        p = state.current_player()
        state.apply(bots[p].choose(state, seed=rng.getrandbits(62)).action)
    return state.returns()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--game", default="aton")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--procs", type=int, default=2)
    args = ap.parse_args()
    jobs = []
    for g in range(args.games):
        seat_a = g % args.players
        seats = tuple(args.a if i == seat_a else args.b for i in range(args.players))
        jobs.append((args.game, args.players, seats, args.seed * 100_003 + g // args.players))
    t0 = time.monotonic()
    with multiprocessing.get_context("fork").Pool(args.procs) as pool:
        results = pool.map(play, jobs, chunksize=1)
    w = d = lo = 0
    for job, r in zip(jobs, results, strict=True):
        ra = r[job[2].index(args.a)]
        if ra > 0:
            w += 1
        elif ra < 0:
            lo += 1
        else:
            d += 1
    n = len(results)
    rate = (w + d / 2) / n
    half = 1.96 * math.sqrt(max(rate * (1 - rate), 1e-9) / n)
    print(
        f"{args.game} {args.players}p  A={args.a}  B={args.b}  games={n}  "
        f"A: W{w} D{d} L{lo}  score {rate:.3f} ± {half:.3f}  ({time.monotonic() - t0:.0f} s)"
    )


if __name__ == "__main__":
    main()
