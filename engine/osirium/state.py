"""The Osirium state: rules O2–O10 on the shared interface of :mod:`engine.core`.

Representation (all plain ints and lists, ``__slots__``, cheap to clone):

* amulets are handled by *type* (colour × pattern, :mod:`engine.osirium.board`): identical
  cards are interchangeable, so hands, piles and the market hold type ids;
* the board is ``board_t``/``board_r`` (type, canonical rotation, -1 when empty) plus
  derived bitmasks kept incrementally: ``arrows`` per cell, ``occ`` (occupied cells),
  ``colmask`` (cells per colour) and ``links`` (24 edge bits, O4.1);
* rituals by id (:data:`engine.osirium.cards.RITUALS`); completed rituals as
  ``id * 2 + principle``.

``apply`` is the fast path (no events); ``apply_action`` validates and returns events. Both
run the same code (``_do``), which builds events only when given a list.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Self

from engine.core import (
    TERMINAL,
    Event,
    GameOverError,
    IllegalActionError,
    Outcome,
    State,
    StateFormatError,
)
from engine.osirium import actions as A
from engine.osirium.board import (
    CANON_OF,
    CANON_ROTS,
    CELL_EDGE_MASK,
    CELLS,
    FULL,
    NUM_TYPES,
    OTYPES,
    RITUAL_SIG,
    SIZE,
    TYPE_ARROWS,
    TYPE_COLOUR,
    TYPE_COUNT,
    TYPE_NAME,
    TYPE_OTYPES,
    all_links,
    cell_links,
    cell_name,
    cell_tuple,
    cells_of,
    connected_sets,
    set_signature,
)
from engine.osirium.cards import (
    CHAOS,
    COLOURS,
    DEITIES,
    EXALTATIONS,
    HAND_SIZE,
    HIDDEN_SLOT,
    MARKET_SIZE,
    MAX_ROUNDS,
    ORDER,
    PRINCIPLES,
    RITUAL_SLOTS,
    RITUALS,
    RITUALS_TO_END,
)
from engine.osirium.view import (
    EMPTY_SLOT,
    HIDDEN_ADVANCED,
    HIDDEN_SIMPLE,
    OsiriumView,
    cell_text,
    render_board,
    ritual_text,
)
from engine.rng import Rng, SerialRng

# Steps of a turn (O10).
MAIN, PLACE, DRAW, BREAK, REFILL, OVER = range(6)
PHASE_NAMES = ("main", "place", "draw", "break", "refill", "over")

_POWER = {d.id: d.power for d in DEITIES}
_HIGHER: tuple[int, ...] = tuple(FULL & ~((2 << c) - 1) for c in range(CELLS))
_NUM_RITUALS = len(RITUALS)
_NUM_EXALTATIONS = len(EXALTATIONS)
_TYPE_COUNTS = list(TYPE_COUNT)
_NUM_AMULETS = sum(TYPE_COUNT)  # 60 (O2.2)


def _cell_pair(c: int) -> tuple[int, int]:
    return divmod(c, SIZE)


class OsiriumState(State):
    """A position of Osirium (see the module docstring for the representation)."""

    __slots__ = (
        "_outcome",
        "_sets",
        "advanced",
        "ankhs",
        "arrows",
        "board_r",
        "board_t",
        "broken",
        "cast_last",
        "cast_left",
        "cast_set",
        "cast_slot",
        "clear_cell",
        "colmask",
        "completed",
        "cur",
        "deity",
        "discard",
        "ended_by",
        "exalt",
        "game",
        "hands",
        "links",
        "market",
        "moves",
        "n",
        "occ",
        "phase",
        "pile",
        "placed",
        "power_used",
        "rng",
        "round",
        "simple",
        "slots",
        "started",
        "team_play",
    )

    game: Any
    n: int
    team_play: bool
    deity: list[int]
    power_used: list[bool]
    board_t: list[int]
    board_r: list[int]
    arrows: list[int]
    colmask: list[int]
    occ: int
    links: int
    hands: list[list[int]]
    pile: list[int]
    discard: list[int]
    market: list[int]
    broken: list[list[int]]
    slots: list[list[int]]
    completed: list[list[int]]
    ankhs: list[int]
    exalt: list[int]
    simple: list[int]
    advanced: list[int]
    phase: int
    cur: int
    round: int
    started: bool
    placed: bool
    clear_cell: int
    cast_set: int
    cast_left: int
    cast_last: int
    cast_slot: int
    ended_by: int
    rng: SerialRng
    moves: int
    _sets: dict[int, list[int]] | None
    _outcome: Outcome | None

    # ------------------------------------------------------------------------------
    # Creation (O2)
    # ------------------------------------------------------------------------------

    @classmethod
    def new(
        cls, game: Any, num_players: int, rng: SerialRng, deities: Sequence[int], teams: bool
    ) -> OsiriumState:
        s = cls.__new__(cls)
        s.game = game
        s.n = n = num_players
        s.team_play = teams
        s.deity = list(deities)  # O2.1
        s.power_used = [False] * n
        s.board_t = [-1] * CELLS
        s.board_r = [0] * CELLS
        s.arrows = [0] * CELLS
        s.colmask = [0] * len(COLOURS)
        s.occ = 0
        s.links = 0
        s.rng = rng
        # O2.2: shuffle the amulets, 4 to each hand, 4 face up to the market.
        pile = [t for t in range(NUM_TYPES) for _ in range(TYPE_COUNT[t])]
        rng.shuffle(pile)
        s.hands = [[pile.pop() for _ in range(HAND_SIZE)] for _ in range(n)]
        s.market = [pile.pop() for _ in range(MARKET_SIZE)]
        s.pile = pile
        s.discard = []
        s.broken = [[] for _ in range(n)]
        # O2.3: two ritual piles; 3 simple rituals per player (slot 2 face down).
        simple = [r.id for r in RITUALS if not r.advanced]
        advanced = [r.id for r in RITUALS if r.advanced]
        rng.shuffle(simple)
        rng.shuffle(advanced)
        s.slots = [[simple.pop() for _ in range(RITUAL_SLOTS)] for _ in range(n)]
        s.simple = simple
        s.advanced = advanced
        s.completed = [[] for _ in range(n)]
        s.ankhs = [0] * n  # O2.5
        # O2.4: one secret exaltation each.
        ex = list(range(_NUM_EXALTATIONS))
        rng.shuffle(ex)
        s.exalt = ex[:n]
        s.phase = MAIN
        s.cur = 0  # O1.1: seat 0 plays first
        s.round = 1
        s.moves = 0
        s.started = False
        s.placed = False
        s.clear_cell = -1
        s.cast_set = 0
        s.cast_left = 0
        s.cast_last = -1
        s.cast_slot = -1
        s.ended_by = -1
        s._sets = None
        s._outcome = None
        return s

    def clone(self) -> Self:
        s = object.__new__(type(self))
        s.game = self.game
        s.n = self.n
        s.team_play = self.team_play
        s.deity = self.deity  # never mutated
        s.power_used = self.power_used[:]
        s.board_t = self.board_t[:]
        s.board_r = self.board_r[:]
        s.arrows = self.arrows[:]
        s.colmask = self.colmask[:]
        s.occ = self.occ
        s.links = self.links
        s.hands = [h[:] for h in self.hands]
        s.pile = self.pile[:]
        s.discard = self.discard[:]
        s.market = self.market[:]
        s.broken = [b[:] for b in self.broken]
        s.slots = [x[:] for x in self.slots]
        s.completed = [c[:] for c in self.completed]
        s.ankhs = self.ankhs[:]
        s.exalt = self.exalt[:]
        s.simple = self.simple[:]
        s.advanced = self.advanced[:]
        s.phase = self.phase
        s.cur = self.cur
        s.round = self.round
        s.moves = self.moves
        s.started = self.started
        s.placed = self.placed
        s.clear_cell = self.clear_cell
        s.cast_set = self.cast_set
        s.cast_left = self.cast_left
        s.cast_last = self.cast_last
        s.cast_slot = self.cast_slot
        s.ended_by = self.ended_by
        s.rng = self.rng.clone()
        s._sets = self._sets  # shared, never mutated
        s._outcome = self._outcome
        return s

    # ------------------------------------------------------------------------------
    # Who, what
    # ------------------------------------------------------------------------------

    @property
    def num_players(self) -> int:
        return self.n

    def current_player(self) -> int:
        return TERMINAL if self.phase == OVER else self.cur

    def move_number(self) -> int:
        return self.moves

    def decision(self) -> str:
        return PHASE_NAMES[self.phase]

    def round_number(self) -> int:
        return self.round

    def teams(self) -> tuple[int, ...]:
        if self.team_play:
            return tuple(p % 2 for p in range(self.n))  # O9.3: seats 0, 2 vs 1, 3
        return tuple(range(self.n))

    # ------------------------------------------------------------------------------
    # Board helpers (O4)
    # ------------------------------------------------------------------------------

    def _put(self, cell: int, t: int, rot: int) -> None:
        self.board_t[cell] = t
        self.board_r[cell] = rot
        self.arrows[cell] = TYPE_ARROWS[t][rot]
        bit = 1 << cell
        self.occ |= bit
        self.colmask[TYPE_COLOUR[t]] |= bit
        self.links = (self.links & ~CELL_EDGE_MASK[cell]) | cell_links(self.arrows, cell)
        self._sets = None

    def _take(self, cell: int) -> int:
        t = self.board_t[cell]
        self.board_t[cell] = -1
        self.board_r[cell] = 0
        self.arrows[cell] = 0
        bit = 1 << cell
        self.occ &= ~bit
        self.colmask[TYPE_COLOUR[t]] &= ~bit
        self.links &= ~CELL_EDGE_MASK[cell]
        self._sets = None
        return t

    def _sig_sets(self) -> dict[int, list[int]]:
        """Connected sets (O4.2) grouped by colour signature; cached until the board changes."""
        d = self._sets
        if d is None:
            d = {}
            colmask = self.colmask
            for m in connected_sets(self.links):
                sig = set_signature(m, colmask)
                lst = d.get(sig)
                if lst is None:
                    d[sig] = [m]
                else:
                    lst.append(m)
            self._sets = d
        return d

    def castable(self, slot: int) -> list[int]:
        """Cell masks of every set matching the ritual in ``slot`` of the current player."""
        rid = self.slots[self.cur][slot]
        if rid < 0:
            return []
        return list(self._sig_sets().get(RITUAL_SIG[rid], ()))

    # ------------------------------------------------------------------------------
    # Legal actions (O10)
    # ------------------------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        ph = self.phase
        if ph == MAIN:
            return self._main_actions()
        if ph == DRAW:
            out = [A.DRAW + k for k in range(MARKET_SIZE) if self.market[k] >= 0]
            if self.pile or self.discard:
                out.append(A.DRAW_PILE)
            return out
        if ph == BREAK:
            left = self.cast_left - 1
            s = self.cast_set
            last = self.cast_last
            return [A.BREAK + c for c in cells_of(s) if c > last and (s & _HIGHER[c]).bit_count() >= left]
        if ph == REFILL:
            out = []
            if self.simple:
                out.append(A.REFILL)
            if self.advanced:
                out.append(A.REFILL + 1)
            return out
        if ph == PLACE:
            c = self.clear_cell
            return [
                A.PLACE + ot * CELLS + c for t in sorted(set(self.hands[self.cur])) for ot in TYPE_OTYPES[t]
            ]
        return []

    def _main_actions(self) -> list[int]:
        p = self.cur
        hand = self.hands[p]
        out: list[int] = []
        if not self.started:
            out.append(A.PASS)  # O3.5: only as the first thing
        if self.placed or not hand:
            out.append(A.END)  # O3.4
        occ = self.occ
        full = occ == FULL
        can_place = hand and not self.placed
        if can_place and full:
            out.extend(range(A.CLEAR, A.CLEAR + CELLS))  # O3.1a
        if not self.power_used[p]:  # O7
            power = _POWER[self.deity[p]]
            if power == "break":
                out += [A.ANUBIS + c for c in cell_tuple(occ)]
            elif power == "market":
                out += [A.BASTET + k for k in range(MARKET_SIZE) if self.market[k] >= 0]
            elif power == "rotate":
                arrows = self.arrows
                board_t = self.board_t
                for c in cell_tuple(occ):
                    t = board_t[c]
                    ta = TYPE_ARROWS[t]
                    a = arrows[c]
                    base = A.SETH + c * 4
                    out += [base + r for r in CANON_ROTS[t] if ta[r] != a]
            elif power == "move" and occ and not full:
                empty4 = [c * 4 for c in cell_tuple(FULL & ~occ)]
                board_t = self.board_t
                for src in cell_tuple(occ):
                    base = A.ISIS + src * CELLS * 4
                    rots = CANON_ROTS[board_t[src]]
                    out += [base + d4 + r for d4 in empty4 for r in rots]
        if can_place and not full:  # O3.1
            empties = cell_tuple(FULL & ~occ)
            for t in sorted(set(hand)):
                for ot in TYPE_OTYPES[t]:
                    base = A.PLACE + ot * CELLS
                    out += [base + c for c in empties]
        # O5.1 casts: slot, principle, matching set.
        if self.links:
            sets = self._sig_sets()
            if sets:
                slots = self.slots[p]
                for k in range(RITUAL_SLOTS):
                    rid = slots[k]
                    if rid >= 0:
                        ms = sets.get(RITUAL_SIG[rid])
                        if ms:
                            base = A.CAST + k * 2 * A.MASKS - 1
                            out += [base + m for m in ms]
                            base += A.MASKS
                            out += [base + m for m in ms]
        return out

    # ------------------------------------------------------------------------------
    # Applying actions
    # ------------------------------------------------------------------------------

    def apply(self, action: int) -> None:
        self._do(action, None)

    def apply_action(self, action: int) -> list[Event]:
        if self.phase == OVER:
            raise GameOverError("osirium: the game is over; no action can be applied")
        if isinstance(action, bool) or not isinstance(action, int) or action not in self.legal_actions():
            try:
                text = A.action_info(action).text
            except ValueError:
                text = repr(action)
            raise IllegalActionError(
                f"osirium: {text} is not legal now (seat {self.cur}, step {self.decision()})"
            )
        ev: list[Event] = []
        self._do(action, ev)
        return ev

    def _do(self, a: int, ev: list[Event] | None) -> None:
        self.moves += 1
        p = self.cur
        if a >= A.PLACE:
            if a >= A.CAST:
                self._cast(p, a, ev)
            else:
                self._place(p, a, ev)
        elif a < A.BREAK:
            if a == A.END:
                if ev is not None:
                    ev.append(Event("end_turn", f"seat {p} ends their turn", p))
                self._end_turn(ev)
            elif a == A.PASS:
                self._pass(p, ev)
            elif a < A.DRAW:
                self._refill(p, a - A.REFILL, ev)
            else:
                self._draw(p, a - A.DRAW, ev)
        elif a < A.CLEAR:
            self._break(p, a - A.BREAK, ev)
        elif a < A.ANUBIS:
            self._clear(p, a - A.CLEAR, ev)
        else:
            self._power(p, a, ev)

    # --- piles (O3.6) -------------------------------------------------------------

    def _pile_card(self, ev: list[Event] | None) -> int:
        """Top card of the draw pile, reshuffling the discard first if needed; -1 if none."""
        pile = self.pile
        if not pile:
            if not self.discard:
                return -1
            pile.extend(self.discard)
            self.discard.clear()
            self.rng.shuffle(pile)
            if ev is not None:
                ev.append(
                    Event(
                        "reshuffle",
                        f"the discard pile ({len(pile)} cards) is shuffled into a new draw pile",
                        None,
                        {"cards": len(pile)},
                    )
                )
        return pile.pop()

    def _refill_market(self, k: int, ev: list[Event] | None) -> None:
        t = self._pile_card(ev)
        self.market[k] = t
        if ev is not None:
            if t >= 0:
                ev.append(
                    Event(
                        "market_refill",
                        f"market{k} is refilled with {TYPE_NAME[t]}",
                        None,
                        {"slot": k, "card": TYPE_NAME[t]},
                    )
                )
            else:
                ev.append(Event("market_empty", f"market{k} stays empty (no card left)", None, {"slot": k}))

    # --- place, clear, draw (O3.1, O3.1a, O3.2) -----------------------------------

    def _place(self, p: int, a: int, ev: list[Event] | None) -> None:
        ot, cell = divmod(a - A.PLACE, CELLS)
        t, rot = OTYPES[ot]
        self.hands[p].remove(t)
        self._put(cell, t, rot)
        self.placed = True
        self.started = True
        self.clear_cell = -1
        if ev is not None:
            ev.append(
                Event(
                    "place",
                    f"seat {p} places {TYPE_NAME[t]} on {cell_name(cell)} at r{rot * 90}",
                    p,
                    {"card": TYPE_NAME[t], "cell": _cell_pair(cell), "rotation": rot * 90},
                )
            )
        # O3.2: draw if the hand is short and a source holds a card; else skip the step.
        if len(self.hands[p]) < HAND_SIZE and (self.pile or self.discard or any(m >= 0 for m in self.market)):
            self.phase = DRAW
        else:
            self.phase = MAIN
            if ev is not None and len(self.hands[p]) < HAND_SIZE:
                ev.append(Event("draw_skipped", f"seat {p} cannot draw: no card left", p))

    def _clear(self, p: int, cell: int, ev: list[Event] | None) -> None:
        t = self._take(cell)  # O3.1a: to the discard pile, not a broken pile
        self.discard.append(t)
        self.clear_cell = cell
        self.started = True
        self.phase = PLACE
        if ev is not None:
            ev.append(
                Event(
                    "clear",
                    f"seat {p} clears {TYPE_NAME[t]} from {cell_name(cell)} (full board) to the discard",
                    p,
                    {"card": TYPE_NAME[t], "cell": _cell_pair(cell)},
                )
            )

    def _draw(self, p: int, k: int, ev: list[Event] | None) -> None:
        hand = self.hands[p]
        if k == MARKET_SIZE:
            t = self._pile_card(ev)
            hand.append(t)
            if ev is not None:
                ev.append(Event("draw", f"seat {p} draws from the pile", p, {"source": "pile"}))
                ev.append(
                    Event(
                        "draw_card",
                        f"seat {p} draws {TYPE_NAME[t]}",
                        p,
                        {"card": TYPE_NAME[t]},
                        visible_to=(p,),
                    )
                )
        else:
            t = self.market[k]
            hand.append(t)
            if ev is not None:
                ev.append(
                    Event(
                        "draw",
                        f"seat {p} takes {TYPE_NAME[t]} from market{k}",
                        p,
                        {"source": "market", "slot": k, "card": TYPE_NAME[t]},
                    )
                )
            self._refill_market(k, ev)
        self.phase = MAIN

    def _pass(self, p: int, ev: list[Event] | None) -> None:
        # O3.5: discard the whole hand first, then draw 4 (reshuffle may include it).
        hand = self.hands[p]
        old = hand[:]
        self.discard.extend(hand)
        hand.clear()
        for _ in range(HAND_SIZE):
            t = self._pile_card(ev)
            if t < 0:
                break
            hand.append(t)
        if ev is not None:
            ev.append(
                Event(
                    "pass",
                    f"seat {p} passes, discards {len(old)} and draws {len(hand)} cards",
                    p,
                    {"discarded": tuple(sorted(TYPE_NAME[t] for t in old)), "drawn": len(hand)},
                )
            )
            ev.append(
                Event(
                    "draw_card",
                    f"seat {p} draws {', '.join(TYPE_NAME[t] for t in hand) or 'nothing'}",
                    p,
                    {"cards": tuple(TYPE_NAME[t] for t in hand)},
                    visible_to=(p,),
                )
            )
        self._end_turn(ev)

    # --- turns (O3, O8.4) ---------------------------------------------------------

    def _end_turn(self, ev: list[Event] | None) -> None:
        self.started = False
        self.placed = False
        self.clear_cell = -1
        self.phase = MAIN
        if self.cur == self.n - 1:
            if self.round >= MAX_ROUNDS:  # O8.4: after the last seat's turn in round 100
                self._finish(ev)
                return
            self.round += 1
        self.cur = (self.cur + 1) % self.n
        if ev is not None:
            ev.append(
                Event("turn", f"round {self.round}: seat {self.cur} to play", self.cur, {"round": self.round})
            )

    # --- rituals (O5) -------------------------------------------------------------

    def _cast(self, p: int, a: int, ev: list[Event] | None) -> None:
        sp, m = divmod(a - A.CAST, A.MASKS)
        mask = m + 1
        slot, principle = divmod(sp, 2)
        rid = self.slots[p][slot]
        r = RITUALS[rid]
        self.slots[p][slot] = -1  # O5.4: the slot is empty during breaks and refill
        self.completed[p].append(rid * 2 + principle)
        gain = r.chaos_ankhs if principle == CHAOS else r.order_ankhs
        self.ankhs[p] += gain  # O5.2
        breaks = min(r.chaos_breaks if principle == CHAOS else r.order_breaks, mask.bit_count())
        self.started = True
        self.cast_set = mask
        self.cast_slot = slot
        self.cast_last = -1
        self.cast_left = breaks
        if ev is not None:
            cells = tuple(_cell_pair(c) for c in cells_of(mask))
            ev.append(
                Event(
                    "cast",
                    f"seat {p} casts {r.name} (#{rid}) by {PRINCIPLES[principle]} on "
                    + "+".join(cell_name(c) for c in cells_of(mask)),
                    p,
                    {
                        "ritual": rid,
                        "name": r.name,
                        "slot": slot,
                        "principle": PRINCIPLES[principle],
                        "cells": cells,
                        "breaks": breaks,
                    },
                )
            )
            ev.append(
                Event("ankhs", f"seat {p} scores {gain} Ankhs", p, {"ankhs": gain, "total": self.ankhs[p]})
            )
        if breaks:
            self.phase = BREAK
        else:
            self._after_breaks(p, ev)

    def _break(self, p: int, cell: int, ev: list[Event] | None) -> None:
        t = self._take(cell)  # O5.3: to the caster's broken pile
        self.broken[p].append(t)
        self.cast_last = cell
        self.cast_left -= 1
        if ev is not None:
            ev.append(
                Event(
                    "break",
                    f"seat {p} breaks {TYPE_NAME[t]} on {cell_name(cell)}",
                    p,
                    {"card": TYPE_NAME[t], "cell": _cell_pair(cell)},
                )
            )
        if self.cast_left == 0:
            self._after_breaks(p, ev)

    def _after_breaks(self, p: int, ev: list[Event] | None) -> None:
        if len(self.completed[p]) >= RITUALS_TO_END:  # O5.6 / O8.1: no refill
            self.ended_by = p
            self._finish(ev)
            return
        if self.simple or self.advanced:
            self.phase = REFILL
        else:  # O5.5: both piles empty: the slot stays empty
            self._clear_cast()
            self.phase = MAIN
            if ev is not None:
                ev.append(Event("refill_skipped", f"no ritual left: seat {p}'s slot stays empty", p))

    def _clear_cast(self) -> None:
        self.cast_set = 0
        self.cast_left = 0
        self.cast_last = -1
        self.cast_slot = -1

    def _refill(self, p: int, deck: int, ev: list[Event] | None) -> None:
        rid = (self.advanced if deck else self.simple).pop()  # O5.5
        slot = self.cast_slot
        self.slots[p][slot] = rid
        self._clear_cast()
        self.phase = MAIN
        if ev is not None:
            if slot == HIDDEN_SLOT:
                ev.append(
                    Event(
                        "refill",
                        f"seat {p} refills s{slot} face down from the {A.DECKS[deck]} pile",
                        p,
                        {"slot": slot, "deck": A.DECKS[deck]},
                    )
                )
                ev.append(
                    Event(
                        "refill_card",
                        f"seat {p} takes {RITUALS[rid].name} (#{rid}) face down",
                        p,
                        {"slot": slot, "ritual": rid},
                        visible_to=(p,),
                    )
                )
            else:
                ev.append(
                    Event(
                        "refill",
                        f"seat {p} refills s{slot} from the {A.DECKS[deck]} pile: "
                        f"{RITUALS[rid].name} (#{rid})",
                        p,
                        {"slot": slot, "deck": A.DECKS[deck], "ritual": rid},
                    )
                )

    # --- deity powers (O7) --------------------------------------------------------

    def _power(self, p: int, a: int, ev: list[Event] | None) -> None:
        self.power_used[p] = True
        self.started = True  # O7: no pass after using a power
        if a < A.BASTET:  # Anubis: break one amulet
            cell = a - A.ANUBIS
            t = self._take(cell)
            self.broken[p].append(t)
            if ev is not None:
                ev.append(
                    Event(
                        "power",
                        f"seat {p} (Anubis) breaks {TYPE_NAME[t]} on {cell_name(cell)}",
                        p,
                        {"deity": "anubis", "card": TYPE_NAME[t], "cell": _cell_pair(cell)},
                    )
                )
        elif a < A.SETH:  # Bastet: one more market card
            k = a - A.BASTET
            t = self.market[k]
            self.hands[p].append(t)
            if ev is not None:
                ev.append(
                    Event(
                        "power",
                        f"seat {p} (Bastet) takes {TYPE_NAME[t]} from market{k}",
                        p,
                        {"deity": "bastet", "card": TYPE_NAME[t], "slot": k},
                    )
                )
            self._refill_market(k, ev)
        elif a < A.ISIS:  # Seth: rotate
            cell, rot = divmod(a - A.SETH, 4)
            t = self.board_t[cell]
            self._put(cell, t, rot)
            if ev is not None:
                ev.append(
                    Event(
                        "power",
                        f"seat {p} (Seth) turns {TYPE_NAME[t]} on {cell_name(cell)} to r{rot * 90}",
                        p,
                        {
                            "deity": "seth",
                            "card": TYPE_NAME[t],
                            "cell": _cell_pair(cell),
                            "rotation": rot * 90,
                        },
                    )
                )
        else:  # Isis: move
            k, rot = divmod(a - A.ISIS, 4)
            src, dst = divmod(k, CELLS)
            t = self._take(src)
            self._put(dst, t, rot)
            if ev is not None:
                ev.append(
                    Event(
                        "power",
                        f"seat {p} (Isis) moves {TYPE_NAME[t]} from {cell_name(src)} to "
                        f"{cell_name(dst)} at r{rot * 90}",
                        p,
                        {
                            "deity": "isis",
                            "card": TYPE_NAME[t],
                            "from": _cell_pair(src),
                            "to": _cell_pair(dst),
                            "rotation": rot * 90,
                        },
                    )
                )

    # ------------------------------------------------------------------------------
    # End and scoring (O8, O9.3)
    # ------------------------------------------------------------------------------

    def exaltation_met(self, p: int) -> bool:
        """Whether seat ``p``'s exaltation condition holds now (O1.5, checked at the end)."""
        x = EXALTATIONS[self.exalt[p]]
        done = self.completed[p]
        kind = x.kind
        if kind == "all_order":
            return len(done) >= x.amount and all(c % 2 == ORDER for c in done)
        if kind == "chaos":
            return sum(1 for c in done if c % 2 == CHAOS) >= x.amount
        if kind == "broken_colour":
            return sum(1 for t in self.broken[p] if TYPE_COLOUR[t] == x.colour) >= x.amount
        if kind == "broken_all_colours":
            return len({TYPE_COLOUR[t] for t in self.broken[p]}) == len(COLOURS)
        if kind == "advanced":
            return sum(1 for c in done if RITUALS[c // 2].advanced) >= x.amount
        if kind == "ritual_size":
            return any(RITUALS[c // 2].size >= x.amount for c in done)
        if kind == "last_word":
            return self.ended_by == p
        raise StateFormatError(f"osirium: unknown exaltation kind {kind!r}")

    def _final_scores(self) -> tuple[int, ...]:
        # O8.2: ritual Ankhs + exaltation + 1 per broken amulet.
        return tuple(
            self.ankhs[p]
            + (EXALTATIONS[self.exalt[p]].ankhs if self.exaltation_met(p) else 0)
            + len(self.broken[p])
            for p in range(self.n)
        )

    def _make_outcome(self) -> Outcome:
        scores = self._final_scores()
        n = self.n
        teams = self.teams()
        keys: dict[int, tuple[int, int, int]] = {}
        for p in range(n):  # O8.3 (summed per team, O9.3)
            k = keys.get(teams[p], (0, 0, 0))
            keys[teams[p]] = (k[0] + scores[p], k[1] + len(self.completed[p]), k[2] + len(self.broken[p]))
        best = max(keys.values())
        win_teams = [t for t, k in keys.items() if k == best]
        winners = tuple(p for p in range(n) if teams[p] in win_teams)
        sole = len(win_teams) == 1
        returns = tuple((1.0 if sole else 0.0) if teams[p] in win_teams else -1.0 for p in range(n))
        if len(win_teams) == len(keys):
            winners_text = "everyone shares the win"
        elif self.team_play:
            winners_text = f"team {win_teams[0]} (seats {' and '.join(map(str, winners))}) wins"
        else:
            who = " and ".join(f"seat {w}" for w in winners)
            winners_text = f"{who} {'wins' if sole else 'share the win'}"
        if self.ended_by >= 0:
            reason = "fifth_ritual"
            how = f"seat {self.ended_by} completed a 5th ritual"
        else:
            reason = "round_limit"
            how = f"the {MAX_ROUNDS}-round limit was reached"
        pts = ", ".join(f"seat {p} {scores[p]}" for p in range(n))
        return Outcome(winners, reason, f"{how}; {winners_text} ({pts})", scores, returns)

    def _finish(self, ev: list[Event] | None) -> None:
        self.phase = OVER
        self.cast_set = 0
        self.cast_left = 0
        self.cast_last = -1
        self.cast_slot = -1
        self.started = False
        self.placed = False
        self.clear_cell = -1
        out = self._outcome = self._make_outcome()
        if ev is not None:
            ev.append(Event("game_end", out.text, None, {"reason": out.reason, "ended_by": self.ended_by}))
            for p in range(self.n):
                x = EXALTATIONS[self.exalt[p]]
                met = self.exaltation_met(p)
                bonus = x.ankhs if met else 0
                ev.append(
                    Event(
                        "scoring_line",
                        f"seat {p}: rituals {self.ankhs[p]} + exaltation {x.name} "
                        f"{'met' if met else 'not met'} {bonus} + broken {len(self.broken[p])} "
                        f"= {out.scores[p]}",
                        p,
                        {
                            "rituals": self.ankhs[p],
                            "exaltation": x.name,
                            "exaltation_met": met,
                            "exaltation_ankhs": bonus,
                            "broken": len(self.broken[p]),
                            "completed": len(self.completed[p]),
                            "total": out.scores[p],
                        },
                    )
                )
            ev.append(Event("win", out.text, None, {"winners": out.winners, "returns": out.returns}))

    def scores(self) -> tuple[int, ...]:
        if self._outcome is not None:
            return self._outcome.scores
        # Public score so far: ritual Ankhs + broken amulets (never decreases).
        return tuple(self.ankhs[p] + len(self.broken[p]) for p in range(self.n))

    def returns(self) -> tuple[float, ...]:
        if self._outcome is None:
            return (0.0,) * self.n
        return self._outcome.returns

    def outcome(self) -> Outcome | None:
        return self._outcome

    # ------------------------------------------------------------------------------
    # Information (O6)
    # ------------------------------------------------------------------------------

    def view(self, player: int | None) -> OsiriumView:
        if player is not None and not (isinstance(player, int) and 0 <= player < self.n):
            raise IllegalActionError(f"osirium: no seat {player!r} in a {self.n}-player game")
        n = self.n
        over = self.phase == OVER
        rituals = []
        for q in range(n):
            row = []
            for k, rid in enumerate(self.slots[q]):
                if rid < 0:
                    row.append(EMPTY_SLOT)
                elif k == HIDDEN_SLOT and q != player:
                    row.append(HIDDEN_ADVANCED if RITUALS[rid].advanced else HIDDEN_SIMPLE)
                else:
                    row.append(rid)
            rituals.append(tuple(row))
        out = self._outcome
        return OsiriumView(
            player=player,
            num_players=n,
            teams=self.teams(),
            deities=tuple(DEITIES[d].name for d in self.deity),
            powers_used=tuple(self.power_used),
            current_player=self.current_player(),
            decision=self.decision(),
            round=self.round,
            board=tuple(cell_text(self.board_t[c], self.board_r[c]) for c in range(CELLS)),
            market=tuple(TYPE_NAME[t] if t >= 0 else "" for t in self.market),
            draw_pile_size=len(self.pile),
            discard=tuple(sorted(TYPE_NAME[t] for t in self.discard)),
            hand_sizes=tuple(len(h) for h in self.hands),
            hand=None if player is None else tuple(sorted(TYPE_NAME[t] for t in self.hands[player])),
            rituals=tuple(rituals),
            completed=tuple(tuple((c // 2, PRINCIPLES[c % 2]) for c in done) for done in self.completed),
            broken=tuple(tuple(sorted(TYPE_NAME[t] for t in b)) for b in self.broken),
            ritual_ankhs=tuple(self.ankhs),
            exaltations=tuple(self.exalt[q] if over or q == player else -1 for q in range(n)),
            simple_pile_size=len(self.simple),
            advanced_pile_size=len(self.advanced),
            started=self.started,
            placed=self.placed,
            clear_cell=self.clear_cell,
            cast=(self.cast_slot, self.cast_set, self.cast_left, self.cast_last)
            if self.cast_slot >= 0
            else (),
            scores=self.scores(),
            result=out.text if out is not None else "",
        )

    def sample_consistent_state(self, player: int, rng: random.Random) -> Self:
        if not (isinstance(player, int) and 0 <= player < self.n):
            raise IllegalActionError(f"osirium: no seat {player!r} in a {self.n}-player game")
        s = self.clone()
        others = [q for q in range(self.n) if q != player]
        # Amulets: other hands + draw pile, re-dealt with the same sizes (O6.2, O6.3).
        # (Pools are sorted before shuffling so that the result depends on the view and
        # ``rng`` only, never on the hidden arrangement being replaced.)
        pool = list(s.pile)
        for q in others:
            pool += s.hands[q]
        pool.sort()
        rng.shuffle(pool)
        i = 0
        for q in others:
            k = len(s.hands[q])
            s.hands[q] = pool[i : i + k]
            i += k
        s.pile = pool[i:]
        # Rituals: other face-down slots + the piles, deck by deck (the deck of a face-down
        # ritual is public: it was chosen at the refill).
        for advanced in (False, True):
            pile = s.advanced if advanced else s.simple
            holders = [
                q
                for q in others
                if s.slots[q][HIDDEN_SLOT] >= 0 and RITUALS[s.slots[q][HIDDEN_SLOT]].advanced == advanced
            ]
            rpool = sorted(pile + [s.slots[q][HIDDEN_SLOT] for q in holders])
            rng.shuffle(rpool)
            for q in holders:
                s.slots[q][HIDDEN_SLOT] = rpool.pop()
            if advanced:
                s.advanced = rpool
            else:
                s.simple = rpool
        # Exaltations: the others' are any of the ones the player does not hold (revealed at
        # the end, so kept then).
        if self.phase != OVER:
            xpool = [x for x in range(_NUM_EXALTATIONS) if x != s.exalt[player]]
            rng.shuffle(xpool)
            for q in others:
                s.exalt[q] = xpool.pop()
        # The randomness to come (future reshuffles) is hidden too.
        s.rng = Rng(rng.getrandbits(64))
        return s

    def string_to_action(self, text: str) -> int:
        """Like the game's parser, but an Isis or Seth rotation that gives the same arrows
        as a lower one (for the amulet on that cell now) is read as the canonical one."""
        a = A.string_to_action(text)
        if A.SETH <= a < A.PLACE:
            if a < A.ISIS:
                cell, rot = divmod(a - A.SETH, 4)
                base = A.SETH + cell * 4
            else:
                k, rot = divmod(a - A.ISIS, 4)
                cell = k // CELLS
                base = A.ISIS + k * 4
            t = self.board_t[cell]
            if t >= 0:
                a = base + CANON_OF[t][rot]
        return a

    # ------------------------------------------------------------------------------
    # Text, serialization, validation
    # ------------------------------------------------------------------------------

    def to_text(self) -> str:
        lines = [
            f"Osirium, {self.n} players{' (teams 0+2 vs 1+3)' if self.team_play else ''}, round {self.round}"
        ]
        if self.phase == OVER:
            assert self._outcome is not None
            lines.append(f"game over: {self._outcome.text}")
        else:
            lines.append(
                f"to play: seat {self.cur} ({self.decision()})"
                + (" [started]" if self.started else "")
                + (" [placed]" if self.placed else "")
            )
        lines.append(render_board([(self.board_t[c], self.board_r[c]) for c in range(CELLS)]))
        lines.append(
            "market: "
            + "  ".join(f"[{k}] {TYPE_NAME[t] if t >= 0 else '-'}" for k, t in enumerate(self.market))
        )
        lines.append(f"draw pile ({len(self.pile)}, top last): " + " ".join(TYPE_NAME[t] for t in self.pile))
        lines.append(f"discard ({len(self.discard)}): " + " ".join(TYPE_NAME[t] for t in self.discard))
        lines.append(f"simple rituals (top last): {self.simple}")
        lines.append(f"advanced rituals (top last): {self.advanced}")
        for p in range(self.n):
            x = EXALTATIONS[self.exalt[p]]
            lines.append(
                f"seat {p}: {DEITIES[self.deity[p]].name} "
                f"(power {'used' if self.power_used[p] else 'available'}),"
                f" exaltation {x.name}, ritual Ankhs {self.ankhs[p]}"
            )
            lines.append("    hand: " + (", ".join(TYPE_NAME[t] for t in sorted(self.hands[p])) or "(empty)"))
            for k, rid in enumerate(self.slots[p]):
                lines.append(f"    s{k}: {ritual_text(rid)}")
            if self.completed[p]:
                lines.append(
                    "    completed: "
                    + ", ".join(f"{RITUALS[c // 2].name} ({PRINCIPLES[c % 2]})" for c in self.completed[p])
                )
            if self.broken[p]:
                lines.append("    broken: " + ", ".join(TYPE_NAME[t] for t in sorted(self.broken[p])))
        if self.phase in (BREAK, REFILL):
            lines.append(
                f"casting s{self.cast_slot} on "
                + "+".join(cell_name(c) for c in cells_of(self.cast_set))
                + f": {self.cast_left} break(s) left"
            )
        return "\n".join(lines)

    def serialize(self) -> str:
        from engine.osirium.codec import encode

        return encode(self)

    @classmethod
    def deserialize(cls, game: Any, data: str) -> OsiriumState:
        """A state from :meth:`serialize`'s text (``osirium:3:``, or an earlier release's
        ``osirium:2:`` or ``osirium:1:``), validated; :class:`StateFormatError` otherwise."""
        from engine.osirium.codec import decode

        return decode(game, data)

    def _derive_board(self) -> None:
        self.arrows = [0] * CELLS
        self.colmask = [0] * len(COLOURS)
        self.occ = 0
        for c in range(CELLS):
            t = self.board_t[c]
            if t >= 0:
                self.arrows[c] = TYPE_ARROWS[t][self.board_r[c]]
                self.occ |= 1 << c
                self.colmask[TYPE_COLOUR[t]] |= 1 << c
        self.links = all_links(self.arrows)

    def _amulet_problem(self) -> str:
        """Why the amulets are not the 60 of the game (for :meth:`validate`'s message)."""
        counts = [0] * NUM_TYPES
        zones: list[tuple[str, list[int]]] = [
            ("pile", self.pile),
            ("discard", self.discard),
            ("market", [t for t in self.market if t != -1]),
        ]
        zones += [(f"hand {p}", h) for p, h in enumerate(self.hands)]
        zones += [(f"broken pile {p}", b) for p, b in enumerate(self.broken)]
        zones.append(("board", [t for t in self.board_t if t != -1]))
        for name, cards in zones:
            if cards and not (min(cards) >= 0 and max(cards) < NUM_TYPES):
                return f"unknown amulet type in {name}: {cards}"
            for t in cards:
                counts[t] += 1
        diff = [
            f"{TYPE_NAME[t]} {counts[t]}/{TYPE_COUNT[t]}"
            for t in range(NUM_TYPES)
            if counts[t] != TYPE_COUNT[t]
        ]
        return f"amulets not accounted for: {', '.join(diff)}"

    def validate(self, *, derived: bool = True) -> None:
        """Check every invariant; :class:`StateFormatError` names the first broken.
        ``derived=False`` skips comparing the board masks with the board (for a state whose
        masks were just computed from it, as decoding does)."""

        def bad(msg: str) -> StateFormatError:
            return StateFormatError(f"osirium: invalid state: {msg}")

        n = self.n
        if not 2 <= n <= 4:
            raise bad(f"player count {n}")
        if self.team_play and n != 4:
            raise bad("teams need 4 players")
        if sorted(self.deity) != sorted(set(self.deity)) or not all(
            0 <= d < len(DEITIES) for d in self.deity
        ):
            raise bad(f"deities {self.deity} must be distinct deity ids")
        # Amulets: 60 accounted for, by type. Fast check: every zone's types counted in C;
        # the only entries outside the 20 types may be the -1 of empty market slots and
        # board cells. On failure, _amulet_problem says what is wrong.
        every = self.pile + self.discard + self.market + self.board_t
        for cards in self.hands:
            every += cards
        for cards in self.broken:
            every += cards
        empty = self.market.count(-1) + self.board_t.count(-1)
        if len(every) != _NUM_AMULETS + empty or [every.count(t) for t in range(NUM_TYPES)] != _TYPE_COUNTS:
            raise bad(self._amulet_problem())
        # Board: one amulet per cell, canonical rotations, derived masks.
        occ = 0
        for c in range(CELLS):
            t = self.board_t[c]
            if t >= 0:
                r = self.board_r[c]
                if not 0 <= r < 4 or CANON_OF[t][r] != r:
                    raise bad(f"rotation {r} on {cell_name(c)} is not canonical")
                occ |= 1 << c
                if derived and self.arrows[c] != TYPE_ARROWS[t][r]:
                    raise bad(f"arrows of {cell_name(c)} out of date")
            elif self.board_r[c] != 0 or (derived and self.arrows[c] != 0):
                raise bad(f"empty cell {cell_name(c)} has a rotation or arrows")
        if derived and (occ != self.occ or self.links != all_links(self.arrows)):
            raise bad("board masks out of date")
        if any(t < -1 for t in self.market):
            raise bad("bad market slot")
        for p, h in enumerate(self.hands):
            # Only Bastet's extra card (O7) takes a hand above 4, and only to 5.
            if len(h) > HAND_SIZE and not (
                len(h) == HAND_SIZE + 1 and _POWER[self.deity[p]] == "market" and self.power_used[p]
            ):
                raise bad(f"seat {p} holds {len(h)} amulets")
        # Rituals: 40 accounted for.
        seen: list[int] = list(self.simple) + list(self.advanced)
        for p in range(n):
            if len(self.slots[p]) != RITUAL_SLOTS:
                raise bad(f"seat {p} must have {RITUAL_SLOTS} ritual slots")
            seen += [r for r in self.slots[p] if r != -1]
            seen += [c // 2 if c >= 0 else -1 for c in self.completed[p]]
        if sorted(seen) != list(range(_NUM_RITUALS)):
            raise bad("rituals not accounted for (each of the 40 exactly once)")
        if any(RITUALS[r].advanced for r in self.simple) or any(
            not RITUALS[r].advanced for r in self.advanced
        ):
            raise bad("a ritual is in the wrong pile")
        for p in range(n):
            if len(self.completed[p]) > RITUALS_TO_END:
                raise bad(f"seat {p} completed more than {RITUALS_TO_END} rituals")
            expect = sum(RITUALS[c // 2].ankhs(c % 2) for c in self.completed[p])
            if self.ankhs[p] != expect:
                raise bad(f"seat {p} ritual Ankhs {self.ankhs[p]} != {expect}")
        if len(set(self.exalt)) != n or not all(0 <= x < _NUM_EXALTATIONS for x in self.exalt):
            raise bad("exaltations must be distinct ids")
        # Turn and phase.
        if not 0 <= self.cur < n:
            raise bad(f"current seat {self.cur}")
        if not 1 <= self.round <= MAX_ROUNDS:
            raise bad(f"round {self.round}")
        if not 0 <= self.phase <= OVER:
            raise bad(f"phase {self.phase}")
        if not -1 <= self.ended_by < n:
            raise bad(f"ended_by {self.ended_by}")
        ph = self.phase
        hand = self.hands[self.cur]
        five = [p for p in range(n) if len(self.completed[p]) >= RITUALS_TO_END]
        in_cast = ph in (BREAK, REFILL)
        if in_cast:
            if not (
                0 <= self.cast_slot < RITUAL_SLOTS
                and 0 < self.cast_set <= FULL
                and self.slots[self.cur][self.cast_slot] == -1
                and self.started
                and -1 <= self.cast_last < CELLS
            ):
                raise bad("inconsistent cast in progress")
        elif (self.cast_slot, self.cast_set, self.cast_left, self.cast_last) != (-1, 0, 0, -1):
            raise bad("cast fields set outside a cast")
        if ph != PLACE and self.clear_cell != -1:
            raise bad("clear cell set outside the place-after-clear step")
        if ph == OVER:
            if self.started or self.placed:
                raise bad("turn flags set after the end")
            if self.ended_by >= 0:
                if five != [self.ended_by]:
                    raise bad("the game ended by a 5th ritual that is not there")
            elif five or not (self.round == MAX_ROUNDS and self.cur == n - 1):
                raise bad("the game is over without a 5th ritual or the round limit")
            return
        if self.ended_by != -1:
            raise bad("ended_by set before the end")
        if five and not (ph == BREAK and five == [self.cur]):
            raise bad("a 5th ritual is completed but the game goes on")
        if ph == MAIN:
            if self.placed and not self.started:
                raise bad("placed but not started")
        elif ph == PLACE:
            if not (
                0 <= self.clear_cell < CELLS
                and not self.occ & (1 << self.clear_cell)
                and self.occ | (1 << self.clear_cell) == FULL
                and hand
                and not self.placed
                and self.started
            ):
                raise bad("inconsistent place-after-clear step")
        elif ph == DRAW:
            if not (
                self.placed
                and len(hand) < HAND_SIZE
                and (self.pile or self.discard or any(m >= 0 for m in self.market))
            ):
                raise bad("inconsistent draw step")
        elif ph == BREAK:
            if self.cast_left <= 0:
                raise bad("break step with no break left")
            above = self.cast_set & (_HIGHER[self.cast_last] if self.cast_last >= 0 else FULL)
            if above & ~self.occ:
                raise bad("the cast set is not on the board")
            if not self.legal_actions():
                raise bad("break step with no amulet to break")
        elif ph == REFILL and (self.cast_left != 0 or not (self.simple or self.advanced)):
            raise bad("inconsistent refill step")


__all__ = ["BREAK", "DRAW", "MAIN", "OVER", "PLACE", "REFILL", "OsiriumState"]
