"""Helpers of the service tests: a real ``heka serve`` process and test keys."""

from __future__ import annotations

import base64
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest

from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import LocalServer

ROOT = Path(__file__).resolve().parents[2]

#: Fixed test keys (32 bytes each).
KEY1 = "k1:" + base64.urlsafe_b64encode(b"heka-test-key-one-32-bytes-long!").decode()
KEY2 = "k2:" + base64.urlsafe_b64encode(b"heka-test-key-two-32-bytes-long!").decode()
KEY_OTHER = "other:" + base64.urlsafe_b64encode(b"a-different-deployment-key-32byt").decode()


class ServerProcess(LocalServer):
    """A real ``heka serve`` for the tests (service.loadtest.local.LocalServer), its log kept
    for the test to read, and a channel and GameService stub to it. It does not wait for
    health: some tests watch the start-up themselves."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        # The test's own HEKA_ settings stay out of the server's, except the build choice:
        # under `make test-pure` the server runs the pure-Python build too.
        keep = ("HEKA_PURE_PYTHON",)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_") or k in keep}
        full_env.update({"HEKA_LOG_LEVEL": "INFO", "PYTHONUNBUFFERED": "1", **env})
        log = Path(tempfile.mkstemp(prefix="heka-test-", suffix=".log")[1])
        command = [sys.executable, "-m", "service.cli", "serve", "--port", "0", "--metrics-port", "0", *args]
        super().__init__(command, env=full_env, cwd=ROOT, log=log, health=False)
        self.address = self.target
        self.channel = grpc.insecure_channel(self.address)
        self.stub = pb_grpc.GameServiceStub(self.channel)

    def stop(self, grace: float = 45.0) -> int:
        channel = getattr(self, "channel", None)  # none when the server failed to start
        if channel is not None:
            channel.close()
        return super().stop(grace)


def call_error(method: Any, request: Any, **kwargs: Any) -> grpc.RpcError:
    """The error a call that must fail raises."""
    with pytest.raises(grpc.RpcError) as info:
        method(request, **kwargs)
    return info.value


def error_details(err: grpc.RpcError) -> tuple[str | None, str | None, dict[str, str], str | None]:
    """An error's rich details: (field of the BadRequest violation, ErrorInfo reason,
    ErrorInfo metadata, ErrorInfo domain); None where the detail is absent."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None, "rich status details expected"
    field = reason = domain = None
    metadata: dict[str, str] = {}
    for any_msg in status.details:
        if any_msg.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            any_msg.Unpack(bad)
            field = bad.field_violations[0].field
        elif any_msg.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            any_msg.Unpack(info)
            reason, metadata, domain = info.reason, dict(info.metadata), info.domain
    return field, reason, metadata, domain


def scrape(server: ServerProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the server's /metrics, by (name, sorted labels)."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def total(samples: dict[Any, float], name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, lab), v in samples.items() if n == name and want <= set(lab))


def wait_metric(server: ServerProcess, name: str, n: float, **labels: str) -> None:
    """Wait (up to 10 s) until :func:`total` of ``name`` reaches ``n``."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        if total(scrape(server), name, **labels) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{name}{labels} never reached {n}")


def retry_info(err: grpc.RpcError) -> tuple[str, float | None]:
    """(ErrorInfo reason, RetryInfo delay in seconds) of a status."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None, "rich status details expected"
    reason, delay = "", None
    for any_msg in status.details:
        if any_msg.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            any_msg.Unpack(info)
            reason = info.reason
        elif any_msg.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            any_msg.Unpack(retry)
            delay = retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9
    return reason, delay
