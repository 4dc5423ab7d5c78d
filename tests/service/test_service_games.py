"""Complete games of Aton and Osirium played over gRPC, mixing client actions and bots."""

from __future__ import annotations

import random
from typing import Any

from service.gen.heka.v1 import game_service_pb2 as pb

GREEDY = pb.BotSettings(kind=pb.BOT_KIND_GREEDY)
RANDOM = pb.BotSettings(kind=pb.BOT_KIND_RANDOM)


def tiny_mcts(iterations: int = 8) -> pb.BotSettings:
    return pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=iterations), seed=7)


def check_events_visible(events: Any, viewer: int | None) -> None:
    for e in events:
        assert e.is_public or (viewer is not None and viewer in e.visible_to), e


def play_mixed(stub: Any, game: str, players: int, seed: int, options: pb.GameOptions | None = None) -> Any:
    """Seat 0 is a client choosing random legal actions (by id or text); the other seats
    alternate BotMove (greedy / random / tiny MCTS) and apply. Returns the final status."""
    rng = random.Random(seed)
    req = pb.CreateGameRequest(game=game, num_players=players, seed=seed, viewer=0, include_view=True)
    if options:
        req.options.MergeFrom(options)
    created = stub.CreateGame(req)
    assert created.seed == 0  # the seed goes only to a trusted backend
    assert created.view.viewer == 0 and created.view.text
    token, status = created.state, created.status
    moves = bot_moves = 0
    kinds = [GREEDY, RANDOM, tiny_mcts()]
    while not status.is_over:
        player = status.current_player
        if player == 0:
            legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0))
            assert legal.current_player == 0 and legal.actions
            ids = [a.id for a in legal.actions]
            assert ids == sorted(ids)
            choice = rng.choice(legal.actions)
            if rng.random() < 0.5:
                req_a = pb.ApplyActionRequest(state=token, action_id=choice.id, player=0, viewer=0)
            else:
                req_a = pb.ApplyActionRequest(
                    state=token, action_text=choice.text.upper(), player=0, viewer=0
                )
            req_a.include_view = moves % 5 == 0
            resp = stub.ApplyAction(req_a)
            assert resp.action.id == choice.id
            assert resp.HasField("view") == req_a.include_view
            if req_a.include_view:
                assert resp.view.viewer == 0 and resp.view.status == resp.status
            check_events_visible(resp.events, 0)
            token, status = resp.state, resp.status
        else:
            bot = kinds[bot_moves % len(kinds)]
            resp = stub.BotMove(
                pb.BotMoveRequest(state=token, bot=bot, player=player, apply=True, viewer=player)
            )
            check_events_visible(resp.events, player)
            assert resp.diagnostics.bot in ("greedy", "random", "mcts:custom")
            if resp.diagnostics.bot == "mcts:custom":
                assert resp.diagnostics.iterations <= 8  # 0 when the move is forced
            token, status = resp.state, resp.status
            bot_moves += 1
        moves += 1
        assert moves < 5000, "game did not end"
    assert not status.HasField("current_player")
    assert status.decision == pb.DECISION_OVER
    assert len(status.outcome.scores) == players
    assert len(status.outcome.returns) == players
    # The finished game still has views for everyone.
    for p in [None, *range(players)]:
        view_req = pb.GetViewRequest(state=token) if p is None else pb.GetViewRequest(state=token, viewer=p)
        view = stub.GetView(view_req).view
        assert view.status.is_over and view.text
        assert view.HasField("viewer") == (p is not None)
    return status, bot_moves


def test_aton_complete_game_over_grpc(stub: Any) -> None:
    """A full Aton game (A9: ends with a result) over gRPC, client and bots alternating."""
    status, bot_moves = play_mixed(stub, "aton", 2, seed=11)
    assert status.game == "aton" and status.outcome.reason
    assert bot_moves > 0


def test_osirium_two_player_complete_game_over_grpc(stub: Any) -> None:
    status, bot_moves = play_mixed(stub, "osirium", 2, seed=5)
    assert status.game == "osirium" and status.num_players == 2
    assert bot_moves > 0


def test_osirium_four_player_complete_game_over_grpc(stub: Any) -> None:
    status, _ = play_mixed(stub, "osirium", 4, seed=3)
    assert status.num_players == 4


def test_osirium_four_players_in_teams_with_advance_bots(stub: Any) -> None:
    """O9.3 teams; seats 1-3 are bots advanced in one call each time seat 0 has played."""
    req = pb.CreateGameRequest(game="osirium", num_players=4, seed=21)
    req.options.osirium.teams = True
    created = stub.CreateGame(req)
    assert list(created.status.teams) == [0, 1, 0, 1]
    token, status = created.state, created.status
    bots = [pb.BotSeat(seat=s, bot=GREEDY if s != 2 else tiny_mcts(4)) for s in (1, 2, 3)]
    rng = random.Random(4)
    calls = 0
    while not status.is_over:
        if status.current_player == 0:
            legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=0))
            resp = stub.ApplyAction(
                pb.ApplyActionRequest(state=token, action_id=rng.choice(legal.actions).id, player=0)
            )
            check_events_visible(resp.events, None)
            token, status = resp.state, resp.status
            continue
        adv = stub.AdvanceBots(pb.AdvanceBotsRequest(state=token, bots=bots, viewer=0, include_view=True))
        calls += 1
        assert adv.bot_turns, "bots to act must move"
        assert all(t.player in (1, 2, 3) for t in adv.bot_turns)
        for t in adv.bot_turns:
            check_events_visible(t.events, 0)
        if adv.status.is_over:
            assert adv.stop_reason == pb.STOP_REASON_GAME_OVER
        else:
            assert adv.stop_reason == pb.STOP_REASON_SEAT_NOT_NAMED
            assert adv.status.current_player == 0
        assert adv.view.viewer == 0
        token, status = adv.state, adv.status
        assert calls < 2000
    winners = set(status.outcome.winners)
    # Team play: both members of a team share the result (O9.3).
    assert winners in (set(), {0, 2}, {1, 3}, {0, 1, 2, 3})


def test_advance_bots_all_seats_plays_to_the_end(stub: Any) -> None:
    created = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=99))
    adv = stub.AdvanceBots(
        pb.AdvanceBotsRequest(
            state=created.state, bots=[pb.BotSeat(seat=0, bot=RANDOM), pb.BotSeat(seat=1, bot=GREEDY)]
        )
    )
    assert adv.status.is_over
    assert adv.stop_reason == pb.STOP_REASON_GAME_OVER
    assert len(adv.bot_turns) > 10


def test_advance_bots_move_limit(stub: Any) -> None:
    created = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=98))
    adv = stub.AdvanceBots(
        pb.AdvanceBotsRequest(
            state=created.state,
            bots=[pb.BotSeat(seat=0, bot=RANDOM), pb.BotSeat(seat=1, bot=RANDOM)],
            max_bot_moves=3,
        )
    )
    assert len(adv.bot_turns) == 3
    assert adv.stop_reason == pb.STOP_REASON_MOVE_LIMIT


def test_secret_bot_decisions_are_hidden_from_other_viewers(stub: Any) -> None:
    """A3.3 / A10.2: Aton's arrangement is secret; AdvanceBots shows another seat's secret
    decision as id -1 with only the totals of its diagnostics, and the bot's own seat (or a
    trusted backend) sees it."""
    created = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=5))
    bots = [pb.BotSeat(seat=0, bot=tiny_mcts(20)), pb.BotSeat(seat=1, bot=tiny_mcts(20))]
    seen_secret = False
    adv = stub.AdvanceBots(pb.AdvanceBotsRequest(state=created.state, bots=bots, max_bot_moves=12, viewer=0))
    for t in adv.bot_turns:
        if t.player != 0:
            assert not t.diagnostics.actions and not t.diagnostics.principal_variation
            # (an iteration budget may stop early once the choice cannot change: ai/mcts.py)
            assert t.diagnostics.chosen_value == 0 and 0 < t.diagnostics.iterations <= 20
        else:
            assert t.diagnostics.actions and t.action.id >= 0
        if t.action.id == -1:
            seen_secret = True
            assert t.player != 0 and t.action.kind == "secret"
        else:
            assert t.action.text
    assert seen_secret
    public = stub.AdvanceBots(pb.AdvanceBotsRequest(state=created.state, bots=bots, max_bot_moves=12))
    assert any(t.action.id == -1 and t.player == 0 for t in public.bot_turns)
    assert not any(t.diagnostics.actions for t in public.bot_turns)
    trusted = stub.AdvanceBots(
        pb.AdvanceBotsRequest(state=created.state, bots=bots, max_bot_moves=12, trusted_backend=True)
    )
    assert all(t.action.id >= 0 and t.diagnostics.actions for t in trusted.bot_turns)
    assert [t.action.id for t in trusted.bot_turns if t.player == 0] == [
        t.action.id for t in adv.bot_turns if t.player == 0
    ]


def test_same_seed_same_bot_move(stub: Any) -> None:
    created = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=2, seed=8))
    bot = tiny_mcts(30)
    a = stub.BotMove(pb.BotMoveRequest(state=created.state, bot=bot, viewer=0))
    b = stub.BotMove(pb.BotMoveRequest(state=created.state, bot=bot, viewer=0))
    assert a.action.id == b.action.id
    assert a.diagnostics.iterations == b.diagnostics.iterations == 30
    assert a.diagnostics.seed == 7
    assert not a.state  # not applied


def test_bot_move_with_two_workers(stub: Any) -> None:
    created = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=8))
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=20), workers=2)
    resp = stub.BotMove(pb.BotMoveRequest(state=created.state, bot=bot, viewer=0))
    assert resp.diagnostics.workers == 2
    legal = stub.ListLegalActions(pb.ListLegalActionsRequest(state=created.state, viewer=0))
    assert resp.action.id in {a.id for a in legal.actions}


def test_list_games(stub: Any) -> None:
    games = {g.name: g for g in stub.ListGames(pb.ListGamesRequest()).games}
    assert set(games) >= {"aton", "osirium"}
    assert (games["aton"].min_players, games["aton"].max_players) == (2, 2)
    assert (games["osirium"].min_players, games["osirium"].max_players) == (2, 4)
    assert any(o.name == "teams" for o in games["osirium"].options)
    for g in games.values():
        for o in g.options:
            assert o.kind != pb.OPTION_KIND_UNSPECIFIED


def test_the_server_tells_its_build(server: Any) -> None:
    """ListGames.build and the "listening" log line name the build the server runs: the one
    this test process runs (same environment, same install; engine/_build.py)."""
    import engine

    assert server.stub.ListGames(pb.ListGamesRequest()).build == engine.build()
    listening = [line for line in server.log_lines() if line.get("event") == "listening"]
    assert listening and {line["build"] for line in listening} == {engine.build()}


def test_views_hide_other_hands(stub: Any) -> None:
    """A10 / O6: a player's view differs from the other player's and from the public view,
    while the status is common."""
    created = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=3, include_view=True))
    assert not created.view.HasField("viewer")
    v0 = stub.GetView(pb.GetViewRequest(state=created.state, viewer=0)).view
    v1 = stub.GetView(pb.GetViewRequest(state=created.state, viewer=1)).view
    assert list(v0.aton.hand) and list(v1.aton.hand) and not list(created.view.aton.hand)
    assert v0.aton != v1.aton and v0.aton != created.view.aton
    assert v0.status == v1.status


def test_server_chooses_a_seed_when_absent(stub: Any) -> None:
    a = stub.CreateGame(pb.CreateGameRequest(game="aton", trusted_backend=True))
    b = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=a.seed))
    # Same seed, same game: the same legal actions and view.
    assert a.seed >= 1 << 32 or a.seed  # 64 random bits: rarely below 2**32
    va = stub.GetView(pb.GetViewRequest(state=a.state, viewer=0)).view
    vb = stub.GetView(pb.GetViewRequest(state=b.state, viewer=0)).view
    assert va == vb


def test_osirium_typed_options_reach_the_game(stub: Any) -> None:
    """O2.1 / O9.2: deities chosen at creation; O9: teams. The typed options reach the game,
    and options the game refuses are INVALID_ARGUMENT naming them."""
    import grpc

    req = pb.CreateGameRequest(game="osirium", num_players=3, seed=2, include_view=True)
    req.options.osirium.deities.extend([pb.DEITY_SETH, pb.DEITY_ISIS, pb.DEITY_BASTET])
    created = stub.CreateGame(req)
    assert [s.deity.deity for s in created.view.osirium.seats] == [
        pb.DEITY_SETH,
        pb.DEITY_ISIS,
        pb.DEITY_BASTET,
    ]
    assert [s.deity.power for s in created.view.osirium.seats] == [
        pb.DEITY_POWER_ROTATE,
        pb.DEITY_POWER_MOVE,
        pb.DEITY_POWER_MARKET,
    ]
    teams = pb.CreateGameRequest(game="osirium", num_players=4, include_view=True)
    teams.options.osirium.teams = True
    assert list(stub.CreateGame(teams).status.teams) == [0, 1, 0, 1]
    for bad, words in (
        (pb.GameOptions(osirium=pb.OsiriumOptions(deities=[pb.DEITY_ISIS, pb.DEITY_ISIS])), "each deity"),
        (pb.GameOptions(osirium=pb.OsiriumOptions(teams=True)), "teams need 4 players"),
        (pb.GameOptions(aton=pb.AtonOptions()), "not options of osirium"),
    ):
        request = pb.CreateGameRequest(game="osirium", num_players=2, options=bad)
        try:
            stub.CreateGame(request)
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert words in err.details(), err.details()
        else:
            raise AssertionError(f"{bad} must be refused")


def play_one_call_per_move(
    stub: Any, game: str, players: int, seed: int, bot: pb.BotSettings
) -> tuple[int, int, Any]:
    """One person (seat 0) against bots, one call per move of the person: each
    response carries the view and, when it is the person's turn, the legal actions; the
    bots play inside CreateGame and ApplyAction. Returns (calls, bot moves, last response)."""
    rng = random.Random(seed)
    bots = [pb.BotSeat(seat=s, bot=bot) for s in range(1, players)]
    common: dict[str, Any] = {"viewer": 0, "include_view": True, "include_legal_actions": True}
    resp: Any = stub.CreateGame(
        pb.CreateGameRequest(game=game, num_players=players, seed=seed, bots=bots, **common)
    )
    calls, bot_moves = 1, len(resp.bot_turns)
    while not resp.status.is_over:
        # The person is to act (the bots played until then), and the legal actions came.
        assert resp.status.current_player == 0 and resp.legal_actions
        assert resp.view.viewer == 0 and resp.view.status == resp.status
        check_events_visible([e for t in resp.bot_turns for e in t.events], 0)
        action = rng.choice(list(resp.legal_actions))
        resp = stub.ApplyAction(
            pb.ApplyActionRequest(state=resp.state, action_id=action.id, player=0, bots=bots, **common)
        )
        calls += 1
        bot_moves += len(resp.bot_turns)
        assert calls < 2000
    assert not resp.legal_actions
    return calls, bot_moves, resp


def test_one_call_per_move_plays_complete_games(stub: Any) -> None:
    for game, players, seed, bot in (
        ("aton", 2, 4, GREEDY),
        ("osirium", 4, 6, RANDOM),
        ("osirium", 2, 7, tiny_mcts(6)),
    ):
        calls, bot_moves, last = play_one_call_per_move(stub, game, players, seed, bot)
        assert last.status.is_over and last.status.outcome.reason != pb.OUTCOME_REASON_UNSPECIFIED
        # Every move of the game was the person's own call (one each, after CreateGame) or
        # a bot turn reported in a response.
        assert last.status.move_number == (calls - 1) + bot_moves
        assert bot_moves > 0


def test_legal_actions_come_compact_on_request(stub: Any) -> None:
    full = stub.CreateGame(pb.CreateGameRequest(game="osirium", seed=3, viewer=0, include_legal_actions=True))
    compact = stub.CreateGame(
        pb.CreateGameRequest(
            game="osirium", seed=3, viewer=0, include_legal_actions=True, compact_actions=True
        )
    )
    assert [(a.id, a.text) for a in full.legal_actions] == [(a.id, a.text) for a in compact.legal_actions]
    assert all(a.WhichOneof("details") is None and not a.kind for a in compact.legal_actions)
    assert any(a.WhichOneof("details") == "osirium" for a in full.legal_actions)
    assert compact.ByteSize() < full.ByteSize() / 2
    # Legal actions only for the seat to act: not for seat 1, nor for the public.
    other = stub.CreateGame(
        pb.CreateGameRequest(game="osirium", seed=3, viewer=1, include_legal_actions=True)
    )
    public = stub.CreateGame(pb.CreateGameRequest(game="osirium", seed=3, include_legal_actions=True))
    assert not other.legal_actions and not public.legal_actions


def _actions(message: Any) -> list[Any]:
    """Every ``heka.v1.Action`` in ``message``, at any depth."""
    found = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for item in value if field.is_repeated else [value]:
            if field.message_type.full_name == "heka.v1.Action":
                found.append(item)
            elif hasattr(item, "ListFields"):
                found += _actions(item)
    return found


def test_every_action_of_a_compact_response_is_compact(stub: Any) -> None:
    """compact_actions holds for every action a response carries: the legal actions, the bots'
    turns, a bot's move, and its diagnostics' actions and principal variation."""
    bots = [pb.BotSeat(seat=s, bot=tiny_mcts(12)) for s in (0, 1)]
    created = stub.CreateGame(pb.CreateGameRequest(game="osirium", seed=5, viewer=0))
    responses = []
    for compact in (False, True):
        advanced = stub.AdvanceBots(
            pb.AdvanceBotsRequest(
                state=created.state,
                bots=bots,
                max_bot_moves=4,
                viewer=0,
                trusted_backend=True,
                include_legal_actions=True,
                compact_actions=compact,
            )
        )
        moved = stub.BotMove(
            pb.BotMoveRequest(
                state=created.state, bot=tiny_mcts(12), viewer=0, apply=True, compact_actions=compact
            )
        )
        responses.append((advanced, moved))
    (full_advanced, full_moved), (advanced, moved) = responses
    for full, compact_response in ((full_advanced, advanced), (full_moved, moved)):
        actions, full_actions = _actions(compact_response), _actions(full)
        assert len(actions) == len(full_actions) > 3
        assert [(a.id, a.text) for a in actions] == [(a.id, a.text) for a in full_actions]
        assert all(a.WhichOneof("details") is None and not a.kind for a in actions)
        assert any(a.WhichOneof("details") is not None for a in full_actions)
    assert advanced.bot_turns and advanced.bot_turns[0].diagnostics.actions


def test_move_number_counts_every_action(stub: Any) -> None:
    created = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=9, viewer=0, include_legal_actions=True))
    assert created.status.move_number == 0
    bots = [pb.BotSeat(seat=1, bot=RANDOM)]
    resp = stub.ApplyAction(
        pb.ApplyActionRequest(state=created.state, action_id=created.legal_actions[0].id, player=0, bots=bots)
    )
    assert resp.status.move_number == 1 + len(resp.bot_turns)
    # An old token replayed gives an older move number: a backend can tell (docs/security.md).
    again = stub.ApplyAction(
        pb.ApplyActionRequest(state=created.state, action_id=created.legal_actions[-1].id, player=0)
    )
    assert again.status.move_number == 1 < resp.status.move_number


def test_diagnostics_list_the_top_k_and_totals(stub: Any) -> None:
    created = stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=2, seed=8))
    for k, listed in ((0, 5), (2, 2), (100, None)):
        bot = pb.BotSettings(
            kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=60), seed=1, diagnostics_top_k=k
        )
        d = stub.BotMove(pb.BotMoveRequest(state=created.state, bot=bot, viewer=0)).diagnostics
        assert d.root_actions > 5 and d.root_visits >= 1
        assert len(d.actions) == (listed if listed is not None else d.root_actions)
        visits = [s.visits for s in d.actions]
        assert visits == sorted(visits, reverse=True)
