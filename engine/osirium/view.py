"""What a player may see of an Osirium state (O6), and the board drawing."""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Iterable
from typing import Any

from engine.core import View
from engine.osirium.board import (
    CELLS,
    NUM_TYPES,
    SIZE,
    TYPE_ARROWS,
    TYPE_LETTER,
    TYPE_NAME,
    cell_name,
    cells_of,
)
from engine.osirium.cards import DEITIES, EXALTATIONS, PRINCIPLES, RITUALS, E, N, Principle, S, W
from engine.osirium.flow import Phase

#: ``rituals`` slot values that are not a ritual id.
EMPTY_SLOT = -1
HIDDEN_SIMPLE = -2
HIDDEN_ADVANCED = -3


def render_board(cells: list[tuple[int, int]]) -> str:
    """The 4×4 board as text: each cell 5×3 characters, the amulet's colour letter in the
    middle and its arrows on the sides they point to (``^ > v <``), ``.`` an empty cell; a
    link (O4.1: two neighbours pointing at each other) is drawn across their shared side,
    ``-`` between a row's cells, ``|`` between a column's. Rows are numbered on the left,
    columns on top: cell ``row,col`` as in the action texts."""
    arrows = [TYPE_ARROWS[t][rot] if t >= 0 else 0 for t, rot in cells]
    lines = [_BOARD_HEAD, _BOARD_RULE]
    for r in range(SIZE):
        row = range(r * SIZE, (r + 1) * SIZE)
        art = [_CELL_ART[(cells[c][0] + 1) * 4 + cells[c][1]] for c in row]
        middle = [f" {r} |", art[0][1]]
        for c in row[1:]:
            middle.append("-" if arrows[c - 1] & E and arrows[c] & W else "|")
            middle.append(art[c - r * SIZE][1])
        lines.append("   |" + "|".join([a[0] for a in art]) + "|")
        lines.append("".join(middle) + "|")
        lines.append("   |" + "|".join([a[2] for a in art]) + "|")
        if r < SIZE - 1:
            lines.append(
                "   +"
                + "+".join(["--|--" if arrows[c] & S and arrows[c + SIZE] & N else "-----" for c in row])
                + "+"
            )
        else:
            lines.append(_BOARD_RULE)
    return "\n".join(lines)


def _cell_art(t: int, rot: int) -> tuple[str, str, str]:
    """The three lines of one cell of :func:`render_board`."""
    if t < 0:
        return ("     ", "  .  ", "     ")
    a = TYPE_ARROWS[t][rot]
    return (
        "  ^  " if a & N else "     ",
        ("<" if a & W else " ") + " " + TYPE_LETTER[t] + " " + (">" if a & E else " "),
        "  v  " if a & S else "     ",
    )


# The board drawing's fixed parts, and each cell's lines by ``(type + 1) * 4 + rotation``
# (a view's text is drawn on every GetView: bench/view_speed.py).
_BOARD_HEAD = "      " + "     ".join(str(c) for c in range(SIZE))
_BOARD_RULE = "   +" + "+".join(["-----"] * SIZE) + "+"
_CELL_ART: tuple[tuple[str, str, str], ...] = tuple(
    _cell_art(t, rot) for t in range(-1, NUM_TYPES) for rot in range(4)
)
#: Under the board: how to read it.
BOARD_KEY = (
    "cell row,col: row on the left, column on top · B blue, R red, G green, Y yellow",
    "^ > v <: its arrows · - or | across a side: the two amulets are linked (O4.1)",
)


def ritual_text(rid: int) -> str:
    """A ritual slot's value as text: the ritual's card, or an empty or face-down slot."""
    return _RITUAL_TEXT[rid] if rid >= 0 else _SLOT_TEXT[rid]


def _ritual_card_text(rid: int) -> str:
    r = RITUALS[rid]
    colours = ("B", "R", "G", "Y")
    req = "".join(colours[i] * k for i, k in enumerate(r.requirement))
    return (
        f"#{rid} {r.name}: needs {req}, order {r.order_ankhs}/{r.order_breaks},"
        f" chaos {r.chaos_ankhs}/{r.chaos_breaks}"
    )


_RITUAL_TEXT: tuple[str, ...] = tuple(_ritual_card_text(rid) for rid in range(len(RITUALS)))
#: What the seat to act decides in each step of a turn (O3, O5).
_STEP_TEXT = {
    "main": "place, cast a ritual, use the power, pass or end",
    "place": "place on the cell just cleared",
    "draw": "draw from the market or the pile",
    "break": "break an amulet of the cast set",
    "refill": "refill the emptied ritual slot",
}


def _wrap(text: str) -> list[str]:
    """A seat's detail line, indented under the seat and wrapped to 80 columns."""
    if len(text) <= 76:
        return ["    " + text]
    return textwrap.wrap(text, 80, initial_indent="    ", subsequent_indent="      ")


#: Each deity's power line(s) by (deity, used).
_POWER_TEXT: dict[tuple[int, bool], list[str]] = {
    (d.id, used): _wrap(f"power ({'used' if used else 'available'}): {d.text}")
    for d in DEITIES
    for used in (False, True)
}
#: Under the seats: how to read a ritual.
RITUAL_KEY = "rituals: order a/b, chaos a/b = cast by that side for a Ankhs, then break b (O5)"
_GLYPHS = ((N, "^"), (E, ">"), (S, "v"), (W, "<"))
#: Each amulet type's arrows at rotation 0, as the board draws them.
_ARROWS_AT_R0: dict[str, str] = {
    TYPE_NAME[t]: " ".join(glyph for bit, glyph in _GLYPHS if TYPE_ARROWS[t][0] & bit)
    for t in range(NUM_TYPES)
}
_SLOT_TEXT = {
    EMPTY_SLOT: "(empty)",
    HIDDEN_SIMPLE: "(face down, simple)",
    HIDDEN_ADVANCED: "(face down, advanced)",
}


@dataclasses.dataclass(frozen=True, slots=True)
class OsiriumView(View):
    """One player's (or the public's) view of an Osirium state (O6), as ids: texts are
    rendered on demand (:meth:`to_text`, :meth:`to_dict`), never stored.

    Amulets are amulet *types* (:data:`engine.osirium.board.TYPE_NAME` gives their names):
    ``cell_types`` / ``cell_rotations`` per cell, row-major (-1 / 0 on an empty cell;
    rotations are quarter turns clockwise, 0-3); ``market`` per slot (-1 empty); ``discard``,
    ``hand`` (``None`` in the public view) and each seat's ``broken`` pile sorted by type.
    ``deities``: per seat, a deity id (:data:`engine.osirium.cards.DEITIES`). ``rituals``:
    per seat, the 3 deity-board slots: a ritual id, or -1 empty, -2 face down simple, -3 face
    down advanced (the deck a face-down card came from is public: it is the deck chosen at
    the refill). ``completed``: per seat, (ritual id, principle) in the order cast.
    ``exaltations``: per seat, an exaltation id or -1 when unknown to the viewer (all are
    revealed at the end). ``cast``: during break/refill steps, (slot, set mask, breaks left,
    last broken cell), else (). ``decision``: the step of the seat to act (``"over"`` at the
    end); ``result``: the outcome's text once over, else "".
    """

    player: int | None
    num_players: int
    teams: tuple[int, ...]
    deities: tuple[int, ...]
    powers_used: tuple[bool, ...]
    current_player: int
    decision: Phase
    round: int
    cell_types: tuple[int, ...]
    cell_rotations: tuple[int, ...]
    market: tuple[int, ...]
    draw_pile_size: int
    discard: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    hand: tuple[int, ...] | None
    rituals: tuple[tuple[int, ...], ...]
    completed: tuple[tuple[tuple[int, Principle], ...], ...]
    broken: tuple[tuple[int, ...], ...]
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
        """JSON-ready fields, amulets, deities, principles and the decision by name: ``board``
        per cell ``"<colour>-<pattern> r<degrees>"`` or ``""``, ``market`` names or ``""``,
        ``discard`` / ``hand`` / ``broken`` names sorted by name, ``completed`` (ritual id,
        ``"order"`` / ``"chaos"``)."""
        return {
            "player": self.player,
            "num_players": self.num_players,
            "teams": self.teams,
            "deities": tuple(DEITIES[d].name for d in self.deities),
            "powers_used": self.powers_used,
            "current_player": self.current_player,
            "decision": self.decision.value,
            "round": self.round,
            "board": tuple(map(cell_text, self.cell_types, self.cell_rotations)),
            "market": tuple(TYPE_NAME[t] if t >= 0 else "" for t in self.market),
            "draw_pile_size": self.draw_pile_size,
            "discard": amulet_names(self.discard),
            "hand_sizes": self.hand_sizes,
            "hand": None if self.hand is None else amulet_names(self.hand),
            "rituals": self.rituals,
            "completed": tuple(tuple((rid, PRINCIPLES[pr]) for rid, pr in done) for done in self.completed),
            "broken": tuple(amulet_names(b) for b in self.broken),
            "ritual_ankhs": self.ritual_ankhs,
            "exaltations": self.exaltations,
            "simple_pile_size": self.simple_pile_size,
            "advanced_pile_size": self.advanced_pile_size,
            "started": self.started,
            "placed": self.placed,
            "clear_cell": self.clear_cell,
            "cast": self.cast,
            "scores": self.scores,
            "result": self.result,
        }

    def to_text(self) -> str:
        """The board with the market, the piles and the viewer's hand beside it, then each
        seat (within 80 columns)."""
        who = "public" if self.player is None else f"seat {self.player}"
        lines = [f"Osirium — view of {who}, round {self.round}"]
        if self.current_player >= 0:
            step = f"{self.decision}: {_STEP_TEXT[self.decision]}"
            lines.append(f"to play: seat {self.current_player} ({step})")
        else:
            lines.extend(textwrap.wrap(f"game over: {self.result}", 80, subsequent_indent="  "))
        board = render_board(list(zip(self.cell_types, self.cell_rotations, strict=True))).split("\n")
        side = ["market:"]
        side.extend(f"  market{k} {TYPE_NAME[t] if t >= 0 else '(empty)'}" for k, t in enumerate(self.market))
        side.append(f"draw pile {self.draw_pile_size} · discard {len(self.discard)}")
        side.append(f"rituals: {self.simple_pile_size} simple, {self.advanced_pile_size} advanced")
        if self.hand is not None:
            side.append("")
            side.append(f"your hand ({len(self.hand)}), arrows at r0:")
            side.extend(f"  {name:<16}{_ARROWS_AT_R0[name]}" for name in amulet_names(self.hand))
            if not self.hand:
                side.append("  (empty)")
        side += [""] * (len(board) - len(side) - 1)
        lines.extend(f"{b:<30}{x}".rstrip() for b, x in zip(board, ["", *side], strict=False))
        lines.extend(BOARD_KEY)
        for p in range(self.num_players):
            team = f" team {self.teams[p]}" if len(set(self.teams)) < self.num_players else ""
            deity = DEITIES[self.deities[p]]
            lines.append(
                f"seat {p}{team}: {deity.name}, hand {self.hand_sizes[p]}, "
                f"ritual Ankhs {self.ritual_ankhs[p]}, score {self.scores[p]}"
            )
            lines.extend(_POWER_TEXT[self.deities[p], self.powers_used[p]])
            for k, rid in enumerate(self.rituals[p]):
                lines.append(f"    s{k}: {ritual_text(rid)}")
            if self.completed[p]:
                done = ", ".join(f"{RITUALS[r].name} ({PRINCIPLES[pr]})" for r, pr in self.completed[p])
                lines.extend(_wrap(f"completed: {done}"))
            if self.broken[p]:
                lines.extend(_wrap(f"broken: {', '.join(amulet_names(self.broken[p]))}"))
            if self.exaltations[p] >= 0:
                x = EXALTATIONS[self.exaltations[p]]
                lines.extend(_wrap(f"exaltation: {x.name} ({x.text}, {x.ankhs} Ankhs)"))
        lines.append(RITUAL_KEY)
        if self.cast:
            slot, mask, left, _last = self.cast
            cells = "+".join(cell_name(c) for c in cells_of(mask))
            lines.append(f"casting s{slot} on {cells}: {left} break(s) left")
        return "\n".join(lines)


def amulet_names(types: Iterable[int]) -> tuple[str, ...]:
    """The names of amulet types, sorted by name (the order views show them in)."""
    return tuple(sorted(TYPE_NAME[t] for t in types))


def cell_text(t: int, rot: int) -> str:
    """A board cell as text: ``"<colour>-<pattern> r<degrees>"``, ``""`` when empty."""
    return _CELL_TEXT[(t + 1) * 4 + rot]


#: ``cell_text`` by ``(type + 1) * 4 + rotation``.
_CELL_TEXT: tuple[str, ...] = ("",) * 4 + tuple(
    f"{name} r{rot * 90}" for name in TYPE_NAME for rot in range(4)
)


assert CELLS == SIZE * SIZE
