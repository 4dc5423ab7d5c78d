"""Wiring: keys, metrics, worker processes, the gRPC server, health, reflection, shutdown.

Order matters: the search workers are started (from a forkserver) and warmed *before* any
gRPC object exists; ``PROMETHEUS_MULTIPROC_DIR`` is set before ``prometheus_client`` is
imported by anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import engine
from ai import procpool
from service import listen, tls
from service.config import Config, ConfigError, prepare_metrics_dir
from service.envelope import VERSION, KeyRing, parse_keys

if TYPE_CHECKING:
    from service import metrics

log = logging.getLogger("heka.server")

T = TypeVar("T")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, plus structured ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if fields:
            out.update(fields)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    core = logging.getLogger("grpc._cython.cygrpc")
    if _quiet_failed_write not in core.filters:
        core.addFilter(_quiet_failed_write)


def _quiet_failed_write(record: logging.LogRecord) -> bool:
    """gRPC logs an error with a traceback when a write fails because its client went away
    (cancelled, deadline) before gRPC noticed; the access log already records the call
    (CANCELLED, DEADLINE_EXCEEDED). Such a record becomes a debug line without traceback."""
    if not str(record.msg).startswith("ExecuteBatchError raised in core"):
        return True
    record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    record.exc_info = record.exc_text = None
    return logging.getLogger().isEnabledFor(logging.DEBUG)


def load_keys(config: Config) -> KeyRing:
    spec = config.state_keys
    if spec.strip() and config.state_keys_file:
        raise ConfigError("give HEKA_STATE_KEYS or HEKA_STATE_KEYS_FILE, not both")
    if config.state_keys_file:
        from service.commands.files import read_text

        try:  # a key list is a line or a few: a larger file is not one
            spec = read_text(config.state_keys_file, "HEKA_STATE_KEYS_FILE", limit=64 * 1024)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if not spec.strip():
            raise ConfigError(f"HEKA_STATE_KEYS_FILE {config.state_keys_file} holds no keys")
    encrypt = not config.insecure_plaintext_tokens
    # The previous release opens envelope version 1 only (docs/operations.md, "Upgrades and rollbacks").
    version = 1 if config.previous_state_versions else VERSION
    if not encrypt:
        log.warning(
            "INSECURE: state tokens are written unencrypted (HEKA_INSECURE_PLAINTEXT_TOKENS): anyone "
            "holding a token can read every hidden card and the game's generator; debugging only",
            extra={"fields": {"event": "insecure_plaintext_tokens"}},
        )
    if spec.strip():
        from service.published_keys import check_not_published

        source = (
            f"HEKA_STATE_KEYS_FILE (--state-keys-file) {config.state_keys_file}"
            if config.state_keys_file
            else "HEKA_STATE_KEYS (--state-keys)"
        )
        keys = parse_keys(spec, source)
        check_not_published(spec)
        return KeyRing(keys, encrypt=encrypt, version=version)
    log.warning(
        "no state key configured (HEKA_STATE_KEYS): using an ephemeral key; state tokens will not "
        "survive a restart and other replicas will refuse them",
        extra={"fields": {"event": "ephemeral_key"}},
    )
    return KeyRing.ephemeral_ring(encrypt=encrypt, version=version)


class Server:
    """One gRPC serving process: its search workers, servicer, health and reflection."""

    def __init__(
        self,
        config: Config,
        keys: KeyRing,
        metrics_dir: str,
        *,
        port: int,
        reuseport: bool = False,
        targets: list[str] | None = None,
        slots: Any = None,
        serve_metrics: bool = True,
    ) -> None:
        """``targets``: the addresses (with ``port``) to bind, reserved by the caller
        (:mod:`service.listen`); None: reserve ``port`` on every address of HEKA_HOST here."""
        self.config = config
        self.keys = keys
        self.metrics_dir = metrics_dir
        self.requested_port = port
        self.reuseport = reuseport
        self.targets = targets
        self.addresses: list[str] = []  # the gRPC addresses bound, IPv6 in brackets
        self.slots = slots
        self.serve_metrics = serve_metrics
        self.port = 0
        self._stop_requested = threading.Event()
        self._stopped = threading.Event()
        self.metrics_endpoint: metrics.MetricsEndpoint | None = None
        self.tls: tls.Credentials | None = None

    def start(self, *, announce: bool = True) -> None:
        """Start the search workers, the metrics endpoint and gRPC; when any of them fails
        (a port in use), what had started is stopped before the error propagates, so that
        no worker outlives a failed start (nor finds its metrics directory gone)."""
        try:
            self._start(announce)
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        """Stop whatever a failed :meth:`start` had started, at once (nothing was served)."""
        loop = getattr(self, "_loop", None)
        if loop is not None:
            if getattr(self, "server", None) is not None:
                with contextlib.suppress(Exception):
                    self._on_loop(self.server.stop(None))
            loop.call_soon_threadsafe(loop.stop)
            self._loop_thread.join(timeout=5)
        pools = getattr(self, "_pools", None)
        if pools is not None:
            pools.shutdown()
        if self.metrics_endpoint is not None:
            self.metrics_endpoint.shutdown()
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.shutdown(cancel=True)

    def _start(self, announce: bool) -> None:
        cfg = self.config
        # 1. Worker processes, before any gRPC object.
        from service.workers import SearchPool

        self.pool = SearchPool(
            cfg.workers,
            cfg.search_capacity,
            self.metrics_dir,
            cfg.worker_nice,
            self.slots,
            max_queue=cfg.search_queue_length,
            max_wait=cfg.max_queue_wait_seconds,
            share=cfg.search_share,
            margin=cfg.deadline_margin_ms / 1000.0,
            on_length=_queue_length_metric,
            on_wait=_queue_wait_metric,
        )
        self.worker_pids = self.pool.warm()

        # 2. Metrics (prometheus_client now sees the multiprocess directory).
        from service import metrics

        if self.serve_metrics and cfg.metrics_port >= 0:
            self.metrics_endpoint = metrics.start_http_endpoint(
                cfg.metrics_port, cfg.metrics_bind_host, cfg.metrics_host_setting
            )

        # 3. gRPC: an asyncio server on its own event loop thread (the main thread keeps
        # the signals and the supervision); bot calls wait for their searches on threads, with
        # a thread for each call the search queue can hold and for each review, and bot calls
        # that do not search on threads of their own (BotPools).
        from service.asyncio_bridge import BotPools

        self._pools = BotPools(cfg)
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, name="grpc-loop", daemon=True)
        self._loop_thread.start()
        self._on_loop(self._start_grpc())
        if announce:
            announce_listening(
                cfg,
                self.keys,
                self.port,
                self.addresses,
                self.metrics_endpoint,
                processes=1,
                workers=len(self.worker_pids),
            )

    def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the server's event loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _start_grpc(self) -> None:
        cfg = self.config
        import grpc
        from grpc_health.v1 import health, health_pb2, health_pb2_grpc

        from service.asyncio_bridge import AsyncGameService
        from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
        from service.health import HealthServicer
        from service.interceptors import STREAM_GRACE_SECONDS, ServerInterceptor
        from service.servicer import SERVICE_NAME, GameService

        self.server = grpc.aio.server(
            # The cap on concurrent calls is the interceptor's (HEKA_MAX_CONCURRENT_RPCS), not
            # gRPC's `maximum_concurrent_rpcs`: gRPC's limiter answers a bare RESOURCE_EXHAUSTED
            # (no details, no retry hint), refuses health checks too, and counts a call from
            # its headers, so clients that never send their request could hold every slot.
            # Neither sees the calls of a burst still waiting in gRPC core (grpc_options).
            interceptors=[
                ServerInterceptor(
                    access_log_enabled=cfg.access_log,
                    max_concurrent_rpcs=cfg.max_concurrent_rpcs,
                    stream_seconds=cfg.max_review_seconds + min(STREAM_GRACE_SECONDS, cfg.max_review_seconds),
                )
            ],
            options=grpc_options(cfg, reuseport=self.reuseport),
            maximum_concurrent_rpcs=None,
        )
        self.servicer = GameService(cfg, self.keys, self.pool)
        self.bridge = AsyncGameService(self.servicer, self._pools)
        pb_grpc.add_GameServiceServicer_to_server(self.bridge, self.server)  # type: ignore[no-untyped-call]
        # Health answers on the event loop, which searches never occupy.
        self.health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if cfg.reflection:
            from service import reflection

            reflection.enable(self.server, (SERVICE_NAME, health.SERVICE_NAME))
        if tls.enabled(cfg):
            self.tls = tls.Credentials(cfg)  # read again: the files may have changed since
        if self.targets is not None:
            self.port = self._bind(self.targets)
        else:
            with listen.reserve(cfg.host, self.requested_port, shared=self.reuseport) as reservation:
                self.port = self._bind(reservation.targets)
                self.addresses = reservation.hosts
        await self.server.start()
        for name in ("", SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def _bind(self, targets: list[str]) -> int:
        """Bind gRPC to every target (one port); each must bind (:mod:`service.listen`)."""
        port = 0
        for target in targets:
            try:
                # gRPC binds with SO_REUSEADDR (a restart rebinds through TIME_WAIT at once).
                if self.tls is not None:
                    port = self.server.add_secure_port(target, self.tls.server_credentials())
                else:
                    port = self.server.add_insecure_port(target)
            except RuntimeError as exc:  # grpc raises this when the address does not bind
                raise listen.ListenError(f"cannot bind gRPC port {target}: {exc}") from None
            if port == 0:
                raise listen.ListenError(f"cannot bind gRPC port {target}")
        return port

    def request_stop(self) -> None:
        self._stop_requested.set()

    def wait(self) -> None:
        """Block until a stop is requested (signal or :meth:`request_stop`), then drain."""
        while not self._stop_requested.wait(timeout=1.0):
            pass
        self.stop()

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        cfg = self.config
        log.info(
            "shutting down: health NOT_SERVING, draining in-flight calls",
            extra={
                "fields": {
                    "event": "draining",
                    "grace_seconds": cfg.grace_seconds,
                    "searches_in_flight": self.pool.in_flight,
                    "pid": os.getpid(),
                }
            },
        )
        self._on_loop(self.health.enter_graceful_shutdown())
        if cfg.shutdown_delay_seconds > 0:
            time.sleep(cfg.shutdown_delay_seconds)
        # Calls waiting for a search slot are refused now (UNAVAILABLE, reason DRAINING, with
        # a retry hint), and so are bot calls that still arrive; searches running finish.
        self.pool.close()
        start = time.monotonic()
        cut = self._on_loop(self._drain(cfg.grace_seconds))
        drained = time.monotonic() - start
        # The threads of cut calls end once their searches stop, releasing their slots (with
        # several gRPC processes the slots are shared).
        left = self.bridge.wait_threads(timeout=CUT_THREADS_SECONDS) if cut else 0
        if left:
            log.warning(
                "bot calls cut at the end of the grace still hold their threads",
                extra={"fields": {"event": "cut_threads_left", "threads": left, "pid": os.getpid()}},
            )
        self._pools.shutdown()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(timeout=LOOP_JOIN_SECONDS)
        self.pool.shutdown(timeout=SEARCH_STOP_SECONDS)
        if self.metrics_endpoint is not None:
            self.metrics_endpoint.shutdown()
        log.info(
            "stopped",
            extra={
                "fields": {
                    "event": "stopped",
                    "drain_seconds": round(drained, 3),
                    "calls_cut": cut,
                    "pid": os.getpid(),
                }
            },
        )
        self._stopped.set()

    async def _drain(self, grace: float) -> int:
        """gRPC's graceful stop: no new calls, and the calls in flight get ``grace`` seconds.
        Bot calls still running then are cut (answered UNAVAILABLE, reason SHUTTING_DOWN,
        with a retry hint, their searches stopped: :meth:`AsyncGameService.cut`), and gRPC
        gets :data:`CUT_MARGIN_SECONDS` more to send those answers before it cancels what is
        left with a bare status. Returns the number of calls cut."""
        stopping = asyncio.ensure_future(self.server.stop(grace + CUT_MARGIN_SECONDS))
        done, _ = await asyncio.wait((stopping,), timeout=grace)
        cut = 0
        if not done:
            cut = self.bridge.cut()
            if cut:
                log.warning(
                    "grace over: cutting the bot calls still running (UNAVAILABLE, SHUTTING_DOWN)",
                    extra={"fields": {"event": "grace_over", "calls": cut, "pid": os.getpid()}},
                )
        await stopping
        return cut


#: Seconds gRPC's stop waits past the grace, for the answers of the calls cut when the grace
#: ends to be sent (they take milliseconds) before gRPC cancels whatever is left.
CUT_MARGIN_SECONDS = 2.0
#: Seconds a stop waits, after the drain, for the threads of the calls it cut (their searches
#: stop at their next cancel check), and for the event loop's thread to end.
CUT_THREADS_SECONDS = 5.0
LOOP_JOIN_SECONDS = 5.0
#: Seconds the search workers get to end their searches once the calls are over (a cut
#: call's search stops at its next cancel check), before they are terminated, then killed
#: (``ai.procpool.SHUTDOWN_MARGIN_SECONDS`` at most).
SEARCH_STOP_SECONDS = 2.0
#: The most a stop takes past the shutdown delay and the drain (HEKA_GRACE_SECONDS), the
#: search workers' stop included; the pod's terminationGracePeriodSeconds covers it.
STOP_TAIL_SECONDS = (
    CUT_MARGIN_SECONDS
    + CUT_THREADS_SECONDS
    + LOOP_JOIN_SECONDS
    + SEARCH_STOP_SECONDS
    + procpool.SHUTDOWN_MARGIN_SECONDS
)


def _queue_length_metric(delta: int) -> None:
    from service import metrics

    metrics.SEARCH_QUEUE_LENGTH.inc(delta)


def _queue_wait_metric(seconds: float, outcome: str) -> None:
    from service import metrics

    metrics.child(metrics.SEARCH_QUEUE_WAIT, outcome).observe(seconds)


def grpc_options(cfg: Config, *, reuseport: bool) -> list[tuple[str, int]]:
    options = [
        ("grpc.max_send_message_length", cfg.max_message_bytes),
        ("grpc.max_receive_message_length", cfg.max_request_bytes),
        # gRPC core's backlog of calls received but not yet taken by the Python server, which
        # asks core for one call per method at a time: a burst waits there. Core's defaults
        # (random refusals from 1,000 waiting calls, every call from 3,000) answer a burst
        # with bare CANCELLED statuses before any heka code sees the calls.
        ("grpc.server.max_pending_requests", cfg.max_queued_rpcs),
        ("grpc.server.max_pending_requests_hard_limit", cfg.max_queued_rpcs),
        # No bandwidth-delay-product probing of the receive window: requests are small (at
        # most HEKA_MAX_REQUEST_BYTES), and a window that BDP probing has grown lets each
        # client push megabytes into the server's buffers before an oversized message is
        # refused (40 clients sending 4 MiB junk: peak RSS 347 MiB with probing, 60 without).
        ("grpc.http2.bdp_probe", 0),
        # 0: no pings (the longest interval gRPC takes, its own way of saying never).
        ("grpc.keepalive_time_ms", int(cfg.keepalive_seconds * 1000) or 2**31 - 1),
        ("grpc.keepalive_timeout_ms", 20_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.http2.max_pings_without_data", 0),
        # One process: refuse a port another server holds. Several: share it (the kernel
        # spreads connections over the processes).
        ("grpc.so_reuseport", 1 if reuseport else 0),
    ]
    if cfg.max_connection_age_seconds > 0:
        options += [
            ("grpc.max_connection_age_ms", int(cfg.max_connection_age_seconds * 1000)),
            ("grpc.max_connection_age_grace_ms", int(cfg.max_connection_age_grace_seconds * 1000)),
        ]
    return options


def announce_listening(
    cfg: Config,
    keys: KeyRing,
    port: int,
    addresses: list[str],
    endpoint: metrics.MetricsEndpoint | None,
    *,
    processes: int,
    workers: int,
) -> None:
    """The "listening" log line; ``addresses``: the gRPC addresses bound (IPv6 in brackets);
    ``endpoint``: the metrics endpoint, if any."""
    log.info(
        "listening",
        extra={
            "fields": {
                "event": "listening",
                "port": port,
                "addresses": addresses,
                "metrics_port": endpoint.port if endpoint is not None else -1,
                "metrics_host": endpoint.addresses[0].strip("[]") if endpoint is not None else None,
                "metrics_addresses": endpoint.addresses if endpoint is not None else [],
                "grpc_processes": processes,
                "search_workers": workers,
                "search_capacity": cfg.search_capacity,
                "key_id": keys.signing.key_id,
                "ephemeral_key": keys.ephemeral,
                "encrypted_tokens": keys.encrypt,
                "tls": tls.mode(cfg),
                "build": engine.build(),
                "pid": os.getpid(),
            }
        },
    )


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------


def serve(config: Config) -> int:
    """Run until SIGTERM/SIGINT; returns the exit code (0 after a clean drain)."""
    setup_logging(config.log_level)
    try:
        keys = load_keys(config)
    except (ValueError, OSError) as exc:
        log.error("cannot start: %s", exc, extra={"fields": {"event": "start_failed"}})
        return 2
    # The expert preset's model files (ai/models/ or HEKA_MODEL_DIR): a missing or corrupt one
    # stops the start with its path and fault, rather than failing the first expert search.
    from ai.learned import ModelError, check_models

    try:
        check_models()
    except ModelError as exc:
        log.error("cannot start: %s", exc, extra={"fields": {"event": "start_failed"}})
        return 2
    if tls.enabled(config):  # checked here too, so that a bad file stops the start before any fork
        try:
            tls.load(config)
        except tls.TlsError as exc:
            log.error("cannot start: %s", exc, extra={"fields": {"event": "start_failed"}})
            return 2
    try:
        metrics_dir, temporary = prepare_metrics_dir(config.metrics_dir)
    except OSError as exc:
        log.error(
            "cannot start: HEKA_METRICS_DIR %s: %s",
            config.metrics_dir,
            exc.strerror,
            extra={"fields": {"event": "start_failed"}},
        )
        return 2
    try:
        if config.grpc_processes > 1:
            return _serve_processes(config, keys, metrics_dir)
        return _serve_one(config, keys, metrics_dir)
    finally:
        if temporary:
            import shutil

            shutil.rmtree(metrics_dir, ignore_errors=True)


def _install_signals(on_stop: Any) -> None:
    def handler(signum: int, _frame: Any) -> None:
        log.info(
            "signal received",
            extra={"fields": {"event": "signal", "signal": signal.Signals(signum).name, "pid": os.getpid()}},
        )
        on_stop(signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def _serve_one(config: Config, keys: KeyRing, metrics_dir: str) -> int:
    server = Server(config, keys, metrics_dir, port=config.port)
    _install_signals(lambda _signum: server.request_stop())
    try:
        server.start()
    except (ValueError, OSError) as exc:  # port in use
        log.error("cannot start: %s", exc, extra={"fields": {"event": "start_failed"}})
        return 2
    server.wait()
    return 0


def _child_main(
    config: Config, keys: KeyRing, metrics_dir: str, reserved: tuple[int, list[str]], shared: tuple[Any, Any]
) -> None:
    """A gRPC serving process (forked by the supervisor before any gRPC object existed).
    ``shared``: the global search-slot semaphore and the readiness queue."""
    slots, ready = shared
    setup_logging(config.log_level)
    port, targets = reserved
    server = Server(
        config,
        keys,
        metrics_dir,
        port=port,
        reuseport=True,
        targets=targets,
        slots=slots,
        serve_metrics=False,
    )
    _install_signals(lambda _signum: server.request_stop())
    try:
        server.start(announce=False)
    except listen.ListenError as exc:
        log.error("gRPC process failed to start: %s", exc, extra={"fields": {"event": "start_failed"}})
        ready.put((os.getpid(), 0))
        os._exit(2)
    except Exception:
        log.exception("gRPC process failed to start", extra={"fields": {"event": "start_failed"}})
        ready.put((os.getpid(), 0))
        os._exit(2)
    ready.put((os.getpid(), len(server.worker_pids)))
    _stop_when_orphaned(server)
    server.wait()
    os._exit(0)


def _stop_when_orphaned(server: Server, period: float = 1.0) -> None:
    """Drain and stop this gRPC process if the supervisor dies without forwarding a signal
    (SIGKILL, OOM kill): a process left serving on the shared port would outlive its server."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period)
        log.error("supervisor gone; stopping", extra={"fields": {"event": "orphaned"}})
        server.request_stop()

    threading.Thread(target=watch, name="heka-parent-watch", daemon=True).start()


def _serve_processes(config: Config, keys: KeyRing, metrics_dir: str) -> int:
    """Supervisor: fork ``config.grpc_processes`` gRPC processes sharing one port (SO_REUSEPORT),
    one key ring (the ephemeral key too) and one global search capacity; serve the
    aggregated metrics; forward SIGTERM; exit 0 when every process drained cleanly."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")  # no gRPC object exists in this process
    slots = ctx.BoundedSemaphore(config.search_capacity)
    ready = ctx.Queue()
    children: list[Any] = []
    stopping = threading.Event()

    def forward(signum: int) -> None:
        stopping.set()
        for child in children:
            if child.is_alive() and child.pid is not None:
                os.kill(child.pid, signum)

    try:
        reservation = listen.reserve(config.host, config.port, shared=True)
    except OSError as exc:
        log.error("cannot start: %s", exc, extra={"fields": {"event": "start_failed"}})
        return 2
    port = reservation.port
    try:
        for _ in range(config.grpc_processes):
            reserved = (port, reservation.targets)
            child = ctx.Process(
                target=_child_main, args=(config, keys, metrics_dir, reserved, (slots, ready)), daemon=False
            )
            child.start()
            children.append(child)
        _install_signals(forward)
        # Start the metrics endpoint now, while the children are still warming their search
        # workers (not before the fork: no thread may run in a process that forks), so it
        # is normally up before any child reports SERVING.
        from service import metrics

        endpoint = None
        if config.metrics_port >= 0:
            try:
                endpoint = metrics.start_http_endpoint(
                    config.metrics_port, config.metrics_bind_host, config.metrics_host_setting
                )
            except OSError as exc:
                log.error("cannot start: %s", exc, extra={"fields": {"event": "start_failed"}})
                forward(signal.SIGTERM)
                for child in children:
                    child.join(timeout=config.grace_seconds + 10)
                return 2
        workers = 0
        for _ in children:
            _pid, n = ready.get(timeout=120)
            if n == 0:
                log.error("a gRPC process failed to start", extra={"fields": {"event": "start_failed"}})
                forward(signal.SIGTERM)
                for child in children:
                    child.join(timeout=config.grace_seconds + 10)
                if endpoint is not None:
                    endpoint.shutdown()
                return 2
            workers += n
        hosts = reservation.hosts
        announce_listening(config, keys, port, hosts, endpoint, processes=len(children), workers=workers)
        # Wait for every process; one that dies on its own takes the others down (exit 1,
        # so that the orchestrator restarts the whole server).
        failed = False
        while any(child.is_alive() for child in children):
            time.sleep(0.5)
            if not stopping.is_set() and any(not c.is_alive() for c in children):
                failed = True
                log.error(
                    "a gRPC process died; stopping the others",
                    extra={"fields": {"event": "child_exit", "codes": [c.exitcode for c in children]}},
                )
                forward(signal.SIGTERM)
        codes = [child.exitcode for child in children]
        for child in children:
            if child.pid is not None:
                metrics.mark_process_dead(child.pid)
        if endpoint is not None:
            endpoint.shutdown()
        if failed or any(code != 0 for code in codes):
            log.error("gRPC processes exited", extra={"fields": {"event": "child_exit", "codes": codes}})
            return 1
        log.info("stopped", extra={"fields": {"event": "stopped", "grpc_processes": len(children)}})
        return 0
    finally:
        reservation.close()
