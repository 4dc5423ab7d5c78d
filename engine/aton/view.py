"""What one Aton player (or the public) may see: A10.1 public + A10.2 private."""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.aton.board import KINDS, NUM_SQUARES, SLOTS
from engine.aton.flow import ExchangeChoice, Phase, Reason
from engine.core import View

#: Two seats, fixed-size tuples.
Pair = tuple[int, int]
Cards = tuple[int, int, int, int]


@dataclasses.dataclass(frozen=True, slots=True)
class AtonView(View):
    """A player's view of an Aton state (``player is None``: the public view).

    Never contains the opponent's hand, their pending exchange decision, their cartouche
    cards before they are revealed (A3.4), any deck order (A10.3) or the engine's random
    state; a state re-dealt by ``sample_consistent_state(player, rng)`` gives an equal view.
    """

    player: int | None
    round: int
    #: The pending decision (exchange, arrange, remove, place, reset, or over) and the seat
    #: to decide (-1 once over).
    decision: Phase
    current_player: int
    #: Owner of each of the 48 squares (``12 * (temple - 1) + slot``), -1 when empty.
    board: tuple[int, ...]
    kingdom: Pair
    stocks: Pair
    scores: Pair
    deck_sizes: Pair
    hand_sizes: Pair
    #: Discard pile of each player as counts of values 1, 2, 3, 4.
    discards: tuple[Cards, Cards]
    #: Exchange tokens still held (A1.4); a pending decision does not spend it yet.
    tokens: tuple[bool, bool]
    #: Who exchanged this round (public once both decisions are carried out, A3.2).
    exchanged: tuple[bool, bool]
    #: Whether each player has committed an arrangement this round.
    committed: tuple[bool, bool]
    #: Cartouche cards 1..4 per player; 0 = not visible to this viewer (or empty).
    cartouches: tuple[Cards, Cards]
    #: How many cartouches of each player are revealed (0, 1, 2 or 4; A3.4).
    revealed: Pair
    #: The viewer's own hand, sorted (empty for the public view).
    hand: tuple[int, ...]
    #: The viewer's own pending exchange decision (keep / exchange), if any.
    exchange_decision: ExchangeChoice | None
    #: Seat acting first this round once cartouche 2 is revealed (A5).
    first_player: int | None
    #: War cards of this round, one (seat 0, seat 1) pair per step; 0 = could not reveal.
    war: tuple[Pair, ...]
    #: Removals or placements still to make in the current step (0 otherwise).
    remaining: int
    #: Owner of the counters being removed (remove step), else None.
    removal_target: int | None
    #: Counters that will overflow to the Kingdom after the last placement (A6.3).
    overflow: int
    #: Temple (1-4) of the pending reset choice (A8.4), else None.
    reset_temple: int | None
    #: Set once the game is over.
    winners: tuple[int, ...] | None
    reason: Reason | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (every value is already an immutable scalar or tuple), the
        decision, exchange decision and outcome reason by name."""
        out = {name: getattr(self, name) for name in _VIEW_FIELDS}
        out["decision"] = self.decision.value
        if self.exchange_decision is not None:
            out["exchange_decision"] = self.exchange_decision.value
        if self.reason is not None:
            out["reason"] = self.reason.value
        return out

    def to_text(self) -> str:
        return render(self)


_VIEW_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(AtonView))


def _cell(slot: int, kind: str, owner: int) -> str:
    """One square, 8 characters: its number (the slot of ``T<temple>.<slot>``), its kind,
    and in brackets the seat whose counter is on it (blank when empty): `` 6 +1[0]``."""
    label = "+" + kind if kind in "12" else kind
    return f"{slot:>2}{label:>3}[{' ' if owner < 0 else owner}]"


#: Each square's text by square, then owner + 1 (0: empty), built once (a view's text is
#: drawn on every GetView: bench/view_speed.py).
_SQUARE_TEXT: tuple[tuple[str, str, str], ...] = tuple(
    (_cell(i % SLOTS, KINDS[i], -1), _cell(i % SLOTS, KINDS[i], 0), _cell(i % SLOTS, KINDS[i], 1))
    for i in range(NUM_SQUARES)
)
#: The temples are drawn two side by side (1 and 2 above 3 and 4), to fit in 80 columns.
_TEMPLE_WIDTH = 4 * 8 + 3
_TEMPLE_GAP = "    "
_BOARD_KEY = (
    "  T<temple>.<number>: Y yellow, K grey, B blue, G green, +1/+2 bonus square;",
    "  [0] or [1]: the seat whose counter is on the square; [ ]: empty",
)


def _temple_head(board: tuple[int, ...] | list[int], t: int) -> str:
    squares = board[t * SLOTS : (t + 1) * SLOTS]
    return f"T{t + 1}: seat 0 has {squares.count(0)}, seat 1 has {squares.count(1)}"


def render_board(board: tuple[int, ...] | list[int]) -> list[str]:
    """The board as text lines (A1.6): each temple's 3 rows of 4 numbered squares, temples
    1 and 2 side by side above 3 and 4, and a key."""
    lines = []
    for left in (0, 2):
        head = _temple_head(board, left).ljust(_TEMPLE_WIDTH)
        lines.append("  " + head + _TEMPLE_GAP + _temple_head(board, left + 1))
        for row in range(3):
            halves = []
            for t in (left, left + 1):
                base = t * SLOTS + row * 4
                halves.append(" ".join([_SQUARE_TEXT[i][board[i] + 1] for i in range(base, base + 4)]))
            lines.append("  " + _TEMPLE_GAP.join(halves))
    lines.extend(_BOARD_KEY)
    return lines


def _cards(values: tuple[int, ...]) -> str:
    return "".join("?" if v == 0 else str(v) for v in values) or "-"


#: What each decision asks of the seat to decide, for the head line.
_DECISION_TEXT = {
    "exchange": "keep or exchange their hand",
    "arrange": "arrange cartouches 1-4",
    "remove": "remove a counter",
    "place": "place a counter",
    "reset": "take a counter back",
}
_SEAT_HEAD = "        score  stock  deck  hand  token           cartouches  discard"


def _seat_row(v: AtonView, p: int) -> str:
    token = ("yes" if v.tokens[p] else "no") + (" (exchanged)" if v.exchanged[p] else "")
    cart = _cards(v.cartouches[p]) if v.committed[p] else "-"
    disc = " ".join(f"{n}x{i + 1}" for i, n in enumerate(v.discards[p]) if n) or "-"
    return (
        f"seat {p} {v.scores[p]:>6} {v.stocks[p]:>6} {v.deck_sizes[p]:>5} {v.hand_sizes[p]:>5}  "
        f"{token:<15} {cart:<11} {disc}"
    )


def render(v: AtonView, extra: list[str] | None = None) -> str:
    who = "public" if v.player is None else f"seat {v.player}"
    if v.decision == "over":
        if v.winners:
            res = f"seat {v.winners[0]} wins ({v.reason})"
        else:
            res = f"draw ({v.reason})"
        head = f"Aton · round {v.round} · game over: {res} · view: {who}"
    else:
        task = _DECISION_TEXT[v.decision]
        if v.decision == "remove":
            task += f" of seat {v.removal_target} ({v.remaining} left)"
        elif v.decision == "place":
            task += f" ({v.remaining} left)"
        elif v.decision == "reset":
            task += f" from temple {v.reset_temple}"
        head = f"Aton · round {v.round} · seat {v.current_player} to {task} · view: {who}"
    lines = [head, *render_board(v.board)]
    lines.append(
        f"Kingdom of the Dead: {v.kingdom[0] + v.kingdom[1]}/8 (seat 0: {v.kingdom[0]}, "
        f"seat 1: {v.kingdom[1]})"
    )
    first = "-" if v.first_player is None else f"seat {v.first_player}"
    war = ", ".join(f"{a} vs {b}" for a, b in v.war)
    lines.append(f"first player: {first} · war cards: " + (f"{war} (seat 0 vs seat 1)" if war else "-"))
    lines.append(_SEAT_HEAD)
    lines.extend(_seat_row(v, p) for p in (0, 1))
    if v.player is not None:
        line = f"your hand: {_cards(v.hand)}"
        if v.exchange_decision is not None:
            line += f" · your exchange decision: {v.exchange_decision}"
        lines.append(line)
    if extra:
        lines.extend(extra)
    return "\n".join(lines)
