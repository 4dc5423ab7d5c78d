"""``heka arena``: matches between bots, seats rotated, in parallel, with rates and Elo.

The schedule, scoring and rating model are described in :mod:`ai.arena`; this module parses
the command line, draws the progress bar on stderr, prints the table and writes ``--json``.
``heka arena --ladder`` rates the presets, baselines and calibration levels against a fixed
anchor pool (:mod:`ai.ladder`) and writes a rating table (``--ratings``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from service.commands.files import (
    FileArgError,
    check_distinct,
    check_writable,
    exclusive_temporary,
    nonempty,
    read_json,
)
from service.commands.options import game_name, seconds_up_to, seed_value, workers_count
from service.ray_runner import MAX_CONNECT_SECONDS


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "arena",
        help="play bots against each other and rate them",
        description="Round-robin matches between bot specs with seats rotated, played in parallel "
        "processes. Prints win/draw/loss rates per pairing with 95% Wilson intervals and Elo "
        "ratings fitted by maximum likelihood from all games (random = 0 when it plays).",
    )
    p.add_argument("--game", default="aton", type=game_name, help="game name (default: aton)")
    p.add_argument(
        "--bots",
        default=None,
        type=nonempty,
        help='comma-separated bot specs, e.g. "mcts:medium,greedy,random"; a key=value item '
        'continues the previous spec ("mcts:medium,ms=none,greedy"); ";" also separates. '
        "Required, except with --ladder (there: the candidates, default every preset, baseline "
        "and calibration level)",
    )
    p.add_argument(
        "--games", "--games-per-pair", dest="games", type=int, default=None,
        help="games per pairing (default: 100; with --ladder 200 per candidate: 50 with the "
        "default four anchors)",
    )  # fmt: skip
    p.add_argument(
        "--ladder",
        action="store_true",
        help="the rating ladder: every candidate (--bots) against each anchor (--anchors), the "
        "anchors round-robin; Elo with random = 0 and 95%% intervals, written as a rating table "
        "(--ratings); docs/ladder.md",
    )
    p.add_argument(
        "--anchors",
        default=None,
        type=nonempty,
        help='with --ladder: the anchor pool (default "random;greedy;mcts:easy,ms=none;'
        'mcts:medium,ms=none"; must include random)',
    )
    p.add_argument(
        "--ratings",
        metavar="PATH",
        default=None,
        type=nonempty,
        help="with --ladder: where to write the rating table (default: "
        "heka-results/ladder-GAME-Np.json; the shipped tables are ai/ladders/GAME-Np.json: --ship)",
    )
    p.add_argument(
        "--ship",
        action="store_true",
        help="replace the shipped rating table, ai/ladders/GAME-Np.json, which target ratings "
        "then play by: with --check TABLE, TABLE once its check passes (each target within ±75 "
        "Elo, mean absolute error at most 30; a failed check ships nothing, exit 1); with "
        "--ladder alone, the new table as provisional (instead of --ratings)",
    )
    p.add_argument(
        "--provisional",
        action="store_true",
        help="with --check TABLE --ship: when the check fails, ship TABLE as provisional, its "
        "note and ListGames saying so, rather than nothing (a table that failed its check can "
        "still be nearer than none: docs/ladder.md, 'Shipping a table')",
    )
    p.add_argument(
        "--check",
        metavar="TABLE",
        default=None,
        type=nonempty,
        help="with --ladder: measure a rating table instead of the candidates: the candidates "
        "are the bots that target ratings play by TABLE (--targets), and the summary gives "
        "each request's measured rating and whether it is within ±75 Elo (docs/ladder.md, "
        "'The check'); use another --seed than the table's",
    )
    p.add_argument(
        "--check-scale",
        choices=("anchors", "random"),
        default=None,
        help="with --check: how the check places its bots: 'anchors' holds every anchor at "
        "TABLE's rating of it (the default: the check measures where each bot stands among the "
        "bots the table was measured against), 'random' pins only random at 0 (and so "
        "re-measures the distance from random to everything; docs/ladder.md, 'The check')",
    )
    p.add_argument(
        "--design",
        choices=("fixed", "nearest"),  # ai.arena.DESIGNS (not imported here: startup time)
        default="fixed",
        help="with --ladder: 'fixed' (every candidate plays every anchor --games-per-pair games) "
        "or 'nearest' (a pilot against every anchor, then the two anchors nearest the pilot's "
        "rating as many more games as make up --games-per-pair per anchor; with --check, the "
        "anchors nearest each target, no pilot): the same games per candidate, where they tell "
        "the most (docs/ladder.md, 'Designs')",
    )
    p.add_argument(
        "--costly-games",
        dest="costly_games",
        type=int,
        default=None,
        metavar="N",
        help="with --ladder (fixed design): each candidate that searches more iterations a move "
        "than every anchor plays N games per anchor instead of --games-per-pair; its games cost "
        "the most, and the strongest anchor already measures it closely. A run's first N games "
        "per pair are those of a run at N, so one resumes from the other (docs/ladder.md, "
        "'Designs')",
    )
    p.add_argument(
        "--targets",
        default=None,
        type=nonempty,
        help="with --check: comma-separated target ratings (default: every 100 from 100, and "
        "the table's highest)",
    )
    p.add_argument(
        "--seed", type=seed_value, default=1, help="arena seed; game i is seeded from it and i (default: 1)"
    )
    p.add_argument("--players", type=int, default=None, help="players per game (default: the game's minimum)")
    p.add_argument("--teams", action="store_true", help="team variant (Osirium, 4 players: seats 0+2 vs 1+3)")
    p.add_argument(
        "--lineup",
        choices=("round-robin", "one-vs-rest"),
        default="round-robin",
        help="round-robin: every pair of specs, every seat arrangement; one-vs-rest: one copy of "
        "the FIRST spec among players-1 copies of each other spec (default: round-robin)",
    )
    p.add_argument(
        "--workers", type=workers_count, default=1, help="parallel game processes (default: 1; at most 1024)"
    )
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        type=nonempty,
        help="play the games as Ray tasks (the ray extra; docs/ray.md): 'local' starts a Ray "
        "instance here (--workers CPUs when above 1, else every core); else a ray.init address "
        "('auto' inside a cluster, HOST:6379, ray://HOST:10001). Same games and table as --workers",
    )
    p.add_argument(
        "--ray-timeout",
        metavar="SECONDS",
        type=seconds_up_to(MAX_CONNECT_SECONDS),
        default=None,
        help="with --ray ADDRESS: how long the cluster may take to answer before the command "
        "gives up, exit 2 (default: 30). At most 86,400 (a day)",
    )
    p.add_argument(
        "--json",
        metavar="PATH",
        type=nonempty,
        default=None,
        help="write specs, every game, table and ratings",
    )
    p.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="game option (repeatable)"
    )
    p.add_argument(
        "--resume",
        metavar="PATH",
        nargs="?",
        const=RESUME_FROM_JSON,
        default=None,
        type=nonempty,
        help="keep the finished games of an earlier run's --json file (same game, bots, seed, "
        "players, lineup and options; --games may differ) and play only the rest; PATH may be "
        "the --json path itself. Without PATH: the --json file if there is one, else a new run "
        "(a job run again goes on where it stopped)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


#: ``--resume`` given without a PATH: the ``--json`` file, when it exists.
RESUME_FROM_JSON = "\0json"


def _parse_options(pairs: list[str]) -> tuple[tuple[str, Any], ...]:
    from service.commands.options import parse_option_pairs

    return tuple(parse_option_pairs(pairs))


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class ProgressBar:
    """Games done / total, rate and ETA on one stderr line. On a terminal it redraws in place
    (at most 10 times a second); otherwise (a log file) it prints a line every 5% or minute."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        enabled: bool = True,
        already: int = 0,
        unit: str = "games",
    ) -> None:
        self.total = max(total, 1)
        self.unit = unit
        #: Games done before this run started (a resumed arena): not in the rate.
        self.already = already
        self.stream = stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.last = -1.0
        self.last_step = -1

    def update(self, done: int, note: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        finished = done >= self.total
        step = done * 20 // self.total
        if self.tty:
            if not finished and now - self.last < 0.1:
                return
        elif not finished and step == self.last_step and now - self.last < 60:
            return
        self.last, self.last_step = now, step
        elapsed = now - self.start
        rate = (done - self.already) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        width = 30
        filled = int(width * done / self.total)
        line = (
            f"[{'#' * filled}{'-' * (width - filled)}] {done}/{self.total} {self.unit}  "
            f"{rate:.2f}/s  elapsed {_clock(elapsed)}  eta {_clock(eta)}" + (f"  {note}" if note else "")
        )
        if self.tty:
            self.stream.write("\r" + line + ("\n" if finished else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def dump_json(data: dict[str, Any]) -> str:
    """Indented JSON, except that each game record stays on one line (files stay readable
    with thousands of games)."""
    games = data.get("games", [])
    head = {k: v for k, v in data.items() if k != "games"}
    text = json.dumps(head, indent=1)
    rows = ",\n  ".join(json.dumps(g, separators=(",", ":")) for g in games)
    return text[:-2] + ',\n "games": [\n  ' + rows + "\n ]\n}\n"


def run(args: argparse.Namespace) -> int:
    from ai.api import BotSpecError, make_bot
    from ai.arena import (
        MAX_GAMES,
        ArenaConfig,
        ArenaError,
        ArenaResult,
        GameRecord,
        check_resumable,
        costly_candidates,
        expected_block_note,
        make_pairings,
        run_arena,
        scheduled_games,
    )
    from ai.ladder import (
        DEFAULT_ANCHORS,
        ZERO,
        LadderError,
        Level,
        TargetRatingError,
        check_bots,
        default_check_targets,
        held_anchors,
        ladder_config,
        read_table,
        table_path,
    )
    from engine import EngineError, get_game

    if args.games is None:
        args.games = 100
        if args.ladder:  # 200 games per candidate: LEVEL_GAMES over the anchors
            try:
                pool = _specs("--anchors", args.anchors) if args.anchors else DEFAULT_ANCHORS
            except BotSpecError as exc:
                print(f"heka arena: {exc}", file=sys.stderr)
                return 2
            args.games = -(-LEVEL_GAMES // max(len(set(pool)), 1))
    checked: dict[int, Level] = {}
    table: Any = None  # --check: the table as read when the check begins
    held: dict[str, float] | None = None
    predicted: dict[str, float] | None = None
    try:
        if args.resume == RESUME_FROM_JSON:
            if not args.json:
                raise ArenaError("--resume without PATH resumes from the --json file: give --json PATH")
            args.resume = args.json if Path(args.json).exists() else None
            if args.resume is None:
                print(f"heka arena: no earlier run in {args.json}: a new run", file=sys.stderr)
        options = _parse_options(args.option)
        if any(name == "teams" for name, _ in options):
            raise ArenaError("--option teams: give --teams, which also scores the games by team")
        if (args.check or args.targets) and not args.ladder:
            raise ArenaError("--check and --targets go with --ladder")
        if args.targets and not args.check:
            raise ArenaError("--targets goes with --check TABLE")
        if args.check_scale is not None and not args.check:
            raise ArenaError("--check-scale goes with --check TABLE")
        args.check_scale = args.check_scale or "anchors"
        if args.ray_timeout is not None and not args.ray:
            raise ArenaError("--ray-timeout goes with --ray ADDRESS")
        if args.games < 1:
            raise ArenaError("--games must be at least 1")
        if args.ship and not args.ladder:
            raise ArenaError("--ship goes with --ladder (a provisional table) or --ladder --check TABLE")
        if args.provisional and not (args.check and args.ship):
            raise ArenaError("--provisional goes with --check TABLE --ship")
        if args.ship and args.ratings:
            raise ArenaError("--ship writes the shipped table: no --ratings")
        if args.design != "fixed" and not args.ladder:
            raise ArenaError("--design goes with --ladder")
        if args.costly_games is not None:
            if not args.ladder or args.design != "fixed":
                raise ArenaError("--costly-games goes with --ladder, in the fixed design")
            if not 1 <= args.costly_games <= args.games:
                raise ArenaError(
                    f"--costly-games must be 1..{args.games} (--games-per-pair), not {args.costly_games}"
                )
        for flag, value in (("--ratings", args.ratings), ("--anchors", args.anchors)):
            if value is not None and not args.ladder:
                raise ArenaError(f"{flag} goes with --ladder")
        if args.ratings and args.check:
            raise ArenaError("--ratings goes with a ladder; a check writes its table with --ship only")
        if args.ladder:
            if args.lineup != "round-robin":
                raise ArenaError("--ladder has its own lineup (no --lineup)")
            anchors = tuple(_specs("--anchors", args.anchors)) if args.anchors else DEFAULT_ANCHORS
            twice = sorted({a for a in anchors if anchors.count(a) > 1})
            if twice:
                raise ArenaError(f"--anchors names {', '.join(twice)} twice")
            candidates = _specs("--bots", args.bots) if args.bots else None
            if args.check:
                if args.bots:
                    raise ArenaError("--check picks the candidates itself: no --bots")
                try:
                    table = read_table(args.check)
                except LadderError as exc:
                    raise ArenaError(f"--check {exc}") from None
                if table.game != args.game or (args.players is not None and args.players != table.players):
                    raise ArenaError(
                        f"--check {args.check} rates {table.game} with {table.players} players, "
                        f"not {args.game} with {args.players or 'the default'} players"
                    )
                if args.teams and not table.teams:
                    raise ArenaError(f"--check {args.check} rates free-for-all games: no --teams")
                args.players = table.players
                args.teams = table.teams  # a team table is checked in team games
                targets = _targets(args.targets) if args.targets else default_check_targets(table)
                if not targets:
                    raise ArenaError(
                        f"--check {args.check}: the table has no target ratings to check (its top is "
                        f"{table.max_target})"
                    )
                checked = check_bots(table, targets)
                held_specs = set(anchors) if args.check_scale == "anchors" else {ZERO}
                trivial = {t: lv.spec for t, lv in checked.items() if lv.spec in held_specs}
                if trivial:  # a bot the check holds at the table's rating measures nothing
                    t, spec = next(iter(trivial.items()))
                    rating = next(b.rating for b in table.bots if b.spec == spec)
                    raise ArenaError(
                        f"--check: target {t} plays {spec}, which the check holds at the table's "
                        f"rating of it, {rating:.0f} (--check-scale {args.check_scale}): it measures "
                        f"nothing. The table has no level nearer {t}: measure one near it in the "
                        "ladder (docs/ladder.md, 'From a rating to a bot'), or leave the target out "
                        "of --targets"
                    )
                if args.ship and args.seed == table.seed:
                    raise ArenaError(
                        f"--check --ship: the check plays the table's own seed ({table.seed}); "
                        "measure it on another --seed"
                    )
                if args.ship and args.games < table.games_per_pair:
                    raise ArenaError(
                        f"--check --ship: {args.games} games per pair checks a table measured at "
                        f"{table.games_per_pair}; a check that ships plays at least as many"
                    )
                costly = args.games if args.costly_games is None else args.costly_games
                measured = table.games_per_pair if table.costly_games is None else table.costly_games
                if args.ship and costly < measured:
                    raise ArenaError(
                        f"--check --ship: {costly} games per pair for the costly candidates check a "
                        f"table that measured them at {measured}; a check that ships plays at "
                        "least as many"
                    )
                if args.ship:
                    _ship_gates(table, anchors, targets)
                candidates = [level.spec for level in checked.values()]
                if args.design == "nearest":  # each bot's anchors nearest its target
                    predicted = held_anchors(table, anchors)
                    predicted.update({level.spec: level.rating for level in checked.values()})
            config = ladder_config(
                args.game,
                args.players,
                games_per_pair=args.games,
                seed=args.seed,
                workers=args.workers,
                candidates=candidates,
                anchors=anchors,
                options=options,
                teams=args.teams,
                design=args.design,
                predicted=predicted,
                costly_games=args.costly_games,
            )
            if args.check and args.check_scale == "anchors":
                held = held_anchors(table, config.anchors)
        else:
            if not args.bots:
                raise ArenaError("--bots is required (except with --ladder)")
            config = ArenaConfig(
                game=args.game,
                bots=tuple(_specs("--bots", args.bots)),
                games=args.games,
                seed=args.seed,
                players=args.players,
                teams=args.teams,
                lineup=args.lineup,
                workers=args.workers,
                options=options,
            )
        specs = config.bots
        game = get_game(config.game)
        players = game.new_initial_state(config.players, 0, config.game_options()).num_players
        pairings = make_pairings(
            specs, players, teams=config.teams, lineup=config.lineup, anchors=config.anchors
        )
        for spec in specs:
            make_bot(spec)
        total = scheduled_games(config, players)
        if total > MAX_GAMES:
            raise ArenaError(
                f"--games {args.games} schedules {total:,} games; a run plays at most {MAX_GAMES:,} "
                "(split it into runs of other seeds)"
            )
        # What the run reads and writes: no output over an input or another output. --resume
        # and --json are one file by design (a run resumes from its own results).
        ratings = ("--ratings" if args.ratings else "the rating table", ratings_path(args, players))
        ratings = ratings if args.ladder and not args.check else ("", "")
        shipped = ("the shipped table", str(table_path(args.game, players, teams=args.teams)))
        shipped = shipped if args.check and args.ship else ("", "")
        json_out = ("--json", args.json or "")
        check_distinct([("--check", args.check or ""), ratings, json_out])
        check_distinct([shipped, json_out])  # a check may ship the table it read: not refused
        check_distinct([("--resume", args.resume or ""), ratings, shipped])
        if args.json:
            check_writable(args.json, "--json")
        if ratings[1]:
            check_writable(ratings[1], ratings[0])
        if shipped[1]:
            check_writable(shipped[1], shipped[0])
        kept: list[GameRecord] = []
        kept_seconds = 0.0
        if args.resume:
            try:
                earlier = read_json(args.resume, "--resume")
            except FileArgError as exc:
                raise ArenaError(f"cannot resume: {exc}") from None
            if not isinstance(earlier, dict):
                raise ArenaError(f"cannot resume: {args.resume} is not an arena results file")
            try:
                kept = check_resumable(earlier, config, players)
            except ArenaError as exc:
                why = str(exc).removeprefix("cannot resume: ")
                raise ArenaError(f"cannot resume from {args.resume}: {why}") from None
            seconds = earlier.get("seconds", 0.0)
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or not 0 <= seconds < float("inf")
            ):
                raise ArenaError(
                    f"cannot resume: {args.resume}: 'seconds' must be a number of seconds, not {seconds!r}"
                )
            kept_seconds = float(seconds) if kept else 0.0
    except (EngineError, ArenaError, BotSpecError, LadderError, TargetRatingError, ValueError) as exc:
        print(f"heka arena: {exc}", file=sys.stderr)
        return 2
    note = expected_block_note(pairings, args.games)
    if note:
        print(f"heka arena: {note}", file=sys.stderr)
    design = (
        f"{args.games} games"
        if config.design == "fixed"
        else f"{args.games} games a candidate per anchor (design {config.design})"
    )
    if config.costly_games is not None:
        costly = ", ".join(sorted(costly_candidates(config))) or "none"
        design += f" ({config.costly_games} for a costly candidate: {costly})"
    print(
        f"heka arena: {game.descriptor.title}, {players} players, {len(pairings)} pairing(s) x "
        f"{design} = {total} games, {args.workers} worker(s) (cpu count {os.cpu_count()})",
        file=sys.stderr,
    )
    if args.resume:
        print(f"heka arena: resuming: {len(kept)} game(s) kept from {args.resume}", file=sys.stderr)
    ray_stack, cluster = contextlib.ExitStack(), None
    if args.ray:  # service/ray_runner.py: the same games as Ray tasks
        from service import ray_runner as ray_games

        try:
            cpus = ray_stack.enter_context(
                ray_games.ray_session(
                    args.ray,
                    cpus=ray_games.local_cpus(args.workers),
                    timeout=ray_games.timeout(args.ray_timeout),
                )
            )
            cluster = ray_games.arena_runner()
        except ray_games.RayUnavailable as exc:
            ray_stack.close()
            print(f"heka arena: {exc}", file=sys.stderr)
            return 2
        print(f"heka arena: playing on {ray_games.describe_cluster(args.ray, cpus)}", file=sys.stderr)
        config = dataclasses.replace(config, workers=max(cpus, 1))
    bar = ProgressBar(total, enabled=not args.no_progress, already=len(kept))
    bar.update(len(kept))
    done: list[GameRecord] = list(kept)
    last_save = [time.monotonic()]
    started = time.perf_counter()

    def on_result(record: GameRecord, count: int, _total: int) -> None:
        bar.update(count)
        done.append(record)
        # Checkpoint: a long run killed hard still leaves its finished games on disk.
        if args.json and time.monotonic() - last_save[0] >= CHECKPOINT_SECONDS:
            last_save[0] = time.monotonic()
            partial = ArenaResult(
                config,
                players,
                pairings,
                sorted(done, key=lambda r: r.index),
                total,
                kept_seconds + time.perf_counter() - started,
                interrupted=True,
            )
            try:
                _write_json(args.json, partial.to_json())
            except OSError as exc:  # the run goes on; the final write says it again
                print(
                    f"\nheka arena: cannot write the checkpoint {args.json}: {exc.strerror}", file=sys.stderr
                )

    # SIGINT (also when started in the background, where it is ignored by default) and
    # SIGTERM stop the arena after the games in progress are dropped, and the games
    # finished so far are reported; a second signal interrupts at once.
    stop_requested: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        if stop_requested:
            raise KeyboardInterrupt
        stop_requested.append(signum)

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, on_signal)
    try:
        result = run_arena(
            config,
            on_result=on_result,
            should_stop=lambda: bool(stop_requested),
            previous=kept,
            previous_seconds=kept_seconds,
            runner=cluster,
        )
    except (ArenaError, BotSpecError, EngineError) as exc:
        print(f"\nheka arena: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the system refused processes or pipes for --workers
        print(f"\nheka arena: cannot run the games on {args.workers} worker(s): {exc}", file=sys.stderr)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        ray_stack.close()
    if result.interrupted:
        print("\nheka arena: interrupted; partial results follow", file=sys.stderr)
    print(result.format_table())
    if result.config.design != "fixed":
        _print_nearest(result)
    data = result.to_json()
    if checked and not result.interrupted:
        data["check"] = _print_check(args.check, checked, result, held, args.seed)
    if args.json:
        try:
            _write_json(args.json, data)
        except OSError as exc:
            print(f"\nheka arena: cannot write --json {args.json}: {exc.strerror}", file=sys.stderr)
            return 1
        print(f"\nresults written to {args.json}")
    if checked:
        if result.interrupted:
            print("\nheka arena: no check from an interrupted ladder (--resume it)", file=sys.stderr)
        elif args.ship:
            return _ship_checked(args, checked, result, players, held, measured=table)
    elif args.ladder:
        if result.interrupted:
            print("\nheka arena: no rating table from an interrupted ladder (--resume it)", file=sys.stderr)
        else:
            try:
                _write_table(args, result, players)
            except OSError as exc:
                print(f"\nheka arena: cannot write the rating table: {exc}", file=sys.stderr)
                return 1
    return 130 if result.interrupted else 0


def _specs(flag: str, text: str) -> list[str]:
    """The bot specs of ``flag``'s list (:func:`ai.api.split_bot_specs`); a BotSpecError names
    the flag."""
    from ai.api import BotSpecError, split_bot_specs

    try:
        return split_bot_specs(text)
    except BotSpecError as exc:
        raise BotSpecError(f"{flag}: {exc}") from None


def _targets(text: str) -> list[int]:
    try:
        targets = [int(t) for t in text.replace(";", ",").split(",")]
    except ValueError:
        raise ValueError(f"--targets needs comma-separated integers (no empty item), got {text!r}") from None
    if not targets:
        raise ValueError("--targets needs at least one rating")
    twice = sorted({t for t in targets if targets.count(t) > 1})
    if twice:
        raise ValueError(f"--targets names {', '.join(map(str, twice))} twice")
    return targets


def _print_check(
    path: str, checked: Any, result: Any, held: dict[str, float] | None, seed: int
) -> dict[str, Any]:
    """Print each requested rating against its bot's measured one, and the verdict; return the
    same as JSON."""
    from ai.ladder import MAX_MEAN_ERROR, TOLERANCE, check_rows, table_check

    rows = check_rows(checked, result, held)
    met = sum(r.within for r in rows)
    scale = "the anchors held at the table's ratings" if held else "random = 0"
    print(f"\ncheck of {path}: each target's bot against the anchors, {scale}, 95% intervals:")
    print(f"  {'target':>6}  {'bot':<36} {'measured':>8}  {'error':>6}  within ±{TOLERANCE:.0f}")
    for r in rows:
        print(
            f"  {r.target:>6}  {r.level.name:<36} {r.measured:+8.0f}  {r.error:+6.0f}  "
            f"{'yes' if r.within else 'NO'}  (± {r.ci95:.0f})"
        )
    verdict = table_check(rows, seed, "anchors" if held else "random")
    mae = verdict.mean_absolute_error
    # Rounded as the verdict rounds it (up): one figure on the line, never a passing-looking
    # 30.0 beside a failure.
    print(
        f"{met} of {len(rows)} within ±{TOLERANCE:.0f} Elo; mean absolute error {verdict.error_text} "
        f"(at most {MAX_MEAN_ERROR:.0f}): {verdict.verdict()}"
    )
    return {
        "table": path,
        "scale": "anchors" if held else "random",
        **({"held": held} if held else {}),
        "tolerance": TOLERANCE,
        "within": met,
        "mean_absolute_error": round(mae, 1),
        "max_mean_absolute_error": MAX_MEAN_ERROR,
        "passed": verdict.passed,
        "rows": [
            {
                "target": r.target,
                "bot": r.level.name,
                "spec": r.level.spec,
                "interpolated": r.level.interpolated,
                "measured": round(r.measured, 1),
                "ci95": round(r.ci95, 1),
                "error": round(r.error, 1),
                "within": r.within,
            }
            for r in rows
        ],
    }


#: Games per candidate of a ladder, the measurement (docs/ladder.md): a ladder's games
#: per pair default to this over the number of anchors (50 with the default four), and a
#: table from fewer is provisional.
LEVEL_GAMES = 200


def ladder_command(args: argparse.Namespace, players: int) -> str:
    """The command that reproduces a ladder's games (``--workers`` does not change them)."""
    parts = [
        f"heka arena --ladder --game {args.game} --players {players} --games-per-pair {args.games} "
        f"--seed {args.seed}"
    ]
    if args.teams:
        parts.append("--teams")
    if args.design != "fixed":
        parts.append(f"--design {args.design}")
    if args.costly_games is not None:
        parts.append(f"--costly-games {args.costly_games}")
    if args.bots:
        parts.append(f'--bots "{args.bots}"')
    if args.anchors:
        parts.append(f'--anchors "{args.anchors}"')
    parts.extend(f"--option {o}" for o in args.option)
    return " ".join(parts)


def _ship_gates(table: Any, anchors: Sequence[str], targets: Sequence[int]) -> None:
    """What a check that ships must play besides its size and seed: the anchors the ladder
    measured the table against, and every default target (docs/ladder.md, "Shipping a
    table"); ArenaError otherwise."""
    import shlex

    from ai.arena import ArenaError
    from ai.ladder import DEFAULT_ANCHORS, default_check_targets

    words = shlex.split(table.command)
    named = words[words.index("--anchors") + 1] if "--anchors" in words[:-1] else None
    measured = tuple(_specs("--anchors", named)) if named else DEFAULT_ANCHORS
    if tuple(anchors) != tuple(measured):
        raise ArenaError(
            f"--check --ship: the check plays the anchors {';'.join(anchors)}, the table was "
            f"measured against {';'.join(measured)}; a check that ships plays the same"
        )
    missing = sorted(set(default_check_targets(table)) - set(targets))
    if missing:
        raise ArenaError(
            f"--check --ship: --targets leaves out {', '.join(map(str, missing))}; a check that "
            "ships checks every 100 from 100 to the table's top"
        )


def _ship_checked(
    args: argparse.Namespace,
    checked: Any,
    result: Any,
    players: int,
    held: dict[str, float] | None,
    *,
    measured: Any,
) -> int:
    """``--check TABLE --ship``: the table read when the check began (``measured``; TABLE
    may have been rewritten since) replaces the shipped table if its check passed (or, with
    ``--provisional``, as a provisional table whatever the check found)."""
    from ai.ladder import (
        LadderError,
        check_rows,
        checked_table,
        table_check,
        table_json,
        table_path,
    )

    check = table_check(check_rows(checked, result, held), args.seed, "anchors" if held else "random")
    try:
        table = checked_table(measured, check, provisional=args.provisional)
    except LadderError as exc:
        hint = "" if check.passed else " (--provisional ships it as provisional, saying so)"
        print(f"\nheka arena: {args.check}: {exc}{hint}", file=sys.stderr)
        return 1
    path = table_path(table.game, players, teams=table.teams)
    try:
        path.write_text(table_json(table), encoding="utf-8")
    except OSError as exc:
        print(f"\nheka arena: cannot write the shipped table: {exc}", file=sys.stderr)
        return 1
    state = "provisional" if table.provisional else "measured"
    verdict = "" if check.passed else f"; {check.verdict()}"
    print(f"\nrating table {args.check} shipped to {path} ({state}; {check.summary()}{verdict})")
    return 0


def _print_nearest(result: Any) -> None:
    """The nearest design: the anchors each candidate played beyond its pilot, if any."""
    from ai.arena import PILOT

    anchors = set(result.config.anchors)
    played: dict[str, list[str]] = {}
    for stats in result.pairing_stats():
        p = stats.pairing
        if p.a not in anchors and stats.games > (0 if result.config.predicted else PILOT):
            played.setdefault(p.a, []).append(p.b)
    if played:
        print(f"\nnearest anchors ({result.config.design} design):")
        for candidate, chosen in played.items():
            print(f"  {candidate}: {', '.join(chosen)}")


def _write_table(args: argparse.Namespace, result: Any, players: int) -> None:
    from ai.ladder import UNCHECKED, table_from_result, table_json

    table = table_from_result(result, ladder_command(args, players))
    # The fewest games a candidate played against each anchor: the costly candidates' where
    # there are any (the table's costly_games), else every pair's.
    fewest = args.games if table.costly_games is None else min(args.games, table.costly_games)
    per_level = fewest * len(result.config.anchors)
    # A new table ships measured only through its check (--check TABLE --ship).
    provisional = per_level < LEVEL_GAMES or args.ship
    note = (
        f"provisional: {table.games_text}, {per_level} per candidate"
        f"{' at the fewest' if table.costly_games is not None else ''} (the measurement is "
        f"{LEVEL_GAMES} per candidate)"
        if per_level < LEVEL_GAMES
        else (f"{UNCHECKED} ({table.games_text})" if args.ship else "")
    )
    table = dataclasses.replace(table, provisional=provisional, note=note)
    path = ratings_path(args, players)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(table_json(table))
    print(f"\nrating ladder ({note or table.games_text}), random = 0, 95% intervals:")
    for b in reversed(table.bots):
        ci = "anchor" if b.spec == "random" else f"± {b.ci95:.0f}"
        level = "" if b.is_level else "  (not a level)"
        print(f"  {b.name:<28} {b.rating:+7.0f}  {ci}{level}")
    print(f"rating table written to {path}")


def ratings_path(args: argparse.Namespace, players: int) -> str:
    """Where the ladder writes its table: ``--ratings``, the shipped table with ``--ship``,
    else under heka-results/ (never a tracked file by default)."""
    from ai.ladder import table_path
    from service.commands.outputs import default_path

    if args.ratings:
        return str(args.ratings)
    teams = "-teams" if args.teams else ""
    if args.ship:
        return str(table_path(args.game, players, teams=args.teams))
    return default_path(f"ladder-{args.game}-{players}p{teams}.json")


#: How often a running arena rewrites its --json file with the games finished so far.
CHECKPOINT_SECONDS = 60.0


def _write_json(path: str, data: dict[str, Any]) -> None:
    # Through a link to its file: the rename below would replace the link itself.
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    # A temporary file of its own beside it (a file the user named PATH.tmp is left alone),
    # renamed over the path: a run stopped mid-write leaves the last complete file.
    fd, tmp = exclusive_temporary(path)
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(dump_json(data))
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)
