"""pytest's hooks for the whole suite, at the repository root (on ``sys.path`` already: a
conftest.py in tests/ would put tests/ there from the start, and its folders would import as
packages of their names).

Opt-in test groups: the deploy smoke (``deploy_smoke``: a virtualenv from the package index)
and the bench smoke runs (``bench_smoke``: every bench script), minutes each, are left out of a
run unless ``-m`` names their marker: `make deploy-smoke` and `make bench-smoke` run them, and
`make test` stays within its budget. The left-out tests are reported as deselected, never as
passed.

The checkout's ``heka-results/``, where the commands write by default, is the user's: a run that
adds, changes or removes anything there fails, naming what (a test writes under its own
temporary folder: ``--json``, ``--ratings``, ``--out``, or ``monkeypatch.chdir(tmp_path)``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from service.commands.outputs import RESULTS_DIR

#: Markers whose tests run only when ``-m`` names them.
OPT_IN = ("deploy_smoke", "bench_smoke")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    asked = config.getoption("markexpr") or ""
    left_out = [m for m in OPT_IN if m not in asked]  # -m decides for the markers it names
    out = [item for item in items if any(item.get_closest_marker(m) for m in left_out)]
    if out:
        config.hook.pytest_deselected(items=out)
        items[:] = [item for item in items if item not in out]


#: The checkout's default output folder (a test runs from the repository root).
RESULTS = Path(__file__).resolve().parent / RESULTS_DIR
_BEFORE = pytest.StashKey[dict[str, tuple[int, int]]]()


def _results_snapshot() -> dict[str, tuple[int, int]]:
    """Every entry under the checkout's ``heka-results/``: its size and modification time."""
    out: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(RESULTS):
        for name in dirs + files:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, RESULTS)] = (st.st_size, st.st_mtime_ns) if name in files else (0, 0)
    if RESULTS.exists():
        out["."] = (0, 0)
    return out


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the run's own process, not an xdist worker
        session.config.stash[_BEFORE] = _results_snapshot()


def pytest_sessionfinish(session: pytest.Session) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    after = _results_snapshot()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if changed:
        shown = ", ".join(changed[:10]) + (f" and {len(changed) - 10} more" if len(changed) > 10 else "")
        session.config.get_terminal_writer().line(
            f"\nthe tests wrote into the checkout's {RESULTS_DIR}/ (a test writes under its own "
            f"temporary folder): {shown}",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
