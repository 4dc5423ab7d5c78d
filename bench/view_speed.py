"""Views: the cost of ``state.view(p)`` and of ``convert.view_message(state, p)`` (what GetView,
and ApplyAction with ``include_view``, build on every call), for Osirium 4 players and Aton
mid-game positions.

Positions: seeded random playouts cut at random depths (Osirium 4 players: 40-160 actions;
Aton: 20-120 actions), each viewed by every seat and by the public (``None``). Each row is
the median of ``--runs`` timings (CPU time of this process, less sensitive to other jobs on
a shared machine than wall time), in microseconds per call, and the same figure divided by
the time of a trivial loop step measured in the same process (``× baseline``), so that runs
at different commits or loads compare as ratios. ``to_text`` and ``to_dict`` (the view's
texts, rendered on demand) are shown for reference; ``view_message`` includes ``to_text``.

    .venv/bin/python bench/view_speed.py [--runs 7] [--positions 30] [--reps 20]

A benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.core import State
from engine.registry import get_game
from service import convert


def positions(game: str, players: int, count: int, depth: tuple[int, int]) -> list[State]:
    out = []
    for seed in range(count):
        state = get_game(game).new_initial_state(players, seed=seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(*depth)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        out.append(state)
    return out


def baseline_us(loops: int = 300_000) -> float:
    """CPU microseconds of one trivial loop step (build a small list, random.choice from it)."""
    choice = random.Random(1).choice
    t0 = time.process_time()
    for i in range(loops):
        choice([i, i + 1, i + 2])
    return (time.process_time() - t0) / loops * 1e6


Viewed = Callable[[State, int | None], object]


def per_call_us(fn: Viewed, cases: list[tuple[State, int | None]], reps: int) -> float:
    t0 = time.process_time()
    for _ in range(reps):
        for state, viewer in cases:
            fn(state, viewer)
    return (time.process_time() - t0) / (reps * len(cases)) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="timings per row; the median is shown")
    ap.add_argument("--positions", type=int, default=30, help="positions per game")
    ap.add_argument("--reps", type=int, default=20, help="passes over the positions per timing")
    args = ap.parse_args()

    games = (
        ("osirium 4p", positions("osirium", 4, args.positions, (40, 160)), 4),
        ("aton", positions("aton", 2, args.positions, (20, 120)), 2),
    )
    base = statistics.median(baseline_us() for _ in range(args.runs))
    print(f"baseline trivial loop step: {base:.4f} us (median of {args.runs})")
    rows: tuple[tuple[str, Viewed], ...] = (
        ("state.view(p)", lambda s, p: s.view(p)),
        ("view(p).to_text()", lambda s, p: s.view(p).to_text()),
        ("view(p).to_dict()", lambda s, p: s.view(p).to_dict()),
        ("convert.view_message", convert.view_message),
    )
    for label, states, players in games:
        cases = [(s, p) for s in states for p in (*range(players), None)]
        for name, fn in rows:
            us = statistics.median(per_call_us(fn, cases, args.reps) for _ in range(args.runs))
            print(f"{label:<11} {name:<22} {us:9.2f} us/call  {us / base:8.1f} × baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
