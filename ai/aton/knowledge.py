"""What the bots know about Aton: the heuristic evaluator, the guided rollout policy and the
defaults measured for them (``bench/mcts_tune.py``, ``docs/search.md``), the greedy
baseline (:mod:`ai.aton.greedy`) and the opt-in model of the opponent's hidden cartouches."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from typing import Final

from ai.aton.greedy import ArrangeContext, AtonGreedy
from ai.knowledge import GameKnowledge, RolloutPolicy, WorldBelief
from engine.aton.board import (
    ARRANGE_BASE,
    ARRANGE_BY_HAND,
    ARRANGEMENTS,
    BONUS,
    GREEN,
    KINDS,
    KINGDOM_SIZE,
    NUM_ACTIONS,
    NUM_SQUARES,
    PLACE_BASE,
    REMOVE_BASE,
    RESET_BASE,
    SLOTS,
    YELLOW,
    arrange_action,
    cartouche_1_points,
    hand_key,
)
from engine.aton.flow import Phase
from engine.aton.state import AtonState, scoring_lines
from engine.aton.view import AtonView

#: Scale of the Aton advantage (in points) mapped through tanh.
SCALE: Final = 12.0
_YELLOW_SQUARES: Final = len(YELLOW)
_GREEN_SQUARES: Final = len(GREEN)


def counters_to_win(
    temples: tuple[tuple[int, int], ...], yellow: tuple[int, int], green: tuple[int, int], p: int
) -> int:
    """The fewest counters seat ``p`` still needs for an instant win (A6.4): a temple, the
    yellow or the green squares where the opponent has none; 99 when none is open."""
    o = 1 - p
    d = 99
    for temple in temples:
        if temple[o] == 0:
            d = min(d, SLOTS - temple[p])
    if yellow[o] == 0:
        d = min(d, _YELLOW_SQUARES - yellow[p])
    if green[o] == 0:
        d = min(d, _GREEN_SQUARES - green[p])
    return d


def evaluate(state: AtonState) -> tuple[float, float]:
    """Aton heuristic (returns for seats 0 and 1, zero-sum, in (-1, 1)).

    The advantage of seat 0, in points, is

    * the score difference;
    * plus the next scoring round as it stands (A8.2), weighted by how full the Kingdom of
      the Dead is (0.4 + 0.6 × fill);
    * plus a threat term per player for the instant wins (A6.4): with ``d`` the fewest
      counters still missing for a temple, the yellow or the green squares (only where the
      opponent has none), ``0.5 × max(0, 8 − d)²``.

    Seat 0's value is ``tanh(advantage / 12)``, seat 1's its negation.
    """
    t = state.tally()
    projected = 0
    for _, p0, p1 in scoring_lines(t):
        projected += p0 - p1
    kingdom = state.kingdom
    fill = (kingdom[0] + kingdom[1]) / KINGDOM_SIZE
    score = state.score
    adv = score[0] - score[1] + (0.4 + 0.6 * fill) * projected
    temples, yellow, green = t.temples, t.yellow, t.green
    for p in (0, 1):
        d = counters_to_win(temples, yellow, green, p)
        if d < 8:
            threat = 0.5 * (8 - d) ** 2
            adv += threat if p == 0 else -threat
    v = math.tanh(adv / SCALE)
    return (v, -v)


def _static_square_values() -> tuple[float, ...]:
    """A square's static worth for rollouts: higher temples, blue, grey and bonus squares."""
    bonus = dict(BONUS)
    out = []
    for sq in range(NUM_SQUARES):
        v = 1.0 + 0.3 * (sq // SLOTS) + 1.5 * bonus.get(sq, 0)
        if KINDS[sq] == "B":
            v += 1.5
        elif KINDS[sq] == "K":
            v += 1.0
        out.append(v)
    return tuple(out)


_SQUARE_VALUE: Final = _static_square_values()
#: Static value of the square of each remove/place action id.
_ACTION_VALUE: Final[tuple[float, ...]] = tuple(
    _SQUARE_VALUE[(a - REMOVE_BASE) % NUM_SQUARES] if REMOVE_BASE <= a < RESET_BASE else 0.0
    for a in range(NUM_ACTIONS)
)


def guided_action(state: AtonState, rng: random.Random) -> int:
    """Light guidance for Aton rollouts: for a placement or a removal of the opponent's
    counter, the better (by a static square value: blue, grey, bonus, higher temples) of
    two random legal squares; for a removal of one's own counter the worse; anything else
    uniformly at random."""
    n = state.num_legal_actions()
    a = state.legal_action_at(int(rng.random() * n))
    if n == 1 or a < REMOVE_BASE or a >= RESET_BASE:
        return a
    b = state.legal_action_at(int(rng.random() * n))
    va = _ACTION_VALUE[a]
    vb = _ACTION_VALUE[b]
    if a < PLACE_BASE and state.removal_target == state.current:  # A6.2, cartouche 2 = 1
        return a if va <= vb else b
    return a if va >= vb else b


class ArrangementBelief(WorldBelief[AtonState]):
    """The opponent's committed cartouches that are not yet revealed (A3.3, A3.4), drawn from a
    model of how they arrange rather than uniformly: among the distinct arrangements of a
    hand, arrangement ``a`` has probability ``exp(strength × score(a))`` over the hand's sum,
    ``score`` being the greedy baseline's arrangement score (:class:`ArrangeContext`) from what
    the opponent saw when committing. The hidden cards themselves keep the engine's prior (drawn
    one by one from the opponent's unseen cards), each completion of the revealed cartouches
    weighted by the model's probability of the whole arrangement against the engine's
    (uniform among the hand's distinct arrangements): a seat that put a 4 on cartouche 1
    holds, likelier, what goes with that. At strength 0 it is the engine's draw.

    Built from the view alone: the unseen cards are counted on a world sampled from the view,
    and the score's context is the view with every cartouche hidden and cartouche 1's points
    taken back (counters placed since, within the round, are not taken back: a model of the
    opponent, not a replay). Nothing is modelled before the opponent commits, nor once all
    four cards are revealed."""

    def __init__(self, state: AtonState, player: int, strength: float) -> None:
        super().__init__()
        o = 1 - player
        view = state.view(player)
        self.opponent = o
        #: The opponent's hidden cartouches (0-based), and each completion of them with its
        #: weight and the weights' running sums.
        self.hidden: list[int] = []
        self.outcomes: list[tuple[int, ...]] = []
        self.weights: list[float] = []
        committed = view.committed[o] and not view.hand_sizes[o]
        if view.decision is Phase.OVER or not committed or view.revealed[o] >= 4:
            return
        r = view.revealed[o]
        known = view.cartouches[o][:r]
        self.hidden = list(range(r, 4))
        public = state.sample_consistent_state(player, random.Random(0))
        unseen = [0] * 5
        for v in public.decks[o] + public.hands[o] + [public.cartouches[o][i] for i in self.hidden]:
            unseen[v] += 1
        ctx = ArrangeContext(_when_committing(view), o)
        policy: dict[int, dict[int, float]] = {}  # hand key -> arrangement id -> probability
        total = 0.0
        for tail in itertools.product(range(1, 5), repeat=len(self.hidden)):
            prior = 1.0
            left = unseen[:]
            n = sum(left)
            for v in tail:
                prior *= left[v] / n
                left[v] -= 1
                n -= 1
            if prior <= 0.0:
                continue
            cards = (*known, *tail)
            key = hand_key(sorted(cards))
            probability = policy.get(key)
            if probability is None:
                probability = policy[key] = _softmax(ctx, ARRANGE_BY_HAND[key], strength)
            # The engine's draw gives each order of a hand the same chance, 1 in its distinct
            # arrangements: the model's probability replaces that (the same draw at strength 0).
            weight = prior * len(probability) * probability[arrange_action(cards)]
            total += weight
            self.outcomes.append(tail)
            self.weights.append(weight)
            self.cumulative.append(total)

    def resample(self, world: AtonState, rng: random.Random) -> None:
        if not self.hidden or world.phase is Phase.OVER:
            return
        k = self.draw(rng)
        if k < 0:
            return
        tail = self.outcomes[k]
        cart = world.cartouches[self.opponent]
        deck = world.decks[self.opponent]
        # The drawn cards come from the deck and the world's hidden cards go back in their
        # places: a uniform position among the deck's cards of a value keeps its order uniform.
        spare = [cart[i] for i in self.hidden]
        needed: list[int] = []
        for v in tail:
            if v in spare:
                spare.remove(v)
            else:
                needed.append(v)
        taken: list[int] = []
        for v in needed:
            places = [k for k, x in enumerate(deck) if x == v and k not in taken]
            if not places:  # a world the model's counts do not fit: keep the engine's draw
                self.fallbacks += 1
                return
            taken.append(places[min(int(rng.random() * len(places)), len(places) - 1)])
        for k, back in zip(taken, spare, strict=True):
            deck[k] = back
        for i, v in zip(self.hidden, tail, strict=True):
            cart[i] = v


def _when_committing(view: AtonView) -> AtonView:
    """``view`` as the seats saw it when they committed their arrangements this round: no
    cartouche revealed, cartouche 1's points (A4.1) not yet scored."""
    scores = list(view.scores)
    if view.revealed[0] and view.revealed[1]:
        c = view.cartouches
        for p in (0, 1):
            scores[p] -= cartouche_1_points(c[p][0], c[1 - p][0])
    hidden = (0, 0, 0, 0)
    before = (scores[0], scores[1])
    return dataclasses.replace(view, cartouches=(hidden, hidden), revealed=(0, 0), scores=before)


def _softmax(ctx: ArrangeContext, arrangements: tuple[int, ...], strength: float) -> dict[int, float]:
    """Each arrangement id's probability, ``exp(strength × score)`` normalised."""
    scores = [ctx.score(ARRANGEMENTS[a - ARRANGE_BASE]) for a in arrangements]
    top = max(scores)
    weights = [math.exp(strength * (x - top)) for x in scores]
    total = sum(weights)
    return {a: w / total for a, w in zip(arrangements, weights, strict=True)}


class AtonKnowledge(GameKnowledge[AtonState]):
    """Aton for the search and the greedy baseline. Defaults measured with
    ``bench/mcts_tune.py`` (``bench/results/notes/2026-11-29-search-defaults.md``): guided
    rollouts, cut-off 20."""

    game: str | None = "aton"
    default_rollout = "guided"

    def __init__(self) -> None:
        self._greedy = AtonGreedy()

    def default_cutoff(self, players: int) -> int:
        return 20

    def evaluate(self, state: AtonState) -> tuple[float, float]:
        return evaluate(state)

    def guided_policy(self) -> RolloutPolicy[AtonState]:
        return guided_action

    def greedy_action(self, state: AtonState, rng: random.Random) -> int:
        return self._greedy.choose(state, rng)

    def belief(self, state: AtonState, player: int, strength: float) -> ArrangementBelief:
        return ArrangementBelief(state, player, strength)
