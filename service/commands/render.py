"""``heka render``: a board diagram as SVG, drawn from a seat's view of a real state.

The state is a new game of ``--game`` (``--seed``, ``--players``, options) after ``--moves``
uniformly random legal actions (seeded by ``--seed``, as ``heka simulate`` plays them), or a
given state: a state text (``aton:2:...``, what ``heka replay`` prints as ``serialized``) or
a sealed token (opened with the server's keys: ``HEKA_STATE_KEYS`` / ``HEKA_STATE_KEYS_FILE``
or ``--state-keys-file``). The picture is drawn from the typed view ``GetView`` returns
(``service.convert.view_message``) for ``--seat`` (or the public view), by
:mod:`service.render_svg`: it shows what that seat may see, nothing more.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from service.commands.files import check_distinct, check_writable, read_stdin, write_text
from service.commands.options import state_keys


def svg_text(text: str) -> str:
    """An argparse type: text an SVG (XML 1.0) can hold; a control character, or one XML
    forbids, would make a file no viewer opens."""
    for ch in text:
        code = ord(ch)
        if (code < 0x20 and ch not in "\t\n\r") or 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
            raise argparse.ArgumentTypeError(f"U+{code:04X} cannot appear in an SVG, in {text!r}")
    return text


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "render",
        help="draw a board diagram (SVG) of a seat's view of a game",
        description="Draw a board diagram as SVG from a seat's view (GetView's typed view) of a new game "
        "after --moves seeded random moves, or of a given state text or token (--state). The picture shows "
        "only what the seat may see.",
    )
    p.add_argument("--game", default="", help="game name (aton, osirium); not with --state")
    p.add_argument(
        "--seed", type=int, default=None, help="the game's seed, also seeding the moves (default: 1)"
    )
    p.add_argument("--players", type=int, default=None, help="player count (default: the game's minimum)")
    p.add_argument("--teams", action="store_true", help="team variant (Osirium, 4 players)")
    p.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="game option (repeatable)"
    )
    p.add_argument("--moves", type=int, default=0, help="random legal moves to play first (default: 0)")
    p.add_argument(
        "--state",
        default="",
        help="a state text (game:version:...) or a sealed token, instead of --game; '-': standard input",
    )
    p.add_argument("--state-keys-file", default="", help="keys to open a token (default: the environment)")
    p.add_argument("--seat", type=int, default=None, help="the viewing seat (default: 0)")
    p.add_argument("--public", action="store_true", help="the public (spectator) view instead of a seat's")
    p.add_argument(
        "--title",
        default="",
        type=svg_text,
        help="the diagram's title (default: the game and its player count)",
    )
    p.add_argument("--out", default="", help="SVG file to write (default, or '-': standard output)")
    p.set_defaults(func=run)


class RenderError(ValueError):
    """Bad input to ``heka render`` (exit status 2)."""


def _options(pairs: list[str], teams: bool) -> dict[str, Any]:
    """``--option NAME=VALUE`` pairs (``true``/``false`` and integers typed) and ``--teams``."""
    from service.commands.options import parse_option_pairs, with_teams

    try:
        out: dict[str, Any] = dict(parse_option_pairs(pairs))
    except ValueError as exc:
        raise RenderError(str(exc)) from None
    return with_teams(out, teams)


def _read_state(text: str, keys_file: str) -> tuple[Any, str]:
    """A state from a state text or a token, and a description of it for the title."""
    from engine.registry import get_game
    from service.envelope import KeyRing, parse_keys

    text = (read_stdin("--state") if text == "-" else text).strip()
    if not text:
        raise RenderError("--state is empty: give a state text (game:version:...) or a token")
    how = "from a state text"
    if ":" not in text:  # base64url has no ':': a token
        keys = parse_keys(*state_keys(keys_file))
        if not keys:
            raise RenderError(
                "--state is not a state text (game:version:...) and no key opens a token: "
                "set HEKA_STATE_KEYS or HEKA_STATE_KEYS_FILE (or --state-keys-file)"
            )
        text = KeyRing(keys).open(text).serialized
        how = "from a state token"
    game = get_game(text.partition(":")[0])
    return game.deserialize_state(text), how


def _new_state(args: argparse.Namespace) -> tuple[Any, str]:
    from engine.registry import get_game

    if not args.game:
        raise RenderError("give --game (aton, osirium) or --state")
    if args.moves < 0:
        raise RenderError(f"--moves must not be negative, got {args.moves}")
    game = get_game(args.game)
    options = _options(args.option, args.teams)
    seed = 1 if args.seed is None else args.seed
    state = game.new_initial_state(args.players, seed, options)
    rng = random.Random(seed)
    played = 0
    while played < args.moves and not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
        played += 1
    if played < args.moves:
        print(f"heka render: the game ended after {played} moves", file=sys.stderr)
    shown = f", options {json.dumps(options, sort_keys=True)}" if options else ""
    return state, f"seed {seed}{shown}, after {played} random moves"


def run(args: argparse.Namespace) -> int:
    from service.convert import view_message
    from service.render_svg import render_view

    try:
        check_distinct([("--state-keys-file", args.state_keys_file), ("--out", args.out)])
        if args.out not in ("", "-"):
            check_writable(args.out, "--out")  # a FileArgError naming what is in the way
        if args.state and args.game:
            raise RenderError("give either --game or --state, not both")
        if args.state_keys_file and not args.state:
            raise RenderError("--state-keys-file opens a token: it goes with --state")
        if args.state:
            # They make a new game: a state given is drawn as it is, never silently changed.
            given = [
                flag
                for flag, value in (
                    ("--seed", args.seed is not None),
                    ("--players", args.players is not None),
                    ("--teams", args.teams),
                    ("--option", bool(args.option)),
                    ("--moves", args.moves != 0),
                )
                if value
            ]
            if given:
                raise RenderError(f"{', '.join(given)} make a new game (with --game): not with --state")
        state, how = _read_state(args.state, args.state_keys_file) if args.state else _new_state(args)
        n = state.num_players
        seat = 0 if args.seat is None else args.seat
        if args.public and args.seat is not None:
            raise RenderError("give either --seat (a seat's view) or --public (the public view), not both")
        if args.public:
            viewer = None
        elif not 0 <= seat < n:
            raise RenderError(f"--seat {seat} is not a seat: this game has {n} players, seats 0..{n - 1}")
        else:
            viewer = seat
        view = view_message(state, viewer)
        who = "the public view" if viewer is None else f"seat {viewer}'s view"
        svg = render_view(view, title=args.title, caption=f"{how} · {who}")
    except OSError as exc:  # the keys file
        print(f"heka render: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    except ValueError as exc:  # RenderError, EngineError, TokenError, KeyConfigError
        print(f"heka render: {exc}", file=sys.stderr)
        return 2
    if args.out in ("", "-"):
        sys.stdout.write(svg)
    else:
        try:
            write_text(args.out, svg)
        except OSError as exc:
            print(f"heka render: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
            return 2
    return 0
