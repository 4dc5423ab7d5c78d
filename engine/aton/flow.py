"""The closed sets of an Aton game's course: the decision the seat to act faces, how the
game ended, and a seat's pending exchange decision. Below the state and its view, which
both use them."""

from __future__ import annotations

import enum


class Phase(enum.StrEnum):
    """The decision the seat to act faces (``State.decision()``), or the end."""

    EXCHANGE = "exchange"  # A3.2: keep the hand or spend the token
    ARRANGE = "arrange"  # A3.3: four cards on the cartouches
    REMOVE = "remove"  # A6.2: remove a counter
    PLACE = "place"  # A6.3: place a counter
    RESET = "reset"  # A8.4: take an own counter back to stock
    OVER = "over"


class Reason(enum.StrEnum):
    """How an Aton game ended (``Outcome.reason``)."""

    POINTS = "points"  # A4.2: 40 points on cartouche 1
    TEMPLE = "temple"  # A6.4: a whole temple
    YELLOW = "yellow"  # A6.4: all yellow squares
    GREEN = "green"  # A6.4: all green squares
    SCORING = "scoring"  # A8.3 / A9.2: 40 points after a scoring round
    ROUND_LIMIT = "round_limit"  # A9.3 [house]


class ExchangeChoice(enum.StrEnum):
    """A seat's secret exchange decision (A3.2), as its own view shows it until carried out."""

    KEEP = "keep"  # keep the hand
    EXCHANGE = "exchange"  # spend the token: discard the hand and draw again
