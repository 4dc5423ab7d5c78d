"""The queue of bot calls in front of the search slots (service.workers.SearchQueue): FIFO,
bounded, deadline-aware, cancellable, drained on shutdown; with a slot counter of one gRPC
process and with the semaphore that several gRPC processes share. Threads wait on bounded
waits only; a fake clock decides every estimate."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from service.workers import REFUSAL_REASONS, Cancelled, Entry, Refused, SearchQueue

WAIT = 10.0  # the longest any bounded wait below may take


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def eventually(condition: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"not within {WAIT} s: {what}")
        time.sleep(0.002)


@pytest.fixture(params=["counter", "semaphore"])
def make_queue(request: Any) -> Callable[..., SearchQueue]:
    """A queue over a slot counter of its own, or over a shared semaphore."""

    def make(capacity: int = 1, max_length: int = 8, max_wait: float = 60.0, **kw: Any) -> SearchQueue:
        if request.param == "semaphore":
            kw["slots"] = multiprocessing.get_context("fork").BoundedSemaphore(capacity)
        return SearchQueue(capacity, max_length, max_wait, **kw)

    return make


def hold(queue: SearchQueue, deadline: float | None = None) -> Entry:
    entry = queue.enter(deadline)
    queue.acquire(entry)
    return entry


class Waiter(threading.Thread):
    """A call that enters now and waits for its slot in a thread; it releases the slot
    when ``done`` is set. ``outcome``: "admitted", or the exception that ended its wait."""

    def __init__(
        self, queue: SearchQueue, name: str, order: list[str], deadline: float | None = None
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.queue = queue
        self.order = order
        self.entry = queue.enter(deadline)
        self.done = threading.Event()
        self.outcome: Any = None

    def run(self) -> None:
        try:
            self.queue.acquire(self.entry)
        except (Refused, Cancelled) as exc:
            self.outcome = exc
            return
        self.outcome = "admitted"
        self.order.append(self.name)
        self.done.wait(WAIT)
        self.queue.release(self.entry)


def start_in_line(queue: SearchQueue, names: list[str], order: list[str], **kw: Any) -> list[Waiter]:
    """Start a waiter per name, each once the previous one waits (a known arrival order)."""
    waiters = []
    for name in names:
        w = Waiter(queue, name, order, **kw)
        before = queue.waiting
        w.start()
        eventually(lambda b=before: queue.waiting == b + 1, f"{name} waits")
        waiters.append(w)
    return waiters


def test_calls_get_the_slot_in_the_order_they_came(make_queue: Callable[..., SearchQueue]) -> None:
    queue = make_queue(capacity=1)
    first = hold(queue)
    order: list[str] = []
    waiters = start_in_line(queue, ["b", "c", "d", "e"], order)
    assert queue.length == 4 and queue.holding == 1
    queue.release(first)
    for w in waiters:  # each releases once it has been admitted (and recorded) in turn
        eventually(lambda w=w: w.outcome == "admitted", f"{w.name} admitted")
        w.done.set()
        w.join(WAIT)
    assert order == ["b", "c", "d", "e"]
    assert queue.length == 0 and queue.holding == 0


def test_two_slots_serve_the_line_in_order(make_queue: Callable[..., SearchQueue]) -> None:
    queue = make_queue(capacity=2)
    held = [hold(queue), hold(queue)]
    order: list[str] = []
    waiters = start_in_line(queue, ["b", "c", "d"], order)
    queue.release(held[0])
    eventually(lambda: order == ["b"], "b admitted")
    queue.release(held[1])
    eventually(lambda: order == ["b", "c"], "c admitted")
    assert waiters[2].outcome is None  # d still waits: both slots are taken
    waiters[0].done.set()
    eventually(lambda: order == ["b", "c", "d"], "d admitted")
    for w in waiters:
        w.done.set()
        w.join(WAIT)


def test_the_queue_is_bounded_and_a_refusal_says_when_to_retry(
    make_queue: Callable[..., SearchQueue],
) -> None:
    clock = Clock()
    queue = make_queue(capacity=1, max_length=2, clock=clock)
    first = hold(queue)
    clock.now += 0.5
    queue.release(first)  # a call holds a slot for 0.5 s
    first = hold(queue)
    queue.enter()
    queue.enter()
    with pytest.raises(Refused) as info:
        queue.enter()
    assert info.value.reason == "queue_full"
    assert "search slots are busy" in str(info.value)
    assert info.value.retry_after == pytest.approx(1.0)  # the two ahead: 2 x 0.5 s
    assert queue.length == 2  # the refused call took no place


def test_a_free_slot_admits_without_any_wait(make_queue: Callable[..., SearchQueue]) -> None:
    queue = make_queue(capacity=2, max_length=0, max_wait=0.0)
    a, b = hold(queue), hold(queue)
    with pytest.raises(Refused) as info:  # no queue at all: a third call is refused at once
        queue.enter()
    assert info.value.reason == "queue_full"
    queue.release(a)
    queue.release(b)


def test_a_call_whose_deadline_the_expected_wait_would_miss_is_refused_up_front(
    make_queue: Callable[..., SearchQueue],
) -> None:
    clock = Clock()
    queue = make_queue(capacity=2, max_length=8, max_wait=3.0, clock=clock, margin=0.04)
    for _ in range(2):  # calls hold a slot for 1 s: the estimate
        entry = hold(queue)
        clock.now += 1.0
        queue.release(entry)
    assert queue.hold_seconds == pytest.approx(1.0)
    assert queue.enter(clock.now + 0.5).deadline is not None  # a slot is free: no estimate
    hold(queue)
    hold(queue)  # (the entered call above holds no slot yet: it is first in line)
    # Second in line: 2 x 1 s / 2 slots of wait, then 1 s of search.
    assert queue.expected_wait(2) == pytest.approx(1.0)
    with pytest.raises(Refused) as info:
        queue.enter(clock.now + 1.9)
    assert info.value.reason == "queue_deadline" and info.value.retry_after > 0
    queue.enter(clock.now + 2.1)  # fits: waits in line
    # Places 3 to 6 wait 1.5 to 3 s; the 7th would wait 3.5 s, past the longest wait:
    # refused whatever its deadline (the queue is not full).
    for _ in range(4):
        queue.enter()
    with pytest.raises(Refused) as info:
        queue.enter()
    assert info.value.reason == "queue_wait"
    assert queue.length == 6


def test_a_call_still_waiting_at_its_deadline_is_refused_then(make_queue: Callable[..., SearchQueue]) -> None:
    queue = make_queue(capacity=1, max_wait=60.0)
    first = hold(queue)
    order: list[str] = []
    late = start_in_line(queue, ["late"], order, deadline=time.monotonic() + 0.05)[0]
    late.join(WAIT)
    assert isinstance(late.outcome, Refused) and late.outcome.reason == "queue_deadline"
    assert queue.length == 0
    queue.release(first)


def test_a_call_still_waiting_at_the_longest_wait_is_refused_then(
    make_queue: Callable[..., SearchQueue],
) -> None:
    queue = make_queue(capacity=1, max_wait=0.05)
    first = hold(queue)
    w = start_in_line(queue, ["w"], [])[0]
    w.join(WAIT)
    assert isinstance(w.outcome, Refused) and w.outcome.reason == "queue_wait"
    queue.release(first)


def test_a_cancelled_call_leaves_the_queue_and_the_next_gets_the_slot(
    make_queue: Callable[..., SearchQueue],
) -> None:
    waits: list[tuple[float, str]] = []
    queue = make_queue(capacity=1, on_wait=lambda s, outcome: waits.append((s, outcome)))
    first = hold(queue)
    order: list[str] = []
    b, c = start_in_line(queue, ["b", "c"], order)
    queue.cancel(b.entry)
    b.join(WAIT)
    assert isinstance(b.outcome, Cancelled)
    assert queue.length == 1 and queue.waiting == 1
    queue.release(first)
    eventually(lambda: order == ["c"], "c admitted")
    c.done.set()
    c.join(WAIT)
    assert [o for _, o in waits] == ["admitted", "cancelled", "admitted"]


def test_a_call_cancelled_before_it_waits_never_takes_a_slot(make_queue: Callable[..., SearchQueue]) -> None:
    queue = make_queue(capacity=1)
    entry = queue.enter()
    queue.cancel(entry)
    with pytest.raises(Cancelled):
        queue.acquire(entry)
    assert queue.length == 0 and queue.holding == 0
    hold(queue)  # the slot is still free


def test_draining_refuses_the_calls_that_wait_and_those_that_come(
    make_queue: Callable[..., SearchQueue],
) -> None:
    queue = make_queue(capacity=1)
    first = hold(queue)
    waiters = start_in_line(queue, ["b", "c"], [])
    queue.close()
    for w in waiters:
        w.join(WAIT)
        assert isinstance(w.outcome, Refused) and w.outcome.reason == "draining"
    with pytest.raises(Refused) as info:
        queue.enter()
    assert info.value.reason == "draining"
    assert queue.length == 0
    queue.release(first)  # the call that held its slot finishes normally
    assert queue.holding == 0


def test_a_call_that_never_asks_for_its_slot_leaves_the_count(make_queue: Callable[..., SearchQueue]) -> None:
    lengths: list[int] = []
    queue = make_queue(capacity=1, max_length=1, on_length=lengths.append)
    first = hold(queue)
    entry = queue.enter()  # e.g. a request refused for a bad token after it entered
    queue.finish(entry)
    queue.finish(entry)  # idempotent
    assert queue.length == 0 and sum(lengths) == 0
    queue.enter()  # its place is free again
    queue.release(first)


def test_refusal_reasons_are_a_fixed_set() -> None:
    assert REFUSAL_REASONS == ("queue_full", "queue_wait", "queue_deadline", "draining")
    with pytest.raises(ValueError, match="unknown refusal reason"):
        Refused("anything a request says", "no", 1.0)


def test_a_search_its_call_stopped_waiting_for_keeps_its_slot_until_it_ends(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that overran its call's wait (a worker slower than its deadline) is asked to
    stop, and keeps its slot and its cancel flag until its worker is done: released at once,
    the next call's search would wait behind it in that worker, and the flag, reset for that
    call, would no longer stop it."""
    from concurrent.futures import Future
    from concurrent.futures import TimeoutError as FutureTimeout

    from service.workers import SearchPool

    pool = SearchPool(1, 1, str(tmp_path))
    try:
        running: Future[Any] = Future()
        monkeypatch.setattr(pool, "submit", lambda _job: running)
        entry = pool.enter()
        with pytest.raises(FutureTimeout), pool.admit(entry) as ticket:
            pool.run(None, timeout=0.01, ticket=ticket)  # type: ignore[arg-type]
        assert pool._flags[ticket.index] == 1  # the search is asked to stop
        assert pool.take_free() is None  # its slot is still taken
        running.set_result(None)  # the worker is done with it
        taken = pool.take_free()
        assert taken is not None
        pool.release(taken[0])
    finally:
        pool.shutdown(cancel=True)
