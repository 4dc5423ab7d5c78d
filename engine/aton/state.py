"""The Aton state: rules A2–A11 on flat lists, built for fast playouts.

Representation (all plain lists and ints, ``__slots__``):

* ``board``: 48 ints, the owner (0/1) of each square or -1 (see :mod:`engine.aton.board`);
  ``owned``: derived from it and kept with it, each seat's squares as a 48-bit mask (bit
  ``i``: square ``i``), which the legal actions and the tally count in;
* per seat (lists of two): ``stock``, ``kingdom`` (counters of that owner in the Kingdom of
  the Dead), ``score``, ``tokens`` (exchange token held, A1.4), ``exchange_choice`` (the
  secret exchange decision while both decide, A3.2: -1 none, 0 keep, 1 exchange),
  ``exchanged`` (exchanged this round), ``revealed`` (cartouches revealed: 0, 1, 2 or 4);
* ``decks[p]``: card values, top of the deck LAST; ``hands[p]``: sorted values;
  ``discards[p]``: the discard pile as counts of values 1..4 (its order is irrelevant: it
  is only ever used by shuffling it, A3.1); ``cartouches[p]``: values on cartouches 1..4,
  0 = empty;
* the step: ``phase`` (the decision to take, :class:`Phase`), ``current`` (seat to decide,
  -1 when over), ``first_player`` (seat acting first this round, A5), ``acting_second``
  (0 while the first player acts, 1 while the second does, A6), ``remaining`` (removals or
  placements left), ``overflow`` (A6.3 overflow due after the last placement),
  ``removal_target`` (owner of the counters being removed), ``reset_first`` /
  ``reset_turn`` / ``reset_temple`` (A8.4 reset: who resets first, whose turn of the two,
  the temple 0-3 in question), ``war_cards`` (A5.3, this round);
* ``rng``: the game's chance (:class:`engine.rng.ChanceRng`; SplitMix64 in sampled worlds)
  for every shuffle.

:meth:`AtonState.apply` dispatches on the action's id block to one handler per kind of
action; automatic steps (reveal, cartouche-1 points, order and war, overflow, win checks,
clean-up, scoring round, end checks, next round's draw) run inside it until the next
decision. Every handler takes ``events``: a list to append :class:`~engine.core.Event`
values to (the validated path, :meth:`~engine.core.State.apply_action`), or ``None`` on the
fast path, where no event is built.
"""

from __future__ import annotations

import enum
import operator
import random
from typing import Any, Final, NamedTuple, Self

from engine._mypyc import i64
from engine.aton import invariants
from engine.aton.board import (
    ARRANGE_BASE,
    ARRANGE_BY_HAND,
    ARRANGEMENTS,
    BLUE,
    BLUE_SQUARE_POINTS,
    BONUS,
    CARDS_PER_VALUE,
    COUNTERS,
    GREEN,
    GREY,
    GREY_MAJORITY_POINTS,
    HAND_SIZE,
    KINGDOM_SIZE,
    MAX_ROUNDS,
    NUM_SQUARES,
    PLACE_BASE,
    REMOVALS,
    REMOVE_BASE,
    RESET_BASE,
    SLOTS,
    TEMPLE_2_POINTS,
    WIN_POINTS,
    YELLOW,
    cartouche_1_points,
    square_name,
)
from engine.aton.flow import ExchangeChoice, Phase, Reason
from engine.aton.view import AtonView, render
from engine.bits import low_bit, popcount
from engine.core import (
    SECRET_ACTION,
    TERMINAL,
    Event,
    FieldValue,
    IllegalActionError,
    Outcome,
    State,
)
from engine.rng import Rng, SerialRng, game_rng


class EventKind(enum.StrEnum):
    """``Event.kind`` of Aton's events, in the order they can happen in a round."""

    DRAW_CARDS = "draw_cards"  # A3.1 (public: how many)
    HAND = "hand"  # A3.1 (private: which cards)
    RESHUFFLE = "reshuffle"  # A3.1
    EXCHANGE_DECIDED = "exchange_decided"  # A3.2 (public: someone decided)
    EXCHANGE_DECISION = "exchange_decision"  # A3.2 (private: what)
    EXCHANGE = "exchange"  # A3.2: both decisions carried out
    ARRANGED = "arranged"  # A3.3 (public: someone committed)
    ARRANGEMENT = "arrangement"  # A3.3 (private: what)
    REVEAL_CARTOUCHE_1 = "reveal_cartouche_1"  # A3.4
    CARTOUCHE_1_POINTS = "cartouche_1_points"  # A4.1
    REVEAL_CARTOUCHE_2 = "reveal_cartouche_2"  # A3.4
    WAR = "war"  # A5.3
    ORDER = "order"  # A5
    REVEAL_CARTOUCHES_3_4 = "reveal_cartouches_3_4"  # A3.4
    REMOVAL = "removal"  # A6.2: how many to remove
    REMOVE = "remove"  # A6.2: one removal
    PLACEMENT = "placement"  # A6.3: how many to place
    PLACE = "place"  # A6.3: one placement
    OVERFLOW = "overflow"  # A6.3
    CLEANUP = "cleanup"  # A7
    SCORING_ROUND = "scoring_round"  # A8.1
    SCORING_LINE = "scoring_line"  # A8.2
    RESET_START = "reset_start"  # A8.4
    RESET = "reset"  # A8.4: one counter taken back
    ROUND = "round"  # A9.1
    WIN = "win"
    DRAW = "draw"


class FirstPlayerBy(enum.StrEnum):
    """What decided the order of a round (``order`` event's ``reason``)."""

    CARTOUCHE_2 = "cartouche2"  # A5.1: the lower cartouche 2
    CARTOUCHE_1 = "cartouche1"  # A5.2: equal cartouche 2, the lower cartouche 1
    WAR = "war"  # A5.3


# The phases as module constants: the hot paths compare them by identity.
EXCHANGE_PHASE: Final = Phase.EXCHANGE
ARRANGE_PHASE: Final = Phase.ARRANGE
REMOVE_PHASE: Final = Phase.REMOVE
PLACE_PHASE: Final = Phase.PLACE
RESET_PHASE: Final = Phase.RESET
OVER: Final = Phase.OVER

#: ``ExchangeChoice`` by the state's ``exchange_choice`` (0 keep, 1 exchange).
_EXCHANGE_CHOICES: Final = (ExchangeChoice.KEEP, ExchangeChoice.EXCHANGE)

_SECRET_BELOW: Final = REMOVE_BASE  # keep/exchange/arrange ids are secret (A3.2, A3.3)

_OUTCOME_TEXT: Final = {
    Reason.POINTS: "reached 40 points on cartouche 1 (A4.2)",
    Reason.TEMPLE: "occupies a whole temple (A6.4)",
    Reason.YELLOW: "occupies all 14 yellow squares (A6.4)",
    Reason.GREEN: "occupies all 14 green squares (A6.4)",
    Reason.SCORING: "has the higher score after a scoring round reached 40 (A9.2)",
    Reason.ROUND_LIMIT: "has the higher score after the round limit (A9.3)",
}
_ORDER_TEXT: Final = {
    FirstPlayerBy.CARTOUCHE_2: "lower cartouche 2",
    FirstPlayerBy.CARTOUCHE_1: "equal cartouche 2, lower cartouche 1",
    FirstPlayerBy.WAR: "war",
}


def shuffle(rng: SerialRng, cards: list[int]) -> None:
    """Fisher–Yates shuffle driven by the generator's 64-bit outputs (A1.2, A3.1, A5.3).

    ``j = (x * (i + 1)) >> 64`` maps a 64-bit output to ``0..i``; the bias is below
    2**-58 for these sizes. About 8x cheaper than ``random.Random.shuffle`` on the generator,
    which matters because playouts shuffle 72 cards per game at setup alone.

    ``x`` comes as its 32-bit halves (:meth:`engine.rng.SerialRng.next64_halves`) and
    ``(x * m) >> 64 == (hi * m + ((lo * m) >> 32)) >> 32`` for ``x = hi * 2**32 + lo``:
    every product stays below 2**38, so compiled it is machine arithmetic (``i64``) where
    the 64-bit product was a Python long.
    """
    n = len(cards)
    halves = rng.next64_halves(n - 1) if n > 1 else []
    m: i64 = n
    for k in range(0, 2 * n - 2, 2):  # i = n-1 .. 1 takes word k/2 = n-1-i, as next64() did
        i: i64 = m - 1
        j: i64 = (halves[k + 1] * m + ((halves[k] * m) >> 32)) >> 32
        cards[i], cards[j] = cards[j], cards[i]
        m = i


def _square_fields(square: int) -> dict[str, FieldValue]:
    return {"square": square, "temple": square // SLOTS + 1, "slot": square % SLOTS}


#: The attributes of :class:`AtonState` (its ``__slots__``), by name: the compiled build
#: (mypyc) keeps no ``__slots__`` on the class, so code that lists them reads this.
STATE_FIELDS: tuple[str, ...] = (
    "acting_second",
    "board",
    "cartouches",
    "current",
    "decks",
    "discards",
    "exchange_choice",
    "exchanged",
    "first_player",
    "hands",
    "kingdom",
    "max_rounds",
    "moves",
    "overflow",
    "owned",
    "phase",
    "reason",
    "remaining",
    "removal_target",
    "reset_first",
    "reset_temple",
    "reset_turn",
    "revealed",
    "rng",
    "round",
    "score",
    "stock",
    "tokens",
    "war_cards",
    "winners",
)


class AtonState(State):
    """A position of Aton. Create with ``GAME.new_initial_state(seed=...)``."""

    __slots__ = STATE_FIELDS

    board: list[int]
    owned: list[int]
    stock: list[int]
    kingdom: list[int]
    score: list[int]
    tokens: list[int]
    exchange_choice: list[int]
    exchanged: list[int]
    revealed: list[int]
    decks: list[list[int]]
    hands: list[list[int]]
    discards: list[list[int]]
    cartouches: list[list[int]]
    phase: Phase
    current: int
    first_player: int
    acting_second: int
    remaining: int
    overflow: int
    removal_target: int
    reset_first: int
    reset_turn: int
    reset_temple: int
    round: int
    max_rounds: int
    war_cards: list[tuple[int, int]]
    winners: tuple[int, ...] | None
    reason: Reason | None
    rng: SerialRng
    moves: int

    # ------------------------------------------------------------------------------
    # Construction
    # ------------------------------------------------------------------------------

    @classmethod
    def blank(cls, rng: SerialRng | None = None) -> AtonState:
        """A state with every field at its start value and no cards dealt (the codec and
        scenario tests fill it in); its chance is ``rng``, by default ``Rng(0)``."""
        s = cls()
        s.board = [-1] * NUM_SQUARES
        s.owned = [0, 0]
        s.stock = [COUNTERS, COUNTERS]
        s.kingdom = [0, 0]
        s.score = [0, 0]
        s.tokens = [1, 1]
        s.exchange_choice = [-1, -1]
        s.exchanged = [0, 0]
        s.revealed = [0, 0]
        s.decks = [[], []]
        s.hands = [[], []]
        s.discards = [[0, 0, 0, 0], [0, 0, 0, 0]]
        s.cartouches = [[0, 0, 0, 0], [0, 0, 0, 0]]
        s.phase = EXCHANGE_PHASE
        s.current = 0
        s.first_player = -1
        s.acting_second = 0
        s.remaining = 0
        s.overflow = 0
        s.removal_target = -1
        s.reset_first = -1
        s.reset_turn = 0
        s.reset_temple = 0
        s.round = 1
        s.max_rounds = MAX_ROUNDS
        s.moves = 0
        s.war_cards = []
        s.winners = None
        s.reason = None
        s.rng = rng if rng is not None else Rng(0)
        return s

    @classmethod
    def initial(cls, seed: int, rng: SerialRng | None = None) -> AtonState:
        """Setup (A1): shuffled 9/9/9/9 decks, 29 counters in stock, tokens, round 1's draw.
        The game's chance is ``rng``, by default :func:`engine.rng.game_rng` of the seed."""
        s = cls.blank(rng if rng is not None else game_rng("aton", seed))
        for p in (0, 1):
            deck = [v for v in (1, 2, 3, 4) for _ in range(CARDS_PER_VALUE)]
            shuffle(s.rng, deck)  # A1.2
            s.decks[p] = deck
        s._draw(0, None)
        s._draw(1, None)
        s.phase = EXCHANGE_PHASE  # A3.2: both hold a token in round 1
        s.current = 0
        return s

    # ------------------------------------------------------------------------------
    # Who, what
    # ------------------------------------------------------------------------------

    @property
    def num_players(self) -> int:
        return 2

    def current_player(self) -> int:
        return self.current

    def is_terminal(self) -> bool:
        return self.phase is OVER

    def decision(self) -> Phase:
        return self.phase

    def round_number(self) -> int:
        return self.round

    def move_number(self) -> int:
        return self.moves

    # ------------------------------------------------------------------------------
    # Actions
    # ------------------------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        ph = self.phase
        if ph is PLACE_PHASE:  # A6.3: an empty square of an allowed temple
            b = self.board
            return [PLACE_BASE + i for i in range(SLOTS * self.cartouches[self.current][2]) if b[i] < 0]
        if ph is REMOVE_PHASE:  # A6.2: a target counter in an allowed temple
            b = self.board
            t = self.removal_target
            return [REMOVE_BASE + i for i in range(SLOTS * self.cartouches[self.current][2]) if b[i] == t]
        if ph is ARRANGE_PHASE:  # A3.3: distinct assignments only
            return list(self._arrangements())
        if ph is EXCHANGE_PHASE:  # A3.2
            return [0, 1]
        if ph is RESET_PHASE:  # A8.4: one of their own counters in that temple
            b = self.board
            p = self.current
            lo = SLOTS * self.reset_temple
            return [RESET_BASE + i for i in range(lo, lo + SLOTS) if b[i] == p]
        return []

    # Counting and indexing the legal actions without the list (engine.core.playout: a
    # rollout draws one action by its index); the same order as legal_actions, checked by
    # the conformance suite.

    def _squares(self) -> tuple[int, int]:
        """In a phase whose actions are squares (A6.3 place, A6.2 remove, A8.4 reset): the
        id of square 0's action and the mask of the squares allowed; else (-1, 0)."""
        ph = self.phase
        if ph is PLACE_PHASE:
            o = self.owned
            return PLACE_BASE, _UP_TO_TEMPLE[self.cartouches[self.current][2]] & ~(o[0] | o[1])
        if ph is REMOVE_PHASE:
            return REMOVE_BASE, _UP_TO_TEMPLE[self.cartouches[self.current][2]] & self.owned[
                self.removal_target
            ]
        if ph is RESET_PHASE:
            return RESET_BASE, _TEMPLE_MASKS[self.reset_temple] & self.owned[self.current]
        return -1, 0

    def _arrangements(self) -> tuple[int, ...]:
        """A3.3: the distinct arrangements of the hand of the seat to act."""
        h = self.hands[self.current]
        return ARRANGE_BY_HAND[64 * h[0] + 16 * h[1] + 4 * h[2] + h[3] - 85]

    def num_legal_actions(self) -> int:
        base, mask = self._squares()
        if base >= 0:
            return popcount(mask)
        ph = self.phase
        if ph is ARRANGE_PHASE:
            return len(self._arrangements())
        return 2 if ph is EXCHANGE_PHASE else 0

    def legal_action_at(self, index: int) -> int:
        base, mask = self._squares()
        ph = self.phase
        if base >= 0:
            sq = nth_square(mask, index) if index >= 0 else -1
            if sq >= 0:
                return base + sq
        elif ph is ARRANGE_PHASE:
            arrangements = self._arrangements()
            if 0 <= index < len(arrangements):
                return arrangements[index]
        elif ph is EXCHANGE_PHASE and 0 <= index < 2:
            return index
        raise IndexError(f"aton: legal action index {index} out of range")

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal here (cheaper than scanning :meth:`legal_actions`)."""
        if isinstance(action, bool) or not isinstance(action, int):
            return False
        ph = self.phase
        if ph is PLACE_PHASE:
            sq = action - PLACE_BASE
            return 0 <= sq < SLOTS * self.cartouches[self.current][2] and self.board[sq] < 0
        if ph is REMOVE_PHASE:
            sq = action - REMOVE_BASE
            return (
                0 <= sq < SLOTS * self.cartouches[self.current][2] and self.board[sq] == self.removal_target
            )
        if ph is RESET_PHASE:
            sq = action - RESET_BASE
            return (
                0 <= sq < NUM_SQUARES and sq // SLOTS == self.reset_temple and self.board[sq] == self.current
            )
        if ph is EXCHANGE_PHASE:
            return action in (0, 1)
        if ph is ARRANGE_PHASE:
            return action in self.legal_actions()
        return False

    def apply(self, action: int, events: list[Event] | None = None) -> None:
        self.moves += 1
        # Action id blocks (engine.aton.board): keep/exchange, arrange, remove, place, reset.
        if action >= PLACE_BASE:
            if action >= RESET_BASE:
                self._reset(action - RESET_BASE, events)
            else:
                self._place(action - PLACE_BASE, events)
        elif action >= REMOVE_BASE:
            self._remove(action - REMOVE_BASE, events)
        elif action >= ARRANGE_BASE:
            self._arrange(action - ARRANGE_BASE, events)
        else:
            self._decide_exchange(action, events)

    def public_action(self, action: int) -> int:
        return SECRET_ACTION if action < _SECRET_BELOW else action

    # --- the decisions ---------------------------------------------------------------

    def _decide_exchange(self, exchange: int, events: list[Event] | None) -> None:
        """A3.2: a secret decision; carried out once both token holders decided."""
        p = self.current
        self.exchange_choice[p] = exchange
        if events is not None:
            events.append(Event(EventKind.EXCHANGE_DECIDED, f"seat {p} decides", p))
            events.append(
                Event(
                    EventKind.EXCHANGE_DECISION,
                    f"seat {p} decides to {'exchange' if exchange else 'keep'}",
                    p,
                    {"exchange": bool(exchange)},
                    visible_to=(p,),
                )
            )
        if p == 0 and self.tokens[1]:
            self.current = 1
        else:
            self._do_exchanges(events)

    def _arrange(self, index: int, events: list[Event] | None) -> None:
        """A3.3: a secret arrangement; revealed once both arranged (A3.4)."""
        p = self.current
        self.cartouches[p] = list(ARRANGEMENTS[index])
        self.hands[p] = []
        if events is not None:
            events.append(Event(EventKind.ARRANGED, f"seat {p} commits their arrangement", p))
            events.append(
                Event(
                    EventKind.ARRANGEMENT,
                    f"seat {p} arranges {''.join(map(str, self.cartouches[p]))} on cartouches 1-4",
                    p,
                    {"values": tuple(self.cartouches[p])},
                    visible_to=(p,),
                )
            )
        if p == 0:
            self.current = 1
        else:
            self._reveal(events)

    def _remove(self, sq: int, events: list[Event] | None) -> None:
        """A6.2: one removal, to the Kingdom of the Dead (or [house] the owner's stock when
        it is full)."""
        owner = self.board[sq]
        self.board[sq] = -1
        self.owned[owner] &= ~(1 << sq)
        k = self.kingdom
        to_kingdom = k[0] + k[1] < KINGDOM_SIZE
        if to_kingdom:
            k[owner] += 1
        else:
            self.stock[owner] += 1
        self.remaining -= 1
        if events is not None:
            dest = "the Kingdom of the Dead" if to_kingdom else f"seat {owner}'s stock (Kingdom full)"
            events.append(
                Event(
                    EventKind.REMOVE,
                    f"seat {self.current} removes seat {owner}'s counter from {square_name(sq)} to {dest}",
                    self.current,
                    {**_square_fields(sq), "owner": owner, "to_kingdom": to_kingdom},
                )
            )
        if not self.remaining:
            self._begin_place(events)

    def _place(self, sq: int, events: list[Event] | None) -> None:
        """A6.3: one placement."""
        p = self.current
        self.board[sq] = p
        self.owned[p] |= 1 << sq
        self.stock[p] -= 1
        self.remaining -= 1
        if events is not None:
            events.append(
                Event(
                    EventKind.PLACE, f"seat {p} places a counter on {square_name(sq)}", p, _square_fields(sq)
                )
            )
        if not self.remaining:
            self._end_actor(events)

    def _reset(self, sq: int, events: list[Event] | None) -> None:
        """A8.4: one own counter of the current temple back to stock."""
        p = self.current
        self.board[sq] = -1
        self.owned[p] &= ~(1 << sq)
        self.stock[p] += 1
        if events is not None:
            events.append(
                Event(
                    EventKind.RESET,
                    f"seat {p} takes back their counter from {square_name(sq)}",
                    p,
                    _square_fields(sq),
                )
            )
        self.reset_temple += 1
        self._next_reset(events)

    # ------------------------------------------------------------------------------
    # Automatic steps
    # ------------------------------------------------------------------------------

    def _reshuffle(self, p: int, events: list[Event] | None) -> None:
        """A3.1: the discard pile becomes the new deck, shuffled."""
        d = self.discards[p]
        cards = [1] * d[0] + [2] * d[1] + [3] * d[2] + [4] * d[3]
        shuffle(self.rng, cards)
        self.decks[p] = cards
        self.discards[p] = [0, 0, 0, 0]
        if events is not None:
            events.append(
                Event(
                    EventKind.RESHUFFLE,
                    f"seat {p} shuffles their discard pile into a new deck of {len(cards)} cards",
                    p,
                    {"cards": len(cards)},
                )
            )

    def _draw(self, p: int, events: list[Event] | None) -> None:
        """A3.1: draw 4 cards into the hand (reshuffling the discard pile when needed)."""
        deck = self.decks[p]
        if len(deck) >= HAND_SIZE:
            hand = deck[-HAND_SIZE:]
            del deck[-HAND_SIZE:]
        else:
            hand = deck[:]
            deck.clear()
            self._reshuffle(p, events)
            deck = self.decks[p]
            while len(hand) < HAND_SIZE:
                hand.append(deck.pop())
        hand.sort()
        self.hands[p] = hand
        if events is not None:
            events.append(
                Event(EventKind.DRAW_CARDS, f"seat {p} draws 4 cards", p, {"deck": len(self.decks[p])})
            )
            events.append(
                Event(
                    EventKind.HAND,
                    f"seat {p}'s hand: {''.join(map(str, hand))}",
                    p,
                    {"hand": tuple(hand)},
                    visible_to=(p,),
                )
            )

    def _do_exchanges(self, events: list[Event] | None) -> None:
        """A3.2: both decisions revealed and carried out together."""
        choice = self.exchange_choice
        for p in (0, 1):
            if choice[p] == 1:
                d = self.discards[p]
                for v in self.hands[p]:
                    d[v - 1] += 1
                self.hands[p] = []
                self.tokens[p] = 0
                self.exchanged[p] = 1
        if events is not None:
            who = [p for p in (0, 1) if self.exchanged[p]]
            decided = [p for p in (0, 1) if choice[p] >= 0]
            text = "exchange decisions: " + ", ".join(
                f"seat {p} {'exchanges' if self.exchanged[p] else 'keeps'}" for p in decided
            )
            events.append(
                Event(
                    EventKind.EXCHANGE,
                    text,
                    None,
                    {
                        "exchanged": tuple(bool(self.exchanged[p]) for p in (0, 1)),
                        "decided": tuple(decided),
                        "who": tuple(who),
                    },
                )
            )
        for p in (0, 1):
            if choice[p] == 1:
                self._draw(p, events)
        self.exchange_choice = [-1, -1]
        self.phase = ARRANGE_PHASE
        self.current = 0

    def _reveal(self, events: list[Event] | None) -> None:
        """A3.4 / A4 / A5: cartouche 1 (points), cartouche 2 (order), war."""
        c0 = self.cartouches[0]
        c1 = self.cartouches[1]
        self.revealed[0] = self.revealed[1] = 1
        a = c0[0]
        b = c1[0]
        scorer = -1
        pts = 0
        if a != b:  # A4.1
            scorer = 0 if a > b else 1
            pts = cartouche_1_points(a, b) if scorer == 0 else cartouche_1_points(b, a)
            self.score[scorer] += pts
        if events is not None:
            events.append(
                Event(
                    EventKind.REVEAL_CARTOUCHE_1,
                    f"cartouche 1: seat 0 shows {a}, seat 1 shows {b}",
                    None,
                    {"cards": (a, b)},
                )
            )
            text = (
                f"cartouche 1: seat {scorer} scores {pts}"
                if scorer >= 0
                else "cartouche 1: equal cards, nobody scores"
            )
            events.append(
                Event(
                    EventKind.CARTOUCHE_1_POINTS,
                    text,
                    scorer if scorer >= 0 else None,
                    {"points": (pts if scorer == 0 else 0, pts if scorer == 1 else 0)},
                )
            )
        if scorer >= 0 and self.score[scorer] >= WIN_POINTS:  # A4.2
            self._finish((scorer,), Reason.POINTS, events)
            return
        self.revealed[0] = self.revealed[1] = 2
        x = c0[1]
        y = c1[1]
        if events is not None:
            events.append(
                Event(
                    EventKind.REVEAL_CARTOUCHE_2,
                    f"cartouche 2: seat 0 shows {x}, seat 1 shows {y}",
                    None,
                    {"cards": (x, y)},
                )
            )
        if x != y:  # A5.1
            first = 0 if x < y else 1
            why = FirstPlayerBy.CARTOUCHE_2
        elif a != b:  # A5.2
            first = 0 if a < b else 1
            why = FirstPlayerBy.CARTOUCHE_1
        else:  # A5.3 war
            first = self._war(events)
            why = FirstPlayerBy.WAR
        self.first_player = first
        self.acting_second = 0
        if events is not None:
            events.append(
                Event(
                    EventKind.ORDER,
                    f"seat {first} acts first ({_ORDER_TEXT[why]})",
                    first,
                    {"first": first, "reason": why},
                )
            )
        self._begin_actor(first, events)

    def _war(self, events: list[Event] | None) -> int:
        """A5.3: reveal top cards until one is lower; [house] war cards are discarded after."""
        aside: list[list[int]] = [[], []]
        first = -1
        while first < 0:
            cards = [0, 0]
            for p in (0, 1):
                if not self.decks[p] and any(self.discards[p]):
                    self._reshuffle(p, events)
                if self.decks[p]:
                    cards[p] = self.decks[p].pop()
                    aside[p].append(cards[p])
            self.war_cards.append((cards[0], cards[1]))
            if events is not None:
                events.append(
                    Event(
                        EventKind.WAR,
                        f"war: seat 0 reveals {cards[0] or 'nothing'}, seat 1 reveals "
                        f"{cards[1] or 'nothing'}",
                        None,
                        {"cards": (cards[0], cards[1])},
                    )
                )
            if not cards[0] or not cards[1]:
                first = 0  # [house] a player cannot reveal: seat 0 acts first
            elif cards[0] != cards[1]:
                first = 0 if cards[0] < cards[1] else 1
        for p in (0, 1):
            d = self.discards[p]
            for v in aside[p]:
                d[v - 1] += 1
        return first

    def _begin_actor(self, p: int, events: list[Event] | None) -> None:
        """A6: the player reveals cartouches 3 and 4 (A3.4), then removes (A6.2)."""
        self.current = p
        self.revealed[p] = 4
        cart = self.cartouches[p]
        c2 = cart[1]
        if events is not None:
            where = "temple 1 only" if cart[2] == 1 else f"temples 1-{cart[2]}"
            events.append(
                Event(
                    EventKind.REVEAL_CARTOUCHES_3_4,
                    f"seat {p} reveals cartouche 3: {cart[2]} ({where}), cartouche 4: {cart[3]}",
                    p,
                    {"cards": (cart[2], cart[3])},
                )
            )
        required, own = REMOVALS[c2]
        if required:
            target = p if own else 1 - p
            if self.round == 1:  # A6.2: no removal at all in the first round
                if events is not None:
                    events.append(
                        Event(
                            EventKind.REMOVAL,
                            f"seat {p}: no removal in the first round",
                            p,
                            {"required": required, "count": 0, "target": target},
                        )
                    )
            else:
                # A6.1: temples 1..v (cartouche 3) are squares 0..12v-1
                n = min(popcount(self.owned[target] & _UP_TO_TEMPLE[cart[2]]), required)
                if events is not None:
                    whose = "their own" if target == p else f"seat {target}'s"
                    events.append(
                        Event(
                            EventKind.REMOVAL,
                            f"seat {p} must remove {n} of {whose} counters (cartouche 2 asks {required})",
                            p,
                            {"required": required, "count": n, "target": target},
                        )
                    )
                if n:
                    self.phase = REMOVE_PHASE
                    self.removal_target = target
                    self.remaining = n
                    return
        self._begin_place(events)

    def _begin_place(self, events: list[Event] | None) -> None:
        """A6.3: q = min(cartouche 4, stock), e = empty allowed squares; place min(q, e)."""
        p = self.current
        cart = self.cartouches[p]
        q = min(cart[3], self.stock[p])
        o = self.owned
        e = popcount(_UP_TO_TEMPLE[cart[2]] & ~(o[0] | o[1]))
        n = q if q < e else e
        self.overflow = q - n
        self.removal_target = -1
        if events is not None:
            events.append(
                Event(
                    EventKind.PLACEMENT,
                    f"seat {p} must place {n} counter(s)" + (f", {q - n} overflow" if q > n else ""),
                    p,
                    {"count": n, "overflow": q - n, "stock": self.stock[p], "empty": e, "cartouche": cart[3]},
                )
            )
        if n:
            self.phase = PLACE_PHASE
            self.remaining = n
            return
        self._end_actor(events)

    def _end_actor(self, events: list[Event] | None) -> None:
        """End of a player's actions: A6.3 overflow, A6.4 win check, next player or A7."""
        p = self.current
        self.remaining = 0
        if self.overflow:
            k = self.kingdom
            room = KINGDOM_SIZE - k[0] - k[1]
            moved = self.overflow if self.overflow < room else room
            self.stock[p] -= moved
            k[p] += moved
            if events is not None:
                events.append(
                    Event(
                        EventKind.OVERFLOW,
                        f"seat {p}: {self.overflow} counter(s) overflow, {moved} "
                        "go to the Kingdom of the Dead",
                        p,
                        {"overflow": self.overflow, "to_kingdom": moved},
                    )
                )
            self.overflow = 0
        reason = self._instant_win(p)  # A6.4, only for the player who just acted
        if reason is not None:
            self._finish((p,), reason, events)
            return
        if self.acting_second == 0:
            self.acting_second = 1
            self._begin_actor(1 - self.first_player, events)
        else:
            self._cleanup(events)

    def _cleanup(self, events: list[Event] | None) -> None:
        """A7 clean-up, A8 scoring round and reset, or the end of the round."""
        for p in (0, 1):
            d = self.discards[p]
            for v in self.cartouches[p]:
                d[v - 1] += 1
        self.cartouches = [[0, 0, 0, 0], [0, 0, 0, 0]]
        self.revealed = [0, 0]
        self.phase = RESET_PHASE  # transient, replaced below
        if events is not None:
            events.append(Event(EventKind.CLEANUP, "the 8 played cards go to the discard piles"))
        if self.kingdom[0] + self.kingdom[1] >= KINGDOM_SIZE:  # A8.1
            self._scoring(events)
            if self.phase is OVER:
                return
            # A8.4 reset: Kingdom emptied, then one own counter per temple.
            self.stock[0] += self.kingdom[0]
            self.stock[1] += self.kingdom[1]
            self.kingdom = [0, 0]
            s0, s1 = self.score
            self.reset_first = 0 if s0 > s1 else 1 if s1 > s0 else self.first_player
            self.reset_turn = 0
            self.reset_temple = 0
            if events is not None:
                events.append(
                    Event(
                        EventKind.RESET_START,
                        f"the Kingdom is emptied; seat {self.reset_first} takes back counters first",
                        self.reset_first,
                        {"first": self.reset_first},
                    )
                )
            self._next_reset(events)
        else:
            self._end_round(events)

    def _scoring(self, events: list[Event] | None) -> None:
        """A8.2 scoring lines, then the A8.3 end check."""
        lines = scoring_lines(self.tally())
        if events is not None:
            events.append(Event(EventKind.SCORING_ROUND, "the Kingdom of the Dead is full: scoring round"))
        for name, p0, p1 in lines:
            self.score[0] += p0
            self.score[1] += p1
            if events is not None:
                events.append(
                    Event(
                        EventKind.SCORING_LINE,
                        f"{name}: seat 0 +{p0}, seat 1 +{p1}",
                        None,
                        {"line": name, "points": (p0, p1)},
                    )
                )
        s0, s1 = self.score
        if s0 >= WIN_POINTS or s1 >= WIN_POINTS:  # A8.3 / A9.2
            self._finish(() if s0 == s1 else (0,) if s0 > s1 else (1,), Reason.SCORING, events)

    def _next_reset(self, events: list[Event] | None) -> None:
        """A8.4: next (player, temple) with a counter of that player; [house] skip others."""
        while self.reset_turn < 2:
            p = self.reset_first if self.reset_turn == 0 else 1 - self.reset_first
            while self.reset_temple < 4:
                if self.owned[p] & _TEMPLE_MASKS[self.reset_temple]:
                    self.phase = RESET_PHASE
                    self.current = p
                    return
                self.reset_temple += 1
            self.reset_turn += 1
            self.reset_temple = 0
        self.reset_first = -1
        self.reset_turn = 0
        self._end_round(events)

    def _end_round(self, events: list[Event] | None) -> None:
        """A9.3 round limit, else the next round: draw (A3.1), exchange or arrange."""
        if self.round >= self.max_rounds:
            s0, s1 = self.score
            self._finish(() if s0 == s1 else (0,) if s0 > s1 else (1,), Reason.ROUND_LIMIT, events)
            return
        self.round += 1
        self.first_player = -1
        self.acting_second = 0
        self.war_cards = []
        self.exchanged = [0, 0]
        if events is not None:
            events.append(Event(EventKind.ROUND, f"round {self.round} begins", None, {"round": self.round}))
        self._draw(0, events)
        self._draw(1, events)
        if self.tokens[0]:
            self.phase = EXCHANGE_PHASE
            self.current = 0
        elif self.tokens[1]:
            self.phase = EXCHANGE_PHASE
            self.current = 1
        else:
            self.phase = ARRANGE_PHASE
            self.current = 0

    def _finish(self, winners: tuple[int, ...], reason: Reason, events: list[Event] | None) -> None:
        self.phase = OVER
        self.current = TERMINAL
        self.winners = winners
        self.reason = reason
        if events is not None:
            o = self.outcome()
            assert o is not None
            events.append(
                Event(
                    EventKind.WIN if winners else EventKind.DRAW,
                    o.text,
                    winners[0] if winners else None,
                    {"winners": winners, "reason": reason, "scores": tuple(self.score)},
                )
            )

    # ------------------------------------------------------------------------------
    # Results
    # ------------------------------------------------------------------------------

    def scores(self) -> tuple[int, ...]:
        return (self.score[0], self.score[1])

    def returns(self) -> tuple[float, ...]:
        w = self.winners
        if self.phase is not OVER or not w:
            return (0.0, 0.0)
        return (1.0, -1.0) if w[0] == 0 else (-1.0, 1.0)  # A9.4

    def outcome(self) -> Outcome | None:
        if self.phase is not OVER or self.winners is None or self.reason is None:
            return None
        w = self.winners
        s = f"{self.score[0]}-{self.score[1]}"
        if w:
            text = f"seat {w[0]} wins: {_OUTCOME_TEXT[self.reason]}; score {s}"
        elif self.reason is Reason.SCORING:
            text = f"draw: equal scores after a scoring round reached 40 (A9.2); score {s}"
        else:
            text = f"draw: equal scores at the round limit (A9.3); score {s}"
        return Outcome(w, self.reason, text, self.scores(), self.returns())

    # ------------------------------------------------------------------------------
    # Information
    # ------------------------------------------------------------------------------

    def view(self, player: object) -> AtonView:
        if player is not None and (type(player) is not int or player not in (0, 1)):
            raise IllegalActionError(f"aton: no seat {player!r} (seats are 0 and 1)")
        return self._view(player, omniscient=False)

    def _view(self, player: int | None, omniscient: bool) -> AtonView:
        carts: list[tuple[int, int, int, int]] = []
        for p in (0, 1):
            c = self.cartouches[p]
            r = 4 if omniscient or p == player else self.revealed[p]
            carts.append(
                (c[0] if r > 0 else 0, c[1] if r > 1 else 0, c[2] if r > 2 else 0, c[3] if r > 3 else 0)
            )
        own_choice: ExchangeChoice | None = None
        hand: tuple[int, ...] = ()
        if player is not None:
            hand = tuple(self.hands[player])
            if self.exchange_choice[player] >= 0:
                own_choice = _EXCHANGE_CHOICES[self.exchange_choice[player]]
        ph = self.phase
        d0, d1 = self.discards
        return AtonView(
            player=player,
            round=self.round,
            decision=ph,
            current_player=self.current,
            board=tuple(self.board),
            kingdom=(self.kingdom[0], self.kingdom[1]),
            stocks=(self.stock[0], self.stock[1]),
            scores=(self.score[0], self.score[1]),
            deck_sizes=(len(self.decks[0]), len(self.decks[1])),
            hand_sizes=(len(self.hands[0]), len(self.hands[1])),
            discards=((d0[0], d0[1], d0[2], d0[3]), (d1[0], d1[1], d1[2], d1[3])),
            tokens=(bool(self.tokens[0]), bool(self.tokens[1])),
            exchanged=(bool(self.exchanged[0]), bool(self.exchanged[1])),
            committed=(self.cartouches[0][0] > 0, self.cartouches[1][0] > 0),
            cartouches=(carts[0], carts[1]),
            revealed=(self.revealed[0], self.revealed[1]),
            hand=hand,
            exchange_decision=own_choice,
            first_player=None if self.first_player < 0 else self.first_player,
            war=tuple(self.war_cards),
            remaining=self.remaining if ph is REMOVE_PHASE or ph is PLACE_PHASE else 0,
            removal_target=self.removal_target if ph is REMOVE_PHASE else None,
            overflow=self.overflow if ph is PLACE_PHASE else 0,
            reset_temple=self.reset_temple + 1 if ph is RESET_PHASE else None,
            winners=self.winners if ph is OVER else None,
            reason=self.reason if ph is OVER else None,
        )

    def sample_consistent_state(self, player: object, rng: random.Random) -> Self:
        """Re-deal what ``player`` cannot see (A10): the opponent's hand, deck and unrevealed
        cartouches from their unseen cards, the opponent's pending exchange decision, the
        player's own deck order (A10.3) and the engine's future randomness."""
        if type(player) is not int or player not in (0, 1):
            raise IllegalActionError(f"aton: no seat {player!r} (seats are 0 and 1)")
        s = self._copy(self.rng)  # its chance is replaced below, before any use
        o = 1 - player
        # Every re-deal starts from a sorted pool, so that the result depends only on
        # ``view(player)`` and ``rng``, never on the hidden order (a bot's no-peeking guarantee).
        own = sorted(s.decks[player])
        rng.shuffle(own)
        s.decks[player] = own
        cart = s.cartouches[o]
        hidden = [i for i in range(4) if i >= s.revealed[o] and cart[i]]
        pool = sorted(s.decks[o] + s.hands[o] + [cart[i] for i in hidden])
        rng.shuffle(pool)
        for i in hidden:  # a random order = a uniform distinct arrangement
            cart[i] = pool.pop()
        nh = len(s.hands[o])
        s.hands[o] = sorted(pool[:nh])
        s.decks[o] = pool[nh:]
        if s.exchange_choice[o] >= 0:
            s.exchange_choice[o] = rng.randrange(2)
        s.rng = Rng.seeded(rng.getrandbits(64))
        return s

    # ------------------------------------------------------------------------------
    # Copies, text, invariants
    # ------------------------------------------------------------------------------

    def clone(self) -> Self:
        return self._copy(self.rng.clone())

    def _copy(self, rng: SerialRng) -> Self:
        """A copy of the state with ``rng`` as its chance (a sampled world replaces the
        chance: it does not pay for a copy of the game's)."""
        s = type(self)()
        s.board = self.board[:]
        s.owned = self.owned[:]
        s.stock = self.stock[:]
        s.kingdom = self.kingdom[:]
        s.score = self.score[:]
        s.tokens = self.tokens[:]
        s.exchange_choice = self.exchange_choice[:]
        s.exchanged = self.exchanged[:]
        s.revealed = self.revealed[:]
        d = self.decks
        s.decks = [d[0][:], d[1][:]]
        h = self.hands
        s.hands = [h[0][:], h[1][:]]
        d = self.discards
        s.discards = [d[0][:], d[1][:]]
        c = self.cartouches
        s.cartouches = [c[0][:], c[1][:]]
        s.phase = self.phase
        s.current = self.current
        s.first_player = self.first_player
        s.acting_second = self.acting_second
        s.remaining = self.remaining
        s.overflow = self.overflow
        s.removal_target = self.removal_target
        s.reset_first = self.reset_first
        s.reset_turn = self.reset_turn
        s.reset_temple = self.reset_temple
        s.round = self.round
        s.max_rounds = self.max_rounds
        s.moves = self.moves
        s.war_cards = self.war_cards[:]
        s.winners = self.winners
        s.reason = self.reason
        s.rng = rng
        return s

    def to_text(self) -> str:
        extra = []
        for p in (0, 1):
            dec = ""
            if self.exchange_choice[p] >= 0:
                dec = f" · pending exchange decision: {'exchange' if self.exchange_choice[p] else 'keep'}"
            extra.append(
                f"seat {p} hand: {''.join(map(str, self.hands[p])) or '-'}{dec} · "
                f"deck (top last): {''.join(map(str, self.decks[p])) or '-'}"
            )
        return render(self._view(None, omniscient=True), extra)

    def __repr__(self) -> str:
        return f"<AtonState round {self.round} {self.phase} seat {self.current}>"

    def fields(self) -> dict[str, Any]:
        """Every field of the state by name (tests, debugging)."""
        return {k: getattr(self, k) for k in STATE_FIELDS}

    def derive_board(self) -> None:
        """Recompute ``owned`` (each seat's squares as a mask) from ``board``: after the
        board is written other than by an action (the codec, scenario tests)."""
        owned = [0, 0]
        for sq, owner in enumerate(self.board):
            if owner >= 0:
                owned[owner] |= 1 << sq
        self.owned = owned

    def _instant_win(self, player: int) -> Reason | None:
        """:func:`instant_win` of this board, in the player's square mask."""
        o = self.owned[player]
        if (
            o & _TEMPLE_MASKS[0] == _TEMPLE_MASKS[0]
            or o & _TEMPLE_MASKS[1] == _TEMPLE_MASKS[1]
            or o & _TEMPLE_MASKS[2] == _TEMPLE_MASKS[2]
            or o & _TEMPLE_MASKS[3] == _TEMPLE_MASKS[3]
        ):
            return Reason.TEMPLE
        if o & _YELLOW_MASK == _YELLOW_MASK:
            return Reason.YELLOW
        if o & _GREEN_MASK == _GREEN_MASK:
            return Reason.GREEN
        return None

    def tally(self) -> Tally:
        """:func:`tally` of this state's board, counted in the seats' masks."""
        o0, o1 = self.owned
        a, b = o0 & _TEMPLE_MASKS[0], o1 & _TEMPLE_MASKS[0]
        c, d = o0 & _TEMPLE_MASKS[1], o1 & _TEMPLE_MASKS[1]
        e, f = o0 & _TEMPLE_MASKS[2], o1 & _TEMPLE_MASKS[2]
        g, h = o0 & _TEMPLE_MASKS[3], o1 & _TEMPLE_MASKS[3]
        return Tally(
            ((popcount(a), popcount(b)), (popcount(c), popcount(d)),
             (popcount(e), popcount(f)), (popcount(g), popcount(h))),
            (popcount(o0 & _YELLOW_MASK), popcount(o1 & _YELLOW_MASK)),
            (popcount(o0 & _GREEN_MASK), popcount(o1 & _GREEN_MASK)),
            (popcount(o0 & _GREY_MASK), popcount(o1 & _GREY_MASK)),
            (popcount(o0 & _BLUE_MASK), popcount(o1 & _BLUE_MASK)),
            (popcount(o0 & _BONUS_1_MASK) + 2 * popcount(o0 & _BONUS_2_MASK),
             popcount(o1 & _BONUS_1_MASK) + 2 * popcount(o1 & _BONUS_2_MASK)),
        )  # fmt: skip

    def validate(self) -> None:
        """Every invariant of an Aton state (:mod:`engine.aton.invariants`);
        :class:`StateFormatError` names the first broken."""
        invariants.validate(self)


# ---------------------------------------------------------------------------------------
# Rules on a board, for the engine and the bots
# ---------------------------------------------------------------------------------------


def instant_win(board: list[int], player: int) -> Reason | None:
    """A6.4: how ``player`` wins at once on ``board`` (a whole temple, all yellow or all
    green squares), or ``None``. (Typed loops, not ``slice.count``: compiled, they are
    machine comparisons; a temple usually fails on its first squares.)"""
    for lo in (0, 12, 24, 36):
        for i in range(lo, lo + SLOTS):
            if board[i] != player:
                break
        else:
            return Reason.TEMPLE
    for i in YELLOW:
        if board[i] != player:
            break
    else:
        return Reason.YELLOW
    for i in GREEN:
        if board[i] != player:
            break
    else:
        return Reason.GREEN
    return None


class Tally(NamedTuple):
    """Each seat's counters on the parts of the board the rules count (A6.4, A8.2); pairs
    are (seat 0, seat 1)."""

    temples: tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]
    yellow: tuple[int, int]
    green: tuple[int, int]
    grey: tuple[int, int]
    blue: tuple[int, int]
    #: Points of the bonus squares held.
    bonus: tuple[int, int]


_YELLOW_AT: Final = operator.itemgetter(*YELLOW)
_GREEN_AT: Final = operator.itemgetter(*GREEN)
_GREY_AT: Final = operator.itemgetter(*GREY)
_BLUE_AT: Final = operator.itemgetter(*BLUE)
#: The bonus squares by printed value (A1.6): +1 and +2.
_BONUS_1_AT: Final = operator.itemgetter(*[sq for sq, v in BONUS if v == 1])
_BONUS_2_AT: Final = operator.itemgetter(*[sq for sq, v in BONUS if v == 2])
assert all(v in (1, 2) for _, v in BONUS)


def _mask(squares: tuple[int, ...] | list[int] | range) -> int:
    out = 0
    for sq in squares:
        out |= 1 << sq
    return out


# The same parts of the board as square masks (AtonState.tally, the legal actions).
_TEMPLE_MASKS: Final[tuple[int, ...]] = tuple(_mask(range(t * SLOTS, (t + 1) * SLOTS)) for t in range(4))
#: The squares of temples 1..c (a cartouche value c, A6.2 / A6.3).
_UP_TO_TEMPLE: Final[tuple[int, ...]] = tuple((1 << (SLOTS * c)) - 1 for c in range(5))
_YELLOW_MASK: Final = _mask(YELLOW)
_GREEN_MASK: Final = _mask(GREEN)
_GREY_MASK: Final = _mask(GREY)
_BLUE_MASK: Final = _mask(BLUE)
_BONUS_1_MASK: Final = _mask([sq for sq, v in BONUS if v == 1])
_BONUS_2_MASK: Final = _mask([sq for sq, v in BONUS if v == 2])
_ALL_SQUARES: Final = (1 << NUM_SQUARES) - 1


def nth_square(mask: int, k: int) -> int:
    """The ``k``-th lowest square (set bit) of ``mask``; ``-1`` when it has fewer."""
    for _ in range(k):
        mask &= mask - 1
    return low_bit(mask)


def tally(board: list[int] | tuple[int, ...]) -> Tally:
    """Count each seat's counters per temple, per square kind and its bonus points (with
    C-level counts: the search's Aton heuristic runs this once per iteration)."""
    b = board
    t1, t2, t3, t4 = b[0:12], b[12:24], b[24:36], b[36:48]
    y, g, k, u = _YELLOW_AT(b), _GREEN_AT(b), _GREY_AT(b), _BLUE_AT(b)
    one, two = _BONUS_1_AT(b), _BONUS_2_AT(b)
    return Tally(
        ((t1.count(0), t1.count(1)), (t2.count(0), t2.count(1)), (t3.count(0), t3.count(1)),
         (t4.count(0), t4.count(1))),
        (y.count(0), y.count(1)),
        (g.count(0), g.count(1)),
        (k.count(0), k.count(1)),
        (u.count(0), u.count(1)),
        (one.count(0) + 2 * two.count(0), one.count(1) + 2 * two.count(1)),
    )  # fmt: skip


def _majority(counts: tuple[int, int]) -> int:
    return 0 if counts[0] > counts[1] else 1 if counts[1] > counts[0] else -1


def scoring_lines(t: Tally) -> list[tuple[str, int, int]]:
    """A8.2: the lines of a scoring round on a board of tally ``t``, as (name, seat 0's
    points, seat 1's points)."""
    lines: list[tuple[str, int, int]] = []
    t1, t2, t3, t4 = t.temples
    m = _majority(t1)  # temple 1: the difference
    pts = abs(t1[0] - t1[1])
    lines.append(("temple 1", pts if m == 0 else 0, pts if m == 1 else 0))
    m = _majority(t2)  # temple 2: a fixed number of points
    lines.append(("temple 2", TEMPLE_2_POINTS if m == 0 else 0, TEMPLE_2_POINTS if m == 1 else 0))
    m = _majority(t3)  # temple 3: 1 per own counter in temple 3
    lines.append(("temple 3", t3[0] if m == 0 else 0, t3[1] if m == 1 else 0))
    m = _majority(t4)  # temple 4: per own blue square, all temples
    blue = (BLUE_SQUARE_POINTS * t.blue[0], BLUE_SQUARE_POINTS * t.blue[1])
    lines.append(("temple 4", blue[0] if m == 0 else 0, blue[1] if m == 1 else 0))
    m = _majority(t.grey)  # grey squares
    lines.append(
        ("grey squares", GREY_MAJORITY_POINTS if m == 0 else 0, GREY_MAJORITY_POINTS if m == 1 else 0)
    )
    lines.append(("bonus squares", t.bonus[0], t.bonus[1]))
    return lines
