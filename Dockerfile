# syntax=docker/dockerfile:1
#
# heka: the stateless gRPC game service (Aton, Osirium, MCTS bots).
#
#   docker build -t heka:0.1.0 .
#   docker run --rm -p 127.0.0.1:50051:50051 -p 127.0.0.1:9095:9095 -e HEKA_STATE_KEYS=... heka:0.1.0
#
# Two stages on one pinned Python release: the builder (the full Debian image of that
# release, which has a C compiler) turns the source into wheels (ours, with engine/ and the
# search compiled by mypyc: setup.py, and every dependency's) and installs them into a
# virtualenv at /opt/heka; the runtime stage (the slim image of the same release) copies only
# that virtualenv, so no compiler, build context, wheel cache or dev tool reaches the final
# image. tests/deploy/test_deploy_smoke.py replays the builder's RUN commands verbatim in a
# fresh virtualenv and starts the ENTRYPOINT below, so keep these commands plain.

# Exact patch release of the slim Debian 12 image (same minor as CI's interpreter). Pin the
# digest too when publishing: FROM python:3.11.11-slim-bookworm@sha256:<digest>.
FROM python:3.11.11-slim-bookworm AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# --- builder: wheels + virtualenv -------------------------------------------------------
# Same release as the base, full image: gcc and the Python headers for the compiled build.
FROM python:3.11.11-bookworm AS builder
ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY proto/ proto/
COPY engine/ engine/
COPY ai/ ai/
COPY service/ service/
# heka train's self-play (pure Python; it needs numpy, which this image leaves out and the
# Ray image, k8s/ray/Dockerfile, adds: its workers play `heka train --ray`'s games).
COPY learn/ learn/
RUN HEKA_COMPILE=1 python -m pip wheel --wheel-dir /wheels .
# The virtualenv without pip or setuptools (nothing at run time needs them): the builder's pip
# installs into it.
RUN python -m venv --without-pip /opt/heka \
    && python -m pip --python /opt/heka/bin/python install --no-index --find-links /wheels heka

# --- runtime: the virtualenv, a non-root user, nothing else -----------------------------
FROM base AS runtime
# The slim image's own interpreter carries pip, setuptools and wheel, which nothing at run time
# needs: removed, so that the image installs nothing (scripts/image_check.py checks it).
RUN groupadd --system --gid 10001 heka \
    && useradd --system --uid 10001 --gid heka --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin heka \
    && rm -rf /usr/local/bin/pip* /usr/local/lib/python3*/site-packages/pip \
       /usr/local/lib/python3*/site-packages/pip-* /usr/local/lib/python3*/site-packages/setuptools* \
       /usr/local/lib/python3*/site-packages/wheel* /usr/local/lib/python3*/site-packages/_distutils_hack \
       /usr/local/lib/python3*/site-packages/distutils-precedence.pth
COPY --from=builder /opt/heka /opt/heka

# Defaults for the main HEKA_* settings (all of them: docs/operations.md). A container is
# reached through its own interface, so it binds every address, where `heka serve` alone
# binds localhost only (and the metrics endpoint follows HEKA_HOST). The state
# keys have no default: pass HEKA_STATE_KEYS from a secret. The Prometheus multiprocess
# directory lives under /tmp so the image runs with a read-only root filesystem (mount an
# emptyDir there in Kubernetes). The drain (HEKA_GRACE_SECONDS) keeps the server's default,
# which outlasts the longest bot call: stop the container with a timeout above it
# (`docker stop --time 60`, as the pod's terminationGracePeriodSeconds; docs/operations.md).
ENV PATH=/opt/heka/bin:$PATH \
    HEKA_HOST=[::] \
    HEKA_PORT=50051 \
    HEKA_METRICS_PORT=9095 \
    HEKA_METRICS_DIR=/tmp/heka-metrics \
    HEKA_LOG_LEVEL=INFO \
    HEKA_SHUTDOWN_DELAY_SECONDS=0 \
    HEKA_MAX_CONNECTION_AGE_SECONDS=300

USER 10001:10001
WORKDIR /tmp
EXPOSE 50051 9095
# Exec form: `heka serve` is PID 1 and receives SIGTERM itself (graceful drain).
ENTRYPOINT ["heka", "serve"]
