"""The asyncio server's bridge to the service (service/asyncio_bridge.py): a call's context
in a worker thread, and which calls run on the bot pool."""

from __future__ import annotations

from typing import Any


class _FakeAioContext:
    def __init__(self, remaining: float | None) -> None:
        self.remaining = remaining
        self.done_callbacks: list[Any] = []

    def time_remaining(self) -> float | None:
        return self.remaining

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def add_done_callback(self, callback: Any) -> None:
        self.done_callbacks.append(callback)


def test_thread_context_runs_callbacks_when_the_call_ends() -> None:
    from service.asyncio_bridge import ThreadContext

    aio = _FakeAioContext(remaining=5.0)
    ctx = ThreadContext(aio)
    assert ctx.is_active() and ctx.peer() == "ipv4:127.0.0.1:1"
    remaining = ctx.time_remaining()
    assert remaining is not None and 4.0 < remaining <= 5.0
    fired: list[str] = []
    assert ctx.add_callback(lambda: fired.append("cancel search"))
    for callback in aio.done_callbacks:  # the call ends (done, cancelled or disconnected)
        callback(aio)
    assert fired == ["cancel search"] and not ctx.is_active()
    assert not ctx.add_callback(lambda: fired.append("too late"))  # the caller cancels itself
    assert fired == ["cancel search"]
    assert ThreadContext(_FakeAioContext(remaining=None)).time_remaining() is None


def test_async_service_runs_bot_calls_on_the_pool_and_cheap_calls_inline() -> None:
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from service.asyncio_bridge import (
        BLOCKING,
        METHODS,
        SOMETIMES_BLOCKING,
        STREAMING,
        AsyncGameService,
        searches,
    )
    from service.gen.heka.v1 import game_service_pb2 as pb

    seen: list[tuple[str, str]] = []

    entered: list[str] = []

    class Recorder:
        config = SimpleNamespace(review_capacity=1)

        def enter_queue(self, _context: Any, review: bool = False) -> None:
            """A searching bot call (or a review) takes its place in the queue on the loop, first."""
            entered.append(threading.current_thread().name + (" review" if review else ""))

        def ReviewGame(self, _request: Any, _context: Any) -> Any:
            """A streaming RPC: a generator, run on the pool."""
            for i in range(3):
                seen.append((f"ReviewGame {i}", threading.current_thread().name))
                yield i

        def __getattr__(self, name: str) -> Any:
            def method(_request: Any, _context: Any) -> str:
                seen.append((name, threading.current_thread().name))
                return name

            return method

    searching = [pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_MCTS))]
    random_only = [pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_RANDOM))]
    requests: list[tuple[str, Any, bool]] = []  # (method, request, runs on the pool)
    for m in METHODS:
        if m in STREAMING:
            continue
        request = getattr(pb, f"{m}Request")()
        requests.append((m, request, m in BLOCKING))
        if m in SOMETIMES_BLOCKING:  # with bots: on the pool only when a bot searches
            requests.append((m, getattr(pb, f"{m}Request")(bots=searching), True))
            requests.append((m, getattr(pb, f"{m}Request")(bots=random_only), False))
    with ThreadPoolExecutor(1, thread_name_prefix="bot-call") as pool:
        service = AsyncGameService(Recorder(), SimpleNamespace(searching=pool, unqueued=pool))  # type: ignore[arg-type]

        async def call_all() -> list[str]:
            return [await getattr(service, m)(r, _FakeAioContext(None)) for m, r, _ in requests]

        async def stream() -> list[int]:
            return [i async for i in service.ReviewGame(pb.ReviewGameRequest(), _FakeAioContext(None))]

        results = asyncio.run(call_all())
        streamed = asyncio.run(stream())
    assert results == [m for m, _, _ in requests]
    # The stream's messages come from the pool thread, in order; it entered the queue first.
    assert streamed == [0, 1, 2] and {"ReviewGame"} == STREAMING
    review_threads = [thread for name, thread in seen if name.startswith("ReviewGame")]
    seen[:] = [(name, thread) for name, thread in seen if not name.startswith("ReviewGame")]
    assert len(review_threads) == 3 and all(t.startswith("bot-call") for t in review_threads)
    assert entered[-1] == "MainThread review"
    entered.pop()
    assert set(METHODS) >= BLOCKING | SOMETIMES_BLOCKING
    assert [thread.startswith("bot-call") for _, thread in seen] == [pooled for _, _, pooled in requests]
    # Every searching bot call entered the queue, on the event loop, not on the pool.
    # BotMove's default kind is MCTS (it searches); AdvanceBots without bots does not.
    searching_calls = [
        m for m, r, _ in requests if m == "BotMove" or (m in SOMETIMES_BLOCKING and searches(r))
    ]
    assert sorted(searching_calls) == ["ApplyAction", "BotMove", "CreateGame"]
    assert len(entered) == 3 and not any(t.startswith("bot-call") for t in entered)


def test_a_pooled_call_that_ends_before_its_thread_runs_leaves_the_search_queue() -> None:
    """Every pooled call that takes a place in the search queue gives it back however it
    ends, also when its thread never runs: the pool busy, the client cancels, and the pool's
    job is cancelled before it starts. A review once kept its place for good then, and enough
    cancelled reviews filled the queue with nothing running (every bot call refused
    QUEUE_FULL until a restart)."""
    import asyncio
    import contextlib
    import threading
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from service.asyncio_bridge import AsyncGameService
    from service.gen.heka.v1 import game_service_pb2 as pb

    entered: list[object] = []
    left: list[object] = []

    class Searches:
        queue = SimpleNamespace(finish=left.append)

        def cancel_call(self, _entry: object) -> None:
            pass

    class Servicer:
        config = SimpleNamespace(review_capacity=4)
        searches = Searches()

        def enter_queue(self, _context: Any, review: bool = False) -> object:
            entry = object()
            entered.append(entry)
            return entry

        def ReviewGame(self, _request: Any, _context: Any) -> Any:
            raise AssertionError("never runs: the pool is busy")
            yield

        def __getattr__(self, name: str) -> Any:
            def method(_request: Any, _context: Any) -> str:
                raise AssertionError("never runs: the pool is busy")

            return method

    busy = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(busy.wait, 30)  # the pool's one thread, taken
        service = AsyncGameService(Servicer(), SimpleNamespace(searching=pool, unqueued=pool))  # type: ignore[arg-type]
        searching = [pb.BotSeat(seat=1, bot=pb.BotSettings(kind=pb.BOT_KIND_MCTS))]
        calls: list[tuple[str, Any]] = [
            ("BotMove", lambda ctx: service.BotMove(pb.BotMoveRequest(), ctx)),
            ("AdvanceBots", lambda ctx: service.AdvanceBots(pb.AdvanceBotsRequest(bots=searching), ctx)),
            ("ApplyAction", lambda ctx: service.ApplyAction(pb.ApplyActionRequest(bots=searching), ctx)),
            ("ReviewGame", lambda ctx: service.ReviewGame(pb.ReviewGameRequest(), ctx).__anext__()),
        ]

        async def cancel_each() -> None:
            for name, start in calls:
                context = _FakeAioContext(None)
                task = asyncio.ensure_future(start(context))
                await asyncio.sleep(0.05)  # in the queue, its job waiting for the pool
                assert len(entered) == len(left) + 1, name
                task.cancel()  # the client goes away
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                for callback in context.done_callbacks:  # gRPC ends the call
                    callback(context)
                assert set(map(id, left)) == set(map(id, entered)), f"{name} kept its place"

        asyncio.run(cancel_each())
        busy.set()
    assert len(entered) == 4


def test_bot_calls_that_do_not_search_never_hold_back_a_searching_call() -> None:
    """A bot call whose bots do not search (random bots) takes no place in the search queue,
    so nothing bounds how many arrive at once. In one shared pool a flood of them held every
    thread, and another caller's searching BotMove waited behind them past its deadline. They
    run on threads of their own (``HEKA_GRPC_THREADS``): the searching call still finds its
    thread, and every flooded call is answered once its thread frees."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from service.asyncio_bridge import AsyncGameService, BotPools
    from service.gen.heka.v1 import game_service_pb2 as pb

    config = SimpleNamespace(grpc_threads=2, search_capacity=1, search_queue_length=1, review_capacity=1)
    release = threading.Event()

    class Servicer:
        searches = SimpleNamespace(queue=SimpleNamespace(finish=lambda _entry: None))

        def __init__(self) -> None:
            self.config = config

        def enter_queue(self, _context: Any, review: bool = False) -> None:
            return None

        def BotMove(self, request: Any, _context: Any) -> str:
            if request.bot.kind == pb.BOT_KIND_RANDOM:
                release.wait(30)
                return "random"
            return "searched"

        def AdvanceBots(self, _request: Any, _context: Any) -> str:
            release.wait(30)
            return "advanced"

        def __getattr__(self, name: str) -> Any:
            return lambda _request, _context: name

    random_bot = pb.BotSettings(kind=pb.BOT_KIND_RANDOM)
    random_seats = [pb.BotSeat(seat=1, bot=random_bot)]
    pools = BotPools(config)  # type: ignore[arg-type]
    assert pools.searching_threads >= config.search_capacity + config.search_queue_length + 1
    try:
        service = AsyncGameService(Servicer(), pools)  # type: ignore[arg-type]

        async def flood() -> None:
            flooded = [
                asyncio.ensure_future(
                    service.BotMove(pb.BotMoveRequest(bot=random_bot), _FakeAioContext(None))
                )
                for _ in range(10)
            ] + [
                asyncio.ensure_future(
                    service.AdvanceBots(pb.AdvanceBotsRequest(bots=random_seats), _FakeAioContext(None))
                )
                for _ in range(10)
            ]
            await asyncio.sleep(0.2)  # every thread of a shared pool would be taken now
            searched = await asyncio.wait_for(service.BotMove(pb.BotMoveRequest(), _FakeAioContext(None)), 10)
            assert searched == "searched"
            assert not any(call.done() for call in flooded)
            release.set()
            answers = await asyncio.wait_for(asyncio.gather(*flooded), 10)
            assert answers == ["random"] * 10 + ["advanced"] * 10

        asyncio.run(flood())
    finally:
        release.set()
        pools.shutdown()
