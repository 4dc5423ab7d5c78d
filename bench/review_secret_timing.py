"""Does the time to find another seat's secret decision (-1) in a pinned review depend on
which decision it was? (docs/review.md, "What a review reveals")

    .venv/bin/python bench/review_secret_timing.py             # 300 rounds
    .venv/bin/python bench/review_secret_timing.py --rounds 1000 --json heka-results/t.json

In this process, no server: an Aton position where seat 1 arranges its cards with many
distinct arrangements (A3.3); for the first and the last of them in id order, the state
after it is the checkpoint, and :func:`ai.review.resolve_history` finds the -1 for viewer 0,
pinned (as a seat's review) and unpinned (as a trusted backend's, which may stop at the first
that fits). The two are timed alternately, ``--rounds`` times each (``time.perf_counter``);
prints the medians and their ratio (last / first). Pinned, the ratio is 1 within noise;
unpinned, it grows with the number of candidates tried.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai.review import resolve_history
from engine.core import SECRET_ACTION, State
from engine.registry import get_game


def position(seed: int) -> tuple[State, list[int]]:
    """The first seat-1 arrangement of a random Aton game with at least 12 distinct results,
    and those arrangements (the first of equal ones), in id order."""
    import random

    for s in range(seed, seed + 1000):
        rng = random.Random(s)
        state = get_game("aton").new_initial_state(2, seed=s)
        while not state.is_terminal():
            legal = state.legal_actions()
            if state.current_player() == 1 and state.public_action(legal[0]) == SECRET_ACTION:
                distinct = {state.child(c).serialize(): c for c in reversed(legal)}
                if len(distinct) >= 12:
                    return state, sorted(distinct.values())
            state.apply(rng.choice(legal))
    raise SystemExit("no such position")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default="", help="write the figures here")
    args = ap.parse_args(argv)
    state, candidates = position(args.seed)
    ends = {"first": candidates[0], "last": candidates[-1]}
    checkpoints = {k: state.child(c) for k, c in ends.items()}
    out: dict[str, object] = {"candidates": len(candidates), "rounds": args.rounds}
    for mode, pinned in (("pinned", True), ("unpinned", False)):
        times: dict[str, list[float]] = {k: [] for k in ends}
        for _ in range(args.rounds):
            for k, action in ends.items():
                t = time.perf_counter()
                found = resolve_history(state, [SECRET_ACTION], [checkpoints[k]], viewer=0, pinned=pinned)
                times[k].append(time.perf_counter() - t)
                assert found == [action]
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio = med["last"] / med["first"]
        out[mode] = {"first_ms": med["first"] * 1e3, "last_ms": med["last"] * 1e3, "ratio": ratio}
        print(
            f"{mode:9s} first {med['first'] * 1e3:.3f} ms, last {med['last'] * 1e3:.3f} ms, "
            f"last/first {ratio:.2f} ({len(candidates)} distinct arrangements, {args.rounds} rounds)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
