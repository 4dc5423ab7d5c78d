"""The bots' knowledge of Osirium: evaluator, guided rollouts, greedy baseline, root ordering."""

from ai.osirium.greedy import OsiriumGreedy
from ai.osirium.knowledge import OsiriumKnowledge

__all__ = ["OsiriumGreedy", "OsiriumKnowledge"]
