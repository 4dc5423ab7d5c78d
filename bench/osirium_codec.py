"""Osirium state codec: version 2 text against version 1 JSON, in the same process.

Positions: random playouts of 2-4 players (seeded), cut at random depths. Prints the median
text length and, for encode and decode, the median of ``--runs`` timings per state and the
ratio of version 1's time to version 2's (above 1: version 2 is faster). ``--service`` adds
the service's ``ApplyAction`` handler, called in-process on 4-player positions, with the
token's state cached (the server issued it) and not (another replica did), the server
writing version 1 (``previous_state_versions``) or version 2.

    .venv/bin/python bench/osirium_codec.py [--runs 7] [--positions 60] [--service]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
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


def service_rows(states: list[OsiriumState], runs: int, reps: int) -> None:
    """ApplyAction in-process: version 1 against version 2 tokens, cache hit and miss."""
    import os
    import tempfile

    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="heka-bench-"))
    from service.config import Config
    from service.envelope import KeyRing
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.servicer import GameService

    keys = KeyRing.ephemeral_ring()
    playing = [s for s in states if s.num_players == 4 and not s.is_terminal()]
    ctx: Any = None  # ApplyAction does not use its call context

    def setup(previous: bool, cache: bool) -> tuple[GameService, list[Any]]:
        svc = GameService(Config(previous_state_versions=previous), keys, None)  # type: ignore[arg-type]
        svc.states.size = 1000 if cache else 0
        reqs = [
            pb.ApplyActionRequest(
                state=svc._seal(s.clone()), action_id=s.legal_actions()[0], player=s.current_player()
            )
            for s in playing
        ]
        return svc, reqs

    print(f"ApplyAction handler, {len(playing)} 4-player positions:")
    for cache in (True, False):
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(runs):
            for previous in (True, False):
                svc, reqs = setup(previous, cache)
                times[previous] += per_item_us(partial(svc.ApplyAction, context=ctx), reqs, 1, reps)
        m1, m2 = statistics.median(times[True]), statistics.median(times[False])
        label = "cached state" if cache else "no cache (decode)"
        print(f"  {label}: v1 {m1:.1f} us, v2 {m2:.1f} us per call; v1/v2 = {m1 / m2:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs; medians are shown (default 7)")
    parser.add_argument("--positions", type=int, default=60, help="positions (default 60)")
    parser.add_argument("--reps", type=int, default=20, help="passes over the positions per run (default 20)")
    parser.add_argument("--service", action="store_true", help="also time the service's ApplyAction handler")
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
    if args.service:
        service_rows(states, args.runs, args.reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
