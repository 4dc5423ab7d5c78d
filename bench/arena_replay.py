"""Replay recorded arena games on this checkout and compare them with the record.

A change meant to keep every bot decision (a faster engine or search) must replay a
recorded ladder's games exactly: the same plies, scores and winners from the same deal and
bot seeds. Then the games of a resumed run, and the tables measured with them, stay valid
across the change. Asserts nothing; prints one line per game and the count that differ.

    .venv/bin/python bench/arena_replay.py bench/results/partial/ladder_osirium3.json --games 6
    .venv/bin/python bench/arena_replay.py RUN.json --index 10 --index 2000

``--games N`` picks N recorded games spread over the pairings (every bot of the run plays
in some), ``--index`` names games by index. Bots decide on their iteration budgets here
(``ms=none`` is not forced): replay on an idle machine, or a time cap may end a search
sooner than in the recorded run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.arena import GameTask, play_task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="an arena's --json file")
    ap.add_argument("--games", type=int, default=4, help="games spread over the pairings")
    ap.add_argument("--index", type=int, action="append", default=[], help="a recorded game's index")
    args = ap.parse_args()
    data = json.loads(args.run.read_text())
    games = {g["index"]: g for g in data["games"]}
    chosen = list(args.index)
    if not chosen:
        by_pairing: dict[int, list[int]] = {}
        for g in data["games"]:
            by_pairing.setdefault(g["pairing"], []).append(g["index"])
        pairings = sorted(by_pairing)
        step = max(1, len(pairings) // max(1, args.games))
        chosen = [by_pairing[p][0] for p in pairings[::step][: args.games]]
    differ = 0
    for index in chosen:
        g = games[index]
        task = GameTask(index, g["pairing"], tuple(g["seats"]), g["deal_seed"], g["bot_seed"])
        t0 = time.perf_counter()
        r = play_task(data["game"], data["players"], data.get("options") or {}, task)
        same = (list(r.scores), list(r.winners), r.plies) == (g["scores"], g["winners"], g["plies"])
        differ += not same
        print(
            f"game {index:>5} {' / '.join(g['seats'])}: recorded {g['scores']} in {g['plies']} plies, "
            f"replayed {list(r.scores)} in {r.plies} ({'same' if same else 'DIFFERENT'}, "
            f"{time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
    print(f"{len(chosen) - differ} of {len(chosen)} games replayed exactly")


if __name__ == "__main__":
    main()
