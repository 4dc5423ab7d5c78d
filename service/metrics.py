"""Prometheus metrics of the service, correct across processes (multiprocess mode).

Import this module only after :func:`service.config.prepare_metrics_dir` (or after
``PROMETHEUS_MULTIPROC_DIR`` is set): ``prometheus_client`` picks its value store at import
time. The gRPC process and every search worker write their samples to files in that
directory; the metrics endpoint aggregates them (:func:`start_http_endpoint`).

Names and labels are a contract with the Grafana dashboard and the operations guide;
changes go to ``/tmp/heka_metrics_changes.md`` first.
"""

from __future__ import annotations

import contextlib
import contextvars
import glob
import logging
import os
import struct
import threading
from collections.abc import Iterator
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

from service import listen

_log = logging.getLogger("heka.metrics")

RPC_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
)
SEARCH_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0)

RPC_STARTED = Counter(
    "heka_grpc_server_started_total", "RPCs started on the server.", ["grpc_service", "grpc_method"]
)
RPC_HANDLED = Counter(
    "heka_grpc_server_handled_total",
    "RPCs completed on the server, by status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
)
RPC_SECONDS = Histogram(
    "heka_grpc_server_handling_seconds",
    "Time to handle an RPC on the server.",
    ["grpc_service", "grpc_method"],
    buckets=RPC_BUCKETS,
)
SEARCHES = Counter("heka_searches_total", "Bot searches completed.", ["game", "bot"])
SEARCH_ITERATIONS = Counter(
    "heka_search_iterations_total", "Iterations run by bot searches.", ["game", "bot"]
)
SEARCH_SECONDS = Histogram(
    "heka_search_duration_seconds",
    "Wall-clock time of one bot search.",
    ["game", "bot"],
    buckets=SEARCH_BUCKETS,
)
BELIEF_FALLBACKS = Counter(
    "heka_belief_fallbacks_total",
    "Worlds a search sampled uniformly because its belief weights were unusable (belief=...).",
    ["game", "bot"],
)
SEARCHES_IN_FLIGHT = Gauge(
    "heka_searches_in_flight", "Bot calls admitted and not finished.", multiprocess_mode="livesum"
)
SEARCHES_REJECTED = Counter(
    "heka_searches_rejected_total",
    "Bot calls refused by the search queue, by reason (service.workers.REFUSAL_REASONS).",
    ["reason"],
)
SEARCH_QUEUE_LENGTH = Gauge(
    "heka_search_queue_length",
    "Bot calls waiting for a search slot (all gRPC processes).",
    multiprocess_mode="livesum",
)
SEARCH_QUEUE_WAIT = Histogram(
    "heka_search_queue_wait_seconds",
    "Time a bot call waited for a search slot, by how the wait ended "
    "(QUEUE_OUTCOMES: admitted, refused, cancelled).",
    ["outcome"],
    buckets=RPC_BUCKETS,
)
REVIEWS_IN_FLIGHT = Gauge(
    "heka_reviews_in_flight", "ReviewGame calls running (all gRPC processes).", multiprocess_mode="livesum"
)
REVIEW_MOVES = Counter(
    "heka_review_moves_total", "Decisions reviewed by ReviewGame, by game and grade.", ["game", "grade"]
)
REVIEW_SECONDS = Histogram(
    "heka_review_duration_seconds",
    "Wall-clock time of one ReviewGame call, from its arrival to its last message.",
    ["game"],
    buckets=(0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0),
)
REVIEWS_REFUSED = Counter(
    "heka_reviews_refused_total",
    "ReviewGame calls refused for capacity before any search, by reason (ErrorInfo's reason).",
    ["reason"],
)
GAMES_CREATED = Counter("heka_games_created_total", "Games created.", ["game"])
GAMES_FINISHED = Counter(
    "heka_games_finished_total",
    "Games that reached their end in a call, by how they ended (Outcome.reason, or draw).",
    ["game", "outcome"],
)
ACTIONS_APPLIED = Counter("heka_actions_applied_total", "Actions applied (by clients and bots).", ["game"])
INVALID_REQUESTS = Counter(
    "heka_invalid_requests_total", "Requests refused for bad input or a failed precondition.", ["reason"]
)


#: How a wait in the search queue ended (the ``outcome`` of heka_search_queue_wait_seconds).
QUEUE_OUTCOMES = ("admitted", "refused", "cancelled")

#: The label value that stands for any value outside a label's set.
OTHER = "other"

#: The ``bot`` label of the search metrics besides ``mcts:<preset>`` (ai.presets): an explicit
#: budget, the two bots that do not search, and any ``target_rating`` (one value for every
#: rating asked: the rated bot's name stays in ``SearchDiagnostics.bot``).
BOT_LABELS_BESIDES_PRESETS = ("mcts:custom", "greedy", "random", "rated")


def bot_labels() -> tuple[str, ...]:
    """Every value of the ``bot`` label (docs/operations.md, "Metrics", lists them)."""
    from ai.presets import PRESETS

    return (*(f"mcts:{name}" for name in PRESETS), *BOT_LABELS_BESIDES_PRESETS)


def label_values() -> dict[str, frozenset[str]]:
    """The values each label may take, by label name: fixed sets that the code defines
    (the games registered, the bot labels, the engines' outcome reasons, the RPC methods
    served, the status codes, the ErrorInfo reasons). A value outside its set is counted as
    :data:`OTHER`: nothing a request carries becomes a label value, so no caller can grow
    the number of series."""
    if not _label_values:
        import grpc
        from grpc_health.v1 import health_pb2

        from ai.review import GRADES
        from engine.aton.flow import Reason as AtonReason
        from engine.osirium.flow import Reason as OsiriumReason
        from engine.registry import list_games
        from service.errors import REASONS
        from service.gen.heka.v1 import game_service_pb2

        services = [
            *game_service_pb2.DESCRIPTOR.services_by_name.values(),
            *health_pb2.DESCRIPTOR.services_by_name.values(),
        ]
        _label_values.update(
            game=frozenset(g.descriptor.name for g in list_games()),
            bot=frozenset(bot_labels()),
            outcome=frozenset(
                {*(str(r) for r in (*AtonReason, *OsiriumReason)), "draw", "unknown", *QUEUE_OUTCOMES}
            ),
            grpc_service=frozenset(s.full_name for s in services),
            grpc_method=frozenset(m.name for s in services for m in s.methods),
            grpc_code=frozenset(c.name for c in grpc.StatusCode),
            reason=REASONS,
            grade=frozenset(GRADES),
        )
    return _label_values


_label_values: dict[str, frozenset[str]] = {}


def closed(metric: Any, values: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` for the labels of ``metric``, each outside its set as :data:`OTHER`."""
    allowed = label_values()
    names = metric._labelnames
    if len(names) != len(values):  # prometheus_client's own error
        return values
    return tuple(v if v in allowed[n] else OTHER for n, v in zip(names, values, strict=True))


_children: dict[tuple[int, tuple[str, ...]], Any] = {}


def child(metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)`` with every value from its label's fixed set
    (:func:`label_values`; anything else is :data:`OTHER`), cached: ``labels()`` converts
    and locks on every call, which costs a noticeable share of a cheap RPC. Only values of
    the sets are cached, so the cache stays as small as the sets."""
    key = (id(metric), labels)
    c = _children.get(key)
    if c is None:
        values = closed(metric, labels)
        c = metric.labels(*values)
        if values == labels:
            _children[key] = c
    return c


#: The game counters of the call under way (:func:`committed`), or ``None`` outside one.
_pending: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "heka_pending_counts", default=None
)


def count(metric: Any, *labels: str) -> None:
    """Count one event of a game counter (games created and finished, actions applied):
    at once outside :func:`committed`, inside it only when the call succeeds."""
    c = child(metric, *labels)
    pending = _pending.get()
    if pending is None:
        c.inc()
    else:
        pending.append(c)


@contextlib.contextmanager
def committed() -> Iterator[None]:
    """A call's game counters (:func:`count`) count only when the block ends without an
    error: a refused or failed call leaves the client with its old token, and the games,
    actions and outcomes it did not receive did not happen for it."""
    pending: list[Any] = []
    token = _pending.set(pending)
    try:
        yield
    finally:
        _pending.reset(token)
    for c in pending:  # reached only when the block raised nothing
        c.inc()


def record_search(game: str, bot: str, iterations: int, seconds: float, belief_fallbacks: int = 0) -> None:
    child(SEARCHES, game, bot).inc()
    if iterations:
        child(SEARCH_ITERATIONS, game, bot).inc(iterations)
    child(SEARCH_SECONDS, game, bot).observe(seconds)
    if belief_fallbacks:
        child(BELIEF_FALLBACKS, game, bot).inc(belief_fallbacks)


class TolerantMultiProcessCollector:
    """``prometheus_client``'s multiprocess aggregation that survives an unreadable file.

    A process creates its metrics file before it sizes it (prometheus/client_python#1199):
    a scrape in that window, or while a dead worker's file is being removed, made
    ``MultiProcessCollector`` raise and the whole scrape answer HTTP 500 (seen under load
    while search workers started). Here such a file is left out of that scrape (it holds
    nothing yet, or belongs to a process that is gone) and the rest is served; a file that
    stays unreadable is left out of every scrape, with a warning in the log, and never fails
    the endpoint."""

    def __init__(self, path: str) -> None:
        self._path = path

    def collect(self) -> Any:
        from prometheus_client.multiprocess import MultiProcessCollector

        files = [f for f in glob.glob(os.path.join(self._path, "*.db")) if _has_header(f)]
        try:
            return MultiProcessCollector.merge(files, accumulate=True)  # type: ignore[no-untyped-call]
        except _UNREADABLE:
            pass
        readable = []
        for f in files:
            try:
                MultiProcessCollector.merge([f], accumulate=True)  # type: ignore[no-untyped-call]
            except _UNREADABLE:
                _log.warning("metrics: left %s out of this scrape (being written or removed)", f)
                continue
            readable.append(f)
        return MultiProcessCollector.merge(readable, accumulate=True)  # type: ignore[no-untyped-call]


#: What reading a metrics file in the middle of its creation or removal raises.
_UNREADABLE = (OSError, struct.error, RuntimeError, ValueError, UnicodeDecodeError)


def _has_header(path: str) -> bool:
    """The file holds at least its 8-byte header (a file just created is empty)."""
    try:
        return os.path.getsize(path) >= 8
    except OSError:  # removed since the listing
        return False


#: Seconds a metrics connection may take for each read or write: a client that sends half
#: a request and waits is dropped, not given a thread for good.
METRICS_SOCKET_SECONDS = 10.0
#: Seconds a metrics connection may take in all, from its arrival to its answer sent: a
#: client that trickles its request a byte at a time, within the per-read timeout, is cut
#: then (:class:`_Deadlines`). A scrape takes milliseconds.
METRICS_REQUEST_SECONDS = 10.0
#: The most bytes of request (its line and headers) a metrics connection may send: a scrape
#: sends a few hundred; more is answered 431 without reading on.
MAX_METRICS_REQUEST_BYTES = 16 * 1024
#: Metrics connections served at once (one thread each); more are closed on arrival. A
#: Prometheus server scrapes with one connection at a time.
MAX_METRICS_CONNECTIONS = 64


class _Deadlines:
    """Cuts the metrics connections that outlive :data:`METRICS_REQUEST_SECONDS` (shut down:
    their blocked read ends, their thread and slot free): one thread for every connection of
    the endpoint, started with the first."""

    def __init__(self) -> None:
        self._open: dict[Any, float] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, connection: Any) -> None:
        import time

        with self._lock:
            self._open[connection] = time.monotonic() + METRICS_REQUEST_SECONDS
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="heka-metrics-deadlines", daemon=True)
                self._thread.start()

    def remove(self, connection: Any) -> None:
        with self._lock:
            self._open.pop(connection, None)

    def _run(self) -> None:
        import socket
        import time

        while True:
            time.sleep(0.25)
            now = time.monotonic()
            with self._lock:
                overdue = [c for c, deadline in self._open.items() if deadline <= now]
                for connection in overdue:
                    del self._open[connection]
            for connection in overdue:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class _CappedReader:
    """A connection's request stream that gives at most ``cap`` bytes: past them a read raises
    ``http.client.LineTooLong``, which the handler answers 431."""

    def __init__(self, raw: Any, cap: int) -> None:
        self._raw = raw
        self._left = cap

    def _take(self, data: bytes) -> bytes:
        import http.client

        self._left -= len(data)
        if self._left < 0:
            raise http.client.LineTooLong(f"request over {MAX_METRICS_REQUEST_BYTES} bytes")
        return data

    def readline(self, limit: int | None = -1) -> bytes:
        n = self._left + 1 if limit is None or limit < 0 else min(limit, self._left + 1)
        return self._take(self._raw.readline(n))

    def read(self, size: int | None = -1) -> bytes:
        n = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        return self._take(self._raw.read(n))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _metrics_server(
    addr: str, port: int, registry: Any, slots: threading.BoundedSemaphore, deadlines: _Deadlines
) -> Any:
    """prometheus_client's WSGI app on a thread-per-connection server whose threads are
    bounded: each socket operation times out, each connection is cut past its deadline
    (``deadlines``), its request is capped, and connections over the cap (``slots``, shared
    by the endpoint's addresses) are closed."""
    import socket
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from prometheus_client import make_wsgi_app

    class Handler(WSGIRequestHandler):
        timeout = METRICS_SOCKET_SECONDS

        def setup(self) -> None:
            deadlines.add(self.request)
            super().setup()
            self.rfile = _CappedReader(self.rfile, MAX_METRICS_REQUEST_BYTES)  # type: ignore[assignment]

        def handle(self) -> None:
            import http.client

            try:
                super().handle()
            except http.client.LineTooLong:  # the request line itself: no answer, closed
                self.close_connection = True

        def finish(self) -> None:
            deadlines.remove(self.request)
            with contextlib.suppress(OSError):  # a connection cut or reset by its client
                super().finish()

        def log_message(self, format: str, *args: Any) -> None:
            """Log nothing (a scrape every few seconds)."""

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in addr else socket.AF_INET

        def process_request(self, request: Any, client_address: Any) -> None:
            if not slots.acquire(blocking=False):
                self.shutdown_request(request)  # over the cap: closed at once
                return
            try:
                super().process_request(request, client_address)
            except BaseException:
                slots.release()
                raise

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                slots.release()

        def handle_error(self, request: Any, client_address: Any) -> None:
            """A connection cut at its deadline or reset by its client: nothing to log."""

    httpd = make_server(addr, port, make_wsgi_app(registry), Server, handler_class=Handler)
    threading.Thread(target=httpd.serve_forever, name="heka-metrics", daemon=True).start()
    return httpd


class MetricsEndpoint:
    """The metrics endpoint: one HTTP server per address of its host, on one port."""

    def __init__(self, servers: list[Any]) -> None:
        self.servers = servers

    @property
    def port(self) -> int:
        return int(self.servers[0].server_port)

    @property
    def addresses(self) -> list[str]:
        """The addresses it listens on, IPv6 in brackets (as in the ``listening`` log line)."""
        return [listen.Address(str(s.server_address[0]), required=True).bracketed for s in self.servers]

    def shutdown(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()


def start_http_endpoint(port: int, host: str, setting: str = "HEKA_METRICS_HOST") -> MetricsEndpoint:
    """Serve the aggregated metrics of every process on every address of ``host``, as the
    gRPC port does (:mod:`service.listen`: ``localhost`` is both loopbacks, ``[::]`` falls
    back to ``0.0.0.0`` without IPv6, an address taken stops the start). Each connection
    has :data:`METRICS_SOCKET_SECONDS` per read or write and :data:`METRICS_REQUEST_SECONDS`
    in all, its request at most :data:`MAX_METRICS_REQUEST_BYTES`, and at most
    :data:`MAX_METRICS_CONNECTIONS` are served at once, over all addresses."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    registry.register(TolerantMultiProcessCollector(os.environ["PROMETHEUS_MULTIPROC_DIR"]))
    slots = threading.BoundedSemaphore(MAX_METRICS_CONNECTIONS)
    deadlines = _Deadlines()
    servers: list[Any] = []
    with listen.reserve(host, port, what="metrics port", setting=setting) as reservation:
        for address in reservation.addresses:
            try:
                servers.append(_metrics_server(address.host, reservation.port, registry, slots, deadlines))
            except OSError as exc:
                MetricsEndpoint(servers).shutdown()
                target = address.target(reservation.port)
                raise listen.ListenError(f"cannot bind metrics port {target}: {exc.strerror}") from None
    return MetricsEndpoint(servers)


def mark_process_dead(pid: int) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
