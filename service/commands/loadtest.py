"""``heka loadtest``: load a running heka server with one of the shared scenarios and
print a ghz-style report (or ``--json``).

Examples::

    heka loadtest --scenario cheap --rate 200 --duration 30s --connections 4
    heka loadtest --scenario bot --difficulty medium --concurrency 2 --duration 1m
    heka loadtest --scenario play --game aton --bot mcts --difficulty easy --concurrency 4

A call the server refuses with a retry hint (RESOURCE_EXHAUSTED or UNAVAILABLE with
``RetryInfo``: load it shed) is reported as shed, not as an error, and sent again after a
jittered backoff (``--no-retry``: such refusals are errors). The report gives the goodput
(bot moves completed per second) next to the request rate.

Exit status: 0 when every RPC succeeded or was shed and retried, 1 when any failed (the
report is printed either way), 2 when the run could not start (bad flags, server
unreachable, setup failed).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from service.commands.files import nonempty

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``"10"``, ``"10s"``, ``"1.5m"``, ``"500ms"``, ``"1h"`` -> seconds (positive)."""
    match = _DURATION.match(text)
    if not match and _DURATION.match(text.strip().removeprefix("-")):
        raise argparse.ArgumentTypeError(f"a duration must be positive, not {text!r}")
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30s, 2m, 500ms)")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"a duration must be positive, not {text!r}")
    return seconds


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "loadtest",
        help="load a running server with a scenario and report latency per RPC",
        description="Load a running heka server with one scenario at a fixed rate (open loop) or a "
        "fixed concurrency (closed loop) for a duration, over one or more connections; print a "
        "live progress line on stderr and a final report (counts, rates, latency histogram and "
        "percentiles per RPC, status codes, errors). Scenarios: play = frontends playing "
        "complete games against bots; bot = BotMove only at one difficulty; cheap = cheap calls "
        "only (no search).",
    )
    p.add_argument(
        "--target", type=nonempty, default="127.0.0.1:50051", help="server address (default: 127.0.0.1:50051)"
    )
    p.add_argument("--scenario", choices=("play", "bot", "cheap"), default="cheap", help="default: cheap")
    load = p.add_mutually_exclusive_group()
    load.add_argument("--rate", type=float, help="open loop: start this many tasks per second")
    load.add_argument(
        "--concurrency", type=int, help="closed loop: this many workers, one task at a time (default: 4)"
    )
    p.add_argument(
        "--duration", type=parse_duration, default=10.0, help="how long to load: 30s, 2m... (default: 10s)"
    )
    p.add_argument(
        "--warmup",
        type=parse_duration,
        default=None,
        help="the same load for this long first, not in the report: 5s... (default: none)",
    )
    p.add_argument("--connections", type=int, default=1, help="gRPC channels (TCP connections) (default: 1)")
    p.add_argument("--timeout", type=parse_duration, default=30.0, help="deadline of each RPC (default: 30s)")
    p.add_argument(
        "--max-in-flight", type=int, default=1000, help="open loop: most outstanding tasks (default: 1000)"
    )
    p.add_argument(
        "--end-grace",
        type=parse_duration,
        default=None,
        help="open loop: after the window, abandon the tasks still running after this long (a call "
        "waiting in the server's queue, a backoff), so that the rates are the window's: 1s... "
        "(default: await them)",
    )
    p.add_argument(
        "--game", action="append", default=None, help="game(s) to play, repeatable (default: aton)"
    )
    p.add_argument("--players", type=int, default=0, help="players per game (default: the game's minimum)")
    p.add_argument("--bot", choices=("random", "greedy", "mcts"), default="mcts", help="bot (default: mcts)")
    p.add_argument(
        "--difficulty",
        choices=("easy", "medium", "hard", "expert"),
        default="easy",
        help="MCTS preset (default: easy)",
    )
    p.add_argument(
        "--bot-rpc",
        choices=("ApplyAction", "AdvanceBots", "BotMove"),
        default="ApplyAction",
        help="play: how frontends move the bot seats: inside CreateGame and ApplyAction (one call per "
        "move of the person; the default), with AdvanceBots, or with BotMove",
    )
    p.add_argument(
        "--pool", type=int, default=16, help="bot/cheap: mid-game states prepared first (default: 16)"
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the scenario's choices (default: 1)")
    p.add_argument(
        "--no-retry",
        action="store_true",
        help="count refusals with a retry hint (shed load) as errors instead of backing off and "
        "sending the call again",
    )
    p.add_argument(
        "--max-retries",
        type=int,
        default=20,
        help="refusals in a row after which a task gives up (default: 20)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--no-progress", action="store_true", help="no live progress line on stderr")
    p.set_defaults(func=run)


def _check_flags(args: argparse.Namespace) -> None:
    """Each bad flag named before any connection (ValueError)."""
    import math

    from engine import get_game

    if args.end_grace is not None and args.rate is None:
        raise ValueError("--end-grace goes with --rate (an open loop)")
    if args.rate is not None and not (math.isfinite(args.rate) and args.rate > 0):
        raise ValueError(f"--rate must be a number of tasks per second above 0, not {args.rate:g}")
    for flag, value, low in (
        ("--concurrency", args.concurrency, 1),
        ("--connections", args.connections, 1),
        ("--max-in-flight", args.max_in_flight, 1),
        ("--pool", args.pool, 1),
        ("--max-retries", args.max_retries, 0),
        ("--players", args.players, 0),
    ):
        if value is not None and value < low:
            raise ValueError(f"{flag} must be at least {low}, not {value}")
    for name in args.game or ("aton",):
        game = get_game(name)  # EngineError (a ValueError): an unknown game, naming the known
        if args.players:
            try:
                game.new_initial_state(args.players, 0, {})
            except ValueError as exc:
                raise ValueError(f"--players {args.players}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    import asyncio

    from service.loadtest.retry import Backoff
    from service.loadtest.runner import LoadSettings, SetupError, run_load
    from service.loadtest.scenarios import ScenarioConfig, make_scenario
    from service.loadtest.stats import build_report, format_report

    try:
        _check_flags(args)
        config = ScenarioConfig(
            games=tuple(args.game or ("aton",)),
            players=args.players,
            bot=args.bot,
            difficulty=args.difficulty,
            bot_rpc=args.bot_rpc,
            pool_size=args.pool,
            seed=args.seed,
        )
        scenario = make_scenario(args.scenario, config)
        concurrency = args.concurrency if args.rate is None and args.concurrency is not None else None
        if args.rate is None and concurrency is None:
            concurrency = 4
        settings = LoadSettings(
            target=args.target,
            rate=args.rate,
            concurrency=concurrency,
            duration=args.duration,
            warmup=args.warmup or 0.0,
            connections=args.connections,
            timeout=args.timeout,
            max_in_flight=args.max_in_flight,
            end_grace=args.end_grace,
            seed=args.seed,
            backoff=None if args.no_retry else Backoff(max_retries=args.max_retries),
        )
    except ValueError as exc:
        print(f"heka loadtest: {exc}", file=sys.stderr)
        return 2

    progress = None if args.no_progress else sys.stderr
    try:
        recorder, elapsed, setup = asyncio.run(run_load(scenario, settings, progress))
    except SetupError as exc:
        print(f"heka loadtest: {exc}", file=sys.stderr)
        return 2
    described = {
        "target": settings.target,
        "scenario": scenario.name,
        "description": scenario.describe(),
        "rate": settings.rate,
        "concurrency": settings.concurrency,
        "duration_seconds": settings.duration,
        "warmup_seconds": settings.warmup,
        "connections": settings.connections,
        "timeout_seconds": settings.timeout,
        "games": list(config.games),
        "players": config.players,
        "bot": config.bot,
        "difficulty": config.difficulty,
        "bot_rpc": config.bot_rpc,
        "seed": config.seed,
        "retry": settings.backoff is not None,
        "setup_rpcs": setup.rpc_count,
    }
    report = build_report(recorder, elapsed, described)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(report))
    sys.stdout.flush()
    return 1 if report["errors"] else 0
