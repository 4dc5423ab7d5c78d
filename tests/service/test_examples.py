"""examples/python/play.py, run as its README says, against the shared test server: a whole
game, one call per move, ends with an outcome; the same seed plays the same game."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from service_helpers import ROOT

SCRIPT = ROOT / "examples" / "python" / "play.py"


def run_example(server: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--target", server.address, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "players"),
    [(("--game", "aton"), 2), (("--game", "osirium", "--teams"), 4)],
    ids=["aton", "osirium-4p-teams"],
)
def test_the_python_example_plays_a_game_to_its_end(server: Any, args: tuple[str, ...], players: int) -> None:
    done = run_example(server, *args, "--seed", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    moves = re.fullmatch(r"\w+: (\d+) moves of seat 0, (\d+) in all", lines[0])
    assert moves, done.stdout
    assert 0 < int(moves[1]) < int(moves[2])  # the bots moved inside the calls
    outcome = r"winners \[([\d, ]*)\], (OUTCOME_REASON_[A-Z0-9_]+), scores \[([-\d, ]+)\]"
    result = re.fullmatch(outcome, lines[1])
    assert result, done.stdout
    assert result[2] != "OUTCOME_REASON_UNSPECIFIED"
    assert len(result[3].split(", ")) == players
    if players == 4:  # teams: both seats of the winning team win
        assert result[1] in ("0, 2", "1, 3"), done.stdout


def test_the_python_example_is_reproducible_with_a_seed(server: Any) -> None:
    first = run_example(server, "--game", "aton", "--seed", "11")
    again = run_example(server, "--game", "aton", "--seed", "11")
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert first.stdout == again.stdout
