"""``heka play --server ADDR``: the terminal game, played through a running heka server.

:class:`RemoteSession` implements the play loop's ``Session`` (see
:mod:`service.commands.play`) with ``heka.v1.GameService`` calls: the game lives only in
the state token carried from call to call. Bot turns use ``AdvanceBots`` with one move and
the person's seat as viewer, so secret bot decisions stay hidden by the server itself, and
so do the bots' root statistics (private to each bot's seat: the person's ``?`` gets the
totals). ``hint`` asks ``BotMove`` for a suggestion for the person's own seat, which is
private to that seat and comes with its statistics.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import grpc

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.play_loop import BotTurn, Search, play_loop, search_text

_DIFFICULTY = {
    "easy": pb.DIFFICULTY_EASY,
    "medium": pb.DIFFICULTY_MEDIUM,
    "hard": pb.DIFFICULTY_HARD,
    "expert": pb.DIFFICULTY_EXPERT,
}


#: The widest values the wire carries (``int32`` fields; a seed is a ``uint64``).
_MAX_INT32 = 2**31 - 1
_MAX_SEED = 2**64 - 1
#: The shortest time budget a server accepts (``SearchBudget.milliseconds``: less cannot run
#: one iteration); the longest is the server's own cap (``HEKA_MAX_MILLISECONDS``).
_MIN_MILLISECONDS = 1.0
#: The keys of an mcts spec over the server, by the name each is read as (the local grammar's
#: names and aliases: ai/mcts_params.py).
_MCTS_KEYS = {
    "iterations": "iterations",
    "it": "iterations",
    "n": "iterations",
    "ms": "ms",
    "workers": "workers",
}
_SPEC_HELP = "random, greedy, mcts[:easy|medium|hard|expert|iterations=N,ms=M,workers=W]"


def _count(flag: str, key: str, value: str) -> int:
    """A positive ``int32`` setting of a spec (``iterations``, ``workers``)."""
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{flag}: {key} must be an integer, got {value!r}") from None
    if not 1 <= number <= _MAX_INT32:
        raise ValueError(f"{flag}: {key} must be 1..{_MAX_INT32}, got {number}")
    return number


def _milliseconds(flag: str, value: str) -> float:
    try:
        ms = float(value)
    except ValueError:
        ms = math.nan
    if not math.isfinite(ms) or ms < _MIN_MILLISECONDS:
        raise ValueError(f"{flag}: ms must be a finite number of milliseconds, at least 1, got {value!r}")
    return ms


def bot_settings(spec: str, flag: str = "--bots") -> pb.BotSettings:
    """BotSettings from a CLI bot spec: ``random``, ``greedy``, ``mcts[:easy|medium|hard|expert]``,
    ``mcts:iterations=N,ms=M,workers=W``. A bad spec is a ``ValueError`` naming ``flag`` and
    what is wrong, before any call: what the client can tell (an integer, a finite time, at
    least 1) it checks itself; the server's caps (``HEKA_MAX_*``) it leaves to the server."""
    kind, _, params = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind in ("random", "greedy"):
        if params.strip():
            raise ValueError(f"{flag}: the {kind} bot takes no parameters over the server, got {spec!r}")
        return pb.BotSettings(kind=pb.BOT_KIND_RANDOM if kind == "random" else pb.BOT_KIND_GREEDY)
    if kind != "mcts":
        raise ValueError(f"{flag}: unknown bot {spec!r} ({_SPEC_HELP})")
    settings = pb.BotSettings(kind=pb.BOT_KIND_MCTS)
    seen: set[str] = set()
    for item in (p.strip() for p in params.split(",") if p.strip()):
        key, eq, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq and key in _DIFFICULTY:
            name = "difficulty"
        elif eq and key in _MCTS_KEYS:
            name = _MCTS_KEYS[key]
        else:
            raise ValueError(
                f"{flag}: unsupported mcts parameter {item!r} over the server (easy, medium, hard, "
                "expert, iterations=N, ms=M, workers=W)"
            )
        if name in seen:
            raise ValueError(f"{flag}: {spec!r} gives the {name} twice")
        seen.add(name)
        if name != "difficulty" and value.lower() in ("none", ""):
            # Locally ms=none lifts a limit; a server caps every search (HEKA_MAX_*).
            raise ValueError(
                f"{flag}: {key}={value or 'none'} lifts a limit in local play only: a server "
                "caps every search (give iterations=N and/or ms=M)"
            )
        if name == "difficulty":
            settings.difficulty = _DIFFICULTY[key]
        elif name == "iterations":
            settings.budget.iterations = _count(flag, key, value)
        elif name == "ms":
            settings.budget.milliseconds = _milliseconds(flag, value)
        else:
            settings.workers = _count(flag, key, value)
    return settings


def _status_error(exc: grpc.RpcError) -> str:
    text = f"{exc.code().name}: {exc.details()}"
    if exc.code() == grpc.StatusCode.UNAVAILABLE and "failed to connect" in (exc.details() or ""):
        text += " (is a heka server running there? `make run` starts one on localhost:50051)"
    return text


def _refuses_bot(exc: grpc.RpcError) -> bool:
    """Whether ``exc`` refuses a request's bot settings: INVALID_ARGUMENT whose field
    violation (the server's rich details) names a ``bot`` field (``bots[0].bot.workers``);
    without details, any INVALID_ARGUMENT (the other fields are the server's own token and
    seats)."""
    if exc.code() != grpc.StatusCode.INVALID_ARGUMENT:
        return False
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status = rpc_status.from_call(exc)
    fields = []
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    return not fields or any(f.startswith(("bot.", "bots[")) for f in fields)


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
        hint: tuple[str, pb.BotSettings] | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.stub = stub
        self.token = state
        self.seat = seat
        self.bots = bots
        self.seed = seed
        self.game_title = game_title
        self.hint_bot = hint
        self.timeout = timeout
        self._status: pb.GameStatus | None = None
        self._legal: list[pb.Action] | None = None
        self._view: str | None = None

    # --- Session --------------------------------------------------------------------------
    def title(self) -> str:
        seed = "" if self.seed is None else f"seed {self.seed}, "
        return f"{self.game_title} ({seed}via server)"

    def game_name(self) -> str:
        return self.status().game

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
        try:
            resp = self.stub.AdvanceBots(
                pb.AdvanceBotsRequest(
                    state=self.token,
                    bots=[pb.BotSeat(seat=player, bot=settings)],
                    max_bot_moves=1,
                    viewer=self.seat,
                ),
                timeout=self.timeout,
            )
        except grpc.RpcError as exc:
            if not _refuses_bot(exc):
                raise
            # Over one of the server's caps (HEKA_MAX_MILLISECONDS...), which the client
            # cannot know before.
            raise ValueError(
                f"--bots: the server refused seat {player}'s bot {spec!r}: {_status_error(exc)}"
            ) from None
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
            _diagnostics_text(
                f"seat {player} ({spec}), decision {decision}", turn.diagnostics, turn.action, player
            ),
        )

    def hint(self) -> str:
        if self.hint_bot is None:
            return "no hint bot (--hint-bot)"
        spec, settings = self.hint_bot
        try:
            # Not applied: a suggestion for the seat to act, private to it (viewer = that seat),
            # so the server returns the search's statistics in full.
            resp = self.stub.BotMove(
                pb.BotMoveRequest(state=self.token, bot=settings, player=self.seat, viewer=self.seat),
                timeout=self.timeout,
            )
        except grpc.RpcError as exc:
            if _refuses_bot(exc):
                return f"no hint: the server refused --hint-bot {spec!r}: {_status_error(exc)}"
            return f"no hint: the server answered {_status_error(exc)}"
        return _diagnostics_text(
            f"hint for seat {self.seat} ({spec})", resp.diagnostics, resp.action, self.seat
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


def _diagnostics_text(head: str, d: pb.SearchDiagnostics, action: pb.Action, seat: int) -> str:
    """A search's diagnostics as the server sent them to this viewer: in full for the
    person's own seat (a hint), only the totals for another seat's bot (docs/security.md)."""
    search = Search(
        d.iterations,
        d.elapsed_seconds,
        d.iterations_per_second,
        d.workers,
        d.interrupted,
        None if action.id < 0 else action.text,
        tuple((s.visits, s.mean_value, s.action.text) for s in d.actions[:8]),
        d.chosen_value if d.actions else None,
    )
    # Totals only, root statistics left out by the server: not this viewer's to see.
    withheld = d.iterations > 0 and not d.actions and d.root_actions == 0
    return search_text(head, search, private_to=seat if withheld else None)


def _checked_args(
    args: argparse.Namespace,
) -> tuple[list[tuple[str, pb.BotSettings]], tuple[str, pb.BotSettings]]:
    """The bot specs of ``--bots`` (split as local play splits them) and ``--hint-bot`` as
    BotSettings, with ``--seed`` and ``--players`` checked: a ``ValueError`` naming the flag,
    before any call."""
    from ai.api import split_bot_specs

    seed = getattr(args, "seed", None)
    if seed is not None and not 0 <= seed <= _MAX_SEED:
        raise ValueError(f"--seed must be 0..2^64-1 (a server's seed is a uint64), got {seed}")
    if getattr(args, "teams", False) and args.game != "osirium":  # the server would name options.osirium
        raise ValueError(f"--teams is Osirium's team variant (4 players), not an option of {args.game}")
    players = getattr(args, "players", None)
    if players is not None and not 1 <= players <= _MAX_INT32:
        raise ValueError(f"--players must be a player count, 1..{_MAX_INT32}, got {players}")
    # "mcts:iterations=50,ms=100,greedy": a key=value item continues the previous spec.
    specs = split_bot_specs(getattr(args, "bots", "mcts:medium"))
    if not specs:
        raise ValueError("--bots needs a bot spec")
    bots = [(spec, bot_settings(spec, "--bots")) for spec in specs]
    hint_spec = getattr(args, "hint_bot", "mcts:medium")
    return bots, (hint_spec, bot_settings(hint_spec, "--hint-bot"))


def make_remote_session(args: argparse.Namespace, channel: grpc.Channel) -> RemoteSession:
    specs, hint = _checked_args(args)
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
    if len(specs) == 1:
        specs = specs * len(others)
    if len(specs) != len(others):
        raise ValueError(f"--bots: give one spec, or one per other seat ({len(others)}), not {len(specs)}")
    bots = dict(zip(others, specs, strict=True))
    games = {g.name: g.title for g in stub.ListGames(pb.ListGamesRequest(), timeout=30).games}
    title = games.get(created.status.game, args.game)
    # The server keeps the seed it chose (the response could reach a player): only a seed
    # given here is shown.
    seed = request.seed if request.HasField("seed") else None
    return RemoteSession(stub, created.state, seat, bots, seed=seed, game_title=title, hint=hint)


def run_remote(args: argparse.Namespace, inp: Any = None, out: Any = None) -> int:
    """Play a terminal game through the server at ``args.server``; returns the exit code:
    2 for what the command line asks and the client or the server refuses (the flag named
    where it is known), 1 for any other error of the server (unreachable, failing)."""
    inp = inp if inp is not None else sys.stdin
    out = out if out is not None else sys.stdout
    if not (args.server or "").strip():
        print("heka play: --server needs an address (HOST:PORT), not an empty string", file=sys.stderr)
        return 2
    with grpc.insecure_channel(args.server) as channel:
        try:
            session = make_remote_session(args, channel)
            return play_loop(session, inp, out)
        except ValueError as exc:
            print(f"heka play: {exc}", file=sys.stderr)
            return 2
        except grpc.RpcError as exc:
            print(f"heka play: server {args.server}: {_status_error(exc)}", file=sys.stderr)
            # INVALID_ARGUMENT: what was asked (--game, --players, --teams...) is refused.
            return 2 if exc.code() == grpc.StatusCode.INVALID_ARGUMENT else 1
