"""Service throughput and latency, next to a plain gRPC echo server as the ceiling.

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

    .venv/bin/python bench/service_throughput.py            # ~4 minutes
    .venv/bin/python bench/service_throughput.py --quick

Narrower runs (the per-call budget): ``--budget`` (cheap calls against ``ListGames``,
state cache on and off, compiled and pure builds; ``--before ROOT`` adds another checkout's
compiled server), ``--floor`` (real handlers against prebuilt answers and handlers of exact
CPU, ``bench/floor_server.py``), ``--sealing`` (sealed against plaintext tokens).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.loadtest.local import LocalServer, cpu_seconds, heka_env, start_heka  # noqa: E402
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
        stub = pb_grpc.GameServiceStub(channel)
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
        return statistics.median(x[key] for x in rs)

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
        stub = pb_grpc.GameServiceStub(channel)
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


async def bench_sealing(args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The cost of sealing by default: the cheap calls on two servers without the
    state cache (every call opens its token and seals a new one), one sealing (AES-256-GCM,
    the default) and one with HEKA_INSECURE_PLAINTEXT_TOKENS, each on tokens it made itself,
    interleaved in the same run; server CPU per call, and ListGames as the floor."""
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with contextlib.ExitStack() as stack:
        servers = {
            "sealed": heka(stack, 1, args.processes, HEKA_STATE_CACHE_SIZE="0"),
            "plaintext": heka(
                stack, 1, args.processes, HEKA_STATE_CACHE_SIZE="0", HEKA_INSECURE_PLAINTEXT_TOKENS="true"
            ),
        }
        await measure_interleaved(servers, args, results)
    rows = []
    names = sorted({name for name, _ in results}, key=lambda x: (x != "ListGames", x))
    for name in names:
        sealed = statistics.median(x["cpu_us"] for x in results[(name, "sealed")])
        plain = statistics.median(x["cpu_us"] for x in results[(name, "plaintext")])
        rows.append(
            (name, f"{sealed:.0f}", f"{plain:.0f}", f"{sealed - plain:+.0f}", f"{sealed / plain:.2f}")
        )
    return rows


async def bench_budget(args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The per-call budget: server CPU per ListLegalActions and ApplyAction against
    ListGames on the same server, with sealing (the default), state cache on and off, on the
    compiled build and on the pure-Python one (HEKA_PURE_PYTHON=1), four servers interleaved
    in the same run; each server measured on tokens it made itself. ``--before ROOT`` adds
    the compiled build of another checkout (its extensions built: ``make compile`` there),
    cache on and off, to compare two versions in one run."""
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with contextlib.ExitStack() as stack:
        servers = {}
        if args.before is not None:
            before = args.before.resolve()
            servers["before: compiled, cache"] = heka(stack, 1, args.processes, root=before)
            servers["before: compiled, no cache"] = heka(
                stack, 1, args.processes, root=before, HEKA_STATE_CACHE_SIZE="0"
            )
        for build in ("compiled", "pure"):
            pure = {"HEKA_PURE_PYTHON": "1"} if build == "pure" else {}
            servers[f"{build}, cache"] = heka(stack, 1, args.processes, **pure)
            servers[f"{build}, no cache"] = heka(stack, 1, args.processes, HEKA_STATE_CACHE_SIZE="0", **pure)
        await measure_interleaved(servers, args, results)
    return [(k, name, cpu, ratio) for k, name, cpu, _, ratio in against_list_games(servers, results)]


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
    """What the per-call budget leaves to the handler: servers without the state
    cache (sealed tokens) whose ApplyAction and ListLegalActions are the real ones (``real``),
    answer, from a dict, the response the real handler gave to the same request (``noop``:
    no handler work, the same bytes on the wire, the same interceptor, metrics and access
    log), or do that after spinning N µs of CPU (``spin:N``). Interleaved in one run, each
    call against the same server's ListGames. Also: the handlers' CPU per call inside the
    servers, and the real handlers' in this process, in a loop over the same requests; and
    with ``twice`` among the modes, a server that runs each real handler twice (the second
    run's CPU apart; its calls do twice the work, so it is left out of the first table)."""
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
        for server in servers.values():
            server.stop()
        inside: dict[str, dict[str, list[int]]] = {}
        for k, folder in stats_dirs.items():
            for path in Path(folder).glob("*.json"):
                for method, counts in json.loads(path.read_text()).items():
                    total = inside.setdefault(k, {}).setdefault(method, [0, 0, 0])
                    for i, value in enumerate(counts):
                        total[i] += value
    rows = against_list_games(servers, results)
    handlers = []
    for k in servers:
        for method, (n, ns, again) in sorted(inside.get(k, {}).items()):
            in_loop = [v for name, v in alone.items() if name.startswith(method)] if k == "real" else []
            first = f"{ns / max(n, 1) / 1000:.1f}"
            if k == "twice":
                first = f"{(ns - again) / max(n, 1) / 1000:.1f}, then {again / max(n, 1) / 1000:.1f}"
            handlers.append((k, method, first, " / ".join(f"{v:.1f}" for v in in_loop)))
    return rows, handlers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--echo-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--aio-echo-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=64, help="calls in flight (default 64)")
    parser.add_argument(
        "--seconds", type=float, default=4.0, help="measure time per row and repeat (default 4)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="repeats; medians are shown (default 3)")
    parser.add_argument("--workers", type=int, default=1, help="search workers per gRPC process (default 1)")
    parser.add_argument("--processes", type=int, default=2, help="gRPC processes of the server (default 2)")
    parser.add_argument("--channels", type=int, default=8, help="client connections (default 8)")
    parser.add_argument("--positions", type=int, default=200, help="positions per game (default 200)")
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    parser.add_argument(
        "--sealing",
        action="store_true",
        help="only the cost of sealing: cheap calls on a sealing and a plaintext server, no state cache",
    )
    parser.add_argument(
        "--budget",
        action="store_true",
        help="only the per-call budget: cheap calls against ListGames, cache on/off, both builds",
    )
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        metavar="ROOT",
        help="with --budget: also the compiled build of the checkout ROOT (e.g. the previous commit's)",
    )
    parser.add_argument(
        "--floor",
        nargs="*",
        metavar="MODE",
        default=None,
        help="only the floor of the per-call budget: real handlers against prebuilt answers "
        "(modes: noop, spin:N for N us of handler CPU, twice; default: noop spin:40 spin:85 twice)",
    )
    args = parser.parse_args()
    if args.echo_server is not None:
        run_echo_server(args.echo_server)
        return 0
    if args.aio_echo_server is not None:
        run_aio_echo_server(args.aio_echo_server)
        return 0
    args.bot_runs = {"easy": 5, "medium": 3, "hard": 2}
    if args.quick:
        args.seconds, args.positions, args.repeats = 1.0, 40, 1
        args.bot_runs = {"easy": 1, "medium": 1, "hard": 1}
    if args.floor is not None:
        args.floor_modes = args.floor or ["noop", "spin:40", "spin:85", "twice"]
        rows, handlers = asyncio.run(bench_floor(args))
        header = ("server (sealed, no cache)", "workload", "server CPU us/call", "- ListGames", "x ListGames")
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        print(
            f"\nserver CPU per call, medians of {args.repeats} x {args.seconds:g} s, "
            f"{args.processes} gRPC processes; {PAIRED}"
        )
        for r in [header, *rows]:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
        header = ("server", "handler", "CPU us/call in the server", "in a loop, alone: aton / osirium 4p")
        widths = [max(len(str(r[i])) for r in [header, *handlers]) for i in range(len(header))]
        print("\nthe handler's own CPU (its thread's): inside the server (every call of the run, both games)")
        print("and called in this process in a loop over the same requests (median of 7); twice: the first")
        print("run, then the second, of the same request right after")
        for r in [header, *handlers]:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
        return 0
    if args.budget:
        rows = asyncio.run(bench_budget(args))
        header = ("server (sealed tokens)", "workload", "server CPU us/call", "x ListGames")
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        print(
            f"\nserver CPU per call, medians of {args.repeats} x {args.seconds:g} s, "
            f"{args.processes} gRPC processes; {PAIRED}"
        )
        for r in [header, *rows]:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
        return 0
    if args.sealing:
        rows = asyncio.run(bench_sealing(args))
        header = ("workload (no state cache)", "sealed us/call", "plaintext us/call", "difference", "ratio")
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        print(
            f"\nserver CPU per call, medians of {args.repeats} x {args.seconds:g} s, "
            f"{args.processes} gRPC processes"
        )
        for r in [header, *rows]:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
        return 0
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
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print()
    print(
        f"concurrency {args.concurrency} over {args.channels} connections, medians of {args.repeats} x "
        f"{args.seconds:g} s per row, "
        f"{args.processes} gRPC processes x {args.workers} search workers, {os.cpu_count()} CPUs"
    )
    for r in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
    print("(BotMove rows: p50 column = median latency, p99/max column = max latency)")
    print("(srv CPU us/call: CPU time of the gRPC serving processes per call; % echo (CPU): the echo")
    print(" server's CPU per call over this row's, i.e. the share of the echo rate the server would")
    print(" reach with the same CPUs; robust to other load on the machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
