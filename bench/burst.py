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
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_KEY = "bench:" + "QmVuY2htYXJrIGtleSBvZiAzMiBieXRlcyEhISEhISE"
METHODS = ("ListGames", "GetView", "ApplyAction", "BotMove")


def start_heka(
    server_args: list[str], env_extra: dict[str, str]
) -> tuple[subprocess.Popen[bytes], int, Path]:
    """A ``heka serve`` on 127.0.0.1 and a free port; returns (process, port, log path)."""
    log = Path(tempfile.mkstemp(prefix="heka-burst-", suffix=".log")[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    env.update({"HEKA_STATE_KEYS": BENCH_KEY, "HEKA_SEARCH_WORKERS": "1", **env_extra})
    cmd = [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", "0"]
    cmd += ["--metrics-port", "-1", *server_args]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    end = time.monotonic() + 60
    while time.monotonic() < end:
        for raw in log.read_text().splitlines():
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if rec.get("event") == "listening":
                return proc, int(rec["port"]), log
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("heka did not start:\n" + log.read_text())


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def loopback(target: str) -> None:
    host = target.rsplit(":", 1)[0].strip("[]")
    if host not in ("127.0.0.1", "::1", "localhost"):
        raise SystemExit(f"refusing to load {target}: loopback targets only")


async def burst(target: str, calls: int, channels: int, timeout: float, seed: int) -> dict[str, Any]:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    rng = random.Random(seed)
    # Distinct connections: a channel option that differs keeps gRPC from sharing one.
    chans = [grpc.aio.insecure_channel(target, options=[("heka.burst", i)]) for i in range(channels)]
    health_chan = grpc.aio.insecure_channel(target, options=[("heka.burst", "health")])
    try:
        stubs = [pb_grpc.GameServiceStub(ch) for ch in chans]
        setup = stubs[0]
        token = (await setup.CreateGame(pb.CreateGameRequest(game="aton", seed=seed), timeout=30)).state
        legal = (await setup.ListLegalActions(pb.ListLegalActionsRequest(state=token), timeout=30)).actions
        bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, difficulty=pb.DIFFICULTY_EASY, seed=seed)
        requests = {
            "ListGames": pb.ListGamesRequest(),
            "GetView": pb.GetViewRequest(state=token, player=0),
            "ApplyAction": pb.ApplyActionRequest(state=token, action_id=legal[0].id),
            "BotMove": pb.BotMoveRequest(state=token, bot=bot),
        }
        plan = [(rng.choice(METHODS), rng.randrange(channels)) for _ in range(calls)]
        codes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        messages: dict[tuple[str, str], str] = {}
        health: collections.Counter[str] = collections.Counter()
        done = asyncio.Event()

        async def one(method: str, index: int) -> None:
            try:
                await getattr(stubs[index], method)(requests[method], timeout=timeout)
                codes[method]["OK"] += 1
            except grpc.aio.AioRpcError as err:
                code = err.code().name
                codes[method][code] += 1
                messages.setdefault((method, code), (err.details() or "")[:90])

        async def probe() -> None:
            stub = health_pb2_grpc.HealthStub(health_chan)
            while not done.is_set():
                try:
                    resp = await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
                    health[health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)] += 1
                except grpc.aio.AioRpcError as err:
                    health[err.code().name] += 1
                await asyncio.sleep(0.05)

        prober = asyncio.create_task(probe())
        start = time.monotonic()
        await asyncio.gather(*(one(m, i) for m, i in plan))
        elapsed = time.monotonic() - start
        done.set()
        await prober
        return {"codes": codes, "messages": messages, "health": health, "seconds": elapsed}
    finally:
        for ch in [*chans, health_chan]:
            await ch.close()


def table(result: dict[str, Any]) -> str:
    codes: dict[str, collections.Counter[str]] = result["codes"]
    names = sorted({c for counter in codes.values() for c in counter}, key=lambda c: (c != "OK", c))
    head = ["method", *names, "total"]
    rows = []
    for method in METHODS:
        counter = codes.get(method, collections.Counter())
        rows.append([method, *(str(counter[c]) for c in names), str(sum(counter.values()))])
    totals: collections.Counter[str] = collections.Counter()
    for counter in codes.values():
        totals.update(counter)
    rows.append(["all", *(str(totals[c]) for c in names), str(sum(totals.values()))])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", help="a running server (loopback only); default: start one")
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--channels", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=60.0, help="deadline of each call (s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--server-args", default="", help="extra `heka serve` flags, e.g. '--grpc-processes 2'")
    ap.add_argument("--access-log", action="store_true", help="keep the server's access log on")
    args = ap.parse_args()
    if not 1 <= args.calls <= 20_000:
        raise SystemExit("--calls must be 1..20000")
    proc = None
    log = None
    if args.target:
        loopback(args.target)
        target = args.target
    else:
        env = {} if args.access_log else {"HEKA_ACCESS_LOG": "false"}
        proc, port, log = start_heka(shlex.split(args.server_args), env)
        target = f"127.0.0.1:{port}"
    try:
        result = asyncio.run(burst(target, args.calls, args.channels, args.timeout, args.seed))
    finally:
        if proc is not None:
            stop(proc)
    print(
        f"{args.calls} concurrent calls over {args.channels} channels to {target} "
        f"(server args: {args.server_args or '-'}), {result['seconds']:.1f} s"
    )
    print(table(result))
    health = ", ".join(f"{k} {v}" for k, v in sorted(result["health"].items()))
    print(f"health checks during the burst: {health or 'none'}")
    for (method, code), message in sorted(result["messages"].items()):
        print(f"  {method} {code}: {message}")
    if log is not None:
        noisy = []
        served: collections.Counter[str] = collections.Counter()
        for raw in log.read_text().splitlines():
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                noisy.append(raw)
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
        log.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
