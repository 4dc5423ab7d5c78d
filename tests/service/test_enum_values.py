"""Unknown enum values (proto3 enums are open): every enum field of every request, at any
depth, refuses a number its enum does not define with INVALID_ARGUMENT naming the field
and the number (docs/api.md, "Errors", UNKNOWN_ENUM_VALUE)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from service_helpers import ServerProcess, call_error, error_details

from service import enums
from service.gen.heka.v1 import game_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["GameService"]


def enum_paths(
    descriptor: Descriptor, prefix: tuple[FieldDescriptor, ...] = ()
) -> Iterator[tuple[FieldDescriptor, ...]]:
    """Every path from a request type to an enum field (request types are not recursive)."""
    for f in descriptor.fields:
        path = (*prefix, f)
        if f.enum_type is not None:
            yield path
        elif f.message_type is not None and f.message_type not in [p.message_type for p in prefix]:
            yield from enum_paths(f.message_type, path)


def with_value(
    descriptor: Descriptor, path: tuple[FieldDescriptor, ...], value: int, token: str = ""
) -> tuple[Any, str]:
    """A request of ``descriptor`` that is valid but for its field at ``path``, which holds
    ``value`` (a repeated field: one valid element, then ``value``), and the field's name as
    the service reports it."""
    from google.protobuf import message_factory

    request = message_factory.GetMessageClass(descriptor)()
    fields = descriptor.fields_by_name
    if "state" in fields:
        request.state = token
    elif "game" in fields:
        request.game = "osirium"
    for name in ("viewer", "player"):
        if name in fields:
            setattr(request, name, 0)
    message, names = request, []
    for f in path[:-1]:
        if f.is_repeated:
            message = getattr(message, f.name).add()
            if "seat" in f.message_type.fields_by_name:
                message.seat = 1
            names.append(f"{f.name}[0]")
        else:
            message = getattr(message, f.name)
            names.append(f.name)
    last = path[-1]
    if last.is_repeated:
        getattr(message, last.name).extend([last.enum_type.values[-1].number, value])
        names.append(f"{last.name}[1]")
    else:
        setattr(message, last.name, value)
        names.append(last.name)
    return request, ".".join(names)


@pytest.fixture(scope="module")
def token(server: ServerProcess) -> str:
    """An Osirium game of 2 where seat 0 is to act."""
    created = server.stub.CreateGame(pb.CreateGameRequest(game="osirium", num_players=2, seed=1))
    assert created.status.current_player == 0
    return str(created.state)


CASES = [
    (method, path, value)
    for method in SERVICE.methods
    for path in enum_paths(method.input_type)
    for value in (-1, 5000, 2**31 - 1)
]


def test_every_request_enum_is_covered() -> None:
    fields = {".".join(f.name for f in path) for _, path, _ in CASES}
    assert {"bot.kind", "bot.difficulty", "options.osirium.deities", "bots.bot.kind"} <= fields


@pytest.mark.parametrize(
    ("method", "path", "value"),
    CASES,
    ids=[f"{m.name}.{'.'.join(f.name for f in p)}={v}" for m, p, v in CASES],
)
def test_an_unknown_enum_value_is_refused_naming_the_field(
    server: ServerProcess, token: str, method: Any, path: tuple[FieldDescriptor, ...], value: int
) -> None:
    request, field = with_value(method.input_type, path, value, token)
    call = server.channel.unary_unary(
        f"/{SERVICE.full_name}/{method.name}",
        request_serializer=lambda m: m.SerializeToString(),
    )
    err = call_error(call, request, timeout=20)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    got_field, reason, _, _ = error_details(err)
    assert (got_field, reason) == (field, "UNKNOWN_ENUM_VALUE")
    assert f" {value} in {field}" in (err.details() or "")


def test_the_check_walks_maps_and_recursive_types() -> None:
    value = struct_pb2.Struct()
    value.fields["a"].list_value.values.add().null_value = struct_pb2.NULL_VALUE
    enums.check(value)
    value.fields["b"].struct_value.fields["c"].null_value = 7  # type: ignore[assignment]
    with pytest.raises(enums.UnknownEnumValue) as info:
        enums.check(value)
    assert info.value.field == "fields['b'].struct_value.fields['c'].null_value"
    assert info.value.value == 7


def test_known_values_pass() -> None:
    request = pb.CreateGameRequest(
        game="osirium",
        options=pb.GameOptions(osirium=pb.OsiriumOptions(deities=[pb.DEITY_ISIS, pb.DEITY_SETH])),
        bots=[pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_MCTS, difficulty=pb.DIFFICULTY_EXPERT))],
    )
    enums.check(request)
