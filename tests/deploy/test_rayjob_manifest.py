"""k8s/ray/rayjob-ladder.yaml against the vendored KubeRay RayJob CRD's openAPIV3Schema
(k8s/ray/crd/), strictly: an unknown field is refused, as the API server's strict field
validation does. Needs jsonschema and PyYAML (the ops extra, or the ray extra)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="needs jsonschema (the ops extra: make ops-check)")
yaml = pytest.importorskip("yaml", reason="needs PyYAML (the ops extra: make ops-check)")

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "k8s/ray/crd/ray.io_rayjobs.yaml"
MANIFEST = ROOT / "k8s/ray/rayjob-ladder.yaml"


def strict(schema: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object that lists its
    properties and does not keep unknown fields."""
    if isinstance(schema, dict):
        out = {k: strict(v) for k, v in schema.items()}
        keeps = out.get("x-kubernetes-preserve-unknown-fields") or "additionalProperties" in out
        if "properties" in out and not keeps:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


@functools.cache
def crd() -> Any:
    return yaml.load(CRD.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def validate(doc: dict[str, Any]) -> None:
    crd_doc = crd()
    group, kind = crd_doc["spec"]["group"], crd_doc["spec"]["names"]["kind"]
    version = doc["apiVersion"].partition("/")[2]
    assert doc["apiVersion"].partition("/")[0] == group and doc["kind"] == kind
    (served,) = [v for v in crd_doc["spec"]["versions"] if v["name"] == version and v["served"]]
    schema = strict(served["schema"]["openAPIV3Schema"])
    schema["properties"]["metadata"] = {"type": "object"}
    jsonschema.validate(doc, schema)


def test_the_rayjob_manifest_matches_the_crd() -> None:
    validate(yaml.safe_load(MANIFEST.read_text()))


@pytest.mark.parametrize(
    ("path", "value"),
    [(("spec", "entrypont"), "heka"), (("spec", "shutdownAfterJobFinishes"), "yes"),
     (("spec", "rayClusterSpec", "workerGroupSpecs"), {"groupName": "games"})],
)  # fmt: skip
def test_the_check_refuses_a_misspelt_field_or_a_wrong_type(path: tuple[str, ...], value: Any) -> None:
    doc = copy.deepcopy(yaml.safe_load(MANIFEST.read_text()))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def test_the_ray_cluster_runs_with_token_authentication() -> None:
    """Secure by default (docs/ray.md, "Security"): the cluster's ports take only calls with
    its token, which KubeRay keeps in a Secret (authOptions, Ray 2.52 and KubeRay 1.5.1)."""
    spec = yaml.safe_load(MANIFEST.read_text())["spec"]["rayClusterSpec"]
    assert spec["authOptions"] == {"mode": "token"}
    major, minor = (int(x) for x in spec["rayVersion"].split(".")[:2])
    assert (major, minor) >= (2, 52)


def test_the_entrypoint_needs_no_shell_and_resumes_from_its_json() -> None:
    """KubeRay runs the entrypoint from a submitter pod that has no results volume: a shell
    test of the file there never found it, and a rerun started over and overwrote the earlier
    games. The arena's own ``--resume`` (no PATH: the --json file, if there is one) does it."""
    import shlex

    entrypoint = yaml.safe_load(MANIFEST.read_text())["spec"]["entrypoint"]
    assert not any(c in entrypoint for c in "$`&|;<>()"), "a shell construct in the entrypoint"
    words = shlex.split(entrypoint)
    at = words.index("--resume")
    assert at + 1 == len(words) or words[at + 1].startswith("--"), "--resume takes the --json file"
    assert words[words.index("--json") + 1].startswith("/results/")


def test_the_ray_pods_are_locked_down_like_the_servers() -> None:
    """The pods run code a token holder submits, and the submitter holds the token: not as
    root, no privilege escalation, no capabilities, no Kubernetes API token, as the server's
    Deployment. Every pod the RayJob makes has its template here (KubeRay's default
    submitter template sets none of it)."""
    job = yaml.safe_load(MANIFEST.read_text())["spec"]
    spec = job["rayClusterSpec"]
    pods = [spec["headGroupSpec"]["template"]["spec"], job["submitterPodTemplate"]["spec"]]
    pods += [group["template"]["spec"] for group in spec["workerGroupSpecs"]]
    for pod in pods:
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"] == {"drop": ["ALL"]}
