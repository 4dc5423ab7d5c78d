"""The learned evaluation: a logistic model of each seat's chance to win, fitted to the
outcomes of self-play games (``heka train``), read by the search at its rollout cut-off
(``mcts:expert``, ``mcts:...,eval=learned``; ``docs/search.md``, ``docs/training.md``).

A model is one small JSON file per game and player count in ``ai/models/``
(``aton-2p.json``, ``osirium-4p.json``...; ``HEKA_MODEL_DIR`` names another directory)::

    {"format": "heka-learned-evaluation", "version": 1, "game": "osirium", "players": 4,
     "features": ["score_lead", ...], "weights": [...], "bias": -1.02,
     "training": {"seed": 1, "command": "heka train ...", "games": ..., "metrics": {...}},
     "checksum": "sha256:<hex of the canonical JSON of every other field>"}

The features of a seat (:mod:`ai.aton.features`, :mod:`ai.osirium.features`) are functions of
that seat's view only. A seat's chance is ``P = sigmoid(bias + weights · features)``; the
search's value of seat ``p`` is ``2 · P_p / ΣP − 1`` (the seats' chances normalised to one
winner, mapped to the returns' [-1, 1]; with 2 players, exactly zero-sum). Inference is
standard library only; fitting (numpy) lives in :mod:`learn.train`, outside ``ai/``.

Every file is validated when it is loaded (format, version, game, player count, the feature
names the code computes, finite numbers, the checksum); a problem raises
:class:`ModelError` naming the file and what is wrong. :func:`check_models` loads every model
the ``expert`` preset needs: the server runs it at start-up, and making an ``eval=learned``
bot runs it too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, cast

from ai.aton import features as aton_features
from ai.osirium import features as osirium_features
from engine.aton.state import AtonState
from engine.core import State
from engine.osirium.state import OsiriumState

FORMAT: Final = "heka-learned-evaluation"
FORMAT_VERSION: Final = 1
#: Environment variable naming the directory of the model files (default: ``ai/models/``).
MODEL_DIR_ENV: Final = "HEKA_MODEL_DIR"
#: The models the ``expert`` preset needs: (game, players).
EXPECTED: Final[tuple[tuple[str, int], ...]] = (("aton", 2), ("osirium", 2), ("osirium", 3), ("osirium", 4))

#: Search evaluations (``MctsParams.evaluation``, spec ``eval=``).
HEURISTIC: Final = "heuristic"
LEARNED: Final = "learned"
EVALUATIONS: Final[tuple[str, ...]] = (HEURISTIC, LEARNED)


class ModelError(ValueError):
    """A model file that is missing or not valid (the message names the file and the fault)."""


def _aton_rows(state: State) -> list[list[float]]:
    return aton_features.seat_features(cast(AtonState, state))


def _osirium_rows(state: State) -> list[list[float]]:
    return osirium_features.seat_features(cast(OsiriumState, state))


#: Per game: the feature names and the function giving every seat's features (from its view).
FEATURES: Final[dict[str, tuple[tuple[str, ...], Callable[[State], list[list[float]]]]]] = {
    "aton": (aton_features.NAMES, _aton_rows),
    "osirium": (osirium_features.NAMES, _osirium_rows),
}


def feature_names(game: str) -> tuple[str, ...]:
    entry = FEATURES.get(game)
    if entry is None:
        raise ModelError(f"no learned evaluation for the game {game!r} (known: {', '.join(FEATURES)})")
    return entry[0]


def seat_features(state: State) -> list[list[float]]:
    """Every seat's features (:data:`FEATURES`), each from that seat's view."""
    entry = FEATURES.get(state.game.name)
    if entry is None:
        raise ModelError(f"no learned evaluation for the game {state.game.name!r}")
    return entry[1](state)


# ---------------------------------------------------------------------------------------
# Model files
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class LinearModel:
    """A validated model file: ``P(seat wins) = sigmoid(bias + weights · features)``."""

    game: str
    players: int
    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    #: How it was trained (seed, command, data, metrics), as written by ``heka train``.
    training: Mapping[str, Any]
    checksum: str
    path: str = ""


def model_dir() -> Path:
    """The directory of the model files: ``$HEKA_MODEL_DIR`` or ``ai/models/``."""
    env = os.environ.get(MODEL_DIR_ENV, "").strip()
    return Path(env) if env else Path(__file__).resolve().parent / "models"


def model_path(game: str, players: int, directory: Path | None = None) -> Path:
    return (directory if directory is not None else model_dir()) / f"{game}-{players}p.json"


def canonical_json(payload: Mapping[str, Any]) -> bytes:
    """The bytes the checksum covers: sorted keys, no spaces, ASCII."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def checksum(payload: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``payload`` without its ``checksum`` field."""
    body = {k: v for k, v in payload.items() if k != "checksum"}
    return "sha256:" + hashlib.sha256(canonical_json(body)).hexdigest()


def model_json(payload: Mapping[str, Any]) -> str:
    """A model file's text: ``payload`` with its checksum, indented, one list per line."""
    data = {k: v for k, v in payload.items() if k != "checksum"}
    data["checksum"] = checksum(data)
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def parse_model(data: object, where: str, game: str | None = None, players: int | None = None) -> LinearModel:
    """Validate a model file's decoded JSON (``where`` names it in errors)."""

    def bad(what: str) -> ModelError:
        return ModelError(f"learned evaluation model {where}: {what}")

    if not isinstance(data, dict):
        raise bad("not a JSON object")
    d = cast(dict[str, Any], data)
    if d.get("format") != FORMAT:
        raise bad(f"format is {d.get('format')!r}, expected {FORMAT!r}")
    if d.get("version") != FORMAT_VERSION:
        raise bad(f"format version {d.get('version')!r} is not supported (this build reads {FORMAT_VERSION})")
    g = d.get("game")
    if not isinstance(g, str) or g not in FEATURES:
        raise bad(f"unknown game {g!r} (known: {', '.join(FEATURES)})")
    if game is not None and g != game:
        raise bad(f"is for the game {g!r}, expected {game!r}")
    n = d.get("players")
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 4:
        raise bad(f"bad player count {n!r}")
    if players is not None and n != players:
        raise bad(f"is for {n} players, expected {players}")
    names = d.get("features")
    want = feature_names(g)
    if not isinstance(names, list) or tuple(names) != want:
        raise bad(
            f"its features {names!r} are not the ones this build computes for {g} ({list(want)!r}): "
            "retrain it with `heka train`"
        )
    weights = d.get("weights")
    if not isinstance(weights, list) or len(weights) != len(want):
        raise bad(f"needs {len(want)} weights, one per feature")
    ws: list[float] = []
    for i, w in enumerate(weights):
        f = _number(w)
        if f is None:
            raise bad(f"weight {i} ({want[i]}) is not a finite number: {w!r}")
        ws.append(f)
    bias = _number(d.get("bias"))
    if bias is None:
        raise bad(f"bias is not a finite number: {d.get('bias')!r}")
    training = d.get("training", {})
    if not isinstance(training, dict):
        raise bad("training is not an object")
    stated = d.get("checksum")
    actual = checksum(d)
    if stated != actual:
        raise bad(f"checksum mismatch (file says {stated!r}, content gives {actual!r}): the file was altered")
    return LinearModel(g, n, want, tuple(ws), bias, training, actual, where)


def load_model(path: Path | str, game: str | None = None, players: int | None = None) -> LinearModel:
    """Read and validate the model file at ``path`` (:class:`ModelError` if it cannot)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelError(
            f"learned evaluation model {p}: file not found (train it with `heka train"
            + (f" --game {game} --players {players}" if game and players else "")
            + f"`, or set {MODEL_DIR_ENV})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"learned evaluation model {p}: cannot be read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelError(f"learned evaluation model {p}: not valid JSON ({exc})") from None
    return parse_model(data, str(p), game, players)


# ---------------------------------------------------------------------------------------
# Inference
# ---------------------------------------------------------------------------------------


def sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


class LearnedEvaluation:
    """The search's evaluator from a :class:`LinearModel` (see the module docstring)."""

    def __init__(self, model: LinearModel) -> None:
        self.model = model
        self.weights = list(model.weights)
        self.bias = model.bias
        self.rows = FEATURES[model.game][1]

    def chances(self, state: State) -> list[float]:
        """Each seat's modelled chance to win, from its own view's features."""
        w = self.weights
        b = self.bias
        out: list[float] = []
        for row in self.rows(state):
            z = b
            for i in range(len(w)):
                z += w[i] * row[i]
            out.append(sigmoid(z))
        return out

    def evaluate(self, state: State) -> Sequence[float]:
        """Per-seat returns in (-1, 1): ``2 · P_p / ΣP − 1``."""
        chances = self.chances(state)
        total = 0.0
        for c in chances:
            total += c
        if total <= 0.0:
            return [0.0] * len(chances)
        k = 2.0 / total
        return [k * c - 1.0 for c in chances]


_LOADED: Final[dict[tuple[str, str, int], LearnedEvaluation]] = {}


def learned_evaluation(game: str, players: int) -> LearnedEvaluation:
    """The evaluator of ``game`` with ``players`` seats, its file loaded (and validated) once
    per process and directory."""
    path = model_path(game, players)
    key = (str(path), game, players)
    found = _LOADED.get(key)
    if found is None:
        feature_names(game)  # a clear error for a game without features
        found = _LOADED[key] = LearnedEvaluation(load_model(path, game, players))
    return found


def check_models(directory: Path | None = None) -> list[LinearModel]:
    """Load and validate every model the ``expert`` preset needs (:data:`EXPECTED`); the
    first problem raises :class:`ModelError` (file and fault)."""
    out = []
    for game, players in EXPECTED:
        if directory is None:
            out.append(learned_evaluation(game, players).model)
        else:
            out.append(load_model(model_path(game, players, directory), game, players))
    return out
