"""Where a compiled search spends its time: a fixed search workload, and the summary of a
sampling profile of it (py-spy, a development tool outside the project's dependencies).

    .venv/bin/pip install py-spy
    .venv/bin/py-spy record --native -r 500 -f raw -o osirium4.txt -- \\
        .venv/bin/python bench/search_profile.py run --game osirium --players 4
    .venv/bin/python bench/search_profile.py summary osirium4.txt

``run``: a seeded position (``--plies`` random actions from deal 7), searched ``--searches``
times by ``mcts:medium`` on ``--iterations`` iterations, in this process. ``summary``: of the
samples inside the search's iterations (``Search.iterate``), the share of each part of an
iteration, inclusive
(a sample counts for every function on its stack), and the functions most often on top
(exclusive). The compiled build's functions appear under their mypyc names
(``CPyDef_module___Class___method``); run with ``HEKA_PURE_PYTHON=1`` for the reference build.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The parts of an iteration, as they appear in a stack (a substring of the frame's name).
PARTS = (
    "sample_consistent_state",
    "playout",
    "legal_actions",
    "legal_action_at",
    "num_legal_actions",
    "apply",
    "evaluate",
    "guided_action",
    "shuffle",
    "clone",
    "gc_collect",
)


def run(args: argparse.Namespace) -> None:
    from ai.api import make_bot
    from engine import get_game

    state = get_game(args.game).new_initial_state(args.players, 7, {})
    rng = random.Random(1)
    for _ in range(args.plies):
        state.apply(rng.choice(state.legal_actions()))
    bot = make_bot(f"mcts:medium,ms=none,iterations={args.iterations}")
    start = time.process_time()
    for i in range(args.searches):
        bot.choose(state, seed=i)
    seconds = time.process_time() - start
    print(f"{args.searches} searches of {args.iterations} iterations: {seconds:.2f} CPU s")


def summary(args: argparse.Namespace) -> None:
    inclusive: Counter[str] = Counter()
    on_top: Counter[str] = Counter()
    total = 0
    for line in Path(args.profile).read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        frames = stack.split(";")
        if not stack or not any("iterate" in f for f in frames):
            continue
        n = int(count)
        total += n
        for part in PARTS:
            if any(part in f for f in frames):
                inclusive[part] += n
        on_top[frames[-1].split(" (")[0]] += n
    print(f"{total} samples inside the search's iterations")
    print("inclusive:")
    for part in PARTS:
        print(f"  {100 * inclusive[part] / max(1, total):5.1f}%  {part}")
    print("on top:")
    for name, n in on_top.most_common(args.top):
        print(f"  {100 * n / max(1, total):5.1f}%  {name}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="the workload to profile")
    r.add_argument("--game", default="osirium")
    r.add_argument("--players", type=int, default=4)
    r.add_argument("--plies", type=int, default=10)
    r.add_argument("--iterations", type=int, default=4000)
    r.add_argument("--searches", type=int, default=4)
    s = sub.add_parser("summary", help="summarise a py-spy raw profile of the workload")
    s.add_argument("profile")
    s.add_argument("--top", type=int, default=15)
    args = p.parse_args()
    run(args) if args.command == "run" else summary(args)


if __name__ == "__main__":
    main()
