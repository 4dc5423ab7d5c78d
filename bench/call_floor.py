"""What does the per-call budget leave to the handler?

Servers without the state cache (sealed tokens), through ``bench/floor_server.py``, whose
``ApplyAction`` and ``ListLegalActions`` are the real ones (``real``), answer, from a dict,
the response the real handler gave to the same request (``noop``: no handler work, the same
bytes on the wire, the same interceptor, metrics and access log), or do that after spinning
N µs of CPU (``spin:N``). Interleaved in one run, each call against the same server's
``ListGames``. Also: the handlers' CPU per call inside the servers, and the real handlers'
in this process, in a loop over the same requests; and with ``twice`` among the modes, a
server that runs each real handler twice (the second run's CPU apart; its calls do twice the
work, so it is left out of the first table). Prints two tables; asserts nothing.

    .venv/bin/python bench/call_floor.py --seconds 2 --repeats 3 --positions 60
    .venv/bin/python bench/call_floor.py --quick noop
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._service import (
    GAMES,
    ROOT,
    Position,
    against_list_games,
    cheap_calls,
    collect_positions,
    cpu_title,
    measure,
    parse,
    parser,
)
from bench.table import print_table
from service.loadtest.local import LocalServer, heka_env, stop_all


def floor_server(
    stack: contextlib.ExitStack, processes: int, mode: str, stats_dir: str, **env: str
) -> LocalServer:
    """``heka serve`` through ``bench/floor_server.py`` (``BENCH_FLOOR=mode``), sealed tokens,
    no state cache; its processes write their handlers' CPU to ``stats_dir`` as they stop."""
    command = [sys.executable, str(ROOT / "bench" / "floor_server.py"), "serve", "--host", "127.0.0.1"]
    command += ["--port", "0", "--metrics-port", "-1"]
    server_env = heka_env(
        {
            "HEKA_SEARCH_WORKERS": "1",
            "HEKA_GRPC_PROCESSES": str(processes),
            "HEKA_STATE_CACHE_SIZE": "0",
            "BENCH_FLOOR": mode,
            "BENCH_FLOOR_STATS": stats_dir,
            **env,
        }
    )
    return stack.enter_context(LocalServer(command, env=server_env, cwd=ROOT))


def handler_cpu_in_process(pools: dict[str, list[Position]], runs: int = 7) -> dict[str, float]:
    """The handlers of ``cheap_calls`` called in this process, in a loop over the same
    requests (sealed with the bench key, no state cache): CPU µs per call (this thread's,
    median of ``runs``)."""
    import tempfile

    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="heka-bench-"))
    from service.config import Config
    from service.envelope import KeyRing, parse_keys
    from service.loadtest.local import BENCH_KEY
    from service.servicer import GameService

    service = GameService(Config(state_cache_size=0), KeyRing(parse_keys(BENCH_KEY)), None)  # type: ignore[arg-type]
    out = {}
    for name, scenario in cheap_calls(pools, "ListGames"):
        method = getattr(service, scenario.method)
        requests = list(scenario.requests)
        times = []
        for _ in range(runs):
            start = time.thread_time_ns()
            for _ in range(5):
                for request in requests:
                    method(request, None)
            times.append((time.thread_time_ns() - start) / (5 * len(requests)) / 1000)
        out[name] = statistics.median(times)
    return out


async def bench_floor(args: argparse.Namespace) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The module's runs: (the rows against ``ListGames``, the handlers' own CPU rows)."""
    import tempfile

    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    stats_dirs: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        servers = {}
        for mode in ["real", *args.floor_modes]:
            stats_dirs[mode] = stack.enter_context(tempfile.TemporaryDirectory(prefix="heka-floor-"))
        for mode in ["real", *args.floor_modes]:
            servers[mode] = floor_server(stack, args.processes, mode, stats_dirs[mode])
        pids = {k: server.grpc_pids() for k, server in servers.items()}
        calls = {}
        real_pools: dict[str, list[Position]] = {}
        for k, server in servers.items():
            pools = {
                label: await collect_positions(server.target, game, players, args.positions)
                for label, game, players in GAMES
            }
            if k == "real":
                real_pools = pools
            # A floor server's answers are built as it sees each request the first time: here
            # and in each row's warm-up (every gRPC process its own).
            calls[k] = cheap_calls(pools, "ListGames")
        for rep in range(args.repeats):
            print(f"# repeat {rep + 1}/{args.repeats}", flush=True)
            for k, server in servers.items():
                for name, scenario in calls[k]:
                    results.setdefault((name, k), []).append(
                        await measure(server.target, scenario, args, pids[k])
                    )
        alone = handler_cpu_in_process(real_pools)
        stop_all(servers.values())
        inside: dict[str, dict[str, list[int]]] = {}
        for k, folder in stats_dirs.items():
            for path in Path(folder).glob("*.json"):
                for method, counts in json.loads(path.read_text()).items():
                    total = inside.setdefault(k, {}).setdefault(method, [0, 0, 0])
                    for i, value in enumerate(counts):
                        total[i] += value
    rows: list[tuple[str, ...]] = list(against_list_games(servers, results))
    handlers: list[tuple[str, ...]] = []
    for k in servers:
        for method, (n, ns, again) in sorted(inside.get(k, {}).items()):
            in_loop = [v for name, v in alone.items() if name.startswith(method)] if k == "real" else []
            first = f"{ns / max(n, 1) / 1000:.1f}"
            if k == "twice":
                first = f"{(ns - again) / max(n, 1) / 1000:.1f}, then {again / max(n, 1) / 1000:.1f}"
            handlers.append((k, method, first, " / ".join(f"{v:.1f}" for v in in_loop)))
    return rows, handlers


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument(
        "modes",
        nargs="*",
        metavar="MODE",
        help="servers beside the real one: noop, spin:N for N us of handler CPU, twice "
        "(default: noop spin:40 spin:85 twice)",
    )
    args = parse(p)
    args.floor_modes = args.modes or ["noop", "spin:40", "spin:85", "twice"]
    rows, handlers = asyncio.run(bench_floor(args))
    header = ("server (sealed, no cache)", "workload", "server CPU us/call", "- ListGames", "x ListGames")
    print_table(header, rows, cpu_title(args))
    handler_header = ("server", "handler", "CPU us/call in the server", "in a loop, alone: aton / osirium 4p")
    title = (
        "\nthe handler's own CPU (its thread's): inside the server (every call of the run, both games)\n"
        "and called in this process in a loop over the same requests (median of 7); twice: the first\n"
        "run, then the second, of the same request right after"
    )
    print_table(handler_header, handlers, title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
