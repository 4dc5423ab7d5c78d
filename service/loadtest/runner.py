"""The ``heka loadtest`` engine: drive a scenario over many grpc.aio channels at a fixed
rate (open loop) or a fixed concurrency (closed loop) for a fixed duration.

Open loop (``rate``): task *i* starts at ``start + i / rate`` whether or not earlier tasks
have finished, so a slow server shows up as latency, not as a lower offered load (no
coordinated omission); tasks that start more than 10 ms behind schedule are counted as
"late starts" (the generator itself could not keep up). ``max_in_flight`` bounds the
outstanding tasks. Closed loop (``concurrency``): that many workers each run one task
after another.

Every RPC has a deadline (``timeout``). When the duration is over no new task starts; a
``play`` game in progress stops at its next call and is counted as cut, not failed.

A call refused with a retry hint (RESOURCE_EXHAUSTED or UNAVAILABLE with ``RetryInfo``: the
server shed it) is counted as *shed*, not as an error, and sent again after a jittered
backoff (:mod:`service.loadtest.retry`), unless ``backoff`` is None (then it is an error).
A task refused more than ``backoff.max_retries`` times in a row gives up (counted apart).
*Goodput* is the bot moves that completed calls carry, per second.

A ``warmup`` runs the same load before the measured ``duration``; what it does is not in the
report. ``meters`` (e.g. the server's CPU seconds) are read when the measured window opens
and when its last task has finished; the differences are in ``Recorder.meters``. A ``stop``
event ends the run early. The stubs are heka.v1.GameService's unless ``make_stub`` says
otherwise (:class:`RawStub`: any unary method, raw bytes, e.g. a plain echo server).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import grpc
import grpc.aio

from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.retry import Backoff, retry_delay
from service.loadtest.scenarios import Scenario, ScenarioError, ScenarioGen, bot_moves, task_rng
from service.loadtest.stats import Recorder
from service.tls import ClientTls

LATE_SECONDS = 0.010


@dataclasses.dataclass(frozen=True, slots=True)
class LoadSettings:
    target: str = "127.0.0.1:50051"
    rate: float | None = None  # tasks per second (open loop)
    concurrency: int | None = None  # workers (closed loop)
    duration: float = 10.0
    warmup: float = 0.0  # seconds of the same load before ``duration``, not recorded
    connections: int = 1
    timeout: float = 30.0
    max_in_flight: int = 1000
    connect_timeout: float = 10.0
    seed: int = 1
    max_message_bytes: int = 16 * 1024 * 1024
    #: How refusals with a retry hint are backed off from; None: they are errors.
    backoff: Backoff | None = dataclasses.field(default_factory=Backoff)
    #: Open loop: seconds after the window that the tasks still running get before they are
    #: abandoned (a call waiting in the server's queue, a backoff); None: they are awaited.
    end_grace: float | None = None
    #: TLS to the server (its CA, and a client certificate for mutual TLS); None: plaintext.
    tls: ClientTls | None = None

    def __post_init__(self) -> None:
        if (self.rate is None) == (self.concurrency is None):
            raise ValueError("give exactly one of rate (open loop) or concurrency (closed loop)")
        seconds = (self.duration, self.warmup, self.timeout, self.connect_timeout, self.end_grace)
        if (self.rate is not None and not math.isfinite(self.rate)) or not all(
            math.isfinite(value) for value in seconds if value is not None
        ):
            raise ValueError("rate, duration, warmup, timeout, connect_timeout and end_grace must be finite")
        if self.rate is not None and self.rate <= 0:
            raise ValueError("rate must be positive")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.duration <= 0 or self.connections < 1 or self.timeout <= 0 or self.max_in_flight < 1:
            raise ValueError("duration, connections, timeout and max_in_flight must be positive")
        if self.warmup < 0:
            raise ValueError("warmup must not be negative")


class SetupError(RuntimeError):
    """The scenario's setup (or the connection) failed: no measured run happened."""


def make_channel(settings: LoadSettings) -> grpc.aio.Channel:
    options = [
        # A private subchannel pool per channel: N channels really are N connections.
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
    ]
    if settings.tls is not None:
        return grpc.aio.secure_channel(
            settings.target, settings.tls.credentials(), options=options + settings.tls.options()
        )
    return grpc.aio.insecure_channel(settings.target, options=options)


class RawStub:
    """A stub for any unary methods: ``RawStub(channel, {"Echo": "/bench.Echo/Echo"}).Echo(b"..")``
    sends and returns raw bytes (no protobuf), so the runner can load a server that is not
    heka's (a plain gRPC echo server as a ceiling)."""

    def __init__(self, channel: grpc.aio.Channel, paths: Mapping[str, str]) -> None:
        self._calls = {name: channel.unary_unary(path) for name, path in paths.items()}

    def __getattr__(self, name: str) -> Any:
        try:
            return self._calls[name]
        except KeyError:
            raise AttributeError(name) from None


def raw_stubs(paths: Mapping[str, str]) -> Callable[[grpc.aio.Channel], RawStub]:
    """A ``make_stub`` for :func:`run_load`: :class:`RawStub` with these method paths."""
    return lambda channel: RawStub(channel, paths)


def _size(message: Any) -> int:
    return len(message) if isinstance(message, bytes) else int(message.ByteSize())


class Progress:
    """The live line on stderr: a rewritten line on a terminal, a line every few seconds
    otherwise."""

    def __init__(self, stream: TextIO | None, duration: float) -> None:
        self.stream = stream
        self.duration = duration
        self.tty = bool(stream is not None and stream.isatty())
        self.interval = 0.5 if self.tty else 5.0
        self._last_rpcs = 0
        self._last_time = 0.0

    def line(self, recorder: Recorder, elapsed: float, in_flight: int) -> str:
        rpcs = recorder.rpc_count
        window = max(elapsed - self._last_time, 1e-9)
        current = (rpcs - self._last_rpcs) / window
        self._last_rpcs, self._last_time = rpcs, elapsed
        overall = recorder.overall()
        return (
            f"[{min(elapsed, self.duration):6.1f}s/{self.duration:g}s] {rpcs} rpcs, {current:8.1f} rpc/s,"
            f" tasks {recorder.tasks_completed}, in flight {in_flight},"
            f" p50 {overall.percentile(50) * 1000:.1f} ms, p99 {overall.percentile(99) * 1000:.1f} ms,"
            f" shed {recorder.shed_count}, errors {recorder.error_count}"
        )

    def show(self, recorder: Recorder, elapsed: float, in_flight: int) -> None:
        if self.stream is None:
            return
        text = self.line(recorder, elapsed, in_flight)
        if self.tty:
            self.stream.write("\r\x1b[2K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.stream is not None and self.tty:
            self.stream.write("\n")
            self.stream.flush()


async def _perform(stub: Any, call: Any, timeout: float) -> Any:
    return await getattr(stub, call.method)(call.request, timeout=timeout)


async def run_task(
    stub: Any,
    gen: ScenarioGen,
    recorder: Recorder,
    timeout: float,
    over: Callable[[], bool] | None,
    *,
    backoff: Backoff | None = None,
    rng: random.Random | None = None,
    sleep: Callable[[float], Any] = asyncio.sleep,
) -> bool:
    """Run one scenario task; record each RPC. Returns whether it completed; a task with a
    call still to make when ``over()`` is cut (counted as abandoned). A call refused with a
    retry hint is shed: with ``backoff``, sent again after ``sleep(delay)`` (``rng``: the
    jitter's random stream)."""
    recorder.tasks_started += 1
    rpcs = sent = received = 0
    rng = rng or random.Random(0)
    try:
        step = next(gen)
        refusals = 0
        while True:
            if over is not None and over():
                recorder.tasks_abandoned += 1
                return False
            t0 = time.perf_counter()
            try:
                response = await _perform(stub, step, timeout)
            except grpc.aio.AioRpcError as exc:
                seconds = time.perf_counter() - t0
                code = exc.code().name
                hint = retry_delay(code, exc.trailing_metadata()) if backoff is not None else None
                if hint is None or backoff is None:
                    recorder.record(step.method, seconds, code, exc.details())
                    recorder.tasks_failed += 1
                    return False
                recorder.record_shed(step.method, seconds, code, exc.details())
                refusals += 1
                if refusals > backoff.max_retries:
                    recorder.tasks_gave_up += 1
                    return False
                await sleep(backoff.delay(hint, refusals, rng))
                continue
            recorder.record(step.method, time.perf_counter() - t0, "OK")
            recorder.bot_moves += bot_moves(step.method, response)
            refusals = 0
            rpcs += 1
            sent += _size(step.request)
            received += _size(response)
            step = gen.send(response)
    except StopIteration:
        recorder.tasks_completed += 1
        recorder.completed_rpcs += rpcs
        recorder.completed_bytes_sent += sent
        recorder.completed_bytes_received += received
        return True
    except ScenarioError as exc:
        recorder.task_errors[str(exc)] += 1
        recorder.tasks_failed += 1
        return False
    finally:
        gen.close()


async def _setup(scenario: Scenario, stub: Any, settings: LoadSettings) -> Recorder:
    setup_recorder = Recorder()
    gen = scenario.setup(random.Random(settings.seed))
    ok = await run_task(stub, gen, setup_recorder, settings.timeout, None, backoff=settings.backoff)
    if not ok:
        problems = [*setup_recorder.task_errors]
        for m in setup_recorder.methods.values():
            problems += list(m.errors)
        raise SetupError(f"scenario setup failed: {'; '.join(problems) or 'unknown error'}")
    return setup_recorder


async def run_load(
    scenario: Scenario,
    settings: LoadSettings,
    progress_stream: TextIO | None = sys.stderr,
    clock: Callable[[], float] = time.monotonic,
    *,
    make_stub: Callable[[grpc.aio.Channel], Any] | None = None,
    meters: Mapping[str, Callable[[], float]] | None = None,
    stop: asyncio.Event | None = None,
) -> tuple[Recorder, float, Recorder]:
    """Run the load; returns (measured recorder, elapsed seconds of the measured window,
    setup recorder)."""
    channels = [make_channel(settings) for _ in range(settings.connections)]
    try:
        for channel in channels:
            try:
                await asyncio.wait_for(channel.channel_ready(), settings.connect_timeout)
            except TimeoutError:
                raise SetupError(
                    f"could not connect to {settings.target} within {settings.connect_timeout:g} s"
                ) from None
        stub_class: Any = make_stub or pb_grpc.GameServiceStub
        stubs = [stub_class(ch) for ch in channels]
        setup_recorder = await _setup(scenario, stubs[0], settings)

        recorder = Recorder()
        warm = Recorder()  # the warm-up's calls: not reported
        meters = dict(meters or {})
        progress = Progress(progress_stream, settings.warmup + settings.duration)
        start = clock()
        measured_from = start + settings.warmup
        end = measured_from + settings.duration
        in_flight: set[asyncio.Task[bool]] = set()
        counter = 0

        def over() -> bool:
            return clock() >= end or (stop is not None and stop.is_set())

        def current() -> Recorder:
            return recorder if clock() >= measured_from else warm

        def jitter(index: int) -> random.Random:
            """Task ``index``'s backoff jitter: its own stream, apart from the scenario's."""
            return task_rng(settings.seed ^ 0x5EED, index)

        def spawn(index: int) -> asyncio.Task[bool]:
            gen = scenario.task_for(settings.seed, index)
            stub = stubs[index % len(stubs)]
            task = asyncio.ensure_future(
                run_task(
                    stub, gen, current(), settings.timeout, over, backoff=settings.backoff, rng=jitter(index)
                )
            )
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            return task

        async def open_loop() -> None:
            assert settings.rate is not None
            i = 0
            while True:
                # The schedule ends the loop, and so does the clock: at a rate so high that
                # ``i / rate`` vanishes next to ``start``, no task is ever scheduled past the
                # end, and a task started after it would only be cut before its first call.
                scheduled = start + i / settings.rate
                now = clock()
                if scheduled >= end or now >= end or (stop is not None and stop.is_set()):
                    return
                if scheduled > now:
                    await asyncio.sleep(scheduled - now)
                elif now - scheduled > LATE_SECONDS:
                    current().late_starts += 1
                while len(in_flight) >= settings.max_in_flight:
                    await asyncio.wait(set(in_flight), return_when=asyncio.FIRST_COMPLETED)
                if over():  # the window closed while waiting for a slot
                    return
                spawn(i)
                i += 1

        async def worker(w: int) -> None:
            nonlocal counter
            while not over():
                index = counter
                counter += 1
                gen = scenario.task_for(settings.seed, index)
                stub = stubs[w % len(stubs)]
                await run_task(
                    stub, gen, current(), settings.timeout, over, backoff=settings.backoff, rng=jitter(index)
                )

        async def show_progress() -> None:
            while True:
                await asyncio.sleep(progress.interval)
                busy = (
                    recorder.tasks_started
                    - recorder.tasks_completed
                    - recorder.tasks_failed
                    - recorder.tasks_gave_up
                )
                progress.show(recorder, clock() - start, busy - recorder.tasks_abandoned)

        opened: dict[str, float] = {}

        async def open_window() -> None:
            await asyncio.sleep(max(0.0, measured_from - clock()))
            opened.update({name: read() for name, read in meters.items()})

        ticker = asyncio.ensure_future(show_progress())
        window = asyncio.ensure_future(open_window())
        try:
            if settings.rate is not None:
                await open_loop()
                # The window is over: each task still running stops before its next call. With
                # ``end_grace``, those still waiting after it (in the server's queue, in a
                # backoff) are abandoned rather than awaited, so that an overloaded run does
                # not outlast its window by the queue's wait and its rates stay the window's.
                if in_flight:
                    _done, unfinished = await asyncio.wait(set(in_flight), timeout=settings.end_grace)
                    for task in unfinished:
                        task.cancel()
                    for result in await asyncio.gather(*unfinished, return_exceptions=True):
                        if isinstance(result, asyncio.CancelledError):
                            recorder.tasks_abandoned += 1
            else:
                assert settings.concurrency is not None
                await asyncio.gather(*(worker(w) for w in range(settings.concurrency)))
        finally:
            ticker.cancel()
            if not window.done():  # stopped before the measured window opened
                window.cancel()
        elapsed = max(0.0, clock() - measured_from)
        recorder.meters = {name: read() - opened.get(name, math.nan) for name, read in meters.items()}
        progress.show(recorder, clock() - start, 0)
        progress.done()
        return recorder, elapsed, setup_recorder
    finally:
        for channel in channels:
            await channel.close()
