"""A local ``heka serve`` for benches and scripts: start it, wait until it serves, find its
processes, measure them, stop it. Loopback only.

    with start_heka("--grpc-processes", "2", env={"HEKA_ACCESS_LOG": "false"}) as server:
        ...  # load server.target
        cpu = cpu_seconds(server.grpc_pids())

:func:`start_heka` runs ``python -m service.cli serve`` (from this checkout, or from another
one with ``root``: a ``--server-root`` of a bench) on 127.0.0.1 and a free port, reads the
ports from its JSON "listening" log line and waits until its health service answers
SERVING. :class:`LocalServer` does the same for any command that prints such a line (the
echo servers of ``bench/_service.py``). Leaving the ``with`` block (or
:meth:`LocalServer.stop`) sends SIGTERM, then SIGKILL after a grace period.

The process helpers read Linux's /proc: :func:`descendants`, :func:`cpu_seconds`
(user + system time) and :func:`rss_bytes` (resident set); :class:`Sampler` records a
measurement every so often on a thread.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

#: This checkout (the one whose ``service`` package this is).
ROOT = Path(__file__).resolve().parents[2]
#: A fixed state key for local runs: tokens of one bench server open on another.
BENCH_KEY = "bench:" + "QmVuY2htYXJrIGtleSBvZiAzMiBieXRlcyEhISEhISE"
LOOPBACK = ("127.0.0.1", "::1", "localhost")


class ServerStartError(RuntimeError):
    """The server exited, or did not announce itself or serve, in time; the message holds
    its log."""


class LocalServer:
    """A server subprocess that logs a JSON line ``{"event": "listening", "port": ...}``;
    its stdout and stderr go to ``log`` (a temporary file, removed on stop, when none is
    given). With ``health``, waits until ``grpc.health.v1.Health/Check`` says SERVING."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        log: Path | None = None,
        health: bool = True,
        timeout: float = 60.0,
    ) -> None:
        self.keep_log = log is not None
        if log is None:
            fd, name = tempfile.mkstemp(prefix="heka-local-", suffix=".log")
            os.close(fd)
            log = Path(name)
        self.log_path = log
        self.command = list(command)
        self.returncode: int | None = None
        self._final_log: str | None = None  # a temporary log's text, once it is removed
        self._terminated = False  # SIGTERM sent
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                self.command, cwd=cwd, env=None if env is None else dict(env), stdout=out, stderr=out
            )
        try:
            self.info = self._wait_listening(timeout)
            self.port = int(self.info["port"])
            self.metrics_port = int(self.info.get("metrics_port", -1))
            self.target = f"127.0.0.1:{self.port}"
            if health:
                self._wait_serving(timeout)
        except BaseException:
            self.stop(grace=5)
            raise

    # -- start-up ---------------------------------------------------------------------------
    def log_lines(self) -> list[dict[str, Any]]:
        """The log so far (all of it after :meth:`stop`), a dict per line (``{"raw": text}``
        for a line that is not JSON)."""
        out = []
        text = self._final_log
        if text is None:
            text = self.log_path.read_text(errors="replace")
        for raw in text.splitlines():
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                rec = None
            out.append(rec if isinstance(rec, dict) else {"raw": raw})
        return out

    def _failed(self, why: str) -> ServerStartError:
        log = self.log_path.read_text(errors="replace")
        return ServerStartError(f"{' '.join(self.command)}: {why}:\n{log}")

    def _wait_listening(self, timeout: float) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for rec in self.log_lines():
                if rec.get("event") == "listening":
                    return rec
            if self.proc.poll() is not None:
                raise self._failed(f"exited with {self.proc.returncode} during start-up")
            time.sleep(0.05)
        raise self._failed(f"no 'listening' log line within {timeout:g} s")

    def _wait_serving(self, timeout: float) -> None:
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        end = time.monotonic() + timeout
        with grpc.insecure_channel(self.target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < end:
                if self.proc.poll() is not None:
                    raise self._failed(f"exited with {self.proc.returncode} during start-up")
                try:
                    reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.1)
        raise self._failed(f"health not SERVING within {timeout:g} s")

    # -- processes --------------------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self.proc.pid

    def tree(self) -> list[int]:
        """The server and every process below it (gRPC processes, forkservers, search
        workers)."""
        return descendants(self.proc.pid)

    def grpc_pids(self) -> list[int]:
        """The gRPC serving processes: the supervisor's children that are not forkservers
        or resource trackers; the server itself when it serves alone (one gRPC process)."""
        kids = []
        for pid in children(self.proc.pid):
            cmd = cmdline(pid)
            if "serve" in cmd and "forkserver" not in cmd and "resource_tracker" not in cmd:
                kids.append(pid)
        return kids or [self.proc.pid]

    # -- stopping ---------------------------------------------------------------------------
    def terminate(self) -> None:
        """SIGTERM without waiting: a caller that stops several servers signals them all
        first, so that they drain together, then calls :meth:`stop` on each."""
        if self.returncode is None and not self._terminated and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self._terminated = True

    def stop(self, grace: float = 45.0) -> int:
        """SIGTERM, then SIGKILL when still running after ``grace`` seconds (by default more
        than a server's default drain: HEKA_GRACE_SECONDS, 32 s, and 2 s to answer the calls
        it cuts); returns the exit code (negative: the signal that ended it). Idempotent;
        removes a temporary log (:meth:`log_lines` still has it)."""
        if self.returncode is None:
            if self.proc.poll() is None:
                self.terminate()
                try:
                    self.proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.returncode = self.proc.returncode
        if not self.keep_log and self._final_log is None:
            self._final_log = self.log_path.read_text(errors="replace")
            self.log_path.unlink(missing_ok=True)
        return self.returncode

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def stop_all(servers: Iterable[LocalServer], grace: float = 45.0) -> None:
    """Stops every server, signalling them all first so that they drain together, not one
    after another (:meth:`LocalServer.stop` each, with ``grace``)."""
    every = list(servers)
    for server in every:
        server.terminate()
    for server in every:
        server.stop(grace)


def heka_env(env: Mapping[str, str] | None = None, root: Path = ROOT) -> dict[str, str]:
    """The environment of a local ``heka serve``: this process's, less every ``HEKA_*``
    variable (a developer's shell must not change a bench), with the bench key, one search
    worker per gRPC process and INFO logs (the "listening" line); then ``env``."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    out.update(
        {
            "HEKA_STATE_KEYS": BENCH_KEY,
            "HEKA_SEARCH_WORKERS": "1",
            "HEKA_LOG_LEVEL": "INFO",
            "PYTHONPATH": str(root),
            "PYTHONUNBUFFERED": "1",
        }
    )
    out.update(env or {})
    return out


def pod_env(grpc_processes: int, workers: int, metrics_dir: Path) -> dict[str, str]:
    """A server like a pod of k8s/deployment.yaml, for the soak and capacity scripts:
    ``grpc_processes`` gRPC processes with ``workers`` search workers in all (they are per
    gRPC process: at least one each), access log off, metrics files under ``metrics_dir``."""
    return {
        "HEKA_GRPC_PROCESSES": str(grpc_processes),
        "HEKA_SEARCH_WORKERS": str(max(1, workers // grpc_processes)),
        "HEKA_ACCESS_LOG": "false",
        "HEKA_METRICS_DIR": str(metrics_dir),
    }


def start_heka(
    *args: str,
    env: Mapping[str, str] | None = None,
    root: Path | None = None,
    metrics: bool = False,
    log: Path | None = None,
    timeout: float = 60.0,
) -> LocalServer:
    """``heka serve ARGS`` on 127.0.0.1 and a free port, from the checkout ``root`` (default:
    this one) with this interpreter, its environment from :func:`heka_env`; the metrics
    endpoint on a free port with ``metrics``, none otherwise. Returns once it serves."""
    root = (root or ROOT).resolve()
    command = [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", "0"]
    command += ["--metrics-port", "0" if metrics else "-1", *args]
    return LocalServer(command, env=heka_env(env, root), cwd=root, log=log, timeout=timeout)


def loadtest_command(target: str, duration: str, *args: str) -> list[str]:
    """The command line of a ``heka loadtest`` (this interpreter's) against ``target`` for
    ``duration`` (e.g. "30s") with ``args`` (the scenario and load), its report as JSON on
    stdout, no progress line: for scripts that run the load engine in processes of its own."""
    command = [sys.executable, "-m", "service.cli", "loadtest", "--target", target]
    return [*command, "--duration", duration, "--json", "--no-progress", *args]


def add_server_options(parser: argparse.ArgumentParser, *, target: bool = True) -> None:
    """A bench's options for the server it loads: ``--server-args`` (extra ``heka serve``
    flags), ``--server-root`` (run the server from another checkout, e.g. to compare with
    the main branch) and, with ``target``, ``--target`` (a running server instead)."""
    if target:
        parser.add_argument("--target", help="a running server (loopback only); default: start one")
    parser.add_argument(
        "--server-args", default="", help="extra `heka serve` flags, e.g. '--grpc-processes 2'"
    )
    parser.add_argument("--server-root", type=Path, default=ROOT, help="checkout to run the server from")


def server_for(
    args: argparse.Namespace,
    stack: contextlib.ExitStack,
    *serve_args: str,
    env: Mapping[str, str] | None = None,
) -> tuple[str, LocalServer | None]:
    """The target a bench loads, from :func:`add_server_options`' options, and the server it
    started: a ``--target`` (checked to be loopback) and none, or ``heka serve SERVE_ARGS
    --server-args`` from ``--server-root``, stopped when ``stack`` closes."""
    if getattr(args, "target", None):
        return check_loopback(args.target), None
    extra = shlex.split(args.server_args)
    server = stack.enter_context(start_heka(*serve_args, *extra, env=env, root=args.server_root))
    return server.target, server


def check_loopback(target: str) -> str:
    """``target`` when its host is a loopback address; SystemExit otherwise (load tools
    here never send traffic anywhere else)."""
    host = target.rsplit(":", 1)[0].strip("[]")
    if host not in LOOPBACK:
        raise SystemExit(f"refusing to load {target}: loopback targets only")
    return target


# ---------------------------------------------------------------------------------------
# /proc
# ---------------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (field 3, the state, first)."""
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()


def cmdline(pid: int) -> str:
    """The command line of ``pid`` (empty once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _parents() -> dict[int, int]:
    """Every process's parent."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                out[int(entry)] = int(_stat_fields(int(entry))[1])
            except (OSError, ValueError, IndexError):
                continue
    return out


def children(pid: int) -> list[int]:
    """The direct children of ``pid``."""
    return sorted(child for child, parent in _parents().items() if parent == pid)


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    below: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        below.setdefault(parent, []).append(child)
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(below.get(p, []))
    return out


def cpu_seconds(pids: Iterable[int]) -> float:
    """User + system CPU time of ``pids`` (the ones still running), seconds."""
    ticks = 0
    for pid in pids:
        try:
            fields = _stat_fields(pid)
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """The resident set of ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class Sampler:
    """Calls ``measure()`` every ``interval`` seconds on a thread while in its ``with``
    block (and once on entry and on exit); the values are in :attr:`values`."""

    def __init__(self, measure: Callable[[], float], interval: float = 0.1) -> None:
        self.measure = measure
        self.interval = interval
        self.values: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heka-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.values.append(self.measure())

    def __enter__(self) -> Sampler:
        self.values.append(self.measure())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.values.append(self.measure())
