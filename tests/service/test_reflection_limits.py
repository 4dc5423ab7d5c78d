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


def test_reflection_streams_are_capped_and_a_slot_frees_when_one_ends(server: ServerProcess) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            held = []
            for _ in range(MAX_STREAMS):
                call = stub.ServerReflectionInfo()
                await call.write(LIST)
                answer = await call.read()  # admitted: it answers
                assert answer.list_services_response.service
                held.append(call)
            extra = stub.ServerReflectionInfo()
            await extra.write(LIST)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await extra.read()
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"holds {MAX_STREAMS} grpc.reflection.v1alpha.ServerReflection streams" in (
                info.value.details() or ""
            )
            assert error_details(info.value)[1] == "STREAMS_FULL"  # type: ignore[arg-type]
            held.pop().cancel()  # a client ends its stream
            for _ in range(50):  # the server sees the cancel on its next turns
                again = stub.ServerReflectionInfo()
                await again.write(LIST)
                try:
                    assert (await again.read()).list_services_response.service
                    break
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    await asyncio.sleep(0.05)
            else:
                pytest.fail("no reflection stream admitted after one ended")
            for call in [*held, again]:
                call.cancel()

    asyncio.run(scenario())
    assert server.proc.poll() is None
