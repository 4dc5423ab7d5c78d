"""The server interceptor (service/interceptors.py): request bodies decoded in the
interceptor, garbage refused, and the cap on concurrent calls counted from each call's
arrival until its task ends."""

from __future__ import annotations

from typing import Any


def test_interceptor_counts_calls_from_their_arrival_until_their_task_ends() -> None:
    """A call takes its place when gRPC asks for its handler, before its request is read, so a
    call whose request never comes holds one too; a call over the cap gets a handler that
    never reads its request. Health checks are neither counted nor refused."""
    import asyncio

    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.interceptors import ServerInterceptor

    interceptor = ServerInterceptor(access_log_enabled=False, max_concurrent_rpcs=2)
    handler = grpc.unary_unary_rpc_method_handler(
        lambda request, _context: request, request_deserializer=pb.GetViewRequest.FromString
    )

    async def continuation(_details: Any) -> grpc.RpcMethodHandler:
        return handler

    def details(method: str) -> Any:
        return type("Details", (), {"method": method, "invocation_metadata": ()})()

    get_view = details("/heka.v1.GameService/GetView")
    health = details("/grpc.health.v1.Health/Check")

    async def main() -> None:
        release = asyncio.Event()

        async def arrive(call_details: Any = get_view, *, hold: bool = True) -> grpc.RpcMethodHandler:
            chosen = await interceptor.intercept_service(continuation, call_details)
            if hold:
                await release.wait()  # its request never comes, until released
            return chosen

        held = [asyncio.create_task(arrive()) for _ in range(2)]
        await asyncio.sleep(0)
        assert interceptor.active == 2
        over = await asyncio.create_task(arrive(hold=False))  # a third call
        assert over.request_streaming and not over.response_streaming  # reads no request
        assert over.request_deserializer is None
        checks = [await asyncio.create_task(arrive(health, hold=False)) for _ in range(3)]
        assert all(not h.request_streaming for h in checks) and interceptor.active == 2
        held[1].cancel()  # a cancelled call frees its place
        await asyncio.gather(held[1], return_exceptions=True)
        await asyncio.sleep(0)
        assert interceptor.active == 1
        admitted = await asyncio.create_task(arrive(hold=False))
        assert not admitted.request_streaming  # the game service's own handler, wrapped
        await asyncio.sleep(0)
        assert interceptor.active == 1  # counted until its task ended
        release.set()
        await held[0]
        await asyncio.sleep(0)
        assert interceptor.active == 0

    asyncio.run(main())


def test_interceptor_refuses_garbage_in_its_deserializer() -> None:
    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.interceptors import ServerInterceptor, _Refused

    interceptor = ServerInterceptor(access_log_enabled=False, max_concurrent_rpcs=2)
    handler = grpc.unary_unary_rpc_method_handler(
        lambda request, _context: request, request_deserializer=pb.GetViewRequest.FromString
    )
    deserialize = interceptor._deserializer("/heka.v1.GameService/GetView", handler)
    garbage = deserialize(b"\xff\xff\xff")
    assert isinstance(garbage, _Refused) and garbage.error.reason == "bad_request_body"
    assert garbage.error.field == "" and "heka.v1.GetViewRequest" in garbage.error.message
    assert deserialize(pb.GetViewRequest(state="abc").SerializeToString()) == pb.GetViewRequest(state="abc")
    assert interceptor.active == 0  # decoding takes no place: arrival does
