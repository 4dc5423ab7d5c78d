"""Osirium's greedy baseline: rules of thumb for one decision, from the player's view only.

:class:`OsiriumGreedy` reads ``state.view(player)`` (O6.4): the public board, market,
completed rituals, broken piles and face-up rituals of the others, and its own hand,
rituals and exaltation — never the other hands, the others' face-down rituals or
exaltations, or the piles' order.

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

Links, connected sets and the action ids come from :mod:`engine.osirium`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final

from ai.knowledge import EPS, best_action
from engine.bits import popcount
from engine.osirium import actions as A
from engine.osirium.board import (
    CANON_ROTS,
    CELL_LINKS,
    CELLS,
    RITUAL_SIG,
    TYPE_ARROWS,
    TYPE_COLOUR,
    board_masks,
    connected_sets,
    placed_links,
    removed_links,
    set_signature,
)
from engine.osirium.cards import (
    CHAOS,
    EXALTATIONS,
    HIDDEN_SLOT,
    ORDER,
    RITUALS,
    RITUALS_TO_END,
    ExaltationKind,
)
from engine.osirium.state import OsiriumState, Phase

#: Above this many Seth/Isis actions the main step does not weigh them one by one.
MAX_POWERS_WEIGHED: Final = 400


class OsiriumGreedy:
    """Osirium rules of thumb (module docstring); reads ``state.view(player)`` only."""

    def choose(self, state: OsiriumState, rng: random.Random) -> int:
        ctx = _Context(state)
        legal = state.legal_actions()
        decision = ctx.decision
        if decision == Phase.DRAW:
            return best_action(legal, ctx.draw_value, rng)
        if decision == Phase.BREAK:
            return best_action(legal, lambda a: ctx.break_value(a - A.BREAK), rng)
        if decision == Phase.REFILL:
            pick = A.REFILL + (1 if ctx.wants_advanced() else 0)
            return pick if pick in legal else legal[0]
        if decision == Phase.PLACE:  # after a clear (O3.1a)
            return best_action(legal, ctx.place_value, rng)
        # Main step.
        casts = [a for a in legal if a >= A.CAST]
        if casts:
            scored = [(ctx.cast_value(a), a) for a in casts]
            top = max(v for v, _ in scored)
            if top > 0:
                return rng.choice([a for v, a in scored if v >= top - EPS])
        places = [a for a in legal if A.PLACE <= a < A.CAST]
        if places:
            if A.PASS in legal and not ctx.hand_useful():
                return A.PASS
            return best_action(places, ctx.place_value, rng)
        clears = [a for a in legal if A.CLEAR <= a < A.ANUBIS]
        if clears:
            return best_action(clears, lambda a: ctx.clear_value(a - A.CLEAR), rng)
        powers = [a for a in legal if A.SETH <= a < A.PLACE]
        if powers and len(powers) <= MAX_POWERS_WEIGHED:
            scored = [(ctx.power_value(a), a) for a in powers]
            top = max(v for v, _ in scored)
            if top > 0:
                return rng.choice([a for v, a in scored if v >= top - EPS])
        if A.END in legal:
            return A.END
        if A.PASS in legal:
            return A.PASS
        return rng.choice(legal)

    def order(self, state: OsiriumState, legal: list[int]) -> list[int]:
        """``legal`` from the most to the least promising by these rules of thumb (the
        search's root ordering for progressive widening, :mod:`ai.mcts`). The action
        :meth:`choose` prefers comes first among equals; ties keep the ids' order, so the
        ordering is deterministic and, like :meth:`choose`, reads only the player's view."""
        if len(legal) <= 1:
            return list(legal)
        ctx = _Context(state)
        decision = ctx.decision
        score: Callable[[int], float]
        if decision == Phase.DRAW:
            score = ctx.draw_value
        elif decision == Phase.BREAK:
            score = lambda a: ctx.break_value(a - A.BREAK)  # noqa: E731
        elif decision == Phase.PLACE:
            score = ctx.place_value
        elif decision == Phase.REFILL:
            pick = A.REFILL + (1 if ctx.wants_advanced() else 0)
            score = lambda a: 1.0 if a == pick else 0.0  # noqa: E731
        else:
            useful = ctx.hand_useful()
            many_powers = sum(1 for a in legal if A.SETH <= a < A.PLACE) > MAX_POWERS_WEIGHED

            def score(a: int) -> float:
                # Bands mirror choose(): a worthwhile cast, then placements (or a pass with
                # a useless hand), then clears, then powers that make a ritual castable, then
                # ending the turn, then the rest.
                if a >= A.CAST:
                    v = ctx.cast_value(a)
                    return 1000.0 + v if v > 0 else -100.0 + v
                if A.PLACE <= a < A.CAST:
                    return 500.0 + ctx.place_value(a)
                if a == A.PASS:
                    return 900.0 if not useful else -50.0
                if A.CLEAR <= a < A.ANUBIS:
                    return 400.0 + ctx.clear_value(a - A.CLEAR)
                if A.SETH <= a < A.PLACE and not many_powers:
                    v = ctx.power_value(a)
                    return 300.0 + v if v > 0 else -10.0
                if a == A.END:
                    return 0.0
                return -20.0

        scored = sorted((-score(a), i) for i, a in enumerate(legal))
        return [legal[i] for _, i in scored]


class _Context:
    """What the deciding player knows (its view, as ids), with quick hypothetical-board
    evaluations."""

    def __init__(self, state: OsiriumState) -> None:
        p = self.player = state.current_player()
        view = state.view(p)
        self.decision = view.decision
        self.n = view.num_players
        self.teams = view.teams
        self.exaltation = EXALTATIONS[view.exaltations[p]]
        self.exaltation_kind = self.exaltation.kind
        self.completed = view.completed[p]
        self.broken_colours = [TYPE_COLOUR[t] for t in view.broken[p]]
        self.hand = view.hand or ()
        self.market = view.market
        self.ritual_slots = view.rituals[p]
        self.public_totals = [view.ritual_ankhs[q] + len(view.broken[q]) for q in range(self.n)]
        # The board, as the engine keeps it.
        self.cell_type = view.cell_types
        self.arrows, self.colour_cells, self.occupied, self.links = board_masks(
            list(view.cell_types), list(view.cell_rotations)
        )
        # Own rituals (all three slots are known to their owner, O6.2).
        self.my_sigs: dict[int, list[int]] = {}
        self.need = [0, 0, 0, 0]
        for rid in self.ritual_slots:
            if rid < 0:
                continue
            self.my_sigs.setdefault(RITUAL_SIG[rid], []).append(rid)
            req = RITUALS[rid].requirement
            for c in range(4):
                self.need[c] = max(self.need[c], req[c])
        # The others' face-up rituals (slots 0 and 1, O2.3) and the colours they need.
        self.opp_sigs: dict[int, float] = {}
        self.opp_need = [0, 0, 0, 0]
        for q in range(self.n):
            if q == p or self.teams[q] == self.teams[p]:
                continue
            for k, rid in enumerate(view.rituals[q]):
                if rid < 0 or k == HIDDEN_SLOT:
                    continue
                r = RITUALS[rid]
                sig = RITUAL_SIG[rid]
                self.opp_sigs[sig] = max(
                    self.opp_sigs.get(sig, 0.0),
                    float(max(r.order_ankhs + r.order_breaks, r.chaos_ankhs + r.chaos_breaks)),
                )
                for c in range(4):
                    self.opp_need[c] = max(self.opp_need[c], r.requirement[c])

    # --- board helpers --------------------------------------------------------------

    def wants_advanced(self) -> bool:
        """Refill from the advanced pile (O5.5): a busy board, or an exaltation that wants
        advanced or big rituals."""
        return popcount(self.occupied) >= 6 or self.exaltation_kind in (
            ExaltationKind.ADVANCED,
            ExaltationKind.RITUAL_SIZE,
        )

    def _sets(self, links: int, colour_cells: list[int], must: int) -> list[tuple[int, int]]:
        """(mask, signature) of connected sets (O4.2) containing the cells of ``must``."""
        return [(m, set_signature(m, colour_cells)) for m in connected_sets(links) if m & must == must]

    def _hypothetical(self, cell: int, t: int, rot: int) -> tuple[int, list[int], list[int]]:
        """Links, colour masks and arrows after putting type ``t`` at ``rot`` on ``cell``."""
        arrows = list(self.arrows)
        arrows[cell] = TYPE_ARROWS[t][rot]
        links = placed_links(arrows, self.links, cell)
        colour_cells = list(self.colour_cells)
        colour_cells[TYPE_COLOUR[t]] |= 1 << cell
        return links, colour_cells, arrows

    def _best_own_cast(self, links: int, colour_cells: list[int], must: int) -> float:
        best = 0.0
        for m, sig in self._sets(links, colour_cells, must):
            for rid in self.my_sigs.get(sig, ()):
                best = max(best, self.ritual_value(rid, popcount(m), fifth_check=False))
        return best

    def _best_opp_cast(self, links: int, colour_cells: list[int], must: int) -> float:
        best = 0.0
        for _m, sig in self._sets(links, colour_cells, must):
            best = max(best, self.opp_sigs.get(sig, 0.0))
        return best

    # --- values ---------------------------------------------------------------------

    def ritual_value(
        self, rid: int, size: int, principle: int | None = None, fifth_check: bool = True
    ) -> float:
        """Ankhs now + amulets broken (O8.2), adjusted for the exaltation (O1.5)."""
        r = RITUALS[rid]
        kind = self.exaltation_kind
        done = self.completed
        best = -1e9
        for pr in (ORDER, CHAOS) if principle is None else (principle,):
            breaks = min(r.breaks(pr), size)
            v = float(r.ankhs(pr) + breaks)
            if kind == ExaltationKind.ALL_ORDER:
                if all(c == ORDER for _, c in done):
                    v += 1.5 if pr == ORDER else -2.0
            elif kind == ExaltationKind.CHAOS:
                if sum(1 for _, c in done if c == CHAOS) < self.exaltation.amount and pr == CHAOS:
                    v += 1.5
            elif kind in (ExaltationKind.BROKEN_COLOUR, ExaltationKind.BROKEN_ALL_COLOURS):
                v += 0.4 * breaks
            elif kind == ExaltationKind.ADVANCED and r.advanced:
                v += 1.5
            elif kind == ExaltationKind.RITUAL_SIZE and r.size >= self.exaltation.amount:
                v += 3.0
            v += 0.1 * breaks  # breaking also denies the board to the others
            best = max(best, v)
        return best

    def cast_value(self, action: int) -> float:
        slot, principle, mask = A.decode_cast(action)
        rid = self.ritual_slots[slot]
        value = self.ritual_value(rid, popcount(mask), principle)
        if len(self.completed) + 1 >= RITUALS_TO_END:
            # O5.6: this cast ends the game; take it only when it wins on what is known.
            r = RITUALS[rid]
            mine = self._final_estimate(r.ankhs(principle) + min(r.breaks(principle), popcount(mask)))
            others = [q for q in range(self.n) if self.teams[q] != self.teams[self.player]]
            best_other = max((self.public_totals[q] + 2 for q in others), default=0)
            if mine <= best_other:
                return -1.0
            value += 20.0
        return value

    def _final_estimate(self, gain: int) -> float:
        total = self.public_totals[self.player] + gain
        if self.exaltation_kind == ExaltationKind.LAST_WORD:
            total += self.exaltation.ankhs
        return float(total)

    def place_value(self, action: int) -> float:
        t, rot, cell = A.decode_place(action)
        return self._placement_value(cell, t, rot)

    def _placement_value(self, cell: int, t: int, rot: int) -> float:
        links, colour_cells, arrows = self._hypothetical(cell, t, rot)
        bit = 1 << cell
        own = self._best_own_cast(links, colour_cells, bit)
        value = 10.0 * own
        if own == 0.0:
            value -= 0.6 * self._best_opp_cast(links, colour_cells, bit)
        # Links towards the colours the rituals need.
        colour = TYPE_COLOUR[t]
        useful = self.need[colour] > 0
        for arrow, _facing, other, edge in CELL_LINKS[cell]:
            if links & edge:
                other_colour = TYPE_COLOUR[self.cell_type[other]]
                value += 1.0 if useful and self.need[other_colour] > 0 else 0.2
            elif self.cell_type[other] < 0 and arrows[cell] & arrow:
                value += 0.1  # an open arrow: a future link
        if useful:
            value += 0.3
        return value

    def hand_useful(self) -> bool:
        return any(self.need[TYPE_COLOUR[t]] > 0 for t in self.hand)

    def draw_value(self, action: int) -> float:
        k = action - A.DRAW
        if k == len(self.market):  # the draw pile: an unknown card
            return 0.6
        t = self.market[k]
        best = 0.0
        empties = [c for c in range(CELLS) if not self.occupied >> c & 1]
        for cell in empties:
            for rot in CANON_ROTS[t]:
                links, colour_cells, _ = self._hypothetical(cell, t, rot)
                best = max(best, self._best_own_cast(links, colour_cells, 1 << cell))
        if best > 0:
            return 5.0 + best
        return 1.0 if self.need[TYPE_COLOUR[t]] > 0 else 0.0

    def break_value(self, cell: int) -> float:
        colour = TYPE_COLOUR[self.cell_type[cell]]
        x = self.exaltation
        v = 0.0
        if x.kind == ExaltationKind.BROKEN_COLOUR and x.colour == colour:
            v += 2.0
        if x.kind == ExaltationKind.BROKEN_ALL_COLOURS and colour not in self.broken_colours:
            v += 2.0
        if self.need[colour] > 0:
            v -= 1.0
        if self.opp_need[colour] > 0:
            v += 0.5
        return v

    def clear_value(self, cell: int) -> float:
        # Keep what is in the sets our rituals could use; drop what the others need.
        colour = TYPE_COLOUR[self.cell_type[cell]]
        linked = sum(1 for _a, _f, _other, edge in CELL_LINKS[cell] if self.links & edge)
        return -(2.0 if self.need[colour] else 0.0) - 0.5 * linked + (0.5 if self.opp_need[colour] else 0.0)

    def power_value(self, action: int) -> float:
        """Seth / Isis (O7): worth using when the result makes a ritual castable."""
        if A.SETH <= action < A.ISIS:
            cell, rot = A.decode_seth(action)
            links, colour_cells, _ = self._hypothetical(cell, self.cell_type[cell], rot)
            return self._best_own_cast(links, colour_cells, 1 << cell)
        if A.ISIS <= action < A.PLACE:
            src, dst, rot = A.decode_isis(action)
            t = self.cell_type[src]
            arrows = list(self.arrows)
            arrows[src] = 0
            links = removed_links(self.links, src)
            colour_cells = list(self.colour_cells)
            colour_cells[TYPE_COLOUR[t]] &= ~(1 << src)
            arrows[dst] = TYPE_ARROWS[t][rot]
            links = placed_links(arrows, links, dst)
            colour_cells[TYPE_COLOUR[t]] |= 1 << dst
            return self._best_own_cast(links, colour_cells, 1 << dst)
        return 0.0
