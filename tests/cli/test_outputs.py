"""Commands never write into tracked files by default: their outputs go under
heka-results/ (ignored by git); replacing a shipped model or rating table takes --ship or an
explicit path (service/commands/outputs.py)."""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

from service.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]

LADDER = [
    "arena", "--ladder", "--game", "aton", "--games-per-pair", "1", "--seed", "2", "--no-progress",
    "--anchors", "random;greedy", "--bots", "mcts:iterations=5,ms=none",
]  # fmt: skip
TRAIN = [
    "train", "--game", "aton", "--players", "2", "--games", "3", "--seed", "5", "--every", "6",
    "--bot", "mcts:iterations=5,ms=none", "--no-progress",
]  # fmt: skip


def files_under(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()}


def shipped(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.json"))}


def test_the_ladder_writes_its_table_under_the_results_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ai import ladder

    before = shipped(ladder.TABLE_DIR)
    monkeypatch.chdir(tmp_path)
    assert main(LADDER) == 0
    assert files_under(tmp_path) == {"heka-results/ladder-aton-2p.json"}
    assert ladder.read_table(tmp_path / "heka-results" / "ladder-aton-2p.json").game == "aton"
    assert shipped(ladder.TABLE_DIR) == before


def test_the_ladder_ships_its_table_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ai import ladder

    monkeypatch.setattr(ladder, "TABLE_DIR", tmp_path / "ladders")
    monkeypatch.chdir(tmp_path)
    assert main([*LADDER, "--ship"]) == 0
    assert files_under(tmp_path) == {"ladders/aton-2p.json"}
    # Without its check, a new table ships provisional.
    assert ladder.read_table(tmp_path / "ladders" / "aton-2p.json").provisional
    assert main([*LADDER, "--ship", "--ratings", "x.json"]) == 2
    assert "no --ratings" in capsys.readouterr().err
    assert main(["arena", "--bots", "greedy,random", "--games", "2", "--ship", "--no-progress"]) == 2
    assert "--ship goes with --ladder" in capsys.readouterr().err


def check_command(table: str) -> list[str]:
    """A check that would ship TABLE: every default target (a check that ships leaves none out)."""
    return [
        "arena", "--ladder", "--game", "aton", "--check", table, "--seed", "3",
        "--games-per-pair", "2", "--anchors", "random;greedy", "--no-progress", "--ship",
    ]  # fmt: skip


def test_a_table_whose_check_fails_is_not_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--check TABLE --ship`` replaces the shipped table only when every target measured
    within the tolerance and the mean absolute error is within its bound."""
    from ai import ladder

    monkeypatch.setattr(ladder, "TABLE_DIR", tmp_path / "ladders")
    (tmp_path / "ladders").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main([*LADDER, "--ratings", "table.json"]) == 0
    table = ladder.read_table("table.json")
    n = len(ladder.default_check_targets(table))
    capsys.readouterr()
    monkeypatch.setattr(ladder, "TOLERANCE", -1.0)  # no measurement is within: the check fails
    monkeypatch.setattr(ladder, "MAX_MEAN_ERROR", 0.0)  # and so does its mean absolute error
    assert main(check_command("table.json")) == 1
    out, err = capsys.readouterr()
    summary = next(line for line in out.splitlines() if "(at most" in line)
    figures = re.findall(r"mean absolute error ([\d.]+)", summary)
    assert len(figures) == 2 and len(set(figures)) == 1, summary  # one figure, rounded one way
    monkeypatch.setattr(ladder, "MAX_MEAN_ERROR", 30.0)
    assert f"the check failed (0 of {n} targets within" in err and "not shipped" in err
    assert "--provisional ships it as provisional" in err
    assert f"the check fails: {n} target(s) outside" in out
    assert files_under(tmp_path / "ladders") == set()
    # --provisional ships it as provisional, the failed check in its note and its check.
    assert main([*check_command("table.json"), "--provisional"]) == 0
    assert f"(provisional; checked on seed 3: 0 of {n} targets" in capsys.readouterr().out
    failed = ladder.read_table(tmp_path / "ladders" / "aton-2p.json")
    assert failed.provisional and failed.check is not None and not failed.check.passed
    assert failed.note.startswith(f"provisional: its check failed (checked on seed 3: 0 of {n} targets")
    assert failed.bots == table.bots
    (tmp_path / "ladders" / "aton-2p.json").unlink()
    monkeypatch.setattr(ladder, "TOLERANCE", 1e9)  # every measurement is within: it passes
    monkeypatch.setattr(ladder, "MAX_MEAN_ERROR", 1e9)
    assert main(check_command("table.json")) == 0
    assert "the check passes" in capsys.readouterr().out
    shipped_table = ladder.read_table(tmp_path / "ladders" / "aton-2p.json")
    assert shipped_table.check is not None and shipped_table.check.passed
    assert (shipped_table.check.seed, shipped_table.check.targets) == (3, n)
    assert shipped_table.check.scale == "anchors"  # the default: the anchors at the table's ratings
    assert shipped_table.bots == table.bots
    assert shipped_table.provisional  # 1 game per pair: measured only at 200 per candidate
    assert f"checked on seed 3: {n} of {n} targets" in shipped_table.note


def test_a_shipped_table_with_a_failed_check_is_refused() -> None:
    import json

    from ai import ladder

    data = json.loads(ladder.table_path("aton", 2).read_text(encoding="utf-8"))
    data["check"] = {"seed": 2, "targets": 11, "within": 10, "mean_absolute_error": 29.0}
    with pytest.raises(ladder.LadderError, match=r"its check failed .*10 of 11 targets"):
        ladder.parse_table(data, "aton-2p.json")
    # A provisional table may carry its failed check: it says why the table is provisional.
    table = ladder.parse_table({**data, "provisional": True}, "aton-2p.json")
    assert table.check is not None and not table.check.passed


def test_provisional_goes_with_a_check_that_ships(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        [*LADDER, "--provisional"],
        [*LADDER, "--ship", "--provisional"],
        [*check_command("table.json")[:-1], "--provisional"],
    ):
        assert main(argv) == 2
        assert "--provisional goes with --check TABLE --ship" in capsys.readouterr().err


def test_train_refuses_a_hidden_layer_for_a_linear_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("numpy", reason="heka train needs the train extra (numpy)")
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--games", "2", "--hidden", "8", "--no-progress"]) == 2
    assert "--hidden goes with --model mlp" in capsys.readouterr().err
    assert main(["train", "--games", "2", "--model", "linear", "--hidden", "8", "--no-progress"]) == 2
    assert files_under(tmp_path) == set()  # refused before any game is played


def test_train_writes_under_the_results_folder_and_leaves_the_shipped_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("numpy", reason="heka train needs the train extra (numpy)")
    from ai.learned import model_dir

    monkeypatch.delenv("HEKA_MODEL_DIR", raising=False)
    before = shipped(model_dir())
    monkeypatch.chdir(tmp_path)
    assert main(TRAIN) == 0
    assert files_under(tmp_path) == {"heka-results/models/aton-2p.json"}
    assert shipped(model_dir()) == before


def test_train_ships_the_model_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("numpy", reason="heka train needs the train extra (numpy)")
    monkeypatch.setenv("HEKA_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    assert main([*TRAIN, "--ship"]) == 0
    assert files_under(tmp_path) == {"models/aton-2p.json"}
    assert main([*TRAIN, "--ship", "--out", "x.json"]) == 2
    assert "no --out" in capsys.readouterr().err


def test_an_output_that_cannot_be_written_is_refused_before_the_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """train --out, play --save: a folder, or a path below a file, is refused up front."""
    pytest.importorskip("numpy", reason="heka train needs the train extra (numpy)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    for path, message in [
        (".", "cannot write --out .: it is a folder"),
        ("afile/m.json", "is a file, not a folder"),
    ]:
        assert main([*TRAIN, "--out", path]) == 2
        err = capsys.readouterr().err
        assert message in err and "self-play" not in err and "heka train --game" not in err
    assert main([*TRAIN, "--samples", "afile/s.json.gz"]) == 2
    assert "cannot write --samples afile/s.json.gz" in capsys.readouterr().err
    assert main(["play", "--bots", "random", "--seed", "1", "--save", "."]) == 2
    assert "cannot write --save .: it is a folder" in capsys.readouterr().err
    # Folders that do not exist yet are made, for every output.
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 2000))
    assert main(["play", "--game", "aton", "--bots", "random", "--seed", "1", "--save", "new/a/p.json"]) == 0
    assert (
        main(["review", "new/a/p.json", "--iterations", "3", "--no-progress", "--json", "new/b/r.json"]) == 0
    )
    assert main(["render", "--game", "aton", "--moves", "3", "--out", "new/c/x.svg"]) == 0
    assert all((tmp_path / "new" / f).is_file() for f in ("a/p.json", "b/r.json", "c/x.svg"))


def test_the_results_folder_is_ignored_by_git() -> None:
    for name in ("heka-results/ladder-aton-2p.json", "heka-results/models/aton-2p.json"):
        done = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT, check=False)
        assert done.returncode == 0, f"{name} is not ignored by .gitignore"


def test_no_command_option_names_an_output_file_by_default() -> None:
    """Every path option of every command defaults to none: a default output is chosen in
    code, under heka-results/ (the two tests above), never as a path in the parser."""
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    checked = 0
    for name, command in sub.choices.items():
        for action in command._actions:
            if action.metavar in ("PATH", "TABLE") or action.dest in ("out", "ratings", "json", "resume"):
                checked += 1
                assert action.default in (None, False, ""), f"heka {name} {action.option_strings}"
    assert checked >= 5


def test_a_check_holds_the_anchors_at_the_tables_ratings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """By default a check rates its bots with every anchor held at the table's rating of it
    (``--check-scale anchors``); ``--check-scale random`` pins only random at 0. An anchor the
    table does not rate is refused."""
    import json

    from ai import ladder

    monkeypatch.chdir(tmp_path)
    assert main([*LADDER, "--ratings", "table.json"]) == 0
    table = ladder.read_table("table.json")
    rated = {b.spec: b.rating for b in table.bots}
    base = [*check_command("table.json")[:-1], "--targets", str(table.max_target)]  # without --ship
    for scale in ("anchors", "random"):
        assert main([*base, "--check-scale", scale, "--json", f"{scale}.json"]) == 0
    held = json.loads((tmp_path / "anchors.json").read_text())
    assert held["check"]["scale"] == "anchors"
    assert held["check"]["held"] == {"random": rated["random"], "greedy": rated["greedy"]}
    pinned = json.loads((tmp_path / "random.json").read_text())
    assert pinned["check"]["scale"] == "random" and "held" not in pinned["check"]
    capsys.readouterr()
    assert main([*base, "--anchors", "random;greedy;mcts:medium,ms=none"]) == 2
    assert "does not rate the anchor(s) mcts:medium,ms=none" in capsys.readouterr().err


def test_train_fits_a_network_from_a_samples_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--samples`` keeps the self-play; a second fit with other model options reads it
    (and says so); an option out of range is exit 2 naming it."""
    pytest.importorskip("numpy", reason="heka train needs the train extra (numpy)")
    monkeypatch.chdir(tmp_path)
    samples = ["--samples", "s.json.gz"]
    assert main([*TRAIN, *samples, "--out", "linear.json"]) == 0
    assert "time: self-play" in capsys.readouterr().out
    net = ["--model", "mlp", "--hidden", "3", "--inputs", "table", "--search-weight", "0.5"]
    assert main([*TRAIN, *samples, *net, "--out", "net.json"]) == 0
    out = capsys.readouterr().out
    assert "samples read from s.json.gz" in out and "3 hidden tanh units over the table inputs" in out
    data = json.loads((tmp_path / "net.json").read_text())
    assert (data["version"], data["kind"], data["inputs"]) == (2, "mlp", "table")
    assert json.loads((tmp_path / "linear.json").read_text())["version"] == 1
    for bad, message in (
        (["--hidden", "0"], "--hidden must be in [1, 64]"),
        (["--search-weight", "2"], "--search-weight must be in [0, 1]"),
    ):
        assert main([*TRAIN, "--model", "mlp", *bad, "--out", "x.json"]) == 2
        assert message in capsys.readouterr().err


def test_train_writes_no_model_from_samples_out_of_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A samples file whose features are huge (finite) or of the wrong width is exit 2 naming
    it; no model is written, not even with --ship (which would replace the shipped one)."""
    pytest.importorskip("numpy", reason="heka train needs the train extra (numpy)")
    monkeypatch.setenv("HEKA_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    assert main([*TRAIN, "--samples", "s.json.gz", "--out", "good.json"]) == 0
    capsys.readouterr()
    body = json.loads(gzip.decompress((tmp_path / "s.json.gz").read_bytes()))
    for features, message in [
        ([[1e308] * len(r) for r in body["features"]], "'features' must hold finite numbers"),
        ([r[:-1] for r in body["features"]], "'features' row 0 has 23 values, not the 24"),
    ]:
        bad = {**body, "features": features}
        (tmp_path / "bad.json.gz").write_bytes(gzip.compress(json.dumps(bad).encode()))
        assert main([*TRAIN, "--samples", "bad.json.gz", "--ship"]) == 2
        err = capsys.readouterr().err
        assert f"heka train: bad.json.gz: not a samples file ({message}" in err and "Traceback" not in err
        assert files_under(tmp_path) == {"s.json.gz", "good.json", "bad.json.gz"}
