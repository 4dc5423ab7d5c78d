"""``heka replay``: deal a game exactly as a server did, and replay its actions (operators).

A server keys every game's chance with its sealing key (docs/security.md): the seed alone
does not fix the deal. With the same keys (``HEKA_STATE_KEYS`` / ``HEKA_STATE_KEYS_FILE``, or
``--state-keys-file``), the seed ``CreateGame`` returned and the id of the key that sealed the
game's first token, this command deals the same game and applies the given actions, printing
the omniscient state and every event. It reads keys and prints hidden cards: run it only where
the keys may be.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from service.commands.files import json_problem, read_stdin, read_text
from service.commands.options import game_name, state_keys, uint64_seed


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "replay",
        help="deal a game as a server did (its keys and seed) and replay actions; prints hidden cards",
        description="Deal the game a server created from --seed, with the chance keyed by the server's "
        "key (HEKA_STATE_KEYS or HEKA_STATE_KEYS_FILE), and apply the actions of --actions (one id or "
        "action text per line; '-' for standard input), printing the full state and the events of each "
        "step. For operators: the output shows every hidden card.",
    )
    p.add_argument("--game", required=True, type=game_name, help="game name (aton, osirium)")
    p.add_argument("--seed", type=uint64_seed, required=True, help="the seed CreateGame returned")
    p.add_argument("--players", type=int, default=None, help="player count (default: the game's minimum)")
    p.add_argument("--options", default="{}", help="creation options as JSON, e.g. '{\"teams\": true}'")
    p.add_argument("--key-id", default="", help="id of the key that sealed the game (default: the first)")
    p.add_argument("--state-keys-file", default="", help="file holding the keys (default: the environment)")
    p.add_argument(
        "--previous-state-versions",
        action="store_true",
        help="the game was created by a server with HEKA_PREVIOUS_STATE_VERSIONS=true",
    )
    p.add_argument("--actions", default="", help="file of actions, one per line ('-': standard input)")
    p.add_argument("--quiet", action="store_true", help="print only the final state")
    p.set_defaults(func=run)


def _actions(path: str) -> list[str]:
    if not path:
        return []
    text = read_stdin("--actions") if path == "-" else read_text(path, "--actions")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def run(args: argparse.Namespace) -> int:
    from engine.core import EngineError
    from engine.registry import get_game
    from service.envelope import KeyConfigError, parse_keys

    try:
        keys = parse_keys(*state_keys(args.state_keys_file))
        if not keys:
            raise KeyConfigError("no key: set HEKA_STATE_KEYS or HEKA_STATE_KEYS_FILE (or --state-keys-file)")
        by_id = {k.key_id: k for k in keys}
        key = by_id.get(args.key_id) if args.key_id else keys[0]
        if key is None:
            raise KeyConfigError(f"no key {args.key_id!r} among {', '.join(by_id)}")
        try:
            options = json.loads(args.options)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"--options is not JSON ({json_problem(exc)})") from None
        if not isinstance(options, dict):
            raise ValueError("--options must be a JSON object")
        game = get_game(args.game)
        chance = key.game_rng(game.descriptor.name, args.seed, previous_versions=args.previous_state_versions)
        state = game.new_initial_state(args.players, seed=args.seed, options=options, rng=chance)
        actions = _actions(args.actions)
    except (OSError, ValueError) as exc:  # KeyConfigError, EngineError and JSON errors are ValueErrors
        print(f"heka replay: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    print(f"# {game.descriptor.name}, seed {args.seed}, key {key.key_id}", file=out)
    if not args.quiet:
        print(state.to_text(), file=out)
    for step, text in enumerate(actions, 1):
        try:
            # An id is digits with at most one minus (``--1`` is action text, refused by name).
            digits = text[1:] if text.startswith("-") else text
            is_id = digits.isascii() and digits.isdigit() and len(digits) <= 18
            action = int(text) if is_id else game.string_to_action(text)
            seat = state.current_player()
            events = state.apply_action(action)
        except EngineError as exc:
            print(f"heka replay: step {step} ({text!r}): {exc}", file=sys.stderr)
            return 2
        if not args.quiet:
            print(f"\n## step {step}: seat {seat}: {game.action_to_string(action)}", file=out)
            for event in events:
                print(f"- {event.text}", file=out)
            print(state.to_text(), file=out)
    if args.quiet:
        print(state.to_text(), file=out)
    print(f"# serialized: {state.serialize()}", file=out)
    return 0
