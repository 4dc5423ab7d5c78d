"""The Aton state: rules A2–A11 on flat lists, built for fast playouts.

Representation (all plain lists and ints, ``__slots__``):

* ``board``: 48 ints, the owner (0/1) of each square or -1 (see :mod:`engine.aton.board`);
* per player (lists of two): ``stock``, ``kingdom`` (counters of that owner in the Kingdom),
  ``score``, ``token`` (exchange token held), ``xdec`` (pending exchange decision -1/0/1),
  ``exch`` (exchanged this round), ``rev`` (cartouches revealed: 0, 1, 2 or 4);
* ``deck[p]``: card values, top of the deck LAST; ``hand[p]``: sorted values;
  ``disc[p]``: discard pile as counts of values 1..4 (its order is irrelevant: it is only
  ever used by shuffling it, A3.1); ``cart[p]``: values on cartouches 1..4, 0 = empty;
* the step: ``phase``, ``cur`` (seat to decide, -1 when over), ``first`` (seat acting first
  this round), ``step`` (0: first player acting, 1: second), ``todo`` (removals or
  placements left), ``over`` (A6.3 overflow due after the last placement), ``tgt`` (owner of
  the counters being removed), ``rs_first``/``rs_idx``/``rs_t`` (A8.4 reset progress);
* ``rng``: the game's chance (:class:`engine.rng.ChanceRng`; SplitMix64 in sampled worlds)
  for every shuffle.

Automatic steps (reveal, cartouche-1 points, order and war, overflow, win checks,
clean-up, scoring round, end checks, next round's draw) run inside :meth:`apply` until the
next decision. Events are only built when :meth:`apply_action` asks for them (``_ev`` is
a list then, ``None`` on the fast path).
"""

from __future__ import annotations

import random
from typing import Any, Self

from engine.aton.board import (
    ARRANGE_BASE,
    ARRANGE_BY_HAND,
    ARRANGEMENTS,
    BLUE,
    BONUS,
    CARDS_PER_VALUE,
    COUNTERS,
    GREEN,
    GREY,
    HAND_SIZE,
    KINGDOM_SIZE,
    MAX_ROUNDS,
    NUM_SQUARES,
    PLACE_BASE,
    REMOVE_BASE,
    RESET_BASE,
    SLOTS,
    WIN_POINTS,
    YELLOW,
    square_name,
)
from engine.aton.view import AtonView, render
from engine.core import (
    SECRET_ACTION,
    TERMINAL,
    Event,
    Game,
    GameOverError,
    IllegalActionError,
    Outcome,
    State,
)
from engine.rng import Rng, SerialRng, game_rng

# Phases (decisions).
EXCHANGE_PHASE = 0
ARRANGE_PHASE = 1
REMOVE_PHASE = 2
PLACE_PHASE = 3
RESET_PHASE = 4
OVER = 5
PHASE_NAMES = ("exchange", "arrange", "remove", "place", "reset", "over")

#: Outcome reasons (Outcome.reason).
REASONS = ("points", "temple", "yellow", "green", "scoring", "round_limit")

_SECRET_BELOW = REMOVE_BASE  # keep/exchange/arrange ids are secret (A3.2, A3.3)


def shuffle(rng: SerialRng, cards: list[int]) -> None:
    """Fisher–Yates shuffle driven by the generator's 64-bit outputs (A1.2, A3.1, A5.3).

    ``j = (x * (i + 1)) >> 64`` maps a 64-bit output to ``0..i``; the bias is below
    2**-58 for these sizes. About 8x cheaper than ``random.Random.shuffle`` on the generator,
    which matters because playouts shuffle 72 cards per game at setup alone.
    """
    nxt = rng.next64
    for i in range(len(cards) - 1, 0, -1):
        j = (nxt() * (i + 1)) >> 64
        cards[i], cards[j] = cards[j], cards[i]


class AtonState(State):
    """A position of Aton. Create with ``GAME.new_initial_state(seed=...)``."""

    __slots__ = (
        "_ev",
        "board",
        "cart",
        "cur",
        "deck",
        "disc",
        "exch",
        "first",
        "hand",
        "kingdom",
        "max_rounds",
        "moves",
        "over",
        "phase",
        "reason",
        "rev",
        "rnd",
        "rng",
        "rs_first",
        "rs_idx",
        "rs_t",
        "score",
        "step",
        "stock",
        "tgt",
        "todo",
        "token",
        "war",
        "winners",
        "xdec",
    )

    game: Game  # set on the class by engine.aton.game

    board: list[int]
    stock: list[int]
    kingdom: list[int]
    score: list[int]
    token: list[int]
    xdec: list[int]
    exch: list[int]
    rev: list[int]
    deck: list[list[int]]
    hand: list[list[int]]
    disc: list[list[int]]
    cart: list[list[int]]
    phase: int
    cur: int
    first: int
    step: int
    todo: int
    over: int
    tgt: int
    rs_first: int
    rs_idx: int
    rs_t: int
    rnd: int
    max_rounds: int
    war: list[tuple[int, int]]
    winners: tuple[int, ...] | None
    reason: str
    rng: SerialRng
    moves: int
    _ev: list[Event] | None

    # ------------------------------------------------------------------------------
    # Construction
    # ------------------------------------------------------------------------------

    @classmethod
    def _blank(cls) -> AtonState:
        s = cls.__new__(cls)
        s.board = [-1] * NUM_SQUARES
        s.stock = [COUNTERS, COUNTERS]
        s.kingdom = [0, 0]
        s.score = [0, 0]
        s.token = [1, 1]
        s.xdec = [-1, -1]
        s.exch = [0, 0]
        s.rev = [0, 0]
        s.deck = [[], []]
        s.hand = [[], []]
        s.disc = [[0, 0, 0, 0], [0, 0, 0, 0]]
        s.cart = [[0, 0, 0, 0], [0, 0, 0, 0]]
        s.phase = EXCHANGE_PHASE
        s.cur = 0
        s.first = -1
        s.step = 0
        s.todo = 0
        s.over = 0
        s.tgt = -1
        s.rs_first = -1
        s.rs_idx = 0
        s.rs_t = 0
        s.rnd = 1
        s.max_rounds = MAX_ROUNDS
        s.moves = 0
        s.war = []
        s.winners = None
        s.reason = ""
        s.rng = Rng(0)
        s._ev = None
        return s

    @classmethod
    def initial(cls, seed: int, rng: SerialRng | None = None) -> AtonState:
        """Setup (A1): shuffled 9/9/9/9 decks, 29 counters in stock, tokens, round 1's draw.
        The game's chance is ``rng``, by default :func:`engine.rng.game_rng` of the seed."""
        s = cls._blank()
        s.rng = rng if rng is not None else game_rng("aton", seed)
        for p in (0, 1):
            deck = [v for v in (1, 2, 3, 4) for _ in range(CARDS_PER_VALUE)]
            shuffle(s.rng, deck)  # A1.2
            s.deck[p] = deck
        s._draw(0)
        s._draw(1)
        s.phase = EXCHANGE_PHASE  # A3.2: both hold a token in round 1
        s.cur = 0
        return s

    # ------------------------------------------------------------------------------
    # Who, what
    # ------------------------------------------------------------------------------

    @property
    def num_players(self) -> int:
        return 2

    def current_player(self) -> int:
        return self.cur

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def decision(self) -> str:
        return PHASE_NAMES[self.phase]

    def round_number(self) -> int:
        return self.rnd

    def move_number(self) -> int:
        return self.moves

    # ------------------------------------------------------------------------------
    # Actions
    # ------------------------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        ph = self.phase
        if ph == PLACE_PHASE:  # A6.3: an empty square of an allowed temple
            b = self.board
            return [PLACE_BASE + i for i in range(SLOTS * self.cart[self.cur][2]) if b[i] < 0]
        if ph == REMOVE_PHASE:  # A6.2: a target counter in an allowed temple
            b = self.board
            t = self.tgt
            return [REMOVE_BASE + i for i in range(SLOTS * self.cart[self.cur][2]) if b[i] == t]
        if ph == ARRANGE_PHASE:  # A3.3: distinct assignments only
            h = self.hand[self.cur]
            return list(ARRANGE_BY_HAND[64 * h[0] + 16 * h[1] + 4 * h[2] + h[3] - 85])
        if ph == EXCHANGE_PHASE:  # A3.2
            return [0, 1]
        if ph == RESET_PHASE:  # A8.4: one of their own counters in that temple
            b = self.board
            p = self.cur
            lo = SLOTS * self.rs_t
            return [RESET_BASE + i for i in range(lo, lo + SLOTS) if b[i] == p]
        return []

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal here (cheaper than scanning :meth:`legal_actions`)."""
        if isinstance(action, bool) or not isinstance(action, int):
            return False
        ph = self.phase
        if ph == PLACE_PHASE:
            sq = action - PLACE_BASE
            return 0 <= sq < SLOTS * self.cart[self.cur][2] and self.board[sq] < 0
        if ph == REMOVE_PHASE:
            sq = action - REMOVE_BASE
            return 0 <= sq < SLOTS * self.cart[self.cur][2] and self.board[sq] == self.tgt
        if ph == RESET_PHASE:
            sq = action - RESET_BASE
            return 0 <= sq < NUM_SQUARES and sq // SLOTS == self.rs_t and self.board[sq] == self.cur
        if ph == EXCHANGE_PHASE:
            return action in (0, 1)
        if ph == ARRANGE_PHASE:
            return action in self.legal_actions()
        return False

    def apply(self, action: int) -> None:
        self.moves += 1
        ph = self.phase
        ev = self._ev
        # --- A6.3 placement ----------------------------------------------------------
        if ph == PLACE_PHASE:
            sq = action - PLACE_BASE
            p = self.cur
            self.board[sq] = p
            self.stock[p] -= 1
            self.todo -= 1
            if ev is not None:
                ev.append(Event("place", f"seat {p} places a counter on {square_name(sq)}", p,
                                {"square": sq, "temple": sq // SLOTS + 1, "slot": sq % SLOTS}))
            if not self.todo:
                self._end_actor()
            return
        # --- A6.2 removal ------------------------------------------------------------
        if ph == REMOVE_PHASE:
            sq = action - REMOVE_BASE
            owner = self.board[sq]
            self.board[sq] = -1
            k = self.kingdom
            to_kingdom = k[0] + k[1] < KINGDOM_SIZE
            if to_kingdom:
                k[owner] += 1
            else:  # [house] Kingdom full: back to its owner's stock
                self.stock[owner] += 1
            self.todo -= 1
            if ev is not None:
                dest = "the Kingdom of the Dead" if to_kingdom else f"seat {owner}'s stock (Kingdom full)"
                ev.append(Event("remove", f"seat {self.cur} removes seat {owner}'s counter from "
                                f"{square_name(sq)} to {dest}", self.cur,
                                {"square": sq, "temple": sq // SLOTS + 1, "slot": sq % SLOTS,
                                 "owner": owner, "to_kingdom": to_kingdom}))
            if not self.todo:
                self._begin_place()
            return
        # --- A3.3 arrangement --------------------------------------------------------
        if ph == ARRANGE_PHASE:
            p = self.cur
            self.cart[p] = list(ARRANGEMENTS[action - ARRANGE_BASE])
            self.hand[p] = []
            if ev is not None:
                ev.append(Event("arranged", f"seat {p} commits their arrangement", p))
                ev.append(Event("arrangement", f"seat {p} arranges {''.join(map(str, self.cart[p]))} "
                                "on cartouches 1-4",
                                p, {"values": tuple(self.cart[p])}, visible_to=(p,)))
            if p == 0:
                self.cur = 1
            else:
                self._reveal()
            return
        # --- A3.2 exchange decision ----------------------------------------------------
        if ph == EXCHANGE_PHASE:
            p = self.cur
            self.xdec[p] = action
            if ev is not None:
                ev.append(Event("exchange_decided", f"seat {p} decides", p))
                ev.append(Event("exchange_decision", f"seat {p} decides to "
                                f"{'exchange' if action else 'keep'}", p,
                                {"exchange": bool(action)}, visible_to=(p,)))
            if p == 0 and self.token[1]:
                self.cur = 1
            else:
                self._do_exchanges()
            return
        # --- A8.4 reset ----------------------------------------------------------------
        if ph == RESET_PHASE:
            sq = action - RESET_BASE
            p = self.cur
            self.board[sq] = -1
            self.stock[p] += 1
            if ev is not None:
                ev.append(Event("reset", f"seat {p} takes back their counter from {square_name(sq)}",
                                p, {"square": sq, "temple": sq // SLOTS + 1, "slot": sq % SLOTS}))
            self.rs_t += 1
            self._next_reset()
            return
        raise GameOverError("aton: the game is over")

    def apply_action(self, action: int) -> list[Event]:
        if self.phase == OVER:
            raise GameOverError(f"aton: the game is over; no action is legal (got {action!r})")
        if not self.is_legal(action):
            raise IllegalActionError(self._illegal_message(action))
        events: list[Event] = []
        self._ev = events
        try:
            self.apply(action)
        finally:
            self._ev = None
        return events

    def _illegal_message(self, action: object) -> str:
        from engine.aton.board import NUM_ACTIONS, action_info

        if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < NUM_ACTIONS:
            text = f"{action_info(action).text!r} (id {action})"
        else:
            text = repr(action)
        legal = [self.game.action_to_string(a) for a in self.legal_actions()]
        shown = ", ".join(legal[:12]) + (", ..." if len(legal) > 12 else "")
        return (f"aton: {text} is not legal now (round {self.rnd}, {PHASE_NAMES[self.phase]}, "
                f"seat {self.cur} to decide); legal: {shown}")

    def public_action(self, action: int) -> int:
        return SECRET_ACTION if action < _SECRET_BELOW else action

    # ------------------------------------------------------------------------------
    # Automatic steps
    # ------------------------------------------------------------------------------

    def _reshuffle(self, p: int) -> None:
        """A3.1: the discard pile becomes the new deck, shuffled."""
        d = self.disc[p]
        cards = [1] * d[0] + [2] * d[1] + [3] * d[2] + [4] * d[3]
        shuffle(self.rng, cards)
        self.deck[p] = cards
        self.disc[p] = [0, 0, 0, 0]
        if self._ev is not None:
            self._ev.append(Event("reshuffle", f"seat {p} shuffles their discard pile into a new deck "
                                  f"of {len(cards)} cards", p, {"cards": len(cards)}))

    def _draw(self, p: int) -> None:
        """A3.1: draw 4 cards into the hand (reshuffling the discard pile when needed)."""
        deck = self.deck[p]
        if len(deck) >= HAND_SIZE:
            hand = deck[-HAND_SIZE:]
            del deck[-HAND_SIZE:]
        else:
            hand = deck[:]
            deck.clear()
            self._reshuffle(p)
            deck = self.deck[p]
            while len(hand) < HAND_SIZE:
                hand.append(deck.pop())
        hand.sort()
        self.hand[p] = hand
        if self._ev is not None:
            self._ev.append(Event("draw_cards", f"seat {p} draws 4 cards", p, {"deck": len(self.deck[p])}))
            self._ev.append(Event("hand", f"seat {p}'s hand: {''.join(map(str, hand))}", p,
                                  {"hand": tuple(hand)}, visible_to=(p,)))

    def _do_exchanges(self) -> None:
        """A3.2: both decisions revealed and carried out together."""
        ev = self._ev
        for p in (0, 1):
            if self.xdec[p] == 1:
                d = self.disc[p]
                for v in self.hand[p]:
                    d[v - 1] += 1
                self.hand[p] = []
                self.token[p] = 0
                self.exch[p] = 1
        if ev is not None:
            who = [p for p in (0, 1) if self.exch[p]]
            decided = [p for p in (0, 1) if self.xdec[p] >= 0]
            text = ("exchange decisions: " + ", ".join(f"seat {p} {'exchanges' if self.exch[p] else 'keeps'}"
                                            for p in decided))
            ev.append(Event("exchange", text, None,
                            {"exchanged": tuple(bool(self.exch[p]) for p in (0, 1)),
                             "decided": tuple(decided), "who": tuple(who)}))
        for p in (0, 1):
            if self.xdec[p] == 1:
                self._draw(p)
        self.xdec = [-1, -1]
        self.phase = ARRANGE_PHASE
        self.cur = 0

    def _reveal(self) -> None:
        """A3.4 / A4 / A5: cartouche 1 (points), cartouche 2 (order), war."""
        ev = self._ev
        c0 = self.cart[0]
        c1 = self.cart[1]
        self.rev[0] = self.rev[1] = 1
        a = c0[0]
        b = c1[0]
        scorer = -1
        pts = 0
        if a != b:  # A4.1
            scorer = 0 if a > b else 1
            pts = 2 * (a - b if a > b else b - a)
            self.score[scorer] += pts
        if ev is not None:
            ev.append(Event("reveal_cartouche_1", f"cartouche 1: seat 0 shows {a}, seat 1 shows {b}", None,
                            {"cards": (a, b)}))
            text = (f"cartouche 1: seat {scorer} scores {pts}" if scorer >= 0
                    else "cartouche 1: equal cards, nobody scores")
            ev.append(Event("cartouche_1_points", text, scorer if scorer >= 0 else None,
                            {"points": (pts if scorer == 0 else 0, pts if scorer == 1 else 0)}))
        if scorer >= 0 and self.score[scorer] >= WIN_POINTS:  # A4.2
            self._finish((scorer,), "points")
            return
        self.rev[0] = self.rev[1] = 2
        x = c0[1]
        y = c1[1]
        if ev is not None:
            ev.append(Event("reveal_cartouche_2", f"cartouche 2: seat 0 shows {x}, seat 1 shows {y}", None,
                            {"cards": (x, y)}))
        if x != y:  # A5.1
            first = 0 if x < y else 1
            why = "cartouche2"
        elif a != b:  # A5.2
            first = 0 if a < b else 1
            why = "cartouche1"
        else:  # A5.3 war
            first = self._war()
            why = "war"
        self.first = first
        self.step = 0
        if ev is not None:
            because = {"cartouche2": "lower cartouche 2", "war": "war",
                       "cartouche1": "equal cartouche 2, lower cartouche 1"}[why]
            ev.append(Event("order", f"seat {first} acts first ({because})", first,
                            {"first": first, "reason": why}))
        self._begin_actor(first)

    def _war(self) -> int:
        """A5.3: reveal top cards until one is lower; [house] war cards are discarded after."""
        aside: list[list[int]] = [[], []]
        ev = self._ev
        first = -1
        while first < 0:
            cards = [0, 0]
            for p in (0, 1):
                if not self.deck[p] and any(self.disc[p]):
                    self._reshuffle(p)
                if self.deck[p]:
                    cards[p] = self.deck[p].pop()
                    aside[p].append(cards[p])
            self.war.append((cards[0], cards[1]))
            if ev is not None:
                ev.append(Event("war", f"war: seat 0 reveals {cards[0] or 'nothing'}, seat 1 reveals "
                                f"{cards[1] or 'nothing'}", None, {"cards": (cards[0], cards[1])}))
            if not cards[0] or not cards[1]:
                first = 0  # [house] a player cannot reveal: seat 0 acts first
            elif cards[0] != cards[1]:
                first = 0 if cards[0] < cards[1] else 1
        for p in (0, 1):
            d = self.disc[p]
            for v in aside[p]:
                d[v - 1] += 1
        return first

    def _begin_actor(self, p: int) -> None:
        """A6: the player reveals cartouches 3 and 4 (A3.4), then removes (A6.2)."""
        self.cur = p
        self.rev[p] = 4
        cart = self.cart[p]
        c2 = cart[1]
        limit = SLOTS * cart[2]  # A6.1: temples 1..v are squares 0..12v-1
        ev = self._ev
        if ev is not None:
            where = "temple 1 only" if cart[2] == 1 else f"temples 1-{cart[2]}"
            ev.append(Event("reveal_cartouches_3_4", f"seat {p} reveals cartouche 3: {cart[2]} "
                            f"({where}), cartouche 4: {cart[3]}", p, {"cards": (cart[2], cart[3])}))
        if c2 != 2:
            if c2 == 1:
                tgt = p
                req = 1
            else:
                tgt = 1 - p
                req = c2 - 2
            if self.rnd == 1:  # A6.2: no removal at all in the first round
                if ev is not None:
                    ev.append(Event("removal", f"seat {p}: no removal in the first round", p,
                                    {"required": req, "count": 0, "target": tgt}))
            else:
                n = self.board[:limit].count(tgt)
                n = min(n, req)
                if ev is not None:
                    whose = "their own" if tgt == p else f"seat {tgt}'s"
                    ev.append(Event("removal", f"seat {p} must remove {n} of {whose} counters "
                                    f"(cartouche 2 asks {req})", p,
                                    {"required": req, "count": n, "target": tgt}))
                if n:
                    self.phase = REMOVE_PHASE
                    self.tgt = tgt
                    self.todo = n
                    return
        self._begin_place()

    def _begin_place(self) -> None:
        """A6.3: q = min(p, stock), e = empty allowed squares; place min(q, e)."""
        p = self.cur
        cart = self.cart[p]
        q = cart[3]
        q = min(q, self.stock[p])
        e = self.board[: SLOTS * cart[2]].count(-1)
        n = q if q < e else e
        self.over = q - n
        self.tgt = -1
        if self._ev is not None:
            self._ev.append(Event("placement", f"seat {p} must place {n} counter(s)"
                                  + (f", {q - n} overflow" if q > n else ""), p,
                                  {"count": n, "overflow": q - n, "stock": self.stock[p],
                                   "empty": e, "cartouche": cart[3]}))
        if n:
            self.phase = PLACE_PHASE
            self.todo = n
            return
        self._end_actor()

    def _end_actor(self) -> None:
        """End of a player's actions: A6.3 overflow, A6.4 win check, next player or A7."""
        p = self.cur
        ev = self._ev
        self.todo = 0
        if self.over:
            k = self.kingdom
            room = KINGDOM_SIZE - k[0] - k[1]
            moved = self.over if self.over < room else room
            self.stock[p] -= moved
            k[p] += moved
            if ev is not None:
                ev.append(Event("overflow", f"seat {p}: {self.over} counter(s) overflow, {moved} go to the "
                                "Kingdom of the Dead", p, {"overflow": self.over, "to_kingdom": moved}))
            self.over = 0
        # A6.4 immediate win check, only for the player who just acted.
        b = self.board
        reason = ""
        for lo in (0, 12, 24, 36):
            if b[lo:lo + 12].count(p) == 12:
                reason = "temple"
                break
        else:
            for i in YELLOW:
                if b[i] != p:
                    break
            else:
                reason = "yellow"
            if not reason:
                for i in GREEN:
                    if b[i] != p:
                        break
                else:
                    reason = "green"
        if reason:
            self._finish((p,), reason)
            return
        if self.step == 0:
            self.step = 1
            self._begin_actor(1 - self.first)
        else:
            self._cleanup()

    def _cleanup(self) -> None:
        """A7 clean-up, A8 scoring round and reset, or the end of the round."""
        for p in (0, 1):
            d = self.disc[p]
            for v in self.cart[p]:
                d[v - 1] += 1
        self.cart = [[0, 0, 0, 0], [0, 0, 0, 0]]
        self.rev = [0, 0]
        self.phase = RESET_PHASE  # transient, replaced below
        if self._ev is not None:
            self._ev.append(Event("cleanup", "the 8 played cards go to the discard piles"))
        if self.kingdom[0] + self.kingdom[1] >= KINGDOM_SIZE:  # A8.1
            self._scoring()
            if self.phase == OVER:
                return
            # A8.4 reset: Kingdom emptied, then one own counter per temple.
            self.stock[0] += self.kingdom[0]
            self.stock[1] += self.kingdom[1]
            self.kingdom = [0, 0]
            s0, s1 = self.score
            self.rs_first = 0 if s0 > s1 else 1 if s1 > s0 else self.first
            self.rs_idx = 0
            self.rs_t = 0
            if self._ev is not None:
                self._ev.append(Event("reset_start", f"the Kingdom is emptied; seat {self.rs_first} "
                                      "takes back counters first", self.rs_first,
                                      {"first": self.rs_first}))
            self._next_reset()
        else:
            self._end_round()

    def _scoring(self) -> None:
        """A8.2 scoring lines, then the A8.3 end check."""
        b = self.board
        t = [(b[lo:lo + 12].count(0), b[lo:lo + 12].count(1)) for lo in (0, 12, 24, 36)]
        lines: list[tuple[str, int, int]] = []

        def majority(c: tuple[int, int]) -> int:
            return 0 if c[0] > c[1] else 1 if c[1] > c[0] else -1

        m = majority(t[0])  # temple 1: the difference
        pts = abs(t[0][0] - t[0][1])
        lines.append(("temple 1", pts if m == 0 else 0, pts if m == 1 else 0))
        m = majority(t[1])  # temple 2: 5
        lines.append(("temple 2", 5 if m == 0 else 0, 5 if m == 1 else 0))
        m = majority(t[2])  # temple 3: 1 per own counter in temple 3
        lines.append(("temple 3", t[2][0] if m == 0 else 0, t[2][1] if m == 1 else 0))
        m = majority(t[3])  # temple 4: 3 per own blue square, all temples
        blue = [sum(1 for i in BLUE if b[i] == p) for p in (0, 1)]
        lines.append(("temple 4", 3 * blue[0] if m == 0 else 0, 3 * blue[1] if m == 1 else 0))
        grey = (sum(1 for i in GREY if b[i] == 0), sum(1 for i in GREY if b[i] == 1))
        m = majority(grey)  # grey squares: 8
        lines.append(("grey squares", 8 if m == 0 else 0, 8 if m == 1 else 0))
        bonus = [sum(v for i, v in BONUS if b[i] == p) for p in (0, 1)]
        lines.append(("bonus squares", bonus[0], bonus[1]))
        ev = self._ev
        if ev is not None:
            ev.append(Event("scoring_round", "the Kingdom of the Dead is full: scoring round"))
        for name, p0, p1 in lines:
            self.score[0] += p0
            self.score[1] += p1
            if ev is not None:
                ev.append(Event("scoring_line", f"{name}: seat 0 +{p0}, seat 1 +{p1}", None,
                                {"line": name, "points": (p0, p1)}))
        s0, s1 = self.score
        if s0 >= WIN_POINTS or s1 >= WIN_POINTS:  # A8.3 / A9.2
            self._finish(() if s0 == s1 else (0,) if s0 > s1 else (1,), "scoring")

    def _next_reset(self) -> None:
        """A8.4: next (player, temple) with a counter of that player; [house] skip others."""
        b = self.board
        while self.rs_idx < 2:
            p = self.rs_first if self.rs_idx == 0 else 1 - self.rs_first
            while self.rs_t < 4:
                lo = SLOTS * self.rs_t
                if p in b[lo:lo + SLOTS]:
                    self.phase = RESET_PHASE
                    self.cur = p
                    return
                self.rs_t += 1
            self.rs_idx += 1
            self.rs_t = 0
        self.rs_first = -1
        self.rs_idx = 0
        self._end_round()

    def _end_round(self) -> None:
        """A9.3 round limit, else the next round: draw (A3.1), exchange or arrange."""
        if self.rnd >= self.max_rounds:
            s0, s1 = self.score
            self._finish(() if s0 == s1 else (0,) if s0 > s1 else (1,), "round_limit")
            return
        self.rnd += 1
        self.first = -1
        self.step = 0
        self.war = []
        self.exch = [0, 0]
        if self._ev is not None:
            self._ev.append(Event("round", f"round {self.rnd} begins", None, {"round": self.rnd}))
        self._draw(0)
        self._draw(1)
        if self.token[0]:
            self.phase = EXCHANGE_PHASE
            self.cur = 0
        elif self.token[1]:
            self.phase = EXCHANGE_PHASE
            self.cur = 1
        else:
            self.phase = ARRANGE_PHASE
            self.cur = 0

    def _finish(self, winners: tuple[int, ...], reason: str) -> None:
        self.phase = OVER
        self.cur = TERMINAL
        self.winners = winners
        self.reason = reason
        if self._ev is not None:
            o = self.outcome()
            assert o is not None
            self._ev.append(Event("win" if winners else "draw", o.text,
                                  winners[0] if winners else None,
                                  {"winners": winners, "reason": reason, "scores": tuple(self.score)}))

    # ------------------------------------------------------------------------------
    # Results
    # ------------------------------------------------------------------------------

    def scores(self) -> tuple[int, ...]:
        return (self.score[0], self.score[1])

    def returns(self) -> tuple[float, ...]:
        w = self.winners
        if self.phase != OVER or not w:
            return (0.0, 0.0)
        return (1.0, -1.0) if w[0] == 0 else (-1.0, 1.0)  # A9.4

    def outcome(self) -> Outcome | None:
        if self.phase != OVER or self.winners is None:
            return None
        w = self.winners
        why = {
            "points": "reached 40 points on cartouche 1 (A4.2)",
            "temple": "occupies a whole temple (A6.4)",
            "yellow": "occupies all 14 yellow squares (A6.4)",
            "green": "occupies all 14 green squares (A6.4)",
            "scoring": "has the higher score after a scoring round reached 40 (A9.2)",
            "round_limit": "has the higher score after the round limit (A9.3)",
        }[self.reason]
        s = f"{self.score[0]}-{self.score[1]}"
        if w:
            text = f"seat {w[0]} wins: {why}; score {s}"
        elif self.reason == "scoring":
            text = f"draw: equal scores after a scoring round reached 40 (A9.2); score {s}"
        else:
            text = f"draw: equal scores at the round limit (A9.3); score {s}"
        return Outcome(w, self.reason, text, self.scores(), self.returns())

    # ------------------------------------------------------------------------------
    # Information
    # ------------------------------------------------------------------------------

    def view(self, player: int | None) -> AtonView:
        if player is not None and (isinstance(player, bool) or player not in (0, 1)):
            raise IllegalActionError(f"aton: no seat {player!r} (seats are 0 and 1)")
        return self._view(player, omniscient=False)

    def _view(self, player: int | None, omniscient: bool) -> AtonView:
        carts: list[tuple[int, int, int, int]] = []
        for p in (0, 1):
            c = self.cart[p]
            r = 4 if omniscient or p == player else self.rev[p]
            carts.append((c[0] if r > 0 else 0, c[1] if r > 1 else 0,
                          c[2] if r > 2 else 0, c[3] if r > 3 else 0))
        own_dec: str | None = None
        hand: tuple[int, ...] = ()
        if player is not None:
            hand = tuple(self.hand[player])
            if self.xdec[player] >= 0:
                own_dec = "exchange" if self.xdec[player] else "keep"
        ph = self.phase
        return AtonView(
            player=player,
            round=self.rnd,
            decision=PHASE_NAMES[ph],
            current_player=self.cur,
            board=tuple(self.board),
            kingdom=(self.kingdom[0], self.kingdom[1]),
            stocks=(self.stock[0], self.stock[1]),
            scores=(self.score[0], self.score[1]),
            deck_sizes=(len(self.deck[0]), len(self.deck[1])),
            hand_sizes=(len(self.hand[0]), len(self.hand[1])),
            discards=(tuple(self.disc[0]), tuple(self.disc[1])),  # type: ignore[arg-type]
            tokens=(bool(self.token[0]), bool(self.token[1])),
            exchanged=(bool(self.exch[0]), bool(self.exch[1])),
            committed=(self.cart[0][0] > 0, self.cart[1][0] > 0),
            cartouches=(carts[0], carts[1]),
            revealed=(self.rev[0], self.rev[1]),
            hand=hand,
            exchange_decision=own_dec,
            first_player=None if self.first < 0 else self.first,
            war=tuple(self.war),
            remaining=self.todo if ph in (REMOVE_PHASE, PLACE_PHASE) else 0,
            removal_target=self.tgt if ph == REMOVE_PHASE else None,
            overflow=self.over if ph == PLACE_PHASE else 0,
            reset_temple=self.rs_t + 1 if ph == RESET_PHASE else None,
            winners=self.winners if ph == OVER else None,
            reason=self.reason if ph == OVER else None,
        )

    def sample_consistent_state(self, player: int, rng: random.Random) -> Self:
        """Re-deal what ``player`` cannot see (A10): the opponent's hand, deck and unrevealed
        cartouches from their unseen cards, the opponent's pending exchange decision, the
        player's own deck order (A10.3) and the engine's future randomness."""
        if isinstance(player, bool) or player not in (0, 1):
            raise IllegalActionError(f"aton: no seat {player!r} (seats are 0 and 1)")
        s = self.clone()
        o = 1 - player
        # Every re-deal starts from a sorted pool, so that the result depends only on
        # ``view(player)`` and ``rng``, never on the hidden order (a bot's no-peeking guarantee).
        own = sorted(s.deck[player])
        rng.shuffle(own)
        s.deck[player] = own
        cart = s.cart[o]
        hidden = [i for i in range(4) if i >= s.rev[o] and cart[i]]
        pool = sorted(s.deck[o] + s.hand[o] + [cart[i] for i in hidden])
        rng.shuffle(pool)
        for i in hidden:  # a random order = a uniform distinct arrangement
            cart[i] = pool.pop()
        nh = len(s.hand[o])
        s.hand[o] = sorted(pool[:nh])
        s.deck[o] = pool[nh:]
        if s.xdec[o] >= 0:
            s.xdec[o] = rng.randrange(2)
        s.rng = Rng(rng.getrandbits(64))
        return s

    # ------------------------------------------------------------------------------
    # Copies, text, storage
    # ------------------------------------------------------------------------------

    def clone(self) -> Self:
        cls = type(self)
        s = cls.__new__(cls)
        s.board = self.board[:]
        s.stock = self.stock[:]
        s.kingdom = self.kingdom[:]
        s.score = self.score[:]
        s.token = self.token[:]
        s.xdec = self.xdec[:]
        s.exch = self.exch[:]
        s.rev = self.rev[:]
        d = self.deck
        s.deck = [d[0][:], d[1][:]]
        h = self.hand
        s.hand = [h[0][:], h[1][:]]
        d = self.disc
        s.disc = [d[0][:], d[1][:]]
        c = self.cart
        s.cart = [c[0][:], c[1][:]]
        s.phase = self.phase
        s.cur = self.cur
        s.first = self.first
        s.step = self.step
        s.todo = self.todo
        s.over = self.over
        s.tgt = self.tgt
        s.rs_first = self.rs_first
        s.rs_idx = self.rs_idx
        s.rs_t = self.rs_t
        s.rnd = self.rnd
        s.max_rounds = self.max_rounds
        s.moves = self.moves
        s.war = self.war[:]
        s.winners = self.winners
        s.reason = self.reason
        s.rng = self.rng.clone()
        s._ev = None
        return s

    def to_text(self) -> str:
        extra = []
        for p in (0, 1):
            dec = ""
            if self.xdec[p] >= 0:
                dec = f" · pending exchange decision: {'exchange' if self.xdec[p] else 'keep'}"
            extra.append(f"seat {p} hand: {''.join(map(str, self.hand[p])) or '-'}{dec} · "
                         f"deck (top last): {''.join(map(str, self.deck[p])) or '-'}")
        return render(self._view(None, omniscient=True), extra)

    def serialize(self) -> str:
        from engine.aton.codec import encode

        return encode(self)

    def validate(self) -> None:
        from engine.aton.codec import check

        check(self)

    def __repr__(self) -> str:
        return f"<AtonState round {self.rnd} {PHASE_NAMES[self.phase]} seat {self.cur}>"

    def fields(self) -> dict[str, Any]:
        """Every field of the state by name (tests, debugging)."""
        return {k: getattr(self, k) for k in self.__slots__ if k != "_ev"}

