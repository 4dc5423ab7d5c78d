"""The health service (``grpc.health.v1.Health``): grpcio's asyncio servicer, whose ``Check``
of a service it does not know answers ``NOT_FOUND`` with an empty message; here the message
names the service asked for and the ones this server reports (docs/operations.md, "Configure").

``Watch`` streams hold memory until the client ends them (or the connection ages out), and
health calls are exempt from ``HEKA_MAX_CONCURRENT_RPCS`` so that probes answer under load: a
process holds at most :data:`MAX_WATCHERS` of them, for service names of at most
:data:`MAX_SERVICE_NAME` characters."""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2

#: ``Watch`` streams one process holds at once; one more is ``RESOURCE_EXHAUSTED``. Far above
#: what load balancers and probes open (one or a few per client channel).
MAX_WATCHERS = 1000
#: The longest service name a ``Check`` or ``Watch`` may ask for (the names heka reports are
#: a few dozen characters).
MAX_SERVICE_NAME = 200


class HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self._watching = 0

    async def _check_name(
        self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext
    ) -> None:
        if len(request.service) > MAX_SERVICE_NAME:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"service names are at most {MAX_SERVICE_NAME} characters, got {len(request.service):,}",
            )

    async def Check(self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext) -> Any:
        await self._check_name(request, context)
        if request.service not in self._server_status:
            known = ", ".join(repr(name) for name in sorted(self._server_status))
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"unknown service {request.service[:100]!r} for health checks: this server reports {known}",
            )
        return await super().Check(request, context)

    async def Watch(self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext) -> Any:
        await self._check_name(request, context)
        if self._watching >= MAX_WATCHERS:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this process holds {MAX_WATCHERS} health Watch streams: use Check, or watch from "
                "fewer channels",
            )
        self._watching += 1
        try:
            return await super().Watch(request, context)
        finally:
            self._watching -= 1
