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
4. **Evaluate** the new leaf by a rollout (:mod:`ai.evaluation`): the rollout policy plays
   on to the end of the game, or for ``cutoff`` actions after which the game's heuristic
   estimates the returns in [-1, 1].
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
  value, then uniformly by the seeded RNG. With a single legal action the bot returns it
  at once (``iterations == 0``).

Root parallelism
----------------
``workers=N`` runs N independent searches (each with the full budget) with seeds derived
from the seed, N−1 of them in child processes (``fork`` where available, else ``spawn``;
the state travels as its serialisation) and one in the calling process, and sums their
root statistics. Children are always joined (no zombies); a child that fails or does not
answer is replaced by the same search run in-process, so a result with an iteration budget
does not depend on whether the children worked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import multiprocessing
import multiprocessing.connection
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from ai import evaluation, presets
from ai.api import ActionStat, BotSpecError, Budget, Decision, Diagnostics
from engine.core import SECRET_ACTION, State

# ---------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class MctsParams:
    """Search settings. ``cutoff``: ``None`` = the game's default (:mod:`ai.evaluation`),
    ``FULL_ROLLOUT`` (-1) = roll out to the end, ``k >= 0`` = heuristic after k actions.
    ``rollout``: a policy name of :data:`ai.evaluation.ROLLOUTS`, ``None`` = the game's
    default."""

    iterations: int | None = 1000
    milliseconds: float | None = None
    c: float = 0.7
    rollout: str | None = None
    cutoff: int | None = None
    workers: int = 1
    #: Per-ply discount of returns (plies from the root to the end of the rollout): among
    #: equally won lines the search prefers the shorter, among lost ones the longer.
    discount: float = 0.995
    #: Stop an iteration-budgeted search (one worker) as soon as the most-visited root
    #: action can no longer be overtaken: its lead in visits exceeds the iterations left.
    #: The chosen action is then exactly the one the full budget would choose.
    early_stop: bool = True
    #: Progressive widening at the root: the search considers only the first
    #: ``WIDEN_BASE + widen * sqrt(iterations so far)`` root actions of the game's root
    #: ordering (``ai.evaluation.root_order_for``: most promising first, from the player's
    #: view). ``0`` = every legal action from the start; ``None`` = the game's default.
    widen: float | None = None
    #: Root prior (PUCT, root only): with ``prior = w > 0`` a root action's selection value
    #: is ``mean + w * P(a) * sqrt(N) / (1 + visits)`` instead of UCB1, where ``P`` gives the
    #: action of rank ``r`` in the game's root ordering a weight ``1 / (r + 1)`` (normalised)
    #: and ``N`` counts the root's iterations: the search follows the ordering's favourites
    #: unless their values say otherwise. ``0`` = UCB1 everywhere; ``None`` = the game's default.
    prior: float | None = None

    @property
    def budget(self) -> Budget:
        return Budget(self.iterations, self.milliseconds)


_SPEC_KEYS = {
    "iterations": "iterations",
    "it": "iterations",
    "n": "iterations",
    "ms": "milliseconds",
    "milliseconds": "milliseconds",
    "c": "c",
    "rollout": "rollout",
    "cutoff": "cutoff",
    "workers": "workers",
    "discount": "discount",
    "early_stop": "early_stop",
    "widen": "widen",
    "prior": "prior",
}


_BOOLS = {
    "on": True,
    "true": True,
    "1": True,
    "yes": True,
    "off": False,
    "false": False,
    "0": False,
    "no": False,
}


def parse_params(params: str) -> tuple[str, MctsParams]:
    """Parse ``"medium"``, ``"hard,workers=2"``, ``"iterations=2000,ms=500,c=0.7,
    rollout=random,cutoff=20,workers=2"``... into (canonical name, params).

    A preset name (``easy``, ``medium``, ``hard``) sets the budget first; ``key=value``
    items override it. No preset and no budget means ``medium``. ``cutoff=end`` (or
    ``none``) rolls out to the end of the game.
    """
    fields: dict[str, Any] = {}
    preset_name: str | None = None
    items = [t.strip() for t in params.split(",") if t.strip()]
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        value = value.strip().lower()
        if not eq:
            if key not in presets.PRESETS:
                raise BotSpecError(
                    f"unknown mcts preset {key!r} (known: {', '.join(presets.PRESETS)}; "
                    "or key=value with keys iterations, ms, c, rollout, cutoff, workers)"
                )
            if preset_name is not None:
                raise BotSpecError("give at most one mcts preset")
            preset_name = key
            continue
        name = _SPEC_KEYS.get(key)
        if name is None:
            raise BotSpecError(
                f"unknown mcts parameter {key!r} (known: iterations, ms, c, rollout, cutoff, workers, "
                "discount, early_stop, widen, prior)"
            )
        try:
            if name == "iterations":
                fields[name] = None if value in ("none", "") else int(value)
                if fields[name] is not None and fields[name] < 1:
                    raise ValueError
            elif name == "milliseconds":
                fields[name] = None if value in ("none", "") else float(value)
                if fields[name] is not None and not fields[name] > 0:
                    raise ValueError
            elif name == "c":
                fields[name] = float(value)
                if not fields[name] >= 0:
                    raise ValueError
            elif name in ("widen", "prior"):
                fields[name] = 0.0 if value in ("off", "none", "no") else float(value)
                if not 0 <= fields[name] < math.inf:
                    raise ValueError
            elif name == "discount":
                fields[name] = float(value)
                if not 0 < fields[name] <= 1:
                    raise ValueError
            elif name == "cutoff":
                fields[name] = evaluation.FULL_ROLLOUT if value in ("end", "none", "inf") else int(value)
                if fields[name] < evaluation.FULL_ROLLOUT:
                    raise ValueError
            elif name == "early_stop":
                if value not in _BOOLS:
                    raise ValueError
                fields[name] = _BOOLS[value]
            elif name == "workers":
                fields[name] = int(value)
                if not 1 <= fields[name] <= 64:
                    raise ValueError
            else:
                if value not in evaluation.ROLLOUTS:
                    raise BotSpecError(
                        f"unknown rollout policy {value!r} (known: {', '.join(evaluation.ROLLOUTS)})"
                    )
                fields[name] = value
        except ValueError as exc:
            if isinstance(exc, BotSpecError):
                raise
            raise BotSpecError(f"bad value for mcts parameter {key}: {value!r}") from None
    if preset_name is None and "iterations" not in fields and "milliseconds" not in fields:
        preset_name = presets.DEFAULT
    base = MctsParams()
    if preset_name is not None:
        b = presets.PRESETS[preset_name]
        base = dataclasses.replace(base, iterations=b.iterations, milliseconds=b.milliseconds)
    elif "iterations" not in fields:
        base = dataclasses.replace(base, iterations=None)
    p = dataclasses.replace(base, **fields)
    if p.iterations is None and p.milliseconds is None:
        raise BotSpecError("an mcts bot needs an iteration or millisecond budget")
    name = "mcts:" + ",".join(([preset_name] if preset_name else []) + items_without_preset(items))
    return name.rstrip(":"), p


def items_without_preset(items: Sequence[str]) -> list[str]:
    return [i.replace(" ", "").lower() for i in items if "=" in i]


# ---------------------------------------------------------------------------------------
# Tree
# ---------------------------------------------------------------------------------------


class SearchRandom(random.Random):
    """The search's RNG: :class:`random.Random` (Mersenne Twister, seeded) with a faster
    ``shuffle`` (Fisher–Yates driven by ``random()``; determinisations shuffle a lot).
    Same API, so engines' ``sample_consistent_state(player, rng)`` use it unchanged."""

    def shuffle(self, x: Any) -> None:
        rand = self.random
        for i in range(len(x) - 1, 0, -1):
            j = int(rand() * (i + 1))
            x[i], x[j] = x[j], x[i]


# sqrt(ln k) and 1/sqrt(k) by k, grown on demand (UCB without per-edge log/sqrt calls).
_SQRT_LOG: list[float] = [0.0, 0.0]
_INV_SQRT: list[float] = [0.0, 1.0]


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

    __slots__ = ("avail", "total", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.total = 0.0
        self.avail = 1


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


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """When a search stops: after ``iterations``, at the ``time.monotonic()`` instant
    ``stop_at``; ``deadline_given``: ``stop_at`` is the caller's deadline (stopping there
    counts as an interruption), not the search's own millisecond budget."""

    iterations: int | None = None
    stop_at: float | None = None
    deadline_given: bool = False
    #: Stop once the iterations left cannot change the most-visited root action.
    early_stop: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class SearchResult:
    """What one search returns (also what a worker process sends back)."""

    #: (action, visits, value sum) at the root, for the root seat, in first-tried order.
    root: tuple[tuple[int, int, float], ...]
    iterations: int
    elapsed: float
    principal_variation: tuple[int, ...]
    interrupted: bool


#: Root actions considered from the first iteration when widening (see ``MctsParams.widen``).
WIDEN_BASE = 3


class Search:
    """One single-observer ISMCTS search for ``player`` from ``state``."""

    def __init__(self, state: State, player: int, params: MctsParams, seed: int) -> None:
        self.root_state = state
        self.player = player
        self.n = state.num_players
        self.params = params
        self.rng = SearchRandom(seed)
        game = state.game.name
        cutoff = (
            params.cutoff if params.cutoff is not None else evaluation.default_cutoff(game, state.num_players)
        )
        self.cutoff = cutoff
        self.evaluate = evaluation.evaluator_for(game)
        rollout = params.rollout if params.rollout is not None else evaluation.default_rollout(game)
        self.policy = evaluation.policy_for(game, rollout)
        teams = state.teams()
        self.teams: tuple[int, ...] | None = teams if len(set(teams)) < len(teams) else None
        self._next_key = 1
        self._intern: dict[tuple[int, int], int] = {}
        self._shared: dict[int, dict[int, _Edge]] = {}
        self.root = _Node([0] * self.n, [0] * self.n, self.n)
        self.iterations = 0
        widen = params.widen if params.widen is not None else evaluation.default_widen(game)
        prior = params.prior if params.prior is not None else evaluation.default_prior(game)
        self.widen = widen
        self.prior = prior
        #: The root actions in the game's root ordering (None: no ordering used), and the
        #: prior of each (by action) when ``prior > 0``.
        self.root_order: list[int] | None = None
        self.root_prior: dict[int, float] = {}
        order = evaluation.root_order_for(game) if widen > 0 or prior > 0 else None
        if order is not None:
            legal = state.legal_actions()
            if len(legal) > WIDEN_BASE:
                ranked = order(state, legal)
                if sorted(ranked) != sorted(legal):
                    raise ValueError(f"the {game} root ordering is not a permutation of the legal actions")
                self.root_order = ranked
                if prior > 0:
                    weights = [1.0 / (r + 1) for r in range(len(ranked))]
                    total = sum(weights)
                    self.root_prior = {a: prior * w / total for a, w in zip(ranked, weights, strict=True)}

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

    def iterate(self) -> None:
        rng = self.rng
        rand = rng.random
        state = self.root_state.sample_consistent_state(self.player, rng)
        node = self.root
        c = self.params.c
        if self.iterations + 2 >= len(_SQRT_LOG):
            _grow_tables(self.iterations + 3)
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
            if ordered is not None:
                # Progressive widening (root only): a growing prefix of the ordering, whose
                # untried actions are expanded in order. The root player's legal actions
                # are the same in every world it samples.
                if self.widen > 0:
                    legal = ordered[: WIDEN_BASE + int(self.widen * math.sqrt(self.iterations))]
                else:
                    legal = ordered
            else:
                legal = state.legal_actions()
            e: _Edge | None
            if ordered is not None and self.root_prior:
                a, e, expanded = self._select_root_puct(node, legal)
            else:
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
        """Play on from ``state``; return the (estimated) returns and the plies played."""
        rng = self.rng
        rand = rng.random
        policy = self.policy
        cutoff = self.cutoff
        steps = 0
        while True:
            if state.current_player() < 0:
                return state.returns(), steps
            if steps == cutoff:
                values = self.evaluate(state)
                if self.teams is not None:
                    values = evaluation.team_average(values, self.teams)
                return values, steps
            legal = state.legal_actions()
            if policy is None:
                state.apply(legal[int(rand() * len(legal))])
            else:
                state.apply(policy(state, legal, rng))
            steps += 1

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
        """Iterate until the budget ends (at least one iteration)."""
        iterations = limits.iterations
        stop_at = limits.stop_at
        start = time.monotonic()
        interrupted = False
        early = limits.early_stop
        done = 0
        while True:
            self.iterate()
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
        stats = tuple((a, e.visits, e.total) for a, e in root.items())
        return SearchResult(stats, done, elapsed, self.principal_variation(), interrupted)

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


# ---------------------------------------------------------------------------------------
# Root parallelism
# ---------------------------------------------------------------------------------------

_MASK64 = (1 << 64) - 1


def worker_seed(seed: int, index: int) -> int:
    """Seed of worker ``index`` (worker 0 uses ``seed`` itself: ``workers=1`` is the plain
    search)."""
    if index == 0:
        return seed
    z = (seed * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9) & _MASK64
    z ^= z >> 31
    return z


def _run_one(
    state: State,
    player: int,
    *,
    params: MctsParams,
    seed: int,
    limits: Limits,
    should_stop: Callable[[], bool] | None,
) -> SearchResult:
    return Search(state, player, params, seed).run(limits, should_stop)


def _worker_main(conn: multiprocessing.connection.Connection, job: tuple[Any, ...]) -> None:
    """Child process: ``job = (game, serialised state, player, params, seed, limits,
    stop event)``; sends ``("ok", SearchResult)`` or ``("error", text)``."""
    try:
        game, data, player, params, seed, limits, stop_event = job
        state = game.deserialize_state(data)
        result = _run_one(
            state, player, params=params, seed=seed, limits=limits, should_stop=stop_event.is_set
        )
        conn.send(("ok", result))
    except BaseException as exc:  # report and exit; the parent falls back
        with contextlib.suppress(Exception):
            conn.send(("error", repr(exc)))
    finally:
        conn.close()


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _parallel(
    state: State,
    player: int,
    *,
    params: MctsParams,
    seed: int,
    workers: int,
    limits: Limits,
    should_stop: Callable[[], bool] | None,
) -> tuple[list[SearchResult], int]:
    """Run ``workers`` searches; return their results (index order) and how many ran in
    child processes successfully."""
    ctx = _context()
    data = state.serialize()
    procs: list[tuple[int, Any, multiprocessing.connection.Connection]] = []
    stop_event = None
    try:
        stop_event = ctx.Event()
        for i in range(1, workers):
            reader, writer = ctx.Pipe(duplex=False)
            proc = ctx.Process(
                target=_worker_main,
                args=(writer, (state.game, data, player, params, worker_seed(seed, i), limits, stop_event)),
                daemon=True,
            )
            try:
                proc.start()
            except Exception:  # e.g. inside a daemonic process: fall back in-process
                reader.close()
                writer.close()
                continue
            writer.close()
            procs.append((i, proc, reader))
    except Exception:
        pass
    results: dict[int, SearchResult] = {}
    ok_children = 0
    try:
        t0 = time.monotonic()
        results[0] = _run_one(state, player, params=params, seed=seed, limits=limits, should_stop=should_stop)
        if results[0].interrupted and stop_event is not None:
            stop_event.set()
        own = time.monotonic() - t0
        # Children run the same budget: give them a generous grace period.
        limit = time.monotonic() + max(5.0, 4.0 * own)
        for i, _proc, reader in procs:
            remaining = max(0.0, limit - time.monotonic())
            try:
                if reader.poll(remaining):
                    status, payload = reader.recv()
                    if status == "ok" and isinstance(payload, SearchResult):
                        results[i] = payload
                        ok_children += 1
            except (EOFError, OSError):
                pass
    finally:
        for _, proc, reader in procs:
            reader.close()
            proc.join(timeout=0.5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2.0)
            if proc.is_alive():
                proc.kill()
                proc.join()
    # A child that failed: run its search here (same seed, so the same result).
    for i in range(1, workers):
        if i not in results:
            if limits.stop_at is not None and time.monotonic() >= limits.stop_at:
                continue
            seed_i = worker_seed(seed, i)
            stop = should_stop
            results[i] = _run_one(state, player, params=params, seed=seed_i, limits=limits, should_stop=stop)
    return [results[i] for i in sorted(results)], ok_children


# ---------------------------------------------------------------------------------------
# The bot
# ---------------------------------------------------------------------------------------


def choose_final(root: dict[int, list[float]], legal: list[int], rng: random.Random) -> tuple[int, float]:
    """Most visits; ties by the higher mean value, then uniformly by ``rng``.
    ``root[a] = [visits, value sum]``. Returns (action, its mean value)."""
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


class MctsBot:
    """The ISMCTS bot (see the module docstring)."""

    def __init__(self, params: MctsParams | None = None, name: str = "mcts") -> None:
        self.params = params or MctsParams()
        self._name = name

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
        if len(legal) == 1:
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
            early_stop=self.params.early_stop and workers <= 1,
        )
        if workers <= 1:
            results = [
                _run_one(state, player, params=self.params, seed=seed, limits=limits, should_stop=should_stop)
            ]
        else:
            results, _ = _parallel(
                state,
                player,
                params=self.params,
                seed=seed,
                workers=workers,
                limits=limits,
                should_stop=should_stop,
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
        action, value = choose_final(merged, legal, random.Random(seed ^ 0x5F3759DF))
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
        )
        return Decision(action, diag)


def make_mcts(params: str) -> MctsBot:
    """Factory for :func:`ai.api.make_bot`: ``mcts``, ``mcts:hard``,
    ``mcts:iterations=2000,ms=500,c=0.7,rollout=random,cutoff=20,workers=2``..."""
    name, p = parse_params(params)
    return MctsBot(p, name)
