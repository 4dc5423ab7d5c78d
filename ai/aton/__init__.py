"""The bots' knowledge of Aton: evaluator, guided rollouts, greedy baseline."""

from ai.aton.greedy import AtonGreedy
from ai.aton.knowledge import AtonKnowledge

__all__ = ["AtonGreedy", "AtonKnowledge"]
