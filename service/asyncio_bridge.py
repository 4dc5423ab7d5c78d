"""The asyncio face of :class:`service.servicer.GameService`.

The server is a ``grpc.aio`` server: one event loop thread receives every call. Cheap
calls (views, legal actions, applying an action...) take tens of microseconds of Python,
so they run directly on the loop: no thread hand-off and no GIL ping-pong between a
polling thread and a pool thread, which in the thread-pool server cost more than the call
itself. Bot calls (``BotMove``, ``AdvanceBots``) wait for a search in a worker process,
so they run on a small thread pool; the loop stays free, and health checks and cheap calls
keep answering while every search worker is busy. A bot call takes its place in the search
queue on the loop, before it is handed to a thread (:meth:`GameService.enter_queue`): a
call the queue refuses costs no thread and no token decoding.

The servicer itself stays synchronous; a bot call sees its call context through
:class:`ThreadContext`, which is safe to use from a pool thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import Any

import grpc

from service.gen.heka.v1 import game_service_pb2 as pb
from service.servicer import GameService

#: RPCs that may block (they wait for a search): run on the thread pool.
BLOCKING = frozenset({"BotMove", "AdvanceBots"})
#: RPCs that block only when their request names bots that search (CreateGame and
#: ApplyAction with ``bots``): on the thread pool then, on the event loop otherwise.
SOMETIMES_BLOCKING = frozenset({"CreateGame", "ApplyAction"})


def searches(request: Any) -> bool:
    """Whether a request's bots search (random bots choose inline, at once)."""
    return any(seat.bot.kind != pb.BOT_KIND_RANDOM for seat in request.bots)


def bot_move_searches(request: Any) -> bool:
    """Whether a BotMove request's bot searches."""
    return bool(request.bot.kind != pb.BOT_KIND_RANDOM)


#: Which requests of a :data:`BLOCKING` RPC take a place in the search queue.
_QUEUED = {"BotMove": bot_move_searches, "AdvanceBots": searches}


METHODS = tuple(m.name for m in pb.DESCRIPTOR.services_by_name["GameService"].methods)


class ThreadContext:
    """What the synchronous servicer uses of a call's context (``time_remaining``,
    ``is_active``, ``add_callback``), for a handler running on a pool thread. Built on the
    event loop when the call starts; the call's end (done, cancelled, disconnected) runs the
    callbacks, as the thread-pool server's ``add_callback`` does."""

    def __init__(self, context: grpc.aio.ServicerContext) -> None:
        remaining = context.time_remaining()
        self._deadline = None if remaining is None else time.monotonic() + remaining
        self._done = False
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._peer: str = str(context.peer())
        #: The call's place in the search queue (taken on the loop), if it has one.
        self.search_entry: Any = None
        context.add_done_callback(self._on_done)

    def _on_done(self, _context: Any) -> None:
        with self._lock:
            self._done = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def is_active(self) -> bool:
        return not self._done

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """Run ``callback`` when the call ends; False (not registered) if it has ended."""
        with self._lock:
            if self._done:
                return False
            self._callbacks.append(callback)
            return True

    def peer(self) -> str:
        return self._peer


class AsyncGameService:
    """``heka.v1.GameService`` for the asyncio server, delegating to the synchronous
    :class:`GameService`: cheap RPCs inline on the loop, :data:`BLOCKING` ones on
    ``executor``."""

    def __init__(self, servicer: GameService, executor: Executor) -> None:
        self.servicer = servicer
        self.executor = executor
        for name in METHODS:
            method = getattr(servicer, name)
            if name in BLOCKING:
                handler = self._threaded(method, _QUEUED.get(name))
            elif name in SOMETIMES_BLOCKING:
                handler = self._either(method, self._threaded(method, searches))
            else:
                handler = self._inline(method)
            setattr(self, name, handler)

    @staticmethod
    def _either(
        method: Callable[[Any, Any], Any], threaded: Callable[[Any, Any], Awaitable[Any]]
    ) -> Callable[[Any, Any], Awaitable[Any]]:
        """``method`` inline, or on the thread pool when the request's bots search. A request
        without bots (the common ApplyAction) pays for one coroutine, as an inline RPC."""

        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if request.bots and searches(request):
                return await threaded(request, context)
            return method(request, context)

        return call

    @staticmethod
    def _inline(method: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            return method(request, context)

        return call

    def _threaded(
        self, method: Callable[[Any, Any], Any], queued: Callable[[Any], bool] | None = None
    ) -> Callable[[Any, Any], Awaitable[Any]]:
        """``method`` on the thread pool; when ``queued(request)``, after taking the call's
        place in the search queue (or being refused) on the loop."""
        executor = self.executor
        servicer = self.servicer

        def run(request: Any, bridge: ThreadContext) -> Any:
            try:
                return method(request, bridge)
            finally:
                if bridge.search_entry is not None:
                    servicer.searches.queue.finish(bridge.search_entry)

        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            bridge = ThreadContext(context)
            if queued is not None and queued(request):
                bridge.search_entry = servicer.enter_queue(bridge)
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(executor, run, request, bridge)
            except asyncio.CancelledError:
                entry = bridge.search_entry
                if entry is not None:  # the call ended before its thread took it, if it did
                    servicer.searches.cancel_call(entry)
                    servicer.searches.queue.finish(entry)
                raise

        return call
