"""What a frontend's complete game costs: calls, bytes and server CPU per game.

Runs the load tool's ``play`` scenario (seat 0 a person choosing at random, every other seat
a bot) against a local ``heka serve`` for a fixed time, and reports, per completed game:
the RPCs, the protobuf bytes of requests and responses (what travels on the wire, before
HTTP/2 framing), and games per CPU-second of the server (every process of it: gRPC and
search workers). Random bots keep the searches out of the figure: it measures the API.

    .venv/bin/python bench/play_flow.py                      # Aton and Osirium 4p, ~1 minute
    .venv/bin/python bench/play_flow.py --seconds 5 --repeats 1

Prints a table; asserts nothing. Medians of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.table import print_table  # noqa: E402
from service.loadtest.local import cpu_seconds, start_heka  # noqa: E402
from service.loadtest.runner import LoadSettings, run_load  # noqa: E402
from service.loadtest.scenarios import PlayScenario, ScenarioConfig  # noqa: E402


async def one_run(
    target: str, pids: list[int], game: str, players: int, *, seconds: float, seed: int
) -> dict[str, float]:
    config = ScenarioConfig(games=(game,), players=players, bot="random", seed=seed)
    settings = LoadSettings(target=target, concurrency=4, duration=seconds, connections=2, seed=seed)
    recorder, _elapsed, _setup = await run_load(
        PlayScenario(config), settings, progress_stream=None, meters={"cpu": lambda: cpu_seconds(pids)}
    )
    cpu = recorder.meters["cpu"]
    games = recorder.tasks_completed
    return {
        "games": games,
        "calls": recorder.completed_rpcs / max(1, games),
        "kib": (recorder.completed_bytes_sent + recorder.completed_bytes_received) / 1024 / max(1, games),
        "games_per_cpu_s": games / cpu if cpu > 0 else float("nan"),
        "errors": recorder.error_count,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="load time per run (default 8)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per game; medians (default 3)")
    args = parser.parse_args()
    rows = []
    with start_heka() as server:
        pids = server.tree()  # every process of the server: gRPC and search workers
        for label, game, players in (("Aton", "aton", 2), ("Osirium 4p", "osirium", 4)):
            runs = [
                asyncio.run(one_run(server.target, pids, game, players, seconds=args.seconds, seed=seed))
                for seed in range(1, args.repeats + 1)
            ]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rows.append(
                (
                    label,
                    f"{sum(r['games'] for r in runs):.0f}",
                    f"{med['calls']:.1f}",
                    f"{med['kib']:.1f}",
                    f"{med['games_per_cpu_s']:.2f}",
                    f"{sum(r['errors'] for r in runs):.0f}",
                )
            )
    header = (
        "game (1 person, random bots)",
        "games",
        "calls/game",
        "KiB/game",
        "games/server CPU-s",
        "errors",
    )
    title = (
        f"\nplay scenario, concurrency 4 over 2 connections, medians of {args.repeats} x {args.seconds:g} s"
    )
    print_table(header, rows, title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
