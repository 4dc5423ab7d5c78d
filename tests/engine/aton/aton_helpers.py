"""Build Aton positions from explicit fields, for scenario tests.

``make_state(...)`` starts from a blank state, sets what the test names and fills in the
rest so that every invariant holds (it ends with ``state.validate()``):

* ``board``: a 48-character string (spaces and ``|`` ignored), ``.`` empty, ``0``/``1`` owner,
  temple 1 first, slots row by row; or a dict ``{square_or_"T2.5": owner}``;
* stocks are ``29 - counters on board - counters in the Kingdom``;
* ``hands``/``cartouches``: strings of card values (``"1234"``; cartouches ``""`` = empty);
* ``decks``: strings, **top card first**; cards of a player not placed anywhere else go to
  their discard pile when a deck is given, otherwise to their deck (in a fixed order);
* ``discards``: strings of card values.

Positions are then driven with ordinary actions, e.g. :func:`arrange_both`.
"""

from __future__ import annotations

from typing import Any

from engine.aton import GAME
from engine.aton.board import COUNTERS, string_to_action
from engine.aton.state import AtonState, Phase
from engine.core import Event
from engine.rng import Rng


def parse_board(board: str | dict[Any, int] | None) -> list[int]:
    out = [-1] * 48
    if board is None:
        return out
    if isinstance(board, dict):
        for sq, owner in board.items():
            if isinstance(sq, str):
                t, s = sq.upper().lstrip("T").split(".")
                sq = 12 * (int(t) - 1) + int(s)
            out[sq] = owner
        return out
    chars = [c for c in board if c not in " |\n"]
    assert len(chars) == 48, f"board needs 48 squares, got {len(chars)}"
    return [-1 if c == "." else int(c) for c in chars]


def make_state(
    *,
    phase: str = "arrange",
    current: int = 0,
    round: int = 2,
    board: str | dict[Any, int] | None = None,
    kingdom: tuple[int, int] = (0, 0),
    scores: tuple[int, int] = (0, 0),
    tokens: tuple[int, int] = (0, 0),
    hands: tuple[str, str] | None = None,
    cartouches: tuple[str, str] = ("", ""),
    decks: tuple[str | None, str | None] = (None, None),
    discards: tuple[str, str] = ("", ""),
    first_player: int = -1,
    acting_second: int = 0,
    revealed: tuple[int, int] = (0, 0),
    exchange_choice: tuple[int, int] = (-1, -1),
    seed: int = 0,
    **extra: Any,
) -> AtonState:
    s = AtonState.blank()
    s.rng = Rng(seed)
    s.phase = Phase(phase)
    s.current = current
    s.round = round
    s.board = parse_board(board)
    s.derive_board()
    s.kingdom = list(kingdom)
    s.score = list(scores)
    s.tokens = list(tokens)
    s.first_player = first_player
    s.acting_second = acting_second
    s.revealed = list(revealed)
    s.exchange_choice = list(exchange_choice)
    if hands is None:
        hands = ("1234", "1234") if phase in ("exchange", "arrange") else ("", "")
        if phase == "arrange" and current == 1:
            hands = ("", "1234")
    for p in (0, 1):
        s.stock[p] = COUNTERS - s.board.count(p) - s.kingdom[p]
        s.hands[p] = sorted(int(c) for c in hands[p])
        s.cartouches[p] = [int(c) for c in cartouches[p]] if cartouches[p] else [0, 0, 0, 0]
        left = {v: 9 for v in (1, 2, 3, 4)}
        used = s.hands[p] + [v for v in s.cartouches[p] if v]
        disc = [int(c) for c in discards[p]]
        deck_top_first = [int(c) for c in decks[p]] if decks[p] is not None else None
        for v in used + disc + (deck_top_first or []):
            left[v] -= 1
            assert left[v] >= 0, f"seat {p}: more than nine cards of value {v}"
        rest = [v for v in (1, 2, 3, 4) for _ in range(left[v])]
        if deck_top_first is None:
            s.decks[p] = rest[::-1]  # top last
        else:
            s.decks[p] = deck_top_first[::-1]
            disc += rest
        s.discards[p] = [disc.count(v) for v in (1, 2, 3, 4)]
    for k, v in extra.items():
        setattr(s, k, v)
    s.validate()
    return s


def act(state: AtonState, *texts: str) -> list[Event]:
    """Apply action texts in order through the validated path; all events."""
    events: list[Event] = []
    for t in texts:
        events += state.apply_action(string_to_action(t))
    return events


def arrange_both(state: AtonState, cart0: str, cart1: str) -> list[Event]:
    """Both players arrange (seat 0 then seat 1): ``"3142"`` = values on cartouches 1..4."""
    return act(state, f"arrange {cart0}", f"arrange {cart1}")


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def find(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.kind == kind]


def texts(state: AtonState) -> list[str]:
    return [GAME.action_to_string(a) for a in state.legal_actions()]
