#!/usr/bin/env bash
# Stand-ins for the official Python images that the Dockerfile's FROM lines name, made from
# Debian's own packages where no image registry is reachable (`make image-check`; see
# docs/operations.md, "The image check"). Each FROM image is made once and kept in the local
# image store; it is made again only when this script changes (its hash is the image's
# heka.stand-in label) or when it is missing.
#
#   python:<X.Y.Z>-slim-<suite>  the runtime's base: Debian <suite> (debootstrap minbase) with
#                                its python3 and `python`; no compiler, no pip.
#   python:<X.Y.Z>-<suite>       the builder's base: the same plus gcc, the Python headers,
#                                pip and venv, and this machine's extra CA certificates
#                                (/usr/local/share/ca-certificates) so that pip reaches the
#                                package index through the same egress as this machine.
#
# Debian's python3 is the suite's release (3.11.x on bookworm), not the exact patch release of
# the tag: the tags are names for the FROM lines, the minor version is what must match.
# Needs root, debootstrap, podman and Debian's mirror; takes a few minutes the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${HEKA_IMAGE_CACHE:-/var/cache/heka-image}
RECIPE=$(sha256sum "$0" | cut -c1-16)

# The external FROM images of the Dockerfile (stage names are not images).
mapfile -t bases < <(awk 'toupper($1)=="FROM" {print $2}' Dockerfile | sort -u | grep -v -x -F \
    -f <(awk 'toupper($1)=="FROM" && toupper($3)=="AS" {print $4}' Dockerfile))

slim_packages=python3,python-is-python3
build_packages=$slim_packages,python3-dev,python3-pip,python3-venv,gcc,libc6-dev,ca-certificates

current() {  # whether image $1 exists and was made by this recipe
    [ "$(podman image inspect --format '{{index .Config.Labels "heka.stand-in"}}' "$1" 2>/dev/null)" = "$RECIPE" ]
}

make_base() {  # make_base IMAGE SUITE PACKAGES
    local image=$1 suite=$2 packages=$3 root
    root=$(mktemp -d "${TMPDIR:-/tmp}/heka-base-XXXXXX")
    mkdir -p "$CACHE/debs"
    echo "== debootstrap $suite ($packages) for $image"
    debootstrap --variant=minbase --cache-dir="$CACHE/debs" --include="$packages" \
        "$suite" "$root" "$MIRROR" >"$root.log" 2>&1 || { tail -40 "$root.log" >&2; rm -f "$root.log"; exit 1; }
    rm -f "$root.log"
    local minor
    minor=$(chroot "$root" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if [[ $image != python:$minor[.-]* ]]; then
        echo "image_bases.sh: Debian $suite has Python $minor, $image names another release" >&2
        rm -rf "$root"
        exit 1
    fi
    if [ -x "$root/usr/sbin/update-ca-certificates" ]; then
        shopt -s nullglob
        local extra=(/usr/local/share/ca-certificates/*.crt)
        shopt -u nullglob
        if [ ${#extra[@]} -gt 0 ]; then
            cp "${extra[@]}" "$root/usr/local/share/ca-certificates/"
            chroot "$root" update-ca-certificates >/dev/null
        fi
    fi
    # The official images: no PEP 668 marker (pip manages their interpreter), no package
    # lists, caches or docs.
    rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/* \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
    tar --numeric-owner --xattrs -C "$root" -c . |
        podman import \
            --change 'CMD ["python3"]' \
            --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
            --change "ENV LANG=C.UTF-8" \
            --change "LABEL heka.stand-in=$RECIPE" \
            --message "stand-in for $image: Debian $suite packages ($packages)" \
            --quiet - "$image" >/dev/null
    rm -rf "$root"
    echo "   $image: $(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=si)B"
}

for image in "${bases[@]}"; do
    if current "$image"; then
        echo "== $image: present (stand-in $RECIPE)"
        continue
    fi
    # python:3.11.11-slim-bookworm, python:3.11.11-bookworm
    if [[ ! $image =~ ^python:3\.[0-9]+(\.[0-9]+)?-(slim-)?([a-z]+)$ ]]; then
        echo "image_bases.sh: no stand-in recipe for $image" >&2
        exit 1
    fi
    suite=${BASH_REMATCH[3]}
    if [ -n "${BASH_REMATCH[2]}" ]; then
        make_base "$image" "$suite" "$slim_packages"
    else
        make_base "$image" "$suite" "$build_packages"
    fi
done
