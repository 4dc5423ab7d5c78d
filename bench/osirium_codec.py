"""Osirium's state text versions in size and speed, in the same process: the current version (3)
against those the service still writes (2, with ``HEKA_PREVIOUS_STATE_VERSIONS``) and reads (1,
tokens of an earlier release).

Positions: random playouts of 2-4 players (seeded), cut at random depths, on the SplitMix64
generator that every version can write (docs/operations.md, "Upgrades and rollbacks"). Prints
the median text length and, for encode and decode, the median of ``--runs`` timings per state
and each version's time over version 3's (above 1: version 3 is faster). ``--service`` adds the
service's ``ApplyAction`` handler, called in-process on 4-player positions, with the token's
state cached (the server issued it) and not (another replica did), the server writing the
previous versions (``previous_state_versions``) or the current one.

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
from engine.osirium.codec import VERSION, encode, encode_v1
from engine.rng import Rng

#: Each version's writer; the game reads them all.
WRITERS: dict[int, Callable[[OsiriumState], str]] = {
    VERSION: encode,
    2: partial(encode, version=2),
    1: encode_v1,
}


def positions(count: int) -> list[OsiriumState]:
    out = []
    for seed in range(count):
        state = GAME.new_initial_state(2 + seed % 3, seed, rng=Rng(seed))
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
    """ApplyAction in-process: the previous versions' tokens against the current one's, cache hit
    and miss."""
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

    def call(svc: GameService, request: Any) -> object:
        return svc.ApplyAction(request, ctx)

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
                times[previous] += per_item_us(partial(call, svc), reqs, 1, reps)
        m1, m2 = statistics.median(times[True]), statistics.median(times[False])
        label = "cached state" if cache else "no cache (decode)"
        print(
            f"  {label}: previous versions {m1:.1f} us, v{VERSION} {m2:.1f} us per call; "
            f"previous/v{VERSION} = {m1 / m2:.2f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs; medians are shown (default 7)")
    parser.add_argument("--positions", type=int, default=60, help="positions (default 60)")
    parser.add_argument("--reps", type=int, default=20, help="passes over the positions per run (default 20)")
    parser.add_argument("--service", action="store_true", help="also time the service's ApplyAction handler")
    args = parser.parse_args()

    states = positions(args.positions)
    texts = {v: [write(s) for s in states] for v, write in WRITERS.items()}
    for v, written in texts.items():  # every version decodes to the same state
        for state, text in zip(states, written, strict=True):
            same = state.serialize()
            if v != VERSION:  # (earlier versions did not record the move number: it reads as 0)
                same = same.replace(f";mv={state.move_number()}", ";mv=0")
            assert GAME.deserialize_state(text).serialize() == same, (v, text)
    print(f"positions: {len(states)} (2-4 players), runs: {args.runs}")
    lengths = ", ".join(f"v{v} {statistics.median(map(len, t)):.0f}" for v, t in texts.items())
    print(f"text length, median chars: {lengths}")
    for name in ("encode", "decode"):
        # Interleave the versions run by run, so that a change in machine load hits them all.
        times: dict[int, list[float]] = {v: [] for v in WRITERS}
        for _ in range(args.runs):
            for v, write in WRITERS.items():
                if name == "encode":
                    times[v] += per_item_us(write, states, 1, args.reps)
                else:
                    times[v] += per_item_us(GAME.deserialize_state, texts[v], 1, args.reps)
        base = statistics.median(times[VERSION])
        cells = [f"v{v} {statistics.median(t):.1f} us" for v, t in times.items()]
        ratios = [
            f"v{v}/v{VERSION} = {statistics.median(t) / base:.2f}" for v, t in times.items() if v != VERSION
        ]
        print(f"{name}: {', '.join(cells)} per state; {', '.join(ratios)}")
    if args.service:
        service_rows(states, args.runs, args.reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
