"""A reflection-driven fuzzer of a heka server: no request may be answered UNKNOWN or INTERNAL.

Starts a local ``heka serve`` (loopback only; or targets ``--target 127.0.0.1:PORT``),
lists its services through gRPC server reflection (``grpc.reflection.v1alpha``), builds
the request messages of ``heka.v1.GameService`` and ``grpc.health.v1.Health`` from the
descriptors the server returns, and sends every method a seeded stream of calls:

* ``garbage``: random bytes;
* ``mutated``: a valid random message, serialized, then truncated, bit-flipped, cut
  short in a length prefix, or given extra bytes;
* ``random``: a valid message with random field values — integers at the edges of their
  types (huge, negative), floats (NaN, infinities), random strings, random and unknown
  enum values, nested and repeated fields, and in ``state`` fields real tokens (from
  ``CreateGame``), altered ones and junk;
* ``near-valid``: what a well-behaved client sends (a real token, small seats, defined
  enums), with one field given a random value — these get past the first checks.

Prints the calls made and a table of status codes per method; exits 1 when any call was
answered ``UNKNOWN`` or ``INTERNAL`` (the first few are shown with the seed and call index
that reproduce them), 0 otherwise. Bounded by ``--calls`` per method and ``--seconds``.

    .venv/bin/python bench/fuzz_service.py                    # 1,000 calls per method, seed 1
    .venv/bin/python bench/fuzz_service.py --calls 5000 --seed 7 --seconds 600
"""

from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import dataclasses
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor as FD

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.loadtest.local import add_server_options, server_for  # noqa: E402
from service.loadtest.stats import codes_table  # noqa: E402

SERVICES = ("heka.v1.GameService", "grpc.health.v1.Health")
FAILING = ("UNKNOWN", "INTERNAL")
KINDS = ("garbage", "mutated", "random", "near-valid")
KIND_WEIGHTS = (2, 3, 3, 4)

_INT_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "sint32": (-(2**31), 2**31 - 1),
    "sfixed32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "sint64": (-(2**63), 2**63 - 1),
    "sfixed64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
    "fixed32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "fixed64": (0, 2**64 - 1),
}
_WORDS = ("aton", "osirium", "ATON", "Osirium ", "chess", "teams", "deities", "isis", "seth", "pass", "")


@dataclasses.dataclass(frozen=True)
class Method:
    service: str
    name: str
    request: Any  # message class
    response: Any  # message class
    server_streaming: bool
    client_streaming: bool

    @property
    def path(self) -> str:
        return f"/{self.service}/{self.name}"


@dataclasses.dataclass
class Report:
    calls: int = 0
    codes: dict[str, collections.Counter[str]] = dataclasses.field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    failures: list[str] = dataclasses.field(default_factory=list)
    details: collections.Counter[tuple[str, str, str]] = dataclasses.field(
        default_factory=collections.Counter
    )
    stopped_early: bool = False

    @property
    def failed(self) -> int:
        return sum(c[code] for c in self.codes.values() for code in FAILING)


# ---------------------------------------------------------------------------------------
# Discovery through reflection
# ---------------------------------------------------------------------------------------


def discover(channel: Any, services: Iterable[str] = SERVICES, timeout: float = 10.0) -> list[Method]:
    """The methods of ``services`` and their request classes, from the server's reflection."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(channel)

    def ask(request: Any) -> Any:
        (response,) = list(stub.ServerReflectionInfo(iter([request]), timeout=timeout))
        if response.HasField("error_response"):
            raise RuntimeError(f"reflection: {response.error_response.error_message}")
        return response

    listed = ask(reflection_pb2.ServerReflectionRequest(list_services=""))
    available = {s.name for s in listed.list_services_response.service}
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    methods: list[Method] = []
    for service in services:
        if service not in available:
            raise RuntimeError(f"{service} is not served (reflection lists {sorted(available)})")
        response = ask(reflection_pb2.ServerReflectionRequest(file_containing_symbol=service))
        protos = [
            descriptor_pb2.FileDescriptorProto.FromString(raw)
            for raw in response.file_descriptor_response.file_descriptor_proto
        ]
        pending = [p for p in protos if p.name not in added]
        while pending:  # dependencies first
            ready = [p for p in pending if all(d in added for d in p.dependency)]
            if not ready:
                raise RuntimeError(f"unresolved dependencies: {[p.name for p in pending]}")
            for proto in ready:
                pool.Add(proto)
                added.add(proto.name)
            pending = [p for p in pending if p.name not in added]
        for m in pool.FindServiceByName(service).methods:
            methods.append(
                Method(
                    service,
                    m.name,
                    message_factory.GetMessageClass(m.input_type),
                    message_factory.GetMessageClass(m.output_type),
                    m.server_streaming,
                    m.client_streaming,
                )
            )
    return methods


# ---------------------------------------------------------------------------------------
# Random requests
# ---------------------------------------------------------------------------------------


class Generator:
    """Seeded random request bodies for one method's request class."""

    def __init__(self, rng: random.Random, tokens: list[str]) -> None:
        self.rng = rng
        self.tokens = tokens or ["A" * 40]

    # ---- scalars ----------------------------------------------------------------------

    def integer(self, type_name: str) -> int:
        lo, hi = _INT_RANGES[type_name]
        choice = self.rng.random()
        if choice < 0.5:
            value = self.rng.choice((0, 0, 1, 1, 2, 3, 4, 5, -1, 7, 100, 999_999))
        elif choice < 0.65:
            value = self.rng.choice((lo, hi, lo + 1, hi - 1, 2**31 - 1, -(2**31), 2**32, 2**53))
        else:
            value = self.rng.randint(lo, hi)
        return max(lo, min(hi, value))

    def floating(self) -> float:
        special = (0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 1e308, -1e308, math.nan, math.inf, -math.inf)
        return self.rng.choice((*special, self.rng.uniform(-1e6, 1e6), self.rng.uniform(0, 5000)))

    def text(self, field_name: str) -> str:
        r = self.rng.random()
        if field_name == "state" and r < 0.7:
            return self.token()
        if field_name == "game" and r < 0.6:
            return self.rng.choice(_WORDS)
        if r < 0.15:
            return ""
        if r < 0.35:
            return self.rng.choice(_WORDS)
        if r < 0.55:
            return "".join(chr(self.rng.randint(32, 126)) for _ in range(self.rng.randint(1, 40)))
        if r < 0.7:
            return "".join(chr(self.rng.randint(0x80, 0x2FFF)) for _ in range(self.rng.randint(1, 20)))
        if r < 0.8:
            return self.rng.choice(("0", "1", "-1", "pass", "1 2 3", "{}", "null", "%s", "\x00"))
        if r < 0.9:
            return self.token()
        return "x" * self.rng.choice((1000, 5000, 9000, 20_000))

    def token(self) -> str:
        token = self.rng.choice(self.tokens)
        r = self.rng.random()
        if r < 0.4:
            return token  # a real token
        raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if r < 0.6 and raw:
            raw[self.rng.randrange(len(raw))] ^= 1 << self.rng.randrange(8)
        elif r < 0.75:
            raw = raw[: self.rng.randrange(len(raw) + 1)]
        elif r < 0.85:
            raw = raw + bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 50)))
        else:
            return token[::-1] if r < 0.92 else token + "=="
        return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()

    # ---- messages ---------------------------------------------------------------------

    def plausible(self, field: Any) -> Any:
        """A value a well-behaved client might send: a real token, small seats and counts."""
        t = field.type
        if t == FD.TYPE_STRING:
            if field.name == "state":
                return self.rng.choice(self.tokens)
            if field.name == "game":  # a creation needs one; an expected game may be empty
                has_state = "state" in field.containing_type.fields_by_name
                return "" if has_state else self.rng.choice(("aton", "osirium"))
            return ""
        if t == FD.TYPE_BOOL:
            return self.rng.random() < 0.5
        if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
            return self.rng.choice((20.0, 50.0, 100.0))
        if t == FD.TYPE_BYTES:
            return b""
        if t == FD.TYPE_ENUM:
            return self.rng.choice([v.number for v in field.enum_type.values])
        if field.name == "seed":
            return self.rng.randint(0, 2**31 - 1)
        return self.rng.choice((0, 0, 1, 1, 2, 3)) if field.name != "iterations" else self.rng.randint(1, 60)

    def scalar(self, field: Any) -> Any:
        t = field.type
        fd = FD
        if t == fd.TYPE_BOOL:
            return self.rng.random() < 0.5
        if t in (fd.TYPE_DOUBLE, fd.TYPE_FLOAT):
            value = self.floating()
            if t == fd.TYPE_FLOAT and math.isfinite(value) and abs(value) > 3e38:
                value = math.copysign(3e38, value)
            return value
        if t == fd.TYPE_STRING:
            return self.text(field.name)
        if t == fd.TYPE_BYTES:
            return bytes(self.rng.randrange(256) for _ in range(self.rng.randint(0, 30)))
        if t == fd.TYPE_ENUM:
            values = [v.number for v in field.enum_type.values]
            if self.rng.random() < 0.8:
                return self.rng.choice(values)
            return self.rng.choice((-1, max(values) + 1, 42, 2**31 - 1, -(2**31)))
        names = {
            fd.TYPE_INT32: "int32",
            fd.TYPE_INT64: "int64",
            fd.TYPE_UINT32: "uint32",
            fd.TYPE_UINT64: "uint64",
            fd.TYPE_SINT32: "sint32",
            fd.TYPE_SINT64: "sint64",
            fd.TYPE_FIXED32: "fixed32",
            fd.TYPE_FIXED64: "fixed64",
            fd.TYPE_SFIXED32: "sfixed32",
            fd.TYPE_SFIXED64: "sfixed64",
        }
        return self.integer(names[t])

    def json_value(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if depth < 2 and r < 0.15:
            return [self.json_value(depth + 1) for _ in range(self.rng.randint(0, 4))]
        if depth < 2 and r < 0.25:
            return {self.text("key"): self.json_value(depth + 1) for _ in range(self.rng.randint(0, 3))}
        return self.rng.choice(
            (True, False, None, 0, -1, 2, 4, 1e300, self.text("value"), "isis", ["isis", "seth"])
        )

    def fill(self, message: Any, depth: int = 0, *, plausible: bool = False) -> Any:
        """Set a random subset of ``message``'s fields to random values (in place); with
        ``plausible``, to values a well-behaved client might send."""
        descriptor = message.DESCRIPTOR
        if descriptor.full_name == "google.protobuf.Struct":
            if plausible:
                return message
            message.update({self.text("key"): self.json_value() for _ in range(self.rng.randint(0, 4))})
            return message
        for field in descriptor.fields:
            if self.rng.random() < 0.5 and not (plausible and field.name in ("state", "game")):
                continue
            is_message = field.type == FD.TYPE_MESSAGE
            repeated = field.is_repeated
            value = self.plausible if plausible else self.scalar
            if is_message and field.message_type.GetOptions().map_entry:
                if not plausible:
                    self.fill_map(getattr(message, field.name), field, depth)
            elif is_message and repeated:
                if depth < 3:
                    for _ in range(self.rng.randint(0, 3)):
                        self.fill(getattr(message, field.name).add(), depth + 1, plausible=plausible)
            elif is_message:
                if depth < 3:
                    self.fill(getattr(message, field.name), depth + 1, plausible=plausible)
                    getattr(message, field.name).SetInParent()
            elif repeated:
                getattr(message, field.name).extend(value(field) for _ in range(self.rng.randint(0, 4)))
            else:
                setattr(message, field.name, value(field))
        return message

    def near_valid_body(self, request_class: Any) -> bytes:
        """A plausible request with one top-level field given a random value."""
        message = self.fill(request_class(), plausible=True)
        scalars = [f for f in message.DESCRIPTOR.fields if f.type != FD.TYPE_MESSAGE and not f.is_repeated]
        if scalars:
            field = self.rng.choice(scalars)
            setattr(message, field.name, self.scalar(field))
        return bytes(message.SerializeToString())

    def fill_map(self, container: Any, field: Any, depth: int) -> None:
        key_field = field.message_type.fields_by_name["key"]
        value_field = field.message_type.fields_by_name["value"]
        for _ in range(self.rng.randint(0, 3)):
            key = self.scalar(key_field)
            if value_field.type == FD.TYPE_MESSAGE:
                if depth < 3:
                    self.fill(container[key], depth + 1)
            else:
                container[key] = self.scalar(value_field)

    def random_body(self, request_class: Any) -> bytes:
        return bytes(self.fill(request_class()).SerializeToString())

    def garbage(self) -> bytes:
        n = self.rng.choice((1, 2, 3, 5, 8, 16, 40, 200, 1000))
        raw = bytes(self.rng.randrange(256) for _ in range(n))
        if self.rng.random() < 0.3:  # a plausible first tag, then junk
            raw = bytes((self.rng.choice((0x0A, 0x12, 0x08, 0x10, 0x1A, 0x22)),)) + raw
        return raw

    def mutated(self, request_class: Any) -> bytes:
        body = bytearray(self.random_body(request_class))
        if not body:
            body = bytearray(b"\x0a\x05hello")
        r = self.rng.random()
        if r < 0.3:
            return bytes(body[: self.rng.randrange(len(body))])  # truncated
        if r < 0.6:
            for _ in range(self.rng.randint(1, 4)):
                body[self.rng.randrange(len(body))] ^= 1 << self.rng.randrange(8)
            return bytes(body)
        if r < 0.75:  # an oversized length prefix on a length-delimited field
            return bytes((0x0A, 0xFF, 0xFF, 0xFF, 0x0F)) + bytes(body)
        if r < 0.9:
            return bytes(body) + self.garbage()
        # a field number of every wire type, including the deprecated groups (3, 4) and 6/7
        tag = (self.rng.randint(1, 2**29 - 1) << 3) | self.rng.randint(0, 7)
        out = bytearray()
        while True:
            out.append((tag & 0x7F) | (0x80 if tag > 0x7F else 0))
            tag >>= 7
            if not tag:
                break
        return bytes(body) + bytes(out) + bytes(self.rng.randrange(256) for _ in range(4))

    def body(self, method: Method, kind: str) -> bytes:
        if kind == "garbage":
            return self.garbage()
        if kind == "mutated":
            return self.mutated(method.request)
        if kind == "near-valid":
            return self.near_valid_body(method.request)
        return self.random_body(method.request)


# ---------------------------------------------------------------------------------------
# Calls
# ---------------------------------------------------------------------------------------


def real_tokens(channel: Any, methods: list[Method], timeout: float = 10.0) -> list[str]:
    """Tokens of real games (Aton; Osirium with 2, 3, 4 players; a few moves in), made with
    the request classes reflection gave."""
    by_name = {m.name: m for m in methods if m.service == "heka.v1.GameService"}
    if "CreateGame" not in by_name:
        return []
    create = channel.unary_unary("/heka.v1.GameService/CreateGame")
    tokens = []
    for game, players in (("aton", 2), ("osirium", 2), ("osirium", 3), ("osirium", 4)):
        request = by_name["CreateGame"].request(game=game, num_players=players, seed=players)
        raw = create(request.SerializeToString(), timeout=timeout)
        tokens.append(by_name["CreateGame"].response.FromString(raw).state)
    return tokens


def call(channel: Any, method: Method, body: bytes, timeout: float) -> tuple[str, str]:
    """One call with a raw body: (status code name, details); a server stream counts as OK
    once its first message arrives."""
    import grpc

    try:
        if method.client_streaming:
            stream = channel.stream_stream(method.path) if method.server_streaming else None
            if stream is None:
                channel.stream_unary(method.path)(iter([body]), timeout=timeout)
                return "OK", ""
            responses = stream(iter([body]), timeout=timeout)
            next(responses, None)
            responses.cancel()
            return "OK", ""
        if method.server_streaming:
            responses = channel.unary_stream(method.path)(body, timeout=timeout)
            first = next(responses, None)
            responses.cancel()
            return ("OK", "") if first is not None else ("OK (no message)", "")
        channel.unary_unary(method.path)(body, timeout=timeout)
        return "OK", ""
    except grpc.RpcError as err:
        code = err.code()
        return (code.name if code is not None else "UNKNOWN"), str(err.details() or "")


def run(
    channel: Any,
    methods: list[Method],
    *,
    seed: int,
    calls_per_method: int,
    seconds: float,
    timeout: float,
    tokens: list[str],
    progress: Callable[[int], None] | None = None,
) -> Report:
    """The fuzzing loop: ``calls_per_method`` calls to each method, interleaved, in a seeded
    order, until done or ``seconds`` have passed."""
    rng = random.Random(seed)
    gen = Generator(rng, tokens)
    report = Report()
    end = time.monotonic() + seconds
    schedule = [m for m in methods for _ in range(calls_per_method)]
    rng.shuffle(schedule)
    for index, method in enumerate(schedule):
        if time.monotonic() > end:
            report.stopped_early = True
            break
        kind = rng.choices(KINDS, weights=KIND_WEIGHTS)[0]
        body = gen.body(method, kind)
        code, details = call(channel, method, body, timeout)
        report.calls += 1
        report.codes[method.path][code] += 1
        if code != "OK":
            report.details[(method.path, code, details[:70])] += 1
        if code in FAILING and len(report.failures) < 10:
            report.failures.append(
                f"{code} from {method.path} on call {index} ({kind} body, seed {seed}): "
                f"{details[:100]!r}; body {body[:60].hex()}"
            )
        if progress is not None and report.calls % 500 == 0:
            progress(report.calls)
    return report


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def main() -> int:
    import grpc

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=1000, help="calls per method (default 1000)")
    ap.add_argument("--seconds", type=float, default=300.0, help="stop after this long (default 300)")
    ap.add_argument("--timeout", type=float, default=3.0, help="deadline of each call (s)")
    ap.add_argument("--seed", type=int, default=1)
    add_server_options(ap)
    ap.add_argument("--verbose", action="store_true", help="also print the commonest error messages")
    args = ap.parse_args()
    if not 1 <= args.calls <= 100_000 or not 0 < args.seconds <= 3600:
        raise SystemExit("--calls must be 1..100000 and --seconds 0..3600")
    with contextlib.ExitStack() as stack:
        # Small search caps: a fuzzed BotMove must not search for long.
        caps = ["--max-milliseconds", "2000", "--max-iterations", "2000"]
        target, server = server_for(args, stack, *caps, env={"HEKA_ACCESS_LOG": "false"})
        with grpc.insecure_channel(target) as channel:
            methods = discover(channel)
            tokens = real_tokens(channel, methods)
            started = time.monotonic()
            report = run(
                channel,
                methods,
                seed=args.seed,
                calls_per_method=args.calls,
                seconds=args.seconds,
                timeout=args.timeout,
                tokens=tokens,
                progress=lambda n: print(f"  {n} calls...", file=sys.stderr, flush=True),
            )
            elapsed = time.monotonic() - started
    cut = " (stopped at the time limit)" if report.stopped_early else ""
    print(
        f"fuzzed {target}: {len(methods)} methods of {', '.join(SERVICES)}, seed {args.seed}, "
        f"{report.calls} calls in {elapsed:.1f} s{cut}"
    )
    print(codes_table(report.codes))
    if args.verbose:
        for (path, code, details), n in report.details.most_common(40):
            print(f"  {n:5d}  {path} {code}: {details}")
    if server is not None:
        errors = [line for line in server.log_lines() if line.get("level") == "error"]
        print(f"server ERROR log lines: {len(errors)}")
        for line in errors[:5]:
            print("  " + json.dumps(line)[:300])
    for failure in report.failures:
        print("  " + failure)
    if report.failed:
        print(f"FAILED: {report.failed} calls answered UNKNOWN or INTERNAL")
        return 1
    print("no call was answered UNKNOWN or INTERNAL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
