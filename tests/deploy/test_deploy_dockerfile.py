"""The Dockerfile: hadolint-clean, multi-stage on one pinned slim base, non-root, exec-form
``heka serve`` entrypoint, both ports exposed, HEKA_* defaults, a writable metrics dir."""

from __future__ import annotations

import re
import subprocess

import pytest
from deploy_helpers import DOCKERFILE, ROOT, parse_dockerfile, require_tool, resolved_env, stage_named


@pytest.fixture(scope="module")
def stages():
    return parse_dockerfile(DOCKERFILE.read_text())


def test_hadolint_passes():
    hadolint = require_tool("hadolint")
    result = subprocess.run(
        [hadolint, "--failure-threshold", "info", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_would_catch_a_bad_dockerfile(tmp_path):
    """The lint step can fail: an unpinned base and a shell-form entrypoint are flagged."""
    hadolint = require_tool("hadolint")
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install heka\nENTRYPOINT heka serve\n")
    result = subprocess.run([hadolint, str(bad)], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "DL3006" in result.stdout  # untagged image


def _external_base(stages, stage):
    names = {s.name: s for s in stages if s.name}
    while stage.base in names:
        stage = names[stage.base]
    return stage.base


def test_runtime_on_a_pinned_slim_base_builder_on_the_same_release(stages):
    # The runtime: an exact patch release of a slim Debian image, e.g. python:3.11.11-slim-bookworm.
    runtime = _external_base(stages, stages[-1])
    match = re.fullmatch(r"python:(3\.\d+\.\d+)-slim-([a-z]+)(@sha256:[0-9a-f]{64})?", runtime)
    assert match, runtime
    release, debian = match.group(1), match.group(2)
    # The builder compiles (mypyc, gcc): the full image of the same Python release and Debian,
    # or the runtime's own base; nothing else.
    builder = _external_base(stages, stage_named(stages, "builder"))
    full = re.fullmatch(rf"python:{re.escape(release)}-{debian}(@sha256:[0-9a-f]{{64}})?", builder)
    assert builder == runtime or full, builder
    external = {_external_base(stages, s) for s in stages}
    assert external <= {runtime, builder}, external


def test_the_builder_compiles_and_the_runtime_has_no_compiler(stages):
    builder = stage_named(stages, "builder")
    runs = " ".join(i.value for i in builder.all("RUN"))
    assert "HEKA_COMPILE=1" in runs, "the image's wheel is the compiled build (setup.py)"
    assert "setup.py" in " ".join(i.value for i in builder.all("COPY"))
    runtime_base = _external_base(stages, stages[-1])
    assert "-slim-" in runtime_base  # no gcc in the slim image; the runtime stage installs nothing
    for ins in stages[-1].all("RUN"):
        assert not re.search(r"\b(gcc|cc|build-essential|clang)\b", ins.value), ins.value


def test_multi_stage_runtime_copies_only_the_virtualenv(stages):
    assert len(stages) >= 3
    runtime = stages[-1]
    copies = runtime.all("COPY")
    assert copies, "the runtime stage copies the built virtualenv"
    for ins in copies:
        assert ins.value.startswith("--from=builder "), ins.value  # nothing from the context
    assert "/opt/heka" in copies[0].value
    # No build tooling or wheel builds in the final stage (removing pip is no use of it).
    for ins in runtime.all("RUN"):
        assert not re.search(r"\bpip3?\s+(install|wheel)|-m\s+pip\b|apt-get", ins.value), ins.value
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
    # Reached from outside the container: every address (the server's default is localhost).
    assert env["HEKA_HOST"] == "[::]"


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
