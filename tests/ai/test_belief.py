"""Belief-weighted determinisation (``MctsParams.belief``, docs/search.md "Opt-in"): Osirium's
model of the other seats' secret exaltations (O2.4) from their public record (O1.5), and
Aton's model of the opponent's committed, unrevealed cartouches (A3.3, A3.4) from how a
player arranges. Each reads the view only, is seeded, its weights are positive, and unusable
weights fall back to the uniform worlds with a count, never an error."""

from __future__ import annotations

import collections
import itertools
import math
import random

import pytest
from ai_positions import random_positions

from ai.aton.greedy import ArrangeContext
from ai.aton.knowledge import ArrangementBelief
from ai.knowledge import GameKnowledge, weighted_index
from ai.mcts import MctsBot, Search
from ai.mcts_params import MAX_BELIEF, Limits, MctsParams, parse_params
from ai.osirium.knowledge import ExaltationBelief
from engine import get_game
from engine.aton import AtonState
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
        assert_same_search(s, other, 4.0)


def assert_same_search(s: State, other: State, strength: float) -> None:
    """A search with belief decides the same, with the same statistics, on both states."""
    bot = MctsBot(MctsParams(iterations=80, belief=strength))
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
    # Before the opponent commits (seat 0 decides first) Aton's model draws nothing: the same
    # decision with or without belief.
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


# --- Aton: the opponent's hidden cartouches --------------------------------------------------


def aton_positions(count: int, seed: int, revealed: int) -> list[AtonState]:
    """Positions where the seat to act faces the opponent's committed cartouches with
    ``revealed`` of them shown (0: arranging second; 2: acting first, A3.4)."""
    rng = random.Random(seed)
    out: list[AtonState] = []
    game = 0
    while len(out) < count:
        s = get_game("aton").new_initial_state(2, seed * 1000 + game)
        assert isinstance(s, AtonState)
        game += 1
        while not s.is_terminal() and len(out) < count:
            p = s.current_player()
            view = s.view(p)
            facing = view.committed[1 - p] and view.revealed[1 - p] == revealed
            if facing and len(s.legal_actions()) > 1 and rng.random() < 0.3:
                out.append(s.clone())
            s.apply(rng.choice(s.legal_actions()))
    return out


def unseen_cards(s: AtonState, o: int) -> list[int]:
    """The opponent's cards the other seat cannot see: deck, hand, unrevealed cartouches."""
    return sorted(s.decks[o] + s.hands[o] + s.cartouches[o][s.revealed[o] :])


def draw_probability(tail: tuple[int, ...], pool: list[int]) -> float:
    left = collections.Counter(pool)
    n, p = len(pool), 1.0
    for v in tail:
        p *= left[v] / n
        left[v] -= 1
        n -= 1
    return p


def test_aton_belief_keeps_the_hands_and_weighs_their_arrangements() -> None:
    """Arranging second, nothing of the opponent's hand is shown: each hand keeps the engine's
    chance (drawn from their unseen cards), and within it an arrangement's weight follows
    exp(strength × the greedy arrangement score); every completion that the cards allow has a
    positive weight."""
    for s in aton_positions(4, 1, revealed=0):
        p = s.current_player()
        o = 1 - p
        pool = unseen_cards(s, o)
        belief = ArrangementBelief(s, p, 1.5)
        assert belief.hidden == [0, 1, 2, 3]
        possible = {t for t in itertools.product(range(1, 5), repeat=4) if draw_probability(t, pool) > 0}
        assert set(belief.outcomes) == possible
        weight = dict(zip(belief.outcomes, belief.weights, strict=True))
        assert all(w > 0 for w in weight.values())
        assert belief.cumulative == list(itertools.accumulate(belief.weights))
        total = belief.cumulative[-1]
        ctx = ArrangeContext(s.view(p), o)  # arranging second: the view when the opponent committed

        def score(t: tuple[int, ...], ctx: ArrangeContext = ctx) -> float:
            a, b, c, d = t
            return ctx.score((a, b, c, d))

        by_hand: dict[tuple[int, ...], list[tuple[int, ...]]] = collections.defaultdict(list)
        for t in possible:
            by_hand[tuple(sorted(t))].append(t)
        for orders in by_hand.values():
            chance = sum(draw_probability(t, pool) for t in orders)  # the engine's, for the hand
            assert sum(weight[t] for t in orders) / total == pytest.approx(chance)
            best = max(orders, key=score)
            worst = min(orders, key=score)
            ratio = weight[best] / weight[worst]
            assert ratio == pytest.approx(math.exp(1.5 * (score(best) - score(worst))))


def test_aton_strong_belief_draws_the_arrangement_the_opponent_would_choose() -> None:
    """At a high strength the redrawn cartouches are, nearly always, the best arrangement of
    their cards by the greedy score; the world stays consistent with the view, and the
    opponent's unseen cards keep their counts."""
    for s in aton_positions(3, 2, revealed=0) + aton_positions(3, 3, revealed=2):
        p = s.current_player()
        o = 1 - p
        belief = ArrangementBelief(s, p, 20.0)
        ctx = ArrangeContext(s.view(p), o) if s.revealed[o] == 0 else None
        rng = random.Random(4)
        best = 0
        for _ in range(100):
            world = s.sample_consistent_state(p, rng)
            belief.resample(world, rng)
            world.validate()
            assert world.view(p) == s.view(p)
            assert unseen_cards(world, o) == unseen_cards(s, o)
            if ctx is not None:
                a, b, c, d = world.cartouches[o]
                top = max(ctx.score((w, x, y, z)) for w, x, y, z in itertools.permutations((a, b, c, d)))
                best += ctx.score((a, b, c, d)) >= top - 1e-9
        if ctx is not None:
            assert best >= 90


def test_aton_belief_reads_the_view_only() -> None:
    """Two states with the same view give the same model and, in a search with belief, the
    same decision and statistics for the same seed."""
    for s in aton_positions(3, 5, revealed=0) + aton_positions(3, 6, revealed=2):
        p = s.current_player()
        other = s.sample_consistent_state(p, random.Random(17))
        assert other.view(p) == s.view(p) and other.serialize() != s.serialize()
        a, b = ArrangementBelief(s, p, 2.0), ArrangementBelief(other, p, 2.0)
        assert (a.hidden, a.outcomes, a.cumulative) == (b.hidden, b.outcomes, b.cumulative)
        assert_same_search(s, other, 2.0)


def test_aton_belief_seeded_falls_back_and_rests_before_commitment() -> None:
    s = aton_positions(1, 7, revealed=2)[0]
    p = s.current_player()
    bot = MctsBot(MctsParams(iterations=120, early_stop=False, belief=2.0))
    a, b = bot.choose(s, seed=8), bot.choose(s, seed=8)
    assert a.action == b.action and a.diagnostics.actions == b.diagnostics.actions
    belief = ArrangementBelief(s, p, 1.0)
    assert belief.hidden == [2, 3]  # cartouches 3 and 4 (A3.4)
    belief.cumulative = [0.0] * len(belief.cumulative)
    world = s.sample_consistent_state(p, random.Random(2))
    before = world.serialize()
    belief.resample(world, random.Random(3))
    assert world.serialize() == before and belief.fallbacks == 1
    # A world whose deck cannot give the drawn cards (the model's counts do not fit it) is
    # left as drawn and counted too, never an error.
    fresh = ArrangementBelief(s, p, 1.0)
    world = s.sample_consistent_state(p, random.Random(2))
    o = 1 - p
    world.decks[o] = []  # only the face-down cards themselves are left to draw from
    cards = sorted(world.cartouches[o][2:])
    for k in range(20):
        fresh.resample(world, random.Random(k))
        assert world.decks[o] == [] and sorted(world.cartouches[o][2:]) == cards
    assert fresh.fallbacks >= 10
    opening = get_game("aton").new_initial_state(2, 3)
    assert isinstance(opening, AtonState)
    assert ArrangementBelief(opening, 0, 1.0).hidden == []
