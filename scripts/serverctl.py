"""Shared by scripts/capacity.py and scripts/soak.py: start-up helpers for a local
`heka serve` (loopback only)."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_serving(target: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Block until the server's health service says SERVING (exit if it dies or is late)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit("server exited during start-up")
            try:
                if stub.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.3)
    raise SystemExit("server not SERVING in time")
