"""How soon a review's stream speaks, and how soon it ends, on a server with several processes.

    .venv/bin/python bench/review_stream.py                          # Osirium 4p, 2 processes
    .venv/bin/python bench/review_stream.py --runs 5 --server-args "--grpc-processes 2"
    .venv/bin/python bench/review_stream.py --server-args "--max-workers-per-search 2" --workers 2

Starts ``heka serve`` on loopback (``--grpc-processes 2`` by default; or ``--target`` a
running one), plays a game there with ``--player`` bots in every seat (``AdvanceBots``, as a
trusted backend, so that it gets every action), then asks ``ReviewGame`` for every seat
(``all_seats``, ``trusted_backend``, ``--workers`` decisions at once) at the default budget
(``medium``) ``--runs`` times, a
new seed each time, and measures from the call to: the header, the first ``MoveReview``, the
last one, and the summary. Prints each run and the medians. The server has one search worker
per gRPC process (as the default gives on 2 CPUs with 2 processes) unless ``--server-args``
sets ``--search-workers``. Loopback only; the server is stopped by the script.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc

from bench.table import print_table
from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import add_server_options, server_for

KINDS = {"greedy": pb.BOT_KIND_GREEDY, "random": pb.BOT_KIND_RANDOM}


def play(
    stub: pb_grpc.GameServiceStub, game: str, players: int, seed: int, kind: pb.BotKind
) -> tuple[str, list[int]]:
    """A game on the server, every seat a bot: its start token and its actions."""
    start = stub.CreateGame(pb.CreateGameRequest(game=game, num_players=players, seed=seed)).state
    bots = [pb.BotSeat(seat=s, bot=pb.BotSettings(kind=kind)) for s in range(players)]
    token, actions = start, []
    while True:
        reply = stub.AdvanceBots(
            pb.AdvanceBotsRequest(state=token, bots=bots, max_bot_moves=400, trusted_backend=True),
            timeout=60,
        )
        actions += [t.action.id for t in reply.bot_turns]
        token = reply.state
        if reply.status.HasField("outcome") or not reply.bot_turns:
            return start, actions


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="osirium")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--player", default="greedy", choices=sorted(KINDS), help="the bots that play the game")
    p.add_argument("--seed", type=int, default=1, help="the game's seed")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument(
        "--workers", type=int, default=0, help="ReviewGameRequest.workers (0: the server's default)"
    )
    p.add_argument("--json", default="", help="write the runs here (docs/review.md reads it)")
    add_server_options(p)
    p.set_defaults(server_args="--grpc-processes 2")
    args = p.parse_args(argv)
    with contextlib.ExitStack() as stack:
        target, _server = server_for(args, stack)
        channel = stack.enter_context(grpc.insecure_channel(target))
        stub = pb_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
        start, actions = play(stub, args.game, args.players, args.seed, KINDS[args.player])
        print(
            f"{args.game}, {args.players} players, a game of {len(actions)} actions by {args.player} bots; "
            f"server: {args.target or 'heka serve ' + args.server_args}; "
            f"this machine: {os.cpu_count()} CPUs; "
            f"ReviewGame of every seat at the default budget (medium), workers {args.workers or 'default'}"
        )
        rows: list[tuple[object, ...]] = []
        runs: list[tuple[float, float, float, float, int]] = []
        for run in range(args.runs):
            request = pb.ReviewGameRequest(
                state=start,
                actions=actions,
                all_seats=True,
                trusted_backend=True,
                seed=run + 1,
                workers=args.workers,
            )
            t0 = time.perf_counter()
            header = first = last = end = float("nan")
            moves = 0
            for message in stub.ReviewGame(request, timeout=600):
                now = time.perf_counter() - t0
                item = message.WhichOneof("item")
                if item == "header":
                    header = now
                    total = message.header.moves
                elif item == "move":
                    moves += 1
                    first = now if moves == 1 else first
                    last = now
                else:
                    end = now
                    summary = message.summary
            assert summary.end == pb.REVIEW_END_COMPLETE and moves == total, (summary, moves, total)
            runs.append((header, first, last, end, moves))
            rows.append(
                (
                    run + 1,
                    moves,
                    f"{1000 * header:.1f}",
                    f"{first:.2f}",
                    f"{last:.2f}",
                    f"{end:.2f}",
                    f"{1000 * end / moves:.1f}",
                )
            )
        rows.append(
            (
                "median",
                "",
                f"{1000 * statistics.median(r[0] for r in runs):.1f}",
                f"{statistics.median(r[1] for r in runs):.2f}",
                f"{statistics.median(r[2] for r in runs):.2f}",
                f"{statistics.median(r[3] for r in runs):.2f}",
                "",
            )
        )
        print_table(
            ("run", "moves", "header ms", "first move s", "last move s", "summary s", "wall ms / move"),
            rows,
        )
        if args.json:
            keys = ("header", "first_move", "last_move", "summary", "moves")
            record = {
                "game": args.game,
                "players": args.players,
                "player": args.player,
                "actions": len(actions),
                "server": args.target or f"heka serve {args.server_args}",
                "cpus": os.cpu_count(),
                "workers": args.workers,
                "runs": [dict(zip(keys, r, strict=True)) for r in runs],
            }
            Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
