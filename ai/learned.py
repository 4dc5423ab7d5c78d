"""The learned evaluation: a model of each seat's chance to win (logistic, or a network of one
hidden layer), fitted to the outcomes of self-play games (``heka train``), read by the
search at its rollout cut-off (``mcts:expert``, ``mcts:...,eval=learned``;
``docs/search.md``, ``docs/training.md``).

A model is one small JSON file per game and player count in ``ai/models/``
(``aton-2p.json``, ``osirium-4p.json``...; ``HEKA_MODEL_DIR`` names another directory)::

    {"format": "heka-learned-evaluation", "version": 1, "game": "osirium", "players": 4,
     "features": ["score_lead", ...], "weights": [...], "bias": -1.02,
     "training": {"seed": 1, "command": "heka train ...", "games": ..., "metrics": {...}},
     "checksum": "sha256:<hex of the canonical JSON of every other field>"}

The features of a seat (:mod:`ai.aton.features`, :mod:`ai.osirium.features`) are functions of
that seat's view only. A seat's chance is ``P = sigmoid(bias + weights · features)``
(version 2 files may instead hold a network, and may add every other seat's public row to the
inputs: :class:`Model`, ``docs/training.md``); the search's value of seat ``p`` is
``2 · P_p / ΣP − 1`` (the seats' chances normalised to one winner, mapped to the returns'
[-1, 1]; with 2 players, exactly zero-sum). Inference is
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
#: Version 1: a linear model over the seat's own features; version 2 adds ``kind``
#: (``linear``, ``mlp``) and ``inputs`` (``seat``, ``table``), and ``network`` for ``mlp``.
FORMAT_VERSION: Final = 2
FORMAT_VERSIONS: Final[tuple[int, ...]] = (1, 2)
LINEAR_MODEL: Final = "linear"
MLP_MODEL: Final = "mlp"
MODEL_KINDS: Final[tuple[str, ...]] = (LINEAR_MODEL, MLP_MODEL)
#: The most hidden units a file may ask for (inference cost grows with them).
MAX_HIDDEN: Final = 64
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


def _aton_rows(state: State, public: list[list[float]] | None) -> list[list[float]]:
    return aton_features.seat_features(cast(AtonState, state), public)


def _osirium_rows(state: State, public: list[list[float]] | None) -> list[list[float]]:
    return osirium_features.seat_features(cast(OsiriumState, state), public)


@dataclasses.dataclass(frozen=True, slots=True)
class GameFeatures:
    """One game's features: a seat's own (:attr:`names`, from its view) and what each seat
    shows the table (:attr:`public_names`; :attr:`relative` columns are held against seat 0
    and shifted to the modelled seat's)."""

    names: tuple[str, ...]
    public_names: tuple[str, ...]
    relative: tuple[int, ...]
    #: ``rows(state, public)``: every seat's own row; appends every seat's public row to
    #: ``public`` when given.
    rows: Callable[[State, list[list[float]] | None], list[list[float]]]


FEATURES: Final[dict[str, GameFeatures]] = {
    "aton": GameFeatures(
        aton_features.NAMES, aton_features.PUBLIC_NAMES, aton_features.PUBLIC_RELATIVE, _aton_rows
    ),
    "osirium": GameFeatures(
        osirium_features.NAMES, osirium_features.PUBLIC_NAMES, osirium_features.PUBLIC_RELATIVE, _osirium_rows
    ),
}

#: A model's inputs: the seat's own features (``seat``), or those followed by every other
#: seat's public row in seat order after it (``table``).
SEAT_INPUTS: Final = "seat"
TABLE_INPUTS: Final = "table"
INPUTS: Final[tuple[str, ...]] = (SEAT_INPUTS, TABLE_INPUTS)


def _game_features(game: str) -> GameFeatures:
    entry = FEATURES.get(game)
    if entry is None:
        raise ModelError(f"no learned evaluation for the game {game!r} (known: {', '.join(FEATURES)})")
    return entry


def feature_names(game: str, inputs: str = SEAT_INPUTS, players: int = 2) -> tuple[str, ...]:
    """The input names of a model of ``game`` (with ``players`` seats for ``table`` inputs):
    the other seats' public columns are ``next1_NAME``, ``next2_NAME``... in seat order."""
    entry = _game_features(game)
    if inputs == SEAT_INPUTS:
        return entry.names
    if inputs != TABLE_INPUTS:
        raise ModelError(f"unknown model inputs {inputs!r} (known: {', '.join(INPUTS)})")
    out = list(entry.names)
    for k in range(1, players):
        out.extend(f"next{k}_{name}" for name in entry.public_names)
    return tuple(out)


def seat_features(state: State) -> list[list[float]]:
    """Every seat's features (:data:`FEATURES`), each from that seat's view."""
    return _game_features(state.game.name).rows(state, None)


def table_rows(
    seat: list[list[float]], public: list[list[float]], relative: tuple[int, ...]
) -> list[list[float]]:
    """Every seat's ``table`` inputs: its own row, then each other seat's public row in seat
    order after it, the ``relative`` columns taken against the modelled seat's."""
    n = len(seat)
    out: list[list[float]] = []
    for p in range(n):
        row = list(seat[p])
        mine = public[p]
        for k in range(1, n):
            theirs = public[(p + k) % n]
            if relative:
                theirs = list(theirs)
                for i in relative:
                    theirs[i] -= mine[i]
            row.extend(theirs)
        out.append(row)
    return out


def table_features(state: State) -> list[list[float]]:
    """Every seat's ``table`` inputs (:func:`table_rows`), each from views only: its own
    features and what the other seats show the table."""
    entry = _game_features(state.game.name)
    public: list[list[float]] = []
    seat = entry.rows(state, public)
    return table_rows(seat, public, entry.relative)


# ---------------------------------------------------------------------------------------
# Model files
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Model:
    """A validated model file. ``linear``: ``P(seat wins) = sigmoid(bias + weights · x)``;
    ``mlp``: one hidden layer, ``h = tanh(hidden_bias + hidden · x)``, then
    ``P = sigmoid(bias + weights · h)``; ``x`` the seat's inputs (:attr:`inputs`)."""

    game: str
    players: int
    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    #: How it was trained (seed, command, data, metrics), as written by ``heka train``.
    training: Mapping[str, Any]
    checksum: str
    path: str = ""
    kind: str = LINEAR_MODEL
    inputs: str = SEAT_INPUTS
    #: ``mlp`` only: one row of input weights per hidden unit, and their biases.
    hidden: tuple[tuple[float, ...], ...] = ()
    hidden_bias: tuple[float, ...] = ()


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


def parse_model(data: object, where: str, game: str | None = None, players: int | None = None) -> Model:
    """Validate a model file's decoded JSON (``where`` names it in errors)."""

    def bad(what: str) -> ModelError:
        return ModelError(f"learned evaluation model {where}: {what}")

    if not isinstance(data, dict):
        raise bad("not a JSON object")
    d = cast(dict[str, Any], data)
    if d.get("format") != FORMAT:
        raise bad(f"format is {d.get('format')!r}, expected {FORMAT!r}")
    version = d.get("version")
    if isinstance(version, bool) or version not in FORMAT_VERSIONS:
        raise bad(
            f"format version {version!r} is not supported (this build reads "
            f"{', '.join(map(str, FORMAT_VERSIONS))})"
        )
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
    kind, inputs = LINEAR_MODEL, SEAT_INPUTS
    if version == 2:
        k, i = d.get("kind"), d.get("inputs")
        if not isinstance(k, str) or k not in MODEL_KINDS:
            raise bad(f"unknown kind {k!r} (known: {', '.join(MODEL_KINDS)})")
        if not isinstance(i, str) or i not in INPUTS:
            raise bad(f"unknown inputs {i!r} (known: {', '.join(INPUTS)})")
        kind, inputs = k, i
    names = d.get("features")
    want = feature_names(g, inputs, n)
    if not isinstance(names, list) or tuple(names) != want:
        raise bad(
            f"its features {names!r} are not the ones this build computes for {g} ({list(want)!r}): "
            "retrain it with `heka train`"
        )

    def numbers(value: object, size: int, what: str) -> tuple[float, ...]:
        if not isinstance(value, list) or len(value) != size:
            raise bad(f"{what} must be a list of {size} numbers")
        out: list[float] = []
        for i, w in enumerate(value):
            f = _number(w)
            if f is None:
                raise bad(f"{what}: entry {i} is not a finite number: {w!r}")
            out.append(f)
        return tuple(out)

    hidden: tuple[tuple[float, ...], ...] = ()
    hidden_bias: tuple[float, ...] = ()
    if kind == MLP_MODEL:
        network = d.get("network")
        if not isinstance(network, dict):
            raise bad("an mlp model needs a network object (hidden_weights, hidden_bias)")
        rows = network.get("hidden_weights")
        if not isinstance(rows, list) or not 1 <= len(rows) <= MAX_HIDDEN:
            raise bad(f"network.hidden_weights must list 1 to {MAX_HIDDEN} hidden units")
        hidden = tuple(
            numbers(row, len(want), f"network.hidden_weights[{j}] (one weight per feature)")
            for j, row in enumerate(rows)
        )
        hidden_bias = numbers(network.get("hidden_bias"), len(hidden), "network.hidden_bias")
        ws = numbers(d.get("weights"), len(hidden), "weights (one per hidden unit)")
    else:
        weights = d.get("weights")
        if not isinstance(weights, list) or len(weights) != len(want):
            raise bad(f"needs {len(want)} weights, one per feature")
        ws = numbers(weights, len(want), "weights")
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
    return Model(g, n, want, ws, bias, training, actual, where, kind, inputs, hidden, hidden_bias)


#: The largest model file read (a model is a few KiB, a network of the largest size a few
#: hundred; ``/dev/zero`` is refused, not read until memory runs out).
MAX_MODEL_BYTES: Final = 16 * 2**20


def load_model(path: Path | str, game: str | None = None, players: int | None = None) -> Model:
    """Read and validate the model file at ``path`` (:class:`ModelError` if it cannot)."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_MODEL_BYTES + 1)
        if len(raw) > MAX_MODEL_BYTES:
            raise ModelError(
                f"learned evaluation model {p}: larger than {MAX_MODEL_BYTES:,} bytes: not a model"
            )
        text = raw.decode("utf-8")
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
    except RecursionError:
        raise ModelError(f"learned evaluation model {p}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # a JSONDecodeError, or a number too long to read
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
    """The search's evaluator from a :class:`Model` (see the module docstring)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.weights = list(model.weights)
        self.bias = model.bias
        self.mlp = model.kind == MLP_MODEL
        #: The hidden units' input weights, unit after unit, in one flat list.
        self.hidden = [w for row in model.hidden for w in row]
        self.hidden_bias = list(model.hidden_bias)
        self.width = len(model.features)
        entry = FEATURES[model.game]
        self.rows = entry.rows
        self.table = model.inputs == TABLE_INPUTS
        self.relative = entry.relative

    def inputs(self, state: State) -> list[list[float]]:
        """Every seat's model inputs, each from views only."""
        if not self.table:
            return self.rows(state, None)
        public: list[list[float]] = []
        seat = self.rows(state, public)
        return table_rows(seat, public, self.relative)

    def chances(self, state: State) -> list[float]:
        """Each seat's modelled chance to win, from its own view's features."""
        w = self.weights
        b = self.bias
        out: list[float] = []
        if self.mlp:
            hidden = self.hidden
            hb = self.hidden_bias
            k = self.width
            for row in self.inputs(state):
                z = b
                base = 0
                for j in range(len(hb)):
                    a = hb[j]
                    for i in range(k):
                        a += hidden[base + i] * row[i]
                    base += k
                    z += w[j] * math.tanh(a)
                out.append(sigmoid(z))
            return out
        for row in self.inputs(state):
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


def check_models(directory: Path | None = None) -> list[Model]:
    """Load and validate every model the ``expert`` preset needs (:data:`EXPECTED`); the
    first problem raises :class:`ModelError` (file and fault)."""
    out = []
    for game, players in EXPECTED:
        if directory is None:
            out.append(learned_evaluation(game, players).model)
        else:
            out.append(load_model(model_path(game, players, directory), game, players))
    return out
