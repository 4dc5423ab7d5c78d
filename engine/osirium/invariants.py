"""The invariants of an Osirium state: what holds in every position of the game.

:meth:`engine.osirium.state.OsiriumState.validate` runs :func:`validate`, and decoding a
state (:mod:`engine.osirium.codec`) runs that: a state read from outside passes every
check, or a :class:`~engine.core.StateFormatError` names the first invariant it breaks.
The checks: the seats and deities, then the amulets (:func:`_amulets`: the 60 of O1.3/O2.2,
the board and its masks, the hands), the rituals (:func:`_rituals`: the 40 of O1.4, the
Ankhs they gave, the exaltations) and the turn (:func:`_turn`: the seat, the round and what
each step requires, O3, O5, O8).

The checks read the state through :class:`Position`, the fields they need, so that this
module does not import the state (which imports it).
"""

from __future__ import annotations

from typing import Final, Protocol

from engine.core import StateFormatError
from engine.osirium.board import (
    CANON_OF,
    CELLS,
    FULL,
    NUM_TYPES,
    TYPE_ARROWS,
    TYPE_COUNT,
    TYPE_NAME,
    all_links,
    cell_name,
)
from engine.osirium.cards import (
    DEITIES,
    EXALTATIONS,
    HAND_SIZE,
    MAX_ROUNDS,
    RITUAL_SLOTS,
    RITUALS,
    RITUALS_TO_END,
    Power,
)
from engine.osirium.flow import Phase


class Position(Protocol):
    """The fields of an Osirium state that the invariants read, and its legal actions
    (:class:`engine.osirium.state.OsiriumState`; its module docstring says what each holds)."""

    player_count: int
    team_play: bool
    deities: list[int]
    powers_used: list[bool]
    cell_type: list[int]
    cell_rotation: list[int]
    cell_arrows: list[int]
    occupied: int
    links: int
    hands: list[list[int]]
    draw_pile: list[int]
    discard: list[int]
    market: list[int]
    broken: list[list[int]]
    ritual_slots: list[list[int]]
    completed: list[list[int]]
    ankhs: list[int]
    exaltations: list[int]
    simple_rituals: list[int]
    advanced_rituals: list[int]
    phase: Phase
    current: int
    round: int
    started: bool
    placed: bool
    clear_cell: int
    cast_cells: int
    breaks_left: int
    last_broken: int
    cast_slot: int
    ended_by: int

    def legal_actions(self) -> list[int]: ...


#: By deity id: its power (Bastet's lets a hand hold a fifth card, O7).
_POWER: Final = {d.id: d.power for d in DEITIES}
#: By cell: the mask of the cells after it (a cast breaks its cells in ascending order).
_HIGHER: Final[tuple[int, ...]] = tuple(FULL & ~((2 << c) - 1) for c in range(CELLS))
_NUM_RITUALS: Final = len(RITUALS)
#: By ritual id: whether it is an advanced ritual (O1.4).
_ADVANCED: Final[tuple[bool, ...]] = tuple(r.advanced for r in RITUALS)
#: By completed entry (``id * 2 + principle``): the Ankhs it gave (O2.3).
_COMPLETED_ANKHS: Final[tuple[int, ...]] = tuple(
    RITUALS[c // 2].ankhs(c % 2) for c in range(2 * len(RITUALS))
)
_NUM_EXALTATIONS: Final = len(EXALTATIONS)
#: The 60 amulets (O2.2) by type, ascending.
_AMULET_TYPES: Final = [t for t in range(NUM_TYPES) for _ in range(TYPE_COUNT[t])]


def _invalid(msg: str) -> StateFormatError:
    return StateFormatError(f"osirium: invalid state: {msg}")


def _amulet_problem(s: Position) -> str:
    """Why the amulets are not the 60 of the game (for :func:`validate`'s message)."""
    counts = [0] * NUM_TYPES
    zones: list[tuple[str, list[int]]] = [
        ("pile", s.draw_pile),
        ("discard", s.discard),
        ("market", [t for t in s.market if t != -1]),
    ]
    zones += [(f"hand {p}", h) for p, h in enumerate(s.hands)]
    zones += [(f"broken pile {p}", b) for p, b in enumerate(s.broken)]
    zones.append(("board", [t for t in s.cell_type if t != -1]))
    for name, cards in zones:
        if cards and not (min(cards) >= 0 and max(cards) < NUM_TYPES):
            return f"unknown amulet type in {name}: {cards}"
        for t in cards:
            counts[t] += 1
    diff = [
        f"{TYPE_NAME[t]} {counts[t]}/{TYPE_COUNT[t]}" for t in range(NUM_TYPES) if counts[t] != TYPE_COUNT[t]
    ]
    return f"amulets not accounted for: {', '.join(diff)}"


def validate(s: Position, *, derived: bool = True) -> None:
    """Check every invariant (:meth:`OsiriumState.validate
    <engine.osirium.state.OsiriumState.validate>`); :class:`StateFormatError` names the
    first broken. ``derived=False`` skips comparing the board masks with the board (for a
    state whose masks were just computed from it, as decoding does)."""
    bad = _invalid
    n = s.player_count
    if not 2 <= n <= 4:
        raise bad(f"player count {n}")
    if s.team_play and n != 4:
        raise bad("teams need 4 players")
    if sorted(s.deities) != sorted(set(s.deities)) or not all(0 <= d < len(DEITIES) for d in s.deities):
        raise bad(f"deities {s.deities} must be distinct deity ids")
    _amulets(s, derived)
    _rituals(s)
    _turn(s)


def _amulets(s: Position, derived: bool) -> None:
    """O1.3 / O2.2: the 60 amulets, the board's cells and masks, the hands."""
    bad = _invalid
    # Amulets: 60 accounted for, by type. Fast check (one sort, in C): every zone's
    # types, sorted, are the -1 of the empty market slots and cells, then the 60
    # amulets. On failure, _amulet_problem says what is wrong.
    every = s.draw_pile + s.discard + s.market + s.cell_type
    for cards in s.hands:
        every += cards
    for cards in s.broken:
        every += cards
    empty = s.market.count(-1) + s.cell_type.count(-1)
    every.sort()
    if every[empty:] != _AMULET_TYPES or every[:empty] != [-1] * empty:
        raise bad(_amulet_problem(s))
    # Board: one amulet per cell, canonical rotations, derived masks.
    occ = 0
    for c in range(CELLS):
        t = s.cell_type[c]
        if t >= 0:
            r = s.cell_rotation[c]
            if not 0 <= r < 4 or CANON_OF[t][r] != r:
                raise bad(f"rotation {r} on {cell_name(c)} is not canonical")
            occ |= 1 << c
            if derived and s.cell_arrows[c] != TYPE_ARROWS[t][r]:
                raise bad(f"arrows of {cell_name(c)} out of date")
        elif s.cell_rotation[c] != 0 or (derived and s.cell_arrows[c] != 0):
            raise bad(f"empty cell {cell_name(c)} has a rotation or arrows")
    if derived and (occ != s.occupied or s.links != all_links(s.cell_arrows)):
        raise bad("board masks out of date")
    if any(t < -1 for t in s.market):
        raise bad("bad market slot")
    for p, h in enumerate(s.hands):
        # Only Bastet's extra card (O7) takes a hand above 4, and only to 5.
        if len(h) > HAND_SIZE and not (
            len(h) == HAND_SIZE + 1 and _POWER[s.deities[p]] is Power.MARKET and s.powers_used[p]
        ):
            raise bad(f"seat {p} holds {len(h)} amulets")


def _rituals(s: Position) -> None:
    """O1.4 / O2.3 / O2.4: the 40 rituals, the Ankhs they gave, the exaltations."""
    bad = _invalid
    n = s.player_count
    # Rituals: 40 accounted for.
    seen: list[int] = list(s.simple_rituals) + list(s.advanced_rituals)
    for p in range(n):
        if len(s.ritual_slots[p]) != RITUAL_SLOTS:
            raise bad(f"seat {p} must have {RITUAL_SLOTS} ritual slots")
        seen += [r for r in s.ritual_slots[p] if r != -1]
        seen += [c // 2 if c >= 0 else -1 for c in s.completed[p]]
    if sorted(seen) != list(range(_NUM_RITUALS)):
        raise bad("rituals not accounted for (each of the 40 exactly once)")
    for r in s.simple_rituals:
        if _ADVANCED[r]:
            raise bad("a ritual is in the wrong pile")
    for r in s.advanced_rituals:
        if not _ADVANCED[r]:
            raise bad("a ritual is in the wrong pile")
    for p in range(n):
        if len(s.completed[p]) > RITUALS_TO_END:
            raise bad(f"seat {p} completed more than {RITUALS_TO_END} rituals")
        expect = 0
        for c in s.completed[p]:
            expect += _COMPLETED_ANKHS[c]
        if s.ankhs[p] != expect:
            raise bad(f"seat {p} ritual Ankhs {s.ankhs[p]} != {expect}")
    if len(set(s.exaltations)) != n or not all(0 <= x < _NUM_EXALTATIONS for x in s.exaltations):
        raise bad("exaltations must be distinct ids")


def _turn(s: Position) -> None:
    """O3, O5, O8: the seat, round and step, and what each step requires."""
    bad = _invalid
    n = s.player_count
    if not 0 <= s.current < n:
        raise bad(f"current seat {s.current}")
    if not 1 <= s.round <= MAX_ROUNDS:
        raise bad(f"round {s.round}")
    if not isinstance(s.phase, Phase):
        raise bad(f"phase {s.phase!r}")
    if not -1 <= s.ended_by < n:
        raise bad(f"ended_by {s.ended_by}")
    ph = s.phase
    hand = s.hands[s.current]
    five = [p for p in range(n) if len(s.completed[p]) >= RITUALS_TO_END]
    in_cast = ph in (Phase.BREAK, Phase.REFILL)
    if in_cast:
        if not (
            0 <= s.cast_slot < RITUAL_SLOTS
            and 0 < s.cast_cells <= FULL
            and s.ritual_slots[s.current][s.cast_slot] == -1
            and s.started
            and -1 <= s.last_broken < CELLS
        ):
            raise bad("inconsistent cast in progress")
    elif (s.cast_slot, s.cast_cells, s.breaks_left, s.last_broken) != (-1, 0, 0, -1):
        raise bad("cast fields set outside a cast")
    if ph is not Phase.PLACE and s.clear_cell != -1:
        raise bad("clear cell set outside the place-after-clear step")
    if ph is Phase.OVER:
        if s.started or s.placed:
            raise bad("turn flags set after the end")
        if s.ended_by >= 0:
            if five != [s.ended_by]:
                raise bad("the game ended by a 5th ritual that is not there")
        elif five or not (s.round == MAX_ROUNDS and s.current == n - 1):
            raise bad("the game is over without a 5th ritual or the round limit")
        return
    if s.ended_by != -1:
        raise bad("ended_by set before the end")
    if five and not (ph is Phase.BREAK and five == [s.current]):
        raise bad("a 5th ritual is completed but the game goes on")
    if ph is Phase.MAIN:
        if s.placed and not s.started:
            raise bad("placed but not started")
    elif ph is Phase.PLACE:
        if not (
            0 <= s.clear_cell < CELLS
            and not s.occupied & (1 << s.clear_cell)
            and s.occupied | (1 << s.clear_cell) == FULL
            and hand
            and not s.placed
            and s.started
        ):
            raise bad("inconsistent place-after-clear step")
    elif ph is Phase.DRAW:
        if not (
            s.placed and len(hand) < HAND_SIZE and (s.draw_pile or s.discard or any(m >= 0 for m in s.market))
        ):
            raise bad("inconsistent draw step")
    elif ph is Phase.BREAK:
        if s.breaks_left <= 0:
            raise bad("break step with no break left")
        above = s.cast_cells & (_HIGHER[s.last_broken] if s.last_broken >= 0 else FULL)
        if above & ~s.occupied:
            raise bad("the cast set is not on the board")
        if not s.legal_actions():
            raise bad("break step with no amulet to break")
    elif ph is Phase.REFILL and (s.breaks_left != 0 or not (s.simple_rituals or s.advanced_rituals)):
        raise bad("inconsistent refill step")
