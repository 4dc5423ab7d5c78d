"""Helpers of the service tests: a real ``heka serve`` process and test keys."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]

#: Fixed test keys (32 bytes each).
KEY1 = "k1:" + base64.urlsafe_b64encode(b"heka-test-key-one-32-bytes-long!").decode()
KEY2 = "k2:" + base64.urlsafe_b64encode(b"heka-test-key-two-32-bytes-long!").decode()
KEY_OTHER = "other:" + base64.urlsafe_b64encode(b"a-different-deployment-key-32byt").decode()


class ServerProcess:
    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.log_file = tempfile.NamedTemporaryFile(prefix="heka-test-", suffix=".log", delete=False)  # noqa: SIM115
        self.log_path = Path(self.log_file.name)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
        full_env.update({"HEKA_LOG_LEVEL": "INFO", "PYTHONUNBUFFERED": "1", **env})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", "0", "--metrics-port", "0", *args],
            cwd=ROOT,
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=self.log_file,
        )
        self.info = self._wait_listening()
        self.port: int = self.info["port"]
        self.metrics_port: int = self.info["metrics_port"]
        self.address = f"127.0.0.1:{self.port}"
        self.channel = grpc.insecure_channel(self.address)
        self.stub = pb_grpc.GameServiceStub(self.channel)

    def _wait_listening(self, timeout: float = 60.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for line in self.log_lines():
                if line.get("event") == "listening":
                    return line
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log_path.read_text()}")
            time.sleep(0.05)
        raise RuntimeError(f"server did not start: {self.log_path.read_text()}")

    def log_lines(self) -> list[dict[str, Any]]:
        out = []
        for raw in self.log_path.read_text().splitlines():
            try:
                out.append(json.loads(raw))
            except json.JSONDecodeError:
                out.append({"raw": raw})
        return out

    def stop(self, timeout: float = 30.0) -> int:
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()
        return self.proc.returncode
