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

The client is one ``grpc.aio`` process. Prints a table; asserts nothing. On a 2-CPU machine
client and server share the CPUs, so the ceiling is mostly the client's.

    .venv/bin/python bench/service_throughput.py            # ~4 minutes
    .venv/bin/python bench/service_throughput.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent import futures
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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


def start_echo(processes: int = 1, aio: bool = False) -> tuple[list[subprocess.Popen[bytes]], int]:
    """``processes`` echo servers on one port (gRPC sets SO_REUSEPORT by default)."""
    procs: list[subprocess.Popen[bytes]] = []
    port = 0
    flag = "--aio-echo-server" if aio else "--echo-server"
    for _ in range(processes):
        proc = subprocess.Popen([sys.executable, __file__, flag, str(port)], stdout=subprocess.PIPE, cwd=ROOT)
        assert proc.stdout is not None
        port = int(json.loads(proc.stdout.readline())["port"])
        procs.append(proc)
    return procs, port


BENCH_KEY = "bench:" + "QmVuY2htYXJrIGtleSBvZiAzMiBieXRlcyEhISEhISE"


def start_heka(workers: int, processes: int, **extra: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    log = Path(tempfile.mkstemp(prefix="heka-bench-", suffix=".log")[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    env["HEKA_SEARCH_WORKERS"] = str(workers)
    env["HEKA_GRPC_PROCESSES"] = str(processes)
    env["HEKA_STATE_KEYS"] = BENCH_KEY
    env.update(extra)
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", "0", "--metrics-port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    end = time.monotonic() + 60
    while time.monotonic() < end:
        for raw in log.read_text().splitlines():
            rec = json.loads(raw)
            if rec.get("event") == "listening":
                return proc, int(rec["port"]), log
        time.sleep(0.05)
    raise RuntimeError("heka did not start: " + log.read_text())


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


# ---------------------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of ``pids`` (Linux /proc)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, ValueError):
                pass
    return out


def grpc_pids(proc: subprocess.Popen[bytes]) -> list[int]:
    """The gRPC serving processes of a heka server (the supervisor's children that are not
    forkservers or resource trackers; the server itself with one process)."""
    kids = []
    for pid in children(proc.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().decode(errors="replace")
        except OSError:
            continue
        if "serve" in cmd and "forkserver" not in cmd and "resource_tracker" not in cmd:
            kids.append(pid)
    return kids or [proc.pid]


async def closed_loop(
    make_call: Any, concurrency: int, seconds: float, warmup: float = 0.5, cpu_pids: list[int] | None = None
) -> dict[str, Any]:
    """``concurrency`` tasks calling back to back; returns rate and latencies (after warm-up)
    and, given the server's pids, the server CPU time per call (robust on a shared machine)."""
    latencies: list[float] = []
    errors = 0
    t0 = time.perf_counter()
    start_measure = t0 + warmup
    end = start_measure + seconds
    cpu: list[float] = []

    async def sample_cpu() -> None:
        await asyncio.sleep(warmup)
        cpu.append(cpu_seconds(cpu_pids or []))
        await asyncio.sleep(max(0.0, end - time.perf_counter()))
        cpu.append(cpu_seconds(cpu_pids or []))

    async def worker(i: int) -> None:
        nonlocal errors
        n = i
        while True:
            now = time.perf_counter()
            if now >= end:
                return
            try:
                await make_call(n)
            except Exception:
                errors += 1
            done = time.perf_counter()
            if now >= start_measure:
                latencies.append(done - now)
            n += concurrency

    await asyncio.gather(sample_cpu(), *(worker(i) for i in range(concurrency)))
    return {
        "cpu_us": (cpu[1] - cpu[0]) / max(1, len(latencies)) * 1e6 if cpu_pids else float("nan"),
        "rate": len(latencies) / seconds,
        "p50_ms": pct(latencies, 0.50) * 1000,
        "p99_ms": pct(latencies, 0.99) * 1000,
        "calls": len(latencies),
        "errors": errors,
    }


def positions(game: str, players: int, count: int, seed: int) -> list[tuple[str, int]]:
    """(serialised state, a legal action) along seeded random games."""
    from engine.registry import get_game

    rng = random.Random(seed)
    out: list[tuple[str, int]] = []
    g = get_game(game)
    while len(out) < count:
        state = g.new_initial_state(players, seed=rng.randrange(1 << 30))
        while not state.is_terminal() and len(out) < count:
            legal = state.legal_actions()
            if rng.random() < 0.3:
                out.append((state.serialize(), rng.choice(legal)))
            state.apply(rng.choice(legal))
    return out


class Stubs:
    """``n`` channels (separate connections, so that several gRPC processes share the load)
    and a stub per channel; calls rotate over them."""

    def __init__(self, address: str, n: int, make: Any) -> None:
        import grpc

        options = [("grpc.max_receive_message_length", 16 << 20)]
        # Distinct channel arguments keep gRPC from sharing one connection.
        self.channels = [
            grpc.aio.insecure_channel(address, options=[*options, ("bench.channel", i)]) for i in range(n)
        ]
        self.stubs = [make(ch) for ch in self.channels]

    def __getitem__(self, n: int) -> Any:
        return self.stubs[n % len(self.stubs)]

    async def close(self) -> None:
        for ch in self.channels:
            await ch.close()


def row(name: str, phase: str, r: dict[str, Any], ceiling: float) -> tuple[str, ...]:
    return (
        name,
        phase,
        f"{r['rate']:.0f}",
        f"{100 * r['rate'] / ceiling:.0f}%",
        f"{r['p50_ms']:.2f}",
        f"{r['p99_ms']:.2f}",
        str(r["errors"]),
    )


async def collect_positions(
    stub: Any, game: str, players: int, count: int
) -> list[tuple[str, int, int, int]]:
    """(token, a legal action, number of legal actions, seat to act) along seeded random
    games, made by the server itself."""
    from service.gen.heka.v1 import game_service_pb2 as pb

    rng = random.Random(7)
    pool: list[tuple[str, int, int, int]] = []
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
            resp = await stub.ApplyAction(pb.ApplyActionRequest(state=token, action_id=action))
            token, over, player = resp.state, resp.status.is_over, resp.status.current_player
    return pool


async def bench_all(args: argparse.Namespace) -> list[tuple[str, ...]]:
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    echo_procs, echo_port = start_echo(1)
    echo_n_procs, echo_n_port = start_echo(args.processes) if args.processes > 1 else ([], echo_port)
    aio_procs, aio_port = start_echo(args.processes, aio=True)
    heka, port, log = start_heka(args.workers, args.processes)
    cold, cold_port, cold_log = start_heka(1, args.processes, HEKA_STATE_CACHE_SIZE="0")
    rows: list[tuple[str, ...]] = []
    echo_1_pids = [p.pid for p in echo_procs]
    echo_n_pids = [p.pid for p in echo_n_procs] or echo_1_pids
    aio_pids = [p.pid for p in aio_procs]
    heka_pids, cold_pids = grpc_pids(heka), grpc_pids(cold)
    try:
        echo = Stubs(f"127.0.0.1:{echo_port}", args.channels, lambda ch: ch.unary_unary(ECHO_METHOD))
        echo_n = Stubs(f"127.0.0.1:{echo_n_port}", args.channels, lambda ch: ch.unary_unary(ECHO_METHOD))
        echo_aio = Stubs(f"127.0.0.1:{aio_port}", args.channels, lambda ch: ch.unary_unary(ECHO_METHOD))
        stubs = Stubs(f"127.0.0.1:{port}", args.channels, pb_grpc.GameServiceStub)
        cold_stubs = Stubs(f"127.0.0.1:{cold_port}", args.channels, pb_grpc.GameServiceStub)
        payload = os.urandom(2048)
        pools: dict[str, list[tuple[str, int, int, int]]] = {}
        for label, game, players in (("aton", "aton", 2), ("osirium 4p", "osirium", 4)):
            pools[label] = await collect_positions(stubs[0], game, players, args.positions)
            sizes = [len(t) for t, *_ in pools[label]]
            print(
                f"# {label}: {len(sizes)} positions, token {min(sizes)}-{max(sizes)} chars "
                f"(median {statistics.median(sizes):.0f})",
                flush=True,
            )

        def cheap_calls(st: Stubs) -> list[tuple[str, Any]]:
            # ListGames answers a prebuilt message: the floor of heka's own serving stack
            # (aio server, interceptor, metrics, access log) with no per-call work.
            out: list[tuple[str, Any]] = [
                ("ListGames (no handler work)", lambda n, st=st: st[n].ListGames(pb.ListGamesRequest()))
            ]
            for label, pool in pools.items():
                out.append(
                    (
                        f"ListLegalActions {label}",
                        lambda n, st=st, pool=pool: st[n].ListLegalActions(
                            pb.ListLegalActionsRequest(
                                state=pool[n % len(pool)][0], viewer=pool[n % len(pool)][3]
                            )
                        ),
                    )
                )
                out.append(
                    (
                        f"ApplyAction {label}",
                        lambda n, st=st, pool=pool: st[n].ApplyAction(
                            pb.ApplyActionRequest(
                                state=pool[n % len(pool)][0], action_id=pool[n % len(pool)][1]
                            )
                        ),
                    )
                )
            return out

        busy_stop = asyncio.Event()
        busy_done = 0
        busy_token = max(pools["osirium 4p"], key=lambda p: p[2])[0]

        async def keep_busy(i: int) -> None:
            nonlocal busy_done
            bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(milliseconds=1000))
            while not busy_stop.is_set():
                try:
                    await stubs[i].BotMove(pb.BotMoveRequest(state=busy_token, bot=bot), timeout=30)
                    busy_done += 1
                except Exception:
                    await asyncio.sleep(0.05)

        # Every workload once per repeat, interleaved, so that a noisy neighbour hurts all
        # rows alike; the table shows medians over the repeats.
        capacity = args.workers * args.processes
        busy = f"{capacity} searches busy"
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for rep in range(args.repeats):
            print(f"# repeat {rep + 1}/{args.repeats}", flush=True)
            echo_key = (f"echo 2 KB, {args.processes} process(es) (ceiling)", "")
            results.setdefault(echo_key, []).append(
                await closed_loop(
                    lambda n: echo_n[n](payload), args.concurrency, args.seconds, cpu_pids=echo_n_pids
                )
            )
            results.setdefault((f"echo 2 KB, grpc.aio, {args.processes} process(es)", ""), []).append(
                await closed_loop(
                    lambda n: echo_aio[n](payload), args.concurrency, args.seconds, cpu_pids=aio_pids
                )
            )
            if args.processes > 1:
                results.setdefault(("echo 2 KB, 1 process", ""), []).append(
                    await closed_loop(
                        lambda n: echo[n](payload), args.concurrency, args.seconds, cpu_pids=echo_1_pids
                    )
                )
            for name, call in cheap_calls(stubs):
                results.setdefault((name, "alone"), []).append(
                    await closed_loop(call, args.concurrency, args.seconds, cpu_pids=heka_pids)
                )
            busy_stop.clear()
            tasks = [asyncio.create_task(keep_busy(i)) for i in range(capacity)]
            await asyncio.sleep(0.5)
            for name, call in cheap_calls(stubs):
                results.setdefault((name, busy), []).append(
                    await closed_loop(call, args.concurrency, args.seconds, cpu_pids=heka_pids)
                )
            busy_stop.set()
            await asyncio.gather(*tasks)
            results[echo_key].append(
                await closed_loop(
                    lambda n: echo_n[n](payload), args.concurrency, args.seconds, cpu_pids=echo_n_pids
                )
            )
            # Tokens that server has never seen: every call decodes (HMAC, deserialise, validate).
            for name, call in cheap_calls(cold_stubs):
                results.setdefault((name, "no state cache"), []).append(
                    await closed_loop(call, args.concurrency, args.seconds, cpu_pids=cold_pids)
                )
        print(f"# {busy_done} background searches (1 s each) completed in the busy phases", flush=True)

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

        # Bot moves per difficulty, alone, on positions with at least 5 legal actions.
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
                    resp = await stubs[i].BotMove(
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
        for st in (echo, echo_n, echo_aio, stubs, cold_stubs):
            await st.close()
    finally:
        for proc in echo_procs + echo_n_procs + aio_procs:
            stop(proc)
        stop(heka)
        stop(cold)
        log.unlink(missing_ok=True)
        cold_log.unlink(missing_ok=True)
    return rows


async def bench_sealing(args: argparse.Namespace) -> list[tuple[str, ...]]:
    """Issue 12, the cost of sealing by default: the cheap calls on two servers without the
    state cache (every call opens its token and seals a new one), one sealing (AES-256-GCM,
    the default) and one with HEKA_INSECURE_PLAINTEXT_TOKENS, each on tokens it made itself,
    interleaved in the same run; server CPU per call, and ListGames as the floor."""
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    servers = {
        "sealed": start_heka(1, args.processes, HEKA_STATE_CACHE_SIZE="0"),
        "plaintext": start_heka(
            1, args.processes, HEKA_STATE_CACHE_SIZE="0", HEKA_INSECURE_PLAINTEXT_TOKENS="true"
        ),
    }
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        stubs = {
            k: Stubs(f"127.0.0.1:{port}", args.channels, pb_grpc.GameServiceStub)
            for k, (_, port, _) in servers.items()
        }
        pids = {k: grpc_pids(proc) for k, (proc, _, _) in servers.items()}
        pools = {
            (k, label): await collect_positions(stubs[k][0], game, players, args.positions)
            for k in servers
            for label, game, players in (("aton", "aton", 2), ("osirium 4p", "osirium", 4))
        }
        for rep in range(args.repeats):
            print(f"# repeat {rep + 1}/{args.repeats}", flush=True)
            for k in servers:
                st = stubs[k]
                calls: list[tuple[str, Any]] = [
                    ("ListGames", lambda n, st=st: st[n].ListGames(pb.ListGamesRequest()))
                ]
                for label in ("aton", "osirium 4p"):
                    pool = pools[(k, label)]
                    calls.append(
                        (
                            f"ListLegalActions {label}",
                            lambda n, st=st, pool=pool: st[n].ListLegalActions(
                                pb.ListLegalActionsRequest(
                                    state=pool[n % len(pool)][0], viewer=pool[n % len(pool)][3]
                                )
                            ),
                        )
                    )
                    calls.append(
                        (
                            f"ApplyAction {label}",
                            lambda n, st=st, pool=pool: st[n].ApplyAction(
                                pb.ApplyActionRequest(
                                    state=pool[n % len(pool)][0], action_id=pool[n % len(pool)][1]
                                )
                            ),
                        )
                    )
                for name, call in calls:
                    results.setdefault((name, k), []).append(
                        await closed_loop(call, args.concurrency, args.seconds, cpu_pids=pids[k])
                    )
        for st in stubs.values():
            await st.close()
    finally:
        for proc, _, log in servers.values():
            stop(proc)
            log.unlink(missing_ok=True)
    rows = []
    names = sorted({name for name, _ in results}, key=lambda x: (x != "ListGames", x))
    for name in names:
        sealed = statistics.median(x["cpu_us"] for x in results[(name, "sealed")])
        plain = statistics.median(x["cpu_us"] for x in results[(name, "plaintext")])
        rows.append(
            (name, f"{sealed:.0f}", f"{plain:.0f}", f"{sealed - plain:+.0f}", f"{sealed / plain:.2f}")
        )
    return rows


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
