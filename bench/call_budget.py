"""What does a cheap call cost in server CPU, against ``ListGames`` on the same server, with
the state cache on and off, on the compiled and the pure-Python build?

Server CPU per ``ListLegalActions`` and ``ApplyAction`` against ``ListGames`` (a prebuilt
answer: the floor of heka's serving stack), with sealing (the default), four servers
interleaved in one run, each measured on tokens it made itself, each call's ratio paired
in time with the ``ListGames`` runs just before and after it. ``--before ROOT`` adds the
compiled build of another checkout (its extensions built: ``make compile`` there), cache on
and off, to compare two versions in one run. Prints a table; asserts nothing.

    .venv/bin/python bench/call_budget.py --seconds 3 --repeats 3 --positions 60   # make bench
    .venv/bin/python bench/call_budget.py --quick
    .venv/bin/python bench/call_budget.py --before ROOT --seconds 2 --repeats 4 --positions 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._service import against_list_games, cpu_title, heka, measure_interleaved, parse, parser
from bench.table import print_table


async def bench_budget(args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The per-call budget: server CPU per ListLegalActions and ApplyAction against
    ListGames on the same server, with sealing (the default), state cache on and off, on the
    compiled build and on the pure-Python one (HEKA_PURE_PYTHON=1), four servers interleaved
    in the same run; each server measured on tokens it made itself. ``--before ROOT`` adds
    the compiled build of another checkout (its extensions built: ``make compile`` there),
    cache on and off, to compare two versions in one run."""
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with contextlib.ExitStack() as stack:
        servers = {}
        if args.before is not None:
            before = args.before.resolve()
            servers["before: compiled, cache"] = heka(stack, 1, args.processes, root=before)
            servers["before: compiled, no cache"] = heka(
                stack, 1, args.processes, root=before, HEKA_STATE_CACHE_SIZE="0"
            )
        for build in ("compiled", "pure"):
            pure = {"HEKA_PURE_PYTHON": "1"} if build == "pure" else {}
            servers[f"{build}, cache"] = heka(stack, 1, args.processes, None, **pure)
            no_cache = {"HEKA_STATE_CACHE_SIZE": "0", **pure}
            servers[f"{build}, no cache"] = heka(stack, 1, args.processes, None, **no_cache)
        await measure_interleaved(servers, args, results)
    return [(k, name, cpu, ratio) for k, name, cpu, _, ratio in against_list_games(servers, results)]


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument(
        "--before",
        type=Path,
        default=None,
        metavar="ROOT",
        help="also the compiled build of the checkout ROOT (e.g. the previous commit's)",
    )
    args = parse(p)
    rows = asyncio.run(bench_budget(args))
    header = ("server (sealed tokens)", "workload", "server CPU us/call", "x ListGames")
    print_table(header, rows, cpu_title(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
