"""Soak test: a real ``heka serve`` under a steady load for a while; errors and memory.

    nice -n 10 .venv/bin/python scripts/soak.py --minutes 10 --out /tmp/heka-soak

Starts ``heka serve`` on free loopback ports (``--grpc-processes`` gRPC processes and
``--workers`` search processes in all, as k8s/configmap.yaml; ``service.loadtest.local``),
lets it settle, then runs two ``heka loadtest`` processes (the load engine,
``service.loadtest``) side by side for the whole duration:

* cheap calls at a fixed rate (open loop, ``--cheap-rate`` tasks/s over 4 connections);
* frontends playing complete games against MCTS bots (``--bot``, closed loop,
  ``--play-concurrency`` games at a time, never more than the search capacity).

Every ``--sample`` seconds it records the resident memory (RSS) of the server process and
of all its children (forkserver, search workers). At the end it stops the server with
SIGTERM and prints (and writes to ``<out>/soak.json``) the error counts, the RSS at start
(after warm-up) and at the end, and the growth. Exit status 0 when there were no errors,
the server exited cleanly and the RSS grew less than ``--max-growth``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from service.loadtest.local import LocalServer, loadtest_command, pod_env, rss_bytes, start_heka


def sample(server: LocalServer) -> dict[str, float]:
    pids = server.tree()
    sizes = {p: rss_bytes(p) for p in pids}
    main = sizes.get(server.pid, 0)
    largest = max(sizes.values(), default=0)
    return {
        "t": time.time(),
        "main_rss_mb": main
        / 2**20,  # the `heka serve` process itself (a supervisor with several gRPC processes)
        "largest_rss_mb": largest / 2**20,  # the biggest process of the tree (a gRPC process)
        "total_rss_mb": sum(sizes.values()) / 2**20,
        "processes": len(pids),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2, help="search workers in all (default 2)")
    ap.add_argument("--grpc-processes", type=int, default=2, help="HEKA_GRPC_PROCESSES (default 2, as k8s/)")
    ap.add_argument("--cheap-rate", type=float, default=100.0, help="cheap tasks/s (default 100)")
    ap.add_argument("--play-concurrency", type=int, default=2, help="games at a time (default 2)")
    ap.add_argument("--bot", default="mcts", choices=("random", "greedy", "mcts"))
    ap.add_argument("--difficulty", default="easy", choices=("easy", "medium", "hard"))
    ap.add_argument("--warmup", type=float, default=30.0, help="seconds of load before the start sample")
    ap.add_argument("--sample", type=float, default=15.0, help="seconds between RSS samples")
    ap.add_argument("--max-growth", type=float, default=0.10, help="allowed RSS growth (default 0.10)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/heka-soak"))
    args = ap.parse_args()
    if args.minutes <= 0 or args.minutes > 120:
        ap.error("--minutes must be in (0, 120]")
    args.out.mkdir(parents=True, exist_ok=True)

    env = pod_env(args.grpc_processes, args.workers, args.out / "metrics")
    samples: list[dict[str, float]] = []
    loads: list[subprocess.Popen[bytes]] = []
    server = start_heka(env=env, metrics=True, log=args.out / "server.log")
    try:
        idle = sample(server)
        seconds = args.minutes * 60 + args.warmup
        duration = f"{seconds}s"
        games = ["--game", "aton", "--game", "osirium"]
        cheap = ["--scenario", "cheap", "--rate", str(args.cheap_rate), "--connections", "4", *games]
        play = ["--scenario", "play", "--bot", args.bot]
        play += ["--difficulty", args.difficulty] if args.bot == "mcts" else []
        play += ["--concurrency", str(args.play_concurrency), "--connections", "2"]
        commands = {
            name: loadtest_command(server.target, duration, *extra)
            for name, extra in (("cheap", cheap), ("play", play))
        }
        for name, cmd in commands.items():
            loads.append(subprocess.Popen(cmd, stdout=open(args.out / f"{name}.json", "wb")))  # noqa: SIM115
        start = time.monotonic()
        time.sleep(args.warmup)
        while time.monotonic() - start < seconds:
            samples.append(sample(server))
            print(json.dumps({k: round(v, 1) for k, v in samples[-1].items()}), file=sys.stderr, flush=True)
            time.sleep(min(args.sample, max(0.0, seconds - (time.monotonic() - start))))
        samples.append(sample(server))
        codes = [p.wait(timeout=120) for p in loads]
    finally:
        server_code = server.stop(grace=60)
        for p in loads:
            if p.poll() is None:
                p.kill()

    reports = {name: json.loads((args.out / f"{name}.json").read_text()) for name in commands}
    first, last = samples[0], samples[-1]
    growth = (last["total_rss_mb"] - first["total_rss_mb"]) / first["total_rss_mb"]
    summary = {
        "minutes": args.minutes,
        "warmup_seconds": args.warmup,
        "workers": args.workers,
        "grpc_processes": args.grpc_processes,
        "idle_rss_mb": round(idle["total_rss_mb"], 1),
        "start_rss_mb": round(first["total_rss_mb"], 1),
        "end_rss_mb": round(last["total_rss_mb"], 1),
        "max_rss_mb": round(max(s["total_rss_mb"] for s in samples), 1),
        "start_largest_rss_mb": round(first["largest_rss_mb"], 1),
        "end_largest_rss_mb": round(last["largest_rss_mb"], 1),
        "rss_growth": round(growth, 4),
        "server_exit_code": server_code,
        "loadtest_exit_codes": codes,
        "samples": len(samples),
        "load": {
            name: {
                "rpcs": r["rpcs"],
                "rate": round(r["rate"], 1),
                "errors": r["errors"],
                "tasks_completed": r["tasks"]["completed"],
                "status_codes": r["status_codes"],
                "p50_ms": round(r["latency"]["p50"] * 1000, 2),
                "p99_ms": round(r["latency"]["p99"] * 1000, 2),
                "description": r["settings"]["description"],
            }
            for name, r in reports.items()
        },
    }
    (args.out / "soak.json").write_text(json.dumps({**summary, "rss_samples": samples}, indent=2))
    print(json.dumps(summary, indent=2))
    errors = sum(r["errors"] for r in reports.values())
    ok = errors == 0 and server_code == 0 and growth < args.max_growth
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
