"""Difficulty presets of the MCTS bot: ``mcts:easy``, ``mcts:medium`` (the default),
``mcts:hard``, ``mcts:expert``.

Each preset is an iteration budget with a millisecond cap, so that a preset is both
reproducible (the iteration budget decides on a fast machine: same seed, same move) and
bounded in time on a slow or loaded one (the cap then ends the search early). ``expert``
also evaluates with the learned model (:mod:`ai.learned`) instead of the game's heuristic
(:data:`PRESET_EVALUATION`), with its own exploration constant (:data:`PRESET_C`).
Measured speed and strength are in ``docs/bots.md``.
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
    # The learned evaluation at the cut-off costs 7-30% more per iteration than the heuristic
    # (compiled; Osirium 2p the most): 8,000 iterations take about hard's time per move
    # (docs/bots.md, "The learned evaluation").
    "expert": Budget(iterations=8000, milliseconds=8000.0),
}

#: The search evaluation of a preset, when not the game's heuristic (``ai.learned``).
PRESET_EVALUATION: dict[str, str] = {"expert": "learned"}

#: The UCB1 exploration constant of a preset, when not the search's default (0.7, tuned with
#: the heuristic). The learned values spread about half as wide as the heuristic's, so the
#: same ``c`` explores about twice as much with them: ``expert`` halves it (measured against
#: ``hard`` at equal time, docs/bots.md, "The learned evaluation").
PRESET_C: dict[str, float] = {"expert": 0.35}

DEFAULT = "medium"
