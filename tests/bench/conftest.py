"""The bench smoke runs (``bench_smoke`` marker: every bench script in its smallest
configuration, a few minutes) are left out of a run unless ``-m`` names them: `make
bench-smoke` runs them, `make test` stays within its budget. The left-out tests are reported
as deselected, never as passed."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "bench_smoke" in (config.getoption("markexpr") or ""):
        return  # -m decides
    smoke = [item for item in items if item.get_closest_marker("bench_smoke")]
    if smoke:
        config.hook.pytest_deselected(items=smoke)
        items[:] = [item for item in items if not item.get_closest_marker("bench_smoke")]
