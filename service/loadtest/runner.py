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
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import grpc
import grpc.aio

from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.scenarios import Scenario, ScenarioError, ScenarioGen, task_rng
from service.loadtest.stats import Recorder

LATE_SECONDS = 0.010


@dataclasses.dataclass(frozen=True, slots=True)
class LoadSettings:
    target: str = "127.0.0.1:50051"
    rate: float | None = None  # tasks per second (open loop)
    concurrency: int | None = None  # workers (closed loop)
    duration: float = 10.0
    connections: int = 1
    timeout: float = 30.0
    max_in_flight: int = 1000
    connect_timeout: float = 10.0
    seed: int = 1
    max_message_bytes: int = 16 * 1024 * 1024

    def __post_init__(self) -> None:
        if (self.rate is None) == (self.concurrency is None):
            raise ValueError("give exactly one of rate (open loop) or concurrency (closed loop)")
        if self.rate is not None and self.rate <= 0:
            raise ValueError("rate must be positive")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.duration <= 0 or self.connections < 1 or self.timeout <= 0 or self.max_in_flight < 1:
            raise ValueError("duration, connections, timeout and max_in_flight must be positive")


class SetupError(RuntimeError):
    """The scenario's setup (or the connection) failed: no measured run happened."""


def make_channel(settings: LoadSettings) -> grpc.aio.Channel:
    options = [
        # A private subchannel pool per channel: N channels really are N connections.
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
    ]
    return grpc.aio.insecure_channel(settings.target, options=options)


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
            f" errors {recorder.error_count}"
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
    stub: Any, gen: ScenarioGen, recorder: Recorder, timeout: float, stop_at: float | None
) -> bool:
    """Run one scenario task; record each RPC. Returns whether it completed."""
    recorder.tasks_started += 1
    rpcs = sent = received = 0
    try:
        step = next(gen)
        while True:
            if stop_at is not None and time.monotonic() >= stop_at:
                recorder.tasks_abandoned += 1
                return False
            t0 = time.perf_counter()
            try:
                response = await _perform(stub, step, timeout)
            except grpc.aio.AioRpcError as exc:
                recorder.record(step.method, time.perf_counter() - t0, exc.code().name, exc.details())
                recorder.tasks_failed += 1
                return False
            recorder.record(step.method, time.perf_counter() - t0, "OK")
            rpcs += 1
            sent += step.request.ByteSize()
            received += response.ByteSize()
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
    ok = await run_task(stub, gen, setup_recorder, settings.timeout, None)
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
) -> tuple[Recorder, float, Recorder]:
    """Run the load; returns (measured recorder, elapsed seconds, setup recorder)."""
    channels = [make_channel(settings) for _ in range(settings.connections)]
    try:
        for channel in channels:
            try:
                await asyncio.wait_for(channel.channel_ready(), settings.connect_timeout)
            except TimeoutError:
                raise SetupError(
                    f"could not connect to {settings.target} within {settings.connect_timeout:g} s"
                ) from None
        stub_class: Any = pb_grpc.GameServiceStub
        stubs = [stub_class(ch) for ch in channels]
        setup_recorder = await _setup(scenario, stubs[0], settings)

        recorder = Recorder()
        progress = Progress(progress_stream, settings.duration)
        start = clock()
        end = start + settings.duration
        in_flight: set[asyncio.Task[bool]] = set()
        counter = 0

        def spawn(index: int) -> asyncio.Task[bool]:
            gen = scenario.task(task_rng(settings.seed, index))
            stub = stubs[index % len(stubs)]
            task = asyncio.ensure_future(run_task(stub, gen, recorder, settings.timeout, end))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            return task

        async def open_loop() -> None:
            assert settings.rate is not None
            i = 0
            while True:
                scheduled = start + i / settings.rate
                if scheduled >= end:
                    return
                now = clock()
                if scheduled > now:
                    await asyncio.sleep(scheduled - now)
                elif now - scheduled > LATE_SECONDS:
                    recorder.late_starts += 1
                while len(in_flight) >= settings.max_in_flight:
                    await asyncio.wait(set(in_flight), return_when=asyncio.FIRST_COMPLETED)
                spawn(i)
                i += 1

        async def worker(w: int) -> None:
            nonlocal counter
            while clock() < end:
                index = counter
                counter += 1
                gen = scenario.task(task_rng(settings.seed, index))
                await run_task(stubs[w % len(stubs)], gen, recorder, settings.timeout, end)

        async def show_progress() -> None:
            while True:
                await asyncio.sleep(progress.interval)
                busy = recorder.tasks_started - recorder.tasks_completed - recorder.tasks_failed
                progress.show(recorder, clock() - start, busy - recorder.tasks_abandoned)

        ticker = asyncio.ensure_future(show_progress())
        try:
            if settings.rate is not None:
                await open_loop()
                if in_flight:
                    await asyncio.gather(*in_flight)
            else:
                assert settings.concurrency is not None
                await asyncio.gather(*(worker(w) for w in range(settings.concurrency)))
        finally:
            ticker.cancel()
        elapsed = clock() - start
        progress.show(recorder, elapsed, 0)
        progress.done()
        return recorder, elapsed, setup_recorder
    finally:
        for channel in channels:
            await channel.close()
