"""heka's bots: information-set MCTS, baselines, arena (stdlib + engine only)."""

import engine  # noqa: F401 - first: it chooses the compiled or the pure-Python modules (engine/_build.py)
from ai.api import ActionStat, Bot, Budget, Decision, Diagnostics, make_bot

__all__ = ["ActionStat", "Bot", "Budget", "Decision", "Diagnostics", "make_bot"]
