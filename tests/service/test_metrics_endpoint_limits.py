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
