"""Features of an Osirium position from one seat's view, for the learned evaluation
(:mod:`ai.learned`, ``docs/search.md``, "The learned evaluation").

Every feature of seat ``p`` is a function of ``state.view(p)`` (O6): the public board,
market, scores, broken amulets, completed rituals and face-up rituals, plus ``p``'s own
hand, own exaltation and own face-down ritual. It never reads another seat's hand,
exaltation or face-down ritual, nor the piles' order (``tests/ai/test_learned.py`` checks
that a re-dealt state gives the same features). The terms start from the heuristic's
(:func:`ai.osirium.knowledge.evaluate`: score, exaltation progress, castable rituals) and add
ritual progress (colours still missing from the board and the hand), the hand, board control
and the race to the 5th ritual; "other" terms are the best (or the mean) of the other seats'.
"""

from __future__ import annotations

import math
from typing import Final

from engine.bits import popcount
from engine.osirium.board import RITUAL_SIG, TYPE_COLOUR
from engine.osirium.cards import EXALTATIONS, HIDDEN_SLOT, RITUALS, RITUALS_TO_END
from engine.osirium.state import OsiriumState

#: The feature names, in the order of :func:`seat_features`' rows (a model file lists them).
NAMES: Final[tuple[str, ...]] = (
    "score_lead",  # own score (ritual Ankhs + broken amulets, O8.2) - best other's, / 5
    "score_vs_mean",  # own score - the others' mean, / 5
    "own_exaltation",  # own exaltation's Ankhs x (1 when met, else half the progress), / 5
    "own_exaltation_met",
    "own_completed",  # own completed rituals / 5 (the 5th ends the game, O5.6)
    "other_completed",  # the most completed rituals of another seat / 5
    "own_castable_ankhs",  # Order Ankhs of own rituals castable on the board now, / 8
    "own_castable_best",  # the best of them / 8
    "other_castable_best",  # the best Order Ankhs castable now from another's face-up rituals, / 8
    "own_ritual_progress",  # sum of own rituals' Order Ankhs / (1 + colours missing), / 8
    "other_ritual_progress",  # the same, best other seat, face-up rituals only
    "own_hand",  # own hand size / 4
    "hand_useful",  # own hand amulets of a colour an own ritual still misses on the board, / 4
    "own_broken",  # own broken amulets / 10
    "other_broken",  # the most broken amulets of another seat / 10
    "to_move",
    "power_unused",  # own deity power not used yet
    "board_links",  # links on the board / 24
    "board_filled",  # occupied cells / 16
    "race",  # most completed rituals of any seat / 5: how near the end is
    "heuristic",  # the heuristic's advantage from the seat's view (others' exaltations unknown)
)

#: What every seat shows the table (O6.1), for the inputs of a model over every seat's public
#: situation (``inputs: "table"``, :mod:`ai.learned`): a seat's row, relative to the seat whose
#: chance is modelled (``p``), in the order of :func:`seat_features`' ``public`` rows.
PUBLIC_NAMES: Final[tuple[str, ...]] = (
    "score_vs_seat",  # this seat's score - p's, / 5
    "completed",  # its completed rituals / 5
    "castable_best",  # the best Order Ankhs castable now from its face-up rituals, / 8
    "ritual_progress",  # its face-up rituals' progress on the board, / 8
    "broken",  # its broken amulets / 10
    "hand",  # its hand size / 4
    "power_unused",
    "to_move",
)
#: Columns of :data:`PUBLIC_NAMES` held relative to seat 0 in the public rows, made relative
#: to the modelled seat by :func:`ai.learned.table_rows`.
PUBLIC_RELATIVE: Final[tuple[int, ...]] = (0,)

_COLOURS: Final = 4
#: Order Ankhs and the colour requirement of each ritual, by id.
_ORDER_ANKHS: Final[tuple[int, ...]] = tuple(r.order_ankhs for r in RITUALS)
_REQUIREMENT: Final[tuple[tuple[int, int, int, int], ...]] = tuple(r.requirement for r in RITUALS)
_HEURISTIC_SCALE: Final = 8.0


def _progress(rid: int, board: list[int], hand: list[int] | None) -> float:
    """Order Ankhs of ritual ``rid`` / (1 + colours still missing from the board, and from
    the hand when given)."""
    req = _REQUIREMENT[rid]
    missing = 0
    for c in range(_COLOURS):
        have = board[c] + (hand[c] if hand is not None else 0)
        if req[c] > have:
            missing += req[c] - have
    return _ORDER_ANKHS[rid] / (1 + missing)


def seat_features(state: OsiriumState, public: list[list[float]] | None = None) -> list[list[float]]:
    """The features (:data:`NAMES`) of every seat, each from its own view. With ``public``,
    also appends each seat's public row (:data:`PUBLIC_NAMES`, its score relative to seat 0's:
    :func:`ai.learned.table_rows` shifts it to each seat's)."""
    n = state.player_count
    sets = state.sets_by_signature() if state.links else None
    board = [popcount(state.colour_cells[c]) for c in range(_COLOURS)]
    scores = [state.ankhs[q] + len(state.broken[q]) for q in range(n)]
    done = [len(state.completed[q]) for q in range(n)]
    broken = [len(state.broken[q]) for q in range(n)]
    race = max(done) / RITUALS_TO_END
    links = popcount(state.links) / 24.0
    filled = popcount(state.occupied) / 16.0
    # What every seat shows everyone: castable and progress terms of its face-up rituals.
    public_castable = [0.0] * n
    public_progress = [0.0] * n
    for q in range(n):
        best = 0
        progress = 0.0
        for k, rid in enumerate(state.ritual_slots[q]):
            if rid < 0 or k == HIDDEN_SLOT:
                continue
            if sets is not None and RITUAL_SIG[rid] in sets:
                best = max(best, _ORDER_ANKHS[rid])
            progress += _progress(rid, board, None)
        public_castable[q] = best
        public_progress[q] = progress
        if public is not None:
            public.append(
                [
                    (scores[q] - scores[0]) / 5.0,
                    done[q] / RITUALS_TO_END,
                    best / 8.0,
                    progress / 8.0,
                    broken[q] / 10.0,
                    len(state.hands[q]) / 4.0,
                    0.0 if state.powers_used[q] else 1.0,
                    1.0 if q == state.current else 0.0,
                ]
            )
    rows: list[list[float]] = []
    for p in range(n):
        # Own information: hand, exaltation, the face-down ritual.
        hand = [0] * _COLOURS
        for t in state.hands[p]:
            hand[TYPE_COLOUR[t]] += 1
        x = EXALTATIONS[state.exaltations[p]]
        frac = state.exaltation_progress(p)
        exalt = x.ankhs if frac >= 1.0 else 0.5 * x.ankhs * frac
        castable = 0
        castable_best = 0
        progress = 0.0
        need = [0] * _COLOURS
        for rid in state.ritual_slots[p]:
            if rid < 0:
                continue
            if sets is not None and RITUAL_SIG[rid] in sets:
                castable += _ORDER_ANKHS[rid]
                castable_best = max(castable_best, _ORDER_ANKHS[rid])
            progress += _progress(rid, board, hand)
            req = _REQUIREMENT[rid]
            for c in range(_COLOURS):
                need[c] = max(need[c], req[c] - board[c])
        useful = 0
        for c in range(_COLOURS):
            useful += min(hand[c], need[c])
        others = [q for q in range(n) if q != p]
        best_score = max(scores[q] for q in others)
        mean_score = sum(scores[q] for q in others) / len(others)
        # The heuristic's estimate (ai.osirium.knowledge.evaluate) from p's view: its own
        # exaltation is known, the others' are not (left out); castable terms as there.
        own_est = scores[p] + exalt + (0.6 if p == state.current else 0.3) * castable
        other_est = max(scores[q] + (0.6 if q == state.current else 0.3) * public_castable[q] for q in others)
        rows.append(
            [
                (scores[p] - best_score) / 5.0,
                (scores[p] - mean_score) / 5.0,
                exalt / 5.0,
                1.0 if frac >= 1.0 else 0.0,
                done[p] / RITUALS_TO_END,
                max(done[q] for q in others) / RITUALS_TO_END,
                castable / 8.0,
                castable_best / 8.0,
                max(public_castable[q] for q in others) / 8.0,
                progress / 8.0,
                max(public_progress[q] for q in others) / 8.0,
                len(state.hands[p]) / 4.0,
                useful / 4.0,
                broken[p] / 10.0,
                max(broken[q] for q in others) / 10.0,
                1.0 if p == state.current else 0.0,
                0.0 if state.powers_used[p] else 1.0,
                links,
                filled,
                race,
                math.tanh((own_est - other_est) / _HEURISTIC_SCALE),
            ]
        )
    return rows
