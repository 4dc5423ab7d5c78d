"""Belief-weighted determinisation (``MctsParams.belief``, docs/search.md "Opt-in"): Osirium's
model of the other seats' secret exaltations (O2.4) from their public record (O1.5). It
reads the view only, is seeded, its weights are positive, and unusable weights fall back to
the uniform worlds with a count, never an error."""

from __future__ import annotations

import math
import random

import pytest
from ai_positions import random_positions

from ai.knowledge import GameKnowledge, weighted_index
from ai.mcts import MctsBot, Search
from ai.mcts_params import MAX_BELIEF, Limits, MctsParams, parse_params
from ai.osirium.knowledge import ExaltationBelief
from engine import get_game
from engine.core import State
from engine.osirium import OsiriumState
from engine.osirium.cards import EXALTATIONS
from engine.osirium.state import OVER


def new(players: int, seed: int) -> State:
    return get_game("osirium").new_initial_state(players, seed)


def recorded_positions(count: int, seed: int, players: int) -> list[OsiriumState]:
    """Positions where another seat than the one to act has a public record (completed
    rituals or broken amulets), so that the weights are not all equal."""
    out: list[OsiriumState] = []
    for s in random_positions(lambda g: new(players, g), 6 * count, seed, 200, 700):
        assert isinstance(s, OsiriumState)
        p = s.current_player()
        if any(s.completed[q] or s.broken[q] for q in range(players) if q != p):
            out.append(s)
    assert len(out) >= count
    return out[:count]


def hidden_twin(s: OsiriumState, seed: int) -> OsiriumState:
    """A state with the same view for the seat to act and other hidden parts: other
    exaltations, hands, face-down rituals and chance."""
    p = s.current_player()
    other = s.sample_consistent_state(p, random.Random(seed))
    assert other.view(p) == s.view(p) and other.serialize() != s.serialize()
    return other


def test_the_weights_are_the_public_records_progress() -> None:
    """Each joint assignment weighs the product of exp(strength × progress) of its seats,
    every weight is positive, and the searching seat's own exaltation is never assigned."""
    for s in recorded_positions(4, 3, 3):
        p = s.current_player()
        belief = ExaltationBelief(s, p, 3.0)
        assert belief.seats == [q for q in range(3) if q != p]
        previous = 0.0
        for assignment, running in zip(belief.assignments, belief.cumulative, strict=True):
            assert s.exaltations[p] not in assignment and len(set(assignment)) == len(assignment)
            pairs = zip(belief.seats, assignment, strict=True)
            expected = math.prod(math.exp(3.0 * s.exaltation_progress_of(q, x)) for q, x in pairs)
            assert running - previous == pytest.approx(expected) and expected > 0
            previous = running
        assert len(belief.assignments) == 9 * 8  # 9 exaltations left for 2 seats


def test_the_belief_reads_the_view_only() -> None:
    """Two states with the same view for the searching seat give the same model and, in a
    search with belief, the same decision and statistics for the same seed."""
    for s in recorded_positions(4, 5, 2) + recorded_positions(3, 6, 3):
        p = s.current_player()
        other = hidden_twin(s, 17)
        a, b = ExaltationBelief(s, p, 4.0), ExaltationBelief(other, p, 4.0)
        assert (a.seats, a.assignments, a.cumulative) == (b.seats, b.assignments, b.cumulative)
        bot = MctsBot(MctsParams(iterations=80, belief=4.0))
        da, db = bot.choose(s, seed=5), bot.choose(other, seed=5)
        assert da.action == db.action and da.diagnostics.actions == db.diagnostics.actions


def test_a_strong_belief_draws_the_exaltation_the_record_meets() -> None:
    """A seat whose record already meets one exaltation (progress 1) and few others is drawn
    with it far more often than the uniform 1 in 9."""
    checked = 0
    for s in recorded_positions(30, 7, 2):
        p = s.current_player()
        q = 1 - p
        others = [x for x in range(len(EXALTATIONS)) if x != s.exaltations[p]]
        met = [x for x in others if s.exaltation_progress_of(q, x) >= 1]
        if len(met) != 1:
            continue
        belief = ExaltationBelief(s, p, 6.0)
        rng = random.Random(1)
        world = s.sample_consistent_state(p, rng)
        draws = []
        for _ in range(400):
            belief.resample(world, rng)
            draws.append(world.exaltations[q])
        assert draws.count(met[0]) / len(draws) > 0.3
        checked += 1
    assert checked >= 2


def test_belief_is_seeded_and_reproducible() -> None:
    for s in recorded_positions(3, 9, 2):
        bot = MctsBot(MctsParams(iterations=150, early_stop=False, belief=2.0))
        a, b = bot.choose(s, seed=8), bot.choose(s, seed=8)
        assert a.action == b.action and a.diagnostics.actions == b.diagnostics.actions


def test_unusable_weights_fall_back_to_the_uniform_world_with_a_count() -> None:
    """All-zero weights (an observation the model finds impossible) leave the engine's
    uniform world as it is and count it, in the model and in the bot's diagnostics."""
    s = recorded_positions(1, 11, 2)[0]
    p = s.current_player()
    belief = ExaltationBelief(s, p, 1.0)
    belief.cumulative = [0.0] * len(belief.cumulative)
    world = s.sample_consistent_state(p, random.Random(2))
    before = world.serialize()
    belief.resample(world, random.Random(3))
    assert world.serialize() == before and belief.fallbacks == 1

    class Impossible(GameKnowledge[OsiriumState]):  # the default knowledge, a broken model
        def belief(self, state: OsiriumState, player: int, strength: float) -> ExaltationBelief:
            b = ExaltationBelief(state, player, strength)
            b.cumulative = [0.0] * len(b.cumulative)
            return b

    search = Search(s, p, MctsParams(iterations=60, belief=1.0), seed=4, knowledge=Impossible())  # type: ignore[arg-type]
    result = search.run(Limits(iterations=60))
    assert result.belief_fallbacks == result.iterations == 60


def test_no_belief_past_the_end_or_without_hidden_exaltations() -> None:
    """At the end every exaltation is revealed (O8.2): nothing is redrawn."""
    s = new(2, 4)
    rng = random.Random(4)
    while not s.is_terminal():
        s.apply(rng.choice(s.legal_actions()))
    assert isinstance(s, OsiriumState) and s.phase is OVER
    belief = ExaltationBelief(s, 0, 5.0)
    assert belief.seats == []
    world = s.sample_consistent_state(0, random.Random(1))
    before = world.serialize()
    belief.resample(world, random.Random(2))
    assert world.serialize() == before and belief.fallbacks == 0


def test_belief_spec_bounds_and_other_games() -> None:
    assert parse_params("medium,belief=2")[1].belief == 2.0
    assert parse_params("medium,belief=off")[1].belief == 0.0
    for bad in ("-1", "nan", "inf", str(MAX_BELIEF + 1)):
        with pytest.raises(ValueError, match="belief"):
            parse_params(f"medium,belief={bad}")
    # Aton has no model: the same decision with or without belief.
    aton = get_game("aton").new_initial_state(2, 1)
    a = MctsBot(MctsParams(iterations=60, belief=3.0)).choose(aton, seed=1)
    b = MctsBot(MctsParams(iterations=60)).choose(aton, seed=1)
    assert a.action == b.action and a.diagnostics.actions == b.diagnostics.actions


def test_weighted_index_follows_the_weights() -> None:
    rng = random.Random(5)
    cumulative = [1.0, 1.0, 4.0]  # weights 1, 0, 3
    counts = [0, 0, 0]
    for _ in range(4000):
        counts[weighted_index(cumulative, rng)] += 1
    assert counts[1] == 0 and 0.2 < counts[0] / 4000 < 0.3 and 0.7 < counts[2] / 4000 < 0.8
