"""Facts the API reference states about the wire (proto comments, docs/api.md), checked
against what the server sends."""

from __future__ import annotations

import grpc
import pytest
from service_helpers import ServerProcess, call_error, error_details

from service.gen.heka.v1 import game_service_pb2 as pb

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def _aton(server: ServerProcess) -> tuple[str, int]:
    created = server.stub.CreateGame(pb.CreateGameRequest(game="aton", seed=3))
    return created.state, created.status.current_player


def test_action_id_and_action_text_together_are_refused(server: ServerProcess) -> None:
    """ApplyActionRequest: a body carrying both members of `action` is refused (decoding
    alone would keep the text silently)."""
    token, seat = _aton(server)
    legal = server.stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=seat)).actions
    raw = (
        pb.ApplyActionRequest(state=token, action_id=legal[0].id, player=seat).SerializeToString()
        + pb.ApplyActionRequest(action_text=legal[-1].text).SerializeToString()
    )
    call = server.channel.unary_unary("/heka.v1.GameService/ApplyAction")
    err = call_error(call, raw, timeout=20)
    assert err.code() == INVALID, err.details()
    field, reason, _, _ = error_details(err)
    assert (field, reason) == ("action_text", "TWO_ONEOF_MEMBERS")
    assert "action_id and action_text are both set" in (err.details() or "")


@pytest.mark.parametrize(
    "unknown",
    [
        b"\xa3\x06\xa4\x06",  # field 100: an empty group (start, end)
        b"\xa3\x06" * 50 + b"\x08\x01" + b"\xa4\x06" * 50,  # groups nested 50 deep, a varint inside
        b"\xa3\x06\xab\x06\xac\x06\xa4\x06",  # a group of field 101 inside one of field 100
    ],
    ids=["empty group", "nested groups", "group in a group"],
)
def test_an_unknown_group_before_two_members_does_not_hide_them(
    server: ServerProcess, unknown: bytes
) -> None:
    """An unknown field of the group wire types (which proto3 never writes, and the parser
    skips) ended the scan for two oneof members: the second member was then applied silently."""
    token, seat = _aton(server)
    legal = server.stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=seat)).actions
    raw = (
        unknown
        + pb.ApplyActionRequest(state=token, action_id=legal[0].id, player=seat).SerializeToString()
        + pb.ApplyActionRequest(action_text=legal[-1].text).SerializeToString()
    )
    err = call_error(server.channel.unary_unary("/heka.v1.GameService/ApplyAction"), raw, timeout=20)
    assert err.code() == INVALID, err.details()
    assert error_details(err)[:2] == ("action_text", "TWO_ONEOF_MEMBERS")


def test_two_members_of_a_nested_oneof_are_refused(server: ServerProcess) -> None:
    raw = (
        pb.CreateGameRequest(game="aton", options=pb.GameOptions(aton=pb.AtonOptions())).SerializeToString()
        + pb.CreateGameRequest(options=pb.GameOptions(osirium=pb.OsiriumOptions())).SerializeToString()
    )
    err = call_error(server.channel.unary_unary("/heka.v1.GameService/CreateGame"), raw, timeout=20)
    assert err.code() == INVALID
    assert error_details(err)[:2] == ("options.osirium", "TWO_ONEOF_MEMBERS")


def _budget_error(server: ServerProcess, ms: float) -> str:
    token, seat = _aton(server)
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(milliseconds=ms))
    err = call_error(server.stub.BotMove, pb.BotMoveRequest(state=token, viewer=seat, bot=bot), timeout=20)
    assert err.code() == INVALID
    assert error_details(err)[:2] == ("bot.budget.milliseconds", "BAD_BUDGET")
    return err.details() or ""


def test_a_budget_under_the_minimum_is_refused_naming_it(server: ServerProcess) -> None:
    """SearchBudget.milliseconds: at least 1."""
    message = _budget_error(server, 1e-300)
    assert "must be in [1, " in message and "got 1e-300" in message
    assert "got 0.5" in _budget_error(server, 0.5)


def test_a_budget_error_prints_the_number_sent(server: ServerProcess) -> None:
    assert "got 10000.001" in _budget_error(server, 10000.001)  # the shared server's cap: 10000


def test_root_counts_go_only_to_the_bots_own_seat(server: ServerProcess) -> None:
    """SearchDiagnostics: root_actions and root_visits are private; another viewer reads 0."""
    token, seat = _aton(server)
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=50), seed=1)
    own = server.stub.BotMove(pb.BotMoveRequest(state=token, viewer=seat, bot=bot)).diagnostics
    other = server.stub.BotMove(
        pb.BotMoveRequest(state=token, viewer=1 - seat, bot=bot, apply=True)
    ).diagnostics
    assert own.root_actions > 0 and own.root_visits > 0
    assert (other.root_actions, other.root_visits) == (0, 0)
    assert other.iterations > 0  # the totals go to every viewer


#: Event kinds without typed details (the Event.kind comment lists them).
_BARE_KINDS = {"aton": {"arranged", "exchange_decided", "cleanup", "scoring_round"},
               "osirium": {"end_turn", "draw_skipped", "refill_skipped"}}  # fmt: skip
#: The two kinds whose member is named otherwise (the Event.kind comment).
_RENAMED = {"break": "break_amulet", "pass": "pass_turn"}


def test_event_kinds_name_the_member_they_set(server: ServerProcess) -> None:
    """Event.kind is the member of the game's details that is set, but for the kinds the
    comment lists: those without details, and break/pass (break_amulet/pass_turn)."""
    seen: dict[str, set[str]] = {"aton": set(), "osirium": set()}
    bot = pb.BotSettings(kind=pb.BOT_KIND_RANDOM, seed=1)
    for game, players, seed in (("aton", 2, 1), ("aton", 2, 2), ("osirium", 2, 3), ("osirium", 4, 4)):
        created = server.stub.CreateGame(pb.CreateGameRequest(game=game, num_players=players, seed=seed))
        seats = [pb.BotSeat(seat=s, bot=bot) for s in range(players)]
        for viewer in range(players):
            played = server.stub.AdvanceBots(
                pb.AdvanceBotsRequest(state=created.state, bots=seats, viewer=viewer), timeout=60
            )
            for turn in played.bot_turns:
                for event in turn.events:
                    assert event.WhichOneof("details") in (game, None), event
                    details = getattr(event, game)
                    member = details.WhichOneof("event") if event.HasField(game) else None
                    if member is None:
                        assert event.kind in _BARE_KINDS[game], event
                    else:
                        assert _RENAMED.get(event.kind, event.kind) == member, event
                    seen[game].add(event.kind)
    assert len(seen["aton"]) >= 6 and len(seen["osirium"]) >= 6, seen
    assert "pass" in seen["osirium"], seen
