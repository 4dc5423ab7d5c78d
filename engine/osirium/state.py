"""The Osirium state: rules O2–O10 on the shared interface of :mod:`engine.core`.

Representation (all plain ints and lists, ``__slots__``, cheap to clone):

* amulets are handled by *type* (colour × pattern, :mod:`engine.osirium.board`): identical
  cards are interchangeable, so hands, piles and the market hold type ids;
* the board is ``cell_type``/``cell_rotation`` (type and canonical rotation per cell, -1 /
  0 when empty) plus derived bitmasks kept incrementally: ``cell_arrows``, ``occupied``
  (occupied cells), ``colour_cells`` (cells per colour) and ``links`` (24 edge bits, O4.1);
* rituals by id (:data:`engine.osirium.cards.RITUALS`): ``ritual_slots`` per seat (-1
  empty), ``simple_rituals`` / ``advanced_rituals`` piles (top last), ``completed`` rituals
  as ``id * 2 + principle``;
* a cast in progress (O5.3, O5.5): ``cast_slot``, ``cast_cells`` (cell mask),
  ``breaks_left`` and ``last_broken`` (breaks go in ascending cell order).

:meth:`OsiriumState.apply` dispatches on the action's id block to one handler per kind of
action; every handler takes ``events``: a list to append :class:`~engine.core.Event` values
to (the validated path, :meth:`~engine.core.State.apply_action`), or ``None`` on the fast
path, where no event is built.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Sequence
from typing import Final, Self

from engine.bits import popcount
from engine.core import (
    TERMINAL,
    Event,
    IllegalActionError,
    Outcome,
    State,
)
from engine.osirium import actions as A
from engine.osirium import invariants
from engine.osirium.board import (
    CANON_OF,
    CANON_ROTS,
    CELLS,
    FULL,
    NUM_TYPES,
    RITUAL_SIG,
    SIZE,
    TYPE_ARROWS,
    TYPE_COLOUR,
    TYPE_COUNT,
    TYPE_NAME,
    TYPE_OTYPES,
    board_masks,
    cell_name,
    cell_tuple,
    cells_of,
    connected_sets,
    placed_links,
    removed_links,
    set_signature,
    sets_by_signature,
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
    PRINCIPLES,
    RITUAL_SLOTS,
    RITUALS,
    RITUALS_TO_END,
    Exaltation,
    ExaltationKind,
    Power,
    Principle,
)
from engine.osirium.flow import Phase, Reason
from engine.osirium.view import (
    EMPTY_SLOT,
    HIDDEN_ADVANCED,
    HIDDEN_SIMPLE,
    OsiriumView,
    render_board,
    ritual_text,
)
from engine.rng import Rng, SerialRng


class EventKind(enum.StrEnum):
    """``Event.kind`` of Osirium's events."""

    PASS = "pass"  # O3.5
    PLACE = "place"  # O3.1
    CLEAR = "clear"  # O3.1a
    DRAW = "draw"  # O3.2 (public: where from)
    DRAW_CARD = "draw_card"  # O3.2, O3.5 (private: which card)
    DRAW_SKIPPED = "draw_skipped"  # O3.2
    RESHUFFLE = "reshuffle"  # O3.6
    MARKET_REFILL = "market_refill"  # O3.6
    MARKET_EMPTY = "market_empty"  # O3.6
    CAST = "cast"  # O5.1
    ANKHS = "ankhs"  # O5.2
    BREAK = "break"  # O5.3
    REFILL = "refill"  # O5.5 (public)
    REFILL_CARD = "refill_card"  # O5.5 (private: a face-down ritual)
    REFILL_SKIPPED = "refill_skipped"  # O5.5
    POWER = "power"  # O7
    END_TURN = "end_turn"  # O3.4
    TURN = "turn"  # O3
    GAME_END = "game_end"  # O8.1
    SCORING_LINE = "scoring_line"  # O8.2
    WIN = "win"  # O8.3


# The phases as module constants: the hot paths compare them by identity.
MAIN: Final = Phase.MAIN
PLACE: Final = Phase.PLACE
DRAW: Final = Phase.DRAW
BREAK: Final = Phase.BREAK
REFILL: Final = Phase.REFILL
OVER: Final = Phase.OVER
#: The phases in the order of their numbers in the state text (``ph=<n>``).
PHASES: Final[tuple[Phase, ...]] = tuple(Phase)

_POWER: Final = {d.id: d.power for d in DEITIES}
#: A view's (ritual id, principle) by the state's ``completed`` entry (``id * 2 + principle``).
_COMPLETED: Final[tuple[tuple[int, Principle], ...]] = tuple(
    (c // 2, Principle(c % 2)) for c in range(2 * len(RITUALS))
)
# Module constants for the hot paths (an enum member read off its class costs ~70 ns in 3.11).
_ANUBIS, _BASTET, _SETH, _ISIS = Power.BREAK, Power.MARKET, Power.ROTATE, Power.MOVE
_HIGHER: Final[tuple[int, ...]] = tuple(FULL & ~((2 << c) - 1) for c in range(CELLS))
_NUM_EXALTATIONS: Final = len(EXALTATIONS)
#: An index past the end of any list of legal actions: OsiriumState._find then counts them
#: (small enough to stay a machine integer in the compiled build).
_PAST_END: Final = 1 << 30
#: Amulets of each ritual (O5.1), by id.
RITUAL_SIZE: Final[tuple[int, ...]] = tuple(r.size for r in RITUALS)
#: Each ritual's (colour, amulets of that colour) for the colours it requires (O5.1).
_RITUAL_NEEDS: Final[tuple[tuple[tuple[int, int], ...], ...]] = tuple(
    tuple((c, k) for c, k in enumerate(r.requirement) if k) for r in RITUALS
)
assert RITUAL_SLOTS == 3  # OsiriumState.num_cast_actions unrolls the slots


def _ritual_filter(rid: int, colour_cells: list[int]) -> tuple[int, int, int]:
    """For counting the sets that match ritual ``rid`` (O5.1): its size, the cells of its
    colours and its colour signature; size -1 when no set can match (no ritual in the slot,
    or fewer amulets of one of its colours on the board than it needs)."""
    if rid < 0:
        return -1, 0, 0
    allowed = 0
    for c, k in _RITUAL_NEEDS[rid]:
        cells = colour_cells[c]
        if popcount(cells) < k:
            return -1, 0, 0
        allowed |= cells
    return RITUAL_SIZE[rid], allowed, RITUAL_SIG[rid]


def _cell_pair(c: int) -> tuple[int, int]:
    return divmod(c, SIZE)


class OsiriumState(State):
    """A position of Osirium (see the module docstring for the representation)."""

    __slots__ = (
        "_casts",
        "_outcome",
        "_sets_by_signature",
        "advanced_rituals",
        "ankhs",
        "breaks_left",
        "broken",
        "cast_cells",
        "cast_slot",
        "cell_arrows",
        "cell_rotation",
        "cell_type",
        "clear_cell",
        "colour_cells",
        "completed",
        "current",
        "deities",
        "discard",
        "draw_pile",
        "ended_by",
        "exaltations",
        "hands",
        "last_broken",
        "links",
        "market",
        "moves",
        "occupied",
        "phase",
        "placed",
        "player_count",
        "powers_used",
        "ritual_slots",
        "rng",
        "round",
        "simple_rituals",
        "started",
        "team_play",
    )

    player_count: int
    team_play: bool
    deities: list[int]
    powers_used: list[bool]
    cell_type: list[int]
    cell_rotation: list[int]
    cell_arrows: list[int]
    colour_cells: list[int]
    occupied: int
    links: int
    hands: list[list[int]]
    draw_pile: list[int]
    discard: list[int]
    market: list[int]
    broken: list[list[int]]
    ritual_slots: list[list[int]]
    completed: list[list[int]]
    ankhs: list[int]
    exaltations: list[int]
    simple_rituals: list[int]
    advanced_rituals: list[int]
    phase: Phase
    current: int
    round: int
    started: bool
    placed: bool
    clear_cell: int
    cast_cells: int
    breaks_left: int
    last_broken: int
    cast_slot: int
    ended_by: int
    rng: SerialRng
    moves: int
    _sets_by_signature: dict[int, list[int]] | None
    #: num_cast_actions of this decision, -1: not counted yet (reset by every action).
    _casts: int
    _outcome: Outcome | None

    # ------------------------------------------------------------------------------
    # Creation (O2)
    # ------------------------------------------------------------------------------

    @classmethod
    def new(cls, num_players: int, rng: SerialRng, deities: Sequence[int], teams: bool) -> OsiriumState:
        s = cls()
        s.player_count = n = num_players
        s.team_play = teams
        s.deities = list(deities)  # O2.1
        s.powers_used = [False] * n
        s.cell_type = [-1] * CELLS
        s.cell_rotation = [0] * CELLS
        s.cell_arrows = [0] * CELLS
        s.colour_cells = [0] * len(COLOURS)
        s.occupied = 0
        s.links = 0
        s.rng = rng
        # O2.2: shuffle the amulets, 4 to each hand, 4 face up to the market.
        pile = [t for t in range(NUM_TYPES) for _ in range(TYPE_COUNT[t])]
        rng.shuffle(pile)
        s.hands = [[pile.pop() for _ in range(HAND_SIZE)] for _ in range(n)]
        s.market = [pile.pop() for _ in range(MARKET_SIZE)]
        s.draw_pile = pile
        s.discard = []
        s.broken = [[] for _ in range(n)]
        # O2.3: two ritual piles; 3 simple rituals per player (slot 2 face down).
        simple = [r.id for r in RITUALS if not r.advanced]
        advanced = [r.id for r in RITUALS if r.advanced]
        rng.shuffle(simple)
        rng.shuffle(advanced)
        s.ritual_slots = [[simple.pop() for _ in range(RITUAL_SLOTS)] for _ in range(n)]
        s.simple_rituals = simple
        s.advanced_rituals = advanced
        s.completed = [[] for _ in range(n)]
        s.ankhs = [0] * n  # O2.5
        # O2.4: one secret exaltation each.
        ex = list(range(_NUM_EXALTATIONS))
        rng.shuffle(ex)
        s.exaltations = ex[:n]
        s.phase = MAIN
        s.current = 0  # O1.1: seat 0 plays first
        s.round = 1
        s.moves = 0
        s.started = False
        s.placed = False
        s.clear_cell = -1
        s.cast_cells = 0
        s.breaks_left = 0
        s.last_broken = -1
        s.cast_slot = -1
        s.ended_by = -1
        s._sets_by_signature = None
        s._casts = -1
        s._outcome = None
        return s

    def clone(self) -> Self:
        return self._copy(self.rng.clone())

    def _copy(self, rng: SerialRng) -> Self:
        """A copy of the state with ``rng`` as its chance (a sampled world replaces the
        chance: it does not pay for a copy of the game's)."""
        s = type(self)()
        s.player_count = self.player_count
        s.team_play = self.team_play
        s.deities = self.deities  # never mutated
        s.powers_used = self.powers_used[:]
        s.cell_type = self.cell_type[:]
        s.cell_rotation = self.cell_rotation[:]
        s.cell_arrows = self.cell_arrows[:]
        s.colour_cells = self.colour_cells[:]
        s.occupied = self.occupied
        s.links = self.links
        s.hands = [h[:] for h in self.hands]
        s.draw_pile = self.draw_pile[:]
        s.discard = self.discard[:]
        s.market = self.market[:]
        s.broken = [b[:] for b in self.broken]
        s.ritual_slots = [x[:] for x in self.ritual_slots]
        s.completed = [c[:] for c in self.completed]
        s.ankhs = self.ankhs[:]
        s.exaltations = self.exaltations[:]
        s.simple_rituals = self.simple_rituals[:]
        s.advanced_rituals = self.advanced_rituals[:]
        s.phase = self.phase
        s.current = self.current
        s.round = self.round
        s.moves = self.moves
        s.started = self.started
        s.placed = self.placed
        s.clear_cell = self.clear_cell
        s.cast_cells = self.cast_cells
        s.breaks_left = self.breaks_left
        s.last_broken = self.last_broken
        s.cast_slot = self.cast_slot
        s.ended_by = self.ended_by
        s.rng = rng
        s._sets_by_signature = self._sets_by_signature  # shared, never mutated
        s._casts = -1  # a sampled world changes other seats' rituals after cloning
        s._outcome = self._outcome
        return s

    # ------------------------------------------------------------------------------
    # Who, what
    # ------------------------------------------------------------------------------

    @property
    def num_players(self) -> int:
        return self.player_count

    def current_player(self) -> int:
        return TERMINAL if self.phase is OVER else self.current

    def move_number(self) -> int:
        return self.moves

    def decision(self) -> Phase:
        return self.phase

    def round_number(self) -> int:
        return self.round

    def teams(self) -> tuple[int, ...]:
        if self.team_play:
            return tuple(p % 2 for p in range(self.player_count))  # O9.3: seats 0, 2 vs 1, 3
        return tuple(range(self.player_count))

    # ------------------------------------------------------------------------------
    # Board helpers (O4)
    # ------------------------------------------------------------------------------

    def _put(self, cell: int, t: int, rot: int) -> None:
        self.cell_type[cell] = t
        self.cell_rotation[cell] = rot
        self.cell_arrows[cell] = TYPE_ARROWS[t][rot]
        bit = 1 << cell
        self.occupied |= bit
        self.colour_cells[TYPE_COLOUR[t]] |= bit
        self.links = placed_links(self.cell_arrows, self.links, cell)
        self._sets_by_signature = None

    def _take(self, cell: int) -> int:
        t = self.cell_type[cell]
        self.cell_type[cell] = -1
        self.cell_rotation[cell] = 0
        self.cell_arrows[cell] = 0
        bit = 1 << cell
        self.occupied &= ~bit
        self.colour_cells[TYPE_COLOUR[t]] &= ~bit
        self.links = removed_links(self.links, cell)
        self._sets_by_signature = None
        return t

    def sets_by_signature(self) -> dict[int, list[int]]:
        """The board's connected sets (O4.2) by colour signature
        (:func:`engine.osirium.board.sets_by_signature`); cached until the board changes.
        The caller must not modify the result."""
        d = self._sets_by_signature
        if d is None:
            d = self._sets_by_signature = sets_by_signature(self.links, self.colour_cells)
        return d

    def castable(self, slot: int) -> list[int]:
        """Cell masks of every set matching the ritual in ``slot`` of the current player."""
        rid = self.ritual_slots[self.current][slot]
        if rid < 0:
            return []
        return list(self.sets_by_signature().get(RITUAL_SIG[rid], ()))

    def can_cast(self, ritual: int) -> bool:
        """Whether a set on the board matches ``ritual``'s colours (O5.1), whoever holds it."""
        return bool(self.links) and RITUAL_SIG[ritual] in self.sets_by_signature()

    # ------------------------------------------------------------------------------
    # Legal actions (O10)
    # ------------------------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        ph = self.phase
        if ph is MAIN:
            return self._main_actions()
        if ph is DRAW:
            out = [A.DRAW + k for k in range(MARKET_SIZE) if self.market[k] >= 0]
            if self.draw_pile or self.discard:
                out.append(A.DRAW_PILE)
            return out
        if ph is BREAK:
            left = self.breaks_left - 1
            s = self.cast_cells
            last = self.last_broken
            return [A.BREAK + c for c in cells_of(s) if c > last and popcount(s & _HIGHER[c]) >= left]
        if ph is REFILL:
            out = []
            if self.simple_rituals:
                out.append(A.REFILL)
            if self.advanced_rituals:
                out.append(A.REFILL + 1)
            return out
        if ph is PLACE:
            c = self.clear_cell
            return [
                A.PLACE + ot * CELLS + c
                for t in sorted(set(self.hands[self.current]))
                for ot in TYPE_OTYPES[t]
            ]
        return []

    def _main_actions(self) -> list[int]:
        p = self.current
        hand = self.hands[p]
        out: list[int] = []
        if not self.started:
            out.append(A.PASS)  # O3.5: only as the first thing
        if self.placed or not hand:
            out.append(A.END)  # O3.4
        occ = self.occupied
        full = occ == FULL
        can_place = hand and not self.placed
        if can_place and full:
            out.extend(range(A.CLEAR, A.CLEAR + CELLS))  # O3.1a
        if not self.powers_used[p]:  # O7
            power = _POWER[self.deities[p]]
            if power is _ANUBIS:
                out += [A.ANUBIS + c for c in cell_tuple(occ)]
            elif power is _BASTET:
                out += [A.BASTET + k for k in range(MARKET_SIZE) if self.market[k] >= 0]
            elif power is _SETH:
                arrows = self.cell_arrows
                board_t = self.cell_type
                for c in cell_tuple(occ):
                    t = board_t[c]
                    ta = TYPE_ARROWS[t]
                    a = arrows[c]
                    base = A.SETH + c * 4
                    out += [base + r for r in CANON_ROTS[t] if ta[r] != a]
            elif power is _ISIS and occ and not full:
                empty4 = [c * 4 for c in cell_tuple(FULL & ~occ)]
                board_t = self.cell_type
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
            sets = self.sets_by_signature()
            if sets:
                slots = self.ritual_slots[p]
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

    # Counting and indexing the legal actions without the list: a rollout draws one
    # action by its index (engine.core.playout), and in the main phase the list is long
    # (up to a few hundred ids, each boxed). One walk over the blocks of legal_actions, in
    # its order, does both (_find); the conformance suite and
    # tests/engine/osirium/test_osirium_legal_index.py check it against the list.

    def num_legal_actions(self) -> int:
        if self.phase is REFILL or self.phase is OVER:
            return len(self.legal_actions())
        return -1 - self._find(_PAST_END)

    def legal_action_at(self, index: int) -> int:
        if self.phase is REFILL or self.phase is OVER:
            legal = self.legal_actions()
            if not 0 <= index < len(legal):
                raise IndexError(f"osirium: legal action index {index} out of range")
            return legal[index]
        a = self._find(index) if index >= 0 else -1
        if a < 0:
            raise IndexError(f"osirium: legal action index {index} out of range")
        return a

    def _find(self, k: int) -> int:
        """The ``k``-th legal action (``k >= 0``) of the draw, break, place or main phase,
        or ``-1 - n`` when there are only ``n <= k``."""
        n = 0  # the actions walked past
        ph = self.phase
        if ph is DRAW:
            found = self._find_market(A.DRAW, k)
            if found >= 0:
                return found
            n = -1 - found
            if self.draw_pile or self.discard:
                if k == n:
                    return A.DRAW_PILE
                n += 1
            return -1 - n
        if ph is BREAK:
            left = self.breaks_left - 1
            s = self.cast_cells
            last = self.last_broken
            for c in cell_tuple(s):
                if c > last and popcount(s & _HIGHER[c]) >= left:
                    if k == n:
                        return A.BREAK + c
                    n += 1
            return -1 - n
        p = self.current
        hand = self.hands[p]
        types = 0
        for t in hand:
            types |= 1 << t
        if ph is PLACE:
            for t in range(NUM_TYPES):
                if types >> t & 1:
                    ots = TYPE_OTYPES[t]
                    if k < n + len(ots):
                        return A.PLACE + ots[k - n] * CELLS + self.clear_cell
                    n += len(ots)
            return -1 - n
        # The main phase (O3), in the order of _main_actions.
        if not self.started:
            if k == n:
                return A.PASS
            n += 1
        if self.placed or not hand:
            if k == n:
                return A.END
            n += 1
        occ = self.occupied
        full = occ == FULL
        can_place = hand and not self.placed
        if can_place and full:
            if k < n + CELLS:
                return A.CLEAR + k - n
            n += CELLS
        if not self.powers_used[p]:
            found = self._find_power(p, occ, k - n)
            if found >= 0:
                return found
            n += -1 - found
        if can_place and not full:
            empty = CELLS - popcount(occ)
            for t in range(NUM_TYPES):
                if types >> t & 1:
                    ots = TYPE_OTYPES[t]
                    m = len(ots) * empty
                    if k < n + m:
                        i = k - n
                        return A.PLACE + ots[i // empty] * CELLS + cell_tuple(FULL & ~occ)[i % empty]
                    n += m
        casts = self.num_cast_actions()
        if k < n + casts:
            i = k - n
            sets = self.sets_by_signature()
            slots = self.ritual_slots[p]
            for j in range(RITUAL_SLOTS):
                rid = slots[j]
                if rid >= 0:
                    ms = sets.get(RITUAL_SIG[rid])
                    if ms:
                        m = len(ms)
                        if i < 2 * m:
                            base = A.CAST + j * 2 * A.MASKS - 1
                            return base + ms[i] if i < m else base + A.MASKS + ms[i - m]
                        i -= 2 * m
        return -1 - (n + casts)

    def num_cast_actions(self) -> int:
        """How many of the legal actions are casts (O5.1): the last ones, cast ids being
        the highest. Zero outside the main phase."""
        if self.phase is not MAIN or not self.links:
            return 0
        n = self._casts
        if n >= 0:
            return n
        n = 0
        slots = self.ritual_slots[self.current]
        sets = self._sets_by_signature
        if sets is not None:
            for rid in slots:
                if rid >= 0:
                    ms = sets.get(RITUAL_SIG[rid])
                    if ms:
                        n += 2 * len(ms)
            self._casts = n
            return n
        # Not grouped yet (a rollout's board changes every turn): count the matching sets
        # of the held rituals only (O5.1: exactly the ritual's colours, so its number of
        # amulets, on cells of its colours only), skipping a ritual whose colours the board
        # does not hold enough of. Three slots (RITUAL_SLOTS), unrolled: no allocation.
        colour_cells = self.colour_cells
        size0, allowed0, sig0 = _ritual_filter(slots[0], colour_cells)
        size1, allowed1, sig1 = _ritual_filter(slots[1], colour_cells)
        size2, allowed2, sig2 = _ritual_filter(slots[2], colour_cells)
        if size0 < 0 and size1 < 0 and size2 < 0:
            self._casts = 0
            return 0
        for m in connected_sets(self.links):
            size = popcount(m)
            if size == size0 and not m & ~allowed0 and set_signature(m, colour_cells) == sig0:
                n += 2
            if size == size1 and not m & ~allowed1 and set_signature(m, colour_cells) == sig1:
                n += 2
            if size == size2 and not m & ~allowed2 and set_signature(m, colour_cells) == sig2:
                n += 2
        self._casts = n
        return n

    def _find_market(self, base: int, k: int) -> int:
        """The ``k``-th action ``base + j`` over the market's filled slots ``j`` (a draw,
        Bastet's take), or ``-1 - n`` when there are only ``n <= k``."""
        market = self.market
        n = 0
        for j in range(MARKET_SIZE):
            if market[j] >= 0:
                if k == n:
                    return base + j
                n += 1
        return -1 - n

    def _find_power(self, p: int, occ: int, k: int) -> int:
        """The ``k``-th action of seat ``p``'s power block (O7), or ``-1 - n`` when the
        block has only ``n <= k``."""
        power = _POWER[self.deities[p]]
        if power is _ANUBIS:
            n = popcount(occ)
            return A.ANUBIS + cell_tuple(occ)[k] if k < n else -1 - n
        if power is _BASTET:
            return self._find_market(A.BASTET, k)
        n = 0
        board_t = self.cell_type
        if power is _SETH:
            arrows = self.cell_arrows
            for c in cell_tuple(occ):
                t = board_t[c]
                ta = TYPE_ARROWS[t]
                a = arrows[c]
                for r in CANON_ROTS[t]:
                    if ta[r] != a:
                        if k == n:
                            return A.SETH + c * 4 + r
                        n += 1
            return -1 - n
        if power is _ISIS and occ and occ != FULL:
            empties = cell_tuple(FULL & ~occ)
            empty = len(empties)
            for src in cell_tuple(occ):
                rots = CANON_ROTS[board_t[src]]
                m = len(rots) * empty
                if k < n + m:
                    d, r = divmod(k - n, len(rots))
                    return A.ISIS + src * CELLS * 4 + empties[d] * 4 + rots[r]
                n += m
        return -1 - n

    # ------------------------------------------------------------------------------
    # Applying actions
    # ------------------------------------------------------------------------------

    def apply(self, action: int, events: list[Event] | None = None) -> None:
        self.moves += 1
        self._casts = -1
        # Action id blocks (engine.osirium.actions), the most frequent in playouts first.
        p = self.current
        if action >= A.PLACE:
            if action >= A.CAST:
                self._cast(p, action, events)
            else:
                self._place(p, action, events)
        elif action < A.BREAK:
            if action == A.END:
                self._end(p, events)
            elif action == A.PASS:
                self._pass(p, events)
            elif action < A.DRAW:
                self._refill(p, action - A.REFILL, events)
            else:
                self._draw(p, action - A.DRAW, events)
        elif action < A.CLEAR:
            self._break(p, action - A.BREAK, events)
        elif action < A.ANUBIS:
            self._clear(p, action - A.CLEAR, events)
        else:
            self._power(p, action, events)

    # --- piles (O3.6) -------------------------------------------------------------

    def _pile_card(self, events: list[Event] | None) -> int:
        """Top card of the draw pile, reshuffling the discard first if needed; -1 if none."""
        pile = self.draw_pile
        if not pile:
            if not self.discard:
                return -1
            pile.extend(self.discard)
            self.discard.clear()
            self.rng.shuffle(pile)
            if events is not None:
                events.append(
                    Event(
                        EventKind.RESHUFFLE,
                        f"the discard pile ({len(pile)} cards) is shuffled into a new draw pile",
                        None,
                        {"cards": len(pile)},
                    )
                )
        return pile.pop()

    def _refill_market(self, k: int, events: list[Event] | None) -> None:
        t = self._pile_card(events)
        self.market[k] = t
        if events is not None:
            if t >= 0:
                events.append(
                    Event(
                        EventKind.MARKET_REFILL,
                        f"market{k} is refilled with {TYPE_NAME[t]}",
                        None,
                        {"slot": k, "card": TYPE_NAME[t]},
                    )
                )
            else:
                events.append(
                    Event(EventKind.MARKET_EMPTY, f"market{k} stays empty (no card left)", None, {"slot": k})
                )

    # --- place, clear, draw (O3.1, O3.1a, O3.2) -----------------------------------

    def _place(self, p: int, a: int, events: list[Event] | None) -> None:
        t, rot, cell = A.PLACEMENTS[a - A.PLACE]
        self.hands[p].remove(t)
        self._put(cell, t, rot)
        self.placed = True
        self.started = True
        self.clear_cell = -1
        if events is not None:
            events.append(
                Event(
                    EventKind.PLACE,
                    f"seat {p} places {TYPE_NAME[t]} on {cell_name(cell)} at r{rot * 90}",
                    p,
                    {"card": TYPE_NAME[t], "cell": _cell_pair(cell), "rotation": rot * 90},
                )
            )
        # O3.2: draw if the hand is short and a source holds a card; else skip the step.
        if len(self.hands[p]) < HAND_SIZE and (
            self.draw_pile or self.discard or any(m >= 0 for m in self.market)
        ):
            self.phase = DRAW
        else:
            self.phase = MAIN
            if events is not None and len(self.hands[p]) < HAND_SIZE:
                events.append(Event(EventKind.DRAW_SKIPPED, f"seat {p} cannot draw: no card left", p))

    def _clear(self, p: int, cell: int, events: list[Event] | None) -> None:
        t = self._take(cell)  # O3.1a: to the discard pile, not a broken pile
        self.discard.append(t)
        self.clear_cell = cell
        self.started = True
        self.phase = PLACE
        if events is not None:
            events.append(
                Event(
                    EventKind.CLEAR,
                    f"seat {p} clears {TYPE_NAME[t]} from {cell_name(cell)} (full board) to the discard",
                    p,
                    {"card": TYPE_NAME[t], "cell": _cell_pair(cell)},
                )
            )

    def _draw(self, p: int, k: int, events: list[Event] | None) -> None:
        hand = self.hands[p]
        if k == MARKET_SIZE:
            t = self._pile_card(events)
            hand.append(t)
            if events is not None:
                events.append(Event(EventKind.DRAW, f"seat {p} draws from the pile", p, {"source": "pile"}))
                events.append(
                    Event(
                        EventKind.DRAW_CARD,
                        f"seat {p} draws {TYPE_NAME[t]}",
                        p,
                        {"card": TYPE_NAME[t]},
                        visible_to=(p,),
                    )
                )
        else:
            t = self.market[k]
            hand.append(t)
            if events is not None:
                events.append(
                    Event(
                        EventKind.DRAW,
                        f"seat {p} takes {TYPE_NAME[t]} from market{k}",
                        p,
                        {"source": "market", "slot": k, "card": TYPE_NAME[t]},
                    )
                )
            self._refill_market(k, events)
        self.phase = MAIN

    def _pass(self, p: int, events: list[Event] | None) -> None:
        # O3.5: discard the whole hand first, then draw 4 (reshuffle may include it).
        hand = self.hands[p]
        old = hand[:]
        self.discard.extend(hand)
        hand.clear()
        for _ in range(HAND_SIZE):
            t = self._pile_card(events)
            if t < 0:
                break
            hand.append(t)
        if events is not None:
            events.append(
                Event(
                    EventKind.PASS,
                    f"seat {p} passes, discards {len(old)} and draws {len(hand)} cards",
                    p,
                    {"discarded": tuple(sorted(TYPE_NAME[t] for t in old)), "drawn": len(hand)},
                )
            )
            events.append(
                Event(
                    EventKind.DRAW_CARD,
                    f"seat {p} draws {', '.join(TYPE_NAME[t] for t in hand) or 'nothing'}",
                    p,
                    {"cards": tuple(TYPE_NAME[t] for t in hand)},
                    visible_to=(p,),
                )
            )
        self._end_turn(events)

    # --- turns (O3, O8.4) ---------------------------------------------------------

    def _end(self, p: int, events: list[Event] | None) -> None:
        """O3.4: the player ends their turn."""
        if events is not None:
            events.append(Event(EventKind.END_TURN, f"seat {p} ends their turn", p))
        self._end_turn(events)

    def _end_turn(self, events: list[Event] | None) -> None:
        self.started = False
        self.placed = False
        self.clear_cell = -1
        self.phase = MAIN
        if self.current == self.player_count - 1:
            if self.round >= MAX_ROUNDS:  # O8.4: after the last seat's turn in round 100
                self._finish(events)
                return
            self.round += 1
        self.current = (self.current + 1) % self.player_count
        if events is not None:
            events.append(
                Event(
                    EventKind.TURN,
                    f"round {self.round}: seat {self.current} to play",
                    self.current,
                    {"round": self.round},
                )
            )

    # --- rituals (O5) -------------------------------------------------------------

    def _cast(self, p: int, a: int, events: list[Event] | None) -> None:
        slot, principle, mask = A.decode_cast(a)
        rid = self.ritual_slots[p][slot]
        r = RITUALS[rid]
        self.ritual_slots[p][slot] = -1  # O5.4: the slot is empty during breaks and refill
        self.completed[p].append(rid * 2 + principle)
        gain = r.chaos_ankhs if principle == CHAOS else r.order_ankhs
        self.ankhs[p] += gain  # O5.2
        breaks = min(r.chaos_breaks if principle == CHAOS else r.order_breaks, popcount(mask))
        self.started = True
        self.cast_cells = mask
        self.cast_slot = slot
        self.last_broken = -1
        self.breaks_left = breaks
        if events is not None:
            cells = tuple(_cell_pair(c) for c in cells_of(mask))
            events.append(
                Event(
                    EventKind.CAST,
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
            events.append(
                Event(
                    EventKind.ANKHS,
                    f"seat {p} scores {gain} Ankhs",
                    p,
                    {"ankhs": gain, "total": self.ankhs[p]},
                )
            )
        if breaks:
            self.phase = BREAK
        else:
            self._after_breaks(p, events)

    def _break(self, p: int, cell: int, events: list[Event] | None) -> None:
        t = self._take(cell)  # O5.3: to the caster's broken pile
        self.broken[p].append(t)
        self.last_broken = cell
        self.breaks_left -= 1
        if events is not None:
            events.append(
                Event(
                    EventKind.BREAK,
                    f"seat {p} breaks {TYPE_NAME[t]} on {cell_name(cell)}",
                    p,
                    {"card": TYPE_NAME[t], "cell": _cell_pair(cell)},
                )
            )
        if self.breaks_left == 0:
            self._after_breaks(p, events)

    def _after_breaks(self, p: int, events: list[Event] | None) -> None:
        if len(self.completed[p]) >= RITUALS_TO_END:  # O5.6 / O8.1: no refill
            self.ended_by = p
            self._finish(events)
            return
        if self.simple_rituals or self.advanced_rituals:
            self.phase = REFILL
        else:  # O5.5: both piles empty: the slot stays empty
            self._clear_cast()
            self.phase = MAIN
            if events is not None:
                events.append(
                    Event(EventKind.REFILL_SKIPPED, f"no ritual left: seat {p}'s slot stays empty", p)
                )

    def _clear_cast(self) -> None:
        self.cast_cells = 0
        self.breaks_left = 0
        self.last_broken = -1
        self.cast_slot = -1

    def _refill(self, p: int, deck: int, events: list[Event] | None) -> None:
        rid = (self.advanced_rituals if deck else self.simple_rituals).pop()  # O5.5
        slot = self.cast_slot
        self.ritual_slots[p][slot] = rid
        self._clear_cast()
        self.phase = MAIN
        if events is not None:
            if slot == HIDDEN_SLOT:
                events.append(
                    Event(
                        EventKind.REFILL,
                        f"seat {p} refills s{slot} face down from the {A.DECKS[deck]} pile",
                        p,
                        {"slot": slot, "deck": A.DECKS[deck]},
                    )
                )
                events.append(
                    Event(
                        EventKind.REFILL_CARD,
                        f"seat {p} takes {RITUALS[rid].name} (#{rid}) face down",
                        p,
                        {"slot": slot, "ritual": rid},
                        visible_to=(p,),
                    )
                )
            else:
                events.append(
                    Event(
                        EventKind.REFILL,
                        f"seat {p} refills s{slot} from the {A.DECKS[deck]} pile: "
                        f"{RITUALS[rid].name} (#{rid})",
                        p,
                        {"slot": slot, "deck": A.DECKS[deck], "ritual": rid},
                    )
                )

    # --- deity powers (O7) --------------------------------------------------------

    def _power(self, p: int, a: int, events: list[Event] | None) -> None:
        self.powers_used[p] = True
        self.started = True  # O7: no pass after using a power
        if a < A.BASTET:  # Anubis: break one amulet
            cell = a - A.ANUBIS
            t = self._take(cell)
            self.broken[p].append(t)
            if events is not None:
                events.append(
                    Event(
                        EventKind.POWER,
                        f"seat {p} (Anubis) breaks {TYPE_NAME[t]} on {cell_name(cell)}",
                        p,
                        {"deity": "anubis", "card": TYPE_NAME[t], "cell": _cell_pair(cell)},
                    )
                )
        elif a < A.SETH:  # Bastet: one more market card
            k = a - A.BASTET
            t = self.market[k]
            self.hands[p].append(t)
            if events is not None:
                events.append(
                    Event(
                        EventKind.POWER,
                        f"seat {p} (Bastet) takes {TYPE_NAME[t]} from market{k}",
                        p,
                        {"deity": "bastet", "card": TYPE_NAME[t], "slot": k},
                    )
                )
            self._refill_market(k, events)
        elif a < A.ISIS:  # Seth: rotate
            cell, rot = A.decode_seth(a)
            t = self.cell_type[cell]
            self._put(cell, t, rot)
            if events is not None:
                events.append(
                    Event(
                        EventKind.POWER,
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
            src, dst, rot = A.decode_isis(a)
            t = self._take(src)
            self._put(dst, t, rot)
            if events is not None:
                events.append(
                    Event(
                        EventKind.POWER,
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

    def exaltation_progress(self, p: int) -> float:
        """How much of seat ``p``'s exaltation condition holds now (O1.5), in [0, 1]; 1.0
        exactly when it is met (see :data:`_PROGRESS` for each kind of condition)."""
        x = EXALTATIONS[self.exaltations[p]]
        return _PROGRESS_BY_EXALTATION[x.id](self, p, x)

    def exaltation_progress_of(self, p: int, exaltation: int) -> float:
        """How much of exaltation ``exaltation``'s condition (O1.5) seat ``p``'s public record
        meets now (its completed rituals and their principles, its broken amulets, who ended
        the game), in [0, 1], whichever exaltation the seat holds."""
        x = EXALTATIONS[exaltation]
        return _PROGRESS_BY_EXALTATION[x.id](self, p, x)

    def exaltation_met(self, p: int) -> bool:
        """Whether seat ``p``'s exaltation condition holds now (O1.5, scored at the end)."""
        return self.exaltation_progress(p) >= 1.0

    def settle_outcome(self) -> None:
        """Compute the cached outcome of a decoded state (``None`` until the end)."""
        self._outcome = self._make_outcome() if self.phase is OVER else None

    def _final_scores(self) -> tuple[int, ...]:
        # O8.2: ritual Ankhs + exaltation + 1 per broken amulet.
        return tuple(
            self.ankhs[p]
            + (EXALTATIONS[self.exaltations[p]].ankhs if self.exaltation_met(p) else 0)
            + len(self.broken[p])
            for p in range(self.player_count)
        )

    def _make_outcome(self) -> Outcome:
        scores = self._final_scores()
        n = self.player_count
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
            reason = Reason.FIFTH_RITUAL
            how = f"seat {self.ended_by} completed a 5th ritual"
        else:
            reason = Reason.ROUND_LIMIT
            how = f"the {MAX_ROUNDS}-round limit was reached"
        pts = ", ".join(f"seat {p} {scores[p]}" for p in range(n))
        return Outcome(winners, reason, f"{how}; {winners_text} ({pts})", scores, returns)

    def _finish(self, events: list[Event] | None) -> None:
        self.phase = OVER
        self.cast_cells = 0
        self.breaks_left = 0
        self.last_broken = -1
        self.cast_slot = -1
        self.started = False
        self.placed = False
        self.clear_cell = -1
        out = self._outcome = self._make_outcome()
        if events is not None:
            events.append(
                Event(EventKind.GAME_END, out.text, None, {"reason": out.reason, "ended_by": self.ended_by})
            )
            for p in range(self.player_count):
                x = EXALTATIONS[self.exaltations[p]]
                met = self.exaltation_met(p)
                bonus = x.ankhs if met else 0
                events.append(
                    Event(
                        EventKind.SCORING_LINE,
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
            events.append(
                Event(EventKind.WIN, out.text, None, {"winners": out.winners, "returns": out.returns})
            )

    def scores(self) -> tuple[int, ...]:
        if self._outcome is not None:
            return self._outcome.scores
        # Public score so far: ritual Ankhs + broken amulets (never decreases).
        return tuple(self.ankhs[p] + len(self.broken[p]) for p in range(self.player_count))

    def returns(self) -> tuple[float, ...]:
        if self._outcome is None:
            return (0.0,) * self.player_count
        return self._outcome.returns

    def outcome(self) -> Outcome | None:
        return self._outcome

    # ------------------------------------------------------------------------------
    # Information (O6)
    # ------------------------------------------------------------------------------

    def view(self, player: int | None) -> OsiriumView:
        if player is not None and not (isinstance(player, int) and 0 <= player < self.player_count):
            raise IllegalActionError(f"osirium: no seat {player!r} in a {self.player_count}-player game")
        n = self.player_count
        over = self.phase is OVER
        rituals = []
        for q in range(n):
            row = []
            for k, rid in enumerate(self.ritual_slots[q]):
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
            deities=tuple(self.deities),
            powers_used=tuple(self.powers_used),
            current_player=self.current_player(),
            decision=self.phase,
            round=self.round,
            cell_types=tuple(self.cell_type),
            cell_rotations=tuple(self.cell_rotation),
            market=tuple(self.market),
            draw_pile_size=len(self.draw_pile),
            discard=tuple(sorted(self.discard)),
            hand_sizes=tuple(len(h) for h in self.hands),
            hand=None if player is None else tuple(sorted(self.hands[player])),
            rituals=tuple(rituals),
            completed=tuple(tuple(map(_COMPLETED.__getitem__, done)) for done in self.completed),
            broken=tuple(tuple(sorted(b)) for b in self.broken),
            ritual_ankhs=tuple(self.ankhs),
            exaltations=tuple(self.exaltations[q] if over or q == player else -1 for q in range(n)),
            simple_pile_size=len(self.simple_rituals),
            advanced_pile_size=len(self.advanced_rituals),
            started=self.started,
            placed=self.placed,
            clear_cell=self.clear_cell,
            cast=(self.cast_slot, self.cast_cells, self.breaks_left, self.last_broken)
            if self.cast_slot >= 0
            else (),
            scores=self.scores(),
            result=out.text if out is not None else "",
        )

    def sample_consistent_state(self, player: int, rng: random.Random) -> Self:
        if not (isinstance(player, int) and 0 <= player < self.player_count):
            raise IllegalActionError(f"osirium: no seat {player!r} in a {self.player_count}-player game")
        s = self._copy(self.rng)  # its chance is replaced below, before any use
        others = [q for q in range(self.player_count) if q != player]
        # Amulets: other hands + draw pile, re-dealt with the same sizes (O6.2, O6.3).
        # (Pools are sorted before shuffling so that the result depends on the view and
        # ``rng`` only, never on the hidden arrangement being replaced.)
        pool = list(s.draw_pile)
        for q in others:
            pool += s.hands[q]
        pool.sort()
        rng.shuffle(pool)
        i = 0
        for q in others:
            k = len(s.hands[q])
            s.hands[q] = pool[i : i + k]
            i += k
        s.draw_pile = pool[i:]
        # Rituals: other face-down slots + the piles, deck by deck (the deck of a face-down
        # ritual is public: it was chosen at the refill).
        for advanced in (False, True):
            pile = s.advanced_rituals if advanced else s.simple_rituals
            holders = [
                q
                for q in others
                if s.ritual_slots[q][HIDDEN_SLOT] >= 0
                and RITUALS[s.ritual_slots[q][HIDDEN_SLOT]].advanced == advanced
            ]
            rpool = sorted(pile + [s.ritual_slots[q][HIDDEN_SLOT] for q in holders])
            rng.shuffle(rpool)
            for q in holders:
                s.ritual_slots[q][HIDDEN_SLOT] = rpool.pop()
            if advanced:
                s.advanced_rituals = rpool
            else:
                s.simple_rituals = rpool
        # Exaltations: the others' are any of the ones the player does not hold (revealed at
        # the end, so kept then).
        if self.phase is not OVER:
            xpool = [x for x in range(_NUM_EXALTATIONS) if x != s.exaltations[player]]
            rng.shuffle(xpool)
            for q in others:
                s.exaltations[q] = xpool.pop()
        # The randomness to come (future reshuffles) is hidden too.
        s.rng = Rng.seeded(rng.getrandbits(64))
        return s

    def string_to_action(self, text: str) -> int:
        """Like the game's parser, but an Isis or Seth rotation that gives the same arrows
        as a lower one (for the amulet on that cell now) is read as the canonical one."""
        a = A.string_to_action(text)
        if A.SETH <= a < A.PLACE:
            if a < A.ISIS:
                cell, rot = A.decode_seth(a)
            else:
                cell, _, rot = A.decode_isis(a)
            base = a - rot
            t = self.cell_type[cell]
            if t >= 0:
                a = base + CANON_OF[t][rot]
        return a

    # ------------------------------------------------------------------------------
    # Text, serialization, validation
    # ------------------------------------------------------------------------------

    def to_text(self) -> str:
        teams = " (teams 0+2 vs 1+3)" if self.team_play else ""
        lines = [f"Osirium, {self.player_count} players{teams}, round {self.round}"]
        if self.phase is OVER:
            assert self._outcome is not None
            lines.append(f"game over: {self._outcome.text}")
        else:
            lines.append(
                f"to play: seat {self.current} ({self.decision()})"
                + (" [started]" if self.started else "")
                + (" [placed]" if self.placed else "")
            )
        lines.append(render_board([(self.cell_type[c], self.cell_rotation[c]) for c in range(CELLS)]))
        lines.append(
            "market: "
            + "  ".join(f"[{k}] {TYPE_NAME[t] if t >= 0 else '-'}" for k, t in enumerate(self.market))
        )
        lines.append(
            f"draw pile ({len(self.draw_pile)}, top last): " + " ".join(TYPE_NAME[t] for t in self.draw_pile)
        )
        lines.append(f"discard ({len(self.discard)}): " + " ".join(TYPE_NAME[t] for t in self.discard))
        lines.append(f"simple rituals (top last): {self.simple_rituals}")
        lines.append(f"advanced rituals (top last): {self.advanced_rituals}")
        for p in range(self.player_count):
            x = EXALTATIONS[self.exaltations[p]]
            lines.append(
                f"seat {p}: {DEITIES[self.deities[p]].name} "
                f"(power {'used' if self.powers_used[p] else 'available'}),"
                f" exaltation {x.name}, ritual Ankhs {self.ankhs[p]}"
            )
            lines.append("    hand: " + (", ".join(TYPE_NAME[t] for t in sorted(self.hands[p])) or "(empty)"))
            for k, rid in enumerate(self.ritual_slots[p]):
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
                + "+".join(cell_name(c) for c in cells_of(self.cast_cells))
                + f": {self.breaks_left} break(s) left"
            )
        return "\n".join(lines)

    def derive_board(self) -> None:
        """Recompute the board masks (arrows, occupied cells, colours, links) from the cells."""
        masks = board_masks(self.cell_type, self.cell_rotation)
        self.cell_arrows, self.colour_cells, self.occupied, self.links = masks
        self._sets_by_signature = None
        self._casts = -1

    def validate(self, *, derived: bool = True) -> None:
        """Check every invariant (:mod:`engine.osirium.invariants`); :class:`StateFormatError`
        names the first broken. ``derived=False`` skips comparing the board masks with the
        board (for a state whose masks were just computed from it, as decoding does)."""
        invariants.validate(self, derived=derived)


# ---------------------------------------------------------------------------------------
# Exaltation progress (O1.5), per kind of condition: the fraction of the condition's amount
# achieved (rituals by Order with none by Chaos, rituals by Chaos, broken amulets of the
# colour, advanced rituals), of the four colours broken, 0 or 1 for a ritual of the size;
# the last word is half the fraction of the five rituals until the 5th ends the game
# (someone else may end it first).
# ---------------------------------------------------------------------------------------


def _all_order(s: OsiriumState, p: int, x: Exaltation) -> float:
    done = s.completed[p]
    if any(c % 2 == CHAOS for c in done):
        return 0.0
    return min(1.0, len(done) / x.amount)


def _chaos(s: OsiriumState, p: int, x: Exaltation) -> float:
    return min(1.0, sum(1 for c in s.completed[p] if c % 2 == CHAOS) / x.amount)


def _broken_colour(s: OsiriumState, p: int, x: Exaltation) -> float:
    return min(1.0, sum(1 for t in s.broken[p] if TYPE_COLOUR[t] == x.colour) / x.amount)


def _broken_all_colours(s: OsiriumState, p: int, _x: Exaltation) -> float:
    return len({TYPE_COLOUR[t] for t in s.broken[p]}) / len(COLOURS)


def _advanced(s: OsiriumState, p: int, x: Exaltation) -> float:
    return min(1.0, sum(1 for c in s.completed[p] if RITUALS[c // 2].advanced) / x.amount)


def _ritual_size(s: OsiriumState, p: int, x: Exaltation) -> float:
    return 1.0 if any(RITUALS[c // 2].size >= x.amount for c in s.completed[p]) else 0.0


def _last_word(s: OsiriumState, p: int, _x: Exaltation) -> float:
    return 1.0 if s.ended_by == p else 0.5 * len(s.completed[p]) / RITUALS_TO_END


_PROGRESS: Final[dict[ExaltationKind, Callable[[OsiriumState, int, Exaltation], float]]] = {
    ExaltationKind.ALL_ORDER: _all_order,
    ExaltationKind.CHAOS: _chaos,
    ExaltationKind.BROKEN_COLOUR: _broken_colour,
    ExaltationKind.BROKEN_ALL_COLOURS: _broken_all_colours,
    ExaltationKind.ADVANCED: _advanced,
    ExaltationKind.RITUAL_SIZE: _ritual_size,
    ExaltationKind.LAST_WORD: _last_word,
}
#: The progress function of each exaltation, by id.
_PROGRESS_BY_EXALTATION: Final = tuple(_PROGRESS[x.kind] for x in EXALTATIONS)


__all__ = ["BREAK", "DRAW", "MAIN", "OVER", "PLACE", "REFILL", "EventKind", "OsiriumState", "Phase", "Reason"]
