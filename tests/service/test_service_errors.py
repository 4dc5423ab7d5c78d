"""The catalogue of bad inputs: each gets its precise status, message and rich details."""

# ruff: noqa: ARG005

from __future__ import annotations

import base64
import dataclasses
import re
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from service_helpers import KEY1, KEY_OTHER, ServerProcess, call_error, error_details

from engine.registry import get_game
from service.envelope import MAX_TOKEN_CHARS, KeyRing, parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb

INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


@dataclasses.dataclass
class Tokens:
    aton: str
    osirium: str
    finished: str
    aton_serialized: str


@pytest.fixture(scope="module")
def tokens(stub: Any) -> Tokens:
    aton = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=1)).state
    osirium = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=3, seed=1)).state
    random_bot = pb.BotSettings(kind=pb.BOT_KIND_RANDOM)
    finished = stub.AdvanceBots(
        pb.AdvanceBotsRequest(
            state=aton, bots=[pb.BotSeat(seat=0, bot=random_bot), pb.BotSeat(seat=1, bot=random_bot)]
        )
    )
    assert finished.status.is_over
    serialized = get_game("aton").new_initial_state(2, seed=1).serialize()
    return Tokens(aton, osirium, finished.state, serialized)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _raw(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def flip_bit(token: str, index: int) -> str:
    raw = bytearray(_raw(token))
    raw[index] ^= 0x10
    return _b64(bytes(raw))


class Calls:
    """The server's stub, plus ``raw(name)``: the method called with a raw request body."""

    def __init__(self, server: ServerProcess) -> None:
        self._server = server

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server.stub, name)

    def raw(self, name: str) -> Any:
        return self._server.channel.unary_unary(f"/heka.v1.GameService/{name}")


@pytest.fixture(scope="module")
def calls(server: ServerProcess) -> Calls:
    return Calls(server)


def details(err: grpc.RpcError) -> tuple[str | None, str | None]:
    """(field of the BadRequest violation, ErrorInfo reason)."""
    field, reason, _, domain = error_details(err)
    if reason is not None:
        assert domain == "heka.v1"
    return field, reason


def mcts(**budget: Any) -> pb.BotSettings:
    return pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(**budget))


# (id, build(calls, tokens) -> (method, request), code, message fragment, field)
CASES: list[tuple[str, Any, grpc.StatusCode, str, str | None]] = [
    # --- request bodies -------------------------------------------------------------------
    (
        "undecodable body",
        lambda s, t: (s.raw("ApplyAction"), b"\xff\xff\xff\xff\x07garbage"),
        INVALID,
        "the request body is not a valid heka.v1.ApplyActionRequest message",
        "",  # the whole body
    ),
    (
        "truncated body",
        lambda s, t: (s.raw("GetView"), pb.GetViewRequest(state=t.aton).SerializeToString()[:-5]),
        INVALID,
        "the request body is not a valid heka.v1.GetViewRequest message",
        "",
    ),
    (
        "body with a bad length prefix",
        lambda s, t: (s.raw("ListGames"), b"\x0a\xff\xff\xff\x0f"),
        INVALID,
        "the request body is not a valid heka.v1.ListGamesRequest message",
        "",
    ),
    (
        "string field that is not UTF-8",
        lambda s, t: (s.raw("CreateGame"), b"\x0a\x02\xc3\x28"),
        INVALID,
        "the request body is not a valid heka.v1.CreateGameRequest message",
        "",
    ),
    (
        "over-long token",
        lambda s, t: (s.GetView, pb.GetViewRequest(state="A" * (MAX_TOKEN_CHARS + 1))),
        INVALID,
        f"state token is {MAX_TOKEN_CHARS + 1} characters long",
        "state",
    ),
    (
        "token near the request cap",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton * 120, action_id=0)),
        INVALID,
        "longer than any heka token",
        "state",
    ),
    # --- tokens ---------------------------------------------------------------------------
    (
        "empty token",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state="", action_id=0)),
        INVALID,
        "state token is empty",
        "state",
    ),
    (
        "not base64",
        lambda s, t: (s.GetView, pb.GetViewRequest(state="this is not a token!")),
        INVALID,
        "not valid base64url",
        "state",
    ),
    (
        "not a heka token",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=_b64(b"x" * 60))),
        INVALID,
        "not a heka state token",
        "state",
    ),
    (
        "truncated token (short)",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=t.aton[:12])),
        INVALID,
        "truncated",
        "state",
    ),
    (
        "truncated token (tail cut)",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=_b64(_raw(t.aton)[:-7]))),
        INVALID,
        "integrity check",
        "state",
    ),
    (
        "bit-flipped body",
        lambda s, t: (s.ListLegalActions, pb.ListLegalActionsRequest(state=flip_bit(t.aton, 40), viewer=0)),
        INVALID,
        "integrity check",
        "state",
    ),
    (
        "bit-flipped tag",
        lambda s, t: (s.ListLegalActions, pb.ListLegalActionsRequest(state=flip_bit(t.aton, -1), viewer=0)),
        INVALID,
        "integrity check",
        "state",
    ),
    (
        "bit-flipped key id",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=flip_bit(t.aton, 5))),
        INVALID,
        "unknown to this server",
        "state",
    ),
    (
        "bit-flipped version",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=flip_bit(t.aton, 2))),
        INVALID,
        "version 18 is not supported",
        "state",
    ),
    (
        "wrong-key token",
        lambda s, t: (
            s.ApplyAction,
            pb.ApplyActionRequest(state=KeyRing(parse_keys(KEY_OTHER)).seal(t.aton_serialized), action_id=0),
        ),
        INVALID,
        "signed with key 'other', unknown to this server",
        "state",
    ),
    (
        "signed garbage state",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=KeyRing(parse_keys(KEY1)).seal("aton:1:garbage"))),
        INVALID,
        "not valid",
        "state",
    ),
    (
        "token of an unknown game",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=KeyRing(parse_keys(KEY1)).seal("chess:1:xyz"))),
        INVALID,
        "unknown game",
        "state",
    ),
    (
        "token of the other game",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=t.osirium, game="aton")),
        INVALID,
        "holds a game of osirium, not aton",
        "state",
    ),
    # --- actions --------------------------------------------------------------------------
    (
        "unknown action id",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton, action_id=999999, player=0)),
        INVALID,
        "unknown action id 999999",
        "action_id",
    ),
    (
        "negative action id",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton, action_id=-1, player=0)),
        INVALID,
        "unknown action id -1",
        "action_id",
    ),
    (
        "unknown action text",
        lambda s, t: (
            s.ApplyAction,
            pb.ApplyActionRequest(state=t.aton, action_text="fly to the moon", player=0),
        ),
        INVALID,
        "moon",
        "action",
    ),
    (
        # A number past int()'s 4,300 digits was an INTERNAL error: no text is read past the
        # longest an action may have (engine.MAX_ACTION_TEXT).
        "action text past its length",
        lambda s, t: (
            s.ApplyAction,
            pb.ApplyActionRequest(state=t.osirium, action_text="place red-tee@1,2 r" + "9" * 5000, player=0),
        ),
        INVALID,
        "an action text is at most 256 characters; this one has 5019",
        "action",
    ),
    (
        "action text with a long number",
        lambda s, t: (
            s.ApplyAction,
            pb.ApplyActionRequest(state=t.osirium, action_text="seth 1,1 r" + "9" * 200, player=0),
        ),
        INVALID,
        "cannot read action",
        "action",
    ),
    (
        "no action",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton, player=0)),
        INVALID,
        "action_id or action_text",
        "action",
    ),
    (
        "move for the wrong player",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton, action_id=0, player=1)),
        PRECONDITION,
        "player 1 is not to act",
        None,
    ),
    (
        "apply without player",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton, action_id=0, viewer=0)),
        INVALID,
        "player is required: the seat making this move (seat 0 is to act)",
        "player",
    ),
    (
        "player out of range",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton, action_id=0, player=2)),
        INVALID,
        "player 2 is out of range",
        "player",
    ),
    (
        "viewer out of range",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.aton, action_id=0, viewer=-1, player=0)),
        INVALID,
        "viewer -1 is out of range",
        "viewer",
    ),
    (
        "view of a missing seat",
        lambda s, t: (s.GetView, pb.GetViewRequest(state=t.osirium, viewer=3)),
        INVALID,
        "this game has 3 players",
        "viewer",
    ),
    (
        "acting after the end",
        lambda s, t: (s.ApplyAction, pb.ApplyActionRequest(state=t.finished, action_id=0, player=0)),
        PRECONDITION,
        "the game is over",
        None,
    ),
    (
        "listing actions after the end",
        lambda s, t: (s.ListLegalActions, pb.ListLegalActionsRequest(state=t.finished, viewer=0)),
        PRECONDITION,
        "the game is over",
        None,
    ),
    (
        "bot move after the end",
        lambda s, t: (
            s.BotMove,
            pb.BotMoveRequest(state=t.finished, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM)),
        ),
        PRECONDITION,
        "the game is over",
        None,
    ),
    (
        "bot move for a seat not to act",
        lambda s, t: (
            s.BotMove,
            pb.BotMoveRequest(state=t.aton, player=1, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM)),
        ),
        PRECONDITION,
        "not to act",
        None,
    ),
    # --- private information (docs/security.md) ------------------------------------------------
    (
        "legal actions for nobody in particular",
        lambda s, t: (s.ListLegalActions, pb.ListLegalActionsRequest(state=t.aton)),
        INVALID,
        "the legal actions are private to the seat to act (seat 0)",
        "viewer",
    ),
    (
        "an unapplied bot move for the public",
        lambda s, t: (
            s.BotMove,
            pb.BotMoveRequest(state=t.aton, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM)),
        ),
        INVALID,
        "private to the seat to act: pass viewer=0",
        "viewer",
    ),
    (
        "an unapplied bot move for another seat",
        lambda s, t: (
            s.BotMove,
            pb.BotMoveRequest(state=t.aton, viewer=1, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM)),
        ),
        INVALID,
        "private to the seat to act",
        "viewer",
    ),
    # --- budgets --------------------------------------------------------------------------
    (
        "absurd iterations",
        lambda s, t: (s.BotMove, pb.BotMoveRequest(state=t.aton, viewer=0, bot=mcts(iterations=2 * 10**9))),
        INVALID,
        "iterations must be 1..5000",
        "bot.budget.iterations",
    ),
    (
        "zero iterations",
        lambda s, t: (s.BotMove, pb.BotMoveRequest(state=t.aton, viewer=0, bot=mcts(iterations=0))),
        INVALID,
        "iterations must be",
        "bot.budget.iterations",
    ),
    (
        "negative milliseconds",
        lambda s, t: (s.BotMove, pb.BotMoveRequest(state=t.aton, viewer=0, bot=mcts(milliseconds=-5))),
        INVALID,
        "milliseconds must be",
        "bot.budget.milliseconds",
    ),
    (
        "absurd milliseconds",
        lambda s, t: (s.BotMove, pb.BotMoveRequest(state=t.aton, viewer=0, bot=mcts(milliseconds=1e12))),
        INVALID,
        "milliseconds must be",
        "bot.budget.milliseconds",
    ),
    (
        "NaN milliseconds",
        lambda s, t: (
            s.BotMove,
            pb.BotMoveRequest(state=t.aton, viewer=0, bot=mcts(milliseconds=float("nan"))),
        ),
        INVALID,
        "milliseconds must be",
        "bot.budget.milliseconds",
    ),
    (
        "empty budget",
        lambda s, t: (s.BotMove, pb.BotMoveRequest(state=t.aton, viewer=0, bot=mcts())),
        INVALID,
        "needs iterations and/or milliseconds",
        "bot.budget",
    ),
    (
        "too many workers",
        lambda s, t: (s.BotMove, pb.BotMoveRequest(state=t.aton, viewer=0, bot=pb.BotSettings(workers=64))),
        INVALID,
        "workers must be 1..2",
        "bot.workers",
    ),
    (
        "unknown bot kind",
        lambda s, t: (s.BotMove, pb.BotMoveRequest(state=t.aton, viewer=0, bot=pb.BotSettings(kind=42))),
        INVALID,
        "unknown bot kind",
        "bot.kind",
    ),
    (
        "advance with no bots",
        lambda s, t: (s.AdvanceBots, pb.AdvanceBotsRequest(state=t.aton)),
        INVALID,
        "at least one bot seat",
        "bots",
    ),
    (
        "advance with a seat twice",
        lambda s, t: (
            s.AdvanceBots,
            pb.AdvanceBotsRequest(state=t.aton, bots=[pb.BotSeat(seat=0), pb.BotSeat(seat=0)]),
        ),
        INVALID,
        "named twice",
        "bots[1].seat",
    ),
    (
        "advance bot seat out of range",
        lambda s, t: (s.AdvanceBots, pb.AdvanceBotsRequest(state=t.aton, bots=[pb.BotSeat(seat=7)])),
        INVALID,
        "out of range",
        "bots[0].seat",
    ),
    (
        "advance with too many moves",
        lambda s, t: (
            s.AdvanceBots,
            pb.AdvanceBotsRequest(state=t.aton, bots=[pb.BotSeat(seat=0)], max_bot_moves=10**6),
        ),
        INVALID,
        "max_bot_moves must be",
        "max_bot_moves",
    ),
    (
        "advance bot budget over the cap",
        lambda s, t: (
            s.AdvanceBots,
            pb.AdvanceBotsRequest(state=t.aton, bots=[pb.BotSeat(seat=0, bot=mcts(iterations=10**9))]),
        ),
        INVALID,
        "iterations must be",
        "bots[0].bot.budget.iterations",
    ),
    # --- creation -------------------------------------------------------------------------
    (
        "unknown game",
        lambda s, t: (s.CreateGame, pb.CreateGameRequest(game="chess")),
        INVALID,
        "unknown game 'chess'",
        "game",
    ),
    ("no game", lambda s, t: (s.CreateGame, pb.CreateGameRequest()), INVALID, "game is required", "game"),
    (
        "aton with 3 players",
        lambda s, t: (s.CreateGame, pb.CreateGameRequest(game="aton", num_players=3)),
        INVALID,
        "not 3",
        "num_players",
    ),
    (
        "osirium with 5 players",
        lambda s, t: (s.CreateGame, pb.CreateGameRequest(game="osirium", num_players=5)),
        INVALID,
        "not 5",
        "num_players",
    ),
    (
        "osirium with 1 player",
        lambda s, t: (s.CreateGame, pb.CreateGameRequest(game="osirium", num_players=1)),
        INVALID,
        "not 1",
        "num_players",
    ),
    (
        "negative player count",
        lambda s, t: (s.CreateGame, pb.CreateGameRequest(game="aton", num_players=-2)),
        INVALID,
        "num_players must be positive",
        "num_players",
    ),
    (
        "options of another game",
        lambda s, t: (
            s.CreateGame,
            pb.CreateGameRequest(game="aton", options=pb.GameOptions(osirium=pb.OsiriumOptions(teams=True))),
        ),
        INVALID,
        "options.osirium are not options of aton",
        "options",
    ),
    (
        "an option field this server does not know",
        lambda s, t: (s.CreateGame, _with_unknown_option_field(pb.CreateGameRequest(game="osirium"))),
        INVALID,
        "has fields this server does not know (numbers 9)",
        "options",
    ),
    (
        "an options field this server does not know, beside no member",
        lambda s, t: (
            s.CreateGame,
            _with_unknown_options_field(pb.CreateGameRequest(game="osirium", num_players=4)),
        ),
        INVALID,
        "options has fields this server does not know (numbers 7)",
        "options",
    ),
    (
        "an options field this server does not know, beside a member",
        lambda s, t: (
            s.CreateGame,
            _with_unknown_options_field(
                pb.CreateGameRequest(
                    game="osirium",
                    num_players=4,
                    options=pb.GameOptions(osirium=pb.OsiriumOptions(teams=True)),
                )
            ),
        ),
        INVALID,
        "options has fields this server does not know (numbers 7)",
        "options",
    ),
    (
        "teams with 3 players",
        lambda s, t: (
            s.CreateGame,
            pb.CreateGameRequest(
                game="osirium", num_players=3, options=pb.GameOptions(osirium=pb.OsiriumOptions(teams=True))
            ),
        ),
        INVALID,
        "teams need 4 players",
        "options",
    ),
    # --- trusted decode -------------------------------------------------------------------
    (
        "decode disabled",
        lambda s, t: (s.DecodeState, pb.DecodeStateRequest(state=t.aton)),
        grpc.StatusCode.PERMISSION_DENIED,
        "DecodeState is disabled",
        None,
    ),
]


def _with_unknown_option_field(req: pb.CreateGameRequest) -> pb.CreateGameRequest:
    """Options with a field number this server's OsiriumOptions does not have (as a newer
    client would send, or a client library that kept a misspelt field)."""
    req.options.osirium.MergeFromString(bytes([9 << 3, 1]))
    return req


def _with_unknown_options_field(req: pb.CreateGameRequest) -> pb.CreateGameRequest:
    """GameOptions with a field number it does not have: a newer client's options of a game
    this server does not know, which a server that ignored it would create as a default game."""
    req.options.MergeFromString(bytes([7 << 3, 1]))
    return req


@pytest.mark.parametrize(
    ("build", "code", "fragment", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_catalogue(  # noqa: PLR0917
    calls: Calls, tokens: Tokens, build: Any, code: grpc.StatusCode, fragment: str, field: str | None
) -> None:
    method, request = build(calls, tokens)
    err = call_error(method, request, timeout=20)
    assert err.code() == code, err.details()
    assert fragment in err.details()
    got_field, reason = details(err)
    assert got_field == field
    assert reason  # ErrorInfo always present
    if field is not None:
        assert _reference_names(reason, field), (
            f"docs/reference/errors.md does not list field {field!r} for {reason}: "
            "run `.venv/bin/python scripts/gen_reference.py` (or teach it where the field comes from)"
        )


def _reference_names(reason: str, field: str) -> bool:
    """Whether the error reference (docs/reference/errors.md) lists ``field`` in the row of
    ``reason`` (or says the field is computed where it is raised), or as a field that passes on
    its value's own error. A listed ``….x`` stands for
    any path ending in ``.x``, an ``[i]`` for any index, ``""`` for the whole body."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "errors.md").read_text()
    cells = re.findall(rf"^\| `{reason.upper()}` \| `[A-Z_]+` \| ([^|]*) \|", page, re.MULTILINE)
    passed_on = re.findall(r"^A request field whose own error is passed on: `([^`]*)`", page, re.MULTILINE)
    if any("(the field at fault)" in cell for cell in cells):  # a field computed where it is raised
        return True
    listed = [name for cell in cells for name in re.findall(r"`([^`]*)`", cell)] + passed_on
    for name in listed:
        if name == '""' and field == "":
            return True
        pattern = re.escape(name).replace("…", ".*").replace(r"\[i\]", r"\[\d+\]")
        if field and re.fullmatch(pattern, field):
            return True
    return False


@pytest.mark.parametrize("request_kwargs", [{"action_id": 999999}, {"action_text": "fly to the moon"}])
def test_unknown_action_says_how_many_legal_actions(stub: Any, tokens: Tokens, request_kwargs: Any) -> None:
    legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=tokens.aton, viewer=0)).actions
    err = call_error(
        stub.ApplyAction, pb.ApplyActionRequest(state=tokens.aton, player=0, viewer=0, **request_kwargs)
    )
    assert f"{len(legal)} legal actions for seat 0" in err.details()
    # Addressed to anyone else, the error does not tell (docs/security.md: the number of legal
    # actions depends on the seat's private cards); it says how to list them.
    err = call_error(stub.ApplyAction, pb.ApplyActionRequest(state=tokens.aton, player=0, **request_kwargs))
    assert "legal actions for seat" not in err.details()
    assert "seat 0 must decide; ListLegalActions with viewer=0" in err.details()


def test_illegal_action_says_how_many_legal_actions(stub: Any, tokens: Tokens) -> None:
    listed = stub.ListLegalActions(pb.ListLegalActionsRequest(state=tokens.aton, viewer=0))
    legal = {a.id for a in listed.actions}
    n = get_game("aton").descriptor.num_distinct_actions
    illegal = next(a for a in range(n) if a not in legal)
    err = call_error(
        stub.ApplyAction, pb.ApplyActionRequest(state=tokens.aton, action_id=illegal, player=0, viewer=0)
    )
    assert err.code() == INVALID
    assert f"{len(legal)} legal actions" in err.details() and "legal:" in err.details()
    assert details(err) == ("action", "ILLEGAL_ACTION")
    err = call_error(stub.ApplyAction, pb.ApplyActionRequest(state=tokens.aton, action_id=illegal, player=0))
    assert err.code() == INVALID and details(err) == ("action", "ILLEGAL_ACTION")
    assert "is not legal now" in err.details()
    assert "legal:" not in err.details() and f"{len(legal)} legal actions" not in err.details()


def test_wrong_player_has_precondition_details(stub: Any, tokens: Tokens) -> None:
    err = call_error(stub.ApplyAction, pb.ApplyActionRequest(state=tokens.aton, action_id=0, player=1))
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    found = False
    for any_msg in status.details:
        if any_msg.Is(error_details_pb2.PreconditionFailure.DESCRIPTOR):
            pf = error_details_pb2.PreconditionFailure()
            any_msg.Unpack(pf)
            assert pf.violations[0].type == "NOT_TO_ACT"
            found = True
        if any_msg.Is(error_details_pb2.QuotaFailure.DESCRIPTOR):
            raise AssertionError("a precondition failure is no quota failure")
    assert found
    # The seat to act, for clients that should not parse the message (ErrorInfo.metadata).
    assert error_info(err).metadata == {"current_player": "0", "decision": "exchange"}
    err = call_error(stub.ListLegalActions, pb.ListLegalActionsRequest(state=tokens.aton))
    assert error_info(err).reason == "VIEWER_REQUIRED" and error_info(err).metadata["current_player"] == "0"


def error_info(err: Any) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(err)
    assert status is not None
    for any_msg in status.details:
        if any_msg.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            any_msg.Unpack(info)
            return info
    raise AssertionError("no ErrorInfo")


def test_no_bad_input_is_unknown_or_internal(stub: Any, tokens: Tokens) -> None:
    """Garbage in every string field of every state-taking call: always a precise code."""
    garbage = ["", "%", "A" * 5000, tokens.aton[::-1], tokens.aton + "AAAA", tokens.aton[:-1]]
    calls = [
        lambda g: stub.GetView(pb.GetViewRequest(state=g)),
        lambda g: stub.ListLegalActions(pb.ListLegalActionsRequest(state=g, viewer=0)),
        lambda g: stub.ApplyAction(pb.ApplyActionRequest(state=tokens.aton, action_text=g or "x", player=0)),
        lambda g: stub.CreateGame(pb.CreateGameRequest(game=g or "?")),
        lambda g: stub.GetView(pb.GetViewRequest(state=tokens.aton, game=g or "?")),
    ]
    for call in calls:
        for g in garbage:
            with pytest.raises(grpc.RpcError) as info:
                call(g)
            assert info.value.code() in (INVALID, PRECONDITION), (g[:20], info.value.details())


# ---------------------------------------------------------------------------------------
# Request bodies and sizes: precise answers, counted, logged once
# ---------------------------------------------------------------------------------------


def _log_count(server: ServerProcess, predicate: Any) -> int:
    return sum(1 for line in server.log_lines() if predicate(line))


def _is_bad_apply_body(line: dict[str, Any]) -> bool:
    return line.get("method") == "/heka.v1.GameService/ApplyAction" and "is not a valid" in line.get(
        "error", ""
    )


def _is_error(line: dict[str, Any]) -> bool:
    return line.get("level") == "error" or "Traceback" in line.get("raw", "") or "exc" in line


def test_an_undecodable_body_is_counted_and_logged_once_without_a_traceback(
    server: ServerProcess, calls: Calls
) -> None:
    from service_helpers import scrape, total

    before = scrape(server)
    logged_before = _log_count(server, _is_bad_apply_body)
    errors_before = _log_count(server, _is_error)
    err = call_error(calls.raw("ApplyAction"), b"\x12\x05\xff\xfe\xfd", timeout=10)
    assert err.code() == INVALID
    assert details(err) == ("", "BAD_REQUEST_BODY")
    after = scrape(server)

    def delta(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    assert delta("heka_invalid_requests_total", reason="bad_request_body") == 1
    assert (
        delta(
            "heka_grpc_server_handled_total",
            grpc_service="heka.v1.GameService",
            grpc_method="ApplyAction",
            grpc_code="INVALID_ARGUMENT",
        )
        == 1
    )
    # One access-log line (written by the gRPC process before the answer left it), and no
    # ERROR line or traceback from gRPC.
    end = time.monotonic() + 10
    while _log_count(server, _is_bad_apply_body) == logged_before:
        assert time.monotonic() < end, "no access-log line"
        time.sleep(0.05)
    assert _log_count(server, _is_bad_apply_body) == logged_before + 1
    assert _log_count(server, _is_error) == errors_before


def test_a_request_over_the_size_cap_is_resource_exhausted(server: ServerProcess, calls: Calls) -> None:
    """gRPC itself refuses a request over HEKA_MAX_REQUEST_BYTES (64 KiB), before decoding
    it: RESOURCE_EXHAUSTED, without heka's rich details — never UNKNOWN or CANCELLED."""
    errors_before = _log_count(server, _is_error)
    request = pb.GetViewRequest(state="A" * (70 * 1024))
    err = call_error(calls.GetView, request, timeout=10)
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
    assert "larger than max" in (err.details() or "")
    # A request just under the cap gets through to heka, which refuses its token.
    err = call_error(calls.GetView, pb.GetViewRequest(state="A" * (60 * 1024)), timeout=10)
    assert err.code() == INVALID and details(err) == ("state", "BAD_TOKEN")
    assert _log_count(server, _is_error) == errors_before


@pytest.mark.parametrize("inflated", [70 * 1024, 64 * 1024 * 1024], ids=["70KiB", "64MiB"])
def test_a_compressed_request_is_capped_at_its_inflated_size(
    server: ServerProcess, calls: Calls, inflated: int
) -> None:
    """The cap holds for what a gzip-compressed request inflates to, not for its wire size: a
    64 MiB request of zeros travels in about 64 KiB and is refused without being held."""
    errors_before = _log_count(server, _is_error)
    request = pb.GetViewRequest(state="A" * inflated)
    err = call_error(calls.GetView, request, timeout=30, compression=grpc.Compression.Gzip)
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
    assert "larger than max" in (err.details() or "")
    # Compressed and under the cap, it reaches heka, which refuses its token.
    err = call_error(
        calls.GetView, pb.GetViewRequest(state="A" * (60 * 1024)), compression=grpc.Compression.Gzip
    )
    assert err.code() == INVALID and details(err) == ("state", "BAD_TOKEN")
    assert _log_count(server, _is_error) == errors_before


def test_advance_bots_without_a_deadline_stops_at_the_server_cap(start_server: Any) -> None:
    """An AdvanceBots call with no deadline cannot hold a search slot for a whole
    game: the server's cap on one call's total time stops it with STOP_REASON_TIME_LIMIT,
    keeping the moves made, and the slot is free for the next call."""
    server = start_server(
        "--search-workers",
        "1",
        "--max-concurrent-searches",
        "1",
        "--max-advance-seconds",
        "1.5",
        HEKA_STATE_KEYS=KEY1,
    )
    stub = server.stub
    token = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=3)).state
    slow = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(milliseconds=400), seed=1)
    bots = [pb.BotSeat(seat=0, bot=slow), pb.BotSeat(seat=1, bot=slow)]
    resp = stub.AdvanceBots(pb.AdvanceBotsRequest(state=token, bots=bots))  # no deadline
    assert resp.stop_reason == pb.STOP_REASON_TIME_LIMIT
    assert len(resp.bot_turns) >= 1 and not resp.status.is_over
    # The slot was released: the next bot call is admitted, not RESOURCE_EXHAUSTED.
    again = stub.AdvanceBots(pb.AdvanceBotsRequest(state=resp.state, bots=bots, max_bot_moves=1))
    assert again.stop_reason == pb.STOP_REASON_MOVE_LIMIT and len(again.bot_turns) == 1
