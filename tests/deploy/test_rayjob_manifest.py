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
