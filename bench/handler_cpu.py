"""The cheap handlers' own CPU, called in-process: ``ApplyAction`` and ``ListLegalActions``
on sealed tokens with no state cache (the per-call budget, without gRPC).

Usage::

    .venv/bin/python bench/handler_cpu.py                       # this checkout
    .venv/bin/python bench/handler_cpu.py --before ../old-tree  # and another, interleaved

Each checkout runs in its own child process (its own modules: compiled when its extensions
are built and fresh, else pure Python, as ``heka serve`` would; ``HEKA_PURE_PYTHON=1``
forces pure Python in both). A child makes 200 positions per game along seeded random games
(Aton, Osirium 4 players), seals them with the bench key, then calls each handler on every
position, 7 passes, and prints the median CPU µs per call (its thread's). The checkouts
alternate ``--rounds`` times; the table shows the medians over rounds, and the ratio
after/before. A benchmark: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAMES = (("aton", "aton", 2), ("osirium 4p", "osirium", 4))
METHODS = ("ApplyAction", "ListLegalActions")


def child(positions: int, passes: int) -> dict[str, object]:
    """Measure this process's checkout (the one whose ``service`` is on ``sys.path``)."""
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="heka-bench-"))
    import engine
    from service.config import Config
    from service.envelope import KeyRing, parse_keys
    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.loadtest.local import BENCH_KEY
    from service.servicer import GameService

    service = GameService(Config(state_cache_size=0), KeyRing(parse_keys(BENCH_KEY)), None)  # type: ignore[arg-type]
    rng = random.Random(7)
    out: dict[str, object] = {"build": engine.build()}
    for label, game, players in GAMES:
        applies: list[object] = []
        listings: list[object] = []
        while len(applies) < positions:
            created = service.CreateGame(
                pb.CreateGameRequest(game=game, num_players=players, seed=rng.randrange(1 << 30)), None
            )
            token, over, seat = created.state, False, created.status.current_player
            while not over and len(applies) < positions:
                listing = pb.ListLegalActionsRequest(state=token, viewer=seat)
                action = rng.choice(service.ListLegalActions(listing, None).actions).id
                if rng.random() < 0.3:
                    applies.append(pb.ApplyActionRequest(state=token, action_id=action, player=seat))
                    listings.append(listing)
                resp = service.ApplyAction(
                    pb.ApplyActionRequest(state=token, action_id=action, player=seat), None
                )
                token, over, seat = resp.state, resp.status.is_over, resp.status.current_player
        for method, requests in (("ApplyAction", applies), ("ListLegalActions", listings)):
            handler = getattr(service, method)
            times = []
            for _ in range(passes):
                start = time.thread_time_ns()
                for request in requests:
                    handler(request, None)
                times.append((time.thread_time_ns() - start) / len(requests) / 1000)
            out[f"{method} {label}"] = statistics.median(times)
    return out


def run_child(root: Path, args: argparse.Namespace) -> dict[str, object]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(root)]
    command += ["--positions", str(args.positions), "--passes", str(args.passes)]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--before", type=Path, default=None, metavar="ROOT", help="another checkout to compare"
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the checkouts (default 3)")
    parser.add_argument("--positions", type=int, default=200, help="positions per game (default 200)")
    parser.add_argument("--passes", type=int, default=7, help="passes per handler in a child (default 7)")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        sys.path.insert(0, str(args.child.resolve()))
        print(json.dumps(child(args.positions, args.passes)))
        return 0
    roots = {"after": ROOT} if args.before is None else {"before": args.before.resolve(), "after": ROOT}
    runs: dict[str, list[dict[str, object]]] = {k: [] for k in roots}
    for r in range(args.rounds):
        print(f"# round {r + 1}/{args.rounds}", flush=True)
        for k, root in roots.items():
            runs[k].append(run_child(root, args))
    rows = [f"{'handler':<30}" + "".join(f"{k + ' (' + str(runs[k][0]['build']) + ')':>22}" for k in roots)]
    for label, _, _ in GAMES:
        for method in METHODS:
            name = f"{method} {label}"
            cells = {k: statistics.median(float(str(x[name])) for x in runs[k]) for k in roots}
            line = f"{name:<30}" + "".join(f"{cells[k]:>22.1f}" for k in roots)
            if "before" in cells:
                line += f"   after/before {cells['after'] / cells['before']:.2f}"
            rows.append(line)
    print(
        "\nhandler CPU µs per call, in-process, sealed tokens, no state cache "
        f"(median of {args.rounds} rounds)"
    )
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
