"""How many calls per second, and at what latency, does heka serve against a plain gRPC echo
server's ceiling?

In one run:

1. a plain gRPC echo server (sync Python, 2 KB messages), with as many processes sharing the
   port as the heka server has gRPC processes (the ceiling: the best rate seen), and with
   one process, driven by the same client as everything else; and the same echo on
   ``grpc.aio`` servers (heka's server type, as many processes, with nothing of heka's);
2. ``heka serve`` (subprocesses; ``--processes`` gRPC processes x ``--workers`` search
   workers, access logs on): ``ListLegalActions`` and ``ApplyAction`` calls per second with
   ``--concurrency`` calls in flight over ``--channels`` connections (and ``ListGames``, a
   prebuilt answer: the floor of heka's serving stack), on pools of real positions
   of Aton and 4-player Osirium, with p50/p99 latency: alone; while bot searches (1 s each) keep
   every search worker busy; and on a server without the state cache (every call decodes
   its token: HMAC, deserialisation, validation);
3. ``BotMove`` latency at each difficulty (easy / medium / hard) on mid-game positions with
   at least 5 legal actions.

The client is the load engine (``service.loadtest.runner``: a closed loop of one call per
task from a pool of requests, after a 0.5 s warm-up that is not counted; the echo servers
through a raw-bytes stub) in one ``grpc.aio`` process; the servers are started with
``service.loadtest.local``. Prints a table; asserts nothing. On a 2-CPU machine client and
server share the CPUs, so the ceiling is mostly the client's.

    .venv/bin/python bench/throughput.py            # ~4 minutes
    .venv/bin/python bench/throughput.py --quick

The narrower questions have their own scripts: ``bench/call_budget.py`` (server CPU per
cheap call against ``ListGames``), ``bench/sealing_cost.py`` (what sealing costs per call),
``bench/call_floor.py`` (what the per-call budget leaves to the handler).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._service import (
    ECHO_STUBS,
    GAMES,
    WARMUP,
    Position,
    cheap_calls,
    collect_positions,
    heka,
    measure,
    parse,
    parser,
    start_echo,
)
from bench.table import print_table
from service.loadtest.local import LocalServer
from service.loadtest.runner import LoadSettings, run_load
from service.loadtest.scenarios import CallScenario


async def bench_all(args: argparse.Namespace) -> list[tuple[str, ...]]:
    with contextlib.ExitStack() as stack:
        return await _bench_all(args, stack)


async def _bench_all(args: argparse.Namespace, stack: contextlib.ExitStack) -> list[tuple[str, ...]]:
    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    echo_1 = start_echo(stack, 1)
    echo_n = start_echo(stack, args.processes) if args.processes > 1 else echo_1
    echo_aio = start_echo(stack, args.processes, aio=True)
    server = heka(stack, args.workers, args.processes)
    # Same key: the cold server opens the warm one's tokens, but never from its cache.
    cold = heka(stack, 1, args.processes, HEKA_STATE_CACHE_SIZE="0")
    heka_pids, cold_pids = server.grpc_pids(), cold.grpc_pids()
    rows: list[tuple[str, ...]] = []
    payload = [os.urandom(2048)]
    pools: dict[str, list[Position]] = {}
    for label, game, players in GAMES:
        pools[label] = await collect_positions(server.target, game, players, args.positions)
        sizes = [len(t) for t, *_ in pools[label]]
        print(
            f"# {label}: {len(sizes)} positions, token {min(sizes)}-{max(sizes)} chars "
            f"(median {statistics.median(sizes):.0f})",
            flush=True,
        )
    # ListGames answers a prebuilt message: the floor of heka's own serving stack (aio
    # server, interceptor, metrics, access log) with no per-call work.
    calls = cheap_calls(pools, "ListGames (no handler work)")

    async def echo(servers: list[LocalServer]) -> dict[str, Any]:
        scenario = CallScenario("Echo", payload)
        pids = [s.pid for s in servers]
        return await measure(servers[0].target, scenario, args, pids, make_stub=ECHO_STUBS)

    # The bot searches that keep every search worker busy: BotMove (1 s each, not applied)
    # on the Osirium position with the most legal actions, for the seat to act.
    busy_token, _, _, busy_seat = max(pools["osirium 4p"], key=lambda p: p[2])
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(milliseconds=1000))
    searches = CallScenario("BotMove", [pb.BotMoveRequest(state=busy_token, bot=bot, viewer=busy_seat)])
    busy_done = busy_errors = 0

    # Every workload once per repeat, interleaved, so that a noisy neighbour hurts all
    # rows alike; the table shows medians over the repeats.
    capacity = args.workers * args.processes
    busy = f"{capacity} searches busy"
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for rep in range(args.repeats):
        print(f"# repeat {rep + 1}/{args.repeats}", flush=True)
        echo_key = (f"echo 2 KB, {args.processes} process(es) (ceiling)", "")
        results.setdefault(echo_key, []).append(await echo(echo_n))
        results.setdefault((f"echo 2 KB, grpc.aio, {args.processes} process(es)", ""), []).append(
            await echo(echo_aio)
        )
        if args.processes > 1:
            results.setdefault(("echo 2 KB, 1 process", ""), []).append(await echo(echo_1))
        for name, scenario in calls:
            results.setdefault((name, "alone"), []).append(
                await measure(server.target, scenario, args, heka_pids)
            )
        stop = asyncio.Event()
        # Bounded: the busy rows' time and then some; the event ends it when they are done.
        bound = len(calls) * (WARMUP + args.seconds + 10) + 30
        background = asyncio.create_task(
            run_load(
                searches,
                LoadSettings(target=server.target, concurrency=capacity, duration=bound, connections=2),
                progress_stream=None,
                stop=stop,
            )
        )
        await asyncio.sleep(0.5)
        for name, scenario in calls:
            results.setdefault((name, busy), []).append(
                await measure(server.target, scenario, args, heka_pids)
            )
        stop.set()
        recorder, _, _ = await background
        busy_done += recorder.tasks_completed
        busy_errors += recorder.error_count
        results[echo_key].append(await echo(echo_n))
        # Tokens that server has never seen: every call decodes (HMAC, deserialise, validate).
        for name, scenario in calls:
            results.setdefault((name, "no state cache"), []).append(
                await measure(cold.target, scenario, args, cold_pids)
            )
    print(
        f"# {busy_done} background searches (1 s each) completed in the busy phases, {busy_errors} errors",
        flush=True,
    )

    def med(rs: list[dict[str, Any]], key: str) -> float:
        return float(statistics.median(x[key] for x in rs))

    # The ceiling is the best echo rate seen (measured twice per repeat): on a shared
    # machine this keeps the percentages conservative.
    echo_runs = results[echo_key]
    ceiling = max(x["rate"] for x in echo_runs)
    echo_rates = ", ".join(str(round(x["rate"])) for x in echo_runs)
    echo_median = med(echo_runs, "rate")
    print(
        f"# echo rates: {echo_rates} (best {ceiling:.0f}, median {echo_median:.0f}: against the "
        f"median every % echo would be x{ceiling / echo_median:.2f})",
        flush=True,
    )
    echo_cpu = med(echo_runs, "cpu_us")
    for (name, phase), rs in results.items():
        rate = ceiling if rs is echo_runs else med(rs, "rate")
        if rs is echo_runs:
            phase = f"best of {len(rs)}"
        cpu_us = med(rs, "cpu_us")
        rows.append(
            (
                name,
                phase,
                f"{rate:.0f}",
                f"{100 * rate / ceiling:.0f}%",
                f"{med(rs, 'p50_ms'):.2f}",
                f"{med(rs, 'p99_ms'):.2f}",
                f"{cpu_us:.0f}",
                f"{100 * echo_cpu / cpu_us:.0f}%",
                str(sum(x["errors"] for x in rs)),
            )
        )

    # Bot moves per difficulty, alone, on positions with at least 5 legal actions: single
    # calls one after another (each row's latencies and the search's iterations).
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = pb_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
        for label, pool in pools.items():
            mid = [(t, seat) for t, _, n, seat in pool[len(pool) // 3 :] if n >= 5][:3]
            for name, diff in (
                ("easy", pb.DIFFICULTY_EASY),
                ("medium", pb.DIFFICULTY_MEDIUM),
                ("hard", pb.DIFFICULTY_HARD),
            ):
                runs = args.bot_runs[name]
                lat: list[float] = []
                its: list[int] = []
                for i in range(runs):
                    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, difficulty=diff, seed=i)
                    t = time.perf_counter()
                    token, seat = mid[i % len(mid)]
                    resp = await stub.BotMove(
                        pb.BotMoveRequest(state=token, bot=bot, viewer=seat), timeout=60
                    )
                    lat.append(time.perf_counter() - t)
                    its.append(resp.diagnostics.iterations)
                rows.append(
                    (
                        f"BotMove {label} mcts:{name}",
                        f"{runs} runs, median {statistics.median(its):.0f} it",
                        "",
                        "",
                        f"{statistics.median(lat) * 1000:.0f}",
                        f"{max(lat) * 1000:.0f}",
                        "",
                        "",
                        "0",
                    )
                )
                print("#", rows[-1], flush=True)
    return rows


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=1, help="search workers per gRPC process (default 1)")
    args = parse(p)
    args.bot_runs = {"easy": 1, "medium": 1, "hard": 1} if args.quick else {"easy": 5, "medium": 3, "hard": 2}
    rows = asyncio.run(bench_all(args))
    header = (
        "workload",
        "phase",
        "calls/s",
        "% echo",
        "p50 ms",
        "p99/max ms",
        "srv CPU us/call",
        "% echo (CPU)",
        "errors",
    )
    title = (
        f"\nconcurrency {args.concurrency} over {args.channels} connections, medians of {args.repeats} x "
        f"{args.seconds:g} s per row, "
        f"{args.processes} gRPC processes x {args.workers} search workers, {os.cpu_count()} CPUs"
    )
    print_table(header, rows, title)
    print("(BotMove rows: p50 column = median latency, p99/max column = max latency)")
    print("(srv CPU us/call: CPU time of the gRPC serving processes per call; % echo (CPU): the echo")
    print(" server's CPU per call over this row's, i.e. the share of the echo rate the server would")
    print(" reach with the same CPUs; robust to other load on the machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
