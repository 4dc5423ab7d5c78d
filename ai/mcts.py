"""Information-set Monte Carlo tree search (single observer, Cowling, Powley & Whitehouse 2012).

The bot deciding for seat ``p`` never reads the hidden parts of the state it is given: every
iteration searches a fresh determinisation ``state.sample_consistent_state(p, rng)``, a full
state that agrees with ``p``'s view and re-deals everything ``p`` cannot see (A10.4 / O6.4).

One iteration
-------------
1. **Determinise**: ``world = root.sample_consistent_state(p, rng)``.
2. **Select**: from the root, while every legal action of the player to act already has
   statistics, take the action maximising UCB1 with *availability counts*::

       mean(a) + c * sqrt(ln(avail(a)) / visits(a))

   where ``avail(a)`` counts the selections at this node in which ``a`` was legal (it grows
   only in worlds where ``a`` is legal), not the node's total visits.
3. **Expand** one untried legal action (chosen with the seeded RNG) and apply it.
4. **Evaluate** the new leaf by a rollout: the rollout policy plays on to the end of the
   game, or for ``cutoff`` actions after which the game's heuristic estimates the returns
   in [-1, 1]. Policy, heuristic and their defaults are the game's knowledge
   (:class:`ai.knowledge.GameKnowledge`), given to the search like OpenSpiel gives
   ``MCTSBot`` its evaluator: by default :func:`ai.games.knowledge_for` the state's game.
5. **Backpropagate** the whole returns vector: each decision's statistics accumulate the
   return of the seat that acted there (max^n for 3–4 players). In team games the engine
   gives both partners the team's return (O9.3), and heuristic estimates are averaged per
   team, so partners share a value. Returns are discounted by ``discount ** plies`` (plies
   from the root to the end of the rollout, default 0.995): of two won lines the search
   prefers the shorter (a game-ending ritual now rather than later), of two lost ones the
   longer.

The tree
--------
Tree nodes follow the sequence of actions taken since the root (chance is merged, as in
single-observer ISMCTS). A node's decision statistics (per action: visits, value sum,
availability) are kept per acting seat, and are looked up by that seat's *observation* of
the path, not by the path itself:

* **Secret simultaneous moves** (``state.public_action(a) == SECRET_ACTION``, Aton's
  exchange A3.2 and arrangement A3.3): for every other seat ``q``, the observation records
  the action as ``SECRET_ACTION``. Nodes reached by different secret actions therefore share
  ``q``'s statistics: when seat 1 commits after seat 0, its choice is the same whatever seat
  0 committed — the search never lets the second player see the first one's commitment.
* The mask on ``q``'s observation lasts until the seat that moved secretly next takes a
  *public* action. This is a game-independent approximation of "the commitment is revealed
  when its owner acts" (Aton A3.4: cartouches 3 and 4 are revealed when their owner begins
  its actions); until then ``q``'s statistics are merged over the possible commitments,
  afterwards they follow the real path again.

Budget, determinism, final choice
---------------------------------
* The search runs until the iteration budget, the millisecond budget, the caller's
  ``deadline`` (a ``time.monotonic()`` instant) or ``should_stop()`` (polled every 16
  iterations) ends it, whichever comes first; it always completes at least one iteration,
  so an expired deadline still returns a legal action. It is anytime. Iteration budgets are
  exact, except that a one-worker search with an iteration budget stops early (checked every
  16 iterations) once the most-visited root action leads the next by more visits than there
  are iterations left: no remaining iteration could change the final choice, so the action
  is the full budget's (``early_stop=off`` runs the whole budget; measured savings 5–13% of
  the iterations of ``medium`` on random positions).
* All randomness comes from ``random.Random(seed)``; statistics live in insertion-ordered
  dicts keyed by ints, and time is read only when a time limit exists. The same state,
  seat, seed and iteration budget therefore give the same action.
* **Final choice**: the root action with the most visits; ties broken by the higher mean
  value, then uniformly by the seeded RNG. With a temperature ``temp = t > 0`` (the lower
  rated levels, :mod:`ai.ladder`) a root action is instead drawn with probability
  proportional to ``visits ** (1 / t)`` by the same seeded RNG. With a single legal action
  the bot returns it at once (``iterations == 0``), unless ``conceal`` is on: then it searches
  the whole budget, early stop off, so that a hidden decision's iterations and time are alike
  whatever the hand.

Root parallelism, settings
--------------------------
``workers=N`` sums the root statistics of N independent searches, N−1 of them in worker
processes (:mod:`ai.root_parallel`). The settings (:class:`~ai.mcts_params.MctsParams`,
read from a bot spec by :func:`~ai.mcts_params.parse_params`), one search's
:class:`~ai.mcts_params.Limits` and its :class:`~ai.mcts_params.SearchResult` are in
:mod:`ai.mcts_params`.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import random
import time
from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, Final

from ai.bot import ActionStat, Budget, Decision, Diagnostics
from ai.games import knowledge_for
from ai.knowledge import ROLLOUTS, GameKnowledge, team_average
from ai.learned import LEARNED, check_models, learned_evaluation
from ai.mcts_params import Limits, MctsParams, SearchResult, parse_params
from ai.root_parallel import search_in_parallel
from engine._mypyc import mypyc_attr
from engine.core import SECRET_ACTION, State, playout

# ---------------------------------------------------------------------------------------
# Tree
# ---------------------------------------------------------------------------------------


@mypyc_attr(native_class=False)  # compiled, a subclass of a Python class must stay one
class SearchRandom(random.Random):
    """The search's RNG: :class:`random.Random` (Mersenne Twister, seeded) with a faster
    ``shuffle`` (Fisher–Yates driven by ``random()``; determinisations shuffle a lot).
    Same API, so engines' ``sample_consistent_state(player, rng)`` use it unchanged."""

    def shuffle(self, x: MutableSequence[Any]) -> None:
        rand = self.random
        for i in range(len(x) - 1, 0, -1):
            j = int(rand() * (i + 1))
            x[i], x[j] = x[j], x[i]


# sqrt(ln k) and 1/sqrt(k) by k, grown on demand (UCB without per-edge log/sqrt calls).
_SQRT_LOG: Final[list[float]] = [0.0, 0.0]
_INV_SQRT: Final[list[float]] = [0.0, 1.0]


def _grow_tables(size: int) -> None:
    n = len(_SQRT_LOG)
    if size <= n:
        return
    size = max(size, 2 * n)
    _SQRT_LOG.extend(math.sqrt(math.log(k)) for k in range(n, size))
    _INV_SQRT.extend(1.0 / math.sqrt(k) for k in range(n, size))


_grow_tables(4096)


class _Edge:
    """Statistics of one action at one decision (for the seat acting there)."""

    __slots__ = ("amaf_n", "amaf_total", "avail", "total", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.avail = 1
        #: RAVE only (``MctsParams.rave``): the iterations in which this seat played the
        #: action at or after this decision, and their returns.
        self.amaf_n = 0
        self.amaf_total = 0.0


class _Node:
    """A node of the action tree. ``stats[q]``: seat q's decision statistics here (shared
    with the other nodes q cannot tell apart); ``keys[q]``/``masked[q]``: q's observation
    key and the bitmask of seats whose secret action q has not seen revealed yet."""

    __slots__ = ("children", "keys", "masked", "stats")

    def __init__(self, keys: list[int], masked: list[int], n: int) -> None:
        self.children: dict[int, _Node] = {}
        self.stats: list[dict[int, _Edge] | None] = [None] * n
        self.keys = keys
        self.masked = masked


#: Root actions considered from the first iteration when widening (see ``MctsParams.widen``).
WIDEN_BASE: Final = 3


class Search:
    """One single-observer ISMCTS search for ``player`` from ``state``, with the game's
    ``knowledge`` (evaluator, rollout policy, defaults, root ordering; by default
    :func:`ai.games.knowledge_for` the state's game)."""

    def __init__(
        self,
        state: State,
        player: int,
        params: MctsParams,
        seed: int,
        knowledge: GameKnowledge[State] | None = None,
    ) -> None:
        if knowledge is None:
            knowledge = knowledge_for(state.game)
        elif knowledge.game not in (None, state.game.name):
            raise ValueError(f"{knowledge.game} knowledge cannot search a {state.game.name} state")
        self.root_state = state
        self.player = player
        self.n = state.num_players
        self.params = params
        self.rng = SearchRandom(seed)
        self.cutoff = params.cutoff if params.cutoff is not None else knowledge.default_cutoff(self.n)
        self.evaluate = knowledge.evaluate
        if params.evaluation == LEARNED:
            self.evaluate = learned_evaluation(state.game.name, self.n).evaluate
        rollout = params.rollout if params.rollout is not None else knowledge.default_rollout
        if rollout not in ROLLOUTS:
            raise ValueError(f"unknown rollout policy {rollout!r} (known: {', '.join(ROLLOUTS)})")
        self.policy = knowledge.guided_policy() if rollout == "guided" else None
        self.belief = knowledge.belief(state, player, params.belief) if params.belief > 0 else None
        teams = state.teams()
        self.teams: tuple[int, ...] | None = teams if len(set(teams)) < len(teams) else None
        self._next_key = 1
        self._intern: dict[tuple[int, int], int] = {}
        self._shared: dict[int, dict[int, _Edge]] = {}
        self.root = _Node([0] * self.n, [0] * self.n, self.n)
        #: The root player's legal actions at the root (the same in every world it samples)
        #: and their edges in the same order (None: not tried yet), for
        #: :meth:`_select_root_ucb`; filled on the first iteration.
        self._root_legal: list[int] = []
        self._root_edges: list[_Edge | None] = []
        self.iterations = 0
        self.widen = params.widen if params.widen is not None else knowledge.default_widen
        self.prior = params.prior if params.prior is not None else knowledge.default_prior
        self.rave = params.rave
        if self.rave > 0:
            self.prior = 0.0  # a game's default prior yields to an explicit rave
        #: The root actions in the game's root ordering (None: no ordering used), and the
        #: prior of each (by action) when ``prior > 0``.
        self.root_order: list[int] | None = None
        self.root_prior: dict[int, float] = {}
        if self.widen > 0 or self.prior > 0:
            legal = state.legal_actions()
            ranked: list[int] | None = None
            if len(legal) > WIDEN_BASE:
                if params.order == LEARNED:
                    ranked = learned_root_order(state, player, legal, seed)
                else:
                    ranked = knowledge.root_order(state, legal)
            if ranked is not None:
                if sorted(ranked) != sorted(legal):
                    raise ValueError(
                        f"the {state.game.name} root ordering is not a permutation of the legal actions"
                    )
                self.root_order = ranked
                if self.prior > 0:
                    weights = [1.0 / (r + 1) for r in range(len(ranked))]
                    total = sum(weights)
                    self.root_prior = {
                        a: self.prior * w / total for a, w in zip(ranked, weights, strict=True)
                    }

    # --- observation keys ------------------------------------------------------------

    def _child(self, node: _Node, key: int, action: int, mover: int, secret: bool) -> _Node:
        uid = self._next_key
        self._next_key += 1
        keys = [uid] * self.n
        masked = [0] * self.n
        bit = 1 << mover
        for q in range(self.n):
            m = node.masked[q]
            if q != mover and secret:
                m |= bit
                observed = SECRET_ACTION
            else:
                observed = action
                if m and not secret:
                    m &= ~bit  # the mover acted publicly: its earlier secret is revealed
            if m:
                ik = (node.keys[q], observed)
                k = self._intern.get(ik)
                if k is None:
                    k = self._next_key
                    self._next_key += 1
                    self._intern[ik] = k
                keys[q] = k
                masked[q] = m
        child = _Node(keys, masked, self.n)
        node.children[key] = child
        return child

    def _stats(self, node: _Node, q: int) -> dict[int, _Edge]:
        if node.masked[q]:
            s = self._shared.get(node.keys[q])
            if s is None:
                s = self._shared[node.keys[q]] = {}
        else:
            s = {}
        node.stats[q] = s
        return s

    # --- one iteration ---------------------------------------------------------------

    def _admitted(self, ordered: list[int]) -> list[int]:
        """The root actions searched now: the whole root ordering, or with progressive
        widening (root only) a prefix growing with the iterations, whose untried actions are
        expanded in order. The root player's legal actions are the same in every world it
        samples."""
        if self.widen > 0:
            return ordered[: WIDEN_BASE + int(self.widen * math.sqrt(self.iterations))]
        return ordered

    def _world(self) -> State:
        """An iteration's start: the square-root tables grown for this iteration's counts, and
        a world sampled from what the root player may see."""
        if self.iterations + 2 >= len(_SQRT_LOG):
            _grow_tables(self.iterations + 3)
        world = self.root_state.sample_consistent_state(self.player, self.rng)
        if self.belief is not None:
            self.belief.resample(world, self.rng)
        return world

    def iterate(self) -> None:
        state = self._world()
        rand = self.rng.random
        node = self.root
        c = self.params.c
        sqrt_log = _SQRT_LOG
        inv_sqrt = _INV_SQRT
        path: list[tuple[_Edge, int]] = []
        expanded = False
        while True:
            q = state.current_player()
            if q < 0:
                self._backprop(path, state.returns(), len(path))
                return
            ordered = self.root_order if node is self.root else None
            e: _Edge | None
            if ordered is None and node is self.root and q == self.player:
                a, e, expanded = self._select_root_ucb(node, state)
            elif ordered is not None and self.root_prior:
                a, e, expanded = self._select_root_puct(node, self._admitted(ordered))
            else:
                legal = self._admitted(ordered) if ordered is not None else state.legal_actions()
                edges = node.stats[q]
                if edges is None:
                    edges = self._stats(node, q)
                untried: list[int] | None = None
                best = -1
                best_u = -math.inf
                for a in legal:
                    e = edges.get(a)
                    if e is None:
                        if untried is None:
                            untried = [a]
                        else:
                            untried.append(a)
                        continue
                    e.avail += 1
                    if untried is None:
                        v = e.visits
                        u = e.total / v + c * sqrt_log[e.avail] * inv_sqrt[v]
                        if u > best_u:
                            best_u = u
                            best = a
                if untried is not None:
                    if len(untried) > 1 and ordered is None:
                        a = untried[int(rand() * len(untried))]
                    else:
                        a = untried[0]
                    e = edges[a] = _Edge()
                    expanded = True
                else:
                    a = best
                    e = edges[a]
            path.append((e, q))
            key = (a << 3) | q
            child = node.children.get(key)
            if child is None:
                child = self._child(node, key, a, q, state.public_action(a) == SECRET_ACTION)
            state.apply(a)
            node = child
            if expanded:
                break
        values, steps = self._rollout(state)
        self._backprop(path, values, len(path) + steps)

    def iterate_rave(self) -> None:
        """One iteration with RAVE (``MctsParams.rave``): :meth:`iterate`'s steps, where a
        decision's statistics get an edge for every legal action it meets (so that AMAF
        values gather for actions not yet played), selection blends each action's mean with
        its AMAF mean, and the rollout records its actions for the AMAF update."""
        state = self._world()
        rand = self.rng.random
        node = self.root
        c = self.params.c
        k = self.rave
        sqrt_log = _SQRT_LOG
        inv_sqrt = _INV_SQRT
        path: list[tuple[_Edge, int, dict[int, _Edge]]] = []
        trail: list[int] = []  # (action << 3) | seat of every action of the iteration
        expanded = False
        while True:
            q = state.current_player()
            if q < 0:
                self._backprop_rave(path, trail, state.returns(), len(path))
                return
            ordered = self.root_order if node is self.root else None
            legal = self._admitted(ordered) if ordered is not None else state.legal_actions()
            edges = node.stats[q]
            if edges is None:
                edges = self._stats(node, q)
            untried: list[int] | None = None
            best = -1
            best_u = -math.inf
            for a in legal:
                e = edges.get(a)
                if e is None:
                    e = edges[a] = _Edge()
                else:
                    e.avail += 1
                v = e.visits
                n_amaf = e.amaf_n
                if v == 0 and n_amaf == 0:
                    if untried is None:
                        untried = [a]
                    else:
                        untried.append(a)
                    continue
                if untried is None:
                    if v == 0:
                        u = e.amaf_total / n_amaf + c * sqrt_log[e.avail]
                    else:
                        mean = e.total / v
                        if n_amaf:
                            b = math.sqrt(k / (3 * v + k))
                            mean = (1.0 - b) * mean + b * (e.amaf_total / n_amaf)
                        u = mean + c * sqrt_log[e.avail] * inv_sqrt[v]
                    if u > best_u:
                        best_u = u
                        best = a
            if untried is not None:
                if len(untried) > 1 and ordered is None:
                    a = untried[int(rand() * len(untried))]
                else:
                    a = untried[0]
            else:
                a = best
            e = edges[a]
            if e.visits == 0:
                expanded = True
            path.append((e, q, edges))
            key = (a << 3) | q
            trail.append(key)
            child = node.children.get(key)
            if child is None:
                child = self._child(node, key, a, q, state.public_action(a) == SECRET_ACTION)
            state.apply(a)
            node = child
            if expanded:
                break
        values, steps = self._rollout_recorded(state, trail)
        self._backprop_rave(path, trail, values, len(path) + steps)

    def _rollout_recorded(self, state: State, trail: list[int]) -> tuple[Sequence[float], int]:
        """:meth:`_rollout` (the same actions from the same RNG draws), appending each
        action to ``trail`` as ``(action << 3) | seat``."""
        rng = self.rng
        rand = rng.random
        policy = self.policy
        limit = self.cutoff
        steps = 0
        while steps != limit:
            q = state.current_player()
            if q < 0:
                return state.returns(), steps
            if policy is None:
                a = state.legal_action_at(int(rand() * state.num_legal_actions()))
            else:
                a = policy(state, rng)
            trail.append((a << 3) | q)
            state.apply(a)
            steps += 1
        if state.current_player() < 0:
            return state.returns(), steps
        values = self.evaluate(state)
        if self.teams is not None:
            values = team_average(values, self.teams)
        return values, steps

    def _backprop_rave(
        self,
        path: list[tuple[_Edge, int, dict[int, _Edge]]],
        trail: list[int],
        values: Sequence[float],
        plies: int,
    ) -> None:
        """:meth:`_backprop`, and the AMAF update: at the ``i``-th decision of the path
        (seat ``q``), every action ``q`` played from there on (``trail[i:]``; each action
        once) adds the iteration's return to that action's AMAF statistics there."""
        f = self.params.discount**plies
        end = len(trail)
        for i, (e, q, edges) in enumerate(path):
            value = f * values[q]
            e.visits += 1
            e.total += value
            seen: set[int] = set()
            for j in range(i, end):
                key = trail[j]
                if key & 7 != q or key in seen:
                    continue
                seen.add(key)
                other = edges.get(key >> 3)
                if other is not None:
                    other.amaf_n += 1
                    other.amaf_total += value

    def _select_root_ucb(self, node: _Node, state: State) -> tuple[int, _Edge, bool]:
        """UCB1 selection at the root, for the root player: the tree's rule (an untried action
        drawn uniformly while there is one, else the maximum of the UCB1 value, the first in
        legal order on ties), on the root's legal actions listed once and their edges held in
        the same order, not looked up by action each iteration (the root is where every
        iteration goes, with the most actions; ``bench/mcts_speed.py``). Returns (action, its
        edge, whether it was expanded)."""
        legal = self._root_legal
        aligned = self._root_edges
        edges = node.stats[self.player]
        if edges is None:
            edges = self._stats(node, self.player)
        if not legal:
            legal = self._root_legal = state.legal_actions()
            aligned = self._root_edges = [edges.get(a) for a in legal]
        c = self.params.c
        sqrt_log = _SQRT_LOG
        inv_sqrt = _INV_SQRT
        untried: list[int] | None = None
        best = -1
        best_u = -math.inf
        for i in range(len(legal)):
            e = aligned[i]
            if e is None:
                if untried is None:
                    untried = [i]
                else:
                    untried.append(i)
                continue
            e.avail += 1
            if untried is None:
                v = e.visits
                u = e.total / v + c * sqrt_log[e.avail] * inv_sqrt[v]
                if u > best_u:
                    best_u = u
                    best = i
        if untried is not None:
            i = untried[int(self.rng.random() * len(untried))] if len(untried) > 1 else untried[0]
            e = aligned[i] = edges[legal[i]] = _Edge()
            return legal[i], e, True
        e = aligned[best]
        assert e is not None
        return legal[best], e, False

    def _select_root_puct(self, node: _Node, legal: list[int]) -> tuple[int, _Edge, bool]:
        """Root selection with the prior (``MctsParams.prior``): the first untried admitted
        action, else the maximum of ``mean + P(a) * sqrt(N) / (1 + visits)`` (``P`` already
        scaled by the prior weight). Returns (action, its edge, whether it was expanded)."""
        edges = node.stats[self.player]
        if edges is None:
            edges = self._stats(node, self.player)
        for a in legal:
            if a not in edges:
                e = edges[a] = _Edge()
                for other in legal:
                    if other != a and other in edges:
                        edges[other].avail += 1
                return a, e, True
        scale = math.sqrt(self.iterations + 1)
        prior = self.root_prior
        best = legal[0]
        best_u = -math.inf
        for a in legal:
            e = edges[a]
            e.avail += 1
            u = e.total / e.visits + prior[a] * scale / (1 + e.visits)
            if u > best_u:
                best_u = u
                best = a
        return best, edges[best], False

    def _rollout(self, state: State) -> tuple[Sequence[float], int]:
        """Play on from ``state`` (:func:`engine.core.playout`: the policy, or uniformly
        random actions, for ``cutoff`` actions or to the end); return the returns (or the
        evaluator's estimate when the game goes on) and the plies played."""
        steps = playout(state, self.rng, self.cutoff, self.policy)
        if state.current_player() < 0:
            return state.returns(), steps
        values = self.evaluate(state)
        if self.teams is not None:
            values = team_average(values, self.teams)
        return values, steps

    def _backprop(self, path: list[tuple[_Edge, int]], values: Sequence[float], plies: int) -> None:
        f = self.params.discount
        if f != 1.0:
            f **= plies
            for e, q in path:
                e.visits += 1
                e.total += f * values[q]
        else:
            for e, q in path:
                e.visits += 1
                e.total += values[q]

    # --- driver ----------------------------------------------------------------------

    def run(self, limits: Limits, should_stop: Callable[[], bool] | None = None) -> SearchResult:
        """Iterate until the budget ends (at least one iteration). The cycle collector is off
        meanwhile: an iteration makes no reference cycles (what it allocates is freed by
        reference counting), so its passes over the growing tree were pure cost
        (``bench/search_ab.py``); it is on again, if it was, when the search ends."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._run(limits, should_stop)
        finally:
            if collecting:
                gc.enable()

    def _run(self, limits: Limits, should_stop: Callable[[], bool] | None) -> SearchResult:
        iterations = limits.iterations
        stop_at = limits.stop_at
        start = time.monotonic()
        interrupted = False
        early = limits.early_stop
        done = 0
        step = self.iterate_rave if self.rave > 0 else self.iterate
        while True:
            step()
            done += 1
            self.iterations = done
            if iterations is not None and done >= iterations:
                break
            if stop_at is not None and time.monotonic() >= stop_at:
                interrupted = limits.deadline_given
                break
            if done % 16 == 0:
                if should_stop is not None and should_stop():
                    interrupted = True
                    break
                if early and iterations is not None and self._decided(iterations - done):
                    break
        elapsed = time.monotonic() - start
        self.iterations = done
        root = self.root.stats[self.player] or {}
        # (RAVE creates edges for actions never played: they are not reported.)
        stats = tuple((a, e.visits, e.total) for a, e in root.items() if e.visits)
        fallbacks = self.belief.fallbacks if self.belief is not None else 0
        return SearchResult(stats, done, elapsed, self.principal_variation(), interrupted, fallbacks)

    def _decided(self, left: int) -> bool:
        """True when the root action with the most visits leads the next by more than
        ``left`` visits: no outcome of the remaining iterations changes the final choice
        (most visits first, :func:`choose_final`)."""
        first = second = 0
        for e in (self.root.stats[self.player] or {}).values():
            v = e.visits
            if v > first:
                first, second = v, first
            elif v > second:
                second = v
        return first - second > left

    def principal_variation(self, limit: int = 40) -> tuple[int, ...]:
        """The most-visited line from the root (for each node, the acting seat with the
        most visits there; ties by the lower action id)."""
        line: list[int] = []
        node = self.root
        while len(line) < limit:
            best: tuple[int, int, int] | None = None  # (visits, -action, seat)
            for q, edges in enumerate(node.stats):
                if not edges:
                    continue
                for a, e in edges.items():
                    cand = (e.visits, -a, q)
                    if best is None or cand > best:
                        best = cand
            if best is None or best[0] == 0:
                break
            a, q = -best[1], best[2]
            line.append(a)
            nxt = node.children.get((a << 3) | q)
            if nxt is None:
                break
            node = nxt
        return tuple(line)


def learned_root_order(state: State, player: int, legal: list[int], seed: int) -> list[int]:
    """``legal`` ordered by ``player``'s modelled chance to win (:mod:`ai.learned`: its own
    view's features) after each action, highest first (ties in ``legal``'s order), in one
    determinisation of ``player``'s view drawn from ``seed``: it reads nothing the player
    cannot see."""
    model = learned_evaluation(state.game.name, state.num_players)
    world = state.sample_consistent_state(player, random.Random(seed ^ 0x2545F4914F6CDD1D))
    chance: list[float] = []
    for a in legal:
        child = world.clone()
        child.apply(a)
        chance.append(model.chances(child)[player])
    ranks = sorted(range(len(legal)), key=lambda i: -chance[i])
    return [legal[i] for i in ranks]


# ---------------------------------------------------------------------------------------
# One search, and root parallelism (ai/root_parallel.py)
# ---------------------------------------------------------------------------------------


def _run_one(
    state: State,
    player: int,
    *,
    params: MctsParams,
    seed: int,
    limits: Limits,
    should_stop: Callable[[], bool] | None,
    knowledge: GameKnowledge[State] | None = None,
) -> SearchResult:
    """One search (root-parallel workers receive this function by name, :mod:`ai.root_parallel`)."""
    return Search(state, player, params, seed, knowledge).run(limits, should_stop)


def search_one_action(
    state: State,
    player: int,
    action: int,
    *,
    params: MctsParams,
    seed: int,
    limits: Limits,
    should_stop: Callable[[], bool] | None = None,
    knowledge: GameKnowledge[State] | None = None,
) -> SearchResult:
    """One search whose root may take only ``action`` (a legal action of ``player``, the
    seat to act): below it the search runs as usual, so the root's mean value is what the
    search expects after that action, measured with the same rules, evaluation and budget
    as any root action (the game review values the action a player chose this way,
    :mod:`ai.review`)."""
    if not state.is_legal(action):
        raise ValueError(f"{state.game.action_to_string(action)} is not legal for seat {player}")
    search = Search(state, player, params, seed, knowledge)
    search.root_order = [action]
    search.widen = 0.0
    if search.root_prior:
        search.root_prior = {action: search.root_prior.get(action, 0.0)}
    return search.run(dataclasses.replace(limits, early_stop=False), should_stop)


def _parallel(
    state: State,
    player: int,
    *,
    params: MctsParams,
    seed: int,
    workers: int,
    limits: Limits,
    should_stop: Callable[[], bool] | None,
    knowledge: GameKnowledge[State] | None,
) -> tuple[list[SearchResult], int]:
    """``workers`` searches of this module at once (:mod:`ai.root_parallel`): their results
    (index order) and how many ran in worker processes successfully."""
    return search_in_parallel(
        _run_one,
        state,
        player,
        params=params,
        seed=seed,
        workers=workers,
        limits=limits,
        should_stop=should_stop,
        knowledge=knowledge,
    )


# ---------------------------------------------------------------------------------------
# The bot
# ---------------------------------------------------------------------------------------


def choose_final(
    root: dict[int, list[float]], legal: list[int], rng: random.Random, temp: float = 0.0
) -> tuple[int, float]:
    """Most visits; ties by the higher mean value, then uniformly by ``rng``.
    ``root[a] = [visits, value sum]``. Returns (action, its mean value).

    With ``temp > 0``: a legal action drawn with probability proportional to
    ``visits ** (1 / temp)`` (one ``rng.random()``; actions never visited are never drawn)."""
    if temp > 0:
        sampled = _sample_by_visits(root, legal, rng, temp)
        if sampled >= 0:
            v, t = root.get(sampled, (0, 0.0))
            return sampled, t / v
    best: list[int] = []
    best_key: tuple[float, float] | None = None
    for a in legal:
        v, t = root.get(a, (0, 0.0))
        key = (v, t / v if v else -math.inf)
        if best_key is None or key > best_key:
            best_key = key
            best = [a]
        elif key == best_key:
            best.append(a)
    action = best[0] if len(best) == 1 else best[int(rng.random() * len(best))]
    v, t = root.get(action, (0, 0.0))
    return action, (t / v if v else 0.0)


def _sample_by_visits(root: dict[int, list[float]], legal: list[int], rng: random.Random, temp: float) -> int:
    """A legal action drawn with probability ``∝ visits ** (1 / temp)`` (visits scaled by the
    most visits first, so no power overflows); -1 when no legal action has a visit."""
    most = 0.0
    for a in legal:
        m = root.get(a)
        if m is not None and m[0] > most:
            most = m[0]
    if most <= 0:
        return -1
    power = 1.0 / temp
    actions: list[int] = []
    weights: list[float] = []
    for a in legal:
        m = root.get(a)
        if m is not None and m[0] > 0:
            actions.append(a)
            weights.append((m[0] / most) ** power)
    x = rng.random() * sum(weights)
    for a, w in zip(actions, weights, strict=True):
        x -= w
        if x < 0:
            return a
    return actions[-1]


class MctsBot:
    """The ISMCTS bot (see the module docstring)."""

    def __init__(
        self,
        params: MctsParams | None = None,
        name: str = "mcts",
        knowledge: GameKnowledge[State] | None = None,
    ) -> None:
        """``knowledge``: the game's (:class:`ai.knowledge.GameKnowledge`); by default
        :func:`ai.games.knowledge_for` the game of each state it is asked about."""
        self.params = params or MctsParams()
        self._name = name
        self.knowledge = knowledge

    @property
    def name(self) -> str:
        return self._name

    def choose(
        self,
        state: State,
        *,
        seed: int = 0,
        budget: Budget | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Decision:
        player = state.current_player()
        if player < 0:
            raise ValueError("the game is over: there is no action to choose")
        legal = state.legal_actions()
        if len(legal) == 1 and not self.params.conceal:
            return Decision(legal[0], Diagnostics(workers=self.params.workers))
        if budget is None or (budget.iterations is None and budget.milliseconds is None):
            budget = self.params.budget
        start = time.monotonic()
        stop_at = deadline
        if budget.milliseconds is not None:
            t = start + budget.milliseconds / 1000.0
            stop_at = t if stop_at is None else min(stop_at, t)
        workers = self.params.workers
        limits = Limits(
            budget.iterations,
            stop_at,
            deadline is not None and stop_at == deadline,
            early_stop=(
                self.params.early_stop and not self.params.conceal and workers <= 1 and self.params.temp == 0
            ),
        )
        knowledge = self.knowledge
        if workers <= 1:
            results = [
                _run_one(
                    state, player, params=self.params, seed=seed, limits=limits, should_stop=should_stop,
                    knowledge=knowledge,
                )
            ]  # fmt: skip
        else:
            results, _ = _parallel(
                state,
                player,
                params=self.params,
                seed=seed,
                workers=workers,
                limits=limits,
                should_stop=should_stop,
                knowledge=knowledge,
            )
        elapsed = time.monotonic() - start
        merged: dict[int, list[float]] = {}
        for r in results:
            for a, v, t in r.root:
                m = merged.get(a)
                if m is None:
                    merged[a] = [v, t]
                else:
                    m[0] += v
                    m[1] += t
        iterations = sum(r.iterations for r in results)
        action, value = choose_final(merged, legal, random.Random(seed ^ 0x5F3759DF), self.params.temp)
        stats = sorted(
            (ActionStat(a, int(m[0]), m[1] / m[0] if m[0] else 0.0) for a, m in merged.items()),
            key=lambda s: (-s.visits, -s.mean_value, s.action),
        )
        pv = results[0].principal_variation
        if not pv or pv[0] != action:
            pv = (action,)
        diag = Diagnostics(
            iterations=iterations,
            elapsed_seconds=elapsed,
            iterations_per_second=iterations / elapsed if elapsed > 0 else 0.0,
            actions=tuple(stats),
            chosen_value=value,
            principal_variation=pv,
            interrupted=any(r.interrupted for r in results),
            workers=len(results),
            belief_fallbacks=sum(r.belief_fallbacks for r in results),
        )
        return Decision(action, diag)


def make_mcts(params: str) -> MctsBot:
    """Factory for :func:`ai.api.make_bot`: ``mcts``, ``mcts:hard``,
    ``mcts:iterations=2000,ms=500,c=0.7,rollout=random,cutoff=20,workers=2``..."""
    name, p = parse_params(params)
    if LEARNED in (p.evaluation, p.order):
        check_models()  # a missing or corrupt model file: a clear error now, not mid-game
    return MctsBot(p, name)
