"""TLS on the gRPC port (service/tls.py; docs/operations.md, "TLS"): the files' checks at start,
their reading again when they change, and a real server with TLS and with mutual TLS. The
certificates are made here, for 127.0.0.1 and localhost, by a throwaway CA."""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import json
import os
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from service_helpers import KEY1, ServerProcess

from service import config as cfg
from service import tls
from service.gen.heka.v1 import game_service_pb2 as pb
from service.gen.heka.v1 import game_service_pb2_grpc as pb_grpc
from service.loadtest.local import ServerStartError

NOW = datetime.datetime.now(datetime.UTC)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


@dataclasses.dataclass
class Ca:
    name: str
    key: Any = dataclasses.field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    def __post_init__(self) -> None:
        self.cert = self.sign(_name(self.name), self.key, ca=True)

    def sign(
        self, subject: x509.Name, key: Any, *, ca: bool = False, days: float = 1, start: float = -1
    ) -> Any:
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(_name(self.name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(NOW + datetime.timedelta(days=start))
            .not_valid_after(NOW + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        return builder.sign(self.key, hashes.SHA256())

    def issue(self, directory: Path, stem: str, **kwargs: Any) -> tuple[Path, Path]:
        """A certificate and its key, signed by this CA, written as STEM.pem and STEM.key."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = self.sign(_name(stem), key, **kwargs)
        return write(directory / f"{stem}.pem", pem(cert)), write(directory / f"{stem}.key", key_pem(key))

    def write(self, directory: Path) -> Path:
        return write(directory / f"{self.name}.pem", pem(self.cert))


def pem(cert: Any) -> bytes:
    return bytes(cert.public_bytes(serialization.Encoding.PEM))


def key_pem(key: Any, password: bytes | None = None) -> bytes:
    encryption = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption))


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def config(cert: Path | str = "", key: Path | str = "", ca: Path | str = "") -> cfg.Config:
    return cfg.load(
        None,
        {"HEKA_TLS_CERT_FILE": str(cert), "HEKA_TLS_KEY_FILE": str(key), "HEKA_TLS_CLIENT_CA_FILE": str(ca)},
    )


@pytest.fixture(scope="module")
def ca() -> Ca:
    return Ca("heka-test-ca")


# -- the settings and the files' checks ----------------------------------------------------


def test_cert_and_key_come_together(tmp_path: Path) -> None:
    with pytest.raises(cfg.ConfigError, match=r"both HEKA_TLS_CERT_FILE .* and HEKA_TLS_KEY_FILE"):
        config(cert=tmp_path / "a.pem")
    with pytest.raises(cfg.ConfigError, match="both HEKA_TLS_CERT_FILE"):
        config(key=tmp_path / "a.key")
    with pytest.raises(cfg.ConfigError, match=r"HEKA_TLS_CLIENT_CA_FILE .* needs HEKA_TLS_CERT_FILE"):
        config(ca=tmp_path / "ca.pem")
    assert tls.mode(config()) == "off"
    assert tls.mode(config(tmp_path / "a", tmp_path / "b")) == "tls"
    assert tls.mode(config(tmp_path / "a", tmp_path / "b", tmp_path / "c")) == "mutual"


def test_good_files_load(tmp_path: Path, ca: Ca) -> None:
    cert, key = ca.issue(tmp_path, "server")
    material = tls.load(config(cert, key, ca.write(tmp_path)))
    assert material.cert_chain == cert.read_bytes()
    assert material.client_ca == pem(ca.cert)
    assert material.not_after > NOW


def _error(conf: cfg.Config) -> str:
    with pytest.raises(tls.TlsError) as info:
        tls.load(conf)
    return str(info.value)


def test_each_bad_file_is_named_with_its_fault(tmp_path: Path, ca: Ca) -> None:
    cert, key = ca.issue(tmp_path, "server")
    _, other_key = ca.issue(tmp_path, "other")
    junk = write(tmp_path / "junk.pem", b"not a certificate\n")
    assert _error(config(tmp_path / "missing.pem", key)).startswith(
        f"HEKA_TLS_CERT_FILE {tmp_path / 'missing.pem'}: cannot read it"
    )
    assert _error(config(junk, key)) == f"HEKA_TLS_CERT_FILE {junk}: holds no PEM certificate"
    assert _error(config(cert, junk)) == f"HEKA_TLS_KEY_FILE {junk}: holds no PEM private key"
    assert _error(config(cert, other_key)).startswith(
        f"HEKA_TLS_KEY_FILE {other_key}: not the key of the certificate in HEKA_TLS_CERT_FILE {cert}"
    )
    assert _error(config(cert, key, junk)) == f"HEKA_TLS_CLIENT_CA_FILE {junk}: holds no PEM certificate"
    assert _error(config(tmp_path, key)) == f"HEKA_TLS_CERT_FILE {tmp_path}: is a folder, not a file"


def test_an_encrypted_key_is_refused_with_the_reason(tmp_path: Path, ca: Ca) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = write(tmp_path / "s.pem", pem(ca.sign(_name("s"), key)))
    locked = write(tmp_path / "s.key", key_pem(key, b"secret"))
    assert "the key is encrypted" in _error(config(cert, locked))


def test_a_certificate_out_of_its_dates_is_refused(tmp_path: Path, ca: Ca) -> None:
    expired, expired_key = ca.issue(tmp_path, "expired", start=-3, days=-1)
    assert "the certificate expired on" in _error(config(expired, expired_key))
    future, future_key = ca.issue(tmp_path, "future", start=2, days=3)
    assert "the certificate is valid only from" in _error(config(future, future_key))


# -- reading the files again ---------------------------------------------------------------


def test_changed_files_are_read_again_and_bad_ones_kept_out(
    tmp_path: Path, ca: Ca, caplog: pytest.LogCaptureFixture
) -> None:
    cert, key = ca.issue(tmp_path, "server")
    creds = tls.Credentials(config(cert, key))
    first = creds.material
    assert creds.fetch() is None  # nothing changed

    # A new certificate whose key is not written yet: the old pair stays, once logged.
    (tmp_path / "next").mkdir()
    new_cert, new_key = ca.issue(tmp_path / "next", "server")
    cert.write_bytes(new_cert.read_bytes())
    assert creds.fetch() is None
    assert creds.material is first
    assert creds.fetch() is None  # logged once per change, not per handshake
    events = [getattr(r, "fields", {}).get("event") for r in caplog.records]
    assert events == ["tls_reload_failed"]
    assert "not the key of the certificate" in caplog.records[0].getMessage()

    # The key arrives: the new pair serves from the next handshake.
    key.write_bytes(new_key.read_bytes())
    assert creds.fetch() is not None
    assert creds.material.cert_chain == new_cert.read_bytes()
    assert creds.fetch() is None


# -- a real server -------------------------------------------------------------------------


def _serve(start_server: Any, *args: str) -> ServerProcess:
    server: ServerProcess = start_server("--search-workers", "1", *args, HEKA_STATE_KEYS=KEY1)
    return server


def _serve_tls(
    start_server: Any, tmp_path: Path, ca: Ca, *args: str, clients: Ca | None = None
) -> tuple[ServerProcess, Path, Path]:
    """A server with a certificate of ``ca`` (and, with ``clients``, mutual TLS); the server,
    its certificate file and its key file."""
    cert, key = ca.issue(tmp_path, "server")
    flags = ["--tls-cert-file", str(cert), "--tls-key-file", str(key)]
    if clients is not None:
        flags += ["--tls-client-ca-file", str(clients.write(tmp_path))]
    return _serve(start_server, *args, *flags), cert, key


def _list_games(target: str, credentials: grpc.ChannelCredentials | None) -> Any:
    channel = grpc.secure_channel(target, credentials) if credentials else grpc.insecure_channel(target)
    with channel:
        return pb_grpc.GameServiceStub(channel).ListGames(pb.ListGamesRequest(), timeout=10)


def _fails(target: str, credentials: grpc.ChannelCredentials | None) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        _list_games(target, credentials)
    code: grpc.StatusCode = info.value.code()  # type: ignore[attr-defined]
    return code


def _client(ca: Ca, cert: Path | None = None, key: Path | None = None) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        pem(ca.cert), key.read_bytes() if key else None, cert.read_bytes() if cert else None
    )


def _served_cert(port: int) -> bytes:
    return ssl.get_server_certificate(("127.0.0.1", port)).encode()


def _only_json_lines(server: ServerProcess) -> list[str]:
    return [r["raw"] for r in server.log_lines() if "raw" in r]


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_tls_port_serves_tls_only(start_server: Any, tmp_path: Path, ca: Ca, processes: str) -> None:
    server, _, _ = _serve_tls(start_server, tmp_path, ca, "--grpc-processes", processes)
    assert server.info["tls"] == "tls"
    assert _list_games(server.target, _client(ca)).games
    assert _fails(server.target, None) == grpc.StatusCode.UNAVAILABLE  # plaintext
    assert _fails(server.target, _client(Ca("another-ca"))) == grpc.StatusCode.UNAVAILABLE  # untrusted
    # The failed handshakes wrote no line of gRPC's own into the JSON log.
    assert server.stop() == 0
    assert _only_json_lines(server) == []


def test_a_renewed_certificate_serves_new_connections(start_server: Any, tmp_path: Path, ca: Ca) -> None:
    server, cert, key = _serve_tls(start_server, tmp_path, ca)
    assert x509.load_pem_x509_certificate(_served_cert(server.port)) == x509.load_pem_x509_certificate(
        cert.read_bytes()
    )
    renewed_cert, renewed_key = ca.issue(tmp_path, "renewed")
    key.write_bytes(renewed_key.read_bytes())
    cert.write_bytes(renewed_cert.read_bytes())
    served = x509.load_pem_x509_certificate(_served_cert(server.port))
    assert served == x509.load_pem_x509_certificate(renewed_cert.read_bytes())
    assert _list_games(server.target, _client(ca)).games
    end = time.monotonic() + 10
    while not any(r.get("event") == "tls_reloaded" for r in server.log_lines()):
        assert time.monotonic() < end, "no tls_reloaded line"
        time.sleep(0.05)
    assert server.stop() == 0


def test_mutual_tls_admits_only_clients_of_its_ca(start_server: Any, tmp_path: Path, ca: Ca) -> None:
    clients = Ca("heka-clients")
    server, cert, key = _serve_tls(start_server, tmp_path, ca, clients=clients)
    assert server.info["tls"] == "mutual"
    good_cert, good_key = clients.issue(tmp_path, "backend")
    assert _list_games(server.target, _client(ca, good_cert, good_key)).games
    assert _fails(server.target, _client(ca)) == grpc.StatusCode.UNAVAILABLE  # no certificate
    stranger_cert, stranger_key = Ca("strangers").issue(tmp_path, "stranger")
    assert _fails(server.target, _client(ca, stranger_cert, stranger_key)) == grpc.StatusCode.UNAVAILABLE
    # The server's own certificate is not a client's: another CA signed it.
    assert _fails(server.target, _client(ca, cert, key)) == grpc.StatusCode.UNAVAILABLE
    assert server.stop() == 0


def test_health_answers_over_tls(start_server: Any, tmp_path: Path, ca: Ca) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    server, _, _ = _serve_tls(start_server, tmp_path, ca)
    with grpc.secure_channel(server.target, _client(ca)) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert server.stop() == 0


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_bad_file_stops_the_start_naming_it(
    start_server: Any, tmp_path: Path, ca: Ca, processes: str
) -> None:
    cert, _ = ca.issue(tmp_path, "server")
    _, other_key = ca.issue(tmp_path, "other")
    with pytest.raises(ServerStartError, match="exited with 2") as info:
        _serve(
            start_server,
            "--grpc-processes",
            processes,
            "--tls-cert-file",
            str(cert),
            "--tls-key-file",
            str(other_key),
        )
    lines = [json.loads(line) for line in str(info.value).splitlines() if line.startswith("{")]
    (failed,) = [line for line in lines if line.get("event") == "start_failed"]
    assert failed["msg"].startswith(
        f"cannot start: HEKA_TLS_KEY_FILE {other_key}: not the key of the certificate"
    )


# -- heka health: the probe for a TLS port -------------------------------------------------


def _health(*args: str, port: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    if port is not None:
        env["HEKA_PORT"] = str(port)
    return subprocess.run(
        [sys.executable, "-m", "service.cli", "health", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_heka_health_over_plaintext_tls_and_mutual_tls(start_server: Any, tmp_path: Path, ca: Ca) -> None:
    plain = _serve(start_server)
    answer = _health(port=plain.port)  # the default target: localhost and HEKA_PORT
    assert (answer.returncode, answer.stdout.strip()) == (0, "SERVING"), answer.stderr
    assert _health("--target", plain.target, "--service", "heka.v1.GameService").returncode == 0
    unknown = _health("--target", plain.target, "--service", "no.such.Service")
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr

    clients = Ca("probe-clients")
    mutual, _, _ = _serve_tls(start_server, tmp_path, ca, clients=clients)
    server_ca = ca.write(tmp_path)
    probe_cert, probe_key = clients.issue(tmp_path, "probe")
    tls_args = ("--tls-ca", str(server_ca), "--tls-cert", str(probe_cert), "--tls-key", str(probe_key))
    answer = _health(*tls_args, port=mutual.port)
    assert answer.returncode == 0, answer.stderr
    # The certificate names localhost and 127.0.0.1; another name must be the one checked.
    assert _health("--target", f"127.0.0.1:{mutual.port}", *tls_args).returncode == 0
    wrong_name = _health(*tls_args, "--tls-server-name", "heka.example", port=mutual.port)
    assert wrong_name.returncode == 1 and "UNAVAILABLE" in wrong_name.stderr
    no_client_cert = _health("--tls-ca", str(server_ca), port=mutual.port)
    assert no_client_cert.returncode == 1 and "UNAVAILABLE" in no_client_cert.stderr
    assert _health(port=mutual.port).returncode == 1  # plaintext to a TLS port
    assert plain.stop() == 0 and mutual.stop() == 0
    gone = _health("--target", plain.target, "--timeout", "1")
    assert gone.returncode == 1 and "UNAVAILABLE" in gone.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--timeout", "0"), "argument --timeout: seconds above 0 and at most 3,600, got 0"),
        (("--timeout", "inf"), "argument --timeout: seconds above 0 and at most 3,600, got inf"),
        (("--timeout", "nan"), "argument --timeout: seconds above 0 and at most 3,600, got nan"),
        (("--target", "127.0.0.1:99999"), "argument --target: expected HOST:PORT with a port 1..65535"),
        (("--target", ""), "argument --target: expected HOST:PORT"),
        (("--target", "127.0.0.1"), "argument --target: expected HOST:PORT"),
        (("--tls-cert", "c.pem", "--tls-ca", "ca.pem"), "give both --tls-cert and --tls-key"),
        (("--tls-server-name", "x"), "need --tls-ca"),
        (("--tls-ca", "/no/such/ca.pem"), "--tls-ca /no/such/ca.pem: cannot read it"),
    ],
)
def test_heka_health_names_a_bad_argument(args: tuple[str, ...], message: str) -> None:
    answer = _health(*args)
    assert answer.returncode == 2
    assert message in answer.stderr


def test_heka_health_names_a_tls_file_that_holds_no_certificate_or_key(tmp_path: Path, ca: Ca) -> None:
    """A client's CA, certificate or key file that holds none is named before any call (gRPC
    would only fail the handshake)."""
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(pem(ca.cert))
    for args, message in [
        (("--tls-ca", str(junk)), f"--tls-ca {junk}: holds no PEM certificate"),
        (
            ("--tls-ca", str(ca_file), "--tls-cert", str(junk), "--tls-key", str(junk)),
            f"--tls-cert {junk}: holds no",
        ),
        (
            ("--tls-ca", str(ca_file), "--tls-cert", str(ca_file), "--tls-key", str(junk)),
            f"--tls-key {junk}: holds no PEM private key",
        ),
    ]:
        answer = _health("--target", "127.0.0.1:9", *args)
        assert answer.returncode == 2, answer.stderr
        assert message in answer.stderr, answer.stderr


def test_heka_health_names_a_bad_heka_port() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    answer = subprocess.run(
        [sys.executable, "-m", "service.cli", "health"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "HEKA_PORT": "99999"},
        check=False,
    )
    assert answer.returncode == 2
    assert "heka health: HEKA_PORT='99999': expected a port 1..65535 (or --target)" in answer.stderr


def _loadtest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEKA_")}
    command = [sys.executable, "-m", "service.cli", "loadtest", "--scenario", "cheap", "--no-progress"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_heka_loadtest_over_mutual_tls(start_server: Any, tmp_path: Path, ca: Ca) -> None:
    clients = Ca("load-clients")
    server, _, _ = _serve_tls(start_server, tmp_path, ca, clients=clients)
    load_cert, load_key = clients.issue(tmp_path, "loadgen")
    tls_args = ("--tls-ca", str(ca.write(tmp_path)), "--tls-cert", str(load_cert), "--tls-key", str(load_key))
    run = _loadtest("--target", server.target, "--concurrency", "2", "--duration", "1s", "--json", *tls_args)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["settings"]["tls"] is True
    assert report["errors"] == 0 and report["rpcs"] > 0 and report["tasks"]["completed"] > 0
    half = _loadtest(
        "--target", server.target, "--tls-ca", str(ca.write(tmp_path)), "--tls-key", str(load_key)
    )
    assert half.returncode == 2 and "give both --tls-cert and --tls-key" in half.stderr
    assert server.stop() == 0
