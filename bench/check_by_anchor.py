"""Does a check's verdict depend on which anchors its bots are rated against?

    PYTHONPATH=. .venv/bin/python bench/check_by_anchor.py CHECK.json TABLE.json [LADDER.json] [--first K]

Plays no game. Reads a check's games (``heka arena --ladder --check TABLE --json CHECK``), the
table it checked and, optionally, the ladder run the table came from; with ``--first K``, only
the first K games of each pair (the check at K games per pair, in the fixed design). Rates each target's bot
as the check does (:func:`ai.ladder.check_rows`: the anchors held at the table's ratings), but
from its games against each subset of the anchors only, and prints each subset's errors and
mean absolute error. Also prints, for each bot and anchor, the rating that pair alone implies
(the anchor's rating plus the Elo difference of the bot's score against it). On a transitive
pool (one Elo scale fits every pair) every subset gives the same ratings within the noise; a
subset far from the others means the rating depends on who the bot plays (docs/ladder.md,
"Designs"). With LADDER, each table level's anchors in that run (those it played more than
the pilot) are listed: the anchors the table measured it against.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai.arena import pairwise_results, records_from_json
from ai.ladder import check_bots, default_check_targets, display_name, held_anchors, read_table
from ai.ratings import PairResult, elo_from_score, fit_elo


def pair_scores(results: list[PairResult], bot: str, anchors: list[str]) -> dict[str, tuple[float, float]]:
    """``bot``'s (score, games) against each anchor, from the pairwise results."""
    out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in results:
        if r.a == bot and r.b in anchors:
            out[r.b][0] += r.score_a
            out[r.b][1] += r.games
        elif r.b == bot and r.a in anchors:
            out[r.a][0] += r.games - r.score_a
            out[r.a][1] += r.games
    return {a: (s, g) for a, (s, g) in out.items()}


def ladder_anchors(data: dict[str, Any]) -> dict[str, list[str]]:
    """Each candidate's anchors in a ladder run that it played more games than the least."""
    games: dict[tuple[str, str], int] = {}
    for p in data["pairings"]:
        games[(p["a"], p["b"])] = p["games"]
    anchors = data["anchors"]
    out: dict[str, list[str]] = {}
    for c in data["bots"]:
        if c in anchors:
            continue
        played = {a: games.get((c, a), games.get((a, c), 0)) for a in anchors}
        least = min(played.values())
        out[c] = [a for a in anchors if played[a] > least] or list(anchors)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("check", help="the check's --json file")
    ap.add_argument("table", help="the rating table it checked")
    ap.add_argument("ladder", nargs="?", help="the ladder run the table came from (its --json)")
    ap.add_argument(
        "--first",
        type=int,
        default=None,
        metavar="K",
        help="rate the check from the first K games of each pair only (a check of K games per pair)",
    )
    args = ap.parse_args(argv)
    data = json.loads(Path(args.check).read_text(encoding="utf-8"))
    table = read_table(args.table)
    anchors: list[str] = list(data["anchors"])
    held = held_anchors(table, anchors)
    bots = check_bots(table, default_check_targets(table))
    records = records_from_json(data)
    if args.first is not None:  # the fixed design's games of a pair are numbered in order
        seen: dict[int, int] = defaultdict(int)
        kept = []
        for r in sorted(records, key=lambda r: r.index):
            seen[r.pairing] += 1
            if seen[r.pairing] <= args.first:
                kept.append(r)
        records = kept
    results = pairwise_results(records, data["players"], teams=data["teams"])
    short = {a: display_name(a) for a in anchors}

    per_pair = data["games_per_pairing"] if args.first is None else min(args.first, data["games_per_pairing"])
    print(f"check {args.check} ({per_pair} games per pair, {len(records)} games, seed {data['seed']})")
    print(f"of {args.table}")
    print("anchors held at: " + ", ".join(f"{short[a]} {held[a]:+.0f}" for a in anchors))
    print("\n1. The rating each pair alone implies (anchor's rating + Elo of the score against it)")
    print(f"  {'target':>6}  {'bot':<28}" + "".join(f"{short[a]:>16}" for a in anchors))
    for target, level in sorted(bots.items()):
        scores = pair_scores(results, level.spec, anchors)
        cells = []
        for a in anchors:
            s, g = scores.get(a, (0.0, 0.0))
            if g == 0:
                cells.append(f"{'-':>16}")
                continue
            # One virtual draw, as the fit has, keeps a clean sweep finite.
            p = (s + 0.5) / (g + 1.0)
            cells.append(f"{held[a] + elo_from_score(p):+7.0f} ({100 * s / g:4.1f}%)")
        print(f"  {target:>6}  {level.name:<28}" + "".join(cells))

    print("\n2. Each target's rating from its games against a subset of the anchors (errors, MAE)")
    subsets = [list(c) for k in range(len(anchors), 0, -1) for c in itertools.combinations(anchors, k)]
    targets = sorted(bots)
    print(f"  {'anchors':<40}" + "".join(f"{t:>7}" for t in targets) + "     MAE")
    for subset in subsets:
        keep = set(subset)
        sub = [r for r in results if (r.a in anchors and r.b in anchors) or r.a in keep or r.b in keep]
        fitted = {r.name: r.elo for r in fit_elo(sub, fixed=held)}
        errors = [fitted[bots[t].spec] - t for t in targets]
        mae = sum(abs(e) for e in errors) / len(errors)
        label = ", ".join(short[a] for a in subset)
        print(f"  {label:<40}" + "".join(f"{e:+7.0f}" for e in errors) + f"  {mae:6.1f}")

    if args.ladder:
        run = json.loads(Path(args.ladder).read_text(encoding="utf-8"))
        played = ladder_anchors(run)
        print(f"\n3. The anchors each level played in {args.ladder} (design {run.get('design', 'fixed')})")
        for c, chosen in played.items():
            print(f"  {display_name(c):<28} {', '.join(short.get(a, a) for a in chosen)}")
        # Each target's bot against the anchors of the table's level rated nearest the target.
        levels = [b for b in table.bots if b.spec in played]
        print("\n4. Each target's bot rated against the anchors of the table's level nearest its target")
        errors = []
        for t in targets:
            nearest = min(levels, key=lambda b: abs(b.rating - t))
            keep = set(played[nearest.spec])
            spec = bots[t].spec
            sub = [
                r
                for r in results
                if (r.a in anchors and r.b in anchors)
                or (spec in (r.a, r.b) and (r.a in keep or r.b in keep))
            ]
            rating = {r.name: r.elo for r in fit_elo(sub, fixed=held)}[spec]
            errors.append(rating - t)
            met = ", ".join(short[a] for a in anchors if a in keep)
            print(
                f"  {t:>6}  {bots[t].name:<28} nearest level {nearest.name:<24} "
                f"({met}): {rating:+5.0f}, error {rating - t:+4.0f}"
            )
        print(f"  mean absolute error {sum(abs(e) for e in errors) / len(errors):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
