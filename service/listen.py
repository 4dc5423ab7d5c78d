"""Where heka's ports listen: every address of their host, on one port, or not at all.

The gRPC port (``HEKA_HOST``) and the metrics endpoint (``HEKA_METRICS_HOST``) both bind this
way.

gRPC core resolves a host name such as ``localhost`` to its addresses (``::1`` and
``127.0.0.1``) and starts once *any* of them binds. With ``127.0.0.1:PORT`` held by another
program, a server on ``localhost:PORT`` would listen on ``::1`` alone, and a local client
dialling ``127.0.0.1:PORT`` would reach the other program. Here the host is resolved once,
one port is reserved on every address (port 0: a port free on all of them), and gRPC binds
each address on its own: an address that does not bind stops the start, named.

An address of a *name* that this machine cannot bind at all (``::1`` where IPv6 is
disabled) is left out, as gRPC does; so is IPv6 for the wildcard ``[::]``, which then
falls back to ``0.0.0.0``. An address given as a literal must bind.

The reservation binds without listening and sets SO_REUSEADDR, as gRPC's own listener and
the metrics endpoint do: a server's closed connections keep its port in TIME_WAIT for up to
a minute after it stops, and a restart (a container restarted in the same pod network) must
bind at once. SO_REUSEADDR never lets a bind share a port that a socket *listens* on; the
first bind on each address, without SO_REUSEPORT, refuses a port that a running server
holds even when it listens with SO_REUSEPORT. A ``shared`` reservation keeps SO_REUSEPORT
sockets, so that several gRPC processes bind the same port.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from dataclasses import dataclass, field

#: Tries at finding a port free on every address when port 0 is asked for: another program
#: may hold the port the first address got on another address.
PORT_ATTEMPTS = 64

#: Names of this machine's loopback addresses: ``127.0.0.1`` and ``::1``, as gRPC binds them
#: (clients differ in which one they dial first).
LOCALHOST = ("localhost", "localhost.")

#: bind() errors that say this machine has no such address or family (IPv6 disabled).
_UNAVAILABLE = (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT)


class ListenError(OSError):
    """A port cannot listen where it was asked to; the message names the port and address."""


@dataclass(frozen=True, slots=True)
class Address:
    """One address to bind: ``host`` without brackets; ``required``: given as a literal."""

    host: str
    required: bool

    @property
    def family(self) -> socket.AddressFamily:
        return socket.AF_INET6 if ":" in self.host else socket.AF_INET

    @property
    def bracketed(self) -> str:
        """The address, IPv6 in brackets."""
        return f"[{self.host}]" if ":" in self.host else self.host

    def target(self, port: int) -> str:
        """The address with a port, as gRPC takes it."""
        return f"{self.bracketed}:{port}"


def resolve(host: str, setting: str = "HEKA_HOST") -> list[Address]:
    """The addresses of a gRPC-style host (``[::]``, ``[::1]``, ``0.0.0.0``, ``localhost``,
    a name); the wildcard ``[::]`` is one dual-stack address, and ``localhost`` is both
    loopbacks. An empty host is refused: every address must be asked for by name. Messages
    name ``setting``, the variable the host came from."""
    bare = host.strip()
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    if not bare:
        raise ListenError(
            f"{setting} is empty: name the address to bind "
            "(localhost: this machine only; [::]: every address)"
        )
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        return [Address(bare, required=bare != "::")]
    if bare.lower() in LOCALHOST:  # both loopbacks, whatever /etc/hosts lists (RFC 6761)
        return [Address("127.0.0.1", required=False), Address("::1", required=False)]
    try:
        infos = socket.getaddrinfo(bare, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ListenError(f"{setting} {host!r} does not resolve to an address: {exc.strerror}") from None
    found: list[Address] = []
    for family, _type, _proto, _name, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = Address(str(sockaddr[0]), required=False)
        if address not in found:
            found.append(address)
    if not found:
        raise ListenError(f"{setting} {host!r} has no IPv4 or IPv6 address")
    return found


@dataclass
class Reservation:
    """A port bound (not listening) on every address; :meth:`close` once gRPC has bound
    them (its binds share the reserved port)."""

    port: int
    addresses: list[Address]
    sockets: list[socket.socket] = field(default_factory=list)

    @property
    def hosts(self) -> list[str]:
        """The addresses, IPv6 in brackets (as the ``listening`` log line gives them)."""
        return [address.bracketed for address in self.addresses]

    @property
    def targets(self) -> list[str]:
        """Each address with the port, as gRPC takes them."""
        return [address.target(self.port) for address in self.addresses]

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()
        self.sockets.clear()

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def reserve(
    host: str, port: int, *, shared: bool = False, what: str = "gRPC port", setting: str = "HEKA_HOST"
) -> Reservation:
    """Reserve ``port`` (0: one free port) on every address of ``host`` (from the variable
    ``setting``); raises :class:`ListenError` naming ``what`` and the address that cannot bind."""
    addresses = resolve(host, setting)
    for _ in range(PORT_ATTEMPTS if port == 0 else 1):
        reservation = _try(addresses, port, shared, what)
        if reservation is not None:
            return reservation
    raise ListenError(f"no {what} free on every address of {host!r} in {PORT_ATTEMPTS} tries")


def _try(addresses: list[Address], port: int, shared: bool, what: str) -> Reservation | None:
    """One attempt at ``port``; None when port 0 was asked for and the port the first
    address got is taken on another address (try again)."""
    held = Reservation(port, [])
    try:
        for address in addresses:
            sock = _bind(address, held.port, shared, what)
            if sock is None and address.host == "::":  # no IPv6: the IPv4 wildcard, as gRPC does
                address = Address("0.0.0.0", required=True)
                sock = _bind(address, held.port, shared, what)
            if sock is None:
                continue
            held.sockets.append(sock)
            held.addresses.append(address)
            held.port = int(sock.getsockname()[1])
    except ListenError:
        held.close()
        if port == 0 and held.addresses:
            return None
        raise
    except BaseException:
        held.close()
        raise
    if not held.addresses:
        names = ", ".join(a.host for a in addresses)
        raise ListenError(f"no address to listen on: {names} cannot be bound on this machine")
    return held


def _bind(address: Address, port: int, shared: bool, what: str) -> socket.socket | None:
    """A socket bound to ``address:port`` (not listening); None when this machine has no
    such address and it need not bind."""
    try:
        probe = socket.socket(address.family, socket.SOCK_STREAM)
    except OSError as exc:
        if exc.errno in _UNAVAILABLE and not address.required:
            return None
        raise ListenError(f"cannot bind {what} {address.target(port)}: {exc.strerror}") from None
    sock = probe
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((address.host, port))
        if shared:
            port = int(probe.getsockname()[1])
            probe.close()
            sock = socket.socket(address.family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((address.host, port))
    except OSError as exc:
        probe.close()
        sock.close()
        if exc.errno in _UNAVAILABLE and not address.required:
            return None
        raise ListenError(f"cannot bind {what} {address.target(port)}: {exc.strerror}") from None
    return sock
