"""Other callers' latency while a flood of random-bot calls plays whole games.

Starts a local ``heka serve`` (loopback only). ``--clients`` clients (one connection each,
one call in flight each, closed loop) send, for ``--seconds``, calls whose bots are all random
and play an Osirium game of ``--players`` players to its end: ``AdvanceBots`` from a new game
(``--flood advance``) or ``CreateGame`` with every seat a bot (``--flood create``). Random
bots take no place in the search queue. Meanwhile two probe clients send, every
``--probe-every`` seconds, one a searching ``BotMove`` (MCTS, ``--iterations``, 20 s deadline),
the other a health check (1 s deadline, as a liveness probe's), and the bench prints each
probe's latencies (median, 90th percentile, max) and status codes, and the flood's calls and
codes. A probe that waits behind the flood (for a thread, or for the event loop) shows here.
Asserts nothing; bounded by ``--seconds``.

``--server-root`` runs the server from another checkout (e.g. the main branch, to compare
before and after) with this interpreter.

    .venv/bin/python bench/random_flood.py --clients 300 --seconds 30
    .venv/bin/python bench/random_flood.py --clients 300 --flood create
    .venv/bin/python bench/random_flood.py --clients 300 --server-root /path/to/main
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.loadtest.local import add_server_options, start_heka  # noqa: E402

PROBE_DEADLINE = 20.0
HEALTH_DEADLINE = 1.0


async def flood(
    target: str,
    clients: int,
    players: int,
    seconds: float,
    *,
    kind: str,
    iterations: int,
    probe_every: float,
) -> dict[str, Any]:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    probe_channel = grpc.aio.insecure_channel(target)
    probe = pb_grpc.GameServiceStub(probe_channel)  # type: ignore[no-untyped-call]
    start = await probe.CreateGame(pb.CreateGameRequest(game="osirium", num_players=players, seed=1))
    random_bot = pb.BotSettings(kind=pb.BOT_KIND_RANDOM)
    seats = [pb.BotSeat(seat=s, bot=random_bot) for s in range(players)]
    searching = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=iterations))
    channels = [grpc.aio.insecure_channel(target, options=[("heka.flood", i)]) for i in range(clients)]
    flood_codes: collections.Counter[str] = collections.Counter()
    health_channel = grpc.aio.insecure_channel(target, options=[("heka.health", 1)])
    health = health_pb2_grpc.HealthStub(health_channel)
    probes: dict[str, tuple[collections.Counter[str], list[float]]] = {
        "bot": (collections.Counter(), []),
        "health": (collections.Counter(), []),
    }
    end = time.monotonic() + seconds

    async def client(i: int) -> None:
        stub = pb_grpc.GameServiceStub(channels[i])  # type: ignore[no-untyped-call]
        while time.monotonic() < end:
            try:
                if kind == "create":
                    await stub.CreateGame(
                        pb.CreateGameRequest(game="osirium", num_players=players, bots=seats), timeout=60
                    )
                else:
                    await stub.AdvanceBots(pb.AdvanceBotsRequest(state=start.state, bots=seats), timeout=60)
                flood_codes["OK"] += 1
            except grpc.aio.AioRpcError as err:
                flood_codes[err.code().name] += 1

    async def prober(name: str, call: Any, deadline: float) -> None:
        codes, latencies = probes[name]
        await asyncio.sleep(min(2.0, seconds / 4))  # the flood under way
        while time.monotonic() < end:
            t0 = time.monotonic()
            try:
                await call(timeout=deadline)
                codes["OK"] += 1
            except grpc.aio.AioRpcError as err:
                codes[err.code().name] += 1
            latencies.append(time.monotonic() - t0)
            await asyncio.sleep(probe_every)

    bot_request = pb.BotMoveRequest(state=start.state, bot=searching, apply=True)
    try:
        await asyncio.gather(
            prober("bot", lambda timeout: probe.BotMove(bot_request, timeout=timeout), PROBE_DEADLINE),
            prober(
                "health",
                lambda timeout: health.Check(health_pb2.HealthCheckRequest(), timeout=timeout),
                HEALTH_DEADLINE,
            ),
            *(client(i) for i in range(clients)),
        )
    finally:
        for ch in [probe_channel, health_channel, *channels]:
            await ch.close()
    return {"flood": flood_codes, "probes": probes}


def _latencies(codes: collections.Counter[str], lat: list[float]) -> str:
    lat = sorted(lat)
    if not lat:
        return "no call"
    p90 = lat[min(len(lat) - 1, int(0.9 * len(lat)))]
    return (
        f"{len(lat)} calls, {dict(codes)}; latency median {statistics.median(lat):.3f} s, "
        f"p90 {p90:.3f} s, max {lat[-1]:.3f} s"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=300)
    ap.add_argument("--flood", choices=("advance", "create"), default="advance")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--iterations", type=int, default=200, help="the probe's search iterations")
    ap.add_argument("--probe-every", type=float, default=0.5)
    add_server_options(ap, target=False)
    args = ap.parse_args()
    if not 1 <= args.clients <= 1000 or not 0 < args.seconds <= 300 or not 2 <= args.players <= 4:
        raise SystemExit("--clients must be 1..1000, --seconds 0..300 and --players 2..4")
    env = {"HEKA_ACCESS_LOG": "false"}
    with start_heka(*shlex.split(args.server_args), env=env, root=args.server_root) as server:
        time.sleep(1.0)  # settle after start-up
        result = asyncio.run(
            flood(
                server.target,
                args.clients,
                args.players,
                args.seconds,
                kind=args.flood,
                iterations=args.iterations,
                probe_every=args.probe_every,
            )
        )
    rpc = "CreateGame" if args.flood == "create" else "AdvanceBots"
    print(
        f"server from {args.server_root.resolve()} {args.server_args}; {args.clients} clients x "
        f"{rpc} (Osirium {args.players}p, every seat random) for {args.seconds:.0f} s"
    )
    print(f"  flood calls: {dict(result['flood'])}")
    print(f"  probe BotMove (MCTS, {args.iterations} iterations): {_latencies(*result['probes']['bot'])}")
    print(f"  probe health check: {_latencies(*result['probes']['health'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
