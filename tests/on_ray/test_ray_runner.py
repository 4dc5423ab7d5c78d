"""Games as Ray tasks (service/ray_runner.py), when the ``ray`` extra is installed (``make
ray-check``); skipped otherwise. One local Ray instance (2 CPUs, no dashboard) for the module.

* an arena on Ray gives the same games and table as the process pool, for the same seed, and
  so does a ladder in the nearest design (its second phase follows from its pilot);
* an interrupted Ray run resumes from its JSON file (``heka arena --ray local --resume``);
* ``heka train --ray`` self-play gives the same model file as in-process self-play.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="needs the ray extra (pip install 'heka[ray]'; make ray-check)")

from ai.arena import ArenaConfig, ArenaResult, run_arena  # noqa: E402
from service.cli import main  # noqa: E402
from service.commands.arena import dump_json  # noqa: E402
from service.ray_runner import arena_runner  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]

BOTS = ("greedy", "random", "mcts:iterations=10,ms=none")


def played(records: Any) -> list[tuple[Any, ...]]:
    """Everything of the games except their seconds."""
    return [
        (r.index, r.pairing, r.seats, r.deal_seed, r.bot_seed, r.winners, r.returns, r.scores, r.plies)
        for r in records
    ]


def test_ray_and_the_process_pool_give_the_same_arena(cluster: int) -> None:
    assert cluster == 2
    config = ArenaConfig(game="aton", bots=BOTS, games=4, seed=5, workers=2)
    pool = run_arena(config)
    on_ray = run_arena(config, runner=arena_runner())
    assert not pool.interrupted and not on_ray.interrupted
    assert len(on_ray.records) == 12
    assert played(on_ray.records) == played(pool.records)
    assert on_ray.ratings() == pool.ratings()
    untimed = lambda r: [  # noqa: E731 - the table without its thinking times
        {k: v for k, v in s.to_dict().items() if not k.endswith("ms_per_decision")} for s in r.pairing_stats()
    ]
    assert untimed(on_ray) == untimed(pool)


def test_a_nearest_design_ladder_on_ray_plays_the_same_two_phases(cluster: int) -> None:
    """The second phase follows from the pilot's games, which are the same on Ray."""
    from ai.ladder import ladder_config

    assert cluster == 2
    config = ladder_config(
        "aton", 2, games_per_pair=9, seed=5, workers=2, design="nearest",
        anchors=("random", "greedy", "mcts:iterations=10,ms=none"), candidates=("mcts:iterations=3,ms=none",),
    )  # fmt: skip
    pool = run_arena(config)
    on_ray = run_arena(config, runner=arena_runner())
    assert len(on_ray.records) == len(pool.records) == 55 and not on_ray.interrupted
    assert played(on_ray.records) == played(pool.records)


@pytest.mark.usefixtures("cluster")
def test_an_interrupted_ray_run_resumes_from_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = ArenaConfig(game="aton", bots=BOTS, games=4, seed=6, workers=2)
    seen: list[int] = []
    partial = run_arena(
        config,
        runner=arena_runner(),
        on_result=lambda r, *_: seen.append(r.index),
        should_stop=lambda: len(seen) >= 3,
    )
    assert partial.interrupted and 3 <= len(partial.records) < 12
    path = tmp_path / "arena.json"
    path.write_text(dump_json(partial.to_json()))
    bots = ",".join(BOTS[:2]) + ";" + BOTS[2]
    argv = ["arena", "--game", "aton", "--bots", bots, "--games", "4", "--seed", "6", "--ray", "local",
            "--no-progress", "--resume", str(path), "--json", str(path)]  # fmt: skip
    assert main(argv) == 0
    assert f"resuming: {len(partial.records)} game(s) kept" in capsys.readouterr().err
    data = json.loads(path.read_text())
    assert data["games_played"] == 12 and not data["interrupted"]
    whole = run_arena(config)
    assert [
        (g["index"], tuple(g["seats"]), g["bot_seed"], tuple(g["winners"]), g["plies"]) for g in data["games"]
    ] == [(r.index, r.seats, r.bot_seed, r.winners, r.plies) for r in whole.records]
    assert (
        data["ratings"]["bots"]
        == ArenaResult(config, whole.players, whole.pairings, whole.records, 12, 0.0).to_json()["ratings"][
            "bots"
        ]
    )


@pytest.mark.usefixtures("cluster")
def test_training_self_play_on_ray_gives_the_same_model() -> None:
    from learn.train import TrainConfig, train
    from service.ray_runner import train_runner

    config = TrainConfig(game="aton", players=2, games=4, seed=3, bot="mcts:iterations=5,ms=none")
    here, _ = train(config)
    on_ray, _ = train(config, runner=train_runner())
    assert on_ray == here


def test_a_local_instance_runs_with_token_authentication() -> None:
    """docs/ray.md, "Security": ``--ray local`` starts Ray with its token authentication on,
    whatever Ray's own default, and leaves the environment as it was (a fresh process: the
    module's instance above was started by the test itself)."""
    code = (
        "import os\n"
        "from service.ray_runner import ray_session\n"
        "with ray_session('local', cpus=1):\n"
        "    from ray._private.authentication.authentication_utils import is_token_auth_enabled\n"
        "    print(os.environ['RAY_AUTH_MODE'], is_token_auth_enabled())\n"
        "print(os.environ.get('RAY_AUTH_MODE'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=240, check=True
    ).stdout.split()
    assert out == ["token", "True", "None"], out
