"""Features of an Aton position from one seat's view, for the learned evaluation
(:mod:`ai.learned`, ``docs/search.md``, "The learned evaluation").

Every feature of seat ``p`` is a function of ``state.view(p)``: the public board, Kingdom,
scores, stocks and revealed cartouches, plus ``p``'s own hand and cartouches (A10). It never
reads the opponent's hand, deck, unrevealed cartouches or pending exchange decision, nor any
deck order (``tests/ai/test_learned.py`` checks that a re-dealt state gives the same
features). The terms start from the heuristic's (:func:`ai.aton.knowledge.evaluate`: score,
the next scoring round, the instant-win threats) and split them up, so that a model fitted to
game outcomes can weigh each one; most are seat ``p``'s minus the opponent's.

The search computes them at every rollout cut-off: one :func:`engine.aton.state.tally` serves
both seats (:func:`seat_features`).
"""

from __future__ import annotations

import math
from typing import Final

from ai.aton.knowledge import counters_to_win
from engine.aton.board import GREEN, KINGDOM_SIZE, SLOTS, WIN_POINTS, YELLOW
from engine.aton.state import AtonState, scoring_lines, tally

#: The feature names, in the order of :func:`seat_features`' rows (a model file lists them).
NAMES: Final[tuple[str, ...]] = (
    "score_diff",  # own score - opponent's, / 10
    "own_near_win",  # max(0, own score - 25) / 15 (40 wins, A4.2 / A8.3)
    "opp_near_win",
    "projected_diff",  # the next scoring round as the board stands (A8.2), own - opponent's, / 10
    "projected_diff_x_fill",  # the same, times how full the Kingdom is (0..1)
    "kingdom_fill",
    "temple_1_diff",  # own - opponent's counters per temple, / 12
    "temple_2_diff",
    "temple_3_diff",
    "temple_4_diff",
    "yellow_diff",  # own - opponent's counters on the yellow / green / grey / blue squares
    "green_diff",
    "grey_diff",
    "blue_diff",
    "bonus_diff",  # points of the bonus squares held, own - opponent's, / 5
    "own_threat",  # instant-win threat (A6.4): 0.5 * max(0, 8 - d)^2 / 32, d = fewest missing
    "opp_threat",
    "own_close",  # 1 when d <= 2 for the seat
    "opp_close",
    "stock_diff",  # counters left in stock, own - opponent's, / 29
    "heuristic",  # the Aton heuristic's value for the seat (tanh of its advantage / 12)
    "to_move",  # 1 when the seat acts now
    "own_cards",  # own hand + own cartouches, summed card values / 16 (own information)
    "opp_revealed",  # the opponent's revealed cartouches, summed / 16
)

#: What a seat shows the table (A10): its row of :data:`NAMES` less its own cards, for the
#: inputs of a model over every seat's public situation (``inputs: "table"``, :mod:`ai.learned`).
PUBLIC_NAMES: Final[tuple[str, ...]] = tuple(n for n in NAMES if n != "own_cards")
#: Columns of :data:`PUBLIC_NAMES` to make relative to the modelled seat (none: every column
#: of a seat's row is already its own against the other's).
PUBLIC_RELATIVE: Final[tuple[int, ...]] = ()
_OWN_CARDS: Final = NAMES.index("own_cards")

_YELLOW_SQUARES: Final = len(YELLOW)
_GREEN_SQUARES: Final = len(GREEN)
_HEURISTIC_SCALE: Final = 12.0


def seat_features(state: AtonState, public: list[list[float]] | None = None) -> list[list[float]]:
    """The features (:data:`NAMES`) of seats 0 and 1, each from its own view. With ``public``,
    also appends each seat's public row (:data:`PUBLIC_NAMES`)."""
    t = tally(state.board)
    proj = [0, 0]
    for _, p0, p1 in scoring_lines(t):
        proj[0] += p0
        proj[1] += p1
    kingdom = state.kingdom
    fill = (kingdom[0] + kingdom[1]) / KINGDOM_SIZE
    score = state.score
    temples, yellow, green = t.temples, t.yellow, t.green
    missing = (counters_to_win(temples, yellow, green, 0), counters_to_win(temples, yellow, green, 1))
    threat = [0.0, 0.0]
    for p in (0, 1):
        if missing[p] < 8:
            threat[p] = 0.5 * (8 - missing[p]) ** 2
    # The heuristic's advantage of seat 0 (ai.aton.knowledge.evaluate), from public fields.
    adv = score[0] - score[1] + (0.4 + 0.6 * fill) * (proj[0] - proj[1]) + threat[0] - threat[1]
    h0 = math.tanh(adv / _HEURISTIC_SCALE)
    revealed = state.revealed
    cartouches = state.cartouches
    hands = state.hands
    rows: list[list[float]] = []
    for p in (0, 1):
        o = 1 - p
        sign = 1.0 if p == 0 else -1.0
        pd = (proj[p] - proj[o]) / 10.0
        own_cards = sum(hands[p]) + sum(cartouches[p])
        shown = cartouches[o]
        opp_revealed = 0
        for i in range(revealed[o]):
            opp_revealed += shown[i]
        rows.append(
            [
                (score[p] - score[o]) / 10.0,
                max(0, score[p] - 25) / 15.0,
                max(0, score[o] - 25) / 15.0,
                pd,
                pd * fill,
                fill,
                (temples[0][p] - temples[0][o]) / SLOTS,
                (temples[1][p] - temples[1][o]) / SLOTS,
                (temples[2][p] - temples[2][o]) / SLOTS,
                (temples[3][p] - temples[3][o]) / SLOTS,
                (yellow[p] - yellow[o]) / _YELLOW_SQUARES,
                (green[p] - green[o]) / _GREEN_SQUARES,
                (t.grey[p] - t.grey[o]) / 8.0,
                (t.blue[p] - t.blue[o]) / 8.0,
                (t.bonus[p] - t.bonus[o]) / 5.0,
                threat[p] / 32.0,
                threat[o] / 32.0,
                1.0 if missing[p] <= 2 else 0.0,
                1.0 if missing[o] <= 2 else 0.0,
                (state.stock[p] - state.stock[o]) / 29.0,
                sign * h0,
                1.0 if state.current == p else 0.0,
                own_cards / 16.0,
                opp_revealed / 16.0,
            ]
        )
    if public is not None:
        for row in rows:
            public.append(row[:_OWN_CARDS] + row[_OWN_CARDS + 1 :])
    return rows


assert WIN_POINTS == 40  # own_near_win / opp_near_win are scaled for 40 points
