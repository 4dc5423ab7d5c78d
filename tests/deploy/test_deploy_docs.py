"""docs/operations.md stays true: the settings, metrics, files and flags it names exist."""

from __future__ import annotations

import re
from pathlib import Path

from deploy_helpers import load_manifests
from test_deploy_manifests import SERVICE_METRICS

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "operations.md").read_text()


def test_every_variable_named_is_a_real_setting():
    from service import config

    # retired ones are named to say so; the build reads two variables before any setting
    # (engine/_build.py, setup.py), and ai/learned.py the model directory
    outside_config = {"HEKA_PURE_PYTHON", "HEKA_COMPILE", "HEKA_MODEL_DIR"}
    known = {s.env for s in config.SETTINGS} | set(config.RETIRED) | outside_config
    named = set(re.findall(r"\bHEKA_[A-Z_]+[A-Z]\b", DOC))
    assert named - known == set()
    assert len(named) >= 20


def test_every_metric_is_documented():
    for metric in SERVICE_METRICS:
        assert f"`{metric}`" in DOC, metric


def test_files_named_exist():
    for path in set(
        re.findall(r"`((?:k8s|scripts|bench|tests/deploy|service/loadtest)/[\w./-]+\.\w+)`", DOC)
    ):
        assert (ROOT / path).exists(), path
    for name in re.findall(r"^\| `([\w.-]+\.(?:yaml|json))` \|", DOC, flags=re.M):
        assert (ROOT / "k8s" / name).exists(), name


def test_loadtest_flags_named_exist():
    from service import cli

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    loadtest = sub.choices["loadtest"]
    flags = {opt for action in loadtest._actions for opt in action.option_strings}
    section = DOC[DOC.index("## Load testing") : DOC.index("**Beyond one machine")]
    for flag in set(re.findall(r"(--[a-z][a-z-]+)", section)):
        assert flag in flags, flag


def test_no_placeholder_left():
    assert "PLACEHOLDER" not in DOC


def test_the_configmap_table_is_the_configmap() -> None:
    """The table of "Configure" lists every key k8s/configmap.yaml sets, with its value, and no other."""
    configmap = next(doc for _, doc in load_manifests() if doc.get("kind") == "ConfigMap")
    data = configmap["data"]
    assert isinstance(data, dict)
    table = DOC.split("| Variable | ConfigMap | Why |\n", 1)[1].split("\n\n", 1)[0]
    documented: dict[str, str] = {}
    for row in table.splitlines()[1:]:
        names, values = (cell.strip() for cell in row.strip("|").split("|")[:2])
        pairs = list(zip(re.findall(r"`(HEKA_\w+)`", names), re.findall(r"`([^`]*)`", values), strict=True))
        assert pairs, row
        documented.update(pairs)
    assert documented == {key: str(value) for key, value in data.items()}
