"""Hypothesis strategies of request bodies, built from protobuf message descriptors.

The strategies write the wire format themselves (not through the protobuf classes) so that a
body can hold what no encoder writes but any client can send: two members of one oneof (an
encoder keeps the last one set), a 64-bit number in an ``int32`` or ``bool`` field, a number
that a field's enum does not define, bytes that are not UTF-8 in a ``string`` field, fields in
any order, the same field twice, unknown field numbers and wrong wire types.

:class:`Schema` walks a message type's fields generically (every scalar type, enums, nested
messages, repeated fields packed and unpacked, maps, oneofs), so that a new field or RPC is
fuzzed without a change here. ``hints`` (by field name) add values that a well-behaved client
would send (a real token in ``state``, a seat in ``viewer``) so that bodies get past the first
checks and into the handlers; each hinted field still draws generic values too.

    schema = Schema(hints={"state": tokens(pool)}, max_body_bytes=64 * 1024)
    bodies = schema.bodies(pb.ApplyActionRequest.DESCRIPTOR)   # SearchStrategy[bytes]
"""

from __future__ import annotations

import base64
import dataclasses
import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor
from hypothesis import strategies as st

FD = FieldDescriptor

# ---------------------------------------------------------------------------------------
# The wire format
# ---------------------------------------------------------------------------------------

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5
_MASK64 = (1 << 64) - 1


def varint(value: int) -> bytes:
    """A base-128 varint of ``value`` as 64 bits (a negative number takes ten bytes, as
    every encoder writes an ``int32``/``int64`` below 0)."""
    value &= _MASK64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint((number << 3) | wire)


def length_delimited(number: int, payload: bytes) -> bytes:
    return tag(number, LEN) + varint(len(payload)) + payload


def zigzag(value: int) -> int:
    """The ``sint32``/``sint64`` encoding of ``value`` (as 64 bits: the same number for an
    ``int32`` value; a larger one puts more than 32 bits in a ``sint32`` field)."""
    return ((value << 1) ^ (value >> 63)) & _MASK64


_SIGNED = {FD.TYPE_INT32: 32, FD.TYPE_INT64: 64, FD.TYPE_SINT32: 32, FD.TYPE_SINT64: 64}
_UNSIGNED = {FD.TYPE_UINT32: 32, FD.TYPE_UINT64: 64}
_FIXED = {FD.TYPE_FIXED32: "<I", FD.TYPE_SFIXED32: "<i", FD.TYPE_FIXED64: "<Q", FD.TYPE_SFIXED64: "<q"}
_PACKABLE = {
    FD.TYPE_DOUBLE, FD.TYPE_FLOAT, FD.TYPE_INT64, FD.TYPE_UINT64, FD.TYPE_INT32, FD.TYPE_FIXED64,
    FD.TYPE_FIXED32, FD.TYPE_BOOL, FD.TYPE_UINT32, FD.TYPE_ENUM, FD.TYPE_SFIXED32, FD.TYPE_SFIXED64,
    FD.TYPE_SINT32, FD.TYPE_SINT64,
}  # fmt: skip


def wire_type(field: FieldDescriptor) -> int:
    t = field.type
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FIXED64, FD.TYPE_SFIXED64):
        return I64
    if t in (FD.TYPE_FLOAT, FD.TYPE_FIXED32, FD.TYPE_SFIXED32):
        return I32
    if t in (FD.TYPE_STRING, FD.TYPE_BYTES, FD.TYPE_MESSAGE):
        return LEN
    return VARINT


def payload(field: FieldDescriptor, value: Any) -> bytes:
    """The bytes after the tag of a scalar ``value`` of ``field``: any integer for a varint
    field (out-of-range ones as their low 64 bits), ``str`` or ``bytes`` for a string field
    (``bytes`` as they are: perhaps not UTF-8), raw ``bytes`` of the right size for a fixed
    or floating field (any bit pattern), else a number."""
    t = field.type
    if t in (FD.TYPE_STRING, FD.TYPE_BYTES):
        raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
        return varint(len(raw)) + raw
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        if isinstance(value, bytes):
            return value
        return struct.pack("<d" if t == FD.TYPE_DOUBLE else "<f", value)
    if t in _FIXED:
        if isinstance(value, bytes):
            return value
        fmt = _FIXED[t]
        bits = 32 if fmt[1] in "Ii" else 64
        return struct.pack(fmt.upper(), int(value) & ((1 << bits) - 1))
    if t in (FD.TYPE_SINT32, FD.TYPE_SINT64):
        return varint(zigzag(int(value)))
    return varint(int(value))


def encode(field: FieldDescriptor, value: Any) -> bytes:
    """One occurrence of ``field`` holding the scalar ``value`` (see :func:`payload`)."""
    return tag(field.number, wire_type(field)) + payload(field, value)


def encode_packed(field: FieldDescriptor, values: Sequence[Any]) -> bytes:
    """A packed repeated scalar field: one length-delimited record of the values."""
    body = b"".join(payload(field, v) for v in values)
    return length_delimited(field.number, body)


def _packed_copies(field: FieldDescriptor, value: Any, size: int) -> bytes:
    """A packed repeated field of copies of ``value``, about ``size`` bytes long."""
    one = payload(field, value)
    return length_delimited(field.number, one * max(1, size // len(one)))


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each drawn about as often as its weight says (``one_of`` draws
    them about equally often)."""
    strategies = [s for _, s in choices]
    picks = [i for i, (n, _) in enumerate(choices) for _ in range(n)]

    @st.composite
    def pick(draw: st.DrawFn) -> Any:
        return draw(strategies[draw(st.sampled_from(picks))])

    return pick()


def real_oneofs(descriptor: Descriptor) -> list[OneofDescriptor]:
    """The oneofs of a type, less the synthetic ones of proto3 ``optional`` fields (named
    ``_field``; service.enums reads them the same way)."""
    return [o for o in descriptor.oneofs if not o.name.startswith("_")]


# ---------------------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------------------


def _int_values(bits: int, signed: bool) -> st.SearchStrategy[int]:
    """In range, at the edges, and out of range (sent as their low 64 bits: what a careless
    client's encoder writes for a 64-bit number in a 32-bit field)."""
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    edges = sorted({0, 1, 2, 3, -1, lo, hi, lo + 1, hi - 1, 2**31 - 1, -(2**31), 2**53, 2**63 - 1, -(2**63)})
    out_of_range = st.sampled_from([2**31, 2**32, 2**32 + 1, 2**40, 2**63, 2**64 - 1, -(2**31) - 1])
    return st.one_of(
        st.integers(-3, 10),
        st.sampled_from([e for e in edges if -(2**63) <= e < 2**64]),
        st.integers(lo, hi),
        out_of_range,
    )


_FLOATS = st.one_of(
    st.sampled_from(
        [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 5e-324, 1e308, -1e308, math.nan, math.inf, -math.inf, 30000.001]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
)
_FLOATS32 = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, math.nan, math.inf, -math.inf, 1e-45, 3.4e38]),
    st.floats(width=32, allow_nan=True, allow_infinity=True),
)

#: Strings a client might send anywhere: empty, words of this API, odd characters.
_WORDS = ["", "aton", "osirium", "ATON", " Osirium ", "chess", "pass", "0", "-1", "null", "{}", "%s", "\x00"]

#: Bytes that are not UTF-8 (in a proto3 ``string`` the decoder refuses them).
_NOT_UTF8 = st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"ok\xfe\xff", b"\x80" * 8])


def _strings(max_body_bytes: int) -> st.SearchStrategy[Any]:
    """Words of this API, any text, long texts up to the request cap (a body over it is
    refused before decoding), and now and then bytes that are not UTF-8 (the decoder refuses
    the whole body: most bodies should get further)."""
    long = st.tuples(st.sampled_from("aZ9-_ é"), st.integers(100, max_body_bytes)).map(lambda t: t[0] * t[1])
    by_kind = {"word": st.sampled_from(_WORDS), "text": st.text(max_size=40), "long": long}
    by_kind["not utf-8"] = st.one_of(_NOT_UTF8, st.binary(max_size=40))
    kinds = ["word"] * 4 + ["text"] * 4 + ["long", "not utf-8"]
    return st.sampled_from(kinds).flatmap(lambda kind: by_kind[kind])


def scalar_values(field: FieldDescriptor, max_body_bytes: int) -> st.SearchStrategy[Any]:
    """Generic values of a scalar or enum field (any field of that type)."""
    t = field.type
    if t == FD.TYPE_ENUM:
        numbers = sorted(v.number for v in field.enum_type.values)
        unknown = [
            n for n in (-1, max(numbers) + 1, max(numbers) + 1000, 2**31 - 1, -(2**31)) if n not in numbers
        ]
        return weighted(
            (6, st.sampled_from(numbers)),
            (1, st.sampled_from(unknown)),
            (1, st.integers(-(2**31), 2**31 - 1)),
            (1, st.sampled_from([2**32 + numbers[-1], 2**63, 2**64 - 1])),  # 64-bit varints
        )
    if t == FD.TYPE_BOOL:
        return st.sampled_from([0, 1, 1, 0, 2, 255, 2**32, 2**64 - 1])
    if t in _SIGNED:
        return _int_values(_SIGNED[t], True)
    if t in _UNSIGNED:
        return _int_values(_UNSIGNED[t], False)
    if t in _FIXED:
        size = 4 if _FIXED[t][1] in "Ii" else 8
        return st.one_of(
            _int_values(size * 8, _FIXED[t][1].islower()), st.binary(min_size=size, max_size=size)
        )
    if t == FD.TYPE_DOUBLE:
        return st.one_of(_FLOATS, st.binary(min_size=8, max_size=8))
    if t == FD.TYPE_FLOAT:
        return st.one_of(_FLOATS32, st.binary(min_size=4, max_size=4))
    if t == FD.TYPE_STRING:
        return _strings(max_body_bytes)
    if t == FD.TYPE_BYTES:
        return st.binary(max_size=64)
    raise TypeError(f"no scalar strategy for {field.full_name} (type {t})")


# ---------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Schema:
    """Body strategies of message types, from their descriptors.

    ``hints`` maps a field name to a strategy of values a well-behaved client would put in a
    field of that name (in any message); ``max_body_bytes`` is the server's request cap, the
    bound of the huge repeated fields and long strings; ``max_depth`` bounds nesting (a
    recursive type stops there)."""

    hints: Mapping[str, st.SearchStrategy[Any]] = dataclasses.field(default_factory=dict)
    max_body_bytes: int = 64 * 1024
    max_depth: int = 5
    _cache: dict[tuple[str, int], st.SearchStrategy[bytes]] = dataclasses.field(default_factory=dict)

    # -- values of one field ------------------------------------------------------------
    def values(self, field: FieldDescriptor) -> st.SearchStrategy[Any]:
        generic = scalar_values(field, self.max_body_bytes)
        hint = self.hints.get(field.name)
        return generic if hint is None else weighted((4, hint), (1, generic))

    def occurrence(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[bytes]:
        """One occurrence of ``field`` on the wire (tag and payload)."""
        if field.type == FD.TYPE_MESSAGE:
            return self.message(field.message_type, depth + 1).map(
                lambda b: length_delimited(field.number, b)
            )
        if field.type == FD.TYPE_GROUP:  # proto2 only; none in proto3 requests
            return st.just(b"")
        return self.values(field).map(lambda v: encode(field, v))

    def field_chunks(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[list[bytes]]:
        """What a body holds of ``field``: nothing, one occurrence, the same field twice (the
        decoder keeps the last scalar, merges messages), or for a repeated field a few
        elements (packed or not) or a huge number of them."""
        one = self.occurrence(field, depth)
        absent: st.SearchStrategy[list[bytes]] = st.just([])
        if not field.is_repeated:
            return weighted(
                (1, absent), (3, one.map(lambda b: [b])), (1, st.lists(one, min_size=2, max_size=3))
            )
        few = st.lists(one, min_size=1, max_size=4)
        huge = st.tuples(one, st.integers(64, self.max_body_bytes)).map(
            lambda t: [t[0] * max(1, min(t[1], self.max_body_bytes // max(1, len(t[0]))))]
        )
        choices = [(2, absent), (4, few), (1, huge)]
        if field.type in _PACKABLE:
            packed = st.lists(self.values(field), min_size=1, max_size=6).map(
                lambda vs: [encode_packed(field, vs)]
            )
            huge_packed = st.tuples(self.values(field), st.integers(64, self.max_body_bytes)).map(
                lambda t: [_packed_copies(field, t[0], t[1])]
            )
            choices += [(2, packed), (1, huge_packed)]
        return weighted(*choices)

    def oneof_chunks(self, oneof: OneofDescriptor, depth: int) -> st.SearchStrategy[list[bytes]]:
        """A oneof: no member, one member, or two different members in either order (what
        two encoders' outputs concatenated give; the server must refuse it)."""
        members = list(oneof.fields)
        ones = [self.occurrence(f, depth) for f in members]
        single = st.one_of(*ones).map(lambda b: [b])
        choices: list[tuple[int, st.SearchStrategy[list[bytes]]]] = [(1, st.just([])), (3, single)]
        if len(members) >= 2:
            pairs = st.tuples(st.integers(0, len(members) - 1), st.integers(0, len(members) - 2)).flatmap(
                lambda ij: st.tuples(ones[ij[0]], ones[ij[1] if ij[1] < ij[0] else ij[1] + 1]).map(list)
            )
            choices.append((1, pairs))
        return weighted(*choices)

    def unknown_fields(self, descriptor: Descriptor) -> st.SearchStrategy[list[bytes]]:
        """Fields this type does not define, and known field numbers with the wrong wire
        type (the decoder keeps them as unknown fields). Random bytes in a known message
        field are the mutations' business (:func:`mutate`): here a body stays well-formed."""
        defined = {f.number for f in descriptor.fields}
        top = max(defined, default=0)
        spare = [n for n in range(1, top + 8) if n not in defined]
        unknown = st.one_of(st.sampled_from(spare), st.integers(top + 1, 2**29 - 1))
        number = st.one_of(unknown, st.sampled_from(sorted(defined))) if defined else unknown
        len_number = st.one_of(
            unknown,
            *(
                [st.sampled_from(sorted(f.number for f in descriptor.fields if wire_type(f) != LEN))]
                if any(wire_type(f) != LEN for f in descriptor.fields)
                else []
            ),
        )
        chunk = st.one_of(
            st.tuples(number, st.integers(0, 2**64 - 1)).map(lambda t: tag(t[0], VARINT) + varint(t[1])),
            st.tuples(number, st.binary(min_size=8, max_size=8)).map(lambda t: tag(t[0], I64) + t[1]),
            st.tuples(number, st.binary(min_size=4, max_size=4)).map(lambda t: tag(t[0], I32) + t[1]),
            st.tuples(len_number, st.binary(max_size=24)).map(lambda t: length_delimited(t[0], t[1])),
        )
        return st.one_of(st.just([]), st.just([]), st.lists(chunk, min_size=1, max_size=3))

    def message(self, descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[bytes]:
        """Well-formed bodies of ``descriptor`` (well-formed on the wire; their values are
        anything: out of range, unknown enum numbers, two oneof members)."""
        key = (descriptor.full_name, depth)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if depth > self.max_depth:
            strategy: st.SearchStrategy[bytes] = st.just(b"")
            self._cache[key] = strategy
            return strategy
        # A nested message is built at depth + 1: a recursive type ends at max_depth.
        oneof_members = {f.name for o in real_oneofs(descriptor) for f in o.fields}
        parts = [self.field_chunks(f, depth) for f in descriptor.fields if f.name not in oneof_members]
        parts += [self.oneof_chunks(o, depth) for o in real_oneofs(descriptor)]
        parts.append(self.unknown_fields(descriptor))

        @st.composite
        def bodies(draw: st.DrawFn) -> bytes:
            chunks = [c for part in parts for c in draw(part)]
            if len(chunks) > 1 and draw(st.booleans()):
                chunks = draw(st.permutations(chunks))  # any field order is valid
            return b"".join(chunks)

        strategy = self._cache[key] = bodies()
        return strategy

    # -- whole bodies ---------------------------------------------------------------------
    def one_field(self, descriptor: Descriptor) -> st.SearchStrategy[bytes]:
        """One occurrence of one of the type's fields (any value of its type or hint)."""
        fields = [f for f in descriptor.fields if f.type != FD.TYPE_GROUP]
        if not fields:
            return st.just(b"")
        return st.one_of(*(self.occurrence(f, 0) for f in fields))

    def bodies(
        self, descriptor: Descriptor, corpus: Sequence[bytes] = ()
    ) -> st.SearchStrategy[tuple[str, bytes]]:
        """Request bodies of ``descriptor``, each with its kind:

        * ``structured``: from the schema;
        * ``near-valid``: a known-good body from ``corpus`` with one or two fields set again
          (the decoder keeps the last value of a scalar, appends to a repeated field, merges
          a message), so that most of it passes the handler's checks;
        * ``valid``: from ``corpus`` as it is;
        * ``mutated``: a structured or valid body truncated, bit-flipped, grown, given a bad
          length prefix, a varint of more than 64 bits, a group or no wire type, or padded
          past the request cap;
        * ``garbage``: random bytes."""
        structured = self.message(descriptor)
        valid = st.sampled_from(list(corpus)) if corpus else structured
        extra = self.one_field(descriptor)
        weights = {"structured": 4, "near-valid": 4, "valid": 1, "mutated": 2, "garbage": 1}
        if not corpus:
            weights["structured"] += weights.pop("near-valid") + weights.pop("valid")
        kinds = [k for k, n in weights.items() for _ in range(n)]
        max_body_bytes = self.max_body_bytes

        @st.composite
        def draw_body(draw: st.DrawFn) -> tuple[str, bytes]:
            kind = draw(st.sampled_from(kinds), label="kind")
            if kind == "structured":
                return kind, draw(structured)
            if kind == "near-valid":
                return kind, draw(valid) + b"".join(draw(st.lists(extra, min_size=1, max_size=2)))
            if kind == "valid":
                return kind, draw(valid)
            if kind == "mutated":
                return kind, mutate(draw(st.one_of(structured, valid)), draw, max_body_bytes)
            return kind, draw(st.binary(max_size=80))

        return draw_body()


def mutate(body: bytes, draw: st.DrawFn, max_body_bytes: int) -> bytes:
    """``body`` broken in one of the ways a network, a bug or an attacker breaks a body."""
    how = draw(
        st.sampled_from(
            ["truncate", "flip", "insert", "append", "length", "varint", "group", "twice", "oversize"]
        ),
        label="mutation",
    )
    raw = bytearray(body or b"\x0a\x01a")
    if how == "truncate":
        return bytes(raw[: draw(st.integers(0, max(0, len(raw) - 1)))])
    if how == "flip":
        for _ in range(draw(st.integers(1, 4))):
            raw[draw(st.integers(0, len(raw) - 1))] ^= 1 << draw(st.integers(0, 7))
        return bytes(raw)
    if how == "insert":
        at = draw(st.integers(0, len(raw)))
        return bytes(raw[:at]) + draw(st.binary(min_size=1, max_size=8)) + bytes(raw[at:])
    if how == "append":
        return bytes(raw) + draw(st.binary(min_size=1, max_size=16))
    if how == "length":  # a length prefix longer than the body
        return bytes(raw) + tag(draw(st.integers(1, 20)), LEN) + varint(draw(st.integers(1, 2**32)))
    if how == "varint":  # an eleven-byte varint (more than 64 bits)
        return bytes(raw) + tag(draw(st.integers(1, 20)), VARINT) + b"\xff" * 10 + b"\x01"
    if how == "group":  # the deprecated group wire types, and 6/7 (not wire types at all)
        return bytes(raw) + tag(draw(st.integers(1, 20)), draw(st.sampled_from([3, 4, 6, 7])))
    if how == "twice":  # a body concatenated with itself: the decoder merges the two
        return bytes(raw) * 2
    # oversize: padded with an unknown field to just over the server's request cap
    pad = max_body_bytes + draw(st.integers(1, 512)) - len(raw)
    return bytes(raw) + length_delimited(2**29 - 1, b"\x00" * max(1, pad))


# ---------------------------------------------------------------------------------------
# State tokens
# ---------------------------------------------------------------------------------------


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@st.composite
def _mutated_token(draw: st.DrawFn, tokens: Sequence[tuple[str, str]]) -> str:
    """A valid token altered: bits flipped in its bytes, cut short, grown, spliced with a
    token of another game, its text changed (case, padding, whitespace)."""
    game, token = draw(st.sampled_from(list(tokens)))
    raw = bytearray(_unb64url(token))
    how = draw(st.sampled_from(["flip", "truncate", "truncate-text", "splice", "header", "grow", "text"]))
    if how == "flip":
        for _ in range(draw(st.integers(1, 3))):
            raw[draw(st.integers(0, len(raw) - 1))] ^= 1 << draw(st.integers(0, 7))
        return _b64url(bytes(raw))
    if how == "truncate":
        return _b64url(bytes(raw[: draw(st.integers(0, len(raw) - 1))]))
    if how == "truncate-text":
        return token[: draw(st.integers(0, len(token) - 1))]
    others = [t for g, t in tokens if g != game] or [t for _, t in tokens if t != token]
    if how in ("splice", "header") and others:
        other = _unb64url(draw(st.sampled_from(others)))
        if how == "splice":  # the start of one token, the end of another
            cut = draw(st.integers(1, min(len(raw), len(other)) - 1))
            return _b64url(bytes(raw[:cut]) + other[cut:])
        # one token's header (version, flags, key id) on another's body
        return _b64url(bytes(raw[:8]) + other[8:])
    if how == "grow":
        return token + draw(st.sampled_from(["A", "AA", "AAAA", "=", "==", "-_", "\n", " "]))
    change = draw(st.sampled_from([str.upper, str.lower, str.strip, lambda s: " " + s, lambda s: s + "="]))
    return str(change(token))


def tokens(
    valid: Sequence[tuple[str, str]], extra: Sequence[st.SearchStrategy[str]] = ()
) -> st.SearchStrategy[str]:
    """State tokens: ``valid`` ones (game, token), altered ones, ``extra`` strategies (for
    example tokens sealed with another deployment's key) and junk."""
    junk = st.one_of(
        st.sampled_from(["", "A", "AAAA", "HK", _b64url(b"HK"), _b64url(b"HK\x02\x01\x02k1"), "not a token"]),
        st.binary(min_size=1, max_size=120).map(_b64url),
    )
    return weighted(
        (6, st.sampled_from([t for _, t in valid])),
        (3, _mutated_token(list(valid))),
        *((1, s) for s in extra),
        (1, junk),
    )


def ints(lo: int, hi: int, *also: int) -> st.SearchStrategy[int]:
    """Integers in [lo, hi], and ``also``."""
    return st.one_of(st.integers(lo, hi), st.sampled_from(also)) if also else st.integers(lo, hi)
