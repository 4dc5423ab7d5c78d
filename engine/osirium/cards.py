"""Osirium card data: amulets, rituals, exaltations, deities (rules O1.3–O1.6, O7).

This module is pure data. The rules code (``engine.osirium.state`` and friends) reads only
the tables defined here, so a different (e.g. licensed) card list can replace ours by
editing this file alone. Everything marked [house] in ``shared/rules/osirium.md`` lives here.

Conventions:

* colours are indices into :data:`COLOURS`;
* arrows are a 4-bit set, ``N=1, E=2, S=4, W=8``, as printed at rotation 0 (O1.3);
* a ritual requirement is a tuple of counts per colour (blue, red, green, yellow).
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from typing import Final

from engine._mypyc import picklable

# ---------------------------------------------------------------------------------------
# Colours, arrows, patterns (O1.3)
# ---------------------------------------------------------------------------------------

COLOURS: Final[tuple[str, ...]] = ("blue", "red", "green", "yellow")
#: One-letter codes used by the board drawing.
COLOUR_LETTERS: Final[tuple[str, ...]] = ("B", "R", "G", "Y")

N, E, S, W = 1, 2, 4, 8
ARROW_NAMES: Final[tuple[tuple[int, str], ...]] = ((N, "N"), (E, "E"), (S, "S"), (W, "W"))


@dataclasses.dataclass(frozen=True, slots=True)
class Pattern:
    """An arrow pattern as printed at rotation 0, and how many cards per colour carry it."""

    id: int
    name: str
    arrows: int
    per_colour: int


PATTERNS: Final[tuple[Pattern, ...]] = (
    Pattern(0, "single", N, 2),
    Pattern(1, "straight", N | S, 3),
    Pattern(2, "corner", N | E, 4),
    Pattern(3, "tee", N | E | S, 4),
    Pattern(4, "cross", N | E | S | W, 2),
)


@dataclasses.dataclass(frozen=True, slots=True)
class Amulet:
    """One physical amulet card. Cards with the same colour and pattern are identical."""

    id: int
    name: str
    colour: int
    pattern: int
    arrows: int  # printed arrows at rotation 0


def _amulets() -> tuple[Amulet, ...]:
    out: list[Amulet] = []
    for colour, cname in enumerate(COLOURS):
        for pat in PATTERNS:
            for k in range(pat.per_colour):
                out.append(Amulet(len(out), f"{cname}-{pat.name}-{k + 1}", colour, pat.id, pat.arrows))
    return tuple(out)


#: The 60 amulets (O1.3 [house]): 15 per colour.
AMULETS: Final[tuple[Amulet, ...]] = _amulets()

# ---------------------------------------------------------------------------------------
# Rituals (O1.4 [house])
# ---------------------------------------------------------------------------------------


class Principle(enum.IntEnum):
    """The side of a ritual a player casts it by (O5.2)."""

    ORDER = 0
    CHAOS = 1


ORDER, CHAOS = Principle.ORDER, Principle.CHAOS
#: Principle names by value, as in action texts.
PRINCIPLES: Final[tuple[str, ...]] = tuple(p.name.lower() for p in Principle)


@dataclasses.dataclass(frozen=True, slots=True)
class Ritual:
    """A ritual card: required colours (counts per colour) and its two sides."""

    id: int
    name: str
    requirement: tuple[int, int, int, int]
    advanced: bool
    order_ankhs: int
    order_breaks: int
    chaos_ankhs: int
    chaos_breaks: int

    @property
    def size(self) -> int:
        return sum(self.requirement)

    def ankhs(self, principle: int) -> int:
        return self.chaos_ankhs if principle == CHAOS else self.order_ankhs

    def breaks(self, principle: int) -> int:
        return self.chaos_breaks if principle == CHAOS else self.order_breaks


def _req(**counts: int) -> tuple[int, int, int, int]:
    return (counts.get("blue", 0), counts.get("red", 0), counts.get("green", 0), counts.get("yellow", 0))


def _rituals() -> tuple[Ritual, ...]:
    rows: list[tuple[str, tuple[int, int, int, int], bool, int, int, int, int]] = []
    # simple: 3 of one colour (4 cards), 3/1 order, 2/2 chaos
    for c in COLOURS:
        rows.append((f"Triad of {c}", _req(**{c: 3}), False, 3, 1, 2, 2))
    # simple: 2 of X + 1 of Y (12 cards, ordered pairs)
    for x, y in itertools.permutations(COLOURS, 2):
        rows.append((f"Offering of {x} and {y}", _req(**{x: 2, y: 1}), False, 3, 1, 2, 2))
    # advanced: 2 of X + 2 of Y (6 cards, X<Y), 5/1, 3/3
    for x, y in itertools.combinations(COLOURS, 2):
        rows.append((f"Union of {x} and {y}", _req(**{x: 2, y: 2}), True, 5, 1, 3, 3))
    # advanced: 4 of one colour (4 cards), 6/2, 4/3
    for c in COLOURS:
        rows.append((f"Tetrad of {c}", _req(**{c: 4}), True, 6, 2, 4, 3))
    # advanced: one of each colour (2 cards), 5/1, 3/4
    for k in (1, 2):
        rows.append((f"Four winds {'I' * k}", (1, 1, 1, 1), True, 5, 1, 3, 4))
    # advanced: 3 of X + 2 of Y (12 cards, ordered pairs), 8/2, 5/4
    for x, y in itertools.permutations(COLOURS, 2):
        rows.append((f"Great rite of {x} and {y}", _req(**{x: 3, y: 2}), True, 8, 2, 5, 4))
    return tuple(Ritual(i, *row) for i, row in enumerate(rows))


#: The 40 rituals: ids 0–15 simple, 16–39 advanced.
RITUALS: Final[tuple[Ritual, ...]] = _rituals()

# ---------------------------------------------------------------------------------------
# Exaltations (O1.5 [house])
# ---------------------------------------------------------------------------------------


class ExaltationKind(enum.StrEnum):
    """The condition of an exaltation, which the rules code checks
    (:meth:`engine.osirium.state.OsiriumState.exaltation_progress`)."""

    ALL_ORDER = "all_order"  # at least ``amount`` completed rituals, all by Order
    CHAOS = "chaos"  # at least ``amount`` completed rituals by Chaos
    BROKEN_COLOUR = "broken_colour"  # at least ``amount`` broken amulets of ``colour``
    BROKEN_ALL_COLOURS = "broken_all_colours"  # broken amulets of every colour
    ADVANCED = "advanced"  # at least ``amount`` completed advanced rituals
    RITUAL_SIZE = "ritual_size"  # a completed ritual that used at least ``amount`` amulets
    LAST_WORD = "last_word"  # the player whose 5th ritual ended the game


@dataclasses.dataclass(frozen=True, slots=True)
class Exaltation:
    """A secret objective: a condition (:class:`ExaltationKind`, with its ``amount`` and
    ``colour``) worth ``ankhs`` at the end when met (O1.5, O8.2)."""

    id: int
    name: str
    kind: ExaltationKind
    ankhs: int
    amount: int = 0
    colour: int = -1
    text: str = ""


EXALTATIONS: Final[tuple[Exaltation, ...]] = (
    Exaltation(
        0, "Maat", ExaltationKind.ALL_ORDER, 4, amount=3, text="at least 3 completed rituals, all by Order"
    ),
    Exaltation(1, "Storm", ExaltationKind.CHAOS, 4, amount=2, text="at least 2 completed rituals by Chaos"),
    *[
        Exaltation(
            2 + c,
            f"Devotion to {name}",
            ExaltationKind.BROKEN_COLOUR,
            4,
            amount=4,
            colour=c,
            text=f"at least 4 broken {name} amulets",
        )
        for c, name in enumerate(COLOURS)
    ],
    Exaltation(6, "Harmony", ExaltationKind.BROKEN_ALL_COLOURS, 3, text="broken amulets of all four colours"),
    Exaltation(
        7, "Ascension", ExaltationKind.ADVANCED, 5, amount=2, text="at least 2 completed advanced rituals"
    ),
    Exaltation(
        8,
        "Great rite",
        ExaltationKind.RITUAL_SIZE,
        5,
        amount=5,
        text="a completed ritual that used 5 amulets",
    ),
    Exaltation(
        9, "Last word", ExaltationKind.LAST_WORD, 3, text="be the player whose 5th ritual ended the game"
    ),
)

# ---------------------------------------------------------------------------------------
# Deities (O1.6, O7 [house])
# ---------------------------------------------------------------------------------------


class Power(enum.StrEnum):
    """A deity's power (O7), which the rules code implements."""

    MOVE = "move"  # Isis
    BREAK = "break"  # Anubis
    MARKET = "market"  # Bastet
    ROTATE = "rotate"  # Seth


@dataclasses.dataclass(frozen=True, slots=True)
class Deity:
    """A deity board and its power."""

    id: int
    name: str
    power: Power
    text: str


DEITIES: Final[tuple[Deity, ...]] = (
    Deity(0, "Isis", Power.MOVE, "move one amulet on the board to any empty cell, with any rotation"),
    Deity(1, "Anubis", Power.BREAK, "break one amulet on the board into your broken pile"),
    Deity(2, "Bastet", Power.MARKET, "take one market card into your hand in addition"),
    Deity(3, "Seth", Power.ROTATE, "rotate one amulet on the board to a different set of arrows"),
)

# ---------------------------------------------------------------------------------------
# Game constants (O2, O3, O5.6, O8.4)
# ---------------------------------------------------------------------------------------

HAND_SIZE: Final = 4  # O2.2, O3.2
MARKET_SIZE: Final = 4  # O1.7
RITUAL_SLOTS: Final = 3  # O2.3: slots 0, 1 face up, slot 2 face down
HIDDEN_SLOT: Final = 2
RITUALS_TO_END: Final = 5  # O5.6 / O8.1
MAX_ROUNDS: Final = 100  # O8.4

picklable(Pattern, Amulet, Ritual, Exaltation, Deity)
