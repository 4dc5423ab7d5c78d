"""The ``heka`` command line: one sub-command per module in ``service.commands``.

Each command module defines ``register(subparsers) -> None`` which adds its parser and sets
``func=run`` (a callable taking the parsed ``argparse.Namespace`` and returning an exit
code). Command modules keep heavy imports (grpc, prometheus) inside ``run`` so that
``heka --help`` and engine-only commands start fast.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from service.commands import arena, health, loadtest, play, render, replay, review, serve, simulate, train

# Order is the order shown by --help.
COMMANDS = (serve, health, simulate, arena, play, review, train, loadtest, replay, render)


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose message for a flag given a value that begins with '-' says
    how to write it (argparse reads ``--duration -5s`` as two flags)."""

    #: The arguments being parsed (set by :func:`main`; subcommands' parsers share it).
    argv: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:
        match = re.fullmatch(r"argument (--[\w-]+)(?:/-\w)?: expected one argument", message)
        if match:
            flag = match.group(1)
            given = list(Parser.argv)
            after = [given[i + 1] for i, arg in enumerate(given[:-1]) if arg == flag]
            if any(value.startswith("-") for value in after):
                message += f" (a value that begins with '-' is written {flag}=VALUE)"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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
    Parser.argv = list(sys.argv[1:] if argv is None else argv)
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
