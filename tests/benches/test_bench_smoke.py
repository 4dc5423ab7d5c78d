"""Every bench script still runs: each in its smallest configuration, to a clean exit with output.

A bench is run by hand, months apart, so an API change can break one unnoticed; the figures
in bench/results/ are only as good as the scripts that can reproduce them. The smoke runs take
a few minutes (``bench_smoke`` marker: `make bench-smoke`, in CI, not `make test`); the check
that every script has a smoke run is cheap and runs in `make test`, so a new script gets one.
They prove a script runs, not its figures: those are the script's to print.
"""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

#: Each script's smallest run: its arguments ("{tmp}" is a fresh folder) and its time limit (s).
SMOKE: dict[str, tuple[str, int]] = {
    "arena_replay": ("bench/results/aton_greedy_random.json --games 2", 120),
    "arena_summary": ("bench/results/aton_greedy_random.json", 60),
    "aton_speed": ("--games 5 --runs 1", 60),
    "builds": ("--quick --rounds 1", 300),
    "burst": ("--calls 20 --channels 2 --seed 1", 120),
    "call_budget": ("--quick --processes 1", 180),
    "call_floor": ("--quick --processes 1", 180),
    "check_by_anchor": (
        "bench/results/check_osirium4_128.json ai/ladders/osirium-4p.json "
        "bench/results/ladder_osirium4_128.json",
        180,
    ),
    "check_forecast": (
        "bench/results/check_osirium4_teams_128.json ai/ladders/osirium-4p-teams.json "
        "bench/results/ladder_osirium4_teams_128.json --design 256/128 --draws 100",
        120,
    ),
    "decode_speed": ("", 120),
    "eval_capacity": ("--game aton --games 4 --seed 1", 180),
    "eval_cost": ("--configs aton:2 --positions 2 --runs 1", 120),
    "half_open": ("--calls 50 --connections 2 --hold 1", 120),
    "handler_cpu": ("--rounds 1 --positions 4 --passes 1", 180),
    "junk_flood": ("--clients 1 --seconds 1", 120),
    "ladder_cost": ("", 60),
    "ladder_scale": ("--resamples 3 --designs 2 --bias-reps 1 --only 'Aton 2p'", 180),
    "learned_heldout": ("--game aton --games 10 --holdout 0.2 --bot greedy ai/models/aton-2p.json", 180),
    "mcts_speed": ("--games aton --iterations 20 --runs 1 --no-workers", 120),
    "mcts_tune": ("--a mcts:easy,ms=none,iterations=20 --b greedy --games 2 --procs 1", 120),
    "openspiel_race": ("--modes iterations --iterations 10 --games 2", 300),
    "osirium_codec": ("--runs 1 --positions 4 --reps 1 --service", 120),
    "osirium_speed": ("--games 3 --runs 1", 60),
    "overload": ("--levels 1 --duration 1 --runs 1 --open 0 --capacity 5", 300),
    "play_flow": ("--seconds 1 --repeats 1", 240),
    "random_flood": ("--clients 2 --seconds 3 --iterations 10 --probe-every 0.5", 120),
    "ray_overhead": ("--games 4 --runs 1", 300),
    "response_sizes": ("", 120),
    "restart_cycles": ("--cycles 1 --processes 1 --clients 1 --load-seconds 1", 180),
    "review_cost": ("--games 1 --iterations 10 --configs aton:2", 180),
    "review_secret_timing": ("--rounds 2 --json {tmp}/timing.json", 180),
    "review_stream": ("--game aton --players 2 --runs 1 --json {tmp}/stream.json", 180),
    "review_validation": ("--game aton --players 2 --games 1 --iterations 10 --levels 'greedy;random'", 180),
    "sealing_cost": ("--quick --processes 1", 180),
    "search_ab": ("--baseline . --configs aton:2 --positions 2 --playouts 2 --runs 1", 180),
    "search_profile": ("run --game aton --players 2 --plies 2 --iterations 50 --searches 1", 120),
    "seeded_decisions": ("--positions 2", 120),
    "table_in_teams": ("", 60),
    "teams_vs_ffa": (
        "bench/results/ladder_osirium4_teams_128.json bench/results/ladder_osirium4_128.json",
        120,
    ),
    "throughput": ("--quick --processes 1", 180),
    "view_speed": ("--runs 1 --positions 4 --reps 1", 60),
}

#: The files in bench/ that are not run on their own, and what covers them.
NOT_RUN = {
    "_service": "a module the service benches share (run by theirs)",
    "table": "a module the benches share (run by theirs)",
    "floor_server": "the server call_floor.py starts (started by its smoke run)",
    "locustfile": "Locust's scenarios (tests/loadtest/test_locustfile.py, with a stand-in locust)",
}

#: Scripts that need a module outside the dev extra, and how to get it.
NEEDS = {
    "eval_capacity": ("sklearn", "pip install scikit-learn (bench/eval_capacity.py)"),
    "openspiel_race": ("pyspiel", "the openspiel extra: make openspiel-check"),
    "ray_overhead": ("ray", "the ray extra: make ray-check"),
}


def test_every_bench_script_has_a_smoke_run() -> None:
    scripts = {p.stem for p in BENCH.glob("*.py")}
    assert scripts - set(SMOKE) - set(NOT_RUN) == set(), "a bench script without a smoke run"
    assert set(SMOKE) | set(NOT_RUN) <= scripts, "a smoke run for a script that is gone"
    assert set(NEEDS) <= set(SMOKE)


@pytest.mark.bench_smoke
@pytest.mark.parametrize("name", sorted(SMOKE))
def test_bench_script_runs(name: str, tmp_path: Path) -> None:
    if name in NEEDS:
        module, how = NEEDS[name]
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"bench/{name}.py needs {module}, not installed ({how})")
    args, limit = SMOKE[name]
    proc = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), *shlex.split(args.replace("{tmp}", str(tmp_path)))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=limit,
        check=False,
    )
    tail = (proc.stdout[-3000:] + "\n--- stderr ---\n" + proc.stderr[-3000:]).strip()
    assert proc.returncode == 0, f"bench/{name}.py exited {proc.returncode}:\n{tail}"
    assert proc.stdout.strip(), f"bench/{name}.py printed nothing:\n{tail}"
