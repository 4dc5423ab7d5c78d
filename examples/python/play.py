"""Play one game against heka's bots, one call per move of seat 0 (docs/api.md).

    .venv/bin/python examples/python/play.py --target 127.0.0.1:50051 --game osirium --players 4 --teams

Seat 0 plays random legal moves; bots play the other seats inside each call. Exit 0 when the
game ended with an outcome, 1 otherwise.
"""

import argparse
import random
import sys

import grpc

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

BOTS = {"random": pb.BOT_KIND_RANDOM, "greedy": pb.BOT_KIND_GREEDY, "mcts": pb.BOT_KIND_MCTS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="127.0.0.1:50051")
    p.add_argument("--game", default="aton", choices=["aton", "osirium"])
    p.add_argument("--players", type=int, default=0, help="default: 2, or 4 with --teams")
    p.add_argument("--teams", action="store_true", help="Osirium team play (4 players)")
    p.add_argument("--bot", default="greedy", choices=sorted(BOTS))
    p.add_argument("--seed", type=int, default=1, help="the game's, the bots' and seat 0's seed")
    args = p.parse_args(argv)
    players = args.players or (4 if args.teams else 2)
    rng = random.Random(args.seed)
    bots = [
        pb.BotSeat(seat=s, bot=pb.BotSettings(kind=BOTS[args.bot], difficulty=pb.DIFFICULTY_EASY, seed=s))
        for s in range(1, players)
    ]
    mine = dict(viewer=0, include_view=True, include_legal_actions=True, compact_actions=True, bots=bots)
    options = pb.GameOptions(osirium=pb.OsiriumOptions(teams=True)) if args.teams else None
    with grpc.insecure_channel(args.target) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        resp = stub.CreateGame(
            pb.CreateGameRequest(
                game=args.game, num_players=players, seed=args.seed, options=options, **mine
            ),
            timeout=30,
        )
        moves = 0
        # Seat 0 is to act whenever the game is not over: the bots played inside the call.
        while not resp.status.is_over and resp.legal_actions and moves < 1000:
            action = rng.choice(resp.legal_actions)
            resp = stub.ApplyAction(
                pb.ApplyActionRequest(state=resp.state, action_id=action.id, player=0, **mine), timeout=30
            )
            moves += 1
    outcome = resp.status.outcome
    print(f"{args.game}: {moves} moves of seat 0, {resp.status.move_number} in all")
    reason = pb.OutcomeReason.Name(outcome.reason)
    print(f"winners {list(outcome.winners)}, {reason}, scores {list(outcome.scores)}")
    print(outcome.text)
    return 0 if resp.status.is_over and outcome.reason != pb.OUTCOME_REASON_UNSPECIFIED else 1


if __name__ == "__main__":
    sys.exit(main())
