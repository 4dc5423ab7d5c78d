"""Generate the Grafana dashboard: ``python scripts/gen_grafana_dashboard.py > k8s/grafana-dashboard.json``.

The dashboard is data; this script keeps its PromQL consistent (one selector, one rate
interval). tests/deploy checks that the committed JSON is what this script prints and that
every query uses only metrics that service/metrics.py exports.
"""

# ruff: noqa: E501 - PromQL reads best unwrapped

from __future__ import annotations

import json
from typing import Any

DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'namespace=~"$namespace", job=~"$job"'
# RPC panels show the game service only (kubelet health probes and reflection have their own grpc_service).
RSEL = SEL + ', grpc_service="heka.v1.GameService"'
RI = "$__rate_interval"
H = "heka_grpc_server_handled_total"


class Layout:
    """Panels on Grafana's 24-column grid, top to bottom."""

    def __init__(self) -> None:
        self.panels: list[dict[str, Any]] = []
        self.y = 0

    def _id(self) -> int:
        return len(self.panels) + 1

    def row(self, title: str) -> None:
        self.panels.append(
            {
                "type": "row",
                "title": title,
                "id": self._id(),
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
                "panels": [],
            }
        )
        self.y += 1

    def timeseries(
        self,
        title: str,
        targets: list[tuple[str, str]],
        *,
        unit: str = "short",
        x: int = 0,
        w: int = 12,
        h: int = 8,
        desc: str = "",
    ) -> None:
        self.panels.append(
            {
                "type": "timeseries",
                "title": title,
                "id": self._id(),
                "datasource": DS,
                "description": desc,
                "gridPos": {"h": h, "w": w, "x": x, "y": self.y},
                "fieldConfig": {
                    "defaults": {
                        "unit": unit,
                        "custom": {
                            "drawStyle": "line",
                            "lineWidth": 1,
                            "fillOpacity": 10,
                            "showPoints": "never",
                            "stacking": {"mode": "none", "group": "A"},
                        },
                    },
                    "overrides": [],
                },
                "options": {
                    "legend": {
                        "displayMode": "table",
                        "placement": "bottom",
                        "calcs": ["mean", "max", "lastNotNull"],
                    },
                    "tooltip": {"mode": "multi", "sort": "desc"},
                },
                "targets": [
                    {"datasource": DS, "refId": chr(65 + i), "expr": expr, "legendFormat": legend}
                    for i, (expr, legend) in enumerate(targets)
                ],
            }
        )

    def stat(
        self, title: str, expr: str, *, unit: str, x: int, w: int = 6, h: int = 4, desc: str = ""
    ) -> None:
        self.panels.append(
            {
                "type": "stat",
                "title": title,
                "id": self._id(),
                "datasource": DS,
                "description": desc,
                "gridPos": {"h": h, "w": w, "x": x, "y": self.y},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "options": {
                    "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "value",
                    "graphMode": "area",
                },
                "targets": [{"datasource": DS, "refId": "A", "expr": expr, "legendFormat": title}],
            }
        )

    def next_line(self, h: int = 8) -> None:
        self.y += h


def build() -> dict[str, Any]:
    g = Layout()
    g.row("Overview")
    g.stat("RPC rate", f"sum(rate({H}{{{RSEL}}}[{RI}]))", unit="reqps", x=0)
    g.stat(
        "Error ratio (non-OK)",
        f'sum(rate({H}{{{RSEL}, grpc_code!="OK"}}[{RI}])) / clamp_min(sum(rate({H}{{{RSEL}}}[{RI}])), 1e-9)',
        unit="percentunit",
        x=6,
        desc="Share of RPCs that ended with a status other than OK (client errors included).",
    )
    g.stat(
        "p99 latency (all RPCs)",
        f"histogram_quantile(0.99, sum by (le) (rate(heka_grpc_server_handling_seconds_bucket{{{RSEL}}}[{RI}])))",
        unit="s",
        x=12,
    )
    g.stat("Searches in flight", f"sum(heka_searches_in_flight{{{SEL}}})", unit="short", x=18)
    g.next_line(4)

    g.row("RPCs")
    g.timeseries(
        "RPC rate by method",
        [(f"sum by (grpc_method) (rate({H}{{{RSEL}}}[{RI}]))", "{{grpc_method}}")],
        unit="reqps",
    )
    g.timeseries(
        "Errors by method and code",
        [
            (
                f'sum by (grpc_method, grpc_code) (rate({H}{{{RSEL}, grpc_code!="OK"}}[{RI}]))',
                "{{grpc_method}} {{grpc_code}}",
            )
        ],
        unit="reqps",
        x=12,
        desc="Non-OK statuses. INVALID_ARGUMENT / FAILED_PRECONDITION are client mistakes; RESOURCE_EXHAUSTED means search admission control rejected work; UNAVAILABLE / INTERNAL / DEADLINE_EXCEEDED are the ones to page on.",
    )
    g.next_line()
    for i, q in enumerate(("0.5", "0.9", "0.99")):
        g.timeseries(
            f"Latency p{round(float(q) * 100)} by method",
            [
                (
                    f"histogram_quantile({q}, sum by (le, grpc_method) (rate(heka_grpc_server_handling_seconds_bucket{{{RSEL}}}[{RI}])))",
                    "{{grpc_method}}",
                )
            ],
            unit="s",
            x=8 * i,
            w=8,
        )
    g.next_line()
    g.timeseries(
        "Mean latency by method",
        [
            (
                f"sum by (grpc_method) (rate(heka_grpc_server_handling_seconds_sum{{{RSEL}}}[{RI}])) / sum by (grpc_method) (rate(heka_grpc_server_handling_seconds_count{{{RSEL}}}[{RI}]))",
                "{{grpc_method}}",
            )
        ],
        unit="s",
    )
    g.timeseries(
        "RPCs in progress",
        [
            (
                f"sum by (grpc_method) (heka_grpc_server_started_total{{{RSEL}}}) - sum by (grpc_method) ({H}{{{RSEL}}})",
                "{{grpc_method}}",
            )
        ],
        x=12,
        desc="Started minus handled, per method.",
    )
    g.next_line()

    g.row("Searches (bots)")
    g.timeseries(
        "Searches in flight / rejected",
        [
            (f"sum(heka_searches_in_flight{{{SEL}}})", "in flight"),
            (f"sum by (reason) (rate(heka_searches_rejected_total{{{SEL}}}[{RI}]))", "rejected/s {{reason}}"),
            (f"sum(heka_search_queue_length{{{SEL}}})", "queued"),
            (
                f"histogram_quantile(0.99, sum by (le) (rate(heka_search_queue_wait_seconds_bucket{{{SEL}}}[{RI}])))",
                "queue wait p99 (s)",
            ),
        ],
    )
    g.timeseries(
        "Searches per second by game and bot",
        [(f"sum by (game, bot) (rate(heka_searches_total{{{SEL}}}[{RI}]))", "{{game}} {{bot}}")],
        unit="ops",
        x=12,
    )
    g.next_line()
    g.timeseries(
        "Search duration p50 / p99",
        [
            (
                f"histogram_quantile(0.5, sum by (le, game, bot) (rate(heka_search_duration_seconds_bucket{{{SEL}}}[{RI}])))",
                "p50 {{game}} {{bot}}",
            ),
            (
                f"histogram_quantile(0.99, sum by (le, game, bot) (rate(heka_search_duration_seconds_bucket{{{SEL}}}[{RI}])))",
                "p99 {{game}} {{bot}}",
            ),
        ],
        unit="s",
    )
    g.timeseries(
        "Search iterations",
        [
            (
                f"sum by (game, bot) (rate(heka_search_iterations_total{{{SEL}}}[{RI}])) / clamp_min(sum by (game, bot) (rate(heka_searches_total{{{SEL}}}[{RI}])), 1e-9)",
                "per search {{game}} {{bot}}",
            ),
            (
                f"sum by (game, bot) (rate(heka_search_iterations_total{{{SEL}}}[{RI}])) / clamp_min(sum by (game, bot) (rate(heka_search_duration_seconds_sum{{{SEL}}}[{RI}])), 1e-9)",
                "per second of search {{game}} {{bot}}",
            ),
            (
                # Worlds drawn uniformly because a belief model's weights were unusable: 0.
                f"sum by (game, bot) (rate(heka_belief_fallbacks_total{{{SEL}}}[{RI}]))",
                "belief fallbacks per second {{game}} {{bot}}",
            ),
        ],
        x=12,
    )
    g.next_line()

    g.row("Reviews")
    g.timeseries(
        "Reviews in flight / refused",
        [
            (f"sum(heka_reviews_in_flight{{{SEL}}})", "in flight"),
            (f"sum by (reason) (rate(heka_reviews_refused_total{{{SEL}}}[{RI}]))", "refused/s {{reason}}"),
            (
                f"histogram_quantile(0.9, sum by (le, game) (rate(heka_review_duration_seconds_bucket{{{SEL}}}[{RI}])))",
                "review p90 (s) {{game}}",
            ),
        ],
    )
    g.timeseries(
        "Moves reviewed per second by grade",
        [(f"sum by (game, grade) (rate(heka_review_moves_total{{{SEL}}}[{RI}]))", "{{game}} {{grade}}")],
        unit="ops",
        x=12,
    )
    g.next_line()

    g.row("Games")
    g.timeseries(
        "Games created / finished",
        [
            (f"sum by (game) (rate(heka_games_created_total{{{SEL}}}[{RI}]))", "created {{game}}"),
            (
                f"sum by (game, outcome) (rate(heka_games_finished_total{{{SEL}}}[{RI}]))",
                "finished {{game}} {{outcome}}",
            ),
        ],
        unit="ops",
    )
    g.timeseries(
        "Actions applied and invalid requests",
        [
            (f"sum by (game) (rate(heka_actions_applied_total{{{SEL}}}[{RI}]))", "actions {{game}}"),
            (f"sum by (reason) (rate(heka_invalid_requests_total{{{SEL}}}[{RI}]))", "invalid {{reason}}"),
        ],
        unit="ops",
        x=12,
    )
    g.next_line()

    g.row("Pods (cAdvisor)")
    g.timeseries(
        "CPU by pod",
        [
            (
                f'sum by (pod) (rate(container_cpu_usage_seconds_total{{namespace=~"$namespace", container="heka"}}[{RI}]))',
                "{{pod}}",
            )
        ],
        desc="Cores used. The HPA targets 70% of the request.",
    )
    g.timeseries(
        "Memory (working set) by pod",
        [
            (
                'sum by (pod) (container_memory_working_set_bytes{namespace=~"$namespace", container="heka"})',
                "{{pod}}",
            )
        ],
        unit="bytes",
        x=12,
    )
    g.next_line()

    variable = {"includeAll": True, "allValue": ".*", "multi": True, "refresh": 2, "current": {}, "hide": 0}
    return {
        "title": "heka",
        "uid": "heka-service",
        "tags": ["heka", "grpc"],
        "timezone": "utc",
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "description": "heka gRPC game service: RPCs by method, latency percentiles, MCTS searches, games.",
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "type": "datasource",
                    "query": "prometheus",
                    "label": "Data source",
                    "current": {},
                    "hide": 0,
                    "refresh": 1,
                },
                {
                    "name": "namespace",
                    "type": "query",
                    "datasource": DS,
                    "label": "Namespace",
                    "query": {
                        "query": "label_values(heka_grpc_server_started_total, namespace)",
                        "refId": "ns",
                    },
                    "definition": "label_values(heka_grpc_server_started_total, namespace)",
                    **variable,
                },
                {
                    "name": "job",
                    "type": "query",
                    "datasource": DS,
                    "label": "Job",
                    "query": {
                        "query": 'label_values(heka_grpc_server_started_total{namespace=~"$namespace"}, job)',
                        "refId": "job",
                    },
                    "definition": 'label_values(heka_grpc_server_started_total{namespace=~"$namespace"}, job)',
                    **variable,
                },
            ]
        },
        "annotations": {"list": []},
        "panels": g.panels,
    }


if __name__ == "__main__":
    print(json.dumps(build(), indent=2))
