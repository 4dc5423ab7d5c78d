"""``heka train``: fit the learned evaluation of a game and player count from self-play
(:mod:`learn.train`; needs numpy: ``pip install 'heka[train]'``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from service.commands.files import nonempty
from service.commands.options import game_name, games_count, seconds_up_to, seed_value
from service.ray_runner import MAX_CONNECT_SECONDS


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "train",
        help="train the learned evaluation (mcts:expert) from self-play games",
        description="Play seeded self-play games, sample positions, fit a logistic model of each "
        "seat's chance to win from its view's features (L2, held-out games for the metrics) and "
        "write the model file the expert preset reads (docs/training.md). Needs numpy "
        "(pip install 'heka[train]'). The same arguments give the same file.",
    )
    p.add_argument("--game", default="aton", type=game_name, help="game name (default: aton)")
    p.add_argument("--players", type=int, default=2, help="player count (default: 2)")
    p.add_argument("--games", type=games_count, default=200, help="self-play games (default: 200)")
    p.add_argument("--seed", type=seed_value, default=1, help="seed of the deals and the bots (default: 1)")
    p.add_argument(
        "--bot",
        default=None,
        type=nonempty,
        help="self-play bot spec, every seat (default: mcts:iterations=100,ms=none; keep it "
        "iteration-budgeted for a reproducible run)",
    )
    p.add_argument("--every", type=int, default=4, help="sample a position every N plies (default: 4)")
    p.add_argument(
        "--l2", type=float, default=0.01, help="L2 penalty on standardised weights (default: 0.01)"
    )
    p.add_argument(
        "--holdout",
        type=float,
        default=0.2,
        help="fraction of the games held out for the metrics (default: 0.2)",
    )
    p.add_argument(
        "--model",
        choices=("linear", "mlp"),
        default="linear",
        help="linear: logistic regression (default); mlp: one hidden layer of --hidden tanh units",
    )
    p.add_argument("--hidden", type=int, default=None, help="hidden units of an mlp model (default: 16)")
    p.add_argument(
        "--inputs",
        choices=("seat", "table"),
        default="seat",
        help="seat: the seat's own features (default); table: also every other seat's public row",
    )
    p.add_argument(
        "--search-weight",
        type=float,
        default=0.0,
        metavar="W",
        help="share of a sample's label taken from the self-play bot's searched value of the "
        "position, where it searched for the seat (default 0: the game's outcome only)",
    )
    p.add_argument(
        "--samples",
        metavar="PATH",
        default=None,
        type=nonempty,
        help="samples file: read the self-play's samples from it when it exists (same game, "
        "players, games, seed, bot and --every), else write them there; several fits then "
        "share one self-play",
    )
    p.add_argument(
        "--out",
        default=None,
        type=nonempty,
        metavar="PATH",
        help="model file to write (default: heka-results/models/GAME-Pp.json; the expert preset "
        "reads GAME-Pp.json in ai/models/ or $HEKA_MODEL_DIR: --ship)",
    )
    p.add_argument(
        "--ship",
        action="store_true",
        help="write the model where the expert preset reads it (GAME-Pp.json in ai/models/ or "
        "$HEKA_MODEL_DIR), replacing the shipped one (instead of --out)",
    )
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        type=nonempty,
        help="play the self-play games as Ray tasks (the ray extra; docs/ray.md): 'local' or a "
        "ray.init address ('auto', HOST:6379, ray://HOST:10001); the same model file",
    )
    p.add_argument(
        "--ray-timeout",
        metavar="SECONDS",
        type=seconds_up_to(MAX_CONNECT_SECONDS),
        default=None,
        help="with --ray ADDRESS: how long the cluster may take to answer before the command "
        "gives up, exit 2 (default: 30). At most 86,400 (a day)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from learn.train import DEFAULT_BOT, Dataset, TrainConfig, format_summary, train
    except ImportError as exc:
        print(
            f"heka train: needs the training extra ({exc}): numpy and learn/, from a source "
            "checkout: pip install -e '.[train]'",
            file=sys.stderr,
        )
        return 2
    from ai.api import BotSpecError
    from ai.learned import ModelError
    from engine import EngineError
    from service.commands.arena import ProgressBar
    from service.commands.files import FileArgError, check_distinct, check_writable, write_text

    if args.hidden is not None and args.model != "mlp":
        print(
            "heka train: --hidden goes with --model mlp (a linear model has no hidden layer)", file=sys.stderr
        )
        return 2
    config = TrainConfig(
        game=args.game,
        players=args.players,
        games=args.games,
        seed=args.seed,
        bot=args.bot or DEFAULT_BOT,
        every=args.every,
        l2=args.l2,
        holdout=args.holdout,
        model=args.model,
        inputs=args.inputs,
        search_weight=args.search_weight,
        **({} if args.hidden is None else {"hidden": args.hidden}),  # else TrainConfig's default
    )
    if args.ray_timeout is not None and not args.ray:
        print("heka train: --ray-timeout goes with --ray ADDRESS", file=sys.stderr)
        return 2
    if args.ship and args.out:
        print("heka train: --ship writes the shipped model: no --out", file=sys.stderr)
        return 2
    path = output_path(args)
    try:
        check_distinct([("--samples", args.samples or ""), ("--out" if args.out else "the model", path)])
        check_writable(path, "--out" if args.out else "the model")
        if args.samples and not os.path.isfile(args.samples):  # written after the self-play
            check_writable(args.samples, "--samples")
    except FileArgError as exc:
        print(f"heka train: {exc}", file=sys.stderr)
        return 2
    print(f"heka train: {config.command()}", file=sys.stderr)

    def progress(done: int, data: Dataset) -> None:
        bar.update(done, f"{data.positions} positions")

    with contextlib.ExitStack() as stack:
        runner = None
        if args.ray:  # service/ray_runner.py: the same self-play games as Ray tasks
            from service import ray_runner as ray_games

            try:
                cpus = stack.enter_context(
                    ray_games.ray_session(args.ray, timeout=ray_games.timeout(args.ray_timeout))
                )
                runner = ray_games.train_runner()
            except ray_games.RayUnavailable as exc:
                print(f"heka train: {exc}", file=sys.stderr)
                return 2
            print(f"heka train: playing on {ray_games.describe_cluster(args.ray, cpus)}", file=sys.stderr)
        bar = ProgressBar(config.games, enabled=not args.no_progress)
        try:
            text, summary = train(config, progress, runner, Path(args.samples) if args.samples else None)
        except (EngineError, BotSpecError, ModelError, ValueError) as exc:
            print(f"heka train: {exc}", file=sys.stderr)
            return 2
    try:
        write_text(path, text)
    except OSError as exc:
        print(f"heka train: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return 1
    print(format_summary(config, summary, path))
    return 0


def output_path(args: argparse.Namespace) -> str:
    """Where the model goes: ``--out``, the expert preset's file with ``--ship``, else under
    heka-results/ (never a tracked file by default)."""
    from ai.learned import model_path
    from service.commands.outputs import default_path

    if args.out:
        return str(args.out)
    if args.ship:
        return str(model_path(args.game, args.players))
    return default_path(os.path.join("models", f"{args.game}-{args.players}p.json"))
