"""pytest's hooks for the whole suite, at the repository root (on ``sys.path`` already: a
conftest.py in tests/ would put tests/ there from the start, and its folders would import as
packages of their names).

Opt-in test groups: the deploy smoke (``deploy_smoke``: a virtualenv from the package index)
and the bench smoke runs (``bench_smoke``: every bench script), minutes each, are left out of a
run unless ``-m`` names their marker: `make deploy-smoke` and `make bench-smoke` run them, and
`make test` stays within its budget. The left-out tests are reported as deselected, never as
passed."""

from __future__ import annotations

import pytest

#: Markers whose tests run only when ``-m`` names them.
OPT_IN = ("deploy_smoke", "bench_smoke")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    asked = config.getoption("markexpr") or ""
    left_out = [m for m in OPT_IN if m not in asked]  # -m decides for the markers it names
    out = [item for item in items if any(item.get_closest_marker(m) for m in left_out)]
    if out:
        config.hook.pytest_deselected(items=out)
        items[:] = [item for item in items if item not in out]
