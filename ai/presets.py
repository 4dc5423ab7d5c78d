"""Difficulty presets of the MCTS bot: ``mcts:easy``, ``mcts:medium`` (the default),
``mcts:hard``.

Each preset is an iteration budget with a millisecond cap, so that a preset is both
reproducible (the iteration budget decides on a fast machine: same seed, same move) and
bounded in time on a slow or loaded one (the cap then ends the search early). Measured
speed and strength are in ``docs/bots.md``.
"""

from __future__ import annotations

from ai.bot import Budget

# With the compiled build (2.2-2.8x the iterations per second of pure Python, docs/bots.md):
# easy and medium keep their iteration budgets, so their measured strength and decisions stay
# and they answer 2-2.8x sooner; hard keeps its time per move (about 0.6 s) and searches 2.5x
# more: 4,000 -> 10,000 iterations (measured against the old hard at equal time: docs/bots.md).
PRESETS: dict[str, Budget] = {
    "easy": Budget(iterations=200, milliseconds=500.0),
    "medium": Budget(iterations=1000, milliseconds=2000.0),
    "hard": Budget(iterations=10_000, milliseconds=8000.0),
}

DEFAULT = "medium"
