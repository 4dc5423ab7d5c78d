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

from service.commands.options import (
    add_tls_client_arguments,
    game_name,
    local_server,
    server_address,
    tls_client,
)

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}

#: The longest duration any flag takes (--duration, --warmup, --timeout, --end-grace): a
#: day, which gRPC deadlines and asyncio's sleeps take as given (far larger ones overflowed a
#: call's deadline into an immediate DEADLINE_EXCEEDED).
MAX_DURATION_SECONDS = 24 * 3600.0
#: The highest --rate: far above what one load process can start (a rate of 1e308 never
#: ended the run).
MAX_RATE = 1_000_000.0
#: The largest value of each integer flag: enough for one load process, not enough to
#: exhaust the machine (tasks, connections, a setup of hours). --max-retries also keeps the
#: backoff's doubling finite.
INT_RANGES: dict[str, tuple[int, int]] = {
    "--concurrency": (1, 10_000),
    "--connections": (1, 256),
    "--max-in-flight": (1, 10_000),
    "--pool": (1, 1_000),
    "--max-retries": (0, 1_000),
    "--seed": (0, 2**64 - 1),
}


def parse_duration(text: str) -> float:
    """``"10"``, ``"10s"``, ``"1.5m"``, ``"500ms"``, ``"1h"`` -> seconds (positive, at most
    :data:`MAX_DURATION_SECONDS`)."""
    match = _DURATION.match(text)
    if not match and _DURATION.match(text.strip().removeprefix("-")):
        raise argparse.ArgumentTypeError(f"a duration must be positive, not {text!r}")
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30s, 2m, 500ms)")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"a duration must be positive, not {text!r}")
    if seconds > MAX_DURATION_SECONDS:  # also a number too long for a float (inf)
        raise argparse.ArgumentTypeError(
            f"a duration must be at most 24h ({MAX_DURATION_SECONDS:,.0f} s), not {text!r}"
        )
    return seconds


#: Defaults of the flags that only some loads take (None when not given, so that a flag given
#: to a load that ignores it is refused).
DEFAULT_POOL, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_RETRIES = 16, 1000, 20


def _range(flag: str) -> str:
    low, high = INT_RANGES[flag]
    return f"{low} to {high:,}"


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
        "--target",
        type=server_address,
        default=None,
        help="server address, HOST:PORT (default: 127.0.0.1 and HEKA_PORT, else 50051)",
    )
    p.add_argument("--scenario", choices=("play", "bot", "cheap"), default="cheap", help="default: cheap")
    load = p.add_mutually_exclusive_group()
    load.add_argument(
        "--rate",
        type=float,
        help=f"open loop: start this many tasks per second (above 0, at most {MAX_RATE:,.0f})",
    )
    load.add_argument(
        "--concurrency",
        type=int,
        help=f"closed loop: this many workers, one task at a time ({_range('--concurrency')}; default: 4)",
    )
    p.add_argument(
        "--duration",
        type=parse_duration,
        default=10.0,
        help="how long to load: 30s, 2m..., at most 24h (default: 10s)",
    )
    p.add_argument(
        "--warmup",
        type=parse_duration,
        default=None,
        help="the same load for this long first, not in the report: 5s..., at most 24h (default: none)",
    )
    p.add_argument(
        "--connections",
        type=int,
        default=1,
        help=f"gRPC channels (TCP connections) ({_range('--connections')}; default: 1)",
    )
    p.add_argument(
        "--timeout",
        type=parse_duration,
        default=30.0,
        help="deadline of each RPC, at most 24h (default: 30s)",
    )
    p.add_argument(
        "--max-in-flight",
        type=int,
        default=None,
        help=f"open loop: most outstanding tasks ({_range('--max-in-flight')}; "
        f"default: {DEFAULT_MAX_IN_FLIGHT})",
    )
    p.add_argument(
        "--end-grace",
        type=parse_duration,
        default=None,
        help="open loop: after the window, abandon the tasks still running after this long (a call "
        "waiting in the server's queue, a backoff), so that the rates are the window's: 1s..., at "
        "most 24h (default: await them)",
    )
    p.add_argument(
        "--game",
        action="append",
        default=None,
        type=game_name,
        help="game(s) to play, repeatable (default: aton)",
    )
    p.add_argument(
        "--players",
        type=int,
        default=0,
        help="players per game, within each game's player counts (default, or 0: the game's minimum)",
    )
    p.add_argument(
        "--bot",
        choices=("random", "greedy", "mcts"),
        default=None,
        help="bot of the bot and play scenarios (default: mcts)",
    )
    p.add_argument(
        "--difficulty",
        choices=("easy", "medium", "hard", "expert"),
        default=None,
        help="MCTS preset, with --bot mcts (default: easy)",
    )
    p.add_argument(
        "--bot-rpc",
        choices=("ApplyAction", "AdvanceBots", "BotMove"),
        default=None,
        help="play: how frontends move the bot seats: inside CreateGame and ApplyAction (one call per "
        "move of the person; the default), with AdvanceBots, or with BotMove",
    )
    p.add_argument(
        "--pool",
        type=int,
        default=None,
        help=f"bot/cheap: mid-game states prepared first ({_range('--pool')}; default: {DEFAULT_POOL})",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="seed of the scenario's choices (0 to 2^64 - 1; default: 1)",
    )
    p.add_argument(
        "--no-retry",
        action="store_true",
        help="count refusals with a retry hint (shed load) as errors instead of backing off and "
        "sending the call again",
    )
    p.add_argument(
        "--max-retries",
        type=int,
        default=None,
        help=f"refusals in a row after which a task gives up ({_range('--max-retries')}; default: "
        f"{DEFAULT_MAX_RETRIES})",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--no-progress", action="store_true", help="no live progress line on stderr")
    add_tls_client_arguments(p)
    p.set_defaults(func=run)


def _check_flags(args: argparse.Namespace) -> None:
    """Each bad flag named before any connection (ValueError)."""
    import math

    from engine import get_game

    if args.end_grace is not None and args.rate is None:
        raise ValueError("--end-grace goes with --rate (an open loop)")
    if args.max_in_flight is not None and args.rate is None:
        raise ValueError("--max-in-flight goes with --rate (an open loop)")
    if args.bot_rpc is not None and args.scenario != "play":
        raise ValueError(f"--bot-rpc chooses how the play scenario moves its bots, not {args.scenario}'s")
    if args.pool is not None and args.scenario == "play":
        raise ValueError(
            "--pool sizes the bot and cheap scenarios' prepared states; play starts its own games"
        )
    if args.max_retries is not None and args.no_retry:
        raise ValueError("--max-retries and --no-retry disagree: give one")
    if args.scenario == "cheap" and (args.bot is not None or args.difficulty is not None):
        raise ValueError(
            "--bot and --difficulty choose the bots of the bot and play scenarios: cheap runs none"
        )
    if args.difficulty is not None and (args.bot or "mcts") != "mcts":
        raise ValueError(f"--difficulty is a preset of --bot mcts, not of --bot {args.bot}")
    if args.rate is not None and not (math.isfinite(args.rate) and 0 < args.rate <= MAX_RATE):
        raise ValueError(
            f"--rate must be a number of tasks per second above 0 and at most {MAX_RATE:,.0f}, "
            f"not {args.rate:g}"
        )
    for flag, value in (
        ("--concurrency", args.concurrency),
        ("--connections", args.connections),
        ("--max-in-flight", args.max_in_flight),
        ("--pool", args.pool),
        ("--max-retries", args.max_retries),
        ("--seed", args.seed),
    ):
        low, high = INT_RANGES[flag]
        if value is not None and not low <= value <= high:
            raise ValueError(f"{flag} must be from {_range(flag)}, not {value}")
    # --players: 0 (the game's minimum) or a count each game is played by, checked below.
    if args.players < 0:
        raise ValueError(f"--players must be at least 0, not {args.players}")
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
        args.target = args.target or local_server("127.0.0.1")
        _check_flags(args)
        config = ScenarioConfig(
            games=tuple(args.game or ("aton",)),
            players=args.players,
            bot=args.bot or "mcts",
            difficulty=args.difficulty or "easy",
            bot_rpc=args.bot_rpc or "ApplyAction",
            pool_size=DEFAULT_POOL if args.pool is None else args.pool,
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
            max_in_flight=DEFAULT_MAX_IN_FLIGHT if args.max_in_flight is None else args.max_in_flight,
            end_grace=args.end_grace,
            seed=args.seed,
            backoff=None
            if args.no_retry
            else Backoff(max_retries=DEFAULT_MAX_RETRIES if args.max_retries is None else args.max_retries),
            tls=tls_client(args),
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
        "tls": settings.tls is not None,
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
        # What the calls played: no bot in the cheap scenario, no preset but MCTS's.
        "bot": None if scenario.name == "cheap" else config.bot,
        "difficulty": config.difficulty if scenario.name != "cheap" and config.bot == "mcts" else None,
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
