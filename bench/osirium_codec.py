"""Osirium state codec: version 2 text against version 1 JSON, in the same process.

Positions: random playouts of 2-4 players (seeded), cut at random depths. Prints the median
text length and, for encode and decode, the median of ``--runs`` timings per state and the
ratio of version 1's time to version 2's (above 1: version 2 is faster).

    .venv/bin/python bench/osirium_codec.py [--runs 7] [--positions 60]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.osirium import GAME, OsiriumState
from engine.osirium.codec import encode_v1


def positions(count: int) -> list[OsiriumState]:
    out = []
    for seed in range(count):
        state = GAME.new_initial_state(2 + seed % 3, seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(0, 120)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        out.append(state)
    return out


def per_item_us(fn: Callable[[Any], object], items: list[Any], runs: int, reps: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(reps):
            for item in items:
                fn(item)
        times.append((time.perf_counter() - start) / (reps * len(items)) * 1e6)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs; medians are shown (default 7)")
    parser.add_argument("--positions", type=int, default=60, help="positions (default 60)")
    parser.add_argument("--reps", type=int, default=20, help="passes over the positions per run (default 20)")
    args = parser.parse_args()

    states = positions(args.positions)
    v1 = [encode_v1(s) for s in states]
    v2 = [s.serialize() for s in states]
    for a, b in zip(v1, v2, strict=True):  # both decode to the same state
        assert GAME.deserialize_state(a).serialize() == b
    print(f"positions: {len(states)} (2-4 players), runs: {args.runs}")
    print(
        f"text length, median chars: v1 {statistics.median(map(len, v1)):.0f}, "
        f"v2 {statistics.median(map(len, v2)):.0f}"
    )
    rows = [
        ("encode", (encode_v1, states), (OsiriumState.serialize, states)),
        ("decode", (GAME.deserialize_state, v1), (GAME.deserialize_state, v2)),
    ]
    for name, (f1, x1), (f2, x2) in rows:
        # Interleave the versions run by run, so that a change in machine load hits both.
        t1: list[float] = []
        t2: list[float] = []
        for _ in range(args.runs):
            t1 += per_item_us(f1, x1, 1, args.reps)
            t2 += per_item_us(f2, x2, 1, args.reps)
        m1, m2 = statistics.median(t1), statistics.median(t2)
        print(f"{name}: v1 {m1:.1f} us, v2 {m2:.1f} us per state; v1/v2 = {m1 / m2:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
