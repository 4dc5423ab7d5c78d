"""Difficulty presets of the MCTS bot: ``mcts:easy``, ``mcts:medium`` (the default),
``mcts:hard``, ``mcts:expert``.

Each preset is an iteration budget with a millisecond cap, so that a preset is both
reproducible (the iteration budget decides on a fast machine: same seed, same move) and
bounded in time on a slow or loaded one (the cap then ends the search early). ``expert``
also evaluates with the learned model (:mod:`ai.learned`) instead of the game's heuristic
(:data:`PRESET_EVALUATION`), with its own exploration constant (:data:`PRESET_C`).
Their strength and time per move: ``docs/presets.md``; how they were chosen:
``bench/results/notes/2026-12-01-compiled-build.md``.
"""

from __future__ import annotations

from ai.bot import Budget

# The compiled build searches several times the iterations per second of pure Python
# (``bench/builds.py``): easy and medium keep their iteration budgets, so their measured
# strength and decisions stay and they answer sooner; hard keeps its time per move of the pure
# build and searches more (measured against the old hard at equal time: ``heka arena --bots
# "mcts:hard,ms=200;pure:mcts:iterations=4000,ms=200"``,
# bench/results/notes/2026-12-01-compiled-build.md).
PRESETS: dict[str, Budget] = {
    "easy": Budget(iterations=200, milliseconds=500.0),
    "medium": Budget(iterations=1000, milliseconds=2000.0),
    "hard": Budget(iterations=10_000, milliseconds=8000.0),
    # The learned evaluation at the cut-off costs more per iteration than the heuristic, so
    # fewer iterations take about hard's time per move (timed on mid-game positions:
    # bench/results/notes/2026-12-01-learned-evaluation.md).
    "expert": Budget(iterations=8000, milliseconds=8000.0),
}

#: The search evaluation of a preset, when not the game's heuristic (``ai.learned``).
PRESET_EVALUATION: dict[str, str] = {"expert": "learned"}

#: The UCB1 exploration constant of a preset, when not the search's default (0.7, tuned with
#: the heuristic). The learned values spread about half as wide as the heuristic's, so the
#: same ``c`` explores about twice as much with them: ``expert`` halves it (measured against
#: ``hard`` at equal time: bench/results/notes/2026-12-01-expert-tuning.md).
PRESET_C: dict[str, float] = {"expert": 0.35}

DEFAULT = "medium"
