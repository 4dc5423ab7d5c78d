"""What ``heka play`` says about actions: every action form of a game, with an example (one of
the person's legal actions when there is one) and what it does, and a long list of legal
actions summarised by form.

The texts are the engine's action texts (``docs/rules/aton.md`` and ``docs/rules/osirium.md``,
"Action ids"), read back with the game's own parser, so an example is explained from what it
means (``arrange 4321``: 4 on cartouche 1, ...), not from its spelling.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence

from engine.core import ActionInfo, EngineError
from engine.registry import get_game

#: Per game, its action forms in the order help lists them: (first word of the text, the
#: example shown when no legal action has that form).
FORMS: dict[str, tuple[tuple[str, str], ...]] = {
    "aton": (
        ("keep", "keep"),
        ("exchange", "exchange"),
        ("arrange", "arrange 4321"),
        ("remove", "remove T1.7"),
        ("place", "place T2.6"),
        ("reset", "reset T3.4"),
    ),
    "osirium": (
        ("pass", "pass"),
        ("place", "place red-tee@2,0 r90"),
        ("draw", "draw market1"),
        ("cast", "cast s0 order 0,0+0,1+1,1"),
        ("break", "break 2,0"),
        ("refill", "refill simple"),
        ("end", "end"),
        ("clear", "clear 1,1"),
        ("isis", "isis 0,1>2,3 r90"),
        ("anubis", "anubis 2,2"),
        ("bastet", "bastet market1"),
        ("seth", "seth 1,1 r180"),
    ),
}

# ---------------------------------------------------------------------------------------
# Aton (A3-A8)
# ---------------------------------------------------------------------------------------

#: A6.2 by cartouche-2 value: what the removal step asks.
_ATON_REMOVALS = {
    4: "removes 2 of the opponent's counters",
    3: "removes 1 of the opponent's counters",
    2: "removes none",
    1: "removes 1 of your own counters",
}


def _aton(info: ActionInfo) -> str:
    f = info.fields
    if info.kind == "keep":
        return "keep your hand, and your exchange token for a later round (A3.2)"
    if info.kind == "exchange":
        return "spend your exchange token: discard your hand and draw 4 new cards (A3.2)"
    if info.kind == "arrange":
        values = f["values"]
        assert isinstance(values, tuple)
        v = [int(str(x)) for x in values]
        removal = _ATON_REMOVALS[v[1]]
        temples = "temple 1 only" if v[2] == 1 else f"temples 1-{v[2]}"
        return (
            "one card on each of cartouches 1-4, in that order: "
            f"{v[0]} on cartouche 1 (points: twice the difference when higher than the "
            f"opponent's), {v[1]} on cartouche 2 (the lower card acts first; {v[1]} {removal}), "
            f"{v[2]} on cartouche 3 ({temples} allowed), {v[3]} on cartouche 4 "
            f"(place {v[3]} counter{'s' if v[3] > 1 else ''}) (A3.3-A6)"
        )
    square = f"square {f['slot']} of temple {f['temple']} ({f['square_kind']})"
    if info.kind == "remove":
        return f"remove the counter on {square} to the Kingdom of the Dead (A6.2)"
    if info.kind == "place":
        return f"put one of your counters on {square} (A6.3)"
    return f"take your counter on {square} back to your stock (A8.4)"


# ---------------------------------------------------------------------------------------
# Osirium (O3, O5, O7)
# ---------------------------------------------------------------------------------------

_GLYPH = {"N": "^", "E": ">", "S": "v", "W": "<"}


def _cell(value: object) -> str:
    assert isinstance(value, tuple)
    return f"{value[0]},{value[1]}"


def _osirium(info: ActionInfo) -> str:
    f = info.fields
    word = info.text.split()[0]
    if word == "pass":
        return "discard your whole hand and draw 4; ends your turn (only as its first action, O3.5)"
    if word == "end":
        return "end your turn (O3.4)"
    if word == "place":
        arrows = " ".join(_GLYPH[a] for a in str(f["arrows"]))
        turned = "not turned" if f["rotation"] == 0 else f"turned {f['rotation']}° clockwise"
        return (
            f"put {f['card']} from your hand on cell {_cell(f['cell'])} (row, column), {turned}: "
            f"arrows {arrows} (O3.1)"
        )
    if word == "draw":
        if f["source"] == "pile":
            return "take the top card of the draw pile into your hand (O3.2)"
        return f"take the amulet in market slot {f['slot']} into your hand; it refills at once (O3.2)"
    if word == "cast":
        cast_cells = f["cells"]
        assert isinstance(cast_cells, tuple)
        cells = ", ".join(_cell(c) for c in cast_cells)
        return (
            f"cast the ritual in your slot s{f['slot']} by its {f['principle']} side on the linked "
            f"amulets at {cells}: score its Ankhs, then break as many of them as it says (O5)"
        )
    if word == "break":
        return f"break the amulet on {_cell(f['cell'])}, of the cast set, into your broken pile (O5.3)"
    if word == "refill":
        return f"put the top ritual of the {f['deck']} pile into your emptied slot (O5.5)"
    if word == "clear":
        return f"the board is full: discard the amulet on {_cell(f['cell'])}, then place on that cell (O3.1a)"
    if word == "isis":
        return (
            f"Isis' power, once a game: move the amulet on {_cell(f['from'])} to the empty cell "
            f"{_cell(f['to'])}, turned {f['rotation']}° (O7)"
        )
    if word == "anubis":
        cell = _cell(f["cell"])
        return f"Anubis' power, once a game: break the amulet on {cell} into your broken pile (O7)"
    if word == "bastet":
        return f"Bastet's power, once a game: take market slot {f['slot']}'s amulet into your hand too (O7)"
    return (
        f"Seth's power, once a game: turn the amulet on {_cell(f['cell'])} to {f['rotation']}° "
        "(a different set of arrows) (O7)"
    )


_EXPLAIN: dict[str, Callable[[ActionInfo], str]] = {"aton": _aton, "osirium": _osirium}


def explain(game: str, text: str) -> str:
    """What the action ``text`` of ``game`` does, in a sentence ("" for a game or text this
    module does not know)."""
    describe = _EXPLAIN.get(game)
    if describe is None:
        return ""
    g = get_game(game)
    try:
        info = g.action_info(g.string_to_action(text))
    except EngineError:
        return ""
    return describe(info)


def _word(text: str) -> str:
    return text.split(maxsplit=1)[0] if text.strip() else ""


def help_lines(game: str, legal: Sequence[str], width: int) -> list[str]:
    """Every action form of ``game``: an example (the first legal action of that form, else a
    fixed one), a ``*`` when the person may play that form now, and what the example does."""
    forms = list(FORMS.get(game, ()))
    known = {w for w, _ in forms}
    for text in legal:  # a game without a table here: the forms its legal actions show
        if _word(text) not in known:
            known.add(_word(text))
            forms.append((_word(text), text))
    lines = ["actions (* = a form you may play now, its example one of your legal actions):"]
    column = max(len(example) for _, example in forms) + 1
    for word, example in forms:
        now = next((t for t in legal if _word(t) == word), None)
        shown = now or example
        head = f"{'*' if now else ' '} {shown:<{max(column, len(shown) + 1)}}"
        text = explain(game, shown)
        if not text:
            lines.append(("  " + head).rstrip())
            continue
        lines.extend(
            textwrap.wrap(
                text,
                max(width, 60),
                initial_indent="  " + head,
                subsequent_indent=" " * (4 + column),
            )
        )
    lines.append("  type the text (or a unique start or part of it), or the action's number")
    return lines


# ---------------------------------------------------------------------------------------
# A long list of legal actions, by form
# ---------------------------------------------------------------------------------------

_DIGITS = re.compile(r"\d+")


def summarised(legal: Sequence[str]) -> list[str]:
    """The legal actions as lines, runs of one shape (the same text but for its numbers: one
    card placed on any cell at any rotation) shown as their first and last action with the
    numbers they span."""
    lines: list[str] = []
    start = 0
    while start < len(legal):
        shape = _DIGITS.sub("#", legal[start])
        end = start + 1
        while end < len(legal) and _DIGITS.sub("#", legal[end]) == shape:
            end += 1
        if end - start <= 2:
            lines.extend(f"{i + 1:>3}. {legal[i]}" for i in range(start, end))
        else:
            first, last = legal[start], legal[end - 1]
            lines.append(f"{start + 1:>3}-{end}. {first} ... {_tail(first, last)} ({end - start} actions)")
        start = end
    return lines


def _tail(first: str, last: str) -> str:
    """``last`` without the words it shares with ``first``: ``place red-tee@0,0 r0`` ...
    ``@3,3 r270``."""
    shared = 0
    for a, b in zip(first, last, strict=False):
        if a != b:
            break
        shared += 1
    cut = max(first.rfind(sep, 0, shared) for sep in " @>")
    return last[cut:].lstrip() if cut > 0 else last
