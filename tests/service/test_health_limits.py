"""The health service's streams and names are bounded (service/health.py): Watch streams
hold memory until the client ends them, and health calls are exempt from the call cap."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from service import health


class Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code


class FakeContext:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def write(self, message: Any) -> None:
        self.sent.append(message)

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Aborted(code, details)


def test_watch_streams_are_capped_and_a_slot_frees_when_one_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "MAX_WATCHERS", 3)

    async def scenario() -> None:
        servicer = health.HealthServicer()
        request = health_pb2.HealthCheckRequest(service="")
        contexts = [FakeContext() for _ in range(3)]
        watchers = [asyncio.ensure_future(servicer.Watch(request, c)) for c in contexts]
        await asyncio.sleep(0.01)
        assert all(c.sent for c in contexts)  # each got the current status
        with pytest.raises(Aborted) as info:
            await servicer.Watch(request, FakeContext())
        assert info.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "holds 3 health Watch streams" in str(info.value)
        watchers[0].cancel()  # a client ends its stream
        await asyncio.sleep(0.01)
        again = asyncio.ensure_future(servicer.Watch(request, FakeContext()))
        await asyncio.sleep(0.01)
        assert not again.done()  # admitted: watching
        for w in [*watchers[1:], again]:
            w.cancel()
        await asyncio.gather(*watchers, again, return_exceptions=True)

    asyncio.run(scenario())


@pytest.mark.parametrize("method", ["Check", "Watch"])
def test_a_service_name_too_long_is_refused(method: str) -> None:
    async def scenario() -> None:
        servicer = health.HealthServicer()
        request = health_pb2.HealthCheckRequest(service="x" * 30_000)
        with pytest.raises(Aborted) as info:
            await getattr(servicer, method)(request, FakeContext())
        assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "at most 200 characters, got 30,000" in str(info.value)

    asyncio.run(scenario())
