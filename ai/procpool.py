"""Calls in worker processes: the one way heka runs work in parallel (standard library only).

Python threads do not run Python code in parallel, so the search's root parallelism
(:mod:`ai.root_parallel`), the arena (:mod:`ai.arena`) and the service's search workers
(``service/workers.py``) run their work in processes, all through a :class:`WorkerPool`:

* ``WorkerPool(n, start_method=..., initializer=..., initargs=...)`` starts ``n`` processes
  at once (``fork`` by default where available: a child inherits the loaded modules and the
  objects passed in ``initargs``, such as events and shared arrays; ``forkserver`` with
  ``preload`` for a server that must not fork its own threads; ``spawn`` elsewhere). Each
  runs ``initializer(*initargs)`` once, then calls, one at a time.
* :meth:`WorkerPool.submit` ``(fn, *args)`` returns a :class:`concurrent.futures.Future`;
  ``fn`` and ``args`` travel pickled, so ``fn`` is a module-level function. An exception
  raised by the call is the future's exception (its remote traceback as ``__cause__``).
* Cancellation: a call not yet started is cancelled with ``future.cancel()``; a running call
  polls whatever flag its caller shares with it through ``initargs`` (an ``Event``, a shared
  ``Array``: see :attr:`WorkerPool.context`); :meth:`WorkerPool.shutdown` with
  ``cancel=True`` also terminates the workers, so that nothing keeps running.
* A worker that dies while running a call (killed, crashed) fails that call with
  :class:`WorkerDied` (a :class:`~concurrent.futures.process.BrokenProcessPool`) and is
  replaced, so the pool recovers by itself. A worker that dies before its initializer
  finished breaks the pool: every call then fails with ``BrokenProcessPool``.
* :meth:`WorkerPool.shutdown` (also on leaving a ``with`` block) always joins every process,
  terminating (then killing) those that do not stop in time: no zombies, no orphans. It
  returns within its ``timeout`` plus :data:`SHUTDOWN_MARGIN_SECONDS`, however many workers
  run and whatever their calls do (a server's stop counts on that bound).

One thread per pool (the *dispatcher*) hands calls to idle workers and collects answers, so
``submit`` and ``Future.result`` may be used from any thread.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from typing import TypeAlias, TypeVar, cast

R = TypeVar("R")
#: The start methods a pool can use, as their ``multiprocessing`` contexts.
Context: TypeAlias = ForkContext | ForkServerContext | SpawnContext
Waitable: TypeAlias = multiprocessing.connection.Connection | int  # a pipe end or a sentinel


class WorkerDied(BrokenProcessPool):
    """The worker process running a call ended before answering (killed or crashed)."""


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker (the ``__cause__`` of the exception
    a future re-raises)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def default_start_method() -> str:
    """``fork`` where available (fast; children inherit modules and shared objects), else
    ``spawn``."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def get_context(method: str) -> Context:
    """The ``multiprocessing`` context of a start method (``fork``, ``forkserver``, ``spawn``)."""
    if method == "fork":
        return multiprocessing.get_context("fork")
    if method == "forkserver":
        return multiprocessing.get_context("forkserver")
    if method == "spawn":
        return multiprocessing.get_context("spawn")
    raise ValueError(f"unknown start method {method!r}")


# ---------------------------------------------------------------------------------------
# Worker side
# ---------------------------------------------------------------------------------------

_READY = "ready"
#: Seconds terminated workers get to exit before they are killed, and killed ones to be
#: reaped; then the dispatcher's own end. Each is one wait for every worker together.
TERMINATE_SECONDS = 1.0
KILL_SECONDS = 1.0
DISPATCHER_SECONDS = 1.0
#: The most :meth:`WorkerPool.shutdown` takes past its ``timeout``.
SHUTDOWN_MARGIN_SECONDS = TERMINATE_SECONDS + KILL_SECONDS + DISPATCHER_SECONDS


def _worker_main(
    conn: multiprocessing.connection.Connection,
    initializer: Callable[..., object] | None,
    initargs: tuple[object, ...],
) -> None:  # pragma: no cover - runs in a child process
    """A worker: initialise, say ready, then answer calls until ``None`` or the pipe closes.
    Each answer is ``(True, result)`` or ``(False, (exception, traceback text))``. Ctrl-C at
    a terminal signals the whole process group: the pool's owner decides what it stops, and
    stops its workers itself, so a worker ignores SIGINT (it printed a KeyboardInterrupt
    traceback for each worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)
    conn.send(_READY)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        fn, args = message
        try:
            reply: tuple[bool, object] = (True, fn(*args))
        except BaseException as exc:
            reply = (False, (exc, traceback.format_exc()))
        try:
            conn.send(reply)
        except Exception as exc:  # a result or exception that does not pickle
            conn.send((False, (RuntimeError(f"the answer could not be sent back: {exc!r}"), "")))


# ---------------------------------------------------------------------------------------
# Pool side
# ---------------------------------------------------------------------------------------


class _Worker:
    __slots__ = ("conn", "future", "process", "ready")

    def __init__(self, process: BaseProcess, conn: multiprocessing.connection.Connection) -> None:
        self.process = process
        self.conn = conn
        self.ready = False
        self.future: Future[object] | None = None


class WorkerPool:
    """A fixed number of worker processes running submitted calls (module docstring)."""

    def __init__(
        self,
        workers: int,
        *,
        start_method: str | None = None,
        preload: Iterable[str] = (),
        initializer: Callable[..., object] | None = None,
        initargs: tuple[object, ...] = (),
        daemon: bool = True,
        name: str = "heka-worker",
    ) -> None:
        """``daemon=False`` lets the workers start processes of their own (an arena worker's
        search may use root parallelism); daemonic workers die with their parent."""
        if workers < 1:
            raise ValueError("a worker pool needs at least one worker")
        self.size = workers
        self.context = get_context(start_method or default_start_method())
        if preload and self.context.get_start_method() == "forkserver":
            self.context.set_forkserver_preload(list(preload))
        self._initializer = initializer
        self._initargs = initargs
        self._daemon = daemon
        self._name = name
        self._lock = threading.Lock()
        self._pending: collections.deque[tuple[Future[object], Callable[..., object], tuple[object, ...]]]
        self._pending = collections.deque()
        self._workers: list[_Worker] = []
        self._broken: str | None = None
        self._closing = False
        self._orphans: list[multiprocessing.connection.Connection] = []
        self._wake_reader, self._wake_writer = multiprocessing.Pipe(duplex=False)
        try:
            for _ in range(workers):
                self._workers.append(self._start_worker())
        except BaseException:
            self._terminate_all(time.monotonic())
            self._close_orphans()
            raise
        self._dispatcher = threading.Thread(target=self._run, name=f"{name}-dispatcher", daemon=True)
        self._dispatcher.start()

    # --- public API ------------------------------------------------------------------

    def submit(self, fn: Callable[..., R], *args: object) -> Future[R]:
        """Run ``fn(*args)`` in a worker; ``BrokenProcessPool`` at once if the pool is broken
        or ``RuntimeError`` if it is shut down."""
        future: Future[object] = Future()
        with self._lock:
            if self._broken is not None:
                raise BrokenProcessPool(self._broken)
            if self._closing:
                raise RuntimeError("cannot submit to a worker pool that is shut down")
            self._pending.append((future, fn, args))
        self._wake()
        return cast("Future[R]", future)  # it will hold what fn returns

    @property
    def broken(self) -> bool:
        """Whether the pool is broken (a worker died while starting): every call fails."""
        return self._broken is not None

    def pids(self) -> list[int]:
        """The process ids of the current workers."""
        with self._lock:
            return [w.process.pid for w in self._workers if w.process.pid is not None]

    def shutdown(self, *, cancel: bool = False, timeout: float = 5.0) -> None:
        """Stop the pool and join every worker. Calls not started are cancelled; running
        calls finish first, unless ``cancel``: then the workers are terminated at once and
        their calls fail with :class:`WorkerDied`. Workers still alive ``timeout`` seconds
        after the call are terminated, then killed: the call returns within ``timeout`` plus
        :data:`SHUTDOWN_MARGIN_SECONDS`, for any number of workers."""
        deadline = time.monotonic() + (0.0 if cancel else timeout)
        with self._lock:
            if self._closing and not self._dispatcher.is_alive():
                return
            self._closing = True
            while self._pending:
                self._pending.popleft()[0].cancel()
            workers = list(self._workers)
        if cancel:
            for w in workers:
                with contextlib.suppress(OSError):
                    w.process.terminate()
        self._wake()
        self._dispatcher.join(_left(deadline))
        self._terminate_all(deadline)
        self._wake()
        self._dispatcher.join(DISPATCHER_SECONDS)
        if self._dispatcher.is_alive():
            return  # still reading: its pipes stay open (a dispatcher ends once woken)
        self._close_orphans()
        with contextlib.suppress(OSError):
            self._wake_writer.close()
            self._wake_reader.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(cancel=exc[0] is not None)

    # --- the dispatcher ----------------------------------------------------------------

    def _start_worker(self) -> _Worker:
        reader, writer = self.context.Pipe(duplex=True)
        process = self.context.Process(
            target=_worker_main,
            args=(writer, self._initializer, self._initargs),
            name=self._name,
            daemon=self._daemon,
        )
        process.start()
        writer.close()
        return _Worker(process, reader)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_writer.send_bytes(b"")

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closing and not self._workers:
                    return
                handles: list[Waitable] = [self._wake_reader]
                owner: dict[object, _Worker] = {}
                for w in self._workers:
                    handles += [w.conn, w.process.sentinel]
                    owner[w.conn] = owner[w.process.sentinel] = w
            ready = multiprocessing.connection.wait(handles)
            if self._wake_reader in ready:
                with contextlib.suppress(EOFError, OSError):
                    while self._wake_reader.poll():
                        self._wake_reader.recv_bytes()
            for r in ready:
                worker = owner.get(r)
                if worker is not None and worker in self._workers:
                    self._service(worker)
            self._dispatch()

    def _service(self, w: _Worker) -> None:
        """Read ``w``'s answers; notice its death."""
        try:
            while w.conn.poll():
                self._answer(w, w.conn.recv())
        except (EOFError, OSError):
            pass
        if not w.process.is_alive():
            self._lost(w)

    def _answer(self, w: _Worker, message: object) -> None:
        if message == _READY:
            w.ready = True
            return
        future, w.future = w.future, None
        if future is None or future.done():  # nobody asked, or a shutdown failed it meanwhile
            return
        assert isinstance(message, tuple)
        ok, payload = message
        if ok:
            future.set_result(payload)
        else:
            exc, text = payload
            if text:
                exc.__cause__ = RemoteTraceback(text)
            future.set_exception(exc)

    def _lost(self, w: _Worker) -> None:
        """``w`` exited: fail its call, join it, and replace it (or break the pool if it
        never got ready)."""
        w.process.join(1.0)
        code = w.process.exitcode
        with self._lock:
            if w not in self._workers:
                return  # a shutdown took it, and closes its connection
            with contextlib.suppress(OSError):
                w.conn.close()
            self._workers.remove(w)
            if w.future is not None and not w.future.done():
                w.future.set_exception(WorkerDied(f"a worker process died (exit code {code})"))
            if self._closing:
                return
            if not w.ready:
                self._broken = f"a worker process died while starting (exit code {code})"
                broken = list(self._pending)
                self._pending.clear()
            else:
                broken = []
                try:
                    self._workers.append(self._start_worker())
                except Exception as exc:  # e.g. out of processes
                    self._broken = f"a worker process could not be replaced: {exc!r}"
                    broken = list(self._pending)
                    self._pending.clear()
        for future, _fn, _args in broken:
            if future.set_running_or_notify_cancel():
                future.set_exception(BrokenProcessPool(self._broken or "broken"))

    def _dispatch(self) -> None:
        """Hand pending calls to idle workers; when closing, release idle workers."""
        with self._lock:
            for w in self._workers:
                if not w.ready or w.future is not None:
                    continue
                while self._pending:
                    future, fn, args = self._pending.popleft()
                    if not future.set_running_or_notify_cancel():
                        continue  # cancelled while waiting
                    try:
                        w.conn.send((fn, args))
                    except Exception as exc:  # unpicklable call, or the worker is gone
                        future.set_exception(exc)
                        continue
                    w.future = future
                    break
                if w.future is None and self._closing:
                    with contextlib.suppress(OSError):
                        w.conn.send(None)
                    w.ready = False  # told to stop

    def _terminate_all(self, deadline: float) -> None:
        """Join every worker process: wait until ``deadline`` (``time.monotonic()``), then
        terminate those left and wait :data:`TERMINATE_SECONDS`, then kill those left and
        wait :data:`KILL_SECONDS`; each wait is shared by all the workers."""
        with self._lock:
            workers = list(self._workers)
            for w in workers:
                if w.future is not None and not w.future.done():
                    w.future.set_exception(WorkerDied("the worker pool was shut down"))
            self._workers.clear()
        processes = [w.process for w in workers]
        for p in processes:
            p.join(_left(deadline))
        for stop, wait in ((BaseProcess.terminate, TERMINATE_SECONDS), (BaseProcess.kill, KILL_SECONDS)):
            left = [p for p in processes if p.is_alive()]
            for p in left:
                with contextlib.suppress(OSError):
                    stop(p)
            end = time.monotonic() + wait
            for p in left:
                p.join(_left(end))
        # The dispatcher may still be reading them: closed once it has ended (:meth:`shutdown`).
        self._orphans += [w.conn for w in workers]

    def _close_orphans(self) -> None:
        for conn in self._orphans:
            with contextlib.suppress(OSError):
                conn.close()
        self._orphans.clear()


def _left(deadline: float) -> float:
    """Seconds from now to ``deadline`` (``time.monotonic()``), at least 0."""
    return max(0.0, deadline - time.monotonic())


def worker_pid() -> int:
    """This process's id (a call for :meth:`WorkerPool.submit`: which worker answers)."""
    return os.getpid()
