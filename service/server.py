"""Wiring: keys, metrics, worker processes, the gRPC server, health, reflection, shutdown.

Order matters: the search workers are started (from a forkserver) and warmed *before* any
gRPC object exists; ``PROMETHEUS_MULTIPROC_DIR`` is set before ``prometheus_client`` is
imported by anything.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import signal
import sys
import threading
import time
from concurrent import futures
from typing import Any

from service.config import Config, prepare_metrics_dir
from service.envelope import KeyRing, parse_keys

log = logging.getLogger("heka.server")


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


def load_keys(config: Config) -> KeyRing:
    spec = config.state_keys
    if not spec and config.state_keys_file:
        with open(config.state_keys_file, encoding="utf-8") as fh:
            spec = fh.read()
    if spec.strip():
        return KeyRing(parse_keys(spec), encrypt=config.encrypt_state)
    log.warning(
        "no state key configured (HEKA_STATE_KEYS): using an ephemeral key; state tokens will not "
        "survive a restart and other replicas will refuse them",
        extra={"fields": {"event": "ephemeral_key"}},
    )
    return KeyRing.ephemeral_ring(encrypt=config.encrypt_state)


class Server:
    """A running heka server (``start`` then ``wait``/``stop``)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.port = 0
        self.metrics_port = -1
        self._stop_requested = threading.Event()
        self._stopped = threading.Event()
        self._metrics_server: Any = None

    def start(self) -> None:
        cfg = self.config
        self.keys = load_keys(cfg)
        self.metrics_dir, self._temp_metrics_dir = prepare_metrics_dir(cfg.metrics_dir)

        # 1. Worker processes, before any gRPC object.
        from service.workers import SearchPool

        self.pool = SearchPool(cfg.workers, cfg.search_capacity, self.metrics_dir, cfg.worker_nice)
        pids = self.pool.warm()

        # 2. Metrics (prometheus_client now sees the multiprocess directory).
        from service import metrics

        if cfg.metrics_port >= 0:
            self._metrics_server, self.metrics_port = metrics.start_http_endpoint(cfg.metrics_port)

        # 3. gRPC.
        import grpc
        from grpc_health.v1 import health, health_pb2, health_pb2_grpc
        from grpc_reflection.v1alpha import reflection

        from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
        from service.interceptors import ServerInterceptor
        from service.servicer import SERVICE_NAME, GameService

        options = [
            ("grpc.max_send_message_length", cfg.max_message_bytes),
            ("grpc.max_receive_message_length", cfg.max_message_bytes),
            ("grpc.keepalive_time_ms", int(cfg.keepalive_seconds * 1000)),
            ("grpc.keepalive_timeout_ms", 20_000),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.so_reuseport", 0),
        ]
        if cfg.max_connection_age_seconds > 0:
            options += [
                ("grpc.max_connection_age_ms", int(cfg.max_connection_age_seconds * 1000)),
                ("grpc.max_connection_age_grace_ms", int(cfg.max_connection_age_grace_seconds * 1000)),
            ]
        self.server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=cfg.grpc_threads + cfg.search_capacity, thread_name_prefix="grpc"
            ),
            interceptors=[ServerInterceptor(access_log_enabled=cfg.access_log)],
            options=options,
            maximum_concurrent_rpcs=None,
        )
        self.servicer = GameService(cfg, self.keys, self.pool)
        pb_grpc.add_GameServiceServicer_to_server(self.servicer, self.server)  # type: ignore[no-untyped-call]
        # Health answers from its own thread so that it keeps answering under load.
        self.health = health.HealthServicer(
            experimental_non_blocking=True,
            experimental_thread_pool=futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="health"),
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if cfg.reflection:
            reflection.enable_server_reflection(
                (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), self.server
            )
        self.port = self.server.add_insecure_port(f"{cfg.host}:{cfg.port}")
        if self.port == 0:
            raise OSError(f"cannot bind gRPC port {cfg.host}:{cfg.port}")
        self.server.start()
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info(
            "listening",
            extra={
                "fields": {
                    "event": "listening",
                    "port": self.port,
                    "metrics_port": self.metrics_port,
                    "search_workers": len(pids),
                    "search_capacity": cfg.search_capacity,
                    "key_id": self.keys.signing.key_id,
                    "ephemeral_key": self.keys.ephemeral,
                    "encrypt_state": cfg.encrypt_state,
                    "pid": os.getpid(),
                }
            },
        )

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
                }
            },
        )
        self.health.enter_graceful_shutdown()
        if cfg.shutdown_delay_seconds > 0:
            time.sleep(cfg.shutdown_delay_seconds)
        start = time.monotonic()
        self.server.stop(cfg.grace_seconds).wait()
        drained = time.monotonic() - start
        self.pool.shutdown()
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
        if self._temp_metrics_dir:
            import shutil

            shutil.rmtree(self.metrics_dir, ignore_errors=True)
        log.info("stopped", extra={"fields": {"event": "stopped", "drain_seconds": round(drained, 3)}})
        self._stopped.set()


def serve(config: Config) -> int:
    """Run until SIGTERM/SIGINT; returns the exit code (0 after a clean drain)."""
    setup_logging(config.log_level)
    server = Server(config)

    def on_signal(signum: int, _frame: Any) -> None:
        log.info(
            "signal received", extra={"fields": {"event": "signal", "signal": signal.Signals(signum).name}}
        )
        server.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        server.start()
    except (ValueError, OSError) as exc:  # bad keys, port in use
        log.error("cannot start: %s", exc, extra={"fields": {"event": "start_failed"}})
        return 2
    server.wait()
    return 0
