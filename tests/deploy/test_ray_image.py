"""The RayJob's image, k8s/ray/Dockerfile (docs/ray.md, "The image"), without a container engine:
one Ray release pinned alike in the manifest (``rayVersion``), the image (``RAY_VERSION``) and
the docs; the image heka's own, at heka's version, with Ray in its virtualenv; hadolint-clean.
Needs PyYAML (the ops extra, or the ray extra); hadolint for the lint (the ops extra)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from typing import Any

import pytest
from deploy_helpers import DOCKERFILE, ROOT, global_args, parse_dockerfile, require_tool, stage_named

yaml = pytest.importorskip("yaml", reason="needs PyYAML (the ops extra: make ops-check)")

RAY_DOCKERFILE = ROOT / "k8s/ray/Dockerfile"
MANIFEST = ROOT / "k8s/ray/rayjob-ladder.yaml"
DOCS = ROOT / "docs/ray.md"


def heka_version() -> str:
    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def manifest() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(MANIFEST.read_text())
    return doc


def pod_specs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    cluster = doc["spec"]["rayClusterSpec"]
    groups = [cluster["headGroupSpec"], *cluster["workerGroupSpecs"]]
    return [g["template"]["spec"] for g in groups]


def image_ray_version() -> str:
    """The Ray release the image installs: the builder's ``ARG RAY_VERSION`` default."""
    builder = stage_named(parse_dockerfile(RAY_DOCKERFILE.read_text()), "builder")
    (arg,) = [i.value for i in builder.all("ARG") if i.value.startswith("RAY_VERSION=")]
    return arg.partition("=")[2]


def test_the_manifest_the_image_and_the_docs_pin_one_ray_release() -> None:
    pinned = manifest()["spec"]["rayClusterSpec"]["rayVersion"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", pinned), pinned
    assert image_ray_version() == pinned
    docs = DOCS.read_text()
    named = set(re.findall(r"ray\[default\]==([\w.]+)", docs))
    assert named == {pinned}, f"docs/ray.md names ray[default]=={named}, the manifest {pinned}"
    # The ray extra of heka (what `pip install 'heka[ray]'` accepts) admits that release.
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["ray"]
    (floor,) = [m[1] for m in (re.fullmatch(r"ray>=([\d.]+)", r) for r in extra) if m]
    assert release(floor) <= release(pinned)


def release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_the_manifest_runs_the_image_that_the_docs_build_at_heka_s_version() -> None:
    image = f"heka-ray:{heka_version()}"
    images = {c["image"] for spec in pod_specs(manifest()) for c in spec["containers"]}
    assert images == {image}
    assert global_args(RAY_DOCKERFILE.read_text())["HEKA_IMAGE"] == f"heka:{heka_version()}"
    docs = DOCS.read_text()
    assert f"podman build -t heka:{heka_version()} . " in docs
    assert f"podman build -t {image} k8s/ray " in docs and f"podman push REGISTRY/{image}" in docs


def test_the_image_adds_ray_to_heka_s_virtualenv_on_heka_s_python_release() -> None:
    stages = parse_dockerfile(RAY_DOCKERFILE.read_text())
    assert stages[0].base == "${HEKA_IMAGE}" and stages[0].name == "heka"
    # Ray is installed by the root Dockerfile's builder base into a copy of heka's virtualenv:
    # the same interpreter path, and pip, which heka's runtime has not.
    builder = stage_named(stages, "builder")
    assert builder.base == stage_named(parse_dockerfile(DOCKERFILE.read_text()), "builder").base
    assert [i.value for i in builder.all("COPY")] == ["--from=heka /opt/heka /opt/heka"]
    (install,) = builder.all("RUN")
    assert '--python /opt/heka/bin/python install --no-cache-dir "ray[default]==${RAY_VERSION}"' in " ".join(
        install.value.replace("\\\n", " ").split()
    )
    assert "ray.__version__ == '${RAY_VERSION}'" in install.value
    # And what `heka train --ray`'s workers run: learn/ (in heka's image) and numpy.
    assert '"numpy==${NUMPY_VERSION}"' in install.value and "learn.train" in install.value
    assert "COPY learn/ learn/" in DOCKERFILE.read_text()
    # The final image: heka's, with that virtualenv, wget (KubeRay's probes), non-root as heka's.
    runtime = stages[-1]
    assert runtime.base == "heka"
    assert [i.value for i in runtime.all("COPY")] == ["--from=builder /opt/heka /opt/heka"]
    assert any("apt-get install -y --no-install-recommends wget" in i.value for i in runtime.all("RUN"))
    heka_user = parse_dockerfile(DOCKERFILE.read_text())[-1].all("USER")[-1].value
    assert runtime.all("USER")[-1].value == heka_user == "10001:10001"
    assert runtime.env()["HOME"] == "/tmp"
    head = manifest()["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["securityContext"]
    user, group = (int(x) for x in heka_user.split(":"))
    assert (head["runAsUser"], head["runAsGroup"], head["fsGroup"]) == (user, group, group)


def test_hadolint_passes_on_the_ray_dockerfile() -> None:
    hadolint = require_tool("hadolint")
    result = subprocess.run(
        [hadolint, "--failure-threshold", "info", str(RAY_DOCKERFILE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
