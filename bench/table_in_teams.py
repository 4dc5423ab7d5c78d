"""What a team game's target would pick by the free-for-all table, on the team scale.

    python3 bench/table_in_teams.py [FREE_FOR_ALL.json [TEAMS.json]]

Plays no game. For every 100 from 100 to the free-for-all table's top, the bot that table
picks (:meth:`ai.ladder.RatingTable.level_for`), that bot's rating on the team table's
strength curve (:func:`ai.ladder.curve_rating`: by its level, or between its two levels by
one knob), and the difference: how far a team game's bot lands from its target when a team
game plays by the free-for-all table (docs/ladder.md, "Teams"). The team table's own pick for
each target is listed beside it. Defaults: the shipped Osirium 4-player tables,
``ai/ladders/osirium-4p.json`` and ``ai/ladders/osirium-4p-teams.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai.ladder import LadderError, curve_rating, read_table

LADDERS = Path(__file__).resolve().parents[1] / "ai" / "ladders"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("free", nargs="?", default=str(LADDERS / "osirium-4p.json"), help="free-for-all table")
    ap.add_argument("teams", nargs="?", default=str(LADDERS / "osirium-4p-teams.json"), help="team table")
    args = ap.parse_args(argv)
    try:
        free, teams = read_table(args.free), read_table(args.teams)
    except LadderError as exc:
        print(f"table_in_teams: {exc}", file=sys.stderr)
        return 2
    print(f"free-for-all table {args.free} (top {free.max_target})")
    print(f"team table {args.teams} (top {teams.max_target})")
    print(f"{'target':>6}  {'free-for-all pick':<32} {'team rating':>11} {'gap':>6}  team table's pick")
    gaps = []
    for target in range(100, free.max_target + 1, 100):
        level = free.level_for(target)
        try:
            rating = curve_rating(teams, level.spec)
        except LadderError as exc:
            print(f"{target:>6}  {level.name:<32} not on the team curve ({exc})")
            continue
        gaps.append(rating - target)
        own = teams.level_for(target).name if target <= teams.max_target else "(above its top)"
        print(f"{target:>6}  {level.name:<32} {rating:>11.0f} {rating - target:>+6.0f}  {own}")
    if gaps:
        mean = sum(abs(g) for g in gaps) / len(gaps)
        print(
            f"gap {min(gaps):+.0f} to {max(gaps):+.0f}, mean absolute {mean:.0f} Elo over {len(gaps)} targets"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
