"""The learned evaluation (``ai/learned.py``, ``mcts:expert``): features from the seat's view
only (A10 / O6), model files validated on load, the expert preset's seeded determinism and
no peeking, and ``heka train`` reproducible from its seed."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ai_positions import random_positions

from ai import learned
from ai.api import make_bot
from ai.learned import (
    EXPECTED,
    LEARNED,
    ModelError,
    check_models,
    feature_names,
    learned_evaluation,
    load_model,
    model_json,
    model_path,
    seat_features,
)
from ai.mcts import MctsBot, learned_root_order
from ai.mcts_params import MctsParams, parse_params
from ai.presets import PRESET_C, PRESETS
from engine import get_game
from engine.core import State
from engine.rng import Rng

CONFIGS = [("aton", 2), ("osirium", 2), ("osirium", 3), ("osirium", 4)]


def positions(game: str, players: int, count: int, seed: int) -> list[State]:
    g = get_game(game)
    return random_positions(lambda s: g.new_initial_state(players, s), count, seed, 0, 200)


# ---------------------------------------------------------------------------------------
# Features: the seat's view only
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("game,players", CONFIGS)
def test_features_read_only_the_seats_view(game: str, players: int) -> None:
    """A10 / O6: for every seat, a state re-dealt consistently with that seat's view (the
    others' hands, hidden cartouches, exaltations, face-down rituals, deck orders, the
    randomness to come) gives exactly the same features."""
    names = feature_names(game)
    for s in positions(game, players, 12, 7 + players):
        rows = seat_features(s)
        assert len(rows) == players and all(len(r) == len(names) for r in rows)
        assert all(math.isfinite(v) for r in rows for v in r)
        for p in range(players):
            for k in range(3):
                other = s.sample_consistent_state(p, random.Random(100 * p + k))
                assert other.view(p) == s.view(p)
                assert seat_features(other)[p] == rows[p], (game, players, p)


def test_features_do_read_the_seats_own_information() -> None:
    """The seat's own hand is part of its view, and the features use it (Osirium's
    ``hand_useful``/``own_ritual_progress``, Aton's ``own_cards``): re-dealing from another
    seat's view may change them."""
    changed = False
    for s in positions("aton", 2, 10, 3):
        for p in (0, 1):
            other = s.sample_consistent_state(1 - p, random.Random(5))
            changed |= seat_features(other)[p] != seat_features(s)[p]
    assert changed


# ---------------------------------------------------------------------------------------
# Model files
# ---------------------------------------------------------------------------------------


def test_the_shipped_models_load_and_evaluate() -> None:
    models = check_models()
    assert [(m.game, m.players) for m in models] == list(EXPECTED)
    for m in models:
        assert m.features == feature_names(m.game)
        assert m.training["seed"] is not None and "heka train" in m.training["command"]
    for game, players in CONFIGS:
        ev = learned_evaluation(game, players)
        for s in positions(game, players, 4, 2):
            v = ev.evaluate(s)
            assert len(v) == players and all(-1 < x < 1 for x in v)
            if players == 2:
                assert v[0] == pytest.approx(-v[1])


def _copy_models(tmp_path: Path) -> Path:
    for game, players in EXPECTED:
        shutil.copy(model_path(game, players), tmp_path / model_path(game, players).name)
    return tmp_path


def _rewrite(path: Path, change: dict[str, object], keep_checksum: bool = True) -> None:
    data = json.loads(path.read_text())
    data.update(change)
    if keep_checksum:
        path.write_text(json.dumps(data))
    else:
        path.write_text(model_json(data))


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda p: p.unlink(), "file not found"),
        (lambda p: p.write_text("{not json"), "not valid JSON"),
        (lambda p: _rewrite(p, {"bias": 0.125}), "checksum mismatch"),
        (lambda p: _rewrite(p, {"version": 99}, keep_checksum=False), "format version 99"),
        (lambda p: _rewrite(p, {"features": ["a", "b"]}, keep_checksum=False), "retrain it"),
        (lambda p: _rewrite(p, {"weights": [1.0]}, keep_checksum=False), "weights"),
        (lambda p: _rewrite(p, {"players": 3}, keep_checksum=False), "is for 3 players, expected 2"),
    ],
)
def test_a_missing_or_corrupt_model_is_a_clear_error(tmp_path: Path, damage, message: str) -> None:  # type: ignore[no-untyped-def]
    directory = _copy_models(tmp_path)
    target = model_path("osirium", 2, directory)
    damage(target)
    with pytest.raises(ModelError) as info:
        check_models(directory)
    assert str(target) in str(info.value) and message in str(info.value)


def test_the_expert_preset_checks_the_models_when_it_is_made(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Start-up, not mid-game: making an expert bot (arena, service workers) with a corrupt
    model file fails at once, naming the file."""
    directory = _copy_models(tmp_path)
    model_path("aton", 2, directory).write_text("[]")
    monkeypatch.setenv(learned.MODEL_DIR_ENV, str(directory))
    with pytest.raises(ModelError, match=r"aton-2p\.json: not a JSON object"):
        make_bot("mcts:expert")
    make_bot("mcts:hard")  # the heuristic presets do not need the models


def test_the_server_does_not_start_with_a_corrupt_model(tmp_path: Path) -> None:
    """``heka serve`` checks the expert preset's models before it listens: a missing file
    stops it with exit code 2 and a log line naming the file."""
    directory = _copy_models(tmp_path)
    model_path("osirium", 4, directory).unlink()
    env = {**os.environ, learned.MODEL_DIR_ENV: str(directory), "HEKA_METRICS_PORT": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert f"{directory / 'osirium-4p.json'}: file not found" in done.stderr + done.stdout


# ---------------------------------------------------------------------------------------
# The expert preset
# ---------------------------------------------------------------------------------------


def test_expert_spec() -> None:
    name, p = parse_params("expert")
    assert name == "mcts:expert" and p.evaluation == LEARNED
    assert (p.iterations, p.milliseconds) == (PRESETS["expert"].iterations, PRESETS["expert"].milliseconds)
    assert parse_params("hard")[1].evaluation is None
    # expert's own exploration constant (the learned values spread narrower), overridable
    assert p.c == PRESET_C["expert"] < MctsParams().c == parse_params("hard")[1].c
    assert parse_params("expert,c=0.7")[1].c == 0.7
    assert parse_params("medium,eval=learned")[1].evaluation == LEARNED
    assert parse_params("expert,eval=heuristic")[1].evaluation == "heuristic"
    with pytest.raises(ValueError, match="unknown evaluation"):
        parse_params("eval=oracle")


def test_the_search_uses_the_learned_evaluation_at_the_cutoff() -> None:
    """Same seed and budget, a short cut-off: the root statistics follow the evaluation."""
    for game, players in CONFIGS:
        s = positions(game, players, 1, 4)[0]
        stats = {}
        for evaluation in ("heuristic", LEARNED):
            params = MctsParams(iterations=200, cutoff=2, evaluation=evaluation, early_stop=False)
            stats[evaluation] = MctsBot(params).choose(s, seed=1).diagnostics.actions
        assert stats["heuristic"] != stats[LEARNED], (game, players)


@pytest.mark.parametrize("game,players", CONFIGS)
def test_expert_is_deterministic_for_a_seed(game: str, players: int) -> None:
    bot = make_bot("mcts:expert,iterations=150,ms=none")
    for s in positions(game, players, 2, 11):
        a = bot.choose(s, seed=9)
        b = make_bot("mcts:expert,iterations=150,ms=none").choose(s.clone(), seed=9)
        assert (a.action, a.diagnostics.actions) == (b.action, b.diagnostics.actions)


@pytest.mark.parametrize("game,players", CONFIGS)
def test_expert_does_not_peek(game: str, players: int) -> None:
    """A10.4 / O6.4 with the learned evaluation: states that differ only in what the seat to
    act cannot see (re-dealt hidden cards, exaltations, the randomness to come) give the same
    decision and statistics for the same seed."""
    for s in positions(game, players, 3, 21 + players):
        p = s.current_player()
        other = s.sample_consistent_state(p, random.Random(77))
        other.rng = Rng(987_654_321)  # type: ignore[attr-defined]
        assert other.view(p) == s.view(p) and other.serialize() != s.serialize()
        for params in (
            MctsParams(iterations=120, evaluation=LEARNED),
            MctsParams(iterations=120, evaluation=LEARNED, prior=1.0, order=LEARNED),
        ):
            bot = MctsBot(params)
            a, b = bot.choose(s, seed=4), bot.choose(other, seed=4)
            assert (a.action, a.diagnostics.actions) == (b.action, b.diagnostics.actions)


@pytest.mark.parametrize("game,players", CONFIGS)
def test_the_learned_root_order(game: str, players: int) -> None:
    """``order=learned``: a permutation of the legal actions, the same for a re-dealt state
    (the root player's view only) and seed."""
    for s in positions(game, players, 2, 31 + players):
        p = s.current_player()
        legal = s.legal_actions()
        ranked = learned_root_order(s, p, legal, 5)
        assert sorted(ranked) == sorted(legal)
        other = s.sample_consistent_state(p, random.Random(78))
        other.rng = Rng(123_456_789)  # type: ignore[attr-defined]
        assert learned_root_order(other, p, legal, 5) == ranked
    assert parse_params("expert,prior=1,order=learned")[1].order == LEARNED
    assert parse_params("expert,order=game")[1].order is None
    with pytest.raises(ValueError, match="unknown root ordering"):
        parse_params("expert,order=oracle")


def test_a_game_without_a_model_is_refused() -> None:
    with pytest.raises(ModelError, match="no learned evaluation for the game"):
        feature_names("chess")
    with pytest.raises(ModelError, match="file not found"):
        load_model(Path("/nonexistent/aton-2p.json"), "aton", 2)


# ---------------------------------------------------------------------------------------
# Training (numpy)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("game,players", [("aton", 2), ("osirium", 3)])
def test_training_is_reproducible_from_its_seed(game: str, players: int) -> None:
    """A tiny run (about 1 s compiled) twice: the same model file, byte for byte; another
    seed, another file."""
    pytest.importorskip("numpy")
    from learn.train import TrainConfig, train

    config = TrainConfig(game, players, games=3, seed=5, bot="mcts:iterations=10,ms=none", every=6)
    text, summary = train(config)
    again, _ = train(config)
    assert text == again
    model = learned.parse_model(json.loads(text), "tiny", game, players)
    assert model.training["command"] == config.command()
    assert model.training["games"] == 3 and summary["samples"] == model.training["samples"] > 0
    other, _ = train(TrainConfig(game, players, games=3, seed=6, bot="mcts:iterations=10,ms=none", every=6))
    assert other != text


@pytest.mark.parametrize(("holdout", "held_out"), [(0.0, 0), (0.1, 1), (0.5, 2)])
def test_holdout_holds_out_that_share_of_the_games_and_none_at_0(holdout: float, held_out: int) -> None:
    """A fraction too small for one game of a few still holds one out; 0 holds none out, and
    the model then reports training metrics only."""
    pytest.importorskip("numpy")
    from learn.train import TrainConfig, train

    config = TrainConfig("aton", 2, games=4, seed=5, bot="random", every=6, holdout=holdout)
    text, _ = train(config)
    model = learned.parse_model(json.loads(text), "tiny", "aton", 2)
    assert model.training["held_out_games"] == held_out
    assert ("test" in model.training["metrics"]) == (held_out > 0)


# ---------------------------------------------------------------------------------------
# Every seat's public situation, networks, searched labels
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("game,players", CONFIGS)
def test_table_inputs_read_only_the_seats_view(game: str, players: int) -> None:
    """A10 / O6: a seat's ``table`` inputs (its own features, then what each other seat
    shows the table) are the same in every state re-dealt consistently with its view; the
    public part matches each other seat's public situation in seat order after it."""
    names = feature_names(game, learned.TABLE_INPUTS, players)
    own = len(feature_names(game))
    public = learned.FEATURES[game].public_names
    assert len(names) == own + (players - 1) * len(public)
    for s in positions(game, players, 10, 17 + players):
        rows = learned.table_features(s)
        assert [r[:own] for r in rows] == seat_features(s)
        assert all(len(r) == len(names) and all(math.isfinite(v) for v in r) for r in rows)
        for p in range(players):
            for k in range(3):
                other = s.sample_consistent_state(p, random.Random(31 * p + k))
                assert learned.table_features(other)[p] == rows[p], (game, players, p)


def test_table_inputs_follow_the_seat_order() -> None:
    """Osirium: the first public column of another seat is its score against the modelled
    seat's (O8.2): seat p's ``next1`` column is seat p+1's lead over p."""
    for s in positions("osirium", 3, 6, 4):
        rows = learned.table_features(s)
        scores = [s.ankhs[q] + len(s.broken[q]) for q in range(3)]  # type: ignore[attr-defined]
        own = len(feature_names("osirium"))
        width = len(learned.FEATURES["osirium"].public_names)
        for p in range(3):
            for k in (1, 2):
                lead = rows[p][own + (k - 1) * width]
                assert lead == pytest.approx((scores[(p + k) % 3] - scores[p]) / 5.0)


def _network_file(game: str, players: int, inputs: str, hidden: int, seed: int) -> dict[str, object]:
    names = feature_names(game, inputs, players)
    rng = random.Random(seed)
    return {
        "format": learned.FORMAT,
        "version": 2,
        "kind": learned.MLP_MODEL,
        "inputs": inputs,
        "game": game,
        "players": players,
        "features": list(names),
        "network": {
            "hidden_weights": [[rng.uniform(-0.5, 0.5) for _ in names] for _ in range(hidden)],
            "hidden_bias": [rng.uniform(-0.2, 0.2) for _ in range(hidden)],
        },
        "weights": [rng.uniform(-1, 1) for _ in range(hidden)],
        "bias": 0.1,
        "training": {},
    }


@pytest.mark.parametrize("game,players", CONFIGS)
def test_a_network_over_the_table_evaluates_as_written(game: str, players: int) -> None:
    """A version-2 ``mlp`` file: the search's chances are the network's, computed here
    independently from the file's numbers."""
    payload = _network_file(game, players, learned.TABLE_INPUTS, 5, players)
    model = learned.parse_model(json.loads(model_json(payload)), "net", game, players)
    assert model.kind == "mlp" and model.inputs == "table" and len(model.hidden) == 5
    ev = learned.LearnedEvaluation(model)
    net = payload["network"]
    assert isinstance(net, dict)
    for s in positions(game, players, 4, 9):
        want = []
        for row in learned.table_features(s):
            z = 0.1
            for w, unit, b in zip(payload["weights"], net["hidden_weights"], net["hidden_bias"], strict=True):  # type: ignore[call-overload]
                z += w * math.tanh(b + sum(u * x for u, x in zip(unit, row, strict=True)))
            want.append(1.0 / (1.0 + math.exp(-z)))
        assert ev.chances(s) == pytest.approx(want, rel=1e-9)
        v = ev.evaluate(s)
        assert all(-1 < x < 1 for x in v)


@pytest.mark.parametrize(
    "change,message",
    [
        ({"kind": "forest"}, "unknown kind 'forest'"),
        ({"inputs": "everything"}, "unknown inputs 'everything'"),
        ({"network": None}, "needs a network object"),
        ({"network": {"hidden_weights": [], "hidden_bias": []}}, "1 to 64 hidden units"),
        ({"network": {"hidden_weights": [[0.0]], "hidden_bias": [0.0]}}, "one weight per feature"),
        ({"weights": [1.0]}, "weights (one per hidden unit)"),
        ({"inputs": "seat"}, "retrain it"),
    ],
)
def test_a_bad_network_file_is_a_clear_error(change: dict[str, object], message: str) -> None:
    payload = _network_file("osirium", 3, learned.TABLE_INPUTS, 3, 1)
    payload.update(change)
    with pytest.raises(ModelError) as info:
        learned.parse_model(json.loads(model_json(payload)), "bad-net", "osirium", 3)
    assert "bad-net" in str(info.value) and message in str(info.value)


def test_training_a_network_on_searched_labels(tmp_path: Path) -> None:
    """``--model mlp --inputs table --search-weight``: reproducible from its seed; the
    samples file serves a second fit without self-play and refuses another self-play's
    config; searched labels are the acting seat's root value (two seats: complements)."""
    pytest.importorskip("numpy")
    from learn.train import TrainConfig, generate, load_samples, train, training_labels

    config = TrainConfig(
        "osirium", 2, games=3, seed=5, bot="mcts:iterations=20,ms=none", every=3,
        model="mlp", hidden=4, inputs="table", search_weight=0.5,
    )  # fmt: skip
    samples = tmp_path / "s.json.gz"
    text, summary = train(config, samples=samples)
    assert samples.exists() and not summary["samples_loaded"]
    again, summary2 = train(config, samples=samples)
    assert again == text and summary2["samples_loaded"]
    model = learned.parse_model(json.loads(text), "tiny", "osirium", 2)
    assert (model.kind, model.inputs, len(model.hidden)) == ("mlp", "table", 4)
    assert "--model mlp --hidden 4 --inputs table --search-weight 0.5" in model.training["command"]
    data = load_samples(samples, config)
    assert repr(data) == repr(generate(config))  # NaN (not searched) is not equal to itself
    s = data.search
    searched = [i for i in range(0, len(s), 2) if not math.isnan(s[i])]
    assert searched and all(s[i] + s[i + 1] == pytest.approx(1.0) for i in searched)
    y = training_labels(data, 0.5)
    for i in searched:
        assert y[i] == pytest.approx(0.5 * data.labels[i] + 0.5 * s[i])
    other = TrainConfig("osirium", 2, games=3, seed=6, bot="mcts:iterations=20,ms=none", every=3)
    with pytest.raises(ValueError, match="another self-play"):
        train(other, samples=samples)
    # A samples file whose lists disagree is refused naming their sizes, not fitted.
    body = json.loads(gzip.decompress(samples.read_bytes()))
    body["labels"] = body["labels"][:3]
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(json.dumps(body).encode()))
    with pytest.raises(
        ValueError, match=r"cut\.json\.gz: not a samples file \(one entry per sample .*labels 3"
    ):
        train(config, samples=cut)
    n = len(body["features"])
    for field, values, message in [
        ("labels", ["x"] * n, "'labels' must lie in [0, 1], got 'x' at 0"),
        ("labels", [math.nan] * n, "'labels' must lie in [0, 1], got nan at 0"),
        ("labels", [2.0] * n, "'labels' must lie in [0, 1], got 2.0 at 0"),
        ("search", [1.5] * n, "'search' must lie in [0, 1], got 1.5"),
        ("features", [[math.inf] * len(body["features"][0])] * n, "'features' must hold finite numbers"),
        ("tables", [[0.0]] * (n - 1), "'tables' must be one row per sample"),
        ("games", [-1] * n, "'games' must hold game numbers"),
    ]:
        bad = {**json.loads(gzip.decompress(samples.read_bytes())), field: values}
        cut.write_bytes(gzip.compress(json.dumps(bad).encode()))
        with pytest.raises(ValueError, match=re.escape(message)):
            train(config, samples=cut)


@pytest.mark.parametrize("l2", [-1.0, math.nan, math.inf])
def test_training_refuses_an_l2_that_is_not_a_finite_number_at_least_0(l2: float) -> None:
    pytest.importorskip("numpy")
    from learn.train import TrainConfig, train

    with pytest.raises(ValueError, match="--l2 must be a finite number >= 0"):
        train(TrainConfig("aton", 2, games=1, seed=1, bot="random", every=4, l2=l2))


# ---------------------------------------------------------------------------------------
# Samples files out of shape or range, fits that are not finite
# ---------------------------------------------------------------------------------------

#: A small self-play (3 random games) whose samples files the tests below damage.
SAMPLES = {"game": "aton", "players": 2, "games": 3, "seed": 5, "bot": "random", "every": 6}


def samples_body(tmp_path: Path) -> dict[str, object]:
    """A valid samples file's decoded JSON, of the self-play :data:`SAMPLES`."""
    from learn.train import TrainConfig, generate, save_samples

    config = TrainConfig(**SAMPLES)  # type: ignore[arg-type]
    path = tmp_path / "good.json.gz"
    save_samples(path, config, generate(config))
    body: dict[str, object] = json.loads(gzip.decompress(path.read_bytes()))
    return body


def write_samples(path: Path, body: object) -> Path:
    path.write_bytes(gzip.compress(json.dumps(body).encode()))
    return path


@pytest.mark.parametrize(
    "text,message",
    [
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply"),
        (b'{"format": ' + b"7" * 5000 + b"}", "an integer of 5000 digits"),
        (b'{"format": "heka-train-samples", "version": 1', "Expecting"),
        (None, "while decompressing data"),  # a damaged gzip stream
    ],
)
def test_a_samples_file_that_cannot_be_decoded_is_refused_naming_it(
    tmp_path: Path, text: bytes | None, message: str
) -> None:
    """Every decode failure (deep nesting, a number of too many digits, bad JSON, a damaged
    stream) is a ValueError naming the file, not a traceback."""
    pytest.importorskip("numpy")
    from learn.train import TrainConfig, train

    path = tmp_path / "bad.json.gz"
    if text is None:
        good = gzip.compress(b"[1, 2, 3]" * 1000)
        path.write_bytes(good[:20] + bytes(30) + good[50:])
    else:
        path.write_bytes(gzip.compress(text))
    with pytest.raises(ValueError) as info:
        train(TrainConfig(**SAMPLES), samples=path)  # type: ignore[arg-type]
    assert str(info.value).startswith(f"{path}: not a samples file (") and message in str(info.value)


def test_a_samples_file_larger_than_its_cap_decompressed_is_refused_unread(tmp_path: Path) -> None:
    """A gzip stream decompresses to far more than its size: the reader stops at the cap and
    names the file and the cap, whatever the stream holds, rather than filling memory."""
    pytest.importorskip("numpy")
    from learn.train import SamplesTooLarge, TrainConfig, generate, load_samples, save_samples

    config = TrainConfig(**SAMPLES)  # type: ignore[arg-type]
    good = tmp_path / "good.json.gz"
    save_samples(good, config, generate(config))
    size = len(gzip.decompress(good.read_bytes()))
    assert load_samples(good, config, limit=size).labels  # the cap itself is allowed
    with pytest.raises(
        SamplesTooLarge,
        match=re.escape(f"{good}: not a samples file (it decompresses to more than {size - 1:,} bytes"),
    ):
        load_samples(good, config, limit=size - 1)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (4 * 2**20)))  # 4 MiB of blanks: a 4 KiB file
    with pytest.raises(SamplesTooLarge, match="more than 1,048,576 bytes"):
        load_samples(bomb, config, limit=2**20)


def test_samples_past_the_cap_are_not_written_and_the_fit_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer refuses what the reader would: no file (not even a partial one) is left, and
    ``train`` still fits the self-play it played, saying the samples were not kept."""
    pytest.importorskip("numpy")
    from learn import train as training

    config = training.TrainConfig(**SAMPLES)  # type: ignore[arg-type]
    data = training.generate(config)
    path = tmp_path / "s.json.gz"
    with pytest.raises(
        training.SamplesTooLarge,
        match=re.escape(f"{path}: not written: the samples of 3 games are more than the 1,000 bytes"),
    ):
        training.save_samples(path, config, data, limit=1000)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(training, "MAX_SAMPLES_BYTES", 1000)
    text, summary = training.train(config, samples=path)
    assert json.loads(text)["features"] and not path.exists()
    printed = training.format_summary(config, summary, "m.json")
    assert f"{path}: not written" in printed and "use fewer --games" in printed


def test_a_samples_row_of_the_wrong_width_is_refused_naming_it(tmp_path: Path) -> None:
    """Each row must have the width of the game's features (and, for table inputs, of the
    other seats' public rows): the message names the file, the row and the width."""
    pytest.importorskip("numpy")
    from learn.train import TrainConfig, train

    seat = TrainConfig(**SAMPLES)  # type: ignore[arg-type]
    table = dataclasses.replace(seat, inputs="table")
    own = len(feature_names("aton"))
    others = len(feature_names("aton", "table", 2)) - own
    body = samples_body(tmp_path)
    features = body["features"]
    tables = body["tables"]
    assert isinstance(features, list) and isinstance(tables, list)
    path = tmp_path / "s.json.gz"
    for inputs, change, message in [
        (seat, {"features": [r[:-1] for r in features]},
         f"'features' row 0 has {own - 1} values, not the {own} of aton's seat features"),
        (seat, {"features": [*features[:2], [*features[2], 0.0], *features[3:]]},
         f"'features' row 2 has {own + 1} values, not the {own}"),
        (seat, {"features": [*features[:1], 0.5, *features[2:]]}, "'features' row 1 has float, not the"),
        (table, {"tables": [r[:-1] for r in tables]},
         f"'tables' row 0 has {others - 1} values, not the {others} of the other seats' public rows"),
        (table, {"tables": []}, "'tables' must be one row per sample"),
    ]:  # fmt: skip
        write_samples(path, {**body, **change})
        with pytest.raises(ValueError, match=re.escape(f"{path}: not a samples file ({message}")):
            train(inputs, samples=path)
    # Seat inputs do not read the tables: a file without them still serves a linear fit.
    write_samples(path, {**body, "tables": []})
    text, summary = train(seat, samples=path)
    assert summary["samples_loaded"] and json.loads(text)["features"] == list(feature_names("aton"))


def test_samples_out_of_range_are_refused_naming_the_sample(tmp_path: Path) -> None:
    """Huge (finite) feature values, an integer beyond the floats, a game number beyond the
    self-play's games and counts that are not counts are refused naming what and where,
    before any fit."""
    pytest.importorskip("numpy")
    from learn.train import MAX_FEATURE, TrainConfig, train

    config = TrainConfig(**SAMPLES)  # type: ignore[arg-type]
    body = samples_body(tmp_path)
    features, tables = body["features"], body["tables"]
    assert isinstance(features, list) and isinstance(tables, list)
    width = len(features[0])
    path = tmp_path / "s.json.gz"
    bound = f"finite numbers of magnitude at most {MAX_FEATURE:g}"
    cases: list[tuple[dict[str, object], str]] = [
        ({"features": [[1e308] * width for _ in features]},
         f"'features' must hold {bound}: row 0, score_diff, is 1e+308"),
        ({"features": [*features[:3], [*features[3][:-1], -2e6], *features[4:]]},
         "row 3, opp_revealed, is -2000000.0"),
        ({"features": [[10**400, *r[1:]] for r in features]}, "row 0, score_diff, is 1000000"),
        ({"tables": [[1e300] * len(r) for r in tables]},
         f"'tables' must hold {bound}: row 0, next1_score_diff"),
        ({"games": [7] * len(features)}, "'games' must hold game numbers, 0 to 2"),
        ({"games": [10**400] * len(features)}, "'games' must hold game numbers"),
        ({"positions": "many"}, "'positions' must be a count"),
        ({"plies": -1}, "'plies' must be a count"),
    ]  # fmt: skip
    for change, message in cases:
        write_samples(path, {**body, **change})
        with pytest.raises(ValueError, match=re.escape(f"{path}: not a samples file (")) as info:
            train(config, samples=path)
        assert message in str(info.value)


@pytest.mark.parametrize("model", ["linear", "mlp"])
def test_a_fit_that_is_not_finite_is_refused(tmp_path: Path, model: str) -> None:
    """Samples that overflow the fit (here values near the float limit, which a samples file
    may not hold) give no model with NaN weights: a ValueError, without numpy's warnings."""
    pytest.importorskip("numpy")
    import warnings

    from learn.train import Dataset, TrainConfig, fit

    config = TrainConfig(**SAMPLES, model=model, hidden=2)  # type: ignore[arg-type]
    body = samples_body(tmp_path)
    data = Dataset(**{k: body[k] for k in (f.name for f in dataclasses.fields(Dataset))})  # type: ignore[arg-type]
    fit(config, data)  # the samples as played fit
    data.features = [[1e308] * len(r) for r in data.features]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"the fit diverged: its weights, .* are not finite numbers"):
            fit(config, data)
