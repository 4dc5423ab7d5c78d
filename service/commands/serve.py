"""``heka serve``: run the stateless gRPC game service."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    from service.config import add_arguments

    parser = subparsers.add_parser(
        "serve",
        help="run the gRPC game service (port 50051, metrics 9095)",
        description=(
            "Run the stateless heka.v1.GameService gRPC server. Every flag has a HEKA_* environment "
            "variable; flags win. SIGTERM drains in-flight calls and exits 0."
        ),
    )
    add_arguments(parser)
    parser.add_argument(
        "--new-key",
        action="store_true",
        help="print a fresh HEKA_STATE_KEYS entry (key id k1, 32 random bytes) and exit",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from service.config import ConfigError, load

    if getattr(args, "new_key", False):
        from service.config import SETTINGS
        from service.envelope import new_secret_spec

        given = [s.flag for s in SETTINGS if getattr(args, s.name, None) is not None]
        if given:
            print(f"heka serve: --new-key prints a key and exits: no {', '.join(given)}", file=sys.stderr)
            return 2

        print(new_secret_spec())
        return 0
    try:
        config = load(args)
    except ConfigError as exc:
        print(f"heka serve: {exc}", file=sys.stderr)
        return 2
    import os

    # gRPC core writes a line of its own (not JSON) for each failed TLS handshake: a client
    # could fill the log. Its errors still show; GRPC_VERBOSITY set by the operator wins.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from service.server import serve

    return serve(config)
