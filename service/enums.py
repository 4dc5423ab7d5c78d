"""Unknown enum values in a request, found from the message descriptors.

proto3 enums are open: a client can send any 32-bit number in an enum field, and the
message decodes with that number in it. A number that the enum does not define means
nothing here, at any depth of any request; the interceptor (service.interceptors) refuses
such a request before its handler runs, with ``INVALID_ARGUMENT`` naming the field and the
value (reason ``UNKNOWN_ENUM_VALUE``, docs/api.md "Errors").

The walk visits only the fields that can hold an enum (worked out once per message type),
so a request without one (most cheap calls) costs one dictionary lookup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor


class UnknownEnumValue(Exception):
    """An enum field of a request holds a number its enum does not define."""

    def __init__(self, field: str, value: int, enum: EnumDescriptor) -> None:
        known = ", ".join(f"{v.number} ({v.name})" for v in enum.values)
        super().__init__(f"unknown {_words(enum.name)} {value} in {field}: {enum.full_name} defines {known}")
        self.field = field
        self.value = value
        self.enum = enum


def _words(name: str) -> str:
    """``BotKind`` as ``bot kind``."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


#: How a field is visited: one enum value, repeated enum values, one message, repeated
#: messages, a map (its values).
_ENUM, _ENUMS, _MESSAGE, _MESSAGES, _MAP = range(5)

#: Per message type: the fields to visit (enum fields, and message fields whose type can
#: hold an enum field at some depth), as (name, how, enum or map value field).
_PLANS: dict[str, tuple[tuple[str, int, Any], ...]] = {}


def _reaches(descriptor: Descriptor, found: Callable[[Descriptor], bool]) -> bool:
    """Whether a message of this type, or one it can hold at any depth (recursive types
    included), is ``found``."""
    seen: set[str] = set()
    todo = [descriptor]
    while todo:
        d = todo.pop()
        if d.full_name in seen:
            continue
        seen.add(d.full_name)
        if found(d):
            return True
        todo.extend(f.message_type for f in d.fields if f.message_type is not None)
    return False


def _reachable_enum(descriptor: Descriptor) -> bool:
    """Whether a message of this type can hold an enum field at any depth."""
    return _reaches(descriptor, lambda d: any(f.enum_type is not None for f in d.fields))


def plan(descriptor: Descriptor) -> tuple[tuple[str, int, Any], ...]:
    fields = _PLANS.get(descriptor.full_name)
    if fields is None:
        entries: list[tuple[str, int, Any]] = []
        for f in descriptor.fields:
            if f.enum_type is not None:
                entries.append((f.name, _ENUMS if f.is_repeated else _ENUM, f.enum_type))
            elif f.message_type is not None and _reachable_enum(f.message_type):
                if f.message_type.GetOptions().map_entry:
                    entries.append((f.name, _MAP, f.message_type.fields_by_name["value"]))
                else:
                    entries.append((f.name, _MESSAGES if f.is_repeated else _MESSAGE, None))
        fields = _PLANS[descriptor.full_name] = tuple(entries)
    return fields


def check(message: Any, path: str = "") -> None:
    """Raise :class:`UnknownEnumValue` for the first enum field of ``message`` (at any
    depth) that holds a number its enum does not define. Field paths as the service names
    them elsewhere: ``bot.kind``, ``bots[1].bot.difficulty``, ``options.osirium.deities[0]``."""
    for name, how, extra in plan(message.DESCRIPTOR):
        value = getattr(message, name)
        if how == _ENUM:
            if value not in extra.values_by_number:
                raise UnknownEnumValue(path + name, int(value), extra)
        elif how == _ENUMS:
            for i, item in enumerate(value):
                if item not in extra.values_by_number:
                    raise UnknownEnumValue(f"{path}{name}[{i}]", int(item), extra)
        elif how == _MESSAGE:
            if message.HasField(name):
                check(value, f"{path}{name}.")
        elif how == _MESSAGES:
            for i, item in enumerate(value):
                check(item, f"{path}{name}[{i}].")
        else:  # a map: its values
            for key, item in value.items():
                if extra.enum_type is not None:
                    if item not in extra.enum_type.values_by_number:
                        raise UnknownEnumValue(f"{path}{name}[{key!r}]", int(item), extra.enum_type)
                else:
                    check(item, f"{path}{name}[{key!r}].")


# ---------------------------------------------------------------------------------------
# Two members of one oneof on the wire
# ---------------------------------------------------------------------------------------


class TwoOneofMembers(Exception):
    """A request body sets two members of one oneof (``action_id`` and ``action_text``):
    decoding keeps the last one and drops the other without a word, so it is refused."""

    def __init__(self, path: str, oneof: str, first: str, second: str) -> None:
        super().__init__(
            f"{path}{first} and {path}{second} are both set: they are alternatives "
            f"(oneof {oneof}), set only one"
        )
        self.field = path + second


#: Per message type: field number -> (oneof name or None, field name, sub-message type whose
#: bytes are scanned too, or None); None when no oneof is reachable from the type.
_ONEOF_PLANS: dict[str, dict[int, tuple[str | None, str, Any]] | None] = {}


def _reachable_oneof(descriptor: Descriptor) -> bool:
    """Whether a message of this type can hold a oneof (not a proto3 ``optional``) at any depth."""
    return _reaches(descriptor, lambda d: any(not o.name.startswith("_") for o in d.oneofs))


def oneof_plan(descriptor: Descriptor) -> dict[int, tuple[str | None, str, Any]] | None:
    if descriptor.full_name not in _ONEOF_PLANS:
        plan_: dict[int, tuple[str | None, str, Any]] | None = None
        if _reachable_oneof(descriptor):
            plan_ = {}
            for f in descriptor.fields:
                oneof = f.containing_oneof
                name = oneof.name if oneof is not None and not oneof.name.startswith("_") else None
                sub = (
                    f.message_type
                    if f.message_type is not None and _reachable_oneof(f.message_type)
                    else None
                )
                if name is not None or sub is not None:
                    plan_[f.number] = (name, f.name, sub)
        _ONEOF_PLANS[descriptor.full_name] = plan_
    return _ONEOF_PLANS[descriptor.full_name]


def _varint(raw: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = raw[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _skip(raw: bytes, i: int, wire: int, number: int) -> int:
    """The position after the value of field ``number`` of wire type ``wire``, whose tag
    ends at ``i``: a group is skipped to its end tag; anything else ends the body (the
    parser accepted it, so nothing else is there)."""
    if wire == 0:
        return _varint(raw, i)[1]
    if wire == 1:
        return i + 8
    if wire == 5:
        return i + 4
    if wire == 2:
        size, i = _varint(raw, i)
        return i + size
    if wire == 3:
        return _skip_group(raw, i, number)
    return len(raw)


def _skip_group(raw: bytes, i: int, number: int) -> int:
    """The position after the end tag of the group ``number`` whose fields start at ``i``
    (nested groups skipped whole; the parser accepted the body, so the end is there)."""
    while i < len(raw):
        tag, i = _varint(raw, i)
        inner, wire = tag >> 3, tag & 7
        if wire == 4:
            if inner == number:  # this group's end
                return i
            continue
        i = _skip(raw, i, wire, inner)
    return len(raw)


def check_oneofs(descriptor: Descriptor, raw: bytes, path: str = "") -> None:
    """Raise :class:`TwoOneofMembers` when ``raw`` (a body that decodes as ``descriptor``)
    sets two different members of one oneof, at any depth."""
    fields = oneof_plan(descriptor)
    if fields is None:
        return
    seen: dict[str, str] = {}
    repeated_index: dict[int, int] = {}
    merged: dict[int, bytes] = {}
    i, end = 0, len(raw)
    while i < end:
        tag, i = _varint(raw, i)
        number, wire = tag >> 3, tag & 7
        start = i
        if wire == 2:
            size, start = _varint(raw, i)
            i = start + size
        else:
            i = _skip(raw, i, wire, number)
            if wire not in (0, 1, 5):  # a group (an unknown field: proto3 has none)
                continue
        entry = fields.get(number)
        if entry is None:
            continue
        oneof, name, sub = entry
        if oneof is not None:
            other = seen.setdefault(oneof, name)
            if other != name:
                raise TwoOneofMembers(path, oneof, other, name)
        if sub is not None and wire == 2:
            field = descriptor.fields_by_number[number]
            if field.is_repeated:
                index = repeated_index.get(number, 0)
                repeated_index[number] = index + 1
                check_oneofs(sub, raw[start:i], f"{path}{name}[{index}].")
            else:  # occurrences of a singular message merge: scanned together
                merged[number] = merged.get(number, b"") + raw[start:i]
    for number, body in merged.items():
        _, name, sub = fields[number]
        check_oneofs(sub, body, f"{path}{name}.")
