"""Greedy baseline bots: one-decision heuristics per game, from the acting player's view only.

``make_greedy("")`` (spec ``greedy``) returns a :class:`GreedyBot` that dispatches on the game:

* **Aton** (:class:`AtonGreedy`) reads only ``state.view(player)`` (A10.4) and values squares
  by rules of thumb (see :func:`aton_square_value`): blue, grey and bonus squares, contested
  temple majorities and the grey majority, progress towards (and blocking of) the instant
  wins of A6.4, and a preference for higher temples (safer from removal, A6.1).

  - *exchange* (A3.2): exchange when the best arrangement of the hand is worth clearly less
    than that of a typical hand drawn from the cards left in the deck (both estimated with the
    arrangement score below, the deck's composition being known to its owner).
  - *arrange* (A3.3): score every distinct arrangement: cartouche 1 by the expected points
    (2 × the difference, A4.1) against the opponent's possible cards, with the chance of
    reaching 40 (A4.2) for either side; cartouche 3 × cartouche 4 by the value of the best
    squares the placements can reach in temples 1..c3 (A6.1, A6.3); cartouche 2 by the
    removals it brings (A6.2: 4 → two opponent counters, 3 → one, 1 → one of your own; none in
    round 1) plus a little tempo for a low card (acting first, A5.1).
  - *place*: if the remaining placements can complete a temple, the yellow or the green squares
    (A6.4), do it; otherwise the most valuable empty square.
  - *remove*: the opponent's most valuable counter (contested majorities, blocking their
    instant wins); for your own counter (cartouche 2 = 1) or a reset (A8.4) the least valuable.

* **Osirium** (:class:`OsiriumGreedy`, see its docstring).

* Any other game: an action that wins at once in a sampled world consistent with the player's
  view, else a random one.

Ties between equally scored actions are broken by a ``random.Random(seed)``, so a greedy bot
is deterministic given the seed, and it never reads hidden parts of the state: its choice is
the same in every state that gives its player the same view.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from ai import evaluation
from ai.api import BotSpecError, Budget, Decision, Diagnostics
from engine.core import State

EPS = 1e-9


def _best(actions: Sequence[int], score: Callable[[int], float], rng: random.Random) -> int:
    """The highest-scoring action; ties broken by ``rng``."""
    scored = [(score(a), a) for a in actions]
    top = max(s for s, _ in scored)
    return rng.choice([a for s, a in scored if s >= top - EPS])


# =======================================================================================
# Aton
# =======================================================================================

SLOTS = 12
_KINDS = "YYYYKK1BGGGGYYYYKK1BGGGGYYY1KKKBGGG1YYY2KKKBGGG2"  # A1.6
YELLOW = tuple(i for i, k in enumerate(_KINDS) if k == "Y")
GREEN = tuple(i for i, k in enumerate(_KINDS) if k == "G")
GREY = tuple(i for i, k in enumerate(_KINDS) if k == "K")
BLUE = tuple(i for i, k in enumerate(_KINDS) if k == "B")
TEMPLES = tuple(tuple(range(12 * t, 12 * t + 12)) for t in range(4))
#: The sets whose complete occupation wins at once (A6.4): four temples, yellow, green.
WIN_SETS: tuple[tuple[int, ...], ...] = (*TEMPLES, YELLOW, GREEN)

# Aton action ids (engine/aton/board.py, A11).
A_KEEP, A_EXCHANGE, A_ARRANGE, A_REMOVE, A_PLACE, A_RESET = 0, 1, 2, 258, 306, 354


def _arrangement(action: int) -> tuple[int, int, int, int]:
    k = action - A_ARRANGE
    return (k // 64 + 1, k // 16 % 4 + 1, k // 4 % 4 + 1, k % 4 + 1)


def _contest(d: int) -> float:
    """Weight of one more counter in a majority contest where the player leads by ``d``."""
    return {-2: 0.35, -1: 0.6, 0: 1.0, 1: 0.6, 2: 0.3}.get(d, 0.15 if d < 0 else 0.1)


def aton_square_value(board: Sequence[int], player: int, square: int) -> float:
    """How much ``player`` gains by holding ``square`` (treated as empty), in rough points.

    Rules of thumb: every counter counts; blue (temple-4 scoring, A8.2), grey (the 8-point
    grey majority) and bonus squares (their printed value each scoring round) are worth more;
    a counter in a temple whose majority is contested is worth a share of that temple's
    scoring line (A8.2); progress towards a whole temple / all yellow / all green where the
    opponent has nothing (A6.4), and blocking the opponent's progress there, are worth more;
    higher temples are harder to remove from (A6.1).
    """
    opp = 1 - player
    t = square // SLOTS
    kind = _KINDS[square]
    value = 1.0 + 0.1 * t
    # Temple majority (A8.2): line values as seen from here.
    lo = 12 * t
    mine = sum(1 for i in range(lo, lo + 12) if board[i] == player and i != square)
    theirs = sum(1 for i in range(lo, lo + 12) if board[i] == opp and i != square)
    if t == 0:
        line = max(2.0, abs(mine - theirs) + 1.0)
    elif t == 1:
        line = 5.0
    elif t == 2:
        line = max(4.0, mine + 1.0)
    else:
        line = 3.0 * max(1, sum(1 for i in BLUE if board[i] == player))
    value += 0.5 * line * _contest(mine - theirs)
    if kind == "B":
        value += 1.5
    elif kind == "K":
        gm = sum(1 for i in GREY if board[i] == player and i != square)
        go = sum(1 for i in GREY if board[i] == opp and i != square)
        value += 0.4 + 4.0 * _contest(gm - go)
    elif kind in "12":
        value += 1.5 * int(kind)
    # Instant wins (A6.4): own progress where the opponent is absent, and blocking theirs
    # (a set the opponent holds all but a few squares of, with none of ours in it).
    for group in WIN_SETS:
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


#: Bonus for holding a square of a set that would then miss k squares to an instant win.
_PROGRESS = {0: 10.0, 1: 6.0, 2: 4.0, 3: 3.0, 4: 2.0, 5: 1.2, 6: 0.8}
#: Bonus for the first counter in a set the opponent misses k squares of.
_BLOCK = {1: 12.0, 2: 9.0, 3: 6.0, 4: 4.0, 5: 2.5, 6: 1.5}


class AtonGreedy:
    """Aton rules of thumb (module docstring); reads ``state.view(player)`` only."""

    #: Exchange when a fresh hand is expected to be worth this much more (in rough points).
    EXCHANGE_MARGIN = 2.0
    #: Hands sampled to estimate a fresh hand's worth.
    EXCHANGE_SAMPLES = 24

    def choose(self, state: State, rng: random.Random) -> int:
        player = state.current_player()
        view: Any = state.view(player)
        legal = state.legal_actions()
        decision = view.decision
        board = view.board
        if decision == "place":
            return self._place(view, player, legal, rng)
        if decision == "remove":
            target = view.removal_target
            if target == player:  # cartouche 2 = 1: give up the least valuable counter
                return _best(legal, lambda a: -aton_square_value(board, player, a - A_REMOVE), rng)
            return _best(legal, lambda a: aton_square_value(board, 1 - player, a - A_REMOVE), rng)
        if decision == "reset":
            return _best(legal, lambda a: -aton_square_value(board, player, a - A_RESET), rng)
        if decision == "arrange":
            ctx = _ArrangeContext(view, player)
            return _best(legal, lambda a: ctx.score(_arrangement(a)), rng)
        if decision == "exchange":
            return A_EXCHANGE if self._should_exchange(view, player, rng) else A_KEEP
        return rng.choice(legal)

    def _place(self, view: Any, player: int, legal: list[int], rng: random.Random) -> int:
        board = view.board
        allowed = 12 * view.cartouches[player][2]
        remaining = view.remaining
        # A6.4: complete a temple / yellow / green with the placements left, if possible.
        # A set already complete during this placement step wins when the step ends: any
        # square will do then.
        plans = []
        for group in WIN_SETS:
            missing = [i for i in group if board[i] != player]
            if len(missing) <= remaining and all(board[i] < 0 and i < allowed for i in missing):
                plans.append(missing)
        if plans and all(plans):
            plan = min(plans, key=len)
            return _best(
                [A_PLACE + i for i in plan], lambda a: aton_square_value(board, player, a - A_PLACE), rng
            )
        return _best(legal, lambda a: aton_square_value(board, player, a - A_PLACE), rng)

    def _should_exchange(self, view: Any, player: int, rng: random.Random) -> bool:
        hand = list(view.hand)
        ctx = _ArrangeContext(view, player)
        current = ctx.best_hand_score(hand)
        # My deck's composition: 36 cards minus discards and hand (A10.1 + own hand).
        deck: list[int] = []
        for v in range(1, 5):
            deck += [v] * (9 - view.discards[player][v - 1] - hand.count(v))
        if len(deck) < 4:  # the reshuffle would bring back the discards and this hand
            for v in range(1, 5):
                deck += [v] * view.discards[player][v - 1]
            deck += hand
        total = 0.0
        for _ in range(self.EXCHANGE_SAMPLES):
            total += ctx.best_hand_score(sorted(rng.sample(deck, 4)))
        return total / self.EXCHANGE_SAMPLES > current + self.EXCHANGE_MARGIN


class _ArrangeContext:
    """Precomputed square values for scoring arrangements (A3.3) from a view."""

    def __init__(self, view: Any, player: int) -> None:
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
            squares = range(12 * c3)
            self.place.append(
                sorted((aton_square_value(board, player, i) for i in squares if board[i] < 0), reverse=True)
            )
            self.remove_opp.append(
                sorted((aton_square_value(board, opp, i) for i in squares if board[i] == opp), reverse=True)
            )
            self.remove_own.append(
                sorted(aton_square_value(board, player, i) for i in squares if board[i] == player)
            )
        # The opponent's possible cartouche-1 cards: their unseen cards (A10.1), or the card
        # itself once revealed.
        revealed = view.cartouches[opp]
        if view.revealed[opp] >= 1 and revealed[0]:
            self.opp_c1 = [revealed[0]]
        else:
            unseen = []
            for v in range(1, 5):
                unseen += [v] * (9 - view.discards[opp][v - 1])
            self.opp_c1 = unseen or [1, 2, 3, 4]

    def score(self, arrangement: tuple[int, int, int, int]) -> float:
        c1, c2, c3, c4 = arrangement
        value = 0.0
        # Cartouche 1 (A4): expected points both ways, and the chance of reaching 40.
        n = len(self.opp_c1)
        for x in self.opp_c1:
            if c1 > x:
                pts = 2 * (c1 - x)
                value += pts
                if self.score_me + pts >= 40:
                    value += 100.0
            elif x > c1:
                pts = 2 * (x - c1)
                value -= pts
                if self.score_opp + pts >= 40:
                    value -= 100.0
        value /= n
        # Cartouche 3 and 4 (A6.1, A6.3): the best squares the placements can reach.
        squares = self.place[c3 - 1]
        k = min(c4, self.stock, len(squares))
        value += sum(squares[:k])
        # Cartouche 2 (A6.2): removals, none in the first round; a little tempo for low cards.
        if not self.first_round:
            if c2 >= 3:
                value += sum(self.remove_opp[c3 - 1][: c2 - 2])
            elif c2 == 1 and self.remove_own[c3 - 1]:
                value -= self.remove_own[c3 - 1][0]
        value += 0.25 * (4 - c2)
        return value

    def best_hand_score(self, hand: list[int]) -> float:
        import itertools

        return max(self.score(p) for p in set(itertools.permutations(hand)))  # type: ignore[arg-type]


# =======================================================================================
# Osirium
# =======================================================================================


def _osirium_tables() -> Any:
    from engine.osirium import actions as oa
    from engine.osirium import board as ob
    from engine.osirium import cards as oc

    return oa, ob, oc


class OsiriumGreedy:
    """Osirium rules of thumb, from the acting player's information only (O6.4).

    It reads the public parts of the state (board, market, completed rituals, broken piles,
    face-up rituals of the others) and its own hand, rituals and exaltation — never the other
    hands, the others' face-down rituals or exaltations, or the piles' order.

    * **main step**: cast the most valuable ritual available (O5): the principle worth more
      Ankhs now plus broken amulets (1 Ankh each at the end, O8.2), adjusted for the
      exaltation (Maat wants Order, Storm Chaos, Ascension advanced rituals, Great rite a
      5-amulet ritual); a 5th, game-ending cast (O5.6) only when it leaves this player ahead
      on the public scores (the others' exaltations counted as 2 Ankhs each). Otherwise
      place (O3.1) where the placement completes a set one of its rituals needs, or at least
      links colours its rituals need, avoiding sets that complete an opponent's face-up
      ritual; a Seth or Isis power (O7) when it makes a ritual castable; end the turn when
      nothing is left; pass (O3.5) at the start of a turn when no hand card has a colour its
      rituals need.
    * **draw**: the market card with which one placement would complete a ritual, else a
      market card of a needed colour, else the pile.
    * **break**: amulets of the exaltation's colour (or colours missing for Harmony) first,
      keeping colours its other rituals need, breaking colours the others' face-up rituals need.
    * **refill**: the advanced pile once the board is busy (6+ amulets) or the exaltation
      wants advanced or big rituals, else the simple pile.
    * **full board**: clear the amulet whose loss hurts its own castable sets least.
    """

    def choose(self, state: State, rng: random.Random) -> int:
        ctx = _OsiriumContext(state)
        legal = state.legal_actions()
        decision = state.decision()
        oa = ctx.oa
        if decision == "draw":
            return _best(legal, ctx.draw_value, rng)
        if decision == "break":
            return _best(legal, lambda a: ctx.break_value(a - oa.BREAK), rng)
        if decision == "refill":
            want_adv = ctx.board_count() >= 6 or ctx.exaltation_kind in ("advanced", "ritual_size")
            pick = int(oa.REFILL) + (1 if want_adv else 0)
            return pick if pick in legal else legal[0]
        if decision == "place":  # after a clear (O3.1a)
            return _best(legal, ctx.place_value, rng)
        # Main step.
        casts = [a for a in legal if a >= oa.CAST]
        if casts:
            scored = [(ctx.cast_value(a), a) for a in casts]
            top = max(v for v, _ in scored)
            if top > 0:
                return rng.choice([a for v, a in scored if v >= top - EPS])
        places = [a for a in legal if oa.PLACE <= a < oa.CAST]
        if places:
            if oa.PASS in legal and not ctx.hand_useful():
                return int(oa.PASS)
            return _best(places, ctx.place_value, rng)
        clears = [a for a in legal if oa.CLEAR <= a < oa.ANUBIS]
        if clears:
            return _best(clears, lambda a: ctx.clear_value(a - oa.CLEAR), rng)
        powers = [a for a in legal if oa.SETH <= a < oa.PLACE]
        if powers and len(powers) <= 400:
            scored = [(ctx.power_value(a), a) for a in powers]
            top = max(v for v, _ in scored)
            if top > 0:
                return rng.choice([a for v, a in scored if v >= top - EPS])
        if oa.END in legal:
            return int(oa.END)
        if oa.PASS in legal:
            return int(oa.PASS)
        return rng.choice(legal)

    def order(self, state: State, legal: list[int]) -> list[int]:
        """``legal`` from the most to the least promising by these rules of thumb (the
        search's root ordering for progressive widening, :mod:`ai.mcts`). The action
        :meth:`choose` prefers comes first among equals; ties keep the ids' order, so the
        ordering is deterministic and, like :meth:`choose`, reads only the player's view."""
        if len(legal) <= 1:
            return list(legal)
        ctx = _OsiriumContext(state)
        oa = ctx.oa
        decision = state.decision()
        score: Callable[[int], float]
        if decision == "draw":
            score = ctx.draw_value
        elif decision == "break":
            score = lambda a: ctx.break_value(a - oa.BREAK)  # noqa: E731
        elif decision == "place":
            score = ctx.place_value
        elif decision == "refill":
            want_adv = ctx.board_count() >= 6 or ctx.exaltation_kind in ("advanced", "ritual_size")
            pick = int(oa.REFILL) + (1 if want_adv else 0)
            score = lambda a: 1.0 if a == pick else 0.0  # noqa: E731
        else:
            useful = ctx.hand_useful()
            many_powers = sum(1 for a in legal if oa.SETH <= a < oa.PLACE) > 400

            def score(a: int) -> float:
                # Bands mirror choose(): a worthwhile cast, then placements (or a pass with
                # a useless hand), then clears, then powers that make a ritual castable, then
                # ending the turn, then the rest.
                if a >= oa.CAST:
                    v = ctx.cast_value(a)
                    return 1000.0 + v if v > 0 else -100.0 + v
                if oa.PLACE <= a < oa.CAST:
                    return 500.0 + ctx.place_value(a)
                if a == oa.PASS:
                    return 900.0 if not useful else -50.0
                if oa.CLEAR <= a < oa.ANUBIS:
                    return 400.0 + ctx.clear_value(a - oa.CLEAR)
                if oa.SETH <= a < oa.PLACE and not many_powers:
                    v = ctx.power_value(a)
                    return 300.0 + v if v > 0 else -10.0
                if a == oa.END:
                    return 0.0
                return -20.0

        scored = sorted(((-score(a), i) for i, a in enumerate(legal)))
        return [legal[i] for _, i in scored]


class _OsiriumContext:
    """What the deciding player knows, with quick hypothetical-board evaluations."""

    def __init__(self, state: State) -> None:
        self.oa, self.ob, self.oc = _osirium_tables()
        st: Any = state
        self.st = st
        p = self.player = state.current_player()
        ob, oc = self.ob, self.oc
        self.n = state.num_players
        self.exaltation = oc.EXALTATIONS[st.exaltations[p]]
        self.exaltation_kind = self.exaltation.kind
        self.completed = list(st.completed[p])
        self.broken_colours = [ob.TYPE_COLOUR[t] for t in st.broken[p]]
        # Own rituals (all three slots are known to their owner, O6.2).
        self.my_rituals = [(k, rid) for k, rid in enumerate(st.ritual_slots[p]) if rid >= 0]
        self.my_sigs: dict[int, list[int]] = {}
        self.need = [0, 0, 0, 0]
        for _, rid in self.my_rituals:
            self.my_sigs.setdefault(ob.RITUAL_SIG[rid], []).append(rid)
            req = oc.RITUALS[rid].requirement
            for c in range(4):
                self.need[c] = max(self.need[c], req[c])
        # The others' face-up rituals (slots 0 and 1, O2.3) and the colours they need.
        teams = state.teams()
        self.opp_sigs: dict[int, float] = {}
        self.opp_need = [0, 0, 0, 0]
        for q in range(self.n):
            if q == p or teams[q] == teams[p]:
                continue
            for k, rid in enumerate(st.ritual_slots[q]):
                if rid < 0 or k == oc.HIDDEN_SLOT:
                    continue
                r = oc.RITUALS[rid]
                sig = ob.RITUAL_SIG[rid]
                self.opp_sigs[sig] = max(
                    self.opp_sigs.get(sig, 0.0),
                    float(max(r.order_ankhs + r.order_breaks, r.chaos_ankhs + r.chaos_breaks)),
                )
                for c in range(4):
                    self.opp_need[c] = max(self.opp_need[c], r.requirement[c])

    # --- board helpers --------------------------------------------------------------

    def board_count(self) -> int:
        return int(self.st.occupied).bit_count()

    def _sets(self, links: int, colmask: list[int], must: int) -> list[tuple[int, int]]:
        """(mask, signature) of connected sets containing the cells of ``must``."""
        ob = self.ob
        return [(m, ob.set_signature(m, colmask)) for m in ob.connected_sets(links) if m & must == must]

    def _hypothetical(self, cell: int, t: int, rot: int) -> tuple[int, list[int], list[int]]:
        """Links, colour masks and arrows after putting type ``t`` at ``rot`` on ``cell``."""
        ob = self.ob
        arrows = list(self.st.cell_arrows)
        arrows[cell] = ob.TYPE_ARROWS[t][rot]
        links = (self.st.links & ~ob.CELL_EDGE_MASK[cell]) | ob.cell_links(arrows, cell)
        colmask = list(self.st.colour_cells)
        colmask[ob.TYPE_COLOUR[t]] |= 1 << cell
        return links, colmask, arrows

    def _best_own_cast(self, links: int, colmask: list[int], must: int) -> float:
        best = 0.0
        for m, sig in self._sets(links, colmask, must):
            for rid in self.my_sigs.get(sig, ()):
                best = max(best, self.ritual_value(rid, m.bit_count(), fifth_check=False))
        return best

    def _best_opp_cast(self, links: int, colmask: list[int], must: int) -> float:
        best = 0.0
        for _m, sig in self._sets(links, colmask, must):
            best = max(best, self.opp_sigs.get(sig, 0.0))
        return best

    # --- values ---------------------------------------------------------------------

    def ritual_value(
        self, rid: int, size: int, principle: int | None = None, fifth_check: bool = True
    ) -> float:
        """Ankhs now + amulets broken (O8.2), adjusted for the exaltation (O1.5)."""
        oc = self.oc
        r = oc.RITUALS[rid]
        kind = self.exaltation_kind
        done = self.completed
        best = -1e9
        for pr in (oc.ORDER, oc.CHAOS) if principle is None else (principle,):
            breaks = min(r.breaks(pr), size)
            v = float(r.ankhs(pr) + breaks)
            if kind == "all_order":
                if all(c % 2 == oc.ORDER for c in done):
                    v += 1.5 if pr == oc.ORDER else -2.0
            elif kind == "chaos":
                if sum(1 for c in done if c % 2 == oc.CHAOS) < self.exaltation.amount and pr == oc.CHAOS:
                    v += 1.5
            elif kind in ("broken_colour", "broken_all_colours"):
                v += 0.4 * breaks
            elif kind == "advanced" and r.advanced:
                v += 1.5
            elif kind == "ritual_size" and r.size >= self.exaltation.amount:
                v += 3.0
            v += 0.1 * breaks  # breaking also denies the board to the others
            best = max(best, v)
        return best

    def cast_value(self, action: int) -> float:
        oa, oc = self.oa, self.oc
        sp, m = divmod(action - oa.CAST, oa.MASKS)
        mask = m + 1
        slot, principle = divmod(sp, 2)
        rid = self.st.ritual_slots[self.player][slot]
        value = self.ritual_value(rid, mask.bit_count(), principle)
        if len(self.completed) + 1 >= oc.RITUALS_TO_END:
            # O5.6: this cast ends the game; take it only when it wins on what is known.
            r = oc.RITUALS[rid]
            mine = self._final_estimate(r.ankhs(principle) + min(r.breaks(principle), mask.bit_count()))
            teams = self.st.teams()
            others = [q for q in range(self.n) if teams[q] != teams[self.player]]
            best_other = max((self._public_total(q) + 2 for q in others), default=0)
            if mine <= best_other:
                return -1.0
            value += 20.0
        return value

    def _public_total(self, q: int) -> int:
        return int(self.st.ankhs[q]) + len(self.st.broken[q])

    def _final_estimate(self, gain: int) -> float:
        p = self.player
        total = self._public_total(p) + gain
        if self.exaltation_kind == "last_word":
            total += self.exaltation.ankhs
        return float(total)

    def place_value(self, action: int) -> float:
        oa, ob = self.oa, self.ob
        ot, cell = divmod(action - oa.PLACE, ob.CELLS)
        t, rot = ob.OTYPES[ot]
        return self._placement_value(cell, t, rot)

    def _placement_value(self, cell: int, t: int, rot: int) -> float:
        ob = self.ob
        links, colmask, arrows = self._hypothetical(cell, t, rot)
        bit = 1 << cell
        own = self._best_own_cast(links, colmask, bit)
        value = 10.0 * own
        if own == 0.0:
            value -= 0.6 * self._best_opp_cast(links, colmask, bit)
        # Links towards the colours the rituals need.
        colour = ob.TYPE_COLOUR[t]
        useful = self.need[colour] > 0
        for _b, _o, other, e in ob.CELL_LINKS[cell]:
            if links & e:
                oc_ = ob.TYPE_COLOUR[self.st.cell_type[other]]
                value += 1.0 if useful and self.need[oc_] > 0 else 0.2
            elif self.st.cell_type[other] < 0 and arrows[cell] & _b:
                value += 0.1  # an open arrow: a future link
        if useful:
            value += 0.3
        return value

    def hand_useful(self) -> bool:
        ob = self.ob
        return any(self.need[ob.TYPE_COLOUR[t]] > 0 for t in self.st.hands[self.player])

    def draw_value(self, action: int) -> float:
        oa, ob = self.oa, self.ob
        k = action - oa.DRAW
        if k == len(self.st.market):  # the draw pile: an unknown card
            return 0.6
        t = self.st.market[k]
        best = 0.0
        empties = [c for c in range(ob.CELLS) if not self.st.occupied >> c & 1]
        for cell in empties:
            for rot in ob.CANON_ROTS[t]:
                links, colmask, _ = self._hypothetical(cell, t, rot)
                best = max(best, self._best_own_cast(links, colmask, 1 << cell))
        if best > 0:
            return 5.0 + best
        return 1.0 if self.need[ob.TYPE_COLOUR[t]] > 0 else 0.0

    def break_value(self, cell: int) -> float:
        ob = self.ob
        colour = ob.TYPE_COLOUR[self.st.cell_type[cell]]
        x = self.exaltation
        v = 0.0
        if x.kind == "broken_colour" and x.colour == colour:
            v += 2.0
        if x.kind == "broken_all_colours" and colour not in self.broken_colours:
            v += 2.0
        if self.need[colour] > 0:
            v -= 1.0
        if self.opp_need[colour] > 0:
            v += 0.5
        return v

    def clear_value(self, cell: int) -> float:
        # Keep what is in the sets our rituals could use; drop what the others need.
        ob = self.ob
        colour = ob.TYPE_COLOUR[self.st.cell_type[cell]]
        linked = sum(1 for _b, _o, _other, e in ob.CELL_LINKS[cell] if self.st.links & e)
        return -(2.0 if self.need[colour] else 0.0) - 0.5 * linked + (0.5 if self.opp_need[colour] else 0.0)

    def power_value(self, action: int) -> float:
        """Seth / Isis (O7): worth using when the result makes a ritual castable."""
        oa, ob = self.oa, self.ob
        if oa.SETH <= action < oa.ISIS:
            cell, rot = divmod(action - oa.SETH, 4)
            t = self.st.cell_type[cell]
            links, colmask, _ = self._hypothetical(cell, t, rot)
            return self._best_own_cast(links, colmask, 1 << cell)
        if oa.ISIS <= action < oa.PLACE:
            k, rot = divmod(action - oa.ISIS, 4)
            src, dst = divmod(k, ob.CELLS)
            t = self.st.cell_type[src]
            arrows = list(self.st.cell_arrows)
            arrows[src] = 0
            links = self.st.links & ~ob.CELL_EDGE_MASK[src]
            colmask = list(self.st.colour_cells)
            colmask[ob.TYPE_COLOUR[t]] &= ~(1 << src)
            arrows[dst] = ob.TYPE_ARROWS[t][rot]
            links = (links & ~ob.CELL_EDGE_MASK[dst]) | ob.cell_links(arrows, dst)
            colmask[ob.TYPE_COLOUR[t]] |= 1 << dst
            return self._best_own_cast(links, colmask, 1 << dst)
        return 0.0


# =======================================================================================
# Generic fallback and the bot
# =======================================================================================


def _generic_choice(state: State, rng: random.Random) -> int:
    """Win at once in a world consistent with the player's view if possible, else random."""
    player = state.current_player()
    legal = state.legal_actions()
    world = state.sample_consistent_state(player, rng)
    for a in legal:
        child = world.child(a)
        if child.is_terminal() and child.returns()[player] > 0:
            return a
    return rng.choice(legal)


class GreedyBot:
    """The greedy baseline (see the module docstring)."""

    name = "greedy"

    def __init__(self) -> None:
        self.aton = AtonGreedy()
        self.osirium = OsiriumGreedy()

    def choose(
        self,
        state: State,
        *,
        seed: int = 0,
        budget: Budget | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Decision:
        legal = state.legal_actions()
        if not legal:
            raise ValueError("the game is over: there is no action to choose")
        rng = random.Random(seed)
        if len(legal) == 1:
            return Decision(legal[0], Diagnostics())
        name = state.game.name
        if name == "aton":
            action = self.aton.choose(state, rng)
        elif name == "osirium":
            action = self.osirium.choose(state, rng)
        else:
            action = _generic_choice(state, rng)
        return Decision(action, Diagnostics())


def make_greedy(params: str) -> GreedyBot:
    """Factory for ``ai.api.make_bot``: spec ``greedy`` (no parameters)."""
    if params.strip():
        raise BotSpecError(f"the greedy bot takes no parameters, got {params!r}")
    return GreedyBot()


def _osirium_root_order(state: State, legal: list[int]) -> list[int]:
    return _OSIRIUM_ORDER.order(state, legal)


_OSIRIUM_ORDER = OsiriumGreedy()
evaluation.register_root_order("osirium", _osirium_root_order, default_widen=0.0)
