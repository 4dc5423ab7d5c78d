"""The server interceptor (asyncio server): error mapping, metrics and access logs for every unary RPC.

Everything cross-cutting happens here, once: the handler runs; an exception becomes a
status with rich details (:func:`service.errors.to_service_error`); the started/handled
counters and the latency histogram move; one JSON access-log line is written.

A call arriving while the process already holds ``max_concurrent_rpcs`` calls is refused when
it arrives, before its request is read: ``RESOURCE_EXHAUSTED``, reason ``OVERLOADED``, with
``RetryInfo`` (health checks are never refused nor counted). A call holds its place from its
arrival (its headers) to its end, so calls whose request never comes are bounded too: each held
about 20 KiB, and without a bound a client could hold tens of thousands on a few connections
(``bench/half_open.py``).

Two refusals happen before the handler, in the request deserializer the interceptor wraps
around the handler's (gRPC decodes the request before it calls the handler, so a body that
does not decode would otherwise escape as ``UNKNOWN`` with an ERROR traceback from gRPC):

* a request body that is not a valid message of the method's request type is
  ``INVALID_ARGUMENT``, reason ``BAD_REQUEST_BODY``;
* a request with a number in an enum field (at any depth) that its enum does not define
  (proto3 enums are open: any number decodes) is ``INVALID_ARGUMENT``, reason
  ``UNKNOWN_ENUM_VALUE``, naming the field and the value (:mod:`service.enums`); one that
  sets two members of one oneof (decoding would keep the last one silently) is
  ``INVALID_ARGUMENT``, reason ``TWO_ONEOF_MEMBERS``.

All three go through the handler path like any other error: counted, logged on one access-log
line, answered with the project's rich details.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from service import enums, metrics
from service.errors import ServiceError, invalid, resource_exhausted, to_service_error

access_log = logging.getLogger("heka.access")

_HEALTH = "grpc.health.v1.Health"

#: Retry hint of a call refused because the process holds its maximum of calls: a slot
#: frees as soon as one of the calls held ends (cheap calls take milliseconds).
OVERLOAD_RETRY_SECONDS = 0.25


def _split(method: str) -> tuple[str, str]:
    service, _, name = method.lstrip("/").partition("/")
    return service, name


class _Refused:
    """What the wrapped deserializer returns instead of a request: the call is refused
    with ``error`` (a new one per call: a raised exception keeps its traceback)."""

    __slots__ = ("error",)

    def __init__(self, error: ServiceError) -> None:
        self.error = error


class _RefusedStreamMessage(Exception):
    """A message of a request stream that cannot be used (raised inside a streaming handler)."""

    def __init__(self, error: ServiceError) -> None:
        super().__init__(error.message)
        self.error = error


def _message_name(deserializer: Any, method: str) -> str:
    """The request message's full name (``heka.v1.ApplyActionRequest``), from the protobuf
    class whose ``FromString`` the deserializer is."""
    descriptor = getattr(getattr(deserializer, "__self__", None), "DESCRIPTOR", None)
    name = getattr(descriptor, "full_name", None)
    return str(name) if name else f"request of {method}"


def _bad_body(message_name: str, exc: BaseException) -> ServiceError:
    # protobuf says "Error parsing message with type 'x.Y': Wire format was corrupt"
    detail = re.sub(r"^Error parsing message( with type '[^']*')?:?\s*", "", str(exc))
    detail = detail or f"it does not decode ({type(exc).__name__})"
    return invalid(
        "",
        f"the request body is not a valid {message_name} message: {detail}",
        "bad_request_body",
    )


class ServerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps every handler of the asyncio server once per method (gRPC asks per call;
    the wrapped handler, its metric children and its access-log prefix are cached, so a
    call pays only for the work itself). Unary handlers get the full treatment (refusals,
    error mapping, metrics, access log); streaming ones (health ``Watch``, reflection) only
    the refusal of a body that does not decode, and for reflection's, a cap
    (:data:`MAX_STREAMS`).

    ``max_concurrent_rpcs`` (0: no cap) bounds the calls of the game service this process
    holds (health checks excepted), counted from a call's arrival (when gRPC asks this
    interceptor for its handler, before the request is read) to the end of its task; a call
    over the cap is answered at once by a handler that never reads its request, so a client
    that opens calls and never sends their requests holds at most the cap. (A burst of calls
    does not wait here but in gRPC core, which hands the Python server one call per method at
    a time: see ``service.server.grpc_options``.)

    ``stream_seconds`` (0: no cap) bounds a server stream of the game service (ReviewGame)
    from its start to its end: one that outlives it, because its client stopped reading,
    ends ``DEADLINE_EXCEEDED`` (:func:`_expire`)."""

    def __init__(
        self, *, access_log_enabled: bool = True, max_concurrent_rpcs: int = 0, stream_seconds: float = 0.0
    ) -> None:
        self.access_log_enabled = access_log_enabled
        self.max_concurrent_rpcs = max_concurrent_rpcs
        self.stream_seconds = stream_seconds
        #: Calls admitted and not finished (the event loop's thread is the only one to touch it).
        self.active = 0
        #: Bidirectional streams open (reflection), at most :data:`MAX_STREAMS`.
        self.streams = 0
        #: Per method: its wrapped handler, and the handler that refuses a call over the cap
        #: (None for a method not counted).
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler | None]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = handler_call_details.method
        entry = self._wrapped.get(method)
        if entry is None:
            handler = await continuation(handler_call_details)
            if handler is None:
                return None  # unknown method: gRPC answers UNIMPLEMENTED
            refusal: grpc.RpcMethodHandler | None = None
            if handler.unary_unary is not None:
                tally = _Tally(method, self.access_log_enabled)
                wrapped = self._wrap(handler, self._deserializer(method, handler), tally)
                if _split(method)[0] != _HEALTH:
                    refusal = self._refusal(handler, tally, streaming=False)
            elif handler.unary_stream is not None and inspect.isasyncgenfunction(handler.unary_stream):
                tally = _Tally(method, self.access_log_enabled)
                wrapped = self._wrap_server_stream(handler, self._deserializer(method, handler), tally)
                refusal = self._refusal(handler, tally, streaming=True)
            else:
                wrapped = self._wrap_streaming(method, handler)
            # One event loop thread: no lock needed.
            entry = self._wrapped.setdefault(method, (wrapped, refusal))
        wrapped, refusal = entry
        if refusal is not None and self.max_concurrent_rpcs > 0 and not self._admit():
            return refusal
        return wrapped

    # ---- admission and decoding ---------------------------------------------------------

    def _admit(self) -> bool:
        """Count the current call in until its task ends (gRPC runs a call in one task, from
        this interceptor to its status sent: a call whose request never comes ends when its
        client cancels it or goes away, or its connection is closed), unless the process
        holds its maximum."""
        if self.active >= self.max_concurrent_rpcs:
            return False
        try:
            task = asyncio.current_task()
        except RuntimeError:  # pragma: no cover - not on an event loop (a sync server)
            return True
        if task is not None:
            self.active += 1
            task.add_done_callback(self._release)
        return True

    def _release(self, _task: object) -> None:
        self.active -= 1

    def _overloaded(self) -> ServiceError:
        return resource_exhausted(
            f"this server process is handling {self.active} call{'s' if self.active != 1 else ''}, its limit "
            "(HEKA_MAX_CONCURRENT_RPCS); retry shortly or ask another replica",
            "overloaded",
            retry_after=OVERLOAD_RETRY_SECONDS,
            quota_subject="concurrent calls",
        )

    def _refusal(
        self, handler: grpc.RpcMethodHandler, tally: _Tally, *, streaming: bool
    ) -> grpc.RpcMethodHandler:
        """The handler of a call over the cap: it never reads the request (a request-streaming
        handler is not handed one before it runs) and answers ``OVERLOADED`` at once, counted
        and logged as the method's calls are."""

        async def refuse(_requests: Any, context: grpc.aio.ServicerContext) -> None:
            call = tally.start()
            try:
                await call.fail(self._overloaded(), context)
            finally:
                call.end(context)

        if not streaming:
            return grpc.stream_unary_rpc_method_handler(
                refuse, response_serializer=handler.response_serializer
            )

        async def refuse_stream(requests: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            await refuse(requests, context)
            yield None  # never reached: refuse raises

        return grpc.stream_stream_rpc_method_handler(
            refuse_stream, response_serializer=handler.response_serializer
        )

    def _deserializer(self, method: str, handler: grpc.RpcMethodHandler) -> Callable[[bytes], Any]:
        """The handler's request deserializer, answering a :class:`_Refused` instead of
        raising on a body that does not decode (gRPC would answer UNKNOWN and log a
        traceback) or that holds an unknown enum value."""
        parse = handler.request_deserializer
        if parse is None:  # pragma: no cover - every handler here decodes protobuf
            return lambda raw: raw
        message_name = _message_name(parse, method)
        descriptor = getattr(getattr(parse, "__self__", None), "DESCRIPTOR", None)
        has_enums = descriptor is not None and bool(enums.plan(descriptor))
        has_oneofs = descriptor is not None and enums.oneof_plan(descriptor) is not None

        def deserialize(raw: bytes) -> Any:
            try:
                request = parse(raw)
            except Exception as exc:  # DecodeError; anything a parser raises on foreign bytes
                return _Refused(_bad_body(message_name, exc))
            if has_enums:
                try:
                    enums.check(request)
                except enums.UnknownEnumValue as exc:
                    return _Refused(invalid(exc.field, str(exc), "unknown_enum_value"))
            if has_oneofs:
                try:
                    enums.check_oneofs(descriptor, raw)  # type: ignore[arg-type]  # has_oneofs: not None
                except enums.TwoOneofMembers as exc:
                    return _Refused(invalid(exc.field, str(exc), "two_oneof_members"))
            return request

        return deserialize

    # ---- unary handlers -----------------------------------------------------------------

    def _wrap(
        self, handler: grpc.RpcMethodHandler, deserializer: Callable[[bytes], Any], tally: _Tally
    ) -> grpc.RpcMethodHandler:
        inner = handler.unary_unary

        async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> Any:
            call = tally.start()
            try:
                if type(request) is _Refused:
                    raise request.error
                response = inner(request, context)
                if inspect.isawaitable(response):
                    response = await response
                remaining = context.time_remaining()
                if remaining is not None and remaining < 0:
                    call.code = grpc.StatusCode.DEADLINE_EXCEEDED
                return response
            except asyncio.CancelledError:  # the client cancelled, or the server stops
                call.code = grpc.StatusCode.CANCELLED
                raise
            except grpc.aio.AbortError:  # the handler called context.abort itself
                call.code = _aborted_code(context) or grpc.StatusCode.UNKNOWN
                raise
            except Exception as exc:
                await call.fail(exc, context)
                raise  # unreachable: abort_with_status raises
            finally:
                call.end(context)

        return grpc.unary_unary_rpc_method_handler(
            wrapped,
            request_deserializer=deserializer,
            response_serializer=handler.response_serializer,
        )

    def _wrap_server_stream(
        self, handler: grpc.RpcMethodHandler, deserializer: Callable[[bytes], Any], tally: _Tally
    ) -> grpc.RpcMethodHandler:
        """A server-streaming RPC of the game service (an async generator, ReviewGame): the
        unary treatment, over the whole stream; an error after some messages ends the stream
        with its status."""
        inner = handler.unary_stream
        limit = self.stream_seconds

        async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            call = tally.start()
            # The stream may outlive its call: when the client goes away (or the deadline
            # passes) while a message waits to be sent, gRPC drops the generator and the
            # collector closes it later, after the call's core object is freed. Whatever
            # the access-log line and the status need is taken now; the ``finally`` below
            # never touches the context (reading it then crashes the process).
            if tally.logs():
                call.peer = str(context.peer())
            now = time.monotonic()
            remaining = context.time_remaining()
            deadline = None if remaining is None else now + remaining
            # A client that stops reading holds the call at a pending write, out of the
            # generator's reach, whatever the handler's own time caps: past ``limit`` the
            # call is ended from outside.
            overdue = None
            if limit > 0 and (deadline is None or deadline > now + limit):
                deadline = now + limit
                overdue = asyncio.get_running_loop().call_later(
                    limit, _expire, context, asyncio.current_task()
                )
            # A dropped stream is counted when its call ends, not when it is collected.
            context.add_done_callback(lambda _context: call.abandon(deadline))
            try:
                if type(request) is _Refused:
                    raise request.error
                async for response in inner(request, context):
                    yield response
            except asyncio.CancelledError:  # the client cancelled, a deadline, a cut
                call.code = _aborted_code(context) or _ended_code(deadline)
                raise
            except GeneratorExit:  # dropped by gRPC, closed by the collector: the call is over
                call.code = _ended_code(deadline)
                raise
            except grpc.aio.AbortError:
                call.code = _aborted_code(context) or grpc.StatusCode.UNKNOWN
                raise
            except Exception as exc:
                await call.fail(exc, context)
                raise
            finally:
                if overdue is not None:
                    overdue.cancel()
                call.end(None)

        return grpc.unary_stream_rpc_method_handler(
            wrapped,
            request_deserializer=deserializer,
            response_serializer=handler.response_serializer,
        )

    # ---- streaming handlers -------------------------------------------------------------

    def _wrap_streaming(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """Health ``Watch`` and reflection: a request message that does not decode is
        ``INVALID_ARGUMENT`` (counted and logged once) instead of ``UNKNOWN``; at most
        :data:`MAX_STREAMS` bidirectional ones (reflection) at once. Not otherwise
        instrumented. Handlers of another shape are returned as they are."""
        log_prefix = f'"logger": "heka.access", "msg": "rpc", "method": {json.dumps(method)}, "code": "'
        log_enabled = self.access_log_enabled
        level = logging.DEBUG if _split(method)[0] == _HEALTH else logging.INFO

        async def refuse(context: grpc.aio.ServicerContext, err: ServiceError) -> None:
            metrics.child(metrics.INVALID_REQUESTS, err.reason).inc()
            if log_enabled and access_log.isEnabledFor(level):
                _write_line(level, log_prefix, err.code.name, 0.0, peer=context.peer(), error=err.message)
            await context.abort_with_status(err.to_status())

        if handler.unary_stream is not None and inspect.iscoroutinefunction(handler.unary_stream):
            inner_us = handler.unary_stream

            async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> None:
                if type(request) is _Refused:
                    await refuse(context, request.error)
                await inner_us(request, context)

            return grpc.unary_stream_rpc_method_handler(
                unary_stream,
                request_deserializer=self._deserializer(method, handler),
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream is not None and inspect.isasyncgenfunction(handler.stream_stream):
            inner_ss = handler.stream_stream
            parse = self._deserializer(method, handler)

            def deserialize(raw: bytes) -> Any:
                request = parse(raw)
                if type(request) is _Refused:
                    raise _RefusedStreamMessage(request.error)  # inside the handler's loop
                return request

            async def stream_stream(
                request_iterator: Any, context: grpc.aio.ServicerContext
            ) -> AsyncIterator[Any]:
                if self.streams >= MAX_STREAMS:
                    err = resource_exhausted(
                        f"this server process holds {MAX_STREAMS} {_split(method)[0]} streams, its "
                        "limit: end one, or ask another replica",
                        "streams_full",
                        quota_subject="streams",
                    )
                    if log_enabled and access_log.isEnabledFor(level):
                        peer = str(context.peer())
                        _write_line(level, log_prefix, err.code.name, 0.0, peer=peer, error=err.message)
                    await context.abort_with_status(err.to_status())
                self.streams += 1
                try:
                    async for response in inner_ss(request_iterator, context):
                        yield response
                except _RefusedStreamMessage as exc:
                    await refuse(context, exc.error)
                finally:  # may run after the call (see _wrap_server_stream): no context here
                    self.streams -= 1

            return grpc.stream_stream_rpc_method_handler(
                stream_stream,
                request_deserializer=deserialize,
                response_serializer=handler.response_serializer,
            )
        return handler


class _Tally:
    """The metrics and the access-log line of one method's calls (children cached)."""

    def __init__(self, method: str, log_enabled: bool) -> None:
        service, name = _split(method)
        self.service, self.name = service, name
        self.started = metrics.child(metrics.RPC_STARTED, service, name)
        self.seconds = metrics.child(metrics.RPC_SECONDS, service, name)
        self.handled: dict[grpc.StatusCode, Any] = {}
        self.level = logging.DEBUG if service == _HEALTH else logging.INFO
        self.log_enabled = log_enabled
        self.log_prefix = f'"logger": "heka.access", "msg": "rpc", "method": {json.dumps(method)}, "code": "'

    def start(self) -> _Call:
        self.started.inc()
        return _Call(self)

    def logs(self) -> bool:
        """Whether a call of this method writes an access-log line."""
        return self.log_enabled and access_log.isEnabledFor(self.level)


class _Call:
    """One call being tallied: its status code and error message so far."""

    __slots__ = ("code", "ended", "message", "peer", "start", "tally")

    def __init__(self, tally: _Tally) -> None:
        self.tally = tally
        self.start = time.perf_counter()
        self.code = grpc.StatusCode.OK
        self.message = ""
        #: The client's address, when taken at the start (a stream's): see :meth:`end`.
        self.peer: str | None = None
        self.ended = False

    async def fail(self, exc: Exception, context: grpc.aio.ServicerContext) -> None:
        """End the call with the status of ``exc`` (counted as an invalid request when it is
        one); raises ``AbortError``."""
        err = _handler_error(exc, context)
        self.code, self.message = err.code, err.message
        if self.code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
            metrics.child(metrics.INVALID_REQUESTS, err.reason).inc()
        await context.abort_with_status(err.to_status())

    def end(self, context: grpc.aio.ServicerContext | None) -> None:
        """Count the call and log it; ``context`` (None once the call may be over) gives
        the peer when :attr:`peer` was not taken at the start. Once only."""
        if self.ended:
            return
        self.ended = True
        t = self.tally
        elapsed = time.perf_counter() - self.start
        counter = t.handled.get(self.code)
        if counter is None:
            counter = t.handled[self.code] = metrics.child(
                metrics.RPC_HANDLED, t.service, t.name, self.code.name
            )
        counter.inc()
        t.seconds.observe(elapsed)
        if t.logs():
            peer = self.peer if self.peer is not None or context is None else str(context.peer())
            _write_line(t.level, t.log_prefix, self.code.name, elapsed, peer=peer or "", error=self.message)

    def abandon(self, deadline: float | None) -> None:
        """The call is over; if its stream has not ended (gRPC dropped it), end it as
        :func:`_ended_code` says."""
        if not self.ended:
            if self.code == grpc.StatusCode.OK:
                self.code = _ended_code(deadline)
            self.end(None)


#: The most bidirectional streams (reflection, either version) one process holds at once:
#: a tool's reflection stream lasts a few messages; more are refused RESOURCE_EXHAUSTED.
MAX_STREAMS = 100

#: How long a review stream may take past HEKA_MAX_REVIEW_SECONDS (which ends its searches)
#: to deliver its last messages, at most (no longer than that cap itself:
#: ``ServerInterceptor.stream_seconds``).
STREAM_GRACE_SECONDS = 10.0

_EXPIRED = "the stream outlived its time cap (HEKA_MAX_REVIEW_SECONDS): its messages were not read in time"


def _expire(context: grpc.aio.ServicerContext, task: asyncio.Task[Any] | None) -> None:
    """End a server stream that outlived its cap, on the event loop: its status is sent
    (``DEADLINE_EXCEEDED``, delivered after the messages already queued) and its task
    cancelled, which closes the handler's generator and frees what it holds."""
    if task is None or task.done():
        return

    async def abort() -> None:
        with contextlib.suppress(Exception):  # AbortError; the call ended meanwhile
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, _EXPIRED)

    _background.add(aborting := asyncio.ensure_future(abort()))
    aborting.add_done_callback(_background.discard)
    task.cancel()


#: Tasks started by :func:`_expire`, referenced until done.
_background: set[asyncio.Future[None]] = set()


#: A call that ends this close to its deadline ended by it (the deadline gRPC enforces and
#: the one computed from ``time_remaining`` at the start differ by the time in between).
_DEADLINE_SLACK = 0.05


def _ended_code(deadline: float | None) -> grpc.StatusCode:
    """The status of a stream that ended without finishing: its deadline had passed, or the
    client went away."""
    if deadline is not None and time.monotonic() >= deadline - _DEADLINE_SLACK:
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return grpc.StatusCode.CANCELLED


def _handler_error(exc: Exception, context: grpc.aio.ServicerContext) -> ServiceError:
    """The status for an exception from a handler: a handler that set a status code on the
    context before raising (gRPC's generated base servicer does, with UNIMPLEMENTED, for a
    method it does not implement: health ``List``) gets that code, as without the
    interceptor; anything else goes through :func:`service.errors.to_service_error`."""
    preset = None if isinstance(exc, ServiceError) else _aborted_code(context)
    if preset is None:
        return to_service_error(exc)
    details = context.details() if hasattr(context, "details") else ""
    return ServiceError(preset, str(details or exc or preset.name), reason=preset.name.lower())


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
