"""Latency histogram accuracy, merging, and the report (JSON data and ghz-style text)."""

from __future__ import annotations

import json
import math
import random

import pytest

from service.loadtest.stats import GROWTH, LatencyHistogram, Recorder, build_report, format_report


def exact_percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_percentiles_within_one_bucket_of_exact(seed):
    rng = random.Random(seed)
    values = [rng.lognormvariate(-5, 1.2) for _ in range(5000)]  # ~ms-scale latencies
    h = LatencyHistogram()
    for v in values:
        h.record(v)
    for p in (1, 50, 90, 95, 99, 99.9, 100):
        exact = exact_percentile(values, p)
        assert abs(h.percentile(p) - exact) <= exact * (GROWTH - 1) + 1e-12, p
    assert h.count == 5000
    assert h.min == min(values) and h.max == max(values)
    assert h.mean == pytest.approx(sum(values) / len(values))


def test_empty_histogram_is_zero():
    h = LatencyHistogram()
    assert h.percentile(99) == 0.0 and h.mean == 0.0 and h.linear_buckets() == []
    assert h.summary()["min"] == 0.0


def test_single_value_and_clamping():
    h = LatencyHistogram()
    h.record(0.0123)
    assert h.percentile(50) == 0.0123  # clamped to the only value seen
    assert h.linear_buckets() == [(0.0123, 1)]


def test_merge_equals_recording_everything():
    rng = random.Random(7)
    a, b, both = LatencyHistogram(), LatencyHistogram(), LatencyHistogram()
    for i in range(2000):
        v = rng.expovariate(100)
        (a if i % 3 else b).record(v)
        both.record(v)
    a.merge(b)
    assert a.count == both.count and a.min == both.min and a.max == both.max
    for p in (50, 90, 99):
        assert a.percentile(p) == both.percentile(p)


def test_linear_buckets_cover_every_sample():
    h = LatencyHistogram()
    for i in range(1, 101):
        h.record(i / 1000)
    buckets = h.linear_buckets(10)
    assert len(buckets) == 10
    assert sum(c for _, c in buckets) == 100
    assert buckets[-1][0] == pytest.approx(0.1)
    assert [u for u, _ in buckets] == sorted(u for u, _ in buckets)


def _recorder() -> Recorder:
    r = Recorder()
    for i in range(90):
        r.record("GetView", 0.001 + i * 1e-5, "OK")
    for _ in range(8):
        r.record("ApplyAction", 0.002, "OK")
    r.record("ApplyAction", 0.003, "INVALID_ARGUMENT", "action 99 is not legal")
    r.record("ApplyAction", 0.003, "INVALID_ARGUMENT", "action 99 is not legal")
    r.tasks_started = r.tasks_completed = 98
    r.tasks_failed = 2
    r.task_errors["aton: not over after 5000 calls"] += 1
    return r


def test_report_counts_codes_and_errors():
    report = build_report(_recorder(), 2.0, {"target": "x", "scenario": "cheap", "concurrency": 2})
    assert report["rpcs"] == 100
    assert report["rate"] == pytest.approx(50.0)
    assert report["errors"] == 3  # two RPC errors and one scenario error
    assert report["status_codes"] == {"INVALID_ARGUMENT": 2, "OK": 98}
    assert report["error_distribution"] == {
        "INVALID_ARGUMENT: action 99 is not legal": 2,
        "scenario: aton: not over after 5000 calls": 1,
    }
    apply = report["methods"]["ApplyAction"]
    assert apply["count"] == 10 and apply["errors"] == 2
    assert apply["status_codes"] == {"INVALID_ARGUMENT": 2, "OK": 8}
    view = report["methods"]["GetView"]
    assert view["p50"] <= view["p90"] <= view["p95"] <= view["p99"] <= view["max"]
    assert sum(c for _, c in view["histogram"]) == 90
    json.dumps(report)  # plain data


def test_text_report_has_the_ghz_sections():
    report = build_report(_recorder(), 2.0, {"target": "127.0.0.1:1", "scenario": "cheap", "rate": 50.0})
    text = format_report(report)
    for needle in (
        "Summary:",
        "Requests/sec:  50.00",
        "rate 50 tasks/s (open loop)",
        "Response time histogram",
        "Latency distribution",
        "99 % in",
        "Per RPC:",
        "ApplyAction",
        "Status code distribution:",
        "[INVALID_ARGUMENT]   2 responses",
        "Error distribution:",
        "[2]   INVALID_ARGUMENT: action 99 is not legal",
    ):
        assert needle in text, needle


def test_codes_table_puts_ok_first_and_can_add_a_total_row():
    from collections import Counter

    from service.loadtest.stats import codes_table

    codes = {"GetView": Counter(OK=3, CANCELLED=1), "BotMove": Counter(RESOURCE_EXHAUSTED=2)}
    lines = codes_table(codes, ["ListGames", "GetView", "BotMove"], totals=True).splitlines()
    assert [c.strip() for c in lines[0].strip("|").split("|")] == [
        "method",
        "OK",
        "CANCELLED",
        "RESOURCE_EXHAUSTED",
        "total",
    ]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    assert rows == [
        ["ListGames", "0", "0", "0", "0"],
        ["GetView", "3", "1", "0", "4"],
        ["BotMove", "0", "0", "2", "2"],
        ["all", "3", "1", "2", "6"],
    ]
    assert [line.split("|")[1].strip() for line in codes_table(codes).splitlines()[2:]] == [
        "BotMove",
        "GetView",
    ]
