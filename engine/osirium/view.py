"""What a player may see of an Osirium state (O6), and the board drawing."""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.core import View
from engine.osirium.board import (
    CELLS,
    SIZE,
    TYPE_ARROWS,
    TYPE_BY_NAME,
    TYPE_LETTER,
    TYPE_NAME,
    cell_name,
    cells_of,
)
from engine.osirium.cards import DEITIES, EXALTATIONS, PRINCIPLES, RITUALS, E, N, Principle, S, W

#: ``rituals`` slot values that are not a ritual id.
EMPTY_SLOT = -1
HIDDEN_SIMPLE = -2
HIDDEN_ADVANCED = -3


def render_board(cells: list[tuple[int, int]]) -> str:
    """The 4×4 board as text: each cell 5×3 characters, colour letter in the middle,
    arrows drawn on the sides they point to (``^ > v <``); ``.`` is an empty cell."""
    sep = "   +" + "+".join(["-----"] * SIZE) + "+"
    lines = ["      " + "     ".join(str(c) for c in range(SIZE)), sep]
    for r in range(SIZE):
        top, mid, bot = [], [], []
        for c in range(SIZE):
            t, rot = cells[r * SIZE + c]
            if t < 0:
                top.append("     ")
                mid.append("  .  ")
                bot.append("     ")
                continue
            a = TYPE_ARROWS[t][rot]
            top.append("  ^  " if a & N else "     ")
            mid.append(("<" if a & W else " ") + " " + TYPE_LETTER[t] + " " + (">" if a & E else " "))
            bot.append("  v  " if a & S else "     ")
        lines.append("   |" + "|".join(top) + "|")
        lines.append(f" {r} |" + "|".join(mid) + "|")
        lines.append("   |" + "|".join(bot) + "|")
        lines.append(sep)
    return "\n".join(lines)


def ritual_text(rid: int) -> str:
    if rid == EMPTY_SLOT:
        return "(empty)"
    if rid == HIDDEN_SIMPLE:
        return "(face down, simple)"
    if rid == HIDDEN_ADVANCED:
        return "(face down, advanced)"
    r = RITUALS[rid]
    colours = ("B", "R", "G", "Y")
    req = "".join(colours[i] * k for i, k in enumerate(r.requirement))
    return (
        f"#{rid} {r.name} [{req}] order {r.order_ankhs}/{r.order_breaks}"
        f" chaos {r.chaos_ankhs}/{r.chaos_breaks}"
    )


def _parse_cell(text: str) -> tuple[int, int]:
    if not text:
        return (-1, 0)
    name, rot = text.split(" r")
    return (TYPE_BY_NAME[name], int(rot) // 90)


@dataclasses.dataclass(frozen=True, slots=True)
class OsiriumView(View):
    """One player's (or the public's) view of an Osirium state (O6).

    ``board``: per cell, row-major, ``"<colour>-<pattern> r<degrees>"`` or ``""``.
    ``rituals``: per seat, the 3 deity-board slots: a ritual id, or -1 empty,
    -2 face down simple, -3 face down advanced (the deck a face-down card came from is
    public: it is the deck chosen at the refill). ``completed``: per seat, (ritual id,
    principle). ``exaltations``: per seat, an exaltation id or -1 when unknown to the viewer
    (all are revealed at the end). ``cast``: during break/refill steps,
    (slot, set mask, breaks left, last broken cell), else ().
    """

    player: int | None
    num_players: int
    teams: tuple[int, ...]
    deities: tuple[str, ...]
    powers_used: tuple[bool, ...]
    current_player: int
    decision: str
    round: int
    board: tuple[str, ...]
    market: tuple[str, ...]
    draw_pile_size: int
    discard: tuple[str, ...]
    hand_sizes: tuple[int, ...]
    hand: tuple[str, ...] | None
    rituals: tuple[tuple[int, ...], ...]
    completed: tuple[tuple[tuple[int, str], ...], ...]
    broken: tuple[tuple[str, ...], ...]
    ritual_ankhs: tuple[int, ...]
    exaltations: tuple[int, ...]
    simple_pile_size: int
    advanced_pile_size: int
    started: bool
    placed: bool
    clear_cell: int
    cast: tuple[int, ...]
    scores: tuple[int, ...]
    result: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (every value is already an immutable scalar or tuple)."""
        return {name: getattr(self, name) for name in _VIEW_FIELDS}

    # --- the same data as ids, for bots --------------------------------------------

    def cells(self) -> tuple[list[int], list[int]]:
        """The board as (amulet type per cell, -1 when empty; rotation per cell)."""
        cells = [_parse_cell(c) for c in self.board]
        return [t for t, _ in cells], [r for _, r in cells]

    def hand_types(self) -> list[int]:
        """The viewer's hand as amulet types (empty for the public view)."""
        return [TYPE_BY_NAME[name] for name in self.hand or ()]

    def market_types(self) -> list[int]:
        """The market slots as amulet types, -1 for an empty slot."""
        return [TYPE_BY_NAME[name] if name else -1 for name in self.market]

    def broken_types(self, seat: int) -> list[int]:
        """Seat ``seat``'s broken pile as amulet types."""
        return [TYPE_BY_NAME[name] for name in self.broken[seat]]

    def completed_rituals(self, seat: int) -> list[tuple[int, Principle]]:
        """Seat ``seat``'s completed rituals as (ritual id, principle), in order."""
        return [(rid, Principle[name.upper()]) for rid, name in self.completed[seat]]

    def to_text(self) -> str:
        who = "public" if self.player is None else f"seat {self.player}"
        lines = [f"Osirium — view of {who}, round {self.round}"]
        if self.current_player >= 0:
            lines.append(f"to play: seat {self.current_player} ({self.decision})")
        else:
            lines.append(f"game over: {self.result}")
        lines.append(render_board([_parse_cell(c) for c in self.board]))
        lines.append("market: " + "  ".join(f"[{k}] {m or '-'}" for k, m in enumerate(self.market)))
        lines.append(
            f"draw pile {self.draw_pile_size}, discard {len(self.discard)}, "
            f"simple rituals {self.simple_pile_size}, advanced rituals {self.advanced_pile_size}"
        )
        if self.hand is not None:
            lines.append("your hand: " + (", ".join(self.hand) or "(empty)"))
        for p in range(self.num_players):
            used = "used" if self.powers_used[p] else "available"
            team = f" team {self.teams[p]}" if len(set(self.teams)) < self.num_players else ""
            lines.append(
                f"seat {p}{team}: {self.deities[p]} (power {used}), hand {self.hand_sizes[p]}, "
                f"ritual Ankhs {self.ritual_ankhs[p]}, score {self.scores[p]}"
            )
            for k, rid in enumerate(self.rituals[p]):
                lines.append(f"    s{k}: {ritual_text(rid)}")
            if self.completed[p]:
                done = ", ".join(f"{RITUALS[r].name} ({pr})" for r, pr in self.completed[p])
                lines.append(f"    completed: {done}")
            if self.broken[p]:
                lines.append(f"    broken: {', '.join(self.broken[p])}")
            if self.exaltations[p] >= 0:
                x = EXALTATIONS[self.exaltations[p]]
                lines.append(f"    exaltation: {x.name} ({x.text}, {x.ankhs} Ankhs)")
        if self.cast:
            slot, mask, left, _last = self.cast
            cells = "+".join(cell_name(c) for c in cells_of(mask))
            lines.append(f"casting s{slot} on {cells}: {left} break(s) left")
        return "\n".join(lines)


_VIEW_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(OsiriumView))


def deity_name(d: int) -> str:
    return DEITIES[d].name


def principle_name(p: int) -> str:
    return PRINCIPLES[p]


def cell_text(t: int, rot: int) -> str:
    """A board cell as the view shows it: ``"<colour>-<pattern> r<degrees>"``, ``""`` empty."""
    return _CELL_TEXT[(t + 1) * 4 + rot]


#: ``cell_text`` by ``(type + 1) * 4 + rotation`` (views are built on every call).
_CELL_TEXT: tuple[str, ...] = ("",) * 4 + tuple(
    f"{name} r{rot * 90}" for name in TYPE_NAME for rot in range(4)
)


assert CELLS == SIZE * SIZE
