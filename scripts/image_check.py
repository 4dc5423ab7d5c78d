"""The built image, run in a container and checked from this machine (`make image-check`;
scripts/image_check.sh builds the image first).

    .venv/bin/python scripts/image_check.py --image heka:check

Inside the image (no network): the user is 10001:10001 and not root, no C compiler is on it,
the runtime virtualenv has no pip, setuptools or wheel, and heka runs its compiled build.
Then the image's ENTRYPOINT serves in a container (runc, explicit nofile/nproc limits,
read-only root filesystem, no capabilities, ports published on 127.0.0.1 only): gRPC health
SERVING for "" and heka.v1.GameService, one whole Aton game against mcts:medium through the
public API, /metrics, every process of the container under uid 10001, and a stop (SIGTERM)
while a bot call is in flight: the call completes, the server exits 0 before the stop's
grace runs out, and its log says it drained. Each step is bounded in time; the container is
removed in any case. Exit 0 when every check held.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from service.config import Config  # noqa: E402
from service.gen.heka.v1 import game_service_pb2 as pb  # noqa: E402
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc  # noqa: E402

IMAGE_USER = (10001, 10001)
COMPILERS = ("cc", "gcc", "c++", "g++", "cpp", "clang", "tcc", "x86_64-linux-gnu-gcc")


def _limit(kind: int, wanted: int) -> str:
    """An explicit soft:hard limit for the container: ``wanted``, or this machine's hard limit
    when lower (without CAP_SYS_RESOURCE, runc cannot raise a limit above it)."""
    hard = resource.getrlimit(kind)[1]
    value = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    return f"{value}:{value}"


# What a pod gets on a typical node; every container of the check runs with these.
ULIMITS = (
    "--ulimit", f"nofile={_limit(resource.RLIMIT_NOFILE, 65536)}",
    "--ulimit", f"nproc={_limit(resource.RLIMIT_NPROC, 4096)}",
)  # fmt: skip
MEDIUM = pb.BotSettings(kind=pb.BOT_KIND_MCTS, difficulty=pb.DIFFICULTY_MEDIUM, seed=1)


class CheckFailed(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise CheckFailed(what)


def podman(*args: str, timeout: float = 60, check_rc: bool = True) -> str:
    result = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check_rc and result.returncode != 0:
        raise CheckFailed(f"podman {' '.join(args)}: exit {result.returncode}\n{result.stderr[-2000:]}")
    return result.stdout


def logs(container: str) -> str:
    """The container's output, stdout and stderr (heka logs JSON lines to stderr)."""
    result = subprocess.run(
        ["podman", "logs", container], capture_output=True, text=True, timeout=30, check=False
    )
    return result.stdout + result.stderr


def in_image(image: str, script: str) -> str:
    """A shell command in a throwaway container of the image, without network."""
    return podman(
        "run", "--rm", "--runtime", "runc", *ULIMITS, "--network", "none", "--entrypoint", "/bin/sh",
        image, "-c", script,
    ).strip()  # fmt: skip


def static_checks(image: str) -> dict[str, object]:
    ids = in_image(image, "id -u; id -g").split()
    check(tuple(map(int, ids)) == IMAGE_USER, f"the image's user is {ids}, not {IMAGE_USER}")
    found = in_image(
        image,
        "for c in " + " ".join(COMPILERS) + "; do command -v $c; done;"
        " ls /usr/bin /usr/local/bin /usr/lib/gcc 2>/dev/null | grep -E -- '-gcc(-[0-9.]+)?$' || true",
    )
    check(found == "", f"compilers in the image: {found.split()}")
    venv_extras = in_image(
        image,
        '/opt/heka/bin/python -c "import importlib.util as u; '
        "print(' '.join(m for m in ('pip', 'setuptools', 'wheel') if u.find_spec(m)))\"",
    )
    check(venv_extras == "", f"the runtime virtualenv holds {venv_extras}")
    # The base image's own interpreter too (the official slim image ships them).
    system_extras = in_image(
        image,
        "for p in /usr/local/bin/python3 /usr/bin/python3; do [ -x $p ] && $p -c "
        '"import importlib.util as u; '
        "print(' '.join(m for m in ('pip', 'setuptools', 'wheel') if u.find_spec(m)))\"; done; "
        "ls /usr/local/bin | grep -E '^pip' || true",
    )
    check(system_extras.strip() == "", f"the image's interpreter holds {system_extras.split()}")
    build = in_image(image, "/opt/heka/bin/python -c 'import engine; print(engine.build())'")
    check(build == "compiled", f"the image runs the {build!r} build, not the compiled one")
    return {"uid": ids[0], "gid": ids[1], "compilers": [], "venv_extras": [], "build": build}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def image_env(image: str, name: str) -> str | None:
    env: list[str] | None = json.loads(podman("image", "inspect", "--format", "{{json .Config.Env}}", image))
    for item in env or []:
        key, _, value = item.partition("=")
        if key == name:
            return value
    return None


def wait_serving(target: str, container: str, within: float) -> None:
    deadline = time.monotonic() + within
    status: dict[str, str] = {}
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            state = podman("inspect", "--format", "{{.State.Status}}", container).strip()
            check(state == "running", f"the container is {state}:\n{logs(container)[-3000:]}")
            try:
                for service in ("", "heka.v1.GameService"):
                    reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
                    status[service] = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
                if set(status.values()) == {"SERVING"}:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.5)
    raise CheckFailed(f"health not SERVING within {within:.0f} s: {status}")


def play_aton(stub: pb_grpc.GameServiceStub, seed: int) -> dict[str, object]:
    """Seat 0 plays seeded random legal moves; mcts:medium plays seat 1 inside each call."""
    rng = random.Random(seed)
    mine: dict[str, Any] = dict(
        viewer=0,
        include_legal_actions=True,
        compact_actions=True,
        bots=[pb.BotSeat(seat=1, bot=MEDIUM)],
    )
    resp = stub.CreateGame(pb.CreateGameRequest(game="aton", num_players=2, seed=seed, **mine), timeout=60)
    moves = bot_moves = 0
    bot_moves += len(resp.bot_turns)
    while not resp.status.is_over and resp.legal_actions and moves < 1000:
        action = rng.choice(resp.legal_actions)
        resp = stub.ApplyAction(
            pb.ApplyActionRequest(state=resp.state, action_id=action.id, player=0, **mine), timeout=60
        )
        moves += 1
        bot_moves += len(resp.bot_turns)
    outcome = resp.status.outcome
    check(resp.status.is_over, f"the game did not end after {moves} moves of seat 0")
    check(outcome.reason != pb.OUTCOME_REASON_UNSPECIFIED, f"no outcome reason: {outcome}")
    check(bot_moves > 0, "mcts:medium never moved")
    return {
        "moves": resp.status.move_number,
        "bot_moves": bot_moves,
        "winners": list(outcome.winners),
        "reason": pb.OutcomeReason.Name(outcome.reason),
    }


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        check(response.status == 200, f"/metrics answered {response.status}")
        return str(response.read().decode())


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{name}(?:\{{[^}}]*\}})? ([0-9.e+-]+)$", text, flags=re.M)
    return float(found.group(1)) if found else 0.0


def serve_checks(image: str, grace: float, report: dict[str, object]) -> dict[str, object]:
    key = podman(
        "run", "--rm", "--runtime", "runc", *ULIMITS, "--network", "none", image, "--new-key"
    ).strip()
    check(bool(key), "`heka serve --new-key` printed no key")
    port, metrics_port = free_port(), free_port()
    name = f"heka-image-check-{port}"
    podman(
        "run", "--detach", "--name", name, "--runtime", "runc", *ULIMITS,
        "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "--publish", f"127.0.0.1:{port}:50051", "--publish", f"127.0.0.1:{metrics_port}:9095",
        "--env", f"HEKA_STATE_KEYS={key}",
        image,
    )  # fmt: skip
    try:
        target = f"127.0.0.1:{port}"
        wait_serving(target, name, within=90)
        with grpc.insecure_channel(target) as channel:
            stub = pb_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
            game = report["game"] = play_aton(stub, seed=7)
            text = scrape(metrics_port)
            check(metric(text, "heka_games_finished_total") >= 1, "/metrics counts no finished game")

            uids = in_container(name, "grep -h '^Uid:' /proc/[0-9]*/status | sort -u")
            check(
                {tuple(line.split()[1:]) for line in uids.splitlines()} == {(str(IMAGE_USER[0]),) * 4},
                f"processes not all under uid {IMAGE_USER[0]}: {uids}",
            )
            drained = report["stop"] = stop_during_a_bot_call(stub, name, metrics_port, grace)
        output = logs(name)
        check("Traceback" not in output, f"a traceback in the log:\n{output[-3000:]}")
        events = [json.loads(line).get("event") for line in output.splitlines() if line.startswith("{")]
        check("draining" in events and "stopped" in events, f"no drain in the log:\n{output[-3000:]}")
        return {"game": game, "processes_uid": IMAGE_USER[0], "stop": drained}
    finally:
        podman("rm", "--force", "--time", "0", name, check_rc=False)


def in_container(name: str, script: str) -> str:
    return podman("exec", name, "/bin/sh", "-c", script).strip()


def stop_during_a_bot_call(
    stub: pb_grpc.GameServiceStub, name: str, metrics_port: int, grace: float
) -> dict[str, object]:
    created = stub.CreateGame(pb.CreateGameRequest(game="aton", num_players=2, seed=11), timeout=60)
    request = pb.AdvanceBotsRequest(
        state=created.state, bots=[pb.BotSeat(seat=0, bot=MEDIUM), pb.BotSeat(seat=1, bot=MEDIUM)],
        max_bot_moves=6,
    )  # fmt: skip
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            outcome["turns"] = len(stub.AdvanceBots(request, timeout=grace).bot_turns)
        except grpc.RpcError as exc:
            outcome["error"] = f"{exc.code().name}: {exc.details()}"

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while metric(scrape(metrics_port), "heka_searches_in_flight") < 1:
        check(thread.is_alive(), f"the bot call ended before the stop: {outcome}")
        check(time.monotonic() < deadline, "the bot call never showed in heka_searches_in_flight")
        time.sleep(0.05)
    # podman stop: SIGTERM (the image's STOPSIGNAL default), SIGKILL after the timeout.
    kill_after = int(grace) + 10
    started = time.monotonic()
    podman("stop", "--time", str(kill_after), name, timeout=kill_after + 30)
    stopped_in = time.monotonic() - started
    thread.join(timeout=10)
    code = int(podman("inspect", "--format", "{{.State.ExitCode}}", name).strip())
    check(code == 0, f"the server exited {code} on SIGTERM (137: killed after the grace)")
    check(stopped_in < kill_after, f"the stop took {stopped_in:.1f} s of its {kill_after} s")
    check("turns" in outcome, f"the in-flight bot call did not complete: {outcome}")
    return {"exit_code": code, "seconds": round(stopped_in, 1), "in_flight_call": "completed"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--image", required=True)
    args = p.parse_args(argv)
    grace = float(image_env(args.image, "HEKA_GRACE_SECONDS") or Config().grace_seconds)
    report: dict[str, object] = {"image": args.image, "ulimits": " ".join(ULIMITS[1::2])}
    try:
        report["size_bytes"] = int(podman("image", "inspect", "--format", "{{.Size}}", args.image))
        report.update(static_checks(args.image))
        report.update(serve_checks(args.image, grace, report))
    except (CheckFailed, subprocess.TimeoutExpired, grpc.RpcError, OSError) as exc:
        print(json.dumps(report, indent=1))
        print(f"image check FAILED: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=1))
    print("image check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
