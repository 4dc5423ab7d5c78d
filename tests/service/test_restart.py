"""Restarts: a server stopped under load starts again at once on the same ports (the gRPC
port, its reservation by a multi-process supervisor, the metrics endpoint), while the old
connections sit in TIME_WAIT; a port that a running server holds is refused."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from service_helpers import KEY1, ServerProcess

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import ServerStartError, stop_all

_TIME_WAIT = "06"  # the state column of /proc/net/tcp


def time_wait_sockets(port: int) -> int:
    """Loopback TCP sockets in TIME_WAIT whose local port is ``port`` (Linux /proc)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == _TIME_WAIT:
                count += 1
    return count


def serve(*args: str) -> ServerProcess:
    return ServerProcess(["--host", "127.0.0.1", "--search-workers", "1", *args], {"HEKA_STATE_KEYS": KEY1})


def wait_serving(server: ServerProcess) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    end = time.monotonic() + 60
    while time.monotonic() < end:
        assert server.proc.poll() is None, server.log_path.read_text()
        try:
            status = health_pb2_grpc.HealthStub(server.channel).Check(
                health_pb2.HealthCheckRequest(), timeout=1
            )
            if status.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.RpcError:
            pass
        time.sleep(0.1)
    raise AssertionError("not SERVING within 60 s")


class Load:
    """``clients`` connections, each calling cheap calls and the odd bot move in a loop on a
    thread of its own until :meth:`stop`; counts the calls that answered."""

    def __init__(self, target: str, clients: int = 8) -> None:
        self.target = target
        self.ok = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(clients)]
        for t in self._threads:
            t.start()

    def _run(self, index: int) -> None:
        # One channel per client: the kernel spreads connections over the gRPC processes.
        with grpc.insecure_channel(self.target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=50), seed=index)
            n = 0
            while not self._stop.is_set():
                n += 1
                try:
                    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=n), timeout=5).state
                    stub.GetView(pb.GetViewRequest(state=token, viewer=0), timeout=5)
                    if n % 5 == 0:
                        stub.BotMove(pb.BotMoveRequest(state=token, bot=bot, apply=True), timeout=5)
                except grpc.RpcError:
                    time.sleep(0.01)  # the server is stopping
                    continue
                with self._lock:
                    self.ok += 1

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=10)


class IdleHttp2Client:
    """A client connected to a gRPC server and idle, as a channel between calls: it answers
    the server's SETTINGS and PINGs and never closes first; it closes its end once the server
    has closed its own, so the server's end lingers in TIME_WAIT on the server's port."""

    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    SETTINGS, PING, ACK = 4, 6, 1

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.sendall(self.PREFACE + self._frame(self.SETTINGS, 0, b""))
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _frame(kind: int, flags: int, payload: bytes) -> bytes:
        return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + bytes(4) + payload

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _run(self) -> None:
        with self.sock:
            try:
                while True:
                    header = self._read(9)
                    payload = self._read(int.from_bytes(header[:3], "big"))
                    kind, flags = header[3], header[4]
                    if kind in (self.SETTINGS, self.PING) and not flags & self.ACK:
                        self.sock.sendall(self._frame(kind, self.ACK, payload))
            except (EOFError, OSError):
                pass

    def join(self) -> None:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the server never closed the connection"


class IdleHttpClient:
    """An HTTP client connected to the metrics endpoint that has not sent its request yet;
    it closes once the server has closed its end."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)

    def join(self) -> None:
        with self.sock:
            while self.sock.recv(65536):
                pass


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return resp.read().decode()


@pytest.fixture
def servers() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    stop_all(started, grace=10)


@pytest.mark.parametrize(
    ("before", "after"),
    [(1, 1), (1, 2), (2, 1), (2, 2)],
    ids=["1-then-1", "1-then-2", "2-then-1", "2-then-2"],
)
def test_a_server_stopped_under_load_restarts_at_once_on_its_ports(
    servers: list[ServerProcess], before: int, after: int
) -> None:
    """Stop a server (``before`` gRPC processes) with clients connected and calling, and
    start one (``after`` processes) on the same gRPC and metrics ports at once."""
    first = serve("--grpc-processes", str(before))
    servers.append(first)
    wait_serving(first)
    port, metrics_port = first.port, first.metrics_port
    load = Load(first.target)
    held: list[Any] = [IdleHttp2Client(port) for _ in range(4)]
    held += [IdleHttpClient(metrics_port) for _ in range(4)]
    try:
        end = time.monotonic() + 30
        while load.ok < 40 and time.monotonic() < end:
            scrape(metrics_port)  # each scrape leaves a closed connection on the metrics port
            time.sleep(0.05)
        assert load.ok >= 40, "the load never got going"
        assert first.stop(grace=30) == 0  # SIGTERM with the clients connected and calling
    finally:
        load.stop()
        for client in held:
            client.join()
    # The precondition of the check: the closed connections linger on both ports.
    assert time_wait_sockets(port) > 0
    assert time_wait_sockets(metrics_port) > 0
    again = serve("--grpc-processes", str(after), "--port", str(port), "--metrics-port", str(metrics_port))
    servers.append(again)
    wait_serving(again)
    assert (again.port, again.metrics_port) == (port, metrics_port)
    token = again.stub.CreateGame(pb.CreateGameRequest(game="aton", seed=1), timeout=10).state
    assert again.stub.GetView(pb.GetViewRequest(state=token), timeout=10).view.status.current_player >= 0
    assert "heka_grpc_server_started_total" in scrape(metrics_port)
    assert again.stop(grace=30) == 0


@pytest.mark.parametrize("processes", [1, 2], ids=["1-process", "2-processes"])
def test_a_port_a_running_server_holds_is_refused(servers: list[ServerProcess], processes: int) -> None:
    """Rebinding through TIME_WAIT must not let a second server share a live port
    (SO_REUSEPORT would spread the first server's clients over both)."""
    first = serve("--grpc-processes", "2", "--metrics-port", "-1")
    servers.append(first)
    wait_serving(first)
    with pytest.raises(ServerStartError, match="exited with 2"):
        servers.append(serve("--grpc-processes", str(processes), "--port", str(first.port)))
    wait_serving(first)  # the first server is unharmed


_FAILED_START = """
import json, os, socket, sys
from service import config, server as srv

busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen()
port = busy.getsockname()[1]
# No metrics port: only the busy gRPC port may fail the start, whatever else runs here.
env = {"HEKA_HOST": "127.0.0.1", "HEKA_SEARCH_WORKERS": "2", "HEKA_METRICS_PORT": "-1"}
cfg = config.load(environ={**os.environ, **env})
metrics_dir, _ = config.prepare_metrics_dir("")
server = srv.Server(cfg, srv.load_keys(cfg), metrics_dir, port=port)
try:
    server.start(announce=False)
except OSError as exc:
    error = str(exc)
alive = []
for pid in server.worker_pids:
    try:
        os.kill(pid, 0)
        alive.append(pid)
    except ProcessLookupError:
        pass
print(json.dumps({"error": error, "workers": server.worker_pids, "alive": alive}))
"""


def test_a_failed_start_leaves_no_search_worker_behind() -> None:
    """A start that fails at the gRPC bind (the port in use) stops the search workers it had
    started before the error propagates: none outlives the start, nor writes to a metrics
    directory that the failing server then removes."""
    import json
    import subprocess
    import sys

    from service_helpers import ROOT

    out = subprocess.run(
        [sys.executable, "-c", _FAILED_START],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HEKA_STATE_KEYS": KEY1},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert "cannot bind gRPC port" in result["error"]
    assert len(result["workers"]) == 2
    assert result["alive"] == []
    assert "Traceback" not in out.stderr
