"""Overload: what a team load-testing heka sees as the offered load grows past capacity.

For one server checkout (``--server-root``; default this one) on its defaults, each level
runs ``heka loadtest --scenario play`` (frontends playing complete Aton games against
``mcts:easy`` bots inside each ApplyAction, the load tool of ``--client-root``) for
``--duration`` seconds, ``--runs`` times, and reports the median of the runs:

* closed loop with ``L`` x the search slots of concurrent players (``--levels``, default
  1 4 10), no think time;
* open loop at ``F`` x capacity (``--open``, default 1.5): games started at a fixed rate,
  capacity being the best closed-loop goodput, the saturation throughput (or ``--capacity``).

Per level: RPCs per second, goodput (bot moves per second, from the server's
``heka_searches_total``: the same count for any client), calls refused with a retry hint
(shed), other errors, and the latency of the bot calls (p50 / p99 of ApplyAction). A probe
on its own connection calls GetView and the health service 20 times a second throughout:
its p99 and any answer but SERVING are reported.

    .venv/bin/python bench/overload.py                           # this checkout
    .venv/bin/python bench/overload.py --server-root ../old --client-root ../old --capacity 170

Loopback only; every server is stopped by the script.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.table import print_table
from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import ROOT, heka_env, start_heka


def searches(metrics_port: int) -> float:
    """heka_searches_total summed over its labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("heka_searches_total{")
    )


class Probe:
    """GetView and health checks at a fixed rate on a connection of their own."""

    def __init__(self, target: str, rate: float = 20.0) -> None:
        self.channel = grpc.insecure_channel(target)
        self.stub = pb_grpc.GameServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.health = health_pb2_grpc.HealthStub(self.channel)
        self.token = self.stub.CreateGame(pb.CreateGameRequest(game="aton")).state
        self.rate = rate
        self.latencies: list[float] = []
        self.not_serving = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        period = 1.0 / self.rate
        next_at = time.monotonic()
        while not self._stop.is_set():
            start = time.monotonic()
            try:
                self.stub.GetView(pb.GetViewRequest(state=self.token, viewer=0), timeout=5)
                status = self.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status
                if status != health_pb2.HealthCheckResponse.SERVING:
                    self.not_serving += 1
                self.latencies.append(time.monotonic() - start)
            except grpc.RpcError:
                self.failures += 1
            next_at += period
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def __enter__(self) -> Probe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.channel.close()

    def p99_ms(self) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return 1000.0 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def loadtest(
    client_root: Path, target: str, duration: float, load: list[str], nice: int = 0
) -> dict[str, Any]:
    command = [sys.executable, "-m", "service.cli", "loadtest", "--target", target, "--scenario", "play"]
    command += ["--difficulty", "easy", "--duration", f"{duration:g}s", "--json", "--no-progress", *load]
    out = subprocess.run(
        command,
        check=False,
        cwd=client_root,
        env=heka_env(None, client_root),
        capture_output=True,
        text=True,
        timeout=600,
        # On one machine the load generator competes with the searches for the cores; niced
        # at or above the search workers (HEKA_WORKER_NICE) it takes what they leave, as a
        # client on another machine would.
        preexec_fn=(lambda: os.nice(nice)) if nice else None,
    )
    if not out.stdout.strip():
        raise RuntimeError(f"loadtest printed nothing (exit {out.returncode}): {out.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def loadtest_help(client_root: Path) -> str:
    command = [sys.executable, "-m", "service.cli", "loadtest", "--help"]
    env = heka_env(None, client_root)
    done = subprocess.run(command, cwd=client_root, env=env, capture_output=True, text=True, check=False)
    return done.stdout


def shed_and_errors(report: dict[str, Any]) -> tuple[int, int]:
    """Refusals with a retry hint (RESOURCE_EXHAUSTED / UNAVAILABLE with RetryInfo) and other
    errors. A load tool that does not back off counts its refusals as errors: those are
    read from the status codes."""
    shed = int(report.get("shed", 0))
    codes = report.get("status_codes", {})
    refused = sum(int(v) for k, v in codes.items() if k in ("RESOURCE_EXHAUSTED", "UNAVAILABLE"))
    errors = int(report.get("errors", 0))
    if "shed" not in report:  # a load tool without backoff: every refusal is an error
        return refused, errors - refused
    return shed, errors


def bot_call_latency(report: dict[str, Any]) -> tuple[float, float]:
    method = report.get("methods", {}).get("ApplyAction", {})
    latency = method.get("latency", method)
    return 1000.0 * float(latency.get("p50", 0.0)), 1000.0 * float(latency.get("p99", 0.0))


def run_level(args: argparse.Namespace, server: Any, load: list[str], label: str) -> dict[str, Any]:
    rows = []
    for run in range(args.runs):
        before, start = searches(server.metrics_port), time.monotonic()
        with Probe(server.target) as probe:
            report = loadtest(args.client_root, server.target, args.duration, load, args.client_nice)
        elapsed = time.monotonic() - start
        moves = searches(server.metrics_port) - before
        shed, errors = shed_and_errors(report)
        p50, p99 = bot_call_latency(report)
        rows.append(
            {
                "rpc_per_s": float(report["rate"]),
                "goodput": moves / float(report["elapsed_seconds"]),
                "shed": shed,
                "errors": errors,
                "p50_ms": p50,
                "p99_ms": p99,
                "probe_p99_ms": probe.p99_ms(),
                "probe_not_serving": probe.not_serving,
                "probe_failures": probe.failures,
                "games": int(report.get("tasks", {}).get("completed", 0)),
                "wall_s": elapsed,
            }
        )
        print(f"  {label} run {run + 1}: {json.dumps(rows[-1])}", file=sys.stderr)
    median = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    median["probe_not_serving"] = max(r["probe_not_serving"] for r in rows)
    median["probe_failures"] = max(r["probe_failures"] for r in rows)
    return {"level": label, "median": median, "runs": rows}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server-root", type=Path, default=ROOT, help="checkout to run the server from")
    parser.add_argument(
        "--client-root", type=Path, default=None, help="checkout of the load tool (default: server's)"
    )
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 10], help="closed loop: x slots")
    parser.add_argument("--open", type=float, default=1.5, help="open loop at this x capacity (0: none)")
    parser.add_argument(
        "--capacity", type=float, default=None, help="bot moves/s (default: the best closed-loop goodput)"
    )
    parser.add_argument("--slots", type=int, default=os.cpu_count() or 1, help="the server's search slots")
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per run")
    parser.add_argument("--runs", type=int, default=3, help="runs per level (the median is reported)")
    parser.add_argument("--json", type=Path, default=None, help="write every run here")
    parser.add_argument(
        "--client-nice", type=int, default=10, help="niceness of the load generator (default: 10)"
    )
    args = parser.parse_args()
    args.client_root = args.client_root or args.server_root
    results: list[dict[str, Any]] = []
    capacity = args.capacity
    # The server on its defaults: one search slot per core (start_heka's own default is one).
    env = {"HEKA_SEARCH_WORKERS": str(args.slots)}
    with start_heka("--no-access-log", root=args.server_root, metrics=True, env=env) as server:
        warmup = ["--concurrency", str(args.slots)]
        loadtest(args.client_root, server.target, 5.0, warmup, args.client_nice)
        for level in args.levels:
            row = run_level(args, server, ["--concurrency", str(level * args.slots)], f"closed {level}x")
            results.append(row)
        if capacity is None:  # the saturation throughput: the best closed-loop goodput
            capacity = max((r["median"]["goodput"] for r in results), default=None)
        if args.open and capacity:
            one = next((r for r in results if r["level"] == "closed 1x"), None)
            moves_per_game = (
                one["median"]["goodput"] * args.duration / max(one["median"]["games"], 1) if one else 66.0
            )
            rate = args.open * capacity / moves_per_game
            load = ["--rate", f"{rate:.3f}", "--timeout", "30s"]
            if "--end-grace" in loadtest_help(args.client_root):  # rates over the window only
                load += ["--end-grace", "1s"]
            results.append(run_level(args, server, load, f"open {args.open:g}x ({rate:.2f} games/s)"))
    print(
        f"capacity (best closed loop): {capacity:.1f} bot moves/s" if capacity else "capacity: not measured"
    )
    header = (
        "load",
        "RPC/s",
        "goodput (bot moves/s)",
        "shed",
        "errors",
        "bot call p50 / p99 ms",
        "cheap p99 ms",
        "not SERVING",
    )
    rows = []
    for r in results:
        m = r["median"]
        rows.append(
            (
                r["level"],
                f"{m['rpc_per_s']:.0f}",
                f"{m['goodput']:.0f}",
                f"{m['shed']:.0f}",
                f"{m['errors']:.0f}",
                f"{m['p50_ms']:.0f} / {m['p99_ms']:.0f}",
                f"{m['probe_p99_ms']:.0f}",
                m["probe_not_serving"],
            )
        )
    print_table(header, rows, markdown=True)
    if args.json:
        args.json.write_text(json.dumps({"capacity": capacity, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
