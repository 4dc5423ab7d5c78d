"""heka's bots: information-set MCTS, baselines, arena (stdlib + engine only)."""

from ai.api import ActionStat, Bot, Budget, Decision, Diagnostics, make_bot

__all__ = ["ActionStat", "Bot", "Budget", "Decision", "Diagnostics", "make_bot"]
