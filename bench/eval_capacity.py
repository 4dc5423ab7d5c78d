"""How much the learned evaluation's features can tell: held-out prediction of game outcomes
by models of growing capacity over the same view features (no assertions).

Plays ``--games`` self-play games exactly as ``heka train`` does (``learn/train.py``: the same
bot, deals, sampling every 4th ply, one sample per seat labelled by its final return), holds
out a seeded fifth of the games, whole, and fits on the rest:

* logistic regression over the seat's own features (the shipped model's form);
* the same over the seat's features and the other seats' (in seat order after it): their
  whole rows, their own hands and secrets included, so these lines peek and bound what no
  seat could use (``heka train --inputs table`` keeps what the other seats show the table);
* small neural networks (16, and 32×16 hidden units) over both;
* gradient-boosted trees over both — a model of much larger capacity than anything the
  search could afford at its cut-off: a ceiling for what these features hold.

Each line gives the held-out log-loss and accuracy (decided labels, ``P > 0.5``); also the
game's heuristic sign (which reads the whole state) and the shipped model file on the same
samples. Needs numpy and scikit-learn in the venv (``.venv/bin/pip install scikit-learn``: a
bench tool, not a dependency of heka's). The played games are cached (``--cache``).

    .venv/bin/python bench/eval_capacity.py --game osirium --players 2 --games 2000 --seed 11
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from ai.learned import load_model, model_path
from learn.train import DEFAULT_BOT, Dataset, TrainConfig, play_game


def dataset(args: argparse.Namespace) -> Dataset:
    bot = args.bot.replace(":", "-").replace(",", "-")
    name = f"{args.game}{args.players}_{args.games}_{args.seed}_{bot}.pkl"
    cache = Path(args.cache) / name
    if cache.exists():
        with cache.open("rb") as f:
            data: Dataset = pickle.load(f)
        print(f"games from {cache}")
        return data
    config = TrainConfig(args.game, args.players, args.games, args.seed, args.bot)
    data = Dataset()
    t0 = time.perf_counter()
    for i in range(args.games):
        play_game(config, i, data)
        if (i + 1) % 100 == 0:
            print(
                f"  {i + 1}/{args.games} games, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True
            )
    print(f"self-play: {args.games} games of {args.bot}, {time.perf_counter() - t0:.0f} s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("wb") as f:
        pickle.dump(data, f)
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="osirium")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--bot", default=DEFAULT_BOT)
    ap.add_argument("--cache", default="/tmp/heka-eval-capacity")
    args = ap.parse_args()
    # One thread: the boosted trees' OpenMP threads crawl on a loaded 2-core machine.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        sys.exit("bench/eval_capacity.py needs scikit-learn: .venv/bin/pip install scikit-learn")
    warnings.filterwarnings("ignore")

    data = dataset(args)
    n = args.players
    x = np.asarray(data.features, dtype=np.float64)
    y = np.asarray(data.labels, dtype=np.float64)
    g = np.asarray(data.games)
    h = np.asarray(data.heuristic, dtype=np.float64)
    k = x.shape[1]
    # Samples come n at a time (one per seat, seat order) for each sampled position.
    per_position = x.reshape(-1, n, k)
    rolled = [np.roll(per_position, -j, axis=1) for j in range(1, n)]
    others = np.concatenate(rolled, axis=2).reshape(-1, k * (n - 1))
    both = np.hstack([x, others])
    held = set(random.Random(args.seed).sample(range(args.games), args.games // 5))
    test = np.isin(g, sorted(held))
    train = ~test
    decided = test & (y != 0.5)
    won = (y > 0.5).astype(int)
    print(
        f"{args.game} {n}p: {args.games} games, {len(y)} samples ({k} features per seat); "
        f"held out {len(held)} games, {int(test.sum())} samples"
    )

    def line(name: str, p: Any) -> None:
        q = np.clip(p[test], 1e-9, 1 - 1e-9)
        loss = float(-np.mean(y[test] * np.log(q) + (1 - y[test]) * np.log(1 - q)))
        acc = float(np.mean((p[decided] > 0.5) == (y[decided] > 0.5)))
        print(f"  {name:52s} log-loss {loss:.4f}  accuracy {acc:.3f}", flush=True)

    base = float(np.mean(y[train]))
    line("constant", np.full(len(y), base))
    sign = float(np.mean((h[decided] > 0) == (y[decided] > 0.5)))
    print(f"  {'heuristic sign (reads the whole state)':52s} {'':16s}  accuracy {sign:.3f}")
    try:
        model = load_model(model_path(args.game, n))
        w = np.asarray(model.weights)
        line(f"shipped model ({model_path(args.game, n).name})", 1.0 / (1.0 + np.exp(-(x @ w + model.bias))))
    except Exception as e:  # the comparison is optional
        print(f"  shipped model: not read ({e})")
    fits: list[tuple[str, Any, Any]] = [
        (
            "logistic, own features",
            x,
            make_pipeline(StandardScaler(), LogisticRegression(C=10, max_iter=3000)),
        ),
        (
            "logistic, own + others'",
            both,
            make_pipeline(StandardScaler(), LogisticRegression(C=10, max_iter=3000)),
        ),
        (
            "network 16 hidden, own + others'",
            both,
            make_pipeline(
                StandardScaler(),
                MLPClassifier((16,), alpha=1e-3, early_stopping=True, max_iter=500, random_state=args.seed),
            ),
        ),
        (
            "network 32x16 hidden, own + others'",
            both,
            make_pipeline(
                StandardScaler(),
                MLPClassifier(
                    (32, 16), alpha=1e-3, early_stopping=True, max_iter=500, random_state=args.seed
                ),
            ),
        ),
        (
            "gradient-boosted trees (ceiling), own + others'",
            both,
            HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, random_state=args.seed),
        ),
    ]
    for name, z, m in fits:
        t0 = time.perf_counter()
        m.fit(z[train], won[train])
        line(f"{name} ({time.perf_counter() - t0:.0f} s)", m.predict_proba(z)[:, 1])
    if not math.isfinite(base):
        sys.exit("no samples")


if __name__ == "__main__":
    main()
