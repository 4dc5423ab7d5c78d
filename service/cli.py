"""The ``heka`` command line: one sub-command per module in ``service.commands``.

Each command module defines ``register(subparsers) -> None`` which adds its parser and sets
``func=run`` (a callable taking the parsed ``argparse.Namespace`` and returning an exit
code). Command modules keep heavy imports (grpc, prometheus) inside ``run`` so that
``heka --help`` and engine-only commands start fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from service.commands import arena, loadtest, play, render, replay, review, serve, simulate, train

# Order is the order shown by --help.
COMMANDS = (serve, simulate, arena, play, review, train, loadtest, replay, render)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heka",
        description="heka: Aton and Osirium game engines, MCTS bots and a stateless gRPC service.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
