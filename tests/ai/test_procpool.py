"""The worker pool (ai/procpool.py): answers, errors, cancellation, dead workers, shutdown."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from concurrent.futures import CancelledError, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pytest

from ai.procpool import SHUTDOWN_MARGIN_SECONDS, RemoteTraceback, WorkerDied, WorkerPool, worker_pid

_SHARED: dict[str, Any] = {}


def square(x: int) -> int:
    return x * x


def fail(message: str) -> None:
    raise ValueError(message)


def nap(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def remember(event: Any) -> None:
    _SHARED["event"] = event


def wait_for_event(limit: float) -> bool:
    """Poll the event shared at start-up (the cancellation pattern): True if it was set."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if _SHARED["event"].is_set():
            return True
        time.sleep(0.01)
    return False


def ignore_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def broken_initializer() -> None:
    raise RuntimeError("cannot start")


def no_children_left() -> bool:
    deadline = time.monotonic() + 5.0
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not multiprocessing.active_children()


def test_calls_run_in_the_workers_and_answer_in_order_of_submission() -> None:
    with WorkerPool(2) as pool:
        futures = [pool.submit(square, x) for x in range(20)]
        assert [f.result(timeout=10) for f in futures] == [x * x for x in range(20)]
        pids = {pool.submit(worker_pid).result(timeout=10) for _ in range(6)}
        assert os.getpid() not in pids and pids <= set(pool.pids())
    assert no_children_left()


def test_an_exception_comes_back_with_its_remote_traceback() -> None:
    with WorkerPool(1) as pool:
        future = pool.submit(fail, "no luck")
        with pytest.raises(ValueError, match="no luck") as info:
            future.result(timeout=10)
        assert isinstance(info.value.__cause__, RemoteTraceback)
        assert "in fail" in str(info.value.__cause__)
        assert pool.submit(square, 3).result(timeout=10) == 9  # the worker carries on


def test_a_call_not_started_can_be_cancelled() -> None:
    with WorkerPool(1) as pool:
        busy = pool.submit(nap, 0.5)
        queued = pool.submit(square, 2)
        assert queued.cancel()
        busy.result(timeout=10)
        with pytest.raises(CancelledError):
            queued.result(timeout=1)


def test_a_running_call_polls_a_flag_shared_at_start_up() -> None:
    ctx = multiprocessing.get_context("fork")
    event = ctx.Event()
    with WorkerPool(1, start_method="fork", initializer=remember, initargs=(event,)) as pool:
        future = pool.submit(wait_for_event, 10.0)
        time.sleep(0.2)
        event.set()
        assert future.result(timeout=5) is True


def test_a_killed_worker_fails_its_call_and_is_replaced() -> None:
    with WorkerPool(1) as pool:
        running = pool.submit(nap, 30.0)
        time.sleep(0.3)
        (pid,) = pool.pids()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(WorkerDied):
            running.result(timeout=10)
        assert isinstance(WorkerDied(), BrokenProcessPool)
        assert pool.submit(square, 5).result(timeout=10) == 25
        assert pool.pids() != [pid]
    assert no_children_left()


def test_ctrl_c_is_the_owners_to_handle_not_the_workers(capfd: pytest.CaptureFixture[str]) -> None:
    """SIGINT (Ctrl-C signals the whole process group) leaves a worker serving, idle or busy,
    and prints no traceback: the pool's owner decides what stops."""
    with WorkerPool(1) as pool:
        (pid,) = pool.pids()
        pool.submit(square, 2).result(timeout=10)  # idle, waiting for a call
        os.kill(pid, signal.SIGINT)
        assert pool.submit(square, 3).result(timeout=10) == 9
        running = pool.submit(nap, 0.5)
        time.sleep(0.2)
        os.kill(pid, signal.SIGINT)  # in a call
        assert running.result(timeout=10) == pid  # the call finished in the same worker
        assert pool.pids() == [pid]
    assert no_children_left()
    assert "KeyboardInterrupt" not in capfd.readouterr().err


def test_a_failing_initializer_breaks_the_pool() -> None:
    pool = WorkerPool(1, initializer=broken_initializer)
    try:
        # The worker may die before or after the call is submitted: the submission fails at
        # once, or its future does.
        with pytest.raises(BrokenProcessPool):
            pool.submit(square, 2).result(timeout=10)
        with pytest.raises(BrokenProcessPool):
            pool.submit(square, 3)
    finally:
        pool.shutdown()
    assert no_children_left()


def test_shutdown_waits_for_running_calls_and_cancels_the_rest() -> None:
    pool = WorkerPool(1)
    running = pool.submit(nap, 0.3)
    time.sleep(0.1)
    queued = pool.submit(square, 4)
    pool.shutdown()
    assert running.result(timeout=0) > 0
    assert queued.cancelled()
    with pytest.raises(RuntimeError):
        pool.submit(square, 1)
    assert no_children_left()


def test_shutdown_with_cancel_terminates_running_calls_at_once() -> None:
    pool = WorkerPool(2)
    futures = [pool.submit(nap, 60.0) for _ in range(2)]
    time.sleep(0.3)
    pool.shutdown(cancel=True)  # the 60 s calls do not run on
    done, _ = wait(futures, timeout=5)
    assert len(done) == 2
    for f in futures:
        with pytest.raises(WorkerDied):
            f.result(timeout=0)
    assert no_children_left()


@pytest.mark.parametrize("initializer", [None, ignore_sigterm], ids=["plain", "ignoring SIGTERM"])
def test_shutdown_ends_within_its_timeout_and_margin_for_any_number_of_workers(initializer: Any) -> None:
    """Busy workers are waited for once, together, then terminated, then killed: the stop's
    bound does not grow with the workers, and holds for workers that ignore SIGTERM."""
    pool = WorkerPool(6, initializer=initializer)
    futures = [pool.submit(nap, 60.0) for _ in range(6)]
    deadline = time.monotonic() + 10
    while not all(f.running() for f in futures) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert all(f.running() for f in futures)
    timeout = 1.0
    start = time.monotonic()
    pool.shutdown(timeout=timeout)
    took = time.monotonic() - start
    # The slack is for a loaded machine; one worker's own wait past the bound is 1 s or more.
    assert took < timeout + SHUTDOWN_MARGIN_SECONDS + 0.8, took
    for f in futures:
        with pytest.raises(WorkerDied):
            f.result(timeout=0)
    assert no_children_left()


def test_leaving_a_with_block_by_an_exception_terminates_the_workers() -> None:
    with pytest.raises(KeyboardInterrupt), WorkerPool(1) as pool:
        pool.submit(nap, 60.0)
        time.sleep(0.2)
        raise KeyboardInterrupt
    assert no_children_left()


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_other_start_methods(method: str) -> None:
    with WorkerPool(1, start_method=method, preload=["ai.procpool"]) as pool:
        assert pool.submit(square, 7).result(timeout=60) == 49
