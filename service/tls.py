"""TLS on the gRPC port (docs/operations.md, "TLS"): the server's certificate and key, and
optionally a CA whose certificates the clients must present (mutual TLS).

The files are read and checked before the server listens: a bad file stops the start with a
message naming its variable and what is wrong. They are read again when they change (a
renewed certificate, a Kubernetes Secret updated in place): gRPC asks
:meth:`Credentials.fetch` before each new handshake, and it returns the new files once they
pass the same checks. Files that do not pass are logged once and the last good ones are
kept; connections already open are not touched.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import os
import threading
from typing import Any

from service.commands.files import FileArgError, read_text
from service.config import Config, ConfigError

log = logging.getLogger("heka.server")

#: The largest PEM file read (a chain or a CA bundle is a few KiB).
MAX_PEM_BYTES = 1024 * 1024

CERT_VAR, KEY_VAR, CA_VAR = "HEKA_TLS_CERT_FILE", "HEKA_TLS_KEY_FILE", "HEKA_TLS_CLIENT_CA_FILE"


class TlsError(ConfigError):
    """A TLS file that cannot serve: unreadable, not PEM, expired, or a key that is not the
    certificate's."""


@dataclasses.dataclass(frozen=True)
class Material:
    """The PEM bytes gRPC takes, once checked."""

    cert_chain: bytes
    private_key: bytes
    client_ca: bytes | None
    not_after: datetime.datetime


def enabled(config: Config) -> bool:
    return bool(config.tls_cert_file)


def mode(config: Config) -> str:
    """``off``, ``tls`` or ``mutual`` (clients present a certificate)."""
    if not config.tls_cert_file:
        return "off"
    return "mutual" if config.tls_client_ca_file else "tls"


def read_pem(path: str, what: str) -> bytes:
    """The PEM file ``path`` (``what``: the setting or flag naming it); FileArgError names it
    and its fault."""
    return read_text(path, what, limit=MAX_PEM_BYTES).encode("ascii", errors="replace")


def certificates(pem: bytes, source: str) -> list[Any]:
    """The certificates of ``pem`` (``source``: the setting or flag and its path, for the
    message); a ValueError if it holds none."""
    from cryptography import x509

    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError:
        raise ValueError(f"{source}: holds no PEM certificate") from None


def private_key(pem: bytes, source: str, encrypted_hint: str = "") -> Any:
    """The unencrypted private key of ``pem``; a ValueError naming ``source`` if it holds none
    or holds it encrypted (``encrypted_hint``: where such a key belongs instead)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    try:
        return serialization.load_pem_private_key(pem, password=None)
    except TypeError:  # a password is needed
        raise ValueError(f"{source}: the key is encrypted; give it unencrypted{encrypted_hint}") from None
    except (ValueError, UnsupportedAlgorithm):
        raise ValueError(f"{source}: holds no PEM private key") from None


def _read(path: str, var: str) -> bytes:
    try:
        return read_pem(path, var)
    except FileArgError as exc:
        raise TlsError(str(exc)) from None


def load(config: Config, now: datetime.datetime | None = None) -> Material:
    """Read and check the TLS files of ``config``; :class:`TlsError` names the variable."""
    from cryptography.hazmat.primitives import serialization

    cert_pem = _read(config.tls_cert_file, CERT_VAR)
    key_pem = _read(config.tls_key_file, KEY_VAR)
    try:
        chain = certificates(cert_pem, f"{CERT_VAR} {config.tls_cert_file}")
        key = private_key(
            key_pem,
            f"{KEY_VAR} {config.tls_key_file}",
            " (a file only the server reads, such as a mounted Secret)",
        )
    except ValueError as exc:
        raise TlsError(str(exc)) from None
    leaf = chain[0]
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*spki) != leaf.public_key().public_bytes(*spki):
        raise TlsError(
            f"{KEY_VAR} {config.tls_key_file}: not the key of the certificate in {CERT_VAR} "
            f"{config.tls_cert_file} (the first certificate of the file)"
        )
    now = now or datetime.datetime.now(datetime.UTC)
    if leaf.not_valid_after_utc <= now:
        raise TlsError(
            f"{CERT_VAR} {config.tls_cert_file}: the certificate expired on "
            f"{leaf.not_valid_after_utc:%Y-%m-%d %H:%M} UTC"
        )
    if leaf.not_valid_before_utc > now:
        raise TlsError(
            f"{CERT_VAR} {config.tls_cert_file}: the certificate is valid only from "
            f"{leaf.not_valid_before_utc:%Y-%m-%d %H:%M} UTC"
        )
    client_ca = None
    if config.tls_client_ca_file:
        client_ca = _read(config.tls_client_ca_file, CA_VAR)
        try:
            certificates(client_ca, f"{CA_VAR} {config.tls_client_ca_file}")
        except ValueError as exc:
            raise TlsError(str(exc)) from None
    return Material(cert_pem, key_pem, client_ca, leaf.not_valid_after_utc)


def _signature(config: Config) -> tuple[Any, ...]:
    """What changes when a file is replaced: each file's identity, size and time (through
    symbolic links, as a Kubernetes Secret volume swaps them)."""
    out: list[Any] = []
    for path in (config.tls_cert_file, config.tls_key_file, config.tls_client_ca_file):
        if not path:
            out.append(None)
            continue
        try:
            st = os.stat(path)
        except OSError as exc:
            out.append(("missing", exc.errno))
            continue
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


class Credentials:
    """The gRPC server credentials of ``config``'s files, read again when they change."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._lock = threading.Lock()
        self._signature = _signature(config)
        self.material = load(config)

    def server_credentials(self) -> Any:
        import grpc

        return grpc.dynamic_ssl_server_credentials(
            self._configuration(self.material),
            self.fetch,
            require_client_authentication=self.material.client_ca is not None,
        )

    @staticmethod
    def _configuration(material: Material) -> Any:
        import grpc

        return grpc.ssl_server_certificate_configuration(
            [(material.private_key, material.cert_chain)], root_certificates=material.client_ca
        )

    def fetch(self) -> Any:
        """gRPC's question before a handshake: the new configuration when the files changed
        and pass the checks, else None (keep the current one)."""
        with self._lock:
            signature = _signature(self._config)
            if signature == self._signature:
                return None
            self._signature = signature
            try:
                material = load(self._config)
            except TlsError as exc:
                log.warning(
                    "TLS files changed but cannot serve; keeping the previous ones: %s",
                    exc,
                    extra={"fields": {"event": "tls_reload_failed"}},
                )
                return None
            if material == self.material:
                return None
            self.material = material
            log.info(
                "TLS files read again",
                extra={"fields": {"event": "tls_reloaded", "not_after": material.not_after.isoformat()}},
            )
            return self._configuration(material)


@dataclasses.dataclass(frozen=True)
class ClientTls:
    """A client's side of TLS (``heka health``, ``heka loadtest``): the CA that signed the
    server's certificate, a certificate and key of the client's own for mutual TLS, and the
    name the server's certificate must carry when the target's host is another."""

    ca: bytes
    cert: bytes | None = None
    key: bytes | None = None
    server_name: str = ""

    def credentials(self) -> Any:
        import grpc

        return grpc.ssl_channel_credentials(self.ca, self.key, self.cert)

    def options(self) -> list[tuple[str, Any]]:
        return [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []
