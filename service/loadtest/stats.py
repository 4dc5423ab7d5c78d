"""Latency histograms and the load-test report (text like ghz's, or JSON).

:class:`LatencyHistogram` keeps log-spaced buckets (about 1% wide), so it is small,
mergeable, and its percentiles are within 1% of the exact ones whatever the run length.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: Relative width of a bucket: percentiles are reported within this factor.
GROWTH = 1.01
_LOG_GROWTH = math.log(GROWTH)
PERCENTILES = (50.0, 90.0, 95.0, 99.0)


class LatencyHistogram:
    """Durations in seconds in log-spaced buckets, plus exact count, sum, min and max."""

    __slots__ = ("_buckets", "count", "max", "min", "total")

    def __init__(self) -> None:
        self._buckets: Counter[int] = Counter()
        self.count = 0
        self.total = 0.0
        self.min = math.inf
        self.max = 0.0

    @staticmethod
    def _index(seconds: float) -> int:
        return math.floor(math.log(max(seconds, 1e-9)) / _LOG_GROWTH)

    def record(self, seconds: float) -> None:
        self._buckets[self._index(seconds)] += 1
        self.count += 1
        self.total += seconds
        self.min = min(self.min, seconds)
        self.max = max(self.max, seconds)

    def merge(self, other: LatencyHistogram) -> None:
        self._buckets.update(other._buckets)
        self.count += other.count
        self.total += other.total
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile (0 < p <= 100), nearest-rank, within one bucket."""
        if not self.count:
            return 0.0
        rank = max(1, math.ceil(p / 100.0 * self.count))
        seen = 0
        for index in sorted(self._buckets):
            seen += self._buckets[index]
            if seen >= rank:
                # Geometric middle of the bucket, clamped to what was really seen.
                value = math.exp((index + 0.5) * _LOG_GROWTH)
                return min(max(value, self.min), self.max)
        return self.max

    def linear_buckets(self, n: int = 10) -> list[tuple[float, int]]:
        """ghz-style histogram: ``n`` equal-width bins from fastest to slowest, as
        (upper bound, count) pairs."""
        if not self.count:
            return []
        lo, hi = self.min, self.max
        if hi <= lo:
            return [(hi, self.count)]
        width = (hi - lo) / n
        counts = [0] * n
        for index, c in self._buckets.items():
            value = min(max(math.exp((index + 0.5) * _LOG_GROWTH), lo), hi)
            counts[min(n - 1, int((value - lo) / width))] += c
        return [(lo + width * (i + 1), counts[i]) for i in range(n)]

    def summary(self) -> dict[str, float]:
        out = {
            "count": float(self.count),
            "mean": self.mean,
            "min": self.min if self.count else 0.0,
            "max": self.max,
        }
        for p in PERCENTILES:
            out[f"p{p:g}"] = self.percentile(p)
        return out


@dataclasses.dataclass
class MethodStats:
    """What happened to the calls of one RPC method."""

    latency: LatencyHistogram = dataclasses.field(default_factory=LatencyHistogram)
    codes: Counter[str] = dataclasses.field(default_factory=Counter)
    errors: Counter[str] = dataclasses.field(default_factory=Counter)
    #: Calls the server refused with a retry hint (shed load, sent again): by status code,
    #: and by message; not in ``latency``, ``codes`` nor the errors.
    shed_codes: Counter[str] = dataclasses.field(default_factory=Counter)
    shed_messages: Counter[str] = dataclasses.field(default_factory=Counter)

    def record(self, seconds: float, code: str, error: str | None = None) -> None:
        self.latency.record(seconds)
        self.codes[code] += 1
        if code != "OK":
            self.errors[f"{code}: {error or ''}".rstrip(": ")] += 1

    def record_shed(self, code: str, message: str | None = None) -> None:
        self.shed_codes[code] += 1
        self.shed_messages[f"{code}: {_reason(message)}".rstrip(": ")] += 1

    @property
    def shed_count(self) -> int:
        return sum(self.shed_codes.values())

    @property
    def error_count(self) -> int:
        return sum(c for code, c in self.codes.items() if code != "OK")


def _reason(message: str | None) -> str:
    """A refusal's message without its figures (waits, counts), so that refusals of one
    kind count together."""
    text = message or ""
    return "".join("#" if ch.isdigit() else ch for ch in text).replace("#.#", "#")[:160]


class Recorder:
    """Per-method statistics of one run, plus task (scenario unit) counts."""

    def __init__(self) -> None:
        self.methods: dict[str, MethodStats] = {}
        self.tasks_started = 0
        self.tasks_completed = 0
        self.tasks_failed = 0
        self.tasks_abandoned = 0  # cut by the end of the run (not errors)
        self.tasks_gave_up = 0  # refused (shed) more times in a row than the retries allow
        self.late_starts = 0  # open loop: tasks started > 10 ms behind schedule
        self.bot_moves = 0  # bot moves carried by successful responses (goodput)
        self.task_errors: Counter[str] = Counter()  # scenario-level problems (not RPC errors)
        # Of completed tasks only: their RPCs and the protobuf bytes of their requests and
        # responses (what a task costs on the wire, e.g. per complete game of ``play``).
        self.completed_rpcs = 0
        self.completed_bytes_sent = 0
        self.completed_bytes_received = 0
        # What the runner's meters (e.g. a server's CPU seconds) moved in the measured window.
        self.meters: dict[str, float] = {}

    def record(self, method: str, seconds: float, code: str, error: str | None = None) -> None:
        stats = self.methods.get(method)
        if stats is None:
            stats = self.methods[method] = MethodStats()
        stats.record(seconds, code, error)

    def record_shed(self, method: str, seconds: float, code: str, message: str | None = None) -> None:
        """A call refused with a retry hint (``seconds``: its round trip, not kept)."""
        stats = self.methods.get(method)
        if stats is None:
            stats = self.methods[method] = MethodStats()
        stats.record_shed(code, message)

    @property
    def shed_count(self) -> int:
        return sum(m.shed_count for m in self.methods.values())

    @property
    def rpc_count(self) -> int:
        return sum(m.latency.count for m in self.methods.values())

    @property
    def error_count(self) -> int:
        return sum(m.error_count for m in self.methods.values()) + sum(self.task_errors.values())

    def overall(self) -> LatencyHistogram:
        total = LatencyHistogram()
        for m in self.methods.values():
            total.merge(m.latency)
        return total


def build_report(recorder: Recorder, elapsed: float, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The run as plain data (what ``--json`` prints; :func:`format_report` renders it)."""
    overall = recorder.overall()
    codes: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    shed: Counter[str] = Counter()
    methods: dict[str, Any] = {}
    for name in sorted(recorder.methods):
        m = recorder.methods[name]
        codes.update(m.codes)
        errors.update(m.errors)
        shed.update(m.shed_messages)
        methods[name] = {
            **m.latency.summary(),
            "rate": m.latency.count / elapsed if elapsed > 0 else 0.0,
            "errors": m.error_count,
            "shed": m.shed_count,
            "status_codes": dict(sorted(m.codes.items())),
            "histogram": [[upper, count] for upper, count in m.latency.linear_buckets()],
        }
    errors.update({f"scenario: {k}": v for k, v in recorder.task_errors.items()})
    return {
        "settings": dict(settings),
        "elapsed_seconds": elapsed,
        "rpcs": recorder.rpc_count,
        "rate": recorder.rpc_count / elapsed if elapsed > 0 else 0.0,
        "errors": recorder.error_count,
        "shed": recorder.shed_count,
        "shed_rate": recorder.shed_count / elapsed if elapsed > 0 else 0.0,
        "bot_moves": recorder.bot_moves,
        "goodput": recorder.bot_moves / elapsed if elapsed > 0 else 0.0,
        "tasks": {
            "started": recorder.tasks_started,
            "completed": recorder.tasks_completed,
            "failed": recorder.tasks_failed,
            "gave_up": recorder.tasks_gave_up,
            "abandoned_at_end": recorder.tasks_abandoned,
            "late_starts": recorder.late_starts,
            "rate": recorder.tasks_completed / elapsed if elapsed > 0 else 0.0,
            "rpcs_per_completed": recorder.completed_rpcs / max(1, recorder.tasks_completed),
            "bytes_sent_per_completed": recorder.completed_bytes_sent / max(1, recorder.tasks_completed),
            "bytes_received_per_completed": recorder.completed_bytes_received
            / max(1, recorder.tasks_completed),
        },
        "latency": {**overall.summary(), "histogram": [[u, c] for u, c in overall.linear_buckets()]},
        "methods": methods,
        "status_codes": dict(sorted(codes.items())),
        "error_distribution": dict(errors.most_common()),
        "shed_distribution": dict(shed.most_common()),
    }


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _histogram_lines(rows: Iterable[Iterable[float]], indent: str = "  ") -> list[str]:
    rows = [(float(u), int(c)) for u, c in rows]
    if not rows:
        return []
    peak = max(c for _, c in rows) or 1
    return [f"{indent}{u * 1000:10.3f} [{c:>7}] |{'∎' * round(40 * c / peak)}" for u, c in rows]


def format_report(report: Mapping[str, Any]) -> str:
    """A human-readable report in the style of ghz's summary."""
    s = report["settings"]
    lat = report["latency"]
    tasks = report["tasks"]
    lines = ["", "Summary:"]
    lines.append(f"  Target:        {s.get('target', '?')}")
    desc = s.get("description") or s.get("scenario", "?")
    lines.append(f"  Scenario:      {desc}")
    load = (
        f"rate {s['rate']:g} tasks/s (open loop)" if s.get("rate") else f"concurrency {s.get('concurrency')}"
    )
    lines.append(f"  Load:          {load}, {s.get('connections', 1)} connection(s)")
    gave_up = tasks.get("gave_up", 0)
    lines.append(
        f"  Count:         {report['rpcs']} RPCs, {tasks['completed']} tasks completed"
        f" ({tasks['failed']} failed, {tasks['abandoned_at_end']} cut at the end"
        + (f", {gave_up} gave up after shed retries" if gave_up else "")
        + ")"
    )
    lines.append(f"  Total:         {report['elapsed_seconds']:.2f} s")
    lines.append(f"  Slowest:       {_ms(lat['max'])}")
    lines.append(f"  Fastest:       {_ms(lat['min'])}")
    lines.append(f"  Average:       {_ms(lat['mean'])}")
    lines.append(f"  Requests/sec:  {report['rate']:.2f}")
    lines.append(f"  Goodput:       {report.get('goodput', 0.0):.2f} bot moves/s")
    lines.append(
        f"  Shed:          {report.get('shed', 0)} calls refused with a retry hint"
        f" ({report.get('shed_rate', 0.0):.2f}/s; backed off and sent again, not errors)"
    )
    lines.append(f"  Tasks/sec:     {tasks['rate']:.2f}")
    if tasks["completed"]:
        wire = (tasks["bytes_sent_per_completed"] + tasks["bytes_received_per_completed"]) / 1024
        lines.append(
            f"  Per task:      {tasks['rpcs_per_completed']:.1f} RPCs, {wire:.1f} KiB of messages "
            f"({tasks['bytes_sent_per_completed'] / 1024:.1f} sent, "
            f"{tasks['bytes_received_per_completed'] / 1024:.1f} received; completed tasks)"
        )
    if tasks.get("late_starts"):
        lines.append(f"  Late starts:   {tasks['late_starts']} (generator could not keep the rate)")
    lines += ["", "Response time histogram (ms, all RPCs):"]
    lines += _histogram_lines(lat["histogram"])
    lines += ["", "Latency distribution (all RPCs):"]
    for p in PERCENTILES:
        lines.append(f"  {p:g} % in {_ms(lat[f'p{p:g}'])}")
    lines += ["", "Per RPC:"]
    header = (
        f"  {'method':<18}{'count':>8}{'rate/s':>9}{'mean':>10}{'p50':>10}{'p90':>10}"
        f"{'p95':>10}{'p99':>10}{'max':>10}{'errors':>8}{'shed':>8}"
    )
    lines.append(header)
    for name, m in report["methods"].items():
        cells = "".join(f"{m[k] * 1000:>10.2f}" for k in ("mean", "p50", "p90", "p95", "p99", "max"))
        lines.append(
            f"  {name:<18}{int(m['count']):>8}{m['rate']:>9.1f}{cells}{m['errors']:>8}{m.get('shed', 0):>8}"
        )
    lines.append("  (latencies in ms)")
    for name, m in report["methods"].items():
        lines += ["", f"Response time histogram (ms), {name}:"]
        lines += _histogram_lines(m["histogram"])
    lines += ["", "Status code distribution:"]
    for code, count in report["status_codes"].items():
        lines.append(f"  [{code}]   {count} responses")
    if report["error_distribution"]:
        lines += ["", "Error distribution:"]
        for message, count in report["error_distribution"].items():
            lines.append(f"  [{count}]   {message}")
    if report.get("shed_distribution"):
        lines += ["", "Shed (refused with a retry hint, sent again):"]
        for message, count in report["shed_distribution"].items():
            lines.append(f"  [{count}]   {message}")
    return "\n".join(lines) + "\n"


def codes_table(
    codes: Mapping[str, Mapping[str, int]], methods: Sequence[str] | None = None, totals: bool = False
) -> str:
    """Status codes per method as a Markdown table: a row per method (``methods`` in that
    order, else sorted), a column per code (OK first) and their total; ``totals`` adds a
    row "all". For the benches that count codes themselves (a burst, a fuzzer)."""
    names = sorted({c for counter in codes.values() for c in counter}, key=lambda c: (c != "OK", c))
    counts = {method: codes.get(method, {}) for method in (methods or sorted(codes))}
    if totals:
        every: Counter[str] = Counter()
        for counter in codes.values():
            every.update(counter)
        counts["all"] = every
    head = ["method", *names, "total"]
    rows = [
        [method, *(str(counter.get(c, 0)) for c in names), str(sum(counter.values()))]
        for method, counter in counts.items()
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join(lines)
