"""The invariants of an Aton state: what holds in every position of the game.

:meth:`engine.aton.state.AtonState.validate` runs :func:`validate`, and decoding a state
(:mod:`engine.aton.codec`) runs that: a state read from outside passes every check, or a
:class:`~engine.core.StateFormatError` names the first invariant it breaks. The checks by
seat (:func:`_seat`: counters, cards, token, A1.2–A1.4) come first, then those of the
step to decide: the exchange (A3.2), the arrangement (A3.3), the removals and placements
(A6), the reset (A8.4) and the end.

The checks read the state through :class:`Position`, the fields they need, so that this
module does not import the state (which imports it).
"""

from __future__ import annotations

from typing import Protocol

from engine.aton.board import (
    CARDS_PER_VALUE,
    COUNTERS,
    HAND_SIZE,
    KINGDOM_SIZE,
    NUM_SQUARES,
    REMOVALS,
    SLOTS,
    WIN_POINTS,
)
from engine.aton.flow import Phase, Reason
from engine.core import StateFormatError


class Position(Protocol):
    """The fields of an Aton state that the invariants read
    (:class:`engine.aton.state.AtonState`; its module docstring says what each holds)."""

    board: list[int]
    owned: list[int]
    stock: list[int]
    kingdom: list[int]
    score: list[int]
    tokens: list[int]
    exchange_choice: list[int]
    exchanged: list[int]
    revealed: list[int]
    decks: list[list[int]]
    hands: list[list[int]]
    discards: list[list[int]]
    cartouches: list[list[int]]
    phase: Phase
    current: int
    first_player: int
    acting_second: int
    remaining: int
    overflow: int
    removal_target: int
    reset_first: int
    reset_turn: int
    reset_temple: int
    round: int
    max_rounds: int
    war_cards: list[tuple[int, int]]
    winners: tuple[int, ...] | None
    reason: Reason | None


def _squares_of(board: list[int], seat: int) -> int:
    """The squares of ``seat`` on ``board`` as a mask (bit i: square i)."""
    out = 0
    for sq in range(len(board)):
        if board[sq] == seat:
            out |= 1 << sq
    return out


def _owners_only(board: list[int]) -> bool:
    """Every square empty (-1) or owned by seat 0 or 1 (an explicit loop: mypyc compiles it natively)."""
    for owner in board:  # noqa: SIM110
        if owner < -1 or owner > 1:
            return False
    return True


def _impossible(msg: str) -> StateFormatError:
    return StateFormatError(f"aton state: impossible position: {msg}")


def validate(s: Position) -> None:
    """Every invariant of an Aton state (:meth:`AtonState.validate
    <engine.aton.state.AtonState.validate>`); :class:`StateFormatError` names the first
    broken."""
    bad = _impossible
    if not 1 <= s.round <= s.max_rounds:
        raise bad(f"round {s.round} outside 1..{s.max_rounds}")
    if len(s.board) != NUM_SQUARES or not _owners_only(s.board):
        raise bad("the board must have 48 squares, each empty or owned by seat 0/1")
    if len(s.owned) != 2 or any(s.owned[p] != _squares_of(s.board, p) for p in (0, 1)):
        raise bad("each seat's square mask must list exactly its squares on the board")
    kingdom = s.kingdom
    if kingdom[0] + kingdom[1] > KINGDOM_SIZE:
        raise bad(f"the Kingdom of the Dead holds {kingdom[0] + kingdom[1]} counters (at most 8, A1.7)")
    ph = s.phase
    if not isinstance(ph, Phase):
        raise bad(f"unknown phase {ph!r}")
    for p in (0, 1):
        _seat(s, p)
    if any(not (0 <= a <= 4 and 0 <= b <= 4) for a, b in s.war_cards):
        raise bad("war cards must be values 0-4")
    if ph is not Phase.OVER:
        if s.winners is not None or s.reason is not None:
            raise bad(f"phase {ph} but an outcome is recorded")
        if s.current not in (0, 1):
            raise bad(f"phase {ph} needs a seat to decide, got {s.current}")
        if max(s.score) >= WIN_POINTS:
            raise bad(f"a score of {max(s.score)} should have ended the game (A4.2/A8.3)")
    if ph is not Phase.REMOVE and ph is not Phase.PLACE and s.remaining:
        raise bad(f"phase {ph} has {s.remaining} removals/placements pending")
    if ph is not Phase.PLACE and s.overflow:
        raise bad(f"phase {ph} has an overflow pending")
    if ph is not Phase.REMOVE and s.removal_target != -1:
        raise bad(f"phase {ph} has a removal target")
    if ph is not Phase.RESET and (s.reset_first != -1 or s.reset_turn or s.reset_temple):
        raise bad(f"phase {ph} has reset progress recorded")
    if (ph is Phase.EXCHANGE or ph is Phase.ARRANGE) and (
        s.first_player != -1 or s.acting_second or s.war_cards or any(s.revealed)
    ):
        raise bad(f"phase {ph} comes before the reveal, but order/war/reveals are recorded")
    if ph is Phase.EXCHANGE:
        _exchange(s)
    elif s.exchange_choice != [-1, -1]:
        raise bad(f"phase {ph} has a pending exchange decision")
    if ph is Phase.ARRANGE:
        hands = [len(s.hands[0]), len(s.hands[1])]
        full = [bool(s.cartouches[0][0]), bool(s.cartouches[1][0])]
        want_hands = [4, 4] if s.current == 0 else [0, 4]
        if hands != want_hands or full != [s.current == 1, False]:
            raise bad(
                f"arrange phase, seat {s.current} to decide: hands must hold {want_hands} "
                "cards and only seat 0 may have arranged (when seat 1 decides)"
            )
    elif ph is Phase.REMOVE or ph is Phase.PLACE:
        _actions(s)
    elif ph is Phase.RESET:
        _reset(s)
    elif ph is Phase.OVER:
        if s.current != -1 or s.winners is None or s.reason is None:
            raise bad("a finished game needs current player -1 and an outcome")
        if len(s.winners) > 1 or any(w not in (0, 1) for w in s.winners):
            raise bad(f"invalid winners {s.winners}")


def _seat(s: Position, p: int) -> None:
    """A1.2 / A1.3 / A1.4 for one seat: counters, cards, token and reveal flags."""
    bad = _impossible
    on_board = s.board.count(p)
    if min(s.stock[p], s.kingdom[p], s.score[p]) < 0:
        raise bad(f"seat {p} has a negative stock, Kingdom count or score")
    total = on_board + s.stock[p] + s.kingdom[p]
    if total != COUNTERS:
        raise bad(
            f"seat {p} has {total} counters (board {on_board} + stock {s.stock[p]} + Kingdom "
            f"{s.kingdom[p]}), not 29 (A1.3)"
        )
    cart = s.cartouches[p]
    if len(cart) != 4 or any(not 0 <= v <= 4 for v in cart) or (0 in cart and any(cart)):
        raise bad(f"seat {p}'s cartouches {cart} must be four cards 1-4 or empty")
    hand = s.hands[p]
    if len(hand) not in (0, HAND_SIZE) or hand != sorted(hand):
        raise bad(f"seat {p}'s hand {hand} must be 0 or 4 sorted cards")
    held = [0, 0, 0, 0, 0]  # cards of each value 1-4 in hand, deck and cartouches
    for cards in (hand, s.decks[p]):
        for v in cards:
            if not 1 <= v <= 4:
                raise bad(f"seat {p} holds a card outside 1-4")
            held[v] += 1
    discards = s.discards[p]
    if len(discards) != 4 or min(discards) < 0:
        raise bad(f"seat {p}'s discard counts {discards} are invalid")
    for v in cart:
        held[v] += 1  # 0 (empty) counts nowhere
    n_cards = held[1] + held[2] + held[3] + held[4] + sum(discards)
    if n_cards != 36:
        raise bad(f"seat {p} has {n_cards} cards in deck + hand + discard + cartouches, not 36 (A1.2)")
    for v in (1, 2, 3, 4):
        n = held[v] + discards[v - 1]
        if n != CARDS_PER_VALUE:
            raise bad(f"seat {p} has {n} cards of value {v}, not 9 (A1.2)")
    token, exchanged, choice = s.tokens[p], s.exchanged[p], s.exchange_choice[p]
    if token not in (0, 1) or exchanged not in (0, 1) or choice not in (-1, 0, 1):
        raise bad(f"seat {p}'s token/exchange flags are invalid")
    if exchanged and token:
        raise bad(f"seat {p} exchanged this round but still holds the exchange token (A1.4)")
    if s.revealed[p] not in (0, 1, 2, 4):
        raise bad(f"seat {p} has {s.revealed[p]} revealed cartouches (0, 1, 2 or 4)")
    if s.revealed[p] and not cart[0]:
        raise bad(f"seat {p} has revealed cartouches but none are filled")


def _exchange(s: Position) -> None:
    """A3.2: who holds a token and has decided."""
    bad = _impossible
    hands = [len(s.hands[0]), len(s.hands[1])]
    if hands != [4, 4] or s.cartouches[0][0] or s.cartouches[1][0] or any(s.exchanged):
        raise bad("exchange phase: both players hold 4 cards and nothing is arranged yet")
    cur, choice = s.current, s.exchange_choice
    if not s.tokens[cur] or choice[cur] != -1:
        raise bad(f"exchange phase: seat {cur} must hold a token and not have decided yet")
    if choice[1] != -1 or (cur == 0 and choice[0] != -1):
        raise bad("exchange phase: decisions are taken seat 0 then seat 1")
    if cur == 1 and (choice[0] != -1) != bool(s.tokens[0]):
        raise bad("exchange phase: seat 0 decides before seat 1 if it holds a token")


def _actions(s: Position) -> None:
    """A6: the acting player's removals or placements."""
    bad = _impossible
    ph = s.phase
    if [len(s.hands[0]), len(s.hands[1])] != [0, 0] or not (s.cartouches[0][0] and s.cartouches[1][0]):
        raise bad(f"phase {ph}: both players must have arranged and hold no cards")
    first = s.first_player
    if first not in (0, 1):
        raise bad(f"phase {ph}: no first player recorded")
    cur = s.current
    if cur != (first if s.acting_second == 0 else 1 - first):
        raise bad(
            f"phase {ph}: seat {cur} is not the acting player (first {first}, "
            f"second acting {s.acting_second})"
        )
    other = 1 - cur
    if s.revealed[cur] != 4 or s.revealed[other] != (2 if s.acting_second == 0 else 4):
        raise bad(f"phase {ph}: revealed cartouches {s.revealed} do not match the step (A3.4)")
    if s.remaining < 1:
        raise bad(f"phase {ph}: nothing left to do")
    cart = s.cartouches[cur]
    limit = SLOTS * cart[2]
    if ph is Phase.REMOVE:
        c2 = cart[1]
        required, own = REMOVALS[c2]
        want_target = cur if own else other
        if s.round == 1:
            raise bad("no removal happens in the first round (A6.2)")
        target = s.removal_target
        if target != want_target or s.remaining > required or s.remaining > s.board[:limit].count(target):
            raise bad(
                f"remove phase: {s.remaining} removals of seat {target}'s counters do not fit "
                f"cartouche 2 = {c2} and the allowed temples"
            )
    elif (
        s.remaining > s.stock[cur]
        or s.remaining > s.board[:limit].count(-1)
        or s.remaining + s.overflow > cart[3]
    ):
        raise bad(
            f"place phase: {s.remaining} placements (+{s.overflow} overflow) do not fit "
            f"cartouche 4 = {cart[3]}, the stock and the empty allowed squares"
        )


def _reset(s: Position) -> None:
    """A8.4: cleaned up, Kingdom empty, the seat to reset has a counter in the temple."""
    bad = _impossible
    if (
        s.hands != [[], []]
        or s.cartouches[0][0]
        or s.cartouches[1][0]
        or any(s.revealed)
        or s.kingdom != [0, 0]
    ):
        raise bad("reset phase: cards are cleaned up and the Kingdom is empty (A8.4)")
    if s.reset_first not in (0, 1) or s.first_player not in (0, 1):
        raise bad("reset phase: no reset order recorded")
    p = s.reset_first if s.reset_turn == 0 else 1 - s.reset_first
    lo = SLOTS * s.reset_temple
    if s.current != p or p not in s.board[lo : lo + SLOTS]:
        raise bad(f"reset phase: seat {s.current} must have a counter in temple {s.reset_temple + 1}")
