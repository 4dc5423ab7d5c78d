"""What does sealing tokens (AES-256-GCM, the default) cost per call, against plaintext tokens?

The cheap calls on two servers without the state cache (every call opens its token and seals
a new one), one sealing and one with ``HEKA_INSECURE_PLAINTEXT_TOKENS``, each on tokens it
made itself, interleaved in one run; server CPU per call, and ``ListGames`` as the floor.
Prints a table; asserts nothing.

    .venv/bin/python bench/sealing_cost.py --seconds 2 --repeats 3 --positions 60
    .venv/bin/python bench/sealing_cost.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._service import cpu_title, heka, measure_interleaved, parse, parser
from bench.table import print_table


async def bench_sealing(args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The cost of sealing by default: the cheap calls on two servers without the
    state cache (every call opens its token and seals a new one), one sealing (AES-256-GCM,
    the default) and one with HEKA_INSECURE_PLAINTEXT_TOKENS, each on tokens it made itself,
    interleaved in the same run; server CPU per call, and ListGames as the floor."""
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with contextlib.ExitStack() as stack:
        servers = {
            "sealed": heka(stack, 1, args.processes, HEKA_STATE_CACHE_SIZE="0"),
            "plaintext": heka(
                stack, 1, args.processes, HEKA_STATE_CACHE_SIZE="0", HEKA_INSECURE_PLAINTEXT_TOKENS="true"
            ),
        }
        await measure_interleaved(servers, args, results)
    rows: list[tuple[str, ...]] = []
    names = sorted({name for name, _ in results}, key=lambda x: (x != "ListGames", x))
    for name in names:
        sealed = statistics.median(x["cpu_us"] for x in results[(name, "sealed")])
        plain = statistics.median(x["cpu_us"] for x in results[(name, "plaintext")])
        rows.append(
            (name, f"{sealed:.0f}", f"{plain:.0f}", f"{sealed - plain:+.0f}", f"{sealed / plain:.2f}")
        )
    return rows


def main() -> int:
    args = parse(parser(__doc__.splitlines()[0]))
    rows = asyncio.run(bench_sealing(args))
    header = ("workload (no state cache)", "sealed us/call", "plaintext us/call", "difference", "ratio")
    print_table(header, rows, cpu_title(args, paired=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
