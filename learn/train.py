"""``heka train``: the learned evaluation of one game and player count, from a seed.

1. **Self-play.** ``games`` games of ``bot`` (a bot spec, every seat; by default a cheap,
   iteration-budgeted MCTS so that the run is reproducible), deals and bot seeds derived from
   ``seed`` (:func:`ai.arena.derive_seed`). Every ``every``-th ply (from a seeded offset per
   game) the position gives one sample per seat: that seat's features from its own view
   (:func:`ai.learned.seat_features`) and, as the label, its final return mapped to [0, 1]
   (win 1, shared win 0.5, loss 0).
2. **Split.** A seeded fifth of the games (``holdout``) is held out, whole games, so that
   positions of one game never sit on both sides.
3. **Fit.** Logistic regression with an L2 penalty (``l2``, on standardised features, not on
   the bias) by Newton's method, on the training games; the weights are mapped back to the
   raw features and rounded to 8 significant digits.
4. **Report.** Log-loss, accuracy (decided labels, ``P > 0.5``) and Brier score on both
   splits, against the constant model and (accuracy) the game's heuristic; the model file
   (:mod:`ai.learned` format) records seed, command, data and metrics.

The same arguments give the same file (no times in it).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import os
import random
import secrets
import shlex
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, TypeGuard

import numpy as np
import numpy.typing as npt

from ai.api import make_bot
from ai.arena import derive_seed
from ai.games import knowledge_for
from ai.learned import (
    FEATURES,
    FORMAT,
    INPUTS,
    LINEAR_MODEL,
    MAX_HIDDEN,
    MLP_MODEL,
    MODEL_KINDS,
    SEAT_INPUTS,
    TABLE_INPUTS,
    feature_names,
    model_json,
    table_rows,
)
from engine import get_game

FloatArray = npt.NDArray[np.float64]

#: Default self-play bot: MCTS with a small iteration budget (reproducible: no time limit).
DEFAULT_BOT = "mcts:iterations=100,ms=none"


@dataclasses.dataclass(frozen=True, slots=True)
class TrainConfig:
    game: str
    players: int
    games: int
    seed: int = 1
    bot: str = DEFAULT_BOT
    #: Sample a position every ``every`` plies.
    every: int = 4
    l2: float = 0.01
    holdout: float = 0.2
    #: ``linear`` (logistic regression) or ``mlp`` (one hidden layer of ``hidden`` units).
    model: str = LINEAR_MODEL
    hidden: int = 16
    #: ``seat`` (the seat's own features) or ``table`` (and every other seat's public row).
    inputs: str = SEAT_INPUTS
    #: The label's share taken from the search: ``(1 - w) · outcome + w · searched value``
    #: where the seat's value was searched at the sampled position (:func:`labels`).
    search_weight: float = 0.0

    def command(self) -> str:
        """The ``heka train`` command line that reproduces this run."""
        extra = ""
        if self.model != LINEAR_MODEL:
            extra += f" --model {self.model} --hidden {self.hidden}"
        if self.inputs != SEAT_INPUTS:
            extra += f" --inputs {self.inputs}"
        if self.search_weight:
            extra += f" --search-weight {self.search_weight:g}"
        return (
            f"heka train --game {self.game} --players {self.players} --games {self.games} "
            f"--seed {self.seed} --bot {shlex.quote(self.bot)} --every {self.every} "
            f"--l2 {self.l2:g} --holdout {self.holdout:g}" + extra
        )


@dataclasses.dataclass
class Dataset:
    """Samples (one per seat and sampled position) and the game each came from."""

    features: list[list[float]] = dataclasses.field(default_factory=list)
    labels: list[float] = dataclasses.field(default_factory=list)
    games: list[int] = dataclasses.field(default_factory=list)
    #: The game's heuristic value of the seat (for the comparison in the summary).
    heuristic: list[float] = dataclasses.field(default_factory=list)
    #: Every seat's public row at the sample's position (``table`` inputs; the public rows of
    #: one position, shared by its samples: :func:`ai.learned.table_rows`).
    tables: list[list[float]] = dataclasses.field(default_factory=list)
    #: The seat's value in [0, 1] as searched by the self-play bot at the sampled position
    #: (the acting seat's root value; with two seats, the other seat's is its complement),
    #: NaN where the position was not searched for it (forced moves, other seats of 3-4).
    search: list[float] = dataclasses.field(default_factory=list)
    positions: int = 0
    plies: int = 0


def play_game(config: TrainConfig, index: int, data: Dataset) -> None:
    """Play self-play game ``index`` and add its samples to ``data``."""
    game = get_game(config.game)
    state = game.new_initial_state(config.players, derive_seed(config.seed, "train-deal", index), None)
    bot = make_bot(config.bot)
    rng = random.Random(derive_seed(config.seed, "train-bots", index))
    offset = rng.randrange(config.every)
    knowledge = knowledge_for(game)
    relative = FEATURES[config.game].relative
    rows: list[list[float]] = []
    tables: list[list[float]] = []
    values: list[float] = []
    searched: list[float] = []
    seats: list[int] = []
    ply = 0
    while not state.is_terminal():
        sampled = ply % config.every == offset
        if sampled:
            public: list[list[float]] = []
            seat = FEATURES[config.game].rows(state, public)
            for p, row in enumerate(seat):
                rows.append(row)
                seats.append(p)
            tables.extend(row[len(seat[0]) :] for row in table_rows(seat, public, relative))
            values.extend(knowledge.evaluate(state))
            data.positions += 1
        actor = state.current_player()
        decision = bot.choose(state, seed=rng.getrandbits(63))
        if sampled:
            n = config.players
            found = [math.nan] * n
            d = decision.diagnostics
            if d.actions and d.iterations > 0:
                v = min(1.0, max(0.0, (d.chosen_value + 1.0) / 2.0))
                found[actor] = v
                if n == 2:
                    found[1 - actor] = 1.0 - v
            searched.extend(found)
        state.apply(decision.action)
        ply += 1
    returns = state.returns()
    data.features.extend(rows)
    data.tables.extend(tables)
    data.search.extend(searched)
    data.labels.extend((returns[p] + 1.0) / 2.0 for p in seats)
    data.games.extend(index for _ in seats)
    data.heuristic.extend(values)
    data.plies += ply


def play_one(config: TrainConfig, index: int) -> Dataset:
    """Self-play game ``index`` alone (the call a :data:`GameRunner` ships elsewhere)."""
    data = Dataset()
    play_game(config, index, data)
    return data


def extend(data: Dataset, part: Dataset) -> None:
    """Append ``part``'s samples and counts to ``data``."""
    data.features.extend(part.features)
    data.labels.extend(part.labels)
    data.games.extend(part.games)
    data.heuristic.extend(part.heuristic)
    data.tables.extend(part.tables)
    data.search.extend(part.search)
    data.positions += part.positions
    data.plies += part.plies


#: Plays the self-play games ``indices`` of ``config`` elsewhere than in this process (Ray
#: tasks: ``service/ray_runner.py``), calling ``on_game(index, play_one(config, index))`` as
#: each game finishes, in any order.
GameRunner = Callable[[TrainConfig, Sequence[int], Callable[[int, Dataset], None]], None]


def generate(
    config: TrainConfig,
    progress: Callable[[int, Dataset], None] | None = None,
    runner: GameRunner | None = None,
) -> Dataset:
    """Every self-play game's samples, in game order. On a ``runner``, games finish in any
    order; each is kept until the games before it are in, so the data (and the model) are
    the same as in this process. ``progress(done, data)`` gets the games finished and the
    data in game order so far."""
    data = Dataset()
    if runner is None:
        for i in range(config.games):
            play_game(config, i, data)
            if progress is not None:
                progress(i + 1, data)
        return data
    waiting: dict[int, Dataset] = {}
    finished = [0]

    def on_game(index: int, part: Dataset) -> None:
        if not 0 <= index < config.games or index in waiting or index < finished[0]:
            raise ValueError(f"self-play game {index} was not asked for, or came back twice")
        waiting[index] = part
        while finished[0] in waiting:
            extend(data, waiting.pop(finished[0]))
            finished[0] += 1
        if progress is not None:
            progress(finished[0] + len(waiting), data)

    runner(config, range(config.games), on_game)
    if finished[0] != config.games:
        raise ValueError(f"self-play stopped after {finished[0] + len(waiting)} of {config.games} games")
    return data


SAMPLES_FORMAT: Final = "heka-train-samples"


def _self_play(config: TrainConfig) -> dict[str, Any]:
    """What decides a run's samples (the fit's options do not)."""
    return {
        "game": config.game,
        "players": config.players,
        "games": config.games,
        "seed": config.seed,
        "bot": config.bot,
        "every": config.every,
    }


#: The most bytes a samples file may hold once decompressed: it is read whole, and a gzip
#: stream of a few MiB can decompress to far more than memory (a few hundred bytes a sample:
#: millions of samples, thousands of games, fit here).
MAX_SAMPLES_BYTES: Final = 2**30


class SamplesTooLarge(ValueError):
    """Samples that a samples file may not hold (:data:`MAX_SAMPLES_BYTES`)."""


def save_samples(path: Path, config: TrainConfig, data: Dataset, limit: int | None = None) -> None:
    """Write ``data`` (gzipped JSON) with the self-play that made it; :class:`SamplesTooLarge`,
    and no file, if its text would be larger than ``limit`` bytes (default
    :data:`MAX_SAMPLES_BYTES`), which the reader refuses."""
    limit = MAX_SAMPLES_BYTES if limit is None else limit
    body = {"format": SAMPLES_FORMAT, "version": 1, "self_play": _self_play(config)}
    body.update(dataclasses.asdict(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    # A temporary file of its own (one the user named PATH.tmp is left alone), renamed over.
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    written = 0
    try:
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            for chunk in json.JSONEncoder(separators=(",", ":"), allow_nan=True).iterencode(body):
                written += len(chunk.encode("utf-8"))
                if written > limit:
                    raise SamplesTooLarge(
                        f"{path}: not written: the samples of {config.games:,} games are more than "
                        f"the {limit:,} bytes a samples file may hold (use fewer --games)"
                    )
                f.write(chunk)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)


#: The largest magnitude a feature value of a samples file may have. The games' features are
#: small (counts, differences, fractions); a larger value is a damaged or foreign file, and
#: would overflow the fit.
MAX_FEATURE: Final = 1e6


def load_samples(path: Path, config: TrainConfig, limit: int | None = None) -> Dataset:
    """The samples in ``path``; a ValueError naming the file and what is wrong if it cannot be
    decoded or decompresses to more than ``limit`` bytes, if its samples come from another
    self-play than ``config``'s (naming the difference), or if a sample is out of shape or range
    (naming the row)."""
    limit = MAX_SAMPLES_BYTES if limit is None else limit
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read(limit + 1)
        if len(raw) > limit:
            raise SamplesTooLarge(
                f"{path}: not a samples file (it decompresses to more than {limit:,} bytes, the most "
                "a samples file may hold)"
            )
        body = json.loads(raw.decode("utf-8"), parse_int=_json_int)
    except SamplesTooLarge:
        raise
    except RecursionError:
        raise ValueError(f"{path}: not a samples file (JSON nested too deeply)") from None
    except (OSError, ValueError, EOFError, zlib.error) as exc:
        # ValueError: JSONDecodeError, UnicodeDecodeError, a number of too many digits.
        raise ValueError(f"{path}: not a samples file ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != SAMPLES_FORMAT or body.get("version") != 1:
        raise ValueError(f"{path}: not a samples file of format {SAMPLES_FORMAT} version 1")
    want = _self_play(config)
    have = body.get("self_play")
    if have != want:
        raise ValueError(f"{path}: its samples come from another self-play ({have}), not {want}")
    names = [f.name for f in dataclasses.fields(Dataset)]
    try:
        data = Dataset(**{k: body[k] for k in names})
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: samples file lacks a field ({exc})") from None
    rows = {k: getattr(data, k) for k in ("features", "labels", "games", "heuristic", "search")}
    if not all(isinstance(v, list) for v in rows.values()) or len({len(v) for v in rows.values()}) != 1:
        sizes = ", ".join(
            f"{k} {len(v) if isinstance(v, list) else type(v).__name__}" for k, v in rows.items()
        )
        raise ValueError(f"{path}: not a samples file (one entry per sample in each list: {sizes})")
    own = feature_names(config.game, SEAT_INPUTS, config.players)
    others = feature_names(config.game, TABLE_INPUTS, config.players)[len(own) :]
    for name, table, columns, what in (
        ("features", data.features, own, f"{config.game}'s seat features"),
        ("tables", data.tables, others, "the other seats' public rows"),
    ):
        needed = name == "features" or config.inputs == TABLE_INPUTS  # else no tables is fine
        if not isinstance(table, list) or ((table or needed) and len(table) != len(data.labels)):
            raise ValueError(f"{path}: not a samples file ('{name}' must be one row per sample)")
        for i, r in enumerate(table):
            if not isinstance(r, list) or len(r) != len(columns):
                got = f"{len(r)} values" if isinstance(r, list) else type(r).__name__
                raise ValueError(
                    f"{path}: not a samples file ('{name}' row {i} has {got}, not the "
                    f"{len(columns)} of {what})"
                )
            if not all(_feature(x) for x in r):
                j = next(j for j, x in enumerate(r) if not _feature(x))
                raise ValueError(
                    f"{path}: not a samples file ('{name}' must hold finite numbers of magnitude "
                    f"at most {MAX_FEATURE:g}: row {i}, {columns[j]}, is {_show(r[j])})"
                )
    for name, values, searched in (("labels", data.labels, False), ("search", data.search, True)):
        for i, x in enumerate(values):
            if not (_finite(x) and 0 <= x <= 1) and not (
                searched and isinstance(x, float) and math.isnan(x)
            ):  # NaN: not searched
                raise ValueError(
                    f"{path}: not a samples file ('{name}' must lie in [0, 1], got {_show(x)} at {i})"
                )
    if not all(_finite(x) for x in data.heuristic):
        raise ValueError(f"{path}: not a samples file ('heuristic' must hold finite numbers)")
    if not all(_count(x) and x < config.games for x in data.games):
        raise ValueError(
            f"{path}: not a samples file ('games' must hold game numbers, 0 to {config.games - 1})"
        )
    for name in ("positions", "plies"):
        if not _count(getattr(data, name)):
            raise ValueError(f"{path}: not a samples file ('{name}' must be a count)")
    return data


def _json_int(text: str) -> int:
    """A JSON integer (``int`` refuses more than 4300 digits, with advice that is not for a
    samples file's reader)."""
    digits = len(text.lstrip("-"))
    if digits > _MAX_DIGITS:
        raise ValueError(f"an integer of {digits} digits")
    return int(text)


_MAX_DIGITS: Final = 4300


def _finite(x: object) -> TypeGuard[int | float]:
    if not isinstance(x, int | float) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:  # an int beyond the floats
        return False


def _feature(x: object) -> bool:
    return _finite(x) and abs(x) <= MAX_FEATURE


def _count(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _show(x: object) -> str:
    """``repr(x)`` for a message, cut short."""
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------------------------------
# Fit and metrics
# ---------------------------------------------------------------------------------------


def _sigmoid(z: FloatArray) -> FloatArray:
    out: FloatArray = 1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0)))
    return out


def fit_logistic(x: FloatArray, y: FloatArray, l2: float, iterations: int = 50) -> tuple[FloatArray, float]:
    """Weights and bias minimising mean cross-entropy + ``l2 / 2 · |w|²`` (standardised
    features, bias not penalised), by Newton's method."""
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std < 1e-12] = 1.0
    z = np.hstack([np.ones((x.shape[0], 1)), (x - mean) / std])
    n, k = z.shape
    w = np.zeros(k)
    penalty = np.full(k, l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = _sigmoid(z @ w)
        grad = z.T @ (p - y) / n + penalty * w
        hess = (z.T * (p * (1.0 - p))) @ z / n + np.diag(penalty) + 1e-12 * np.eye(k)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    weights: FloatArray = w[1:] / std
    bias = float(w[0] - np.sum(w[1:] * mean / std))
    return weights, bias


def fit_mlp(
    x: FloatArray, y: FloatArray, hidden: int, l2: float, *, seed: int, epochs: int = 40, batch: int = 256
) -> tuple[FloatArray, FloatArray, FloatArray, float]:
    """One hidden layer of ``hidden`` tanh units and a sigmoid output, minimising mean
    cross-entropy (soft labels allowed) + ``l2 / 2 · |weights|²`` by Adam on seeded
    mini-batches, on standardised inputs. Returns the hidden weights (``hidden × k``) and
    biases mapped back to the raw inputs, the output weights and bias."""
    rng = np.random.default_rng(seed)
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std < 1e-12] = 1.0
    z = (x - mean) / std
    n, k = z.shape
    w1 = rng.normal(0.0, 1.0 / math.sqrt(k), size=(k, hidden))
    b1 = np.zeros(hidden)
    w2 = rng.normal(0.0, 1.0 / math.sqrt(hidden), size=hidden)
    b2 = np.zeros(1)
    params = [w1, b1, w2, b2]
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    for epoch in range(epochs):
        lr = 3e-3 * (0.5 * (1.0 + math.cos(math.pi * epoch / epochs)))
        order = rng.permutation(n)
        for start in range(0, n, batch):
            idx = order[start : start + batch]
            xb, yb = z[idx], y[idx]
            h = np.tanh(xb @ w1 + b1)
            p = _sigmoid(h @ w2 + b2[0])
            d = (p - yb) / len(idx)
            g2 = h.T @ d + l2 * w2
            gb2 = np.array([d.sum()])
            dh = np.outer(d, w2) * (1.0 - h * h)
            g1 = xb.T @ dh + l2 * w1
            gb1 = dh.sum(axis=0)
            step += 1
            for i, g in enumerate((g1, gb1, g2, gb2)):
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                mh = m[i] / (1 - beta1**step)
                vh = v[i] / (1 - beta2**step)
                params[i] -= lr * mh / (np.sqrt(vh) + eps)
    raw_w1: FloatArray = (w1 / std[:, None]).T
    raw_b1: FloatArray = b1 - (mean / std) @ w1
    return raw_w1, raw_b1, w2, float(b2[0])


def mlp_predict(x: FloatArray, w1: FloatArray, b1: FloatArray, w2: FloatArray, b2: float) -> FloatArray:
    """The network's chances for the rows of ``x`` (raw inputs; ``w1`` is ``hidden × k``)."""
    return _sigmoid(np.tanh(x @ w1.T + b1) @ w2 + b2)


def training_labels(data: Dataset, weight: float) -> FloatArray:
    """Each sample's label: its outcome, or ``(1 - weight) · outcome + weight · searched
    value`` where the position was searched for its seat."""
    y = np.asarray(data.labels, dtype=np.float64)
    if not weight or not data.search:
        return y
    s = np.asarray(data.search, dtype=np.float64)
    have = ~np.isnan(s)
    out = y.copy()
    out[have] = (1.0 - weight) * y[have] + weight * s[have]
    return out


def metrics(p: FloatArray, y: FloatArray) -> dict[str, float]:
    """Log-loss, accuracy on decided labels (win or loss) with ``p > 0.5``, Brier score."""
    q = np.clip(p, 1e-12, 1 - 1e-12)
    logloss = float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))
    decided = y != 0.5
    acc = float(np.mean((p[decided] > 0.5) == (y[decided] > 0.5))) if decided.any() else float("nan")
    return {"log_loss": logloss, "accuracy": acc, "brier": float(np.mean((p - y) ** 2))}


def _round(x: float) -> float:
    return float(f"{x:.8g}")


@dataclasses.dataclass(frozen=True, slots=True)
class TrainResult:
    payload: dict[str, Any]
    summary: dict[str, Any]


def _check_finite(
    weights: FloatArray, bias: float, network: dict[str, Any] | None, split: dict[str, Any]
) -> None:
    """A ValueError unless the fitted numbers and the losses are all finite (a model that is
    not is refused: no file)."""
    numbers = {"weights": [float(w) for w in weights], "bias": [bias]}
    if network is not None:
        numbers["hidden weights"] = [w for row in network["hidden_weights"] for w in row]
        numbers["hidden bias"] = network["hidden_bias"]
    for name, m in split.items():
        numbers[f"{name} loss"] = [m["log_loss"], m["brier"], m["constant_log_loss"]]
    bad = [k for k, v in numbers.items() if not all(math.isfinite(x) for x in v)]
    if bad:
        raise ValueError(
            f"the fit diverged: its {', '.join(bad)} are not finite numbers (are the samples' "
            "feature values far out of range?); no model written"
        )


def fit(config: TrainConfig, data: Dataset) -> TrainResult:
    """Split by game, fit, measure; the model payload (without checksum) and a summary."""
    if not data.labels:
        raise ValueError("no samples: play more games")
    names = feature_names(config.game, config.inputs, config.players)
    x = np.asarray(data.features, dtype=np.float64)
    if config.inputs == TABLE_INPUTS:
        x = np.hstack([x, np.asarray(data.tables, dtype=np.float64).reshape(len(x), -1)])
    y = np.asarray(data.labels, dtype=np.float64)
    target = training_labels(data, config.search_weight)
    g = np.asarray(data.games)
    h = np.asarray(data.heuristic, dtype=np.float64)
    test_games = set(
        random.Random(config.seed).sample(range(config.games), round(config.games * config.holdout))
    )
    if config.holdout > 0 and config.games >= 2 and not test_games:  # a fraction too small for one game
        test_games = {config.games - 1}
    test = np.isin(g, sorted(test_games))
    train = ~test
    if not train.any():
        raise ValueError("every game is held out: lower --holdout or play more games")
    network: dict[str, Any] | None = None
    # A fit that overflows is refused below (not finite), without numpy's warnings.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            if config.model == MLP_MODEL:
                w1, b1, weights, bias = fit_mlp(
                    x[train], target[train], config.hidden, config.l2, seed=config.seed
                )
                w1 = np.asarray([[_round(float(w)) for w in row] for row in w1])
                b1 = np.asarray([_round(float(w)) for w in b1])
                weights = np.asarray([_round(float(w)) for w in weights])
                bias = _round(bias)
                p = mlp_predict(x, w1, b1, weights, bias)
                network = {
                    "hidden_weights": [[float(w) for w in row] for row in w1],
                    "hidden_bias": [float(w) for w in b1],
                }
            else:
                weights, bias = fit_logistic(x[train], target[train], config.l2)
                weights = np.asarray([_round(float(w)) for w in weights])
                bias = _round(bias)
                p = _sigmoid(x @ weights + bias)
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"the fit failed ({exc}); no model written") from None
    split: dict[str, Any] = {}
    for name, mask in (("train", train), ("test", test)):
        if not mask.any():
            continue
        m = metrics(p[mask], y[mask])
        base = float(np.mean(y[train]))
        m["constant_log_loss"] = metrics(np.full(int(mask.sum()), base), y[mask])["log_loss"]
        decided = mask & (y != 0.5)
        if decided.any():
            m["heuristic_accuracy"] = float(np.mean((h[decided] > 0) == (y[decided] > 0.5)))
        m["samples"] = int(mask.sum())
        split[name] = {k: (_round(v) if isinstance(v, float) else v) for k, v in m.items()}
    _check_finite(weights, bias, network, split)
    training = {
        "seed": config.seed,
        "command": config.command(),
        "bot": config.bot,
        "games": config.games,
        "held_out_games": len(test_games),
        "positions": data.positions,
        "samples": len(data.labels),
        "every": config.every,
        "l2": config.l2,
        "label": "the seat's final return mapped to [0, 1] (win 1, shared 0.5, loss 0)"
        + (
            f", {config.search_weight:g} of it replaced by the seat's searched value where searched"
            if config.search_weight
            else ""
        ),
        "metrics": split,
    }
    payload: dict[str, Any] = {"format": FORMAT}
    if config.model == LINEAR_MODEL and config.inputs == SEAT_INPUTS:
        payload["version"] = 1  # the first format, as the shipped linear models
    else:
        payload.update(version=2, kind=config.model, inputs=config.inputs)
    payload.update(game=config.game, players=config.players, features=list(names))
    if network is not None:
        payload["network"] = network
    payload.update(weights=[float(w) for w in weights], bias=bias, training=training)
    return TrainResult(payload, {"metrics": split, "positions": data.positions, "plies": data.plies})


def train(
    config: TrainConfig,
    progress: Callable[[int, Dataset], None] | None = None,
    runner: GameRunner | None = None,
    samples: Path | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run the whole pipeline (the self-play on ``runner`` when given: :func:`generate`); the
    model file's text and a summary (with seconds). With ``samples``, the self-play's samples
    are read from that file when it exists (written by an earlier run of the same self-play:
    :func:`load_samples`), else written there, so that several fits share one self-play."""
    if config.games < 1:
        raise ValueError("--games must be at least 1")
    if config.every < 1:
        raise ValueError("--every must be at least 1")
    if not 0 <= config.holdout < 1:
        raise ValueError("--holdout must be in [0, 1)")
    if not (math.isfinite(config.l2) and config.l2 >= 0):
        raise ValueError(f"--l2 must be a finite number >= 0, not {config.l2:g}")
    game = get_game(config.game)
    game.new_initial_state(config.players, 0, {})  # EngineError (a ValueError) names the counts
    if config.model not in MODEL_KINDS:
        raise ValueError(f"--model must be one of {', '.join(MODEL_KINDS)}")
    if config.inputs not in INPUTS:
        raise ValueError(f"--inputs must be one of {', '.join(INPUTS)}")
    if not 1 <= config.hidden <= MAX_HIDDEN:
        raise ValueError(f"--hidden must be in [1, {MAX_HIDDEN}]")
    if not 0.0 <= config.search_weight <= 1.0:
        raise ValueError("--search-weight must be in [0, 1]")
    feature_names(config.game, config.inputs, config.players)
    make_bot(config.bot)
    t0 = time.perf_counter()
    data = load_samples(samples, config) if samples is not None and samples.exists() else None
    loaded = data is not None
    unsaved = ""
    if data is None:
        data = generate(config, progress, runner)
        if samples is not None:
            try:
                save_samples(samples, config, data)
            except SamplesTooLarge as exc:  # the self-play is not lost: the fit goes on
                unsaved = str(exc)
    t1 = time.perf_counter()
    result = fit(config, data)
    t2 = time.perf_counter()
    summary = dict(result.summary)
    summary.update(
        games=config.games,
        samples=len(data.labels),
        play_seconds=t1 - t0,
        fit_seconds=t2 - t1,
        bias=result.payload["bias"],
        weights=(
            dict(zip(result.payload["features"], result.payload["weights"], strict=True))
            if "network" not in result.payload
            else None
        ),
        hidden=len(result.payload["network"]["hidden_bias"]) if "network" in result.payload else 0,
        samples_file=str(samples) if samples is not None else None,
        samples_loaded=loaded,
        samples_unsaved=unsaved,
    )
    return model_json(result.payload), summary


def format_summary(config: TrainConfig, summary: dict[str, Any], path: str) -> str:
    """The summary printed by ``heka train``."""
    lines = [
        f"{config.game}, {config.players} players: {summary['games']} self-play games of {config.bot}, "
        f"{summary['plies']} plies, {summary['positions']} positions, {summary['samples']} samples "
        f"(one per seat)",
        (
            f"samples read from {summary['samples_file']}"
            if summary.get("samples_loaded")
            else f"time: self-play {summary['play_seconds']:.1f} s"
        )
        + f", fit {summary['fit_seconds']:.2f} s",
    ]
    if summary.get("samples_unsaved"):
        lines.append(str(summary["samples_unsaved"]))
    for name in ("train", "test"):
        m = summary["metrics"].get(name)
        if m is None:
            continue
        heur = m.get("heuristic_accuracy")
        lines.append(
            f"{name:5s} ({m['samples']} samples): log-loss {m['log_loss']:.4f} (constant "
            f"{m['constant_log_loss']:.4f}), accuracy {m['accuracy']:.3f}"
            + (f" (heuristic {heur:.3f})" if heur is not None else "")
            + f", Brier {m['brier']:.4f}"
        )
    if summary["weights"] is None:
        lines.append(f"network: {summary['hidden']} hidden tanh units over the {config.inputs} inputs")
    else:
        lines.append("weights (raw features):")
        for k, v in summary["weights"].items():
            lines.append(f"  {k:24s} {v:+.4f}")
        lines.append(f"  {'bias':24s} {summary['bias']:+.4f}")
    lines.append(f"model written to {path}")
    return "\n".join(lines)
