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


def _reachable_enum(descriptor: Descriptor) -> bool:
    """Whether a message of this type can hold an enum field at any depth (recursive types
    included)."""
    seen: set[str] = set()
    todo = [descriptor]
    while todo:
        d = todo.pop()
        if d.full_name in seen:
            continue
        seen.add(d.full_name)
        for f in d.fields:
            if f.enum_type is not None:
                return True
            if f.message_type is not None:
                todo.append(f.message_type)
    return False


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
