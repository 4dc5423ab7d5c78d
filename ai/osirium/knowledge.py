"""What the bots know about Osirium: the heuristic evaluator, the guided rollout policy and
the defaults measured for them (``docs/search.md``), the greedy baseline and the root
ordering built on it (:mod:`ai.osirium.greedy`)."""

from __future__ import annotations

import itertools
import math
import random
from typing import Final

from ai.knowledge import GameKnowledge, RolloutPolicy, WorldBelief
from ai.osirium.greedy import OsiriumGreedy
from engine.bits import popcount
from engine.osirium import actions as A
from engine.osirium.board import RITUAL_SIG, links_formed
from engine.osirium.cards import EXALTATIONS, RITUALS
from engine.osirium.state import OVER, OsiriumState

#: Scale of the Osirium advantage (in Ankhs) mapped through tanh.
SCALE: Final = 8.0
#: Placements sampled per rollout placement; the one forming the most links is played.
PLACE_SAMPLES: Final = 4


def evaluate(state: OsiriumState) -> tuple[float, ...]:
    """Osirium heuristic (per-seat returns in (-1, 1)) of a determinised state.

    Each seat's estimate, in Ankhs, is

    * its score so far (ritual Ankhs + 1 per broken amulet, O8.2);
    * plus its exaltation's Ankhs times its progress (full when met, half the fraction
      achieved otherwise, O1.5: :meth:`~engine.osirium.state.OsiriumState.exaltation_progress`);
    * plus, for each ritual on its deity board castable on the board now (O5.1), its Order
      Ankhs times 0.6 for the seat to move, 0.3 for the others (someone may take the set
      first).

    A seat's value is ``tanh((estimate - best other estimate) / 8)``; with teams (O9.3) the
    search averages partners' values.
    """
    n = state.player_count
    sets = state.sets_by_signature() if state.links else {}
    est: list[float] = []
    for p in range(n):
        v = float(state.ankhs[p] + len(state.broken[p]))
        frac = state.exaltation_progress(p)
        ank = EXALTATIONS[state.exaltations[p]].ankhs
        v += ank if frac >= 1.0 else 0.5 * ank * frac
        if sets:
            w = 0.6 if p == state.current else 0.3
            for rid in state.ritual_slots[p]:
                if rid >= 0 and RITUAL_SIG[rid] in sets:
                    v += w * RITUALS[rid].order_ankhs
        est.append(v)
    out = []
    for p in range(n):
        best_other = max(est[q] for q in range(n) if q != p)
        out.append(math.tanh((est[p] - best_other) / SCALE))
    return tuple(out)


def new_links(arrows: list[int], action: int) -> int:
    """How many links (O4.1) the placement ``action`` would form with the amulets around it."""
    cell, piece = A.PLACEMENT_ARROWS[action - A.PLACE]
    return popcount(links_formed(arrows, cell, piece))


def guided_action(state: OsiriumState, rng: random.Random) -> int:
    """Light guidance for Osirium rollouts: when a ritual can be cast (cast ids are the
    highest, O10), cast one (uniformly among the casts) with probability 3/4; when a random
    legal action is a placement, the one forming the most links (O4.1) of
    :data:`PLACE_SAMPLES` random legal placements (ties: the first drawn); otherwise that
    random action."""
    n = state.num_legal_actions()
    casts = state.num_cast_actions()
    if casts and rng.random() < 0.75:
        return state.legal_action_at(n - casts + int(rng.random() * casts))
    a = state.legal_action_at(int(rng.random() * n))
    if not A.PLACE <= a < A.CAST or n == 1:
        return a
    arrows = state.cell_arrows
    best = new_links(arrows, a)
    for _ in range(PLACE_SAMPLES - 1):
        b = state.legal_action_at(int(rng.random() * n))
        if A.PLACE <= b < A.CAST:
            links = new_links(arrows, b)
            if links > best:
                a, best = b, links
    return a


class ExaltationBelief(WorldBelief[OsiriumState]):
    """The other seats' secret exaltations (O2.4) weighted by what their own moves showed: a
    player works toward their exaltation (O1.5), so an exaltation whose condition a seat's
    completed rituals, principles and broken amulets already go far toward is the likelier.
    Each seat's weight for exaltation ``x`` is ``exp(strength × progress)``, with ``progress``
    the part of ``x``'s condition its public record meets; a world's exaltations are drawn
    jointly (distinct, none the searching seat holds or sees) with probability proportional
    to the product of their seats' weights.

    Built from the view and the public record alone: the progress is read on a world sampled
    from the view, whose hidden parts are random."""

    def __init__(self, state: OsiriumState, player: int, strength: float) -> None:
        super().__init__()
        shown = state.view(player).exaltations
        self.seats = [q for q in range(state.player_count) if shown[q] < 0]
        pool = [x for x in range(len(EXALTATIONS)) if x not in shown]
        public = state.sample_consistent_state(player, random.Random(0))
        weight = {
            (q, x): math.exp(strength * public.exaltation_progress_of(q, x)) for q in self.seats for x in pool
        }
        self.assignments: list[tuple[int, ...]] = []
        total = 0.0
        for assignment in itertools.permutations(pool, len(self.seats)):
            w = 1.0
            for q, x in zip(self.seats, assignment, strict=True):
                w *= weight[(q, x)]
            total += w
            self.assignments.append(assignment)
            self.cumulative.append(total)

    def resample(self, world: OsiriumState, rng: random.Random) -> None:
        if not self.seats or world.phase is OVER:
            return
        k = self.draw(rng)
        if k < 0:
            return
        assignment = self.assignments[k]
        for q, x in zip(self.seats, assignment, strict=True):
            world.exaltations[q] = x


class OsiriumKnowledge(GameKnowledge[OsiriumState]):
    """Osirium for the search and the greedy baseline.

    Guided rollouts by default: on the same deals medium beat greedy more often with them
    than with random rollouts, and decided sooner; link-forming rollout placements won more
    again. Cut-off 5 plies per seat: 10 in 2 players (tuned in self-play), 20 in 4, where 10
    plies hardly reach the searching seat's next turn: one medium among three greedy won
    more of the same deals with 20 (``heka arena``, seed 1; the figures:
    ``bench/results/notes/2026-11-29-search-defaults.md``).
    The root ordering is the greedy baseline's (no widening or prior by default).
    """

    game: str | None = "osirium"
    default_rollout = "guided"
    #: Default cut-off per seat (the cut-off grows with the player count).
    CUTOFF_PER_SEAT = 5

    def __init__(self) -> None:
        self._greedy = OsiriumGreedy()

    def default_cutoff(self, players: int) -> int:
        return self.CUTOFF_PER_SEAT * players

    def evaluate(self, state: OsiriumState) -> tuple[float, ...]:
        return evaluate(state)

    def guided_policy(self) -> RolloutPolicy[OsiriumState]:
        return guided_action

    def belief(self, state: OsiriumState, player: int, strength: float) -> ExaltationBelief:
        return ExaltationBelief(state, player, strength)

    def root_order(self, state: OsiriumState, legal: list[int]) -> list[int]:
        return self._greedy.order(state, legal)

    def greedy_action(self, state: OsiriumState, rng: random.Random) -> int:
        return self._greedy.choose(state, rng)
