"""service/loadtest/local.py, the one way benches and scripts run a local server: a real
``heka serve`` started, found, measured and stopped; the /proc helpers. No timing asserted."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import (
    LocalServer,
    Sampler,
    ServerStartError,
    add_server_options,
    check_loopback,
    children,
    cpu_seconds,
    descendants,
    rss_bytes,
    server_for,
    start_heka,
    stop_all,
)

#: A stand-in server: announces itself like heka, then sleeps (ignoring SIGTERM with "stubborn").
FAKE = """
import json, signal, sys, time
if sys.argv[1] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(json.dumps({"event": "listening", "port": 1}), flush=True)
time.sleep(60)
"""


def test_a_heka_server_with_two_grpc_processes_is_started_found_measured_and_stopped(tmp_path: Path):
    log = tmp_path / "server.log"
    with start_heka("--grpc-processes", "2", env={"HEKA_ACCESS_LOG": "false"}, log=log) as server:
        assert server.info["grpc_processes"] == 2 and server.port > 0
        assert server.target == f"127.0.0.1:{server.port}" and server.metrics_port == -1
        with grpc.insecure_channel(server.target) as channel:
            games = pb_grpc.GameServiceStub(channel).ListGames(pb.ListGamesRequest(), timeout=10)
        assert {g.name for g in games.games} >= {"aton", "osirium"}

        serving = server.grpc_pids()
        tree = server.tree()
        assert len(serving) == 2 and server.pid not in serving
        assert set(serving) <= set(children(server.pid)) and set(serving) < set(tree)
        # The search workers (and their forkservers) are below the gRPC processes.
        assert len(tree) >= 5, tree
        assert cpu_seconds(serving) > 0  # start-up alone costs CPU
        assert cpu_seconds(tree) >= cpu_seconds(serving)
        assert all(rss_bytes(pid) > 0 for pid in tree)
    assert server.returncode == 0  # SIGTERM drains and exits cleanly
    assert all(rss_bytes(pid) == 0 for pid in tree)  # none left behind
    assert log.exists() and any(line.get("event") == "listening" for line in server.log_lines())


def test_a_server_that_cannot_start_raises_with_its_log():
    with pytest.raises(ServerStartError, match="exited with 2") as caught:
        start_heka(env={"HEKA_STATE_KEYS": "not a key"})
    assert "cannot start" in str(caught.value)


def test_stop_kills_a_server_that_ignores_sigterm():
    server = LocalServer([sys.executable, "-c", FAKE, "stubborn"], health=False)
    assert server.grpc_pids() == [server.pid]  # no children: the server serves itself
    log = server.log_path
    assert server.stop(grace=0.3) == -9
    assert server.stop() == -9  # idempotent
    assert not log.exists()  # a temporary log goes with the server
    assert server.log_lines()[0] == {"event": "listening", "port": 1}  # but its lines stay


#: A stand-in that, on SIGTERM, marks its own file and exits only once its peer's file is marked:
#: stopped one after another, the first would wait for its peer forever.
PEERS = """
import json, pathlib, signal, sys, time
mine, peer = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def drain(signum, frame):
    mine.touch()
    while not peer.exists():
        time.sleep(0.01)
    sys.exit(0)
signal.signal(signal.SIGTERM, drain)
print(json.dumps({"event": "listening", "port": 1}), flush=True)
time.sleep(60)
"""


def test_stop_all_signals_every_server_before_waiting_for_any(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    servers = [
        LocalServer([sys.executable, "-c", PEERS, str(mine), str(peer)], health=False)
        for mine, peer in ((a, b), (b, a))
    ]
    stop_all(servers, grace=20)
    assert [s.returncode for s in servers] == [0, 0]  # each drained; none killed
    assert a.exists() and b.exists()


def test_proc_helpers_on_this_process_and_a_child():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in children(os.getpid())
        assert child.pid in descendants(os.getpid()) and descendants(os.getpid())[0] == os.getpid()
        assert descendants(child.pid) == [child.pid]
        assert cpu_seconds([os.getpid()]) > 0
        assert rss_bytes(child.pid) > 0
        with Sampler(lambda: rss_bytes(child.pid), interval=0.01) as sampler:
            pass
        assert len(sampler.values) >= 2 and min(sampler.values) > 0
    finally:
        child.kill()
        child.wait()
    assert rss_bytes(child.pid) == 0 and cpu_seconds([child.pid]) == 0


def test_only_loopback_targets():
    for target in ("127.0.0.1:50051", "[::1]:50051", "localhost:1"):
        assert check_loopback(target) == target
    for target in ("10.0.0.1:50051", "example.com:443"):
        with pytest.raises(SystemExit, match="loopback"):
            check_loopback(target)


def test_a_bench_given_a_target_starts_no_server():
    parser = argparse.ArgumentParser()
    add_server_options(parser)
    with contextlib.ExitStack() as stack:
        args = parser.parse_args(["--target", "127.0.0.1:50051", "--server-args", "--grpc-processes 2"])
        assert server_for(args, stack) == ("127.0.0.1:50051", None)
        with pytest.raises(SystemExit, match="loopback"):
            server_for(parser.parse_args(["--target", "192.0.2.1:50051"]), stack)
