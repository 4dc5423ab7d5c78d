"""What must not depend on the build: printed by the pure-Python and the compiled build, compared
by ``tests/test_builds.py``. Run as a script (``python tests/build_identity.py [--quick]``);
``HEKA_PURE_PYTHON=1`` selects the pure-Python modules (``engine/_build.py``).

One line per item, ``<section> <key> <sha256 prefix>``, over:

* ``golden``: the three golden games (``tests/golden/``, recorded as their tests record them:
  every action, every event text, the states' texts);
* ``conformance``: random games from fixed seeds for every configuration, every step's
  state text, legal actions, events, every seat's and the public view (as JSON), and a state
  sampled for the seat to act (``sample_consistent_state`` with a seeded RNG): the subset of
  the conformance suite whose outputs are values;
* ``decisions``: the seeded decisions of ``bench/seeded_decisions.py`` (``mcts:easy`` in three
  settings, ``greedy``, ``random``) on its first positions of each configuration, with the
  chosen action, the iterations and the root statistics (visits, mean values).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "engine" / "aton"))
sys.path.insert(0, str(ROOT / "tests" / "engine" / "osirium"))

import engine  # noqa: E402
from ai.api import make_bot  # noqa: E402
from engine import get_game  # noqa: E402
from engine.core import State  # noqa: E402

CONFIGS = [("aton", 2, {}), ("osirium", 2, {}), ("osirium", 3, {}), ("osirium", 4, {"teams": True})]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _load(path: Path, name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden() -> Iterator[tuple[str, str]]:
    aton = _load(ROOT / "tests/engine/aton/test_aton_golden.py", "_aton_golden")
    osirium = _load(ROOT / "tests/engine/osirium/test_osirium_golden.py", "_osirium_golden")
    yield "aton_seed192.txt", aton.play_golden()  # type: ignore[attr-defined]
    for name, n, seed, options in osirium.CASES:  # type: ignore[attr-defined]
        yield name, osirium.record(n, seed, options)  # type: ignore[attr-defined]


def conformance(seeds: int) -> Iterator[tuple[str, str]]:
    for game, players, options in CONFIGS:
        g = get_game(game)
        for seed in range(seeds):
            state = g.new_initial_state(players, seed, options)
            rng = random.Random(seed)
            lines = [state.serialize()]
            while not state.is_terminal():
                seat = state.current_player()
                legal = state.legal_actions()
                sampled = state.sample_consistent_state(seat, random.Random(len(lines)))
                indexed = [state.legal_action_at(k) for k in range(state.num_legal_actions())]
                lines.append(f"{seat} {state.decision()} {legal} {indexed} {sampled.serialize()}")
                for viewer in (None, *range(players)):
                    lines.append(json.dumps(state.view(viewer).to_dict(), sort_keys=True, default=str))
                action = rng.choice(legal)
                for e in state.apply_action(action):
                    lines.append(f"{e.kind} {e.player} {e.visible_to} {e.text} {sorted(e.data.items())}")
                lines.append(state.serialize())
            lines.append(repr(state.outcome()))
            yield f"{game}{players}{'t' if options else ''}-seed{seed}", "\n".join(lines)


def decisions(count: int) -> Iterator[tuple[str, str]]:
    seeded = _load(ROOT / "bench/seeded_decisions.py", "_seeded_decisions")
    bots = {b: make_bot(b) for b in seeded.BOTS}  # type: ignore[attr-defined]
    for game, players, options in seeded.CONFIGS:  # type: ignore[attr-defined]
        label = f"{game}{players}{'t' if options else ''}"
        positions: list[tuple[int, State, int]] = seeded.positions(game, players, options, count)  # type: ignore[attr-defined]
        for i, s, _ in positions:
            for name, bot in bots.items():
                d = bot.choose(s, seed=7919 * i + 1)
                stats = [(a.action, a.visits, a.mean_value) for a in d.diagnostics.actions]
                yield f"{label}-pos{i:02d}-{name}", f"{d.action} {d.diagnostics.iterations} {stats}"


def _with_checksum(payload: dict[str, object]) -> dict[str, object]:
    from ai.learned import checksum

    return {**payload, "checksum": checksum(payload)}


def learned(count: int) -> Iterator[tuple[str, str]]:
    """The learned evaluation (features, values), a seeded network over every seat's public
    situation (version-2 ``mlp``/``table`` files) and a short expert search per position."""
    import random

    from ai.learned import (
        FORMAT,
        LearnedEvaluation,
        feature_names,
        learned_evaluation,
        parse_model,
        seat_features,
        table_features,
    )

    seeded = _load(ROOT / "bench/seeded_decisions.py", "_seeded_decisions")
    expert = make_bot("mcts:expert,iterations=300,ms=none")
    for game, players, options in seeded.CONFIGS:  # type: ignore[attr-defined]
        label = f"{game}{players}{'t' if options else ''}"
        positions: list[tuple[int, State, int]] = seeded.positions(game, players, options, count)  # type: ignore[attr-defined]
        evaluation = learned_evaluation(game, players)
        names = feature_names(game, "table", players)
        rng = random.Random(players)
        network = LearnedEvaluation(
            parse_model(
                _with_checksum(
                    {
                        "format": FORMAT,
                        "version": 2,
                        "kind": "mlp",
                        "inputs": "table",
                        "game": game,
                        "players": players,
                        "features": list(names),
                        "network": {
                            "hidden_weights": [[rng.uniform(-0.5, 0.5) for _ in names] for _ in range(6)],
                            "hidden_bias": [rng.uniform(-0.2, 0.2) for _ in range(6)],
                        },
                        "weights": [rng.uniform(-1, 1) for _ in range(6)],
                        "bias": 0.1,
                        "training": {},
                    }
                ),
                "identity",
                game,
                players,
            )
        )
        for i, s, _ in positions:
            values = evaluation.evaluate(s)
            yield f"{label}-pos{i:02d}-features", repr(seat_features(s)) + repr(list(values))
            yield f"{label}-pos{i:02d}-table", repr(table_features(s)) + repr(list(network.evaluate(s)))
            d = expert.choose(s, seed=7919 * i + 1)
            stats = [(a.action, a.visits, a.mean_value) for a in d.diagnostics.actions]
            yield f"{label}-pos{i:02d}-expert", f"{d.action} {d.diagnostics.iterations} {stats}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=6, help="conformance seeds per configuration (default 6)")
    ap.add_argument("--positions", type=int, default=6, help="decision positions per configuration (6)")
    args = ap.parse_args()
    print(f"build {engine.build()}")
    for key, text in golden():
        print(f"golden {key} {digest(text)}")
    for key, text in conformance(args.seeds):
        print(f"conformance {key} {digest(text)}")
    for key, text in decisions(args.positions):
        print(f"decisions {key} {digest(text)}")
    for key, text in learned(args.positions):
        print(f"learned {key} {digest(text)}")


if __name__ == "__main__":
    main()
