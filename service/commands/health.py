"""``heka health``: ask a server's gRPC health service whether it serves, and exit 0 if it
does. For exec probes and container health checks where the kubelet's own gRPC probe cannot
go: a port that speaks TLS (docs/operations.md, "TLS").
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from service.commands.options import (
    add_tls_client_arguments,
    local_server,
    seconds_up_to,
    server_address,
    tls_client,
    utf8_text,
)

#: The longest --timeout: a probe that waits longer is no probe.
MAX_TIMEOUT_SECONDS = 3600.0

#: Exit statuses: serving; not serving or no answer; bad arguments.
SERVING, NOT_SERVING, USAGE = 0, 1, 2


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "health",
        help="check a server's health service (exit 0: SERVING); for exec probes, TLS included",
        description="Call grpc.health.v1.Health/Check on --target and exit 0 when it answers SERVING, "
        "1 when it answers anything else or not within --timeout, 2 on a bad argument. With --tls-ca "
        "the call goes over TLS; with --tls-cert and --tls-key too, over mutual TLS.",
    )
    p.add_argument(
        "--target",
        type=server_address,
        default=None,
        help="host:port (default: localhost and HEKA_PORT, else 50051)",
    )
    p.add_argument(
        "--service", default="", type=utf8_text, help="the service to ask about (default: '', the server)"
    )
    p.add_argument(
        "--timeout",
        type=seconds_up_to(MAX_TIMEOUT_SECONDS),
        default=2.0,
        help=f"seconds to wait for the answer (above 0, at most {MAX_TIMEOUT_SECONDS:,.0f}; default 2)",
    )
    add_tls_client_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        target = args.target or local_server("localhost")
    except ValueError as exc:
        print(f"heka health: {exc}", file=sys.stderr)
        return USAGE
    try:
        tls = tls_client(args)
    except ValueError as exc:
        print(f"heka health: {exc}", file=sys.stderr)
        return USAGE
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # a failed handshake is this command's answer
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    if tls is not None:
        channel = grpc.secure_channel(target, tls.credentials(), options=tls.options())
    else:
        channel = grpc.insecure_channel(target)
    with channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
        except grpc.RpcError as exc:
            code = exc.code()
            print(f"heka health: {target}: {code.name}: {exc.details()}", file=sys.stderr)
            return NOT_SERVING
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"heka health: {target}: {status}", file=sys.stderr)
        return NOT_SERVING
    print(status)
    return SERVING
