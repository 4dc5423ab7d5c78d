"""``heka arena`` (with ``--ladder`` and ``--ladder --check TABLE``) and ``heka train`` with
``--ray``, when the ``ray`` extra is installed (``make ray-check``); skipped otherwise. One
local Ray instance (2 CPUs, no dashboard) for the module.

* the ladder on Ray writes the same rating table, games and printed ladder as ``--workers``
  for the same seed, and its check the same check;
* ``--ray HOST:PORT`` where nothing answers fails after ``--ray-timeout`` seconds, exit 2,
  with one line that names the address: no traceback, none of Ray's retry messages.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="needs the ray extra (pip install 'heka[ray]'; make ray-check)")

from service.cli import main  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]

LADDER = [
    "arena", "--ladder", "--game", "aton", "--games-per-pair", "2", "--no-progress",
    "--anchors", "random;greedy", "--bots", "mcts:iterations=10,ms=none;mcts:iterations=30,ms=none",
]  # fmt: skip
WHERE = {"pool": ["--workers", "2"], "ray": ["--ray", "local"]}


def untimed(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The games of a --json file without what depends on where they ran (their times)."""
    return [
        {k: v for k, v in g.items() if k not in {"seconds", "think_seconds", "cpu_seconds", "think_cpu"}}
        for g in games
    ]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_the_ladder_and_its_check_on_ray_match_the_process_pool(
    cluster: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cluster == 2
    ladder: dict[str, tuple[str, dict[str, Any]]] = {}
    for where, how in WHERE.items():
        table, games = tmp_path / f"{where}-table.json", tmp_path / f"{where}-ladder.json"
        out, err = run([*LADDER, "--seed", "4", *how, "--ratings", str(table), "--json", str(games)], capsys)
        assert ("playing on a local Ray instance (2 CPUs" in err) == (where == "ray")
        ladder[where] = (out.split("\nrating ladder (", 1)[1], json.loads(games.read_text()))
    (pool_out, pool), (ray_out, on_ray) = ladder["pool"], ladder["ray"]
    assert (tmp_path / "ray-table.json").read_bytes() == (tmp_path / "pool-table.json").read_bytes()
    assert ray_out.replace("ray-table", "pool-table") == pool_out
    assert len(on_ray["games"]) == 2 * (1 + 2 * 2) and not on_ray["interrupted"]
    assert untimed(on_ray["games"]) == untimed(pool["games"])
    assert on_ray["ratings"]["bots"] == pool["ratings"]["bots"]

    # The check of that table (another seed), on each: the same candidates, games and verdict.
    table = tmp_path / "pool-table.json"
    check: dict[str, tuple[str, dict[str, Any]]] = {}
    for where, how in WHERE.items():
        games = tmp_path / f"{where}-check.json"
        argv = [*LADDER[:-2], "--check", str(table), "--targets", "150,300", "--seed", "5"]
        out, err = run([*argv, *how, "--json", str(games)], capsys)
        assert ("playing on a local Ray instance (2 CPUs" in err) == (where == "ray")
        printed = out.split(f"\ncheck of {table}", 1)[1].split("\nresults written to", 1)[0]
        check[where] = (printed, json.loads(games.read_text()))
    (pool_out, pool), (ray_out, on_ray) = check["pool"], check["ray"]
    assert ray_out == pool_out and "of 2 within ±75 Elo" in ray_out, ray_out
    assert on_ray["check"] == pool["check"] and [r["target"] for r in on_ray["check"]["rows"]] == [150, 300]
    assert on_ray["bots"] == pool["bots"] and untimed(on_ray["games"]) == untimed(pool["games"])


@pytest.mark.parametrize(
    "command",
    [["arena", "--game", "aton", "--bots", "greedy;random", "--games", "2", "--no-progress"],
     ["train", "--game", "aton", "--games", "2", "--no-progress"]],
    ids=["arena", "train"],
)  # fmt: skip
def test_an_address_nobody_answers_fails_with_one_line_after_the_timeout(
    command: list[str], tmp_path: Path
) -> None:
    """A closed local port: ray.init alone would retry it for ever."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # held, never listening: every connection is refused
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        proc = subprocess.run(
            [sys.executable, "-m", "service.cli", *command, "--ray", address, "--ray-timeout", "2"],
            check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip
    name = command[0]
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert all(line.startswith(f"heka {name}: ") for line in lines), proc.stderr
    assert lines[-1].startswith(
        f"heka {name}: no Ray cluster answered at {address} within 2 s: check the address"
    )
    assert lines[-1].endswith("(--ray-timeout SECONDS waits longer)")
