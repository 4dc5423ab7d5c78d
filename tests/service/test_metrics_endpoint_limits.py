"""The metrics endpoint's connections are bounded (service.metrics.start_http_endpoint): a
client that opens connections and sends half a request holds no thread past the cap, and
the endpoint answers again once such clients are gone."""

from __future__ import annotations

import socket
import time
import urllib.request
from pathlib import Path

from service_helpers import KEY1, ServerProcess

from service import metrics


def threads(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/task").iterdir()))


def scrape_ok(server: ServerProcess) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=5) as resp:
            return resp.status == 200 and b"heka_" in resp.read()
    except OSError:
        return False


def test_half_sent_requests_hold_no_more_threads_than_the_cap(start_server: object) -> None:
    server: ServerProcess = start_server("--search-workers", "1", HEKA_STATE_KEYS=KEY1)  # type: ignore[operator]
    assert scrape_ok(server)
    before = threads(server.pid)
    held = []
    try:
        for _ in range(metrics.MAX_METRICS_CONNECTIONS + 40):
            s = socket.create_connection(("127.0.0.1", server.metrics_port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never the blank line that ends it
            held.append(s)
        time.sleep(0.5)
        # One thread per connection up to the cap; the rest are closed on arrival (100 threads
        # and more before).
        assert threads(server.pid) <= before + metrics.MAX_METRICS_CONNECTIONS + 2
    finally:
        for s in held:
            s.close()
    end = time.monotonic() + 10
    while not scrape_ok(server):  # the clients gone, their threads end and free the slots
        assert time.monotonic() < end, "the endpoint did not answer again"
        time.sleep(0.1)


def test_a_trickled_or_oversized_request_is_cut(monkeypatch: object) -> None:
    """The per-read timeout alone let a client that sends a byte every few seconds keep its
    connection, and 64 such clients shut every scrape out for as long as they liked. A
    connection is cut past METRICS_REQUEST_SECONDS in all, and a request past
    MAX_METRICS_REQUEST_BYTES is answered 431 without reading on."""
    import threading

    from prometheus_client import CollectorRegistry, Counter

    monkeypatch.setattr(metrics, "METRICS_REQUEST_SECONDS", 2.0)  # type: ignore[attr-defined]
    registry = CollectorRegistry()
    Counter("heka_probe", "a probe", registry=registry).inc()
    slots = threading.BoundedSemaphore(4)
    httpd = metrics._metrics_server("127.0.0.1", 0, registry, slots, metrics._Deadlines())
    port = httpd.server_port

    def scrape() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
                return resp.status == 200 and b"heka_probe" in resp.read()
        except OSError:
            return False

    stop = threading.Event()

    def trickle(sock: socket.socket) -> None:
        while not stop.wait(0.2):
            try:
                sock.sendall(b"a")
            except OSError:
                return

    try:
        assert scrape()
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
        for sock in held:
            sock.sendall(b"GET /metrics HTTP/1.1\r\nX: ")
            threading.Thread(target=trickle, args=(sock,), daemon=True).start()
        # Every slot held by a trickling client (on a loaded machine their accepts may lag):
        # then a scrape is refused, until their deadline cuts them.
        end = time.monotonic() + 10
        while slots.acquire(blocking=False):
            slots.release()
            assert time.monotonic() < end, "the trickling clients were never all accepted"
            time.sleep(0.01)
        assert not scrape()
        end = time.monotonic() + 10
        while not scrape():  # cut at their deadline while they still trickle
            assert time.monotonic() < end, "a trickling client kept its slot past the deadline"
            time.sleep(0.1)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as big:
            big.sendall(
                b"GET /metrics HTTP/1.1\r\n" + b"X: " + b"a" * (2 * metrics.MAX_METRICS_REQUEST_BYTES)
            )
            assert big.recv(64).startswith(b"HTTP/1.0 431")
        assert scrape()
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()
