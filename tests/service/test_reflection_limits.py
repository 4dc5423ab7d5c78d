"""Reflection streams are bounded per process (service/interceptors.py, MAX_STREAMS): each
holds the server's memory until its client ends it."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from service_helpers import KEY1, ServerProcess, error_details

from service.interceptors import MAX_STREAMS


@pytest.fixture(scope="module")
def server(start_server: Any) -> ServerProcess:
    return start_server("--search-workers", "1", HEKA_STATE_KEYS=KEY1)  # type: ignore[no-any-return]


LIST = reflection_pb2.ServerReflectionRequest(list_services="")


async def opened(stub: Any) -> Any | None:
    """A reflection stream that answered one request, or None (a write to a call the server
    has ended fails on the client's side, with a status of its own)."""
    call = stub.ServerReflectionInfo()
    try:
        await call.write(LIST)
        answer = await call.read()
    except Exception:
        return None
    assert answer.list_services_response.service
    return call


async def refused(stub: Any) -> grpc.aio.AioRpcError:
    """The status that ends a reflection stream at once, before it reads a request."""
    call = stub.ServerReflectionInfo()
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await asyncio.wait_for(call.read(), timeout=10)
    return info.value


def test_reflection_streams_are_capped_and_a_slot_frees_when_one_ends(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            held = []
            for _ in range(MAX_STREAMS):
                call = await opened(stub)
                assert call is not None
                held.append(call)
            error = await refused(stub)
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"holds {MAX_STREAMS} grpc.reflection.v1alpha.ServerReflection streams" in (
                error.details() or ""
            )
            assert error_details(error)[1] == "STREAMS_FULL"  # type: ignore[arg-type]
            held.pop().cancel()  # a client ends its stream
            for _ in range(50):  # the server sees the cancel on its next turns
                again = await opened(stub)
                if again is not None:
                    break
                await asyncio.sleep(0.05)
            else:
                pytest.fail("no reflection stream admitted after one ended")
            for call in [*held, again]:
                call.cancel()

    asyncio.run(scenario())
    assert server.proc.poll() is None
