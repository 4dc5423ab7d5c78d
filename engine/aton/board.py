"""Aton's fixed components: the board of A1.6 and the action id layout (A11).

Squares are numbered ``0..47``: square ``12 * (temple - 1) + slot`` with temple 1-4 and slot
0-11 row by row (A1.6). Temples are consecutive, so the squares of the temples allowed by a
cartouche-3 value ``v`` (A6.1: temples 1..v) are exactly ``range(12 * v)``.

Action ids (stable, state-independent, ``range(NUM_ACTIONS)``):

==========  ===========  =======================================================
ids         text         meaning
==========  ===========  =======================================================
0           ``keep``     A3.2: keep the hand (do not spend the exchange token)
1           ``exchange`` A3.2: spend the token, discard the hand, draw 4 new cards
2..257      ``arrange 3142``  A3.3: card values on cartouches 1..4; id =
                         ``2 + 64*(c1-1) + 16*(c2-1) + 4*(c3-1) + (c4-1)``
258..305    ``remove T1.7``   A6.2: remove the counter on square (temple, slot)
306..353    ``place T2.5``    A6.3: place a counter on square (temple, slot)
354..401    ``reset T3.4``    A8.4: take own counter from square back to stock
==========  ===========  =======================================================
"""

from __future__ import annotations

import itertools
import re
from typing import Final

from engine.core import ActionInfo, ActionParseError, FieldValue, check_action_text

# ---------------------------------------------------------------------------------------
# Board (A1.6)
# ---------------------------------------------------------------------------------------

NUM_TEMPLES: Final = 4
SLOTS: Final = 12
NUM_SQUARES: Final = NUM_TEMPLES * SLOTS  # 48
COUNTERS: Final = 29  # A1.3
CARDS_PER_VALUE: Final = 9  # A1.2
DECK_SIZE: Final = 36  # A1.2
KINGDOM_SIZE: Final = 8  # A1.7
HAND_SIZE: Final = 4  # A3.1
WIN_POINTS: Final = 40  # A4.2 / A8.3
MAX_ROUNDS: Final = 100  # A9.3 [house]

#: Square kinds, row by row, per temple (A1.6). "Y" yellow, "K" grey, "B" blue,
#: "G" green, "1"/"2" bonus squares worth +1/+2 (neither yellow nor green).
_LAYOUT: Final = (
    "YYYY" "KK1B" "GGGG",
    "YYYY" "KK1B" "GGGG",
    "YYY1" "KKKB" "GGG1",
    "YYY2" "KKKB" "GGG2",
)  # fmt: skip
KINDS: Final[tuple[str, ...]] = tuple(k for temple in _LAYOUT for k in temple)
YELLOW: Final[tuple[int, ...]] = tuple(i for i, k in enumerate(KINDS) if k == "Y")
GREEN: Final[tuple[int, ...]] = tuple(i for i, k in enumerate(KINDS) if k == "G")
GREY: Final[tuple[int, ...]] = tuple(i for i, k in enumerate(KINDS) if k == "K")
BLUE: Final[tuple[int, ...]] = tuple(i for i, k in enumerate(KINDS) if k == "B")
#: (square, printed value) of the bonus squares.
BONUS: tuple[tuple[int, int], ...] = tuple((i, int(k)) for i, k in enumerate(KINDS) if k in "12")

assert len(YELLOW) == 14 and len(GREEN) == 14 and len(GREY) == 10 and len(BLUE) == 4
assert len(BONUS) == 6 and sum(v for _, v in BONUS) == 8

KIND_NAMES: Final = {"Y": "yellow", "K": "grey", "B": "blue", "G": "green", "1": "bonus +1", "2": "bonus +2"}

#: The squares of each temple (A1.6).
TEMPLES: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(range(SLOTS * t, SLOTS * (t + 1))) for t in range(NUM_TEMPLES)
)
#: The sets of squares whose complete occupation wins at once (A6.4): each temple, all
#: yellow squares, all green squares.
INSTANT_WIN_SETS: Final[tuple[tuple[int, ...], ...]] = (*TEMPLES, YELLOW, GREEN)

# A8.2 scoring lines (the rest is counted on the board: temple 1 the difference, temple 3
# one per own counter there, bonus squares their printed value).
TEMPLE_2_POINTS: Final = 5  # temple 2 majority
BLUE_SQUARE_POINTS: Final = 3  # temple 4 majority: per own blue square, all temples
GREY_MAJORITY_POINTS: Final = 8  # majority of the grey squares


def allowed_squares(cartouche_3: int) -> range:
    """A6.1: the squares of the temples a cartouche-3 value allows (temples 1..value)."""
    return range(SLOTS * cartouche_3)


def cartouche_1_points(mine: int, theirs: int) -> int:
    """A4.1: the points a cartouche-1 card scores against the opponent's (0 unless higher)."""
    return 2 * (mine - theirs) if mine > theirs else 0


#: A6.2: per cartouche-2 value (index 1-4), the counters to remove: (how many, whose:
#: ``True`` for the player's own, ``False`` for the opponent's).
REMOVALS: Final[tuple[tuple[int, bool], ...]] = ((0, False), (1, True), (0, False), (1, False), (2, False))


def square_name(square: int) -> str:
    """``T<temple>.<slot>`` as used in action texts."""
    return f"T{square // SLOTS + 1}.{square % SLOTS}"


# ---------------------------------------------------------------------------------------
# Action ids (A11)
# ---------------------------------------------------------------------------------------

KEEP: Final = 0
EXCHANGE: Final = 1
ARRANGE_BASE: Final = 2
REMOVE_BASE: Final = ARRANGE_BASE + 256  # 258
PLACE_BASE: Final = REMOVE_BASE + NUM_SQUARES  # 306
RESET_BASE: Final = PLACE_BASE + NUM_SQUARES  # 354
NUM_ACTIONS: Final = RESET_BASE + NUM_SQUARES  # 402

#: ARRANGEMENTS[a - ARRANGE_BASE] = (c1, c2, c3, c4) card values on cartouches 1..4.
ARRANGEMENTS: Final[tuple[tuple[int, int, int, int], ...]] = tuple(
    (a, b, c, d) for a in range(1, 5) for b in range(1, 5) for c in range(1, 5) for d in range(1, 5)
)


def arrange_action(values: tuple[int, ...] | list[int]) -> int:
    c1, c2, c3, c4 = values
    return ARRANGE_BASE + 64 * (c1 - 1) + 16 * (c2 - 1) + 4 * (c3 - 1) + (c4 - 1)


def hand_key(hand: list[int]) -> int:
    """Index of a sorted 4-card hand in :data:`ARRANGE_BY_HAND`."""
    return 64 * (hand[0] - 1) + 16 * (hand[1] - 1) + 4 * (hand[2] - 1) + (hand[3] - 1)


def _arrangements_of(key: int) -> tuple[int, ...]:
    hand = ARRANGEMENTS[key]
    return tuple(sorted({arrange_action(p) for p in itertools.permutations(hand)}))


#: ARRANGE_BY_HAND[hand_key(sorted hand)] = ascending distinct arrangement ids (A3.3: only
#: distinct assignments are actions, so duplicate values give fewer than 24).
ARRANGE_BY_HAND: Final[tuple[tuple[int, ...], ...]] = tuple(_arrangements_of(k) for k in range(256))

_KIND_OF_BASE: Final = ((RESET_BASE, "reset"), (PLACE_BASE, "place"), (REMOVE_BASE, "remove"))


def action_info(action: object) -> ActionInfo:
    """Structured description of any Aton action id."""
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        raise ActionParseError(f"aton: unknown action id {action!r} (ids are 0..{NUM_ACTIONS - 1})")
    if action == KEEP:
        return ActionInfo(action, "keep", "keep", {})
    if action == EXCHANGE:
        return ActionInfo(action, "exchange", "exchange", {})
    if action < REMOVE_BASE:
        values = ARRANGEMENTS[action - ARRANGE_BASE]
        text = "arrange " + "".join(map(str, values))
        return ActionInfo(action, text, "arrange", {"values": values})
    for base, kind in _KIND_OF_BASE:
        if action >= base:
            square = action - base
            fields: dict[str, FieldValue] = {
                "square": square,
                "temple": square // SLOTS + 1,
                "slot": square % SLOTS,
                "square_kind": KIND_NAMES[KINDS[square]],
            }
            return ActionInfo(action, f"{kind} {square_name(square)}", kind, fields)
    raise AssertionError("unreachable")  # pragma: no cover


ACTION_TEXTS: Final[tuple[str, ...]] = tuple(action_info(a).text for a in range(NUM_ACTIONS))

# ASCII only: ``\d`` and ``\s`` alone match every Unicode digit and space.
_SQUARE_RE: Final = re.compile(r"^(remove|place|reset)\s*t\s*([1-4])\s*[.:/\s]\s*(\d{1,2})$", re.ASCII)
_ARRANGE_RE: Final = re.compile(r"^arrange\s*([1-4])\s*([1-4])\s*([1-4])\s*([1-4])$", re.ASCII)
_SQUARE_BASES: Final = {"remove": REMOVE_BASE, "place": PLACE_BASE, "reset": RESET_BASE}


def string_to_action(text: str) -> int:
    """Parse an action text (case and whitespace tolerant, at most
    :data:`~engine.core.MAX_ACTION_TEXT` characters)."""
    t = " ".join(check_action_text("aton", text).strip().lower().split())
    if t in ("keep", "exchange"):
        return KEEP if t == "keep" else EXCHANGE
    m = _ARRANGE_RE.match(t)
    if m:
        return arrange_action([int(g) for g in m.groups()])
    m = _SQUARE_RE.match(t)
    if m:
        slot = int(m.group(3))
        if slot >= SLOTS:
            raise ActionParseError(f"aton: slot {slot} out of range in {text!r} (slots are 0..11)")
        return _SQUARE_BASES[m.group(1)] + SLOTS * (int(m.group(2)) - 1) + slot
    raise ActionParseError(
        f"aton: cannot parse action {text!r}; expected 'keep', 'exchange', 'arrange 3142' "
        "(values on cartouches 1-4), or 'remove|place|reset T<temple 1-4>.<slot 0-11>'"
    )
