"""bench/check_by_anchor.py, whose record (bench/results/check_osirium4_104_by_anchor.txt) the
ladder's docs and the 4-player note take their figures from: its pieces on small inputs, and the
record current with the results it reads."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shlex
import sys
from pathlib import Path
from types import ModuleType

from ai.ratings import PairResult

ROOT = Path(__file__).resolve().parents[2]


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "heka_check_by_anchor_test", ROOT / "bench" / "check_by_anchor.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


cba = load()


def test_a_bots_score_against_an_anchor_counts_both_orders() -> None:
    results = [
        PairResult("x", "random", 1.0, 1.0),
        PairResult("greedy", "x", 2.0, 0.5),  # x scored 1.5 of 2
        PairResult("greedy", "random", 1.0, 1.0),  # between anchors: not x's
        PairResult("x", "y", 1.0, 0.0),  # y is no anchor
    ]
    assert cba.pair_scores(results, "x", ["random", "greedy"]) == {"random": (1.0, 1.0), "greedy": (1.5, 2.0)}


def test_a_levels_anchors_are_those_it_played_more_than_its_pilot() -> None:
    run = {
        "bots": ["random", "greedy", "easy", "x"],
        "anchors": ["random", "greedy", "easy"],
        "pairings": [
            {"a": "x", "b": "random", "games": 8},
            {"a": "x", "b": "greedy", "games": 200},
            {"a": "easy", "b": "x", "games": 200},
        ],
    }
    assert cba.ladder_anchors(run) == {"x": ["greedy", "easy"]}
    for p in run["pairings"]:
        p["games"] = 50  # the fixed design: every anchor
    assert cba.ladder_anchors(run) == {"x": ["random", "greedy", "easy"]}


def test_the_record_is_what_the_script_prints_from_the_results() -> None:
    record = ROOT / "bench" / "results" / "check_osirium4_104_by_anchor.txt"
    command, _, printed = record.read_text(encoding="utf-8").partition("\n")
    args = shlex.split(command.removeprefix("command: "))
    assert args[:3] == ["PYTHONPATH=.", ".venv/bin/python", "bench/check_by_anchor.py"]
    out = io.StringIO()
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            assert cba.main(args[3:]) == 0
    finally:
        os.chdir(cwd)
    assert out.getvalue() == printed, "run the command of the record again"
