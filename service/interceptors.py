"""The server interceptor: error mapping, metrics and access logs for every unary RPC.

Everything cross-cutting happens here, once: the handler runs; an exception becomes a
status with rich details (:func:`service.errors.to_service_error`); the started/handled
counters and the latency histogram move; one JSON access-log line is written.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc

from service import metrics
from service.errors import to_service_error

access_log = logging.getLogger("heka.access")

_HEALTH = "grpc.health.v1.Health"


def _split(method: str) -> tuple[str, str]:
    service, _, name = method.lstrip("/").partition("/")
    return service, name


class ServerInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, *, access_log_enabled: bool = True) -> None:
        self.access_log_enabled = access_log_enabled

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler  # streaming methods (health Watch, reflection) pass through
        method = handler_call_details.method
        service, name = _split(method)
        inner = handler.unary_unary
        started = metrics.RPC_STARTED.labels(service, name)
        seconds = metrics.RPC_SECONDS.labels(service, name)
        quiet = service == _HEALTH
        log_enabled = self.access_log_enabled

        def wrapped(request: Any, context: grpc.ServicerContext) -> Any:
            start = time.perf_counter()
            started.inc()
            code = grpc.StatusCode.OK
            message = ""
            try:
                response = inner(request, context)
                remaining = context.time_remaining()
                if remaining is not None and remaining < 0:
                    code = grpc.StatusCode.DEADLINE_EXCEEDED
                return response
            except Exception as exc:
                aborted = _aborted_code(context)
                if aborted is not None:  # the handler called context.abort itself
                    code = aborted
                    raise
                err = to_service_error(exc)
                code, message = err.code, err.message
                if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
                    metrics.INVALID_REQUESTS.labels(err.reason).inc()
                context.abort_with_status(err.to_status())
                raise  # unreachable: abort_with_status raises
            finally:
                elapsed = time.perf_counter() - start
                metrics.RPC_HANDLED.labels(service, name, code.name).inc()
                seconds.observe(elapsed)
                if log_enabled:
                    level = logging.DEBUG if quiet else logging.INFO
                    if access_log.isEnabledFor(level):
                        write_access_line(
                            level, method, code.name, elapsed, peer=context.peer(), error=message
                        )

        return grpc.unary_unary_rpc_method_handler(
            wrapped,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


_write_lock = threading.Lock()
_LEVEL_NAMES = {logging.DEBUG: "debug", logging.INFO: "info"}


def write_access_line(level: int, method: str, code: str, elapsed: float, *, peer: str, error: str) -> None:
    """One JSON access-log line on stderr, in the format of :class:`service.server.JsonFormatter`,
    built directly: the ``logging`` machinery would cost more than the RPC it logs."""
    now = time.time()
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}+00:00"
    line = (
        f'{{"ts": "{ts}", "level": "{_LEVEL_NAMES.get(level, "info")}", "logger": "heka.access", '
        f'"msg": "rpc", "method": {json.dumps(method)}, "code": "{code}", '
        f'"duration_ms": {elapsed * 1000:.3f}, "peer": {json.dumps(peer)}'
    )
    if error:
        line += f', "error": {json.dumps(error)}'
    line += "}\n"
    with _write_lock:
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed
            pass


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
