"""``heka serve`` with its cheap handlers replaced, for the floor of the per-call budget
(``bench/service_throughput.py --floor``): never a real server.

``BENCH_FLOOR`` says what ``ApplyAction`` and ``ListLegalActions`` do:

* ``noop``: answer the response a real handler gave to the same request the first time it
  was seen (a dict keyed by the request's bytes): the same sizes and content on the wire,
  the same interceptor, metrics and access log, and no handler work after the first call;
* ``spin:N``: the same, after spinning until this thread has used N µs more CPU
  (``time.thread_time_ns``, exact whatever the machine's load), to see how the server's CPU
  per call grows with the handler's.

    BENCH_FLOOR=noop python bench/floor_server.py serve --port 0 ...
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def patch(mode: str) -> None:
    from service.servicer import GameService

    spin_ns = 0
    if mode.startswith("spin:"):
        spin_ns = int(float(mode.split(":", 1)[1]) * 1000)
    elif mode != "noop":
        raise SystemExit(f"BENCH_FLOOR: noop or spin:N, not {mode!r}")

    for name in ("ApplyAction", "ListLegalActions"):
        real = getattr(GameService, name)
        answers: dict[bytes, Any] = {}

        def handler(self: Any, request: Any, context: Any, real: Any = real, answers: Any = answers) -> Any:
            if spin_ns:
                end = time.thread_time_ns() + spin_ns
                while time.thread_time_ns() < end:
                    pass
            key = request.SerializeToString()
            response = answers.get(key)
            if response is None:
                response = answers[key] = real(self, request, context)
            return response

        setattr(GameService, name, handler)


if __name__ == "__main__":
    patch(os.environ.get("BENCH_FLOOR", "noop"))
    from service.cli import main

    sys.exit(main(sys.argv[1:]))
