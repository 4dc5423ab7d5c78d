"""What the service benches share: the echo servers, ``heka serve`` started for a bench, the
load engine's closed loop measured (rate, latency, server CPU per call), pools of real
positions, the cheap calls, and the interleaved runs against ``ListGames``.

Used by ``bench/throughput.py``, ``bench/call_budget.py``, ``bench/sealing_cost.py`` and
``bench/call_floor.py``; not a bench itself. Run as a script only to serve an echo server
(``--echo-server PORT`` or ``--aio-echo-server PORT``), which :func:`start_echo` does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import statistics
import sys
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.loadtest.local import LocalServer, cpu_seconds, start_heka  # noqa: E402
from service.loadtest.runner import LoadSettings, raw_stubs, run_load  # noqa: E402
from service.loadtest.scenarios import CallScenario  # noqa: E402

ECHO_METHOD = "/bench.Echo/Echo"


# ---------------------------------------------------------------------------------------
# The echo server (run in a subprocess: --echo-server PORT)
# ---------------------------------------------------------------------------------------


def run_echo_server(port: int) -> None:
    import grpc

    def echo(request: bytes, _context: Any) -> bytes:
        return request

    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=34))
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print(json.dumps({"event": "listening", "port": bound}), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


def run_aio_echo_server(port: int) -> None:
    """The same echo on a ``grpc.aio`` server (heka's server type): the framework's own
    ceiling, with no handler work, interceptor, metrics or logs."""
    import grpc

    async def echo(request: bytes, _context: Any) -> bytes:
        return request

    async def serve() -> None:
        handler = grpc.method_handlers_generic_handler(
            "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
        )
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((handler,))
        bound = server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        print(json.dumps({"event": "listening", "port": bound}), flush=True)
        loop = asyncio.get_running_loop()
        stopped = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stopped.set)
        await stopped.wait()
        await server.stop(0)

    asyncio.run(serve())


def start_echo(stack: contextlib.ExitStack, processes: int = 1, aio: bool = False) -> list[LocalServer]:
    """``processes`` echo servers on one port (gRPC sets SO_REUSEPORT by default), stopped
    when ``stack`` closes."""
    servers: list[LocalServer] = []
    port = 0
    flag = "--aio-echo-server" if aio else "--echo-server"
    for _ in range(processes):
        command = [sys.executable, __file__, flag, str(port)]
        server = stack.enter_context(LocalServer(command, cwd=ROOT, health=False))
        port = server.port
        servers.append(server)
    return servers


def heka(
    stack: contextlib.ExitStack, workers: int, processes: int, root: Path | None = None, **env: str
) -> LocalServer:
    """``heka serve`` (access logs on) from the checkout ``root`` (default: this one), stopped
    when ``stack`` closes."""
    env = {"HEKA_SEARCH_WORKERS": str(workers), "HEKA_GRPC_PROCESSES": str(processes), **env}
    return stack.enter_context(start_heka(env=env, root=root))


# ---------------------------------------------------------------------------------------
# Load: the load engine's closed loop, one call per task from a pool of requests
# ---------------------------------------------------------------------------------------

WARMUP = 0.5
#: The echo servers' one method, called with raw bytes.
ECHO_STUBS = raw_stubs({"Echo": ECHO_METHOD})


async def measure(
    target: str,
    scenario: CallScenario,
    args: argparse.Namespace,
    cpu_pids: list[int],
    make_stub: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """``args.concurrency`` calls in flight over ``args.channels`` connections for
    ``args.seconds`` (after a warm-up): rate, p50/p99 latency, and the server CPU time per
    call (robust on a shared machine) from the CPU seconds of ``cpu_pids``."""
    settings = LoadSettings(
        target=target,
        concurrency=args.concurrency,
        duration=args.seconds,
        warmup=WARMUP,
        connections=args.channels,
    )
    recorder, elapsed, _ = await run_load(
        scenario,
        settings,
        progress_stream=None,
        make_stub=make_stub,
        meters={"cpu": lambda: cpu_seconds(cpu_pids)},
    )
    calls = recorder.rpc_count
    latency = recorder.overall()
    return {
        "cpu_us": recorder.meters["cpu"] / max(1, calls) * 1e6,
        "rate": calls / elapsed if elapsed > 0 else 0.0,
        "p50_ms": latency.percentile(50) * 1000,
        "p99_ms": latency.percentile(99) * 1000,
        "calls": calls,
        "errors": recorder.error_count,
    }


Position = tuple[str, int, int, int]  # token, a legal action, number of legal actions, seat to act


async def collect_positions(target: str, game: str, players: int, count: int) -> list[Position]:
    """(token, a legal action, number of legal actions, seat to act) along seeded random
    games, made by the server itself."""
    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    rng = random.Random(7)
    pool: list[Position] = []
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
        while len(pool) < count:
            created = await stub.CreateGame(
                pb.CreateGameRequest(game=game, num_players=players, seed=rng.randrange(1 << 30))
            )
            token, over, player = created.state, False, created.status.current_player
            while not over and len(pool) < count:
                listing = pb.ListLegalActionsRequest(state=token, viewer=player)
                legal = (await stub.ListLegalActions(listing)).actions
                action = rng.choice(legal).id
                if rng.random() < 0.3:
                    pool.append((token, action, len(legal), player))
                resp = await stub.ApplyAction(
                    pb.ApplyActionRequest(state=token, action_id=action, player=player)
                )
                token, over, player = resp.state, resp.status.is_over, resp.status.current_player
    return pool


def cheap_calls(pools: dict[str, list[Position]], list_games: str) -> list[tuple[str, CallScenario]]:
    """The measured workloads: ListGames (labelled ``list_games``), and ListLegalActions and
    ApplyAction on each pool of positions."""
    from service.gen.heka.v1 import game_service_pb2 as pb

    out = [(list_games, CallScenario("ListGames", [pb.ListGamesRequest()]))]
    for label, pool in pools.items():
        listings = [pb.ListLegalActionsRequest(state=token, viewer=seat) for token, _, _, seat in pool]
        applies = [
            pb.ApplyActionRequest(state=token, action_id=action, player=seat)
            for token, action, _, seat in pool
        ]
        out.append((f"ListLegalActions {label}", CallScenario("ListLegalActions", listings)))
        out.append((f"ApplyAction {label}", CallScenario("ApplyAction", applies)))
    return out


GAMES = (("aton", "aton", 2), ("osirium 4p", "osirium", 4))


async def measure_interleaved(
    servers: dict[str, Any], args: argparse.Namespace, results: dict[tuple[str, str], list[dict[str, Any]]]
) -> None:
    """The cheap calls and ListGames on every server, each on positions it made itself, the
    servers interleaved ``args.repeats`` times; ``results[(call, server)]`` gets each run.
    ListGames runs before every other workload and once more after the last, so each
    workload's run has a ListGames run on either side of it, seconds apart: its ``ratio`` is
    its CPU per call over their mean (the machine's speed drifts less in seconds than over
    a whole repeat)."""
    pids = {k: server.grpc_pids() for k, server in servers.items()}
    calls = {}
    for k, server in servers.items():
        pools = {
            label: await collect_positions(server.target, game, players, args.positions)
            for label, game, players in GAMES
        }
        calls[k] = cheap_calls(pools, "ListGames")
    for rep in range(args.repeats):
        print(f"# repeat {rep + 1}/{args.repeats}", flush=True)
        for k, server in servers.items():
            (list_games, floor_scenario), *workloads = calls[k]
            before = await measure(server.target, floor_scenario, args, pids[k])
            results.setdefault((list_games, k), []).append(before)
            for name, scenario in workloads:
                run = await measure(server.target, scenario, args, pids[k])
                after = await measure(server.target, floor_scenario, args, pids[k])
                results[(list_games, k)].append(after)
                run["ratio"] = run["cpu_us"] / ((before["cpu_us"] + after["cpu_us"]) / 2)
                results.setdefault((name, k), []).append(run)
                before = after


#: How the budget and floor tables' ratios are made (:func:`measure_interleaved`).
PAIRED = "x ListGames: median of each run's ratio to the ListGames runs just before and after it"


def against_list_games(
    servers: dict[str, Any], results: dict[tuple[str, str], list[dict[str, Any]]]
) -> list[tuple[str, str, str, str, str]]:
    """(server, call, median server CPU µs, difference to the same server's ListGames, and the
    median of the call's paired ratios to ListGames: :func:`measure_interleaved`) for every
    server but the floor's ``twice`` row, ListGames first."""
    rows = []
    names = sorted({name for name, _ in results}, key=lambda x: (x != "ListGames", x))
    for k in servers:
        if k == "twice":
            continue
        floor = statistics.median(x["cpu_us"] for x in results[("ListGames", k)])
        for name in names:
            runs = results[(name, k)]
            cpu = statistics.median(x["cpu_us"] for x in runs)
            ratio = statistics.median(x.get("ratio", 1.0) for x in runs)
            rows.append((k, name, f"{cpu:.0f}", f"{cpu - floor:+.0f}", f"{ratio:.2f}"))
    return rows


def parser(description: str) -> argparse.ArgumentParser:
    """The options every service bench takes (load shape, repeats, server processes, pool
    size, ``--quick``); read them back with :func:`parse`."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--concurrency", type=int, default=64, help="calls in flight (default 64)")
    p.add_argument("--seconds", type=float, default=4.0, help="measure time per row and repeat (default 4)")
    p.add_argument("--repeats", type=int, default=3, help="repeats; medians are shown (default 3)")
    p.add_argument("--processes", type=int, default=2, help="gRPC processes of the server (default 2)")
    p.add_argument("--channels", type=int, default=8, help="client connections (default 8)")
    p.add_argument("--positions", type=int, default=200, help="positions per game (default 200)")
    p.add_argument("--quick", action="store_true", help="short smoke run (1 s rows, 40 positions, 1 repeat)")
    return p


def parse(p: argparse.ArgumentParser) -> argparse.Namespace:
    """``p``'s arguments, with ``--quick`` applied."""
    args = p.parse_args()
    if args.quick:
        args.seconds, args.positions, args.repeats = 1.0, 40, 1
    return args


def cpu_title(args: argparse.Namespace, paired: bool = True) -> str:
    """The title of a table of server CPU per call."""
    title = (
        f"\nserver CPU per call, medians of {args.repeats} x {args.seconds:g} s, "
        f"{args.processes} gRPC processes"
    )
    return f"{title}; {PAIRED}" if paired else title


def main() -> int:
    p = argparse.ArgumentParser(description="an echo server for the service benches")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--echo-server", type=int, metavar="PORT", help="sync gRPC echo server on PORT")
    group.add_argument("--aio-echo-server", type=int, metavar="PORT", help="grpc.aio echo server on PORT")
    args = p.parse_args()
    if args.echo_server is not None:
        run_echo_server(args.echo_server)
    else:
        run_aio_echo_server(args.aio_echo_server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
