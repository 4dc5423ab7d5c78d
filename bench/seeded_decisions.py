"""Seeded bot decisions on fixed positions: a fingerprint to compare across commits.

Usage::

    .venv/bin/python bench/seeded_decisions.py > before.txt     # on one commit
    .venv/bin/python bench/seeded_decisions.py > after.txt      # on another
    diff before.txt after.txt                                   # which decisions changed

For 48 seeded positions of each configuration (Aton, Osirium 2p, 4p, 4p teams: random
play from a seeded deal), prints the action chosen by each bot below with a fixed seed:
``mcts:easy`` with iterations only (the default settings; with widening and prior; with
random rollouts to the end; choosing with temperature 1, the rated levels' final choice),
``greedy`` and ``random``. A refactoring that keeps the bots' behaviour keeps every line
(1,152 in all, about a minute; 960 before the temperature line was added). Asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.api import make_bot
from engine import get_game
from engine.core import State

CONFIGS = [("aton", 2, {}), ("osirium", 2, {}), ("osirium", 4, {}), ("osirium", 4, {"teams": True})]
BOTS = [
    "mcts:easy,ms=none",
    "mcts:easy,ms=none,prior=1,widen=1",
    "mcts:easy,ms=none,rollout=random,cutoff=end",
    "mcts:easy,ms=none,temp=1",
    "greedy",
    "random",
]


def positions(game: str, players: int, options: dict[str, bool], count: int) -> list[tuple[int, State, int]]:
    """``count`` positions with a choice: (index, state, plies played from the deal)."""
    g = get_game(game)
    out = []
    for i in range(count):
        s = g.new_initial_state(players, 1000 + i, options)
        rng = random.Random(i)
        played: list[int] = []
        for _ in range(rng.randrange(0, 400 if game == "osirium" else 120)):
            if s.is_terminal():
                break
            played.append(rng.choice(s.legal_actions()))
            s.apply(played[-1])
        while s.is_terminal() or len(s.legal_actions()) < 2:
            if s.is_terminal():
                s, played = g.new_initial_state(players, 5000 + i, options), []
                continue
            played.append(s.legal_actions()[0])
            s.apply(played[-1])
        out.append((i, s, len(played)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=48, help="positions per configuration (default 48)")
    args = ap.parse_args()
    bots = {b: make_bot(b) for b in BOTS}
    for game, players, options in CONFIGS:
        label = f"{game}{players}{'t' if options else ''}"
        for i, s, plies in positions(game, players, options, args.positions):
            for b in BOTS:
                text = s.action_to_string(bots[b].choose(s, seed=7919 * i + 1).action)
                print(f"{label} pos{i:02d} ply{plies:3d} {s.decision():9s} {b:18s} {text}")


if __name__ == "__main__":
    main()
