"""The closed sets of an Osirium game's course: the step of a turn (the decision the seat to
act faces) and how the game ended. Below the state and its view, which both use them; the
state module re-exports them."""

from __future__ import annotations

import enum


class Phase(enum.StrEnum):
    """The step of a turn (O10): the decision the seat to act faces, or the end."""

    MAIN = "main"  # O3: place, cast, use a power, pass or end the turn
    PLACE = "place"  # O3.1a: place on the cell just cleared
    DRAW = "draw"  # O3.2: draw after a placement
    BREAK = "break"  # O5.3: break an amulet of the cast set
    REFILL = "refill"  # O5.5: refill the emptied ritual slot
    OVER = "over"


class Reason(enum.StrEnum):
    """How an Osirium game ended (``Outcome.reason``)."""

    FIFTH_RITUAL = "fifth_ritual"  # O5.6 / O8.1
    ROUND_LIMIT = "round_limit"  # O8.4 [house]
