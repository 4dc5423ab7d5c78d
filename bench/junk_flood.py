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
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_KEY = "bench:" + "QmVuY2htYXJrIGtleSBvZiAzMiBieXRlcyEhISEhISE"
OLD_CAP = 4 * 1024 * 1024


def rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def start_heka(root: Path, extra: list[str]) -> tuple[subprocess.Popen[bytes], int, Path]:
    log = Path(tempfile.mkstemp(prefix="heka-flood-", suffix=".log")[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    env.update({"HEKA_STATE_KEYS": BENCH_KEY, "HEKA_SEARCH_WORKERS": "1", "HEKA_ACCESS_LOG": "false"})
    env["PYTHONPATH"] = str(root)
    cmd = [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", "0"]
    cmd += ["--metrics-port", "-1", *extra]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
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
        stub = pb_grpc.GameServiceStub(chans[i])
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
    ap.add_argument("--server-root", type=Path, default=ROOT, help="checkout to run the server from")
    ap.add_argument("--server-args", default="", help="extra `heka serve` flags")
    args = ap.parse_args()
    if not 1 <= args.clients <= 200 or not 0 < args.seconds <= 300:
        raise SystemExit("--clients must be 1..200 and --seconds 0..300")
    proc, port, log = start_heka(args.server_root.resolve(), args.server_args.split())
    samples: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append(rss_mib(proc.pid))
            time.sleep(0.1)

    try:
        time.sleep(1.0)  # settle after start-up
        start_rss = rss_mib(proc.pid)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.monotonic()
        target = f"127.0.0.1:{port}"
        result = asyncio.run(flood(target, args.clients, args.token_bytes, args.seconds, args.seed))
        elapsed = time.monotonic() - t0
        time.sleep(1.0)
        stop.set()
        sampler.join()
        end_rss = rss_mib(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    errors = [line for line in log.read_text().splitlines() if '"level": "error"' in line]
    log.unlink(missing_ok=True)
    calls = sum(result["codes"].values())
    print(
        f"server from {args.server_root.resolve()} {args.server_args}; {args.clients} clients x GetView with "
        f"{args.token_bytes:,}-byte junk tokens for {elapsed:.1f} s: {calls} calls"
    )
    print(f"  codes: {dict(result['codes'])}")
    for code, message in result["messages"].items():
        print(f"  {code}: {message}")
    peak = max(samples, default=0.0)
    print(f"  gRPC process RSS: start {start_rss:.0f} MiB, peak {peak:.0f} MiB, end {end_rss:.0f} MiB")
    print(f"  server ERROR log lines: {len(errors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
