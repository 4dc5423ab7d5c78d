"""Aton's greedy baseline: rules of thumb for one decision, from the player's view only.

:class:`AtonGreedy` reads only ``state.view(player)`` (A10.4) and values squares by rules of
thumb (see :func:`square_value`): blue, grey and bonus squares, contested temple majorities
and the grey majority, progress towards (and blocking of) the instant wins of A6.4, and a
preference for higher temples (safer from removal, A6.1).

- *exchange* (A3.2): exchange when the best arrangement of the hand is worth clearly less
  than that of a typical hand drawn from the cards left in the deck (both estimated with the
  arrangement score below, the deck's composition being known to its owner).
- *arrange* (A3.3): score every distinct arrangement: cartouche 1 by the expected points
  (A4.1) against the opponent's possible cards, with the chance of reaching 40 (A4.2) for
  either side; cartouche 3 × cartouche 4 by the value of the best squares the placements can
  reach in temples 1..c3 (A6.1, A6.3); cartouche 2 by the removals it brings (A6.2; none in
  round 1) plus a little tempo for a low card (acting first, A5.1).
- *place*: if the remaining placements can complete a temple, the yellow or the green squares
  (A6.4), do it; otherwise the most valuable empty square.
- *remove*: the opponent's most valuable counter (contested majorities, blocking their
  instant wins); for your own counter (cartouche 2 = 1) or a reset (A8.4) the least valuable.

The board, the action ids and the rules' numbers come from :mod:`engine.aton`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from ai.knowledge import best_action
from engine.aton import board as aton
from engine.aton.board import (
    ARRANGE_BASE,
    ARRANGE_BY_HAND,
    ARRANGEMENTS,
    EXCHANGE,
    KEEP,
    PLACE_BASE,
    REMOVE_BASE,
    RESET_BASE,
    hand_key,
)
from engine.aton.flow import Phase
from engine.aton.state import AtonState
from engine.aton.view import AtonView

Arrangement = tuple[int, int, int, int]


def _contest(d: int) -> float:
    """Weight of one more counter in a majority contest where the player leads by ``d``."""
    return {-2: 0.35, -1: 0.6, 0: 1.0, 1: 0.6, 2: 0.3}.get(d, 0.15 if d < 0 else 0.1)


#: Bonus for holding a square of a set that would then miss k squares to an instant win.
_PROGRESS: Final = {0: 10.0, 1: 6.0, 2: 4.0, 3: 3.0, 4: 2.0, 5: 1.2, 6: 0.8}
#: Bonus for the first counter in a set the opponent misses k squares of.
_BLOCK: Final = {1: 12.0, 2: 9.0, 3: 6.0, 4: 4.0, 5: 2.5, 6: 1.5}


def square_value(board: Sequence[int], player: int, square: int) -> float:
    """How much ``player`` gains by holding ``square`` (treated as empty), in rough points.

    Rules of thumb: every counter counts; blue (temple-4 scoring, A8.2), grey (the grey
    majority) and bonus squares (their printed value each scoring round) are worth more; a
    counter in a temple whose majority is contested is worth a share of that temple's
    scoring line (A8.2); progress towards a whole temple / all yellow / all green where the
    opponent has nothing (A6.4), and blocking the opponent's progress there, are worth more;
    higher temples are harder to remove from (A6.1).
    """
    opp = 1 - player
    t = square // aton.SLOTS
    kind = aton.KINDS[square]
    value = 1.0 + 0.1 * t
    # Temple majority (A8.2): line values as seen from here.
    lo = aton.SLOTS * t
    mine = sum(1 for i in range(lo, lo + aton.SLOTS) if board[i] == player and i != square)
    theirs = sum(1 for i in range(lo, lo + aton.SLOTS) if board[i] == opp and i != square)
    if t == 0:
        line = max(2.0, abs(mine - theirs) + 1.0)
    elif t == 1:
        line = float(aton.TEMPLE_2_POINTS)
    elif t == 2:
        line = max(4.0, mine + 1.0)
    else:
        line = float(aton.BLUE_SQUARE_POINTS * max(1, sum(1 for i in aton.BLUE if board[i] == player)))
    value += 0.5 * line * _contest(mine - theirs)
    if kind == "B":
        value += 1.5
    elif kind == "K":
        gm = sum(1 for i in aton.GREY if board[i] == player and i != square)
        go = sum(1 for i in aton.GREY if board[i] == opp and i != square)
        value += 0.4 + 0.5 * aton.GREY_MAJORITY_POINTS * _contest(gm - go)
    elif kind in "12":
        value += 1.5 * int(kind)
    # Instant wins (A6.4): own progress where the opponent is absent, and blocking theirs
    # (a set the opponent holds all but a few squares of, with none of ours in it).
    for group in aton.INSTANT_WIN_SETS:
        if square not in group:
            continue
        size = len(group)
        mine = sum(1 for i in group if board[i] == player and i != square)
        theirs = sum(1 for i in group if board[i] == opp and i != square)
        if theirs == 0 and mine >= size // 2:
            value += _PROGRESS.get(size - mine - 1, 0.3)
        if mine == 0:
            value += _BLOCK.get(size - theirs, 0.0)
    return value


class AtonGreedy:
    """Aton rules of thumb (module docstring); reads ``state.view(player)`` only."""

    #: Exchange when a fresh hand is expected to be worth this much more (in rough points).
    EXCHANGE_MARGIN = 2.0
    #: Hands sampled to estimate a fresh hand's worth.
    EXCHANGE_SAMPLES = 24

    def choose(self, state: AtonState, rng: random.Random) -> int:
        player = state.current_player()
        view = state.view(player)
        legal = state.legal_actions()
        decision = view.decision
        board = view.board
        if decision == Phase.PLACE:
            return self._place(view, player, legal, rng)
        if decision == Phase.REMOVE:
            if view.removal_target == player:  # cartouche 2 = 1: give up the least valuable
                return best_action(legal, lambda a: -square_value(board, player, a - REMOVE_BASE), rng)
            return best_action(legal, lambda a: square_value(board, 1 - player, a - REMOVE_BASE), rng)
        if decision == Phase.RESET:
            return best_action(legal, lambda a: -square_value(board, player, a - RESET_BASE), rng)
        if decision == Phase.ARRANGE:
            ctx = ArrangeContext(view, player)
            return best_action(legal, lambda a: ctx.score(ARRANGEMENTS[a - ARRANGE_BASE]), rng)
        if decision == Phase.EXCHANGE:
            return EXCHANGE if self._should_exchange(view, player, rng) else KEEP
        return rng.choice(legal)

    def _place(self, view: AtonView, player: int, legal: list[int], rng: random.Random) -> int:
        board = view.board
        allowed = aton.allowed_squares(view.cartouches[player][2])
        remaining = view.remaining
        # A6.4: complete a temple / yellow / green with the placements left, if possible.
        # A set already complete during this placement step wins when the step ends: any
        # square will do then.
        plans = []
        for group in aton.INSTANT_WIN_SETS:
            missing = [i for i in group if board[i] != player]
            if len(missing) <= remaining and all(board[i] < 0 and i in allowed for i in missing):
                plans.append(missing)
        if plans and all(plans):
            plan = min(plans, key=len)
            return best_action(
                [PLACE_BASE + i for i in plan], lambda a: square_value(board, player, a - PLACE_BASE), rng
            )
        return best_action(legal, lambda a: square_value(board, player, a - PLACE_BASE), rng)

    def _should_exchange(self, view: AtonView, player: int, rng: random.Random) -> bool:
        hand = list(view.hand)
        ctx = ArrangeContext(view, player)
        current = ctx.best_hand_score(hand)
        # My deck's composition: 36 cards minus discards and hand (A10.1 + own hand).
        deck: list[int] = []
        for v in range(1, 5):
            deck += [v] * (aton.CARDS_PER_VALUE - view.discards[player][v - 1] - hand.count(v))
        if len(deck) < aton.HAND_SIZE:  # the reshuffle would bring back the discards and this hand
            for v in range(1, 5):
                deck += [v] * view.discards[player][v - 1]
            deck += hand
        total = 0.0
        for _ in range(self.EXCHANGE_SAMPLES):
            total += ctx.best_hand_score(sorted(rng.sample(deck, aton.HAND_SIZE)))
        return total / self.EXCHANGE_SAMPLES > current + self.EXCHANGE_MARGIN


class ArrangeContext:
    """Precomputed square values for scoring arrangements (A3.3) from a view."""

    def __init__(self, view: AtonView, player: int) -> None:
        self.player = player
        opp = 1 - player
        board = view.board
        self.stock = view.stocks[player]
        self.first_round = view.round == 1
        self.score_me = view.scores[player]
        self.score_opp = view.scores[opp]
        # Placement values of empty squares, best first, per cartouche-3 value.
        self.place: list[list[float]] = []
        self.remove_opp: list[list[float]] = []
        self.remove_own: list[list[float]] = []
        for c3 in range(1, 5):
            squares = aton.allowed_squares(c3)
            self.place.append(
                sorted((square_value(board, player, i) for i in squares if board[i] < 0), reverse=True)
            )
            self.remove_opp.append(
                sorted((square_value(board, opp, i) for i in squares if board[i] == opp), reverse=True)
            )
            self.remove_own.append(
                sorted(square_value(board, player, i) for i in squares if board[i] == player)
            )
        # The opponent's possible cartouche-1 cards: their unseen cards (A10.1), or the card
        # itself once revealed.
        revealed = view.cartouches[opp]
        if view.revealed[opp] >= 1 and revealed[0]:
            self.opp_c1 = [revealed[0]]
        else:
            unseen = []
            for v in range(1, 5):
                unseen += [v] * (aton.CARDS_PER_VALUE - view.discards[opp][v - 1])
            self.opp_c1 = unseen or [1, 2, 3, 4]

    def score(self, arrangement: Arrangement) -> float:
        c1, c2, c3, c4 = arrangement
        value = 0.0
        # Cartouche 1 (A4): expected points both ways, and the chance of reaching 40.
        n = len(self.opp_c1)
        for x in self.opp_c1:
            mine = aton.cartouche_1_points(c1, x)
            theirs = aton.cartouche_1_points(x, c1)
            if mine:
                value += mine
                if self.score_me + mine >= aton.WIN_POINTS:
                    value += 100.0
            elif theirs:
                value -= theirs
                if self.score_opp + theirs >= aton.WIN_POINTS:
                    value -= 100.0
        value /= n
        # Cartouche 3 and 4 (A6.1, A6.3): the best squares the placements can reach.
        squares = self.place[c3 - 1]
        k = min(c4, self.stock, len(squares))
        value += sum(squares[:k])
        # Cartouche 2 (A6.2): removals, none in the first round; a little tempo for low cards.
        if not self.first_round:
            count, own = aton.REMOVALS[c2]
            if count and not own:
                value += sum(self.remove_opp[c3 - 1][:count])
            elif count and self.remove_own[c3 - 1]:
                value -= self.remove_own[c3 - 1][0]
        value += 0.25 * (4 - c2)
        return value

    def best_hand_score(self, hand: list[int]) -> float:
        """The best arrangement score of a sorted 4-card hand (its distinct arrangements)."""
        return max(self.score(ARRANGEMENTS[a - ARRANGE_BASE]) for a in ARRANGE_BY_HAND[hand_key(hand)])
