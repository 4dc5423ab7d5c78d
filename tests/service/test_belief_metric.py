"""A search's belief fallbacks (docs/search.md "Opt-in", ``MctsParams.belief``) are counted
by ``heka_belief_fallbacks_total`` with the closed ``game`` and ``bot`` labels."""

from __future__ import annotations

from prometheus_client import REGISTRY

from service import metrics


def test_belief_fallbacks_are_counted_per_game_and_bot() -> None:
    labels = {"game": "osirium", "bot": "mcts:medium"}
    before = REGISTRY.get_sample_value("heka_belief_fallbacks_total", labels) or 0.0
    metrics.record_search("osirium", "mcts:medium", 100, 0.01, belief_fallbacks=3)
    metrics.record_search("osirium", "mcts:medium", 100, 0.01)  # none: nothing added
    assert REGISTRY.get_sample_value("heka_belief_fallbacks_total", labels) == before + 3
    # A label value outside its set is counted as "other", never as a new series.
    metrics.record_search("osirium", "made-up bot", 1, 0.01, belief_fallbacks=1)
    made_up = {"game": "osirium", "bot": "made-up bot"}
    assert REGISTRY.get_sample_value("heka_belief_fallbacks_total", made_up) is None
