#!/usr/bin/env bash
# The container image, built and run by CI (`make image-check`, called from .ci/run):
#   1. podman, runc and debootstrap from Debian when missing (apt-get; needs root; about
#      half a minute);
#   2. the Dockerfile's base images: made from Debian's packages when missing or out of date
#      (scripts/image_bases.sh, a stand-in for the official Python images; a few minutes the
#      first time, then kept in the local image store);
#   3. `podman build --isolation chroot --pull=never` (the builder compiles engine/ and the
#      search with mypyc: a few minutes; unchanged sources reuse the cached layers);
#   4. scripts/image_check.py: the image's user, no compiler, a lean virtualenv, health, an
#      Aton game against mcts:medium, and a drain on SIGTERM, in a runc container on
#      127.0.0.1.
# Each step is bounded in time (timeout). See docs/operations.md, "The image check".
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
IMAGE=${IMAGE:-heka:check}

step() { echo "== $1 ($(date -u +%T))"; }

missing=()
for tool in podman runc debootstrap; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]} from Debian"
    if [ "$(id -u)" -ne 0 ]; then
        echo "image-check: ${missing[*]} missing; run as root to install them (apt-get)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    timeout 300 apt-get update -q >/dev/null
    timeout 600 apt-get install -y -q podman runc debootstrap >/dev/null
fi
podman --version
runc --version | head -1

step "base images"
timeout 1200 bash scripts/image_bases.sh

step "podman build $IMAGE"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! timeout 1800 podman build --isolation chroot --pull=never --runtime runc --tag "$IMAGE" . >"$log" 2>&1; then
    tail -60 "$log" >&2
    echo "image-check: podman build failed" >&2
    exit 1
fi
grep -E '^(STEP|COMMIT)|--> Using cache' "$log" || true
echo "$IMAGE: $(podman image inspect --format '{{.Size}}' "$IMAGE" | numfmt --to=si)B"

step "checks in the container"
timeout 600 "$BIN/python" scripts/image_check.py --image "$IMAGE"
