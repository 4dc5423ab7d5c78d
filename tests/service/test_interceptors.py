"""The server interceptor (service/interceptors.py): request bodies decoded in the
interceptor, garbage refused, and the cap on concurrent calls counted until each call's
task ends."""

from __future__ import annotations

from typing import Any


def test_interceptor_decodes_refuses_garbage_and_counts_calls_until_their_task_ends() -> None:
    import asyncio

    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.interceptors import ServerInterceptor, _Refused

    interceptor = ServerInterceptor(access_log_enabled=False, max_concurrent_rpcs=2)
    handler = grpc.unary_unary_rpc_method_handler(
        lambda request, _context: request, request_deserializer=pb.GetViewRequest.FromString
    )
    deserialize = interceptor._deserializer("/heka.v1.GameService/GetView", handler, limited=True)
    body = pb.GetViewRequest(state="abc").SerializeToString()

    async def main() -> list[Any]:
        release = asyncio.Event()

        async def call(raw: bytes) -> Any:
            request = deserialize(raw)
            await release.wait()
            return request

        async def quick(raw: bytes) -> Any:
            return deserialize(raw)

        first = [asyncio.create_task(call(body)) for _ in range(2)]
        await asyncio.sleep(0)
        assert interceptor.active == 2
        over = await asyncio.create_task(quick(body))  # a third call
        first[1].cancel()  # a cancelled call frees its slot too
        await asyncio.gather(first[1], return_exceptions=True)
        await asyncio.sleep(0)
        assert interceptor.active == 1
        garbage = await asyncio.create_task(quick(b"\xff\xff\xff"))
        await asyncio.sleep(0)
        assert interceptor.active == 1  # the garbage call was counted until its task ended
        release.set()
        done = await first[0]
        await asyncio.sleep(0)
        return [over, garbage, done]

    over, garbage, done = asyncio.run(main())
    assert isinstance(over, _Refused) and over.error.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert over.error.reason == "overloaded" and over.error.retry_after == 0.25
    assert isinstance(garbage, _Refused) and garbage.error.reason == "bad_request_body"
    assert garbage.error.field == "" and "heka.v1.GetViewRequest" in garbage.error.message
    assert done == pb.GetViewRequest(state="abc")
    assert interceptor.active == 0
