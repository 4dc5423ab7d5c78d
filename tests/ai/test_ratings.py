"""Wilson intervals and the maximum-likelihood Elo fit, on results with known answers."""

from __future__ import annotations

import math
import random

import pytest

from ai.ratings import (
    ELO_K,
    Z95,
    PairResult,
    elo_from_score,
    expected_score,
    fit_elo,
    rate,
    wilson_interval,
)

# ---------------------------------------------------------------------------------------
# Wilson score interval
# ---------------------------------------------------------------------------------------


def test_wilson_matches_hand_computed_values() -> None:
    # 8 of 10, z = 1.96: centre (0.8 + 0.19208) / 1.38416 = 0.71683,
    # half 1.96 / 1.38416 * sqrt(0.016 + 0.009604) = 0.22658.
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=5e-4)
    assert high == pytest.approx(0.9433, abs=5e-4)
    # 50 of 100: symmetric around 1/2, 0.4038 .. 0.5962.
    low, high = wilson_interval(50, 100)
    assert (low, high) == pytest.approx((0.40383, 0.59617), abs=5e-5)
    assert low + high == pytest.approx(1.0)
    # 190 of 200 (a 95% target): 0.9104 .. 0.9725.
    low, high = wilson_interval(190, 200)
    assert (low, high) == pytest.approx((0.9104, 0.9725), abs=5e-4)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-5)
    assert wilson_interval(10, 10) == pytest.approx((0.72247, 1.0), abs=1e-5)
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(2.5, 5)[0] == pytest.approx(1 - wilson_interval(2.5, 5)[1])  # fractional
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
    r = rate(3, 4)
    assert r.rate == 0.75 and r.low < 0.75 < r.high
    assert str(r).startswith("0.750 [")


def test_wilson_interval_covers_the_truth_about_95_percent_of_the_time() -> None:
    rng = random.Random(7)
    p, n, trials = 0.3, 60, 2000
    covered = 0
    for _ in range(trials):
        x = sum(rng.random() < p for _ in range(n))
        low, high = wilson_interval(x, n)
        covered += low <= p <= high
    assert 0.92 <= covered / trials <= 0.975


# ---------------------------------------------------------------------------------------
# Elo
# ---------------------------------------------------------------------------------------


def test_elo_curve() -> None:
    assert expected_score(0, 0) == 0.5
    assert expected_score(400, 0) == pytest.approx(10 / 11)
    assert elo_from_score(10 / 11) == pytest.approx(400)
    assert elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert math.exp(ELO_K * 400) == pytest.approx(10)


def test_two_bots_plain_mle_is_the_inverse_elo_curve() -> None:
    # 75 points out of 100: the MLE difference is exactly 400 log10(3) = 190.85.
    [a, b] = fit_elo([PairResult("a", "b", 100, 75)], anchor="b", prior_draws=0)
    assert a.elo == pytest.approx(elo_from_score(0.75), abs=1e-6)
    assert b.elo == 0.0 and b.ci95 == 0.0
    # Fisher information of one pair: n p (1 - p) in natural units.
    se = 1 / math.sqrt(100 * 0.75 * 0.25) / ELO_K
    assert a.ci95 == pytest.approx(Z95 * se, rel=1e-6)
    assert (a.games, a.score, b.score) == (100, 75, 25)


def test_symmetric_results_give_equal_ratings() -> None:
    results = [
        PairResult("a", "b", 50, 30),
        PairResult("b", "c", 50, 30),
        PairResult("c", "a", 50, 30),  # a rock-paper-scissors cycle
    ]
    ratings = fit_elo(results)
    for r in ratings:
        assert r.elo == pytest.approx(0.0, abs=1e-6)
    assert ratings[0].ci95 == pytest.approx(ratings[1].ci95)
    # Draw-only results: everyone equal too.
    ratings = fit_elo([PairResult("x", "y", 20, 10), PairResult("y", "z", 20, 10)], anchor="x")
    assert [r.elo for r in ratings] == [0.0, pytest.approx(0.0, abs=1e-6), pytest.approx(0.0, abs=1e-6)]


def test_fit_recovers_known_elo_gaps_from_simulated_games() -> None:
    truth = {"random": 0.0, "greedy": 150.0, "medium": 400.0, "hard": 500.0}
    rng = random.Random(2024)
    results = []
    names = list(truth)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = expected_score(truth[a], truth[b])
            for _ in range(400):
                u = rng.random()
                # 10% draws, the rest split so that the expected score is still p.
                if u < 0.1:
                    results.append(PairResult(a, b, 1, 0.5))
                else:
                    results.append(PairResult(a, b, 1, 1.0 if rng.random() < (p - 0.05) / 0.9 else 0.0))
    ratings = {r.name: r for r in fit_elo(results, anchor="random")}
    for name, elo in truth.items():
        assert ratings[name].elo == pytest.approx(elo, abs=max(2.5 * ratings[name].ci95 / Z95, 1e-9))
        assert abs(ratings[name].elo - elo) < 40
    assert ratings["random"].elo == 0.0
    # Ordered as the truth, with intervals of a sensible size for 1200 games per bot.
    assert ratings["hard"].elo > ratings["medium"].elo > ratings["greedy"].elo > 0
    assert 10 < ratings["hard"].ci95 < 80


def test_mean_anchor_centres_ratings_and_keeps_differences() -> None:
    results = [PairResult("a", "b", 100, 64), PairResult("b", "c", 100, 64), PairResult("a", "c", 100, 76)]
    anchored = {r.name: r.elo for r in fit_elo(results, anchor="c")}
    centred = {r.name: r for r in fit_elo(results)}
    assert sum(r.elo for r in centred.values()) == pytest.approx(0.0, abs=1e-9)
    assert centred["a"].elo - centred["b"].elo == pytest.approx(anchored["a"] - anchored["b"])
    assert all(r.ci95 > 0 for r in centred.values())


def test_a_perfect_record_stays_finite_thanks_to_the_prior() -> None:
    [a, _] = fit_elo([PairResult("a", "b", 20, 20)], anchor="b")
    # One virtual draw: 20.5 of 21, i.e. 400 log10(41) = 645.
    assert a.elo == pytest.approx(elo_from_score(20.5 / 21), abs=1e-6)
    assert math.isfinite(a.ci95)


def test_fit_refuses_what_cannot_be_rated() -> None:
    with pytest.raises(ValueError, match="not connected"):
        fit_elo([PairResult("a", "b", 10, 5), PairResult("c", "d", 10, 5)])
    with pytest.raises(ValueError, match="anchor"):
        fit_elo([PairResult("a", "b", 10, 5)], anchor="zz")
    with pytest.raises(ValueError, match="bad result"):
        fit_elo([PairResult("a", "b", 10, 11)])
    assert fit_elo([]) == []


def test_fixed_ratings_hold_those_bots_and_fit_the_others_against_them() -> None:
    results = [PairResult("a", "b", 100, 64), PairResult("b", "c", 100, 64), PairResult("a", "c", 100, 76)]
    # One bot held at 0 is the anchor.
    anchored = fit_elo(results, anchor="c")
    assert fit_elo(results, fixed={"c": 0.0}) == anchored
    # Two held: the third is the one-parameter maximum of its own games (score = expected).
    ratings = {r.name: r for r in fit_elo(results, fixed={"b": 0.0, "c": -300.0}, prior_draws=0)}
    assert (ratings["b"].elo, ratings["c"].elo, ratings["b"].ci95, ratings["c"].ci95) == (0, -300, 0, 0)
    a = ratings["a"].elo
    p_ab, p_ac = expected_score(a, 0.0), expected_score(a, -300.0)
    assert 100 * p_ab + 100 * p_ac == pytest.approx(64 + 76, abs=1e-6)
    info = 100 * p_ab * (1 - p_ab) + 100 * p_ac * (1 - p_ac)
    assert ratings["a"].ci95 == pytest.approx(Z95 / math.sqrt(info) / ELO_K, rel=1e-6)
    # Everyone held: nothing to fit.
    held = {"a": 10.0, "b": 0.0, "c": -5.0}
    assert {r.name: r.elo for r in fit_elo(results, fixed=held)} == pytest.approx(held)


def test_fixed_anchors_recover_a_candidate_from_simulated_games() -> None:
    anchors = {"random": 0.0, "greedy": 800.0, "easy": 850.0, "medium": 1000.0}
    truth, rng = 430.0, random.Random(11)
    results = []
    for anchor, elo in anchors.items():
        p = expected_score(truth, elo)
        results += [PairResult("cand", anchor, 1, float(rng.random() < p)) for _ in range(2000)]
    [cand] = [r for r in fit_elo(results, fixed=anchors) if r.name == "cand"]
    assert abs(cand.elo - truth) < cand.ci95 < 40


def test_fixed_ratings_are_checked() -> None:
    results = [PairResult("a", "b", 10, 5)]
    with pytest.raises(ValueError, match="not both"):
        fit_elo(results, anchor="a", fixed={"b": 0.0})
    with pytest.raises(ValueError, match="'zz' is not one of the rated bots"):
        fit_elo(results, fixed={"zz": 0.0})
    with pytest.raises(ValueError, match="finite"):
        fit_elo(results, fixed={"a": math.nan})
    # Groups that never met are rated when each has a bot of fixed rating, refused otherwise.
    split = [PairResult("a", "b", 10, 5), PairResult("c", "d", 10, 5)]
    assert [r.elo for r in fit_elo(split, fixed={"a": 0.0, "c": 100.0})] == pytest.approx([0, 0, 100, 100])
    with pytest.raises(ValueError, match="not connected by games to a bot of fixed rating: c, d"):
        fit_elo(split, fixed={"a": 0.0})
