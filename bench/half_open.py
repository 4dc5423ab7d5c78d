"""Memory of the gRPC serving processes under calls whose request message never arrives.

Starts a local ``heka serve`` (loopback only), then opens ``--connections`` connections and on
them ``--calls`` calls in all to ``--method`` (default ``GetView``; the health checks'
``/grpc.health.v1.Health/Check`` and ``/grpc.health.v1.Health/Watch`` have a cap of their own)
that send their headers and never their request
(a client stalled, or one holding calls open on purpose), with no deadline. Samples the summed
resident set (RSS) of the gRPC serving processes every 0.2 s while the calls are opened and
``--hold`` seconds after, and prints its start and peak, how many calls the server ended (and
with which status) while they were held, and whether a health check and a real call
still answer (a ``ListGames``). Asserts nothing.

``--server-root`` runs the server from another checkout (e.g. the main branch, to compare
before and after) with this interpreter; ``--server-args`` passes ``heka serve`` flags, e.g.
``--grpc-processes 2`` as the Kubernetes manifests run it.

    .venv/bin/python bench/half_open.py --calls 20000
    .venv/bin/python bench/half_open.py --calls 40000 --server-args "--grpc-processes 2"
    .venv/bin/python bench/half_open.py --calls 30000 --method /grpc.health.v1.Health/Check
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shlex
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.loadtest.local import Sampler, add_server_options, rss_bytes, start_heka  # noqa: E402

METHOD = "/heka.v1.GameService/GetView"


async def hold(
    target: str, connections: int, calls: int, seconds: float, method: str = METHOD
) -> dict[str, Any]:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    never = asyncio.Event()

    async def no_request() -> Any:
        await never.wait()
        yield b""  # never reached

    channels = [
        grpc.aio.insecure_channel(target, options=[("heka.half_open", i)]) for i in range(connections)
    ]
    stalled = [
        channels[i % connections].stream_unary(method, request_serializer=bytes, response_deserializer=bytes)(
            no_request()
        )
        for i in range(calls)
    ]
    await asyncio.sleep(seconds)
    ended: collections.Counter[str] = collections.Counter()
    for call in stalled:
        if call.done():
            ended[(await call.code()).name] += 1
    checks: dict[str, str] = {}
    async with grpc.aio.insecure_channel(target) as probe:
        health = health_pb2_grpc.HealthStub(probe)
        game = pb_grpc.GameServiceStub(probe)  # type: ignore[no-untyped-call]
        probes: list[tuple[str, Any]] = [
            ("health", lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=5)),
            ("ListGames", lambda: game.ListGames(pb.ListGamesRequest(), timeout=5)),
        ]
        for name, request in probes:
            t0 = time.monotonic()
            try:
                await request()
                checks[name] = f"OK in {time.monotonic() - t0:.3f} s"
            except grpc.aio.AioRpcError as err:
                checks[name] = (
                    f"{err.code().name} in {time.monotonic() - t0:.3f} s: {(err.details() or '')[:80]}"
                )
    never.set()
    for call in stalled:
        call.cancel()
    for ch in channels:
        await ch.close()
    return {"ended": ended, "checks": checks}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connections", type=int, default=20)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--hold", type=float, default=20.0, help="seconds the calls are held open")
    ap.add_argument("--method", default=METHOD, help=f"the method called (default {METHOD})")
    add_server_options(ap, target=False)
    args = ap.parse_args()
    if not 1 <= args.connections <= 1000 or not 1 <= args.calls <= 200_000 or not 0 < args.hold <= 600:
        raise SystemExit("--connections must be 1..1000, --calls 1..200,000 and --hold 0..600")
    env = {"HEKA_ACCESS_LOG": "false"}
    with start_heka(*shlex.split(args.server_args), env=env, root=args.server_root) as server:
        pids = server.grpc_pids()

        def rss_mib() -> float:
            return sum(rss_bytes(pid) for pid in pids) / 2**20

        time.sleep(1.0)  # settle after start-up
        with Sampler(rss_mib, interval=0.2) as rss:
            result = asyncio.run(hold(server.target, args.connections, args.calls, args.hold, args.method))
    samples = rss.values
    print(
        f"server from {args.server_root.resolve()} {args.server_args}; {args.calls:,} calls to "
        f"{args.method} without their request on {args.connections} connections, held {args.hold:.0f} s"
    )
    print(f"  ended by the server while held: {dict(result['ended']) or 'none'}")
    print(f"  while held: {result['checks']}")
    print(
        f"  RSS of {len(pids)} gRPC process(es): start {samples[0]:.0f} MiB, peak {max(samples):.0f} MiB "
        f"(+{(max(samples) - samples[0]) * 1024 / args.calls:.1f} KiB per call)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
