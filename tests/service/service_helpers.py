"""Helpers of the service tests: a real ``heka serve`` process and test keys."""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from pathlib import Path

import grpc

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

    def stop(self, grace: float = 30.0) -> int:
        self.channel.close()
        return super().stop(grace)
