"""MCTS iterations per second on fixed positions of Aton and Osirium (no assertions).

Positions: for each game a seeded random game is played to its end (length L plies);
*opening*, *middle* and *late* are the first positions with a real choice at plies 0,
L/2 and 0.85·L. Each position is searched ``--runs`` times with ``--iterations``
iterations on one process (default evaluation unless ``--spec`` says otherwise); the
median iterations/s is printed. Then the middle positions are searched with
``workers=2`` (root parallelism, total iterations over wall time) to show the speed-up.

    .venv/bin/python bench/mcts_speed.py                 # both games, defaults
    .venv/bin/python bench/mcts_speed.py --games aton --iterations 3000 --runs 7
    .venv/bin/python bench/mcts_speed.py --spec "cutoff=end"   # full random rollouts
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.mcts import make_mcts
from engine import get_game
from engine.core import State


def fixed_positions(game: str, players: int, seed: int) -> dict[str, tuple[int, State]]:
    g = get_game(game)
    rng = random.Random(seed)
    probe = g.new_initial_state(players, seed)
    actions = []
    while not probe.is_terminal():
        a = rng.choice(probe.legal_actions())
        actions.append(a)
        probe.apply(a)
    length = len(actions)
    out: dict[str, tuple[int, State]] = {}
    for name, frac in (("opening", 0.0), ("middle", 0.5), ("late", 0.85)):
        s = g.new_initial_state(players, seed)
        i = 0
        while i < len(actions) and (i < int(frac * length) or len(s.legal_actions()) < 2):
            s.apply(actions[i])
            i += 1
        out[name] = (i, s)
    return out


def measure(state: State, spec: str, runs: int, seed: int) -> tuple[float, float, int]:
    """Median iterations per wall-clock second and per CPU second of this process."""
    rates = []
    cpu_rates = []
    iterations = 0
    for r in range(runs):
        bot = make_mcts(spec)
        t0 = time.perf_counter()
        c0 = time.process_time()
        d = bot.choose(state, seed=seed + r)
        cpu = time.process_time() - c0
        wall = time.perf_counter() - t0
        iterations = d.diagnostics.iterations
        rates.append(iterations / wall)
        cpu_rates.append(iterations / cpu if cpu > 0 else 0.0)
    return statistics.median(rates), statistics.median(cpu_rates), iterations


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="aton,osirium")
    ap.add_argument("--players", type=int, default=2, help="Osirium player count")
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--spec", default="", help="extra mcts parameters, e.g. 'cutoff=end,c=1.0'")
    ap.add_argument("--no-workers", action="store_true", help="skip the workers=2 measurement")
    args = ap.parse_args()
    extra = ("," + args.spec) if args.spec else ""
    spec = f"iterations={args.iterations}{extra}"
    print(f"mcts spec: {spec}   runs: {args.runs} (median)   seed: {args.seed}")
    print("it/s: iterations per wall-clock second; it/cpu-s: per CPU second of the process")
    print("(the two agree on an idle machine; on a loaded one the CPU figure is the engine's speed)")
    print(f"{'game':<12} {'position':<9} {'ply':>5} {'decision':<9} {'legal':>5} {'it/s':>9} {'it/cpu-s':>9}")
    middles: dict[str, State] = {}
    for game in args.games.split(","):
        players = args.players if game == "osirium" else 2
        label = f"{game} {players}p"
        for name, (ply, s) in fixed_positions(game, players, args.seed).items():
            rate, cpu_rate, _ = measure(s, spec, args.runs, args.seed)
            legal, what = len(s.legal_actions()), s.decision()
            print(f"{label:<12} {name:<9} {ply:>5} {what:<9} {legal:>5} {rate:>9.0f} {cpu_rate:>9.0f}")
            if name == "middle":
                middles[label] = s
    if args.no_workers:
        return
    print()
    print(f"root parallelism on the middle positions ({args.runs} runs, median; total iterations / wall)")
    for label, s in middles.items():
        one, _, _ = measure(s, spec, args.runs, args.seed)
        two, _, n = measure(s, spec + ",workers=2", args.runs, args.seed)
        print(
            f"{label:<12} workers=1 {one:>8.0f} it/s   workers=2 {two:>8.0f} it/s ({n} it)   "
            f"speed-up x{two / one:.2f}"
        )


if __name__ == "__main__":
    main()
