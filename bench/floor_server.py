"""``heka serve`` with its cheap handlers replaced, for the floor of the per-call budget
(``bench/call_floor.py``): never a real server.

``BENCH_FLOOR`` says what ``ApplyAction`` and ``ListLegalActions`` do:

* ``real``: what they do in heka (the handler's CPU is measured, nothing else changes);
* ``twice``: the real handler twice on each request, the second run right after the first
  (its CPU measured apart: the same work with the processor's caches warm);
* ``noop``: answer the response a real handler gave to the same request the first time it
  was seen (a dict keyed by the request's bytes): the same sizes and content on the wire,
  the same interceptor, metrics and access log, and no handler work after the first call;
* ``spin:N``: the same, after spinning until this thread has used N µs more CPU
  (``time.thread_time_ns``, exact whatever the machine's load), to see how the server's CPU
  per call grows with the handler's.

With ``BENCH_FLOOR_STATS=DIR`` each gRPC process writes, as it stops, ``DIR/<pid>.json``:
per method, the calls and the handler's CPU (its thread's, in ns: what the call costs
inside the server, against the same handler timed alone in a loop).

    BENCH_FLOOR=noop python bench/floor_server.py serve --port 0 ...
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def patch(mode: str, stats_dir: str = "") -> None:
    from service.server import Server
    from service.servicer import GameService

    spin_ns = 0
    if mode.startswith("spin:"):
        spin_ns = int(float(mode.split(":", 1)[1]) * 1000)
    elif mode not in ("noop", "real", "twice"):
        raise SystemExit(f"BENCH_FLOOR: real, twice, noop or spin:N, not {mode!r}")
    #: Per method: calls, the handler's CPU in ns (this thread's, around the handler), and
    #: (``twice``) the second run's.
    stats: dict[str, list[int]] = {}

    def replace(real: Any, counts: list[int]) -> Any:
        answers: dict[bytes, Any] = {}

        def handler(self: Any, request: Any, context: Any) -> Any:
            start = time.thread_time_ns()
            try:
                if mode == "real":
                    return real(self, request, context)
                if mode == "twice":
                    real(self, request, context)
                    second = time.thread_time_ns()
                    response = real(self, request, context)
                    counts[2] += time.thread_time_ns() - second
                    return response
                if spin_ns:
                    end = start + spin_ns
                    while time.thread_time_ns() < end:
                        pass
                key = request.SerializeToString()
                response = answers.get(key)
                if response is None:
                    response = answers[key] = real(self, request, context)
                return response
            finally:
                counts[0] += 1
                counts[1] += time.thread_time_ns() - start

        return handler

    for name in ("ApplyAction", "ListLegalActions"):
        stats[name] = [0, 0, 0]
        setattr(GameService, name, replace(getattr(GameService, name), stats[name]))

    if stats_dir:
        stop = Server.stop

        def stop_and_report(self: Server) -> None:
            with open(os.path.join(stats_dir, f"{os.getpid()}.json"), "w", encoding="utf-8") as fh:
                json.dump(stats, fh)
            stop(self)

        Server.stop = stop_and_report  # type: ignore[method-assign]


if __name__ == "__main__":
    patch(os.environ.get("BENCH_FLOOR", "noop"), os.environ.get("BENCH_FLOOR_STATS", ""))
    from service.cli import main

    sys.exit(main(sys.argv[1:]))
