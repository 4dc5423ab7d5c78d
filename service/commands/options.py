"""``--option NAME=VALUE``, as the commands that create games take it (arena, simulate,
render): ``true`` / ``false`` and integers typed, anything else a string."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterable
from typing import Any

#: An integer option value: an optional minus and ASCII digits (``--5`` or ``1_000`` stay
#: strings, which the game's options then refuse by name).
_INTEGER = re.compile(r"-?[0-9]+")
#: The most digits an integer option may have (Python refuses past 4,300; no option needs more).
MAX_OPTION_DIGITS = 100
#: The largest seed a server returns (``CreateGameResponse.seed`` is a uint64).
MAX_SEED = 2**64 - 1


#: gRPC name-resolver schemes (grpc/doc/naming.md): a target that starts with one goes to gRPC
#: as written (``dns:///heka:50051``, ``unix:/run/heka.sock``).
GRPC_SCHEMES = ("dns:", "unix:", "unix-abstract:", "ipv4:", "ipv6:", "vsock:")


def game_name(text: str) -> str:
    """A ``--game`` value as the registry names the game: any case is the same game
    (``ATON`` is ``aton``), and the name that goes into files, tables and records is its own;
    an unknown game is refused naming the known ones."""
    from engine.core import EngineError
    from engine.registry import get_game

    try:
        return get_game(text).descriptor.name
    except EngineError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def utf8_text(text: str) -> str:
    """An argparse type: text that is valid Unicode, for a value that goes on the wire (a
    target, a service name, a TLS server name). Bytes that are not UTF-8 reach Python's argv
    as lone surrogates, which gRPC cannot encode: refused here naming the flag, not met as a
    traceback."""
    from service.config import is_utf8_text

    if not is_utf8_text(text):
        raise argparse.ArgumentTypeError(f"not UTF-8 text: {text!r}")
    return text


def server_address(text: str) -> str:
    """An argparse type: a server to call, ``HOST:PORT`` with a port 1..65535 (IPv6 in
    brackets), or a gRPC target with its scheme. A port out of range, a missing port or an
    empty value is refused here; gRPC would wrap the port around or pick 443."""
    target = utf8_text(text).strip()
    if target.lower().startswith(GRPC_SCHEMES):
        return target
    host, sep, port = target.rpartition(":")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    digits = port.isascii() and port.isdigit()
    if not sep or not bare or (":" in bare and bare == host) or not digits or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"expected HOST:PORT with a port 1..65535 (IPv6 in brackets: [::1]:50051), got {text!r}"
        )
    return target


def local_server(host: str) -> str:
    """The server on this machine that ``heka serve`` on its settings listens on: ``host`` and
    HEKA_PORT (default 50051), as the clients' default target; ValueError names a bad
    HEKA_PORT."""
    import os

    port = (os.environ.get("HEKA_PORT") or "").strip() or "50051"
    try:
        return server_address(f"{host}:{port}")
    except argparse.ArgumentTypeError:
        raise ValueError(f"HEKA_PORT={port!r}: expected a port 1..65535 (or --target)") from None


def seconds_up_to(most: float) -> Callable[[str], float]:
    """An argparse type: a number of seconds above 0 and at most ``most`` (``inf``, NaN or
    a value past what a timer takes are refused here, not met as an overflow later)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a number of seconds, got {text!r}") from None
        if not 0 < value <= most:
            raise argparse.ArgumentTypeError(f"seconds above 0 and at most {most:,g}, got {text}")
        return value

    return parse


#: The most worker processes a command starts (``--workers``): more than any machine heka
#: runs on has cores, and each holds pipes and memory.
MAX_WORKERS = 1024


def _whole(text: str, low: int, high: int, kind: str, within: str) -> int:
    """``text`` as a whole number ``low..high``, or argparse's error: ``kind`` says what the
    value is (for text that is no number), ``within`` its range."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{kind}, got {text!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{within}, got {value}")
    return value


def workers_count(text: str) -> int:
    """An argparse type: a number of worker processes, 1..:data:`MAX_WORKERS`."""
    return _whole(text, 1, MAX_WORKERS, "a number of processes", f"must be 1..{MAX_WORKERS}")


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number ``low..high`` (the message gives the range)."""
    return lambda text: _whole(
        text, low, high, f"a whole number {low:,}..{high:,}", f"must be {low:,}..{high:,}"
    )


def games_count(text: str) -> int:
    """An argparse type: a number of games for a run, 1..:data:`ai.arena.MAX_GAMES` (a larger
    run is no run this machine finishes; it would only hang)."""
    from ai.arena import MAX_GAMES

    return _whole(text, 1, MAX_GAMES, "a number of games", f"must be 1..{MAX_GAMES:,}")


def seed_value(text: str) -> int:
    """An argparse type: a run's seed, 0..2^64 - 1 (a game's seed is never negative)."""
    return _whole(text, 0, MAX_SEED, "a seed is an integer", "a seed is 0..2^64-1")


def uint64_seed(text: str) -> int:
    """An argparse type: a seed as ``CreateGame`` returns it, 0..2^64 - 1."""
    return _whole(text, 0, MAX_SEED, "a seed is an integer", f"a server's seed is 0..{MAX_SEED} (a uint64)")


def parse_option_pairs(pairs: Iterable[str]) -> list[tuple[str, Any]]:
    """The ``(name, value)`` of each pair, in order; :class:`ValueError` naming a bad one."""
    out: list[tuple[str, Any]] = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--option needs NAME=VALUE, got {pair!r}")
        if name.strip() in {n for n, _ in out}:
            raise ValueError(f"--option {name.strip()} given twice")
        low = value.strip().lower()
        parsed: Any = value.strip()
        if low in ("true", "false"):
            parsed = low == "true"
        elif _INTEGER.fullmatch(low):
            if len(low.lstrip("+-")) > MAX_OPTION_DIGITS:
                raise ValueError(f"--option {name.strip()}: a number of at most {MAX_OPTION_DIGITS} digits")
            parsed = int(low)
        out.append((name.strip(), parsed))
    return out


def with_teams(options: dict[str, Any], teams: bool) -> dict[str, Any]:
    """``options`` with ``--teams`` added (``teams=True``); :class:`ValueError` where an
    ``--option teams=...`` says otherwise."""
    if teams:
        if options.get("teams", True) is not True:
            raise ValueError(f"--teams and --option teams={options['teams']} disagree")
        options["teams"] = True
    return options


def add_tls_client_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tls-ca``, ``--tls-cert``, ``--tls-key``, ``--tls-server-name``: a client's TLS, read
    by :func:`tls_client`."""
    parser.add_argument(
        "--tls-ca",
        default="",
        help="PEM CA certificate(s) that signed the server's certificate: call over TLS",
    )
    parser.add_argument(
        "--tls-cert", default="", help="PEM client certificate, for a server that asks for one"
    )
    parser.add_argument("--tls-key", default="", help="PEM key of --tls-cert (unencrypted)")
    parser.add_argument(
        "--tls-server-name",
        default="",
        type=utf8_text,
        help="the name the server's certificate must carry, when the target's host is another "
        "(e.g. localhost in a pod whose certificate names the Service)",
    )


def state_keys(keys_file: str) -> tuple[str, str]:
    """The state keys a command opens tokens with, and where they came from (for messages):
    ``--state-keys-file`` when given, else HEKA_STATE_KEYS, else HEKA_STATE_KEYS_FILE, as
    ``heka serve`` reads them. A file given that holds no key is a ValueError naming it."""
    import os

    from service.commands.files import read_text

    spec = os.environ.get("HEKA_STATE_KEYS", "")
    path = os.environ.get("HEKA_STATE_KEYS_FILE", "")
    if keys_file or (not spec.strip() and path):
        source = f"--state-keys-file {keys_file}" if keys_file else f"HEKA_STATE_KEYS_FILE {path}"
        spec = read_text(keys_file or path, source.partition(" ")[0])
        if not spec.strip():
            raise ValueError(f"{source} holds no keys")
        return spec, source
    return spec, "HEKA_STATE_KEYS"


def tls_client(args: argparse.Namespace) -> Any:
    """The :class:`service.tls.ClientTls` of :func:`add_tls_client_arguments`' flags, or None
    without ``--tls-ca``; ValueError names a bad flag or file."""
    from service.tls import ClientTls

    if bool(args.tls_cert) != bool(args.tls_key):
        raise ValueError("give both --tls-cert and --tls-key, or neither")
    if not args.tls_ca:
        if args.tls_cert or args.tls_server_name:
            raise ValueError("--tls-cert, --tls-key and --tls-server-name need --tls-ca")
        return None
    return ClientTls(
        ca=_pem(args.tls_ca, "--tls-ca", certificate=True),
        cert=_pem(args.tls_cert, "--tls-cert", certificate=True) if args.tls_cert else None,
        key=_pem(args.tls_key, "--tls-key", certificate=False) if args.tls_key else None,
        server_name=args.tls_server_name,
    )


def _pem(path: str, flag: str, *, certificate: bool) -> bytes:
    """A client's PEM file, checked to hold what ``flag`` needs (a certificate, or an
    unencrypted private key): gRPC would only fail the handshake, naming no file."""
    from service.tls import certificates, private_key, read_pem

    pem = read_pem(path, flag)
    if certificate:
        certificates(pem, f"{flag} {path}")
    else:
        private_key(pem, f"{flag} {path}")
    return pem
