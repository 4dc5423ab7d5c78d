"""The compiled build against the pure-Python one: engine speed, search speed, bot latency.

Usage::

    .venv/bin/python bench/builds.py [--rounds 3] [--quick]

Every figure is measured in child processes, one per build (``HEKA_PURE_PYTHON=1`` for the
pure-Python one, ``engine/_build.py``), the two builds interleaved ``--rounds`` times in the
same run; the table shows medians and the ratio compiled / pure. Rates are per CPU second of
the child (on a loaded machine the CPU figure is the code's speed; wall-clock is printed too).

* engine: complete random games played by :func:`engine.core.playout` (the loop of the
  search's rollouts: ``legal_actions``, a uniform draw ``legal[int(rng.random() *
  len(legal))]``, the fast-path ``apply``, until the end), including each game's setup
  (``new_initial_state``: the keyed chance, the shuffles), actions per second, Aton,
  Osirium 2p and 4p. (The figures of code c6d2181, kept as "before" in
  ``bench/results/notes/2026-12-01-compiled-build.md``,
  came from a loop written here in Python with ``random.choice``, as
  ``bench/aton_speed.py`` still does: the compiled build ran that loop in the
  interpreter, which the search's rollouts never did);
* search: MCTS iterations per second with the default knowledge on three positions of a
  seeded game (opening, middle, late; ``bench/mcts_speed.py``), Aton, Osirium 2p and 4p;
* latency: the time per decision of each preset on mid-game positions, "before" (the
  pure-Python build with the presets of before the compiled build: easy 200, medium 1,000,
  hard 4,000 iterations) and "after" (the compiled build with today's presets), iteration
  budgets without the millisecond caps (``ms=none``), so both decide the same way on any
  machine; wall-clock milliseconds per decision.

A benchmark: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIGS = (("aton", 2), ("osirium", 2), ("osirium", 4))
OLD_PRESETS = {"easy": 200, "medium": 1000, "hard": 4000}


# ---------------------------------------------------------------------------------------
# Child: measures one thing in the build it was started with
# ---------------------------------------------------------------------------------------


def child_engine(games: int) -> dict[str, object]:
    from engine import get_game
    from engine.core import playout

    out: dict[str, object] = {}
    for game, players in CONFIGS:
        g = get_game(game)
        rng = random.Random(1)
        actions = 0
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(games):
            actions += playout(g.new_initial_state(players, 1000 + i), rng)
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        out[f"{game} {players}p"] = (actions / cpu, actions / wall)
    return out


def child_search(iterations: int) -> dict[str, object]:
    from ai.mcts import make_mcts
    from bench.mcts_speed import fixed_positions

    out: dict[str, object] = {}
    for game, players in CONFIGS:
        its, cpu, wall = 0, 0.0, 0.0
        for _, state in fixed_positions(game, players, 7).values():
            bot = make_mcts(f"iterations={iterations},ms=none,early_stop=off")
            t0, c0 = time.perf_counter(), time.process_time()
            its += bot.choose(state, seed=3).diagnostics.iterations
            cpu += time.process_time() - c0
            wall += time.perf_counter() - t0
        out[f"{game} {players}p"] = (its / cpu, its / wall)
    return out


def child_latency(presets: str, positions: int) -> dict[str, object]:
    from ai.api import make_bot
    from engine import get_game

    budgets = json.loads(presets)
    out: dict[str, object] = {}
    for game, players in CONFIGS:
        g = get_game(game)
        states = []
        for i in range(positions):
            s = g.new_initial_state(players, 2000 + i)
            rng = random.Random(i)
            for _ in range(40 if game == "aton" else 30 * players):
                if s.is_terminal():
                    break
                s.apply(rng.choice(s.legal_actions()))
            while not s.is_terminal() and len(s.legal_actions()) < 3:
                s.apply(s.legal_actions()[0])
            if not s.is_terminal():
                states.append(s)
        for name, iterations in budgets.items():
            bot = make_bot(f"mcts:iterations={iterations},ms=none")
            times = []
            for i, s in enumerate(states):
                t0 = time.perf_counter()
                bot.choose(s, seed=i)
                times.append(time.perf_counter() - t0)
            out[f"{game} {players}p {name}"] = (1000 * statistics.median(times), 0.0)
    return out


# ---------------------------------------------------------------------------------------
# Parent: interleaves the builds, prints medians and ratios
# ---------------------------------------------------------------------------------------


def run_child(pure: bool, *args: str) -> dict[str, list[float]]:
    env = {k: v for k, v in os.environ.items() if k != "HEKA_PURE_PYTHON"}
    if pure:
        env["HEKA_PURE_PYTHON"] = "1"
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, env=env, check=True
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    build = result.pop("build")
    assert build == ["pure" if pure else "compiled"], (build, "make compile first")
    return result


def table(title: str, unit: str, runs: list[tuple[dict[str, list[float]], dict[str, list[float]]]]) -> None:
    print(f"\n{title}")
    print(f"  {'':24s} {'pure ' + unit:>18s} {'compiled ' + unit:>20s} {'compiled/pure':>14s}   (wall)")
    for key in runs[0][0]:
        pure = statistics.median(r[0][key][0] for r in runs)
        comp = statistics.median(r[1][key][0] for r in runs)
        pw = statistics.median(r[0][key][1] for r in runs)
        cw = statistics.median(r[1][key][1] for r in runs)
        print(f"  {key:24s} {pure:18,.0f} {comp:20,.0f} {comp / pure:13.2f}x   ({pw:,.0f}, {cw:,.0f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per build (default 3)")
    ap.add_argument("--quick", action="store_true", help="short runs (a smoke test of the script)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    games, iterations, positions = (10, 300, 2) if args.quick else (150, 3000, 4)
    if args.child:
        import engine

        kind, *rest = args.child
        if kind == "engine":
            result = child_engine(int(rest[0]))
        elif kind == "search":
            result = child_search(int(rest[0]))
        else:
            result = child_latency(rest[0], int(rest[1]))
        result["build"] = [engine.build()]
        print(json.dumps(result))
        return 0

    from ai.presets import PRESETS

    new_presets = json.dumps({k: b.iterations for k, b in PRESETS.items()})
    old_presets = json.dumps(OLD_PRESETS)
    engine_runs, search_runs, latency_runs = [], [], []
    for r in range(args.rounds):
        print(f"# round {r + 1}/{args.rounds}", flush=True)
        engine_runs.append((run_child(True, "engine", str(games)), run_child(False, "engine", str(games))))
        search_runs.append(
            (run_child(True, "search", str(iterations)), run_child(False, "search", str(iterations)))
        )
        latency_runs.append(
            (
                run_child(True, "latency", old_presets, str(positions)),
                run_child(False, "latency", new_presets, str(positions)),
            )
        )
    table(f"engine: random games, actions per CPU second ({games} games each)", "act/s", engine_runs)
    table(f"search: MCTS iterations per CPU second ({iterations} per position, 3 each)", "it/s", search_runs)
    print(f"\nbot move latency per preset, median ms per decision ({positions} mid-game positions), ms=none")
    print(f"  before: pure-Python build, presets {OLD_PRESETS}")
    print(f"  after:  compiled build, presets {json.loads(new_presets)}")
    print(f"  {'':24s} {'before ms':>12s} {'after ms':>12s} {'after/before':>13s}")
    for key in latency_runs[0][0]:
        before = statistics.median(r[0][key][0] for r in latency_runs)
        after = statistics.median(r[1][key][0] for r in latency_runs)
        print(f"  {key:24s} {before:12.0f} {after:12.0f} {after / before:12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
