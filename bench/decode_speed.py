"""The cost of decoding a state text, with and without the validation, and of reading its
generator: the per-call work of every call that misses the state cache.

Usage::

    .venv/bin/python bench/decode_speed.py            # the build this install runs
    HEKA_PURE_PYTHON=1 .venv/bin/python bench/decode_speed.py

20 states per game from seeded random games (5-40 actions in), medians of 5 rounds of 200
passes, microseconds of CPU per state. A benchmark: it prints figures and asserts nothing.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import build, get_game
from engine.rng import rng_from_text


def states(name: str, players: int) -> list[str]:
    game, rng, out = get_game(name), random.Random(1), []
    for seed in range(20):
        s = game.new_initial_state(players, seed)
        for _ in range(rng.randrange(5, 40)):
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        out.append(game.serialize_state(s))
    return out


def per_item(f: Callable[[], object], items: int, rounds: int = 5, passes: int = 200) -> float:
    times = []
    for _ in range(rounds):
        c = time.process_time()
        for _ in range(passes):
            f()
        times.append((time.process_time() - c) / passes / items * 1e6)
    return statistics.median(times)


def measure(name: str, players: int) -> tuple[float, float, float]:
    game, texts = get_game(name), states(name, players)
    generators = [t.rsplit("rng=", 1)[1].split(";")[0] for t in texts]
    checked = per_item(lambda: [game.deserialize_state(t) for t in texts], len(texts))
    unchecked = per_item(lambda: [game.deserialize_state(t, validate=False) for t in texts], len(texts))
    generator = per_item(lambda: [rng_from_text(g) for g in generators], len(texts))
    return checked, unchecked, generator


def main() -> None:
    print(f"build: {build()}   (microseconds of CPU per state, medians of 5 rounds)")
    for name, players in (("aton", 2), ("osirium", 4)):
        checked, unchecked, generator = measure(name, players)
        print(
            f"  {name} {players}p: decode + validate {checked:5.1f}   decode {unchecked:5.1f}   "
            f"generator {generator:4.2f}"
        )


if __name__ == "__main__":
    main()
