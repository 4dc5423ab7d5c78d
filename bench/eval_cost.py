"""What an evaluation costs the search: iterations per CPU second with the heuristic, the
shipped learned models and candidate model directories, in one process.

Each configuration gets ``--positions`` decisions drawn from seeded random games (the
positions of ``bench/search_ab.py``); each evaluation searches them all with ``--spec``
(``eval=`` appended: ``heuristic``, or ``learned`` with ``HEKA_MODEL_DIR`` pointing at the
shipped models or at a candidate directory). The evaluations alternate, ``--runs`` rounds;
the medians and their ratio to the heuristic's are printed. The compiled build is what
serves: run ``make compile`` first.

    .venv/bin/python bench/eval_cost.py --models mlp16=heka-results/lever3/models-mlp
    .venv/bin/python bench/eval_cost.py --configs aton:2 --runs 5 --models a=DIR1 --models b=DIR2

A candidate directory holds a model file per configuration measured (``GAME-Np.json``); the
other configurations' files are taken from the shipped ones, since making an ``eval=learned``
bot checks every model.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ai.api import make_bot  # noqa: E402
from ai.learned import EXPECTED, MODEL_DIR_ENV, model_path  # noqa: E402
from bench.search_ab import positions, search_cost  # noqa: E402


def complete(directory: Path, into: Path) -> Path:
    """``directory``'s model files, the shipped ones where it has none, copied into ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    for game, players in EXPECTED:
        mine = model_path(game, players, directory)
        shutil.copy(mine if mine.exists() else model_path(game, players), model_path(game, players, into))
    return into


def rate(spec: str, states: list[object], model_dir: Path | None) -> float:
    if model_dir is None:
        os.environ.pop(MODEL_DIR_ENV, None)
    else:
        os.environ[MODEL_DIR_ENV] = str(model_dir)
    iterations, cpu = search_cost(make_bot(spec), states)
    return iterations / cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default="aton:2,osirium:2,osirium:3,osirium:4")
    ap.add_argument("--spec", default="mcts:iterations=1000,ms=none")
    ap.add_argument("--positions", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--models", action="append", default=[], metavar="NAME=DIR", help="candidate model directory"
    )
    args = ap.parse_args()
    from engine import build

    print(
        f"# bench/eval_cost.py, build {build()}, spec {args.spec}, "
        f"{args.positions} positions, {args.runs} runs"
    )
    with tempfile.TemporaryDirectory() as tmp:
        evaluations: list[tuple[str, str, Path | None]] = [
            ("heuristic", "heuristic", None),
            ("shipped", "learned", None),
        ]
        for item in args.models:
            name, _, directory = item.partition("=")
            evaluations.append((name, "learned", complete(Path(directory), Path(tmp) / name)))
        for config in args.configs.split(","):
            game, players = config.split(":")
            states = positions(game, int(players), args.positions, args.seed)
            rates: dict[str, list[float]] = {name: [] for name, _, _ in evaluations}
            for _ in range(args.runs):
                for name, evaluation, directory in evaluations:
                    rates[name].append(rate(f"{args.spec},eval={evaluation}", states, directory))
            base = statistics.median(rates["heuristic"])
            cells = []
            for name, _, _ in evaluations:
                m = statistics.median(rates[name])
                cells.append(f"{name} {m:,.0f} it/CPU-s ({m / base:.2f}x)")
            print(f"{game} {players}p: " + ", ".join(cells), flush=True)


if __name__ == "__main__":
    main()
