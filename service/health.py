"""The health service (``grpc.health.v1.Health``): grpcio's asyncio servicer, whose ``Check``
of a service it does not know answers ``NOT_FOUND`` with an empty message; here the message
names the service asked for and the ones this server reports (docs/operations.md, "Configure")."""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2


class HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]
    async def Check(self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext) -> Any:
        if request.service not in self._server_status:
            known = ", ".join(repr(name) for name in sorted(self._server_status))
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"unknown service {request.service[:100]!r} for health checks: this server reports {known}",
            )
        return await super().Check(request, context)
