"""``heka simulate``: play random games with the engine and summarise them."""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from typing import Any, TextIO

from service.commands.options import game_name, games_count, seed_value


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "simulate",
        help="play random games with the engine and print a summary",
        description="Play N games with uniformly random legal actions and summarise the results "
        "(wins per seat, draws, rounds and actions, how games ended).",
    )
    p.add_argument("--game", default="aton", type=game_name, help="game name (default: aton)")
    p.add_argument("--games", type=games_count, default=100, help="number of games (default: 100)")
    p.add_argument("--seed", type=seed_value, default=1, help="first seed; game i uses seed+i (default: 1)")
    p.add_argument("--players", type=int, default=None, help="player count (default: the game's minimum)")
    p.add_argument("--teams", action="store_true", help="team variant (Osirium, 4 players)")
    p.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="game option (repeatable)"
    )
    p.add_argument("--verbose", action="store_true", help="print the first game's events turn by turn")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def parse_options(pairs: list[str], teams: bool) -> dict[str, Any]:
    from service.commands.options import parse_option_pairs, with_teams

    out: dict[str, Any] = dict(parse_option_pairs(pairs))  # ValueError: the caller says it, exit 2
    return with_teams(out, teams)


class Progress:
    """A one-line progress bar on a terminal stream (silent when not a TTY unless forced)."""

    def __init__(self, total: int, stream: TextIO = sys.stderr, enabled: bool = True) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0

    def update(self, done: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        frac = done / self.total
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        self.stream.write(f"\r[{bar}] {done}/{self.total} {rate:6.1f}/s eta {eta:5.1f}s")
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from engine import EngineError, get_game

    try:
        game = get_game(args.game)
        options = parse_options(args.option, args.teams)
        probe = game.new_initial_state(args.players, args.seed, options)
    except (EngineError, ValueError) as exc:
        print(f"heka simulate: {exc}", file=sys.stderr)
        return 2
    if args.games < 1:
        print("heka simulate: --games must be at least 1", file=sys.stderr)
        return 2
    n = probe.num_players

    wins = [0] * n
    draws = 0
    reasons: Counter[str] = Counter()
    total_rounds = 0
    total_actions = 0
    progress = Progress(args.games, enabled=not args.no_progress and not args.verbose)
    t0 = time.perf_counter()
    for i in range(args.games):
        seed = args.seed + i
        state = game.new_initial_state(n, seed, options)
        rng = random.Random(seed)
        verbose = args.verbose and i == 0
        if verbose:
            print(f"=== {game.descriptor.title}, seed {seed} ===")
            print(state.to_text())
        actions = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            action = rng.choice(legal)
            if verbose:
                player = state.current_player()
                print(f"\n-- seat {player} ({state.decision()}): {state.action_to_string(action)}")
                for event in state.apply_action(action):
                    print(f"   {event.text}")
                if state.decision() in ("exchange", "arrange") or state.is_terminal():
                    print(state.to_text())
            else:
                state.apply(action)
            actions += 1
        outcome = state.outcome()
        assert outcome is not None
        if verbose:
            print(f"\n=== {outcome.text} ===")
            print(state.to_text())
        if outcome.winners:
            for w in outcome.winners:
                wins[w] += 1
        else:
            draws += 1
        reasons[outcome.reason] += 1
        total_rounds += state.round_number()
        total_actions += actions
        progress.update(i + 1)
    elapsed = time.perf_counter() - t0

    g = args.games
    print(f"\n{game.descriptor.title}: {g} random games, {n} players, seeds {args.seed}..{args.seed + g - 1}")
    if options:
        print("options: " + ", ".join(f"{k}={v}" for k, v in sorted(options.items())))
    for seat in range(n):
        print(f"  seat {seat} wins   {wins[seat]:6d}  ({100 * wins[seat] / g:5.1f}%)")
    print(f"  draws         {draws:6d}  ({100 * draws / g:5.1f}%)")
    print(f"  mean rounds   {total_rounds / g:9.2f}")
    print(f"  mean actions  {total_actions / g:9.2f}")
    print("  how games ended:")
    for reason, count in reasons.most_common():
        print(f"    {reason:<14} {count:6d}  ({100 * count / g:5.1f}%)")
    print(f"  {elapsed:.2f} s, {total_actions / elapsed:,.0f} actions/s")
    return 0
