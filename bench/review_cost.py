"""What a review costs: CPU per reviewed move and per game, for each game and player count.

    .venv/bin/python bench/review_cost.py                    # 4 games per configuration
    .venv/bin/python bench/review_cost.py --games 8 --preset hard

For each configuration (Aton 2p, Osirium 2p, 3p, 4p), ``--games`` games are played by
``--player`` bots in every seat (deal ``g`` from ``--seed``), then each game is reviewed, every
seat, by the reviewer (``--preset``, ``--iterations``; default the review's: ``medium`` on its
iteration budget) in this process, one move after another: the CPU time is the review's own
(``time.process_time``), whatever else the machine runs. Prints, per configuration, the
median over games of: the moves reviewed and skipped (forced), the CPU seconds of the review,
and the CPU milliseconds per reviewed move; and the same per move over all games. A server
spreads a review's moves over its free search workers (docs/review.md, "Cost"): the wall
time of a review is about its CPU time over the workers it gets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai.api import make_bot
from ai.arena import derive_seed
from ai.review import DEFAULT_PRESET, review_game, reviewer
from bench.table import print_table
from engine.registry import get_game

CONFIGS = (("aton", 2), ("osirium", 2), ("osirium", 3), ("osirium", 4))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=4, help="games per configuration (default 4)")
    p.add_argument("--player", default="mcts:easy", help="the bot of every seat (default mcts:easy)")
    p.add_argument("--preset", default=DEFAULT_PRESET, help="the reviewer's preset (default medium)")
    p.add_argument("--iterations", type=int, default=None, help="per decision (default the preset's)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--configs", default="", help="e.g. 'aton:2,osirium:4' (default: all four)")
    p.add_argument("--json", default="", help="write every game's figures here (docs/review.md reads it)")
    args = p.parse_args(argv)
    configs = (
        [(c.split(":")[0], int(c.split(":")[1])) for c in args.configs.split(",")]
        if args.configs
        else CONFIGS
    )
    who = reviewer(args.preset, args.iterations)
    bot = make_bot(args.player)
    print(
        f"reviewer {who.name} ({who.iterations} iterations per decision), every seat; games by "
        f"{args.player} in every seat, {args.games} per configuration, seed {args.seed}; one process"
    )
    rows = []
    out: list[dict[str, object]] = []
    for name, players in configs:
        game = get_game(name)
        per_game: list[tuple[int, int, float]] = []
        for g in range(args.games):
            state = game.new_initial_state(players, derive_seed(args.seed, "deal", g), {})
            start = state.clone()
            actions: list[int] = []
            rng = derive_seed(args.seed, "bots", g)
            while not state.is_terminal():
                action = bot.choose(state, seed=(rng + len(actions)) & 0x7FFFFFFFFFFFFFFF).action
                state.apply(action)
                actions.append(action)
            t0 = time.process_time()
            review = review_game(start, actions, seats=range(players), who=who, seed=args.seed)
            cpu = time.process_time() - t0
            per_game.append((len(review.moves), sum(review.forced.values()), cpu))
            print(f"  {name} {players}p game {g}: {len(review.moves)} moves, {cpu:.1f} s", file=sys.stderr)
        out.append(
            {
                "game": name,
                "players": players,
                "games": [{"moves": m, "forced": f, "cpu": c} for m, f, c in per_game],
            }
        )
        moves = [m for m, _, _ in per_game]
        cpus = [c for _, _, c in per_game]
        rows.append(
            (
                f"{name} {players}p",
                f"{statistics.median(moves):.0f}",
                f"{statistics.median(f for _, f, _ in per_game):.0f}",
                f"{statistics.median(cpus):.1f}",
                f"{1000 * statistics.median(c / max(1, m) for m, _, c in per_game):.1f}",
                f"{1000 * sum(cpus) / max(1, sum(moves)):.1f}",
            )
        )
    print_table(
        (
            "configuration",
            "moves / game",
            "forced / game",
            "CPU s / game",
            "CPU ms / move (median of games)",
            "CPU ms / move (all moves)",
        ),
        rows,
    )
    if args.json:
        record = {"args": vars(args), "reviewer": who.name, "iterations": who.iterations, "configs": out}
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
