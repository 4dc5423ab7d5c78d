"""Osirium action ids: layout, texts, parsing (O10).

Every id has one state-independent meaning. The layout (blocks in id order)::

    0                      pass
    1                      end
    2..3                   refill simple | refill advanced
    4..8                   draw market0..market3 | draw pile
    9..24                  break <cell>                      (cell = row*4+col)
    25..40                 clear <cell>
    41..56                 anubis <cell>
    57..60                 bastet market0..market3
    61..124                seth <cell> r<rot>                (cell*4 + rot)
    125..1148              isis <from>><to> r<rot>           ((from*16 + to)*4 + rot)
    1149..2108             place <colour-pattern>@<cell> r<rot>  (otype*16 + cell)
    2109..395318           cast s<slot> <order|chaos> <cells> ((slot*2+principle)*65535 + mask-1)

``otype`` indexes the oriented types (amulet type, canonical rotation) of
:data:`engine.osirium.board.OTYPES`: rotations of a card giving the same arrows are one
placement. Isis and Seth ids carry all four rotations; only the canonical (lowest) rotation
giving each arrow set is ever legal. The exact numbers follow from the card data.
"""

from __future__ import annotations

import re
from typing import Final

from engine.core import ActionInfo, ActionParseError, FieldValue, check_action_text
from engine.osirium.board import (
    CANON_OF,
    CELLS,
    OTYPE_INDEX,
    OTYPES,
    SIZE,
    TYPE_ARROWS,
    TYPE_BY_NAME,
    TYPE_COLOUR,
    TYPE_NAME,
    TYPE_PATTERN,
    arrows_text,
    cell_name,
    cells_of,
)
from engine.osirium.cards import COLOURS, MARKET_SIZE, PATTERNS, PRINCIPLES, RITUAL_SLOTS

PASS: Final = 0
END: Final = 1
REFILL: Final = 2  # + deck (0 simple, 1 advanced)
DRAW: Final = REFILL + 2  # + market slot, or + MARKET_SIZE for the pile
DRAW_PILE: Final = DRAW + MARKET_SIZE
BREAK: Final = DRAW_PILE + 1  # + cell
CLEAR: Final = BREAK + CELLS
ANUBIS: Final = CLEAR + CELLS
BASTET: Final = ANUBIS + CELLS  # + market slot
SETH: Final = BASTET + MARKET_SIZE  # + cell*4 + rot
ISIS: Final = SETH + CELLS * 4  # + (from*16 + to)*4 + rot
PLACE: Final = ISIS + CELLS * CELLS * 4  # + otype*16 + cell
CAST: Final = PLACE + len(OTYPES) * CELLS  # + (slot*2 + principle)*MASKS + mask - 1
MASKS: Final = (1 << CELLS) - 1
NUM_ACTIONS: Final = CAST + RITUAL_SLOTS * 2 * MASKS

DECKS: Final = ("simple", "advanced")


def place_id(otype: int, cell: int) -> int:
    return PLACE + otype * CELLS + cell


def cast_id(slot: int, principle: int, mask: int) -> int:
    return CAST + (slot * 2 + principle) * MASKS + mask - 1


#: Per placement id ``PLACE + i``: (amulet type, canonical rotation, cell).
PLACEMENTS: Final[tuple[tuple[int, int, int], ...]] = tuple(
    (t, rot, cell) for t, rot in OTYPES for cell in range(CELLS)
)
#: Per placement id ``PLACE + i``: (cell, arrows of the amulet placed), for link counting.
PLACEMENT_ARROWS: Final[tuple[tuple[int, int], ...]] = tuple(
    (cell, TYPE_ARROWS[t][rot]) for t, rot, cell in PLACEMENTS
)


def decode_place(action: int) -> tuple[int, int, int]:
    """A placement id's (amulet type, rotation, cell)."""
    return PLACEMENTS[action - PLACE]


def decode_cast(action: int) -> tuple[int, int, int]:
    """A cast id's (ritual slot, principle, cell mask of the set)."""
    sp, m = divmod(action - CAST, MASKS)
    slot, principle = divmod(sp, 2)
    return slot, principle, m + 1


def decode_seth(action: int) -> tuple[int, int]:
    """A Seth power id's (cell, rotation)."""
    cell, rot = divmod(action - SETH, 4)
    return cell, rot


def decode_isis(action: int) -> tuple[int, int, int]:
    """An Isis power id's (from cell, to cell, rotation)."""
    k, rot = divmod(action - ISIS, 4)
    src, dst = divmod(k, CELLS)
    return src, dst, rot


def _rot_text(rot: int) -> str:
    return f"r{rot * 90}"


def _cells_text(mask: int) -> str:
    return "+".join(cell_name(c) for c in cells_of(mask))


_INFO_MEMO: Final[dict[int, ActionInfo]] = {}
_PARSE_MEMO: Final[dict[str, int]] = {}
_MEMO_LIMIT: Final = 20_000


def action_info(action: object) -> ActionInfo:
    """Structured description of any id in the action space (memoised)."""
    info = _INFO_MEMO.get(action) if type(action) is int else None
    if info is None:
        info = _action_info(action)
        if len(_INFO_MEMO) >= _MEMO_LIMIT:
            _INFO_MEMO.clear()
        _INFO_MEMO[info.id] = info
    return info


def _action_info(action: object) -> ActionInfo:
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        raise ActionParseError(f"osirium: unknown action id {action!r} (ids are 0..{NUM_ACTIONS - 1})")
    a = action
    f: dict[str, FieldValue]
    if a == PASS:
        return ActionInfo(a, "pass", "pass", {})
    if a == END:
        return ActionInfo(a, "end", "end", {})
    if a < DRAW:
        deck = DECKS[a - REFILL]
        return ActionInfo(a, f"refill {deck}", "refill", {"deck": deck})
    if a < BREAK:
        k = a - DRAW
        if k == MARKET_SIZE:
            return ActionInfo(a, "draw pile", "draw", {"source": "pile"})
        return ActionInfo(a, f"draw market{k}", "draw", {"source": "market", "slot": k})
    if a < CLEAR:
        c = a - BREAK
        return ActionInfo(a, f"break {cell_name(c)}", "break", {"cell": divmod(c, SIZE)})
    if a < ANUBIS:
        c = a - CLEAR
        return ActionInfo(a, f"clear {cell_name(c)}", "clear", {"cell": divmod(c, SIZE)})
    if a < BASTET:
        c = a - ANUBIS
        return ActionInfo(a, f"anubis {cell_name(c)}", "power", {"deity": "anubis", "cell": divmod(c, SIZE)})
    if a < SETH:
        k = a - BASTET
        return ActionInfo(a, f"bastet market{k}", "power", {"deity": "bastet", "slot": k})
    if a < ISIS:
        c, rot = decode_seth(a)
        f = {"deity": "seth", "cell": divmod(c, SIZE), "rotation": rot * 90}
        return ActionInfo(a, f"seth {cell_name(c)} {_rot_text(rot)}", "power", f)
    if a < PLACE:
        src, dst, rot = decode_isis(a)
        f = {"deity": "isis", "from": divmod(src, SIZE), "to": divmod(dst, SIZE), "rotation": rot * 90}
        return ActionInfo(a, f"isis {cell_name(src)}>{cell_name(dst)} {_rot_text(rot)}", "power", f)
    if a < CAST:
        t, rot, c = decode_place(a)
        f = {
            "card": TYPE_NAME[t],
            "colour": COLOURS[TYPE_COLOUR[t]],
            "pattern": PATTERNS[TYPE_PATTERN[t]].name,
            "cell": divmod(c, SIZE),
            "rotation": rot * 90,
            "arrows": arrows_text(TYPE_ARROWS[t][rot]),
        }
        return ActionInfo(a, f"place {TYPE_NAME[t]}@{cell_name(c)} {_rot_text(rot)}", "place", f)
    slot, principle, mask = decode_cast(a)
    f = {
        "slot": slot,
        "principle": PRINCIPLES[principle],
        "cells": tuple(divmod(c, SIZE) for c in cells_of(mask)),
        "mask": mask,
    }
    return ActionInfo(a, f"cast s{slot} {PRINCIPLES[principle]} {_cells_text(mask)}", "cast", f)


# ---------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------

# ASCII digits only (``\d`` alone matches every Unicode digit), and a bounded count of them.
_CELL: Final = r"(\d),(\d)"
_ROT: Final = r"r(\d{1,3})"
_RE_SIMPLE: Final = re.compile(r"^(break|clear|anubis) " + _CELL + "$", re.ASCII)
_RE_DRAW: Final = re.compile(r"^(draw|bastet) (market(\d)|pile)$", re.ASCII)
_RE_REFILL: Final = re.compile(r"^refill (simple|advanced)$", re.ASCII)
_RE_SETH: Final = re.compile(r"^seth " + _CELL + " " + _ROT + "$", re.ASCII)
_RE_ISIS: Final = re.compile(r"^isis " + _CELL + ">" + _CELL + " " + _ROT + "$", re.ASCII)
_RE_PLACE: Final = re.compile(r"^place ([a-z]+-[a-z]+)@" + _CELL + " " + _ROT + "$", re.ASCII)
_RE_CAST: Final = re.compile(r"^cast s(\d) (order|chaos) (\d,\d(?:\+\d,\d)*)$", re.ASCII)


def _normalise(text: str) -> str:
    t = " ".join(text.strip().lower().split())
    t = re.sub(r"\s*([@>,+])\s*", r"\1", t)
    t = re.sub(r"\b(r|s|market) (\d)", r"\1\2", t, flags=re.ASCII)
    return t


def _cell(text: str, r: str, c: str) -> int:
    row, col = int(r), int(c)
    if not (0 <= row < SIZE and 0 <= col < SIZE):
        raise ActionParseError(f"osirium: cell {row},{col} is off the 4×4 board in {text!r}")
    return row * SIZE + col


def _rot(text: str, deg: str) -> int:
    d = int(deg)
    if d % 90 or not 0 <= d < 360:
        raise ActionParseError(f"osirium: rotation must be r0, r90, r180 or r270 in {text!r}")
    return d // 90


def string_to_action(text: str) -> int:
    """Parse an action text (case and whitespace tolerant, at most
    :data:`~engine.core.MAX_ACTION_TEXT` characters: the memo holds no longer text). A
    placement with a rotation that gives the same arrows as a lower one is read as that
    (canonical) placement."""
    a = _PARSE_MEMO.get(text) if type(text) is str else None
    if a is None:
        a = _parse(check_action_text("osirium", text))
        if len(_PARSE_MEMO) >= _MEMO_LIMIT:
            _PARSE_MEMO.clear()
        _PARSE_MEMO[text] = a
    return a


def _parse(text: str) -> int:
    t = _normalise(text)
    if t == "pass":
        return PASS
    if t == "end":
        return END
    m = _RE_REFILL.match(t)
    if m:
        return REFILL + DECKS.index(m.group(1))
    m = _RE_DRAW.match(t)
    if m:
        if m.group(2) == "pile":
            if m.group(1) == "bastet":
                raise ActionParseError(f"osirium: Bastet takes from a market slot, not the pile: {text!r}")
            return DRAW_PILE
        k = int(m.group(3))
        if not 0 <= k < MARKET_SIZE:
            raise ActionParseError(f"osirium: market slots are market0..market{MARKET_SIZE - 1}: {text!r}")
        return (DRAW if m.group(1) == "draw" else BASTET) + k
    m = _RE_SIMPLE.match(t)
    if m:
        base = {"break": BREAK, "clear": CLEAR, "anubis": ANUBIS}[m.group(1)]
        return base + _cell(text, m.group(2), m.group(3))
    m = _RE_SETH.match(t)
    if m:
        return SETH + _cell(text, m.group(1), m.group(2)) * 4 + _rot(text, m.group(3))
    m = _RE_ISIS.match(t)
    if m:
        src = _cell(text, m.group(1), m.group(2))
        dst = _cell(text, m.group(3), m.group(4))
        return ISIS + (src * CELLS + dst) * 4 + _rot(text, m.group(5))
    m = _RE_PLACE.match(t)
    if m:
        ty = TYPE_BY_NAME.get(m.group(1))
        if ty is None:
            raise ActionParseError(
                f"osirium: unknown amulet {m.group(1)!r} in {text!r} (colour-pattern, e.g. red-tee)"
            )
        cell = _cell(text, m.group(2), m.group(3))
        rot = CANON_OF[ty][_rot(text, m.group(4))]
        return place_id(OTYPE_INDEX[(ty, rot)], cell)
    m = _RE_CAST.match(t)
    if m:
        slot = int(m.group(1))
        if not 0 <= slot < RITUAL_SLOTS:
            raise ActionParseError(f"osirium: ritual slots are s0..s{RITUAL_SLOTS - 1}: {text!r}")
        mask = 0
        for part in m.group(3).split("+"):
            r, c = part.split(",")
            mask |= 1 << _cell(text, r, c)
        return cast_id(slot, PRINCIPLES.index(m.group(2)), mask)
    raise ActionParseError(
        f"osirium: cannot read action {text!r} (e.g. 'pass', 'end', 'place red-tee@1,2 r90', "
        "'draw market2', 'draw pile', 'cast s0 order 0,1+0,2+1,2', 'break 1,2', 'refill simple', "
        "'clear 1,2', 'isis 0,1>2,3 r90', 'anubis 2,2', 'bastet market1', 'seth 1,1 r180')"
    )
