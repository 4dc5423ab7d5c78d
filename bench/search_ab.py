"""Search and engine speed of this checkout against a baseline checkout, in one run.

Each configuration (Aton, Osirium 2p, 3p, 4p) gets ``--positions`` decisions drawn from
seeded random games (every few plies, from the deal to the end, only real choices), the
same in both checkouts. A *sample* searches each of them once with ``--spec`` (by default
``mcts:medium``, 1,000 iterations, no time cap) and plays ``--playouts`` random games with
the engine's fast path (``engine.core.playout``); it reports iterations per CPU second of
the search, its CPU milliseconds per decision (a preset's time per move on an iteration
budget) and actions per CPU second of the engine. Samples of the two checkouts alternate,
``--runs`` of each, each in a fresh process; the medians and their ratio are printed.

    .venv/bin/python bench/search_ab.py --baseline /path/to/old-checkout
    .venv/bin/python bench/search_ab.py --baseline ../old --configs osirium:4 --runs 5

Both checkouts need their own ``.venv`` and, to compare compiled builds, their compiled
modules (``make venv compile`` in each). Decisions are not compared here
(``bench/seeded_decisions.py``, ``bench/arena_replay.py`` do that); a result JSON is written
with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ("aton:2", "osirium:2", "osirium:3", "osirium:4")
#: What a sample reports, in both checkouts (this script runs in each, on its modules).
_MEASURES = ("it_per_cpu_s", "actions_per_cpu_s", "ms_per_decision")


def positions(game: str, players: int, count: int, seed: int) -> list[object]:
    import random

    from engine import get_game

    g = get_game(game)
    rng = random.Random(seed)
    out: list[object] = []
    deal = 0
    while len(out) < count:
        s = g.new_initial_state(players, seed * 1000 + deal)
        deal += 1
        trail = []
        while not s.is_terminal():
            if len(s.legal_actions()) > 1:
                trail.append(s.clone())
            s.apply(rng.choice(s.legal_actions()))
        step = max(1, len(trail) // 8)
        out.extend(trail[::step][:8])
    return out[:count]


def search_cost(bot: Any, states: list[object]) -> tuple[int, float]:
    """Search every state once with ``bot`` (seed = its index): the iterations and the CPU
    seconds of the searches alone."""
    iterations = 0
    cpu = 0.0
    for i, s in enumerate(states):
        c0 = time.process_time()
        d = bot.choose(s, seed=i)
        cpu += time.process_time() - c0
        iterations += d.diagnostics.iterations
    return iterations, cpu


def sample(args: argparse.Namespace) -> dict[str, Any]:
    """One sample in this process: the search's iterations and the engine's actions per CPU
    second, on this configuration."""
    import random

    from ai.api import make_bot
    from engine import build, get_game
    from engine.core import playout

    game, players = args.config.split(":")
    states = positions(game, int(players), args.positions, args.seed)
    iterations, cpu = search_cost(make_bot(args.spec), states)
    g = get_game(game)
    rng = random.Random(args.seed)
    actions = 0
    c0 = time.process_time()
    for k in range(args.playouts):
        actions += playout(g.new_initial_state(int(players), k), rng)
    engine_cpu = time.process_time() - c0
    return {
        "build": build(),
        "it_per_cpu_s": iterations / cpu,
        "ms_per_decision": 1000 * cpu / len(states),
        "actions_per_cpu_s": actions / engine_cpu,
    }


def run_sample(root: Path, config: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        str(root / ".venv/bin/python"), str(Path(__file__).resolve()), "--sample", "--root", str(root),
        "--config", config, "--spec", args.spec, "--positions", str(args.positions),
        "--playouts", str(args.playouts), "--seed", str(args.seed),
    ]  # fmt: skip
    out = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, help="the checkout to compare with")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--spec", default="mcts:medium,ms=none")
    ap.add_argument("--positions", type=int, default=16)
    ap.add_argument("--playouts", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--sample", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.sample:
        sys.path.insert(0, str(args.root))
        print(json.dumps(sample(args)))
        return
    if args.baseline is None:
        ap.error("--baseline is required")
    checkouts = {"baseline": args.baseline.resolve(), "this": ROOT}
    print(f"spec {args.spec}, {args.positions} positions and {args.playouts} random games per sample, "
          f"{args.runs} samples per checkout (medians); baseline {checkouts['baseline']}")  # fmt: skip
    print(f"{'config':<11} {'search it/cpu-s':>27} {'engine actions/cpu-s':>31} {'CPU ms/decision':>19}")
    print(f"{'':<11} {'baseline':>9} {'this':>8} {'ratio':>8} {'baseline':>11} {'this':>9} {'ratio':>9}"
          f" {'baseline':>9} {'this':>9}")  # fmt: skip
    report: dict[str, object] = {"spec": args.spec, "positions": args.positions, "runs": args.runs}
    report["configs"] = {}
    for config in args.configs.split(","):
        samples: dict[str, list[dict[str, Any]]] = {k: [] for k in checkouts}
        for _ in range(args.runs):
            for name, root in checkouts.items():
                samples[name].append(run_sample(root, config, args))
        med = {
            name: {k: statistics.median(s[k] for s in runs) for k in _MEASURES}
            for name, runs in samples.items()
        }
        b, t = med["baseline"], med["this"]
        print(
            f"{config:<11} {b['it_per_cpu_s']:>9.0f} {t['it_per_cpu_s']:>8.0f} "
            f"{t['it_per_cpu_s'] / b['it_per_cpu_s']:>7.2f}x {b['actions_per_cpu_s']:>11.0f} "
            f"{t['actions_per_cpu_s']:>9.0f} {t['actions_per_cpu_s'] / b['actions_per_cpu_s']:>8.2f}x"
            f" {b['ms_per_decision']:>9.1f} {t['ms_per_decision']:>9.1f}",
            flush=True,
        )
        report["configs"][config] = {"medians": med, "samples": samples}  # type: ignore[index]
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
