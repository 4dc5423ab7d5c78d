"""What a larger ladder and check would cost, and how likely its check would pass.

    PYTHONPATH=. .venv/bin/python bench/check_forecast.py CHECK.json TABLE.json LADDER.json \\
        [--design GAMES[/COSTLY] ...] [--draws N] [--seed S]

Plays no game. Reads a finished check (``heka arena --ladder --check TABLE --json CHECK``), the
table it checked and the ladder run the table came from, all in the fixed design at one number
of games per pair. For each ``--design`` (games per pair, and per pair for the costly
candidates, ``--costly-games``: :func:`ai.arena.costly_candidates`), the ladder resumed to it and
a fresh check at the same sizes:

* **CPU time**: each candidate's and the anchors' mean CPU seconds a game in the measured runs
  (the check's bots for the check), times the games the design adds to the ladder and the games
  of the whole check.
* **Errors**: a target's error is the check's noise plus the table's. The check's standard
  deviation is its measured interval over 1.96; the table's, the mean interval of the table's
  two levels nearest the target over 1.96, each level refitted from the ladder's games as the
  check places its bots: the anchors held at the ladder's ratings of them (a check on the
  ``random`` scale is refused: its errors share the re-measured distance from ``random``).
  Each scales as one over the square root of its level's games. The forecast mean absolute
  error is the mean of 0.798 σ over the targets, and the chance of a pass the share of
  ``--draws`` seeded draws of independent normal errors with every target within ±75 Elo and
  a mean absolute error of at most 30. Interpolation between levels and a pool that one Elo
  scale does not fit add errors this leaves out: run it on the measured checks to see how
  their outcomes fell against their forecasts.

Prints figures, asserts nothing. The measured check is one draw of its own forecast.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai.arena import GameRecord, is_costly, pairwise_results, records_from_json, search_iterations
from ai.ladder import MAX_MEAN_ERROR, TOLERANCE, read_table
from ai.ratings import fit_elo

ANCHORS = "(anchors)"


def load(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def costs(run: dict[str, Any], records: list[GameRecord]) -> dict[str, float]:
    """Mean seconds of one core a game (``GameRecord.cost``: CPU time where recorded) of each
    candidate's pairs, and of the anchors' round robin."""
    anchors = set(run["anchors"])
    by: dict[str, list[float]] = defaultdict(list)
    for r in records:
        others = set(r.seats) - anchors
        by[next(iter(others)) if others else ANCHORS].append(r.cost)
    return {k: statistics.fmean(v) for k, v in by.items()}


def held_intervals(ladder: dict[str, Any], records: list[GameRecord]) -> dict[str, float]:
    """Each ladder candidate's 95% interval with the anchors held at the ladder's ratings of
    them: how well the table places a level among its anchors, which is what a check that holds
    them compares with."""
    elo = {b["name"]: float(b["elo"]) for b in ladder["ratings"]["bots"]}
    held = {a: elo[a] for a in ladder["anchors"]}
    results = pairwise_results(records, int(ladder["players"]), teams=bool(ladder["teams"]))
    fitted = fit_elo(results, names=list(ladder["bots"]), fixed=held)
    return {r.name: r.ci95 for r in fitted if r.name not in held}


def parse_design(text: str) -> tuple[int, int]:
    games, _, costly = text.partition("/")
    g = int(games)
    c = int(costly) if costly else g
    if not 1 <= c <= g:
        raise argparse.ArgumentTypeError(f"--design {text}: COSTLY must be 1..GAMES")
    return g, c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("check")
    ap.add_argument("table")
    ap.add_argument("ladder")
    ap.add_argument("--design", type=parse_design, action="append", default=None)
    ap.add_argument("--draws", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    check, ladder, table = load(args.check), load(args.ladder), read_table(args.table)
    measured = int(check["games_per_pairing"])
    split = check.get("costly_games") or ladder.get("costly_games")
    if int(ladder["games_per_pairing"]) != measured or split:
        print("check_forecast: the check and the ladder must be fixed runs of one size", file=sys.stderr)
        return 2
    designs = args.design or [(measured, measured), (2 * measured, measured), (2 * measured, 2 * measured)]
    top = max(search_iterations(a) for a in check["anchors"])
    anchors = len(check["anchors"])
    anchor_pairs = anchors * (anchors - 1) // 2
    ladder_records = records_from_json(ladder)
    check_cost, ladder_cost = costs(check, records_from_json(check)), costs(ladder, ladder_records)
    rows = check["check"]["rows"]
    if check["check"].get("scale") != "anchors":
        print("check_forecast: the check must hold the anchors (--check-scale anchors)", file=sys.stderr)
        return 2
    levels = [b for b in table.bots if b.spec != "greedy"]
    interval = held_intervals(ladder, ladder_records)
    spread = []  # each target: the check's sigma and the table's, its bot, the table's nearest level
    for r in rows:
        near = sorted(levels, key=lambda b: abs(b.rating - r["target"]))[:2]
        table_sigma = statistics.fmean(interval.get(b.spec, 0.0) for b in near) / 1.96
        spread.append((r["ci95"] / 1.96, table_sigma, r["spec"], near[0].spec))
    rng = random.Random(args.seed)
    print(f"check {args.check}: {measured} games per pair, mean absolute error "
          f"{check['check']['mean_absolute_error']} (measured)")  # fmt: skip
    print(f"costly (more iterations a move than every anchor, {top:.0f}): the costly candidates' games")
    print(f"{'design':>10}  {'ladder +CPU s':>13}  {'check CPU s':>11}  {'in all':>9}  "
          f"{'forecast MAE':>12}  {'P(pass)':>7}")  # fmt: skip
    for games, costly in designs:

        def size(spec: str, games: int = games, costly: int = costly) -> int:
            return costly if is_costly(spec, check["anchors"]) else games

        extra = (
            sum(
                anchors * max(0, size(spec) - measured) * c
                for spec, c in ladder_cost.items()
                if spec != ANCHORS
            )
            + anchor_pairs * max(0, games - measured) * ladder_cost[ANCHORS]
        )
        whole = sum(anchors * size(spec) * c for spec, c in check_cost.items() if spec != ANCHORS)
        whole += anchor_pairs * games * check_cost[ANCHORS]
        sigmas = []
        for sc, st, bot, level in spread:
            sigmas.append(math.sqrt(sc * sc * measured / size(bot) + st * st * measured / size(level)))
        mae = statistics.fmean(0.798 * s for s in sigmas)
        passed = 0
        for _ in range(args.draws):
            errors = [abs(rng.gauss(0.0, s)) for s in sigmas]
            passed += max(errors) <= TOLERANCE and statistics.fmean(errors) <= MAX_MEAN_ERROR
        label = f"{games}/{costly}"
        print(f"{label:>10}  {extra:13,.0f}  {whole:11,.0f}  {extra + whole:9,.0f}  {mae:12.1f}  "
              f"{passed / args.draws:7.0%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
