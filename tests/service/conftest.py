"""A real ``heka serve`` process on a loopback port, and real gRPC clients.

Each server runs as a subprocess (``python -m service.cli serve --port 0``) so that the
tests exercise exactly what operators run: worker processes, multiprocess metrics, signal
handling. The "listening" JSON log line tells the bound ports.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from service_helpers import KEY1, ServerProcess

from service.loadtest.local import stop_all


@pytest.fixture(scope="session")
def start_server() -> Iterator[Any]:
    started: list[ServerProcess] = []

    def start(*args: str, **env: str) -> ServerProcess:
        server = ServerProcess(list(args), dict(env))
        started.append(server)
        return server

    yield start
    stop_all(started)
    for server in started:
        server.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def server(start_server: Any) -> ServerProcess:
    """The shared server: key k1, two gRPC processes with one search worker each, small caps."""
    return start_server(
        "--grpc-processes",
        "2",
        "--search-workers",
        "1",
        "--max-concurrent-searches",
        "4",
        "--max-iterations",
        "5000",
        "--max-milliseconds",
        "10000",
        "--max-workers-per-search",
        "2",
        HEKA_STATE_KEYS=KEY1,
    )


@pytest.fixture(scope="session")
def stub(server: ServerProcess) -> Any:
    return server.stub
