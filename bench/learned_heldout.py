"""Model files and the game's heuristic on the same held-out games: replays the held-out games
of a ``heka train`` run (same game, players, games, seed and bot: the same deals, moves and
samples, ``learn/train.py``) and prints each model's log-loss and accuracy on decided labels,
with the heuristic's sign accuracy (which reads the whole state). Needs numpy (``learn/``).

    .venv/bin/python bench/learned_heldout.py --game osirium --players 2 --games 300 --seed 2 \
        --bot "mcts:easy,ms=none" ai/models/osirium-2p.json /tmp/models2/osirium-2p.json

Used to tell whether a retrained model predicts outcomes better than the shipped one on both
runs' held-out games (bench/results/notes/2026-12-01-expert-tuning.md). Any model file
(linear or network, ``seat`` or ``table`` inputs). With ``--samples FILE`` (written by
``heka train --samples`` for the same self-play), the held-out samples are read, not replayed.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.learned import MLP_MODEL, TABLE_INPUTS, Model, load_model, sigmoid
from learn.train import DEFAULT_BOT, Dataset, TrainConfig, load_samples, play_game


def chance(m: Model, x: list[float]) -> float:
    """The model's chance for the inputs ``x`` (as ``ai.learned.LearnedEvaluation``)."""
    if m.kind != MLP_MODEL:
        return sigmoid(m.bias + sum(w * f for w, f in zip(m.weights, x, strict=True)))
    z = m.bias
    for w, unit, b in zip(m.weights, m.hidden, m.hidden_bias, strict=True):
        z += w * math.tanh(b + sum(u * f for u, f in zip(unit, x, strict=True)))
    return sigmoid(z)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="aton")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--games", type=int, required=True, help="the training run's --games")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bot", default=DEFAULT_BOT)
    ap.add_argument("--holdout", type=float, default=0.2)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument(
        "--samples", type=Path, default=None, help="the run's samples file (heka train --samples)"
    )
    ap.add_argument("models", nargs="+", help="model files to compare")
    args = ap.parse_args()
    config = TrainConfig(
        args.game, args.players, args.games, args.seed, args.bot, every=args.every, holdout=args.holdout
    )
    held_out = sorted(random.Random(args.seed).sample(range(args.games), round(args.games * args.holdout)))
    data = Dataset()
    if args.samples is not None:
        every = load_samples(args.samples, config)
        keep = set(held_out)
        for k, g in enumerate(every.games):
            if g in keep:
                data.features.append(every.features[k])
                data.tables.append(every.tables[k])
                data.labels.append(every.labels[k])
                data.heuristic.append(every.heuristic[k])
    else:
        for i in held_out:
            play_game(config, i, data)
    y = data.labels
    decided = [i for i in range(len(y)) if y[i] != 0.5]
    print(
        f"{args.game} {args.players}p: the {len(held_out)} held-out games of "
        f"`heka train --games {args.games} --seed {args.seed} --bot {args.bot}`, {len(y)} samples"
    )
    h = data.heuristic
    print(f"  heuristic sign: accuracy {sum((h[i] > 0) == (y[i] > 0.5) for i in decided) / len(decided):.3f}")
    for path in args.models:
        m = load_model(path)
        p = [
            chance(m, r + t if m.inputs == TABLE_INPUTS else r)
            for r, t in zip(data.features, data.tables, strict=True)
        ]
        loss = 0.0
        for t, q in zip(y, p, strict=True):
            loss -= t * math.log(max(q, 1e-12)) + (1 - t) * math.log(max(1 - q, 1e-12))
        loss /= len(y)
        acc = sum((p[i] > 0.5) == (y[i] > 0.5) for i in decided) / len(decided)
        print(f"  {path}: log-loss {loss:.4f}, accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
