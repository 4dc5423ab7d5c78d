"""Stop/start cycles under load on one port: does a restarted server bind at once?

Each cycle starts ``heka serve`` on 127.0.0.1 on the same gRPC and metrics ports as the
cycle before, loads it (client threads calling CreateGame / GetView / a small BotMove,
idle HTTP/2 connections that close only after the server, metrics scrapes), sends SIGTERM
and starts the next one as soon as the process has exited, while the old connections are
in TIME_WAIT. A cycle fails when the server does not start (a bind error) or does not serve.

    .venv/bin/python bench/restart_cycles.py --cycles 20 --processes 1 2
    .venv/bin/python bench/restart_cycles.py --cycles 20 --processes 1 2 --alternate

Loopback only; every server is stopped by the script; bounded by --cycles and --load-seconds.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import ROOT, ServerStartError, start_heka

_TIME_WAIT = "06"


def time_wait(port: int) -> int:
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for row in fh.read().splitlines()[1:]:
                fields = row.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == _TIME_WAIT:
                    count += 1
    return count


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def idle_http2(port: int) -> None:
    """An idle HTTP/2 client: answers SETTINGS and PINGs, closes only after the server."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    except OSError:
        return
    with sock:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
        buf = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
                while len(buf) >= 9:
                    size = int.from_bytes(buf[:3], "big")
                    if len(buf) < 9 + size:
                        break
                    kind, flags, payload = buf[3], buf[4], buf[9 : 9 + size]
                    buf = buf[9 + size :]
                    if kind in (4, 6) and not flags & 1:
                        sock.sendall(len(payload).to_bytes(3, "big") + bytes([kind, 1]) + bytes(4) + payload)
        except OSError:
            return


def caller(target: str, stop: threading.Event, counts: list[int], index: int) -> None:
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        stub = pb_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
        bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=50), seed=index)
        n = 0
        while not stop.is_set():
            n += 1
            try:
                token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=n), timeout=5).state
                stub.GetView(pb.GetViewRequest(state=token, viewer=0), timeout=5)
                if n % 5 == 0:
                    stub.BotMove(pb.BotMoveRequest(state=token, bot=bot, apply=True), timeout=5)
                counts[index] += 1
            except grpc.RpcError:
                time.sleep(0.01)


def cycle(
    processes: int, port: int, metrics_port: int, clients: int, load_seconds: float, *, root: Path
) -> dict[str, float]:
    start = time.monotonic()
    args = ["--grpc-processes", str(processes), "--port", str(port), "--metrics-port", str(metrics_port)]
    try:
        server = start_heka(*args, metrics=True, timeout=60, root=root)
    except ServerStartError as exc:
        bind = "cannot bind" in str(exc) or "Address already in use" in str(exc)
        return {"started": 0, "bind_error": int(bind), "start_s": time.monotonic() - start}
    started = time.monotonic() - start
    stop = threading.Event()
    counts = [0] * clients
    threads = [threading.Thread(target=caller, args=(server.target, stop, counts, i)) for i in range(clients)]
    threads += [threading.Thread(target=idle_http2, args=(port,)) for _ in range(4)]
    for t in threads:
        t.start()
    end = time.monotonic() + load_seconds
    while time.monotonic() < end:
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
            resp.read()
        time.sleep(0.1)
    code = server.stop(grace=60)  # SIGTERM under load
    stop.set()
    for t in threads:
        t.join(timeout=30)
    return {
        "started": 1,
        "bind_error": 0,
        "start_s": started,
        "calls": sum(counts),
        "exit": code,
        "time_wait_grpc": time_wait(port),
        "time_wait_metrics": time_wait(metrics_port),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--load-seconds", type=float, default=1.0)
    parser.add_argument(
        "--server-root", type=Path, default=ROOT, help="checkout to run the server from (e.g. an older one)"
    )
    parser.add_argument(
        "--alternate",
        action="store_true",
        help="one run whose cycles take --processes in turn (1, 2, 1, ...)",
    )
    args = parser.parse_args()
    if not 1 <= args.cycles <= 200:
        parser.error("--cycles must be in 1..200")
    failures = 0
    runs = [args.processes] if args.alternate else [[p] for p in args.processes]
    for counts in runs:
        processes = "/".join(map(str, counts))
        port, metrics_port = free_port(), free_port()
        rows = []
        for i in range(args.cycles):
            row = cycle(
                counts[i % len(counts)],
                port,
                metrics_port,
                args.clients,
                args.load_seconds,
                root=args.server_root,
            )
            rows.append(row)
            print(
                f"processes={processes} cycle={i + 1} " + " ".join(f"{k}={v:g}" for k, v in row.items()),
                flush=True,
            )
        bind_errors = sum(int(r["bind_error"]) for r in rows)
        not_started = sum(1 - int(r["started"]) for r in rows)
        unclean = sum(1 for r in rows if r.get("exit", 0) != 0)
        lingering = sum(
            1 for r in rows if r.get("time_wait_grpc", 0) > 0 and r.get("time_wait_metrics", 0) > 0
        )
        calls = sum(int(r.get("calls", 0)) for r in rows)
        failures += not_started + unclean
        print(
            f"SUMMARY processes={processes} cycles={len(rows)} failures_to_bind={bind_errors} "
            f"failures_to_start={not_started} unclean_exits={unclean} "
            f"stops_leaving_time_wait_on_both_ports={lingering} calls_answered={calls}",
            flush=True,
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
