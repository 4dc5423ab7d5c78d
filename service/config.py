"""Server configuration: every setting is a ``heka serve`` flag and a ``HEKA_*`` variable.

Precedence: command-line flag, then environment variable, then default. :data:`SETTINGS`
is the single table of settings; the flags, the environment parsing and the table in
``docs/reference/settings.md`` (generated; checked by a test) all come from it.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import glob
import math
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from typing import Any, Final

from ai.mcts_params import MAX_ITERATIONS

#: Default queue length per search slot (HEKA_MAX_QUEUED_SEARCHES=0): a queue this long
#: drains within the default maximum wait at every preset's pace up to `hard` (this many times
#: its time per decision: docs/presets.md, "Latency by preset"); bench/overload.py measures
#: the queue past capacity (closed loop at 4x and 10x the slots, open loop at 1.5x).
QUEUE_PER_SLOT = 8


#: Seconds the shutdown grace must leave past the longest bot call (:attr:`Config.longest_bot_call_seconds`):
#: for a search that reaches its time cap to stop, and its call's answer to be sealed and sent.
STOP_MARGIN_SECONDS = 1.0


class ConfigError(ValueError):
    """A setting has a bad value."""


def _parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"expected true or false, got {text!r}")


@dataclasses.dataclass(frozen=True, slots=True)
class Setting:
    name: str  # attribute of Config
    env: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    metavar: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def cgroup_cpu_limit(root: str = "/sys/fs/cgroup") -> float | None:
    """The container's CPU limit in CPUs (a Kubernetes ``resources.limits.cpu``), from cgroup
    v2 ``cpu.max`` (``"200000 100000"`` = 2 CPUs, ``"max ..."`` = none) or cgroup v1
    ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``; ``None`` when there is no limit."""
    try:
        with open(os.path.join(root, "cpu.max"), encoding="ascii") as fh:
            quota, _, period = fh.read().strip().partition(" ")
        if quota != "max" and period:
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us"), encoding="ascii") as fh:
            quota_us = int(fh.read().strip())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us"), encoding="ascii") as fh:
            period_us = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def _cpus() -> int:
    """CPUs this process may use: its affinity mask, capped by the cgroup CPU limit (rounded
    up), so that ``HEKA_SEARCH_WORKERS=0`` sizes the pool to the pod, not to the node."""
    try:
        cpus = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = max(1, os.cpu_count() or 1)
    limit = cgroup_cpu_limit()
    if limit is not None:
        cpus = min(cpus, max(1, math.ceil(limit)))
    return cpus


def _setting(env: str, default: Any, help: str, *, metavar: str = "") -> Any:
    """A field of :class:`Config`: its default, and (as metadata) its variable and help."""
    return dataclasses.field(default=default, metadata={"env": env, "help": help, "metavar": metavar})


@dataclasses.dataclass(frozen=True, slots=True)
class Config:
    """Every ``heka serve`` setting, declared once: a field each, with its ``HEKA_*`` variable
    and help. The flags, the environment parsing (:func:`load`), :data:`SETTINGS` and the table
    in ``docs/reference/settings.md`` (checked by a test) all come from these fields."""

    host: str = _setting(
        "HEKA_HOST",
        "localhost",
        "Address the gRPC server binds (localhost: this machine only; `[::]`: every address, "
        "as the image sets it).",
    )
    port: int = _setting("HEKA_PORT", 50051, "gRPC port (0: any free port, logged at start).")
    metrics_port: int = _setting(
        "HEKA_METRICS_PORT", 9095, "Prometheus metrics HTTP port (0: any free port; -1: no metrics endpoint)."
    )
    metrics_host: str = _setting(
        "HEKA_METRICS_HOST",
        "",
        "Address the metrics endpoint binds (empty: the gRPC host, HEKA_HOST).",
        metavar="HOST",
    )
    tls_cert_file: str = _setting(
        "HEKA_TLS_CERT_FILE",
        "",
        "PEM certificate (chain) of the gRPC port: with HEKA_TLS_KEY_FILE, the port speaks TLS only. "
        "Read again when it changes. Empty: plaintext (TLS at a mesh or proxy).",
        metavar="PATH",
    )
    tls_key_file: str = _setting(
        "HEKA_TLS_KEY_FILE",
        "",
        "PEM private key (unencrypted) of HEKA_TLS_CERT_FILE's certificate.",
        metavar="PATH",
    )
    tls_client_ca_file: str = _setting(
        "HEKA_TLS_CLIENT_CA_FILE",
        "",
        "PEM CA certificate(s): with TLS on, a client must present a certificate they signed "
        "(mutual TLS). Empty: clients are not asked for one.",
        metavar="PATH",
    )
    state_keys: str = _setting(
        "HEKA_STATE_KEYS",
        "",
        "State token keys: comma-separated `key_id:secret` pairs, secret in base64 (>= 16 bytes "
        "decoded, 32 recommended). The first key seals new tokens and keys new games' chance; all"
        " open tokens. Empty: an ephemeral key is made at start (tokens die with the process).",
        metavar="ID:SECRET,...",
    )
    state_keys_file: str = _setting(
        "HEKA_STATE_KEYS_FILE",
        "",
        "File holding the HEKA_STATE_KEYS value (e.g. a mounted Secret), instead of "
        "HEKA_STATE_KEYS (not both).",
        metavar="PATH",
    )
    insecure_plaintext_tokens: bool = _setting(
        "HEKA_INSECURE_PLAINTEXT_TOKENS",
        False,
        "Debugging only: write state tokens signed but NOT encrypted, so anyone holding one can "
        "read every hidden card (logged as a warning). Tokens are AES-256-GCM sealed otherwise.",
    )
    previous_state_versions: bool = _setting(
        "HEKA_PREVIOUS_STATE_VERSIONS",
        False,
        "Write new tokens in the previous release's state versions (aton:1, osirium:2), which that "
        "release can read: for a rolling upgrade from it, or a rollback to it "
        "(docs/operations.md).",
    )
    grpc_processes: int = _setting(
        "HEKA_GRPC_PROCESSES",
        1,
        "gRPC serving processes sharing the port (SO_REUSEPORT), forked before gRPC starts; each "
        "has its own search workers; the search capacity is shared. More than 1 uses several CPUs"
        " for cheap calls.",
    )
    search_workers: int = _setting(
        "HEKA_SEARCH_WORKERS",
        0,
        "Bot search worker processes of each gRPC process (0: the available CPUs, capped by the "
        "cgroup CPU limit, divided by HEKA_GRPC_PROCESSES).",
    )
    max_concurrent_searches: int = _setting(
        "HEKA_MAX_CONCURRENT_SEARCHES",
        0,
        "Bot calls (BotMove, AdvanceBots, and CreateGame/ApplyAction with searching bots) that "
        "hold a search slot at once; more wait in the queue (HEKA_MAX_QUEUED_SEARCHES) (0: all "
        "search workers of all gRPC processes).",
    )
    max_queued_searches: int = _setting(
        "HEKA_MAX_QUEUED_SEARCHES",
        0,
        "Bot calls that wait for a search slot in one gRPC process's FIFO queue when every slot "
        "is busy; more are refused at once with RESOURCE_EXHAUSTED, reason QUEUE_FULL, and a retry "
        f"hint (0: {QUEUE_PER_SLOT} per search slot of the process).",
    )
    max_queue_wait_seconds: float = _setting(
        "HEKA_MAX_QUEUE_WAIT_SECONDS",
        5.0,
        "Longest a bot call waits in the queue for a search slot: a call whose expected wait "
        "(its place in line times the recent time a call holds a slot, divided by the process's "
        "share of the slots) is longer, or leaves no "
        "time for its search before its deadline, is refused on arrival (QUEUE_WAIT, QUEUE_DEADLINE); "
        "one still waiting then is refused (0: no queue).",
    )
    max_workers_per_search: int = _setting(
        "HEKA_MAX_WORKERS_PER_SEARCH",
        1,
        "Most root-parallel processes one BotMove may ask for (BotSettings.workers).",
    )
    max_iterations: int = _setting(
        "HEKA_MAX_ITERATIONS", 200_000, "Cap on a search's iterations (at most 1,000,000)."
    )
    max_milliseconds: float = _setting(
        "HEKA_MAX_MILLISECONDS",
        30000.0,
        "Cap on a search's milliseconds (the presets' time caps too); also the longest a search "
        "runs when the call has no deadline.",
    )
    max_advance_moves: int = _setting(
        "HEKA_MAX_ADVANCE_MOVES", 400, "Cap on the moves one AdvanceBots call applies."
    )
    max_advance_seconds: float = _setting(
        "HEKA_MAX_ADVANCE_SECONDS",
        30.0,
        "Cap on the bots' total time in one call (AdvanceBots, or the bots of CreateGame and "
        "ApplyAction), deadline or not: it then stops with STOP_REASON_TIME_LIMIT, keeping the "
        "moves made.",
    )
    max_review_seconds: float = _setting(
        "HEKA_MAX_REVIEW_SECONDS",
        300.0,
        "Cap on one ReviewGame call's time, deadline or not: the review then ends with the moves "
        "reviewed so far (REVIEW_END_DEADLINE). A client that stops reading has this cap again "
        "(at most 10 s) to read the rest; then the call ends DEADLINE_EXCEEDED.",
    )
    max_review_actions: int = _setting(
        "HEKA_MAX_REVIEW_ACTIONS", 5000, "Cap on the actions one ReviewGame call replays."
    )
    max_concurrent_reviews: int = _setting(
        "HEKA_MAX_CONCURRENT_REVIEWS",
        0,
        "ReviewGame calls one gRPC process runs at once (each holds a thread while its searches "
        "run); one more is RESOURCE_EXHAUSTED with a retry hint (0: the process's search slots, "
        "HEKA_MAX_CONCURRENT_SEARCHES / HEKA_GRPC_PROCESSES).",
    )
    deadline_margin_ms: float = _setting(
        "HEKA_DEADLINE_MARGIN_MS",
        40.0,
        "Safety margin: a search stops this many ms (plus 5% of the time left) before the call's "
        "deadline so the answer is not late.",
    )
    grace_seconds: float = _setting(
        "HEKA_GRACE_SECONDS",
        32.0,
        "On SIGTERM/SIGINT, after the shutdown delay: seconds in-flight calls get to finish; "
        "bot calls still running then are answered UNAVAILABLE, reason SHUTTING_DOWN, with a "
        "retry hint. At least the longest bot call, max(HEKA_MAX_MILLISECONDS / 1000, "
        f"HEKA_MAX_ADVANCE_SECONDS), plus {STOP_MARGIN_SECONDS:g} s, or the server refuses to start.",
    )
    shutdown_delay_seconds: float = _setting(
        "HEKA_SHUTDOWN_DELAY_SECONDS",
        0.0,
        "On SIGTERM: seconds to keep serving after health turns NOT_SERVING (lets load balancers "
        "notice) before draining.",
    )
    max_connection_age_seconds: float = _setting(
        "HEKA_MAX_CONNECTION_AGE_SECONDS",
        300.0,
        "Connections are closed (GOAWAY) after this age so clients rebalance over new replicas (0: never).",
    )
    max_connection_age_grace_seconds: float = _setting(
        "HEKA_MAX_CONNECTION_AGE_GRACE_SECONDS", 60.0, "Time calls on an aged-out connection get to finish."
    )
    keepalive_seconds: float = _setting(
        "HEKA_KEEPALIVE_SECONDS",
        60.0,
        "Server keepalive ping interval on idle connections (0: no pings; else at least 10 s).",
    )
    max_request_bytes: int = _setting(
        "HEKA_MAX_REQUEST_BYTES",
        64 * 1024,
        "Largest request message; gRPC refuses a larger one with RESOURCE_EXHAUSTED before it is "
        "decoded (real requests are a few KiB; a state token is under 1 KiB).",
    )
    max_message_bytes: int = _setting(
        "HEKA_MAX_MESSAGE_BYTES",
        4 * 1024 * 1024,
        "Largest response message (Osirium's legal-action list is ~41 KB, AdvanceBots with "
        "diagnostics more); requests: HEKA_MAX_REQUEST_BYTES.",
    )
    max_concurrent_rpcs: int = _setting(
        "HEKA_MAX_CONCURRENT_RPCS",
        1000,
        "Calls one gRPC process holds at once, from a call's arrival (before its request is read) "
        "to the answer "
        "(health checks excepted); more are refused at once with RESOURCE_EXHAUSTED and a retry "
        "hint (0: no cap).",
    )
    max_queued_rpcs: int = _setting(
        "HEKA_MAX_QUEUED_RPCS",
        20_000,
        "Calls gRPC core keeps for one gRPC process until its event loop takes them (a burst "
        "waits there, served in order; ~12 KiB each). gRPC refuses calls beyond it with a bare "
        "CANCELLED (its own default, 1,000 to 3,000, did that to bursts).",
    )
    grpc_threads: int = _setting(
        "HEKA_GRPC_THREADS",
        32,
        "Threads for bot calls whose bots do not search (random bots), and as many spare for "
        "searching calls beside one per place in the search queue and per review; cheap calls "
        "run on the asyncio event loop.",
    )
    state_cache_size: int = _setting(
        "HEKA_STATE_CACHE_SIZE",
        2048,
        "Decoded states of recently seen tokens kept in memory (a memo: answers never depend on "
        "it; 0 disables).",
    )
    log_level: str = _setting("HEKA_LOG_LEVEL", "INFO", "Log level (DEBUG, INFO, WARNING, ERROR).")
    access_log: bool = _setting(
        "HEKA_ACCESS_LOG", True, "One JSON line per RPC on stderr (health checks at DEBUG level)."
    )
    metrics_dir: str = _setting(
        "HEKA_METRICS_DIR",
        "",
        "Prometheus multiprocess directory (must be writable; its metric files, "
        "counter_*.db, gauge_*.db, histogram_*.db, summary_*.db, are removed at start, "
        "nothing else). Empty: a new temporary directory.",
        metavar="PATH",
    )
    trusted_decode: bool = _setting(
        "HEKA_TRUSTED_DECODE",
        False,
        "Enable DecodeState, which reveals the full state (hidden cards) of a token: only for "
        "trusted callers.",
    )
    reflection: bool = _setting("HEKA_REFLECTION", True, "Serve gRPC server reflection.")
    worker_nice: int = _setting(
        "HEKA_WORKER_NICE",
        10,
        "Niceness added to search workers so the gRPC event loop and health checks keep the CPU "
        "(searches use what cheap calls leave; their budgets and deadlines still hold).",
    )

    @property
    def workers(self) -> int:
        """Search worker processes of each gRPC process."""
        if self.search_workers > 0:
            return self.search_workers
        return max(1, _cpus() // max(1, self.grpc_processes))

    @property
    def metrics_bind_host(self) -> str:
        """The metrics endpoint's address: HEKA_METRICS_HOST, else the gRPC host."""
        return self.metrics_host or self.host

    @property
    def metrics_host_setting(self) -> str:
        """The variable :attr:`metrics_bind_host` comes from, for messages."""
        return "HEKA_METRICS_HOST" if self.metrics_host else "HEKA_HOST"

    @property
    def search_share(self) -> int:
        """Search slots one gRPC process can expect to use (the capacity is shared)."""
        return max(1, math.ceil(self.search_capacity / max(1, self.grpc_processes)))

    @property
    def review_capacity(self) -> int:
        """ReviewGame calls one gRPC process runs at once."""
        return self.max_concurrent_reviews if self.max_concurrent_reviews > 0 else self.search_share

    @property
    def search_queue_length(self) -> int:
        """Bot calls that may wait for a slot in one gRPC process."""
        if self.max_queued_searches > 0:
            return self.max_queued_searches
        return QUEUE_PER_SLOT * self.search_share

    @property
    def search_capacity(self) -> int:
        """Bot calls admitted at once (over all gRPC processes)."""
        if self.max_concurrent_searches > 0:
            return self.max_concurrent_searches
        return self.workers * max(1, self.grpc_processes)

    @property
    def longest_bot_call_seconds(self) -> float:
        """The longest a bot call admitted before a drain can run without a deadline of its
        own: one search (BotMove: HEKA_MAX_MILLISECONDS, which also caps every preset's time
        cap, hard's and expert's among them), or one bot loop (AdvanceBots, and the bots of
        CreateGame and ApplyAction: HEKA_MAX_ADVANCE_SECONDS, the loop's end, which each of
        its searches stops by too)."""
        return max(self.max_milliseconds / 1000.0, self.max_advance_seconds)

    def validate(self) -> Config:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                within = f" in {range_text(f.name)}" if f.name in RANGES else ""
                raise ConfigError(f"{_named(f.name)} must be a finite number{within}, got {value}")
            # Bytes that are not UTF-8 reach Python as lone surrogates (argv, environment):
            # named here, not met as an encoding error of whatever uses the text.
            if isinstance(value, str) and not is_utf8_text(value):
                raise ConfigError(f"{_named(f.name)} is not UTF-8 text")
        if not self.host.strip():
            raise ConfigError(
                f"{_named('host')} is empty: name the address to bind (localhost: this machine only; "
                "[::]: every address)"
            )
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ConfigError(
                    f"{_named(name)} must be in {_number(low)}..{_number(high)}, got {_number(value)}"
                )
        for name in _POSITIVE:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{_named(name)} must be positive, got {_number(getattr(self, name))}")
        if 0 < self.keepalive_seconds < MIN_KEEPALIVE_SECONDS:
            raise ConfigError(
                f"{_named('keepalive_seconds')} must be 0 (no keepalive pings) or at least "
                f"{MIN_KEEPALIVE_SECONDS:g} s (no more often than clients may ping), got "
                f"{_number(self.keepalive_seconds)}"
            )
        if self.metrics_port > 0 and self.metrics_port == self.port and self.metrics_bind_host == self.host:
            raise ConfigError(f"--metrics-port {self.metrics_port} is the gRPC --port: give each its own")
        needed = self.longest_bot_call_seconds + STOP_MARGIN_SECONDS
        if self.grace_seconds < needed:
            raise ConfigError(
                f"HEKA_GRACE_SECONDS (--grace-seconds) is {self.grace_seconds:g} s, shorter than the "
                f"longest bot call it must let finish: max(HEKA_MAX_MILLISECONDS {self.max_milliseconds:g} "
                f"ms, HEKA_MAX_ADVANCE_SECONDS {self.max_advance_seconds:g} s) + {STOP_MARGIN_SECONDS:g} s "
                f"= {needed:g} s; raise the grace to at least {needed:g} s or lower those caps"
            )
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ConfigError(
                "give both HEKA_TLS_CERT_FILE (--tls-cert-file) and HEKA_TLS_KEY_FILE (--tls-key-file), "
                "or neither"
            )
        if self.tls_client_ca_file and not self.tls_cert_file:
            raise ConfigError(
                "HEKA_TLS_CLIENT_CA_FILE (--tls-client-ca-file) checks client certificates during a TLS "
                "handshake: it needs HEKA_TLS_CERT_FILE and HEKA_TLS_KEY_FILE too"
            )
        if self.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ConfigError(
                f"{_named('log_level')} is {self.log_level!r}: expected DEBUG, INFO, WARNING, "
                "ERROR or CRITICAL"
            )
        return self


#: The longest duration a setting may hold: gRPC takes durations as 32-bit signed
#: milliseconds (a longer one stops the start with an overflow).
MAX_DURATION_SECONDS: Final = (2**31 - 1) // 1000
#: The shortest server keepalive interval: the server pings idle connections no more often
#: than it lets clients ping it (``grpc.http2.min_ping_interval_without_data_ms``).
MIN_KEEPALIVE_SECONDS: Final = 10.0
#: Counts beyond which a setting exhausts any machine heka is sized for.
_MAX_COUNT = 1_000_000

#: The range of every number setting, both ends included (a setting that must be positive is
#: checked apart): message sizes and durations as gRPC's 32-bit signed values allow, counts
#: as far as a machine can hold. A value outside stops the start naming the setting, never a
#: traceback from gRPC or an overflow later.
RANGES: Final[dict[str, tuple[float, float]]] = {
    "port": (0, 65535),
    "metrics_port": (-1, 65535),
    "grpc_processes": (1, 256),
    "search_workers": (0, 1024),
    "max_concurrent_searches": (0, _MAX_COUNT),
    "max_queued_searches": (0, _MAX_COUNT),
    "max_queue_wait_seconds": (0, MAX_DURATION_SECONDS),
    "max_workers_per_search": (1, 256),
    # A search holds its tables for its whole budget (ai.mcts_params).
    "max_iterations": (1, MAX_ITERATIONS),
    "max_milliseconds": (0, MAX_DURATION_SECONDS * 1000),
    "max_advance_moves": (1, _MAX_COUNT),
    "max_advance_seconds": (0, MAX_DURATION_SECONDS),
    "max_review_seconds": (0, MAX_DURATION_SECONDS),
    "max_review_actions": (1, _MAX_COUNT),
    "max_concurrent_reviews": (0, _MAX_COUNT),
    "deadline_margin_ms": (0, MAX_DURATION_SECONDS * 1000),
    "grace_seconds": (0, MAX_DURATION_SECONDS),
    "shutdown_delay_seconds": (0, MAX_DURATION_SECONDS),
    "max_connection_age_seconds": (0, MAX_DURATION_SECONDS),
    "max_connection_age_grace_seconds": (0, MAX_DURATION_SECONDS),
    "keepalive_seconds": (0, MAX_DURATION_SECONDS),
    "max_request_bytes": (1, 2**31 - 1),
    "max_message_bytes": (1, 2**31 - 1),
    "max_concurrent_rpcs": (0, _MAX_COUNT),
    "max_queued_rpcs": (1, _MAX_COUNT),
    "grpc_threads": (1, 4096),
    "state_cache_size": (0, _MAX_COUNT),
    "worker_nice": (0, 19),
}


def _named(name: str) -> str:
    """A setting as an operator writes it: its variable and its flag."""
    return f"HEKA_{name.upper()} (--{name.replace('_', '-')})"


def _number(value: float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}"


_PARSERS: dict[str, Callable[[str], Any]] = {"str": str, "int": int, "float": float, "bool": _parse_bool}

#: The settings, from :class:`Config`'s fields: each one's flag (``--name``), variable,
#: parser (by the field's type), default and help.
SETTINGS: tuple[Setting, ...] = tuple(
    Setting(
        f.name, f.metadata["env"], _PARSERS[str(f.type)], f.default, f.metadata["help"], f.metadata["metavar"]
    )
    for f in dataclasses.fields(Config)
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per setting; defaults are None so that the environment can fill in."""
    for s in SETTINGS:
        kwargs: dict[str, Any] = {"dest": s.name, "default": None}
        if s.parse is _parse_bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        else:
            kwargs["type"] = s.parse
            if s.metavar:
                kwargs["metavar"] = s.metavar
        kwargs["help"] = f"{s.help} [env {s.env}, default {s.default!r}]".replace("%", "%%")
        parser.add_argument(s.flag, **kwargs)


def load(args: argparse.Namespace | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Build a :class:`Config` from parsed flags (``None`` = not given) and the environment."""
    env = os.environ if environ is None else environ
    _check_retired(env)
    values: dict[str, Any] = {}
    for s in SETTINGS:
        given = getattr(args, s.name, None) if args is not None else None
        if given is not None:
            values[s.name] = given
            continue
        raw = env.get(s.env)
        if raw is None or (raw.strip() == "" and s.parse is not str):
            continue
        try:
            values[s.name] = s.parse(raw.strip())
        except (ValueError, ConfigError):
            raise ConfigError(f"{s.env}={raw!r}: expected {_expected(s)}") from None
    return Config(**values).validate()


#: Settings of earlier releases that are gone, and what replaces them.
RETIRED = {
    "HEKA_ENCRYPT_STATE": "tokens are always encrypted now; HEKA_INSECURE_PLAINTEXT_TOKENS=true turns "
    "encryption off, for debugging only",
}


def _check_retired(env: Mapping[str, str]) -> None:
    """A retired setting that would change behaviour is an error, not silently ignored:
    ``HEKA_ENCRYPT_STATE=false`` asked for readable tokens, which now takes the explicit
    insecure setting. ``true`` (the new default) is accepted."""
    raw = env.get("HEKA_ENCRYPT_STATE")
    if raw is None or not raw.strip():
        return
    try:
        keeps_encryption = _parse_bool(raw)
    except ConfigError:
        raise ConfigError(
            f"HEKA_ENCRYPT_STATE={raw!r}: expected true or false (a retired setting: "
            f"{RETIRED['HEKA_ENCRYPT_STATE']})"
        ) from None
    if not keeps_encryption:
        raise ConfigError(
            f"HEKA_ENCRYPT_STATE={raw!r} is no longer supported: {RETIRED['HEKA_ENCRYPT_STATE']}"
        )


_POSITIVE = ("max_milliseconds", "max_advance_seconds", "max_review_seconds")


def _expected(s: Setting) -> str:
    """What a setting's variable must hold, for a message about a value that does not parse."""
    kind = {_parse_bool: "true or false", int: "a whole number", float: "a number"}.get(s.parse, "text")
    within = range_text(s.name)
    return f"{kind} ({within})" if within else kind


def range_text(name: str) -> str:
    """The values a number setting may take (:data:`RANGES`), as the settings table shows them."""
    if name not in RANGES:
        return ""
    low, high = RANGES[name]
    if name == "keepalive_seconds":
        return f"0, or {_number(MIN_KEEPALIVE_SECONDS)}..{_number(high)}"
    if name in _POSITIVE:
        return f"over 0, at most {_number(high)}"
    return f"{_number(low)}..{_number(high)}"


def markdown_table() -> str:
    """The settings as a Markdown table (for docs/reference/settings.md)."""
    lines = ["| Variable | Flag | Default | Range | Meaning |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        default = s.default
        shown = ("`true`" if default else "`false`") if isinstance(default, bool) else f"`{default}`"
        if default == "":
            shown = "(empty)"
        meaning = s.help.replace("|", "\\|")
        lines.append(f"| `{s.env}` | `{s.flag}` | {shown} | {range_text(s.name)} | {meaning} |")
    return "\n".join(lines)


def is_utf8_text(text: str) -> bool:
    """Whether ``text`` came from UTF-8: bytes that are not reach Python's argv and
    environment as lone surrogates, which nothing downstream can encode."""
    return not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: The files prometheus_client's multiprocess mode writes: its metric type (a gauge's with its
#: mode), then the writing process's id.
METRIC_FILE = re.compile(r"(?:counter|gauge_[a-z]+|histogram|summary)_\d+\.db")


def prepare_metrics_dir(path: str) -> tuple[str, bool]:
    """Create (or wipe) the Prometheus multiprocess directory and export it to this process
    and its future children, before ``prometheus_client`` is imported. Returns (directory,
    whether it is a temporary directory made here)."""
    created = False
    if not path:
        path = tempfile.mkdtemp(prefix="heka-metrics-")
        created = True
    else:
        if os.path.exists(path) and not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, "it is a file, not a folder")
        os.makedirs(path, exist_ok=True)
        # Only prometheus_client's own files (TYPE_PID.db): a folder shared with other files
        # (an application's SQLite *.db) keeps them.
        for stale in glob.glob(os.path.join(path, "*.db")):
            if METRIC_FILE.fullmatch(os.path.basename(stale)):
                os.remove(stale)
    os.environ[MULTIPROC_ENV] = path
    return path, created
