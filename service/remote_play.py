"""``heka play --server ADDR``: the terminal game, played through a running heka server.

:class:`RemoteSession` implements the play loop's ``Session`` (see
:mod:`service.commands.play`) with ``heka.v1.GameService`` calls: the game lives only in
the state token carried from call to call. Bot turns use ``AdvanceBots`` with one move and
the person's seat as viewer, so secret bot decisions stay hidden by the server itself.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import grpc

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.play_loop import BotTurn, play_loop

_DIFFICULTY = {
    "easy": pb.DIFFICULTY_EASY,
    "medium": pb.DIFFICULTY_MEDIUM,
    "hard": pb.DIFFICULTY_HARD,
    "expert": pb.DIFFICULTY_EXPERT,
}


def bot_settings(spec: str) -> pb.BotSettings:
    """BotSettings from a CLI bot spec: ``random``, ``greedy``, ``mcts[:easy|medium|hard|expert]``,
    ``mcts:iterations=N,ms=M,workers=W``."""
    kind, _, params = spec.strip().lower().partition(":")
    if kind == "random":
        return pb.BotSettings(kind=pb.BOT_KIND_RANDOM)
    if kind == "greedy":
        return pb.BotSettings(kind=pb.BOT_KIND_GREEDY)
    if kind != "mcts":
        raise ValueError(
            f"unknown bot {spec!r} (random, greedy, mcts[:easy|medium|hard|expert|iterations=N,ms=M])"
        )
    settings = pb.BotSettings(kind=pb.BOT_KIND_MCTS)
    for item in (p.strip() for p in params.split(",") if p.strip()):
        key, eq, value = item.partition("=")
        if not eq and key in _DIFFICULTY:
            settings.difficulty = _DIFFICULTY[key]
        elif key == "iterations":
            settings.budget.iterations = int(value)
        elif key == "ms":
            settings.budget.milliseconds = float(value)
        elif key == "workers":
            settings.workers = int(value)
        else:
            raise ValueError(
                f"unsupported mcts parameter {item!r} over the server (easy, medium, hard, expert, "
                "iterations=N, ms=M, workers=W)"
            )
    return settings


def _status_error(exc: grpc.RpcError) -> str:
    return f"{exc.code().name}: {exc.details()}"


class RemoteSession:
    """One game held in a state token, seen by the person in ``seat``."""

    def __init__(
        self,
        stub: Any,
        state: str,
        seat: int,
        bots: dict[int, tuple[str, pb.BotSettings]],
        *,
        seed: int | None,
        game_title: str,
        timeout: float = 120.0,
    ) -> None:
        self.stub = stub
        self.token = state
        self.seat = seat
        self.bots = bots
        self.seed = seed
        self.game_title = game_title
        self.timeout = timeout
        self._status: pb.GameStatus | None = None
        self._legal: list[pb.Action] | None = None
        self._view: str | None = None

    # --- Session --------------------------------------------------------------------------
    def title(self) -> str:
        seed = "" if self.seed is None else f"seed {self.seed}, "
        return f"{self.game_title} ({seed}via server)"

    def players_text(self) -> str:
        status = self.status()
        teams = list(status.teams)
        parts = []
        for p in range(status.num_players):
            who = "you" if p == self.seat else self.bots[p][0]
            team = f" (team {teams[p]})" if len(set(teams)) < len(teams) else ""
            parts.append(f"seat {p}: {who}{team}")
        return ", ".join(parts)

    def status(self) -> pb.GameStatus:
        if self._status is None:
            resp = self.stub.GetView(
                pb.GetViewRequest(state=self.token, viewer=self.seat), timeout=self.timeout
            )
            self._status = resp.view.status
            self._view = resp.view.text
        return self._status

    def is_over(self) -> bool:
        return self.status().is_over

    def current_player(self) -> int:
        status = self.status()
        return status.current_player if status.HasField("current_player") else -1

    def decision(self) -> str:
        return pb.Decision.Name(self.status().decision)[len("DECISION_") :].lower()

    def view_text(self) -> str:
        if self._view is None:
            self._status = None
            self.status()
        return self._view or ""

    def _legal_actions(self) -> list[pb.Action]:
        if self._legal is None:
            resp = self.stub.ListLegalActions(
                pb.ListLegalActionsRequest(state=self.token, viewer=self.seat), timeout=self.timeout
            )
            self._legal = list(resp.actions)
        return self._legal

    def legal_actions(self) -> list[tuple[int, str]]:
        return [(a.id, a.text) for a in self._legal_actions()]

    def parse_action(self, text: str) -> int:
        wanted = " ".join(text.lower().split())
        for a in self._legal_actions():
            if " ".join(a.text.lower().split()) == wanted:
                return int(a.id)
        raise ValueError(f"no legal action reads {text!r}")

    def _changed(self, token: str, status: pb.GameStatus) -> None:
        self.token = token
        self._status = status
        self._legal = None
        self._view = None

    def apply(self, action: int) -> list[str]:
        resp = self.stub.ApplyAction(
            pb.ApplyActionRequest(state=self.token, action_id=action, player=self.seat, viewer=self.seat),
            timeout=self.timeout,
        )
        self._changed(resp.state, resp.status)
        return [e.text for e in resp.events]

    def bot_turn(self) -> Any:
        player = self.current_player()
        decision = self.decision()
        spec, settings = self.bots[player]
        resp = self.stub.AdvanceBots(
            pb.AdvanceBotsRequest(
                state=self.token,
                bots=[pb.BotSeat(seat=player, bot=settings)],
                max_bot_moves=1,
                viewer=self.seat,
            ),
            timeout=self.timeout,
        )
        self._changed(resp.state, resp.status)
        if not resp.bot_turns:
            return BotTurn(player, spec, None, decision, (), "the server applied no move")
        turn = resp.bot_turns[0]
        secret = turn.action.id < 0
        return BotTurn(
            player,
            spec,
            None if secret else turn.action.text,
            decision,
            tuple(e.text for e in turn.events),
            _diagnostics_text(f"seat {player} ({spec}), decision {decision}", turn, secret),
        )

    def outcome_text(self) -> str:
        status = self.status()
        if not status.is_over:
            return "the game is not over"
        o = status.outcome
        if self.seat in o.winners:
            verdict = "You win!" if len(o.winners) == 1 else "You share the win."
        elif o.is_draw:
            verdict = "A draw."
        else:
            verdict = "You lose."
        scores = ", ".join(f"seat {p}: {s}" for p, s in enumerate(o.scores))
        return f"{o.text}\nscores: {scores}\n{verdict}"


def _diagnostics_text(head: str, turn: pb.BotTurn, secret: bool) -> str:
    d = turn.diagnostics
    if secret:
        return f"{head}: a secret decision (its statistics stay hidden)"
    if d.iterations == 0 and not d.actions:
        return f"{head}: no search statistics (this bot does not search)"
    lines = [
        f"{head}: {d.iterations} iterations in {d.elapsed_seconds:.2f} s "
        f"({d.iterations_per_second:,.0f}/s), {d.workers} worker(s)"
        + (", stopped by the deadline" if d.interrupted else "")
    ]
    lines.append(f"  chosen: {turn.action.text} (value {d.chosen_value:+.3f})")
    lines.append("  most visited:")
    for stat in d.actions[:8]:
        lines.append(f"    {stat.visits:7d} visits  {stat.mean_value:+.3f}  {stat.action.text}")
    return "\n".join(lines)


def make_remote_session(args: argparse.Namespace, channel: grpc.Channel) -> RemoteSession:
    stub = pb_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
    request = pb.CreateGameRequest(game=args.game, num_players=args.players or 0)
    if getattr(args, "seed", None) is not None:
        request.seed = args.seed
    if getattr(args, "teams", False):
        request.options.osirium.teams = True
    created = stub.CreateGame(request, timeout=30)
    n = created.status.num_players
    seat = getattr(args, "seat", 0)
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be between 0 and {n - 1}")
    others = [p for p in range(n) if p != seat]
    specs = [s.strip() for s in getattr(args, "bots", "mcts:medium").split(",") if s.strip()]
    if len(specs) == 1:
        specs = specs * len(others)
    if len(specs) != len(others):
        raise ValueError(f"--bots: give one spec, or one per other seat ({len(others)}), not {len(specs)}")
    bots = {p: (spec, bot_settings(spec)) for p, spec in zip(others, specs, strict=True)}
    games = {g.name: g.title for g in stub.ListGames(pb.ListGamesRequest(), timeout=30).games}
    title = games.get(created.status.game, args.game)
    # The server keeps the seed it chose (the response could reach a player): only a seed
    # given here is shown.
    seed = request.seed if request.HasField("seed") else None
    return RemoteSession(stub, created.state, seat, bots, seed=seed, game_title=title)


def run_remote(args: argparse.Namespace, inp: Any = None, out: Any = None) -> int:
    """Play a terminal game through the server at ``args.server``; returns the exit code."""
    inp = inp if inp is not None else sys.stdin
    out = out if out is not None else sys.stdout
    with grpc.insecure_channel(args.server) as channel:
        try:
            session = make_remote_session(args, channel)
            return play_loop(session, inp, out)
        except ValueError as exc:
            print(f"heka play: {exc}", file=sys.stderr)
            return 2
        except grpc.RpcError as exc:
            print(f"heka play: server {args.server}: {_status_error(exc)}", file=sys.stderr)
            return 1
