"""Build Osirium positions from explicit fields, for scenario tests.

``build(...)`` starts from a fresh state, puts exactly the cards the test names where it
names them, and puts every other card somewhere valid so that all invariants hold (it ends
with ``state.validate()``):

* ``board``: ``{"r,c": "red-tee r90"}`` (rotation optional, canonicalised);
* ``hands``: per seat a list of type names (default: empty hands);
* ``market``: 4 names or ``None`` for an empty slot (default: 4 cards from the rest);
* ``pile``: names, **top card last**; the remaining amulets go under them, unless
  ``rest="discard"`` (then they go to the discard pile) or ``rest="nowhere"`` is not allowed:
  every amulet must be somewhere;
* ``discard``, ``broken``: names;
* ``slots``: per seat 3 ritual ids (-1 empty); ``completed``: per seat ``(id, principle)``;
  the other rituals go to their piles (ascending ids, so the top is the highest id), or
  ``simple``/``advanced`` give the piles exactly (top last; leftover rituals must not exist).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.osirium import GAME, OsiriumState
from engine.osirium.board import CANON_OF, NUM_TYPES, TYPE_BY_NAME, TYPE_COUNT
from engine.osirium.cards import RITUALS
from engine.osirium.state import BREAK, DRAW, MAIN, OVER, PLACE, REFILL

__all__ = ["BREAK", "DRAW", "MAIN", "OVER", "PLACE", "REFILL", "act", "build", "cell", "legal_texts"]


def cell(text: str) -> int:
    r, c = text.split(",")
    return int(r) * 4 + int(c)


def _t(name: str) -> int:
    return TYPE_BY_NAME[name]


def build(
    n: int = 2,
    *,
    board: dict[str, str] | None = None,
    hands: list[list[str]] | None = None,
    market: list[str | None] | None = None,
    pile: list[str] | None = None,
    rest: str = "pile",
    discard: list[str] | None = None,
    broken: list[list[str]] | None = None,
    slots: list[list[int]] | None = None,
    completed: list[list[tuple[int, int]]] | None = None,
    simple: list[int] | None = None,
    advanced: list[int] | None = None,
    exalt: list[int] | None = None,
    deities: list[str] | None = None,
    teams: bool = False,
    cur: int = 0,
    round: int = 1,
    seed: int = 0,
) -> OsiriumState:
    opts: dict[str, Any] = {"teams": teams}
    if deities is not None:
        opts["deities"] = deities
    s = GAME.new_initial_state(n, seed, opts)
    pool: Counter[int] = Counter({t: TYPE_COUNT[t] for t in range(NUM_TYPES)})

    def use(name: str) -> int:
        t = _t(name)
        if pool[t] <= 0:
            raise AssertionError(f"no {name} left to use")
        pool[t] -= 1
        return t

    s.cell_type = [-1] * 16
    s.cell_rotation = [0] * 16
    for key, spec in (board or {}).items():
        parts = spec.split()
        t = use(parts[0])
        rot = int(parts[1][1:]) // 90 if len(parts) > 1 else 0
        c = cell(key)
        s.cell_type[c] = t
        s.cell_rotation[c] = CANON_OF[t][rot]
    s.hands = [[use(x) for x in h] for h in (hands or [[] for _ in range(n)])]
    s.broken = [[use(x) for x in b] for b in (broken or [[] for _ in range(n)])]
    s.discard = [use(x) for x in (discard or [])]
    top = [use(x) for x in (pile or [])]
    if market is None:
        market_t = []
        for _ in range(4):
            t = next(t for t in range(NUM_TYPES) if pool[t] > 0)
            pool[t] -= 1
            market_t.append(t)
        s.market = market_t
    else:
        s.market = [-1 if x is None else use(x) for x in market]
    leftover = [t for t in range(NUM_TYPES) for _ in range(pool[t])]
    if rest == "pile":
        s.draw_pile = leftover + top
    elif rest == "discard":
        s.draw_pile = top
        s.discard += leftover
    else:
        raise AssertionError(rest)
    # Rituals.
    s.ritual_slots = [list(x) for x in (slots or [[-1, -1, -1] for _ in range(n)])]
    s.completed = [[rid * 2 + pr for rid, pr in c] for c in (completed or [[] for _ in range(n)])]
    s.ankhs = [sum(RITUALS[c // 2].ankhs(c % 2) for c in done) for done in s.completed]
    used = {r for row in s.ritual_slots for r in row if r >= 0} | {c // 2 for row in s.completed for c in row}
    if simple is None:
        s.simple_rituals = [r.id for r in RITUALS if not r.advanced and r.id not in used]
    else:
        s.simple_rituals = list(simple)
    if advanced is None:
        s.advanced_rituals = [r.id for r in RITUALS if r.advanced and r.id not in used]
    else:
        s.advanced_rituals = list(advanced)
    if exalt is not None:
        s.exaltations = list(exalt)
    s.current = cur
    s.round = round
    s.derive_board()
    s.validate()
    return s


def legal_texts(s: OsiriumState) -> list[str]:
    return [s.action_to_string(a) for a in s.legal_actions()]


def act(s: OsiriumState, *texts: str) -> list[Any]:
    """Apply actions by text through the validated path; return all events."""
    events: list[Any] = []
    for t in texts:
        events += s.apply_action(s.string_to_action(t))
    return events
