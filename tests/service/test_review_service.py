"""ReviewGame through a real server (service/review.py; docs/review.md): the stream, what a
review may reveal and to whom (twin deals), replay errors, forced moves, time limits,
cancellation, admission control and metrics.

The tests hold the server's key (the oracle of tests/service/test_no_leaks.py): they open the
tokens, play the games locally, and compute each expected review with ai.review and the
search seed the server derives (service.bots.search_seed)."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import grpc
import pytest
from service_helpers import (
    KEY1,
    ServerProcess,
    call_error,
    error_details,
    retry_info,
    scrape,
    total,
    wait_metric,
)

from ai.review import ReviewPoint, replay, review_decision, reviewer
from engine.core import SECRET_ACTION, State
from engine.registry import get_game
from service.bots import search_seed
from service.envelope import KeyRing, parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb

ORACLE = KeyRing(parse_keys(KEY1))
ITERATIONS = 30
MASK = 0xFFFFFFFFFFFFFFFF


def open_state(token: str) -> State:
    text = ORACLE.open(token).serialized
    return get_game(text.split(":", 1)[0]).deserialize_state(text)


def seal(state: State) -> str:
    return ORACLE.seal(state.serialize())


def recorded(
    stub: Any, game: str, players: int, seed: int, limit: int = 10_000, **options: Any
) -> tuple[str, list[int]]:
    """A new game on the server (its start token) and a seeded random game's actions from it."""
    opts = pb.GameOptions(osirium=pb.OsiriumOptions(**options)) if options else None
    token = stub.CreateGame(
        pb.CreateGameRequest(game=game, num_players=players, seed=seed, options=opts)
    ).state
    state = open_state(token)
    rng = random.Random(seed)
    actions: list[int] = []
    while not state.is_terminal() and len(actions) < limit:
        a = rng.choice(state.legal_actions())
        actions.append(a)
        state.apply(a)
    return token, actions


def final_token(token: str, actions: list[int]) -> str:
    """The token of the game after ``actions``, as the server would have returned it."""
    state = open_state(token)
    for a in actions:
        state.apply(a)
    return seal(state)


def as_seen(token: str, actions: list[int], viewer: int | None) -> tuple[list[int], list[str]]:
    """What a backend playing ``viewer`` holds of a game: the actions as the viewer saw them
    (another seat's secret decision as -1) and the token of each response (after each action
    that leaves the viewer to act, and at the end)."""
    state = open_state(token)
    seen: list[int] = []
    tokens: list[str] = []
    for i, a in enumerate(actions):
        secret = state.current_player() != viewer and state.public_action(a) == SECRET_ACTION
        seen.append(SECRET_ACTION if secret else a)
        state.apply(a)
        if state.current_player() == viewer or i == len(actions) - 1:
            tokens.append(seal(state))
    return seen, tokens


def request(**fields: Any) -> pb.ReviewGameRequest:
    """A review request; unless it is a trusted backend's or names its checkpoints, as a
    backend playing ``viewer`` sends it (:func:`as_seen`)."""
    if not fields.get("trusted_backend") and "checkpoints" not in fields and fields.get("actions"):
        fields["actions"], fields["checkpoints"] = as_seen(
            fields["state"], list(fields["actions"]), fields.get("viewer")
        )
    return pb.ReviewGameRequest(**fields)


def review(stub: Any, **fields: Any) -> list[pb.ReviewGameResponse]:
    fields.setdefault("iterations", ITERATIONS)
    return list(stub.ReviewGame(request(**fields), timeout=120))


def moves_of(stream: list[pb.ReviewGameResponse]) -> list[pb.MoveReview]:
    return [m.move for m in stream if m.WhichOneof("item") == "move"]


def bare(move: pb.MoveReview) -> pb.MoveReview:
    out = pb.MoveReview()
    out.CopyFrom(move)
    out.ClearField("elapsed_seconds")
    return out


def expected(
    point: ReviewPoint, seed: int, iterations: int = ITERATIONS, game_move: int | None = None
) -> Any:
    """The review the server must send for ``point``: ai.review with the server's keyed seed."""
    move = point.move if game_move is None else game_move
    keyed = search_seed(ORACLE.signing, point.state, (seed + move) & MASK)
    return review_decision(point.state, point.played, reviewer("medium", iterations), keyed, move=move)


# ---------------------------------------------------------------------------------------
# The stream
# ---------------------------------------------------------------------------------------


def test_a_review_streams_a_header_every_decision_in_move_order_and_a_summary(stub: Any) -> None:
    token, actions = recorded(stub, "aton", 2, seed=8)
    stream = review(stub, state=token, actions=actions, seat=1, viewer=1, seed=42)
    kinds = [m.WhichOneof("item") for m in stream]
    assert kinds[0] == "header" and kinds[-1] == "summary" and set(kinds[1:-1]) == {"move"}
    header, summary = stream[0].header, stream[-1].summary
    points, end = replay(open_state(token), actions, [1])
    todo = [p for p in points if not p.forced]
    assert header.moves == len(todo) and header.actions == len(actions) and list(header.seats) == [1]
    assert header.forced_moves == len(points) - len(todo)
    assert header.reviewer == "mcts:medium,iterations=30" and header.iterations == ITERATIONS
    assert header.seed == 42 and header.status.is_over == end.is_terminal()
    got = moves_of(stream)
    assert [m.move for m in got] == [p.move for p in todo]
    for m, p in zip(got, todo, strict=True):
        want = expected(p, 42)
        assert (m.seat, m.played.id, m.best.id) == (1, p.played, want.best)
        assert m.played.text == p.state.game.action_to_string(p.played)
        assert (m.played_score, m.best_score, m.loss, m.accuracy) == pytest.approx(
            (want.played_score, want.best_score, want.loss, want.accuracy), abs=1e-12
        )
        assert pb.MoveGrade.Name(m.grade) == "MOVE_GRADE_" + want.grade.upper()
        assert [(a.action.id, a.visits) for a in m.alternatives] == [
            (a.action, a.visits) for a in want.alternatives
        ]
        assert m.iterations == want.iterations
    assert summary.end == pb.REVIEW_END_COMPLETE and summary.moves_reviewed == len(todo)
    assert summary.moves_left == 0 and summary.next_move == 0
    (seat,) = summary.seats
    assert seat.seat == 1 and seat.moves == len(todo) and seat.forced_moves == header.forced_moves
    assert seat.accuracy == pytest.approx(sum(m.accuracy for m in got) / len(got))
    assert [g.grade for g in seat.grades] == list(range(1, 7))
    for g in seat.grades:
        assert g.moves == sum(1 for m in got if m.grade == g.grade)


def test_the_same_request_gives_the_same_review_in_parallel_or_not(stub: Any) -> None:
    token, actions = recorded(stub, "osirium", 2, seed=3, limit=60)
    request = {"state": token, "actions": actions, "seat": 0, "viewer": 0, "seed": 5}
    one = [bare(m) for m in moves_of(review(stub, workers=1, **request))]
    two = [bare(m) for m in moves_of(review(stub, workers=2, **request))]
    assert one and one == two
    other = [bare(m) for m in moves_of(review(stub, workers=1, **{**request, "seed": 6}))]
    assert other != one


def test_a_review_from_a_later_token_numbers_moves_as_the_game_does(stub: Any) -> None:
    token, actions = recorded(stub, "aton", 2, seed=12, limit=40)
    state = open_state(token)
    for a in actions[:20]:
        state.apply(a)
    later = seal(state)
    full = moves_of(review(stub, state=token, actions=actions, seat=0, viewer=0, seed=1))
    tail = moves_of(review(stub, state=later, actions=actions[20:], seat=0, viewer=0, seed=1))
    assert [bare(m) for m in full if m.move > 20] == [bare(m) for m in tail]


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------


def first_error(stub: Any, req: pb.ReviewGameRequest) -> grpc.RpcError:
    """The error of a review refused before its first message."""
    stream = stub.ReviewGame(req, timeout=30)
    with pytest.raises(grpc.RpcError) as info:
        next(stream)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value.details()
    return info.value


def test_an_action_that_cannot_be_replayed_is_refused_with_its_move_number(stub: Any) -> None:
    token, actions = recorded(stub, "osirium", 2, seed=2, limit=30)
    end = final_token(token, actions)
    state = open_state(token)
    seats = []
    for a in actions:
        seats.append(state.current_player())
        state.apply(a)
    for k in (11, next(i for i in range(12, 30) if seats[i] != seats[11])):
        state = open_state(token)
        for a in actions[:k]:
            state.apply(a)
        illegal = next(a for a in range(state.game.descriptor.num_distinct_actions) if not state.is_legal(a))
        bad = [*actions[:k], illegal, *actions[k + 1 :]]
        # A trusted backend is told which move, whoever played it.
        err = first_error(stub, pb.ReviewGameRequest(state=token, actions=bad, seat=0, trusted_backend=True))
        assert f"move {k + 1}" in err.details() and "not legal" in err.details()
        field, reason, metadata, _ = error_details(err)
        assert (field, reason, metadata) == (
            f"actions[{k}]",
            "ILLEGAL_ACTION",
            {"move": str(k + 1), "index": str(k)},
        )
        # A seat reviewing its own moves: its own move is named when no move of another seat
        # comes before it since the last checkpoint; another seat's is not (what it may play
        # depends on its cards), nor a move after it: the checkpoint the actions do not reach is.
        viewer = seats[k] if k == 11 else seats[11]
        before = final_token(token, actions[:k])
        for checkpoints in ([before, end], [end]):
            err = first_error(
                stub,
                pb.ReviewGameRequest(
                    state=token, actions=bad, seat=viewer, viewer=viewer, checkpoints=checkpoints
                ),
            )
            field, reason, metadata, _ = error_details(err)
            if seats[k] == viewer and len(checkpoints) == 2:
                assert (field, metadata["move"]) == (f"actions[{k}]", str(k + 1)), err.details()
                assert "not legal" in err.details()
            else:
                assert field == "checkpoints" and metadata == {"move": str(len(actions))}, err.details()
                assert "not legal" not in err.details() and "do not lead to the checkpoint" in err.details()


def test_a_review_for_a_seat_must_end_at_a_checkpoint(stub: Any) -> None:
    """Without the token of the game after the last action, nothing shows that the actions are
    the game's: a list with an invented last move of another seat would answer whether that
    seat could have played it."""
    token, actions = recorded(stub, "osirium", 2, seed=19, limit=20)
    err = first_error(stub, pb.ReviewGameRequest(state=token, actions=actions, seat=0, viewer=0))
    field, reason, metadata, _ = error_details(err)
    assert (field, reason, metadata["move"]) == ("checkpoints", "ILLEGAL_ACTION", str(len(actions)))
    assert "checkpoint" in err.details()
    other = recorded(stub, "osirium", 2, seed=20, limit=20)
    err = first_error(
        stub, request(state=token, actions=actions, seat=0, viewer=0, checkpoints=[final_token(*other)])
    )
    assert error_details(err)[0] == "checkpoints"
    err = first_error(stub, request(state=token, actions=actions, seat=0, viewer=0, checkpoints=["junk"]))
    assert error_details(err)[:2] == ("checkpoints", "BAD_TOKEN")
    aton = recorded(stub, "aton", 2, seed=1, limit=5)
    err = first_error(
        stub, request(state=token, actions=actions, seat=0, viewer=0, checkpoints=[final_token(*aton)])
    )
    assert error_details(err)[:2] == ("checkpoints", "WRONG_GAME")


def test_another_seats_secret_decisions_may_be_minus_one(stub: Any) -> None:
    """What a backend playing seat 0 against a bot holds of an Aton game: seat 1's secret
    decisions as -1 and the token of each response. The server finds each decision from the
    next token, and the review is the one of the whole game."""
    token, actions = recorded(stub, "aton", 2, seed=23)
    state = open_state(token)
    seen: list[int] = []
    tokens: list[str] = []
    for a in actions:
        secret = state.current_player() == 1 and state.public_action(a) == SECRET_ACTION
        seen.append(SECRET_ACTION if secret else a)
        state.apply(a)
        if state.current_player() == 0 or state.is_terminal():  # a response reaches seat 0
            tokens.append(seal(state))
    assert seen.count(SECRET_ACTION) >= 4
    full = review(stub, state=token, actions=actions, seat=0, trusted_backend=True, seed=4)
    mine = review(stub, state=token, actions=seen, seat=0, viewer=0, checkpoints=tokens, seed=4)
    assert [bare(m) for m in moves_of(mine)] == [bare(m) for m in moves_of(full)]
    # Without the token of the game after the last action, nothing shows that the actions
    # seen are the game's: refused, naming the checkpoints.
    no_last = request(state=token, actions=seen, seat=0, viewer=0, checkpoints=tokens[:-1], seed=4)
    err = first_error(stub, no_last)
    assert error_details(err)[0] == "checkpoints"
    assert "after the last action" in err.details()
    # An explicit guess at seat 1's secret decision is refused, right or wrong: the answer
    # would tell whether the guess was seat 1's arrangement.
    k = seen.index(SECRET_ACTION)
    guess = [*seen[:k], actions[k], *seen[k + 1 :]]
    err = first_error(stub, request(state=token, actions=guess, seat=0, viewer=0, checkpoints=tokens))
    assert "as -1" in err.details()


def test_a_review_tells_a_seat_nothing_about_another_seats_cards(stub: Any) -> None:
    """Twin deals for the refusals: seat 0 invents a move of seat 1 that seat 1's cards allow
    in the real deal and not in a twin (a deal seat 0 cannot tell from it), alone or followed
    by a move that fails, with the token of the game after the real moves: both get the same
    answer (tests/ai/test_review.py tries every form of list)."""
    rng = random.Random(2)
    token, actions = recorded(stub, "osirium", 2, seed=27, limit=80)
    state = open_state(token)
    checked = 0
    for i, a in enumerate(actions[:-1]):
        if state.current_player() == 1 and state.move_number() > 4:
            twin = state.sample_consistent_state(0, rng)
            only_real = set(state.legal_actions()) - set(twin.legal_actions()) - {a}
            if only_real:
                fake = min(only_real)
                # Alone, or followed by an unknown id that is reached only if the fake is legal.
                for sent in ([fake], [fake, 99_999_999]):
                    after = seal(state.child(a) if len(sent) == 1 else state.child(a).child(actions[i + 1]))
                    answers = [
                        first_error(
                            stub,
                            pb.ReviewGameRequest(
                                state=seal(s), actions=sent, seat=0, viewer=0, checkpoints=[after]
                            ),
                        )
                        for s in (state, twin)
                    ]
                    details = [(e.details(), error_details(e)[:3]) for e in answers]
                    assert details[0] == details[1], details
                    assert "do not lead to the checkpoint" in details[0][0]
                checked += 1
        state.apply(a)
    assert checked >= 2


@pytest.mark.parametrize(
    ("fields", "reason", "field"),
    [
        ({"viewer": 0}, "BAD_REQUEST", "seat"),  # no seat named
        ({"seat": 2, "viewer": 1}, "BAD_PLAYER", "seat"),
        ({"seat": 0, "viewer": 0, "iterations": 10**6}, "BAD_BUDGET", "iterations"),
        ({"seat": 0, "viewer": 0, "alternatives": 11}, "BAD_REQUEST", "alternatives"),
        ({"seat": 0, "viewer": 0, "workers": 9}, "BAD_BUDGET", "workers"),
        ({"seat": 0, "viewer": 0, "max_seconds": -1}, "BAD_BUDGET", "max_seconds"),
        ({"seat": 0, "viewer": 0, "from_move": -3}, "BAD_REQUEST", "from_move"),
        ({"seat": 0, "viewer": 0, "from_move": 11}, "BAD_REQUEST", "from_move"),  # past the last action
        ({"seat": 0, "viewer": 0, "from_move": 2**31 - 1}, "BAD_REQUEST", "from_move"),
        ({"seat": 0, "viewer": 0, "game": "osirium"}, "WRONG_GAME", "state"),
    ],
)
def test_bad_requests_are_refused_naming_the_field(
    stub: Any, fields: dict[str, Any], reason: str, field: str
) -> None:
    token, actions = recorded(stub, "aton", 2, seed=1, limit=10)
    err = call_error(
        lambda r, **kw: list(stub.ReviewGame(r, **kw)),
        request(state=token, actions=actions, **fields),
        timeout=30,
    )
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    assert error_details(err)[:2] == (field, reason)


@pytest.mark.parametrize(
    ("difficulty", "preset"), [(pb.DIFFICULTY_HARD, "hard"), (pb.DIFFICULTY_EXPERT, "expert")]
)
def test_a_presets_review_budget_obeys_the_servers_iteration_cap(
    stub: Any, difficulty: int, preset: str
) -> None:
    """The shared server caps a search at 5,000 iterations (conftest); `hard` and `expert`
    review with more by default. Asked for the preset's budget (iterations 0), the review plays
    the cap, and its header says so, as a bot on the same preset does."""
    from ai.presets import PRESETS

    cap = 5000
    assert (PRESETS[preset].iterations or 0) > cap
    token, actions = recorded(stub, "aton", 2, seed=1, limit=10)
    call = stub.ReviewGame(
        request(state=token, actions=actions, seat=0, viewer=0, difficulty=difficulty, iterations=0),
        timeout=60,
    )
    header = next(call).header
    call.cancel()
    assert (header.iterations, header.reviewer) == (cap, f"mcts:{preset},iterations={cap}")


# ---------------------------------------------------------------------------------------
# What a review reveals, and to whom
# ---------------------------------------------------------------------------------------


def test_a_review_goes_only_to_its_seat_or_a_trusted_backend(stub: Any) -> None:
    token, actions = recorded(stub, "osirium", 3, seed=4, limit=24)
    base = {"state": token, "actions": actions}
    for fields in (
        {"seat": 1},
        {"seat": 1, "viewer": 0},
        {"all_seats": True, "viewer": 1},
        {"all_seats": True},
    ):
        err = call_error(
            lambda r, **kw: list(stub.ReviewGame(r, **kw)), request(**base, **fields), timeout=30
        )
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_details(err)[1] == "PRIVATE_REVIEW", err.details()
    mine = review(stub, **base, seat=1, viewer=1, seed=9)
    trusted = review(stub, **base, seat=1, trusted_backend=True, seed=9)
    assert [bare(m) for m in moves_of(mine)] == [bare(m) for m in moves_of(trusted)]
    everyone = review(stub, **base, all_seats=True, trusted_backend=True, seed=9)
    assert list(everyone[0].header.seats) == [0, 1, 2]
    assert {m.seat for m in moves_of(everyone)} == {0, 1, 2}
    assert [bare(m) for m in moves_of(everyone) if m.seat == 1] == [bare(m) for m in moves_of(mine)]


@pytest.mark.parametrize(("game", "players"), [("aton", 2), ("osirium", 2), ("osirium", 4)])
def test_twin_deals_give_the_same_review(stub: Any, game: str, players: int) -> None:
    """The review of a seat's decision is a function of what the seat could see: the state of
    the decision and a twin (everything hidden from the seat re-dealt) get the same review,
    and a decision's review inside a whole game's review is that one-decision review, so
    the whole review depends on the seat's views alone."""
    token, actions = recorded(stub, game, players, seed=6, limit=80)
    seat = 1
    whole = {
        m.move: bare(m)
        for m in moves_of(review(stub, state=token, actions=actions, seat=seat, viewer=seat, seed=7))
    }
    points, _ = replay(open_state(token), actions, [seat])
    rng = random.Random(6)
    checked = 0
    for p in [q for q in points if not q.forced][:6]:
        twin = p.state.sample_consistent_state(seat, rng)
        assert twin.view(seat) == p.state.view(seat) and twin.serialize() != p.state.serialize()
        one = [
            moves_of(review(stub, state=seal(s), actions=[p.played], seat=seat, viewer=seat, seed=7))
            for s in (p.state, twin)
        ]
        assert [bare(m) for m in one[0]] == [bare(m) for m in one[1]] == [whole[p.move]]
        checked += 1
    assert checked >= 3


def test_forced_moves_are_skipped_and_counted(stub: Any) -> None:
    token, actions = recorded(stub, "aton", 2, seed=21)
    points, _ = replay(open_state(token), actions)
    forced = [p for p in points if p.forced]
    assert forced, "the game has forced moves (a seed with none would test nothing)"
    stream = review(stub, state=token, actions=actions, all_seats=True, trusted_backend=True, seed=1)
    reviewed = {m.move for m in moves_of(stream)}
    assert reviewed.isdisjoint(p.move for p in forced)
    assert reviewed == {p.move for p in points if not p.forced}
    assert stream[0].header.forced_moves == len(forced)
    by_seat = {s.seat: s.forced_moves for s in stream[-1].summary.seats}
    assert by_seat == {s: sum(1 for p in forced if p.seat == s) for s in (0, 1)}


# ---------------------------------------------------------------------------------------
# Time, cancellation, admission
# ---------------------------------------------------------------------------------------


def test_a_review_out_of_time_ends_with_what_it_reviewed_and_continues_from_next_move(stub: Any) -> None:
    token, actions = recorded(stub, "aton", 2, seed=30)
    request = {"state": token, "actions": actions, "seat": 0, "viewer": 0, "seed": 2}
    full = moves_of(review(stub, **request))
    short = review(stub, max_seconds=0.05, **request)
    summary = short[-1].summary
    done = moves_of(short)
    assert summary.end == pb.REVIEW_END_DEADLINE and summary.moves_left > 0
    assert summary.moves_reviewed == len(done) and summary.moves_reviewed + summary.moves_left == len(full)
    assert summary.next_move == full[len(done)].move
    rest = review(stub, from_move=summary.next_move, **request)
    assert rest[-1].summary.end == pb.REVIEW_END_COMPLETE
    assert [bare(m) for m in done + moves_of(rest)] == [bare(m) for m in full]


def wait_idle(server: ServerProcess) -> None:
    """Wait (up to 20 s: the stopped searches reach their next cancel check) until no review
    runs, its searches' slots given back."""
    end = time.monotonic() + 20
    while total(scrape(server), "heka_reviews_in_flight") > 0:
        assert time.monotonic() < end, "a cancelled review kept running"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def one_slot(start_server: Any) -> ServerProcess:
    """One search worker and slot, no queue, one review at a time, long searches allowed."""
    return start_server(
        "--search-workers", "1", "--max-concurrent-searches", "1", "--max-queue-wait-seconds", "0",
        "--max-concurrent-reviews", "1", "--max-iterations", "1000000", HEKA_STATE_KEYS=KEY1,
    )  # fmt: skip


def test_cancelling_a_review_stops_its_searches(one_slot: ServerProcess) -> None:
    """A review whose first search would run for minutes: the header arrives before any
    search ends; the client cancels; the search stops, so the one worker serves the next
    call at once and no move was reviewed."""
    stub = one_slot.stub
    token, actions = recorded(stub, "osirium", 2, seed=5, limit=30)
    call = stub.ReviewGame(
        request(state=token, actions=actions, seat=0, viewer=0, iterations=1_000_000),
        timeout=300,
    )
    first = next(call)
    assert first.WhichOneof("item") == "header" and first.header.moves > 0
    wait_metric(one_slot, "heka_reviews_in_flight", 1)
    call.cancel()
    wait_metric(
        one_slot, "heka_grpc_server_handled_total", 1, grpc_method="ReviewGame", grpc_code="CANCELLED"
    )
    wait_idle(one_slot)
    # The worker is free again: a bot move that needs it is served well within its deadline.
    bot = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(iterations=50), seed=1)
    resp = stub.BotMove(pb.BotMoveRequest(state=token, bot=bot, viewer=0), timeout=20)
    assert resp.action.id >= 0
    samples = scrape(one_slot)
    assert total(samples, "heka_review_moves_total") == 0
    assert total(samples, "heka_reviews_in_flight") == 0


def test_a_full_pool_refuses_a_review_with_a_retry_hint(one_slot: ServerProcess) -> None:
    stub = one_slot.stub
    token, actions = recorded(stub, "aton", 2, seed=9, limit=30)
    slow = pb.BotSettings(kind=pb.BOT_KIND_MCTS, budget=pb.SearchBudget(milliseconds=3000), seed=1)
    holding = stub.BotMove.future(pb.BotMoveRequest(state=token, bot=slow, viewer=0), timeout=30)
    wait_metric(one_slot, "heka_searches_in_flight", 1)
    call = stub.ReviewGame(request(state=token, actions=actions, seat=0, viewer=0), timeout=30)
    with pytest.raises(grpc.RpcError) as info:
        next(call)  # refused before the header
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, info.value.details()
    reason, delay = retry_info(info.value)
    assert reason == "QUEUE_FULL" and delay is not None and delay > 0
    assert holding.result().action.id >= 0
    assert total(scrape(one_slot), "heka_reviews_refused_total", reason="queue_full") == 1


def test_reviews_past_the_process_limit_are_refused_with_a_retry_hint(one_slot: ServerProcess) -> None:
    stub = one_slot.stub
    cancelled = total(
        scrape(one_slot), "heka_grpc_server_handled_total", grpc_method="ReviewGame", grpc_code="CANCELLED"
    )
    token, actions = recorded(stub, "osirium", 2, seed=8, limit=30)
    long = stub.ReviewGame(
        request(state=token, actions=actions, seat=0, viewer=0, iterations=1_000_000),
        timeout=300,
    )
    assert next(long).WhichOneof("item") == "header"
    try:
        call = stub.ReviewGame(request(state=token, actions=actions, seat=0, viewer=0), timeout=30)
        with pytest.raises(grpc.RpcError) as info:
            next(call)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, info.value.details()
        reason, delay = retry_info(info.value)
        assert reason == "REVIEWS_FULL" and delay is not None and delay > 0
    finally:
        long.cancel()
    wait_metric(
        one_slot,
        "heka_grpc_server_handled_total",
        cancelled + 1,
        grpc_method="ReviewGame",
        grpc_code="CANCELLED",
    )
    wait_idle(one_slot)


def test_a_draining_server_ends_a_review_with_the_moves_reviewed(start_server: Any) -> None:
    """SIGTERM during a review: the searches running finish, no new one starts, and the
    stream ends with REVIEW_END_SHUTTING_DOWN and the move to continue from elsewhere."""
    server: ServerProcess = start_server(
        "--search-workers", "1", "--max-concurrent-searches", "1", HEKA_STATE_KEYS=KEY1
    )
    stub = server.stub
    token, actions = recorded(stub, "osirium", 2, seed=11, limit=60)
    call = stub.ReviewGame(
        request(state=token, actions=actions, seat=0, viewer=0, iterations=4000, seed=1),
        timeout=120,
    )
    got: list[pb.ReviewGameResponse] = [next(call)]
    stopper = threading.Timer(1.0, lambda: server.proc.send_signal(15))
    stopper.start()
    got.extend(call)
    stopper.join()
    summary = got[-1].summary
    assert summary.end == pb.REVIEW_END_SHUTTING_DOWN, summary
    assert summary.moves_left > 0 and summary.next_move > 0
    assert summary.moves_reviewed == len(moves_of(got))
    assert server.proc.wait(timeout=60) == 0


def test_review_metrics_count_calls_moves_and_grades(server: ServerProcess) -> None:
    stub = server.stub
    before = scrape(server)
    token, actions = recorded(stub, "aton", 2, seed=14, limit=50)
    stream = review(stub, state=token, actions=actions, seat=0, viewer=0, seed=3)
    moves = moves_of(stream)
    time.sleep(0.2)  # the duration is observed after the last message is sent
    after = scrape(server)

    def grew(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    assert grew("heka_review_moves_total", game="aton") == len(moves)
    for g in ("best", "blunder"):
        n = sum(1 for m in moves if m.grade == pb.MoveGrade.Value("MOVE_GRADE_" + g.upper()))
        assert grew("heka_review_moves_total", game="aton", grade=g) == n
    assert grew("heka_review_duration_seconds_count", game="aton") == 1
    assert grew("heka_grpc_server_handled_total", grpc_method="ReviewGame", grpc_code="OK") == 1
    assert total(after, "heka_reviews_in_flight") == 0


def test_from_move_may_name_the_last_action_and_no_later(stub: Any) -> None:
    token, actions = recorded(stub, "aton", 2, seed=1, limit=10)
    last = len(actions)  # a new game is at move 0: its first action is move 1
    messages = list(stub.ReviewGame(request(state=token, actions=actions, seat=0, viewer=0, from_move=last)))
    assert messages[-1].summary.end == pb.REVIEW_END_COMPLETE
    assert [m.move.move for m in messages if m.HasField("move")] in ([], [last])
    err = call_error(
        lambda r, **kw: list(stub.ReviewGame(r, **kw)),
        request(state=token, actions=actions, seat=0, viewer=0, from_move=last + 1),
        timeout=30,
    )
    assert err.details() == (
        f"from_move must be 0..{last}, the move number of the last of the {len(actions)} actions, "
        f"got {last + 1}"
    )


def test_a_review_waiting_to_try_a_full_queue_again_stops_when_its_call_ends() -> None:
    """A review refused by a full queue (its call admitted already) waits for the hint and
    tries again; it slept through its call's end and held its thread until a slot freed or
    HEKA_MAX_REVIEW_SECONDS ran out. Its call's end now stops it at once."""
    import types

    from service import review as service_review
    from service.workers import SearchQueue

    queue = SearchQueue(1, 0, 0.0)  # one slot, no queue: every try is refused while it is held
    other = queue.enter(None)
    queue.acquire(other)  # another call holds the slot

    class Pool:
        def __init__(self) -> None:
            self.queue = queue
            self.tries = 0

        def enter(self, deadline: float | None = None) -> Any:
            self.tries += 1
            return queue.enter(deadline)

        def acquire(self, entry: Any) -> Any:
            queue.acquire(entry)
            return types.SimpleNamespace(index=0)

        def take_free(self) -> None:
            return None

        def release(self, entry: Any) -> None:
            queue.release(entry)

        def cancel_call(self, entry: Any) -> None:
            queue.cancel(entry)

    class Context:
        search_entry = None

        def __init__(self) -> None:
            self.callbacks: list[Any] = []
            self.active = True

        def is_active(self) -> bool:
            return self.active

        def add_callback(self, callback: Any) -> bool:
            self.callbacks.append(callback)
            return True

        def time_remaining(self) -> None:
            return None

        def end(self) -> None:
            self.active = False
            for callback in self.callbacks:
                callback()

    pool, context = Pool(), Context()
    point = ReviewPoint(1, 0, None, 0, False)  # type: ignore[arg-type]
    plan = service_review.ReviewPlan(
        game=None,  # type: ignore[arg-type]
        points=[point, point],
        seats=[0],
        forced={0: 0},
        reviewer=reviewer("medium", 10),
        seed=1,
        end=None,  # type: ignore[arg-type]
        actions=2,
        workers=1,
        stop_at=time.monotonic() + 5.0,  # slept through, the review ran out of time instead
        compact=False,
    )
    searches = service_review._Searches(types.SimpleNamespace(searches=pool), plan, context)  # type: ignore[arg-type]
    ender = threading.Timer(0.3, context.end)
    ender.start()
    with pytest.raises(Exception, match="cancelled") as info:
        for _ in searches.run():
            pass
    assert getattr(info.value, "code", None) == grpc.StatusCode.CANCELLED
    assert searches.end != service_review.DEADLINE and pool.tries >= 1
