"""bench/ladder_scale.py's designs on games simulated from a shipped table (seeded): each
design plays as many games per candidate as the fixed one, and with many games the check's
errors shrink to the table's own rounding."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ai.ladder import DEFAULT_ANCHORS, curve_rating, read_table
from ai.ratings import ELO_K, Z95, expected_score

ROOT = Path(__file__).resolve().parents[2]


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ladder_scale", ROOT / "bench" / "ladder_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ladder_scale"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ls() -> ModuleType:
    return load()


def setting(ls: ModuleType) -> tuple[object, object, list[str], dict[str, float]]:
    table = read_table(ROOT / "ai" / "ladders" / "aton-2p.json")
    bots = tuple(b.spec for b in table.bots)
    anchors = tuple(DEFAULT_ANCHORS)
    ladder = ls.Run("synthetic", 1, (*anchors, *(b for b in bots if b not in anchors)), anchors, {}, {}, {})
    specs = [table.level_for(t).spec for t in (150, 450, 750, 1000)]
    truth = {b.spec: b.rating for b in table.bots} | {s: curve_rating(table, s) for s in specs}
    return ladder, table, specs, truth


@pytest.mark.parametrize("design", ["fixed", "nearest", "chain"])
def test_designs_spend_the_same_games_per_candidate(ls: ModuleType, design: str) -> None:
    ladder, table, specs, truth = setting(ls)
    rng = random.Random(3)
    out = ls.run_design(
        design,
        50,
        ladder=ladder,
        ladder_src=ls.Model(truth, rng),
        check_src=ls.Model(truth, rng),
        table=table,
        specs=specs,
        picks=dict.fromkeys(specs, 0.0),
    )
    candidates = len(ladder.bots) - len(ladder.anchors)
    assert out.check_games_held == 50 * 4 * len(specs)  # 4n per check bot in every design
    if design != "chain":  # (chain: two levels become anchors and play the anchors' pairs instead)
        assert out.ladder_games == 50 * (6 + 4 * candidates)
    assert set(out.errors) == {"random", "anchors held"}
    assert all(abs(e) < 300 for e in out.errors["anchors held"])


def test_many_games_bring_the_check_to_the_table(ls: ModuleType) -> None:
    ladder, table, specs, truth = setting(ls)
    rng = random.Random(5)
    out = ls.run_design(
        "nearest",
        2000,
        ladder=ladder,
        ladder_src=ls.Model(truth, rng),
        check_src=ls.Model(truth, rng),
        table=table,
        specs=specs,
        picks=dict.fromkeys(specs, 0.0),
    )
    assert max(abs(e) for e in out.errors["anchors held"]) < 30


def test_offset_games_is_the_fisher_count(ls: ModuleType) -> None:
    # Directly: var = 1 / (N p q) in natural units, at the 95% half-width asked for.
    p = expected_score(800.0, 0.0)
    n = ls.offset_games(800.0, 25.0, 1)
    assert Z95 * (1 / (n * p * (1 - p))) ** 0.5 / ELO_K == pytest.approx(25.0)
    # Two links of 400 each, N / 2 games on each: the variances add.
    q = expected_score(400.0, 0.0)
    n2 = ls.offset_games(800.0, 25.0, 2)
    assert Z95 * (2 / (n2 / 2 * q * (1 - q))) ** 0.5 / ELO_K == pytest.approx(25.0)
    assert n2 < n / 2  # 800 Elo apart, a midpoint more than halves the games
