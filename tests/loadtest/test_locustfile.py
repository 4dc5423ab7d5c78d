"""bench/locustfile.py runs the shared scenarios: exercised here with a stand-in ``locust``
module (Locust itself, with gevent, is not a test dependency) against the fake service."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import types
from pathlib import Path

import pytest
from fake_server import LENGTH, FakeServer

LOCUSTFILE = Path(__file__).resolve().parents[2] / "bench" / "locustfile.py"


class _Hook:
    def __init__(self) -> None:
        self.listeners: list = []
        self.fired: list[dict] = []

    def add_listener(self, fn):
        self.listeners.append(fn)
        return fn

    def fire(self, **kwargs) -> None:
        self.fired.append(kwargs)


class _User:
    def __init__(self, environment) -> None:
        self.environment = environment
        self.host = environment.host


@pytest.fixture
def locustfile(monkeypatch):
    fake = types.ModuleType("locust")
    fake.User = _User
    fake.task = lambda fn: fn
    fake.constant_throughput = lambda rate: lambda _user: 1.0 / rate
    fake.events = types.SimpleNamespace(init_command_line_parser=_Hook(), request=_Hook())
    monkeypatch.setitem(sys.modules, "locust", fake)
    spec = importlib.util.spec_from_file_location("heka_locustfile", LOCUSTFILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, fake


def _options(fake, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    for listener in fake.events.init_command_line_parser.listeners:
        listener(parser)
    return parser.parse_args(list(argv))


def _environment(fake, host: str, *argv: str):
    return types.SimpleNamespace(host=host, parsed_options=_options(fake, *argv), events=fake.events)


@pytest.mark.parametrize("scenario", ["play", "bot", "cheap"])
def test_user_runs_the_scenario_and_reports_each_rpc(locustfile, scenario):
    module, fake = locustfile
    with FakeServer() as server:
        user = module.HekaUser(_environment(fake, server.target, "--scenario", scenario, "--pool", "2"))
        user.on_start()
        setup_calls = len(server.service.calls)
        for _ in range(3):
            user.scenario_task()
        user.on_stop()
        sent = server.service.calls[setup_calls:]
    fired = [f for f in fake.events.request.fired if f["request_type"] == "grpc"]
    assert [f["name"] for f in fired] == sent  # every measured RPC reported, setup ones not
    assert all(f["exception"] is None for f in fired)
    assert all(f["response_time"] > 0 for f in fired)
    goodput = [f for f in fake.events.request.fired if f["request_type"] == "goodput"]
    assert {f["name"] for f in goodput} <= {"bot_move"}
    assert {f["request_type"] for f in fake.events.request.fired} <= {"grpc", "goodput"}
    if scenario == "bot":
        assert sent == ["BotMove"] * 3
        assert len(goodput) == 3
    elif scenario == "play":
        assert len(goodput) == 3 * (LENGTH // 2)  # three games, every other move a bot's
    else:
        assert goodput == []


def test_refusals_with_a_retry_hint_are_shed_not_failures(locustfile):
    import grpc

    module, fake = locustfile
    with FakeServer() as server:
        user = module.HekaUser(_environment(fake, server.target, "--scenario", "play"))
        user.on_start()
        slept: list[float] = []
        user.sleep = slept.append
        server.service.shed["ApplyAction"] = [(grpc.StatusCode.RESOURCE_EXHAUSTED, 0.25)] * 2
        user.scenario_task()
        user.on_stop()
    fired = fake.events.request.fired
    shed = [f for f in fired if f["request_type"] == "shed"]
    assert [f["name"] for f in shed] == ["ApplyAction"] * 2
    assert all(f["exception"] is None for f in fired)  # no failure reported
    assert len(slept) == 2 and 0.25 <= slept[0] <= 0.5 and 0.5 <= slept[1] <= 1.0
    assert sum(f["request_type"] == "goodput" for f in fired) == LENGTH // 2  # the game completed


def test_no_retry_makes_refusals_failures(locustfile):
    import grpc

    module, fake = locustfile
    with FakeServer() as server:
        user = module.HekaUser(_environment(fake, server.target, "--scenario", "play", "--no-retry"))
        user.on_start()
        server.service.shed["ApplyAction"] = [(grpc.StatusCode.RESOURCE_EXHAUSTED, 0.25)]
        user.scenario_task()
        user.on_stop()
    failed = [f for f in fake.events.request.fired if f["exception"] is not None]
    assert [(f["request_type"], f["name"]) for f in failed] == [("grpc", "ApplyAction")]


def test_rpc_errors_are_reported_as_failures(locustfile):
    import grpc

    module, fake = locustfile
    with FakeServer() as server:
        user = module.HekaUser(_environment(fake, server.target, "--scenario", "play"))
        user.on_start()
        server.service.fail["ApplyAction"] = grpc.StatusCode.UNAVAILABLE
        user.scenario_task()
        user.on_stop()
    failed = [f for f in fake.events.request.fired if f["exception"] is not None]
    assert [f["name"] for f in failed] == ["ApplyAction"]


def test_task_rate_paces_each_user(locustfile):
    module, fake = locustfile
    user = module.HekaUser(_environment(fake, "x", "--task-rate", "4"))
    assert user.wait_time() == 0.25
    user = module.HekaUser(_environment(fake, "x"))
    assert user.wait_time() == 0.0


def _self_signed(tmp_path: Path) -> tuple[bytes, bytes, Path]:
    """A key and a self-signed certificate for 127.0.0.1 (PEM), the certificate also written
    to a file: it is its own CA."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-heka")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "fake-heka.pem"
    path.write_bytes(cert_pem)
    return key_pem, cert_pem, path


def test_a_user_calls_a_tls_server_with_tls_ca(locustfile, tmp_path):
    module, fake = locustfile
    key_pem, cert_pem, ca = _self_signed(tmp_path)
    with FakeServer(tls=(key_pem, cert_pem)) as server:
        user = module.HekaUser(_environment(fake, server.target, "--pool", "2", "--tls-ca", str(ca)))
        user.on_start()
        setup_calls = len(server.service.calls)
        user.scenario_task()
        user.on_stop()
        assert len(server.service.calls) > setup_calls
    fired = [f for f in fake.events.request.fired if f["request_type"] == "grpc"]
    assert fired and all(f["exception"] is None for f in fired)
    with pytest.raises(ValueError, match="need --tls-ca"):
        module.HekaUser(_environment(fake, "127.0.0.1:1", "--tls-server-name", "x")).on_start()
