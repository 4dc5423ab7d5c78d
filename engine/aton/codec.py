"""Aton state serialisation (``aton:2:...``) and invariant checks.

Format, version 2: ``aton:2:`` then ``key=value`` fields separated by ``;``, all present::

    r=<round>;mr=<round limit>;ph=<phase name>;cur=<seat|-1>;f=<first|-1>;st=<step>;
    td=<todo>;ov=<overflow>;tg=<target|-1>;rs=<first|-1>,<idx>,<temple 0-3>;
    out=<-|winner|d>:<reason>;b=<48 x . 0 1>;war=<pairs like 12,33>;
    p0=<player 0>;p1=<player 1>;rng=<generator>;mv=<actions applied since the start>

and each player is ``score,stock,kingdom,token,xdec,exchanged,revealed,cart,hand,deck,disc``
with ``xdec`` one of ``- k x``, ``cart`` 4 digits (``0000`` empty), ``hand`` sorted digits,
``deck`` digits with the top of the deck last, ``disc`` four counts ``a.b.c.d``; the
generator is :meth:`engine.rng.SerialRng.to_text` (``k<key>.<position>`` for the game's
keyed chance, plain hex for SplitMix64).

Version 1 (the previous release) is the same text without ``mv`` and with a SplitMix64
generator only: it is still read (its move number reads as 0), and :func:`encode` writes it
on request for a state whose generator allows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.aton.board import (
    CARDS_PER_VALUE,
    COUNTERS,
    HAND_SIZE,
    KINGDOM_SIZE,
    MAX_ROUNDS,
    NUM_SQUARES,
    SLOTS,
    WIN_POINTS,
)
from engine.core import StateFormatError
from engine.rng import Rng, rng_from_text

if TYPE_CHECKING:
    from engine.aton.state import AtonState

VERSION = 2
#: Versions :func:`decode` reads.
READ_VERSIONS = ("1", "2")
_KEYS = (
    "r", "mr", "ph", "cur", "f", "st", "td", "ov", "tg", "rs", "out", "b", "war", "p0", "p1", "rng", "mv",
)  # fmt: skip
#: Fields of version 1 (no move number).
_V1_KEYS = _KEYS[:-1]
_XDEC = {"-": -1, "k": 0, "x": 1}
_XDEC_CHAR = {-1: "-", 0: "k", 1: "x"}


_DIGIT = {v: str(v) for v in range(10)}
_SQUARE_CHAR = {-1: ".", 0: "0", 1: "1"}


def _digits(values: list[int]) -> str:
    return "".join(map(_DIGIT.__getitem__, values))


def _player(s: AtonState, p: int) -> str:
    d = s.disc[p]
    return (
        f"{s.score[p]},{s.stock[p]},{s.kingdom[p]},{s.token[p]},{_XDEC_CHAR[s.xdec[p]]},{s.exch[p]},"
        f"{s.rev[p]},{_digits(s.cart[p])},{_digits(s.hand[p])},{_digits(s.deck[p])},"
        f"{d[0]}.{d[1]}.{d[2]}.{d[3]}"
    )


def encode(s: AtonState, version: int = VERSION) -> str:
    """The ``aton:2:`` text (one f-string: this runs on every ApplyAction of the service), or
    the previous release's ``aton:1:`` text, which only a SplitMix64 generator can be
    written in (``ValueError`` otherwise)."""
    from engine.aton.state import PHASE_NAMES

    if version != VERSION and (version != 1 or not isinstance(s.rng, Rng)):
        raise ValueError(f"aton: cannot write state version {version} (version 1 needs SplitMix64)")
    if s.winners is None:
        out = "-"
    else:
        out = (str(s.winners[0]) if s.winners else "d") + ":" + s.reason
    board = "".join(map(_SQUARE_CHAR.__getitem__, s.board))
    war = ",".join(f"{a}{b}" for a, b in s.war)
    return (
        f"aton:{version}:r={s.rnd};mr={s.max_rounds};ph={PHASE_NAMES[s.phase]};cur={s.cur};f={s.first};"
        f"st={s.step};td={s.todo};ov={s.over};tg={s.tgt};rs={s.rs_first},{s.rs_idx},{s.rs_t};"
        f"out={out};b={board};war={war};p0={_player(s, 0)};p1={_player(s, 1)};rng={s.rng.to_text()}"
        + (f";mv={s.moves}" if version == VERSION else "")
    )


class _Parser:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, msg: str) -> StateFormatError:
        return StateFormatError(f"aton state: {self.where}: {msg}")

    def integer(self, text: str, name: str, lo: int | None = None, hi: int | None = None) -> int:
        t = text.strip()
        if not t or not (t.isdigit() or (t[0] == "-" and t[1:].isdigit())):
            raise self.fail(f"{name} must be an integer, got {text!r}")
        v = int(t)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.fail(f"{name} = {v} is out of range [{lo}, {hi}]")
        return v

    def cards(self, text: str, name: str, allow_zero: bool = False) -> list[int]:
        ok = "01234" if allow_zero else "1234"
        if any(c not in ok for c in text):
            raise self.fail(f"{name} must be card values {'0-4' if allow_zero else '1-4'}, got {text!r}")
        return [int(c) for c in text]


def decode(data: str) -> AtonState:
    """Parse a serialised state and validate it; :class:`StateFormatError` otherwise."""
    from engine.aton.state import PHASE_NAMES, REASONS, AtonState

    if not isinstance(data, str):
        raise StateFormatError(f"aton state: expected a string, got {type(data).__name__}")
    parts = data.strip().split(":", 2)
    if len(parts) != 3 or parts[0] != "aton":
        raise StateFormatError("aton state: expected 'aton:<version>:<fields>', got "
                               f"{data[:40]!r}{'...' if len(data) > 40 else ''}")
    if parts[1] not in READ_VERSIONS:
        raise StateFormatError(
            f"aton state: unknown version {parts[1]!r} "
            f"(this engine reads versions {', '.join(READ_VERSIONS)})"
        )
    keys = _KEYS if parts[1] == str(VERSION) else _V1_KEYS
    fields: dict[str, str] = {}
    for item in parts[2].split(";"):
        key, eq, value = item.partition("=")
        if not eq:
            raise StateFormatError(f"aton state: field {item!r} is not key=value")
        if key in fields:
            raise StateFormatError(f"aton state: field {key!r} appears twice")
        if key not in keys:
            raise StateFormatError(f"aton state: unknown field {key!r}")
        fields[key] = value
    missing = [k for k in keys if k not in fields]
    if missing:
        raise StateFormatError(f"aton state: missing field(s) {', '.join(missing)}")
    P = _Parser("header")
    s = AtonState._blank()
    s.rnd = P.integer(fields["r"], "round", 1)
    s.moves = P.integer(fields["mv"], "move number", 0) if "mv" in fields else 0
    s.max_rounds = P.integer(fields["mr"], "round limit", 1, MAX_ROUNDS)
    if fields["ph"] not in PHASE_NAMES:
        raise P.fail(f"unknown phase {fields['ph']!r} (phases: {', '.join(PHASE_NAMES)})")
    s.phase = PHASE_NAMES.index(fields["ph"])
    s.cur = P.integer(fields["cur"], "current player", -1, 1)
    s.first = P.integer(fields["f"], "first player", -1, 1)
    s.step = P.integer(fields["st"], "step", 0, 1)
    s.todo = P.integer(fields["td"], "remaining count", 0, NUM_SQUARES)
    s.over = P.integer(fields["ov"], "overflow", 0, 4)
    s.tgt = P.integer(fields["tg"], "removal target", -1, 1)
    rs = fields["rs"].split(",")
    if len(rs) != 3:
        raise P.fail(f"rs must be 'first,index,temple', got {fields['rs']!r}")
    s.rs_first = P.integer(rs[0], "reset first", -1, 1)
    s.rs_idx = P.integer(rs[1], "reset index", 0, 1)
    s.rs_t = P.integer(rs[2], "reset temple", 0, 3)
    out = fields["out"]
    if out != "-":
        who, colon, reason = out.partition(":")
        if not colon or reason not in REASONS:
            raise P.fail(f"outcome must be '-' or '<winner|d>:<reason>' with a reason in "
                         f"{', '.join(REASONS)}, got {out!r}")
        s.winners = () if who == "d" else (P.integer(who, "winner", 0, 1),)
        s.reason = reason
    b = fields["b"]
    if len(b) != NUM_SQUARES or any(c not in ".01" for c in b):
        raise StateFormatError(f"aton state: board must be 48 characters of '.', '0', '1', got {b!r}")
    s.board = [-1 if c == "." else int(c) for c in b]
    war = fields["war"]
    s.war = []
    if war:
        for pair in war.split(","):
            cards = _Parser("war").cards(pair, "war pair", allow_zero=True)
            if len(cards) != 2:
                raise StateFormatError(f"aton state: war pairs are two digits, got {pair!r}")
            s.war.append((cards[0], cards[1]))
    for p in (0, 1):
        P = _Parser(f"player {p}")
        items = fields[f"p{p}"].split(",")
        if len(items) != 11:
            raise P.fail("expected 11 comma-separated items "
                         "(score,stock,kingdom,token,xdec,exchanged,revealed,cart,hand,deck,disc), "
                         f"got {len(items)}")
        s.score[p] = P.integer(items[0], "score", 0)
        s.stock[p] = P.integer(items[1], "stock", 0, COUNTERS)
        s.kingdom[p] = P.integer(items[2], "kingdom", 0, KINGDOM_SIZE)
        s.token[p] = P.integer(items[3], "token", 0, 1)
        if items[4] not in _XDEC:
            raise P.fail(f"exchange decision must be '-', 'k' or 'x', got {items[4]!r}")
        s.xdec[p] = _XDEC[items[4]]
        s.exch[p] = P.integer(items[5], "exchanged", 0, 1)
        s.rev[p] = P.integer(items[6], "revealed", 0, 4)
        cart = P.cards(items[7], "cartouches", allow_zero=True)
        if len(cart) != 4:
            raise P.fail(f"cartouches must be 4 digits, got {items[7]!r}")
        s.cart[p] = cart
        s.hand[p] = sorted(P.cards(items[8], "hand"))
        s.deck[p] = P.cards(items[9], "deck")
        disc = items[10].split(".")
        if len(disc) != 4:
            raise P.fail(f"discard must be 4 counts a.b.c.d, got {items[10]!r}")
        s.disc[p] = [P.integer(d, f"discarded {v + 1}s", 0, CARDS_PER_VALUE) for v, d in enumerate(disc)]
    try:
        s.rng = rng_from_text(fields["rng"])
        if parts[1] == "1" and not isinstance(s.rng, Rng):
            raise ValueError
    except ValueError:
        raise StateFormatError(
            f"aton state: rng must be a generator state (hex, or k<key>.<position> from version 2), "
            f"got {fields['rng'][:80]!r}"
        ) from None
    check(s)
    return s


def check(s: AtonState) -> None:
    """Every invariant of an Aton state; :class:`StateFormatError` names the first broken."""
    from engine.aton.state import (
        ARRANGE_PHASE,
        EXCHANGE_PHASE,
        OVER,
        PHASE_NAMES,
        PLACE_PHASE,
        REASONS,
        REMOVE_PHASE,
        RESET_PHASE,
    )

    def bad(msg: str) -> StateFormatError:
        return StateFormatError(f"aton state: impossible position: {msg}")

    if not 1 <= s.rnd <= s.max_rounds:
        raise bad(f"round {s.rnd} outside 1..{s.max_rounds}")
    if len(s.board) != NUM_SQUARES or any(o not in (-1, 0, 1) for o in s.board):
        raise bad("the board must have 48 squares, each empty or owned by seat 0/1")
    if s.kingdom[0] + s.kingdom[1] > KINGDOM_SIZE:
        raise bad(f"the Kingdom of the Dead holds {s.kingdom[0] + s.kingdom[1]} counters (at most 8, A1.7)")
    ph = s.phase
    if not 0 <= ph <= OVER:
        raise bad(f"unknown phase {ph}")
    for p in (0, 1):
        # A1.3: 29 counters on board + stock + Kingdom.
        on_board = s.board.count(p)
        if min(s.stock[p], s.kingdom[p], s.score[p]) < 0:
            raise bad(f"seat {p} has a negative stock, Kingdom count or score")
        total = on_board + s.stock[p] + s.kingdom[p]
        if total != COUNTERS:
            raise bad(f"seat {p} has {total} counters (board {on_board} + stock {s.stock[p]} + Kingdom "
                      f"{s.kingdom[p]}), not 29 (A1.3)")
        # A1.2: 36 cards, nine of each value, in deck + hand + discard + cartouches.
        cart = s.cart[p]
        if len(cart) != 4 or any(not 0 <= v <= 4 for v in cart) or (0 in cart and any(cart)):
            raise bad(f"seat {p}'s cartouches {cart} must be four cards 1-4 or empty")
        if len(s.hand[p]) not in (0, HAND_SIZE) or s.hand[p] != sorted(s.hand[p]):
            raise bad(f"seat {p}'s hand {s.hand[p]} must be 0 or 4 sorted cards")
        if any(not 1 <= v <= 4 for v in s.hand[p] + s.deck[p]):
            raise bad(f"seat {p} holds a card outside 1-4")
        if len(s.disc[p]) != 4 or min(s.disc[p]) < 0:
            raise bad(f"seat {p}'s discard counts {s.disc[p]} are invalid")
        all_cards = s.deck[p] + s.hand[p] + [v for v in cart if v]
        n_cards = len(all_cards) + sum(s.disc[p])
        if n_cards != 36:
            raise bad(f"seat {p} has {n_cards} cards in deck + hand + discard + cartouches, not 36 (A1.2)")
        for v in (1, 2, 3, 4):
            n = all_cards.count(v) + s.disc[p][v - 1]
            if n != CARDS_PER_VALUE:
                raise bad(f"seat {p} has {n} cards of value {v}, not 9 (A1.2)")
        if s.token[p] not in (0, 1) or s.exch[p] not in (0, 1) or s.xdec[p] not in (-1, 0, 1):
            raise bad(f"seat {p}'s token/exchange flags are invalid")
        if s.exch[p] and s.token[p]:
            raise bad(f"seat {p} exchanged this round but still holds the exchange token (A1.4)")
        if s.rev[p] not in (0, 1, 2, 4):
            raise bad(f"seat {p} has {s.rev[p]} revealed cartouches (0, 1, 2 or 4)")
        if s.rev[p] and not cart[0]:
            raise bad(f"seat {p} has revealed cartouches but none are filled")
    if any(not (0 <= a <= 4 and 0 <= b <= 4) for a, b in s.war):
        raise bad("war cards must be values 0-4")
    name = PHASE_NAMES[ph]
    hands = [len(s.hand[0]), len(s.hand[1])]
    full = [bool(s.cart[0][0]), bool(s.cart[1][0])]
    if ph != OVER:
        if s.winners is not None or s.reason:
            raise bad(f"phase {name} but an outcome is recorded")
        if s.cur not in (0, 1):
            raise bad(f"phase {name} needs a seat to decide, got {s.cur}")
        if max(s.score) >= WIN_POINTS:
            raise bad(f"a score of {max(s.score)} should have ended the game (A4.2/A8.3)")
    if ph not in (REMOVE_PHASE, PLACE_PHASE) and s.todo:
        raise bad(f"phase {name} has {s.todo} removals/placements pending")
    if ph != PLACE_PHASE and s.over:
        raise bad(f"phase {name} has an overflow pending")
    if ph != REMOVE_PHASE and s.tgt != -1:
        raise bad(f"phase {name} has a removal target")
    if ph != RESET_PHASE and (s.rs_first != -1 or s.rs_idx or s.rs_t):
        raise bad(f"phase {name} has reset progress recorded")
    if ph in (EXCHANGE_PHASE, ARRANGE_PHASE) and (s.first != -1 or s.step or s.war or any(s.rev)):
        raise bad(f"phase {name} comes before the reveal, but order/war/reveals are recorded")
    if ph == EXCHANGE_PHASE:
        if hands != [4, 4] or any(full) or any(s.exch):
            raise bad("exchange phase: both players hold 4 cards and nothing is arranged yet")
        if not s.token[s.cur] or s.xdec[s.cur] != -1:
            raise bad(f"exchange phase: seat {s.cur} must hold a token and not have decided yet")
        if s.xdec[1] != -1 or (s.cur == 0 and s.xdec[0] != -1):
            raise bad("exchange phase: decisions are taken seat 0 then seat 1")
        if s.cur == 1 and (s.xdec[0] != -1) != bool(s.token[0]):
            raise bad("exchange phase: seat 0 decides before seat 1 if it holds a token")
    elif s.xdec != [-1, -1]:
        raise bad(f"phase {name} has a pending exchange decision")
    if ph == ARRANGE_PHASE:
        want_hands = [4, 4] if s.cur == 0 else [0, 4]
        if hands != want_hands or full != [s.cur == 1, False]:
            raise bad(f"arrange phase, seat {s.cur} to decide: hands must hold {want_hands} cards and only "
                      "seat 0 may have arranged (when seat 1 decides)")
    if ph in (REMOVE_PHASE, PLACE_PHASE):
        if hands != [0, 0] or full != [True, True]:
            raise bad(f"phase {name}: both players must have arranged and hold no cards")
        if s.first not in (0, 1):
            raise bad(f"phase {name}: no first player recorded")
        if s.cur != (s.first if s.step == 0 else 1 - s.first):
            raise bad(f"phase {name}: seat {s.cur} is not the acting player (first {s.first}, step {s.step})")
        other = 1 - s.cur
        if s.rev[s.cur] != 4 or s.rev[other] != (2 if s.step == 0 else 4):
            raise bad(f"phase {name}: revealed cartouches {s.rev} do not match the step (A3.4)")
        if s.todo < 1:
            raise bad(f"phase {name}: nothing left to do")
        cart = s.cart[s.cur]
        limit = SLOTS * cart[2]
        if ph == REMOVE_PHASE:
            c2 = cart[1]
            want_tgt = s.cur if c2 == 1 else other
            req = {1: 1, 2: 0, 3: 1, 4: 2}[c2]
            if s.rnd == 1:
                raise bad("no removal happens in the first round (A6.2)")
            if s.tgt != want_tgt or s.todo > req or s.todo > s.board[:limit].count(s.tgt):
                raise bad(f"remove phase: {s.todo} removals of seat {s.tgt}'s counters do not fit "
                          f"cartouche 2 = {c2} and the allowed temples")
        elif s.todo > s.stock[s.cur] or s.todo > s.board[:limit].count(-1) or s.todo + s.over > cart[3]:
            raise bad(f"place phase: {s.todo} placements (+{s.over} overflow) do not fit cartouche 4 = "
                      f"{cart[3]}, the stock and the empty allowed squares")
    if ph == RESET_PHASE:
        if hands != [0, 0] or any(full) or any(s.rev) or s.kingdom != [0, 0]:
            raise bad("reset phase: cards are cleaned up and the Kingdom is empty (A8.4)")
        if s.rs_first not in (0, 1) or s.first not in (0, 1):
            raise bad("reset phase: no reset order recorded")
        p = s.rs_first if s.rs_idx == 0 else 1 - s.rs_first
        lo = SLOTS * s.rs_t
        if s.cur != p or p not in s.board[lo:lo + SLOTS]:
            raise bad(f"reset phase: seat {s.cur} must have a counter in temple {s.rs_t + 1}")
    if ph == OVER:
        if s.cur != -1 or s.winners is None or s.reason not in REASONS:
            raise bad("a finished game needs current player -1 and an outcome")
        if len(s.winners) > 1 or any(w not in (0, 1) for w in s.winners):
            raise bad(f"invalid winners {s.winners}")
