"""Leaf evaluation for the search: rollout policies and per-game heuristic evaluators.

The search evaluates a new leaf by a *rollout*: it plays the (determinised) state forward
with a rollout policy, either to the end of the game (the true returns) or for at most
``cutoff`` actions, after which a *heuristic evaluator* estimates every seat's return in
[-1, 1]. Both are looked up by game name, so adding a game means adding an entry here
(the fallback uses ``state.scores()`` only).

Heuristics read the *determinised* state the search hands them — never the real one — so
they may look at any attribute of it: the search only ever evaluates sampled states. The
attributes each heuristic reads are listed in its docstring.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from engine.aton import board
from engine.core import State
from engine.osirium.actions import CAST as OSIRIUM_CAST
from engine.osirium.actions import PLACE as OSIRIUM_PLACE
from engine.osirium.board import CELL_LINKS, CELLS, OTYPES, RITUAL_SIG, TYPE_ARROWS, TYPE_COLOUR
from engine.osirium.cards import COLOURS, EXALTATIONS, ORDER, RITUALS, RITUALS_TO_END

#: An evaluator: per-seat estimated returns in [-1, 1] of a non-terminal state.
Evaluator = Callable[[State], Sequence[float]]
#: A rollout policy: picks one of ``legal`` (the state's legal actions) using ``rng``.
RolloutPolicy = Callable[[State, list[int], random.Random], int]

#: ``cutoff`` value meaning "roll out to the end of the game".
FULL_ROLLOUT = -1


# ---------------------------------------------------------------------------------------
# Generic pieces
# ---------------------------------------------------------------------------------------


def squash(x: float) -> float:
    """Map an unbounded advantage to (-1, 1) (``tanh``)."""
    return math.tanh(x)


def score_evaluator(scale: float) -> Evaluator:
    """Each seat's return is ``tanh((own score - best other score) / scale)``."""

    def evaluate(state: State) -> tuple[float, ...]:
        s = state.scores()
        out = []
        for i, mine in enumerate(s):
            best_other = max(v for j, v in enumerate(s) if j != i)
            out.append(math.tanh((mine - best_other) / scale))
        return tuple(out)

    return evaluate


def team_average(values: Sequence[float], teams: Sequence[int]) -> tuple[float, ...]:
    """Give both members of a team the mean of their values (O9.3: shared return)."""
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    for v, t in zip(values, teams, strict=True):
        sums[t] = sums.get(t, 0.0) + v
        counts[t] = counts.get(t, 0) + 1
    return tuple(sums[t] / counts[t] for t in teams)


def random_policy(_state: State, legal: list[int], rng: random.Random) -> int:
    """Uniformly random legal action."""
    return legal[int(rng.random() * len(legal))]


# ---------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------

_EVALUATORS: dict[str, Evaluator] = {}
_POLICIES: dict[tuple[str, str], RolloutPolicy] = {}
#: Default cut-off per game (actions after the leaf); games not listed roll out to the end.
_DEFAULT_CUTOFF: dict[str, int] = {}

ROLLOUTS: tuple[str, ...] = ("random", "guided")


#: Default rollout policy per game (``"random"`` unless measured otherwise).
_DEFAULT_ROLLOUT: dict[str, str] = {}

#: A root ordering: the root player's legal actions, most promising first, computed from
#: what that player may see (the search's progressive widening takes a growing prefix).
RootOrder = Callable[[State, list[int]], list[int]]
_ORDERS: dict[str, RootOrder] = {}
#: Default widening factor per game (0 = no widening unless measured otherwise).
_DEFAULT_WIDEN: dict[str, float] = {}


#: Default root-prior weight per game (0 = UCB1 at the root unless measured otherwise).
_DEFAULT_PRIOR: dict[str, float] = {}


def register_root_order(
    game: str, order: RootOrder, default_widen: float = 0.0, default_prior: float = 0.0
) -> None:
    _ORDERS[game] = order
    _DEFAULT_WIDEN[game] = default_widen
    _DEFAULT_PRIOR[game] = default_prior


def root_order_for(game: str) -> RootOrder | None:
    """The game's root ordering, ``None`` when it has none (no widening possible)."""
    _load_game_heuristics()
    return _ORDERS.get(game)


def default_prior(game: str) -> float:
    """The game's default root-prior weight (0.0: off)."""
    _load_game_heuristics()
    return _DEFAULT_PRIOR.get(game, 0.0)


def default_widen(game: str) -> float:
    """The game's default widening factor (0.0: off)."""
    _load_game_heuristics()
    return _DEFAULT_WIDEN.get(game, 0.0)


#: Default cut-off per seat for games whose cut-off grows with the player count.
_CUTOFF_PER_SEAT: dict[str, int] = {}


def register_evaluator(
    game: str,
    evaluator: Evaluator,
    default_cutoff: int | None = None,
    default_rollout: str | None = None,
    cutoff_per_seat: int | None = None,
) -> None:
    """Register ``game``'s heuristic; ``cutoff_per_seat`` (instead of ``default_cutoff``)
    makes the default cut-off ``cutoff_per_seat`` × the number of players, so that a rollout
    covers about the same number of turns of each seat whatever the player count."""
    _EVALUATORS[game] = evaluator
    if default_cutoff is not None:
        _DEFAULT_CUTOFF[game] = default_cutoff
    if cutoff_per_seat is not None:
        _CUTOFF_PER_SEAT[game] = cutoff_per_seat
    if default_rollout is not None:
        _DEFAULT_ROLLOUT[game] = default_rollout


def default_rollout(game: str) -> str:
    """The game's default rollout policy name."""
    return _DEFAULT_ROLLOUT.get(game, "random")


def register_policy(game: str, name: str, policy: RolloutPolicy) -> None:
    _POLICIES[(game, name)] = policy


def evaluator_for(game: str) -> Evaluator:
    """The game's heuristic evaluator (fallback: score difference, scale 10)."""
    _load_game_heuristics()
    return _EVALUATORS.get(game) or score_evaluator(10.0)


def default_cutoff(game: str, players: int = 2) -> int:
    """The game's default cut-off for ``players`` players (``FULL_ROLLOUT`` unless measured
    otherwise)."""
    _load_game_heuristics()
    per_seat = _CUTOFF_PER_SEAT.get(game)
    if per_seat is not None:
        return per_seat * players
    return _DEFAULT_CUTOFF.get(game, FULL_ROLLOUT)


def policy_for(game: str, name: str) -> RolloutPolicy | None:
    """The rollout policy ``name`` for ``game``; ``None`` for the built-in random policy
    (the search inlines it; also the fallback for a game without a policy of that name);
    raises ``KeyError`` for a name not in :data:`ROLLOUTS`."""
    _load_game_heuristics()
    if name not in ROLLOUTS:
        raise KeyError(name)
    return _POLICIES.get((game, name))


def _load_game_heuristics() -> None:
    """Per-game heuristics are defined below and registered at import; root orderings come
    from the greedy bots (:mod:`ai.greedy`), imported here on first use."""
    if not _ORDERS:
        import ai.greedy  # noqa: F401  (registers the root orderings)


# ---------------------------------------------------------------------------------------
# Aton
# ---------------------------------------------------------------------------------------

#: Scale of the Aton advantage (in points) mapped through tanh.
ATON_SCALE = 12.0


_Ints = tuple[int, ...]


def _aton_tables() -> tuple[_Ints, _Ints, _Ints, _Ints, _Ints]:
    kind = [0] * board.NUM_SQUARES  # 1 yellow, 2 green, 3 grey, 4 blue, 5 bonus
    for sq in board.YELLOW:
        kind[sq] = 1
    for sq in board.GREEN:
        kind[sq] = 2
    for sq in board.GREY:
        kind[sq] = 3
    for sq in board.BLUE:
        kind[sq] = 4
    bonus = [0] * board.NUM_SQUARES
    for sq, v in board.BONUS:
        kind[sq] = 5
        bonus[sq] = v
    temple = tuple(sq // board.SLOTS for sq in range(board.NUM_SQUARES))
    return tuple(kind), tuple(bonus), temple, board.YELLOW, board.GREEN


def aton_evaluate(state: State) -> tuple[float, ...]:
    """Aton heuristic (returns for seats 0 and 1, zero-sum, in (-1, 1)).

    Reads ``state.board`` (48 owners, -1 empty), ``state.score`` and ``state.kingdom``
    (engine/aton/state.py). The advantage of seat 0, in points, is

    * the score difference;
    * plus the next scoring round as it stands (A8.2: temple majorities 1–4, grey majority,
      bonus squares), weighted by how full the Kingdom of the Dead is (0.4 + 0.6 × fill);
    * plus a threat term per player for the instant wins (A6.4): with ``d`` the fewest
      counters still missing for a temple, the yellow or the green squares (only where the
      opponent has none), ``0.5 × max(0, 8 − d)²``.

    Seat 0's value is ``tanh(advantage / 12)``, seat 1's its negation.
    """
    kind, bonus, temple, _, _ = _ATON
    b: list[int] = state.board  # type: ignore[attr-defined]
    tc = [0, 0, 0, 0, 0, 0, 0, 0]  # temple t counts: tc[2t + owner]
    kc = [0] * 12  # kind k counts: kc[2k + owner]
    bon = [0, 0]
    blue = [0, 0]
    for sq in range(48):
        o = b[sq]
        if o < 0:
            continue
        tc[2 * temple[sq] + o] += 1
        k = kind[sq]
        kc[2 * k + o] += 1
        if k == 5:
            bon[o] += bonus[sq]
        elif k == 4:
            blue[o] += 1
    # A8.2 scoring lines as they stand.
    proj = bon[0] - bon[1]
    a, c = tc[0], tc[1]
    proj += a - c
    a, c = tc[2], tc[3]
    proj += 5 if a > c else -5 if c > a else 0
    a, c = tc[4], tc[5]
    proj += a if a > c else -c if c > a else 0
    a, c = tc[6], tc[7]
    proj += 3 * blue[0] if a > c else -3 * blue[1] if c > a else 0
    a, c = kc[6], kc[7]
    proj += 8 if a > c else -8 if c > a else 0
    kingdom: list[int] = state.kingdom  # type: ignore[attr-defined]
    fill = (kingdom[0] + kingdom[1]) / 8.0
    score: list[int] = state.score  # type: ignore[attr-defined]
    adv = score[0] - score[1] + (0.4 + 0.6 * fill) * proj
    # A6.4 instant-win threats.
    for p in (0, 1):
        o = 1 - p
        d = 99
        for t in range(4):
            if tc[2 * t + o] == 0:
                d = min(d, 12 - tc[2 * t + p])
        if kc[2 + o] == 0:
            d = min(d, 14 - kc[2 + p])
        if kc[4 + o] == 0:
            d = min(d, 14 - kc[4 + p])
        if d < 8:
            threat = 0.5 * (8 - d) ** 2
            adv += threat if p == 0 else -threat
    v = math.tanh(adv / ATON_SCALE)
    return (v, -v)


_ATON = _aton_tables()
# Defaults measured with bench/mcts_tune.py (docs/bots.md): guided rollouts, cut-off 20.
register_evaluator("aton", aton_evaluate, default_cutoff=20, default_rollout="guided")


def _aton_static_values() -> tuple[float, ...]:
    kind, bonus, temple, _, _ = _ATON
    out = []
    for sq in range(board.NUM_SQUARES):
        v = 1.0 + 0.3 * temple[sq] + 1.5 * bonus[sq]
        if kind[sq] == 4:
            v += 1.5
        elif kind[sq] == 3:
            v += 1.0
        out.append(v)
    return tuple(out)


_ATON_SQUARE_VALUE = _aton_static_values()
#: Static value of the square of each remove/place action id (A1.6 square kinds).
_ATON_ACTION_VALUE: tuple[float, ...] = tuple(
    _ATON_SQUARE_VALUE[(a - board.REMOVE_BASE) % board.NUM_SQUARES]
    if board.REMOVE_BASE <= a < board.RESET_BASE
    else 0.0
    for a in range(board.NUM_ACTIONS)
)


def aton_guided_policy(state: State, legal: list[int], rng: random.Random) -> int:
    """Light guidance for Aton rollouts: for a placement or a removal of the opponent's
    counter, the better (by a static square value: blue, grey, bonus, higher temples) of
    two random legal squares; for a removal of one's own counter the worse; anything else
    uniformly at random. Reads ``state.tgt`` and ``state.current``."""
    n = len(legal)
    a = legal[int(rng.random() * n)]
    if n == 1 or a < board.REMOVE_BASE or a >= board.RESET_BASE:
        return a
    b = legal[int(rng.random() * n)]
    va = _ATON_ACTION_VALUE[a]
    vb = _ATON_ACTION_VALUE[b]
    s: Any = state
    if a < board.PLACE_BASE and s.removal_target == s.current:  # A6.2, cartouche 2 = 1: own counter
        return a if va <= vb else b
    return a if va >= vb else b


register_policy("aton", "guided", aton_guided_policy)


# ---------------------------------------------------------------------------------------
# Osirium
# ---------------------------------------------------------------------------------------

#: Scale of the Osirium advantage (in Ankhs) mapped through tanh.
OSIRIUM_SCALE = 8.0


def _exaltation_progress(state: Any, p: int) -> float:
    """Fraction in [0, 1] of seat ``p``'s exaltation condition achieved (O1.5)."""
    x = EXALTATIONS[state.exaltations[p]]
    done: list[int] = state.completed[p]
    broken: list[int] = state.broken[p]
    amount = float(x.amount)
    kind = x.kind
    if kind == "all_order":
        if any(c % 2 != ORDER for c in done):
            return 0.0
        return min(1.0, len(done) / amount)
    if kind == "chaos":
        return min(1.0, sum(1 for c in done if c % 2 != ORDER) / amount)
    if kind == "broken_colour":
        return min(1.0, sum(1 for t in broken if TYPE_COLOUR[t] == x.colour) / amount)
    if kind == "broken_all_colours":
        return len({TYPE_COLOUR[t] for t in broken}) / len(COLOURS)
    if kind == "advanced":
        return min(1.0, sum(1 for c in done if RITUALS[c // 2].advanced) / amount)
    if kind == "ritual_size":
        return 1.0 if any(RITUALS[c // 2].size >= x.amount for c in done) else 0.0
    if kind == "last_word":
        return 1.0 if state.ended_by == p else 0.5 * len(done) / RITUALS_TO_END
    return 0.0


def osirium_evaluate(state: State) -> tuple[float, ...]:
    """Osirium heuristic (per-seat returns in (-1, 1)).

    Reads ``ankhs``, ``broken``, ``completed``, ``slots``, ``exalt``, ``cur``, ``n``,
    ``ended_by`` and the board's connected sets (``_sig_sets()``) of the determinised state
    (engine/osirium/state.py). Each seat's estimate, in Ankhs, is

    * its score so far (ritual Ankhs + 1 per broken amulet, O8.2);
    * plus its exaltation's Ankhs times its progress (full when met, half the fraction
      achieved otherwise, O1.5);
    * plus, for each ritual on its deity board castable on the board now, its Order Ankhs
      times 0.6 for the seat to move, 0.3 for the others (someone may take the set first).

    A seat's value is ``tanh((estimate - best other estimate) / 8)``; with teams (O9.3) the
    search averages partners' values.
    """
    s: Any = state
    n: int = s.player_count
    sets = s.sets_by_signature() if s.links else {}
    est: list[float] = []
    for p in range(n):
        v = float(s.ankhs[p] + len(s.broken[p]))
        frac = _exaltation_progress(s, p)
        ank = EXALTATIONS[s.exaltations[p]].ankhs
        v += ank if frac >= 1.0 else 0.5 * ank * frac
        if sets:
            w = 0.6 if p == s.current else 0.3
            for rid in s.ritual_slots[p]:
                if rid >= 0 and RITUAL_SIG[rid] in sets:
                    v += w * RITUALS[rid].order_ankhs
        est.append(v)
    out = []
    for p in range(n):
        best_other = max(est[q] for q in range(n) if q != p)
        out.append(math.tanh((est[p] - best_other) / OSIRIUM_SCALE))
    return tuple(out)


# Guided rollouts by default: on the same 200 deals (seed 1) medium won 61.5% against greedy
# with them and 55.5% with random rollouts, and decided in 153 instead of 251 ms per move;
# with link-forming rollout placements (osirium_guided_policy) 67.0% (docs/bots.md,
# "Measured strength").
# Cut-off 5 plies per seat: 10 in 2 players (tuned in self-play), 20 in 4, where 10 plies
# hardly reach the searching seat's next turn: one medium among three greedy won 45.0% of
# 200 games with cut-off 20 against 36.5% with 10, on the same deals (docs/bots.md).
register_evaluator("osirium", osirium_evaluate, cutoff_per_seat=5, default_rollout="guided")


def _osirium_place_table() -> tuple[tuple[int, int], ...]:
    """For each placement id (``PLACE + otype * 16 + cell``): (cell, the piece's arrows)."""
    out: list[tuple[int, int]] = []
    for ot, (t, rot) in enumerate(OTYPES):
        for cell in range(CELLS):
            assert OSIRIUM_PLACE + ot * CELLS + cell == OSIRIUM_PLACE + len(out)
            out.append((cell, TYPE_ARROWS[t][rot]))
    return tuple(out)


_OSIRIUM_PLACES = _osirium_place_table()
#: Placements sampled per rollout placement; the one forming the most links is played.
OSIRIUM_PLACE_SAMPLES = 4


def _osirium_new_links(arrows: list[int], action: int) -> int:
    """Links (O4.1) the placement ``action`` would form with the amulets around it."""
    cell, mine = _OSIRIUM_PLACES[action - OSIRIUM_PLACE]
    count = 0
    for bit, opp, other, _edge in CELL_LINKS[cell]:
        if mine & bit and arrows[other] & opp:
            count += 1
    return count


def osirium_guided_policy(state: State, legal: list[int], rng: random.Random) -> int:
    """Light guidance for Osirium rollouts: when a ritual can be cast (cast ids are the
    highest, O10), cast one (uniformly among the casts) with probability 3/4; when a random
    legal action is a placement, the one forming the most links (O4.1) of
    ``OSIRIUM_PLACE_SAMPLES`` random legal placements (ties: the first drawn); otherwise
    that random action. Reads ``state.cell_arrows``."""
    n = len(legal)
    if legal[-1] >= OSIRIUM_CAST and rng.random() < 0.75:
        lo = n - 1
        while lo > 0 and legal[lo - 1] >= OSIRIUM_CAST:
            lo -= 1
        return legal[lo + int(rng.random() * (n - lo))]
    a = legal[int(rng.random() * n)]
    if not OSIRIUM_PLACE <= a < OSIRIUM_CAST or n == 1:
        return a
    arrows: list[int] = state.cell_arrows  # type: ignore[attr-defined]
    best = _osirium_new_links(arrows, a)
    for _ in range(OSIRIUM_PLACE_SAMPLES - 1):
        b = legal[int(rng.random() * n)]
        if OSIRIUM_PLACE <= b < OSIRIUM_CAST:
            links = _osirium_new_links(arrows, b)
            if links > best:
                a, best = b, links
    return a


register_policy("osirium", "guided", osirium_guided_policy)
