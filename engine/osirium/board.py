"""Board geometry, amulet types and orientations, links and connected sets (O1.2, O1.3, O4).

Everything here is precomputed at import from :mod:`engine.osirium.cards`:

* amulet *types* (identical cards: one colour and one pattern) and their counts;
* rotations (O1.3) and, per type, the *canonical* rotations: the lowest rotation giving each
  distinct arrow set (placements giving the same arrows count once, O10);
* the 24 edges of the 4×4 grid and, per cell, the edges it may link through (O4.1);
* :func:`connected_sets`: every set of 3–5 cells connected through links only (O4.2), from
  the board's link bitmask, memoised per link mask (the expensive part of ritual matching).

Cells are ``row * 4 + col``; a cell set is a 16-bit mask; the links are a 24-bit mask.
"""

from __future__ import annotations

from typing import Final

from engine.bits import low_bit, popcount
from engine.osirium.cards import AMULETS, COLOUR_LETTERS, COLOURS, PATTERNS, RITUALS, E, N, S, W

SIZE: Final = 4
CELLS: Final = SIZE * SIZE
FULL: Final = (1 << CELLS) - 1
ROTATIONS: Final = (0, 1, 2, 3)  # quarter turns clockwise: 0, 90, 180, 270 degrees


def cell_name(cell: int) -> str:
    return f"{cell // SIZE},{cell % SIZE}"


def rotate_arrows(arrows: int, rot: int) -> int:
    """Arrows after ``rot`` quarter turns clockwise (N→E→S→W, O1.3)."""
    rot &= 3
    return ((arrows << rot) | (arrows >> (4 - rot))) & 15


def arrows_text(arrows: int) -> str:
    return "".join(name for bit, name in ((N, "N"), (E, "E"), (S, "S"), (W, "W")) if arrows & bit) or "-"


# ---------------------------------------------------------------------------------------
# Amulet types (identical cards) and orientations
# ---------------------------------------------------------------------------------------

_type_keys: list[tuple[int, int]] = []
for _a in AMULETS:
    if (_a.colour, _a.pattern) not in _type_keys:
        _type_keys.append((_a.colour, _a.pattern))
_type_keys.sort()

#: type -> (colour, pattern)
TYPE_KEYS: Final[tuple[tuple[int, int], ...]] = tuple(_type_keys)
NUM_TYPES: Final = len(TYPE_KEYS)
TYPE_COLOUR: Final[tuple[int, ...]] = tuple(c for c, _ in TYPE_KEYS)
TYPE_PATTERN: Final[tuple[int, ...]] = tuple(p for _, p in TYPE_KEYS)
TYPE_NAME: Final[tuple[str, ...]] = tuple(f"{COLOURS[c]}-{PATTERNS[p].name}" for c, p in TYPE_KEYS)
TYPE_LETTER: Final[tuple[str, ...]] = tuple(COLOUR_LETTERS[c] for c, _ in TYPE_KEYS)
TYPE_BY_NAME: Final[dict[str, int]] = {name: t for t, name in enumerate(TYPE_NAME)}
#: How many cards of each type exist (O1.3): the invariant of validate().
TYPE_COUNT: Final[tuple[int, ...]] = tuple(
    sum(1 for a in AMULETS if (a.colour, a.pattern) == key) for key in TYPE_KEYS
)
#: Card type of each physical amulet id.
AMULET_TYPE: Final[tuple[int, ...]] = tuple(TYPE_KEYS.index((a.colour, a.pattern)) for a in AMULETS)
#: Arrows of each type at each rotation.
TYPE_ARROWS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(rotate_arrows(PATTERNS[p].arrows, r) for r in ROTATIONS) for _, p in TYPE_KEYS
)


def _canonical(arrows_by_rot: tuple[int, ...]) -> tuple[int, ...]:
    seen: list[int] = []
    out: list[int] = []
    for r, a in enumerate(arrows_by_rot):
        if a not in seen:
            seen.append(a)
            out.append(r)
    return tuple(out)


#: Canonical rotations of each type: the lowest rotation for each distinct arrow set.
CANON_ROTS: Final[tuple[tuple[int, ...], ...]] = tuple(_canonical(a) for a in TYPE_ARROWS)
#: ``CANON_OF[t][r]``: the canonical rotation giving the same arrows as rotation r.
CANON_OF: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(TYPE_ARROWS[t].index(TYPE_ARROWS[t][r]) for r in ROTATIONS) for t in range(NUM_TYPES)
)
#: Oriented types: (type, canonical rotation), the unit of placement actions.
OTYPES: Final[tuple[tuple[int, int], ...]] = tuple((t, r) for t in range(NUM_TYPES) for r in CANON_ROTS[t])
OTYPE_INDEX: Final[dict[tuple[int, int], int]] = {ot: i for i, ot in enumerate(OTYPES)}
#: Per type, the oriented-type indices (ascending).
TYPE_OTYPES: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(OTYPE_INDEX[(t, r)] for r in CANON_ROTS[t]) for t in range(NUM_TYPES)
)

# ---------------------------------------------------------------------------------------
# Grid edges and links (O4.1)
# ---------------------------------------------------------------------------------------

_edges: list[tuple[int, int]] = []
for _r in range(SIZE):
    for _c in range(SIZE - 1):
        _edges.append((_r * SIZE + _c, _r * SIZE + _c + 1))  # horizontal
for _r in range(SIZE - 1):
    for _c in range(SIZE):
        _edges.append((_r * SIZE + _c, (_r + 1) * SIZE + _c))  # vertical
#: Edge index -> (cell a, cell b), a < b.
EDGE_CELLS: Final[tuple[tuple[int, int], ...]] = tuple(_edges)


def _cell_links() -> tuple[tuple[tuple[int, int, int, int], ...], ...]:
    out = []
    for cell in range(CELLS):
        r, c = divmod(cell, SIZE)
        row: list[tuple[int, int, int, int]] = []
        for bit, opp, dr, dc in ((N, S, -1, 0), (E, W, 0, 1), (S, N, 1, 0), (W, E, 0, -1)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < SIZE and 0 <= cc < SIZE:
                other = rr * SIZE + cc
                e = EDGE_CELLS.index((min(cell, other), max(cell, other)))
                row.append((bit, opp, other, 1 << e))
        out.append(tuple(row))
    return tuple(out)


#: Per cell: (arrow bit towards the neighbour, the neighbour's facing bit, neighbour, edge bit).
CELL_LINKS: Final[tuple[tuple[tuple[int, int, int, int], ...], ...]] = _cell_links()
#: Per cell: the mask of its edges.
CELL_EDGE_MASK: Final[tuple[int, ...]] = tuple(sum(e for _, _, _, e in row) for row in CELL_LINKS)


def links_formed(arrows: list[int], cell: int, piece: int) -> int:
    """The links (edge bits) an amulet with arrows ``piece`` on ``cell`` forms with its
    neighbours, given every cell's arrows (0 = empty), O4.1: both amulets must point at
    each other. ``arrows[cell]`` itself is not read."""
    out = 0
    if piece:
        for bit, opp, other, e in CELL_LINKS[cell]:
            if piece & bit and arrows[other] & opp:
                out |= e
    return out


def cell_links(arrows: list[int], cell: int) -> int:
    """The links (edge bits) of ``cell`` given every cell's arrows (0 = empty), O4.1."""
    return links_formed(arrows, cell, arrows[cell])


def placed_links(arrows: list[int], links: int, cell: int) -> int:
    """The board's links after the amulet on ``cell`` was put there or turned (its arrows
    already in ``arrows``): ``cell``'s old links replaced by those it forms now."""
    return (links & ~CELL_EDGE_MASK[cell]) | links_formed(arrows, cell, arrows[cell])


def removed_links(links: int, cell: int) -> int:
    """The board's links after the amulet on ``cell`` left it."""
    return links & ~CELL_EDGE_MASK[cell]


def all_links(arrows: list[int]) -> int:
    """Every link of a board (O4.1), given every cell's arrows."""
    out = 0
    for cell in range(CELLS):
        piece = arrows[cell]
        if piece:
            out |= links_formed(arrows, cell, piece)
    return out


def board_masks(cell_type: list[int], cell_rotation: list[int]) -> tuple[list[int], list[int], int, int]:
    """The derived masks of a board given each cell's amulet type (-1 empty) and rotation:
    (arrows per cell, cells per colour, occupied cells, links)."""
    arrows = [0] * CELLS
    colour_cells = [0] * len(COLOURS)
    occupied = 0
    for c in range(CELLS):
        t = cell_type[c]
        if t >= 0:
            arrows[c] = TYPE_ARROWS[t][cell_rotation[c]]
            occupied |= 1 << c
            colour_cells[TYPE_COLOUR[t]] |= 1 << c
    return arrows, colour_cells, occupied, all_links(arrows)


# ---------------------------------------------------------------------------------------
# Connected sets (O4.2)
# ---------------------------------------------------------------------------------------

MIN_SET: Final = min(r.size for r in RITUALS)
MAX_SET: Final = max(r.size for r in RITUALS)
_HIGHER: Final[tuple[int, ...]] = tuple(FULL & ~((2 << v) - 1) for v in range(CELLS))
_SETS_MEMO: Final[dict[int, tuple[int, ...]]] = {}
_MEMO_LIMIT: Final = 50_000


def _enumerate_sets(links: int) -> tuple[int, ...]:
    # Neighbour masks of the link graph.
    nbr = [0] * CELLS
    m = links
    while m:
        low = m & -m
        a, b = EDGE_CELLS[low_bit(low)]
        nbr[a] |= 1 << b
        nbr[b] |= 1 << a
        m ^= low
    # ESU (Wernicke 2006): every connected induced subgraph of size <= MAX_SET exactly
    # once, grown from its lowest vertex v through "exclusive" neighbours only.
    out: list[int] = []
    lo, hi = MIN_SET, MAX_SET
    for v in range(CELLS):
        nv = nbr[v]
        if not nv:
            continue
        higher = _HIGHER[v]
        stack = [(1 << v, 1, nv & higher, nv | (1 << v))]
        while stack:
            sub, size, ext, closed = stack.pop()
            if size >= lo:
                out.append(sub)
            if size == hi:
                continue
            while ext:
                wb = ext & -ext
                ext ^= wb
                nw = nbr[low_bit(wb)]
                stack.append((sub | wb, size + 1, ext | (nw & ~closed & higher), closed | nw))
    out.sort()
    return tuple(out)


def connected_sets(links: int) -> tuple[int, ...]:
    """Every cell set of size MIN_SET..MAX_SET connected through its own links (O4.2),
    ascending. Memoised per link mask (the colours are matched separately)."""
    sets = _SETS_MEMO.get(links)
    if sets is None:
        if len(_SETS_MEMO) >= _MEMO_LIMIT:
            _SETS_MEMO.clear()
        sets = _SETS_MEMO[links] = _enumerate_sets(links)
    return sets


def colour_signature(counts: tuple[int, ...] | list[int]) -> int:
    """A colour multiset (counts per colour) as one int: 3 bits per colour."""
    sig = 0
    for i, n in enumerate(counts):
        sig |= n << (3 * i)
    return sig


#: Requirement signature of each ritual (O5.1: exactly the required colours).
RITUAL_SIG: Final[tuple[int, ...]] = tuple(colour_signature(r.requirement) for r in RITUALS)


def set_signature(mask: int, colour_cells: list[int]) -> int:
    """The colour signature (:func:`colour_signature`) of the amulets on the cells of
    ``mask``, given the cells of each colour (the four colours unrolled: the search counts
    the signatures of many candidate sets)."""
    return (
        popcount(mask & colour_cells[0])
        | popcount(mask & colour_cells[1]) << 3
        | popcount(mask & colour_cells[2]) << 6
        | popcount(mask & colour_cells[3]) << 9
    )


assert len(COLOURS) == 4  # set_signature unrolls the colours


def sets_by_signature(links: int, colour_cells: list[int]) -> dict[int, list[int]]:
    """Every connected set of the board (O4.2), grouped by colour signature: a ritual can
    be cast on the sets listed under its :data:`RITUAL_SIG` (O5.1)."""
    out: dict[int, list[int]] = {}
    for m in connected_sets(links):
        sig = set_signature(m, colour_cells)
        lst = out.get(sig)
        if lst is None:
            out[sig] = [m]
        else:
            lst.append(m)
    return out


def cells_of(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low_bit(low))
        mask ^= low
    return out


#: cell_tuple's memo, indexed by the mask (a list: indexing it costs less than hashing
#: into a dict, and the legal actions' hot paths ask for it several times a step;
#: ``bench/mcts_speed.py``). Filled on demand: an empty tuple also stands for "not yet".
_CELLS_MEMO: Final[list[tuple[int, ...]]] = [()] * (1 << CELLS)


def cell_tuple(mask: int) -> tuple[int, ...]:
    """The cells of a mask (of the board's 16 cells), ascending; memoised."""
    t = _CELLS_MEMO[mask]
    if not t and mask:
        t = _CELLS_MEMO[mask] = tuple(cells_of(mask))
    return t
