"""Golden seeded Osirium games (2 players; 4 players in teams).

Each file records every action (seat, step, text) with all its events (private ones marked
with who may see them), the outcome and the final serialised state. A change in the rules,
the card data, the action layout, the event texts or the randomness shows up as a diff.
Regenerate after an intended change with ``HEKA_REGEN_GOLDEN=1 pytest tests/engine/osirium``.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from engine.osirium import GAME

GOLDEN = Path(__file__).resolve().parents[2] / "golden"

CASES = [
    ("osirium_2p.txt", 2, 2026, {}),
    ("osirium_4p_teams.txt", 4, 7, {"teams": True}),
]


def record(n: int, seed: int, options: dict[str, Any]) -> str:
    state = GAME.new_initial_state(n, seed, options)
    rng = random.Random(seed)
    lines = [
        f"# osirium golden game: {n} players, seed {seed}, options {options}, random.Random({seed}).choice"
    ]
    lines.append(state.serialize())
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        lines.append(f"seat {state.current_player()} [{state.decision()}] {state.action_to_string(action)}")
        for e in state.apply_action(action):
            who = "" if e.visible_to is None else f" (to {','.join(map(str, e.visible_to))})"
            lines.append(f"    {e.kind}{who}: {e.text}")
    outcome = state.outcome()
    assert outcome is not None
    lines.append(
        f"outcome: {outcome.reason} winners={outcome.winners} scores={outcome.scores} "
        f"returns={outcome.returns}"
    )
    lines.append(state.serialize())
    lines.append(state.to_text())
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("name", "n", "seed", "options"), CASES)
def test_golden_game(name: str, n: int, seed: int, options: dict[str, Any]) -> None:
    path = GOLDEN / name
    text = record(n, seed, options)
    if os.environ.get("HEKA_REGEN_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with HEKA_REGEN_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        got, want = text.splitlines(), expected.splitlines()
        first = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want))
        )
        want_line = want[first] if first < len(want) else "<end>"
        got_line = got[first] if first < len(got) else "<end>"
        pytest.fail(
            f"{name} differs from line {first + 1}:\n  expected: {want_line}\n  got:      {got_line}\n"
            "(regenerate with HEKA_REGEN_GOLDEN=1)"
        )
