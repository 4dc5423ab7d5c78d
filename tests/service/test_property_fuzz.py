"""Property-based fuzzing of every RPC a real server serves (docs/security.md, the promises).

The request bodies come from the message descriptors (tests/service/proto_strategies.py):
every field of every request type at any depth, with edge and out-of-range numbers, unknown
enum numbers, two members of a oneof, huge repeated fields, long and non-UTF-8 strings,
unknown fields, and ``state`` tokens that are real (from CreateGame, and positions sealed
with the server's test key), altered (bits flipped, cut short, spliced with another game's)
or foreign. Bodies are sent as raw bytes, so that what no encoder writes is sent too.

For every call: the status is never ``UNKNOWN``, ``INTERNAL`` or ``DATA_LOSS``, nor a
``DEADLINE_EXCEEDED`` of the client's deadline (a hang); an error carries a message; a
GameService error carries the service's ``ErrorInfo`` (only gRPC itself answers a body over
the request cap, before the service sees it); ``CANCELLED`` and ``UNAVAILABLE`` only with
the service's reason; an ``OK`` answer decodes as the method's response type. After the run
the server's log holds no ERROR line and no traceback, and the server stops cleanly.

The RPCs are those of the services' descriptors, so that a new RPC is fuzzed as it is
added; the test checks that they are all the services the server lists by reflection.

Bounded and seeded (Hypothesis ``derandomize``, no example database): ``make test`` runs
``HEKA_FUZZ_EXAMPLES`` examples in all (default 390: 37 for each GameService RPC, 19 for each
health and reflection one; about 15 s on 2 loaded cores); ``make fuzz`` runs thousands, and
``HEKA_FUZZ_SEED`` (``make fuzz FUZZ_SEED=N``) draws other bodies than the derandomized ones.
``pytest -s`` prints the tally (examples, RPCs, status codes, reasons).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
import random
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, ServiceDescriptor
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from proto_strategies import Schema, ints, tokens
from service_helpers import KEY1, KEY_OTHER, ServerProcess

from engine import get_game
from service.envelope import KeyRing, parse_keys
from service.gen.heka.v1 import game_service_pb2 as pb

GAME_SERVICE = pb.DESCRIPTOR.services_by_name["GameService"]
HEALTH = health_pb2.DESCRIPTOR.services_by_name["Health"]
REFLECTION = reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"]
#: The services fuzzed, by the name the server serves them under, with their descriptors:
#: reflection v1 is v1alpha's messages under another package name (service/reflection.py).
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
SERVICES: dict[str, ServiceDescriptor] = {
    GAME_SERVICE.full_name: GAME_SERVICE,
    HEALTH.full_name: HEALTH,
    REFLECTION.full_name: REFLECTION,
    REFLECTION_V1: REFLECTION,
}

#: Examples in all, shared out between the RPCs (make fuzz sets more).
EXAMPLES = int(os.environ.get("HEKA_FUZZ_EXAMPLES", "390"))
#: A seed for other bodies than the derandomized ones (make fuzz FUZZ_SEED=N); none: the same
#: bodies every run.
SEED = os.environ.get("HEKA_FUZZ_SEED") or None
#: Shares of the examples: the game service's RPCs get twice those of health and reflection.
SHARES = {"heka.v1.GameService": 2}
#: The server's request cap (HEKA_MAX_REQUEST_BYTES, its default): huge fields go up to it.
MAX_REQUEST_BYTES = 64 * 1024
#: A call's deadline: every call of this server's small caps ends far sooner; one that
#: reaches it hangs.
CALL_TIMEOUT = 30.0

#: Codes no request may get.
FORBIDDEN = {"UNKNOWN", "INTERNAL", "DATA_LOSS"}


@dataclasses.dataclass(frozen=True)
class Rpc:
    service: str
    name: str
    request: Descriptor
    response: Any  # message class
    client_streaming: bool
    server_streaming: bool

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.name}"


def every_rpc() -> list[Rpc]:
    """Every method of :data:`SERVICES`, from the descriptors."""
    return [
        Rpc(
            name,
            m.name,
            m.input_type,
            message_factory.GetMessageClass(m.output_type),
            m.client_streaming,
            m.server_streaming,
        )
        for name, service in SERVICES.items()
        for m in service.methods
    ]


# ---------------------------------------------------------------------------------------
# Calls and what they must answer
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    code: str
    details: str = ""
    reason: str | None = None  # ErrorInfo.reason of a heka error
    domain: str | None = None
    field: str | None = None  # the BadRequest violation's field
    responses: list[bytes] = dataclasses.field(default_factory=list)


def _rich(err: grpc.RpcError) -> tuple[str | None, str | None, str | None]:
    """An error's ErrorInfo reason and domain and its BadRequest field (None: absent)."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    reason = domain = field = None
    try:
        status = rpc_status.from_call(err)  # type: ignore[arg-type]
    except ValueError:  # details that do not match the status: not the service's
        return None, None, None
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, domain = info.reason, info.domain
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            field = bad.field_violations[0].field if bad.field_violations else None
    return reason, domain, field


def send(channel: grpc.Channel, rpc: Rpc, body: bytes) -> Outcome:
    """One call with a raw body (identity serializers). A server stream (health Watch,
    which never ends) counts as answered at its first message, then is cancelled."""
    try:
        if rpc.client_streaming:
            call = channel.stream_stream(rpc.path)
            responses = list(call(iter([body]), timeout=CALL_TIMEOUT))
        elif rpc.server_streaming:
            stream = channel.unary_stream(rpc.path)(body, timeout=CALL_TIMEOUT)
            responses = [next(stream)]
            stream.cancel()
        else:
            responses = [channel.unary_unary(rpc.path)(body, timeout=CALL_TIMEOUT)]
        return Outcome("OK", responses=responses)
    except grpc.RpcError as err:
        code = err.code()
        reason, domain, field = _rich(err)
        name = code.name if code is not None else "UNKNOWN"
        return Outcome(name, err.details() or "", reason, domain, field)


def problems(rpc: Rpc, body: bytes, outcome: Outcome) -> list[str]:
    """What is wrong with ``outcome`` as the answer to ``body``."""
    out = []
    code = outcome.code
    if code in FORBIDDEN:
        out.append(f"answered {code}")
    if code == "DEADLINE_EXCEEDED" and outcome.reason is None:
        out.append(f"no answer within {CALL_TIMEOUT:g} s (a hang)")
    if code != "OK" and not outcome.details.strip():
        out.append(f"{code} without a message")
    if code in ("CANCELLED", "UNAVAILABLE") and outcome.reason is None:
        out.append(f"a bare {code} (no reason: the client cannot tell whether to retry)")
    over_cap = code == "RESOURCE_EXHAUSTED" and len(body) > MAX_REQUEST_BYTES
    ours = rpc.service == GAME_SERVICE.full_name and code != "OK" and not over_cap
    if ours and (outcome.domain != "heka.v1" or not outcome.reason):
        out.append(f"{code} without the service's ErrorInfo")
    for raw in outcome.responses:
        try:
            rpc.response.FromString(raw)
        except Exception as exc:
            out.append(f"an OK answer that is not a {rpc.response.DESCRIPTOR.full_name}: {exc}")
    return out


@dataclasses.dataclass
class Tally:
    """What a run sent and got: examples and status codes per RPC, heka error reasons, body kinds."""

    codes: dict[str, collections.Counter[str]] = dataclasses.field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    reasons: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    kinds: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    #: Per reason: the fields named, and the first message.
    fields: dict[str, set[str]] = dataclasses.field(default_factory=lambda: collections.defaultdict(set))
    messages: dict[str, str] = dataclasses.field(default_factory=dict)

    def add(self, rpc: Rpc, kind: str, outcome: Outcome) -> None:
        self.codes[rpc.path][outcome.code] += 1
        self.kinds[kind] += 1
        if outcome.reason:
            self.reasons[outcome.reason] += 1
            self.fields[outcome.reason].add("(none)" if outcome.field is None else outcome.field or '""')
            self.messages.setdefault(outcome.reason, outcome.details)

    @property
    def examples(self) -> int:
        return sum(sum(c.values()) for c in self.codes.values())

    def total(self, code: str) -> int:
        return sum(c[code] for c in self.codes.values())

    def summary(self) -> str:
        all_codes = collections.Counter[str]()
        for counter in self.codes.values():
            all_codes.update(counter)
        lines = [f"property fuzz: {self.examples} examples, {len(self.codes)} RPCs"]
        for path, counter in sorted(self.codes.items()):
            shown = ", ".join(f"{c} {n}" for c, n in counter.most_common())
            lines.append(f"  {path:62s} {sum(counter.values()):6d}  {shown}")
        lines.append("  status codes: " + ", ".join(f"{c} {n}" for c, n in all_codes.most_common()))
        lines.append(f"  UNKNOWN {all_codes['UNKNOWN']}, INTERNAL {all_codes['INTERNAL']}")
        lines.append("  heka reasons: " + ", ".join(f"{r} {n}" for r, n in self.reasons.most_common()))
        lines.append("  bodies: " + ", ".join(f"{k} {n}" for k, n in self.kinds.most_common()))
        lines.append("  per reason, the fields named and the first message:")
        for reason, _ in self.reasons.most_common():
            fields = sorted(self.fields[reason])
            shown = ", ".join(fields[:8]) + (f", ... ({len(fields)} in all)" if len(fields) > 8 else "")
            lines.append(f"    {reason}: {shown}: {self.messages[reason][:110]!r}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Real games: tokens, legal actions, valid bodies
# ---------------------------------------------------------------------------------------


class Position(NamedTuple):
    """A game reached through the server: its seat to act and one of its legal actions."""

    game: str
    players: int
    token: str
    seat: int
    action: int


@dataclasses.dataclass
class Games:
    tokens: list[tuple[str, str]]  # (game, token), all valid on the server
    action_ids: list[int]
    action_texts: list[str]
    foreign: list[str]  # sealed with another deployment's key
    texts: list[str]  # state texts of real positions (the engine's serialisation)
    corpus: dict[str, list[bytes]]  # valid bodies by RPC name


def real_games(server: ServerProcess) -> Games:
    """Games created through CreateGame and played a few moves on, and positions played
    in-process to the middle and to the end and sealed with the server's key."""
    stub = server.stub
    found: list[Position] = []
    ids: set[int] = set()
    texts: set[str] = set()
    for game, players, options in (
        ("aton", 2, None),
        ("osirium", 2, None),
        ("osirium", 3, None),
        ("osirium", 4, pb.GameOptions(osirium=pb.OsiriumOptions(teams=True))),
    ):
        created = stub.CreateGame(
            pb.CreateGameRequest(game=game, num_players=players, seed=players, options=options)
        )
        token, seat = created.state, created.status.current_player
        for _ in range(3):
            actions = stub.ListLegalActions(pb.ListLegalActionsRequest(state=token, viewer=seat)).actions
            found.append(Position(game, players, token, seat, actions[0].id))
            ids.update(a.id for a in actions)
            texts.update(a.text for a in actions)
            applied = stub.ApplyAction(
                pb.ApplyActionRequest(state=token, action_id=actions[-1].id, player=seat)
            )
            token, seat = applied.state, applied.status.current_player
    ring = KeyRing(parse_keys(KEY1))
    other = KeyRing(parse_keys(KEY_OTHER))
    rng = random.Random(25)
    positions = []
    for game, players in (("aton", 2), ("osirium", 2), ("osirium", 3)):
        state = get_game(game).new_initial_state(players, rng.randrange(2**32))
        for ply in range(100_000):
            if state.is_terminal():
                break
            if ply in (40, 120):
                positions.append((game, state.serialize()))
            state.apply(rng.choice(state.legal_actions()))
        positions.append((game, state.serialize()))  # over
    sealed = [(game, ring.seal(text)) for game, text in positions]
    all_tokens = [(p.game, p.token) for p in found] + sealed
    corpus = valid_bodies(found)
    for name, bodies in corpus.items():  # they are valid: each is answered OK
        (rpc,) = [r for r in every_rpc() if r.name == name and r.service != REFLECTION_V1]
        for body in bodies:
            assert send(server.channel, rpc, body).code == "OK", (name, rpc.request.name)
    return Games(
        tokens=all_tokens,
        action_ids=sorted(ids),
        action_texts=sorted(texts),
        foreign=[other.seal(text) for _, text in positions],
        texts=[text for _, text in positions],
        corpus=corpus,
    )


def valid_bodies(found: Sequence[Position]) -> dict[str, list[bytes]]:
    """A few well-formed requests per GameService RPC on real tokens: mutated, they reach
    deeper than random bodies do. (An RPC without an entry is fuzzed from its schema only.)"""
    out: dict[str, list[bytes]] = collections.defaultdict(list)
    random_bot = pb.BotSettings(kind=pb.BOT_KIND_RANDOM)
    greedy = pb.BotSettings(kind=pb.BOT_KIND_GREEDY)
    for game, players, token, seat, action in found[::2]:
        requests: dict[str, Any] = {
            "CreateGame": pb.CreateGameRequest(
                game=game, seed=seat, viewer=0, include_view=True, include_legal_actions=True,
                bots=[pb.BotSeat(seat=1, bot=random_bot)], max_bot_moves=2,
            ),
            "GetView": pb.GetViewRequest(state=token, viewer=seat, include_legal_actions=True, game=game),
            "ListLegalActions": pb.ListLegalActionsRequest(state=token, viewer=seat, compact_actions=True),
            "ApplyAction": pb.ApplyActionRequest(state=token, action_id=action, player=seat, viewer=seat),
            "BotMove": pb.BotMoveRequest(state=token, viewer=seat, bot=random_bot, include_view=True),
            "AdvanceBots": pb.AdvanceBotsRequest(
                state=token, max_bot_moves=3, viewer=0,
                bots=[pb.BotSeat(seat=s, bot=greedy) for s in range(players)],
            ),
            "DecodeState": pb.DecodeStateRequest(state=token),
        }  # fmt: skip
        for name, request in requests.items():
            out[name].append(request.SerializeToString())
    out["ListGames"].append(b"")
    out["Check"] += [
        health_pb2.HealthCheckRequest(service=s).SerializeToString() for s in ("", GAME_SERVICE.full_name)
    ]
    out["ServerReflectionInfo"] += [
        reflection_pb2.ServerReflectionRequest(list_services="").SerializeToString(),
        reflection_pb2.ServerReflectionRequest(
            file_containing_symbol="heka.v1.GameService"
        ).SerializeToString(),
    ]
    return dict(out)


@st.composite
def resealed_texts(draw: st.DrawFn, texts: Sequence[str]) -> str:
    """A real position's state text, altered (a character changed, cut short, a number
    changed), in a previous-release (v1) token under the server's key: such tokens are
    checked in full when opened (service/servicer.py, ``_open_with_text``)."""
    text = draw(st.sampled_from(list(texts)))
    how = draw(st.sampled_from(["char", "cut", "number"]))
    if how == "cut":
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif how == "char":
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(list("0123456789:,;-|.xAZ "))) + text[at + 1 :]
    else:
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        at = draw(st.sampled_from(digits))
        text = text[:at] + draw(st.sampled_from(["99", "-1", "4294967296", "", "00"])) + text[at + 1 :]
    return KeyRing(parse_keys(KEY1), version=1).seal(text)


def hints(games: Games) -> dict[str, st.SearchStrategy[Any]]:
    """Values of the fields that a well-behaved client sets, by field name (each field also
    gets the generic values of its type)."""
    seat = ints(-1, 4)
    return {
        "state": tokens(games.tokens, extra=[st.sampled_from(games.foreign), resealed_texts(games.texts)]),
        "game": st.sampled_from(["aton", "osirium", "Osirium", " ATON ", "", "chess"]),
        "viewer": seat,
        "player": seat,
        "seat": seat,
        "num_players": ints(0, 6),
        "action_id": st.one_of(st.sampled_from(games.action_ids), ints(-2, 600, 2**31 - 1)),
        "action_text": st.one_of(
            st.sampled_from(games.action_texts),
            st.sampled_from(games.action_texts).map(lambda s: f"  {s.upper()} "),
            # Its last number made long (past int()'s 4,300 digits) or non-ASCII, or padded.
            st.tuples(
                st.sampled_from(games.action_texts), st.sampled_from(["9" * 5000, "\u0663", " " * 300])
            ).map("".join),
        ),
        "max_bot_moves": ints(0, 12),
        "iterations": ints(0, 250),
        "milliseconds": st.one_of(
            st.floats(0, 60), st.sampled_from([1.0, 0.999, 40.0, 40.001, 1e-300, math.nan])
        ),
        "workers": ints(0, 3),
        "diagnostics_top_k": ints(0, 101),
        "target_rating": ints(-50, 2500),
        "seed": ints(0, 10, 2**64 - 1),
        "service": st.sampled_from(["", GAME_SERVICE.full_name, HEALTH.full_name, "nope"]),
        "file_containing_symbol": st.sampled_from(
            ["heka.v1.GameService", "heka.v1.ApplyActionRequest", "grpc.health.v1.Health", "nope", ""]
        ),
        "file_by_filename": st.sampled_from(
            ["heka/v1/game_service.proto", "grpc/health/v1/health.proto", "nope.proto", ""]
        ),
        "containing_type": st.sampled_from(["heka.v1.CreateGameRequest", "nope"]),
        "list_services": st.just(""),
    }


# ---------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_server(start_server: Any) -> Iterator[ServerProcess]:
    """A server of its own (its log must hold nothing but this run), with small search caps
    so that no bot call takes long, and DecodeState on."""
    server: ServerProcess = start_server(
        "--search-workers", "1",
        "--trusted-decode",
        "--max-iterations", "200",
        "--max-milliseconds", "40",
        "--max-advance-moves", "8",
        HEKA_STATE_KEYS=KEY1,
    )  # fmt: skip
    yield server
    server.stop()


def log_levels(server: ServerProcess) -> collections.Counter[str]:
    return collections.Counter(str(line.get("level", "not JSON")) for line in server.log_lines())


def served_services(channel: grpc.Channel) -> set[str]:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    (response,) = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
    return {s.name for s in response.list_services_response.service}


def fuzz_one(
    channel: grpc.Channel, rpc: Rpc, schema: Schema, *, corpus: list[bytes], examples: int, tally: Tally
) -> None:
    """Hypothesis on one RPC: ``examples`` bodies, derandomized (the same ones every run)
    unless :data:`SEED` is set; no example database (nothing written into the checkout)."""

    @settings(
        max_examples=examples,
        derandomize=SEED is None,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        print_blob=SEED is not None,
    )
    @given(st.data())
    def run(data: st.DataObject) -> None:
        kind, body = data.draw(schema.bodies(rpc.request, corpus), label="body")
        outcome = send(channel, rpc, body)
        tally.add(rpc, kind, outcome)
        found = problems(rpc, body, outcome)
        assert not found, (
            f"{rpc.path}: {'; '.join(found)}: details {outcome.details[:200]!r} "
            f"for a {kind} body of {len(body)} bytes: {body[:300].hex()}"
        )

    (run if SEED is None else seed(int(SEED))(run))()


def test_no_request_to_any_rpc_is_answered_unknown_or_internal(fuzz_server: ServerProcess) -> None:
    server = fuzz_server
    rpcs = every_rpc()
    assert {r.service for r in rpcs} == served_services(server.channel), "a served service is not fuzzed"
    games = real_games(server)
    schema = Schema(hints=hints(games), max_body_bytes=MAX_REQUEST_BYTES)
    tally = Tally()
    share = EXAMPLES / sum(SHARES.get(r.service, 1) for r in rpcs)
    for rpc in rpcs:
        examples = max(1, round(share * SHARES.get(rpc.service, 1)))
        fuzz_one(
            server.channel, rpc, schema, corpus=games.corpus.get(rpc.name, []), examples=examples, tally=tally
        )
    print("\n" + tally.summary())
    print(
        "  server log lines by level: " + ", ".join(f"{k} {n}" for k, n in log_levels(server).most_common())
    )

    assert set(tally.codes) == {r.path for r in rpcs}, "an RPC got no example"
    assert tally.total("UNKNOWN") == tally.total("INTERNAL") == 0
    # The bodies reach the handlers: answers and the service's refusals of many kinds.
    assert tally.total("OK") > 0 and tally.total("INVALID_ARGUMENT") > 0
    assert {"BAD_REQUEST_BODY", "BAD_TOKEN", "UNKNOWN_ENUM_VALUE", "TWO_ONEOF_MEMBERS"} <= set(tally.reasons)

    assert server.stop() == 0
    errors = [
        line
        for line in server.log_lines()
        if line.get("level") in ("error", "critical") or "exc" in line or "Traceback" in line.get("raw", "")
    ]
    assert not errors, errors[:5]


def test_the_bodies_are_the_same_every_run() -> None:
    """The strategies are deterministic given Hypothesis's choices: derandomized runs of
    the same settings send the same bodies (so a failure in CI reproduces)."""
    schema = Schema(max_body_bytes=MAX_REQUEST_BYTES)
    rpc = next(r for r in every_rpc() if r.name == "CreateGame")

    def bodies() -> list[bytes]:
        seen: list[bytes] = []

        @settings(max_examples=25, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(schema.bodies(rpc.request))
        def collect(kind_body: tuple[str, bytes]) -> None:
            seen.append(kind_body[1])

        collect()
        return seen

    first = bodies()
    assert first == bodies()
    assert len(set(first)) > 15


def test_the_checks_catch_a_broken_server() -> None:
    """Against a server whose handlers fail the ways the checks look for, every answer is
    flagged: UNKNOWN (a handler raised), a bare CANCELLED, an error without a message or
    without the service's ErrorInfo, an OK answer that is not the response type."""
    from concurrent import futures

    def raises(_request: bytes, _context: Any) -> bytes:
        raise RuntimeError("a bug")

    def cancelled(_request: bytes, context: Any) -> bytes:
        context.abort(grpc.StatusCode.CANCELLED, "")

    def bare(_request: bytes, context: Any) -> bytes:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no details")

    def junk(_request: bytes, _context: Any) -> bytes:
        return b"\xff\xff"

    handlers = {"ListGames": raises, "GetView": cancelled, "CreateGame": bare, "DecodeState": junk}
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                GAME_SERVICE.full_name,
                {name: grpc.unary_unary_rpc_method_handler(h) for name, h in handlers.items()},
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            found = {
                rpc.name: problems(rpc, b"", send(channel, rpc, b""))
                for rpc in every_rpc()
                if rpc.name in handlers and rpc.service == GAME_SERVICE.full_name
            }
    finally:
        server.stop(None)
    assert "answered UNKNOWN" in found["ListGames"]
    assert "a bare CANCELLED (no reason: the client cannot tell whether to retry)" in found["GetView"]
    assert "CANCELLED without a message" in found["GetView"]
    assert found["CreateGame"] == ["INVALID_ARGUMENT without the service's ErrorInfo"]
    assert found["DecodeState"][0].startswith("an OK answer that is not a heka.v1.DecodeStateResponse")
