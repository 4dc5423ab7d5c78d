"""Memory of a gRPC serving process under a flood of junk state tokens near a message cap.

Starts a local ``heka serve`` (one gRPC process, loopback only), then ``--clients``
clients (one connection each, one call in flight each, closed loop) send ``GetView``
requests whose ``state`` is ``--token-bytes`` of junk for ``--seconds``. Samples the
resident set (RSS) of the gRPC serving process every 0.1 s and prints its start, peak and
end, the calls made and their status codes. Asserts nothing; bounded by ``--seconds``.

``--server-root`` runs the server from another checkout (e.g. the main branch, to compare
before and after) with this interpreter.

    .venv/bin/python bench/junk_flood.py --clients 40 --seconds 20
    .venv/bin/python bench/junk_flood.py --clients 40 --server-root /work/main
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

OLD_CAP = 4 * 1024 * 1024


async def flood(target: str, clients: int, token_bytes: int, seconds: float, seed: int) -> dict[str, Any]:
    import random

    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    rng = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    junk = [
        "".join(rng.choices(alphabet, k=64)) * (token_bytes // 64) + "A" * (token_bytes % 64)
        for _ in range(4)
    ]
    options = [("grpc.max_send_message_length", 64 * 1024 * 1024)]
    chans = [grpc.aio.insecure_channel(target, options=[*options, ("heka.flood", i)]) for i in range(clients)]
    codes: collections.Counter[str] = collections.Counter()
    messages: dict[str, str] = {}
    end = time.monotonic() + seconds

    async def client(i: int) -> None:
        stub = pb_grpc.GameServiceStub(chans[i])  # type: ignore[no-untyped-call]
        n = 0
        while time.monotonic() < end:
            try:
                await stub.GetView(pb.GetViewRequest(state=junk[(i + n) % len(junk)]), timeout=30)
                codes["OK"] += 1
            except grpc.aio.AioRpcError as err:
                codes[err.code().name] += 1
                messages.setdefault(err.code().name, (err.details() or "")[:100])
            n += 1

    try:
        await asyncio.gather(*(client(i) for i in range(clients)))
    finally:
        for ch in chans:
            await ch.close()
    return {"codes": codes, "messages": messages}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument(
        "--token-bytes", type=int, default=OLD_CAP - 64, help="junk token size (default 4 MiB - 64)"
    )
    ap.add_argument("--seed", type=int, default=1)
    add_server_options(ap, target=False)
    args = ap.parse_args()
    if not 1 <= args.clients <= 200 or not 0 < args.seconds <= 300:
        raise SystemExit("--clients must be 1..200 and --seconds 0..300")
    env = {"HEKA_ACCESS_LOG": "false"}
    with start_heka(*shlex.split(args.server_args), env=env, root=args.server_root) as server:
        pid = server.grpc_pids()[0]  # the (first) gRPC serving process

        def rss_mib() -> float:
            return rss_bytes(pid) / 2**20

        time.sleep(1.0)  # settle after start-up
        t0 = time.monotonic()
        with Sampler(rss_mib, interval=0.1) as rss:
            result = asyncio.run(
                flood(server.target, args.clients, args.token_bytes, args.seconds, args.seed)
            )
            elapsed = time.monotonic() - t0
            time.sleep(1.0)
    samples = rss.values
    errors = [line for line in server.log_lines() if line.get("level") == "error"]
    calls = sum(result["codes"].values())
    print(
        f"server from {args.server_root.resolve()} {args.server_args}; {args.clients} clients x GetView with "
        f"{args.token_bytes:,}-byte junk tokens for {elapsed:.1f} s: {calls} calls"
    )
    print(f"  codes: {dict(result['codes'])}")
    for code, message in result["messages"].items():
        print(f"  {code}: {message}")
    print(
        f"  gRPC process RSS: start {samples[0]:.0f} MiB, peak {max(samples):.0f} MiB, "
        f"end {samples[-1]:.0f} MiB"
    )
    print(f"  server ERROR log lines: {len(errors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
