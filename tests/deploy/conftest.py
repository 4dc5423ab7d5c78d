"""The deploy smoke (``deploy_smoke`` marker: it builds a virtualenv from the package index,
minutes) is left out of a run unless ``-m`` names it: `make deploy-smoke` runs it, `make test`
stays within its budget. The left-out tests are reported as deselected, never as passed."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "deploy_smoke" in (config.getoption("markexpr") or ""):
        return  # -m decides
    smoke = [item for item in items if item.get_closest_marker("deploy_smoke")]
    if smoke:
        config.hook.pytest_deselected(items=smoke)
        items[:] = [item for item in items if not item.get_closest_marker("deploy_smoke")]
