"""A tiny fake heka.v1.GameService for testing the load tool without the real engines.

The fake "game" is a counter: state ``"<game>:<moves>"``; seat ``moves % players`` acts;
legal actions are ids 0..2; the game is over after ``LENGTH`` moves.
"""

from __future__ import annotations

import threading
from concurrent import futures
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

LENGTH = 40
PLAYERS = 2


class FakeGameService(pb_grpc.GameServiceServicer):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[str] = []
        self.peers: set[str] = set()
        self.fail: dict[str, grpc.StatusCode] = {}  # method -> status to fail with
        # method -> how many of its next calls to refuse as shed load: (status, RetryInfo
        # delay in seconds, or None for a refusal without a retry hint)
        self.shed: dict[str, list[tuple[grpc.StatusCode, float | None]]] = {}
        self.illegal_bot_action = False

    # -- helpers ---------------------------------------------------------------------------
    def _enter(self, method: str, context: Any) -> None:
        with self.lock:
            self.calls.append(method)
            if context is not None:
                self.peers.add(context.peer())
        code = self.fail.get(method)
        if code is not None:
            context.abort(code, f"{method} fails on purpose")
        with self.lock:
            refusals = self.shed.get(method)
            refusal = refusals.pop(0) if refusals else None
        if refusal is not None:
            code, delay = refusal
            status = status_pb2.Status(code=code.value[0], message=f"{method} shed on purpose")
            if delay is not None:
                info = error_details_pb2.RetryInfo()
                info.retry_delay.FromNanoseconds(round(delay * 1e9))
                status.details.add().Pack(info)
            context.abort_with_status(rpc_status.to_status(status))

    @staticmethod
    def _parse(state: str) -> tuple[str, int]:
        game, _, moves = state.partition(":")
        return game, int(moves)

    @staticmethod
    def _status(game: str, moves: int) -> pb.GameStatus:
        status = pb.GameStatus(game=game, num_players=PLAYERS, is_over=moves >= LENGTH, move_number=moves)
        if moves < LENGTH:
            status.current_player = moves % PLAYERS
        return status

    @staticmethod
    def _legal(request: Any, moves: int) -> list[pb.Action]:
        """The legal actions a response carries: asked for, and the viewer is to act."""
        asked = request.include_legal_actions and request.HasField("viewer") and moves < LENGTH
        if asked and request.viewer == moves % PLAYERS:
            return [pb.Action(id=i, text=f"a{i}") for i in range(3)]
        return []

    @staticmethod
    def _bots(request: Any, moves: int) -> tuple[int, list[pb.BotTurn]]:
        seats = {b.seat for b in request.bots}
        turns = []
        while moves < LENGTH and moves % PLAYERS in seats:
            turns.append(pb.BotTurn(player=moves % PLAYERS, action=pb.Action(id=1)))
            moves += 1
        return moves, turns

    # -- RPCs -----------------------------------------------------------------------------
    def ListGames(self, request, context):
        self._enter("ListGames", context)
        return pb.ListGamesResponse(games=[pb.GameInfo(name="aton", min_players=2, max_players=2)])

    def CreateGame(self, request, context):
        self._enter("CreateGame", context)
        moves, turns = self._bots(request, 0)
        return pb.CreateGameResponse(
            state=f"{request.game}:{moves}",
            seed=request.seed,
            status=self._status(request.game, moves),
            bot_turns=turns,
            legal_actions=self._legal(request, moves),
        )

    def GetView(self, request, context):
        self._enter("GetView", context)
        game, moves = self._parse(request.state)
        return pb.GetViewResponse(view=pb.View(status=self._status(game, moves), text="board"))

    def ListLegalActions(self, request, context):
        self._enter("ListLegalActions", context)
        _game, moves = self._parse(request.state)
        if not request.HasField("viewer") or request.viewer != moves % PLAYERS:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not your turn")
        return pb.ListLegalActionsResponse(
            current_player=moves % PLAYERS, actions=[pb.Action(id=i, text=f"a{i}") for i in range(3)]
        )

    def ApplyAction(self, request, context):
        self._enter("ApplyAction", context)
        game, moves = self._parse(request.state)
        if moves >= LENGTH or request.action_id not in range(3):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "illegal action")
        moves, turns = self._bots(request, moves + 1)
        return pb.ApplyActionResponse(
            state=f"{game}:{moves}",
            status=self._status(game, moves),
            bot_turns=turns,
            legal_actions=self._legal(request, moves),
        )

    def BotMove(self, request, context):
        self._enter("BotMove", context)
        game, moves = self._parse(request.state)
        action = pb.Action(id=7 if self.illegal_bot_action else 1, text="a1")
        if request.apply:
            return pb.BotMoveResponse(
                action=action,
                state=f"{game}:{moves + 1}",
                status=self._status(game, moves + 1),
                legal_actions=self._legal(request, moves + 1),
            )
        return pb.BotMoveResponse(action=action, status=self._status(game, moves))

    def AdvanceBots(self, request, context):
        self._enter("AdvanceBots", context)
        game, moves = self._parse(request.state)
        moves, turns = self._bots(request, moves)
        return pb.AdvanceBotsResponse(
            state=f"{game}:{moves}",
            bot_turns=turns,
            status=self._status(game, moves),
            legal_actions=self._legal(request, moves),
        )


class FakeServer:
    """The fake service on a free loopback port, in threads of this process."""

    def __init__(self, tls: tuple[bytes, bytes] | None = None) -> None:
        """``tls``: (key, certificate) in PEM, for a TLS port."""
        self.service = FakeGameService()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        pb_grpc.add_GameServiceServicer_to_server(self.service, self.server)
        if tls is None:
            self.port = self.server.add_insecure_port("127.0.0.1:0")
        else:
            self.port = self.server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([tls]))
        self.target = f"127.0.0.1:{self.port}"

    def __enter__(self) -> FakeServer:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop(None)


def call_directly(service: FakeGameService, call: Any) -> Any:
    """A blocking driver for :func:`service.loadtest.scenarios.drive` without gRPC."""

    class _Context:
        def peer(self) -> str:
            return "direct"

        def abort(self, code: grpc.StatusCode, details: str) -> None:
            raise RuntimeError(f"{code.name}: {details}")

    return getattr(service, call.method)(call.request, _Context())
