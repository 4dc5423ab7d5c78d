"""The asyncio face of :class:`service.servicer.GameService`.

The server is a ``grpc.aio`` server: one event loop thread receives every call. Cheap
calls (views, legal actions, applying an action...) take tens of microseconds of Python,
so they run directly on the loop: no thread hand-off and no GIL ping-pong between a
polling thread and a pool thread, which in the thread-pool server cost more than the call
itself. Bot calls (``BotMove``, ``AdvanceBots``) wait for a search in a worker process,
so they run on threads (:class:`BotPools`); the loop stays free, and health checks and cheap
calls keep answering while every search worker is busy. A bot call takes its place in the
search queue on the loop, before it is handed to a thread (:meth:`GameService.enter_queue`): a
call the queue refuses costs no thread and no token decoding. A bot call whose bots do not
search (random bots) takes no place in the queue, so nothing bounds how many arrive: they run
on threads of their own, and a flood of them waits for those threads, never for the threads
of calls that hold a place in the queue.

The servicer itself stays synchronous; a bot call sees its call context through
:class:`ThreadContext`, which is safe to use from a pool thread.

At shutdown, bot calls still running when the grace ends are cut (:meth:`AsyncGameService.cut`):
each is answered at once, ``UNAVAILABLE`` with reason ``SHUTTING_DOWN`` and a retry hint,
rather than cancelled by gRPC with a bare status, and its search is stopped, which frees its
slot and its worker.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

import grpc

from service import metrics
from service.config import Config
from service.errors import resource_exhausted, shutting_down
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


#: Server-streaming RPCs whose messages come from a generator of the servicer, run on a
#: thread of the pool (each holds one for its whole call).
STREAMING = frozenset({"ReviewGame"})


#: Which requests of a :data:`BLOCKING` RPC take a place in the search queue.
_QUEUED = {"BotMove": bot_move_searches, "AdvanceBots": searches}


#: Retry hint of a review refused because the process runs its maximum of reviews.
REVIEW_RETRY_SECONDS = 2.0

METHODS = tuple(m.name for m in pb.DESCRIPTOR.services_by_name["GameService"].methods)


class BotPools:
    """The threads of bot calls, in two pools (threads start as calls need them).

    ``searching``: calls that hold a place in the search queue (searching bot calls, reviews).
    The queue bounds them, so the pool has a thread for each place it holds (running and
    waiting) and each review, plus ``grpc_threads`` spare for calls whose search is stopping
    after they left the queue: such a call never waits for a thread.

    ``unqueued``: bot calls whose bots do not search (random bots). Nothing but the process's
    call cap bounds how many arrive at once; they wait for these ``grpc_threads`` threads, in
    order, and never take a thread of the searching pool."""

    def __init__(self, config: Config, prefix: str = "bot-call") -> None:
        self.searching_threads = (
            config.grpc_threads + config.search_capacity + config.search_queue_length + config.review_capacity
        )
        self.searching = ThreadPoolExecutor(self.searching_threads, thread_name_prefix=prefix)
        self.unqueued = ThreadPoolExecutor(config.grpc_threads, thread_name_prefix=f"{prefix}-unqueued")

    def shutdown(self) -> None:
        """Stop both pools without waiting; jobs not started are cancelled."""
        for pool in (self.searching, self.unqueued):
            pool.shutdown(wait=False, cancel_futures=True)


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
        self.end()

    def end(self) -> None:
        """The call has ended: run the callbacks (once)."""
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
    :class:`GameService`: cheap RPCs inline on the loop, :data:`BLOCKING` ones on the threads
    of ``pools`` (:class:`BotPools`)."""

    def __init__(self, servicer: GameService, pools: BotPools) -> None:
        self.servicer = servicer
        self.executor: Executor = pools.searching
        self.unqueued: Executor = pools.unqueued
        #: Done once the calls are cut (:meth:`cut`); made on the event loop, at first use.
        self._cut: asyncio.Future[None] | None = None
        #: Bot calls awaiting their thread, and reviews streaming (the event loop's thread
        #: alone counts them).
        self.running = 0
        self.reviews = 0
        #: Reviews one gRPC process runs at once (each holds a thread).
        self.review_capacity = servicer.config.review_capacity
        #: Pool threads running a handler, and its condition (:meth:`wait_threads`).
        self._threads = 0
        self._threads_done = threading.Condition()
        for name in METHODS:
            method = getattr(servicer, name)
            handler: Callable[[Any, Any], Any]
            if name in STREAMING:
                handler = self._streamed(method)
            elif name in BLOCKING:
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

    def _cut_signal(self) -> asyncio.Future[None]:
        if self._cut is None:
            self._cut = asyncio.get_running_loop().create_future()
        return self._cut

    def cut(self) -> int:
        """On the event loop, when the shutdown grace has run out: answer every bot call
        still running ``UNAVAILABLE``, reason ``SHUTTING_DOWN``, with a retry hint (and any
        that starts from now on), and stop its search. Returns the number of calls cut."""
        signal = self._cut_signal()
        if not signal.done():
            signal.set_result(None)
        return self.running

    def wait_threads(self, timeout: float) -> int:
        """Wait up to ``timeout`` seconds until no pool thread runs a handler (those of cut
        calls end once their searches stop, and release their search slots); returns the
        number still running."""
        end = time.monotonic() + timeout
        with self._threads_done:
            while self._threads and (left := end - time.monotonic()) > 0:
                self._threads_done.wait(left)
            return self._threads

    def _leave_queue(self, bridge: ThreadContext) -> None:
        """A pooled call ends, maybe before its thread has run: it leaves the search queue if
        it is still there, or its search stops. A pool job cancelled before it starts never
        runs, so its thread's own ``finally`` never gives the place back: every way a call
        ends (done, cancelled by the client, cut) comes through here, or the place would be
        held for good and the queue full with nothing running. Idempotent."""
        entry = bridge.search_entry
        if entry is not None:
            self.servicer.searches.cancel_call(entry)
            self.servicer.searches.queue.finish(entry)

    def _threaded(
        self, method: Callable[[Any, Any], Any], queued: Callable[[Any], bool] | None = None
    ) -> Callable[[Any, Any], Awaitable[Any]]:
        """``method`` on a thread: when ``queued(request)``, after taking the call's place in
        the search queue (or being refused) on the loop, on the searching pool; otherwise on
        the unqueued one (:class:`BotPools`). A cut (:meth:`cut`) answers the call without
        waiting for its thread."""
        servicer = self.servicer
        threads = self._threads_done

        def run(request: Any, bridge: ThreadContext) -> Any:
            with threads:
                self._threads += 1
            try:
                return method(request, bridge)
            finally:
                if bridge.search_entry is not None:
                    servicer.searches.queue.finish(bridge.search_entry)
                with threads:
                    self._threads -= 1
                    threads.notify_all()

        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            cut = self._cut_signal()
            if cut.done():
                raise shutting_down()
            bridge = ThreadContext(context)
            executor = self.unqueued
            if queued is not None and queued(request):
                bridge.search_entry = servicer.enter_queue(bridge)
                executor = self.executor
            loop = asyncio.get_running_loop()
            work = loop.run_in_executor(executor, run, request, bridge)
            self.running += 1
            try:
                await asyncio.wait((work, cut), return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:  # the client went away
                work.cancel()
                self._leave_queue(bridge)
                raise
            finally:
                self.running -= 1
            if work.done():
                return work.result()
            # Cut: answer now. A thread that has not started never will; a running one
            # ends when its search stops, and its answer is dropped.
            work.cancel()
            self._leave_queue(bridge)
            raise shutting_down()

        return call

    def _streamed(
        self, method: Callable[[Any, Any], Iterator[Any]]
    ) -> Callable[[Any, Any], AsyncIterator[Any]]:
        """A server-streaming ``method`` (a generator of response messages) on the thread
        pool, its messages handed to the event loop as they come. The call takes its place in
        the search queue on the loop first (or is refused, as a bot call is), and at most
        :attr:`review_capacity` such calls run at once in this process. The client's cancel,
        or a cut at shutdown (:meth:`cut`), stops the generator's searches (its context's
        callbacks) and ends the call."""
        executor = self.executor
        servicer = self.servicer
        threads = self._threads_done

        async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            cut = self._cut_signal()
            if cut.done():
                raise shutting_down()
            if self.reviews >= self.review_capacity:
                metrics.child(metrics.REVIEWS_REFUSED, "reviews_full").inc()
                raise resource_exhausted(
                    f"this server process runs {self.reviews} reviews, its limit "
                    "(HEKA_MAX_CONCURRENT_REVIEWS); retry shortly or ask another replica",
                    "reviews_full",
                    retry_after=REVIEW_RETRY_SECONDS,
                    quota_subject="reviews",
                )
            bridge = ThreadContext(context)
            bridge.search_entry = servicer.enter_queue(bridge, review=True)
            loop = asyncio.get_running_loop()
            items: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
            stop = threading.Event()

            def put(kind: str, item: Any) -> None:
                loop.call_soon_threadsafe(items.put_nowait, (kind, item))

            def run() -> None:
                with threads:
                    self._threads += 1
                try:
                    for message in method(request, bridge):
                        put("message", message)
                        if stop.is_set():
                            break
                    put("end", None)
                except BaseException as exc:  # delivered to the call, raised there
                    put("error", exc)
                finally:
                    if bridge.search_entry is not None:
                        servicer.searches.queue.finish(bridge.search_entry)
                    with threads:
                        self._threads -= 1
                        threads.notify_all()

            work = loop.run_in_executor(executor, run)
            self.reviews += 1
            self.running += 1
            released = False

            def release(*_call: object) -> None:
                """Stop the review's searches and free its slot, once: when the generator
                ends, or when the call does (a stream gRPC dropped is closed only when
                collected)."""
                nonlocal released
                if released:
                    return
                released = True
                stop.set()
                bridge.end()
                if not work.done():
                    work.cancel()
                self._leave_queue(bridge)
                self.running -= 1
                self.reviews -= 1

            context.add_done_callback(release)
            try:
                while True:
                    getter = asyncio.ensure_future(items.get())
                    await asyncio.wait((getter, cut), return_when=asyncio.FIRST_COMPLETED)
                    if not getter.done():  # cut: end the review now; its searches stop
                        getter.cancel()
                        raise shutting_down()
                    kind, item = getter.result()
                    if kind == "end":
                        return
                    if kind == "error":
                        raise item
                    yield item
            finally:
                # However the call ends (done, error, cancelled by the client, cut), the
                # generator stops and its searches with it (its context's callbacks).
                release()

        return call
