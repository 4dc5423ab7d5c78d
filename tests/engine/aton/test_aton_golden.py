"""Golden game: a full seeded Aton game (actions, events, final state) checked in.

Any change of the rules, the action texts, the events or the state text shows up as a diff
of ``tests/golden/aton_seed192.txt``. After an intended change, regenerate it with::

    HEKA_REGEN_GOLDEN=1 .venv/bin/pytest tests/engine/aton/test_aton_golden.py

and review the diff before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.aton import GAME
from engine.rng import Rng

SEED = 192
GOLDEN = Path(__file__).resolve().parents[2] / "golden" / f"aton_seed{SEED}.txt"


def play_golden() -> str:
    """Actions chosen by ``Rng(SEED).choice(legal_actions())`` (stable across Pythons)."""
    s = GAME.new_initial_state(seed=SEED)
    chooser = Rng(SEED)
    lines = [
        f"# Aton golden game: seed {SEED}; actions = engine.rng.Rng({SEED}).choice(legal_actions()).",
        "# Regenerate: HEKA_REGEN_GOLDEN=1 .venv/bin/pytest tests/engine/aton/test_aton_golden.py",
        "== initial state ==",
        s.to_text(),
        "== actions ==",
    ]
    n = 0
    while not s.is_terminal():
        player = s.current_player()
        action = chooser.choice(s.legal_actions())
        n += 1
        lines.append(f"{n:3d}. seat {player}: {GAME.action_to_string(action)}")
        for e in s.apply_action(action):
            private = "" if e.visible_to is None else f" [to seat {','.join(map(str, e.visible_to))}]"
            lines.append(f"       {e.kind}: {e.text}{private}")
        s.validate()
    lines += ["== final state ==", s.to_text(), "== serialized ==", s.serialize(), ""]
    return "\n".join(lines)


def test_golden_game() -> None:
    text = play_golden()
    if os.environ.get("HEKA_REGEN_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.exists(), f"missing {GOLDEN}; run with HEKA_REGEN_GOLDEN=1 to create it"
    expected = GOLDEN.read_text(encoding="utf-8")
    assert text == expected, "the golden Aton game changed; diff with HEKA_REGEN_GOLDEN=1 and review"


def test_golden_final_state_round_trips() -> None:
    final = GOLDEN.read_text(encoding="utf-8").split("== serialized ==\n")[1].strip()
    s = GAME.deserialize_state(final)
    assert s.is_terminal() and s.serialize() == final
