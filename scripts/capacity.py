"""Capacity figures for docs/operations.md: one ``heka serve`` on loopback, then each load
scenario in turn with ``heka loadtest``; prints a Markdown table.

    nice -n 10 .venv/bin/python scripts/capacity.py --duration 30s --out /tmp/heka-capacity

The server runs like a pod of k8s/deployment.yaml (2 search workers in all, encrypted
tokens, access log off; ``--grpc-processes`` sets HEKA_GRPC_PROCESSES), started with
``service.loadtest.local`` as scripts/soak.py's is; the load generator (``heka loadtest``,
the engine of ``service.loadtest``) shares the machine with it. Each run's full report is
kept as ``<out>/<name>.json``; the last column is the machine's 1-minute load average when
the run started (other jobs share the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from service.loadtest.local import loadtest_command, pod_env, start_heka

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


def row(name: str, report: dict[str, Any], loadavg: float) -> str:
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
    env = pod_env(args.grpc_processes, args.workers, args.out / "metrics")
    lines = [
        "| run | load | RPC/s | tasks/s | errors | p50/p90/p99 ms per RPC | machine load avg |",
        "|---|---|---|---|---|---|---|",
    ]
    with start_heka(env=env, metrics=True, log=args.out / "server.log") as server:
        for name, extra in RUNS.items():
            if args.only and name not in args.only:
                continue
            cmd = loadtest_command(server.target, args.duration, *extra)
            loadavg = os.getloadavg()[0]
            print("$ heka " + " ".join(cmd[3:]), file=sys.stderr, flush=True)
            with open(args.out / f"{name}.json", "wb") as out:
                subprocess.run(cmd, stdout=out, check=False)
            report = json.loads((args.out / f"{name}.json").read_text())
            lines.append(row(name, report, loadavg))
            print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
