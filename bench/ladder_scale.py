"""How well a ladder measures its Elo scale, and how many games its check needs, from the
games the ladders and checks recorded (docs/ladder.md, "The check";
bench/results/notes/2026-12-02-ladder-scale.md).

    PYTHONPATH=. .venv/bin/python bench/ladder_scale.py [--resamples 200] [--designs 100] [--seed 1]
        [--json PATH]

Plays no game. For each configuration (a ladder's ``--json``, its check's ``--json`` on another
seed, and the table the check read):

1. **The scale.** Every bot's 95% interval with ``random`` pinned at 0, against its interval
   relative to ``greedy`` and to ``easy`` (the same fit, :func:`ai.ratings.fit_elo`, pinned
   elsewhere), both from the Fisher information and from a seeded bootstrap (games resampled
   with replacement within each pairing); the gaps random→greedy and random→easy, and the
   scale's offset (the mean of the three anchors above ``random``). The one virtual draw per
   pair against games per pair (the run's first 10, 25, 50 games of each pairing are the
   run with that many games: the schedule is prefix-stable). Games a direct pair or a chain
   of pairs needs to measure the offset to ±25 and ±50 Elo (Fisher, at the fitted gap).
2. **The check against the table**: each target's error with ``random`` pinned (what the
   check prints), and shift-corrected: the check's scale moved so that ``greedy``, ``easy``,
   or the three anchors' mean sit at the table's ratings, or the check's bots rated against
   the four anchors held at the table's ratings (``fit_elo(fixed=...)``). For the recorded
   check, its first 25 games per pair (the same check with ``--games-per-pair 25``), and
   subsamples of 25 of its 50 games per pair.
3. **Designs.** The probability that a check passes (every target within ``TOLERANCE``, mean
   absolute error at most ``MAX_MEAN_ERROR``; :mod:`ai.ladder`) when the table and its check
   are both measured with a design, judged with ``random`` pinned (as today) or with the
   anchors held: by subsampling the recorded games without replacement (each subsample of n
   games per pair is a real n-game run), and by simulating games from the table's ratings
   (Bradley–Terry; the check's bots at the table's curve rating) for sizes beyond the
   recorded 50 games per pair. Designs: ``fixed`` (every candidate plays every anchor, n
   games per pair, the anchors play each other n games per pair); ``nearest`` (a pilot of
   8 games per pair rates every candidate, which then plays only its two nearest anchors, so
   as many games per candidate as ``fixed``; a check's bots play the two anchors nearest
   their predicted rating); ``chain`` (as ``nearest``, with two levels of the table added as
   anchors where the anchors leave a gap over 300 Elo, anchors playing each other when
   within 450 Elo).

The arena's decomposition of games into pairwise results (:func:`ai.arena.pairwise_results`)
and its fit are reused as they are; the script checks that its fit of each recorded run
gives the ratings the run recorded.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.arena import pairwise_results, records_from_json
from ai.ladder import (
    MAX_MEAN_ERROR,
    TOLERANCE,
    ZERO,
    RatedBot,
    RatingTable,
    curve_rating,
    display_name,
    read_table,
)
from ai.ratings import ELO_K, Z95, PairResult, Rating, expected_score, fit_elo

ROOT = Path(__file__).resolve().parent.parent
#: (name, ladder --json, check --json): the check's file names the table it checked.
CONFIGS = (
    ("Aton 2p", "bench/results/ladder_aton2.json", "bench/results/check_aton2.json"),
    ("Osirium 2p", "bench/results/ladder_osirium2_measured.json", "bench/results/check_osirium2.json"),
    ("Osirium 3p", "bench/results/ladder_osirium3_50.json", "bench/results/check_osirium3.json"),
)
#: The table a check read, where the check's JSON names a path outside the repository.
TABLES = {"Osirium 3p": "bench/results/ladder_osirium3_measured.json"}
GREEDY, EASY, MEDIUM = "greedy", "mcts:easy,ms=none", "mcts:medium,ms=none"
PILOT = 8
CHAIN_GAP = 300.0
CHAIN_PAIRS = 450.0

Pair = tuple[str, str]


# ---------------------------------------------------------------------------------------
# Recorded runs
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Run:
    path: str
    seed: int
    bots: tuple[str, ...]
    anchors: tuple[str, ...]
    #: Each pairing's (a, b) and its games in schedule order: (weight, score of a).
    games: dict[Pair, tuple[tuple[float, float], ...]]
    recorded: dict[str, float]
    data: dict[str, Any]

    @property
    def per_pair(self) -> int:
        return min(len(g) for g in self.games.values())


def load_run(path: str) -> Run:
    data = json.loads((ROOT / path).read_text(encoding="utf-8"))
    pairs = [(p["a"], p["b"]) for p in data["pairings"]]
    by_pairing: dict[int, list[tuple[int, tuple[float, float]]]] = {i: [] for i in range(len(pairs))}
    for rec in records_from_json(data):
        a, _ = pairs[rec.pairing]
        weight = score = 0.0
        for r in pairwise_results([rec], data["players"], teams=data["teams"]):
            weight += r.games
            score += r.score_a if r.a == a else r.games - r.score_a
        by_pairing[rec.pairing].append((rec.index, (weight, score)))
    games = {pairs[i]: tuple(g for _, g in sorted(v)) for i, v in by_pairing.items()}
    recorded = {b["name"]: b["elo"] for b in data["ratings"]["bots"]}
    return Run(path, data["seed"], tuple(data["bots"]), tuple(data["anchors"]), games, recorded, data)


def totals(pair: Pair, games: Sequence[tuple[float, float]]) -> PairResult:
    return PairResult(pair[0], pair[1], sum(g[0] for g in games), sum(g[1] for g in games))


def fit(results: Sequence[PairResult], bots: Sequence[str], **kw: Any) -> dict[str, Rating]:
    """The arena's fit (``ArenaResult.ratings``: one virtual draw per pair) of ``results``."""
    names = [b for b in bots if any(b in (r.a, r.b) for r in results)]
    if kw.get("fixed"):
        kw["fixed"] = {k: v for k, v in kw["fixed"].items() if k in names}
    kw.setdefault("anchor", ZERO if not kw.get("fixed") else None)
    return {r.name: r for r in fit_elo(results, names=names, **kw)}


def prefix(run: Run, n: int) -> list[PairResult]:
    """The run with ``n`` games per pairing (its first ``n``: the schedule is prefix-stable)."""
    return [totals(p, g[:n]) for p, g in run.games.items()]


def with_ratings(table: RatingTable, ratings: Mapping[str, Rating]) -> RatingTable:
    """``table`` with its bots rated by ``ratings`` (as :func:`ai.ladder.table_from_result`)."""
    bots = sorted(
        (RatedBot(display_name(r.name), r.name, r.elo, r.ci95, r.games) for r in ratings.values()),
        key=lambda b: (b.rating, b.name),
    )
    return dataclasses.replace(table, bots=tuple(bots))


def percentile(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def half95(values: Sequence[float]) -> float:
    """Half the width of the central 95% of ``values``."""
    return (percentile(values, 0.975) - percentile(values, 0.025)) / 2.0


# ---------------------------------------------------------------------------------------
# 1. The scale
# ---------------------------------------------------------------------------------------


def offset(r: Mapping[str, float]) -> float:
    """The scale's offset: the mean rating of the three anchors above ``random``."""
    return (r[GREEDY] + r[EASY] + r[MEDIUM]) / 3.0


def scale(run: Run, resamples: int, rng: random.Random) -> dict[str, Any]:
    full = fit(prefix(run, run.per_pair), run.bots)
    rel = {a: fit(prefix(run, run.per_pair), run.bots, anchor=a) for a in (GREEDY, EASY)}
    boot: dict[str, list[float]] = {b: [] for b in run.bots}
    offsets: list[float] = []
    for _ in range(resamples):
        results = [totals(p, [g[rng.randrange(len(g))] for _ in g]) for p, g in run.games.items()]
        r = {k: v.elo for k, v in fit(results, run.bots).items()}
        for b in run.bots:
            boot[b].append(r[b])
        offsets.append(offset(r))
    bots = []
    for b in run.bots:
        row: dict[str, Any] = {"bot": b, "elo": full[b].elo, "fisher": full[b].ci95, "boot": half95(boot[b])}
        for a in (GREEDY, EASY):
            row[f"fisher_{a}"] = rel[a][b].ci95
            row[f"boot_{a}"] = half95([x - y for x, y in zip(boot[b], boot[a], strict=True)])
        row["boot_offset"] = half95([x - o for x, o in zip(boot[b], offsets, strict=True)])
        bots.append(row)
    gaps = {
        a: {
            "elo": full[a].elo,
            "fisher": full[a].ci95,
            "boot": [percentile(boot[a], 0.025), percentile(boot[a], 0.975)],
        }
        for a in (GREEDY, EASY, MEDIUM)
    }
    gaps["offset"] = {
        "elo": offset({k: v.elo for k, v in full.items()}),
        "boot": [percentile(offsets, 0.025), percentile(offsets, 0.975)],
    }
    return {"bots": bots, "gaps": gaps}


def prior_effect(run: Run, sizes: Sequence[int]) -> list[dict[str, Any]]:
    """The anchors' ratings in the run's first ``n`` games per pair, with the arena's one
    virtual draw per pair and without (the plain maximum likelihood)."""
    out = []
    for n in sizes:
        for prior in (1.0, 0.0):
            r = fit(prefix(run, n), run.bots, prior_draws=prior)
            anchors = {a: r[a].elo for a in (GREEDY, EASY, MEDIUM)}
            out.append({"games_per_pair": n, "prior_draws": prior, **anchors})
    return out


def prior_bias(run: Run, sizes: Sequence[int], reps: int, rng: random.Random) -> list[dict[str, Any]]:
    """The mean offset a ladder of ``n`` games per pair finds with one virtual draw per pair
    and without, when the truth is the recorded run's plain maximum likelihood (games drawn
    from it, Bradley–Terry)."""
    truth = {k: v.elo for k, v in fit(prefix(run, run.per_pair), run.bots, prior_draws=0.0).items()}
    out = []
    for n in sizes:
        found: dict[float, list[float]] = {1.0: [], 0.0: []}
        for _ in range(reps):
            results = [simulate(truth, p, n, rng) for p in run.games]
            for prior, values in found.items():
                r = fit(results, run.bots, prior_draws=prior)
                values.append(offset({k: v.elo for k, v in r.items()}))
        out.append(
            {
                "games_per_pair": n,
                "truth": offset(truth),
                "with_prior": statistics.fmean(found[1.0]),
                "without": statistics.fmean(found[0.0]),
            }
        )
    return out


def dispersion(run: Run) -> dict[str, float]:
    """How much a pairing's score differs between two halves of its games, against the
    binomial (1: as independent games; each pairing whose games were not all won by one side,
    pooled): the first and second half, and even against odd games (the two seatings of a
    shared deal on either side)."""
    out = {}
    for split in ("halves", "even/odd"):
        num = den = 0.0
        for g in run.games.values():
            p = sum(x[1] for x in g) / sum(x[0] for x in g)
            if 0.0 < p < 1.0:
                a, b = (g[: len(g) // 2], g[len(g) // 2 :]) if split == "halves" else (g[0::2], g[1::2])
                num += (sum(x[1] for x in a) - sum(x[1] for x in b)) ** 2
                den += (sum(x[0] for x in a) + sum(x[0] for x in b)) * p * (1.0 - p)
        out[split] = num / den
    return out


def offset_games(gap: float, half_width: float, links: int) -> float:
    """Games that measure a gap of ``gap`` Elo to ±``half_width`` (95%, Fisher) through
    ``links`` equal steps (1: the two bots directly), spread evenly over the steps."""
    p = expected_score(gap / links, 0.0)
    var_target = (half_width / Z95 * ELO_K) ** 2
    return links * links / (p * (1.0 - p)) / var_target


def simulate(truth: Mapping[str, float], pair: Pair, n: int, rng: random.Random) -> PairResult:
    p = expected_score(truth[pair[0]], truth[pair[1]])
    return PairResult(pair[0], pair[1], float(n), float(sum(rng.random() < p for _ in range(n))))


# ---------------------------------------------------------------------------------------
# 2. The check against the table
# ---------------------------------------------------------------------------------------

SHIFTS = ("random", "greedy", "easy", "anchors' mean", "anchors held")


def check_errors(
    table: RatingTable,
    check: Run,
    results: Sequence[PairResult],
    specs: Sequence[str],
    targets: Sequence[int],
) -> dict[str, list[float]]:
    """Each check bot's error (measured minus its target, as the check counts it) with
    ``random`` pinned, and shift-corrected in each of the ways of :data:`SHIFTS`."""
    t = {b.spec: b.rating for b in table.bots}
    predicted = [float(x) for x in targets]
    m = {k: v.elo for k, v in fit(results, check.bots).items()}
    held = fit(
        [r for r in results if not (r.a in check.anchors and r.b in check.anchors)],
        check.bots,
        fixed={a: t[a] for a in check.anchors},
    )
    shift = {
        "random": 0.0,
        "greedy": t[GREEDY] - m[GREEDY],
        "easy": t[EASY] - m[EASY],
        "anchors' mean": offset(t) - offset(m),
    }
    out = {k: [m[s] + d - p for s, p in zip(specs, predicted, strict=True)] for k, d in shift.items()}
    out["anchors held"] = [held[s].elo - p for s, p in zip(specs, predicted, strict=True)]
    return out


def verdict(errors: Sequence[float]) -> tuple[bool, float, float]:
    """(passes, mean absolute error, largest absolute error) of a check's errors."""
    mae = sum(abs(e) for e in errors) / len(errors)
    worst = max(abs(e) for e in errors)
    return worst <= TOLERANCE and mae <= MAX_MEAN_ERROR, mae, worst


def check_report(
    table: RatingTable,
    check: Run,
    specs: Sequence[str],
    targets: Sequence[int],
    *,
    subsamples: int,
    rng: random.Random,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in (check.per_pair, 25):
        results = prefix(check, n)
        m = {k: v.elo for k, v in fit(results, check.bots).items()}
        t = {b.spec: b.rating for b in table.bots}
        out[f"first {n}"] = {
            "errors": check_errors(table, check, results, specs, targets),
            "anchors": {a: m[a] - t[a] for a in (GREEDY, EASY, MEDIUM)},
            "shift": offset(m) - offset(t),
        }
    shifts: list[float] = []
    passes = dict.fromkeys(SHIFTS, 0)
    for _ in range(subsamples):
        results = [totals(p, rng.sample(g, 25)) for p, g in check.games.items()]
        m = {k: v.elo for k, v in fit(results, check.bots).items()}
        shifts.append(offset(m) - offset({b.spec: b.rating for b in table.bots}))
        for k, e in check_errors(table, check, results, specs, targets).items():
            passes[k] += verdict(e)[0]
    out["subsamples of 25"] = {
        "count": subsamples,
        "shift_mean": statistics.fmean(shifts),
        "shift_sd": statistics.pstdev(shifts),
        "shift_at_least_170": sum(abs(s) >= 170 for s in shifts) / subsamples,
        "pass": {k: v / subsamples for k, v in passes.items()},
    }
    return out


# ---------------------------------------------------------------------------------------
# 3. Designs
# ---------------------------------------------------------------------------------------


class Source:
    """Games on demand: ``draw(pair, n)`` gives ``n`` more games of a pairing."""

    def draw(self, pair: Pair, n: int) -> PairResult:
        raise NotImplementedError


class Recorded(Source):
    """A recorded run's games, drawn without replacement (each pairing shuffled once)."""

    def __init__(self, run: Run, rng: random.Random) -> None:
        self.order = {p: rng.sample(g, len(g)) for p, g in run.games.items()}
        self.used = dict.fromkeys(run.games, 0)

    def draw(self, pair: Pair, n: int) -> PairResult:
        key = pair if pair in self.order else (pair[1], pair[0])
        start = self.used[key]
        if start + n > len(self.order[key]):
            raise ValueError(f"{pair}: {start + n} games asked, {len(self.order[key])} recorded")
        self.used[key] = start + n
        r = totals(key, self.order[key][start : start + n])
        return r if key == pair else PairResult(pair[0], pair[1], r.games, r.games - r.score_a)


class Model(Source):
    """Games simulated from ratings (Bradley–Terry, no draws)."""

    def __init__(self, truth: Mapping[str, float], rng: random.Random) -> None:
        self.truth, self.rng = truth, rng

    def draw(self, pair: Pair, n: int) -> PairResult:
        return simulate(self.truth, pair, n, self.rng)


def nearest(rating: float, anchors: Mapping[str, float], k: int = 2) -> list[str]:
    return sorted(anchors, key=lambda a: (abs(anchors[a] - rating), a))[:k]


def chain_anchors(ratings: Mapping[str, float], anchors: Sequence[str], levels: Sequence[str]) -> list[str]:
    """``anchors`` plus the levels nearest the points that split each gap over
    :data:`CHAIN_GAP` Elo between neighbouring anchors evenly."""
    chosen = list(anchors)
    ordered = sorted(anchors, key=lambda a: ratings[a])
    for lo, hi in itertools.pairwise(ordered):
        gap = ratings[hi] - ratings[lo]
        k = math.ceil(gap / CHAIN_GAP) - 1
        for j in range(1, k + 1):
            point = ratings[lo] + gap * j / (k + 1)
            pick = min((x for x in levels if x not in chosen), key=lambda x: abs(ratings[x] - point))
            chosen.append(pick)
    return chosen


def anchor_pairs(anchors: Sequence[str], ratings: Mapping[str, float] | None) -> list[Pair]:
    """The anchors' pairings: all of them, or (``ratings`` given) neighbours in rating and
    those within :data:`CHAIN_PAIRS` Elo of each other."""
    pairs = [(a, b) for i, a in enumerate(anchors) for b in anchors[i + 1 :]]
    if ratings is None:
        return pairs
    ordered = sorted(anchors, key=lambda a: ratings[a])
    links = {frozenset(p) for p in itertools.pairwise(ordered)}
    return [(a, b) for a, b in pairs if abs(ratings[a] - ratings[b]) <= CHAIN_PAIRS or {a, b} in links]


@dataclasses.dataclass(frozen=True)
class Outcome:
    ladder_games: int
    check_games_random: int
    check_games_held: int
    errors: dict[str, list[float]]


def play(
    design: str,
    n: int,
    src: Source,
    *,
    anchors: Sequence[str],
    candidates: Sequence[str],
    names: Sequence[str],
    levels: Sequence[str],
    known: Mapping[str, float] | None = None,
    chain: Sequence[str] | None = None,
) -> tuple[list[PairResult], list[PairResult], list[str]]:
    """One run's games with ``design`` at ``n`` games per pair (as many per candidate as
    ``fixed`` with ``n``): the anchors' results, the candidates' results, and the anchors.
    A ladder's pilot rates its candidates (``known`` None); a check knows its bots' ratings
    from the table (``known``) and plays the table's anchors (``chain``)."""
    if design == "fixed":
        pairs = anchor_pairs(anchors, None)
        return (
            [src.draw(p, n) for p in pairs],
            [src.draw((c, a), n) for c in candidates for a in anchors],
            list(anchors),
        )
    # The pilot: PILOT games of every pairing of the fixed design.
    pilot_pairs = anchor_pairs(anchors, None) + [(c, a) for c in candidates for a in anchors]
    results = {p: src.draw(p, PILOT) for p in pilot_pairs}
    if known is None:
        known = {k: v.elo for k, v in fit(list(results.values()), names).items()}
    if chain is None:
        chain = chain_anchors(known, anchors, levels) if design == "chain" else list(anchors)
    own: list[PairResult] = []
    for a, b in anchor_pairs(chain, known if design == "chain" else None):
        done = results.pop((a, b), None) or results.pop((b, a), None)
        more = src.draw((a, b), n - (PILOT if done else 0))
        if done is not None:
            more = PairResult(a, b, more.games + done.games, more.score_a + done.score_a)
        own.append(more)
    own += [r for r in results.values() if r.a in anchors and r.b in anchors]  # pilot pairs not in the chain
    bots = [r for r in results.values() if not (r.a in anchors and r.b in anchors)]  # every candidate's pilot
    main = 2 * n - 2 * PILOT  # then the two nearest anchors: 4n per candidate in all, as fixed
    for c in candidates:
        if c not in chain:
            bots += [src.draw((c, a), main) for a in nearest(known[c], {x: known[x] for x in chain})]
    return own, bots, list(chain)


def run_design(
    design: str,
    n: int,
    *,
    ladder: Run,
    ladder_src: Source,
    check_src: Source,
    table: RatingTable,
    specs: Sequence[str],
    picks: Mapping[str, float],
) -> Outcome:
    """One ladder and its check with ``design`` at ``n`` games per pair, the check judged as
    it judges (random pinned) and with its anchors held at the table's ratings. A check bot's
    error is its measured rating minus the simulated table's curve rating of it plus
    ``picks`` (its target minus the recorded table's curve rating: a target played by the
    nearer of two levels that cannot be interpolated is that far from its bot)."""
    anchors = list(ladder.anchors)
    candidates = [b for b in ladder.bots if b not in anchors]
    levels = [b.spec for b in table.levels if b.spec not in anchors]
    own, bots, chain = play(
        design, n, ladder_src, anchors=anchors, candidates=candidates, names=ladder.bots, levels=levels
    )
    sim_table = with_ratings(table, fit(own + bots, ladder.bots))
    t = {b.spec: b.rating for b in sim_table.bots}
    predicted = {s: curve_rating(sim_table, s) for s in specs}
    known = {**t, **predicted}
    check_own, check_bots, _ = play(
        design,
        n,
        check_src,
        anchors=anchors,
        candidates=specs,
        names=(),
        levels=levels,
        known=known,
        chain=chain,
    )
    names = list(dict.fromkeys([*chain, *anchors, *specs]))
    m = {k: v.elo for k, v in fit(check_own + check_bots, names).items()}
    held = fit(check_bots, names, fixed={a: t[a] for a in chain})
    return Outcome(
        ladder_games=round(sum(r.games for r in own + bots)),
        check_games_random=round(sum(r.games for r in check_own + check_bots)),
        check_games_held=round(sum(r.games for r in check_bots)),
        errors={
            "random": [m[s] - predicted[s] - picks[s] for s in specs],
            "anchors held": [held[s].elo - predicted[s] - picks[s] for s in specs],
        },
    )


def design_row(
    design: str,
    n: int,
    *,
    reps: int,
    make: Callable[[], tuple[Source, Source]],
    ladder: Run,
    table: RatingTable,
    specs: Sequence[str],
    picks: Mapping[str, float],
) -> dict[str, Any]:
    passes = {"random": 0, "anchors held": 0}
    maes: dict[str, list[float]] = {"random": [], "anchors held": []}
    outcome = None
    for _ in range(reps):
        ladder_src, check_src = make()
        outcome = run_design(
            design,
            n,
            ladder=ladder,
            ladder_src=ladder_src,
            check_src=check_src,
            table=table,
            specs=specs,
            picks=picks,
        )
        for k, e in outcome.errors.items():
            ok, mae, _ = verdict(e)
            passes[k] += ok
            maes[k].append(mae)
    assert outcome is not None
    return {
        "design": design,
        "n": n,
        "reps": reps,
        "ladder_games": outcome.ladder_games,
        "check_games_random": outcome.check_games_random,
        "check_games_held": outcome.check_games_held,
        "pass_random": passes["random"] / reps,
        "pass_held": passes["anchors held"] / reps,
        "mae_random": statistics.fmean(maes["random"]),
        "mae_held": statistics.fmean(maes["anchors held"]),
    }


def reach(
    rows: Sequence[Mapping[str, Any]], key: str, games_key: str, level: float
) -> tuple[float, float] | None:
    """Games per pair and games (ladder and check) at which ``rows`` (one design, growing
    sizes) first reach a pass rate of ``level``, linearly between the two sizes around it."""
    for prev, row in itertools.pairwise([{"n": 0, key: 0.0, "ladder_games": 0, games_key: 0}, *rows]):
        if row[key] >= level:
            f = (level - prev[key]) / (row[key] - prev[key]) if row[key] > prev[key] else 1.0
            games = [r["ladder_games"] + r[games_key] for r in (prev, row)]
            return prev["n"] + f * (row["n"] - prev["n"]), games[0] + f * (games[1] - games[0])
    return None


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def short(spec: str) -> str:
    return display_name(spec).replace("mcts:", "")


def analyse(
    name: str, ladder_path: str, check_path: str, args: argparse.Namespace
) -> tuple[dict[str, Any], str]:
    t0 = time.perf_counter()
    rng = random.Random(args.seed)
    ladder, check = load_run(ladder_path), load_run(check_path)
    for run in (ladder, check):  # the arena's own fit, reused as it is
        mine = fit(prefix(run, run.per_pair), run.bots)
        assert all(abs(mine[b].elo - run.recorded[b]) < 1e-6 for b in run.bots), run.path
    table = read_table(ROOT / TABLES.get(name, check.data["check"]["table"]))
    ladder_fit = fit(prefix(ladder, ladder.per_pair), ladder.bots)
    assert all(abs(b.rating - ladder_fit[b.spec].elo) < 0.051 for b in table.bots), "not the ladder's table"
    rows = check.data["check"]["rows"]
    specs = [r["spec"] for r in rows]
    targets = [r["target"] for r in rows]
    picks = {s: t - curve_rating(table, s) for s, t in zip(specs, targets, strict=True)}
    lines = [
        f"== {name}: ladder {ladder_path} (seed {ladder.seed}, {ladder.per_pair} games per pair, "
        f"{sum(len(g) for g in ladder.games.values())} games); check {check_path} (seed {check.seed}); "
        f"table {check.data['check']['table']}",
        "",
    ]
    out: dict[str, Any] = {"name": name, "ladder": ladder_path, "check": check_path}

    # 1. The scale.
    sc = scale(ladder, args.resamples, rng)
    out["scale"] = sc
    lines.append(
        f"1. The scale at {ladder.per_pair} games per pair: 95% half-widths, Fisher | bootstrap "
        f"({args.resamples} resamples of the games within each pairing)"
    )
    lines.append(
        f"   {'bot':<24} {'Elo':>6}  {'random = 0':>11}  {'vs greedy':>11}  {'vs easy':>11}  {'vs offset':>9}"
    )
    for r in sorted(sc["bots"], key=lambda r: r["elo"]):
        if r["bot"] == ZERO:
            continue
        lines.append(
            f"   {short(r['bot']):<24} {r['elo']:6.0f}  {r['fisher']:4.0f} | {r['boot']:4.0f}"
            f"  {r['fisher_' + GREEDY]:4.0f} | {r['boot_' + GREEDY]:4.0f}"
            f"  {r['fisher_' + EASY]:4.0f} | {r['boot_' + EASY]:4.0f}  {r['boot_offset']:9.0f}"
        )
    g = sc["gaps"]
    for a in (GREEDY, EASY, MEDIUM):
        lo, hi = g[a]["boot"]
        lines.append(
            f"   gap random→{short(a)}: {g[a]['elo']:.0f} ± {g[a]['fisher']:.0f} (Fisher); "
            f"bootstrap 95% [{lo:.0f}, {hi:.0f}]"
        )
    lo, hi = g["offset"]["boot"]
    lines.append(
        f"   offset (mean of greedy, easy, medium): {g['offset']['elo']:.0f}, "
        f"bootstrap 95% [{lo:.0f}, {hi:.0f}]"
    )
    lines.append("")
    sizes = sorted({10, 25, ladder.per_pair})
    pe = prior_effect(ladder, sizes)
    out["prior_effect"] = pe
    lines.append("   The one virtual draw per pair (the run's first n games per pair): greedy, easy, medium")
    for n in sizes:
        w = next(r for r in pe if r["games_per_pair"] == n and r["prior_draws"] == 1.0)
        wo = next(r for r in pe if r["games_per_pair"] == n and r["prior_draws"] == 0.0)
        lines.append(
            f"     n = {n:3d}: with {w[GREEDY]:5.0f} {w[EASY]:5.0f} {w[MEDIUM]:5.0f};"
            f"  without {wo[GREEDY]:5.0f} {wo[EASY]:5.0f} {wo[MEDIUM]:5.0f}"
        )
    pb = prior_bias(ladder, (25, 50, 200), args.bias_reps, rng)
    out["prior_bias"] = pb
    lines.append(
        f"   Offset found by ladders simulated from the plain maximum likelihood ({args.bias_reps} each; "
        f"truth {pb[0]['truth']:.0f}): "
        + "; ".join(
            f"n = {r['games_per_pair']}: {r['with_prior']:.0f} with, {r['without']:.0f} without" for r in pb
        )
    )
    games_needed = {}
    for label, gap in (("fit", g[GREEDY]["elo"]), ("mle", pe[-1][GREEDY])):
        for hw in (25.0, 50.0):
            for links in (1, 2, 3):
                games_needed[f"{label} ±{hw:.0f} {links}"] = offset_games(gap, hw, links)
    out["offset_games"] = games_needed
    direct = ladder.games[(ZERO, GREEDY)]
    lines.append(
        f"   Games to measure random→greedy to ±25 | ±50 (Fisher at the gap; recorded: random scored "
        f"{sum(s for _, s in direct):.0f} of {len(direct)} against greedy):"
    )
    for label, gap in (("fit", g[GREEDY]["elo"]), ("mle", pe[-1][GREEDY])):
        lines.append(
            f"     gap {gap:.0f}: "
            + "; ".join(
                f"{'directly' if links == 1 else f'{links} links'} "
                f"{games_needed[f'{label} ±25 {links}']:,.0f} | "
                f"{games_needed[f'{label} ±50 {links}']:,.0f}"
                for links in (1, 2, 3)
            )
        )
    disp = {"ladder": dispersion(ladder), "check": dispersion(check)}
    out["dispersion"] = disp
    lines.append(
        "   Spread of a pairing's score between halves of its games, against independent games (1): "
        + "; ".join(
            f"{k} {v['halves']:.2f} (halves), {v['even/odd']:.2f} (even/odd)" for k, v in disp.items()
        )
    )
    lines.append("")

    # 2. The check against the table.
    cr = check_report(table, check, specs, targets, subsamples=args.designs, rng=rng)
    out["check"] = cr
    lines.append(
        "2. The check against the table: each target's error (measured minus the table's curve rating)"
    )
    for key in (f"first {check.per_pair}", "first 25"):
        c = cr[key]
        a = c["anchors"]
        lines.append(
            f"   check's {key} games per pair: its anchors minus the table's: greedy {a[GREEDY]:+.0f}, "
            f"easy {a[EASY]:+.0f}, medium {a[MEDIUM]:+.0f} (offset {c['shift']:+.0f})"
        )
        lines.append(f"   {'target':>6}  {'bot':<24}" + "".join(f"{k:>14}" for k in SHIFTS))
        for i, tgt in enumerate(targets):
            lines.append(
                f"   {tgt:6d}  {short(specs[i]):<24}" + "".join(f"{c['errors'][k][i]:+14.0f}" for k in SHIFTS)
            )
        summary = []
        for k in SHIFTS:
            ok, mae, worst = verdict(c["errors"][k])
            summary.append(f"{'pass' if ok else 'FAIL'} {mae:.0f}/{worst:.0f}")
        lines.append(f"   {'':6}  {'verdict, MAE/largest':<24}" + "".join(f"{x:>14}" for x in summary))
    s25 = cr["subsamples of 25"]
    lines.append(
        f"   {s25['count']} subsamples of 25 of the check's games per pair: offset shift "
        f"{s25['shift_mean']:+.0f} "
        f"(sd {s25['shift_sd']:.0f}; |shift| ≥ 170 in {100 * s25['shift_at_least_170']:.0f}%); pass: "
        + ", ".join(f"{k} {100 * v:.0f}%" for k, v in s25["pass"].items())
    )
    lines.append("")

    # 3. Designs.
    lines.append(
        "3. Designs: P(check passes) judged with random pinned | with the anchors held; games of the ladder, "
        "the check (random pinned | anchors held); mean MAE"
    )
    design_rows = []
    boot_seed = rng.getrandbits(32)
    sub_rng = random.Random(boot_seed)

    def recorded() -> tuple[Source, Source]:
        return Recorded(ladder, sub_rng), Recorded(check, sub_rng)

    sizes_recorded: tuple[tuple[str, tuple[int, ...]], ...] = (
        ("fixed", (10, 20, 25, 30, 40)),
        ("nearest", (20, 25)),
    )
    for design, ns in sizes_recorded:
        for n in ns:
            row = design_row(
                design,
                n,
                reps=args.designs,
                make=recorded,
                ladder=ladder,
                table=table,
                specs=specs,
                picks=picks,
            )
            row["source"] = "recorded"
            design_rows.append(row)
    truth = {b.spec: b.rating for b in table.bots}
    truth.update({s: curve_rating(table, s) for s in specs})
    model_rng = random.Random(rng.getrandbits(32))

    def model() -> tuple[Source, Source]:
        return Model(truth, model_rng), Model(truth, model_rng)

    sizes_model: tuple[tuple[str, tuple[int, ...]], ...] = (
        ("fixed", (25, 50, 100, 150, 200, 300, 400)),
        ("nearest", (25, 50, 75, 100, 150, 200)),
        ("chain", (50, 100, 150, 200)),
    )
    for design, ns in sizes_model:
        for n in ns:
            row = design_row(
                design, n, reps=args.designs, make=model, ladder=ladder, table=table, specs=specs, picks=picks
            )
            row["source"] = "model"
            design_rows.append(row)
    out["designs"] = design_rows
    lines.append(
        f"   {'source':<9} {'design':<8} {'n':>4} {'ladder':>7} {'check':>13}  {'P(pass)':>11}  {'MAE':>9}"
    )
    for r in design_rows:
        lines.append(
            f"   {r['source']:<9} {r['design']:<8} {r['n']:4d} {r['ladder_games']:7d} "
            f"{r['check_games_random']:6d} | {r['check_games_held']:4d}  "
            f"{100 * r['pass_random']:3.0f}% | {100 * r['pass_held']:3.0f}%  "
            f"{r['mae_random']:3.0f} | {r['mae_held']:3.0f}"
        )
    needed: dict[str, dict[str, float | None]] = {}
    for key, label in (("pass_held", "anchors held"), ("pass_random", "random pinned")):
        games_key = "check_games_held" if key == "pass_held" else "check_games_random"
        reached = []
        for design in ("fixed", "nearest", "chain"):
            rows_d = [r for r in design_rows if r["source"] == "model" and r["design"] == design]
            at = reach(rows_d, key, games_key, 0.9)
            needed.setdefault(design, {})[label] = at[1] if at else None
            if at:
                reached.append(f"{design} ≈ {at[0]:.0f} per pair (≈ {at[1]:,.0f} games)")
            else:
                reached.append(f"{design} not by {rows_d[-1]['n']}")
        lines.append(f"   P(pass) = 90% ({label}, model, between grid sizes): " + "; ".join(reached))
    out["games_for_90"] = needed
    lines.append(f"   ({time.perf_counter() - t0:.0f} s)")
    lines.append("")
    return out, "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--resamples", type=int, default=200, help="bootstrap resamples of the scale")
    ap.add_argument("--designs", type=int, default=100, help="subsamples or simulations per design")
    ap.add_argument("--bias-reps", type=int, default=40, help="simulated ladders per size (the prior's bias)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="one configuration by name (e.g. 'Aton 2p')")
    ap.add_argument("--json", help="also write the figures as JSON to this path")
    args = ap.parse_args()
    results = []
    for name, ladder_path, check_path in CONFIGS:
        if args.only and args.only != name:
            continue
        out, text = analyse(name, ladder_path, check_path, args)
        print(text, flush=True)
        results.append(out)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
