"""Statistics for the arena: Wilson score intervals and Elo ratings fitted by maximum likelihood.

Elo model (Bradley–Terry on the Elo scale): the probability that ``a`` scores against ``b``
is ``1 / (1 + 10 ** ((R_b - R_a) / 400))``. A result is a :class:`PairResult` — a (possibly
fractional) weight of games between two bots and ``a``'s score in them (win 1, draw ½,
loss 0). The ratings maximise the likelihood of all results at once
(:func:`fit_elo`, Newton's method), so every game informs every rating, not only the games
of one pairing.

* **Draws** count as half a win for each side (the usual Elo convention).
* **Prior.** A bot that won every game has an infinite maximum-likelihood rating; as in
  BayesElo, ``prior_draws`` virtual drawn games are added to every pair that met (default 1,
  i.e. ½ a virtual win each way). This pulls extreme ratings a little towards each other and
  keeps the fit finite; pass ``prior_draws=0`` for the plain maximum-likelihood estimate.
* **Anchor.** Ratings are defined up to a constant: ``anchor=None`` centres them on a mean of
  0; ``anchor="random"`` (any name) puts that bot at exactly 0 (its interval is then 0 and
  the others' intervals are relative to it). ``fixed={"random": 0, "greedy": 835, ...}``
  instead holds several bots at given ratings (a check's anchors at a table's ratings): the
  others are fitted against them, their intervals relative to them.
* **Intervals.** 95% intervals are ``±1.96`` standard errors from the observed Fisher
  information (the inverse of the negative Hessian of the log-likelihood at the optimum,
  restricted to the anchored parameters). They assume independent games; the arena's
  decomposition of multi-player games into pairwise results is weighted so that each game
  counts once per player (see ``ai/arena.py``), but its pairs are not independent, so read
  those intervals as indicative.

Standard library only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054
#: Natural-log units per Elo point: ``10 ** (d / 400) == exp(ELO_K * d)``.
ELO_K = math.log(10.0) / 400.0
#: The longest Newton step of the fit, in natural-log units (about 700 Elo).
MAX_STEP = 4.0


# ---------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Rate:
    """A proportion with its 95% Wilson score interval."""

    successes: float
    trials: float
    rate: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return f"{self.rate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (Wilson 1927).

    ``successes`` may be fractional (a score counting draws as ½). With no trials the
    interval is the whole of [0, 1].
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / trials + z2 / (4.0 * trials * trials))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


def rate(successes: float, trials: float) -> Rate:
    """``successes / trials`` with its 95% Wilson interval (rate 0 when there are no trials)."""
    low, high = wilson_interval(successes, trials)
    return Rate(successes, trials, successes / trials if trials else 0.0, low, high)


# ---------------------------------------------------------------------------------------
# Elo fit
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class PairResult:
    """``games`` (a weight, possibly fractional) between ``a`` and ``b``, in which ``a``
    scored ``score_a`` (wins + ½ draws); ``b`` scored ``games - score_a``."""

    a: str
    b: str
    games: float
    score_a: float


@dataclasses.dataclass(frozen=True, slots=True)
class Rating:
    name: str
    elo: float
    #: Half-width of the 95% interval (``Z95`` standard errors).
    ci95: float
    #: Weight of the games this bot played (after the multi-player decomposition).
    games: float
    #: Its total score in them (wins + ½ draws).
    score: float

    def to_dict(self) -> dict[str, float | str]:
        return dataclasses.asdict(self)


def expected_score(elo_a: float, elo_b: float) -> float:
    """Probability that ``a`` beats ``b`` (Elo logistic curve, draws counted as ½)."""
    return 1.0 / (1.0 + math.pow(10.0, (elo_b - elo_a) / 400.0))


def elo_from_score(p: float) -> float:
    """The Elo difference at which the expected score is ``p`` (inverse of the curve)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"score must be strictly between 0 and 1, got {p}")
    return 400.0 * math.log10(p / (1.0 - p))


def _softplus(x: float) -> float:
    """``log(1 + exp(x))`` without overflow."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve ``matrix @ x = rhs`` by Gaussian elimination with partial pivoting."""
    n = len(rhs)
    m = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-300:
            raise ValueError("singular system: some bots are not connected by any game")
        m[col], m[pivot] = m[pivot], m[col]
        inv = 1.0 / m[col][col]
        for r in range(n):
            if r != col and m[r][col] != 0.0:
                f = m[r][col] * inv
                row_r, row_c = m[r], m[col]
                for c in range(col, n + 1):
                    row_r[c] -= f * row_c[c]
    return [m[i][n] / m[i][i] for i in range(n)]


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    n = len(matrix)
    cols = [_solve(matrix, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def _check_connected(
    names: Sequence[str],
    pairs: dict[tuple[int, int], tuple[float, float]],
    roots: Sequence[int] = (0,),
    to: str = "the others",
) -> None:
    """Every bot is connected by games to one of ``roots`` (by default the first bot, so
    to all the others)."""
    if not names:
        return
    adj: dict[int, set[int]] = {i: set() for i in range(len(names))}
    for (i, j), (n, _) in pairs.items():
        if n > 0:
            adj[i].add(j)
            adj[j].add(i)
    seen = set(roots)
    todo = list(seen)
    while todo:
        for k in adj[todo.pop()]:
            if k not in seen:
                seen.add(k)
                todo.append(k)
    if len(seen) != len(names):
        missing = sorted(names[i] for i in range(len(names)) if i not in seen)
        raise ValueError(f"cannot rate bots that are not connected by games to {to}: " + ", ".join(missing))


def fit_elo(
    results: Iterable[PairResult],
    *,
    names: Sequence[str] | None = None,
    anchor: str | None = None,
    fixed: Mapping[str, float] | None = None,
    prior_draws: float = 1.0,
    max_iterations: int = 200,
    tolerance: float = 1e-10,
) -> list[Rating]:
    """Maximum-likelihood Elo ratings of every bot from all ``results`` (see the module
    docstring for the model, prior, anchor and intervals).

    ``names`` fixes the order of the returned ratings (default: order of first appearance);
    a named bot with no games raises :class:`ValueError`, as does a set of bots split into
    groups that never met. ``fixed`` (not with ``anchor``) holds the bots it names at its
    ratings (Elo) and fits the others, each of which must then be connected by games to one
    of them; the held bots' intervals are 0.
    """
    order: list[str] = list(names) if names is not None else []
    index = {n: i for i, n in enumerate(order)}
    # (i, j) with i < j -> [games, score of i]
    agg: dict[tuple[int, int], list[float]] = {}
    for r in results:
        if r.a == r.b:
            continue  # a bot against itself tells nothing about ratings
        if r.games < 0 or not 0 <= r.score_a <= r.games:
            raise ValueError(f"bad result {r}: need 0 <= score_a <= games")
        for who in (r.a, r.b):
            if who not in index:
                if names is not None:
                    raise ValueError(f"result names unknown bot {who!r}")
                index[who] = len(order)
                order.append(who)
        i, j = index[r.a], index[r.b]
        s = r.score_a
        if i > j:
            i, j, s = j, i, r.games - s
        cell = agg.setdefault((i, j), [0.0, 0.0])
        cell[0] += r.games
        cell[1] += s
    k = len(order)
    if anchor is not None and anchor not in index:
        raise ValueError(f"anchor {anchor!r} is not one of the rated bots ({', '.join(order)})")
    if fixed and anchor is not None:
        raise ValueError("give an anchor or fixed ratings, not both")
    held: dict[int, float] = {}
    for who, elo in (fixed or {}).items():
        if who not in index:
            raise ValueError(f"fixed bot {who!r} is not one of the rated bots ({', '.join(order)})")
        if not math.isfinite(elo):
            raise ValueError(f"fixed rating of {who!r} must be finite, got {elo}")
        held[index[who]] = ELO_K * elo
    games = [0.0] * k
    score = [0.0] * k
    for (i, j), (n, s) in agg.items():
        games[i] += n
        games[j] += n
        score[i] += s
        score[j] += n - s
    if k == 0:
        return []
    if k == 1:
        return [Rating(order[0], held.get(0, 0.0) / ELO_K, 0.0, games[0], score[0])]
    # Data plus prior: prior_draws virtual games with score 1/2 on every pair that met.
    pairs: dict[tuple[int, int], tuple[float, float]] = {
        key: (n + prior_draws, s + prior_draws / 2.0) for key, (n, s) in agg.items() if n > 0
    }
    if held:
        _check_connected(order, pairs, sorted(held), "a bot of fixed rating")
    else:
        _check_connected(order, pairs)

    # Parameters: theta = ELO_K * elo; the held ones, else the anchored one (or the last, for
    # the mean anchor, re-centred afterwards) stay fixed during the fit (the latter at 0).
    if not held:
        held = {index[anchor] if anchor is not None else k - 1: 0.0}
    free = [i for i in range(k) if i not in held]
    pos = {i: p for p, i in enumerate(free)}
    start = sum(held.values()) / len(held)
    theta = [held.get(i, start) for i in range(k)]

    def grad_hess() -> tuple[list[float], list[list[float]], float]:
        g = [0.0] * k
        h = [[0.0] * k for _ in range(k)]
        loglik = 0.0
        for (i, j), (n, s) in pairs.items():
            d = theta[i] - theta[j]
            # log p = -softplus(-d), log(1 - p) = -softplus(d), exactly and without overflow
            loglik -= s * _softplus(-d) + (n - s) * _softplus(d)
            p = math.exp(-_softplus(-d))
            p = min(max(p, 1e-300), 1.0 - 1e-16)
            g[i] += s - n * p
            g[j] -= s - n * p
            w = n * p * (1.0 - p)
            h[i][i] += w
            h[j][j] += w
            h[i][j] -= w
            h[j][i] -= w
        return g, h, loglik

    for _ in range(max_iterations if free else 0):
        g, h, loglik = grad_hess()
        gf = [g[i] for i in free]
        hf = [[h[i][j] for j in free] for i in free]  # information matrix (positive)
        step = _solve(hf, gf)
        # Damped Newton: at most MAX_STEP per parameter (a bot far from the ratings held fixed
        # starts where its information is tiny), halved until the likelihood does not decrease.
        longest = max(abs(x) for x in step)
        scale = min(1.0, MAX_STEP / longest) if longest > 0 else 1.0
        old = theta[:]
        while True:
            for i in free:
                theta[i] = old[i] + scale * step[pos[i]]
            _, _, new_ll = grad_hess()
            if new_ll >= loglik - 1e-12:
                break
            if scale < 1e-9:  # no step improves: the optimum, to rounding
                theta[:] = old
                break
            scale /= 2.0
        if scale * longest < tolerance:
            break

    _, h, _ = grad_hess()
    info = [[h[i][j] for j in free] for i in free]
    cov_free = _inverse(info)
    # Full covariance in theta units, 0 for the parameters held fixed.
    cov = [[0.0] * k for _ in range(k)]
    for a in free:
        for b in free:
            cov[a][b] = cov_free[pos[a]][pos[b]]
    if anchor is None and not fixed:
        # Centre: x_c = C x with C = I - 11'/k; covariance C cov C'.
        mean = sum(theta) / k
        theta = [t - mean for t in theta]
        row_mean = [sum(cov[i]) / k for i in range(k)]
        total_mean = sum(row_mean) / k
        cov = [[cov[i][j] - row_mean[i] - row_mean[j] + total_mean for j in range(k)] for i in range(k)]
    out = []
    for i, name in enumerate(order):
        se = math.sqrt(max(cov[i][i], 0.0)) / ELO_K
        out.append(Rating(name, theta[i] / ELO_K, Z95 * se, games[i], score[i]))
    return out
