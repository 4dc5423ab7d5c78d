"""Capacity figures for docs/operations.md: one ``heka serve`` on loopback, then each load
scenario in turn with ``heka loadtest``; prints a Markdown table.

    nice -n 10 .venv/bin/python scripts/capacity.py --duration 30s --out /tmp/heka-capacity

The server runs like a pod of k8s/deployment.yaml (2 search workers in all, encrypted
tokens, access log off; ``--grpc-processes`` sets HEKA_GRPC_PROCESSES); the load
generator shares the machine with it. Each run's full report is kept as
``<out>/<name>.json``; the last column is the machine's 1-minute load average when the run
started (other jobs share the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from serverctl import free_port, wait_serving

BIN = Path(sys.executable).parent
GAMES = ["--game", "aton", "--game", "osirium"]
# name -> heka loadtest arguments
RUNS: dict[str, list[str]] = {
    "cheap-max": ["--scenario", "cheap", "--concurrency", "8", "--connections", "4", *GAMES],
    "cheap-200": ["--scenario", "cheap", "--rate", "200", "--connections", "4", *GAMES],
    "bot-easy": ["--scenario", "bot", "--difficulty", "easy", "--concurrency", "2", *GAMES],
    "bot-medium": ["--scenario", "bot", "--difficulty", "medium", "--concurrency", "2", *GAMES],
    "bot-hard": ["--scenario", "bot", "--difficulty", "hard", "--concurrency", "2", *GAMES],
    "play-aton-easy": ["--scenario", "play", "--game", "aton", "--difficulty", "easy", "--concurrency", "2"],
    "play-osirium-easy": [
        "--scenario",
        "play",
        "--game",
        "osirium",
        "--difficulty",
        "easy",
        "--concurrency",
        "2",
    ],
}






def row(name: str, report: dict, loadavg: float) -> str:
    s = report["settings"]
    load = f"rate {s['rate']:g}/s" if s.get("rate") else f"concurrency {s['concurrency']}"
    methods = "; ".join(
        f"{m} {v['p50'] * 1000:.1f}/{v['p90'] * 1000:.1f}/{v['p99'] * 1000:.1f}"
        for m, v in report["methods"].items()
    )
    rates = f"{report['rate']:.1f} | {report['tasks']['rate']:.2f}"
    return f"| {name} | {load} | {rates} | {report['errors']} | {methods} | {loadavg:.1f} |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--workers", type=int, default=2, help="search workers in all (default 2)")
    ap.add_argument("--grpc-processes", type=int, default=1, help="HEKA_GRPC_PROCESSES (default 1)")
    ap.add_argument("--only", nargs="*", choices=sorted(RUNS), help="run only these")
    ap.add_argument("--out", type=Path, default=Path("/tmp/heka-capacity"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    target = f"127.0.0.1:{port}"
    env = {
        **os.environ,
        "HEKA_PORT": str(port),
        "HEKA_METRICS_PORT": str(free_port()),
        "HEKA_METRICS_DIR": str(args.out / "metrics"),
        "HEKA_GRPC_PROCESSES": str(args.grpc_processes),
        # Workers are per gRPC process: keep the total at --workers.
        "HEKA_SEARCH_WORKERS": str(max(1, args.workers // args.grpc_processes)),
        "HEKA_ACCESS_LOG": "false",
    }
    env["HEKA_STATE_KEYS"] = subprocess.run(
        [str(BIN / "heka"), "serve", "--new-key"], capture_output=True, text=True, check=True
    ).stdout.strip()
    log = open(args.out / "server.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen([str(BIN / "heka"), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    lines = [
        "| run | load | RPC/s | tasks/s | errors | p50/p90/p99 ms per RPC | machine load avg |",
        "|---|---|---|---|---|---|---|",
    ]
    try:
        wait_serving(target, server)
        for name, extra in RUNS.items():
            if args.only and name not in args.only:
                continue
            cmd = [
                str(BIN / "heka"),
                "loadtest",
                "--target",
                target,
                "--duration",
                args.duration,
                "--json",
                "--no-progress",
                *extra,
            ]
            loadavg = os.getloadavg()[0]
            print("$ heka loadtest " + " ".join(cmd[2:]), file=sys.stderr, flush=True)
            with open(args.out / f"{name}.json", "wb") as out:
                subprocess.run(cmd, stdout=out, check=False)
            report = json.loads((args.out / f"{name}.json").read_text())
            lines.append(row(name, report, loadavg))
            print(lines[-1], file=sys.stderr, flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        log.close()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
