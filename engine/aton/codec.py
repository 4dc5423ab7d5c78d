"""Aton state serialisation (``aton:2:...``); the invariants are
:meth:`engine.aton.state.AtonState.validate`, which decoding runs.

Format, version 2: ``aton:2:`` then ``key=value`` fields separated by ``;``, all present.
The short keys stand for the fields of :class:`~engine.aton.state.AtonState`::

    r=<round>;mr=<max_rounds>;ph=<phase>;cur=<current|-1>;f=<first_player|-1>;
    st=<acting_second>;td=<remaining>;ov=<overflow>;tg=<removal_target|-1>;
    rs=<reset_first|-1>,<reset_turn>,<reset_temple 0-3>;out=<-|winner|d>:<reason>;
    b=<board: 48 x . 0 1>;war=<war_cards: pairs like 12,33>;p0=<seat 0>;p1=<seat 1>;
    rng=<generator>;mv=<actions applied since the start>

and each seat is ``score,stock,kingdom,token,exchange_choice,exchanged,revealed,
cartouches,hand,deck,discards`` with the exchange choice one of ``- k x`` (none, keep,
exchange), the cartouches 4 digits (``0000`` empty), the hand sorted digits, the deck
digits with the top of the deck last, the discards four counts ``a.b.c.d``; the generator
is :meth:`engine.rng.SerialRng.to_text` (``k<key>.<position>`` for the game's keyed
chance, plain hex for SplitMix64).

Version 1 (the previous release) is the same text without ``mv`` and with a SplitMix64
generator only: it is still read (its move number reads as 0), and :func:`encode` writes it
on request for a state whose generator allows it.
"""

from __future__ import annotations

from typing import Final

from engine.aton.board import CARDS_PER_VALUE, COUNTERS, KINGDOM_SIZE, MAX_ROUNDS, NUM_SQUARES
from engine.aton.flow import Phase, Reason
from engine.aton.state import AtonState
from engine.core import StateFormatError, check_state_text
from engine.rng import Rng, rng_from_text

VERSION: Final = 2
#: Versions :func:`decode` reads.
READ_VERSIONS: Final = ("1", "2")
_KEYS: Final = (
    "r", "mr", "ph", "cur", "f", "st", "td", "ov", "tg", "rs", "out", "b", "war", "p0", "p1", "rng", "mv",
)  # fmt: skip
#: Fields of version 1 (no move number).
_V1_KEYS: Final = _KEYS[:-1]
_XDEC: Final = {"-": -1, "k": 0, "x": 1}
_XDEC_CHAR: Final = {-1: "-", 0: "k", 1: "x"}
_PHASES: Final = {str(p): p for p in Phase}
_REASONS: Final = {str(r): r for r in Reason}


_BAD: Final = 255  # a character outside the table being decoded
#: bytes.translate tables. Encoding: a card value 0-9 to its digit; a square's owner + 1
#: (0 empty, 1 and 2 the seats) to '.', '0', '1'. Decoding: the reverse, any other byte
#: (non-ASCII ones too) to _BAD.
_DIGIT_CHARS: Final = bytes.maketrans(bytes(range(10)), b"0123456789")
_SQUARE_CHARS: Final = bytes.maketrans(bytes(range(3)), b".01")
_CARD_VALUES: Final = bytes([c - 48 if 48 <= c <= 52 else _BAD for c in range(256)])  # "0"-"4"
_SQUARE_VALUES: Final = bytes([{46: 0, 48: 1, 49: 2}.get(c, _BAD) for c in range(256)])
#: The integers this module writes, by text.
_SMALL_INT: Final = {str(v): v for v in range(-1, 100)}
#: The most digits of a number in a state text: more than any counter needs, and a bound on
#: the work of converting one.
_MAX_DIGITS: Final = 20


def _digits(values: list[int]) -> str:
    return bytes(values).translate(_DIGIT_CHARS).decode()


def _player(s: AtonState, p: int) -> str:
    d = s.discards[p]
    return (
        f"{s.score[p]},{s.stock[p]},{s.kingdom[p]},{s.tokens[p]},{_XDEC_CHAR[s.exchange_choice[p]]},"
        f"{s.exchanged[p]},{s.revealed[p]},{_digits(s.cartouches[p])},{_digits(s.hands[p])},"
        f"{_digits(s.decks[p])},{d[0]}.{d[1]}.{d[2]}.{d[3]}"
    )


def encode(s: AtonState, version: int = VERSION) -> str:
    """The ``aton:2:`` text (one f-string: this runs on every ApplyAction of the service), or
    the previous release's ``aton:1:`` text, which only a SplitMix64 generator can be
    written in (``ValueError`` otherwise)."""
    if version != VERSION and (version != 1 or not isinstance(s.rng, Rng)):
        raise ValueError(f"aton: cannot write state version {version} (version 1 needs SplitMix64)")
    if s.winners is None:
        out = "-"
    else:
        out = (str(s.winners[0]) if s.winners else "d") + ":" + (s.reason or "")
    board = bytes([v + 1 for v in s.board]).translate(_SQUARE_CHARS).decode()
    war = ",".join(f"{a}{b}" for a, b in s.war_cards)
    return (
        f"aton:{version}:r={s.round};mr={s.max_rounds};ph={s.phase};cur={s.current};f={s.first_player};"
        f"st={s.acting_second};td={s.remaining};ov={s.overflow};tg={s.removal_target};"
        f"rs={s.reset_first},{s.reset_turn},{s.reset_temple};"
        f"out={out};b={board};war={war};p0={_player(s, 0)};p1={_player(s, 1)};rng={s.rng.to_text()}"
        + (f";mv={s.moves}" if version == VERSION else "")
    )


class _Parser:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, msg: str) -> StateFormatError:
        return StateFormatError(f"aton state: {self.where}: {msg}")

    def integer(self, text: str, name: str, lo: int | None = None, hi: int | None = None) -> int:
        v = _SMALL_INT.get(text)  # the texts this module writes: no parsing (fast path)
        if v is None:
            t = text.strip()
            body = t[1:] if t[:1] == "-" else t
            if not (body.isdigit() and body.isascii() and len(body) <= _MAX_DIGITS):
                raise self.fail(f"{name} must be an integer, got {text[:40]!r}")
            v = int(t)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.fail(f"{name} = {v} is out of range [{lo}, {hi}]")
        return v

    def cards(self, text: str, name: str, allow_zero: bool = False) -> list[int]:
        values = text.encode().translate(_CARD_VALUES)
        if _BAD in values or (not allow_zero and 0 in values):
            raise self.fail(f"{name} must be card values {'0-4' if allow_zero else '1-4'}, got {text!r}")
        return list(values)


def decode(data: object, *, validate: bool = True) -> AtonState:
    """Parse a serialised state and validate it; :class:`StateFormatError` otherwise."""
    text = check_state_text("aton", data)
    parts = text.strip().split(":", 2)
    if len(parts) != 3 or parts[0] != "aton":
        raise StateFormatError(
            "aton state: expected 'aton:<version>:<fields>', got "
            f"{text[:40]!r}{'...' if len(text) > 40 else ''}"
        )
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
    try:
        rng = rng_from_text(fields["rng"])
        if parts[1] == "1" and not isinstance(rng, Rng):
            raise ValueError
    except ValueError:
        raise StateFormatError(
            f"aton state: rng must be a generator state (hex, or k<key>.<position> from version 2), "
            f"got {fields['rng'][:80]!r}"
        ) from None
    s = AtonState.blank(rng)
    s.round = P.integer(fields["r"], "round", 1)
    s.moves = P.integer(fields["mv"], "move number", 0) if "mv" in fields else 0
    s.max_rounds = P.integer(fields["mr"], "round limit", 1, MAX_ROUNDS)
    if fields["ph"] not in _PHASES:
        raise P.fail(f"unknown phase {fields['ph']!r} (phases: {', '.join(_PHASES)})")
    s.phase = _PHASES[fields["ph"]]
    s.current = P.integer(fields["cur"], "current player", -1, 1)
    s.first_player = P.integer(fields["f"], "first player", -1, 1)
    s.acting_second = P.integer(fields["st"], "step", 0, 1)
    s.remaining = P.integer(fields["td"], "remaining count", 0, NUM_SQUARES)
    s.overflow = P.integer(fields["ov"], "overflow", 0, 4)
    s.removal_target = P.integer(fields["tg"], "removal target", -1, 1)
    rs = fields["rs"].split(",")
    if len(rs) != 3:
        raise P.fail(f"rs must be 'first,index,temple', got {fields['rs']!r}")
    s.reset_first = P.integer(rs[0], "reset first", -1, 1)
    s.reset_turn = P.integer(rs[1], "reset index", 0, 1)
    s.reset_temple = P.integer(rs[2], "reset temple", 0, 3)
    out = fields["out"]
    if out != "-":
        who, colon, reason = out.partition(":")
        if not colon or reason not in _REASONS:
            raise P.fail(
                f"outcome must be '-' or '<winner|d>:<reason>' with a reason in "
                f"{', '.join(_REASONS)}, got {out!r}"
            )
        s.winners = () if who == "d" else (P.integer(who, "winner", 0, 1),)
        s.reason = _REASONS[reason]
    b = fields["b"]
    squares = b.encode().translate(_SQUARE_VALUES)
    if len(squares) != NUM_SQUARES or _BAD in squares:
        raise StateFormatError(f"aton state: board must be 48 characters of '.', '0', '1', got {b!r}")
    s.board = [v - 1 for v in squares]
    s.derive_board()
    war = fields["war"]
    s.war_cards = []
    if war:
        for pair in war.split(","):
            cards = _Parser("war").cards(pair, "war pair", allow_zero=True)
            if len(cards) != 2:
                raise StateFormatError(f"aton state: war pairs are two digits, got {pair!r}")
            s.war_cards.append((cards[0], cards[1]))
    for p in (0, 1):
        P = _Parser(f"player {p}")
        items = fields[f"p{p}"].split(",")
        if len(items) != 11:
            raise P.fail(
                "expected 11 comma-separated items "
                "(score,stock,kingdom,token,xdec,exchanged,revealed,cart,hand,deck,disc), "
                f"got {len(items)}"
            )
        s.score[p] = P.integer(items[0], "score", 0)
        s.stock[p] = P.integer(items[1], "stock", 0, COUNTERS)
        s.kingdom[p] = P.integer(items[2], "kingdom", 0, KINGDOM_SIZE)
        s.tokens[p] = P.integer(items[3], "token", 0, 1)
        if items[4] not in _XDEC:
            raise P.fail(f"exchange decision must be '-', 'k' or 'x', got {items[4]!r}")
        s.exchange_choice[p] = _XDEC[items[4]]
        s.exchanged[p] = P.integer(items[5], "exchanged", 0, 1)
        s.revealed[p] = P.integer(items[6], "revealed", 0, 4)
        cart = P.cards(items[7], "cartouches", allow_zero=True)
        if len(cart) != 4:
            raise P.fail(f"cartouches must be 4 digits, got {items[7]!r}")
        s.cartouches[p] = cart
        s.hands[p] = sorted(P.cards(items[8], "hand"))
        s.decks[p] = P.cards(items[9], "deck")
        disc = items[10].split(".")
        if len(disc) != 4:
            raise P.fail(f"discard must be 4 counts a.b.c.d, got {items[10]!r}")
        s.discards[p] = [P.integer(d, f"discarded {v + 1}s", 0, CARDS_PER_VALUE) for v, d in enumerate(disc)]
    if validate or parts[1] != str(VERSION):  # only a current text may skip the checks
        s.validate()
    return s
