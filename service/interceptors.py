"""The server interceptor (asyncio server): error mapping, metrics and access logs for every unary RPC.

Everything cross-cutting happens here, once: the handler runs; an exception becomes a
status with rich details (:func:`service.errors.to_service_error`); the started/handled
counters and the latency histogram move; one JSON access-log line is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from service import metrics
from service.errors import to_service_error

access_log = logging.getLogger("heka.access")

_HEALTH = "grpc.health.v1.Health"


def _split(method: str) -> tuple[str, str]:
    service, _, name = method.lstrip("/").partition("/")
    return service, name


class ServerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps every unary handler of the asyncio server once per method (gRPC asks per call;
    the wrapped handler, its metric children and its access-log prefix are cached, so a
    call pays only for the work itself)."""

    def __init__(self, *, access_log_enabled: bool = True) -> None:
        self.access_log_enabled = access_log_enabled
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None:
            return cached
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler  # unknown method, or streaming (health Watch, reflection): as is
        # One event loop thread: no lock needed.
        return self._wrapped.setdefault(method, self._wrap(method, handler))

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        service, name = _split(method)
        inner = handler.unary_unary
        started = metrics.RPC_STARTED.labels(service, name)
        seconds = metrics.RPC_SECONDS.labels(service, name)
        handled: dict[grpc.StatusCode, Any] = {}
        quiet = service == _HEALTH
        log_enabled = self.access_log_enabled
        log_prefix = f'"logger": "heka.access", "msg": "rpc", "method": {json.dumps(method)}, "code": "'

        async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> Any:
            start = time.perf_counter()
            started.inc()
            code = grpc.StatusCode.OK
            message = ""
            try:
                response = inner(request, context)
                if inspect.isawaitable(response):
                    response = await response
                remaining = context.time_remaining()
                if remaining is not None and remaining < 0:
                    code = grpc.StatusCode.DEADLINE_EXCEEDED
                return response
            except asyncio.CancelledError:  # the client cancelled, or the server stops
                code = grpc.StatusCode.CANCELLED
                raise
            except grpc.aio.AbortError:  # the handler called context.abort itself
                code = _aborted_code(context) or grpc.StatusCode.UNKNOWN
                raise
            except Exception as exc:
                err = to_service_error(exc)
                code, message = err.code, err.message
                if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
                    metrics.INVALID_REQUESTS.labels(err.reason).inc()
                await context.abort_with_status(err.to_status())
                raise  # unreachable: abort_with_status raises
            finally:
                elapsed = time.perf_counter() - start
                counter = handled.get(code)
                if counter is None:
                    counter = handled[code] = metrics.RPC_HANDLED.labels(service, name, code.name)
                counter.inc()
                seconds.observe(elapsed)
                if log_enabled:
                    level = logging.DEBUG if quiet else logging.INFO
                    if access_log.isEnabledFor(level):
                        _write_line(level, log_prefix, code.name, elapsed, peer=context.peer(), error=message)

        return grpc.unary_unary_rpc_method_handler(
            wrapped,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


_LEVEL_NAMES = {logging.DEBUG: "debug", logging.INFO: "info"}
_ts_cache: list[tuple[int, str]] = [(-1, "")]


def _timestamp(now: float) -> str:
    """ISO-8601 UTC with milliseconds; the seconds part is formatted once per second."""
    second = int(now)
    cached = _ts_cache[0]
    if cached[0] != second:
        cached = _ts_cache[0] = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return f"{cached[1]}.{int(now * 1000) % 1000:03d}+00:00"


def _write_line(level: int, prefix: str, code: str, elapsed: float, *, peer: str, error: str) -> None:
    """One JSON access-log line on stderr, in the format of :class:`service.server.JsonFormatter`,
    built directly: the ``logging`` machinery would cost more than the RPC it logs."""
    line = (
        f'{{"ts": "{_timestamp(time.time())}", "level": "{_LEVEL_NAMES.get(level, "info")}", '
        f'{prefix}{code}", "duration_ms": {elapsed * 1000:.3f}, "peer": {json.dumps(peer)}'
    )
    if error:
        line += f', "error": {json.dumps(error)}'
    _emit(line + "}\n")


def _emit(line: str) -> None:
    """One write(2) per line on stderr's file descriptor: lines from concurrent calls never
    interleave (a single write of a short line is atomic on pipes and O_APPEND files), and
    no Python lock is held during the system call."""
    with contextlib.suppress(OSError):  # stderr closed
        os.write(_STDERR_FD, line.encode())


_STDERR_FD = 2


def _aborted_code(context: grpc.ServicerContext) -> grpc.StatusCode | None:
    try:
        code = context.code()
    except AttributeError:
        return None
    if code is None or code == grpc.StatusCode.OK:
        return None
    if isinstance(code, int):  # pragma: no cover - older grpcio returns the int
        return next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)
    return code  # type: ignore[no-any-return,unused-ignore]
