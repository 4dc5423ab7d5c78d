"""Arena, ladder, check and self-play games as Ray tasks (the ``ray`` extra:
``pip install 'heka[ray]'``; docs/ray.md).

``heka arena ... --ray ADDRESS`` (also with ``--ladder`` and ``--check``) and ``heka train
... --ray ADDRESS`` play their games as Ray tasks instead of in local worker processes:

* ``ADDRESS`` is ``local`` (a Ray instance started on this machine for the run, with
  ``--workers`` CPUs when that is above 1, else every core, and no dashboard) or anything
  ``ray.init(address=...)`` takes: ``auto`` (the cluster this process runs in, as a RayJob's
  driver does), ``HOST:6379``, ``ray://HOST:10001`` (Ray Client). A Ray instance already
  started in this process (``ray.init`` by the caller) is used as it is.
* A ``local`` instance runs with Ray's token authentication (``RAY_AUTH_MODE=token``): its
  servers listen on every interface of the machine, and without the token anyone who reaches
  them could run code in its workers. ``RAY_AUTH_MODE=disabled`` is refused for it
  (docs/ray.md, "Security").
* An address nobody answers fails after ``--ray-timeout`` seconds (:data:`CONNECT_SECONDS`
  by default) with one line naming it: ``ray.init`` itself retries such an address for ever.
* Each game is one task (one CPU) that runs the same function as a local worker
  (:func:`ai.arena.play_task`, :func:`learn.train.play_one`) on the same task, seeded by its
  index; so for bots on iteration budgets a Ray run gives the same games, the same table and
  the same model as the process pool. Where a game is played changes only its seconds.
* Results stream back as games finish (``ray.wait``), so the progress bar, the ``--json``
  checkpoints and ``--resume`` work as with local workers. A stop (SIGINT, SIGTERM) or an
  error cancels the games still queued or running.

Only this module imports ray; ``ai/`` and ``learn/`` take the runners it makes as plain
callables (:data:`ai.arena.GameRunner`, :data:`learn.train.GameRunner`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ai.arena import ArenaConfig, ArenaError, GameRecord, GameRunner, GameTask, play_task

if TYPE_CHECKING:
    from learn.train import GameRunner as TrainRunner

#: How long one wait for finished games lasts, so that a stop is seen at least this often.
POLL_SECONDS = 0.5
#: How long connecting to a cluster may take (``--ray-timeout``) before the command gives up:
#: ``ray.init`` retries an address that does not answer (a closed port, a host that drops the
#: packets, a port that is not a Ray head's) for ever.
CONNECT_SECONDS = 30.0
#: The longest ``--ray-timeout``: a day (a longer wait has no use, and past
#: ``threading.TIMEOUT_MAX`` a timer overflows).
MAX_CONNECT_SECONDS = 86_400.0
#: What to check when a cluster does not answer.
_CHECK = (
    "check the address (a head's HOST:6379, or ray://HOST:10001 for Ray Client), that the "
    "cluster is up, and that this machine can reach that port"
)
#: Ray's warning when ``ray.init`` runs outside the main thread, as :func:`_connect` does (the
#: commands handle SIGTERM themselves).
_THREAD_WARNING = "SIGTERM handler is not set"


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached (the message says which)."""


#: Ray's switch of its token authentication (Ray 2.52 and later), and the mode a local
#: instance runs with.
AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"
AUTH_MODE = "token"


@contextlib.contextmanager
def _local_auth() -> Iterator[None]:
    """Token authentication for a local instance, which Ray starts from this process's
    environment (set for the block, then as it was); :class:`RayUnavailable` when it is
    switched off."""
    before = os.environ.get(AUTH_MODE_VARIABLE)
    mode = (before or "").strip().lower()
    if mode and mode != AUTH_MODE:
        raise RayUnavailable(
            f"--ray local runs Ray with token authentication, not {AUTH_MODE_VARIABLE}={mode}: "
            "a local Ray instance listens on every interface, and without its token anyone "
            f"who reaches this machine could run code in it (unset {AUTH_MODE_VARIABLE})"
        )
    # Ray reads the mode when it is imported: set it only before, for the driver and the
    # instance alike (a process that imported ray already runs with Ray's own default).
    if "ray" not in sys.modules:
        os.environ[AUTH_MODE_VARIABLE] = AUTH_MODE
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(AUTH_MODE_VARIABLE, None)
        else:
            os.environ[AUTH_MODE_VARIABLE] = before


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(f"--ray needs the ray extra: pip install 'heka[ray]' ({exc})") from exc
    return ray


@contextlib.contextmanager
def ray_session(address: str, *, cpus: int | None = None, timeout: float = CONNECT_SECONDS) -> Iterator[int]:
    """Connect to Ray at ``address`` (``local``: start an instance with ``cpus`` CPUs, or
    every core when ``None``) for the duration of the block; yields the cluster's CPU count.
    Any other address must answer within ``timeout`` seconds. A Ray instance this process
    already started is used and left running."""
    if not address:
        raise RayUnavailable("--ray needs an address: local, auto, HOST:PORT or ray://HOST:PORT")
    if not 0 < timeout <= MAX_CONNECT_SECONDS:
        raise RayUnavailable(
            f"--ray-timeout must be above 0 seconds and at most {MAX_CONNECT_SECONDS:,g}, not {timeout:g}"
        )
    with contextlib.ExitStack() as stack:
        if address == "local":
            stack.enter_context(_local_auth())
        yield from _session(address, cpus, timeout)


def _session(address: str, cpus: int | None, timeout: float) -> Iterator[int]:
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        if address == "local":
            try:
                ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise RayUnavailable(f"cannot start a local Ray instance: {_one_line(exc)}") from exc
        else:
            _connect(ray, address, timeout)
        started = True
    try:
        yield int(ray.cluster_resources().get("CPU", 0))
    finally:
        if started:
            ray.shutdown()


def _connect(ray: Any, address: str, timeout: float) -> None:
    """``ray.init(address=address)``, given up after ``timeout`` seconds (:class:`RayUnavailable`).

    ``ray.init`` runs in a daemon thread, since it cannot be interrupted: given up, the thread
    is left to the end of the process. What Ray writes to stderr meanwhile (its core logs every
    retry there) is held back, and shown only when the connection is made."""
    outcome: list[BaseException | None] = []

    def init() -> None:
        try:
            ray.init(address=address, logging_level=logging.WARNING)
        except BaseException as exc:  # handed to the caller below
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=init, name="ray-connect", daemon=True)
    with _stderr_held() as held:
        thread.start()
        thread.join(timeout)
    where = address
    if address == "auto" and os.environ.get("RAY_ADDRESS"):
        where = f"auto (RAY_ADDRESS={os.environ['RAY_ADDRESS']})"
    if thread.is_alive():
        raise RayUnavailable(
            f"no Ray cluster answered at {where} within {timeout:g} s: {_CHECK} "
            "(--ray-timeout SECONDS waits longer)"
        )
    error = outcome[0]
    if isinstance(error, (ConnectionError, ValueError, RuntimeError)):
        raise RayUnavailable(
            f"cannot reach Ray at {where}: {_one_line(error).rstrip('.')}: {_CHECK}"
        ) from error
    if error is not None:
        raise error
    shown = [line for line in "".join(held).splitlines(keepends=True) if _THREAD_WARNING not in line]
    if shown:
        sys.stderr.write("".join(shown))


@contextlib.contextmanager
def _stderr_held() -> Iterator[list[str]]:
    """Hold back what the block writes to file descriptor 2 (where Ray's core logs, past
    ``sys.stderr``); yields a list that gets the text when the block ends."""
    held: list[str] = []
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to hold back
        yield held
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield held
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            held.append(tmp.read().decode("utf-8", errors="replace"))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _stream(
    ray: Any,
    calls: dict[Any, int],
    on_done: Callable[[int, Any], None],
    stop: Callable[[], bool],
    describe: Callable[[int], str],
) -> bool:
    """Wait for the object refs ``calls`` (ref -> key), passing each result to ``on_done``
    as it finishes (those finished together in key order); returns True when ``stop()``
    ended it. Leaving early (a stop, an error, an interrupt) cancels the rest."""
    pending = list(calls)
    try:
        while pending:
            if stop():
                return True
            ready, pending = ray.wait(pending, num_returns=1, timeout=POLL_SECONDS)
            if ready and pending:
                more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                ready += more
            for ref in sorted(ready, key=lambda r: calls[r]):
                key = calls[ref]
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    raise ArenaError(f"{describe(key)} failed:\n{exc}") from exc
                except ray.exceptions.RayError as exc:  # a worker or node lost past its retries
                    raise ArenaError(f"{describe(key)}: its Ray worker failed ({exc})") from exc
                on_done(key, value)
        return False
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)


def arena_runner() -> GameRunner:
    """An :data:`ai.arena.GameRunner` that plays each game as a Ray task (inside
    :func:`ray_session`)."""
    ray = _import_ray()
    remote = ray.remote(num_cpus=1)(play_task)

    def run(  # noqa: PLR0917 - the signature of ai.arena.GameRunner
        config: ArenaConfig,
        players: int,
        options: dict[str, Any],
        tasks: list[GameTask],
        record: Callable[[GameRecord], None],
        stop: Callable[[], bool],
    ) -> bool:
        by_index = {t.index: t for t in tasks}
        opts = ray.put(options)
        calls = {remote.remote(config.game, players, opts, task): task.index for task in tasks}

        def describe(index: int) -> str:
            t = by_index[index]
            return f"game {t.index} ({' / '.join(t.seats)}, deal seed {t.deal_seed}, bot seed {t.bot_seed})"

        return _stream(ray, calls, lambda _i, rec: record(rec), stop, describe)

    return run


def train_runner() -> TrainRunner:
    """A :data:`learn.train.GameRunner` that plays each self-play game as a Ray task (inside
    :func:`ray_session`; needs numpy where the tasks run)."""
    from learn.train import Dataset, TrainConfig, play_one

    ray = _import_ray()
    remote = ray.remote(num_cpus=1)(play_one)

    def run(config: TrainConfig, indices: Sequence[int], on_game: Callable[[int, Dataset], None]) -> None:
        shared = ray.put(config)
        calls = {remote.remote(shared, i): i for i in indices}
        _stream(ray, calls, on_game, lambda: False, lambda i: f"self-play game {i}")

    return run


def timeout(seconds: float | None) -> float:
    """The connection timeout of ``--ray-timeout`` (:data:`CONNECT_SECONDS` when not given)."""
    return CONNECT_SECONDS if seconds is None else seconds


def local_cpus(workers: int) -> int | None:
    """The CPUs of a ``--ray local`` instance: ``--workers`` when above 1, else every core."""
    return workers if workers > 1 else None


def describe_cluster(address: str, cpus: int) -> str:
    """The start line's words for where the games run."""
    where = "a local Ray instance" if address == "local" else f"the Ray cluster at {address}"
    return f"{where} ({cpus} CPUs, cpu count here {os.cpu_count()})"
