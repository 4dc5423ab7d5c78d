"""``heka review``: the review of a recorded game in the terminal (docs/review.md).

A record is the JSON that ``heka play --save`` writes (one game, its seed and actions) or
that ``heka arena --json`` writes (``--index`` picks a game). The game is dealt again from
its seed and replayed; every decision of the reviewed seats is searched from what that seat
knew then (:mod:`ai.review`, the algorithm of the server's ``ReviewGame``, with seeds that
need no server key), on ``--workers`` processes with a progress bar. It prints each move's
grade and loss against the search's best move, then each seat's accuracy; ``--json`` writes
it all.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from ai.mcts_params import MAX_ITERATIONS
from ai.review import MAX_ALTERNATIVES
from service.commands.files import nonempty
from service.commands.options import int_range, seed_value, workers_count

if TYPE_CHECKING:
    from ai.review import GameReview, MoveReview
    from engine.core import State

#: The ``record`` field of a ``heka play --save`` file.
PLAY_RECORD = "heka-game/1"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "review",
        help="review a recorded game: each move against the search's best, each seat's accuracy",
        description="Review a recorded game (heka play --save, or heka arena --json with --index): "
        "every decision of the reviewed seats is searched from what that seat knew then; prints each "
        "move's loss and grade (best, excellent, good, inaccuracy, mistake, blunder) and each seat's "
        "accuracy (docs/review.md).",
    )
    p.add_argument("record", help="the record: a heka play --save file or a heka arena --json file")
    p.add_argument(
        "--index", type=int, default=None, help="with an arena file: the game's index (default: 0)"
    )
    who = p.add_mutually_exclusive_group()
    who.add_argument(
        "--seat",
        type=int,
        default=None,
        help="the seat to review (default: the person's seat of a play record; every seat of an arena game)",
    )
    who.add_argument("--all-seats", action="store_true", help="review every seat")
    p.add_argument("--preset", default="medium", help="the reviewer's preset (default: medium)")
    p.add_argument(
        "--iterations",
        type=int_range(1, MAX_ITERATIONS),
        default=None,
        help=f"search iterations per decision (1 to {MAX_ITERATIONS:,}; default: the preset's)",
    )
    p.add_argument(
        "--alternatives",
        type=int_range(1, MAX_ALTERNATIVES),
        default=3,
        help=f"root actions listed per move (1 to {MAX_ALTERNATIVES}; default: 3)",
    )
    p.add_argument("--seed", type=seed_value, default=1, help="seed of the review (default: 1)")
    p.add_argument("--from-move", type=int, default=0, help="review from this move number on")
    p.add_argument(
        "--workers", type=workers_count, default=1, help="parallel processes (default: 1; at most 1024)"
    )
    p.add_argument("--json", metavar="PATH", type=nonempty, default=None, help="write the review as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


class RecordError(ValueError):
    """A record file that cannot be reviewed (the message says why)."""


def load_record(path: str, index: int | None) -> tuple[State, list[int], list[str], int | None]:
    """The game of a record: its start, its actions, a name per seat, and the person's seat
    (a play record) or None (an arena game, ``index``: which, 0 by default; a play record
    holds one game, and refuses an index)."""
    from engine.registry import get_game
    from service.commands.files import FileArgError, read_json

    try:
        data = read_json(path, "the record")
    except FileArgError as exc:
        raise RecordError(str(exc)) from None
    if not isinstance(data, dict) or "game" not in data:
        raise RecordError(
            f"{path} is not a game record (heka play --save) or an arena file (heka arena --json)"
        )

    def integer(value: object, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RecordError(f"{path}: {field!r} must be an integer, not {value!r}")
        return value

    try:
        game = get_game(str(data["game"]))
        players = data.get("players")
        players = game.descriptor.min_players if players is None else integer(players, "players")
        options = data.get("options", {})
        if not isinstance(options, dict):
            raise RecordError(f"{path}: 'options' must be an object, not {options!r}")
        recorded: object = None  # an arena game's winners, which its replay must give
        if data.get("record") == PLAY_RECORD:
            if index is not None:
                raise RecordError(
                    f"{path} is a play record of one game: --index picks a game of an arena file"
                )
            seed, actions, names, person = (
                integer(data.get("seed"), "seed"),
                data["actions"],
                data["seats"],
                data.get("person"),
            )
        elif isinstance(data.get("games"), list):
            index = 0 if index is None else index
            games: dict[int, dict[str, Any]] = {}
            for i, g in enumerate(data["games"]):
                if not isinstance(g, dict):
                    raise RecordError(f"{path}: games[{i}] must be an object, not {type(g).__name__}")
                games[integer(g.get("index"), f"games[{i}].index")] = g
            if index not in games:
                raise RecordError(f"{path} has no game of index {index} (it holds {len(games)} games)")
            g = games[index]
            teams = data.get("teams", False)
            if not isinstance(teams, bool):
                raise RecordError(f"{path}: 'teams' must be true or false, not {teams!r}")
            if teams:  # heka arena --teams keeps it beside the options (ArenaConfig.game_options)
                options = {**options, "teams": True}
            recorded = g.get("winners")
            if not g.get("actions"):
                raise RecordError(
                    f"game {index} of {path} has no actions: arena files record them from this release on"
                )
            seed, actions, names, person = (
                integer(g.get("deal_seed"), "deal_seed"),
                g["actions"],
                g["seats"],
                None,
            )
        else:
            raise RecordError(f"{path} is neither a game record nor an arena file")
        start = game.new_initial_state(players, seed, options)
        if not isinstance(actions, list) or any(
            isinstance(a, bool) or not isinstance(a, int) for a in actions
        ):
            raise RecordError(f"{path}: 'actions' must be a list of action ids")
        if not isinstance(names, list) or len(names) != start.num_players:
            raise RecordError(f"{path}: 'seats' must name each of the {start.num_players} seats")
        if recorded is not None:
            _check_replay(path, start, actions, recorded)
        if person is not None and (
            isinstance(person, bool) or not isinstance(person, int) or not 0 <= person < start.num_players
        ):
            raise RecordError(
                f"{path}: 'person' {person!r} is not a seat of a {start.num_players}-player game "
                f"(0..{start.num_players - 1})"
            )
        return start, list(actions), [str(n) for n in names], person
    except RecordError:
        raise
    except KeyError as exc:
        raise RecordError(f"{path}: the field {exc} is missing") from None
    except (TypeError, ValueError) as exc:
        raise RecordError(f"{path}: a field is missing or bad ({exc})") from None


def _check_replay(path: str, start: State, actions: list[int], recorded: object) -> None:
    """An arena game replayed from its start must end as it was recorded: one that does not
    was dealt or played otherwise (another option, another release), and a review of it would
    grade moves of a game that never happened."""
    from engine.core import EngineError

    state = start.clone()
    try:
        for action in actions:
            state.apply_action(action)
    except EngineError as exc:
        raise RecordError(f"{path}: the game does not replay from its start ({exc})") from None
    outcome = state.outcome()
    winners = None if outcome is None else sorted(outcome.winners)
    if not isinstance(recorded, list) or winners != sorted(recorded):
        raise RecordError(
            f"{path}: the game replays to winners {winners}, not the recorded {recorded!r}: "
            "it was dealt or played with other options or another release"
        )


def review_lines(start: State, review: GameReview, names: list[str]) -> list[str]:
    """The review as text: a line per move, then a line per seat."""
    from ai.review import GRADES

    game = start.game
    out = [f"{'move':>5}  {'seat':>4}  {'grade':<10} {'loss':>5}  played -> best (expected score)"]
    for r in review.moves:
        text = game.action_to_string(r.played)
        line = f"{r.move:>5}  {r.seat:>4}  {r.grade:<10} {r.loss:5.3f}  {text} ({r.played_score:.2f})"
        if r.best != r.played:
            line += f" -> {game.action_to_string(r.best)} ({r.best_score:.2f})"
        out.append(line)
    out.append("")
    for s in review.summaries:
        who = names[s.seat] if s.seat < len(names) else f"seat {s.seat}"
        if not s.moves:  # an accuracy of nothing is no accuracy
            out.append(f"seat {s.seat} ({who}): no moves reviewed, {s.forced} forced skipped")
            continue
        counts = ", ".join(f"{g} {s.grades[g]}" for g in GRADES)
        out.append(
            f"seat {s.seat} ({who}): accuracy {s.accuracy:.1f}, {s.moves} moves reviewed, "
            f"{s.forced} forced skipped, mean loss {s.mean_loss:.3f}; {counts}"
        )
    return out


def _move_dict(start: State, r: MoveReview) -> dict[str, Any]:
    game = start.game
    return {
        "move": r.move,
        "seat": r.seat,
        "played": game.action_to_string(r.played),
        "played_id": r.played,
        "best": game.action_to_string(r.best),
        "best_id": r.best,
        "played_score": round(r.played_score, 6),
        "best_score": round(r.best_score, 6),
        "loss": round(r.loss, 6),
        "grade": r.grade,
        "accuracy": round(r.accuracy, 3),
        "alternatives": [
            {"action": game.action_to_string(a.action), "visits": a.visits, "score": round(a.score, 6)}
            for a in r.alternatives
        ],
        "iterations": r.iterations,
    }


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from ai.learned import ModelError
    from ai.review import ReplayError, review_game, reviewer
    from service.commands.arena import ProgressBar
    from service.commands.files import FileArgError, check_distinct, check_writable, write_text

    out = out or sys.stdout
    try:
        start, actions, names, person = load_record(args.record, args.index)
        who = reviewer(args.preset, args.iterations, args.alternatives)
    except (RecordError, ValueError) as exc:
        print(f"heka review: {exc}", file=sys.stderr)
        return 2
    n = start.num_players
    if args.all_seats:
        seats: list[int] | None = None
    elif args.seat is not None:
        if not 0 <= args.seat < n:
            print(f"heka review: --seat must be 0..{n - 1}", file=sys.stderr)
            return 2
        seats = [args.seat]
    else:
        seats = [person] if person is not None else None
    if not 0 <= args.from_move <= len(actions) or not actions:
        print(
            f"heka review: --from-move {args.from_move} is not a move of the game (0..{len(actions)})"
            if actions
            else f"heka review: {args.record}: the game has no moves to review",
            file=sys.stderr,
        )
        return 2
    if args.json:
        try:
            check_distinct([("the record", args.record), ("--json", args.json)])
            check_writable(args.json, "--json")
        except FileArgError as exc:
            print(f"heka review: {exc}", file=sys.stderr)
            return 2
    bar: ProgressBar | None = None

    def progress(_r: MoveReview, done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = ProgressBar(total, enabled=not args.no_progress, unit="moves")
        bar.update(done)

    try:
        review = review_game(
            start,
            actions,
            seats=seats,
            who=who,
            seed=args.seed,
            workers=args.workers,
            from_move=args.from_move,
            on_move=progress,
        )
    except ReplayError as exc:
        print(f"heka review: {args.record}: {exc}", file=sys.stderr)
        return 2
    except ModelError as exc:  # the reviewer's evaluation (expert: HEKA_MODEL_DIR)
        print(f"heka review: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the system refused processes or pipes for --workers
        print(f"heka review: cannot review on {args.workers} worker(s): {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nheka review: interrupted", file=sys.stderr)
        return 130
    title = f"{start.game.descriptor.title}, {n} players: " + ", ".join(
        f"seat {i} {name}" for i, name in enumerate(names)
    )
    print(title, file=out)
    print(f"reviewer {who.name} ({who.iterations} iterations per decision), seed {args.seed}\n", file=out)
    for line in review_lines(start, review, names):
        print(line, file=out)
    if args.json:
        data = {
            "record": args.record,
            "index": (args.index or 0) if person is None else None,  # a play record: one game
            "game": start.game.descriptor.name,
            "players": n,
            "reviewer": who.name,
            "iterations": who.iterations,
            "seed": args.seed,
            "seats": list(review.seats),
            "moves": [_move_dict(start, r) for r in review.moves],
            "summary": [
                {
                    "seat": s.seat,
                    "name": names[s.seat] if s.seat < len(names) else "",
                    "moves": s.moves,
                    "forced": s.forced,
                    "accuracy": round(s.accuracy, 3) if s.moves else None,
                    "mean_loss": round(s.mean_loss, 6) if s.moves else None,
                    "grades": s.grades,
                }
                for s in review.summaries
            ],
        }
        try:
            write_text(args.json, json.dumps(data, indent=1) + "\n")
        except OSError as exc:
            print(f"heka review: cannot write --json {args.json}: {exc.strerror}", file=sys.stderr)
            return 1
        print(f"\nreview written to {args.json}", file=out)
    return 0
