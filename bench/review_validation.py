"""Does the review's accuracy order players by strength? (docs/review.md, "Validation")

    .venv/bin/python bench/review_validation.py --game aton --players 2 --games 8 --workers 2
    .venv/bin/python bench/review_validation.py --game osirium --players 2 --json out.json

Every level of the configuration's shipped rating table (ai/ladders/, and ``greedy``) plays
``--games`` games against ``--opponent`` bots (one level seat, the others the opponent; the
level's seat rotates), the same deals for every level (deal ``g`` from ``--seed`` and ``g``:
a paired design, so that positions differ by the players, not the deals). Each game is then
reviewed, the level's seat only, by the reviewer (``--preset``, ``--iterations``; default the
review's default) with the review's seeds (``ai.review.move_seed``).

It prints, by level: its rating, the moves reviewed, the mean accuracy (the mean over its
games of the seat's accuracy), the mean loss, and blunders and mistakes per 100 moves; then
Spearman's rank correlation between rating and accuracy, over the table's measured ratings
and over the strength curve's order (the order in which a target rating picks the levels),
and the review's cost per move. Asserts nothing: the target (rho >= 0.9) is the docs'.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai.api import make_bot
from ai.arena import derive_seed
from ai.ladder import load_table, read_table
from ai.procpool import WorkerPool
from ai.review import GRADES, Reviewer, game_accuracy, review_game, reviewer
from bench.table import print_table
from engine.registry import get_game


def ranks(values: list[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rho: Pearson's correlation of the ranks."""
    rx, ry = ranks(x), ranks(y)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var else 0.0


def play_and_review(task: tuple[str, int, str, str, int, int, Reviewer, int]) -> dict[str, Any]:
    """One game of ``level`` (seat ``seat``) against the opponent, then the review of its seat."""
    game_name, players, level, opponent, deal, seat, who, seed = task
    game = get_game(game_name)
    state = game.new_initial_state(players, deal, {})
    start = state.clone()
    bots = {level: make_bot(level), opponent: make_bot(opponent)}
    specs = [level if p == seat else opponent for p in range(players)]
    actions: list[int] = []
    rng_seed = derive_seed(seed, "bots", deal)
    t0 = time.process_time()
    i = 0
    while not state.is_terminal():
        p = state.current_player()
        action = bots[specs[p]].choose(state, seed=(rng_seed + i) & 0x7FFFFFFFFFFFFFFF).action
        state.apply(action)
        actions.append(action)
        i += 1
    play_cpu = time.process_time() - t0
    t0 = time.process_time()
    review = review_game(start, actions, seats=[seat], who=who, seed=seed)
    review_cpu = time.process_time() - t0
    outcome = state.outcome()
    assert outcome is not None
    return {
        "level": level,
        "deal": deal,
        "seat": seat,
        "won": seat in outcome.winners and len(outcome.winners) == 1,
        "return": outcome.returns[seat],
        "plies": len(actions),
        "accuracy": review.summaries[0].accuracy,
        "losses": [m.loss for m in review.moves],
        "grades": [m.grade for m in review.moves],
        "forced": review.forced[seat],
        "play_cpu": play_cpu,
        "review_cpu": review_cpu,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="aton")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--games", type=int, default=8, help="games per level (default 8)")
    p.add_argument("--opponent", default="greedy", help="the other seats' bot (default greedy)")
    p.add_argument("--preset", default="medium", help="the reviewer's preset (default medium)")
    p.add_argument(
        "--iterations", type=int, default=None, help="the reviewer's iterations (default the preset's)"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--levels", default="", help="';'-separated specs instead of the table's levels")
    p.add_argument("--json", default="", help="write every game's figures here")
    p.add_argument("--table", default="", help="a rating table file instead of the shipped one")
    args = p.parse_args(argv)

    table = read_table(args.table) if args.table else load_table(args.game, args.players)
    if table is None:
        raise SystemExit(f"no rating table for {args.game} with {args.players} players")
    rated = {b.spec: b for b in table.bots}
    curve = {b.spec: i for i, b in enumerate(table.levels)}
    specs = [s for s in args.levels.split(";") if s] if args.levels else [b.spec for b in table.bots]
    who = reviewer(args.preset, args.iterations)
    tasks = [
        (
            args.game,
            args.players,
            spec,
            args.opponent,
            derive_seed(args.seed, "deal", g),
            g % args.players,
            who,
            args.seed,
        )
        for g in range(args.games)
        for spec in specs
    ]
    print(
        f"{args.game}, {args.players} players: {len(specs)} levels x {args.games} games against "
        f"{args.opponent}; reviewer {who.name} ({who.iterations} iterations), seed {args.seed}, "
        f"{args.workers} workers",
        flush=True,
    )
    results: list[dict[str, Any]] = []
    start = time.monotonic()
    with WorkerPool(args.workers, name="review-validation") as pool:
        futures = [pool.submit(play_and_review, t) for t in tasks]
        for n, f in enumerate(as_completed(futures), 1):
            results.append(f.result())
            if n % max(1, len(tasks) // 20) == 0:
                print(
                    f"  {n}/{len(tasks)} games, {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True
                )
    rows = []
    xs: list[float] = []
    order: list[float] = []
    ys: list[float] = []
    for spec in specs:
        mine = [r for r in results if r["level"] == spec]
        losses = [x for r in mine for x in r["losses"]]
        grades = [g for r in mine for g in r["grades"]]
        moves = len(losses)
        acc = game_accuracy(r["accuracy"] for r in mine)
        bot = rated.get(spec)
        rating = bot.rating if bot is not None else float("nan")
        name = bot.name if bot is not None else spec
        rows.append(
            (
                name,
                f"{rating:.0f}",
                moves,
                f"{acc:.1f}",
                f"{statistics.fmean(losses):.4f}" if losses else "-",
                f"{100 * grades.count('blunder') / max(1, moves):.1f}",
                f"{100 * grades.count('mistake') / max(1, moves):.1f}",
                f"{100 * grades.count('best') / max(1, moves):.0f}%",
                f"{sum(r['won'] for r in mine)}/{len(mine)}",
            )
        )
        if bot is not None:
            xs.append(rating)
            ys.append(acc)
            order.append(curve.get(spec, -1))
    print_table(
        ("level", "rating", "moves", "accuracy", "mean loss", "blunders/100", "mistakes/100", "best", "won"),
        rows,
    )
    rho = spearman(xs, ys)
    on_curve = [(o, y) for o, y in zip(order, ys, strict=True) if o >= 0]
    rho_curve = spearman([o for o, _ in on_curve], [y for _, y in on_curve])
    print(f"\nSpearman rho, accuracy against the table's ratings ({len(xs)} bots): {rho:.3f}")
    print(
        f"Spearman rho, accuracy against the strength curve's order ({len(on_curve)} levels): {rho_curve:.3f}"
    )
    moves = sum(len(r["losses"]) for r in results)
    review_cpu = sum(r["review_cpu"] for r in results)
    print(
        f"review cost: {review_cpu:.1f} s of CPU for {moves} moves, "
        f"{1000 * review_cpu / max(1, moves):.1f} ms per move; games "
        f"{sum(r['play_cpu'] for r in results):.1f} s; wall {time.monotonic() - start:.0f} s"
    )
    print("grades in the order", ", ".join(GRADES))
    if args.json:
        Path(args.json).write_text(
            json.dumps({"args": vars(args), "rho": rho, "rho_curve": rho_curve, "games": results})
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
