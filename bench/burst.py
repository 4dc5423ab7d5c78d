"""A burst of concurrent calls beyond the server's capacity: which status codes come back.

Starts a local ``heka serve`` (loopback only; or targets ``--target 127.0.0.1:PORT``),
prepares a real Aton token, then fires ``--calls`` calls *at once* from ``grpc.aio``
clients over ``--channels`` connections — a mix of ``ListGames``, ``GetView``,
``ApplyAction`` (a legal action of the token) and ``BotMove`` (MCTS easy, which needs a
search slot) — while a separate connection sends a health check every 50 ms. Prints the
status codes per method (and of the health checks) and the server's log lines at WARNING
or above. Asserts nothing; bounded by ``--calls`` and each call's ``--timeout``.

    .venv/bin/python bench/burst.py                          # 3,000 calls, 4 channels
    .venv/bin/python bench/burst.py --calls 3000 --server-args "--max-concurrent-rpcs 0"
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.loadtest.local import LocalServer, Sampler, add_server_options, rss_bytes, server_for  # noqa: E402
from service.loadtest.stats import codes_table  # noqa: E402

METHODS = ("ListGames", "GetView", "ApplyAction", "BotMove")


def tree_rss_mib(server: LocalServer) -> float:
    """Resident set of the server and its descendants, MiB."""
    return sum(rss_bytes(pid) for pid in server.tree()) / 2**20


async def burst(  # noqa: PLR0917
    target: str, calls: int, channels: int, timeout: float, seed: int, junk_bytes: int = 0
) -> dict[str, Any]:
    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    rng = random.Random(seed)
    # Distinct connections: a channel option that differs keeps gRPC from sharing one.
    chans = [grpc.aio.insecure_channel(target, options=[("heka.burst", i)]) for i in range(channels)]
    try:
        stubs = [pb_grpc.GameServiceStub(ch) for ch in chans]  # type: ignore[no-untyped-call]
        setup = stubs[0]
        token = (await setup.CreateGame(pb.CreateGameRequest(game="aton", seed=seed), timeout=30)).state
        legal_req = pb.ListLegalActionsRequest(state=token, viewer=0)
        legal = (await setup.ListLegalActions(legal_req, timeout=30)).actions
        bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, difficulty=pb.DIFFICULTY_EASY, seed=seed)
        if junk_bytes:  # GetView and ApplyAction carry junk instead of the token
            token = "".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZ", k=64)) * (junk_bytes // 64)
        requests = {
            "ListGames": pb.ListGamesRequest(),
            "GetView": pb.GetViewRequest(state=token, viewer=0),
            "ApplyAction": pb.ApplyActionRequest(state=token, action_id=legal[0].id, player=0),
            "BotMove": pb.BotMoveRequest(state=token, bot=bot, viewer=0),
        }
        plan = [(rng.choice(METHODS), rng.randrange(channels)) for _ in range(calls)]
        codes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        messages: dict[tuple[str, str], str] = {}

        async def one(method: str, index: int) -> None:
            try:
                await getattr(stubs[index], method)(requests[method], timeout=timeout)
                codes[method]["OK"] += 1
            except grpc.aio.AioRpcError as err:
                code = err.code().name
                codes[method][code] += 1
                messages.setdefault((method, code), (err.details() or "")[:90])

        # Health checks from another process (this one's event loop is busy with the burst).
        prober = subprocess.Popen(
            [sys.executable, __file__, "--health-probe", target],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        await asyncio.sleep(0.3)
        start = time.monotonic()
        await asyncio.gather(*(one(m, i) for m, i in plan))
        elapsed = time.monotonic() - start
        out, _ = prober.communicate(b"", timeout=30)  # closing stdin stops it
        return {"codes": codes, "messages": messages, "seconds": elapsed, **json.loads(out)}
    finally:
        for ch in chans:
            await ch.close()


def health_probe(target: str) -> None:
    """Check health every 50 ms until stdin closes; print the status counts and the slowest
    answer as JSON."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    stop = threading.Event()

    def wait_for_stdin() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=wait_for_stdin, daemon=True).start()
    health: collections.Counter[str] = collections.Counter()
    slowest = 0.0
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while not stop.is_set():
            sent = time.monotonic()
            try:
                resp = stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
                health[health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)] += 1
            except grpc.RpcError as err:
                health[err.code().name] += 1
            slowest = max(slowest, time.monotonic() - sent)
            stop.wait(0.05)
    print(json.dumps({"health": health, "health_max_ms": slowest * 1000}))


def main() -> int:
    if sys.argv[1:2] == ["--health-probe"]:
        health_probe(sys.argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--channels", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=60.0, help="deadline of each call (s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--access-log", action="store_true", help="keep the server's access log on")
    ap.add_argument(
        "--junk-token-bytes", type=int, default=0, help="GetView/ApplyAction send junk tokens this long"
    )
    add_server_options(ap)
    args = ap.parse_args()
    if not 1 <= args.calls <= 20_000:
        raise SystemExit("--calls must be 1..20000")
    samples: list[float] = []
    with contextlib.ExitStack() as stack:
        env = {} if args.access_log else {"HEKA_ACCESS_LOG": "false"}
        target, server = server_for(args, stack, env=env)
        if server is not None:
            time.sleep(0.5)
            samples = stack.enter_context(Sampler(lambda: tree_rss_mib(server), interval=0.1)).values
        result = asyncio.run(
            burst(target, args.calls, args.channels, args.timeout, args.seed, args.junk_token_bytes)
        )
    log = server.log_lines() if server is not None else None  # all of it, shutdown too
    print(
        f"{args.calls} concurrent calls over {args.channels} channels to {target} "
        f"(server from {args.server_root.resolve()}, args: {args.server_args or '-'}), "
        f"{result['seconds']:.1f} s"
    )
    print(codes_table(result["codes"], METHODS, totals=True))
    health = ", ".join(f"{k} {v}" for k, v in sorted(result["health"].items()))
    print(
        f"health checks during the burst: {health or 'none'} "
        f"(slowest answered in {result['health_max_ms']:.0f} ms)"
    )
    if samples:
        print(f"server process tree RSS: before {samples[0]:.0f} MiB, peak {max(samples):.0f} MiB")
    for (method, code), message in sorted(result["messages"].items()):
        print(f"  {method} {code}: {message}")
    if log is not None:
        noisy = []
        served: collections.Counter[str] = collections.Counter()
        for rec in log:
            if "raw" in rec:
                noisy.append(rec["raw"])
                continue
            if rec.get("msg") == "rpc" and "GameService" in rec.get("method", ""):
                served[rec["code"]] += 1
            if rec.get("level") in ("warning", "error", "critical"):
                noisy.append(f"{rec.get('level')}: {rec.get('msg', '')[:120]}")
        counts = collections.Counter(noisy)
        if args.access_log:
            print(f"server access log: {dict(sorted(served.items()))}")
        print(f"server log lines at WARNING or above: {sum(counts.values())}")
        for line, n in counts.most_common(8):
            print(f"  {n} x {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
