"""Do teams change what a level is worth? Osirium 4p, teams against free-for-all, same bots.

    .venv/bin/python bench/teams_vs_ffa.py bench/results/teams_osirium4_short.json \\
        bench/results/ffa_osirium4_short.json

Plays no game. Reads two ladder runs (``heka arena --ladder --json``) of the same bots, one
with ``--teams`` (seats 0+2 against 1+3: each game a team of two copies of a bot against two
copies of another) and one free-for-all (one copy against three, and three against one), and
fits each with the arena's fit (:func:`ai.ratings.fit_elo`, one virtual draw per pair) twice:
``random`` pinned at 0, as the tables are, and ``greedy`` pinned at 0, which removes the
least-measured distance (from ``random``) from every comparison. Prints each bot's ratings in
both runs and the difference (teams minus free-for-all) with its 95% interval (the two runs'
intervals in quadrature, as independent measurements), and whether 0 is inside it: a level
whose difference excludes 0 is worth something else in teams, and teams then need a table of
their own (docs/ladder.md). The arena's fit of each run is checked against the ratings the
run recorded.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai.arena import pairwise_results, records_from_json
from ai.ladder import ZERO, display_name
from ai.ratings import Rating, fit_elo
from bench.table import print_table


def fit(data: dict[str, Any], anchor: str) -> dict[str, Rating]:
    records = records_from_json(data)
    results = pairwise_results(records, data["players"], teams=data["teams"])
    return {r.name: r for r in fit_elo(results, names=data["bots"], anchor=anchor)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("teams", help="the --teams ladder's --json")
    p.add_argument("ffa", help="the free-for-all ladder's --json")
    p.add_argument("--json", default="", help="write the figures here")
    args = p.parse_args(argv)
    runs = {}
    for name, path in (("teams", args.teams), ("ffa", args.ffa)):
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if name == "teams" and not data.get("teams"):
            raise SystemExit(f"{path}: not a --teams run")
        if name == "ffa" and data.get("teams"):
            raise SystemExit(f"{path}: a --teams run, not free-for-all")
        if data.get("lineup") != "ladder":
            raise SystemExit(f"{path}: not a ladder run")
        mine = fit(data, ZERO)
        recorded = {b["name"]: b["elo"] for b in data["ratings"]["bots"]}
        assert all(abs(mine[b].elo - recorded[b]) < 1e-6 for b in recorded), f"{path}: not the arena's fit"
        runs[name] = data
    bots = [b for b in runs["teams"]["bots"] if b in runs["ffa"]["bots"]]
    out: dict[str, Any] = {"teams": args.teams, "ffa": args.ffa, "bots": bots, "scales": {}}
    for anchor in (ZERO, "greedy"):
        teams, ffa = fit(runs["teams"], anchor), fit(runs["ffa"], anchor)
        rows = []
        figures = []
        for b in bots:
            if b == anchor:
                continue
            t, f = teams[b], ffa[b]
            diff = t.elo - f.elo
            half = math.hypot(t.ci95, f.ci95)
            differs = abs(diff) > half
            rows.append(
                (
                    display_name(b),
                    f"{t.elo:+.0f} ± {t.ci95:.0f}",
                    f"{f.elo:+.0f} ± {f.ci95:.0f}",
                    f"{diff:+.0f} ± {half:.0f}",
                    "yes" if differs else "no",
                )
            )
            figures.append(
                {
                    "bot": b,
                    "teams": [t.elo, t.ci95],
                    "ffa": [f.elo, f.ci95],
                    "difference": [diff, half],
                    "differs": differs,
                }
            )
        print(f"\n{display_name(anchor)} = 0:")
        print_table(("bot", "teams", "free-for-all", "teams - ffa", "differs (95%)"), rows)
        out["scales"][anchor] = figures
    games = {k: len(v["games"]) for k, v in runs.items()}
    per_pair = {k: v["games_per_pairing"] for k, v in runs.items()}
    print(f"\ngames: teams {games['teams']}, free-for-all {games['ffa']}; games per pair {per_pair}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
